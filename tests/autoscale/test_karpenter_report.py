"""The elastic report's "GPUs provisioned vs needed" figure and the series it draws from."""

from __future__ import annotations

from kubesched.api.objects import Pod
from kubesched.app import build_registry
from kubesched.autoscale.config import GROUP_LABEL, AutoscalerConfig, Delay, NodeGroup
from kubesched.autoscale.configfile import template_node
from kubesched.autoscale.experiment import NEEDED_FIGURE, figures
from kubesched.autoscale.predicate import node_named
from kubesched.autoscale.scenario import profile_config
from kubesched.autoscale.sim import simulate_elastic
from kubesched.gpu.model import GPU_COUNT, GPU_MILLI
from kubesched.sim.workload import Workload
from kubesched.testing import make_pod

REG = build_registry()
CONFIG = profile_config("pack", REG)  # the GPU filter: a node holds as many GPUs as it has
GPU4 = template_node("gpu4", {"cpu": "16", "memory": "64Gi", "gpus": 4})


def gpu_pods(n: int, at: float) -> tuple[list[Pod], list[float], list[float | None]]:
    ask = {GPU_COUNT: "1", GPU_MILLI: "1000"}  # one whole GPU, as the openb pods ask
    out = []
    for i in range(n):
        doc = make_pod(f"g{i}", requests={"cpu": "1", "memory": "1Gi"})
        doc["metadata"]["annotations"] = ask
        out.append(Pod.parse(doc))
    return out, [at] * n, [1200.0] * n


def run(mode: str | None):
    ps, arr, dur = gpu_pods(6, at=30.0)
    base = [node_named(GPU4, "gpu4-base-0", {GROUP_LABEL: "gpu4"})]
    cfg = None
    if mode is not None:
        cfg = AutoscalerConfig([NodeGroup("gpu4", GPU4, 1, 4)], mode=mode, provisioning_delay=Delay("constant", 120.0, 0.0))
        cfg.validate()
    res = simulate_elastic(CONFIG, Workload(base, ps, arr, dur), cfg, end_time=1800.0, seed=0, registry=REG)
    res.summary.update(mode=mode or "static-base", profile="pack", seed=0)
    return res


def test_needed_gpus_count_running_and_pending_pods():
    res = run(None)  # one 4-GPU node for six 1-GPU pods: two wait throughout
    ser = res.series
    at = [i for i, t in enumerate(ser["t"]) if 60.0 <= t <= 1200.0]
    assert at and all(ser["gpu_alloc"][i] == 4 and ser["gpu_needed"][i] == 6 for i in at)
    assert ser["gpu_needed"][0] == 0  # nothing has arrived at t = 0
    # once the running pods finish (30 + 1200 s), the two that waited run: needed = allocated
    later = [i for i, t in enumerate(ser["t"]) if t >= 1300.0]
    assert later and all(ser["gpu_needed"][i] == ser["gpu_alloc"][i] == 2 for i in later)


def test_autoscaled_needed_drops_to_allocated_once_the_node_registers():
    ser = run("karpenter").series
    t = ser["t"]
    waiting = [ser["gpu_needed"][i] - ser["gpu_alloc"][i] for i in range(len(t)) if 60.0 <= t[i] <= 120.0]
    assert waiting and all(w == 2 for w in waiting)  # pending until the new node's 120 s delay is over
    after = [i for i in range(len(t)) if 240.0 <= t[i] <= 1200.0]
    assert all(ser["gpu_needed"][i] == ser["gpu_alloc"][i] == 6 for i in after)
    assert all(ser["gpu_provisioned"][i] == 8 for i in after)


def test_report_has_one_panel_per_mode():
    results = [(r.summary, r.series) for r in (run(None), run("karpenter"))]
    images = figures(results, [], [], 0)
    assert NEEDED_FIGURE in images
    import base64

    png = base64.b64decode(images[NEEDED_FIGURE])
    assert png.startswith(b"\x89PNG")
    height = int.from_bytes(png[20:24], "big")  # IHDR: two stacked panels are taller than one
    one = figures(results[:1], [], [], 0)[NEEDED_FIGURE]
    assert height > int.from_bytes(base64.b64decode(one)[20:24], "big")


NODEPOOL_FILE = """\
nodePools:
- apiVersion: karpenter.sh/v1
  kind: NodePool
  metadata: {name: gpu}
  spec:
    template:
      spec:
        requirements:
        - {key: karpenter.sh/capacity-type, operator: In, values: [spot]}
    disruption: {consolidateAfter: 30s}
spot: {priceFactor: 0.25}
"""


def test_elastic_with_spot_node_pools_reports_cost_by_capacity_type(tmp_path):
    import csv

    from kubesched.cli import main

    f = tmp_path / "as.yaml"
    f.write_text(NODEPOOL_FILE)
    common = ["experiment", "elastic", "--limit", "120", "--seeds", "0", "--workers", "1", "--profiles", "pack",
              "--compression", "600", "--no-progress"]  # fmt: skip
    assert main([*common, "--modes", "static-base,karpenter", "--autoscaler", str(f), "-d", str(tmp_path / "spot")]) == 0
    rows = {r["mode"]: r for r in csv.DictReader(open(tmp_path / "spot" / "runs.csv"))}
    k = rows["karpenter"]
    assert float(k["cost_spot"]) > 0  # the pool launches spot nodes only
    assert float(k["cost"]) == float(k["cost_spot"]) + float(k["cost_on_demand"])
    assert float(rows["static-base"]["cost_spot"]) == 0
    page = (tmp_path / "spot" / "report.html").read_text()
    assert "<th>cost_spot</th>" in page and NEEDED_FIGURE in page
    # without spot capacity the columns stay as they were
    assert main([*common, "--modes", "karpenter", "-d", str(tmp_path / "od"), "--no-plots"]) == 0
    assert "cost_spot" not in open(tmp_path / "od" / "runs.csv").readline()


def test_needed_figure_starts_where_some_run_first_needs_five_percent_of_the_peak():
    from kubesched.autoscale.experiment import busy_from

    hours = [h * 3600.0 for h in range(100)]
    quiet = {"t": hours, "gpu_needed": [0] * 60 + [100] * 40}
    early = {"t": hours, "gpu_needed": [0] * 50 + [5] + [50] * 49}  # 5 = 5 % of the peak, at hour 50
    assert busy_from([({}, quiet)]) == 59 * 3600.0
    assert busy_from([({}, quiet), ({}, early)]) == 49 * 3600.0
    busy = {"t": hours, "gpu_needed": [0] * 5 + [100] * 95}  # in the first tenth: nothing cut
    assert busy_from([({}, quiet), ({}, busy)]) == 0.0
    assert busy_from([({}, {"t": hours, "gpu_needed": [0] * 100})]) == 0.0

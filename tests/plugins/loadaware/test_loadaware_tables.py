"""TargetLoadPacking and LoadVariationRiskBalancing: upstream's test tables, the requests fallback,
the correction for pods placed since the measurement, and args (defaults, bad values)."""

from __future__ import annotations

import json
import logging
import math
import socket
from pathlib import Path

import pytest
import yaml

from kubesched.cli import main
from kubesched.errors import InputError
from kubesched.framework.handle import Handle
from kubesched.framework.utilization import NodeUsage, UtilizationUnavailable
from kubesched.plugins.loadaware import LoadVariationRiskBalancing, TargetLoadPacking
from kubesched.plugins.loadaware.args import parse_target_load_packing
from kubesched.plugins.loadaware.prometheus import PrometheusSource
from kubesched.testing import as_pod, build_snapshot, make_node, make_pod, run_score

MI = 1024 * 1024
NAN = math.nan


class DictSource:
    """A UtilizationSource with fixed answers (as upstream's tests serve fixed watcher responses)."""

    def __init__(self, usage: dict[str, NodeUsage] | None) -> None:
        self.data = usage

    def usage(self) -> dict[str, NodeUsage]:
        if self.data is None:
            raise UtilizationUnavailable("test source is down")
        return self.data


def upstream_node(name: str = "node-1") -> dict:
    # st.MakeNode().Capacity({cpu: 1000m, memory: 1Gi}) sets capacity and allocatable
    return make_node(name, cpu="1000m", memory="1Gi")


def plugin_on(cls, usage, nodes, pods=(), args=None):
    snap = build_snapshot(nodes, pods)
    handle = Handle(snap)
    handle.utilization = DictSource(usage)
    return cls(args or {}, handle), snap


def tlp_pod(*cpu_milli: int, overhead: int = 0) -> dict:
    """upstream getPodWithContainersAndOverhead(overhead, requests...): request = limit per container."""
    containers = [
        {
            "name": f"test-container-{i}",
            "image": "pause",
            "resources": {"requests": {"cpu": f"{m}m"}, "limits": {"cpu": f"{m}m"}},
        }
        for i, m in enumerate(cpu_milli)
    ]
    return make_pod("p", containers=containers, spec={"overhead": {"cpu": f"{overhead}m"}})


EMPTY_POD = make_pod("p", containers=[])  # st.MakePod().Name("p"): no containers at all


# ---- TargetLoadPacking: targetloadpacking_test.go TestTargetLoadPackingScoring --------------
@pytest.mark.parametrize(
    ("case", "pod", "usage", "want"),
    [
        ("new node", EMPTY_POD, {"node-1": NodeUsage(cpu_avg=0)}, 40),  # DefaultTargetUtilizationPercent
        ("hot node", EMPTY_POD, {"node-1": NodeUsage(cpu_avg=50)}, 33),
        ("excess utilization returns min score", tlp_pod(1000), {"node-1": NodeUsage(cpu_avg=30)}, 0),
        ("404 resp from watcher", EMPTY_POD, {}, 0),
    ],
)
def test_tlp_upstream_table(case, pod, usage, want):
    pl, snap = plugin_on(TargetLoadPacking, usage, [upstream_node()])
    raw, norm = run_score(pl, pod, snap)
    assert raw == [want] and norm == [want], case


@pytest.mark.parametrize(
    ("util", "pod", "args", "want"),
    [
        # below target: round((100-40)*P/40 + 40); best-effort container predicted 1000m -> P = 10 + 25
        (10, make_pod("p"), {}, 93),  # 60*35/40+40 = 92.5 -> Go rounds half away from zero: 93
        # burstable: request 200m x 1.5 = 300m on 4 cores -> 7.5 %; util 20 -> 27.5 -> 81.25
        (20, make_pod("p", requests={"cpu": "200m"}), {}, 81),
        # the multiplier and defaultRequests are args
        (20, make_pod("p", requests={"cpu": "200m"}), {"defaultRequestsMultiplier": "2"}, 85),  # 30 -> 85
        (10, make_pod("p"), {"defaultRequests": {"cpu": "400m"}}, 70),  # 10 + 10 = 20 -> 60*20/40 + 40
        # above target: round(40*(100-P)/60); 50 + 7.5 = 57.5 -> 28.33
        (50, make_pod("p", requests={"cpu": "200m"}), {}, 28),
        # targetUtilization 70: 57.5 <= 70 -> 30*57.5/70 + 70 = 94.64
        (50, make_pod("p", requests={"cpu": "200m"}), {"targetUtilization": 70}, 95),
        # overhead counts: 50 + (200*1.5 + 100)/4000 = 60 -> 40*40/60 = 26.67
        (50, make_pod("p", requests={"cpu": "200m"}, spec={"overhead": {"cpu": "100m"}}), {}, 27),
    ],
)
def test_tlp_formula(util, pod, args, want):
    pl, snap = plugin_on(
        TargetLoadPacking, {"n": NodeUsage(cpu_avg=util)}, [make_node("n", cpu="4", memory="8Gi")], args=args
    )
    assert run_score(pl, pod, snap)[0] == [want]


def test_tlp_reads_capacity_not_allocatable():
    node = make_node("n", cpu="2", memory="8Gi")
    node["status"]["capacity"]["cpu"] = "4"  # allocatable 2, capacity 4
    pl, snap = plugin_on(TargetLoadPacking, {"n": NodeUsage(cpu_avg=0)}, [node])
    # predicted 1000m (best effort) / 4000 = 25 % -> 60*25/40+40 = 77.5 -> 78 (on allocatable: 50 % -> 33)
    assert run_score(pl, make_pod("p"), snap)[0] == [78]


def test_tlp_prefers_the_node_nearest_below_target():
    nodes = [make_node(f"n{i}", cpu="4", memory="8Gi") for i in range(3)]
    usage = {"n0": NodeUsage(cpu_avg=5), "n1": NodeUsage(cpu_avg=25), "n2": NodeUsage(cpu_avg=70)}
    pl, snap = plugin_on(TargetLoadPacking, usage, nodes)
    raw, _ = run_score(pl, make_pod("p", requests={"cpu": "200m"}), snap)
    assert raw == [59, 89, 15]  # 12.5 -> 58.75, 32.5 -> 88.75, 77.5 -> 15


# ---- LoadVariationRiskBalancing: loadvariationriskbalancing_test.go TestScore ----------------
def lvrb_pod(cpu_milli: int, mem_bytes: int) -> dict:
    """upstream getPodWithContainersAndOverhead(0, 0, 0, [cpu], [mem]): an init container asking 0."""
    res = {"cpu": f"{cpu_milli}m", "memory": str(mem_bytes)}
    return make_pod(
        "p",
        containers=[
            {"name": "test-container-0", "image": "pause", "resources": {"requests": res, "limits": res}}
        ],
        spec={
            "initContainers": [
                {
                    "name": "test-init",
                    "image": "pause",
                    "resources": {"requests": {"cpu": "0", "memory": "0"}},
                }
            ],
            "overhead": {"cpu": "0"},
        },
    )


@pytest.mark.parametrize(
    ("case", "pod", "usage", "want"),
    [
        ("new node", EMPTY_POD, NodeUsage(cpu_avg=50, mem_avg=NAN), 75),
        ("hot node", EMPTY_POD, NodeUsage(cpu_avg=100, mem_avg=NAN), 50),
        (
            "average and stDev metrics",
            lvrb_pod(200, 256 * MI),
            NodeUsage(cpu_avg=30, cpu_std=16, mem_avg=NAN),
            67,
        ),
        ("CPU and Memory metrics", lvrb_pod(100, 512 * MI), NodeUsage(40, 16, 50, 10), 45),
        ("pick worst case: CPU or Memory", lvrb_pod(100, 512 * MI), NodeUsage(80, 20, 25, 15), 45),
        ("404 resp from watcher", EMPTY_POD, None, 0),
    ],
)
def test_lvrb_upstream_table(case, pod, usage, want):
    pl, snap = plugin_on(LoadVariationRiskBalancing, {"node-1": usage} if usage else {}, [upstream_node()])
    raw, norm = run_score(pl, pod, snap)
    assert raw == [want] and norm == [want], case


@pytest.mark.parametrize(
    ("args", "want"),
    [
        # cpu only: mu = (300 + 200)/1000 = .5, sigma = .16
        ({}, 67),  # risk (.5 + .16)/2
        ({"safeVarianceMargin": 2}, 59),  # sigma .32 -> risk .41
        ({"safeVarianceSensitivity": 2}, 55),  # sigma sqrt(.16) = .4 -> risk .45
        ({"safeVarianceMargin": 3, "safeVarianceSensitivity": 2}, 25),  # 3 * .4 = 1.2 -> 1 -> .75
        ({"safeVarianceSensitivity": 0}, 75),  # 1/0 = +Inf root: .16^Inf = 0 (Go's math.Pow)
        # upstream defaulting: negative values become 1 (loadvariationriskbalancing_test.go TestNew)
        ({"safeVarianceMargin": -5, "safeVarianceSensitivity": -1}, 67),
    ],
)
def test_lvrb_margin_and_sensitivity(args, want):
    pl, snap = plugin_on(
        LoadVariationRiskBalancing, {"node-1": NodeUsage(30, 16, NAN, NAN)}, [upstream_node()], args=args
    )
    assert run_score(pl, lvrb_pod(200, 0), snap)[0] == [want]


# ---- no measurements: requests fallback ----------------------------------------------------
def test_fallback_to_requests_when_the_source_is_down(caplog):
    nodes = [make_node("a", cpu="4", memory="8Gi"), make_node("b", cpu="4", memory="8Gi")]
    busy = [make_pod("x", node="a", requests={"cpu": "1", "memory": "4Gi"})]
    pod = make_pod("p", requests={"cpu": "200m", "memory": "1Gi"})
    tlp, snap = plugin_on(TargetLoadPacking, None, nodes, busy)
    lvrb = LoadVariationRiskBalancing({}, tlp.handle)
    with caplog.at_level(logging.WARNING, logger="kubesched.loadaware"):
        t, _ = run_score(tlp, pod, snap)
        lv, _ = run_score(lvrb, pod, snap)
        run_score(tlp, pod, snap)  # the warning is once per outage, not per pod
    # TLP: a: (1000 + 300)/4000 = 32.5 -> 88.75; b: 300/4000 = 7.5 -> 51.25
    assert t == [89, 51]
    # LVRB a: cpu mu (1000+200)/4000 = .3 -> 85, mem mu (4+1)/8 = .625 -> 68.75 -> min 69;
    # b: cpu 97.5, mem 93.75
    assert lv == [69, 94]
    warnings = [r for r in caplog.records if "falling back to requests" in r.getMessage()]
    assert [r.getMessage().split(":")[0] for r in warnings] == [
        "TargetLoadPacking",
        "LoadVariationRiskBalancing",
    ]
    assert "test source is down" in warnings[0].getMessage()
    # the source comes back: measurements are used again
    tlp.handle.utilization.data = {"a": NodeUsage(cpu_avg=0), "b": NodeUsage(cpu_avg=0)}
    with caplog.at_level(logging.INFO, logger="kubesched.loadaware"):
        assert run_score(tlp, pod, snap)[0] == [51, 51]
    assert any("available again" in r.getMessage() for r in caplog.records)


def test_no_source_at_all_scores_from_requests(caplog):
    snap = build_snapshot([make_node("a", cpu="4", memory="8Gi")])
    with caplog.at_level(logging.WARNING, logger="kubesched.loadaware"):
        raw, _ = run_score(TargetLoadPacking({}, Handle(snap)), make_pod("p", requests={"cpu": "200m"}), snap)
    assert raw == [51]
    assert "no metricProvider configured" in caplog.text
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="kubesched.loadaware"):
        run_score(
            TargetLoadPacking({"metricProvider": {"type": "Simulator"}}, Handle(snap)), make_pod("p"), snap
        )
    assert "type Simulator but no simulator utilization" in caplog.text


# ---- pods placed since the measurement (Trimaran's PodAssignEventHandler) ---------------------
class FrozenPrometheus(PrometheusSource):
    """A PrometheusSource whose HTTP answer is fixed: the correction, not the client, is under test."""

    def __init__(self, usage: dict[str, NodeUsage], clock) -> None:
        super().__init__(
            parse_target_load_packing({"metricProvider": {"type": "Prometheus"}}).provider, clock=clock
        )
        self.answer = usage

    def fetch(self) -> dict[str, NodeUsage]:
        return self.answer


def test_tlp_counts_pods_placed_since_the_measurement():
    now = [1000.0]
    nodes = [make_node("a", cpu="4", memory="8Gi"), make_node("b", cpu="4", memory="8Gi")]
    old = make_pod("old", node="a", requests={"cpu": "1"})  # present at start: taken as measured
    snap = build_snapshot(nodes, [old])
    pl = TargetLoadPacking({"metricProvider": {"type": "Prometheus"}}, Handle(snap))
    pl.reader.prometheus = FrozenPrometheus(
        {"a": NodeUsage(cpu_avg=10), "b": NodeUsage(cpu_avg=10)}, lambda: now[0]
    )
    pod = make_pod("p", requests={"cpu": "200m"})
    assert run_score(pl, pod, snap)[0] == [66, 66]  # 10 + 7.5 = 17.5 -> 66.25, the old pod not added
    snap.add_pod(as_pod(make_pod("new", node="a", requests={"cpu": "400m"})))  # predicted 600m
    now[0] += 10
    assert run_score(pl, pod, snap)[0] == [89, 66]  # a: 10 + 15 + 7.5 = 32.5 -> 88.75
    # a refresh 61 s after the pod appeared: it is in the measurements now
    now[0] += 61
    assert run_score(pl, pod, snap)[0] == [66, 66]


# ---- args --------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("cls", "args", "field"),
    [
        (TargetLoadPacking, {"watcherAddress": "http://lw:2020"}, "TargetLoadPackingArgs.watcherAddress"),
        (
            TargetLoadPacking,
            {"metricProvider": {"type": "KubernetesMetricsServer"}},
            "TargetLoadPackingArgs.metricProvider.type",
        ),
        (
            TargetLoadPacking,
            {"metricProvider": {"type": "SignalFx"}},
            "TargetLoadPackingArgs.metricProvider.type",
        ),
        (
            TargetLoadPacking,
            {"metricProvider": {"type": "Guess"}},
            "TargetLoadPackingArgs.metricProvider.type",
        ),
        (
            TargetLoadPacking,
            {"metricProvider": {"type": "Prometheus", "address": "prom:9090"}},
            "TargetLoadPackingArgs.metricProvider.address",
        ),
        (
            TargetLoadPacking,
            {"metricProvider": {"adress": "x"}},
            "TargetLoadPackingArgs.metricProvider.adress",
        ),
        (
            TargetLoadPacking,
            {"defaultRequestsMultiplier": "x1.5"},
            "TargetLoadPackingArgs.defaultRequestsMultiplier",
        ),
        (TargetLoadPacking, {"targetUtilization": 120}, "TargetLoadPackingArgs.targetUtilization"),
        (TargetLoadPacking, {"targetUtilization": "40"}, "TargetLoadPackingArgs.targetUtilization"),
        (
            TargetLoadPacking,
            {"defaultRequests": {"cpu": "lots"}},
            "TargetLoadPackingArgs.defaultRequests.cpu",
        ),
        (
            TargetLoadPacking,
            {"prometheus": {"window": "15 minutes"}},
            "TargetLoadPackingArgs.prometheus.window",
        ),
        (
            TargetLoadPacking,
            {"prometheus": {"stalenessSeconds": 0}},
            "TargetLoadPackingArgs.prometheus.stalenessSeconds",
        ),
        (
            TargetLoadPacking,
            {"prometheus": {"nodeLabel": "node-name"}},
            "TargetLoadPackingArgs.prometheus.nodeLabel",
        ),
        (TargetLoadPacking, {"kind": "LoadVariationRiskBalancingArgs"}, "TargetLoadPackingArgs.kind"),
        (
            LoadVariationRiskBalancing,
            {"safeVarianceMargin": "1"},
            "LoadVariationRiskBalancingArgs.safeVarianceMargin",
        ),
        (
            LoadVariationRiskBalancing,
            {"targetUtilization": 40},
            "LoadVariationRiskBalancingArgs.targetUtilization",
        ),
    ],
)
def test_bad_args_name_the_field(cls, args, field):
    with pytest.raises(InputError) as e:
        cls(args)
    assert e.value.path == field


def test_upstream_defaults():
    a = TargetLoadPacking({"targetUtilization": 0}).cfg  # <= 0 -> default, as upstream
    assert (a.target_utilization, a.multiplier, a.default_requests_milli) == (40, 1.5, 1000)
    assert a.provider.type is None and a.provider.address == "http://prometheus-k8s:9090"
    p = TargetLoadPacking(
        {
            "metricProvider": {"type": "Prometheus", "address": "http://p:9090/", "token": "t"},
            "defaultRequestsMultiplier": 2,
        }
    ).cfg.provider
    assert (p.address, p.token, p.insecure_skip_verify, p.prometheus.window) == (
        "http://p:9090",
        "t",
        True,
        "15m",
    )
    b = LoadVariationRiskBalancing(
        {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "LoadVariationRiskBalancingArgs"}
    ).cfg
    assert (b.margin, b.sensitivity) == (1.0, 1.0)


# ---- the example config ------------------------------------------------------------------------
EXAMPLE = Path(__file__).resolve().parents[3] / "kubesched" / "examples" / "loadaware.yaml"


def test_example_config_runs_and_falls_back_without_prometheus(tmp_path, capsys, caplog):
    assert main(["schedule", "--config", str(EXAMPLE), "--seed", "1", "-o", "json"]) == 0
    capsys.readouterr()
    with socket.socket() as s:  # a loopback port nobody listens on
        s.bind(("127.0.0.1", 0))
        closed = s.getsockname()[1]
    cfg = yaml.safe_load(EXAMPLE.read_text())
    for prof in cfg["profiles"]:
        for pc in prof["pluginConfig"]:
            pc["args"]["metricProvider"]["address"] = f"http://127.0.0.1:{closed}"
    path = tmp_path / "loadaware.yaml"
    path.write_text(yaml.safe_dump(cfg))
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="kubesched.loadaware"):
        code = main(["schedule", "--config", str(path), "--seed", "1", "-o", "json"])
    out = capsys.readouterr()
    assert code == 0, out.err
    assert any(p["node"] for p in json.loads(out.out)["placements"])
    assert f"TargetLoadPacking: Prometheus at http://127.0.0.1:{closed} unreachable" in caplog.text
    assert "falling back to requests" in caplog.text


def test_cli_bad_args_exit_2_naming_the_field(tmp_path, capsys):
    cfg = yaml.safe_load(EXAMPLE.read_text())
    cfg["profiles"][0]["pluginConfig"][0]["args"]["targetUtilization"] = 150
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump(cfg))
    assert main(["schedule", "--config", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "pluginConfig[0].args.targetUtilization" in err

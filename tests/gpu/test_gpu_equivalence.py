"""The GPU plugins are cached as row-local (keyed on the pod's GPU annotations): every policy
places each pod of a trace slice on the same node, with the same failures, cache on or off."""


import pytest

from kubesched.api.objects import Node, Pod
from kubesched.config import parse_config
from kubesched.experiment import protocol
from kubesched.experiment.protocol import POLICIES, prepare
from kubesched.gpu.model import GPU_COUNT, GPU_MILLI
from kubesched.plugins import in_tree_registry
from kubesched.scheduler import Scheduler
from kubesched.state.snapshot import Snapshot
from kubesched.testing import make_node, make_pod
from kubesched.trace.bundled import node_list, pod_list
from kubesched.trace.openb import read_nodes, read_pods


def _run(prep, policy: str, cache: bool, monkeypatch, detail: bool = True) -> tuple[list, list, object]:
    built = []
    real = protocol.build_scheduler

    def build(*a, **kw):
        s = real(*a, **kw)
        s.use_equivalence_cache = cache
        s.failure_detail = detail  # the replay turns it off; on here, to compare the records' FitErrors
        failures: list = []
        s.hooks.on_failed.append(lambda r: failures.append((r.pod.name, r.message)))
        built.append((s, failures))
        return s

    monkeypatch.setattr(protocol, "build_scheduler", build)
    r = protocol.run(prep.nodes, prep.pods, policy, prep.seed, prep.typical, keep_snapshot=False)
    sched, failures = built[0]
    return r.nodes, failures, sched.frameworks["default-scheduler"].cache


@pytest.mark.parametrize("policy", list(POLICIES))
def test_same_placements_and_failures_cache_on_or_off(policy, monkeypatch):
    nodes = read_nodes(node_list("gpu"))[::20]
    pods = read_pods(pod_list("default")).pods[:700]
    prep = prepare(pods, nodes, 5)
    on, fail_on, eq = _run(prep, policy, True, monkeypatch)
    off, fail_off, _ = _run(prepare(pods, nodes, 5), policy, False, monkeypatch)
    assert on == off
    assert fail_on == fail_off and fail_on  # the slice overfills the cluster: some pods fit nowhere
    assert eq.hits > len(prep.pods) // 2
    if policy != "Random":  # RandomScore is not row-local: its cycles still run it fresh
        assert eq.diagnosed > 0
    # as the replay runs: without failure details, the same pods land on the same nodes
    bare, fail_bare, eq_bare = _run(prepare(pods, nodes, 5), policy, True, monkeypatch, detail=False)
    assert bare == on
    assert [name for name, _ in fail_bare] == [name for name, _ in fail_on]
    assert eq_bare.diagnosed == 0


def _pod(name: str, annotations: dict[str, str]) -> Pod:
    doc = make_pod(name, requests={"cpu": "1"})
    doc["metadata"]["annotations"] = annotations
    return Pod.parse(doc)


def test_gpu_annotations_are_part_of_the_cache_key():
    """Two pods equal but for their GPU ask must not share cached verdicts."""
    reg = in_tree_registry(entry_points=False)
    cfg = parse_config(protocol.policy_config("BestFit"), "t", reg.points_of)
    snap = Snapshot()
    for name, gpus in (("a", 1), ("b", 4)):
        doc = make_node(name, cpu="32", memory="64Gi", pods=110)
        for part in ("allocatable", "capacity"):
            doc["status"][part][GPU_COUNT] = str(gpus)
        snap.add_node(Node.parse(doc))
    sched = Scheduler(cfg, snap, None, reg, seed=1, tie_break="first")
    small = _pod("small", {GPU_MILLI: "500"})
    big = _pod("big", {GPU_MILLI: "1000", GPU_COUNT: "3"})
    assert small.signature() == big.signature()  # the signature leaves annotations out
    placed = []
    for p in (small, big):
        sched.add_pending(p)
        res = sched.schedule_one()
        placed.append(res.node if res is not None else None)
    assert placed[1] == "b"  # three whole GPUs fit on b only
    assert sched.frameworks["default-scheduler"].cache.misses == 2

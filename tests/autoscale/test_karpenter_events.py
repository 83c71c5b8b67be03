"""What the Karpenter-like loop tells an operator beyond Cluster Autoscaler's events, without an
API server: why consolidation left a node (``Unconsolidatable``, consolidation.go's messages),
and Karpenter's recorder dedupe (one event per reason and object every 2 minutes, 15 for
``Unconsolidatable``)."""

from __future__ import annotations

import numpy as np

from kubesched.api.objects import Pod
from kubesched.autoscale.config import AutoscalerConfig, NodeGroup
from kubesched.autoscale.configfile import template_node
from kubesched.autoscale.disruption import NOT_CHEAPER, SPOT_TO_SPOT
from kubesched.autoscale.events import EventRecorder
from kubesched.autoscale.karpenter import KarpenterLike
from kubesched.autoscale.karpevents import KarpenterEvents, PoolReasons
from kubesched.autoscale.karprecord import KarpenterRecord
from kubesched.autoscale.nodepool import read_node_pools
from kubesched.autoscale.status import StatusBuilder
from kubesched.testing import make_pod
from tests.autoscale.karpenter_helpers import View
from tests.autoscale.loop_helpers import Recorder
from tests.autoscale.test_karpenter_consolidation import node, pod, pool
from tests.autoscale.test_live_events_status import FakeCore

SMALL = NodeGroup("small", template_node("small", {"cpu": "4", "memory": "16Gi", "pods": 100}), price=1.0)
LARGE = NodeGroup("large", template_node("large", {"cpu": "8", "memory": "32Gi", "pods": 100}), price=2.0)


def one_pass(nodes, pods, pools, groups=(SMALL, LARGE)) -> tuple[Recorder, KarpenterRecord, View]:
    cfg = AutoscalerConfig(list(groups), mode="karpenter", node_pools=read_node_pools(pools)).validate()
    rec = Recorder()
    loop = KarpenterLike(cfg, rec, np.random.default_rng(0))
    record = loop.record = KarpenterRecord()
    view = View(nodes, pods)
    loop.disrupt(view, view.now())
    return rec, record, view


def test_a_node_no_cheaper_node_replaces_is_unconsolidatable():
    # 3 CPUs on a small node: nothing cheaper holds them, and no other node does
    rec, record, _ = one_pass([node("n1", SMALL)], [pod("p1", "n1", cpu="3")], [pool()])
    assert rec.deleted == [] and rec.created == []
    assert record.unconsolidatable == [("n1", NOT_CHEAPER)]


def test_a_spot_node_is_not_replaced_by_spot_with_spot_to_spot_off():
    # a large spot node a small one would hold, from a pool that allows spot: spot-to-spot
    spot_pool = pool(capacity=("spot", "on-demand"))
    rec, record, _ = one_pass([node("n1", LARGE, capacity="spot")], [pod("p1", "n1", cpu="3")], [spot_pool])
    assert rec.created == [] and record.unconsolidatable == [("n1", SPOT_TO_SPOT)]
    # on-demand, the same node is replaced (by the cheaper spot offering): nothing to explain
    rec, record, _ = one_pass([node("n1", LARGE)], [pod("p1", "n1", cpu="3")], [spot_pool])
    assert rec.created == ["small"] and record.unconsolidatable == []


def test_pools_that_do_not_consolidate_say_so():
    never, when_empty = pool("never"), pool("empty-only")
    never["spec"]["disruption"]["consolidateAfter"] = "Never"
    when_empty["spec"]["disruption"]["consolidationPolicy"] = "WhenEmpty"
    nodes = [node("a", LARGE, pool_name="never"), node("b", LARGE, pool_name="empty-only")]
    _, record, _ = one_pass(nodes, [pod("pa", "a", cpu="3"), pod("pb", "b", cpu="3")], [never, when_empty])
    assert sorted(record.unconsolidatable) == [
        ("a", 'NodePool "never" has consolidation disabled'),
        ("b", 'NodePool "empty-only" has non-empty consolidation disabled'),
    ]


def filter_runs(record: KarpenterRecord | None) -> int:
    """The filter runs of one disruption pass over a node nothing replaces."""
    cfg = AutoscalerConfig([SMALL, LARGE], mode="karpenter", node_pools=read_node_pools([pool()])).validate()
    loop = KarpenterLike(cfg, Recorder(), np.random.default_rng(0))
    loop.record = record
    made = []
    real = loop.checker

    def counting(view):  # noqa: ANN001, ANN202
        made.append(real(view))
        return made[-1]

    loop.checker = counting
    view = View([node("n1", SMALL)], [pod("p1", "n1", cpu="3")])
    loop.disrupt(view, view.now())
    return sum(c.checks for c in made)


def test_the_simulator_pays_for_no_explanations():
    assert filter_runs(None) < filter_runs(KarpenterRecord())  # only the live loop explains


def test_karpenter_events_are_deduplicated_as_its_recorder_does():
    core, t = FakeCore(), [1000.0]
    events = KarpenterEvents(EventRecorder(core, clock=lambda: t[0]))
    _, record, view = one_pass([node("n1", SMALL)], [pod("p1", "n1", cpu="3")], [pool()])
    for _ in range(3):
        events.scale_down(view, record)
        t[0] += 60.0
    made = [(e["involvedObject"]["kind"], e["reason"], e["message"]) for e in core.created]
    assert made == [("Node", "Unconsolidatable", NOT_CHEAPER), ("NodeClaim", "Unconsolidatable", NOT_CHEAPER)]
    assert core.created[0]["source"] == {"component": "karpenter"} and core.patched == []
    t[0] += 900.0  # 15 minutes on: again
    events.scale_down(view, record)
    assert len(core.created) == 2 and len(core.patched) == 2  # the same Event, its count bumped


def test_candidates_are_the_status_and_metrics_unneeded_nodes():
    cfg = AutoscalerConfig([SMALL, LARGE], mode="karpenter", node_pools=read_node_pools([pool()])).validate()
    loop = KarpenterLike(cfg, Recorder(), np.random.default_rng(0))
    view = View([node("n1", SMALL), node("n2", LARGE, annotations={"karpenter.sh/do-not-disrupt": "true"})],
                [pod("p1", "n1", cpu="3"), pod("p2", "n2", cpu="3")])
    record = loop.record = KarpenterRecord()
    loop.run_once(view)  # a disruption pass: n1 is a candidate nothing replaces; n2 is protected
    assert record.unneeded == ["n1"]
    record = loop.record = KarpenterRecord()
    loop.run_once(view)  # no pass this time (every 10 s): the last pass's candidates still count
    assert record.unneeded == ["n1"]
    status = StatusBuilder().build(loop, view.snapshot, record, view.now())
    small = next(g for g in status["nodeGroups"] if g["name"] == "small")
    assert small["scaleDown"]["status"] == "CandidatesPresent" and small["scaleDown"]["candidates"] == 1
    assert status["clusterWide"]["scaleDown"]["candidates"] == 1


def test_a_deletion_the_provider_declined_is_no_disruption():
    _, record, view = one_pass([node("a", LARGE), node("b", LARGE)], [], [pool()])  # both empty: both go
    assert sorted(d.node for d in record.disrupted) == ["a", "b"]
    record.scale_downs = [sd for sd in record.scale_downs if sd.node != "b"]  # as the controller drops a declined one
    assert [d.node for d in record.removed()] == ["a"]
    core = FakeCore()
    KarpenterEvents(EventRecorder(core)).scale_down(view, record)
    terminating = [e["involvedObject"]["name"] for e in core.created if e["reason"] == "DisruptionTerminating"]
    assert terminating == ["a", "a"]  # the node and its NodeClaim; nothing about b


def test_a_pending_pod_a_new_node_will_take_is_nominated_to_it():
    cfg = AutoscalerConfig([SMALL, LARGE], mode="karpenter", node_pools=read_node_pools([pool()])).validate()
    loop = KarpenterLike(cfg, Recorder(), np.random.default_rng(0))
    view = View([node("n1", LARGE)], [])
    waiting = Pod.parse(make_pod("web", requests={"cpu": "1"}))
    loop.hinted = {"n1": [waiting]}  # as fit_upcoming leaves it: n1 registered lately, web fits there
    core = FakeCore()
    KarpenterEvents(EventRecorder(core)).scale_up(loop, view, KarpenterRecord(), view.now())
    (ev,) = core.created
    assert (ev["reason"], ev["message"]) == ("Nominated", "Pod should schedule on: nodeclaim/n1, node/n1")
    assert ev["involvedObject"]["name"] == "web" and ev["source"] == {"component": "karpenter"}


# ---- pkg/events/suite_test.go: "Dedupe" and "Rate Limiting" ----------------------------------


def recorder() -> tuple[KarpenterEvents, FakeCore, list[float]]:
    core, t = FakeCore(), [1000.0]
    return KarpenterEvents(EventRecorder(core, clock=lambda: t[0])), core, t


def written(core: FakeCore) -> int:
    """Calls that reached the API: Events created, and counts bumped on one already there."""
    return len(core.created) + len(core.patched)


def evict(events: KarpenterEvents, name: str, **kw) -> None:  # eviction.PodEvictedEvent: dedupe (namespace, name)
    events.publish({"kind": "Pod", "namespace": "default", "name": name, "apiVersion": "v1"}, "Evicted", "Evicted pod", "default", name, **kw)


def nominate(events: KarpenterEvents, i: int) -> None:
    ref = {"kind": "Pod", "namespace": "default", "name": f"p{i}", "uid": f"u{i}", "apiVersion": "v1"}
    events.publish(ref, "Nominated", "Pod should schedule on: nodeclaim/c", f"u{i}", limiter=events.nominations)


def test_dedupe_should_only_create_a_single_event_when_many_events_are_created_quickly():
    events, core, _ = recorder()
    for _ in range(100):
        evict(events, "p")
    assert written(core) == 1


def test_dedupe_should_allow_the_dedupe_timeout_to_be_overridden():
    events, core, t = recorder()
    for _ in range(10):
        evict(events, "p", timeout=2.0)
    assert written(core) == 1
    t[0] += 3.0  # after the overridden timeout
    evict(events, "p", timeout=2.0)
    assert written(core) == 2


def test_dedupe_should_allow_events_with_different_entities_to_be_created():
    events, core, _ = recorder()
    for i in range(100):
        evict(events, f"p{i}")
    assert written(core) == 100


def test_rate_limiting_should_only_create_max_burst_when_many_events_are_created_quickly():
    events, core, _ = recorder()
    for i in range(100):
        nominate(events, i)
    assert written(core) == 10


def test_rate_limiting_should_allow_many_events_over_time_due_to_smoothed_rate_limiting():
    events, core, t = recorder()
    for i in range(3):
        for j in range(5):
            nominate(events, 5 * i + j)
        t[0] += 1.0
    assert written(core) == 15


def test_not_trigger_scale_up_counts_each_pools_reasons():
    limited, none_fit = pool("limited"), pool("none-fit")
    limited["spec"]["limits"] = {"cpu": "8"}  # its one large node uses all of it
    none_fit["spec"]["template"]["spec"]["requirements"].append({"key": "node.kubernetes.io/instance-type", "operator": "In", "values": ["gpu"]})
    cfg = AutoscalerConfig([SMALL, LARGE], mode="karpenter", node_pools=read_node_pools([limited, none_fit])).validate()
    loop = KarpenterLike(cfg, Recorder(), np.random.default_rng(0))
    view = View([node("n1", LARGE, pool_name="limited")], [])
    waiting = Pod.parse(make_pod("web", requests={"cpu": "1"}))
    assert PoolReasons(loop, view, view.now()).message(waiting) == (
        "1 all available instance types exceed limits for nodepool, 1 nodepool requirements filtered out all available instance types")
    big = Pod.parse(make_pod("big", requests={"cpu": "10"}))  # room in the pool, no instance type big enough
    limited["spec"]["limits"] = {"cpu": "100"}
    cfg = AutoscalerConfig([SMALL, LARGE], mode="karpenter", node_pools=read_node_pools([limited])).validate()
    loop = KarpenterLike(cfg, Recorder(), np.random.default_rng(0))
    assert PoolReasons(loop, view, view.now()).message(big) == "1 Insufficient cpu"

"""Snapshot.trial(): what a what-if changes is undone on exit; Snapshot.of and Snapshot.copy;
Scheduler.what_if() puts back the start index and the random state."""

from __future__ import annotations

import tracemalloc
from typing import Any

import numpy as np
import pytest

from kubesched.api.objects import ElasticQuota, Namespace, Node, Pod, PodGroup
from kubesched.api.selectors import LabelSelector
from kubesched.app import build_config
from kubesched.framework.cycle_state import CycleState
from kubesched.load import ClusterObjects
from kubesched.plugins import in_tree_registry
from kubesched.scheduler import Scheduler
from kubesched.state.snapshot import Snapshot
from kubesched.testing import build_snapshot, make_node, make_pod

ANTI = {
    "podAntiAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": [
            {"labelSelector": {"matchLabels": {"app": "x"}}, "topologyKey": "kubernetes.io/hostname"}
        ]
    }
}


def _node(name: str, zone: str = "z1", **kw: Any) -> Node:
    return Node.parse(make_node(name, cpu="4", memory="8Gi", labels={"topology.kubernetes.io/zone": zone}, **kw))


def _pod(name: str, node: str = "", cpu: str = "100m", affinity: dict | None = None, ports: bool = False) -> Pod:
    spec: dict[str, Any] = {"affinity": affinity} if affinity else {}
    containers = None
    if ports:
        containers = [{"name": "c", "image": "pause", "ports": [{"containerPort": 80, "hostPort": 8080}]}]
    d = make_pod(name, uid=name, node=node or None, labels={"app": "x"}, requests={"cpu": cpu}, spec=spec, containers=containers)
    return Pod.parse(d)


def _cluster(nodes: int = 4, pods_per_node: int = 3) -> Snapshot:
    names = [f"n{i}" for i in range(nodes)]
    ns = [_node(n, zone=f"z{i % 2}") for i, n in enumerate(names)]
    pods = [
        _pod(f"p{i}-{j}", n, affinity=ANTI if j == 0 and i % 2 else None, ports=j == 1)
        for i, n in enumerate(names)
        for j in range(pods_per_node)
    ]
    return build_snapshot(ns, pods, [{"metadata": {"name": "default", "labels": {"team": "a"}}}])


def state(snap: Snapshot) -> dict[str, Any]:
    """Everything a reader of the snapshot can see, rows and per-node pod order included."""
    rows = range(snap.n)
    return {
        "nodes": [n.name for n in snap.nodes],
        "row_of": dict(snap.row_of),
        "node_objs": [id(n) for n in snap.nodes],
        "alloc": snap.alloc.tolist(),
        "requested": snap.requested.tolist(),
        "nz": snap.non_zero_requested.tolist(),
        "unsched": snap.unschedulable.tolist(),
        "taints": [snap.taint_sets[t] for t in snap.taint_set_ids.tolist()],
        "pods_on": [list(snap.pods_on[r]) for r in rows],
        "ports_on": [sorted(map(repr, snap.ports_on[r])) for r in rows],
        "pod_by_uid": sorted((u, id(p)) for u, p in snap.pod_by_uid.items()),
        "orphans": sorted((u, id(p)) for u, p in snap.orphans.items()),
        "pod_index": sorted(
            (p.uid, int(snap.pods.node_row[i]), int(snap.pods.priority[i])) for i, p in enumerate(snap.pods.items)
        ),
        "labels": {k: snap.labels.codes(k).tolist() for k in snap.labels.keys()},
        "affinity": sorted(snap.affinity_pods),
        "anti": sorted(snap.anti_affinity_pods),
        "namespaces": dict(snap.namespaces),
        "order": snap.order.tolist(),
    }


def test_trial_undoes_every_kind_of_change() -> None:
    snap = _cluster()
    snap.add_pod(_pod("orphan-gone", "gone"))  # orphans at the start: one whose node never comes,
    snap.add_pod(_pod("orphan-n9", "n9"))  # and one whose node the trial adds
    before = state(snap)
    gen = snap.generation
    with snap.trial() as t:
        snap.add_pod(_pod("new", "n1", affinity=ANTI, ports=True))  # added
        snap.add_pod(_pod("p0-2", "n3", cpu="2"))  # bound again elsewhere (replaces the uid)
        snap.remove_pod("p1-0")  # removed (with anti-affinity)
        snap.remove_pod("p2-1")  # removed (with host ports)
        snap.add_pod(_pod("p2-1", "n2"))  # and back, at the end of its node
        snap.add_pod(_pod("lost", "n9"))  # an orphan: its node is unknown
        snap.add_node(_node("n9", zone="z3"))  # a node added: it adopts the orphan
        snap.add_node(_node("n0", zone="z1", unschedulable=True))  # an existing node updated
        snap.set_namespace("default", {"team": "b"})
        snap.set_namespace("other", {})
        snap.remove_pod("orphan-gone")
        assert len(t) > 0
        assert state(snap) != before
    assert state(snap) == before
    assert snap.generation > gen  # derived values built during the trial are not taken as current


def test_removed_pods_come_back_in_their_node_order() -> None:
    snap = _cluster(nodes=2, pods_per_node=5)
    before = list(snap.pods_on[0])
    with snap.trial():
        for uid in ("p0-1", "p0-3", "p0-0"):
            snap.remove_pod(uid)
        snap.add_pod(_pod("p0-3", "n0"))  # a reprieve: back at the end
    assert list(snap.pods_on[0]) == before


def test_trials_nest() -> None:
    snap = _cluster()
    s0 = state(snap)
    with snap.trial():
        snap.remove_pod("p0-0")
        s1 = state(snap)
        with snap.trial():
            snap.add_pod(_pod("inner", "n0"))
            snap.remove_pod("p0-1")
            snap.add_node(_node("n7"))
        assert state(snap) == s1
        snap.add_pod(_pod("outer", "n2"))
    assert state(snap) == s0


def test_an_exception_still_reverts() -> None:
    snap = _cluster()
    before = state(snap)
    with pytest.raises(ValueError, match="boom"), snap.trial():
        snap.remove_pod("p3-0")
        snap.add_node(_node("n8"))
        raise ValueError("boom")
    assert state(snap) == before
    snap.add_pod(_pod("after", "n0"))  # journalling is off again: the change stays
    assert "after" in snap.pod_by_uid


def test_node_removal_is_refused_inside_a_trial() -> None:
    snap = _cluster()
    with pytest.raises(RuntimeError, match="inside a trial"), snap.trial():
        snap.remove_node("n0")
    assert "n0" in snap.row_of


def test_match_counts_agree_after_a_trial() -> None:
    """Counts kept incrementally during the trial come back to what a fresh build gives."""
    snap = _cluster()
    query = (((LabelSelector.parse({"matchLabels": {"app": "x"}}, "selector"), None),), False)
    snap.match_counts.per_node(query, snap.n)  # kept from now on
    with snap.trial():
        snap.add_pod(_pod("extra", "n2"))
        snap.remove_pod("p1-1")
    kept = snap.match_counts.per_node(query, snap.n).tolist()
    snap.match_counts.clear()
    assert kept == snap.match_counts.per_node(query, snap.n).tolist()


def _trial_bytes(snap: Snapshot) -> int:
    tracemalloc.start()
    try:
        with snap.trial():
            snap.add_pod(_pod("x1", "n1"))
            snap.remove_pod("p2-0")
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_a_trial_costs_its_changes_not_the_cluster() -> None:
    small, large = _cluster(nodes=10), _cluster(nodes=2000)
    _trial_bytes(small), _trial_bytes(large)  # warm up lazily built structures
    s, b = _trial_bytes(small), _trial_bytes(large)
    # copying the large cluster's pods or rows would take hundreds of kilobytes
    assert b < 2 * s + 16_384, (s, b)


def test_copy_is_independent_and_equal() -> None:
    snap = _cluster()
    snap.pod_groups[("default", "g")] = PodGroup.parse(
        {"metadata": {"name": "g", "namespace": "default"}, "spec": {"minMember": 2}}
    )
    dup = snap.copy()
    assert state(dup) == state(snap)
    assert dup.pod_groups == snap.pod_groups
    dup.add_pod(_pod("only-in-copy", "n0"))
    dup.add_node(_node("n5"))
    dup.remove_pod("p1-1")
    assert "only-in-copy" not in snap.pod_by_uid and "n5" not in snap.row_of
    assert "p1-1" in snap.pod_by_uid and snap.pods.row_of.get("p1-1") is not None
    other = snap.copy([_node("n1"), _node("n2")])
    assert [n.name for n in other.nodes] == ["n1", "n2"]
    assert sorted(other.orphans) == sorted(u for u, p in snap.pod_by_uid.items() if p.node_name in ("n0", "n3"))


def test_of_reads_every_kind_of_object() -> None:
    eq = ElasticQuota.parse(
        {"metadata": {"name": "q", "namespace": "team"}, "spec": {"min": {"cpu": "1"}, "max": {"cpu": "2"}}}
    )
    pg = PodGroup.parse({"metadata": {"name": "g", "namespace": "team"}, "spec": {"minMember": 3}})
    done = Pod.parse({**make_pod("done", uid="done", node="a"), "status": {"phase": "Succeeded"}})
    objs = ClusterObjects(
        nodes=[_node("a")],
        pods=[_pod("on-a", "a"), _pod("pending"), done],
        namespaces=[Namespace.parse({"metadata": {"name": "team", "labels": {"k": "v"}}})],
        pod_groups=[pg],
        elastic_quotas=[eq],
    )
    snap = Snapshot.of(objs)
    assert sorted(snap.pod_by_uid) == ["on-a"]  # pending and terminal pods are not on nodes
    assert snap.pod_groups == {("team", "g"): pg} and snap.elastic_quotas == {"team": eq}
    assert snap.namespaces == {"team": {"k": "v"}}
    assert objs.pending() == [objs.pods[1]]


def _scheduler(snap: Snapshot, seed: int = 3) -> Scheduler:
    reg = in_tree_registry()
    return Scheduler(build_config(None, reg), snap, None, reg, seed=seed)


def test_what_if_puts_back_the_start_index_and_the_random_state() -> None:
    snap = build_snapshot([_node(f"n{i}") for i in range(20)])
    sched = _scheduler(snap)
    fw = next(iter(sched.frameworks.values()))
    sched.next_start_node_index = 7
    rng_before = sched.rng.bit_generator.state
    before = state(snap)
    with sched.what_if() as s:
        assert s is snap
        for i in range(5):
            p = _pod(f"w{i}")
            res = sched.schedule_pod(fw, CycleState(), p)
            assert res.node is not None
            snap.add_pod(p.with_node(res.node))
        sched.rng.integers(100)  # moved for sure, whatever the cycles drew
        sched.next_start_node_index = (sched.next_start_node_index + 5) % snap.n
        assert sched.rng.bit_generator.state != rng_before and sched.next_start_node_index != 7
    assert sched.next_start_node_index == 7
    assert sched.rng.bit_generator.state == rng_before
    assert state(snap) == before
    # and the next real draw is the one an untouched scheduler makes
    twin = _scheduler(build_snapshot([_node(f"n{i}") for i in range(20)]))
    assert np.array_equal(sched.rng.integers(1 << 30, size=4), twin.rng.integers(1 << 30, size=4))


def test_a_kept_trial_hands_its_changes_to_the_enclosing_one() -> None:
    snap = _cluster()
    s0 = state(snap)
    with snap.trial():
        with snap.trial() as inner:
            snap.remove_pod("p0-0")
            snap.add_pod(_pod("moved", "n1"))
            inner.keep()
        assert "moved" in snap.pod_by_uid and "p0-0" not in snap.pod_by_uid
        with snap.trial():
            snap.add_pod(_pod("dropped", "n1"))
        assert "dropped" not in snap.pod_by_uid
    assert state(snap) == s0
    with snap.trial() as t:
        snap.add_pod(_pod("stays", "n2"))
        t.keep()
    assert "stays" in snap.pod_by_uid


def test_what_if_puts_things_back_after_an_exception() -> None:
    snap = build_snapshot([_node("n0"), _node("n1")])
    sched = _scheduler(snap)
    rng_before, before = sched.rng.bit_generator.state, state(snap)
    with pytest.raises(KeyError), sched.what_if():
        sched.rng.integers(100)
        sched.next_start_node_index = 1
        snap.add_pod(_pod("x", "n1"))
        raise KeyError("x")
    assert sched.rng.bit_generator.state == rng_before and sched.next_start_node_index == 0
    assert state(snap) == before

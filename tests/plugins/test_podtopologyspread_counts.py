"""PodTopologySpread's incremental per-domain counts must equal a from-scratch computation.

One long-lived plugin (its masks and DomainCounts follow the snapshot) is compared, after random
pod and node changes, with a scalar recount over every node's pods and with a fresh plugin.
"""

from __future__ import annotations

import random

import numpy as np
import pytest

from kubesched.api.objects import Node, Pod
from kubesched.api.selectors import LabelSelector
from kubesched.framework.cycle_state import CycleState
from kubesched.plugins.podtopologyspread import PodTopologySpread
from kubesched.plugins.podtopologyspread.common import (
    PRE_FILTER_STATE_KEY,
    PRE_SCORE_STATE_KEY,
    matching_pods_per_node,
)
from kubesched.plugins.podtopologyspread.counts import DomainCounts, count_matching
from kubesched.plugins.podtopologyspread.filtering import PreFilterState
from kubesched.plugins.podtopologyspread.scoring import PreScoreState
from kubesched.state.memo import NODES
from kubesched.state.snapshot import Snapshot
from kubesched.testing import build_snapshot, make_node, make_pod

ZONE = "zone"
HOST = "kubernetes.io/hostname"
TAINT = [{"key": "dedicated", "value": "x", "effect": "NoSchedule"}]
LIST_ARGS = {"defaultingType": "List"}
ZONES = ("z1", "z2", "z3", "z4")
BLUE = LabelSelector.from_match_labels({"color": "blue"})


def _node(name: str, zone: str | None, tier: str | None = "a", tainted: bool = False) -> Node:
    d = make_node(name, taints=TAINT if tainted else None)
    labels = {HOST: name}
    if zone is not None:
        labels[ZONE] = zone
    if tier is not None:
        labels["tier"] = tier
    d["metadata"]["labels"] = labels
    return Node.parse(d)


def _bound(name: str, node: str, color: str, ns: str = "default", deleting: bool = False) -> Pod:
    d = make_pod(name, namespace=ns, labels={"color": color}, node=node)
    if deleting:
        d["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    return Pod.parse(d)


def _incoming(name: str = "in", hard_key: str = ZONE) -> Pod:
    """Hard spreading over ``hard_key`` (taints and nodeSelector tier=a honoured), soft zone and host."""
    sel = {"matchLabels": {"color": "blue"}}
    constraints = [
        {
            "maxSkew": 2,
            "topologyKey": hard_key,
            "whenUnsatisfiable": "DoNotSchedule",
            "labelSelector": sel,
            "nodeTaintsPolicy": "Honor",
        },
        {"maxSkew": 1, "topologyKey": ZONE, "whenUnsatisfiable": "ScheduleAnyway", "labelSelector": sel},
        {"maxSkew": 1, "topologyKey": HOST, "whenUnsatisfiable": "ScheduleAnyway", "labelSelector": sel},
    ]
    spec = {"topologySpreadConstraints": constraints, "nodeSelector": {"tier": "a"}}
    return Pod.parse(make_pod(name, labels={"color": "blue"}, spec=spec))


def _scalar_filter_counts(snap: Snapshot, pod: Pod, key: str) -> tuple[dict[str, int], set[str]]:
    """Matching pods per domain over eligible nodes, and the eligible domains, by walking every node."""
    counts: dict[str, int] = {}
    present: set[str] = set()
    for row, node in enumerate(snap.nodes):
        zone = node.labels.get(key)
        if zone is None or node.labels.get("tier") != "a" or node.taints:
            continue
        present.add(zone)
        n = sum(
            1
            for p in snap.pods_on[row].values()
            if not p.deleting and p.namespace == pod.namespace and p.labels.get("color") == "blue"
        )
        counts[zone] = counts.get(zone, 0) + n
    return {z: counts[z] for z in present}, present


def _states(plugin: PodTopologySpread, snap: Snapshot, pod: Pod) -> tuple[PreFilterState, PreScoreState]:
    state = CycleState()
    assert plugin.pre_filter(state, pod, snap) is None
    assert plugin.pre_score(state, pod, snap, np.arange(snap.n, dtype=np.int32)) is None
    return state.read(PRE_FILTER_STATE_KEY), state.read(PRE_SCORE_STATE_KEY)


def _with(key: str, value: object) -> CycleState:
    state = CycleState()
    state.write(key, value)
    return state


def _check(cached: PodTopologySpread, snap: Snapshot, pod: Pod) -> None:
    fst, sst = _states(cached, snap, pod)
    fresh_f, fresh_s = _states(PodTopologySpread(LIST_ARGS), snap, pod)
    key = fst.constraints[0].topology_key
    values = snap.labels.values_of(key)
    want, present = _scalar_filter_counts(snap, pod, key)
    assert fst.match_num(0, values) == want == fresh_f.match_num(0, values)
    assert {values[k] for k in np.flatnonzero(fst.present[0])} == present
    assert fst.min_match_num(0) == (min(want.values()) if want else 0) == fresh_f.min_match_num(0)
    assert np.array_equal(fst.eligible[0], fresh_f.eligible[0])
    rows = np.arange(snap.n, dtype=np.int32)
    verdict = cached.filter(_with(PRE_FILTER_STATE_KEY, fst), pod, snap, rows)
    fresh_verdict = cached.filter(_with(PRE_FILTER_STATE_KEY, fresh_f), pod, snap, rows)
    assert np.array_equal(verdict.code, fresh_verdict.code)
    assert np.array_equal(verdict.reason_bits, fresh_verdict.reason_bits)
    for i in range(len(sst.constraints)):
        a, b = sst.domain_counts[i], fresh_s.domain_counts[i]
        assert (a is None) == (b is None)
        if a is not None:
            assert np.array_equal(a, b)
        if sst.node_counts[i] is not None:
            assert np.array_equal(sst.node_counts[i], fresh_s.node_counts[i])
    assert sst.weights == fresh_s.weights
    assert np.array_equal(
        cached.score(_with(PRE_SCORE_STATE_KEY, sst), pod, snap, rows),
        cached.score(_with(PRE_SCORE_STATE_KEY, fresh_s), pod, snap, rows),
    )


def _random_node(rng: random.Random, name: str) -> Node:
    zone = rng.choice((*ZONES, None))
    tier = rng.choice(("a", "a", "a", "b", None))
    return _node(name, zone, tier, tainted=rng.random() < 0.15)


@pytest.mark.parametrize(("seed", "hard_key"), [(1, ZONE), (2, ZONE), (3, HOST), (4, HOST)])
def test_counts_follow_random_pod_and_node_changes(seed: int, hard_key: str) -> None:
    rng = random.Random(seed)
    snap = build_snapshot([_random_node(rng, f"n{i}") for i in range(200)])
    cached = PodTopologySpread(LIST_ARGS)
    pod = _incoming(hard_key=hard_key)
    bound: list[str] = []
    serial = 0
    _check(cached, snap, pod)
    for _step in range(60):
        op = rng.random()
        if op < 0.45:  # a batch of binds: one row (scalar path) up to 24 rows (vectorised path)
            for _ in range(rng.choice((1, 1, 3, 20, 24))):
                serial += 1
                node = rng.choice(snap.nodes).name
                p = _bound(
                    f"p{serial}",
                    node,
                    rng.choice(("blue", "blue", "red")),
                    rng.choice(("default", "default", "other")),
                    deleting=rng.random() < 0.1,
                )
                snap.add_pod(p)
                bound.append(p.uid)
        elif op < 0.65 and bound:  # remove or relabel pods
            for uid in rng.sample(bound, min(len(bound), rng.choice((1, 5)))):
                old = snap.pod_by_uid.get(uid)
                if old is None:
                    continue
                if rng.random() < 0.5:
                    snap.remove_pod(uid)
                else:  # an update: same uid, new labels or terminating
                    snap.add_pod(
                        _bound(
                            old.name,
                            old.node_name,
                            rng.choice(("blue", "red")),
                            old.namespace,
                            deleting=rng.random() < 0.3,
                        )
                    )
        elif op < 0.75:  # a big burst of binds: more than n/8 rows, the counts are summed again
            for _ in range(40):
                serial += 1
                p = _bound(f"p{serial}", rng.choice(snap.nodes).name, "blue")
                snap.add_pod(p)
                bound.append(p.uid)
        elif op < 0.85:  # node labels or taints change
            name = rng.choice(snap.nodes).name
            snap.update_node(_random_node(rng, name))
        elif op < 0.92:  # nodes come and go (rows move)
            if rng.random() < 0.5 and snap.n > 150:
                snap.remove_node(rng.choice(snap.nodes).name)
            else:
                serial += 1
                snap.add_node(_random_node(rng, f"new{serial}"))
        else:  # namespaces bump the snapshot's structure without touching nodes
            snap.set_namespace(f"ns{serial}", {})
        _check(cached, snap, pod)


def test_counts_are_updated_not_recomputed(monkeypatch: pytest.MonkeyPatch) -> None:
    """Between node changes a DomainCounts sums once, then follows the changed rows."""
    rebuilt: list[DomainCounts] = []
    rebuild = DomainCounts.rebuild

    def counting(self: DomainCounts, live: np.ndarray) -> DomainCounts:
        rebuilt.append(self)
        return rebuild(self, live)

    monkeypatch.setattr(DomainCounts, "rebuild", counting)
    snap = build_snapshot([_node(f"n{i}", ZONES[i % 4]) for i in range(400)])
    cached = PodTopologySpread(LIST_ARGS)
    pod = _incoming()
    _check(cached, snap, pod)
    counters = list(rebuilt)
    assert counters and all(c.rebuilds == 1 for c in counters)
    for i in range(30):  # one row at a time, then 30 rows at once (< n/8): both incremental
        snap.add_pod(_bound(f"a{i}", f"n{i * 7}", "blue"))
        _check(cached, snap, pod)
    for i in range(30):
        snap.add_pod(_bound(f"b{i}", f"n{i * 13}", "blue"))
    _check(cached, snap, pod)
    assert all(c.rebuilds == 1 for c in counters)
    assert rebuilt == counters  # no counter summed again, none made anew
    snap.update_node(_node("n0", "z9"))  # nodes changed: new masks, new counters
    _check(cached, snap, pod)
    assert all(c.rebuilds == 1 for c in counters)
    assert len(rebuilt) > len(counters) and not any(c in counters for c in rebuilt[len(counters) :])


def test_domain_counts_direct() -> None:
    """DomainCounts on its own: rows outside every domain (-1) never count; busy rows read per_node."""
    snap = build_snapshot([_node(f"n{i}", ZONES[i % 2]) for i in range(8)])
    dom = np.array([0, 1, -1, 1, 0, -1, 0, 1], np.int64)
    reads: list[int] = []

    def live() -> np.ndarray:
        reads.append(1)
        return matching_pods_per_node(snap, BLUE, "default")

    counter = DomainCounts(dom, 3, BLUE, "default")

    def get() -> np.ndarray:  # as ShapeMasks.counts keeps it in the snapshot's memo
        return snap.memo.follow(
            "counts", lambda _old: counter.rebuild(live()), lambda c, rows: c.update(snap, rows, live), on=NODES
        ).sums

    assert get().tolist() == [0, 0, 0]
    for row, uid in ((0, "a"), (2, "b"), (3, "c"), (3, "d"), (5, "e")):  # one row per read: incremental
        snap.add_pod(_bound(uid, f"n{row}", "blue"))
        get()
    snap.add_pod(_bound("red", "n1", "red"))
    assert get().tolist() == [1, 2, 0] and counter.rebuilds == 1
    assert len(reads) == 1  # rows with few pods were recounted from their pods
    for i in range(12):  # a busy row: its count comes from the snapshot's per-node counts
        snap.add_pod(_bound(f"busy{i}", "n7", "blue" if i % 3 else "red"))
        assert get().tolist() == [1, 2 + i - i // 3, 0]
    assert counter.rebuilds == 1 and len(reads) > 1
    for uid in ("default-c", "default-e", "default-a"):  # three rows of eight at once: summed again
        snap.remove_pod(uid)
    got = get()
    assert got.tolist() == [0, 9, 0] and counter.rebuilds == 2
    with pytest.raises(ValueError):
        got[0] = 5  # shared with later cycles: read-only


def test_count_matching_is_the_per_node_count() -> None:
    """The scalar recount of a row agrees with the snapshot's per-node match counts."""
    rng = random.Random(7)
    snap = build_snapshot([_node(f"n{i}", "z1") for i in range(6)])
    for i in range(60):
        snap.add_pod(
            _bound(
                f"p{i}",
                f"n{i % 6}",
                rng.choice(("blue", "red")),
                rng.choice(("default", "other")),
                deleting=rng.random() < 0.2,
            )
        )
    for sel in (BLUE, LabelSelector.parse({}, "sel"), None):
        for ns in ("default", "other"):
            per_node = matching_pods_per_node(snap, sel, ns)
            for row in range(snap.n):
                assert count_matching(snap.pods_on[row].values(), sel, ns) == per_node[row]
    assert matching_pods_per_node(snap, BLUE, "default").sum() > 0


def test_filter_verdicts_follow_add_pod() -> None:
    """AddPod (preemption's dry run) after a Filter call: the next Filter sees the new counts."""
    nodes = [_node("a", "z1"), _node("b", "z1"), _node("x", "z2"), _node("y", "z2")]
    pods = [_bound(f"p{i}", "a", "blue") for i in range(2)]
    snap = build_snapshot(nodes, pods)
    plugin = PodTopologySpread(LIST_ARGS)
    pod = _incoming()
    state = CycleState()
    assert plugin.pre_filter(state, pod, snap) is None
    rows = np.arange(4, dtype=np.int32)
    # z1 has 2, z2 has 0: skew on z1 is 2 + 1 - 0 = 3 > 2
    assert plugin.filter(state, pod, snap, rows).code.tolist() == [2, 2, 0, 0]
    extra = _bound("q", "x", "blue")
    plugin.add_pod(state, pod, extra, snap.row_of["x"], snap)
    assert plugin.filter(state, pod, snap, rows).code.tolist() == [0, 0, 0, 0]
    plugin.remove_pod(state, pod, extra, snap.row_of["x"], snap)
    assert plugin.filter(state, pod, snap, rows).code.tolist() == [2, 2, 0, 0]
    # the cached counts behind the next cycle were not touched by AddPod/RemovePod
    fresh = CycleState()
    assert plugin.pre_filter(fresh, pod, snap) is None
    assert fresh.read(PRE_FILTER_STATE_KEY).match_num(0, snap.labels.values_of(ZONE)) == {"z1": 2, "z2": 0}


def test_counts_survive_a_structure_bump_without_node_changes() -> None:
    """A namespace change clears the snapshot's change log but keeps the nodes (and the masks)."""
    snap = build_snapshot([_node(f"n{i}", ZONES[i % 4]) for i in range(100)])
    cached = PodTopologySpread(LIST_ARGS)
    pod = _incoming()
    for i in range(5):
        snap.add_pod(_bound(f"a{i}", f"n{i}", "blue"))
        _check(cached, snap, pod)
    snap.set_namespace("elsewhere", {"team": "x"})
    snap.add_pod(_bound("after", "n10", "blue"))  # the log is shorter than what was read before
    _check(cached, snap, pod)
    snap.remove_pod("default-a0")
    _check(cached, snap, pod)


def test_minimum_follows_binds_on_many_domains() -> None:
    """Hostname spreading: the kept minimum moves up only when its last domain fills."""
    snap = build_snapshot([_node(f"n{i}", ZONES[i % 4], tainted=i % 5 == 0) for i in range(40)])
    cached = PodTopologySpread(LIST_ARGS)
    pod = _incoming(hard_key=HOST)
    eligible = [node.name for node in snap.nodes if not node.taints]
    for level in range(2):
        for i, name in enumerate(eligible):
            snap.add_pod(_bound(f"p{level}-{i}", name, "blue"))
            _check(cached, snap, pod)  # the minimum: level until the last eligible node gets its pod
    for i in range(3):  # pods leave: the minimum drops at once
        snap.remove_pod(f"default-p1-{i}")
        _check(cached, snap, pod)

"""InterPodAffinity's incremental existing-anti-affinity matchers equal a from-scratch computation.

``ExistingAntiAffinity`` keeps, per incoming pod's (namespace, labels, namespace labels), the
existing pods' required anti-affinity counts and the rows they forbid, updated as pods come and
go. These tests drive a snapshot through pod adds, removes, replacements, node changes and
namespace label changes and compare, after every step, with counts summed afresh.
"""

from __future__ import annotations

import random
from typing import Any

import numpy as np
import pytest
from test_interpodaffinity_filter import pairs  # same folder: on sys.path under pytest

from kubesched.api.objects import Node, Pod
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.status import Code
from kubesched.plugins.interpodaffinity import InterPodAffinity
from kubesched.plugins.interpodaffinity.existing import MAX_MATCHERS
from kubesched.plugins.interpodaffinity.filtering import (
    ANTI_AFFINITY_TAG,
    PreFilterState,
    anti_affinity_group_keys,
    existing_anti_affinity_counts,
)
from kubesched.plugins.interpodaffinity.plugin import PRE_FILTER_STATE_KEY, ExistingTerms
from kubesched.plugins.interpodaffinity.terms import ExistingTermIndex
from kubesched.testing import build_snapshot, make_node, make_pod

HOST = "kubernetes.io/hostname"
NAMESPACES = ["ns1", "ns2", "ns3"]
_seq = iter(range(10**9))


def anti_term(rng: random.Random) -> dict:
    key = rng.choice(["app", "tier"])
    op = rng.choice(["In", "NotIn", "Exists"])
    sel: dict[str, Any] = {"key": key, "operator": op}
    if op != "Exists":
        sel["values"] = rng.sample(["a", "b", "c"], rng.randint(1, 2))
    t: dict[str, Any] = {
        "labelSelector": {"matchExpressions": [sel]},
        "topologyKey": rng.choice(["zone", "region", HOST, HOST]),
    }
    r = rng.random()
    if r < 0.2:
        t["namespaces"] = rng.sample(NAMESPACES, rng.randint(1, 2))
    elif r < 0.35:
        t["namespaceSelector"] = rng.choice([{}, {"matchLabels": {"env": "prod"}}])
    return t


def labels(rng: random.Random) -> dict[str, str]:
    return {k: rng.choice(["a", "b", "c"]) for k in ("app", "tier") if rng.random() < 0.7}


def pod(rng: random.Random, node: str | None, terms: int) -> Pod:
    anti = [anti_term(rng) for _ in range(terms)]
    spec = {"affinity": {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": anti}}}
    return Pod.parse(
        make_pod(
            f"p{next(_seq)}",
            namespace=rng.choice(NAMESPACES),
            labels=labels(rng),
            node=node,
            spec=spec if anti else None,
        )
    )


def node(name: str, rng: random.Random) -> dict:
    lab = {HOST: name}
    if rng.random() < 0.9:
        lab["zone"] = rng.choice(["z1", "z2", "z3"])
    if rng.random() < 0.7:
        lab["region"] = rng.choice(["r1", "r2"])
    return make_node(name, labels=lab)


def from_scratch(incoming: Pod, snap: Any) -> tuple[dict[tuple[str, str], int], np.ndarray]:
    """(nonzero (key, value) -> count, forbidden rows) from a freshly built index."""
    index = ExistingTermIndex(anti_affinity_group_keys, [ANTI_AFFINITY_TAG])
    groups = index.rebuild(snap).groups[ANTI_AFFINITY_TAG]
    ns_labels = snap.namespaces.get(incoming.namespace, {})
    counts = existing_anti_affinity_counts(groups, incoming, ns_labels, snap)
    forbidden = np.zeros(snap.n, bool)
    for key, arr in counts.items():
        codes = snap.labels.codes(key)
        ok = codes >= 0
        forbidden[ok] |= arr[codes[ok]] > 0
    return pairs(counts, snap), forbidden


def prefilter(pl: InterPodAffinity, incoming: Pod, snap: Any) -> PreFilterState | None:
    state = CycleState()
    pl.pre_filter(state, incoming, snap)
    return state.read(PRE_FILTER_STATE_KEY)


def check(pl: InterPodAffinity, incoming: Pod, snap: Any, step: int) -> None:
    want_pairs, want_forbidden = from_scratch(incoming, snap)
    s = prefilter(pl, incoming, snap)
    if s is None:  # Skip: only when nothing forbids and the pod has no required terms
        assert not want_pairs and not incoming.has_required_anti_affinity, step
        return
    assert pairs(s.existing_anti_affinity_counts, snap) == want_pairs, step
    assert s.existing_anti_affinity_counts_nonzero() == bool(want_pairs), step
    if s.existing_blocked is None:  # no existing pod has required anti-affinity
        assert not snap.anti_affinity_pods and not want_forbidden.any(), step
    else:
        np.testing.assert_array_equal(s.existing_blocked > 0, want_forbidden, err_msg=str(step))
    if not incoming.has_required_anti_affinity:
        # Filter's verdicts are the forbidden rows, in any row order.
        rows = np.random.default_rng(step).permutation(snap.n).astype(np.int32)
        res = pl.filter(_state_with(s), incoming, snap, rows)
        np.testing.assert_array_equal(res.code != Code.Success, want_forbidden[rows], err_msg=str(step))


def _state_with(s: PreFilterState) -> CycleState:
    st = CycleState()
    st.write(PRE_FILTER_STATE_KEY, s)
    return st


@pytest.mark.parametrize("seed", range(6))
def test_matchers_follow_pod_and_node_changes(seed: int) -> None:
    rng = random.Random(seed)
    nodes = [node(f"n{i}", rng) for i in range(rng.randint(3, 9))]
    snap = build_snapshot(nodes, namespaces=[{"metadata": {"name": "ns1", "labels": {"env": "prod"}}}])
    pl = InterPodAffinity()  # keeps its index and matchers across calls
    # A few incoming shapes asked again and again, as a workload does.
    incomings = [pod(rng, None, rng.choice([0, 0, 1])) for _ in range(5)]
    for step in range(150):
        r = rng.random()
        names = [n.name for n in snap.nodes]
        if r < 0.5:
            snap.add_pod(pod(rng, rng.choice(names), rng.choice([0, 1, 1, 2])))
        elif snap.pod_by_uid and r < 0.65:
            old = snap.pod_by_uid[rng.choice(list(snap.pod_by_uid))]
            snap.add_pod(old.with_node(rng.choice(names)))  # same uid, maybe another node
        elif snap.pod_by_uid and r < 0.9:
            snap.remove_pod(rng.choice(list(snap.pod_by_uid)))
        elif r < 0.95:
            # a node change: labels move, or an empty node goes (rows move)
            empty = [n.name for i, n in enumerate(snap.nodes) if not snap.pods_on[i]]
            if empty and snap.n > 2 and rng.random() < 0.5:
                snap.remove_node(rng.choice(empty))
            else:
                victim = rng.choice(snap.nodes)
                lab = {**victim.labels, "zone": rng.choice(["z1", "z2", "z4"])}
                snap.update_node(Node.parse(make_node(victim.name, labels=lab)))
        else:
            ns = rng.choice(NAMESPACES)
            snap.set_namespace(ns, {"env": "prod"} if rng.random() < 0.5 else {})
        for incoming in rng.sample(incomings, 3):
            check(pl, incoming, snap, step)


@pytest.mark.parametrize("max_log", [8, 4096])
def test_more_shapes_than_matchers_kept(max_log: int) -> None:
    """Evicted (or lagging, with a short log) matchers are rebuilt right; kept ones stay right."""
    rng = random.Random(11)
    nodes = [node(f"n{i}", rng) for i in range(6)]
    snap = build_snapshot(nodes)
    pl = InterPodAffinity()
    existing = ExistingTerms.of(snap).anti_affinity  # the snapshot's, while its nodes stay put
    existing.MAX_LOG = max_log
    shapes = [
        Pod.parse(make_pod(f"in{i}", namespace=NAMESPACES[i % 3], labels={"app": "a", "k": str(i)}))
        for i in range(MAX_MATCHERS + 8)
    ]
    for step in range(60):
        snap.add_pod(pod(rng, rng.choice(nodes)["metadata"]["name"], 1))
        for incoming in rng.sample(shapes, 12):
            check(pl, incoming, snap, step)
    assert ExistingTerms.of(snap).anti_affinity is existing
    assert 0 < len(existing) <= MAX_MATCHERS
    assert len(existing._log) <= max_log


def test_state_keeps_its_counts_when_pods_come_later() -> None:
    """A PreFilter state built before a change reads the counts of its own cycle."""
    snap = build_snapshot([make_node("a", labels={HOST: "a"}), make_node("b", labels={HOST: "b"})])
    anti = {"labelSelector": {"matchLabels": {"app": "web"}}, "topologyKey": HOST}
    spec = {"affinity": {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [anti]}}}
    snap.add_pod(Pod.parse(make_pod("e1", labels={"app": "web"}, node="a", spec=spec)))
    incoming = Pod.parse(make_pod("in", labels={"app": "web"}))
    pl = InterPodAffinity()
    before = prefilter(pl, incoming, snap)
    assert before is not None
    snap.add_pod(Pod.parse(make_pod("e2", labels={"app": "web"}, node="b", spec=spec)))
    after = prefilter(pl, incoming, snap)
    assert after is not None
    assert pairs(before.existing_anti_affinity_counts, snap) == {(HOST, "a"): 1}
    assert (before.existing_blocked > 0).tolist() == [True, False]
    assert pairs(after.existing_anti_affinity_counts, snap) == {(HOST, "a"): 1, (HOST, "b"): 1}
    assert (after.existing_blocked > 0).tolist() == [True, True]


def test_clone_and_original_change_independently() -> None:
    """AddPod on a clone leaves the original (and the shared matcher) alone, and vice versa."""
    snap = build_snapshot([make_node("a", labels={HOST: "a"}), make_node("b", labels={HOST: "b"})])
    anti = {"labelSelector": {"matchLabels": {"app": "web"}}, "topologyKey": HOST}
    spec = {"affinity": {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [anti]}}}
    snap.add_pod(Pod.parse(make_pod("e1", labels={"app": "web"}, node="a", spec=spec)))
    incoming = Pod.parse(make_pod("in", labels={"app": "web"}, spec=spec))
    pl = InterPodAffinity()
    state = CycleState()
    assert pl.pre_filter(state, incoming, snap) is None
    clone = state.clone()
    added = Pod.parse(make_pod("x", labels={"app": "web"}, node="b", spec=spec))
    rows = np.arange(snap.n, dtype=np.int32)

    pl.add_pod(clone, incoming, added, 1, snap)
    assert (pl.filter(clone, incoming, snap, rows).code != 0).tolist() == [True, True]
    assert (pl.filter(state, incoming, snap, rows).code != 0).tolist() == [True, False]
    # The matcher the states came from is untouched: a new cycle sees only e1.
    fresh = prefilter(pl, incoming, snap)
    assert fresh is not None and pairs(fresh.existing_anti_affinity_counts, snap) == {(HOST, "a"): 1}

    second = state.clone()
    pl.add_pod(state, incoming, added, 1, snap)  # now the original changes, after a second clone
    assert (pl.filter(state, incoming, snap, rows).code != 0).tolist() == [True, True]
    assert (pl.filter(second, incoming, snap, rows).code != 0).tolist() == [True, False]
    pl.remove_pod(state, incoming, added, 1, snap)
    assert (pl.filter(state, incoming, snap, rows).code != 0).tolist() == [True, False]


def statuses(res: Any) -> list:
    return [res.status_at(i) for i in range(len(res.code))]


@pytest.mark.parametrize("seed", range(40))
def test_filter_over_all_rows_on_later_calls_gives_the_same_verdicts(seed: int) -> None:
    """A state's second Filter call answers from verdicts over every row: same statuses."""
    rng = random.Random(seed)
    nodes = [node(f"n{i}", rng) for i in range(rng.randint(2, 9))]
    names = [n["metadata"]["name"] for n in nodes]
    pods = [pod(rng, rng.choice(names), rng.choice([0, 1, 2])) for _ in range(rng.randint(0, 14))]
    snap = build_snapshot(nodes, pods)
    anti = [anti_term(rng) for _ in range(rng.choice([0, 1, 2]))]
    aff = [anti_term(rng) for _ in range(rng.choice([0, 1]))]
    affinity: dict[str, Any] = {}
    if anti:
        affinity["podAntiAffinity"] = {"requiredDuringSchedulingIgnoredDuringExecution": anti}
    if aff:
        affinity["podAffinity"] = {"requiredDuringSchedulingIgnoredDuringExecution": aff}
    incoming = Pod.parse(
        make_pod("in", namespace=rng.choice(NAMESPACES), labels=labels(rng), spec={"affinity": affinity})
    )
    pl = InterPodAffinity()
    state = CycleState()
    if pl.pre_filter(state, incoming, snap) is not None:
        return  # Skip: nothing to filter
    nprng = np.random.default_rng(seed)
    for call in range(3):
        rows = nprng.permutation(snap.n)[: max(1, snap.n - call)].astype(np.int32)
        got = statuses(pl.filter(state, incoming, snap, rows))
        fresh = CycleState()
        pl.pre_filter(fresh, incoming, snap)
        assert got == statuses(pl.filter(fresh, incoming, snap, rows)), (seed, call)
    s = state.read(PRE_FILTER_STATE_KEY)
    if snap.n >= 2 and (s.affinity_terms or s.anti_any):
        assert s._full is not None  # the later calls did take the all-rows path

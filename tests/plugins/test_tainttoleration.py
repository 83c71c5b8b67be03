"""TaintToleration: upstream taint_toleration_test.go tables, plus vectorisation checks."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kubesched.api.objects import Pod
from kubesched.api.taints import tolerated
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.interfaces import MAX_NODE_SCORE
from kubesched.framework.status import Code, PluginError, Status
from kubesched.plugins.tainttoleration import ERR_REASON_UNTOLERATED, NAME, TaintToleration
from kubesched.testing import build_snapshot, make_node, make_pod, run_filter, run_score


def taint(key: str, value: str, effect: str) -> dict[str, str]:
    return {"key": key, "value": value, "effect": effect}


def tol(key: str = "", value: str = "", effect: str = "", op: str | None = None) -> dict[str, Any]:
    d: dict[str, Any] = {"key": key}
    if value:
        d["value"] = value
    if effect:
        d["effect"] = effect
    if op:
        d["operator"] = op
    return d


def pod_with(tolerations: list[dict]) -> dict:
    return make_pod("pod1", spec={"tolerations": tolerations})


UNTOLERATED = Status(Code.UnschedulableAndUnresolvable, (ERR_REASON_UNTOLERATED,), NAME)
OK = Status(plugin=NAME)

FILTER_CASES = [
    (
        "a pod having no tolerations can't be scheduled onto a node with nonempty taints",
        [],
        [taint("dedicated", "user1", "NoSchedule")],
        UNTOLERATED,
    ),
    (
        "a pod which can be scheduled on a dedicated node assigned to user1 with effect NoSchedule",
        [tol("dedicated", "user1", "NoSchedule")],
        [taint("dedicated", "user1", "NoSchedule")],
        OK,
    ),
    (
        "a pod which can't be scheduled on a dedicated node assigned to user2 with effect NoSchedule",
        [tol("dedicated", "user2", "NoSchedule", "Equal")],
        [taint("dedicated", "user1", "NoSchedule")],
        UNTOLERATED,
    ),
    (
        "a toleration with operator Exists tolerates the taints on the node",
        [tol("foo", effect="NoSchedule", op="Exists")],
        [taint("foo", "bar", "NoSchedule")],
        OK,
    ),
    (
        "multiple tolerations, multiple taints, all tolerated",
        [tol("dedicated", "user2", "NoSchedule", "Equal"), tol("foo", effect="NoSchedule", op="Exists")],
        [taint("dedicated", "user2", "NoSchedule"), taint("foo", "bar", "NoSchedule")],
        OK,
    ),
    (
        "key and value match but the (non-empty) effect doesn't",
        [tol("foo", "bar", "PreferNoSchedule", "Equal")],
        [taint("foo", "bar", "NoSchedule")],
        UNTOLERATED,
    ),
    (
        "key and value match and the toleration's effect is empty",
        [tol("foo", "bar", op="Equal")],
        [taint("foo", "bar", "NoSchedule")],
        OK,
    ),
    (
        "key and value don't match but the taint is only PreferNoSchedule",
        [tol("dedicated", "user2", "NoSchedule", "Equal")],
        [taint("dedicated", "user1", "PreferNoSchedule")],
        OK,
    ),
    (
        "no toleration and the taint is only PreferNoSchedule",
        [],
        [taint("dedicated", "user1", "PreferNoSchedule")],
        OK,
    ),
    # Beyond the upstream table: NoExecute also keeps pods off; an empty key with Exists
    # tolerates everything.
    ("an untolerated NoExecute taint rejects", [], [taint("k", "v", "NoExecute")], UNTOLERATED),
    (
        "NoSchedule toleration does not cover NoExecute",
        [tol("k", "v", "NoSchedule")],
        [taint("k", "v", "NoExecute")],
        UNTOLERATED,
    ),
    (
        "empty key with Exists tolerates every taint",
        [tol(op="Exists")],
        [taint("a", "1", "NoSchedule"), taint("b", "2", "NoExecute")],
        OK,
    ),
    ("a node without taints fits a pod without tolerations", [], [], OK),
]


@pytest.mark.parametrize(
    ("name", "tolerations", "taints", "want"), FILTER_CASES, ids=[c[0] for c in FILTER_CASES]
)
def test_filter(name: str, tolerations: list[dict], taints: list[dict], want: Status) -> None:
    snap = build_snapshot([make_node("nodeA", taints=taints)])
    assert run_filter(TaintToleration(), pod_with(tolerations), snap) == [want]


SCORE_CASES = [
    (
        "node with taints tolerated by the pod gets a higher score than nodes with intolerable taints",
        [tol("foo", "bar", "PreferNoSchedule", "Equal")],
        [[taint("foo", "bar", "PreferNoSchedule")], [taint("foo", "blah", "PreferNoSchedule")]],
        [MAX_NODE_SCORE, 0],
    ),
    (
        "nodes whose taints are all tolerated get the same score, however many tolerable taints they have",
        [
            tol("cpu-type", "arm64", "PreferNoSchedule", "Equal"),
            tol("disk-type", "ssd", "PreferNoSchedule", "Equal"),
        ],
        [
            [],
            [taint("cpu-type", "arm64", "PreferNoSchedule")],
            [taint("cpu-type", "arm64", "PreferNoSchedule"), taint("disk-type", "ssd", "PreferNoSchedule")],
        ],
        [MAX_NODE_SCORE, MAX_NODE_SCORE, MAX_NODE_SCORE],
    ),
    (
        "the more intolerable taints a node has, the lower score it gets",
        [tol("foo", "bar", "PreferNoSchedule", "Equal")],
        [
            [],
            [taint("cpu-type", "arm64", "PreferNoSchedule")],
            [taint("cpu-type", "arm64", "PreferNoSchedule"), taint("disk-type", "ssd", "PreferNoSchedule")],
        ],
        [MAX_NODE_SCORE, 50, 0],
    ),
    (
        "only taints and tolerations that have effect PreferNoSchedule are checked",
        [tol("cpu-type", "arm64", "NoSchedule", "Equal"), tol("disk-type", "ssd", "NoSchedule", "Equal")],
        [
            [],
            [taint("cpu-type", "arm64", "NoSchedule")],
            [taint("cpu-type", "arm64", "PreferNoSchedule"), taint("disk-type", "ssd", "PreferNoSchedule")],
        ],
        [MAX_NODE_SCORE, MAX_NODE_SCORE, 0],
    ),
    (
        "default behaviour: no taints and tolerations, lands on node with no taints",
        [],
        [[], [taint("cpu-type", "arm64", "PreferNoSchedule")]],
        [MAX_NODE_SCORE, 0],
    ),
    # Beyond the upstream table: a toleration with no effect counts for PreferNoSchedule.
    (
        "a toleration with an empty effect tolerates PreferNoSchedule taints",
        [tol("foo", op="Exists")],
        [[taint("foo", "x", "PreferNoSchedule")], [taint("bar", "x", "PreferNoSchedule")]],
        [MAX_NODE_SCORE, 0],
    ),
    (
        "integer truncation: 100 - 1*100/3 = 67",
        [],
        [
            [taint("a", "", "PreferNoSchedule")],
            [
                taint("a", "", "PreferNoSchedule"),
                taint("b", "", "PreferNoSchedule"),
                taint("c", "", "PreferNoSchedule"),
            ],
            [],
        ],
        [67, 0, MAX_NODE_SCORE],
    ),
]


@pytest.mark.parametrize(
    ("name", "tolerations", "node_taints", "want"), SCORE_CASES, ids=[c[0] for c in SCORE_CASES]
)
def test_score(name: str, tolerations: list[dict], node_taints: list[list[dict]], want: list[int]) -> None:
    snap = build_snapshot([make_node(f"node{i}", taints=t) for i, t in enumerate(node_taints)])
    _, normalized = run_score(TaintToleration(), pod_with(tolerations), snap)
    assert normalized == want


def test_score_without_prescore_is_an_error() -> None:
    snap = build_snapshot([make_node("n")])
    with pytest.raises(PluginError, match="PreScoreTaintToleration"):
        TaintToleration().score(CycleState(), Pod.parse(make_pod("p")), snap, np.arange(1))


def test_filter_over_a_subset_of_rows_with_shared_taint_sets() -> None:
    nodes = [
        make_node("a", taints=[taint("gpu", "true", "NoSchedule")]),
        make_node("b"),
        make_node("c", taints=[taint("gpu", "true", "NoSchedule")]),
        make_node("d", taints=[taint("maint", "", "NoExecute")]),
        make_node("e"),
    ]
    snap = build_snapshot(nodes)
    assert len(snap.taint_sets) == 3  # (), gpu, maint
    pod = Pod.parse(pod_with([tol("gpu", "true", "NoSchedule")]))
    rows = np.array([4, 3, 2, 0], np.int32)
    res = TaintToleration().filter(CycleState(), pod, snap, rows)
    assert res.failed.tolist() == [False, True, False, False]
    assert res.status_at(1, NAME) == UNTOLERATED


# -- property: the per-taint-set evaluation agrees with a per-node reference ---------------------

_keys = st.sampled_from(["a", "b", "c"])
_values = st.sampled_from(["", "x", "y"])
_effects = st.sampled_from(["NoSchedule", "PreferNoSchedule", "NoExecute"])
_taints = st.lists(
    st.builds(taint, _keys, _values, _effects), max_size=3, unique_by=lambda t: (t["key"], t["effect"])
)
_tols = st.lists(
    st.one_of(
        st.builds(
            lambda k, v, e: tol(k, v, e, "Equal"),
            _keys,
            _values,
            st.sampled_from(["", "NoSchedule", "PreferNoSchedule", "NoExecute"]),
        ),
        st.builds(
            lambda k, e: tol(k, effect=e, op="Exists"),
            st.sampled_from(["", "a", "b"]),
            st.sampled_from(["", "NoSchedule", "PreferNoSchedule"]),
        ),
    ),
    max_size=3,
)


@settings(max_examples=150, deadline=None)
@given(node_taints=st.lists(_taints, min_size=1, max_size=6), tolerations=_tols)
def test_matches_per_node_reference(node_taints: list[list[dict]], tolerations: list[dict]) -> None:
    snap = build_snapshot([make_node(f"n{i}", taints=t) for i, t in enumerate(node_taints)])
    pod = Pod.parse(pod_with(tolerations))
    statuses = run_filter(TaintToleration(), pod, snap)
    raw, normalized = run_score(TaintToleration(), pod, snap)
    want_raw = []
    for i, node in enumerate(snap.nodes):
        bad = any(
            t.effect in ("NoSchedule", "NoExecute") and not tolerated(t, pod.tolerations) for t in node.taints
        )
        assert statuses[i] == (UNTOLERATED if bad else OK)
        pns = tuple(t for t in pod.tolerations if t.effect in ("", "PreferNoSchedule"))
        want_raw.append(
            sum(1 for t in node.taints if t.effect == "PreferNoSchedule" and not tolerated(t, pns))
        )
    assert raw == want_raw
    top = max(want_raw)
    assert normalized == [100 if top == 0 else 100 - r * 100 // top for r in want_raw]

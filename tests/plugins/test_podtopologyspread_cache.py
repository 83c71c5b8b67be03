"""PodTopologySpread's node-mask cache must follow node changes (labels, taints) exactly."""

from __future__ import annotations

import numpy as np

from kubesched.api.objects import Node, Pod
from kubesched.framework.cycle_state import CycleState
from kubesched.plugins.podtopologyspread import PodTopologySpread
from kubesched.plugins.podtopologyspread.common import PRE_FILTER_STATE_KEY
from kubesched.testing import build_snapshot, make_node, make_pod

TAINT = [{"key": "dedicated", "value": "x", "effect": "NoSchedule"}]
ARGS = {"defaultingType": "List"}


def _node(name: str, zone: str | None, taints: list[dict] | None = None) -> Node:
    d = make_node(name, taints=taints)
    d["metadata"]["labels"] = {"node": name} | ({"zone": zone} if zone else {})
    return Node.parse(d)


def _pod(name: str = "p") -> Pod:
    constraint = {
        "maxSkew": 1,
        "topologyKey": "zone",
        "whenUnsatisfiable": "DoNotSchedule",
        "labelSelector": {"matchLabels": {"foo": ""}},
        "nodeTaintsPolicy": "Honor",
    }
    return Pod.parse(make_pod(name, labels={"foo": ""}, spec={"topologySpreadConstraints": [constraint]}))


def _eligible(plugin: PodTopologySpread, snap, pod: Pod) -> tuple[np.ndarray, np.ndarray]:  # noqa: ANN001
    state = CycleState()
    assert plugin.pre_filter(state, pod, snap) is None
    st = state.read(PRE_FILTER_STATE_KEY)
    return st.eligible[0].copy(), st.all_keys.copy()


def test_node_masks_follow_taint_and_label_changes() -> None:
    nodes = [_node("a", "z1"), _node("b", "z1"), _node("x", "z2"), _node("y", "z2")]
    snap = build_snapshot(nodes)
    cached = PodTopologySpread(ARGS)
    elig, keys = _eligible(cached, snap, _pod())
    assert elig.all() and keys.all()
    # The same pod shape again hits the cache (and equals a fresh computation).
    elig2, _ = _eligible(cached, snap, _pod("q"))
    assert np.array_equal(elig2, elig)

    snap.update_node(_node("x", "z2", TAINT))  # taints change: x is no longer eligible
    elig, _ = _eligible(cached, snap, _pod())
    fresh, _ = _eligible(PodTopologySpread(ARGS), snap, _pod())
    assert np.array_equal(elig, fresh)
    assert not elig[snap.row_of["x"]]

    snap.update_node(_node("b", None))  # the topology key goes away: b has not every key
    elig, keys = _eligible(cached, snap, _pod())
    fresh, fresh_keys = _eligible(PodTopologySpread(ARGS), snap, _pod())
    assert np.array_equal(elig, fresh) and np.array_equal(keys, fresh_keys)
    assert not keys[snap.row_of["b"]]


def test_node_masks_are_per_snapshot() -> None:
    plugin = PodTopologySpread(ARGS)
    one = build_snapshot([_node("a", "z1"), _node("b", "z2")])
    two = build_snapshot([_node("a", "z1", TAINT), _node("b", "z2")])
    assert _eligible(plugin, one, _pod())[0].tolist() == [True, True]
    assert _eligible(plugin, two, _pod())[0].tolist() == [False, True]

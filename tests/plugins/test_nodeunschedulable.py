"""NodeUnschedulable: upstream node_unschedulable_test.go table, plus multi-node checks."""

from __future__ import annotations

import numpy as np
import pytest

from kubesched.api.objects import Node, Pod
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.status import Code, Status
from kubesched.plugins.nodeunschedulable import ERR_REASON_UNSCHEDULABLE, NAME, NodeUnschedulable
from kubesched.testing import build_snapshot, make_node, make_pod, run_filter

UNSCHEDULABLE = Status(Code.UnschedulableAndUnresolvable, (ERR_REASON_UNSCHEDULABLE,), NAME)
OK = Status(plugin=NAME)
CORDON_KEY = "node.kubernetes.io/unschedulable"

CASES = [
    ("does not schedule pod to unschedulable node", [], True, UNSCHEDULABLE),
    ("schedules pod to normal node", [], False, OK),
    (
        "schedules pod with toleration to unschedulable node",
        [{"key": CORDON_KEY, "operator": "Exists", "effect": "NoSchedule"}],
        True,
        OK,
    ),
    # Beyond the upstream table: what counts as tolerating the cordon taint.
    ("wildcard toleration (empty key, Exists) tolerates it", [{"operator": "Exists"}], True, OK),
    ("toleration with an empty effect tolerates it", [{"key": CORDON_KEY, "operator": "Exists"}], True, OK),
    (
        "a NoExecute toleration does not tolerate the NoSchedule cordon taint",
        [{"key": CORDON_KEY, "operator": "Exists", "effect": "NoExecute"}],
        True,
        UNSCHEDULABLE,
    ),
    (
        "Equal with an empty value matches the valueless cordon taint",
        [{"key": CORDON_KEY, "operator": "Equal", "effect": "NoSchedule"}],
        True,
        OK,
    ),
    (
        "Equal with a value does not match the valueless cordon taint",
        [{"key": CORDON_KEY, "operator": "Equal", "value": "x", "effect": "NoSchedule"}],
        True,
        UNSCHEDULABLE,
    ),
]


@pytest.mark.parametrize(("name", "tolerations", "unschedulable", "want"), CASES, ids=[c[0] for c in CASES])
def test_filter(name: str, tolerations: list[dict], unschedulable: bool, want: Status) -> None:
    snap = build_snapshot([make_node("n", unschedulable=unschedulable)])
    pod = make_pod("p", spec={"tolerations": tolerations})
    assert run_filter(NodeUnschedulable(), pod, snap) == [want]


def test_filter_rows_subset() -> None:
    snap = build_snapshot([make_node(f"n{i}", unschedulable=i % 2 == 1) for i in range(6)])
    res = NodeUnschedulable().filter(
        CycleState(), Pod.parse(make_pod("p")), snap, np.array([5, 0, 3, 2], np.int32)
    )
    assert res.failed.tolist() == [True, False, True, False]
    assert res.status_at(0, NAME) == UNSCHEDULABLE


def test_uncordoned_node_passes_after_update() -> None:
    snap = build_snapshot([make_node("n", unschedulable=True)])
    snap.update_node(Node.parse(make_node("n")))
    assert run_filter(NodeUnschedulable(), make_pod("p"), snap) == [OK]

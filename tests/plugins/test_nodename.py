"""NodeName: upstream node_name_test.go table, plus multi-node checks."""

from __future__ import annotations

import numpy as np
import pytest

from kubesched.api.objects import Pod
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.interfaces import PreFilterPlugin
from kubesched.framework.status import Code, Status
from kubesched.plugins.nodename import ERR_REASON, NAME, NodeName
from kubesched.testing import build_snapshot, make_node, make_pod, run_filter

MISMATCH = Status(Code.UnschedulableAndUnresolvable, (ERR_REASON,), NAME)
OK = Status(plugin=NAME)

CASES = [
    ("no host specified", None, "node", OK),
    ("host matches", "foo", "foo", OK),
    ("host doesn't match", "bar", "foo", MISMATCH),
]


@pytest.mark.parametrize(("name", "pod_node", "node", "want"), CASES, ids=[c[0] for c in CASES])
def test_filter(name: str, pod_node: str | None, node: str, want: Status) -> None:
    snap = build_snapshot([make_node(node)])
    # build_snapshot would account a pod with nodeName as assigned; parse it on its own.
    pod = Pod.parse(make_pod("p", node=pod_node))
    assert run_filter(NodeName(), pod, snap) == [want]


def test_only_the_named_node_fits() -> None:
    snap = build_snapshot([make_node(n) for n in ("a", "b", "c", "d")])
    pod = Pod.parse(make_pod("p", node="c"))
    res = NodeName().filter(CycleState(), pod, snap, np.array([3, 2, 0], np.int32))
    assert res.failed.tolist() == [True, False, True]
    assert res.status_at(0, NAME) == MISMATCH


def test_unknown_node_name_rejects_every_node() -> None:
    snap = build_snapshot([make_node("a"), make_node("b")])
    assert run_filter(NodeName(), Pod.parse(make_pod("p", node="zzz")), snap) == [MISMATCH, MISMATCH]


def test_no_prefilter_in_v1_36() -> None:
    """The PreFilter narrowing upstream gained in 1.37 (gated, deferred resizes) is not in 1.36."""
    assert not isinstance(NodeName(), PreFilterPlugin)
    assert NodeName.extension_points() == frozenset({"filter"})

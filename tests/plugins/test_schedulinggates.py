"""SchedulingGates: upstream scheduling_gates_test.go table."""

from __future__ import annotations

import pytest

from kubesched.api.objects import Pod
from kubesched.framework.status import Code, Status
from kubesched.plugins.schedulinggates import NAME, SchedulingGates
from kubesched.testing import make_pod


def gated(*gates: str) -> Pod:
    spec = {"schedulingGates": [{"name": g} for g in gates]} if gates else {}
    return Pod.parse(make_pod("p", spec=spec))


CASES = [
    ("pod does not carry scheduling gates", gated(), None),
    (
        "pod carries scheduling gates",
        gated("foo", "bar"),
        Status(Code.UnschedulableAndUnresolvable, ("waiting for scheduling gates: [foo bar]",), NAME),
    ),
    # Beyond the upstream table: one gate, and gate order preserved as in the spec.
    (
        "one gate",
        gated("example.com/quota"),
        Status(
            Code.UnschedulableAndUnresolvable, ("waiting for scheduling gates: [example.com/quota]",), NAME
        ),
    ),
    (
        "gates keep their spec order",
        gated("b", "a", "c"),
        Status(Code.UnschedulableAndUnresolvable, ("waiting for scheduling gates: [b a c]",), NAME),
    ),
]


@pytest.mark.parametrize(("name", "pod", "want"), CASES, ids=[c[0] for c in CASES])
def test_pre_enqueue(name: str, pod: Pod, want: Status | None) -> None:
    assert SchedulingGates().pre_enqueue(pod) == want


def test_is_a_pre_enqueue_plugin() -> None:
    assert SchedulingGates.extension_points() == frozenset({"preEnqueue"})

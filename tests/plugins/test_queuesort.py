"""PrioritySort: upstream priority_sort_test.go table, plus ordering properties."""

from __future__ import annotations

import functools
from dataclasses import dataclass

import pytest

from kubesched.api.objects import Pod
from kubesched.framework.interfaces import QueueSortPlugin
from kubesched.plugins.queuesort import PrioritySort
from kubesched.testing import make_pod

LOW, HIGH = 10, 100
T1 = 1_700_000_000.0
T2 = T1 + 1.0


@dataclass
class Queued:
    """The smallest QueuedPodInfo: a pod and its queue timestamp."""

    pod: Pod
    timestamp: float = 0.0


def queued(priority: int | None, timestamp: float = 0.0, name: str = "p") -> Queued:
    return Queued(Pod.parse(make_pod(name, priority=priority)), timestamp)


CASES = [
    ("p1.priority less than p2.priority", queued(LOW), queued(HIGH), False),
    ("p1.priority greater than p2.priority", queued(HIGH), queued(LOW), True),
    ("equal priority, p1 added to schedulingQ earlier than p2", queued(HIGH, T1), queued(HIGH, T2), True),
    ("equal priority, p2 added to schedulingQ earlier than p1", queued(HIGH, T2), queued(HIGH, T1), False),
    # Beyond the upstream table.
    ("no priority counts as 0", queued(None, T2), queued(-1, T1), True),
    ("priority wins over an earlier timestamp", queued(LOW, T1), queued(HIGH, T2), False),
    ("equal priority and timestamp: not less (irreflexive)", queued(HIGH, T1), queued(HIGH, T1), False),
]


@pytest.mark.parametrize(("name", "p1", "p2", "expected"), CASES, ids=[c[0] for c in CASES])
def test_less(name: str, p1: Queued, p2: Queued, expected: bool) -> None:
    assert PrioritySort().less(p1, p2) is expected


def test_sorting_with_less_gives_priority_then_fifo() -> None:
    plugin = PrioritySort()
    items = [
        queued(0, 3.0, "c"),
        queued(5, 9.0, "b2"),
        queued(5, 2.0, "b1"),
        queued(-3, 1.0, "z"),
        queued(0, 1.0, "a"),
    ]
    key = functools.cmp_to_key(lambda x, y: -1 if plugin.less(x, y) else (1 if plugin.less(y, x) else 0))
    assert [q.pod.name for q in sorted(items, key=key)] == ["b1", "b2", "a", "c", "z"]


def test_is_the_queue_sort_point() -> None:
    assert isinstance(PrioritySort(), QueueSortPlugin)
    assert PrioritySort.extension_points() == frozenset({"queueSort"})
    assert PrioritySort.name == "PrioritySort"

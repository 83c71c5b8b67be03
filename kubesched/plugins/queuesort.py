"""PrioritySort: the activeQ order — higher priority first, then first come, first served."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from kubesched.framework.interfaces import QueueSortPlugin

if TYPE_CHECKING:
    from kubesched.api.objects import Pod

NAME = "PrioritySort"


class QueuedPod(Protocol):
    """What ``less`` reads from a queued pod info: the pod and when it entered the queue."""

    @property
    def pod(self) -> Pod: ...

    @property
    def timestamp(self) -> float: ...


class PrioritySort(QueueSortPlugin):
    """QueueSort: a strict weak order, so the heap pops the most important, oldest pod."""

    name = NAME

    def less(self, a: QueuedPod, b: QueuedPod) -> bool:
        """True when ``a`` must be popped before ``b`` (pods without priority count as 0)."""
        p1, p2 = a.pod.priority, b.pod.priority
        return p1 > p2 or (p1 == p2 and a.timestamp < b.timestamp)

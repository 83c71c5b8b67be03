"""Pods parked at Permit: kube-scheduler's waiting pods map, on the scheduler's clock.

A Permit plugin that answers Wait holds the (already assumed and reserved) pod until every
waiting plugin allows it, one plugin rejects it, or a plugin's timeout passes. kube-scheduler
blocks a binding goroutine per waiting pod; here the scheduler parks the binding cycle in a
``WaitingPod`` and resumes it once the pod is resolved, so the same code runs against a
wall clock (live) or a virtual one (simulation, offline runs).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING, Any

from kubesched.framework.status import Code, Status

if TYPE_CHECKING:
    from kubesched.api.objects import Pod
    from kubesched.framework.cycle_state import CycleState

#: framework/runtime maxTimeout: no plugin may hold a pod longer than this.
MAX_PERMIT_TIMEOUT = 15 * 60.0


def go_duration(seconds: float) -> str:
    """Go's ``time.Duration.String()``: 10s, 1m0s, 1h30m0s, 1.5s, 500ms (as in the timeout message)."""
    ns = round(seconds * 1e9)
    if ns == 0:
        return "0s"
    sign, ns = ("-", -ns) if ns < 0 else ("", ns)
    if ns < 1_000_000_000:
        for unit, size in (("ms", 1_000_000), ("µs", 1_000), ("ns", 1)):
            if ns >= size:
                return sign + _decimal(ns, size) + unit
    hours, rest = divmod(ns, 3_600_000_000_000)
    minutes, rest = divmod(rest, 60_000_000_000)
    out = _decimal(rest, 1_000_000_000) + "s"
    if hours or minutes:
        out = f"{minutes}m" + out
    if hours:
        out = f"{hours}h" + out
    return sign + out


def _decimal(value: int, unit: int) -> str:
    whole, frac = divmod(value, unit)
    if not frac:
        return str(whole)
    digits = len(str(unit)) - 1
    return f"{whole}.{frac:0{digits}d}".rstrip("0")


def timeout_message(plugin: str, wait: float) -> str:
    """The rejection a waiting pod gets when a plugin's timeout passes (waiting_pods_map.go)."""
    return f"rejected due to timeout after waiting {go_duration(wait)} at plugin {plugin}"


class WaitingPod:
    """framework.WaitingPod: the pod, the plugins still to allow it, and its final verdict.

    The first verdict wins, as with upstream's one-slot channel: a reject after the last allow
    (or an allow after a reject) changes nothing.
    """

    def __init__(self, pod: Pod, node_name: str, waits: dict[str, float], now: float) -> None:
        self.pod = pod
        self.node_name = node_name
        self.waits = dict(waits)  # plugin -> seconds it asked to wait
        self.deadlines = {pl: now + w for pl, w in waits.items()}  # plugins that have not allowed yet
        self.status: Status | None = None  # Success once allowed by all, Unschedulable on reject
        self.context: Any = None  # the scheduler's parked binding cycle

    def get_pod(self) -> Pod:
        return self.pod

    def get_pending_plugins(self) -> list[str]:
        return list(self.deadlines)

    @property
    def resolved(self) -> bool:
        return self.status is not None

    def allow(self, plugin: str) -> None:
        """The plugin lets the pod go on; when no plugin is left, the pod is allowed."""
        self.deadlines.pop(plugin, None)
        if not self.deadlines and self.status is None:
            self.status = Status()

    def reject(self, plugin: str, message: str) -> None:
        if self.status is None:
            self.status = Status(Code.Unschedulable, (message,), plugin)

    def next_deadline(self) -> float | None:
        if self.status is not None or not self.deadlines:
            return None
        return min(self.deadlines.values())

    def expire(self, now: float) -> bool:
        """Reject with the timeout message of the first plugin whose deadline has passed."""
        if self.status is not None:
            return False
        for plugin, deadline in sorted(self.deadlines.items(), key=lambda kv: kv[1]):
            if deadline <= now:
                self.reject(plugin, timeout_message(plugin, self.waits[plugin]))
                return True
        return False


class WaitingPods:
    """uid -> WaitingPod, in the order pods started waiting."""

    def __init__(self) -> None:
        self._pods: dict[str, WaitingPod] = {}

    def __len__(self) -> int:
        return len(self._pods)

    def __iter__(self) -> Iterator[WaitingPod]:
        return iter(list(self._pods.values()))

    def __contains__(self, uid: object) -> bool:
        return uid in self._pods

    def add(self, wp: WaitingPod) -> None:
        self._pods[wp.pod.uid] = wp

    def remove(self, uid: str) -> WaitingPod | None:
        return self._pods.pop(uid, None)

    def get(self, uid: str) -> WaitingPod | None:
        """Handle.GetWaitingPod."""
        return self._pods.get(uid)

    def iterate(self, fn: Callable[[WaitingPod], None]) -> None:
        """Handle.IterateOverWaitingPods (safe against ``fn`` allowing or rejecting pods)."""
        for wp in list(self._pods.values()):
            fn(wp)

    def reject(self, uid: str, plugin: str, message: str) -> bool:
        """Handle.RejectWaitingPod: True when the pod was waiting."""
        wp = self._pods.get(uid)
        if wp is None:
            return False
        wp.reject(plugin, message)
        return True

    def next_deadline(self) -> float | None:
        times = [t for wp in self._pods.values() if (t := wp.next_deadline()) is not None]
        return min(times) if times else None

    def expire(self, now: float) -> int:
        """Reject every pod whose timeout has passed; returns how many were rejected."""
        return sum(wp.expire(now) for wp in list(self._pods.values()))

    def first_resolved(self) -> WaitingPod | None:
        return next((wp for wp in self._pods.values() if wp.status is not None), None)


def attach_waiting(handle: Any, waiting: WaitingPods, clock: Callable[[], float]) -> None:
    """Point a handle built on its own (tests, tools) at a scheduler's waiting pods and clock;
    the ``Handle`` methods (``iterate_over_waiting_pods`` and the rest) then act on them."""
    handle.waiting_pods = waiting
    handle.clock = clock


#: CycleState key of framework.PodsToActivate: pods a plugin wants moved back to activeQ.
PODS_TO_ACTIVATE = "kubernetes.io/pods-to-activate"


def request_activation(state: CycleState, pods: Iterable[Pod]) -> None:
    """Ask the scheduler to move ``pods`` (waiting in backoff or unschedulable) to activeQ."""
    want: dict[str, Pod] = state.read(PODS_TO_ACTIVATE) or {}
    for p in pods:
        want[p.uid] = p
    state.write(PODS_TO_ACTIVATE, want)

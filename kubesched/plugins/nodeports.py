"""NodePorts: a pod's host ports must be free on the node (same protocol and port, overlapping IP)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from kubesched.api.objects import HostPort
from kubesched.framework.interfaces import FilterPlugin, PreFilterPlugin, RowLocal
from kubesched.framework.status import Code, FilterResult, PreFilterResult, Status

if TYPE_CHECKING:
    from kubesched.api.objects import Pod
    from kubesched.framework.cycle_state import CycleState
    from kubesched.state.snapshot import Snapshot

NAME = "NodePorts"
PRE_FILTER_STATE_KEY = "PreFilter" + NAME
ERR_REASON = "node(s) didn't have free ports for the requested pod ports"
BIND_ALL_HOST_IP = "0.0.0.0"  # DefaultBindAllHostIP; "::" is not a wildcard upstream either


@dataclass(frozen=True, slots=True)
class WantedPorts:
    """The pod's host ports, pre-indexed so one used port is checked with set lookups.

    Mirrors HostPortInfo.CheckConflict: a wanted 0.0.0.0 port conflicts with that protocol/port
    on any IP; a wanted specific IP conflicts with the same IP or with 0.0.0.0.
    """

    ports: tuple[HostPort, ...]
    any_ip: frozenset[tuple[str, int]]  # (protocol, port) wanted on 0.0.0.0
    every: frozenset[tuple[str, int]]  # (protocol, port) wanted on any IP
    exact: frozenset[tuple[str, str, int]]  # (ip, protocol, port) wanted on a specific IP

    @classmethod
    def of(cls, ports: Iterable[HostPort]) -> WantedPorts:
        ports = tuple(p for p in ports if p.port > 0)
        return cls(
            ports,
            frozenset((p.protocol, p.port) for p in ports if p.host_ip == BIND_ALL_HOST_IP),
            frozenset((p.protocol, p.port) for p in ports),
            frozenset((p.host_ip, p.protocol, p.port) for p in ports if p.host_ip != BIND_ALL_HOST_IP),
        )

    def conflicts(self, used: Iterable[HostPort]) -> bool:
        """fitsPorts, negated: does any wanted port collide with one already in use?"""
        for u in used:
            pp = (u.protocol, u.port)
            if pp in self.any_ip:
                return True
            if u.host_ip == BIND_ALL_HOST_IP:
                if pp in self.every:
                    return True
            elif (u.host_ip, u.protocol, u.port) in self.exact:
                return True
        return False


class NodePorts(PreFilterPlugin, FilterPlugin, RowLocal):
    """PreFilter collects the pod's host ports (Skip when none); Filter checks nodes using ports."""

    name = NAME
    events_to_register = frozenset({"NodeAdd", "AssignedPodDelete"})

    def pre_filter(self, state: CycleState, pod: Pod, snap: Snapshot) -> PreFilterResult | Status | None:
        """util.GetHostPorts: containers plus restartable (sidecar) init containers."""
        if not pod.host_ports:
            return Status(Code.Skip, plugin=NAME)
        state.write(PRE_FILTER_STATE_KEY, WantedPorts.of(pod.host_ports))
        return None

    def add_pod(self, state: CycleState, pod: Pod, added: Pod, row: int, snap: Snapshot) -> None:
        """No PreFilterExtensions upstream: the state does not depend on other pods."""

    def remove_pod(self, state: CycleState, pod: Pod, removed: Pod, row: int, snap: Snapshot) -> None:
        """No PreFilterExtensions upstream: the state does not depend on other pods."""

    def filter(self, state: CycleState, pod: Pod, snap: Snapshot, rows: np.ndarray) -> FilterResult:
        """Unschedulable (not unresolvable): preempting the pod holding the port frees it."""
        want: WantedPorts | None = state.read(PRE_FILTER_STATE_KEY)
        n = len(rows)
        if want is None:  # upstream: Filter without PreFilter is an error
            code = np.full(n, np.int8(Code.Error), np.int8)
            return FilterResult(
                code, np.ones(n, np.int64), (f'reading "{PRE_FILTER_STATE_KEY}" from cycleState: not found',)
            )
        ports_on = snap.ports_on
        rows_list = np.asarray(rows).tolist()
        fail = np.zeros(n, bool)
        # Only nodes already using host ports can conflict; those are few, so the conflict
        # check runs on them alone.
        busy = [i for i, row in enumerate(rows_list) if ports_on[row]]
        for i in busy:
            fail[i] = want.conflicts(ports_on[rows_list[i]])
        return FilterResult.from_mask(fail, ERR_REASON, Code.Unschedulable)

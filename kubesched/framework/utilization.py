"""Measured node utilization, as load-aware plugins read it.

Live, a plugin reads it from Prometheus; in simulation the simulator's own usage model provides it
through ``Handle.utilization``. Both implement :class:`UtilizationSource`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol


class UtilizationUnavailable(Exception):
    """The source cannot answer now (e.g. Prometheus is down); plugins fall back to requests."""


@dataclass(frozen=True)
class NodeUsage:
    """Utilization of one node over the metrics window, in percent (0..100) of its allocatable."""

    cpu_avg: float
    cpu_std: float = 0.0
    mem_avg: float = 0.0
    mem_std: float = 0.0


class UtilizationSource(Protocol):
    def usage(self) -> dict[str, NodeUsage]:
        """Node name -> usage for the nodes the source knows; raises UtilizationUnavailable."""
        ...

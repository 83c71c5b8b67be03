"""The simulated cluster's totals, kept up to date per event so that per-event metrics cost O(1).

Plain floats in named fields, not numpy: they change on every event, and small-array operations
cost microseconds.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

from kubesched.sim.usage import SimUtilization


@dataclass(slots=True)
class Amounts:
    """CPU (milli), memory (bytes) and GPU (milli) amounts."""

    cpu: float = 0.0
    memory: float = 0.0
    gpu: float = 0.0

    def add(self, cpu: float, memory: float, gpu: float, sign: int = 1) -> None:
        self.cpu += sign * cpu
        self.memory += sign * memory
        self.gpu += sign * gpu


class Levels(NamedTuple):
    """Allocated CPU, memory, GPU and used CPU, memory, in percent of the cluster's capacity."""

    cpu: float
    memory: float
    gpu: float
    used_cpu: float
    used_memory: float


class Totals:
    """Capacity, the requests of the running pods (``allocated``), and over the run the weighted
    sums and peaks of the levels: time-weighted in time mode, per attempted pod in arrival mode."""

    def __init__(self, util: SimUtilization) -> None:
        self.util = util  # what the running pods use (the usage model's draws)
        self.capacity = Amounts()
        self.allocated = Amounts()
        self.span = 0.0  # the weights' sum
        # plain lists in ``Levels`` order: they change on every event
        self._acc = [0.0] * len(Levels._fields)
        self._peak = [0.0] * len(Levels._fields)

    def allocated_pct(self) -> tuple[float, float, float]:
        """Allocated CPU, memory, GPU in percent of capacity."""
        c, a = self.capacity, self.allocated
        return (
            100.0 * a.cpu / c.cpu if c.cpu else 0.0,
            100.0 * a.memory / c.memory if c.memory else 0.0,
            100.0 * a.gpu / c.gpu if c.gpu else 0.0,
        )

    def used_pct(self) -> tuple[float, float]:
        """Used CPU and memory in percent of capacity."""
        c, u = self.capacity, self.util
        return (
            100.0 * u.total_cpu_used / c.cpu if c.cpu else 0.0,
            100.0 * u.total_mem_used / c.memory if c.memory else 0.0,
        )

    def levels(self) -> Levels:
        return Levels._make(self.allocated_pct() + self.used_pct())

    def accumulate(self, weight: float) -> None:
        """The levels now count with ``weight`` (the time they held, or 1 per attempted pod)."""
        lv = self.allocated_pct() + self.used_pct()
        self._peak = [max(a, b) for a, b in zip(self._peak, lv, strict=True)]
        if weight > 0:
            self._acc = [a + weight * b for a, b in zip(self._acc, lv, strict=True)]
            self.span += weight

    @property
    def peak(self) -> Levels:
        """The highest levels so far."""
        return Levels._make(self._peak)

    def mean(self) -> Levels:
        """The weighted mean of the levels (the levels now when nothing was weighted)."""
        if self.span > 0:
            return Levels._make(a / self.span for a in self._acc)
        return self.levels()

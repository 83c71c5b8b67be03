"""A usage model for load-aware plugins: each running pod uses a seeded share of its requests."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from kubesched.api.objects import Node
from kubesched.api.resources import CPU, MEMORY
from kubesched.errors import InputError
from kubesched.framework.utilization import NodeUsage


@dataclass(frozen=True)
class UsageModel:
    """Each pod's usage is ``uniform(low, high)`` × its request, drawn once when it starts.

    ``jitter`` is the relative standard deviation reported around a node's mean (what a metrics
    window would see); it does not change the mean.
    """

    low: float = 0.5
    high: float = 1.0
    jitter: float = 0.1

    def __post_init__(self) -> None:
        if not (0.0 <= self.low <= self.high) or not np.isfinite(self.high):
            raise InputError(f"usage fraction: need 0 <= low <= high, got {self.low}:{self.high}")

    def draw(self, rng: np.random.Generator, n: int) -> np.ndarray:
        """(n, 2) used shares of CPU and memory, one row per pod (drawn up front, in pod order)."""
        if self.low == self.high:
            return np.full((n, 2), self.low)
        return rng.uniform(self.low, self.high, (n, 2))

    @classmethod
    def parse(cls, text: str) -> UsageModel:
        """``LOW:HIGH`` or a single fraction (every pod uses exactly that share)."""
        parts = text.split(":")
        try:
            vals = [float(p) for p in parts]
        except ValueError:
            raise InputError(f'--usage-fraction: invalid value "{text}": expected LOW:HIGH, e.g. 0.5:1.0') from None
        if len(vals) == 1:
            vals = vals * 2
        if len(vals) != 2:
            raise InputError(f'--usage-fraction: invalid value "{text}": expected LOW:HIGH, e.g. 0.5:1.0')
        try:
            return cls(vals[0], vals[1])
        except InputError as e:
            raise InputError(f"--usage-fraction: {e.reason}") from None


class SimUtilization:
    """UtilizationSource over the simulated pods (``Handle.utilization`` in simulation)."""

    def __init__(self, model: UsageModel, rng: np.random.Generator) -> None:
        self.model = model
        self.rng = rng
        self._alloc: dict[str, tuple[int, int]] = {}  # node -> (milli-CPU, memory bytes) allocatable
        self._used: dict[str, list[float]] = {}  # node -> [cpu used, memory used]
        self._pod_use: dict[str, tuple[str, float, float]] = {}  # uid -> (node, cpu, memory)
        self._cache: dict[str, NodeUsage] | None = None
        self.total_cpu_used = 0.0
        self.total_mem_used = 0.0

    def add_node(self, node: Node) -> None:
        self._alloc[node.name] = (node.allocatable.get(CPU, 0), node.allocatable.get(MEMORY, 0))
        self._used.setdefault(node.name, [0.0, 0.0])
        self._cache = None

    def remove_node(self, name: str) -> None:
        self._alloc.pop(name, None)
        self._cache = None

    def start(self, uid: str, node: str, cpu: float, mem: float) -> None:
        """A pod starts on ``node`` using ``cpu`` milli-CPU and ``mem`` bytes."""
        self._pod_use[uid] = (node, cpu, mem)
        used = self._used.setdefault(node, [0.0, 0.0])
        used[0] += cpu
        used[1] += mem
        self.total_cpu_used += cpu
        self.total_mem_used += mem
        self._cache = None

    def stop(self, uid: str) -> None:
        entry = self._pod_use.pop(uid, None)
        if entry is None:
            return
        node, cpu, mem = entry
        used = self._used[node]
        used[0] -= cpu
        used[1] -= mem
        self.total_cpu_used -= cpu
        self.total_mem_used -= mem
        self._cache = None

    def usage(self) -> dict[str, NodeUsage]:
        """Node name -> usage in percent of allocatable (rebuilt only after a change)."""
        if self._cache is None:
            j = self.model.jitter
            out: dict[str, NodeUsage] = {}
            for name, (ac, am) in self._alloc.items():
                uc, um = self._used[name]
                c = 100.0 * uc / ac if ac else 0.0
                m = 100.0 * um / am if am else 0.0
                out[name] = NodeUsage(c, c * j, m, m * j)
            self._cache = out
        return self._cache

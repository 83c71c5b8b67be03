"""The bare numpy fit-and-score loop: the floor under what the framework can cost per pod.

No queue, no plugins, no cycle state, no diagnosis, no binding: per pod, one NodeResourcesFit
check over every node, LeastAllocated and BalancedAllocation-like integer scores on the
feasible rows, argmax, and the chosen row's requests updated. `kubesched bench` prints its
pods/s beside SchedulingBasic so the framework's overhead over the arithmetic is visible;
``bench/kernel.py`` runs it alone.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

MILLI_CPU = 4000  # the scheduler_perf node: 4 CPU, 32Gi, 110 pods
MEMORY = 32 * 1024**3
MAX_PODS = 110
POD_CPU = 100  # pod-default: 100m, 500Mi
POD_MEM = 500 * 1024**2


@dataclass
class KernelResult:
    nodes: int
    pods: int
    scheduled: int
    seconds: float
    scored_nodes: str  # "all" or "adaptive"

    @property
    def pods_per_s(self) -> float:
        return self.scheduled / self.seconds if self.seconds > 0 else float("inf")

    def to_dict(self) -> dict[str, float | int | str]:
        return {
            "nodes": self.nodes,
            "pods": self.pods,
            "scheduled": self.scheduled,
            "seconds": self.seconds,
            "scored_nodes": self.scored_nodes,
            "pods_per_s": self.pods_per_s,
        }


def _num_to_score(n: int) -> int:
    """numFeasibleNodesToFind with the adaptive percentage (kube-scheduler's default)."""
    if n < 100:
        return n
    pct = max(50 - n // 125, 5)
    return max(n * pct // 100, 100)


def run_kernel(nodes: int = 5000, pods: int = 10000, *, adaptive: bool = False) -> KernelResult:
    """Schedule ``pods`` pod-default pods on ``nodes`` empty nodes.

    Free capacity is kept per column and updated on the chosen row only (what an incremental
    snapshot does). Scores are computed in float64 and floored, which equals int64 floor
    division for these magnitudes (the error, ~1e-14, is far below 1/capacity). With
    ``adaptive`` only the first numFeasibleNodesToFind feasible nodes from a rotating start are
    scored, as the scheduler does; otherwise every node is scored and infeasible ones masked.
    """
    cap_cpu = np.full(nodes, float(MILLI_CPU))
    cap_mem = np.full(nodes, float(MEMORY))
    free_cpu = np.full(nodes, MILLI_CPU, np.int64)
    free_mem = np.full(nodes, MEMORY, np.int64)
    free_pods = np.full(nodes, MAX_PODS, np.int64)
    k = _num_to_score(nodes) if adaptive else nodes
    start_index = 0
    scheduled = 0
    t0 = time.perf_counter()
    for _ in range(pods):
        fit = free_cpu >= POD_CPU
        fit &= free_mem >= POD_MEM
        fit &= free_pods > 0
        if adaptive:
            rows = np.flatnonzero(fit)
            if rows.size > k:
                first = int(np.searchsorted(rows, start_index))
                rows = np.concatenate((rows[first:], rows[:first]))[:k]
                start_index = (int(rows[-1]) + 1) % nodes
            if rows.size == 0:
                continue
            fc, fm = free_cpu[rows] - POD_CPU, free_mem[rows] - POD_MEM
            cc, cm = cap_cpu[rows], cap_mem[rows]
        else:
            if not fit.any():
                continue
            fc, fm = free_cpu - POD_CPU, free_mem - POD_MEM
            cc, cm = cap_cpu, cap_mem
        uc, um = fc / cc, fm / cm  # unused fractions after placing the pod
        least = (np.floor(uc * 100) + np.floor(um * 100)) // 2  # LeastAllocated, equal weights
        balanced = np.floor((1 - np.abs(uc - um) / 2) * 100)  # BalancedAllocation: std = |f1-f2|/2
        total = least + balanced
        if adaptive:
            best = int(rows[int(np.argmax(total))])
        else:
            total[~fit] = -1
            best = int(np.argmax(total))
        free_cpu[best] -= POD_CPU
        free_mem[best] -= POD_MEM
        free_pods[best] -= 1
        scheduled += 1
    return KernelResult(nodes, pods, scheduled, time.perf_counter() - t0, "adaptive" if adaptive else "all")

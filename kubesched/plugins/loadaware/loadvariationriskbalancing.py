"""LoadVariationRiskBalancing (scheduler-plugins Trimaran): balance mean + variation of load.

Per resource (CPU in millicores, memory in MiB) with capacity C (allocatable), measured average
and standard deviation (percent of C) and the pod's request r:

    mu    = clamp((avg/100 * C + r) / C, 0, 1)
    sigma = clamp(clamp(std/100 * C / C, 0, 1) ** (1 / safeVarianceSensitivity) * safeVarianceMargin, 0, 1)
    score = (1 - (mu + sigma) / 2) * 100

The node's score is round(min(cpu, memory)) when both are measured, else the one that is (a
node with neither scores 0, as upstream). Without any measurement (Prometheus down or stale, no
source) avg is the node's requested share and std is 0 (docs/plugins/LoadVariationRiskBalancing.md).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from kubesched.api.resources import CPU, MEMORY
from kubesched.framework.interfaces import MAX_NODE_SCORE, ScorePlugin
from kubesched.plugins.loadaware.args import parse_load_variation_risk_balancing
from kubesched.plugins.loadaware.source import UtilizationReader

if TYPE_CHECKING:
    from kubesched.api.objects import Pod
    from kubesched.framework.cycle_state import CycleState
    from kubesched.framework.handle import Handle
    from kubesched.state.snapshot import Snapshot

NAME = "LoadVariationRiskBalancing"
MEGA_FACTOR = 1.0 / 1024.0 / 1024.0


def risk_scores(
    avg_pct: np.ndarray,
    std_pct: np.ndarray,
    capacity: np.ndarray,
    req: float,
    margin: float,
    sensitivity: float,
) -> np.ndarray:
    """computeScore over nodes (float64, before rounding); 0 where capacity <= 0."""
    cap = capacity.astype(np.float64)
    used_avg = avg_pct * cap / 100.0
    used_std = std_pct * cap / 100.0
    ok = cap > 0
    safe = np.where(ok, cap, 1.0)
    req = max(req, 0.0)
    used_avg = np.maximum(np.minimum(used_avg, cap), 0.0)
    used_std = np.maximum(np.minimum(used_std, cap), 0.0)
    mu = np.clip((used_avg + req) / safe, 0.0, 1.0)
    sigma = np.clip(used_std / safe, 0.0, 1.0)
    if sensitivity >= 0:
        with np.errstate(divide="ignore"):
            sigma = np.power(sigma, np.float64(1.0) / np.float64(sensitivity))  # 0 -> +Inf root, as Go
    sigma = np.clip(sigma * margin, 0.0, 1.0)
    risk = (mu + sigma) / 2.0
    return np.where(ok, (1.0 - risk) * float(MAX_NODE_SCORE), 0.0)


class LoadVariationRiskBalancing(ScorePlugin):
    """Score only; not row-local (measurements change without the snapshot changing)."""

    name = NAME

    def __init__(self, args: dict[str, Any] | None = None, handle: Handle | None = None) -> None:
        super().__init__(args, handle)
        self.cfg = parse_load_variation_risk_balancing(self.args)
        self.reader = UtilizationReader(NAME, self.cfg.provider, handle)

    def score(self, state: CycleState, pod: Pod, snap: Snapshot, rows: np.ndarray) -> np.ndarray:
        rows = np.asarray(rows, dtype=np.intp)
        n = len(rows)

        def column(res: str, table: np.ndarray) -> np.ndarray:
            col = snap.res_index.get(res)
            return table[rows, col].astype(np.float64) if col is not None else np.zeros(n)

        cpu_cap = column(CPU, snap.alloc)
        mem_cap = column(MEMORY, snap.alloc) * MEGA_FACTOR
        usage = self.reader.read()
        if usage is None:  # requests fallback: requested share, no variation
            with np.errstate(divide="ignore", invalid="ignore"):
                cpu_avg = np.where(cpu_cap > 0, column(CPU, snap.requested) * 100.0 / cpu_cap, 0.0)
                mem_req = column(MEMORY, snap.requested) * MEGA_FACTOR
                mem_avg = np.where(mem_cap > 0, mem_req * 100.0 / mem_cap, 0.0)
            cpu_std = mem_std = np.zeros(n)
        else:
            cpu_avg, cpu_std, mem_avg, mem_std = (c[rows] for c in self.reader.columns(usage, snap))
        cpu_ok, mem_ok = ~np.isnan(cpu_avg), ~np.isnan(mem_avg)
        m, s = self.cfg.margin, self.cfg.sensitivity
        cpu = risk_scores(
            np.nan_to_num(cpu_avg), np.nan_to_num(cpu_std), cpu_cap, float(pod.requests.get(CPU, 0)), m, s
        )
        mem = risk_scores(
            np.nan_to_num(mem_avg),
            np.nan_to_num(mem_std),
            mem_cap,
            float(pod.requests.get(MEMORY, 0)) * MEGA_FACTOR,
            m,
            s,
        )
        cpu = np.where(cpu_ok, cpu, 0.0)
        mem = np.where(mem_ok, mem, 0.0)
        total = np.where(cpu_ok & mem_ok, np.minimum(cpu, mem), np.maximum(cpu, mem))
        return np.floor(total + 0.5).astype(np.int64)  # Go's math.Round (scores are >= 0)

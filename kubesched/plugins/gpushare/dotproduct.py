"""DotProductScore: Tetris-style alignment, preferring the node LEAST aligned with the pod.

With the paper's settings (GPU dimensions merged, both vectors divided by 128 CPUs and 8 GPUs):
``dot = (cpuLeft/128000)(cpu/128000) + (gpuLeft/8000)(gpu/8000)``, score ``int(100 (1 - dot/2))``;
0 where the node lacks the pod's CPU. ``gpuLeft`` sums the node's GPUs, ``gpu`` is count x milli.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from kubesched.framework.interfaces import ScorePlugin
from kubesched.framework.plugin_args import args_body
from kubesched.gpu.model import MAX_SPEC_CPU, MAX_SPEC_GPU
from kubesched.gpu.state import GpuState
from kubesched.plugins.gpushare.common import ReadsGpuAsk, cpu_left, cycle_ask, pod_cpu

if TYPE_CHECKING:
    from kubesched.api.objects import Pod
    from kubesched.framework.cycle_state import CycleState
    from kubesched.framework.handle import Handle
    from kubesched.state.snapshot import Snapshot

NAME = "DotProductScore"


class DotProductScore(ReadsGpuAsk, ScorePlugin):
    name = NAME

    def __init__(self, args: dict[str, Any] | None = None, handle: Handle | None = None) -> None:
        super().__init__(args, handle)
        args_body(NAME, args, ())

    def score(self, state: CycleState, pod: Pod, snap: Snapshot, rows: np.ndarray) -> np.ndarray:
        ask = cycle_ask(state, pod, snap)
        st = GpuState.of(snap)
        cl = cpu_left(snap, rows).astype(np.float64)
        c = float(pod_cpu(pod))
        g = float(ask.total_milli if ask else 0)
        dot = (cl / MAX_SPEC_CPU) * (c / MAX_SPEC_CPU) + (st.total_left(rows) / MAX_SPEC_GPU) * (
            g / MAX_SPEC_GPU
        )
        score = (100.0 * (1.0 - dot / 2.0)).astype(np.int64)
        # np.minimum(np.maximum()) is np.clip on integers, without its Python-level argument checks
        return np.where(cl < c, 0, np.minimum(np.maximum(score, 0), 100)).astype(np.int64)

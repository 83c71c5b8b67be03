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
from kubesched.gpu.state import GpuState
from kubesched.plugins.gpushare import scores
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
        cl, gl = cpu_left(snap, rows), GpuState.of(snap).total_left(rows)
        c, g = float(pod_cpu(pod)), float(ask.total_milli if ask else 0)
        if scores.few(rows):
            return np.array(scores.dotprod_rows(cl.tolist(), gl.tolist(), c, g), np.int64)
        return scores.dotprod_array(cl, gl, c, g)

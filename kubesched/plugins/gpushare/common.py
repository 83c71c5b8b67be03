"""What every GPU-sharing plugin reads: the pod's GPU ask (parsed once per cycle) and CPU left."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from kubesched.api.resources import CPU
from kubesched.framework.interfaces import ROW, Signature, SignPlugin
from kubesched.gpu.model import ASK_ANNOTATIONS, GpuAsk, pod_gpu_ask

if TYPE_CHECKING:
    from kubesched.api.objects import Pod
    from kubesched.framework.cycle_state import CycleState
    from kubesched.state.snapshot import Snapshot

ASK_KEY = "gpushare/ask"


class ReadsGpuAsk(SignPlugin):
    """Mixin of the GPU plugins: they judge a node from its own row (GPUs, CPU left) and read the
    pod's GPU ask from annotations, which their signature then carries."""

    def sign_pod(self, pod: Pod, snap: Snapshot) -> Signature | None:
        return Signature(ROW, tuple(map(pod.annotations.get, ASK_ANNOTATIONS)))
_NONE = object()


def cycle_ask(state: CycleState | None, pod: Pod) -> GpuAsk | None:
    """The pod's GPU ask, cached in the cycle state (ValueError on a malformed annotation)."""
    if state is not None:
        hit = state.read(ASK_KEY)
        if hit is not None and hit[0] is pod:
            return None if hit[1] is _NONE else hit[1]
    ask = pod_gpu_ask(pod)
    if state is not None:
        state.write(ASK_KEY, (pod, _NONE if ask is None else ask))
    return ask


def cpu_left(snap: Snapshot, rows: np.ndarray) -> np.ndarray:
    """Allocatable minus requested milli-CPU per row (what the paper's NodeResource calls left)."""
    c = snap.res_index[CPU]
    return snap.alloc[rows, c] - snap.requested[rows, c]


def pod_cpu(pod: Pod) -> int:
    """The pod's milli-CPU in score and fragmentation formulas (non-zero default for none)."""
    return int(pod.non_zero_cpu)

"""What every GPU-sharing plugin reads: the pod's GPU ask (parsed once per cycle, from its
annotations or, without them, from its ResourceClaims: ``kubesched.gpu.dra``) and CPU left."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, ClassVar

import numpy as np

from kubesched.api.resources import CPU
from kubesched.framework.interfaces import NOT_INVOLVED, ROW, ScorePlugin, Signature, SignPlugin
from kubesched.gpu.dra import pod_ask as dra_pod_ask
from kubesched.gpu.model import ASK_ANNOTATIONS, GpuAsk, pod_gpu_ask
from kubesched.gpu.state import GpuState
from kubesched.plugins.gpushare import scores

if TYPE_CHECKING:
    from kubesched.api.objects import Pod
    from kubesched.framework.cycle_state import CycleState
    from kubesched.state.snapshot import Snapshot

ASK_KEY = "gpushare/ask"


class ReadsGpuAsk(SignPlugin):
    """Mixin of the GPU plugins: they judge a node from its own row (GPUs, CPU left) and read the
    pod's GPU ask from annotations, which their signature then carries."""

    #: which of a pod's GPU signatures the plugin answers: 0 the ask's, 1 the same but NOT_INVOLVED
    #: for a pod that asks for no GPU (OpenGpuShare, whose PreFilter skips such pods)
    signature_slot: ClassVar[int] = 0

    def sign_pod(self, pod: Pod, snap: Snapshot) -> Signature | None:
        if pod.resource_claims:  # the ask may be in the claims: no signature (as DynamicResources)
            return None
        key = tuple(map(pod.annotations.get, ASK_ANNOTATIONS))
        sigs = _SIGNATURES.get(key)
        if sigs is None:
            sigs = _signatures(key, pod)
        return sigs[self.signature_slot]


#: A pod's two GPU signatures per distinct ask (immutable values, as ``gpu.model``'s parsed
#: asks): asked for every pod by every GPU plugin, where building them costs Python calls
_SIGNATURES: dict[tuple[str | None, ...], tuple[Signature, Signature]] = {}


def _signatures(key: tuple[str | None, ...], pod: Pod) -> tuple[Signature, Signature]:
    try:
        no_gpu = pod_gpu_ask(pod) is None
    except ValueError:  # a malformed ask is no skip
        no_gpu = False
    sig = Signature(ROW, key)
    if len(_SIGNATURES) > 4096:
        _SIGNATURES.clear()
    out = _SIGNATURES[key] = (sig, NOT_INVOLVED if no_gpu else sig)
    return out


class GpuPodScore(ReadsGpuAsk, ScorePlugin):
    """A score plugin that ranks nodes for GPU pods only: a pod that asks for no GPU scores 0
    everywhere; the rest is ``gpu_score``."""

    def score(self, state: CycleState, pod: Pod, snap: Snapshot, rows: np.ndarray) -> np.ndarray:
        ask = cycle_ask(state, pod, snap)
        if ask is None:
            return np.zeros(len(rows), np.int64)
        return self.gpu_score(GpuState.of(snap), rows, ask)

    def gpu_score(self, st: GpuState, rows: np.ndarray, ask: GpuAsk) -> np.ndarray:
        raise NotImplementedError


_NONE = object()


def cycle_ask(state: CycleState | None, pod: Pod, snap: Snapshot | None) -> GpuAsk | None:
    """The pod's GPU ask, cached in the cycle state: its annotations', else its claims' (in
    ``snap``'s DRA store). ValueError on a malformed one."""
    if state is not None:
        hit = state.read(ASK_KEY)
        if hit is not None and hit[0] is pod:
            return None if hit[1] is _NONE else hit[1]
    ask = pod_gpu_ask(pod)
    if ask is None and pod.resource_claims and snap is not None:
        ask = dra_pod_ask(pod, snap.dra)
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


class CpuGpuLeftScore(ReadsGpuAsk, ScorePlugin):
    """A score of the CPU and the GPU milli a node has left against the pod's (BestFitScore,
    DotProductScore): its plain-Python form for a few rows, its numpy form for many, both in
    ``kubesched.plugins.gpushare.scores`` so that LearnedScore's features read the same numbers."""

    #: (cpu left per row, GPU milli left per row, pod CPU, pod GPU milli) -> scores
    few_rows: ClassVar[Callable[[list, list, float, float], list[int]]]
    many_rows: ClassVar[Callable[[np.ndarray, np.ndarray, float, float], np.ndarray]]

    def score(self, state: CycleState, pod: Pod, snap: Snapshot, rows: np.ndarray) -> np.ndarray:
        ask = cycle_ask(state, pod, snap)
        cl, gl = cpu_left(snap, rows), GpuState.of(snap).total_left(rows)
        c, g = float(pod_cpu(pod)), float(ask.total_milli if ask else 0)
        if scores.few(rows):
            return np.array(type(self).few_rows(cl.tolist(), gl.tolist(), c, g), np.int64)
        return type(self).many_rows(cl, gl, c, g)

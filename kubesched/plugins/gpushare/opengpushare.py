"""Open-Gpu-Share: GPU filter and GPU index choice (the FGD paper simulator's open-gpu-share).

PreFilter parses the pod's GPU annotations (a malformed one makes the pod unresolvable) and skips
pods asking for no GPU. Filter rejects nodes without GPUs, of a card model outside the pod's
``gpu-card-model`` list, or without room: a sharing pod (1 GPU, milli < 1000) needs one GPU with
at least that milli left, a whole-GPU pod needs ``count`` fully free GPUs. Reserve picks the GPU
indices (``gpuSelMethod``: best, worst, random or FGDScore for sharing pods; whole-GPU pods
always take the lowest-index free GPUs), records them in the shared ``GpuState`` and writes them
to the pod's ``alibabacloud.com/gpu-index`` annotation; Unreserve undoes both.

A pod whose GPUs come from ResourceClaims (``kubesched.gpu.dra``) is filtered the same way on
the same state; its GPUs are DynamicResources' to allocate. PreFilter hands DynamicResources
the GPUs this plugin would choose on a node (a ``DevicePreference``, asked for at Reserve), so
the allocation takes them; Reserve records the GPUs the allocation holds (its own choice when
DynamicResources has not reserved yet) and writes no annotation.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from kubesched.api.resources import CPU
from kubesched.errors import InputError
from kubesched.framework.interfaces import (
    FilterPlugin,
    PreFilterPlugin,
    ReservePlugin,
)
from kubesched.framework.plugin_args import args_body
from kubesched.framework.status import Code, FilterResult, Status
from kubesched.gpu.model import GPU_INDEX, GpuAsk, format_index, pod_gpu_ask
from kubesched.gpu.state import GpuState, best_fit_pick, exclusive_pick
from kubesched.plugins.dynamicresources.preference import PREFERRED_DEVICES
from kubesched.plugins.gpushare.common import ReadsGpuAsk, cpu_left, cycle_ask

if TYPE_CHECKING:
    from kubesched.api.objects import Pod
    from kubesched.framework.cycle_state import CycleState
    from kubesched.framework.handle import Handle
    from kubesched.state.snapshot import Snapshot

NAME = "Open-Gpu-Share"
SEL_METHODS = ("best", "worst", "random", "FGDScore")
REASON_NO_GPU = "node(s) have no GPU"
REASON_MODEL = "node(s) didn't match the pod's GPU card model"
REASON_INSUFFICIENT = "Insufficient GPU"
_ANNOTATIONS_KEY = NAME + "/annotations"
_PICKS_KEY = NAME + "/picks"  # node name -> GPU indices chosen for a pod whose GPUs are claims
_REASONS = (REASON_NO_GPU, REASON_MODEL, REASON_INSUFFICIENT)
# indexed by "why": 0 fits, 1 no GPU, 2 wrong model, 3 no room
_CODES = np.array(
    [0, Code.UnschedulableAndUnresolvable, Code.UnschedulableAndUnresolvable, Code.Unschedulable], np.int8
)
_BITS = np.array([0, 1, 2, 4], np.int64)


def gpu_fit(st: GpuState, rows: np.ndarray, ask: GpuAsk) -> np.ndarray:
    """Rows whose GPUs can hold the ask (model not checked)."""
    if ask.sharing:
        return st.max_left[rows] >= ask.milli
    return st.free[rows] >= ask.count


class OpenGpuShare(ReadsGpuAsk, PreFilterPlugin, FilterPlugin, ReservePlugin):
    name = NAME
    # GPUs come with nodes and free up when pods leave them
    events_to_register = frozenset({"NodeAdd", "NodeUpdate", "AssignedPodDelete"})
    signature_slot = 1  # not involved with the pods asking for no GPU: its PreFilter skips them

    def __init__(self, args: dict[str, Any] | None = None, handle: Handle | None = None) -> None:
        super().__init__(args, handle)
        body = args_body(NAME, args, ("gpuSelMethod",))
        method = body.get("gpuSelMethod", "best")
        if method not in SEL_METHODS:
            raise InputError(
                f'unknown value "{method}" (one of: {", ".join(SEL_METHODS)})',
                path=f"{NAME}Args.gpuSelMethod",
            )
        self.method: str = method

    def pre_filter(self, state: CycleState, pod: Pod, snap: Snapshot) -> Status | None:
        try:
            ask = cycle_ask(state, pod, snap)
        except ValueError as e:
            return Status.unschedulable(str(e), plugin=NAME, unresolvable=True)
        if ask is None:
            return Status(Code.Skip)
        if pod.resource_claims and pod_gpu_ask(pod) is None:  # GPUs from claims: choose for DynamicResources
            picks: dict[str, tuple[int, ...] | None] = {}
            state.write(_PICKS_KEY, picks)
            state.write(PREFERRED_DEVICES, lambda node: self._prefer(snap, pod, ask, picks, node))
        return None

    def _prefer(
        self, snap: Snapshot, pod: Pod, ask: GpuAsk, picks: dict[str, tuple[int, ...] | None], node: str
    ) -> list[tuple[str, str, str]]:
        """The devices of the GPUs this plugin chooses for the pod on ``node`` (chosen once per
        node and cycle: ``random`` draws once)."""
        if node not in picks:
            st = GpuState.of(snap, skip_uid=pod.uid)
            row = snap.row_of[node]
            st.release(pod.uid, row)
            picks[node] = self.pick(snap, st, row, pod, ask)
        chosen = picks[node]
        st = GpuState.of(snap, skip_uid=pod.uid)
        return [] if chosen is None or st.dra is None else st.dra.devices(node, chosen)

    def filter(self, state: CycleState, pod: Pod, snap: Snapshot, rows: np.ndarray) -> FilterResult:
        ask = cycle_ask(state, pod, snap)
        if ask is None:
            return FilterResult.all_pass(len(rows))
        st = GpuState.of(snap)
        # One reason per node, the first that applies: no GPU, wrong model, no room.
        why = np.where(gpu_fit(st, rows, ask), 0, 3)
        if ask.models:
            why = np.where(st.model_mask(ask)[st.model[rows]], why, 2)
        why = np.where(st.count[rows] == 0, 1, why)
        code = _CODES[why]
        return FilterResult(code, _BITS[why], _REASONS)

    def passes(self, state: CycleState, pod: Pod, snap: Snapshot, rows: np.ndarray) -> np.ndarray | None:
        ask = cycle_ask(state, pod, snap)
        if ask is None:
            return np.ones(len(rows), bool)
        st = GpuState.of(snap)
        ok = gpu_fit(st, rows, ask)  # a node without GPUs has none free and 0 milli left: fails here
        if ask.models:
            ok &= st.model_mask(ask)[st.model[rows]]
        return ok

    # ---- Reserve ---------------------------------------------------------------------
    def pick(self, snap: Snapshot, st: GpuState, row: int, pod: Pod, ask: GpuAsk) -> tuple[int, ...] | None:
        """The GPUs for ``pod`` on ``row`` (the pod itself not yet counted on the row's GPUs)."""
        left = st.left[row, : st.count[row]]
        if not ask.sharing:
            return exclusive_pick(left, ask.count)
        if self.method == "FGDScore":
            fgd = self._fgd_plugin()
            # The assumed pod is already in the snapshot: its CPU goes back for the "before" state.
            before = int(cpu_left(snap, np.asarray([row]))[0]) + int(pod.requests.get(CPU, 0))
            i = fgd.pick_gpu(st, row, before, pod, ask)
        elif self.method == "random":
            ok = np.flatnonzero(left >= ask.milli)
            rng = self.handle.rng if self.handle is not None else np.random.default_rng()
            i = int(ok[int(rng.integers(ok.size))]) if ok.size else None
        else:
            i = best_fit_pick(left, ask.milli, worst=self.method == "worst")
        return None if i is None else (i,)

    def _fgd_plugin(self) -> Any:
        fw = self.handle.framework if self.handle is not None else None
        fgd = fw.plugins.get("FGDScore") if fw is not None else None
        if fgd is None or not hasattr(fgd, "pick_gpu"):
            raise RuntimeError("gpuSelMethod FGDScore needs the FGDScore score plugin in the same profile")
        return fgd

    def reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        snap = self.handle.snapshot
        ask = cycle_ask(state, pod, snap)
        if ask is None:
            return None
        st = GpuState.of(snap, skip_uid=pod.uid)
        row = snap.row_of[node_name]
        st.release(pod.uid, row)
        picks: dict[str, tuple[int, ...] | None] | None = state.read(_PICKS_KEY)
        if picks is not None:  # GPUs from claims: those the allocation holds, else this plugin's choice
            held = st.dra.held(pod, snap.dra, node_name) if st.dra is not None else None
            if held is not None:
                indices: tuple[int, ...] | None = held[0]
            else:
                if node_name not in picks:
                    picks[node_name] = self.pick(snap, st, row, pod, ask)
                indices = picks[node_name]
            if indices is None:
                return Status.unschedulable(REASON_INSUFFICIENT, plugin=NAME)
            st.assign(row, pod.uid, ask, indices)
            return None
        indices = self.pick(snap, st, row, pod, ask)
        if indices is None:
            return Status.unschedulable(REASON_INSUFFICIENT, plugin=NAME)
        st.assign(row, pod.uid, ask, indices)
        state.write(_ANNOTATIONS_KEY, pod.annotations)
        self._annotate(snap, pod, {**pod.annotations, GPU_INDEX: format_index(indices)})
        return None

    def unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        snap = self.handle.snapshot
        st = GpuState.of(snap)
        row = snap.row_of.get(node_name)
        if row is not None:
            st.release(pod.uid, row)
        old = state.read(_ANNOTATIONS_KEY)
        if old is not None:
            self._annotate(snap, pod, old)

    @staticmethod
    def _annotate(snap: Snapshot, pod: Pod, annotations: dict[str, str]) -> None:
        """Set the annotations on the queued pod and on its assumed copy (a new dict: the old one
        may be shared with other copies of the pod)."""
        pod.annotations = annotations
        assumed = snap.pod_by_uid.get(pod.uid)
        if assumed is not None:
            assumed.annotations = annotations

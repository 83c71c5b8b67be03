"""GPU accounting for the simulator's metrics, in milli-GPU (1000 = one whole GPU).

Three ways of writing GPUs are counted. GPU sharing (docs/gpu-sharing.md, ``kubesched.gpu.model``):
a node has ``alibabacloud.com/gpu-count`` GPUs, a pod asks for ``alibabacloud.com/gpu-count``
GPUs of ``alibabacloud.com/gpu-milli`` each (annotations). Whole GPUs of the NVIDIA device plugin:
a node's allocatable and a pod's requests of ``nvidia.com/gpu``. Dynamic Resource Allocation
(``kubesched.gpu.dra``): the GPU devices of a node's ResourceSlices, and what a pod's
ResourceClaims (or their templates) ask of them. An object written several ways is counted by
the first of these that it uses. Fragmentation follows the FGD paper's definition against the
workload's typical pods (``kubesched.gpu.metrics``), on the per-GPU state the GPU-sharing plugins
keep: it is measured for GPU-sharing workloads only.
"""

from __future__ import annotations

from collections.abc import Sequence

from kubesched.api.objects import Node, Pod
from kubesched.dra.store import DraState
from kubesched.errors import InputError
from kubesched.gpu.dra import DRIVER, dra_gpus
from kubesched.gpu.dra import pod_ask as dra_pod_ask
from kubesched.gpu.frag import TypicalPods, typical_pods
from kubesched.gpu.metrics import GpuMetrics, GpuMetricsTracker
from kubesched.gpu.model import GPU_COUNT, MILLI, GpuAsk, node_gpu_count, pod_gpu_ask
from kubesched.state.snapshot import Snapshot

#: the whole-GPU extended resource of the NVIDIA device plugin
NVIDIA_GPU = "nvidia.com/gpu"


def node_gpu_milli(node: Node, dra: DraState | None = None) -> int:
    """A node's GPU capacity in milli-GPU (GPU-sharing count, else ``nvidia.com/gpu``, else the
    GPU devices of its ResourceSlices in ``dra``)."""
    count = node_gpu_count(node) or int(node.allocatable.get(NVIDIA_GPU, 0))
    if not count and dra is not None and dra.slices:
        count = dra_gpus(dra).count(node.name)
    return count * MILLI


def pod_dra_ask(pod: Pod, dra: DraState | None) -> GpuAsk | None:
    """The GPU ask of the pod's claims (None without claims or DRA GPUs); a malformed one is an
    InputError naming the pod."""
    if dra is None or not pod.resource_claims:
        return None
    try:
        return dra_pod_ask(pod, dra)
    except ValueError as e:
        raise InputError(str(e), path=f"pod {pod.key}: spec.resourceClaims") from None


def pod_gpu_milli(pod: Pod, dra: DraState | None = None) -> int:
    """What a pod asks of GPUs in total: count × milli per GPU, else its ``nvidia.com/gpu``
    request in whole GPUs, else what its claims ask of the GPUs in ``dra`` (0 for CPU-only pods)."""
    try:
        ask = pod_gpu_ask(pod)
    except ValueError as e:
        raise InputError(str(e), path=f"pod {pod.key}: metadata.annotations") from None
    if ask is not None:
        return ask.total_milli
    whole = int(pod.requests.get(NVIDIA_GPU, 0)) * MILLI
    if whole:
        return whole
    ask = pod_dra_ask(pod, dra)
    return 0 if ask is None else ask.total_milli


def gpu_resources(nodes: Sequence[Node], dra: DraState | None = None) -> list[str]:
    """How the nodes' GPUs are written: the resource names the GPU metrics counted (the DRA
    driver's name for GPUs in ResourceSlices)."""
    out = []
    if any(node_gpu_count(n) for n in nodes):
        out.append(GPU_COUNT)
    if any(not node_gpu_count(n) and n.allocatable.get(NVIDIA_GPU, 0) for n in nodes):
        out.append(NVIDIA_GPU)
    if dra is not None and dra.slices and any(
        not node_gpu_count(n) and not n.allocatable.get(NVIDIA_GPU, 0) and dra_gpus(dra).count(n.name) for n in nodes
    ):
        out.append(DRIVER)
    return out


class FragMeter:
    """Cluster fragmentation against the workload's typical pods (the paper's 95 % cut).

    Wraps ``kubesched.gpu.metrics.GpuMetricsTracker``: each measurement recomputes only the
    nodes whose pods changed since the last one.
    """

    def __init__(self, snap: Snapshot, pods: Sequence[Pod], typical: TypicalPods | None = None) -> None:
        if typical is None:
            asks = [(int(p.non_zero_cpu), pod_gpu_ask(p) or pod_dra_ask(p, snap.dra)) for p in pods]
            if any(a is not None for _, a in asks):
                typical = typical_pods(asks)
        self.typical = typical
        self.tracker = GpuMetricsTracker(snap, typical) if typical is not None else None
        self.last: GpuMetrics | None = None

    @property
    def available(self) -> bool:
        return self.tracker is not None

    def measure(self) -> tuple[float, float] | None:
        """(fragmentation amount, idle GPU) in milli-GPU over the cluster; None without GPU pods."""
        if self.tracker is None:
            return None
        self.last = m = self.tracker.update()
        return m.frag_milli, float(m.idle_milli)

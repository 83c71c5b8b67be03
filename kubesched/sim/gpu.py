"""GPU accounting for the simulator's metrics, in milli-GPU (1000 = one whole GPU).

Two ways of writing GPUs are counted. GPU sharing (docs/gpu-sharing.md, ``kubesched.gpu.model``):
a node has ``alibabacloud.com/gpu-count`` GPUs, a pod asks for ``alibabacloud.com/gpu-count``
GPUs of ``alibabacloud.com/gpu-milli`` each (annotations). Whole GPUs of the NVIDIA device plugin:
a node's allocatable and a pod's requests of ``nvidia.com/gpu``. An object written both ways is
counted by its GPU-sharing fields. Fragmentation follows the FGD paper's definition against the
workload's typical pods (``kubesched.gpu.metrics``), on the per-GPU state the GPU-sharing plugins
keep: it is measured for GPU-sharing workloads only.
"""

from __future__ import annotations

from collections.abc import Sequence

from kubesched.api.objects import Node, Pod
from kubesched.errors import InputError
from kubesched.gpu.frag import TypicalPods, typical_pods_of
from kubesched.gpu.metrics import GpuMetrics, GpuMetricsTracker
from kubesched.gpu.model import GPU_COUNT, MILLI, node_gpu_count, pod_gpu_ask
from kubesched.state.snapshot import Snapshot

#: the whole-GPU extended resource of the NVIDIA device plugin
NVIDIA_GPU = "nvidia.com/gpu"


def node_gpu_milli(node: Node) -> int:
    """A node's GPU capacity in milli-GPU (GPU-sharing count, else ``nvidia.com/gpu``)."""
    count = node_gpu_count(node)
    return (count or int(node.allocatable.get(NVIDIA_GPU, 0))) * MILLI


def pod_gpu_milli(pod: Pod) -> int:
    """What a pod asks of GPUs in total: count × milli per GPU, else its ``nvidia.com/gpu``
    request in whole GPUs (0 for CPU-only pods)."""
    try:
        ask = pod_gpu_ask(pod)
    except ValueError as e:
        raise InputError(str(e), path=f"pod {pod.key}: metadata.annotations") from None
    if ask is not None:
        return ask.total_milli
    return int(pod.requests.get(NVIDIA_GPU, 0)) * MILLI


def gpu_resources(nodes: Sequence[Node]) -> list[str]:
    """How the nodes' GPUs are written: the resource names the GPU metrics counted."""
    out = []
    if any(node_gpu_count(n) for n in nodes):
        out.append(GPU_COUNT)
    if any(not node_gpu_count(n) and n.allocatable.get(NVIDIA_GPU, 0) for n in nodes):
        out.append(NVIDIA_GPU)
    return out


class FragMeter:
    """Cluster fragmentation against the workload's typical pods (the paper's 95 % cut).

    Wraps ``kubesched.gpu.metrics.GpuMetricsTracker``: each measurement recomputes only the
    nodes whose pods changed since the last one.
    """

    def __init__(self, snap: Snapshot, pods: Sequence[Pod], typical: TypicalPods | None = None) -> None:
        if typical is None and any(pod_gpu_ask(p) is not None for p in pods):
            typical = typical_pods_of(pods)
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

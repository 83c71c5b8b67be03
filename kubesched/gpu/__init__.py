"""GPU sharing model: GPU asks on pods, per-node GPU state, fragmentation, cluster metrics.

- ``model``: annotation/label/resource names and ``GpuAsk`` (``pod_gpu_ask(pod)``).
- ``state``: ``GpuState.of(snapshot)``, the (nodes x GPUs) milli-left matrix every GPU plugin shares.
- ``frag``: ``TypicalPods`` (``typical_pods_of(pods)``), ``FragModel`` (F_n(M) vectorised over nodes).
- ``metrics``: ``cluster_gpu_metrics(snapshot, typical) -> GpuMetrics`` (allocated, idle and
  fragmented milli-GPU of the whole cluster) and ``GpuMetricsTracker`` for per-event use.
"""

from kubesched.gpu.frag import TypicalPods, typical_pods, typical_pods_of
from kubesched.gpu.metrics import GpuMetrics, GpuMetricsTracker, cluster_gpu_metrics
from kubesched.gpu.model import GpuAsk, pod_gpu_ask
from kubesched.gpu.state import GpuState

__all__ = [
    "GpuAsk",
    "GpuMetrics",
    "GpuMetricsTracker",
    "GpuState",
    "TypicalPods",
    "cluster_gpu_metrics",
    "pod_gpu_ask",
    "typical_pods",
    "typical_pods_of",
]

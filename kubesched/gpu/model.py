"""How GPUs and GPU asks are written on Kubernetes objects (open-gpu-share's conventions).

Nodes: label ``alibabacloud.com/gpu-card-model`` and the extended resources
``alibabacloud.com/gpu-count`` (GPUs) and ``alibabacloud.com/gpu-milli`` (1000 per GPU).
Pods: annotations ``alibabacloud.com/gpu-count`` (GPUs), ``alibabacloud.com/gpu-milli`` (milli of
ONE GPU, 1..1000) and optionally ``alibabacloud.com/gpu-card-model`` (``"V100M16|V100M32"`` = any
of). The GPUs chosen at Reserve are written to ``alibabacloud.com/gpu-index`` (``"0"``, ``"0-1-3"``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from kubesched.api.selectors import parse_int64

if TYPE_CHECKING:
    from kubesched.api.objects import Node, Pod

GPU_MILLI = "alibabacloud.com/gpu-milli"
GPU_COUNT = "alibabacloud.com/gpu-count"
GPU_MODEL = "alibabacloud.com/gpu-card-model"
GPU_INDEX = "alibabacloud.com/gpu-index"
#: the annotations a pod's GPU ask is read from (``Plugin.pod_annotations`` of the GPU plugins)
ASK_ANNOTATIONS = (GPU_MILLI, GPU_COUNT, GPU_MODEL)
INDEX_SEP = "-"

MILLI = 1000  # one whole GPU
MAX_SPEC_CPU = 128_000  # milli-CPU the paper's scores normalise by
#: The most GPUs a node may report (the GPU state keeps one column per GPU; real nodes have <= 16).
MAX_GPUS_PER_NODE = 128
MAX_SPEC_GPU = 8_000  # milli-GPU the paper's scores normalise by


@dataclass(frozen=True, slots=True)
class GpuAsk:
    """A pod's GPU request: ``count`` GPUs of ``milli`` each (< 1000 only when count == 1)."""

    count: int
    milli: int
    models: tuple[str, ...] = ()  # allowed card models; empty = any
    spec: str = ""  # the annotation as written (typical-pod key)

    @property
    def sharing(self) -> bool:
        return self.count == 1 and self.milli < MILLI

    @property
    def total_milli(self) -> int:
        return self.count * self.milli

    @property
    def tag(self) -> str:
        """GpuClustering's affinity tag: ``share-gpu`` or ``<count>-gpu``."""
        return "share-gpu" if self.sharing else f"{self.count}-gpu"

    def allows(self, model: str) -> bool:
        return not self.models or model in self.models


def parse_models(spec: str) -> tuple[str, ...]:
    """``"A|B"`` -> ("A", "B"); empty parts are ignored, so ``""`` and ``"|"`` allow any model."""
    return tuple(m for m in spec.split("|") if m)


def _int(value: str, key: str) -> int:
    """A decimal integer as Go's strconv parses it (ASCII digits, optional sign, int64)."""
    n = parse_int64(value.strip()) if isinstance(value, str) else None
    if n is None:
        raise ValueError(f'annotation {key}: invalid integer "{value}"')
    return n


def ask_from_annotations(annotations: dict[str, str]) -> GpuAsk | None:
    """The GPU ask written on a pod, None when it asks for no GPU. ValueError on a bad value."""
    milli_s = annotations.get(GPU_MILLI)
    count_s = annotations.get(GPU_COUNT)
    if milli_s is None and count_s is None:
        return None
    milli = _int(milli_s, GPU_MILLI) if milli_s is not None else 0
    count = _int(count_s, GPU_COUNT) if count_s is not None else (1 if milli > 0 else 0)
    if milli <= 0 or count <= 0:
        if milli < 0 or count < 0:
            raise ValueError(f"annotations {GPU_COUNT}/{GPU_MILLI}: must not be negative")
        return None
    if milli > MILLI:
        raise ValueError(f"annotation {GPU_MILLI}: {milli} is more than one GPU ({MILLI})")
    if count > MAX_GPUS_PER_NODE:
        raise ValueError(f"annotation {GPU_COUNT}: {count} GPUs, more than a node can have ({MAX_GPUS_PER_NODE})")
    if count > 1 and milli != MILLI:
        raise ValueError(
            f"annotation {GPU_MILLI}: a pod asking for {count} GPUs must ask for whole GPUs ({MILLI})"
        )
    spec = annotations.get(GPU_MODEL, "")
    return GpuAsk(count, milli, parse_models(spec), spec)


_ASKS: dict[tuple[str | None, str | None, str | None], GpuAsk | None] = {}  # parsed asks by annotation values


def pod_gpu_ask(pod: Pod) -> GpuAsk | None:
    """The pod's GPU ask (parsed once per distinct annotation values). ValueError on a bad one."""
    ann = pod.annotations
    key = (ann.get(GPU_MILLI), ann.get(GPU_COUNT), ann.get(GPU_MODEL))
    try:
        return _ASKS[key]
    except KeyError:
        pass
    ask = ask_from_annotations(ann)
    if len(_ASKS) > 4096:
        _ASKS.clear()
    _ASKS[key] = ask
    return ask


def node_gpu_count(node: Node) -> int:
    return int(node.allocatable.get(GPU_COUNT, 0))


def node_gpu_model(node: Node) -> str:
    return node.labels.get(GPU_MODEL, "")


def format_index(indices: list[int] | tuple[int, ...]) -> str:
    return INDEX_SEP.join(str(i) for i in indices)


def parse_index(value: str) -> tuple[int, ...]:
    """``"0-1-3"`` -> (0, 1, 3); ValueError when malformed."""
    out = []
    for part in value.split(INDEX_SEP):
        n = parse_int64(part.strip())
        if n is None or n < 0 or n >= MAX_GPUS_PER_NODE:
            raise ValueError(f'annotation {GPU_INDEX}: invalid GPU index list "{value}"')
        out.append(n)
    return tuple(out)

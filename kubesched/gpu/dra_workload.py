"""GPU nodes and pods written with annotations, written again the DRA way (``kubesched.gpu.dra``).

The same cluster and workload, two descriptions: a node's ``alibabacloud.com/gpu-count`` GPUs of
model ``alibabacloud.com/gpu-card-model`` become one ResourceSlice of driver ``gpu.nvidia.com``
with a device per GPU (``type: gpu``, ``index``, ``productName``, capacity ``milli: 1000``,
``allowMultipleAllocations: true``: consumable capacity, so that shares of any size fit), and the
node loses the extended resources and the label. A pod's GPU annotations become a reference to a
ResourceClaimTemplate, one per distinct ask: ``count`` GPUs of the DeviceClass ``gpu.nvidia.com``,
whole (no capacity request: a GPU is consumed whole) or, for a share, one GPU with
``capacity.requests: {milli: m}``, and a CEL selector on ``productName`` for a card-model list.
The resourceclaim controller's claim per pod is made when the pod is created
(``DraState.create_pod_claims``).

Why consumable capacity and not partitionable devices: a partitionable GPU publishes a fixed
set of partitions (devices consuming its counters), one device per share a pod may take; openb's
shares come in dozens of sizes (10 to 1000 milli) and several pods may share one GPU, which a
fixed partition list cannot express without a device per size and slot.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from kubesched.api.claims import PodClaimRef
from kubesched.api.objects import Node, Pod
from kubesched.dra.claims import ResourceClaimTemplate
from kubesched.dra.objects import API_VERSION, DeviceClass, ResourceSlice
from kubesched.dra.store import DraObjects
from kubesched.gpu.dra import (
    DEVICE_CLASS,
    DRIVER,
    GPU_TYPE,
    INDEX_ATTRIBUTE,
    MILLI_CAPACITY,
    MODEL_ATTRIBUTE,
    TYPE_ATTRIBUTE,
)
from kubesched.gpu.model import (
    ASK_ANNOTATIONS,
    GPU_COUNT,
    GPU_INDEX,
    GPU_MILLI,
    GPU_MODEL,
    MILLI,
    GpuAsk,
    node_gpu_count,
    node_gpu_model,
    pod_gpu_ask,
)

POD_CLAIM = "gpu"  # the pod's name for its claim (spec.resourceClaims[].name)


@dataclass
class DraWorkload:
    nodes: list[Node]
    pods: list[Pod]
    objects: DraObjects = field(default_factory=DraObjects)


def device_class() -> DeviceClass:
    """The DeviceClass of GPUs (as NVIDIA's DRA driver defines ``gpu.nvidia.com``)."""
    expr = f'device.driver == "{DRIVER}" && device.attributes["{DRIVER}"].{TYPE_ATTRIBUTE} == "{GPU_TYPE}"'
    return DeviceClass.parse(
        {
            "apiVersion": API_VERSION,
            "kind": "DeviceClass",
            "metadata": {"name": DEVICE_CLASS},
            "spec": {"selectors": [{"cel": {"expression": expr}}]},
        },
        f"DeviceClass {DEVICE_CLASS}",
    )


def node_slice(node: Node, count: int, model: str) -> ResourceSlice:
    """The node's GPUs as one ResourceSlice (its own pool)."""
    devices = []
    for i in range(count):
        attrs = {TYPE_ATTRIBUTE: {"string": GPU_TYPE}, INDEX_ATTRIBUTE: {"int": i}}
        if model:
            attrs[MODEL_ATTRIBUTE] = {"string": model}
        devices.append(
            {
                "name": f"gpu-{i}",
                "attributes": attrs,
                "capacity": {MILLI_CAPACITY: {"value": str(MILLI)}},
                "allowMultipleAllocations": True,
            }
        )
    name = f"{node.name}-{DRIVER}"
    return ResourceSlice.parse(
        {
            "apiVersion": API_VERSION,
            "kind": "ResourceSlice",
            "metadata": {"name": name},
            "spec": {
                "driver": DRIVER,
                "nodeName": node.name,
                "pool": {"name": node.name, "generation": 1, "resourceSliceCount": 1},
                "devices": devices,
            },
        },
        f"ResourceSlice {name}",
    )


def _without(d: dict | None, keys: Sequence[str]) -> dict:
    return {k: v for k, v in (d or {}).items() if k not in keys}


def dra_node(node: Node) -> Node:
    """The node without its GPU resources and card-model label."""
    raw = node.raw
    md, status = raw.get("metadata") or {}, raw.get("status") or {}
    gpu_res = (GPU_COUNT, GPU_MILLI)
    new_status = {**status}
    for k in ("allocatable", "capacity"):
        if k in status:
            new_status[k] = _without(status[k], gpu_res)
    return Node.parse({**raw, "metadata": {**md, "labels": _without(md.get("labels"), (GPU_MODEL,))}, "status": new_status})


def template_name(ask: GpuAsk) -> str:
    """``gpu-2``, ``gpu-1-450m``, ``gpu-1-450m-v100m16-v100m32``: a DNS subdomain per ask."""
    name = f"gpu-{ask.count}" + (f"-{ask.milli}m" if ask.milli < MILLI else "")
    if ask.models:
        name += "-" + "-".join("".join(c if c.isalnum() else "-" for c in m.lower()) for m in ask.models)
    return name[:253].strip("-.")


def claim_template(ask: GpuAsk, namespace: str) -> ResourceClaimTemplate:
    """One request ``gpu``: ``count`` GPUs, a share by capacity, the card models by selector."""
    exactly: dict = {"deviceClassName": DEVICE_CLASS, "count": ask.count}
    if ask.models:
        models = ", ".join(f'"{m}"' for m in ask.models)
        exactly["selectors"] = [{"cel": {"expression": f'device.attributes["{DRIVER}"].{MODEL_ATTRIBUTE} in [{models}]'}}]
    if ask.milli < MILLI:
        exactly["capacity"] = {"requests": {MILLI_CAPACITY: str(ask.milli)}}
    name = template_name(ask)
    return ResourceClaimTemplate.parse(
        {
            "apiVersion": API_VERSION,
            "kind": "ResourceClaimTemplate",
            "metadata": {"name": name, "namespace": namespace},
            "spec": {"spec": {"devices": {"requests": [{"name": POD_CLAIM, "exactly": exactly}]}}},
        },
        f"ResourceClaimTemplate {namespace}/{name}",
    )


def dra_pod(pod: Pod, template: str) -> Pod:
    """The pod without GPU annotations, its containers using the claim made from ``template``."""
    p = pod.copy()
    p.annotations = _without(pod.annotations, (*ASK_ANNOTATIONS, GPU_INDEX))
    p.resource_claims = (*pod.resource_claims, PodClaimRef(POD_CLAIM, None, template))
    p.resource_claim_statuses = dict(pod.resource_claim_statuses)
    raw = pod.raw
    spec = raw.get("spec") or {}
    containers = [
        {**c, "resources": {**(c.get("resources") or {}), "claims": [*((c.get("resources") or {}).get("claims") or []), {"name": POD_CLAIM}]}}
        for c in spec.get("containers") or []
    ]
    claims = [*(spec.get("resourceClaims") or []), {"name": POD_CLAIM, "resourceClaimTemplateName": template}]
    md = raw.get("metadata") or {}
    p.raw = {**raw, "metadata": {**md, "annotations": p.annotations}, "spec": {**spec, "containers": containers, "resourceClaims": claims}}
    return p


def to_dra(nodes: Sequence[Node], pods: Sequence[Pod]) -> DraWorkload:
    """The nodes and pods with their GPUs written the DRA way; nodes and pods without GPUs are
    kept as they are. ValueError on a malformed GPU annotation."""
    out = DraWorkload([], [], DraObjects(classes=[device_class()]))
    for node in nodes:
        count = node_gpu_count(node)
        if count <= 0:
            out.nodes.append(node)
            continue
        out.nodes.append(dra_node(node))
        out.objects.slices.append(node_slice(node, count, node_gpu_model(node)))
    templates: dict[tuple[str, str], ResourceClaimTemplate] = {}
    for pod in pods:
        ask = pod_gpu_ask(pod)
        if ask is None:
            out.pods.append(pod)
            continue
        key = (pod.namespace, template_name(ask))
        if key not in templates:
            templates[key] = claim_template(ask, pod.namespace)
        out.pods.append(dra_pod(pod, key[1]))
    out.objects.templates = list(templates.values())
    return out

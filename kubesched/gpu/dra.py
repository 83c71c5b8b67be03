"""GPUs described the DRA way: the same per-GPU model as the annotations, read from
ResourceSlices and ResourceClaims.

``GpuState`` (one row per node, one column of milli left per GPU) is what every GPU-sharing
plugin and the metrics read. With annotations a node says how many GPUs it has and a pod which
share it wants (``kubesched.gpu.model``); with Dynamic Resource Allocation the node's GPUs are
devices in a ResourceSlice and the pod's ask is in its ResourceClaims, and the DynamicResources
plugin allocates them. This module reads the second description into the first model:

* **A GPU** is a device of driver ``gpu.nvidia.com`` with the attribute ``type: gpu`` in a slice
  that names its node (``nodeName``): its ``index`` attribute is its column on the node
  (devices without one follow in slice order), its ``productName`` its card model (a node's
  model is its first GPU's), its capacity ``milli`` (1000) what shares consume.
* **A GPU request** is a claim request whose DeviceClass selects GPU devices. ``ExactCount`` n
  without a capacity request asks for n whole GPUs (a device that allows multiple allocations
  is then consumed whole); count 1 with ``capacity.requests: {milli: m}``, m < 1000, asks for a
  share of one GPU. The card models the request may use are those whose GPUs its class's and
  its own selectors accept, judged on one GPU of each model (``models`` of the ask; empty when
  every model is accepted). Several whole-GPU requests of a pod add up; a share with anything
  else, ``All``, ``firstAvailable`` or other capacities are not in the model (a ValueError, as
  a malformed annotation is).
* **The GPUs a pod holds** are those its claims' allocations (or allocations in flight) name,
  each share consuming what its result records of ``milli``.

``kubesched.gpu.dra_workload`` writes openb nodes and pods this way.
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING

from kubesched.dra.caches import MatchCache
from kubesched.dra.cel import compile_selector
from kubesched.dra.pools import DeviceID
from kubesched.gpu.model import MILLI, GpuAsk

if TYPE_CHECKING:
    from kubesched.api.objects import Pod
    from kubesched.dra.claims import ClaimSpec, ExactRequest, ResourceClaim
    from kubesched.dra.objects import Device
    from kubesched.dra.store import DraState

DRIVER = "gpu.nvidia.com"
DEVICE_CLASS = "gpu.nvidia.com"  # the DeviceClass the converter writes (any class selecting GPUs works)
TYPE_ATTRIBUTE, GPU_TYPE = "type", "gpu"
INDEX_ATTRIBUTE = "index"
MODEL_ATTRIBUTE = "productName"
MILLI_CAPACITY = "milli"
#: a model no GPU has: the ask of a request whose selectors accept no GPU of the cluster
NO_MODEL = "<none>"


@dataclass(frozen=True, slots=True)
class NodeGpus:
    devices: tuple[DeviceID, ...]  # by GPU index
    model: str


class DraGpus:
    """The GPU devices of a DraState's slices: per node its GPUs in index order and model, per
    device its node and index, and one GPU of each model (to judge selectors on)."""

    def __init__(self, dra: DraState) -> None:
        found: dict[str, list[tuple[int, int, DeviceID, str]]] = {}
        self.samples: dict[str, Device] = {}
        for s in dra.slices.values():
            if s.driver != DRIVER or not s.node_name:
                continue
            for pos, d in enumerate(s.devices):
                if _attribute(d, TYPE_ATTRIBUTE) != GPU_TYPE:
                    continue
                index = _attribute(d, INDEX_ATTRIBUTE)
                model = _attribute(d, MODEL_ATTRIBUTE)
                model = model if isinstance(model, str) else ""
                order = index if isinstance(index, int) and not isinstance(index, bool) else 1 << 30
                found.setdefault(s.node_name, []).append((order, pos, (s.driver, s.pool, d.name), model))
                self.samples.setdefault(model, d)
        self.nodes: dict[str, NodeGpus] = {}
        self.where: dict[DeviceID, tuple[str, int]] = {}
        for node, gpus in found.items():
            gpus.sort()
            self.nodes[node] = NodeGpus(tuple(g[2] for g in gpus), gpus[0][3])
            for i, g in enumerate(gpus):
                self.where[g[2]] = (node, i)
        self.samples = dict(sorted(self.samples.items()))

    def __bool__(self) -> bool:
        return bool(self.nodes)

    def count(self, node: str) -> int:
        g = self.nodes.get(node)
        return 0 if g is None else len(g.devices)

    def model(self, node: str) -> str:
        g = self.nodes.get(node)
        return "" if g is None else g.model

    def devices(self, node: str, indices: tuple[int, ...]) -> list[DeviceID]:
        """The devices of those GPU indices of the node."""
        g = self.nodes.get(node)
        return [] if g is None else [g.devices[i] for i in indices if 0 <= i < len(g.devices)]

    # ---- a pod's ask -------------------------------------------------------------------------
    def ask(self, pod: Pod, dra: DraState) -> GpuAsk | None:
        """The GPU ask of the pod's claims (None: they ask for no GPU); ValueError when they ask
        for GPUs in a way the GPU model cannot hold."""
        parts: list[tuple[int, int, tuple[str, ...]]] = []
        for key, spec in claim_specs(pod, dra):
            for req in spec.requests:
                if req.first_available:
                    if any(self._models(sub, dra) is not None for sub in req.first_available):
                        raise ValueError(f"claim {key}, request {req.name}: firstAvailable GPU requests are not in the GPU model")
                    continue
                if req.exactly is None:
                    continue
                models = self._models(req.exactly, dra)
                if models is None:
                    continue
                parts.append((*_count_milli(key, req.name, req.exactly), models))
        if not parts:
            return None
        if len(parts) == 1:
            count, milli, models = parts[0]
        else:
            if any(m != MILLI for _, m, _ in parts):
                raise ValueError(f"pod {pod.key}: a GPU share with other GPU requests is not in the GPU model")
            if len({p[2] for p in parts}) > 1:
                raise ValueError(f"pod {pod.key}: GPU requests for different card models are not in the GPU model")
            count, milli, models = sum(p[0] for p in parts), MILLI, parts[0][2]
        if count > 1 and milli != MILLI:
            raise ValueError(f"pod {pod.key}: a share of {count} GPUs is not in the GPU model")
        return GpuAsk(count, milli, models, "|".join(models))

    def _models(self, req: ExactRequest, dra: DraState) -> tuple[str, ...] | None:
        """The card models the request may use (empty: all), None when it asks for no GPU."""
        cls = dra.classes.get(req.device_class)
        if cls is None:
            return None
        gpu_class = [m for m, d in self.samples.items() if _selected(dra.matches, cls.selectors, d)]
        if not gpu_class:
            return None
        admitted = tuple(m for m in gpu_class if _selected(dra.matches, req.selectors, self.samples[m]))
        if len(admitted) == len(self.samples):
            return ()
        return admitted or (NO_MODEL,)

    # ---- what a pod holds ----------------------------------------------------------------------
    def held(self, pod: Pod, dra: DraState, node: str) -> tuple[tuple[int, ...], int] | None:
        """The GPU indices of the node the pod's claims are allocated (or in flight) on, and the
        milli each holds; None when no claim of the pod holds a GPU there."""
        indices: list[int] = []
        milli = MILLI
        for claim in pod_claims(pod, dra):
            pending = dra.in_flight.get(claim.uid)
            allocation = pending.allocation if pending is not None else claim.allocation
            if allocation is None:
                continue
            for r in allocation.results:
                where = self.where.get(r.device_id)
                if where is None or where[0] != node:
                    continue
                indices.append(where[1])
                for name, amount in r.consumed_capacity or ():
                    if name in (MILLI_CAPACITY, f"{DRIVER}/{MILLI_CAPACITY}"):
                        milli = min(milli, int(amount))
        return (tuple(indices), milli) if indices else None


def _attribute(device: Device, name: str) -> object:
    attr = device.attributes.get(name) or device.attributes.get(f"{DRIVER}/{name}")
    return None if attr is None else attr[1]


def _selected(matches: MatchCache, selectors: tuple[str, ...], device: Device) -> bool:
    """Every selector accepts the device (one that does not compile or evaluate: no)."""
    for expr in selectors:
        sel = compile_selector(expr)
        if sel.program is None or matches.verdict(sel, DRIVER, device) is not True:
            return False
    return True


def _count_milli(claim: str, name: str, req: ExactRequest) -> tuple[int, int]:
    if req.mode != "ExactCount":
        raise ValueError(f"claim {claim}, request {name}: allocationMode {req.mode} is not in the GPU model")
    caps = dict(req.capacity or {})
    amount: Fraction | None = None
    for key in (MILLI_CAPACITY, f"{DRIVER}/{MILLI_CAPACITY}"):
        if key in caps:
            amount = caps.pop(key)
    if caps:
        raise ValueError(f"claim {claim}, request {name}: capacity {', '.join(caps)} is not in the GPU model")
    if amount is None:
        return req.count, MILLI
    if amount.denominator != 1 or not 0 < amount <= MILLI:
        raise ValueError(f"claim {claim}, request {name}: capacity {MILLI_CAPACITY} must be 1..{MILLI}, got {amount}")
    return req.count, int(amount)


def pod_claims(pod: Pod, dra: DraState) -> list[ResourceClaim]:
    """The pod's claims that exist (by name, or made for it from a template)."""
    out = []
    for ref in pod.resource_claims:
        name = ref.claim_name if ref.template_name is None else pod.resource_claim_statuses.get(ref.name)
        claim = dra.claim(pod.namespace, name) if name else None
        if claim is not None:
            out.append(claim)
    return out


def claim_specs(pod: Pod, dra: DraState) -> list[tuple[str, ClaimSpec]]:
    """What the pod's claims ask: each claim's spec, or its template's while the claim is not
    made yet (a pod's ask is known before the resourceclaim controller acts)."""
    out = []
    for ref in pod.resource_claims:
        if ref.template_name is None:
            claim = dra.claim(pod.namespace, ref.claim_name) if ref.claim_name else None
        else:
            made = pod.resource_claim_statuses.get(ref.name)
            claim = dra.claim(pod.namespace, made) if made else None
            if claim is None:
                template = dra.templates.get(f"{pod.namespace}/{ref.template_name}")
                if template is not None:
                    out.append((f"{template.key} (template)", template.spec))
                continue
        if claim is not None:
            out.append((claim.key, claim.spec))
    return out


_GPUS: weakref.WeakKeyDictionary[DraState, tuple[int, DraGpus]] = weakref.WeakKeyDictionary()


def dra_gpus(dra: DraState) -> DraGpus:
    """The DRA GPUs of a store, rebuilt when its slices change."""
    hit = _GPUS.get(dra)
    if hit is None or hit[0] != dra.slice_generation:
        hit = (dra.slice_generation, DraGpus(dra))
        _GPUS[dra] = hit
    return hit[1]


def pod_ask(pod: Pod, dra: DraState) -> GpuAsk | None:
    """A pod's GPU ask from its claims (see ``DraGpus.ask``); None without claims or GPUs."""
    if not pod.resource_claims or not dra.slices:
        return None
    return dra_gpus(dra).ask(pod, dra)

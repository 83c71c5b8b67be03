"""A pod's volumes and claims on the decision view, and which of them a storage plugin's rejection
of a node comes from.

- ``volumes``: each volume the volume plugins read (a PersistentVolumeClaim, a generic ephemeral
  volume's claim, an in-tree disk, an inline CSI volume) with its claim (phase, class and its
  binding mode, request, access modes) and the PersistentVolume bound to it (capacity, where it
  can be used);
- ``claims``: each of ``spec.resourceClaims`` with the ResourceClaim it resolves to, whether and
  how it is allocated (devices, where the allocation can be used) and whom it is reserved for;
- ``rejections``: for every node a storage plugin (VolumeRestrictions, NodeVolumeLimits,
  VolumeBinding, VolumeZone, DynamicResources) rejects, the volumes or claims that decide it.
  The plugin judges the node again (its own PreFilter, then Filter) for a copy of the pod that
  keeps one volume, or one claim, at a time: those rejected there on their own are named. When
  none is (NodeVolumeLimits counts all of a pod's volumes together), ``together`` says so.

The claims and volumes are as the UI's cluster holds them: moving through the run moves pods, so
a claim bound or allocated during the run shows as it ended.
"""

from __future__ import annotations

import dataclasses
from fractions import Fraction
from typing import Any

import numpy as np

from kubesched.api.objects import Pod
from kubesched.api.quantity import format_quantity
from kubesched.api.selectors import NodeSelector
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.runtime import Framework
from kubesched.framework.status import PreFilterResult, Status
from kubesched.plugins.dynamicresources.claims import ClaimUnavailable, claim_name
from kubesched.state.snapshot import Snapshot

STORAGE_PLUGINS = ("VolumeRestrictions", "NodeVolumeLimits", "VolumeBinding", "VolumeZone", "DynamicResources")
PASSING = ("Success", "Skip")


def node_selector_text(sel: NodeSelector | None) -> str | None:
    """``zone in (a,b), disk`` per term, the terms joined by " or "."""
    if sel is None:
        return None
    terms = []
    for t in sel.terms:
        parts = [str(e.requirement) for e in t.match_expressions]
        parts += [f"metadata.name {'in' if f.operator == 'In' else 'notin'} ({f.value})" for f in t.match_fields]
        terms.append(", ".join(parts) or "(matches no node)")
    return " or ".join(terms)


def pod_storage(fw: Framework, snap: Snapshot, pod: Pod, columns: dict[str, Any]) -> dict[str, Any] | None:
    """The pod's volumes, claims and the parts that decide each storage rejection in explain's
    ``columns`` (made against ``snap``, the pod off any node). None: the pod has neither volumes
    nor claims the scheduler reads."""
    if not pod.storage_volumes and not pod.resource_claims:
        return None
    parts = _parts(pod)
    bound = snap.remove_pod(pod.uid)  # judged as explain judged it: as if pending
    try:
        return {
            "volumes": [_volume(snap, pod, v) for v in pod.storage_volumes],
            "claims": [_claim(snap, pod, i) for i in range(len(pod.resource_claims))],
            "rejections": _rejections(fw, snap, parts, columns),
        }
    finally:
        if bound is not None:
            snap.add_pod(bound)


def _volume(snap: Snapshot, pod: Pod, v: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"name": v.name, "source": v.source, "claim": None, "pvc": None, "pv": None, "problem": None}
    if not v.claim_name:
        return out  # an in-tree disk or inline CSI volume: no claim
    out["claim"] = f"{pod.namespace}/{v.claim_name}"
    pvc = snap.storage.pvc(pod.namespace, v.claim_name)
    if pvc is None:
        out["problem"] = f'persistentvolumeclaim "{v.claim_name}" not found'
        return out
    sc = snap.storage.classes.get(pvc.storage_class) if pvc.storage_class else None
    out["pvc"] = {
        "phase": pvc.phase or "Pending",
        "class": pvc.storage_class or None,
        "binding_mode": (sc.binding_mode or "Immediate") if sc is not None else None,
        "request": _bytes(pvc.request),
        "access_modes": list(pvc.access_modes),
        "volume": pvc.volume_name or None,
    }
    pv = snap.storage.pvs.get(pvc.volume_name) if pvc.volume_name else None
    if pv is not None:
        out["pv"] = {
            "name": pv.name,
            "capacity": _bytes(pv.capacity),
            "source": pv.source,
            "node_affinity": node_selector_text(pv.node_affinity),
        }
    elif pvc.volume_name:
        out["problem"] = f'persistentvolume "{pvc.volume_name}" not found'
    return out


def _bytes(q: Fraction | None) -> str | None:
    return None if q is None else format_quantity("storage", int(q)) if q == int(q) else str(float(q))


def _claim(snap: Snapshot, pod: Pod, index: int) -> dict[str, Any]:
    ref = pod.resource_claims[index]
    out: dict[str, Any] = {
        "name": ref.name, "template": ref.template_name, "claim": None, "allocated": False, "devices": [],
        "available_on": None, "reserved_for": [], "problem": None,
    }
    try:
        name, _ = claim_name(pod, index)
    except ClaimUnavailable as e:
        out["problem"] = str(e)
        return out
    if name is None:
        out["problem"] = "the template needed no claim"
        return out
    claim = snap.dra.claim(pod.namespace, name)
    out["claim"] = f"{pod.namespace}/{name}"
    if claim is None:
        out["problem"] = f'resourceclaim.resource.k8s.io "{name}" not found'
        return out
    if claim.allocation is not None:
        out["allocated"] = True
        out["devices"] = [f"{r.device} ({r.driver}, pool {r.pool}; request {r.request})" for r in claim.allocation.results]
        out["available_on"] = node_selector_text(claim.allocation.node_selector) or "every node"
    out["reserved_for"] = [f"{c.resource} {claim.namespace}/{c.name}" for c in claim.reserved_for]
    return out


def _parts(pod: Pod) -> list[tuple[str, Pod]]:
    """(what it is, a copy of the pod with only it) for each volume and each claim."""
    out = []
    for v in pod.storage_volumes:
        label = f'volume "{v.name}"' + (f" (claim {pod.namespace}/{v.claim_name})" if v.claim_name else f" ({v.source})")
        out.append((label, dataclasses.replace(pod, volumes=(v,), storage_volumes=(v,), resource_claims=(), _sig=None)))
    for i, ref in enumerate(pod.resource_claims):
        try:
            name, _ = claim_name(pod, i)
        except ClaimUnavailable:
            name = None
        label = f'claim "{ref.name}"' + (f" (resourceclaim {pod.namespace}/{name})" if name else "")
        out.append((label, dataclasses.replace(pod, volumes=(), storage_volumes=(), resource_claims=(ref,), _sig=None)))
    return out


def _rejections(fw: Framework, snap: Snapshot, parts: list[tuple[str, Pod]], columns: dict[str, Any]) -> list[dict[str, Any]]:
    """For each (node, storage plugin) that rejects the pod in explain's ``columns``: the parts
    that the plugin rejects there on their own."""
    f = columns["filter"]
    failing = [i for i, v in enumerate(f["verdicts"]) if v["code"] not in PASSING]
    plugins = {pl.name: pl for pl in fw.filter}
    out = []
    for name, at in zip(f["plugins"], f["at"], strict=True):
        pl = plugins.get(name)
        if name not in STORAGE_PLUGINS or pl is None:
            continue
        nodes = [(i, v) for i, v in enumerate(at) if v in failing]
        if not nodes:
            continue
        rows = snap.rows_of(columns["name"][i] for i, _ in nodes)
        alone = [(label, _fails(fw, pl, part, snap, rows)) for label, part in parts]
        for j, (i, v) in enumerate(nodes):
            by = [label for label, fails in alone if fails[j]]
            reason = "; ".join(f["verdicts"][v]["reasons"]) or f["verdicts"][v]["code"]
            out.append({"node": columns["name"][i], "plugin": name, "reason": reason, "by": by, "together": not by})
    return out


def _fails(fw: Framework, pl: Any, pod: Pod, snap: Snapshot, rows: np.ndarray) -> np.ndarray:
    """Whether plugin ``pl`` rejects ``pod`` on each of ``rows`` (its PreFilter, then its Filter)."""
    state = CycleState()
    pre = getattr(pl, "pre_filter", None)
    if pre is not None:
        out = fw.call(pl, "PreFilter", pre, state, pod, snap)
        st = out.status if isinstance(out, PreFilterResult) else (out or Status())
        if st.code.name == "Skip":
            return np.zeros(len(rows), bool)
        if st.code.name not in PASSING:
            return np.ones(len(rows), bool)
        if isinstance(out, PreFilterResult) and out.node_names is not None:
            names = out.node_names
            outside = np.fromiter((snap.nodes[int(r)].name not in names for r in rows), bool, len(rows))
        else:
            outside = np.zeros(len(rows), bool)
    else:
        outside = np.zeros(len(rows), bool)
    res = fw.call(pl, "Filter", pl.filter, state, pod, snap, rows)
    return (np.asarray(res.code) != 0) | outside

"""The parts of an allocation result besides its devices: the configuration that applies to its
requests, and its node selector (createNodeSelector: where the devices it took can be used)."""

from __future__ import annotations

from kubesched.api.selectors import NodeSelector
from kubesched.dra.claims import DeviceResult, ResourceClaim
from kubesched.dra.objects import Device, DeviceClass, ResourceSlice


def claim_config(claim: ResourceClaim, taken: list[tuple[str, DeviceClass]], chosen: list[int]) -> tuple[dict, ...]:
    """The allocation's config: each class's config for the requests (full names) that took
    devices through it (``taken``, per request), then the claim's own for the requests it names
    (``chosen``: per request, the subrequest that was satisfied)."""
    config: list[dict] = []
    class_ranges: dict[str, tuple[int, int]] = {}
    for name, cls in taken:
        rng = class_ranges.get(cls.name)
        if rng is not None:
            for i in range(*rng):
                config[i]["requests"].append(name)
            continue
        start = len(config)
        for c in cls.raw.get("spec", {}).get("config") or []:
            config.append({"source": "FromClass", "requests": [name], **{k: v for k, v in c.items() if k != "requests"}})
        class_ranges[cls.name] = (start, len(config))
    for c in claim.spec.config:
        wanted = c.get("requests") or []
        body = {k: v for k, v in c.items() if k != "requests"}
        if not wanted:
            config.append({"source": "FromClaim", **body})
            continue
        for req, si in zip(claim.spec.requests, chosen, strict=True):
            if req.name in wanted:
                config.append({"source": "FromClaim", "requests": list(wanted), **body})
                continue
            if not req.first_available:
                continue
            if f"{req.name}/{req.first_available[si].name}" in wanted:
                config.append({"source": "FromClaim", "requests": list(wanted), **body})
    return tuple(config)


_SELECTORS: dict[str, NodeSelector] = {}  # parsed node selectors of allocations, by their text


def parsed_selector(raw: dict | None) -> NodeSelector | None:
    """The allocation's node selector, parsed once per distinct selector (the allocator makes
    one per node it is asked about, nearly always the node's own)."""
    if raw is None:
        return None
    key = repr(raw)
    sel = _SELECTORS.get(key)
    if sel is None:
        if len(_SELECTORS) > 100_000:
            _SELECTORS.clear()
        sel = _SELECTORS[key] = NodeSelector.parse(raw, "status.allocation.nodeSelector")
    return sel


def node_selector(results: list[tuple[DeviceResult, ResourceSlice, Device]]) -> dict | None:
    """createNodeSelector: the node a node-local device pins the claim to, else the union of the
    slices' (or per-device) selector requirements, else none (usable everywhere)."""
    fields: list[dict] = []
    exprs: list[dict] = []
    for _, s, d in results:
        if s.per_device_node_selection:
            node_name, raw = d.node_name, None
            raw = _device_selector_raw(s, d)
        else:
            node_name, raw = s.node_name, (s.raw.get("spec") or {}).get("nodeSelector")
        if node_name:
            return {
                "nodeSelectorTerms": [
                    {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node_name]}]}
                ]
            }
        terms = (raw or {}).get("nodeSelectorTerms") or []
        if len(terms) == 1:
            for src, dst in ((terms[0].get("matchFields") or [], fields), (terms[0].get("matchExpressions") or [], exprs)):
                for r in src:
                    if not any(_same_requirement(r, x) for x in dst):
                        dst.append(r)
    if not fields and not exprs:
        return None
    term: dict = {}
    if exprs:
        term["matchExpressions"] = exprs
    if fields:
        term["matchFields"] = fields
    return {"nodeSelectorTerms": [term]}


def _device_selector_raw(s: ResourceSlice, d: Device) -> dict | None:
    for raw in (s.raw.get("spec") or {}).get("devices") or []:
        if raw.get("name") == d.name:
            return raw.get("nodeSelector")
    return None


def _same_requirement(a: dict, b: dict) -> bool:
    return (
        a.get("key") == b.get("key")
        and a.get("operator") == b.get("operator")
        and set(a.get("values") or ()) == set(b.get("values") or ())
    )

"""The API server's validation of the resource.k8s.io/v1 fields the scheduler reads, and of a
pod's claim references, with upstream's messages (``pkg/apis/resource/validation``,
``pkg/apis/core/validation``'s validatePodResourceClaims).

Like ``kubesched.api.validation``, each function takes a wire dict that passed the strict schema
check and raises the first problem as an ``InputError`` anchored at the field. Left out: opaque
configuration parameters, device status, taint rules, consumable-capacity policies, and the
limits the scheduler does not depend on.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from kubesched.api.field_validation import (
    check_name,
    duplicate,
    forbidden,
    invalid,
    labels,
    not_supported,
    required,
)
from kubesched.api.names import is_dns1123_label, is_dns1123_subdomain
from kubesched.api.quantity import parse_quantity
from kubesched.dra.cel import compile_selector
from kubesched.dra.objects import (
    ALL,
    ALLOCATION_RESULTS_MAX_SIZE,
    ATTRIBUTE_KINDS,
    EXACT_COUNT,
    FIRST_AVAILABLE_MAX_SIZE,
)
from kubesched.errors import InputError, join_path

DEVICE_SELECTORS_MAX = 32
DEVICE_REQUESTS_MAX = 32
DEVICE_CONSTRAINTS_MAX = 32
SLICE_DEVICES_MAX = 128
ATTRIBUTES_AND_CAPACITIES_MAX = 32
ATTRIBUTE_STRING_MAX = 64
DEVICE_ID_MAX = 32
DRIVER_NAME_MAX = 63
POOL_NAME_MAX = 253
_C_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_SEMVER = re.compile(
    r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)"
    r"(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?$"
)


def _too_many(path: str, n: int, limit: int) -> InputError:
    return InputError(f"Too many: {n}: must have at most {limit} items", path=path)


def _name(m: Mapping[str, Any], path: str, *, label: bool = False) -> None:
    """ValidateObjectMeta's name: required, a DNS subdomain (or label)."""
    md = m.get("metadata") or {}
    name = md.get("name") or ""
    npath = join_path(path, "metadata.name")
    if not name:
        raise required(npath, "name or generateName is required")
    problems = is_dns1123_label(name) if label else is_dns1123_subdomain(name)
    if problems:
        raise invalid(npath, name, problems[0])
    labels(md.get("labels"), join_path(path, "metadata.labels"))


def _dns_label(value: str, path: str) -> None:
    if not value:
        raise required(path)
    check_name(value, path, is_dns1123_label)


def _dns_subdomain(value: str, path: str) -> None:
    if not value:
        raise required(path)
    check_name(value, path, is_dns1123_subdomain)


def _driver(value: str, path: str) -> None:
    """ValidateCSIDriverName (a driver name is a CSI driver name)."""
    if not value:
        raise required(path)
    if len(value) > DRIVER_NAME_MAX:
        raise InputError(f"Too long: may not be more than {DRIVER_NAME_MAX} bytes", path=path)
    problems = is_dns1123_subdomain(value.lower())
    if problems:
        raise invalid(path, value, problems[0])


def _pool_name(value: str, path: str) -> None:
    if not value:
        raise required(path)
    if len(value) > POOL_NAME_MAX:
        raise InputError(f"Too long: may not be more than {POOL_NAME_MAX} bytes", path=path)
    for part in value.split("/"):
        check_name(part, path, is_dns1123_subdomain)


def _qualified_name(value: str, path: str, *, fully: bool) -> None:
    """A device attribute/capacity name: ``<domain>/<id>`` (the domain optional unless
    ``fully``), the id a C identifier of at most 32 characters."""
    domain, sep, ident = value.rpartition("/")
    if not sep:
        if fully:
            raise invalid(path, value, "a fully qualified name must be a domain and a name separated by a slash")
        ident = value
    elif not domain:
        raise required(path, "the domain must not be empty")
    else:
        check_name(domain, path, is_dns1123_subdomain)
    if not ident:
        raise required(path, "name required")
    if len(ident) > DEVICE_ID_MAX:
        raise InputError(f"Too long: may not be more than {DEVICE_ID_MAX} bytes", path=path)
    if not _C_IDENTIFIER.match(ident):
        raise invalid(
            path,
            ident,
            "a valid C identifier must start with alphabetic character or '_', followed by a string of "
            "alphanumeric characters or '_' (e.g. 'my_name',  or 'MY_NAME',  or 'MyName', regex used for "
            "validation is '[A-Za-z_][A-Za-z0-9_]*')",
        )


def _selectors(items: list | None, path: str) -> None:
    items = items or []
    if len(items) > DEVICE_SELECTORS_MAX:
        raise _too_many(path, len(items), DEVICE_SELECTORS_MAX)
    for i, s in enumerate(items):
        sp = join_path(path, i)
        cel = (s or {}).get("cel")
        if cel is None:
            raise required(join_path(sp, "cel"))
        expr = cel.get("expression") or ""
        ep = join_path(sp, "cel.expression")
        compiled = compile_selector(expr)
        if compiled.program is None:
            if compiled.error.startswith("must have at most"):
                raise InputError(f"Too long: {compiled.error}", path=ep)
            raise invalid(ep, expr, compiled.error)


def _allocation_mode(m: Mapping[str, Any], path: str) -> None:
    mode = m.get("allocationMode") or EXACT_COUNT
    count = m.get("count")
    if mode == ALL:
        if count:
            raise invalid(join_path(path, "count"), count, f"must not be specified when allocationMode is '{ALL}'")
    elif mode == EXACT_COUNT:
        if count is not None and count <= 0:
            raise invalid(join_path(path, "count"), count, "must be greater than zero")
    else:
        raise not_supported(join_path(path, "allocationMode"), mode, (ALL, EXACT_COUNT))


def _tolerations(items: list | None, path: str) -> None:
    for i, t in enumerate(items or []):
        tp = join_path(path, i)
        t = t or {}
        op = t.get("operator") or "Equal"
        if op not in ("Equal", "Exists"):
            raise not_supported(join_path(tp, "operator"), op, ("Equal", "Exists"))
        if op == "Exists" and t.get("value"):
            raise invalid(join_path(tp, "operator"), op, "value must be empty when `operator` is 'Exists'")
        effect = t.get("effect")
        if effect and effect not in ("NoSchedule", "NoExecute", "None"):
            raise not_supported(join_path(tp, "effect"), effect, ("NoExecute", "NoSchedule", "None"))


def _exact(m: Mapping[str, Any], path: str) -> None:
    dc = m.get("deviceClassName") or ""
    _dns_subdomain(dc, join_path(path, "deviceClassName"))
    _selectors(m.get("selectors"), join_path(path, "selectors"))
    _allocation_mode(m, path)
    _tolerations(m.get("tolerations"), join_path(path, "tolerations"))


def claim_spec(spec: Mapping[str, Any] | None, path: str) -> None:
    """validateResourceClaimSpec: requests, constraints, config request names."""
    dp = join_path(path, "devices")
    devices = (spec or {}).get("devices") or {}
    rp = join_path(dp, "requests")
    reqs = devices.get("requests") or []
    if len(reqs) > DEVICE_REQUESTS_MAX:
        raise _too_many(rp, len(reqs), DEVICE_REQUESTS_MAX)
    names: dict[str, set[str]] = {}
    for i, r in enumerate(reqs):
        ip = join_path(rp, i)
        r = r or {}
        name = r.get("name") or ""
        _dns_label(name, join_path(ip, "name"))
        if name in names:
            raise duplicate(join_path(ip, "name"), name)
        exactly, first = r.get("exactly"), r.get("firstAvailable") or []
        if exactly is None and not first:
            raise required(ip, "exactly one of `exactly` or `firstAvailable` is required")
        if exactly is not None and first:
            raise invalid(ip, None, "exactly one of `exactly` or `firstAvailable` is required, but multiple fields are set")
        subs: set[str] = set()
        if exactly is not None:
            _exact(exactly, join_path(ip, "exactly"))
        else:
            fp = join_path(ip, "firstAvailable")
            if len(first) > FIRST_AVAILABLE_MAX_SIZE:
                raise _too_many(fp, len(first), FIRST_AVAILABLE_MAX_SIZE)
            for j, s in enumerate(first):
                sp = join_path(fp, j)
                sname = (s or {}).get("name") or ""
                _dns_label(sname, join_path(sp, "name"))
                if sname in subs:
                    raise duplicate(join_path(sp, "name"), sname)
                subs.add(sname)
                _exact(s or {}, sp)
        names[name] = subs
    cp = join_path(dp, "constraints")
    constraints = devices.get("constraints") or []
    if len(constraints) > DEVICE_CONSTRAINTS_MAX:
        raise _too_many(cp, len(constraints), DEVICE_CONSTRAINTS_MAX)
    for i, c in enumerate(constraints):
        ip = join_path(cp, i)
        c = c or {}
        _request_refs(c.get("requests"), join_path(ip, "requests"), names)
        if c.get("matchAttribute") is not None:
            _qualified_name(c["matchAttribute"], join_path(ip, "matchAttribute"), fully=True)
        elif c.get("distinctAttribute") is not None:
            _qualified_name(c["distinctAttribute"], join_path(ip, "distinctAttribute"), fully=True)
        else:
            raise required(ip, 'exactly one of "matchAttribute" or "distinctAttribute" is required, but multiple fields are set')
    for i, c in enumerate(devices.get("config") or []):
        ip = join_path(join_path(dp, "config"), i)
        _request_refs((c or {}).get("requests"), join_path(ip, "requests"), names)
        if (c or {}).get("opaque") is None:
            raise required(join_path(ip, "opaque"))


def _request_refs(items: list | None, path: str, names: dict[str, set[str]]) -> None:
    seen: set[str] = set()
    for i, ref in enumerate(items or []):
        ip = join_path(path, i)
        parts = (ref or "").split("/")
        ok = len(parts) <= 2 and parts[0] in names and (len(parts) == 1 or parts[1] in names[parts[0]])
        if not ok:
            raise invalid(ip, ref, "must be the name of a request in the claim or the name of a request and a subrequest separated by '/'")
        if ref in seen:
            raise duplicate(ip, ref)
        seen.add(ref)


def _reserved_for(items: list | None, path: str, allocated: bool) -> None:
    seen: set[str] = set()
    for i, r in enumerate(items or []):
        ip = join_path(path, i)
        r = r or {}
        for fld in ("resource", "name", "uid"):
            if not r.get(fld):
                raise required(join_path(ip, fld))
        if r["uid"] in seen:
            raise duplicate(ip, r["uid"])
        seen.add(r["uid"])
    if items and not allocated:
        raise forbidden(path, "may not be specified when `allocated` is not set")


def _allocation(alloc: Mapping[str, Any] | None, path: str) -> None:
    if alloc is None:
        return
    rp = join_path(path, "devices.results")
    results = (alloc.get("devices") or {}).get("results") or []
    if len(results) > ALLOCATION_RESULTS_MAX_SIZE:
        raise _too_many(rp, len(results), ALLOCATION_RESULTS_MAX_SIZE)
    for i, r in enumerate(results):
        ip = join_path(rp, i)
        r = r or {}
        if not r.get("request"):
            raise required(join_path(ip, "request"))
        _driver(r.get("driver") or "", join_path(ip, "driver"))
        _pool_name(r.get("pool") or "", join_path(ip, "pool"))
        _dns_label(r.get("device") or "", join_path(ip, "device"))


# ---- the kinds ---------------------------------------------------------------------------------
def device_class(m: Mapping[str, Any], path: str) -> None:
    _name(m, path)
    _selectors((m.get("spec") or {}).get("selectors"), join_path(path, "spec.selectors"))


def resource_claim(m: Mapping[str, Any], path: str) -> None:
    _name(m, path)
    claim_spec(m.get("spec"), join_path(path, "spec"))
    status = m.get("status") or {}
    sp = join_path(path, "status")
    _allocation(status.get("allocation"), join_path(sp, "allocation"))
    _reserved_for(status.get("reservedFor"), join_path(sp, "reservedFor"), status.get("allocation") is not None)


def resource_claim_template(m: Mapping[str, Any], path: str) -> None:
    _name(m, path)
    spec = m.get("spec") or {}
    tmd = spec.get("metadata") or {}
    labels(tmd.get("labels"), join_path(path, "spec.metadata.labels"))
    claim_spec(spec.get("spec"), join_path(path, "spec.spec"))


def resource_slice(m: Mapping[str, Any], path: str) -> None:
    _name(m, path)
    sp = join_path(path, "spec")
    spec = m.get("spec") or {}
    _driver(spec.get("driver") or "", join_path(sp, "driver"))
    pp = join_path(sp, "pool")
    pool = spec.get("pool") or {}
    _pool_name(pool.get("name") or "", join_path(pp, "name"))
    if (pool.get("generation") or 0) < 0:
        raise invalid(join_path(pp, "generation"), pool["generation"], "must be greater than or equal to 0")
    count = pool.get("resourceSliceCount") or 0
    if count <= 0:
        raise invalid(join_path(pp, "resourceSliceCount"), count, "must be greater than zero")
    per_device = bool(spec.get("perDeviceNodeSelection"))
    set_fields = [
        f
        for f, on in (
            ("`nodeName`", bool(spec.get("nodeName"))),
            ("`nodeSelector`", spec.get("nodeSelector") is not None),
            ("`allNodes`", bool(spec.get("allNodes"))),
            ("`perDeviceNodeSelection`", per_device),
        )
        if on
    ]
    if not set_fields:
        raise required(sp, "exactly one of `nodeName`, `nodeSelector`, `allNodes`, `perDeviceNodeSelection` is required")
    if len(set_fields) > 1:
        raise invalid(sp, "{" + ", ".join(set_fields) + "}", "exactly one field must be set, not more")
    if spec.get("nodeName"):
        _dns_subdomain(spec["nodeName"], join_path(sp, "nodeName"))
    if spec.get("nodeSelector") is not None:
        terms = spec["nodeSelector"].get("nodeSelectorTerms") or []
        if len(terms) != 1:
            raise invalid(join_path(sp, "nodeSelector.nodeSelectorTerms"), len(terms), "must have exactly one node selector term")
    dp = join_path(sp, "devices")
    devices = spec.get("devices") or []
    if len(devices) > SLICE_DEVICES_MAX:
        raise _too_many(dp, len(devices), SLICE_DEVICES_MAX)
    names: set[str] = set()
    counter_sets = {cs.get("name") for cs in spec.get("sharedCounters") or [] if cs}
    for i, d in enumerate(devices):
        _device(d or {}, join_path(dp, i), names, per_device, counter_sets)


def _device(d: Mapping[str, Any], path: str, names: set[str], per_device: bool, counter_sets: set[Any]) -> None:
    name = d.get("name") or ""
    _dns_label(name, join_path(path, "name"))
    if name in names:
        raise duplicate(join_path(path, "name"), name)
    names.add(name)
    attrs, caps = d.get("attributes") or {}, d.get("capacity") or {}
    if len(attrs) + len(caps) > ATTRIBUTES_AND_CAPACITIES_MAX:
        raise _too_many(path, len(attrs) + len(caps), ATTRIBUTES_AND_CAPACITIES_MAX)
    ap = join_path(path, "attributes")
    for key, a in attrs.items():
        kp = join_path(ap, key)
        _qualified_name(key, ap, fully=False)
        values = [k for k in ATTRIBUTE_KINDS if (a or {}).get(k) is not None]
        if len(values) != 1:
            raise invalid(kp, "", "exactly one value must be specified")
        kind = values[0]
        value = a[kind]
        if kind == "string" and len(value) > ATTRIBUTE_STRING_MAX:
            raise InputError(f"Too long: may not be more than {ATTRIBUTE_STRING_MAX} bytes", path=join_path(kp, "string"))
        if kind == "version" and not _SEMVER.match(value):
            raise invalid(join_path(kp, "version"), value, "must be a string compatible with semver.org spec 2.0.0")
    cp = join_path(path, "capacity")
    for key, c in caps.items():
        _qualified_name(key, cp, fully=False)
        parse_quantity((c or {}).get("value", 0), join_path(join_path(cp, key), "value"))
    for i, cc in enumerate(d.get("consumesCounters") or []):
        ccp = join_path(join_path(path, "consumesCounters"), i)
        if (cc or {}).get("counterSet") not in counter_sets:
            raise invalid(join_path(ccp, "counterSet"), (cc or {}).get("counterSet") or "", "must reference a counter set defined in the ResourceSlice sharedCounters")
    selection = [bool(d.get("nodeName")), d.get("nodeSelector") is not None, bool(d.get("allNodes"))]
    if any(selection) and not per_device:
        raise forbidden(path, "`nodeName`, `nodeSelector` and `allNodes` can only be set if `perDeviceNodeSelection` is set in the ResourceSlice spec")
    if per_device and sum(selection) != 1:
        raise required(path, "exactly one of `nodeName`, `nodeSelector`, or `allNodes` is required when `perDeviceNodeSelection` is set to true in the ResourceSlice spec")


def pod_claims(spec: Mapping[str, Any], path: str) -> None:
    """validatePodResourceClaims and the containers' ``resources.claims`` (validateResourceClaimNames)."""
    rp = join_path(path, "resourceClaims")
    names: set[str] = set()
    for i, r in enumerate(spec.get("resourceClaims") or []):
        ip = join_path(rp, i)
        r = r or {}
        name = r.get("name") or ""
        if not name:
            raise required(join_path(ip, "name"))
        if name in names:
            raise duplicate(join_path(ip, "name"), name)
        _dns_label(name, join_path(ip, "name"))
        names.add(name)
        claim, template = r.get("resourceClaimName"), r.get("resourceClaimTemplateName")
        if (claim is None) == (template is None):
            raise invalid(ip, "", "must specify exactly one of: `resourceClaimName`, `resourceClaimTemplateName`")
        for fld, value in (("resourceClaimName", claim), ("resourceClaimTemplateName", template)):
            if value is not None:
                check_name(value, join_path(ip, fld), is_dns1123_subdomain)
    for group in ("initContainers", "containers"):
        for ci, c in enumerate(spec.get(group) or []):
            cp = join_path(join_path(join_path(path, group), ci), "resources.claims")
            seen: set[str] = set()
            for j, ref in enumerate(((c or {}).get("resources") or {}).get("claims") or []):
                jp = join_path(cp, j)
                name = (ref or {}).get("name") or ""
                if not name:
                    raise required(jp)
                key = name + ("/" + ref["request"] if (ref or {}).get("request") else "")
                if key in seen:
                    raise duplicate(jp, name)
                seen.add(key)
                if name not in names:
                    detail = "must be one of the names in pod.spec.resourceClaims"
                    detail += ": " + ", ".join(sorted(names)) if names else " which is empty"
                    raise InputError(f'Not found: "{name}": {detail}', path=jp)

"""The API server's validation of the fields kube-scheduler reads, with its messages.

Ported from kube-apiserver v1.36 (``pkg/apis/core/validation``, ``pkg/apis/scheduling/validation``)
for what scheduling reads: labels and selectors, node and pod (anti-)affinity, tolerations and
taints, topology spread constraints, scheduling gates, priority and preemption policy, resource
requests, limits and overhead, host ports, node capacity and allocatable, PriorityClass values.
Names and namespaces are judged too (``ValidateObjectMeta``, each kind's name rule), and
container names (required, unique across containers, init and ephemeral containers). What the
scheduler never reads (images, probes, volumes) is left alone, so hand-written clusters and
upstream-style fixtures keep loading; ``--validate=warn|ignore`` loads the others on purpose.

Each function takes a wire dict that already passed the strict schema check (``schema.check``:
fields known and of the right JSON type) and raises the first problem as an ``InputError`` whose
message is the API server's ``field.Error`` body (``Invalid value: ...``, ``Unsupported value:
...``), anchored at the field's path. The per-kind functions (``pod``, ``node``, ...) take a
``report``: the default raises the first problem; a collecting one gets the first problem of
each independent check (``Checks``), which is what ``--validate=warn`` prints.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Iterable, Mapping
from fractions import Fraction
from typing import Any, TypeVar

from kubesched.api.fields import as_map, as_str
from kubesched.api.names import (
    is_dns1123_label,
    is_dns1123_subdomain,
    is_path_segment_name,
    is_qualified_name,
    is_valid_label_value,
)
from kubesched.api.quantity import parse_quantity
from kubesched.errors import InputError, join_path

# -- field.Error bodies ----------------------------------------------------------------------


def _go(value: Any) -> str:
    """A bad value as field.Error prints it: strings quoted (%q), numbers and booleans bare."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return str(value)
    return json.dumps(str(value), ensure_ascii=False)


def invalid(path: str, value: Any, detail: str) -> InputError:
    return InputError(f"Invalid value: {_go(value)}: {detail}", path=path)


def not_supported(path: str, value: Any, supported: Iterable[str]) -> InputError:
    shown = ", ".join(_go(s) for s in supported)
    return InputError(f"Unsupported value: {_go(value)}: supported values: {shown}", path=path)


def required(path: str, detail: str = "") -> InputError:
    return InputError("Required value" + (f": {detail}" if detail else ""), path=path)


def forbidden(path: str, detail: str) -> InputError:
    return InputError(f"Forbidden: {detail}", path=path)


def duplicate(path: str, value: Any, detail: str = "") -> InputError:
    return InputError(f"Duplicate value: {_go(value)}" + (f": {detail}" if detail else ""), path=path)


# -- reporting -------------------------------------------------------------------------------

#: Where a validation problem goes: raised (``raise_first``: the object is refused with the API
#: server's first message), or collected (``--validate=warn``: each is a warning).
Report = Callable[[InputError], None]
T = TypeVar("T")


def raise_first(err: InputError) -> None:
    raise err


class Checks:
    """The independent checks of one object (its metadata, its containers, its affinity, ...).
    ``check(fn, *args)`` runs one and returns its result; its first problem goes to ``report``
    and the check returns None. With ``raise_first`` the object's first problem is raised, as the
    API server's first message; a collecting report gets every check's first problem."""

    def __init__(self, report: Report) -> None:
        self.report = report

    def __call__(self, fn: Callable[..., T], *args: Any) -> T | None:
        try:
            return fn(*args)
        except InputError as e:
            self.report(e)
            return None


# -- object metadata -------------------------------------------------------------------------

#: A kind's name rule (NameIsDNSSubdomain, NameIsDNSLabel, ...): the problems of a name.
NameCheck = Callable[[str], tuple[str, ...]]


def object_name(md: Mapping[str, Any], path: str, name_check: NameCheck) -> None:
    """ValidateObjectMeta's name (``path``: the metadata's): it follows the kind's rule and is a
    URL path segment (the API server's generic check on create)."""
    npath = join_path(path, "name")
    name = as_str(md.get("name"), npath)  # kinds read without a schema check may hold anything
    if not name:
        raise required(npath, "name or generateName is required")
    for problems in (name_check(name), is_path_segment_name(name)):
        if problems:
            raise invalid(npath, name, problems[0])


def object_namespace(md: Mapping[str, Any], path: str) -> None:
    """ValidateObjectMeta's namespace of a namespaced object, when given: a DNS-1123 label (one
    left out is the default namespace, as kubectl fills it in). A cluster-scoped object's
    namespace is not judged: the API server drops it."""
    ns = as_str(md.get("namespace"), join_path(path, "namespace"))
    if ns:
        problems = is_dns1123_label(ns)
        if problems:
            raise invalid(join_path(path, "namespace"), ns, problems[0])


# -- labels and names ------------------------------------------------------------------------


def label_name(key: str, path: str) -> None:
    """ValidateLabelName."""
    problems = is_qualified_name(key)
    if problems:
        raise invalid(path, key, problems[0])


def label_value(value: str, path: str) -> None:
    problems = is_valid_label_value(value)
    if problems:
        raise invalid(path, value, problems[0])


def labels(m: Mapping[str, str] | None, path: str) -> None:
    """ValidateLabels: qualified-name keys, label values."""
    for k, v in (m or {}).items():
        label_name(k, path)
        label_value(v or "", join_path(path, k))  # null decodes as "", as in Go


def annotations(m: Mapping[str, str] | None, path: str) -> None:
    """ValidateAnnotations' key check (keys compared lower-cased, as upstream)."""
    for k in m or {}:
        problems = is_qualified_name(k.lower())
        if problems:
            raise invalid(path, k, problems[0])


def _qualified(value: str, path: str) -> None:
    problems = is_qualified_name(value)
    if problems:
        raise invalid(path, value, problems[0])


def _dns_subdomain(value: str, path: str) -> None:
    problems = is_dns1123_subdomain(value)
    if problems:
        raise invalid(path, value, problems[0])


def label_selector(sel: Mapping[str, Any] | None, path: str) -> None:
    """metav1 ValidateLabelSelector (values must be label values, as for new objects)."""
    if sel is None:
        return
    labels(sel.get("matchLabels"), join_path(path, "matchLabels"))
    epath = join_path(path, "matchExpressions")
    for i, expr in enumerate(sel.get("matchExpressions") or ()):
        _selector_requirement(expr or {}, join_path(epath, i), ("In", "NotIn", "Exists", "DoesNotExist"), True)


def _selector_requirement(expr: Mapping[str, Any], path: str, operators: tuple[str, ...], check_values: bool) -> None:
    op = expr.get("operator") or ""
    values = expr.get("values") or []
    vpath = join_path(path, "values")
    if op in ("In", "NotIn"):
        if not values:
            raise required(vpath, "must be specified when `operator` is 'In' or 'NotIn'")
    elif op in ("Exists", "DoesNotExist"):
        if values:
            raise forbidden(vpath, "may not be specified when `operator` is 'Exists' or 'DoesNotExist'")
    elif op in ("Gt", "Lt") and op in operators:
        if len(values) != 1:
            raise required(vpath, "must be specified single value when `operator` is 'Lt' or 'Gt'")
    else:
        raise invalid(join_path(path, "operator"), op, "not a valid selector operator")
    label_name(expr.get("key") or "", join_path(path, "key"))
    if check_values:
        for i, v in enumerate(values):
            label_value(v, join_path(vpath, i))


# -- node affinity ---------------------------------------------------------------------------

_NODE_OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt")


def node_selector_term(term: Mapping[str, Any] | None, path: str, *, check_values: bool) -> None:
    """ValidateNodeSelectorTerm; label values are checked for required terms only (upstream
    always admits invalid values in preferred terms)."""
    term = term or {}
    epath = join_path(path, "matchExpressions")
    for i, expr in enumerate(term.get("matchExpressions") or ()):
        _selector_requirement(expr or {}, join_path(epath, i), _NODE_OPERATORS, check_values)
    fpath = join_path(path, "matchFields")
    for i, req in enumerate(term.get("matchFields") or ()):
        rpath = join_path(fpath, i)
        req = req or {}
        op = req.get("operator") or ""
        values = req.get("values") or []
        if op in ("In", "NotIn"):
            if len(values) != 1:
                raise required(
                    join_path(rpath, "values"),
                    "must be only one value when `operator` is 'In' or 'NotIn' for node field selector",
                )
        else:
            raise invalid(join_path(rpath, "operator"), op, "not a valid selector operator")
        key = req.get("key") or ""
        if key != "metadata.name":
            raise invalid(join_path(rpath, "key"), key, "not a valid field selector key")
        for j, v in enumerate(values):
            _dns_subdomain(v, join_path(join_path(rpath, "values"), j))


def node_affinity(na: Mapping[str, Any] | None, path: str) -> None:
    if na is None:
        return
    req = na.get("requiredDuringSchedulingIgnoredDuringExecution")
    if req is not None:
        rpath = join_path(path, "requiredDuringSchedulingIgnoredDuringExecution")
        tpath = join_path(rpath, "nodeSelectorTerms")
        terms = req.get("nodeSelectorTerms") or []
        if not terms:
            raise required(tpath, "must have at least one node selector term")
        for i, t in enumerate(terms):
            node_selector_term(t, join_path(tpath, i), check_values=True)
    ppath = join_path(path, "preferredDuringSchedulingIgnoredDuringExecution")
    for i, pt in enumerate(na.get("preferredDuringSchedulingIgnoredDuringExecution") or ()):
        pt = pt or {}
        _weight(pt.get("weight"), join_path(join_path(ppath, i), "weight"))
        node_selector_term(pt.get("preference"), join_path(join_path(ppath, i), "preference"), check_values=False)


def _weight(w: int | None, path: str) -> None:
    if w is None or not 1 <= w <= 100:
        raise invalid(path, w or 0, "must be in the range 1-100")


# -- pod (anti-)affinity ---------------------------------------------------------------------


def _label_keys(keys: list[str], path: str, selector: Mapping[str, Any] | None) -> None:
    if keys and selector is None:
        raise forbidden(path, "must not be specified when labelSelector is not set")
    for i, k in enumerate(keys):
        label_name(k, join_path(path, i))


def _selector_keys(selector: Mapping[str, Any] | None) -> set[str]:
    if selector is None:
        return set()
    keys = set(selector.get("matchLabels") or {})
    keys.update((e or {}).get("key") or "" for e in selector.get("matchExpressions") or ())
    return keys


def pod_affinity_term(term: Mapping[str, Any] | None, path: str) -> None:
    term = term or {}
    sel = term.get("labelSelector")
    label_selector(sel, join_path(path, "labelSelector"))
    label_selector(term.get("namespaceSelector"), join_path(path, "namespaceSelector"))
    for ns in term.get("namespaces") or ():
        problems = is_dns1123_label(ns)
        if problems:  # upstream's path names the field "namespace"
            raise invalid(join_path(path, "namespace"), ns, problems[0])
    match_keys = term.get("matchLabelKeys") or []
    mismatch_keys = term.get("mismatchLabelKeys") or []
    _label_keys(match_keys, join_path(path, "matchLabelKeys"), sel)
    _label_keys(mismatch_keys, join_path(path, "mismatchLabelKeys"), sel)
    if sel is not None:
        selector_keys = _selector_keys(sel)
        for i, k in enumerate(match_keys):
            if k in selector_keys:
                raise invalid(
                    join_path(join_path(path, "matchLabelKeys"), i), k, "exists in both matchLabelKeys and labelSelector"
                )
    for i, k in enumerate(match_keys):
        if k in mismatch_keys:
            raise invalid(
                join_path(join_path(path, "matchLabelKeys"), i), k, "exists in both matchLabelKeys and mismatchLabelKeys"
            )
    key = term.get("topologyKey") or ""
    if not key:
        raise required(join_path(path, "topologyKey"), "can not be empty")
    label_name(key, join_path(path, "topologyKey"))


def pod_affinity(pa: Mapping[str, Any] | None, path: str) -> None:
    if pa is None:
        return
    rpath = join_path(path, "requiredDuringSchedulingIgnoredDuringExecution")
    for i, t in enumerate(pa.get("requiredDuringSchedulingIgnoredDuringExecution") or ()):
        pod_affinity_term(t, join_path(rpath, i))
    ppath = join_path(path, "preferredDuringSchedulingIgnoredDuringExecution")
    for i, wt in enumerate(pa.get("preferredDuringSchedulingIgnoredDuringExecution") or ()):
        wt = wt or {}
        _weight(wt.get("weight"), join_path(join_path(ppath, i), "weight"))
        pod_affinity_term(wt.get("podAffinityTerm"), join_path(join_path(ppath, i), "podAffinityTerm"))


# -- tolerations and taints ------------------------------------------------------------------

TAINT_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")


def _taint_effect(effect: str, path: str, allow_empty: bool) -> None:
    if not effect:
        if not allow_empty:
            raise required(path)
        return
    if effect not in TAINT_EFFECTS:
        raise not_supported(path, effect, TAINT_EFFECTS)


def tolerations(items: list | None, path: str) -> None:
    """ValidateTolerations (the comparison operators Lt/Gt are behind an alpha gate, off by default)."""
    for i, t in enumerate(items or ()):
        ipath = join_path(path, i)
        t = t or {}
        key = t.get("key") or ""
        op = t.get("operator") or ""
        value = t.get("value") or ""
        effect = t.get("effect") or ""
        if key:
            label_name(key, join_path(ipath, "key"))
        if not key and op != "Exists":
            raise invalid(
                join_path(ipath, "operator"), op, 'operator must be Exists when `key` is empty, which means "match all values and all keys"'
            )
        if t.get("tolerationSeconds") is not None and effect != "NoExecute":
            raise invalid(join_path(ipath, "effect"), effect, "effect must be 'NoExecute' when `tolerationSeconds` is set")
        if op in ("Equal", ""):
            problems = is_valid_label_value(value)
            if problems:
                raise invalid(join_path(ipath, "operator"), value, ";".join(problems))
        elif op == "Exists":
            if value:
                raise invalid(join_path(ipath, "operator"), value, "value must be empty when `operator` is 'Exists'")
        else:
            raise not_supported(join_path(ipath, "operator"), op, ("Equal", "Exists"))
        _taint_effect(effect, join_path(ipath, "effect"), allow_empty=True)


def taints(items: list | None, path: str) -> None:
    """validateNodeTaints: keys, values, effects, unique by key and effect."""
    seen: set[tuple[str, str]] = set()
    for i, t in enumerate(items or ()):
        ipath = join_path(path, i)
        t = t or {}
        key, value, effect = t.get("key") or "", t.get("value") or "", t.get("effect") or ""
        label_name(key, join_path(ipath, "key"))
        problems = is_valid_label_value(value)
        if problems:
            raise invalid(join_path(ipath, "value"), value, ";".join(problems))
        _taint_effect(effect, join_path(ipath, "effect"), allow_empty=False)
        if (key, effect) in seen:
            raise duplicate(ipath, f"{key}={value}:{effect}", "taints must be unique by key and effect pair")
        seen.add((key, effect))


# -- topology spread -------------------------------------------------------------------------


def spread_constraints(items: list | None, path: str) -> None:
    """validateTopologySpreadConstraints."""
    items = [c or {} for c in items or ()]
    for i, c in enumerate(items):
        ipath = join_path(path, i)
        skew = c.get("maxSkew") or 0
        if skew <= 0:
            raise invalid(join_path(ipath, "maxSkew"), skew, "must be greater than zero")
        key = c.get("topologyKey") or ""
        if not key:
            raise required(join_path(ipath, "topologyKey"), "can not be empty")
        when = c.get("whenUnsatisfiable") or ""
        if when not in ("DoNotSchedule", "ScheduleAnyway"):
            raise not_supported(join_path(ipath, "whenUnsatisfiable"), when, ("DoNotSchedule", "ScheduleAnyway"))
        for other in items[i + 1 :]:
            if other.get("topologyKey") == key and other.get("whenUnsatisfiable") == when:
                raise duplicate(join_path(ipath, "{topologyKey, whenUnsatisfiable}"), f"{{{key}, {when}}}")
        min_domains = c.get("minDomains")
        if min_domains is not None:
            mpath = join_path(ipath, "minDomains")
            if min_domains <= 0:
                raise invalid(mpath, min_domains, "must be greater than zero")
            if when != "DoNotSchedule":
                raise invalid(mpath, min_domains, f"can only use minDomains if whenUnsatisfiable=DoNotSchedule, not {when}")
        for policy in ("nodeAffinityPolicy", "nodeTaintsPolicy"):
            v = c.get(policy)
            if v is not None and v not in ("Honor", "Ignore"):
                raise not_supported(join_path(ipath, policy), v, ("Honor", "Ignore"))
        sel = c.get("labelSelector")
        kpath = join_path(ipath, "matchLabelKeys")
        match_keys = c.get("matchLabelKeys") or []
        if match_keys and sel is None:
            raise forbidden(kpath, "must not be specified when labelSelector is not set")
        selector_keys = _selector_keys(sel)
        for j, k in enumerate(match_keys):
            label_name(k, join_path(kpath, j))
            if k in selector_keys:
                raise invalid(join_path(kpath, j), k, "exists in both matchLabelKeys and labelSelector")
        label_selector(sel, join_path(ipath, "labelSelector"))


# -- resources -------------------------------------------------------------------------------

_STANDARD_CONTAINER_RESOURCES = ("cpu", "memory", "ephemeral-storage")
_STANDARD_RESOURCES = frozenset(
    {
        "cpu", "memory", "ephemeral-storage", "requests.cpu", "requests.memory", "requests.ephemeral-storage",
        "limits.cpu", "limits.memory", "limits.ephemeral-storage", "pods", "services", "replicationcontrollers",
        "resourcequotas", "secrets", "configmaps", "persistentvolumeclaims", "storage", "requests.storage",
        "services.nodeports", "services.loadbalancers",
    }
)  # fmt: skip
_INTEGER_RESOURCES = frozenset(
    {
        "pods", "resourcequotas", "services", "replicationcontrollers", "secrets", "configmaps",
        "persistentvolumeclaims", "services.nodeports", "services.loadbalancers",
    }
)  # fmt: skip
HUGEPAGES_PREFIX = "hugepages-"


def is_native_resource(name: str) -> bool:
    return "/" not in name or "kubernetes.io/" in name


def is_extended_resource(name: str) -> bool:
    """helper.IsExtendedResourceName: a domain-prefixed name outside kubernetes.io."""
    if is_native_resource(name) or name.startswith("requests."):
        return False
    return not is_qualified_name("requests." + name)


def is_integer_resource(name: str) -> bool:
    return name in _INTEGER_RESOURCES or is_extended_resource(name)


def overcommit_allowed(name: str) -> bool:
    """Native resources other than hugepages may have requests below limits."""
    return is_native_resource(name) and not name.startswith(HUGEPAGES_PREFIX)


def _resource_name(name: str, path: str, *, container: bool) -> None:
    """validateResourceName (+ validateContainerResourceName when ``container``)."""
    problems = is_qualified_name(name)
    if problems:
        raise invalid(path, name, problems[0])
    if "/" not in name:
        # Upstream reports both problems of a non-standard container resource; the second is
        # the one that says what is wrong, so it is the one line shown.
        if container and name not in _STANDARD_CONTAINER_RESOURCES and not name.startswith(HUGEPAGES_PREFIX):
            raise invalid(path, name, "must be a standard resource for containers")
        if name not in _STANDARD_RESOURCES and not name.startswith(HUGEPAGES_PREFIX):
            raise invalid(path, name, "must be a standard resource type or fully qualified")
    elif container and not is_native_resource(name) and not is_extended_resource(name):
        raise invalid(path, name, "doesn't follow extended resource name standard")


def _quantity(name: str, raw: Any, path: str) -> Fraction:
    """ValidateResourceQuantityValue: not negative; a whole number for integer resources."""
    if isinstance(raw, str):
        try:
            return _checked_quantity(name, raw)
        except InputError:
            pass  # raised again below, with the field's path
    q = parse_quantity(raw, path)
    if q < 0:
        raise invalid(path, str(raw), "must be greater than or equal to 0")
    if is_integer_resource(name) and q.denominator != 1:
        raise invalid(path, str(raw), "must be an integer")
    return q


@functools.lru_cache(maxsize=4096)
def _checked_quantity(name: str, raw: str) -> Fraction:
    """``_quantity`` of the strings manifests repeat ("100m", "1Gi"), once each."""
    return _quantity(name, Fraction(parse_quantity(raw)), "")


#: What pod-level resources may name (supportedPodLevelResources; hugepages-* are admitted too).
POD_LEVEL_RESOURCES = ("cpu", "memory")


def resource_list(
    rl: Mapping[str, Any] | None, path: str, *, container: bool = True, pod_level: bool = False
) -> dict[str, Fraction]:
    """Each entry's name (validateContainerResourceName, or validatePodResourceName when
    ``pod_level``), then its quantity."""
    out: dict[str, Fraction] = {}
    for name, raw in (rl or {}).items():
        rpath = join_path(path, name)
        _resource_name(name, rpath, container=container and not pod_level)
        if pod_level and name not in POD_LEVEL_RESOURCES and not name.startswith(HUGEPAGES_PREFIX):
            raise not_supported(rpath, name, POD_LEVEL_RESOURCES)
        out[name] = _quantity(name, raw if raw is not None else 0, rpath)  # null is a zero quantity
    return out


def resource_requirements(res: Mapping[str, Any] | None, path: str, *, pod_level: bool = False) -> dict[str, Fraction]:
    """validateResourceRequirements after defaulting (a limit without a request sets it);
    returns the effective requests."""
    res = res or {}
    lpath, rpath = join_path(path, "limits"), join_path(path, "requests")
    raw_limits = res.get("limits") or {}
    raw_requests = res.get("requests") or {}
    limits = resource_list(raw_limits, lpath, pod_level=pod_level)
    requests = resource_list(raw_requests, rpath, pod_level=pod_level)
    for name, q in requests.items():
        if name in limits:
            lim = limits[name]
            if q != lim and not overcommit_allowed(name):
                raise invalid(
                    join_path(rpath, name), str(raw_requests[name]), f"must be equal to {name} limit of {raw_limits[name]}"
                )
            if q > lim:
                raise invalid(
                    join_path(rpath, name),
                    str(raw_requests[name]),
                    f"must be less than or equal to {name} limit of {raw_limits[name]}",
                )
        elif not overcommit_allowed(name):
            raise required(lpath, "Limit must be set for non overcommitable resources")
    names = {*limits, *requests}
    if any(n.startswith(HUGEPAGES_PREFIX) for n in names) and not names & {"cpu", "memory"}:
        raise forbidden(path, "HugePages require cpu or memory")
    return {**limits, **requests}


# -- ports -----------------------------------------------------------------------------------

PORT_PROTOCOLS = ("SCTP", "TCP", "UDP")


def _ports(ports: list | None, path: str, host_network: bool, seen: set[str]) -> None:
    for i, p in enumerate(ports or ()):
        ipath = join_path(path, i)
        p = p or {}
        host_port = p.get("hostPort") or 0
        if host_port and not 1 <= host_port <= 65535:
            raise invalid(join_path(ipath, "hostPort"), host_port, "must be between 1 and 65535, inclusive")
        protocol = p.get("protocol") or "TCP"
        if protocol not in PORT_PROTOCOLS:
            raise not_supported(join_path(ipath, "protocol"), protocol, PORT_PROTOCOLS)
        if host_network and host_port and host_port != (p.get("containerPort") or 0):
            raise invalid(join_path(ipath, "hostPort"), host_port, "must match `containerPort` when `hostNetwork` is true")
        if host_port:
            key = f"{protocol}/{p.get('hostIP') or ''}/{host_port}"
            if key in seen:
                raise duplicate(join_path(ipath, "hostPort"), key)
            seen.add(key)


# -- pods ------------------------------------------------------------------------------------

PREEMPTION_POLICIES = ("PreemptLowerPriority", "Never")


def _containers(items: list | None, path: str, host_network: bool, init: bool) -> list[dict[str, Fraction]]:
    out = []
    ports_seen: set[str] = set()  # regular containers share host ports; init containers run one by one
    for i, c in enumerate(items or ()):
        cpath = join_path(path, i)
        c = c or {}
        restart = c.get("restartPolicy")
        if restart is not None:
            if not init:
                raise forbidden(join_path(cpath, "restartPolicy"), "may not be set for non-init containers")
            if restart != "Always":
                raise not_supported(join_path(cpath, "restartPolicy"), restart, ("Always",))
        out.append(resource_requirements(c.get("resources"), join_path(cpath, "resources")))
        _ports(c.get("ports"), join_path(cpath, "ports"), host_network, set() if init else ports_seen)
    return out


def _scheduling_gates(items: list | None, path: str) -> None:
    seen: set[str] = set()
    for i, g in enumerate(items or ()):
        name = (g or {}).get("name") or ""
        _qualified(name, join_path(path, i))
        if name in seen:
            raise duplicate(join_path(path, i), name)
        seen.add(name)


def _pod_level_resources(spec: Mapping[str, Any], path: str, containers: list, inits: list, restartable: list) -> None:
    from kubesched.api.resources import pod_requests

    res = spec.get("resources")
    if res is None:
        return
    if res.get("claims") is not None:
        raise forbidden(join_path(path, "claims"), "claims cannot be set for Resources at pod-level")
    pod = resource_requirements(res, path, pod_level=True)
    aggregate = pod_requests(containers, list(zip(inits, restartable, strict=True)), {}, {})
    raw = res.get("requests") or {}
    for name, q in aggregate.items():
        if name in ("cpu", "memory") or name.startswith(HUGEPAGES_PREFIX):
            have = pod.get(name, Fraction(0)) if name in raw else Fraction(0)
            if q > have:
                raise invalid(
                    join_path(join_path(path, "requests"), name),
                    str(raw.get(name, "0")),
                    f"must be greater than or equal to aggregate container requests of {_fmt(q)}",
                )


def _fmt(q: Fraction) -> str:
    return str(q.numerator) if q.denominator == 1 else str(float(q))


def _container_names(spec: Mapping[str, Any], path: str) -> None:
    """validateContainerCommon's name (required, a DNS-1123 label) and its uniqueness across
    containers, init containers and ephemeral containers (validateContainers,
    validateInitContainers, validateEphemeralContainers)."""
    seen: set[str] = set()
    for fld in ("containers", "initContainers", "ephemeralContainers"):
        for i, c in enumerate(spec.get(fld) or ()):
            npath = join_path(join_path(join_path(path, fld), i), "name")
            name = (c or {}).get("name") or ""
            if not name:
                raise required(npath)
            problems = is_dns1123_label(name)
            if problems:
                raise invalid(npath, name, problems[0])
            if name in seen:
                raise duplicate(npath, name)
            seen.add(name)


def pod(m: Mapping[str, Any], path: str, report: Report = raise_first) -> None:
    """ValidatePod (create) for the fields scheduling reads, and the pod's name and namespace."""
    check = Checks(report)
    mp, sp = join_path(path, "metadata"), join_path(path, "spec")
    md = m.get("metadata") or {}
    check(object_name, md, mp, is_dns1123_subdomain)
    check(object_namespace, md, mp)
    check(labels, md.get("labels"), join_path(mp, "labels"))
    check(annotations, md.get("annotations"), join_path(mp, "annotations"))
    spec = m.get("spec") or {}
    host_network = bool(spec.get("hostNetwork"))
    check(_container_names, spec, sp)
    containers = check(_containers, spec.get("containers"), join_path(sp, "containers"), host_network, False)
    init_items = spec.get("initContainers") or []
    inits = check(_containers, init_items, join_path(sp, "initContainers"), host_network, True)
    if spec.get("resources") is not None and containers is not None and inits is not None:
        restartable = [(c or {}).get("restartPolicy") == "Always" for c in init_items]
        check(_pod_level_resources, spec, join_path(sp, "resources"), containers, inits, restartable)
    check(labels, spec.get("nodeSelector"), join_path(sp, "nodeSelector"))
    aff = spec.get("affinity") or {}
    ap = join_path(sp, "affinity")
    check(node_affinity, aff.get("nodeAffinity"), join_path(ap, "nodeAffinity"))
    check(pod_affinity, aff.get("podAffinity"), join_path(ap, "podAffinity"))
    check(pod_affinity, aff.get("podAntiAffinity"), join_path(ap, "podAntiAffinity"))
    check(_scheduling_gates, spec.get("schedulingGates"), join_path(sp, "schedulingGates"))
    check(spread_constraints, spec.get("topologySpreadConstraints"), join_path(sp, "topologySpreadConstraints"))
    check(tolerations, spec.get("tolerations"), join_path(sp, "tolerations"))
    check(_preemption_policy, spec.get("preemptionPolicy"), join_path(sp, "preemptionPolicy"))
    overhead = spec.get("overhead")
    if overhead is not None:
        check(resource_list, overhead, join_path(sp, "overhead"))


def _preemption_policy(policy: str | None, path: str) -> None:
    if policy is not None and policy not in PREEMPTION_POLICIES:
        raise not_supported(path, policy, PREEMPTION_POLICIES)


def _capacity(status: Mapping[str, Any], path: str) -> None:
    for fld in ("capacity", "allocatable"):
        spath = join_path(path, f"status.{fld}")
        for name, raw in (status.get(fld) or {}).items():
            _quantity(name, raw if raw is not None else 0, join_path(spath, name))


def node(m: Mapping[str, Any], path: str, report: Report = raise_first) -> None:
    """ValidateNode for the fields scheduling reads, and the node's name."""
    check = Checks(report)
    md = m.get("metadata") or {}
    mp = join_path(path, "metadata")
    check(object_name, md, mp, is_dns1123_subdomain)
    check(labels, md.get("labels"), join_path(mp, "labels"))
    check(annotations, md.get("annotations"), join_path(mp, "annotations"))
    check(taints, (m.get("spec") or {}).get("taints"), join_path(path, "spec.taints"))
    check(_capacity, m.get("status") or {}, path)


def pdb(m: Mapping[str, Any], path: str, report: Report = raise_first) -> None:
    """What preemption reads of a PodDisruptionBudget, its selector, and its name and namespace
    (the API server's generic checks: the name need only be a URL path segment)."""
    check = Checks(report)
    md, mp = m.get("metadata") or {}, join_path(path, "metadata")
    check(object_name, md, mp, is_path_segment_name)
    check(object_namespace, md, mp)
    check(label_selector, (m.get("spec") or {}).get("selector"), join_path(path, "spec.selector"))


def namespace(m: Mapping[str, Any], path: str, report: Report = raise_first) -> None:
    """ValidateNamespace: its name is a DNS-1123 label; its labels."""
    check = Checks(report)
    md = m.get("metadata") or {}
    check(object_name, md, join_path(path, "metadata"), is_dns1123_label)
    check(labels, md.get("labels"), join_path(path, "metadata.labels"))


def metadata_of(name_check: NameCheck) -> Callable[[Mapping[str, Any], str, Report], None]:
    """The name and namespace checks alone, for the namespaced kinds read for little more than
    them: Services (DNS-1035 labels), ReplicationControllers and ReplicaSets (DNS subdomains),
    StatefulSets (DNS-1123 labels since v1.27), and scheduler-plugins' PodGroups and
    ElasticQuotas (custom resources: DNS subdomains). Their other fields are read as given."""

    def check_meta(m: Mapping[str, Any], path: str, report: Report = raise_first) -> None:
        check, mp = Checks(report), join_path(path, "metadata")
        md = check(as_map, m.get("metadata"), mp)
        if md is not None:
            check(object_name, md, mp, name_check)
            check(object_namespace, md, mp)

    return check_meta


# -- priority classes ------------------------------------------------------------------------

#: HighestUserDefinablePriority: a user's PriorityClass may not go higher.
HIGHEST_USER_DEFINABLE_PRIORITY = 1_000_000_000
SYSTEM_PRIORITY_CLASS_PREFIX = "system-"
#: The classes the API server creates (name -> value); they exist in every cluster.
SYSTEM_PRIORITY_CLASSES: dict[str, int] = {
    "system-node-critical": 2_000_001_000,
    "system-cluster-critical": 2_000_000_000,
}


def priority_class(m: Mapping[str, Any], path: str, report: Report = raise_first) -> None:
    """ValidatePriorityClass and the Priority admission plugin's checks of one class."""
    check = Checks(report)
    md = m.get("metadata") or {}
    mp = join_path(path, "metadata")
    check(object_name, md, mp, is_dns1123_subdomain)
    if md.get("namespace"):
        check.report(forbidden(join_path(mp, "namespace"), "not allowed on this type"))
    check(_priority_value, m, path, md.get("name") or "")
    check(_preemption_policy, m.get("preemptionPolicy"), join_path(path, "preemptionPolicy"))


def _priority_value(m: Mapping[str, Any], path: str, name: str) -> None:
    mp = join_path(path, "metadata")
    value = m.get("value")
    if value is None:
        raise required(join_path(path, "value"))
    if name.startswith(SYSTEM_PRIORITY_CLASS_PREFIX):
        problem = _system_class_problem(name, value, bool(m.get("globalDefault")))
        if problem:
            raise forbidden(
                join_path(mp, "name"),
                f"priority class names with '{SYSTEM_PRIORITY_CLASS_PREFIX}' prefix are reserved for system use only. "
                f"error: {problem}",
            )
    elif value > HIGHEST_USER_DEFINABLE_PRIORITY:
        raise forbidden(
            join_path(path, "value"),
            f"maximum allowed value of a user defined priority is {HIGHEST_USER_DEFINABLE_PRIORITY}",
        )


def _system_class_problem(name: str, value: int, global_default: bool) -> str | None:
    """schedulingapiv1.IsKnownSystemPriorityClass."""
    want = SYSTEM_PRIORITY_CLASSES.get(name)
    if want is None:
        return f"{name} is not a known system priority class"
    if value != want:
        return f"value of {name} PriorityClass must be {want}"
    if global_default:
        return f"globalDefault of {name} PriorityClass must be false"
    return None

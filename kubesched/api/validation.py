"""The API server's validation of the kinds kube-scheduler reads, with its messages.

Ported from kube-apiserver v1.36 (``pkg/apis/core/validation``, ``pkg/apis/scheduling/validation``)
for what scheduling reads of pods (scheduling gates, priority and preemption policy, resource
requests, limits and overhead, host ports, container names: required, unique across containers,
init and ephemeral containers), nodes (capacity and allocatable), PodDisruptionBudgets,
namespaces and PriorityClass values; the fields kinds share (metadata, labels and selectors,
affinity, tolerations and taints, topology spread) are ``kubesched.api.field_validation``. What
the scheduler never reads (images, probes, volumes) is left alone, so hand-written clusters and
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
from collections.abc import Callable, Mapping
from fractions import Fraction
from typing import Any

from kubesched.api.field_validation import (
    Checks,
    NameCheck,
    Report,
    annotations,
    check_name,
    duplicate,
    forbidden,
    invalid,
    label_selector,
    labels,
    node_affinity,
    not_supported,
    object_name,
    object_namespace,
    pod_affinity,
    qualified_name,
    raise_first,
    required,
    spread_constraints,
    taints,
    tolerations,
)
from kubesched.api.fields import as_map
from kubesched.api.names import (
    is_dns1123_label,
    is_dns1123_subdomain,
    is_path_segment_name,
    is_qualified_name,
)
from kubesched.api.quantity import parse_quantity
from kubesched.errors import InputError, join_path

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
    check_name(name, path, is_qualified_name)
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
        qualified_name(name, join_path(path, i))
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
            check_name(name, npath, is_dns1123_label)
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

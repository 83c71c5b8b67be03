"""The API server's validation of fields several kinds share, with its messages: ``field.Error``
bodies, how problems are reported (``Report``, ``Checks``), object metadata, labels and label
selectors, node and pod (anti-)affinity, tolerations and taints, topology spread constraints.

Ported from kube-apiserver v1.36 (``pkg/apis/core/validation``, apimachinery's metav1 and
``labels`` validation); the per-kind checks built on them are ``kubesched.api.validation``
(and ``storage_validation``, ``kubesched.dra.validation``). Each function takes a wire dict that
already passed the strict schema check and raises the first problem as an ``InputError`` whose
message is the API server's, anchored at the field's path.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from typing import Any, TypeVar

from kubesched.api.fields import as_str
from kubesched.api.names import (
    is_dns1123_label,
    is_dns1123_subdomain,
    is_path_segment_name,
    is_qualified_name,
    is_valid_label_value,
)
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
        check_name(ns, join_path(path, "namespace"), is_dns1123_label)


# -- labels and names ------------------------------------------------------------------------


def check_name(value: str, path: str, rule: Callable[[str], list[str]]) -> None:
    """``value`` judged by one of apimachinery's name rules (``kubesched.api.names``): its first
    problem is the field's error."""
    problems = rule(value)
    if problems:
        raise invalid(path, value, problems[0])


def label_value(value: str, path: str) -> None:
    check_name(value, path, is_valid_label_value)


def labels(m: Mapping[str, str] | None, path: str) -> None:
    """ValidateLabels: qualified-name keys, label values."""
    for k, v in (m or {}).items():
        qualified_name(k, path)
        label_value(v or "", join_path(path, k))  # null decodes as "", as in Go


def annotations(m: Mapping[str, str] | None, path: str) -> None:
    """ValidateAnnotations' key check (keys compared lower-cased, as upstream)."""
    for k in m or {}:
        problems = is_qualified_name(k.lower())
        if problems:
            raise invalid(path, k, problems[0])


def qualified_name(value: str, path: str) -> None:
    """IsQualifiedName as a field's check (also ValidateLabelName: a label key is a qualified name)."""
    check_name(value, path, is_qualified_name)


def dns_subdomain(value: str, path: str) -> None:
    check_name(value, path, is_dns1123_subdomain)


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
    qualified_name(expr.get("key") or "", join_path(path, "key"))
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
            dns_subdomain(v, join_path(join_path(rpath, "values"), j))


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
        qualified_name(k, join_path(path, i))


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
    qualified_name(key, join_path(path, "topologyKey"))


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
            qualified_name(key, join_path(ipath, "key"))
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
        qualified_name(key, join_path(ipath, "key"))
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
            qualified_name(k, join_path(kpath, j))
            if k in selector_keys:
                raise invalid(join_path(kpath, j), k, "exists in both matchLabelKeys and labelSelector")
        label_selector(sel, join_path(ipath, "labelSelector"))

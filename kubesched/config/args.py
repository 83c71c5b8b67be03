"""Plugin args of the in-tree plugins: strict decode, defaulting and validation.

Mirrors KK ``apis/config/v1/defaults.go`` (SetDefaults_*Args) and
``apis/config/validation/validation_pluginargs.go``, so the plugins receive args they can trust.
Results are wire-form (camelCase) dicts without ``apiVersion``/``kind``.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from kubesched import features
from kubesched.api.affinity import SPREAD_CONSTRAINT_FIELDS
from kubesched.errors import join_path
from kubesched.framework.status import go_quote

from .decode import (
    Ctx,
    check_fields,
    check_label_name,
    expect_list,
    expect_map,
    fielded_items,
    opt_bool,
    opt_duration,
    opt_int,
    opt_str,
    parse_duration,
    quote,
    str_list,
)
from .defaults import (
    ARGS_PLUGINS,
    MAX_CUSTOM_PRIORITY_SCORE,
    SCORING_STRATEGY_TYPES,
    default_resources,
    system_default_constraints,
)
from .field import (
    Bare,
    duplicate,
    forbidden,
    invalid,
    is_qualified_name,
    is_valid_label_value,
    not_supported,
    required,
)
from .types import API_GROUP, SUPPORTED_VERSIONS, V1, V1BETA1, V1BETA3


def strip_envelope(ctx: Ctx, name: str, args: Any, path: str, *, known: bool) -> dict:
    """Check the optional ``apiVersion``/``kind`` of an args object and return the rest.

    kube-scheduler decodes args as kind ``<Name>Args``; a different kind is a type mismatch.
    """
    args = expect_map(ctx, args, path)
    body = dict(args)
    api_version = body.pop("apiVersion", None)
    kind = body.pop("kind", None)
    if not known:
        return dict(args)
    if api_version is not None and (
        not isinstance(api_version, str) or api_version not in SUPPORTED_VERSIONS
    ):
        raise ctx.error(
            join_path(path, "apiVersion"),
            f"unknown value {quote(api_version)} (expected {API_GROUP}/<version>)",
        )
    expected = f"{name}Args"
    if kind is not None and kind != expected:
        # a type mismatch: upstream does not validate these args any further
        raise ctx.error(path, invalid(kind, "has to match plugin args"))
    return body


# --- shared pieces ---


def decode_resources(ctx: Ctx, items: Any, path: str) -> list[dict]:
    """``[{name, weight}]`` with weight 0/unset -> 1 (v1 defaulting); empty -> cpu+memory."""
    out: list[dict] = []
    for _, ipath, item in fielded_items(ctx, items, path, ("name", "weight")):
        name = opt_str(ctx, item, "name", ipath) or ""
        weight = opt_int(ctx, item, "weight", ipath, bits=64) or 0
        out.append({"name": name, "weight": weight or 1})
    return out or default_resources()


def validate_fit_resource_weights(ctx: Ctx, resources: list[dict], path: str) -> None:
    """validateResources: NodeResourcesFit resource weights must be in (0, 100]."""
    for i, res in enumerate(resources):
        if not 0 < res["weight"] <= 100:
            ctx.report(
                join_path(join_path(path, i), "weight"),
                invalid(res["weight"], f"resource weight of {res['name']} not in valid range (0, 100]"),
            )


def decode_shape(ctx: Ctx, items: Any, path: str) -> list[dict]:
    """RequestedToCapacityRatio shape: >= 1 point, utilization 0..100 ascending, score 0..10."""
    points: list[dict] = []
    for _, ipath, item in fielded_items(ctx, items, path, ("utilization", "score")):
        points.append(
            {
                "utilization": opt_int(ctx, item, "utilization", ipath) or 0,
                "score": opt_int(ctx, item, "score", ipath) or 0,
            }
        )
    if not points:
        ctx.report(path, required("at least one point must be specified"))
        return points
    for i in range(1, len(points)):
        if points[i - 1]["utilization"] >= points[i]["utilization"]:
            ctx.report(
                join_path(join_path(path, i), "utilization"),
                invalid(points[i]["utilization"], "values must be sorted in increasing order"),
            )
            break
    for i, point in enumerate(points):
        ipath = join_path(path, i)
        if not 0 <= point["utilization"] <= 100:
            ctx.report(join_path(ipath, "utilization"), invalid(point["utilization"], "not in valid range [0, 100]"))
        if not 0 <= point["score"] <= MAX_CUSTOM_PRIORITY_SCORE:
            ctx.report(
                join_path(ipath, "score"),
                invalid(point["score"], f"not in valid range [0, {MAX_CUSTOM_PRIORITY_SCORE}]"),
            )
    return points


def _unsupported(ctx: Ctx, path: str, value: Any, supported: tuple[str, ...]) -> None:
    ctx.report(path, not_supported(value or "", supported))


# --- NodeResourcesFit ---


def _fit(ctx: Ctx, raw: dict, path: str, version: str) -> dict:
    fields = ["ignoredResources", "ignoredResourceGroups"]
    if version != V1BETA1:
        fields.append("scoringStrategy")
    check_fields(ctx, raw, path, fields)
    ignored = str_list(ctx, raw, "ignoredResources", path)
    for i, res in enumerate(ignored):
        check_label_name(ctx, res, join_path(join_path(path, "ignoredResources"), i))
    groups = str_list(ctx, raw, "ignoredResourceGroups", path)
    for i, group in enumerate(groups):
        gpath = join_path(join_path(path, "ignoredResourceGroups"), i)
        if "/" in group:
            ctx.report(gpath, invalid(group, "resource group name can't contain '/'"))
        check_label_name(ctx, group, gpath)
    spath = join_path(path, "scoringStrategy")
    strategy_raw = raw.get("scoringStrategy")
    if strategy_raw is None:
        strategy: dict = {"type": "LeastAllocated", "resources": default_resources()}
    else:
        strategy_raw = expect_map(ctx, strategy_raw, spath)
        check_fields(ctx, strategy_raw, spath, ("type", "resources", "requestedToCapacityRatio"))
        stype = opt_str(ctx, strategy_raw, "type", spath) or ""
        if stype not in SCORING_STRATEGY_TYPES:
            _unsupported(ctx, join_path(spath, "type"), stype, SCORING_STRATEGY_TYPES)
        resources = decode_resources(ctx, strategy_raw.get("resources"), join_path(spath, "resources"))
        validate_fit_resource_weights(ctx, resources, join_path(spath, "resources"))
        strategy = {"type": stype, "resources": resources}
        rpath = join_path(spath, "requestedToCapacityRatio")
        rtcr = strategy_raw.get("requestedToCapacityRatio")
        if stype == "RequestedToCapacityRatio":
            if rtcr is None:
                ctx.report(rpath, required("must be specified when type is RequestedToCapacityRatio"))
            else:
                rtcr = expect_map(ctx, rtcr, rpath)
                check_fields(ctx, rtcr, rpath, ("shape",))
                strategy["requestedToCapacityRatio"] = {
                    "shape": decode_shape(ctx, rtcr.get("shape"), join_path(rpath, "shape"))
                }
        elif rtcr is not None:
            ctx.report(rpath, forbidden("must be nil when type is not RequestedToCapacityRatio"))
    return {"ignoredResources": ignored, "ignoredResourceGroups": groups, "scoringStrategy": strategy}


# --- NodeResourcesBalancedAllocation ---


def _balanced(ctx: Ctx, raw: dict, path: str, version: str) -> dict:
    check_fields(ctx, raw, path, ("resources",))
    rpath = join_path(path, "resources")
    resources = decode_resources(ctx, raw.get("resources"), rpath)
    seen: set[str] = set()
    for i, res in enumerate(resources):
        ipath = join_path(rpath, i)
        if res["name"] in seen:
            ctx.report(join_path(ipath, "name"), duplicate(res["name"]))
        seen.add(res["name"])
        if res["weight"] != 1:
            ctx.report(join_path(ipath, "weight"), invalid(res["weight"], "must be 1"))
    return {"resources": resources}


# --- InterPodAffinity ---


def _interpod(ctx: Ctx, raw: dict, path: str, version: str) -> dict:
    fields = ["hardPodAffinityWeight"]
    if version in (V1, V1BETA3):
        fields.append("ignorePreferredTermsOfExistingPods")
    check_fields(ctx, raw, path, fields)
    weight = opt_int(ctx, raw, "hardPodAffinityWeight", path)
    weight = 1 if weight is None else weight
    if not 0 <= weight <= 100:
        ctx.report(join_path(path, "hardPodAffinityWeight"), invalid(weight, "not in valid range [0, 100]"))
    ignore = opt_bool(ctx, raw, "ignorePreferredTermsOfExistingPods", path) or False
    return {"hardPodAffinityWeight": weight, "ignorePreferredTermsOfExistingPods": ignore}


# --- PodTopologySpread ---

_CONSTRAINT_FIELDS = SPREAD_CONSTRAINT_FIELDS
_WHEN_UNSATISFIABLE = ("DoNotSchedule", "ScheduleAnyway")
_NODE_POLICIES = ("Honor", "Ignore")


def _constraint(ctx: Ctx, item: Any, path: str) -> dict:
    item = expect_map(ctx, item, path)
    check_fields(ctx, item, path, _CONSTRAINT_FIELDS)
    max_skew = opt_int(ctx, item, "maxSkew", path) or 0
    if max_skew <= 0:
        ctx.report(join_path(path, "maxSkew"), invalid(max_skew, "not in valid range (0, inf)"))
    key = opt_str(ctx, item, "topologyKey", path) or ""
    if not key:
        ctx.report(join_path(path, "topologyKey"), required("can not be empty"))
    else:
        check_label_name(ctx, key, join_path(path, "topologyKey"))
    when = opt_str(ctx, item, "whenUnsatisfiable", path) or ""
    if not when:
        ctx.report(join_path(path, "whenUnsatisfiable"), required("can not be empty"))
    elif when not in _WHEN_UNSATISFIABLE:
        _unsupported(ctx, join_path(path, "whenUnsatisfiable"), when, _WHEN_UNSATISFIABLE)
    if item.get("labelSelector") is not None:
        ctx.report(
            join_path(path, "labelSelector"),
            forbidden("constraint must not define a selector, as they deduced for each pod"),
        )
    out: dict = {"maxSkew": max_skew, "topologyKey": key, "whenUnsatisfiable": when}
    # Beyond upstream's list (which ignores them): what the API server checks of a pod's constraint
    min_domains = opt_int(ctx, item, "minDomains", path)
    if min_domains is not None:
        if min_domains <= 0:
            ctx.report(join_path(path, "minDomains"), invalid(min_domains, "must be greater than 0"))
        elif when != "DoNotSchedule":
            ctx.report(
                join_path(path, "minDomains"),
                invalid(min_domains, "can only use minDomains if whenUnsatisfiable=DoNotSchedule"),
            )
        out["minDomains"] = min_domains
    for policy in ("nodeAffinityPolicy", "nodeTaintsPolicy"):
        value = opt_str(ctx, item, policy, path)
        if value is not None:
            if value not in _NODE_POLICIES:
                _unsupported(ctx, join_path(path, policy), value, _NODE_POLICIES)
            out[policy] = value
    keys = str_list(ctx, item, "matchLabelKeys", path)
    if keys:
        for i, label in enumerate(keys):
            check_label_name(ctx, label, join_path(join_path(path, "matchLabelKeys"), i))
        out["matchLabelKeys"] = keys
    return out


def _spread(ctx: Ctx, raw: dict, path: str, version: str) -> dict:
    check_fields(ctx, raw, path, ("defaultConstraints", "defaultingType"))
    cpath = join_path(path, "defaultConstraints")
    dpath = join_path(path, "defaultingType")
    defaulting = opt_str(ctx, raw, "defaultingType", path)
    items = expect_list(ctx, raw.get("defaultConstraints"), cpath)
    if defaulting is None or defaulting == "":
        # v1beta1 defaulted to List when constraints were given; v1beta2+ always to System.
        defaulting = "List" if version == V1BETA1 and items else "System"
    if defaulting not in ("System", "List"):
        ctx.report(dpath, not_supported(defaulting, ("System", "List")))
    elif defaulting == "System" and items:
        ctx.report(dpath, invalid(defaulting, "when .defaultConstraints are not empty"))
    constraints = []
    for i, item in enumerate(items):
        c = _constraint(ctx, item, join_path(cpath, i))
        for other in constraints:
            if (c["topologyKey"], c["whenUnsatisfiable"]) == (other["topologyKey"], other["whenUnsatisfiable"]):
                ctx.report(join_path(cpath, i), duplicate(f"{{{c['topologyKey']}, {c['whenUnsatisfiable']}}}"))
                break
        constraints.append(c)
    # System keeps defaultConstraints empty (as kube-scheduler's defaulting does); the plugin
    # applies the system constraints itself.
    return {"defaultConstraints": constraints, "defaultingType": defaulting}


def effective_spread_constraints(args: dict) -> list[dict]:
    """The default constraints PodTopologySpread applies for resolved ``args``.

    With ``defaultingType: System`` that is KK's systemDefaultConstraints (hostname maxSkew 3,
    zone maxSkew 5, ScheduleAnyway); with ``List`` it is ``defaultConstraints`` as given.
    """
    if args.get("defaultingType", "System") == "System":
        return system_default_constraints()
    return [dict(c) for c in args.get("defaultConstraints", [])]


# --- NodeAffinity ---
# As nodeaffinity.NewNodeSelector / NewPreferredSchedulingTerms and labels.NewRequirement check
# them (component-helpers and apimachinery), with their paths and texts.

_OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt")
_INT64 = re.compile(r"[+-]?[0-9]+")  # strconv.ParseInt's syntax (the range is not checked here)
_FIELD_OPERATORS = ("In", "NotIn")


def _requirement(ctx: Ctx, item: Any, path: str, *, field_selector: bool) -> dict:
    item = expect_map(ctx, item, path)
    check_fields(ctx, item, path, ("key", "operator", "values"))
    key = opt_str(ctx, item, "key", path) or ""
    op = opt_str(ctx, item, "operator", path) or ""
    raw_values = item.get("values")
    values = str_list(ctx, item, "values", path)
    shown = None if raw_values is None else values  # Go prints a nil list and an empty one apart
    out: dict = {"key": key, "operator": op}
    if values:
        out["values"] = values
    kpath, opath, vpath = join_path(path, "key"), join_path(path, "operator"), join_path(path, "values")
    if field_selector:
        if op not in _FIELD_OPERATORS:
            ctx.report(opath, not_supported(op, _FIELD_OPERATORS))
        elif len(values) != 1:
            ctx.report(vpath, invalid(_string_list(shown), "must have one element"))
        if key != "metadata.name":  # kubesched's own check: no other field of a node can match
            ctx.report(kpath, not_supported(key, ("metadata.name",)))
        return out
    if op not in _OPERATORS:
        ctx.report(opath, not_supported(op))
        return out
    reasons = is_qualified_name(key)
    if reasons:
        ctx.report(kpath, invalid(key, "; ".join(reasons)))
    if op in ("In", "NotIn") and not values:
        ctx.report(vpath, invalid(_string_list(shown), "for 'in', 'notin' operators, values set can't be empty"))
    elif op in ("Exists", "DoesNotExist") and values:
        ctx.report(vpath, invalid(_string_list(shown), "values set must be empty for exists and does not exist"))
    elif op in ("Gt", "Lt"):
        if len(values) != 1:
            ctx.report(vpath, invalid(_string_list(shown), "for 'Gt', 'Lt' operators, exactly one value is required"))
        for i, v in enumerate(values):
            if not _INT64.fullmatch(v):
                ctx.report(join_path(vpath, i), invalid(v, "for 'Gt', 'Lt' operators, the value must be an integer"))
    for i, v in enumerate(values):
        reasons = is_valid_label_value(v)
        if reasons:
            ctx.report(f"{join_path(vpath, i)}[{key}]", invalid(v, "; ".join(reasons)))
    return out


def _string_list(values: list[str] | None) -> Bare:
    """A []string as Go's %#v prints it: ``[]string(nil)`` when absent."""
    if values is None:
        return Bare("[]string(nil)")
    return Bare("[]string{" + ", ".join(go_quote(v) for v in values) + "}")


def node_selector_term(ctx: Ctx, term: Any, path: str) -> dict:
    """A NodeSelectorTerm: matchExpressions on labels, matchFields on metadata.name."""
    term = expect_map(ctx, term, path)
    check_fields(ctx, term, path, ("matchExpressions", "matchFields"))
    out: dict = {}
    for key, fields in (("matchExpressions", False), ("matchFields", True)):
        kpath = join_path(path, key)
        reqs = [
            _requirement(ctx, item, join_path(kpath, i), field_selector=fields)
            for i, item in enumerate(expect_list(ctx, term.get(key), kpath))
        ]
        if reqs:
            out[key] = reqs
    return out


def node_affinity(ctx: Ctx, raw: Any, path: str) -> dict:
    """A v1.NodeAffinity limited to the scheduling-time required/preferred node selector terms."""
    raw = expect_map(ctx, raw, path)
    req_key = "requiredDuringSchedulingIgnoredDuringExecution"
    pref_key = "preferredDuringSchedulingIgnoredDuringExecution"
    check_fields(ctx, raw, path, (req_key, pref_key))
    out: dict = {}
    if raw.get(req_key) is not None:
        rpath = join_path(path, req_key)
        selector = expect_map(ctx, raw[req_key], rpath)
        check_fields(ctx, selector, rpath, ("nodeSelectorTerms",))
        tpath = join_path(rpath, "nodeSelectorTerms")
        terms = [
            node_selector_term(ctx, term, join_path(tpath, i))
            for i, term in enumerate(expect_list(ctx, selector.get("nodeSelectorTerms"), tpath))
        ]
        out[req_key] = {"nodeSelectorTerms": terms}
    ppath = join_path(path, pref_key)
    preferred = []
    for _, ipath, item in fielded_items(ctx, raw.get(pref_key), ppath, ("weight", "preference")):
        weight = opt_int(ctx, item, "weight", ipath) or 0
        # upstream's path of a preferred term's requirements leaves out ".preference"; a term of
        # weight 0 is never parsed, so never found wrong
        reported = len(ctx.errors)
        preferred.append({"weight": weight, "preference": node_selector_term(ctx, item.get("preference"), ipath)})
        if weight == 0:
            del ctx.errors[reported:]
    if preferred:
        out[pref_key] = preferred
    return out


def _nodeaffinity(ctx: Ctx, raw: dict, path: str, version: str) -> dict:
    check_fields(ctx, raw, path, ("addedAffinity",))
    if raw.get("addedAffinity") is None:
        return {}
    return {"addedAffinity": node_affinity(ctx, raw["addedAffinity"], join_path(path, "addedAffinity"))}


# --- DefaultPreemption ---


def _preemption(ctx: Ctx, raw: dict, path: str, version: str) -> dict:
    check_fields(ctx, raw, path, ("minCandidateNodesPercentage", "minCandidateNodesAbsolute"))
    pct = opt_int(ctx, raw, "minCandidateNodesPercentage", path)
    pct = 10 if pct is None else pct
    absolute = opt_int(ctx, raw, "minCandidateNodesAbsolute", path)
    absolute = 100 if absolute is None else absolute
    ppath = join_path(path, "minCandidateNodesPercentage")
    apath = join_path(path, "minCandidateNodesAbsolute")
    if not 0 <= pct <= 100:
        ctx.report(ppath, invalid(pct, "not in valid range [0, 100]"))
    if absolute < 0:
        ctx.report(apath, invalid(absolute, "not in valid range [0, inf)"))
    if pct == 0 and absolute == 0:
        ctx.report(ppath, invalid(pct, "cannot be zero at the same time as minCandidateNodesAbsolute"))
        ctx.report(apath, invalid(absolute, "cannot be zero at the same time as minCandidateNodesPercentage"))
    return {"minCandidateNodesPercentage": pct, "minCandidateNodesAbsolute": absolute}


# --- VolumeBinding ---

DEFAULT_BIND_TIMEOUT_SECONDS = 600
#: SetDefaults_VolumeBindingArgs' shape (StorageCapacityScoring on): free volumes score best.
DEFAULT_VOLUME_BINDING_SHAPE = ({"utilization": 0, "score": MAX_CUSTOM_PRIORITY_SCORE}, {"utilization": 100, "score": 0})


def _go_shape(raw: Any) -> Bare:
    """A shape as Go prints the internal type (%#v) in a field error."""
    points = raw if isinstance(raw, list) else []
    inner = ", ".join(
        f"config.UtilizationShapePoint{{Utilization:{(p or {}).get('utilization', 0)}, Score:{(p or {}).get('score', 0)}}}"
        for p in points
    )
    return Bare(f"[]config.UtilizationShapePoint{{{inner}}}")


def _volume_binding(ctx: Ctx, raw: dict, path: str, version: str) -> dict:
    """VolumeBindingArgs: bindTimeoutSeconds (600 by default, not negative) and shape, which
    only the StorageCapacityScoring gate admits (and then defaults)."""
    check_fields(ctx, raw, path, ("bindTimeoutSeconds", "shape"))
    timeout = opt_int(ctx, raw, "bindTimeoutSeconds", path)
    timeout = DEFAULT_BIND_TIMEOUT_SECONDS if timeout is None else timeout
    if timeout < 0:
        ctx.report(
            join_path(path, "bindTimeoutSeconds"),
            invalid(timeout, "invalid BindTimeoutSeconds, should not be a negative value"),
        )
    out: dict[str, Any] = {"bindTimeoutSeconds": timeout}
    shape = raw.get("shape")
    spath = join_path(path, "shape")
    if features.enabled("StorageCapacityScoring"):
        if not shape:
            out["shape"] = [dict(p) for p in DEFAULT_VOLUME_BINDING_SHAPE]
        else:
            out["shape"] = decode_shape(ctx, shape, spath)
    elif shape is not None:
        ctx.report(
            spath,
            invalid(_go_shape(shape), "unexpected field `shape`, remove it or turn on the feature gate StorageCapacityScoring"),
        )
    return out


# --- DynamicResources ---


def _dynamic_resources(ctx: Ctx, raw: dict, path: str, version: str) -> dict:
    """DynamicResourcesArgs: v1 defaulting (filterTimeout 10s; bindingTimeout 10m when binding
    conditions and device status are on) and ValidateDynamicResourcesArgs against the process's
    feature gates."""
    check_fields(ctx, raw, path, ("filterTimeout", "bindingTimeout"))
    gates = features.current()
    out: dict[str, Any] = {}
    filter_timeout = opt_duration(ctx, raw, "filterTimeout", path)
    binding_timeout = opt_duration(ctx, raw, "bindingTimeout", path)
    fpath, bpath = join_path(path, "filterTimeout"), join_path(path, "bindingTimeout")
    if gates.enabled("DRASchedulerFilterTimeout"):
        filter_timeout = "10s" if filter_timeout is None else filter_timeout
        if (parse_duration(filter_timeout) or 0) < 0:
            ctx.report(fpath, invalid(filter_timeout, "must be zero or positive"))
    elif filter_timeout is not None:
        ctx.report(fpath, forbidden("DRASchedulingFilterTimeout feature gate is disabled"))
    if gates.enabled("DRADeviceBindingConditions") and gates.enabled("DRAResourceClaimDeviceStatus"):
        binding_timeout = "10m0s" if binding_timeout is None else binding_timeout
        if (parse_duration(binding_timeout) or 0) < 1:
            ctx.report(bpath, invalid(binding_timeout, "must be at least 1 second"))
    elif binding_timeout is not None:
        ctx.report(bpath, forbidden("DRADeviceBindingConditions or DRAResourceClaimDeviceStatus feature gate is disabled"))
    if filter_timeout is not None:
        out["filterTimeout"] = filter_timeout
    if binding_timeout is not None:
        out["bindingTimeout"] = binding_timeout
    return out


_DECODERS: dict[str, Callable[[Ctx, dict, str, str], dict]] = {
    "NodeResourcesFit": _fit,
    "NodeResourcesBalancedAllocation": _balanced,
    "InterPodAffinity": _interpod,
    "PodTopologySpread": _spread,
    "NodeAffinity": _nodeaffinity,
    "DefaultPreemption": _preemption,
    "VolumeBinding": _volume_binding,
    "DynamicResources": _dynamic_resources,
}
assert set(_DECODERS) == ARGS_PLUGINS


def decode_args(ctx: Ctx, name: str, raw: Any, path: str, *, version: str | None = None) -> dict:
    """Default and validate the args of in-tree plugin ``name`` (``raw`` without apiVersion/kind).

    ``version`` selects the schema (defaults to the document's); conversion passes V1 for args it
    has already rewritten into v1 form.
    """
    decoder = _DECODERS.get(name)
    if decoder is None:
        raise KeyError(name)
    body = expect_map(ctx, raw, path)
    return decoder(ctx, body, path, version or ctx.version)


def plugin_args(name: str, args: Any) -> dict:
    """The args an in-tree plugin is built with, decoded, defaulted and validated by the same
    code as a configuration's (kube-scheduler's defaulting and wording; paths from the args'
    root, as upstream's plugins validate them). A plugin built from a loaded configuration gets
    args that already went through it; one built directly (tests, tools) is checked the same way."""
    ctx = Ctx(source=None, version=V1, points_of=lambda _n: None)
    body = strip_envelope(ctx, name, {} if args is None else args, "", known=True)
    out = decode_args(ctx, name, body, "")
    ctx.check()
    return out


def default_args(name: str) -> dict:
    """Defaulted args of in-tree plugin ``name`` as if no pluginConfig were given."""
    ctx = Ctx(source=None, version=V1, points_of=lambda _n: None)
    out = decode_args(ctx, name, {}, "args")
    ctx.check()
    return out

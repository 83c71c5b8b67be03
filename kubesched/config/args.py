"""Plugin args of the in-tree plugins: strict decode, defaulting and validation.

Mirrors KK ``apis/config/v1/defaults.go`` (SetDefaults_*Args) and
``apis/config/validation/validation_pluginargs.go``, so the plugins receive args they can trust.
Results are wire-form (camelCase) dicts without ``apiVersion``/``kind``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kubesched.api.affinity import SPREAD_CONSTRAINT_FIELDS
from kubesched.errors import join_path

from .decode import (
    Ctx,
    check_fields,
    check_label_name,
    expect_list,
    expect_map,
    opt_bool,
    opt_int,
    opt_str,
    qualified_name_error,
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
        raise ctx.error(
            join_path(path, "kind"), f'invalid value {quote(kind)}: has to match plugin args "{expected}"'
        )
    return body


# --- shared pieces ---


def decode_resources(ctx: Ctx, items: Any, path: str) -> list[dict]:
    """``[{name, weight}]`` with weight 0/unset -> 1 (v1 defaulting); empty -> cpu+memory."""
    out: list[dict] = []
    for i, item in enumerate(expect_list(ctx, items, path)):
        ipath = join_path(path, i)
        item = expect_map(ctx, item, ipath)
        check_fields(ctx, item, ipath, ("name", "weight"))
        name = opt_str(ctx, item, "name", ipath)
        if not name:
            raise ctx.error(join_path(ipath, "name"), "required")
        weight = opt_int(ctx, item, "weight", ipath, bits=64) or 0
        out.append({"name": name, "weight": weight or 1})
    return out or default_resources()


def validate_fit_resource_weights(ctx: Ctx, resources: list[dict], path: str) -> None:
    """NodeResourcesFit resource weights must be in (0, 100]."""
    for i, res in enumerate(resources):
        if not 0 < res["weight"] <= 100:
            raise ctx.error(
                join_path(join_path(path, i), "weight"),
                f"invalid value {res['weight']}: resource weight of {res['name']} not in valid range (0, 100]",
            )


def decode_shape(ctx: Ctx, items: Any, path: str) -> list[dict]:
    """RequestedToCapacityRatio shape: >= 1 point, utilization 0..100 ascending, score 0..10."""
    points: list[dict] = []
    for i, item in enumerate(expect_list(ctx, items, path)):
        ipath = join_path(path, i)
        item = expect_map(ctx, item, ipath)
        check_fields(ctx, item, ipath, ("utilization", "score"))
        points.append(
            {
                "utilization": opt_int(ctx, item, "utilization", ipath) or 0,
                "score": opt_int(ctx, item, "score", ipath) or 0,
            }
        )
    if not points:
        raise ctx.error(path, "required: at least one point must be specified")
    for i in range(1, len(points)):
        if points[i - 1]["utilization"] >= points[i]["utilization"]:
            raise ctx.error(
                join_path(join_path(path, i), "utilization"),
                f"invalid value {points[i]['utilization']}: values must be sorted in increasing order",
            )
    for i, point in enumerate(points):
        ipath = join_path(path, i)
        if not 0 <= point["utilization"] <= 100:
            raise ctx.error(
                join_path(ipath, "utilization"),
                f"invalid value {point['utilization']}: not in valid range [0, 100]",
            )
        if not 0 <= point["score"] <= MAX_CUSTOM_PRIORITY_SCORE:
            raise ctx.error(
                join_path(ipath, "score"),
                f"invalid value {point['score']}: not in valid range [0, {MAX_CUSTOM_PRIORITY_SCORE}]",
            )
    return points


def _unsupported(ctx: Ctx, path: str, value: Any, supported: tuple[str, ...]) -> None:
    if value in (None, ""):
        raise ctx.error(path, f"required (one of {', '.join(supported)})")
    raise ctx.error(path, f"unknown value {quote(value)} (supported: {', '.join(supported)})")


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
            raise ctx.error(gpath, f"invalid value {quote(group)}: resource group name can't contain '/'")
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
                raise ctx.error(rpath, "required: must be specified when type is RequestedToCapacityRatio")
            rtcr = expect_map(ctx, rtcr, rpath)
            check_fields(ctx, rtcr, rpath, ("shape",))
            strategy["requestedToCapacityRatio"] = {
                "shape": decode_shape(ctx, rtcr.get("shape"), join_path(rpath, "shape"))
            }
        elif rtcr is not None:
            raise ctx.error(rpath, "forbidden: must be nil when type is not RequestedToCapacityRatio")
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
            raise ctx.error(join_path(ipath, "name"), f"duplicate value {quote(res['name'])}")
        seen.add(res["name"])
        if res["weight"] != 1:
            raise ctx.error(join_path(ipath, "weight"), f"invalid value {res['weight']}: must be 1")
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
        raise ctx.error(
            join_path(path, "hardPodAffinityWeight"), f"invalid value {weight}: not in valid range [0, 100]"
        )
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
        raise ctx.error(join_path(path, "maxSkew"), f"invalid value {max_skew}: not in valid range (0, inf)")
    key = opt_str(ctx, item, "topologyKey", path) or ""
    if not key:
        raise ctx.error(join_path(path, "topologyKey"), "required: can not be empty")
    check_label_name(ctx, key, join_path(path, "topologyKey"))
    when = opt_str(ctx, item, "whenUnsatisfiable", path) or ""
    if when not in _WHEN_UNSATISFIABLE:
        if not when:
            raise ctx.error(join_path(path, "whenUnsatisfiable"), "required: can not be empty")
        _unsupported(ctx, join_path(path, "whenUnsatisfiable"), when, _WHEN_UNSATISFIABLE)
    if item.get("labelSelector") is not None:
        raise ctx.error(
            join_path(path, "labelSelector"),
            "forbidden: constraint must not define a selector, as they deduced for each pod",
        )
    out: dict = {"maxSkew": max_skew, "topologyKey": key, "whenUnsatisfiable": when}
    min_domains = opt_int(ctx, item, "minDomains", path)
    if min_domains is not None:
        if min_domains <= 0:
            raise ctx.error(
                join_path(path, "minDomains"), f"invalid value {min_domains}: must be greater than 0"
            )
        if when != "DoNotSchedule":
            raise ctx.error(
                join_path(path, "minDomains"),
                f"invalid value {min_domains}: can only use minDomains if whenUnsatisfiable=DoNotSchedule",
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
    constraints = [
        _constraint(ctx, item, join_path(cpath, i))
        for i, item in enumerate(expect_list(ctx, raw.get("defaultConstraints"), cpath))
    ]
    for i, c in enumerate(constraints):
        for other in constraints[:i]:
            if (c["topologyKey"], c["whenUnsatisfiable"]) == (
                other["topologyKey"],
                other["whenUnsatisfiable"],
            ):
                raise ctx.error(
                    join_path(cpath, i), f"duplicate value {{{c['topologyKey']}, {c['whenUnsatisfiable']}}}"
                )
    dpath = join_path(path, "defaultingType")
    defaulting = opt_str(ctx, raw, "defaultingType", path)
    if defaulting is None or defaulting == "":
        # v1beta1 defaulted to List when constraints were given; v1beta2+ always to System.
        defaulting = "List" if version == V1BETA1 and constraints else "System"
    if defaulting not in ("System", "List"):
        _unsupported(ctx, dpath, defaulting, ("System", "List"))
    if defaulting == "System" and constraints:
        raise ctx.error(dpath, "invalid value System: when .defaultConstraints are not empty")
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

_OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt")


def _requirement(ctx: Ctx, item: Any, path: str, *, field_selector: bool) -> dict:
    item = expect_map(ctx, item, path)
    check_fields(ctx, item, path, ("key", "operator", "values"))
    key = opt_str(ctx, item, "key", path) or ""
    kpath = join_path(path, "key")
    if field_selector:
        if key != "metadata.name":
            raise ctx.error(kpath, f'unknown value {quote(key)} (supported: "metadata.name")')
    else:
        if not key:
            raise ctx.error(kpath, "required")
        reason = qualified_name_error(key)
        if reason:
            raise ctx.error(kpath, f"invalid value {quote(key)}: {reason}")
    op = opt_str(ctx, item, "operator", path) or ""
    opath = join_path(path, "operator")
    allowed = ("In", "NotIn") if field_selector else _OPERATORS
    if op not in allowed:
        _unsupported(ctx, opath, op, allowed)
    values = str_list(ctx, item, "values", path)
    vpath = join_path(path, "values")
    if field_selector:
        if len(values) != 1:
            raise ctx.error(
                vpath, "must be only one value when `operator` is 'In' or 'NotIn' for node field selector"
            )
    elif op in ("In", "NotIn"):
        if not values:
            raise ctx.error(vpath, "required: must be specified when `operator` is 'In' or 'NotIn'")
    elif op in ("Exists", "DoesNotExist"):
        if values:
            raise ctx.error(
                vpath, "forbidden: may not be specified when `operator` is 'Exists' or 'DoesNotExist'"
            )
    else:
        if len(values) != 1:
            raise ctx.error(vpath, "must be specified single value when `operator` is 'Lt' or 'Gt'")
        try:
            int(values[0])
        except ValueError:
            raise ctx.error(
                join_path(vpath, 0), f"invalid value {quote(values[0])}: must be an integer"
            ) from None
    out: dict = {"key": key, "operator": op}
    if values:
        out["values"] = values
    return out


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
    for i, item in enumerate(expect_list(ctx, raw.get(pref_key), ppath)):
        ipath = join_path(ppath, i)
        item = expect_map(ctx, item, ipath)
        check_fields(ctx, item, ipath, ("weight", "preference"))
        weight = opt_int(ctx, item, "weight", ipath) or 0
        preferred.append(
            {
                "weight": weight,
                "preference": node_selector_term(ctx, item.get("preference"), join_path(ipath, "preference")),
            }
        )
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
        raise ctx.error(ppath, f"invalid value {pct}: not in valid range [0, 100]")
    if absolute < 0:
        raise ctx.error(apath, f"invalid value {absolute}: not in valid range [0, inf)")
    if pct == 0 and absolute == 0:
        raise ctx.error(
            ppath, "invalid value 0: cannot be zero at the same time as minCandidateNodesAbsolute"
        )
    return {"minCandidateNodesPercentage": pct, "minCandidateNodesAbsolute": absolute}


_DECODERS: dict[str, Callable[[Ctx, dict, str, str], dict]] = {
    "NodeResourcesFit": _fit,
    "NodeResourcesBalancedAllocation": _balanced,
    "InterPodAffinity": _interpod,
    "PodTopologySpread": _spread,
    "NodeAffinity": _nodeaffinity,
    "DefaultPreemption": _preemption,
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


def default_args(name: str) -> dict:
    """Defaulted args of in-tree plugin ``name`` as if no pluginConfig were given."""
    ctx = Ctx(source=None, version=V1, points_of=lambda _n: None)
    return decode_args(ctx, name, {}, "args")

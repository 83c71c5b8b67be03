"""Conversion of v1beta1-only plugins and args to their v1 equivalents.

v1beta1 (Kubernetes 1.19-1.22) had plugins that v1beta2 folded into others. kubesched converts:

* ``NodeResourcesLeastAllocated`` / ``NodeResourcesMostAllocated`` / ``RequestedToCapacityRatio``
  (score) -> ``NodeResourcesFit`` at score with ``scoringStrategy.type`` LeastAllocated /
  MostAllocated / RequestedToCapacityRatio, carrying the plugin's weight and its ``resources`` /
  ``shape`` args. v1's NodeResourcesFit has a single strategy, so two explicitly enabled resource
  scorers are an error; an explicit one replaces the default LeastAllocated (with a warning).
* ``NodeResourcesFit`` enabled at score in a v1beta1 file (it was not a score plugin then, so
  kube-scheduler 1.22 rejected it) gets its v1 meaning: resource scoring with the strategy above.
  It merges with the converted default entry instead of duplicating it: one NodeResourcesFit
  score entry at the default's position, with the weight of the first explicit entry (a warning
  says so).
* ``NodeLabel`` -> ``NodeAffinity`` args ``addedAffinity``: presentLabels/absentLabels become a
  required term (Exists/DoesNotExist, ANDed into existing terms) when NodeLabel was a filter; the
  ``*Preference`` lists become preferred terms of weight 1 when it was a score plugin. Lossy
  (NodeAffinity normalizes scores differently; NodeLabel's own weight is dropped when NodeAffinity
  is already enabled) and warned.
* ``NodePreferAvoidPods`` (default weight 10000), ``ServiceAffinity``, ``SelectorSpread`` are
  dropped with a warning (see ``defaults.UNSUPPORTED_PLUGINS``).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from kubesched.errors import join_path

from .args import decode_args, decode_resources, decode_shape, validate_fit_resource_weights
from .decode import Ctx, check_fields, check_label_name, str_list
from .defaults import RESOURCE_SCORERS, UNSUPPORTED_PLUGINS
from .merge import Entry, PluginSet
from .types import V1, V1BETA1

#: v1beta1 names the converter rewrites (kept past the unknown-plugin screen).
V1BETA1_CONVERTED: frozenset[str] = frozenset({*RESOURCE_SCORERS, "NodeLabel"})
#: v1beta1 args kinds that only exist to be folded into other plugins' args.
V1BETA1_ARGS_KINDS: frozenset[str] = frozenset({*RESOURCE_SCORERS, "NodeLabel", "ServiceAffinity"})

_REQUIRED = "requiredDuringSchedulingIgnoredDuringExecution"
_PREFERRED = "preferredDuringSchedulingIgnoredDuringExecution"


@dataclass
class ConfigEntry:
    """One ``pluginConfig`` item on its way to ``Profile.plugin_args``."""

    name: str
    raw: Any
    body: dict
    path: str
    version: str
    decoded: dict | None = None


@dataclass
class V1beta1Plugins:
    """What the plugin conversion decided that the args conversion needs."""

    strategy_type: str | None = None
    strategy_source: str | None = None
    strategy_entry: Entry | None = None
    node_label_filter: bool = False
    node_label_score: bool = False


def _where(entry: Entry) -> str:
    return entry.path if entry.explicit else "default"


def convert_v1beta1_plugins(ctx: Ctx, merged: dict[str, PluginSet], prof_path: str) -> V1beta1Plugins:
    """Rewrite v1beta1-only plugins in the merged per-point sets (in place)."""
    info = V1beta1Plugins()
    for point, pset in merged.items():
        for entry in pset.enabled:
            allowed = ("score",) if entry.name in RESOURCE_SCORERS else ("filter", "score")
            if entry.name in V1BETA1_CONVERTED and point not in allowed and entry.explicit:
                raise ctx.error(
                    f"{entry.path}.name",
                    f'plugin "{entry.name}" does not implement the {point} extension point',
                )
        pset.enabled = [
            e for e in pset.enabled if not (e.name in V1BETA1_CONVERTED and point not in ("filter", "score"))
        ]

    score = merged["score"]
    group = [e for e in score.enabled if e.name in RESOURCE_SCORERS or e.name == "NodeResourcesFit"]
    if group:
        _fold_resource_scorers(ctx, score, group, info)

    for point in ("filter", "score"):
        pset = merged[point]
        labels = [e for e in pset.enabled if e.name == "NodeLabel"]
        if not labels:
            continue
        label = labels[0]
        if point == "filter":
            info.node_label_filter = True
        else:
            info.node_label_score = True
        has_affinity = any(e.name == "NodeAffinity" for e in pset.enabled)
        if has_affinity:
            pset.enabled = [e for e in pset.enabled if e is not label]
            dropped = f"; its weight {label.weight} is dropped" if point == "score" and label.weight else ""
            ctx.warn(
                label.path,
                f"NodeLabel converted to NodeAffinity args addedAffinity (NodeAffinity is already "
                f"enabled at {point}{dropped}); scores are normalized differently",
            )
        else:
            pset.enabled = [
                Entry("NodeAffinity", label.weight, label.path, origin="NodeLabel") if e is label else e
                for e in pset.enabled
            ]
            ctx.warn(
                label.path,
                f"NodeLabel converted to NodeAffinity (enabled at {point}) with args addedAffinity; "
                "scores are normalized differently",
            )

    avoid = [e for e in score.enabled if e.name == "NodePreferAvoidPods" and not e.explicit]
    if avoid:
        score.enabled = [e for e in score.enabled if e not in avoid]
        ctx.warn(
            join_path(join_path(prof_path, "plugins"), "score"),
            f"v1beta1 default score plugin NodePreferAvoidPods (weight {avoid[0].weight}) dropped: "
            f"{UNSUPPORTED_PLUGINS['NodePreferAvoidPods']}",
        )
    return info


def _fold_resource_scorers(ctx: Ctx, score: PluginSet, group: list[Entry], info: V1beta1Plugins) -> None:
    """Replace the resource-scoring entries of the score set by one NodeResourcesFit entry."""
    scorers = [e for e in group if e.name in RESOURCE_SCORERS]
    kinds: list[str] = []
    for entry in scorers:
        if entry.explicit and entry.name not in kinds:
            kinds.append(entry.name)
    if len(kinds) > 1:
        second = next(e for e in scorers if e.explicit and e.name == kinds[1])
        raise ctx.error(
            f"{second.path}.name",
            f'cannot convert to v1: "{kinds[1]}" and "{kinds[0]}" would both set NodeResourcesFit '
            "scoringStrategy (v1 has one strategy); enable only one of them",
        )
    source = kinds[0] if kinds else (scorers[0].name if scorers else None)
    info.strategy_source = source
    info.strategy_type = RESOURCE_SCORERS[source] if source else "LeastAllocated"
    info.strategy_entry = next((e for e in scorers if e.name == source and e.explicit), None)

    winner = next((e for e in group if e.explicit), group[0])
    folded = Entry("NodeResourcesFit", winner.weight, winner.path, origin=winner.name)
    first = group[0]
    out: list[Entry] = []
    for entry in score.enabled:
        if entry is first:
            out.append(folded)
        elif not any(entry is g for g in group):
            out.append(entry)
    score.enabled = out

    for entry in group:
        if entry.name == "NodeResourcesFit" and entry.explicit:
            ctx.warn(
                entry.path,
                "NodeResourcesFit was not a score plugin in v1beta1; enabled at score with its v1 "
                f"meaning (scoringStrategy {info.strategy_type})",
            )
            break
    if len(group) > 1:
        parts = ", ".join(f"{e.name} ({_where(e)})" for e in group)
        ctx.warn(
            winner.path if winner.explicit else score.path,
            f"merged {parts} into one NodeResourcesFit score entry with weight {winner.weight or 1}",
        )
    if kinds:
        for entry in scorers:
            if not entry.explicit and entry.name != source:
                ctx.warn(
                    info.strategy_entry.path if info.strategy_entry else score.path,
                    f"default {entry.name} scoring replaced by {source}: v1 NodeResourcesFit has a "
                    "single scoringStrategy",
                )
    elif scorers and not any(e.explicit for e in group):
        # Only the default NodeResourcesLeastAllocated: an exact rename, nothing lost.
        pass


def convert_v1beta1_plugin_config(
    ctx: Ctx, entries: list[ConfigEntry], info: V1beta1Plugins, prof_path: str
) -> list[ConfigEntry]:
    """Fold v1beta1-only args kinds into NodeResourcesFit / NodeAffinity args."""
    by_name = {e.name: e for e in entries}
    out = [e for e in entries if e.name not in V1BETA1_ARGS_KINDS]

    for name in RESOURCE_SCORERS:
        entry = by_name.get(name)
        if entry is not None and name != info.strategy_source:
            ctx.warn(entry.path, f"args of {name} ignored: the plugin is not enabled at score")

    before = len(ctx.errors)
    strategy = _strategy_from_args(ctx, by_name, info)
    reported = len(ctx.errors)
    if strategy is not None:
        fit = by_name.get("NodeResourcesFit")
        source = by_name.get(info.strategy_source or "")
        if fit is not None:
            base = decode_args(ctx, "NodeResourcesFit", fit.body, f"{fit.path}.args", version=V1BETA1)
            base["scoringStrategy"] = strategy
            reported = len(ctx.errors)
            decoded = decode_args(ctx, "NodeResourcesFit", base, f"{fit.path}.args", version=V1)
            out = [replace(e, decoded=decoded) if e is fit else e for e in out]
        else:
            path = source.path if source else join_path(prof_path, "pluginConfig")
            body = {"scoringStrategy": strategy}
            decoded = decode_args(ctx, "NodeResourcesFit", body, f"{path}.args", version=V1)
            out.append(ConfigEntry("NodeResourcesFit", body, body, path, V1, decoded=decoded))
        if reported > before:  # the old args' errors, at the paths the user wrote, stand for these
            del ctx.errors[reported:]

    label = by_name.get("NodeLabel")
    if label is not None:
        out = _fold_node_label(ctx, label, out, info, prof_path)

    service = by_name.get("ServiceAffinity")
    if service is not None:
        ctx.warn(service.path, f"args of ServiceAffinity dropped: {UNSUPPORTED_PLUGINS['ServiceAffinity']}")
    return out


def _strategy_from_args(ctx: Ctx, by_name: dict[str, ConfigEntry], info: V1beta1Plugins) -> dict | None:
    """The v1 scoringStrategy the v1beta1 resource scorer (and its args) stands for."""
    if info.strategy_type is None:
        return None
    source = by_name.get(info.strategy_source or "")
    stype = info.strategy_type
    if source is None:
        if stype == "RequestedToCapacityRatio":
            where = f"{info.strategy_entry.path}.name" if info.strategy_entry else None
            raise ctx.error(where, 'plugin "RequestedToCapacityRatio" needs pluginConfig args with a shape')
        if stype == "LeastAllocated":
            return None  # v1 defaulting gives exactly this
        return {"type": stype, "resources": decode_resources(ctx, None, "")}
    apath = f"{source.path}.args"
    fields = ("shape", "resources") if stype == "RequestedToCapacityRatio" else ("resources",)
    check_fields(ctx, source.body, apath, fields)
    resources = decode_resources(ctx, source.body.get("resources"), join_path(apath, "resources"))
    validate_fit_resource_weights(ctx, resources, join_path(apath, "resources"))
    strategy: dict = {"type": stype, "resources": resources}
    if stype == "RequestedToCapacityRatio":
        shape = decode_shape(ctx, source.body.get("shape"), join_path(apath, "shape"))
        strategy["requestedToCapacityRatio"] = {"shape": shape}
    return strategy


def _fold_node_label(
    ctx: Ctx, label: ConfigEntry, out: list[ConfigEntry], info: V1beta1Plugins, prof_path: str
) -> list[ConfigEntry]:
    """NodeLabelArgs -> NodeAffinityArgs.addedAffinity terms."""
    apath = f"{label.path}.args"
    keys = ("presentLabels", "absentLabels", "presentLabelsPreference", "absentLabelsPreference")
    check_fields(ctx, label.body, apath, keys)
    lists = {key: str_list(ctx, label.body, key, apath) for key in keys}
    for key, values in lists.items():
        for i, value in enumerate(values):
            check_label_name(ctx, value, join_path(join_path(apath, key), i))
    for present_key, absent_key in (keys[:2], keys[2:]):
        both = set(lists[present_key]) & set(lists[absent_key])
        if both:
            raise ctx.error(
                join_path(apath, absent_key),
                f'detecting at least one label (e.g., "{sorted(both)[0]}") that exist in both the '
                f"{present_key} and {absent_key} lists",
            )
    if not (info.node_label_filter or info.node_label_score):
        ctx.warn(label.path, "args of NodeLabel ignored: the plugin is not enabled")
        return out
    required = []
    if info.node_label_filter:
        required = [{"key": k, "operator": "Exists"} for k in lists["presentLabels"]]
        required += [{"key": k, "operator": "DoesNotExist"} for k in lists["absentLabels"]]
    preferred = []
    if info.node_label_score:
        for key, op in (("presentLabelsPreference", "Exists"), ("absentLabelsPreference", "DoesNotExist")):
            preferred += [
                {"weight": 1, "preference": {"matchExpressions": [{"key": k, "operator": op}]}}
                for k in lists[key]
            ]
    if not required and not preferred:
        return out
    affinity_entry = next((e for e in out if e.name == "NodeAffinity"), None)
    if affinity_entry is not None:
        current = affinity_entry.decoded or decode_args(
            ctx, "NodeAffinity", affinity_entry.body, f"{affinity_entry.path}.args"
        )
    else:
        current = {}
    added = dict(current.get("addedAffinity") or {})
    if required:
        terms = (added.get(_REQUIRED) or {}).get("nodeSelectorTerms") or []
        if terms:
            terms = [{**t, "matchExpressions": [*t.get("matchExpressions", []), *required]} for t in terms]
        else:
            terms = [{"matchExpressions": required}]
        added[_REQUIRED] = {"nodeSelectorTerms": terms}
    if preferred:
        added[_PREFERRED] = [*(added.get(_PREFERRED) or []), *preferred]
    decoded = {"addedAffinity": added}
    ctx.warn(
        label.path,
        "NodeLabel args converted to NodeAffinity args addedAffinity "
        f"({len(required)} required expression(s), {len(preferred)} preferred term(s))",
    )
    if affinity_entry is not None:
        return [replace(e, decoded=decoded) if e is affinity_entry else e for e in out]
    return [*out, ConfigEntry("NodeAffinity", decoded, decoded, label.path, V1, decoded=decoded)]

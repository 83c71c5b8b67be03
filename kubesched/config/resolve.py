"""One profile, from its document form to a resolved ``Profile`` with v1 semantics.

Older versions follow their own rules before landing on the same shape: v1beta1/v1beta2 merge
per-point defaults (no multiPoint), v1beta3/v1 merge the multiPoint defaults and expand them.

kubesched-specific decisions (documented here because they differ from a literal upstream run):

* v1beta1 had no in-place override: re-enabling a default plugin without disabling it appended a
  duplicate that kube-scheduler 1.22 rejected. kubesched accepts it, replaces the default in
  place with the new weight (the v1beta2+ rule) and records a warning.
* For v1beta1/v1beta2, every score plugin that also implements preScore is added to preScore,
  and every filter plugin that also implements preFilter to preFilter (unless the user disabled
  it there): those versions' plugins lacked these hooks (VolumeRestrictions, NodeVolumeLimits and
  VolumeZone had no PreFilter), kubesched's have them.
* SchedulingGates is enabled at preEnqueue for every version, so gated pods stay gated.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass

from kubesched.errors import did_you_mean, join_path

from .args import decode_args, default_args, strip_envelope
from .convert import (
    V1BETA1_ARGS_KINDS,
    V1BETA1_CONVERTED,
    ConfigEntry,
    convert_v1beta1_plugin_config,
    convert_v1beta1_plugins,
)
from .decode import Ctx, check_fields, expect_map, fielded_items, opt_int, opt_str, quote
from .defaults import (
    ARGS_PLUGINS,
    INVALID_PLUGINS,
    PLACEMENT_POINTS,
    PLUGINS_FIELDS,
    PROFILE_FIELDS,
    RESOURCE_SCORERS,
    UNSUPPORTED_PLUGINS,
    V1_DEFAULT_MULTIPOINT,
    V1BETA1_DEFAULT_PLUGINS,
    V1BETA2_DEFAULT_PLUGINS,
    V1BETA3_DEFAULT_MULTIPOINT,
)
from .field import duplicate, invalid, required
from .merge import (
    Entry,
    PluginSet,
    check_point_entries,
    defaults_set,
    expand_point,
    merge_plugin_set,
    score_weights,
)
from .types import DEFAULT_SCHEDULER_NAME, EXTENSION_POINTS, V1, V1BETA1, V1BETA2, V1BETA3, PluginRef, Profile


@dataclass
class ProfileResult:
    """A resolved profile plus what cross-profile validation needs."""

    profile: Profile
    path: str
    queue_sort_config_path: str | None


def decode_plugin_set(ctx: Ctx, raw: object, path: str) -> PluginSet:
    """``{enabled: [{name, weight}], disabled: [{name}]}`` with typed, non-duplicated entries."""
    body = expect_map(ctx, raw, path)
    check_fields(ctx, body, path, ("enabled", "disabled"))
    out = PluginSet(path=path)
    for key in ("enabled", "disabled"):
        kpath = join_path(path, key)
        seen: dict[str, str] = {}
        for i, ipath, item in fielded_items(ctx, body.get(key), kpath, ("name", "weight")):
            name = opt_str(ctx, item, "name", ipath)
            if not name:
                raise ctx.error(join_path(ipath, "name"), "required")
            weight = opt_int(ctx, item, "weight", ipath)
            if weight is not None and weight < 0:
                raise ctx.error(
                    join_path(ipath, "weight"), f"invalid value {weight}: must be greater than or equal to 0"
                )
            if key == "enabled" and name in seen:
                raise ctx.error(join_path(ipath, "name"), f'duplicate plugin "{name}" (also {seen[name]})')
            seen[name] = f"{key}[{i}]"
            (out.enabled if key == "enabled" else out.disabled).append(Entry(name, weight, ipath))
    return out


def _screen(ctx: Ctx, pset: PluginSet) -> PluginSet:
    """Drop enabled plugins kubesched does not run (warning); reject unknown and removed ones."""
    kept: list[Entry] = []
    for entry in pset.enabled:
        if ctx.points_of(entry.name) is not None:
            kept.append(entry)
        elif ctx.version == V1BETA1 and entry.name in V1BETA1_CONVERTED:
            kept.append(entry)
        elif entry.name in RESOURCE_SCORERS:
            raise ctx.error(
                f"{entry.path}.name",
                f'plugin "{entry.name}" was removed in version "{V1BETA2}" (KubeSchedulerConfiguration '
                f'is version "{ctx.version}"); use NodeResourcesFit args scoringStrategy.type '
                f"{RESOURCE_SCORERS[entry.name]}",
            )
        elif entry.name in INVALID_PLUGINS and ctx.version == V1:
            ctx.report(entry.path, _invalid_plugin(ctx, entry.name))
        elif entry.name in UNSUPPORTED_PLUGINS:
            ctx.warn(entry.path, f'plugin "{entry.name}" dropped: {UNSUPPORTED_PLUGINS[entry.name]}')
        else:
            raise ctx.error(f"{entry.path}.name", f'unknown plugin "{entry.name}"{did_you_mean(entry.name, ctx.plugin_names)}')
    for entry in pset.disabled:
        known = (
            entry.name == "*"
            or ctx.points_of(entry.name) is not None
            or entry.name in UNSUPPORTED_PLUGINS
            or entry.name in V1BETA1_CONVERTED
        )
        if not known:
            ctx.warn(
                entry.path,
                f'disabled plugin "{entry.name}" is not a known plugin; ignored{did_you_mean(entry.name, ctx.plugin_names)}',
            )
    return PluginSet(enabled=kept, disabled=pset.disabled, path=pset.path)


def _usable_defaults(ctx: Ctx, pset: PluginSet, where: str) -> PluginSet:
    """Drop default entries kubesched does not run (volume/DRA: silently; missing from registry: warn)."""
    kept = []
    for entry in pset.enabled:
        if entry.explicit or ctx.points_of(entry.name) is not None:
            kept.append(entry)
        elif entry.name not in UNSUPPORTED_PLUGINS:
            ctx.warn(where, f'default plugin "{entry.name}" is not registered in this build; skipped')
    pset.enabled = kept
    return pset


def _decode_plugins(ctx: Ctx, raw: object, path: str) -> dict[str, PluginSet]:
    body = expect_map(ctx, raw, path)
    check_fields(ctx, body, path, PLUGINS_FIELDS[ctx.version])
    sets: dict[str, PluginSet] = {}
    for key, value in body.items():
        kpath = join_path(path, key)
        pset = decode_plugin_set(ctx, value, kpath)
        if key in PLACEMENT_POINTS:
            if pset.enabled:
                ctx.warn(
                    kpath,
                    "placement extension points (1.36 alpha, workload-aware scheduling) are not "
                    "implemented by kubesched; ignored",
                )
            continue
        sets[key] = _screen(ctx, pset)
    return sets


@dataclass
class _Resolved:
    points: dict[str, list[Entry]]
    weights: dict[str, int]
    enabled_names: set[str]


def _resolve_multipoint(ctx: Ctx, sets: dict[str, PluginSet], path: str) -> _Resolved:
    """v1beta3 / v1: merge multiPoint defaults, then expand per point."""
    defaults = V1_DEFAULT_MULTIPOINT if ctx.version == V1 else V1BETA3_DEFAULT_MULTIPOINT
    mp_default = _usable_defaults(ctx, defaults_set(defaults), join_path(path, "multiPoint"))
    multipoint = merge_plugin_set(mp_default, sets.get("multiPoint", PluginSet()))
    specs = {
        p: merge_plugin_set(PluginSet(), sets.get(p, PluginSet(path=join_path(path, p))))
        for p in EXTENSION_POINTS
    }
    points = {p: expand_point(ctx, p, specs[p], multipoint.enabled) for p in EXTENSION_POINTS}
    weights = score_weights(
        ctx, points["score"], specs["score"].enabled, multipoint.enabled, join_path(path, "score")
    )
    names = {e.name for e in multipoint.enabled}
    for spec in specs.values():
        names.update(e.name for e in spec.enabled)
    return _Resolved(points, weights, names)


def _resolve_per_point(ctx: Ctx, sets: dict[str, PluginSet], path: str, prof_path: str):
    """v1beta1 / v1beta2: merge each point with that version's per-point defaults."""
    table = V1BETA1_DEFAULT_PLUGINS if ctx.version == V1BETA1 else V1BETA2_DEFAULT_PLUGINS
    on_replace = None
    if ctx.version == V1BETA1:

        def on_replace(default: Entry, custom: Entry) -> None:
            ctx.warn(
                custom.path,
                f'plugin "{custom.name}" is already enabled by default here; kube-scheduler v1beta1 '
                "rejected the duplicate, kubesched replaces the default in place"
                + (f" (weight {custom.weight or 1})" if default.weight is not None else ""),
            )

    merged = {}
    for point in EXTENSION_POINTS:
        custom = sets.get(point, PluginSet(path=join_path(path, point)))
        merged[point] = merge_plugin_set(defaults_set(table.get(point, ())), custom, on_replace=on_replace)
    info = convert_v1beta1_plugins(ctx, merged, prof_path) if ctx.version == V1BETA1 else None
    points = {}
    for point in EXTENSION_POINTS:
        pset = _usable_defaults(ctx, merged[point], join_path(path, point))
        points[point] = check_point_entries(ctx, point, pset.enabled)
    # Score and filter plugins that now have a PreScore or PreFilter hook get it (see module docstring).
    for point, hook in (("score", "preScore"), ("filter", "preFilter")):
        hook_disabled = merged[hook].disabled_names()
        if "*" in hook_disabled:
            continue
        have = {e.name for e in points[hook]}
        for entry in points[point]:
            points_of = ctx.points_of(entry.name) or frozenset()
            if hook in points_of and entry.name not in have and entry.name not in hook_disabled:
                points[hook].append(Entry(entry.name))
                have.add(entry.name)
    weights = score_weights(ctx, points["score"], points["score"], [], join_path(path, "score"))
    names = {e.name for lst in points.values() for e in lst}
    return _Resolved(points, weights, names), info


def _invalid_plugin(ctx: Ctx, name: str) -> str:
    """validation.go's invalidPluginsByVersion: plugins removed from the v1 API (older versions,
    which kube-scheduler v1.36 no longer reads, keep kubesched's warning and drop them)."""
    return invalid(name, f'was invalid in version "{V1}" (KubeSchedulerConfiguration is version "{ctx.version}")')


def _decode_plugin_config(ctx: Ctx, raw: object, path: str) -> list[ConfigEntry]:
    entries: list[ConfigEntry] = []
    seen: dict[str, int] = {}
    for i, ipath, item in fielded_items(ctx, raw, path, ("name", "args")):
        name = opt_str(ctx, item, "name", ipath)
        if not name:
            raise ctx.error(join_path(ipath, "name"), "required")
        if name in seen:
            ctx.report(ipath, duplicate(name))
        seen[name] = i
        if name in INVALID_PLUGINS and ctx.version == V1:
            ctx.report(ipath, _invalid_plugin(ctx, name))
        known = name in ARGS_PLUGINS or (ctx.version == V1BETA1 and name in V1BETA1_ARGS_KINDS)
        raw_args = item.get("args")
        body = strip_envelope(ctx, name, raw_args, join_path(ipath, "args"), known=known)
        entries.append(ConfigEntry(name, raw_args, body, ipath, ctx.version))
    return entries


def _plugin_args(
    ctx: Ctx, entries: list[ConfigEntry], enabled: set[str], ignored_extended: list[str]
) -> dict[str, dict]:
    """Defaulted args for in-tree kinds (given or not), raw args for the rest."""
    out: dict[str, dict] = {}
    for entry in entries:
        if entry.decoded is not None:
            out[entry.name] = entry.decoded
        elif entry.name in ARGS_PLUGINS:
            out[entry.name] = decode_args(
                ctx, entry.name, entry.body, f"{entry.path}.args", version=entry.version
            )
        else:
            if ctx.points_of(entry.name) is None and entry.name not in UNSUPPORTED_PLUGINS:
                ctx.warn(
                    entry.path,
                    f'pluginConfig for unknown plugin "{entry.name}" kept as given{did_you_mean(entry.name, ctx.plugin_names)}',
                )
            out[entry.name] = copy.deepcopy(entry.raw) if isinstance(entry.raw, dict) else {}
    for name in sorted((enabled & ARGS_PLUGINS) - set(out)):
        out[name] = default_args(name)
    if ignored_extended and "NodeResourcesFit" in out:
        # scheduler.New: extender resources with ignoredByScheduler become NodeResourcesFit's
        # ignoredResources (replacing the list, as upstream does).
        fit = out["NodeResourcesFit"]
        if fit.get("ignoredResources") and fit["ignoredResources"] != ignored_extended:
            ctx.warn(
                None,
                "NodeResourcesFit ignoredResources replaced by the extenders' ignoredByScheduler "
                f"resources {ignored_extended}, as kube-scheduler does",
            )
        out["NodeResourcesFit"] = {**fit, "ignoredResources": list(ignored_extended)}
    return out


def resolve_profile(
    ctx: Ctx, raw: object, path: str, *, single: bool, ignored_extended: list[str]
) -> ProfileResult:
    """Decode, merge, convert and validate one ``profiles[i]`` item."""
    body = expect_map(ctx, raw, path)
    check_fields(ctx, body, path, PROFILE_FIELDS[ctx.version])
    name = opt_str(ctx, body, "schedulerName", path)
    if name is None and single:
        name = DEFAULT_SCHEDULER_NAME
    if not name:
        ctx.report(join_path(path, "schedulerName"), required())
    pct = opt_int(ctx, body, "percentageOfNodesToScore", path)
    if pct is not None and not 0 <= pct <= 100:
        ctx.report(join_path(path, "percentageOfNodesToScore"), invalid(pct, "not in valid range [0-100]"))
    plugins_path = join_path(path, "plugins")
    sets = _decode_plugins(ctx, body.get("plugins"), plugins_path)
    info = None
    if ctx.version in (V1, V1BETA3):
        resolved = _resolve_multipoint(ctx, sets, plugins_path)
    else:
        resolved, info = _resolve_per_point(ctx, sets, plugins_path, path)

    config_path = join_path(path, "pluginConfig")
    entries = _decode_plugin_config(ctx, body.get("pluginConfig"), config_path)
    if info is not None:
        entries = convert_v1beta1_plugin_config(ctx, entries, info, path)
    plugin_args = _plugin_args(ctx, entries, resolved.enabled_names, ignored_extended)

    queue = resolved.points["queueSort"]
    if len(queue) != 1:
        raise ctx.error(
            join_path(plugins_path, "queueSort"),
            f"only one queue sort plugin required for profile with scheduler name {quote(name)}, "
            f"but got {len(queue)}",
        )
    if not resolved.points["bind"]:
        raise ctx.error(
            join_path(plugins_path, "bind"),
            f"at least one bind plugin is needed for profile with scheduler name {quote(name)}",
        )
    plugins = {
        point: [
            PluginRef(e.name, resolved.weights[e.name] if point == "score" else 0)
            for e in resolved.points[point]
        ]
        for point in EXTENSION_POINTS
    }
    queue_cfg = next((e.path for e in entries if e.name == queue[0].name), None)
    origin = {e.name: (ctx.source, f"{e.path}.args") for e in entries}
    return ProfileResult(Profile(name, pct, plugins, plugin_args, origin), path, queue_cfg)

"""Plugin-set merge and multiPoint expansion, with kube-scheduler's exact precedence rules.

Two upstream steps are reproduced:

* ``mergePluginSet`` (KK ``apis/config/v1/default_plugins.go``): ``disabled`` names (``*`` = all
  defaults) drop default plugins; a default re-listed in ``enabled`` is replaced *in place*
  (default order, new weight); other enabled plugins are appended in the given order.
* ``expandMultiPointPlugins`` + ``getScoreWeights`` (KK ``framework/runtime/framework.go``): per
  extension point, plugins named at that point explicitly and also in multiPoint come first
  (in the point's order), then multiPoint plugins, then the point's other plugins; a point's
  ``disabled`` skips multiPoint plugins (``*`` skips multiPoint entirely); the score weight comes
  from the score point's entry if any, else from multiPoint, and 0/unset means 1.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from kubesched.framework.interfaces import MAX_NODE_SCORE

from .decode import Ctx
from .defaults import MAX_TOTAL_SCORE, DefaultList


@dataclass(frozen=True)
class Entry:
    """A plugin listed in a plugin set, remembering where the user wrote it (None = a default)."""

    name: str
    weight: int | None = None
    path: str | None = None
    #: Name before conversion (v1beta1 renames), for messages.
    origin: str | None = None

    @property
    def explicit(self) -> bool:
        """Written by the user rather than coming from the version's defaults."""
        return self.path is not None


@dataclass
class PluginSet:
    """``{enabled, disabled}`` of one extension point (or multiPoint)."""

    enabled: list[Entry] = field(default_factory=list)
    disabled: list[Entry] = field(default_factory=list)
    #: Path of the set in the document (for set-level messages), None when not written.
    path: str | None = None

    def disabled_names(self) -> set[str]:
        """Names in ``disabled`` (may include ``*``)."""
        return {d.name for d in self.disabled}


def defaults_set(defaults: DefaultList) -> PluginSet:
    """A PluginSet holding a version's default list."""
    return PluginSet(enabled=[Entry(name, weight) for name, weight in defaults])


def merge_plugin_set(
    default: PluginSet,
    custom: PluginSet,
    *,
    on_replace: Callable[[Entry, Entry], None] | None = None,
) -> PluginSet:
    """Merge a user plugin set into the defaults (mergePluginSet).

    ``on_replace(default_entry, custom_entry)`` is called for each in-place replacement, so
    versions where that was not the rule (v1beta1) can warn about it.
    """
    disabled = list(custom.disabled) + list(default.disabled)
    disabled_names = {d.name for d in disabled}
    custom_index = {e.name: i for i, e in enumerate(custom.enabled)}
    replaced: set[int] = set()
    enabled: list[Entry] = []
    if "*" not in disabled_names:
        for entry in default.enabled:
            if entry.name in disabled_names:
                continue
            idx = custom_index.get(entry.name)
            if idx is not None:
                if on_replace is not None:
                    on_replace(entry, custom.enabled[idx])
                entry = custom.enabled[idx]
                replaced.add(idx)
            enabled.append(entry)
    enabled.extend(e for i, e in enumerate(custom.enabled) if i not in replaced)
    return PluginSet(enabled=enabled, disabled=disabled, path=custom.path)


def implements(ctx: Ctx, name: str, point: str) -> bool:
    """Whether plugin ``name`` implements extension ``point`` per the registry."""
    points = ctx.points_of(name)
    return points is not None and point in points


def check_point_entries(ctx: Ctx, point: str, entries: list[Entry]) -> list[Entry]:
    """Validate one point's explicit list (updatePluginList): implemented, not duplicated.

    Defaults that the plugin does not implement at this point are dropped silently (older
    versions listed plugins at points kubesched's implementation does not have).
    """
    out: list[Entry] = []
    seen: dict[str, Entry] = {}
    for entry in entries:
        if not implements(ctx, entry.name, point):
            if entry.explicit:
                shown = entry.origin or entry.name
                raise ctx.error(
                    f"{entry.path}.name", f'plugin "{shown}" does not implement the {point} extension point'
                )
            continue
        if entry.name in seen:
            culprit = entry if entry.explicit else seen[entry.name]
            where = culprit.path or point
            raise ctx.error(
                f"{where}.name" if culprit.explicit else where,
                f'plugin "{entry.name}" is already registered at {point}',
            )
        seen[entry.name] = entry
        out.append(entry)
    return out


def expand_point(ctx: Ctx, point: str, spec: PluginSet, multipoint: list[Entry]) -> list[Entry]:
    """The execution list of ``point`` from its own set and the merged multiPoint list."""
    explicit = check_point_entries(ctx, point, spec.enabled)
    disabled = spec.disabled_names()
    if "*" in disabled or not multipoint:
        return explicit
    explicit_names = [e.name for e in explicit]
    overrides: list[str] = []
    from_multipoint: list[Entry] = []
    seen_multipoint: set[str] = set()
    for entry in multipoint:
        if not implements(ctx, entry.name, point):
            continue
        if entry.name in disabled:
            continue
        if entry.name in explicit_names:
            overrides.append(entry.name)
            continue
        if entry.name in seen_multipoint:
            raise ctx.error(
                f"{entry.path}.name" if entry.explicit else None,
                f'plugin "{entry.name}" is already registered at {point}',
            )
        seen_multipoint.add(entry.name)
        from_multipoint.append(entry)
    first = [e for e in explicit if e.name in overrides]
    rest = [e for e in explicit if e.name not in overrides]
    return first + from_multipoint + rest


def score_weights(
    ctx: Ctx, score: list[Entry], spec_score: list[Entry], multipoint: list[Entry], path: str
) -> dict[str, int]:
    """Weights of the final score plugins (getScoreWeights): score entry > multiPoint > 1."""
    weights: dict[str, int] = {}
    for entry in [*spec_score, *multipoint]:
        if entry.name in weights:
            continue
        weights[entry.name] = entry.weight or 1
    out = {e.name: weights.get(e.name, e.weight or 1) for e in score}
    total = 0
    for weight in out.values():
        if weight * MAX_NODE_SCORE > MAX_TOTAL_SCORE - total:
            raise ctx.error(path, "total score of Score plugins could overflow")
        total += weight * MAX_NODE_SCORE
    return out

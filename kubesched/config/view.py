"""Human- and machine-readable views of a resolved config (``kubesched config``)."""

from __future__ import annotations

import copy

from .types import EXTENSION_POINTS, KIND, V1, SchedulerConfig


def resolved_table(cfg: SchedulerConfig) -> list[dict]:
    """One row per (profile, extension point, plugin) in execution order.

    Rows: ``{"profile", "point", "order", "plugin", "weight"}``; ``weight`` is None except at
    score, where it is the effective multiplier.
    """
    rows: list[dict] = []
    for prof in cfg.profiles:
        for point in EXTENSION_POINTS:
            for order, ref in enumerate(prof.plugins.get(point, []), start=1):
                rows.append(
                    {
                        "profile": prof.scheduler_name,
                        "point": point,
                        "order": order,
                        "plugin": ref.name,
                        "weight": ref.weight if point == "score" else None,
                    }
                )
    return rows


#: Argument keys whose values are secrets: shown as REDACTED (a ``tokenFile`` path is shown).
SECRET_KEYS = frozenset({"token"})
REDACTED = "<redacted>"


def redacted(value: object) -> object:
    """A deep copy with every non-empty secret value replaced by ``REDACTED``."""
    if isinstance(value, dict):
        return {
            k: REDACTED if k in SECRET_KEYS and isinstance(v, str) and v else redacted(v) for k, v in value.items()
        }
    if isinstance(value, list):
        return [redacted(v) for v in value]
    return copy.deepcopy(value)


def effective_config(cfg: SchedulerConfig) -> dict:
    """The resolved config as a v1 document: every point spelled out, every default filled in.

    Loading it back (with ``multiPoint`` defaults disabled per point by ``*``) gives the same
    plugins, so it is a faithful, version-free record of what runs.
    """
    profiles = []
    for prof in cfg.profiles:
        plugins = {}
        for point in EXTENSION_POINTS:
            enabled = [
                {"name": ref.name, "weight": ref.weight} if point == "score" else {"name": ref.name}
                for ref in prof.plugins.get(point, [])
            ]
            plugins[point] = {"enabled": enabled, "disabled": [{"name": "*"}]}
        profile = {
            "schedulerName": prof.scheduler_name,
            "plugins": plugins,
            "pluginConfig": [{"name": n, "args": redacted(a)} for n, a in prof.plugin_args.items()],
        }
        if prof.percentage_of_nodes_to_score is not None:
            profile["percentageOfNodesToScore"] = prof.percentage_of_nodes_to_score
        profiles.append(profile)
    return {
        "apiVersion": V1,
        "kind": KIND,
        "parallelism": cfg.parallelism,
        "percentageOfNodesToScore": cfg.percentage_of_nodes_to_score,
        "podInitialBackoffSeconds": cfg.pod_initial_backoff_seconds,
        "podMaxBackoffSeconds": cfg.pod_max_backoff_seconds,
        "enableProfiling": cfg.enable_profiling,
        "enableContentionProfiling": cfg.enable_contention_profiling,
        "delayCacheUntilActive": cfg.delay_cache_until_active,
        "leaderElection": copy.deepcopy(cfg.leader_election),
        "clientConnection": copy.deepcopy(cfg.client_connection),
        "extenders": copy.deepcopy(cfg.extenders),
        "profiles": profiles,
    }

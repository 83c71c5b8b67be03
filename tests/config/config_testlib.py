"""Shared helpers for the config tests: a fake registry and short document builders."""

from __future__ import annotations

from typing import Any

from kubesched.config import BUILTIN_POINTS, KIND, V1, SchedulerConfig, parse_config

#: Out-of-tree plugins the fake registry also knows.
EXTRA_POINTS: dict[str, frozenset[str]] = {
    "Custom": frozenset({"filter", "score"}),
    "CustomSort": frozenset({"queueSort"}),
    "CustomBinder": frozenset({"bind"}),
    "Gate": frozenset({"preEnqueue", "permit", "reserve"}),
}


def fake_points_of(name: str) -> frozenset[str] | None:
    """The plugin registry's answer: true built-in points plus a few out-of-tree plugins."""
    return BUILTIN_POINTS.get(name) or EXTRA_POINTS.get(name)


def doc(version: str = V1, **fields: Any) -> dict:
    """A KubeSchedulerConfiguration document."""
    return {"apiVersion": version, "kind": KIND, **fields}


def one_profile(
    version: str = V1, *, plugins: dict | None = None, plugin_config: list | None = None, **prof: Any
) -> dict:
    """A document with a single profile."""
    profile: dict = dict(prof)
    if plugins is not None:
        profile["plugins"] = plugins
    if plugin_config is not None:
        profile["pluginConfig"] = plugin_config
    return doc(version, profiles=[profile])


def parse(document: dict, source: str = "sched.yaml") -> SchedulerConfig:
    """parse_config with the fake registry."""
    return parse_config(document, source, fake_points_of)


def points(cfg: SchedulerConfig, point: str, profile: int = 0) -> list[str]:
    """Names at one point of one profile."""
    return cfg.profiles[profile].names(point)


def score(cfg: SchedulerConfig, profile: int = 0) -> list[tuple[str, int]]:
    """(name, weight) at score, in order."""
    return [(r.name, r.weight) for r in cfg.profiles[profile].plugins["score"]]

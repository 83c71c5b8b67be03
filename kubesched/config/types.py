"""Resolved KubeSchedulerConfiguration: what the scheduler runs with after defaults, merge and conversion.

Everything here is already validated; consumers never re-check a config. Field names mirror
kube-scheduler's v1 API (snake_case in Python, camelCase in the wire dicts kept for args,
extenders, leader election and client connection).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from kubesched.framework.interfaces import (
    EXTENSION_POINTS,  # the order a pod meets them: Profile.plugins keys
)

API_GROUP = "kubescheduler.config.k8s.io"
V1 = f"{API_GROUP}/v1"
V1BETA3 = f"{API_GROUP}/v1beta3"
V1BETA2 = f"{API_GROUP}/v1beta2"
V1BETA1 = f"{API_GROUP}/v1beta1"
#: Newest first; every one of them is converted to v1 semantics on load.
SUPPORTED_VERSIONS: tuple[str, ...] = (V1, V1BETA3, V1BETA2, V1BETA1)
KIND = "KubeSchedulerConfiguration"
DEFAULT_SCHEDULER_NAME = "default-scheduler"

#: ``points_of(name)``: the extension points a plugin implements, or None if the plugin is unknown.
PointsOf = Callable[[str], "frozenset[str] | None"]


@dataclass(frozen=True)
class PluginRef:
    """One enabled plugin at one extension point.

    ``weight`` is only meaningful at ``score`` (always >= 1 there, unset/0 resolved to 1 as the
    framework runtime does); it is 0 at every other point.
    """

    name: str
    weight: int = 0


@dataclass(frozen=True)
class Profile:
    """A scheduling profile, selected by ``pod.spec.schedulerName``."""

    scheduler_name: str
    percentage_of_nodes_to_score: int | None
    #: extension point -> plugins in execution order (all EXTENSION_POINTS keys present).
    plugins: dict[str, list[PluginRef]]
    #: plugin name -> defaulted, validated args (camelCase wire form); raw for out-of-tree kinds.
    plugin_args: dict[str, dict] = field(default_factory=dict)
    #: plugin name -> (config file, field path of its pluginConfig args): where a plugin that
    #: checks its own args (scheduler-plugins', kubesched's) points its errors.
    args_origin: dict[str, tuple[str | None, str]] = field(default_factory=dict, compare=False)

    def names(self, point: str) -> list[str]:
        """Plugin names enabled at ``point`` in execution order."""
        return [ref.name for ref in self.plugins.get(point, [])]

    def score_weights(self) -> dict[str, int]:
        """Score plugin -> weight, the multiplier of its normalized node score."""
        return {ref.name: ref.weight for ref in self.plugins.get("score", [])}

    def enabled_plugins(self) -> list[str]:
        """Every plugin enabled at some point, in first-seen execution order."""
        seen: dict[str, None] = {}
        for point in EXTENSION_POINTS:
            for ref in self.plugins.get(point, []):
                seen.setdefault(ref.name, None)
        return list(seen)

    def args(self, name: str) -> dict | None:
        """Args of ``name`` (defaulted for in-tree kinds), or None if it has none."""
        return self.plugin_args.get(name)


@dataclass(frozen=True)
class SchedulerConfig:
    """A loaded configuration with v1 semantics whatever version it was written in."""

    api_version_loaded: str
    parallelism: int
    percentage_of_nodes_to_score: int
    pod_initial_backoff_seconds: int
    pod_max_backoff_seconds: int
    profiles: list[Profile]
    extenders: list[dict] = field(default_factory=list)
    leader_election: dict = field(default_factory=dict)
    client_connection: dict = field(default_factory=dict)
    #: The ``leaderElection.*`` and ``clientConnection.*`` fields the document set (the others
    #: are defaults): ``kubesched run`` treats a few defaults differently from chosen values.
    explicit_fields: frozenset[str] = frozenset()
    #: One line per lossy conversion or ignored setting; show them to the user.
    warnings: list[str] = field(default_factory=list)
    enable_profiling: bool = True
    enable_contention_profiling: bool = True
    delay_cache_until_active: bool = False
    #: Where the config came from (file path, or a label such as "<defaults>").
    source: str | None = None

    def profile(self, name: str) -> Profile | None:
        """The profile whose schedulerName is ``name`` (pods name it in spec.schedulerName)."""
        for prof in self.profiles:
            if prof.scheduler_name == name:
                return prof
        return None

    @property
    def scheduler_names(self) -> list[str]:
        """schedulerNames served by this configuration, in profile order."""
        return [prof.scheduler_name for prof in self.profiles]

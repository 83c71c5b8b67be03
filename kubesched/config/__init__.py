"""KubeSchedulerConfiguration: versions, defaults, merge, conversion and validation.

``load_config(path, points_of)`` / ``parse_config(doc, source, points_of)`` return a
``SchedulerConfig`` with v1 semantics whatever version the file uses; ``points_of`` comes from the
plugin registry and says which extension points a plugin implements (None = unknown plugin).
"""

from .args import default_args, effective_spread_constraints
from .defaults import BUILTIN_POINTS, UNSUPPORTED_PLUGINS, builtin_points_of, system_default_constraints
from .load import default_config, load_config, parse_config, parse_document
from .types import (
    DEFAULT_SCHEDULER_NAME,
    EXTENSION_POINTS,
    KIND,
    SUPPORTED_VERSIONS,
    V1,
    V1BETA1,
    V1BETA2,
    V1BETA3,
    PluginRef,
    PointsOf,
    Profile,
    SchedulerConfig,
)
from .view import effective_config, resolved_table

__all__ = [
    "BUILTIN_POINTS",
    "DEFAULT_SCHEDULER_NAME",
    "EXTENSION_POINTS",
    "KIND",
    "SUPPORTED_VERSIONS",
    "UNSUPPORTED_PLUGINS",
    "V1",
    "V1BETA1",
    "V1BETA2",
    "V1BETA3",
    "PluginRef",
    "PointsOf",
    "Profile",
    "SchedulerConfig",
    "builtin_points_of",
    "default_args",
    "default_config",
    "effective_config",
    "effective_spread_constraints",
    "load_config",
    "parse_config",
    "parse_document",
    "resolved_table",
    "system_default_constraints",
]

"""What a ``Framework`` is built from: one scheduling profile's name, plugins, args and weights.

``kubesched.config.Profile`` (a KubeSchedulerProfile after defaulting) is the implementation.
The framework names only what it reads, because ``config`` sits above it: a configuration is
checked against the framework's extension points (docs/architecture.md, "Layers").
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Protocol


class PluginEntry(Protocol):
    """One enabled plugin at one extension point (``config.PluginRef``)."""

    @property
    def name(self) -> str: ...

    @property
    def weight(self) -> int: ...  # Score's multiplier; 0 elsewhere


class ProfileSpec(Protocol):
    """A profile as the framework reads it (``config.Profile``)."""

    @property
    def scheduler_name(self) -> str: ...

    @property
    def percentage_of_nodes_to_score(self) -> int | None: ...

    @property
    def plugins(self) -> Mapping[str, Sequence[PluginEntry]]: ...  # extension point -> plugins in order

    @property
    def plugin_args(self) -> Mapping[str, dict]: ...  # plugin name -> its args

    @property
    def args_origin(self) -> Mapping[str, tuple[str | None, str]]: ...  # plugin -> (file, field path)

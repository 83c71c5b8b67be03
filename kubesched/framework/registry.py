"""Plugin registry: plugins by name (the in-tree ones handed in by ``kubesched.plugins.in_tree_registry``),
Python entry points (group ``kubesched.plugins``), ``module:Class`` names and plugin files."""

from __future__ import annotations

import importlib
import importlib.metadata
import importlib.util
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kubesched.errors import InputError
from kubesched.framework.interfaces import Plugin

if TYPE_CHECKING:
    from kubesched.framework.handle import Handle
    from kubesched.framework.profile import ProfileSpec

ENTRY_POINT_GROUP = "kubesched.plugins"


@dataclass(frozen=True)
class PluginInfo:
    name: str
    origin: str  # "built-in", "entry point <dist>", "module", "file <path>"
    target: str  # "module:Class"


class Registry:
    """``builtins``: name -> ``module:Class`` of the in-tree plugins (imported when first used).
    ``import_module_names=False`` (``config view``): a ``module:Class`` name in a configuration
    is refused instead of imported, since importing a module runs its code."""

    def __init__(
        self,
        builtins: Mapping[str, str] | None = None,
        *,
        entry_points: bool = True,
        import_module_names: bool = True,
    ) -> None:
        self.import_module_names = import_module_names
        self.module_refusal = "config view imports none (importing runs its code): add --import-plugins to resolve it"
        self._targets: dict[str, PluginInfo] = {n: PluginInfo(n, "built-in", t) for n, t in (builtins or {}).items()}
        self._classes: dict[str, type[Plugin]] = {}
        if entry_points:
            self._load_entry_points()

    def _load_entry_points(self) -> None:
        for ep in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP):
            dist = ep.dist.name if ep.dist else "?"
            self._targets.setdefault(ep.name, PluginInfo(ep.name, f"entry point ({dist})", ep.value))

    def register(self, cls: type[Plugin], name: str | None = None, origin: str = "registered") -> None:
        name = name or cls.name
        self._targets[name] = PluginInfo(name, origin, f"{cls.__module__}:{cls.__qualname__}")
        self._classes[name] = cls

    def load_file(self, path: str) -> list[str]:
        """Import a plugin file (``--plugin-path``) and register every Plugin subclass it defines."""
        p = Path(path)
        if not p.is_file():
            raise InputError("no such file", source=path)
        mod_name = f"kubesched_user_{p.stem}"
        spec = importlib.util.spec_from_file_location(mod_name, p)
        if spec is None or spec.loader is None:
            raise InputError("cannot import as a Python module", source=path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[mod_name] = module
        try:
            spec.loader.exec_module(module)
        except Exception as e:  # noqa: BLE001 - report the user's import failure in one line
            raise InputError(f"plugin file failed to import: {type(e).__name__}: {e}", source=path) from None
        found = []
        for obj in vars(module).values():
            if isinstance(obj, type) and issubclass(obj, Plugin) and obj.__module__ == mod_name and obj.name:
                self.register(obj, origin=f"file {path}")
                found.append(obj.name)
        return found

    def sealed(self, refusal: str) -> Registry:
        """A copy that resolves the plugins this registry knows (files already run, modules already
        imported) and refuses any other ``module:Class`` name with ``refusal``: for configurations
        that come from data (a browser, a folder), which must not choose code to import."""
        out = Registry(entry_points=False, import_module_names=False)
        out._targets = dict(self._targets)
        out._classes = dict(self._classes)
        out.module_refusal = refusal
        return out

    def names(self) -> list[str]:
        """Every registered name (built-in, entry point, ``--plugin-path``), sorted."""
        return sorted(self._targets)

    def infos(self) -> list[PluginInfo]:
        return sorted(self._targets.values(), key=lambda i: (i.origin != "built-in", i.name))

    def resolve(self, name: str) -> type[Plugin]:
        """The plugin class for a configured name (a registered name or ``module:Class``)."""
        cls = self._classes.get(name)
        if cls is not None:
            return cls
        info = self._targets.get(name)
        target = info.target if info else (name if ":" in name else None)
        if target is None:
            raise KeyError(name)
        if info is None and not self.import_module_names:
            raise InputError(f'plugin "{name}" names a Python module; {self.module_refusal}')
        mod_name, _, attr = target.partition(":")
        try:
            module = importlib.import_module(mod_name)
            cls = getattr(module, attr)
        except Exception as e:  # noqa: BLE001
            raise InputError(f'plugin "{name}" failed to load: {type(e).__name__}: {e}') from None
        if not (isinstance(cls, type) and issubclass(cls, Plugin)):
            raise InputError(f'plugin "{name}" ({target}) is not a kubesched Plugin class')
        self._classes[name] = cls
        if info is None:
            self._targets[name] = PluginInfo(name, "module", target)
        return cls

    def points_of(self, name: str) -> frozenset[str] | None:
        """Extension points a plugin implements, or None if unknown (used by config validation)."""
        try:
            return self.resolve(name).extension_points()
        except KeyError:
            return None


class ProfilePlugins:
    """One profile's plugin instances, one per name (a plugin at several points is one object),
    made from the registry's classes with the profile's args when first named."""

    def __init__(self, registry: Registry, profile: ProfileSpec, handle: Handle) -> None:
        self.registry = registry
        self.profile = profile
        self.handle = handle
        self.instances: dict[str, Plugin] = {}

    def get(self, name: str) -> Plugin:
        if name not in self.instances:
            cls = self.registry.resolve(name)
            try:
                self.instances[name] = cls(self.profile.plugin_args.get(name), self.handle)
            except InputError as e:  # the plugin's own args check: point at the config file
                raise _args_error(self.profile, name, e) from None
            if not getattr(cls, "name", ""):
                self.instances[name].name = name  # type: ignore[misc]
        return self.instances[name]

    def at(self, point: str, kind: type) -> list[Any]:
        """The profile's plugins at ``point``, in order; each must be a ``kind``."""
        out = []
        for ref in self.profile.plugins.get(point, []):
            p = self.get(ref.name)
            if not isinstance(p, kind):
                raise ValueError(f"plugin {ref.name!r} does not implement {point}")
            out.append(p)
        return out


def _args_error(profile: ProfileSpec, name: str, e: InputError) -> InputError:
    """Re-anchor a plugin's args error (path ``<Name>Args.field``) at its pluginConfig entry."""
    source, args_path = profile.args_origin.get(name, (None, ""))
    path = e.path or ""
    root = f"{name}Args"
    if args_path and (path == root or path.startswith((root + ".", root + "["))):
        path = args_path + path[len(root) :]
    return InputError(e.reason, source=source or e.source, path=path or None)

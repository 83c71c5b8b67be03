"""Build a scheduling session from files: cluster objects, config, plugins, backend."""

from __future__ import annotations

from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from kubesched.api.objects import Pod
from kubesched.cluster.memory import MemoryCluster
from kubesched.config import SchedulerConfig, default_config, load_config
from kubesched.framework.handle import Handle
from kubesched.framework.registry import Registry
from kubesched.framework.runtime import Framework
from kubesched.load import STRICT, ClusterObjects, load_cluster
from kubesched.plugins import in_tree_registry
from kubesched.scheduler import Scheduler
from kubesched.state.snapshot import Snapshot


def example_path(name: str = "cluster.yaml") -> str:
    """A file shipped in kubesched/examples (the embedded default's data)."""
    return str(Path(str(resources.files("kubesched") / "examples" / name)))


@dataclass
class VirtualClock:
    """Offline runs use a virtual clock: backoff waits cost no wall time."""

    now: float = 0.0

    def __call__(self) -> float:
        return self.now

    def advance(self, t: float) -> None:
        self.now = max(self.now, t)


@dataclass
class Session:
    scheduler: Scheduler
    cluster: MemoryCluster
    objects: ClusterObjects
    pending: list[Pod]
    config: SchedulerConfig
    registry: Registry
    clock: VirtualClock


def build_registry(plugin_paths: list[str] | None = None, *, import_module_names: bool = True) -> Registry:
    """Built-ins, installed entry points and ``--plugin-path`` files (each file is run: it is code)."""
    reg = in_tree_registry(import_module_names=import_module_names)
    for p in plugin_paths or []:
        reg.load_file(p)
    return reg


def build_config(config_path: str | None, registry: Registry) -> SchedulerConfig:
    if config_path:
        return load_config(config_path, registry.points_of, plugin_names=registry.names())
    return default_config(registry.points_of)


def check_plugins(config: SchedulerConfig, registry: Registry) -> None:
    """Build every profile's plugins once, as a scheduler does when it starts, on an empty
    cluster: the plugins' own checks of their args (those the configuration passes to them raw:
    kubesched's, scheduler-plugins' and ``--plugin-path`` ones) run, with the messages and paths
    ``schedule`` gives. Files the args name are read, as at start."""
    for profile in config.profiles:
        Framework(profile, registry, Handle(Snapshot()))


def build_session(
    files: list[str],
    config_path: str | None = None,
    seed: int | None = None,
    plugin_paths: list[str] | None = None,
    *,
    validate: str = STRICT,
) -> Session:
    """Everything is parsed and validated before anything is scheduled (``validate``: kubectl's
    ``--validate``, see ``kubesched.load``)."""
    registry = build_registry(plugin_paths)
    config = build_config(config_path, registry)
    objs = load_cluster(files, validate)
    snap = Snapshot.of(objs)
    pending = objs.pending()
    cluster = MemoryCluster(dra=snap.dra)
    for pod in objs.pods:
        cluster.pods[pod.uid] = pod
    clock = VirtualClock()
    sched = Scheduler(config, snap, cluster, registry, seed=seed, clock=clock)
    return Session(sched, cluster, objs, pending, config, registry, clock)

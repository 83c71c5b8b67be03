"""Per-plugin timing covers every plugin call: the framework's observer (what the
scheduler_plugin_execution_duration_seconds metric and the UI read) hears each call a plugin
gets, on the equivalence cache's path as on the regular one, in preemption dry runs, at Reserve,
Bind and PostBind, and in explain."""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable
from typing import Any

import pytest
from test_equivalence import cluster, workload  # same folder: on sys.path under pytest

from kubesched.api.objects import Pod
from kubesched.app import VirtualClock
from kubesched.cluster.memory import MemoryCluster
from kubesched.config import default_config
from kubesched.explain import explain_pod
from kubesched.framework.runtime import Framework
from kubesched.plugins import in_tree_registry
from kubesched.scheduler import Scheduler
from kubesched.state.snapshot import Snapshot
from kubesched.testing import make_pod

#: plugin method -> the extension point the framework reports it under
POINTS = {
    "pre_enqueue": "PreEnqueue",
    "pre_filter": "PreFilter",
    "add_pod": "AddPod",
    "remove_pod": "RemovePod",
    "filter": "Filter",
    "passes": "Filter",
    "post_filter": "PostFilter",
    "pre_score": "PreScore",
    "score": "Score",
    "normalize": "NormalizeScore",
    "reserve": "Reserve",
    "unreserve": "Unreserve",
    "permit": "Permit",
    "pre_bind_pre_flight": "PreBindPreFlight",
    "pre_bind": "PreBind",
    "bind": "Bind",
    "post_bind": "PostBind",
    "sign_pod": "Sign",
    "passes_everywhere": "Sign",
}


def spy_on(fw: Framework, calls: Counter[tuple[str, str]]) -> None:
    """Count every call of every plugin's extension-point methods, except those a plugin makes to
    itself while inside another (a default AddPod re-running the plugin's own PreFilter)."""
    for pl in fw.plugins.values():
        depth = [0]
        for method, point in POINTS.items():
            fn = getattr(pl, method, None)
            if fn is None:
                continue

            def counted(*args: Any, _fn: Callable[..., Any] = fn, _point: str = point, _pl: Any = pl, _d: list[int] = depth) -> Any:
                if _d[0] == 0:
                    calls[_pl.name, _point] += 1
                _d[0] += 1
                try:
                    return _fn(*args)
                finally:
                    _d[0] -= 1

            setattr(pl, method, counted)


@pytest.mark.parametrize("seed", [1, 2])
def test_the_observer_hears_every_plugin_call(seed: int) -> None:
    rng = random.Random(seed)
    reg = in_tree_registry(entry_points=False)
    snap = Snapshot()
    for node in cluster(rng, 40):
        snap.add_node(node)
    clock = VirtualClock()
    sched = Scheduler(default_config(reg.points_of), snap, MemoryCluster(), reg, seed=seed, clock=clock)
    fw = sched.frameworks["default-scheduler"]
    calls: Counter[tuple[str, str]] = Counter()
    heard: Counter[tuple[str, str]] = Counter()
    spy_on(fw, calls)
    fw.add_observer(lambda plugin, point, status, seconds: heard.update([(plugin, point)]))
    pods = workload(rng, 300)
    # high-priority pods arrive last: preemption's dry runs, nominated pods (the regular path)
    pods += [Pod.parse(make_pod(f"vip{i}", requests={"cpu": "2", "memory": "4Gi"}, priority=1000)) for i in range(10)]
    for p in pods:
        sched.add_pending(p)
    sched.run_until_idle(advance=clock.advance, max_attempts=2000)
    for p in pods[:5]:
        explain_pod(sched, p.with_node("") if p.node_name else p)
    assert fw.cache.hits > 100 and fw.cache.diagnosed > 0  # the cache served most cycles
    assert heard == calls
    points = {point for _, point in heard}
    want = {"Sign", "PreFilter", "Filter", "PreScore", "Score", "NormalizeScore", "PostFilter", "Bind"}
    assert want <= points
    assert heard["NodeResourcesFit", "Filter"] and heard["PodTopologySpread", "Filter"]


def test_observers_are_a_list() -> None:
    """Two clients observe one framework side by side (metrics and a UI timing, say): both hear
    every call, and one removing itself leaves the other in place (no client overwrites another)."""
    rng = random.Random(3)
    reg = in_tree_registry(entry_points=False)
    snap = Snapshot()
    for node in cluster(rng, 20):
        snap.add_node(node)
    clock = VirtualClock()
    sched = Scheduler(default_config(reg.points_of), snap, MemoryCluster(), reg, seed=3, clock=clock)
    fw = sched.frameworks["default-scheduler"]
    first: Counter[tuple[str, str]] = Counter()
    second: Counter[tuple[str, str]] = Counter()

    def hear_first(plugin: str, point: str, status: str, seconds: float) -> None:
        first[plugin, point] += 1

    def hear_second(plugin: str, point: str, status: str, seconds: float) -> None:
        second[plugin, point] += 1

    fw.add_observer(hear_first)
    fw.add_observer(hear_second)
    pods = workload(rng, 40)
    for p in pods[:20]:
        sched.add_pending(p)
    sched.run_until_idle(advance=clock.advance, max_attempts=200)
    assert first and first == second
    fw.remove_observer(hear_second)
    before = second.copy()
    for p in pods[20:]:
        sched.add_pending(p)
    sched.run_until_idle(advance=clock.advance, max_attempts=200)
    assert second == before  # removed: hears nothing more
    assert sum(first.values()) > sum(before.values())  # the other still hears
    fw.remove_observer(hear_second)  # removing twice is harmless
    assert fw.observers == [hear_first]

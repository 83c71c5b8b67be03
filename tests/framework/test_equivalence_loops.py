"""The equivalence cache serves the framework's own loops: a miss runs the cycle's plugins once
(no second, uncached cycle after it), and ``Framework.run_score`` scores a cached window as it
scores any window (the scores are those of the regular path)."""

from __future__ import annotations

import random
from collections import Counter
from typing import Any

from test_equivalence import cluster, workload  # same folder: on sys.path under pytest

from kubesched.api.objects import Pod
from kubesched.app import VirtualClock
from kubesched.cluster.memory import MemoryCluster
from kubesched.config import default_config
from kubesched.framework.runtime import Framework
from kubesched.plugins import in_tree_registry
from kubesched.scheduler import Scheduler
from kubesched.state.snapshot import Snapshot
from kubesched.testing import make_pod


def scheduler(seed: int, n_nodes: int, cache: bool = True) -> tuple[Scheduler, VirtualClock]:
    reg = in_tree_registry()
    snap = Snapshot()
    for n in cluster(random.Random(seed), n_nodes):
        snap.add_node(n)
    clock = VirtualClock()
    sched = Scheduler(default_config(reg.points_of), snap, MemoryCluster(), reg, seed=seed, clock=clock)
    sched.use_equivalence_cache = cache
    return sched, clock


def count_judged_rows(fw: Framework) -> tuple[dict[str, Counter[int]], Counter[str]]:
    """Per Filter plugin, how often each row was judged (by ``filter``, or by ``passes`` when it
    answered); per PreFilter plugin, its calls."""
    rows: dict[str, Counter[int]] = {pl.name: Counter() for pl in fw.filter}
    pre: Counter[str] = Counter()
    for pl in fw.filter:

        def judged(orig: Any, name: str, answers_none: bool) -> Any:
            def call(state: Any, pod: Any, snap: Any, rs: Any) -> Any:
                out = orig(state, pod, snap, rs)
                if not (answers_none and out is None):  # ``passes`` without a fast path judged nothing
                    rows[name].update(int(r) for r in rs)
                return out

            return call

        pl.filter = judged(pl.filter, pl.name, False)  # type: ignore[method-assign]
        if hasattr(pl, "passes"):
            pl.passes = judged(pl.passes, pl.name, True)  # type: ignore[attr-defined]
    for pl in fw.pre_filter:

        def counted(orig: Any, name: str) -> Any:
            def call(*args: Any) -> Any:
                pre[name] += 1
                return orig(*args)

            return call

        pl.pre_filter = counted(pl.pre_filter, pl.name)  # type: ignore[method-assign]
    return rows, pre


def test_a_miss_judges_each_node_once_per_filter() -> None:
    """A new pod shape (a miss) on a cluster with pods on it: every Filter plugin judges each node
    once at most (the NODE filters are not run again for their own verdicts), every PreFilter
    plugin runs once, and the cache serves the cycle (no uncached cycle after it)."""
    sched, clock = scheduler(7, 60)
    for i in range(30):
        sched.add_pending(Pod.parse(make_pod(f"filler{i}", requests={"cpu": "100m", "memory": "100Mi"})))
    sched.run_until_idle(advance=clock.advance)
    fw = sched.frameworks["default-scheduler"]
    rows, pre = count_judged_rows(fw)
    misses = fw.cache.misses
    placed = []
    sched.hooks.on_scheduled.append(lambda r: placed.append(r.node))
    sched.add_pending(Pod.parse(make_pod("new-shape", requests={"cpu": "300m", "memory": "300Mi"})))
    sched.run_until_idle(advance=clock.advance)
    assert fw.cache.misses == misses + 1
    assert placed and placed[0] is not None
    judged = {name: c for name, c in rows.items() if c}
    assert {"NodeResourcesFit", "TaintToleration", "NodeUnschedulable"} <= judged.keys()
    for name, c in judged.items():
        assert max(c.values()) == 1, (name, c.most_common(3))
    assert len(judged["NodeUnschedulable"]) == 60  # the first NODE filter judged every node
    assert pre and max(pre.values()) == 1, pre


def test_a_miss_rejected_at_prefilter_runs_prefilter_once() -> None:
    """A pod whose PreFilter rejects it (required node affinity to nodes that do not exist) is a
    miss the cache cannot keep: the regular path goes on from that PreFilter, not a second one,
    and the entries of other pod shapes stay."""
    sched, clock = scheduler(8, 20)
    fw = sched.frameworks["default-scheduler"]
    _, pre = count_judged_rows(fw)
    failed = []
    sched.hooks.on_failed.append(lambda r: failed.append(r.message))
    terms = [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["nowhere"]}]}]
    spec = {"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": terms}}}}
    sched.add_pending(Pod.parse(make_pod("plain", requests={"cpu": "100m"})))
    sched.schedule_one()  # a miss the cache keeps
    sched.add_pending(Pod.parse(make_pod("lost", requests={"cpu": "100m"}, spec=spec)))
    pre.clear()
    sched.schedule_one()
    assert fw.cache.misses == 2
    assert failed and "NodeAffinity" in failed[0]
    assert pre["NodeAffinity"] == 1, pre
    assert max(pre.values()) == 1, pre
    sched.add_pending(Pod.parse(make_pod("plain2", requests={"cpu": "100m"})))
    sched.schedule_one()
    assert (fw.cache.hits, fw.cache.misses) == (1, 2)  # the rejected pod left the other entries alone


def scores_of(seed: int, n_nodes: int, n_pods: int, cache: bool) -> list[tuple]:
    sched, clock = scheduler(seed, n_nodes, cache)
    out: list[tuple] = []

    def keep(res: Any) -> None:
        if res.scores is not None:
            order = res.scores.rows.argsort(kind="stable")
            out.append((res.pod.key, res.scores.rows[order].tolist(), res.scores.total[order].tolist(), res.node))

    sched.hooks.on_scheduled.append(keep)
    for p in workload(random.Random(seed), n_pods):
        sched.add_pending(p)
    sched.run_until_idle(advance=clock.advance, max_attempts=5 * n_pods)
    if cache:
        assert sched.frameworks["default-scheduler"].cache.hits > n_pods // 2
    return out


def test_cached_and_uncached_scores_are_identical() -> None:
    """Every scored cycle of a mixed workload (cached pods, fresh spreading and anti-affinity,
    rows re-judged as pods land): the same window and the same total per node, cache on or off."""
    with_cache = scores_of(11, 80, 400, True)
    without = scores_of(11, 80, 400, False)
    assert len(with_cache) > 200
    assert with_cache == without

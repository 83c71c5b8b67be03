"""Scheduler.failure_detail=False: same placements, FitErrors without per-node reasons.

The trace replay drops an unschedulable pod at once and never reads why it failed, so it turns
the details off; driven the same way, everything else must stay as it is, and profiles with
PostFilter (preemption reads the per-node statuses) keep them. (A pod left in the queue is retried
on any event instead of the events its rejecting plugins name: no plugin is named.)
"""

from __future__ import annotations

import random

from test_equivalence import cluster, workload

from kubesched.app import VirtualClock
from kubesched.cluster.memory import MemoryCluster
from kubesched.config import default_config, parse_config
from kubesched.framework.equivalence import NO_DETAIL
from kubesched.plugins import in_tree_registry
from kubesched.scheduler import Scheduler
from kubesched.state.snapshot import Snapshot

NO_POST_FILTER = {
    "apiVersion": "kubescheduler.config.k8s.io/v1",
    "kind": "KubeSchedulerConfiguration",
    "profiles": [{"schedulerName": "default-scheduler", "plugins": {"postFilter": {"disabled": [{"name": "*"}]}}}],
}


def run(detail: bool, preempt: bool, seed: int = 7) -> tuple[list[tuple], list[tuple], int]:
    rng = random.Random(seed)
    reg = in_tree_registry()
    cfg = default_config(reg.points_of) if preempt else parse_config(NO_POST_FILTER, "test", reg.points_of)
    snap = Snapshot()
    for n in cluster(rng, 60):
        snap.add_node(n)
    sched = Scheduler(cfg, snap, MemoryCluster(), reg, seed=seed, clock=VirtualClock())
    sched.failure_detail = detail
    placed: list[tuple] = []
    failed: list[tuple] = []
    sched.hooks.on_scheduled.append(lambda r: placed.append((r.pod.key, r.node)))
    sched.hooks.on_failed.append(lambda r: failed.append((r.pod.key, r.message, sorted(r.diagnosis.unschedulable_plugins))))
    for p in workload(rng, 500):  # one at a time, an unschedulable pod dropped, as the replay does
        sched.add_pending(p)
        res = sched.schedule_one()
        if res is not None and res.node is None:
            sched.delete_pod(p)
    return placed, failed, sched.frameworks["default-scheduler"].cache.diagnosed


def test_details_off_keeps_placements_and_drops_reasons() -> None:
    placed_on, failed_on, diagnosed_on = run(True, preempt=False)
    placed_off, failed_off, diagnosed_off = run(False, preempt=False)
    assert placed_off == placed_on
    assert [f[0] for f in failed_off] == [f[0] for f in failed_on] != []
    assert diagnosed_on > 0 and diagnosed_off == 0  # the records path ran only with details on
    bare = [f for f in failed_off if NO_DETAIL.reasons[0] in f[1]]
    assert bare and all(f[2] == [] for f in bare)  # no plugin named: any event may help
    assert not any(NO_DETAIL.reasons[0] in f[1] for f in failed_on)


def test_profiles_with_post_filter_keep_the_details() -> None:
    assert run(False, preempt=True) == run(True, preempt=True)

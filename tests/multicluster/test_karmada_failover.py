"""Ported from Karmada v1.18: pkg/util/helper/taint_test.go, pkg/controllers/cluster/taint_manager_test.go,
pkg/controllers/taint/clustertaintpolicy_controller_test.go, pkg/apis/work/v1alpha2/binding_types_helper_test.go,
pkg/controllers/gracefuleviction/evictiontask_test.go, pkg/controllers/applicationfailover/*_test.go and
pkg/util/binding_test.go. Times are seconds; upstream's ``timeNow`` is ``NOW``."""

from __future__ import annotations

import pytest

from kubesched.api.taints import NO_EXECUTE, NO_SCHEDULE, PREFER_NO_SCHEDULE, Taint, Toleration
from kubesched.errors import InputError
from kubesched.multicluster.api import (
    PURGE_DIRECTLY,
    PURGE_GRACEFULLY,
    PURGE_NEVER,
    ApplicationFailoverBehavior,
    ClusterFailoverBehavior,
    FailoverBehavior,
    MatchCondition,
    Placement,
    ReplicaSchedulingStrategy,
    TargetCluster,
    parse_policy,
)
from kubesched.multicluster.eviction import (
    PRODUCER_TAINT_MANAGER,
    REASON_APPLICATION_FAILURE,
    REASON_TAINT_UNTOLERATED,
    EvictionTask,
    UnhealthySince,
    application_task,
    assess_eviction_tasks,
    assess_single_task,
    distinguish_unhealthy_clusters,
    graceful_evict_cluster,
    next_retry,
)
from kubesched.multicluster.failover import cluster_purge_mode, need_eviction, replicas_changed
from kubesched.multicluster.taints import (
    NOT_READY_FOR_SCHED,
    TAINT_NOT_READY,
    TAINT_UNREACHABLE,
    UNREACHABLE_FOR_SCHED,
    TimedTaint,
    add_taints_on_cluster,
    condition_matches,
    matching_tolerations,
    min_toleration_time,
    no_execute_taints,
    remove_taints_from_cluster,
    set_current_cluster_taints,
    taint_cluster_by_condition,
    taint_exists,
)
from tests.multicluster.karmada import binding

NOW = 1_000_000.0
MIN = 60.0


def tt(key: str, effect: str, added: float | None = None, value: str = "") -> TimedTaint:
    return TimedTaint(Taint(key, value, effect), added)


def tol(key: str, effect: str = NO_EXECUTE, seconds: int | None = None, op: str = "Exists", value: str = "") -> Toleration:
    return Toleration(key, op, value, effect, seconds)


NR, UR = TimedTaint(NOT_READY_FOR_SCHED), TimedTaint(UNREACHABLE_FOR_SCHED)


# ---- helper/taint_test.go ----------------------------------------------------------------------
@pytest.mark.parametrize(
    ("name", "current", "add", "remove", "want"),
    [
        ("ready condition from true to false", [], [NOT_READY_FOR_SCHED], [UNREACHABLE_FOR_SCHED], [NOT_READY_FOR_SCHED]),
        ("ready condition from true to unknown", [], [UNREACHABLE_FOR_SCHED], [NOT_READY_FOR_SCHED], [UNREACHABLE_FOR_SCHED]),
        ("ready condition from false to unknown", [NR], [UNREACHABLE_FOR_SCHED], [NOT_READY_FOR_SCHED], [UNREACHABLE_FOR_SCHED]),
        ("ready condition from false to true", [NR], [], [NOT_READY_FOR_SCHED, UNREACHABLE_FOR_SCHED], []),
        ("ready condition from unknown to true", [UR], [], [NOT_READY_FOR_SCHED, UNREACHABLE_FOR_SCHED], []),
        ("ready condition from unknown to false", [UR], [NOT_READY_FOR_SCHED], [UNREACHABLE_FOR_SCHED], [NOT_READY_FOR_SCHED]),
        ("clusterTaintsToAdd is nil and clusterTaintsToRemove is nil", [UR], [UNREACHABLE_FOR_SCHED], [NOT_READY_FOR_SCHED],
         [UNREACHABLE_FOR_SCHED]),
    ],
)
def test_SetCurrentClusterTaints(name, current, add, remove, want):
    """TestSetCurrentClusterTaints, 7 of 7 cases."""
    got = set_current_cluster_taints(add, remove, current, NOW)
    assert [t.taint for t in got] == want


def test_SetCurrentClusterTaints_stamps_added_taints_only():
    """SetCurrentClusterTaints sets TimeAdded on the taints it adds; a kept taint keeps its time."""
    got = set_current_cluster_taints([UNREACHABLE_FOR_SCHED], [], [TimedTaint(NOT_READY_FOR_SCHED, 5.0)], NOW)
    assert got == [TimedTaint(NOT_READY_FOR_SCHED, 5.0), TimedTaint(UNREACHABLE_FOR_SCHED, NOW)]


@pytest.mark.parametrize(
    ("name", "find", "want"),
    [("exist", Taint(TAINT_UNREACHABLE, "", NO_EXECUTE), True), ("not exist", Taint(TAINT_NOT_READY, "", NO_SCHEDULE), False)],
)
def test_TaintExists(name, find, want):
    """TestTaintExists, 2 of 2 cases."""
    assert taint_exists([tt(TAINT_UNREACHABLE, NO_EXECUTE), tt(TAINT_NOT_READY, NO_EXECUTE)], find) is want


@pytest.mark.parametrize(
    ("name", "taints", "want"),
    [
        ("has NoExecute taints", [tt(TAINT_UNREACHABLE, NO_EXECUTE), tt(TAINT_NOT_READY, NO_SCHEDULE)], [tt(TAINT_UNREACHABLE, NO_EXECUTE)]),
        ("no NoExecute taints", [tt(TAINT_UNREACHABLE, PREFER_NO_SCHEDULE), tt(TAINT_NOT_READY, NO_SCHEDULE)], []),
    ],
)
def test_GetNoExecuteTaints(name, taints, want):
    """TestGetNoExecuteTaints, 2 of 2 cases."""
    assert no_execute_taints(taints) == want


@pytest.mark.parametrize(
    ("name", "current", "ready", "want"),
    [
        ("cluster without status", [NR], None, [NOT_READY_FOR_SCHED]),
        ("cluster with ready condition", [NR], "True", []),
        ("cluster with unknown condition", [NR], "Unknown", [UNREACHABLE_FOR_SCHED]),
        ("cluster with false condition", [UR], "False", [NOT_READY_FOR_SCHED]),
    ],
)
def test_Controller_Reconcile(name, current, ready, want):
    """cluster_controller_test.go TestController_Reconcile, 4 of 5 cases (the cluster's taints
    after taintClusterByCondition; "cluster not found" has no counterpart)."""
    assert [t.taint for t in taint_cluster_by_condition(ready, current, NOW)] == want


@pytest.mark.parametrize(
    ("name", "taints", "used", "want"),
    [
        ("no noExecuteTaints", [], [tol("key", seconds=60)], -1),
        ("no usedTolerations", [tt("key", NO_EXECUTE, NOW, "value")], [], 0),
        ("with noExecuteTaints and usedTolerations", [tt("key", NO_EXECUTE, NOW, "value")], [tol("key", seconds=60)], 60),
        ("usedTolerantion.TolerationSeconds is nil", [tt("key", NO_EXECUTE, NOW, "value")], [tol("key")], -1),
        ("noExecuteTaints.TimeAdded is nil", [tt("key", NO_EXECUTE, None, "value")], [tol("key", seconds=60)], -1),
        ("find the latest trigger time", [tt("key1", NO_EXECUTE, NOW, "value1"), tt("key2", NO_EXECUTE, NOW, "value2")],
         [tol("key1", seconds=120), tol("key2", seconds=60)], 60),
        ("trigger time is up", [tt("key", NO_EXECUTE, NOW - 2 * MIN, "value")], [tol("key", seconds=60)], 0),
    ],
)
def test_GetMinTolerationTimeWithCurrentTime(name, taints, used, want):
    """TestGetMinTolerationTimeWithCurrentTime, 7 of 7 cases."""
    assert min_toleration_time(taints, used, NOW) == want


K1 = tt("key1", NO_SCHEDULE, value="value1")
K2 = tt("key2", NO_SCHEDULE, value="value2")


@pytest.mark.parametrize(
    ("name", "taints", "tolerations", "want_ok", "want_used"),
    [
        ("taints is nil", [], [tol("key1", NO_SCHEDULE, op="Equal", value="value1")], True, []),
        ("tolerations is nil", [K1], [], False, []),
        ("tolerated is true", [K1, K2],
         [tol("key1", NO_SCHEDULE, op="Equal", value="value1"), tol("key2", NO_SCHEDULE, op="Equal", value="value2")], True,
         [tol("key1", NO_SCHEDULE, op="Equal", value="value1"), tol("key2", NO_SCHEDULE, op="Equal", value="value2")]),
        ("tolerated is false", [K1, K2],
         [tol("key1", NO_SCHEDULE, op="Equal", value="value_1"), tol("key2", NO_SCHEDULE, op="Equal", value="value_2")], False, []),
    ],
)
def test_GetMatchingTolerations(name, taints, tolerations, want_ok, want_used):
    """TestGetMatchingTolerations, 4 of 4 cases."""
    assert matching_tolerations(taints, tolerations) == (want_ok, want_used)


# ---- cluster/taint_manager_test.go -------------------------------------------------------------
@pytest.mark.parametrize(
    ("name", "taints", "tolerations", "enabled", "want"),
    [
        ("cluster not found", None, [], True, (False, -1)),
        ("no execute taint eviction disabled", [tt("test-key", NO_EXECUTE)], [], False, (False, -1)),
        ("cluster has no NoExecute taints", [tt("test-key", NO_SCHEDULE)], [], True, (False, -1)),
        ("taint not tolerated - immediate eviction", [tt("test-key", NO_EXECUTE, NOW - 1)], [], True, (True, 0)),
        ("taint tolerated with zero toleration seconds - immediate eviction", [tt("test-key", NO_EXECUTE, NOW - 1)],
         [tol("test-key", seconds=0)], True, (True, 0)),
        ("taint tolerated with positive toleration seconds - wait for toleration time", [tt("test-key", NO_EXECUTE, NOW - 1)],
         [tol("test-key", seconds=60)], True, (False, 59)),
        ("taint tolerated forever - no eviction", [tt("test-key", NO_EXECUTE, NOW - 1)], [tol("test-key")], True, (False, -1)),
        ("multiple taints with mixed tolerations", [tt("tolerated-key", NO_EXECUTE, NOW + 1), tt("not-tolerated-key", NO_EXECUTE, NOW - 1)],
         [tol("tolerated-key", seconds=30)], True, (True, 0)),
        ("toleration time expired - immediate eviction", [tt("test-key", NO_EXECUTE, NOW - 2)], [tol("test-key", seconds=1)], True,
         (True, 0)),
    ],
)
def test_NoExecuteTaintManager_needEvictionWithCurrentTime(name, taints, tolerations, enabled, want):
    """TestNoExecuteTaintManager_needEvictionWithCurrentTime, 9 of 12 cases: the three about a
    missing or malformed applied-placement annotation have no counterpart (the placement is the
    binding's own here)."""
    assert need_eviction(taints, tolerations, NOW, enabled=enabled) == want


def _action(evict: bool, wait: float) -> str:
    return "immediate" if evict else ("delayed" if wait > 0 else "skip")


@pytest.mark.parametrize(
    ("name", "taints", "tolerations", "want"),
    [
        ("no taints - skip", [], [], "skip"),
        ("no tolerations - immediate eviction", [tt("test-key", NO_EXECUTE, NOW - 1)], [], "immediate"),
        ("finite tolerationSeconds unexpired - delayed eviction", [tt("test-key", NO_EXECUTE, NOW - 1)], [tol("test-key", seconds=60)],
         "delayed"),
        ("infinite toleration (no tolerationSeconds) - skip", [tt("test-key", NO_EXECUTE, NOW - 1)], [tol("test-key")], "skip"),
        ("multiple taints - one not tolerated - immediate",
         [tt("tolerated-key", NO_EXECUTE, NOW - 1), tt("not-tolerated-key", NO_EXECUTE, NOW - 1)], [tol("tolerated-key")], "immediate"),
        ("multiple taints - all tolerated indefinitely - skip", [tt("key1", NO_EXECUTE, NOW - 1), tt("key2", NO_EXECUTE, NOW - 1)],
         [tol("key1"), tol("key2")], "skip"),
        ("multiple taints - one tolerated with finite seconds - delayed", [tt("key1", NO_EXECUTE, NOW - 1), tt("key2", NO_EXECUTE, NOW - 1)],
         [tol("key1"), tol("key2", seconds=120)], "delayed"),
    ],
)
def test_enqueueBinding(name, taints, tolerations, want):
    """Test_enqueueBinding, 7 of 9 cases (the two about a missing or invalid applied-placement
    annotation have no counterpart): skip, evict at once, or look again when a toleration runs out."""
    assert _action(*need_eviction(taints, tolerations, NOW)) == want


@pytest.mark.parametrize(
    ("name", "flag", "failover", "want"),
    [
        ("failover spec is nil, global config is empty, should default to Gracefully", "", None, PURGE_GRACEFULLY),
        ("failover spec is nil, global config is Directly", PURGE_DIRECTLY, None, PURGE_DIRECTLY),
        ("failover spec is nil, global config is Gracefully", PURGE_GRACEFULLY, None, PURGE_GRACEFULLY),
        ("failover spec is present, but cluster is nil, should fallback to global config", PURGE_DIRECTLY, FailoverBehavior(),
         PURGE_DIRECTLY),
        ("failover spec is present, PurgeMode is empty, should be Gracefully", PURGE_DIRECTLY,
         FailoverBehavior(cluster=ClusterFailoverBehavior("")), PURGE_GRACEFULLY),
        ("failover spec is present, PurgeMode is Directly", PURGE_GRACEFULLY,
         FailoverBehavior(cluster=ClusterFailoverBehavior(PURGE_DIRECTLY)), PURGE_DIRECTLY),
        ("failover spec is present, PurgeMode is Gracefully", PURGE_DIRECTLY,
         FailoverBehavior(cluster=ClusterFailoverBehavior(PURGE_GRACEFULLY)), PURGE_GRACEFULLY),
    ],
)
def test_getPurgeMode(name, flag, failover, want):
    """Test_getPurgeMode, 7 of 7 cases."""
    assert cluster_purge_mode(failover, flag) == want


# ---- taint/clustertaintpolicy_controller_test.go -----------------------------------------------
def mc(t: str, op: str, *values: str) -> MatchCondition:
    return MatchCondition(t, op, values)


@pytest.mark.parametrize(
    ("name", "conditions", "match", "want"),
    [
        ("empty match conditions", {"Ready": "True"}, [], False),
        ("match: operator is In", {"Ready": "True"}, [mc("Ready", "In", "True")], True),
        ("don't match: operator is In", {"Ready": "False"}, [mc("Ready", "In", "True")], False),
        ("match: operator is NotIn", {"Ready": "False"}, [mc("Ready", "NotIn", "True", "Unknown")], True),
        ("don't match: operator is NotIn", {"Ready": "False"}, [mc("Ready", "NotIn", "False")], False),
        ("match: multiple conditions", {"Ready": "Unknown", "NetworkReady": "False", "StorageReady": "True"},
         [mc("Ready", "In", "False", "Unknown"), mc("NetworkReady", "NotIn", "True")], True),
        ("don't match: multiple conditions", {"Ready": "True", "NetworkReady": "False", "StorageReady": "True"},
         [mc("Ready", "In", "False", "Unknown"), mc("NetworkReady", "NotIn", "True")], False),
    ],
)
def test_ConditionMatches(name, conditions, match, want):
    """TestConditionMatches, 7 of 7 cases."""
    assert condition_matches(conditions, match) is want


@pytest.mark.parametrize(
    ("name", "current", "taints", "want"),
    [
        ("add new taint", [], [Taint("key1", "value1", NO_SCHEDULE)], [tt("key1", NO_SCHEDULE, NOW, "value1")]),
        ("add the existing taint, don't update TimeAdded", [tt("key1", NO_SCHEDULE, NOW - MIN, "value1")],
         [Taint("key1", "value1", NO_SCHEDULE)], [tt("key1", NO_SCHEDULE, NOW - MIN, "value1")]),
        ("add multi taints", [tt("key2", PREFER_NO_SCHEDULE, NOW - MIN, "value2")],
         [Taint("key1", "value1", NO_SCHEDULE), Taint("key3", "value3", NO_EXECUTE)],
         [tt("key2", PREFER_NO_SCHEDULE, NOW - MIN, "value2"), tt("key1", NO_SCHEDULE, NOW, "value1"), tt("key3", NO_EXECUTE, NOW, "value3")]),
    ],
)
def test_AddTaintsOnCluster(name, current, taints, want):
    """TestAddTaintsOnCluster, 3 of 3 cases."""
    assert add_taints_on_cluster(current, taints, NOW) == want


@pytest.mark.parametrize(
    ("name", "current", "remove", "want"),
    [
        ("remove a taint", [tt("key1", NO_SCHEDULE, NOW - MIN)], [Taint("key1", "", NO_SCHEDULE)], []),
        ("remove multiple matched taints", [tt("key1", NO_SCHEDULE, NOW - MIN), tt("key2", NO_EXECUTE, NOW)],
         [Taint("key1", "", NO_SCHEDULE), Taint("key2", "", NO_EXECUTE)], []),
        ("no matched taints", [tt("key1", NO_SCHEDULE, NOW - MIN)], [Taint("key2", "", NO_EXECUTE)], [tt("key1", NO_SCHEDULE, NOW - MIN)]),
    ],
)
def test_RemoveTaintsOnCluster(name, current, remove, want):
    """TestRemoveTaintsOnCluster, 3 of 3 cases."""
    assert remove_taints_from_cluster(current, remove) == want


# ---- work/v1alpha2/binding_types_helper_test.go ------------------------------------------------
def T(*pairs) -> list[TargetCluster]:  # noqa: N802, ANN002
    return [TargetCluster(n, r) for n, r in pairs]


def task(cluster: str, mode: str = "", replicas: int | None = None, message: str = "graceful eviction", **kw) -> EvictionTask:  # noqa: ANN003
    return EvictionTask(cluster, mode, replicas, REASON_TAINT_UNTOLERATED, message, PRODUCER_TAINT_MANAGER, **kw)


M3 = T(("m1", 1), ("m2", 2), ("m3", 3))


@pytest.mark.parametrize(
    ("name", "clusters", "tasks", "evict", "want_clusters", "want_tasks"),
    [
        ("cluster not exist should do nothing", T(("m1", 0), ("m2", 0), ("m3", 0)), [], task("non-exist"),
         T(("m1", 0), ("m2", 0), ("m3", 0)), []),
        ("evict cluster from head", M3, [], task("m1", PURGE_DIRECTLY), T(("m2", 2), ("m3", 3)), [task("m1", PURGE_DIRECTLY, 1)]),
        ("remove cluster from middle", M3, [], task("m2", PURGE_NEVER), T(("m1", 1), ("m3", 3)), [task("m2", PURGE_NEVER, 2)]),
        ("remove cluster from tail", M3, [], task("m3", PURGE_GRACEFULLY), T(("m1", 1), ("m2", 2)), [task("m3", PURGE_GRACEFULLY, 3)]),
        ("eviction task should be appended to non-empty tasks", M3, [EvictionTask("original-cluster")], task("m3", PURGE_GRACEFULLY),
         T(("m1", 1), ("m2", 2)), [EvictionTask("original-cluster"), task("m3", PURGE_GRACEFULLY, 3)]),
        ("remove cluster from empty list", [], [], EvictionTask(""), [], []),
        ("same eviction task should not be appended multiple times", T(("m1", 1), ("m2", 2)),
         [task("m1", replicas=1, message="graceful eviction v1")], task("m1", PURGE_GRACEFULLY, 1, "graceful eviction v2"),
         T(("m2", 2)), [task("m1", replicas=1, message="graceful eviction v1")]),
    ],
)
def test_ResourceBindingSpec_GracefulEvictCluster(name, clusters, tasks, evict, want_clusters, want_tasks):
    """TestResourceBindingSpec_GracefulEvictCluster, 7 of 7 cases."""
    got_clusters, got_tasks = graceful_evict_cluster(list(clusters), list(tasks), evict.from_cluster, evict)
    assert got_clusters == want_clusters
    assert got_tasks == want_tasks


# ---- gracefuleviction/evictiontask_test.go -----------------------------------------------------
TIMEOUT = 3 * MIN


def ge(cluster: str, created: float | None, **kw) -> EvictionTask:  # noqa: ANN003
    return EvictionTask(cluster, creation_timestamp=created, **kw)


@pytest.mark.parametrize(
    ("name", "task_", "scheduled", "observed", "has_scheduled", "kept"),
    [
        ("task doesn't exceed the timeout, hasScheduled is false, task has no change", ge("member1", NOW - MIN), [], [], False, True),
        ("task exceeds the timeout, task will be nil", ge("member1", NOW - 4 * MIN), [], [], False, False),
        ("task doesn't exceed the timeout, hasScheduled is true, scheduled result is healthy, task will be nil",
         ge("member1", NOW - MIN), T(("memberA", 0)), [("memberA", "Healthy")], True, False),
        ("task doesn't exceed the timeout, hasScheduled is true, scheduled result is unhealthy, task has no change",
         ge("member1", NOW - MIN), T(("memberA", 0)), [("memberA", "Unhealthy")], True, True),
        ("task doesn't exceed the timeout, hasScheduled is true, scheduled result is unknown, task has no change",
         ge("member1", NOW - MIN), T(("memberA", 0)), [("memberA", "Unknown")], True, True),
        ("suppressDeletion is declared, value is true", ge("member1", NOW - MIN, suppress_deletion=True), [], [], False, True),
        ("suppressDeletion is declared, value is false", ge("member1", NOW - MIN, suppress_deletion=False), [], [], False, False),
    ],
)
def test_assessSingleTask(name, task_, scheduled, observed, has_scheduled, kept):
    """Test_assessSingleTask, 7 of 7 cases."""
    got = assess_single_task(task_, NOW, TIMEOUT, scheduled, observed, has_scheduled)
    assert got == (task_ if kept else None)


AB = T(("memberA", 0), ("memberB", 0))


@pytest.mark.parametrize(
    ("name", "tasks", "scheduled", "observed", "want_tasks", "want_clusters"),
    [
        ("tasks without creation timestamp", [ge("member1", None), ge("member2", None)], [], [],
         [ge("member1", NOW), ge("member2", NOW)], []),
        ("all tasks do not exceed the timeout, but hasScheduled is false, all tasks should do nothing",
         [ge("member1", NOW - MIN), ge("member2", NOW - 2 * MIN)], T(("memberA", 0)), [],
         [ge("member1", NOW - MIN), ge("member2", NOW - 2 * MIN)], []),
        ("task that exceed the timeout should be removed, task do not exceed the timeout should do nothing",
         [ge("member1", NOW - 4 * MIN), ge("member2", NOW - MIN)], T(("memberA", 0)), [], [ge("member2", NOW - MIN)], ["member1"]),
        ("mixed tasks", [ge("member1", None), ge("member2", NOW - 2 * MIN), ge("member3", NOW - 4 * MIN)], AB, [],
         [ge("member1", NOW), ge("member2", NOW - 2 * MIN)], ["member3"]),
        ("tasks that do not exceed the timeout and someone binding scheduled result is missing, should do nothing",
         [ge("member1", NOW - MIN), ge("member2", NOW - 2 * MIN)], AB, [("memberA", "Healthy")],
         [ge("member1", NOW - MIN), ge("member2", NOW - 2 * MIN)], []),
        ("tasks that do not exceed the timeout and binding scheduled result is healthy, tasks need to be removed",
         [ge("member1", NOW - MIN), ge("member2", NOW - 2 * MIN)], AB, [("memberA", "Healthy"), ("memberB", "Healthy")],
         [], ["member1", "member2"]),
        ("tasks that do not exceed the timeout and someone binding scheduled result is unhealthy, should do nothing",
         [ge("member1", NOW - MIN), ge("member2", NOW - 2 * MIN)], AB, [("memberA", "Healthy"), ("memberB", "Unhealthy")],
         [ge("member1", NOW - MIN), ge("member2", NOW - 2 * MIN)], []),
        ("tasks that do not exceed the timeout and someone binding scheduled result is unknown, should do nothing",
         [ge("member1", NOW - MIN), ge("member2", NOW - 2 * MIN)], AB, [("memberA", "Healthy"), ("memberB", "Unknown")],
         [ge("member1", NOW - MIN), ge("member2", NOW - 2 * MIN)], []),
        ("task with custom GracePeriodSeconds should not leak timeout to subsequent tasks without it",
         [ge("member1", NOW - 15, grace_period_seconds=10), ge("member2", NOW - 15)], T(("memberA", 0)), [],
         [ge("member2", NOW - 15)], ["member1"]),
    ],
)
def test_assessEvictionTasks(name, tasks, scheduled, observed, want_tasks, want_clusters):
    """Test_assessEvictionTasks, 9 of 9 cases (upstream runs every case with hasScheduled true, so does this)."""
    assert assess_eviction_tasks(tasks, NOW, TIMEOUT, scheduled, observed, True) == (want_tasks, want_clusters)


@pytest.mark.parametrize(
    ("name", "tasks", "want"),
    [
        ("empty tasks", [], 0),
        ("retry interval is less than timeout / 10", [ge("member1", NOW - 19 * MIN), ge("member2", NOW - 10 * MIN)], MIN),
        ("retry interval is equal to timeout / 10", [ge("member1", NOW - 10 * MIN), ge("member2", NOW - 5 * MIN)], 10 * MIN),
        ("suppression and graciously tasks co-exist",
         [ge("member1", NOW - 60 * MIN, suppress_deletion=True), ge("member2", NOW - 5 * MIN)], 15 * MIN),
        ("only suppression tasks",
         [ge("member1", NOW - 60 * MIN, suppress_deletion=True), ge("member2", NOW - 5 * MIN, suppress_deletion=True)], 0),
        ("task with custom grace period - not expired", [ge("member1", NOW - 5 * MIN, grace_period_seconds=600)], 5 * MIN),
    ],
)
def test_nextRetry(name, tasks, want):
    """Test_nextRetry, 6 of 6 cases."""
    assert next_retry(tasks, 20 * MIN, NOW) == want


# ---- applicationfailover -----------------------------------------------------------------------
@pytest.mark.parametrize(
    ("name", "observed", "tasks", "want"),
    [
        ("all applications are healthy", [("member1", "Healthy"), ("member2", "Healthy")], [], ([], ["member1", "member2"])),
        ("all applications are unknown", [("member1", "Unknown"), ("member2", "Unknown")], [], ([], ["member1", "member2"])),
        ("one application is unhealthy and not in gracefulEvictionTasks", [("member1", "Healthy"), ("member2", "Unhealthy")], [],
         (["member2"], ["member1"])),
        ("one application is unhealthy and in gracefulEvictionTasks", [("member1", "Healthy"), ("member2", "Unhealthy")],
         [EvictionTask("member2")], ([], ["member1"])),
    ],
)
def test_DistinguishUnhealthyClustersWithOthers(name, observed, tasks, want):
    """TestDistinguishUnhealthyClustersWithOthers, 4 of 4 cases."""
    assert distinguish_unhealthy_clusters(observed, tasks) == want


KEY = "default/test"


def test_RBApplicationFailoverController_detectFailure():
    """TestRBApplicationFailoverController_detectFailure, 4 of 4 cases (upstream sleeps 2 s; here
    the clock is given)."""
    # hasWorkloadBeenUnhealthy return false
    u = UnhealthySince()
    assert u.detect_failure(["cluster1", "cluster2"], 1, KEY, NOW) == (1, [])
    # more than the tolerance time
    u = UnhealthySince()
    u.since[KEY] = {"cluster1": NOW}
    assert u.detect_failure(["cluster1", "cluster2"], 1, KEY, NOW + 2) == (1, ["cluster1"])
    # less than the tolerance time
    u = UnhealthySince()
    u.since[KEY] = {"cluster1": NOW}
    assert u.detect_failure(["cluster1", "cluster2"], 100, KEY, NOW) == (100, [])
    # final duration is 0
    assert UnhealthySince().detect_failure([], 100, KEY, NOW) == (0, [])


def test_WorkloadUnhealthyMap_deleteIrrelevantClusters():
    """TestWorkloadUnhealthyMap_deleteIrrelevantClusters, 2 of 2 cases: clusters no longer
    targeted and healthy ones are forgotten."""
    # normal case
    u = UnhealthySince()
    u.since[KEY] = {"cluster-1": NOW, "cluster-2": NOW, "cluster-3": NOW}
    u.delete_irrelevant_clusters(KEY, {"cluster-2", "cluster-3"}, ["cluster-3"])
    assert u.since[KEY] == {"cluster-2": NOW}
    # unhealthyClusters is nil
    u = UnhealthySince()
    u.delete_irrelevant_clusters(KEY, {"cluster-2", "cluster-3"}, ["cluster-3"])
    assert "cluster-2" not in u.since.get(KEY, {})


@pytest.mark.parametrize(
    ("name", "behavior", "want"),
    [
        ("Gracefully purgeMode with ResourceBinding", ApplicationFailoverBehavior(100, PURGE_GRACEFULLY, 120),
         EvictionTask("", PURGE_GRACEFULLY, reason=REASON_APPLICATION_FAILURE, producer="p", grace_period_seconds=120)),
        ("Never purgeMode with ClusterResourceBinding", ApplicationFailoverBehavior(100, PURGE_NEVER),
         EvictionTask("", PURGE_NEVER, reason=REASON_APPLICATION_FAILURE, producer="p", suppress_deletion=True)),
        ("Immediately purgeMode with ClusterResourceBinding", ApplicationFailoverBehavior(100, PURGE_DIRECTLY),
         EvictionTask("", PURGE_DIRECTLY, reason=REASON_APPLICATION_FAILURE, producer="p")),
        ("Gracefully purgeMode with ResourceBinding, StatePreservation is nil", ApplicationFailoverBehavior(100, PURGE_GRACEFULLY, 120),
         EvictionTask("", PURGE_GRACEFULLY, reason=REASON_APPLICATION_FAILURE, producer="p", grace_period_seconds=120)),
    ],
)
def test_buildTaskOptions(name, behavior, want):
    """Test_buildTaskOptions, 4 of 6 cases, without the preserved label state and clusters before
    failover (StatefulFailoverInjection is an alpha gate, off by default): "StatePreservation.Rules
    is nil" is the same task here, "target cluster status in not collected" needs the state."""
    assert application_task(behavior, "p") == want


# ---- util/binding_test.go ----------------------------------------------------------------------
def strategy(kind: str | None) -> Placement:
    return Placement(replica_scheduling=None if kind is None else ReplicaSchedulingStrategy(kind))


@pytest.mark.parametrize(
    ("name", "replicas", "kind", "clusters", "want"),
    [
        ("nil strategy", 0, None, [], False),
        ("empty strategy", 0, "", [], False),
        ("Duplicated strategy and replicas not changed", 5, "Duplicated", [("member1", 5), ("member2", 5)], False),
        ("Duplicated strategy and replicas changed", 5, "Duplicated", [("member1", 3), ("member2", 5)], True),
        ("Divided strategy and replicas not changed", 5, "Divided", [("member1", 2), ("member2", 3)], False),
        ("Divided strategy and replicas changed", 5, "Divided", [("member1", 3), ("member2", 3)], True),
    ],
)
def test_IsBindingReplicasChanged(name, replicas, kind, clusters, want):
    """TestIsBindingReplicasChanged, 6 of 9 cases: the other three are about components
    (MultiplePodTemplatesScheduling, not modelled)."""
    assert replicas_changed(binding(replicas, strategy(kind), clusters=clusters)) is want


# ---- spec.failover parsing (validation.go ValidateFailoverBehavior, mutating webhook) ----------
def policy(failover: dict, **spec) -> dict:  # noqa: ANN003
    return {"kind": "PropagationPolicy", "metadata": {"name": "p"},
            "spec": {"resourceSelectors": [{"apiVersion": "apps/v1", "kind": "Deployment"}], "failover": failover, **spec}}


def test_failover_defaults():
    """tolerationSeconds 300 and purgeMode Gracefully (CRD defaults), gracePeriodSeconds 600
    (SetDefaultGracePeriodSeconds); cluster.purgeMode Gracefully."""
    p = parse_policy(policy({"application": {"decisionConditions": {}}, "cluster": {}}, propagateDeps=True), "f.yaml")
    assert p.failover == FailoverBehavior(ApplicationFailoverBehavior(300, PURGE_GRACEFULLY, 600), ClusterFailoverBehavior(PURGE_GRACEFULLY))
    assert p.propagate_deps is True


@pytest.mark.parametrize(
    ("failover", "field", "message"),
    [
        ({"application": {}}, "spec.failover.application.decisionConditions", "Required value"),
        ({"application": {"decisionConditions": {"tolerationSeconds": -1}}}, "tolerationSeconds", "greater than or equal to 0"),
        ({"application": {"decisionConditions": {}, "purgeMode": "Never", "gracePeriodSeconds": 10}}, "gracePeriodSeconds",
         "only takes effect when purgeMode is gracefully"),
        ({"application": {"decisionConditions": {}, "gracePeriodSeconds": 0}}, "gracePeriodSeconds", "must be greater than 0"),
        ({"application": {"decisionConditions": {}, "purgeMode": "Soon"}}, "purgeMode", 'Unsupported value: "Soon"'),
        ({"cluster": {"purgeMode": "Never"}}, "spec.failover.cluster.purgeMode", 'Unsupported value: "Never"'),
        ({"cluster": {"purge": "Directly"}}, "spec.failover.cluster.purge", 'unknown field "purge"'),
    ],
)
def test_failover_validation(failover, field, message):
    """ValidateApplicationFailover's rules and the CRD's enums, one clear error naming the field."""
    with pytest.raises(InputError) as e:
        parse_policy(policy(failover), "f.yaml")
    assert field in str(e.value) and message in str(e.value)

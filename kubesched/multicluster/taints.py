"""Karmada's cluster taints (v1.18): the taints a member gets from its conditions, ClusterTaintPolicy
objects, and the toleration arithmetic the taint manager uses (pkg/util/helper/taint.go,
pkg/controllers/taint). The functions carry upstream's names and are tested against upstream's
own tables; ``kubesched.multicluster.failover`` drives them over time."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from kubesched.api.fields import as_list, as_map, as_str, one_of
from kubesched.api.taints import NO_EXECUTE, NO_SCHEDULE, Taint, Toleration
from kubesched.errors import InputError, join_path
from kubesched.multicluster.api import (
    Cluster,
    ClusterTaintPolicy,
    MatchCondition,
)
from kubesched.multicluster.selectors import cluster_matches

if TYPE_CHECKING:
    pass

TAINT_NOT_READY = "cluster.karmada.io/not-ready"
TAINT_UNREACHABLE = "cluster.karmada.io/unreachable"
NOT_READY_FOR_SCHED = Taint(TAINT_NOT_READY, "", NO_SCHEDULE)
UNREACHABLE_FOR_SCHED = Taint(TAINT_UNREACHABLE, "", NO_SCHEDULE)
READY = "Ready"
TRUE, FALSE, UNKNOWN = "True", "False", "Unknown"



# ---- taints (pkg/util/helper/taint.go) ---------------------------------------------------------
@dataclass(frozen=True)
class TimedTaint:
    """A Cluster taint with its ``timeAdded`` (None: not recorded; it never runs a toleration out)."""

    taint: Taint
    time_added: float | None = None


def _match(a: Taint, b: Taint) -> bool:
    """corev1 Taint.MatchTaint: the same key and effect (the value does not count)."""
    return a.key == b.key and a.effect == b.effect


def taint_exists(taints: Iterable[TimedTaint], taint: Taint) -> bool:
    return any(_match(t.taint, taint) for t in taints)


def set_current_cluster_taints(
    to_add: Sequence[Taint], to_remove: Sequence[Taint], current: Sequence[TimedTaint], now: float
) -> list[TimedTaint]:
    """SetCurrentClusterTaints: ``current`` without ``to_remove``, with each of ``to_add`` it lacks
    appended, stamped ``now``. Unchanged (the same list) when nothing is to do."""
    adding = [t for t in to_add if not taint_exists(current, t)]
    removing = [t for t in to_remove if taint_exists(current, t)]
    if not adding and not removing:
        return list(current)
    kept = [t for t in current if not any(_match(t.taint, r) for r in removing)]
    return kept + [TimedTaint(t, now) for t in adding]


def taint_cluster_by_condition(ready: str | None, current: Sequence[TimedTaint], now: float) -> list[TimedTaint]:
    """The cluster controller's taintClusterByCondition for a Ready condition of ``ready``
    (None: the cluster has none yet, which counts as not ready)."""
    if ready == FALSE:
        return set_current_cluster_taints([NOT_READY_FOR_SCHED], [UNREACHABLE_FOR_SCHED], current, now)
    if ready == UNKNOWN:
        return set_current_cluster_taints([UNREACHABLE_FOR_SCHED], [NOT_READY_FOR_SCHED], current, now)
    if ready == TRUE:
        return set_current_cluster_taints([], [NOT_READY_FOR_SCHED, UNREACHABLE_FOR_SCHED], current, now)
    return set_current_cluster_taints([NOT_READY_FOR_SCHED], [], current, now)


def no_execute_taints(taints: Iterable[TimedTaint]) -> list[TimedTaint]:
    """GetNoExecuteTaints."""
    return [t for t in taints if t.taint.effect == NO_EXECUTE]


def matching_tolerations(taints: Sequence[TimedTaint], tolerations: Sequence[Toleration]) -> tuple[bool, list[Toleration]]:
    """GetMatchingTolerations: whether every taint is tolerated, and the first toleration that
    tolerates each (empty when not all are)."""
    used: list[Toleration] = []
    for t in taints:
        tol = next((x for x in tolerations if x.tolerates(t.taint)), None)
        if tol is None:
            return False, []
        used.append(tol)
    return True, used


def min_toleration_time(taints: Sequence[TimedTaint], used: Sequence[Toleration], now: float) -> float:
    """GetMinTolerationTimeWithCurrentTime: seconds until the first toleration runs out; 0 when
    one has (or none is used); -1 when none ever does (no taints, no tolerationSeconds, or no
    ``timeAdded``)."""
    if not taints:
        return -1
    if not used:
        return 0
    triggers = [
        t.time_added + tol.toleration_seconds
        for tol in used
        if tol.toleration_seconds is not None
        for t in taints
        if t.time_added is not None and tol.tolerates(t.taint)
    ]
    if not triggers:
        return -1
    first = min(triggers)
    return 0 if first < now else first - now


# ---- ClusterTaintPolicy (pkg/controllers/taint) -------------------------------------------------
def condition_matches(conditions: Mapping[str, str], match: Sequence[MatchCondition]) -> bool:
    """conditionMatches: every match condition holds for the cluster's condition of its type
    (a type the cluster lacks never matches); an empty list matches nothing."""
    if not match:
        return False
    for mc in match:
        status = conditions.get(mc.condition_type)
        if status is None:
            return False
        if mc.operator == "In" and status not in mc.status_values:
            return False
        if mc.operator == "NotIn" and status in mc.status_values:
            return False
        if mc.operator not in ("In", "NotIn"):
            return False
    return True


def add_taints_on_cluster(current: Sequence[TimedTaint], taints: Sequence[Taint], now: float) -> list[TimedTaint]:
    """addTaintsOnCluster: each taint whose key and effect the cluster lacks, stamped ``now``."""
    out = list(current)
    for t in taints:
        if not taint_exists(out, t):
            out.append(TimedTaint(t, now))
    return out


def remove_taints_from_cluster(current: Sequence[TimedTaint], taints: Sequence[Taint]) -> list[TimedTaint]:
    """removeTaintsFromCluster: the first taint of each key and effect goes."""
    out = list(current)
    for t in taints:
        i = next((k for k, c in enumerate(out) if _match(c.taint, t)), None)
        if i is not None:
            del out[i]
    return out


def apply_taint_policies(
    policies: Sequence[ClusterTaintPolicy], cluster: Cluster, conditions: Mapping[str, str], current: Sequence[TimedTaint], now: float
) -> list[TimedTaint]:
    """The ClusterTaintPolicy controller's reconcile of one cluster (``policies`` in creation order)."""
    out = list(current)
    for p in policies:
        if p.target_clusters is not None and not cluster_matches(cluster, p.target_clusters):
            continue
        if condition_matches(conditions, p.add_on):
            out = add_taints_on_cluster(out, p.taints, now)
        if condition_matches(conditions, p.remove_on):
            out = remove_taints_from_cluster(out, p.taints)
    return out


#: The policy Karmada's failover guide pairs with the taint manager: NoExecute while not Ready.
NOT_READY_NO_EXECUTE = ClusterTaintPolicy(
    "detect-cluster-notready",
    (Taint(TAINT_NOT_READY, "", NO_EXECUTE),),
    add_on=(MatchCondition(READY, "NotIn", (TRUE,)),),
    remove_on=(MatchCondition(READY, "In", (TRUE,)),),
)


# ---- a federation file's Clusters -------------------------------------------------------------
def cluster_conditions(m: Mapping, path: str) -> dict[str, str]:
    """A Cluster object's ``status.conditions`` as {type: status} (metav1.Condition: ``type``
    required, ``status`` True, False or Unknown). Kept apart from ``api.parse_cluster``, which
    reads only CompleteAPIEnablements from them."""
    status = m.get("status")
    sp = join_path(join_path(path, "status"), "conditions")
    out: dict[str, str] = {}
    raw = status.get("conditions") if isinstance(status, Mapping) else None
    for i, c in enumerate(as_list(raw, sp)):
        ip = join_path(sp, i)
        cm = as_map(c, ip)
        ctype = as_str(cm.get("type"), join_path(ip, "type"))
        if not ctype:
            raise InputError("Required value", path=join_path(ip, "type"))
        out[ctype] = one_of(cm.get("status"), join_path(ip, "status"), (TRUE, FALSE, UNKNOWN), "")
    return out


def taint_by_conditions(
    clusters: Mapping[str, Cluster], conditions: Mapping[str, Mapping[str, str]], policies: Sequence[ClusterTaintPolicy], now: float = 0
) -> None:
    """What the cluster controller and the ClusterTaintPolicy controller make of the conditions a
    federation file gives: each cluster's taints, in place. A Cluster whose file gives no Ready
    condition counts as Ready (kubesched's members are reachable; Karmada would taint a cluster
    whose status was never posted not-ready)."""
    for name, c in clusters.items():
        conds = conditions.get(name, {})
        current = [TimedTaint(t) for t in c.taints]
        if READY in conds:
            current = taint_cluster_by_condition(conds[READY], current, now)
        current = apply_taint_policies(policies, c, conds, current, now)
        c.taints = tuple(t.taint for t in current)

"""Scale-down: which nodes are unneeded and which may go now (``ScaleDownMixin``, the scale-down
half of ``kubesched.autoscale.core.ClusterAutoscaler``), and whether a node's pods can all move
elsewhere (``Drainer``, which the Karpenter-like consolidation uses too).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

import numpy as np

from kubesched.api.objects import Node, Pod
from kubesched.autoscale import eligibility
from kubesched.autoscale.config import AutoscalerConfig
from kubesched.autoscale.eligibility import being_deleted, unremovable_reason
from kubesched.autoscale.health import ClusterState
from kubesched.autoscale.interface import ClusterView, LoopRecord, NodeProvider, ScaleDownInfo, Stats
from kubesched.autoscale.limits import consume, exceeded, limits_left
from kubesched.autoscale.predicate import PredicateChecker, placed
from kubesched.autoscale.utilization import is_daemonset_pod, is_gpu_node, is_mirror_pod, node_utilization
from kubesched.state.snapshot import Snapshot

SAFE_TO_EVICT = "cluster-autoscaler.kubernetes.io/safe-to-evict"
DRAIN_RECHECK = 60.0  # a node whose pods cannot move is checked again after this long


class ScaleDownMixin:
    """ClusterAutoscaler's scale-down half: the unneeded timers (utilisation under the threshold,
    empty), the cooldowns after a scale-up, a deletion or a failure, and the drains. An unready
    node waits ``scaleDown.unreadyTime`` rather than ``unneededTime`` (or is left alone when
    ``scaleDown.unreadyEnabled`` is false); a node not started yet is no candidate; no removal
    takes the cluster under a resource limit's min. A mixin: the state declared here is set by
    ``ClusterAutoscaler.__init__``, and ``group_of``, ``group_sizes``, ``delta``, ``checker`` and
    ``with_hinted`` are its bookkeeping (kubesched.autoscale.core)."""

    cfg: AutoscalerConfig
    provider: NodeProvider
    stats: Stats
    record: LoopRecord | None
    unneeded_since: dict[str, float]  # utilisation under the threshold since
    empty_since: dict[str, float]  # no pods since
    last_scale_up: float
    last_delete: float
    last_failure: float
    health: ClusterState  # this iteration's readiness (kubesched.autoscale.health)

    def threshold(self, node: Node) -> float:
        sd = self.cfg.scale_down
        return sd.gpu_utilization_threshold if is_gpu_node(node) else sd.utilization_threshold

    def filter_out_unremovable(self, snap: Snapshot, now: float) -> list[str]:
        """FilterOutUnremovable: the nodes of node groups that may be unneeded: started (not
        NotStarted), not being deleted, not protected by the scale-down-disabled annotation, not
        unready while scale-down of unready nodes is off, utilisation under the threshold (a
        node without one, NaN, is not)."""
        sd = self.cfg.scale_down
        util = node_utilization(
            snap, ignore_daemonsets=sd.ignore_daemonsets_utilization, ignore_mirror=sd.ignore_mirror_pods_utilization
        )
        skip = set(self.health.total.not_started)
        if not sd.unready_enabled:
            skip.update(self.health.total.unready)
        out = []
        for row in np.flatnonzero(util < 1.0).tolist():
            node = snap.nodes[row]
            if self.group_of(node) is None or unremovable_reason(node, now) is not None or node.name in skip:
                continue
            if util[row] < self.threshold(node):
                out.append(node.name)
        if self.record is not None:
            self._explain_unremovable(snap, util, set(out), now)
        return out

    def _explain_unremovable(self, snap: Snapshot, util: np.ndarray, candidates: set[str], now: float) -> None:
        """Why each other node is not a candidate (CA's UnremovableReason), for the watcher."""
        why = self.record.unremovable if self.record is not None else {}
        starting, unready = set(self.health.total.not_started), set(self.health.total.unready)
        for row, node in enumerate(snap.nodes[: snap.n]):
            if node.name in candidates or node.name in starting:  # not started: not considered at all
                continue
            if self.group_of(node) is None:
                why[node.name] = eligibility.NOT_AUTOSCALED
            elif (reason := unremovable_reason(node, now)) is not None:
                why[node.name] = reason
            elif node.name in unready and not self.cfg.scale_down.unready_enabled:
                why[node.name] = eligibility.SCALE_DOWN_UNREADY_DISABLED
            elif np.isnan(util[row]):
                why[node.name] = eligibility.UNEXPECTED_ERROR
            else:
                why[node.name] = eligibility.NOT_UNDERUTILIZED

    def update_unneeded(self, snap: Snapshot, now: float) -> None:
        """Start (or stop) the unneeded timers: utilisation under the threshold, and empty (no
        pods but DaemonSet and mirror pods)."""
        no_pods = snap.requested[:, snap.res_index["pods"]] == 0
        low: set[str] = set()
        idle: set[str] = set()
        for name in self.filter_out_unremovable(snap, now):
            low.add(name)
            self.unneeded_since.setdefault(name, now)
            row = snap.row_of[name]
            if no_pods[row] or all(stays_with_node(p) for p in snap.pods_on[row].values()):
                idle.add(name)
                self.empty_since.setdefault(name, now)
        self.unneeded_since = {n: t for n, t in self.unneeded_since.items() if n in low}
        self.empty_since = {n: t for n, t in self.empty_since.items() if n in idle}

    def in_cooldown(self, now: float) -> bool:
        sd = self.cfg.scale_down
        return (
            now < self.last_scale_up + sd.delay_after_add
            or now < self.last_delete + sd.delay_after_delete
            or now < self.last_failure + sd.delay_after_failure
        )

    def scale_down(self, view: ClusterView, now: float, allowed: bool = True) -> None:
        snap = view.snapshot
        with self.with_hinted(snap):
            self.update_unneeded(snap, now)
            if self.record is not None:
                self.record.unneeded = list(self.unneeded_since)
            if not allowed or self.in_cooldown(now):
                if self.record is not None:
                    self.record.cooldown = True
                return
            doomed = self.unneeded_now(view, now)
        for name in doomed:
            if self.record is not None:
                pods = list(snap.pods_on[snap.row_of[name]].values())
                group = self.group_of(snap.nodes[snap.row_of[name]]) or ""
                unready = name in self.health.total.unready
                self.record.scale_downs.append(ScaleDownInfo(name, group, name in self.empty_since, pods, unready))
            self.unneeded_since.pop(name, None)
            self.empty_since.pop(name, None)
            evicted = len(snap.pods_on[snap.row_of[name]])  # before the provider deletes the node
            self.provider.delete(name)
            self.stats.removed(evicted)
            self.last_delete = now

    def unneeded_now(self, view: ClusterView, now: float) -> list[str]:
        """The nodes to remove now: empty ones unneeded long enough, then busy ones whose pods
        can all move elsewhere (RemovableAt: long enough, the group above its min size, the
        cluster above its resource limits' mins)."""
        snap = view.snapshot
        sd = self.cfg.scale_down
        unready = set(self.health.total.unready)

        def long_enough(name: str, since: float) -> bool:
            return now - since >= (sd.unready_time if name in unready else sd.unneeded_time)

        empty = [n for n, t in self.empty_since.items() if long_enough(n, t)]
        busy = [n for n, t in self.unneeded_since.items() if n not in self.empty_since and long_enough(n, t)]
        why = self.record.unremovable if self.record is not None else {}
        why.update(
            (n, eligibility.NOT_UNREADY_LONG_ENOUGH if n in unready else eligibility.NOT_UNNEEDED_LONG_ENOUGH)
            for n, t in self.unneeded_since.items()
            if not long_enough(n, t)
        )
        if not empty and not busy:
            return []
        sizes = self.group_sizes(snap)
        left = self.scale_down_left(snap, now)
        removed: list[str] = []
        for name in empty[: sd.max_empty_bulk_delete]:
            if (reason := self._blocked(snap, name, sizes, left)) is not None:
                why[name] = reason
                continue
            self._take(snap, name, sizes, left)
            removed.append(name)
        drains: list[str] = []
        if busy:
            drainer = Drainer(self.checker(view))
            with drainer.plan(snap) as try_drain:
                for name in busy:
                    if len(drains) >= sd.max_drain_parallelism:
                        break
                    if (reason := self._blocked(snap, name, sizes, left)) is not None:
                        why[name] = reason
                        continue
                    if try_drain(name, set(removed) | set(drains)) is None:
                        # its pods cannot move, so it is not unneeded: the timer starts again
                        self.unneeded_since[name] = now
                        why[name] = eligibility.BLOCKED_BY_POD if drainer.blocked else eligibility.NO_PLACE_TO_MOVE_PODS
                        continue
                    self._take(snap, name, sizes, left)
                    drains.append(name)
        return [*removed, *drains]

    def scale_down_left(self, snap: Snapshot, now: float) -> dict[str, int]:
        """LimitsLeft: how much of each resource with a min above 0 scale-down may take from
        the cluster; nodes being deleted do not count. Empty without such a min."""
        limits = self.cfg.resource_limits
        if not any(v > 0 for v in limits.min.values()):
            return {}
        return limits_left(limits, (n for n in snap.nodes[: snap.n] if not being_deleted(n, now)), self.delta)

    def _blocked(self, snap: Snapshot, name: str, sizes: dict[str, int], left: dict[str, int]) -> str | None:
        """Why ``name`` may not go now (verifyMinSize, then the resource limits), None if it may."""
        node = snap.nodes[snap.row_of[name]]
        g = self.group_of(node)
        if g is None or sizes[g] <= self.cfg.group(g).min_size:
            return eligibility.MIN_SIZE_REACHED
        if left and exceeded(left, self.delta(node)):
            return eligibility.MINIMAL_RESOURCE_LIMIT_EXCEEDED
        return None

    def _take(self, snap: Snapshot, name: str, sizes: dict[str, int], left: dict[str, int]) -> None:
        node = snap.nodes[snap.row_of[name]]
        sizes[self.group_of(node) or ""] -= 1
        consume(left, self.delta(node), 1)


def stays_with_node(pod: Pod) -> bool:
    """DaemonSet and mirror pods: a drain neither finds them a new node nor counts them against
    the node being empty (CA's drain.GetPodsToMove leaves them out)."""
    return is_daemonset_pod(pod) or is_mirror_pod(pod)


class Drainer:
    """Can every pod of a node move elsewhere? Simulated with the real filters on the live
    snapshot (hypothetical pods added and taken away again), PodDisruptionBudgets respected."""

    def __init__(self, checker: PredicateChecker) -> None:
        self.checker = checker
        self.blocked = False  # the last try_drain failed on a pod that may not move (not for want of room)

    def movable(self, pod: Pod, pdb_used: dict[int, int], snap: Snapshot) -> bool:
        if pod.annotations.get(SAFE_TO_EVICT) == "false":
            return False
        for k, pdb in enumerate(snap.pdbs):
            if pdb.namespace != pod.namespace or pdb.selector is None or not pdb.selector.matches(pod.labels):
                continue
            if pdb_used.get(k, 0) >= pdb.disruptions_allowed:
                return False
            pdb_used[k] = pdb_used.get(k, 0) + 1
        return True

    @contextmanager
    def plan(self, snap: Snapshot) -> Iterator[Callable[[str, set[str]], dict[str, str] | None]]:
        """Yields ``try_drain(node, removed)``: where each pod of ``node`` would go (pod uid -> node),
        avoiding the nodes in ``removed``, or None. Accepted moves stay in the snapshot until the
        block ends, so later nodes see them; the block is a trial that takes them out again."""
        pdb_used: dict[int, int] = {}

        def try_drain(name: str, removed: set[str]) -> dict[str, str] | None:
            row = snap.row_of[name]
            pods = [p for p in snap.pods_on[row].values() if not stays_with_node(p)]
            used = dict(pdb_used)
            self.blocked = not all(self.movable(p, used, snap) for p in pods)
            if self.blocked:
                return None
            skip = removed | {name}
            rows = np.asarray([r for r in snap.order.tolist() if snap.nodes[r].name not in skip], np.int32)
            moves: dict[str, str] = {}
            with snap.trial() as t:  # this node's moves: kept if every pod finds a place
                for p in pods:
                    target = self.checker.first_fit(snap, p.with_node(""), rows)  # as the recreated pod
                    if target is None:
                        return None
                    q = placed(p, snap.nodes[target].name, "~drain")
                    snap.add_pod(q)
                    moves[p.uid] = q.node_name
                t.keep()
            pdb_used.update(used)
            return moves

        with snap.trial():
            yield try_drain

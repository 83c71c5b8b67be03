"""The autoscaler's loop, independent of where it runs: the simulator drives it on virtual time,
``kubesched autoscale`` on a live cluster. It reads the cluster through a ``ClusterView`` and acts
through a ``NodeProvider``.

``ClusterAutoscaler.run_once`` is one iteration of Cluster Autoscaler's main loop (every
``scanInterval``): account for nodes that registered or never did, scale up for unschedulable
pods, then scale down unneeded nodes.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

from kubesched.api.objects import Node, Pod
from kubesched.autoscale import eligibility
from kubesched.autoscale.config import GROUP_LABEL, AutoscalerConfig, NodeGroup
from kubesched.autoscale.eligibility import unremovable_reason
from kubesched.autoscale.estimator import (
    BinpackingEstimator,
    PodGroup,
    cluster_capacity,
    equivalence_groups,
    estimation_limit,
    sng_capacity,
)
from kubesched.autoscale.expander import Expander, Option
from kubesched.autoscale.limits import apply_limits, consume, delta_for_node, exceeded, resources_left
from kubesched.autoscale.nodegroupset import (
    balance_scale_up,
    find_similar,
    generic_comparator,
    label_comparator,
)
from kubesched.autoscale.predicate import (
    PredicateChecker,
    node_named,
    placed,
    reads_other_nodes,
)
from kubesched.autoscale.utilization import is_daemonset_pod, is_gpu_node, is_mirror_pod, node_utilization
from kubesched.framework.runtime import Framework
from kubesched.state.snapshot import Snapshot

SAFE_TO_EVICT = "cluster-autoscaler.kubernetes.io/safe-to-evict"
BACKOFF_INITIAL = 300.0  # CA's node group backoff after a failed scale-up: 5 min, doubling ...
BACKOFF_MAX = 1800.0  # ... up to 30 min
BACKOFF_RESET = 3 * 3600.0  # a group's backoff history is forgotten 3 h after its last failure
REGISTERED_WINDOW = 10.0  # pending pods are tried on nodes this recently registered (or 2 scans)
DRAIN_RECHECK = 60.0  # a node whose pods cannot move is checked again after this long


class ClusterView(Protocol):
    """What the autoscaler reads: the scheduler's snapshot (nodes and their pods) and the pods
    the scheduler marked unschedulable (PodScheduled=False, reason Unschedulable)."""

    snapshot: Snapshot

    def now(self) -> float: ...

    def unschedulable(self) -> list[Pod]: ...

    def created(self, pod: Pod) -> float: ...

    def framework_for(self, pod: Pod) -> Framework | None: ...


class NodeProvider(Protocol):
    """Where nodes come from. ``create`` asks for a node (it registers later, or never);
    ``delete`` removes a registered node, evicting its pods (their controllers recreate them);
    ``cancel`` gives up on a node that has not registered."""

    def create(self, group: NodeGroup, node: Node) -> None: ...

    def delete(self, name: str) -> None: ...

    def cancel(self, name: str) -> None: ...


@dataclass
class Stats:
    scale_ups: int = 0  # scale-up decisions
    nodes_added: int = 0
    scale_downs: int = 0  # nodes removed
    failed_nodes: int = 0  # nodes that did not register within maxNodeProvisionTime
    drained_pods: int = 0  # pods evicted by scale-down / consolidation
    estimations: int = 0


@dataclass
class ScaleUpInfo:
    """One group grown (CA's ``nodegroupset.ScaleUpInfo``)."""

    group: str
    current: int
    new: int
    max: int

    def __str__(self) -> str:  # as CA prints it in events: {group 1->2 (max: 5)}
        return f"{{{self.group} {self.current}->{self.new} (max: {self.max})}}"


@dataclass
class ScaleDownInfo:
    node: str
    group: str
    empty: bool
    pods: list[Pod]  # the pods evicted


@dataclass
class LoopRecord:
    """What one iteration did, for whoever watches the loop (``kubesched autoscale``'s status
    ConfigMap, events and metrics). The loop fills ``record`` when one is set before
    ``run_once``; the simulator sets none and pays nothing."""

    pending: list[Pod] = field(default_factory=list)  # considered for scale-up (upcoming nodes take the others)
    scale_ups: list[ScaleUpInfo] = field(default_factory=list)
    triggered: list[Pod] = field(default_factory=list)  # the pods the scale-up is for
    failed: list[tuple[str, str]] = field(default_factory=list)  # (group, node) never registered
    scale_downs: list[ScaleDownInfo] = field(default_factory=list)
    unneeded: list[str] = field(default_factory=list)  # scale-down candidates
    unremovable: dict[str, str] = field(default_factory=dict)  # node -> CA's UnremovableReason
    cooldown: bool = False  # scale-down held by a delay after a scale-up, deletion or failure
    durations: dict[str, float] = field(default_factory=dict)  # CA's function label -> seconds


@dataclass
class Upcoming:
    group: str
    requested: float
    node: Node


@dataclass
class GroupState:
    backoff_until: float = 0.0
    backoff_step: float = 0.0
    last_failure: float = -float("inf")

    def back_off(self, now: float) -> None:
        """exponentialBackoff.Backoff after a failed scale-up: 5 min, doubled by each failure
        after the last backoff ran out (failures while it runs, such as the other nodes of the
        same scale-up, keep its length), at most 30 min; forgotten 3 h after the last failure.
        A scale-up that succeeds does not end it (clusterstate's TestScaleUpBackoff)."""
        if now - self.last_failure > BACKOFF_RESET:
            self.backoff_step = 0.0
        if not self.backoff_step or self.backoff_until < now:
            self.backoff_step = min(BACKOFF_MAX, self.backoff_step * 2 or BACKOFF_INITIAL)
        self.backoff_until = now + self.backoff_step
        self.last_failure = now


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


class ClusterAutoscaler:
    """Cluster Autoscaler's semantics over node groups (see docs/autoscaling.md)."""

    def __init__(self, config: AutoscalerConfig, provider: NodeProvider, rng: np.random.Generator) -> None:
        self.cfg = config
        self.provider = provider
        self.rng = rng
        self.expander = Expander(config.expander, rng, priorities=config.priorities, prices=config.prices)
        self.upcoming: dict[str, Upcoming] = {}
        self.registered: dict[str, float] = {}  # nodes registered lately: the scheduler may not have tried them
        # this iteration's pending pods that fit on those nodes (node -> pods): as in CA, where they
        # are packed into the snapshot that scale-down then reads, they keep their node in use
        self.hinted: dict[str, list[Pod]] = {}
        self.groups = {g.name: GroupState() for g in config.node_groups}
        self.unneeded_since: dict[str, float] = {}  # utilisation under the threshold since
        self.empty_since: dict[str, float] = {}  # no pods since
        self.last_scale_up = -float("inf")
        self.last_delete = -float("inf")
        self.last_failure = -float("inf")
        self.stats = Stats()
        self.record: LoopRecord | None = None  # set by a watcher before run_once (LoopRecord)
        self._seq = 0
        self._fits_template: dict[tuple[object, str], bool] = {}
        self._deltas: dict[str, dict[str, int]] = {}  # node uid -> its resource-limit delta
        self._similar: dict[str, list[str]] = {}  # group -> the groups whose template is similar
        self._schedulable: dict[str, list[PodGroup]] = {}  # this iteration's valid groups -> pod groups that fit

    # ---- bookkeeping ---------------------------------------------------------------------
    def group_of(self, node: Node) -> str | None:
        g = node.labels.get(GROUP_LABEL)
        return g if g in self.groups else None

    def group_sizes(self, snap: Snapshot) -> dict[str, int]:
        """Registered plus upcoming nodes per group (CA's target size)."""
        sizes = dict.fromkeys(self.groups, 0)
        for node in snap.nodes:
            g = self.group_of(node)
            if g is not None:
                sizes[g] += 1
        for up in self.upcoming.values():
            sizes[up.group] += 1
        return sizes

    def cluster_size(self, snap: Snapshot) -> int:
        """All nodes of the cluster, of node groups or not, plus the upcoming ones: what
        ``maxNodesTotal`` caps (CA counts the cluster's nodes, not only its node groups')."""
        return snap.n + len(self.upcoming)

    def new_name(self, group: str) -> str:
        self._seq += 1
        return f"{group}-{self._seq}"

    def _register(self, view: ClusterView, now: float) -> None:
        snap = view.snapshot
        recent = max(2 * self.cfg.scan_interval, REGISTERED_WINDOW)
        self.registered = {n: t for n, t in self.registered.items() if now - t < recent and n in snap.row_of}
        for name, up in list(self.upcoming.items()):
            if name in snap.row_of:
                del self.upcoming[name]
                self.registered[name] = now
            elif now - up.requested >= self.cfg.max_node_provision_time:
                del self.upcoming[name]
                self.provider.cancel(name)
                if self.record is not None:
                    self.record.failed.append((up.group, name))
                self.stats.failed_nodes += 1
                self.last_failure = now
                self.groups[up.group].back_off(now)

    # ---- the loop ------------------------------------------------------------------------
    def run_once(self, view: ClusterView) -> None:
        now = view.now()
        self._register(view, now)
        self.hinted = {}
        t0 = time.perf_counter()
        scaled = self.scale_up(view, now)
        t1 = time.perf_counter()
        if self.cfg.scale_down.enabled:
            self.scale_down(view, now, allowed=not scaled)
        if self.cfg.enforce_node_group_min_size:  # last, as CA's RunOnce
            self.scale_up_to_min_size(view, now)
        if self.record is not None:
            self.record.durations.update(scaleUp=t1 - t0, scaleDown=time.perf_counter() - t1)

    @contextmanager
    def with_hinted(self, snap: Snapshot) -> Iterator[None]:
        """The pending pods that fit on recently registered nodes, placed there for the block: a
        node the scheduler is about to fill is not unneeded (nor a free destination for a drain)."""
        with snap.trial():
            for name, pods in self.hinted.items():
                if name in snap.row_of:
                    for p in pods:
                        snap.add_pod(placed(p, name, "~pending"))
            yield

    # ---- scale-up ------------------------------------------------------------------------
    def pending(self, view: ClusterView, now: float) -> list[Pod]:
        cut = self.cfg.expendable_pods_priority_cutoff
        delay = self.cfg.new_pod_scale_up_delay
        return [p for p in view.unschedulable() if p.priority >= cut and now - view.created(p) >= delay]

    def checker(self, view: ClusterView) -> PredicateChecker:
        return PredicateChecker(view.framework_for)

    def _base_factory(self, view: ClusterView, pods: list[Pod]) -> Callable[[], Snapshot]:
        snap = view.snapshot
        if any(reads_other_nodes(p) for p in pods):
            return snap.copy
        return lambda: snap.copy(nodes=(), pods=False)

    def fit_upcoming(self, view: ClusterView, pods: list[Pod], checker: PredicateChecker) -> list[Pod]:
        """The pods that no upcoming node will hold (CA leaves the others waiting for them).
        Nodes that registered lately count too: the scheduler may not have tried the pods on
        them yet."""
        if not (self.upcoming or self.registered) or not pods:
            return pods
        snap = self._base_factory(view, pods)()
        live = view.snapshot
        rows_l = [snap.add_node(up.node) for up in self.upcoming.values()]
        for name in self.registered:
            if name not in snap.row_of:
                rows_l.append(snap.add_node(live.nodes[live.row_of[name]]))
                for p in live.pods_on[live.row_of[name]].values():
                    snap.add_pod(p)
        rows = np.asarray(rows_l, np.int32)
        left = []
        for p in pods:
            row = checker.first_fit(snap, p, rows)
            if row is None:
                left.append(p)
                continue
            name = snap.nodes[row].name
            snap.add_pod(placed(p, name))
            if name in self.registered:
                self.hinted.setdefault(name, []).append(p)
        return left

    def _fits_empty(self, checker: PredicateChecker, pod: Pod, group: NodeGroup, view: ClusterView) -> bool:
        key = (pod.signature() or pod.uid, group.name)
        hit = self._fits_template.get(key)
        if hit is None:
            snap = view.snapshot.copy(nodes=(), pods=False)
            row = snap.add_node(node_named(group.template, f"template-{group.name}", {GROUP_LABEL: group.name}))
            hit = bool(checker.fits(snap, pod, np.asarray([row], np.int32))[0])
            if not reads_other_nodes(pod):
                self._fits_template[key] = hit
        return hit

    # ---- limits ----------------------------------------------------------------------------
    def delta(self, node: Node) -> dict[str, int]:
        """What one such node counts towards the resource limits (cached: nodes do not change)."""
        hit = self._deltas.get(node.uid)
        if hit is None:
            hit = self._deltas[node.uid] = delta_for_node(node, self.cfg.resource_limits)
        return hit

    def resources_left(self, snap: Snapshot, sizes: dict[str, int]) -> dict[str, int]:
        """ResourcesLeft: each node group at its target size times its template, and every node
        of no node group as it is."""
        if len(self._deltas) > 4 * (snap.n + len(self.cfg.node_groups)) + 64:
            self._deltas.clear()  # nodes come and go (live): keep the cache to about the cluster's size
        counted = [(g.template, sizes[g.name]) for g in self.cfg.node_groups]
        counted += [(node, 1) for node in snap.nodes if self.group_of(node) is None]
        return resources_left(self.cfg.resource_limits, counted, self.delta)

    # ---- similar node groups -----------------------------------------------------------------
    def similar_groups(self, name: str, schedulable: dict[str, list[PodGroup]]) -> list[str]:
        """ComputeSimilarNodeGroups: with balancing on, the groups similar to ``name`` (templates
        compared once) that are valid this iteration and can take every pod group ``name`` can.
        An atomic group is balanced with none."""
        if not self.cfg.balance_similar_node_groups or self.cfg.group(name).zero_or_max_node_scaling or not schedulable.get(name):
            return []
        if name not in self._similar:
            b = self.cfg.balancing
            comparator = label_comparator(b.labels) if b.labels else generic_comparator(
                [*b.ignore_labels, GROUP_LABEL], b.memory_difference_ratio, b.max_allocatable_difference_ratio, b.max_free_difference_ratio
            )
            self._similar[name] = find_similar(name, {g.name: g.template for g in self.cfg.node_groups}, comparator)
        mine = {id(eg) for eg in schedulable[name]}
        return [o for o in self._similar[name] if o in schedulable and mine <= {id(eg) for eg in schedulable[o]}]

    def options(self, view: ClusterView, pods: list[Pod], now: float, checker: PredicateChecker) -> list[Option]:
        """One option per valid node group that some pending pods fit (filterValidScaleUpNodeGroups,
        SchedulablePodGroups, ComputeExpansionOption)."""
        snap = view.snapshot
        sizes = self.group_sizes(snap)
        total = self.cluster_size(snap)
        max_total = self.cfg.max_nodes_total
        self._schedulable = {}
        if max_total and total >= max_total:
            return []
        left = self.resources_left(snap, sizes)
        groups = equivalence_groups(pods)
        for g in self.cfg.node_groups:
            room = g.max_size - sizes[g.name]
            if room <= 0 or self.groups[g.name].backoff_until > now:
                continue
            n = room if g.zero_or_max_node_scaling else 1  # an atomic group must fit whole
            if g.zero_or_max_node_scaling and max_total and total + n > max_total:
                continue
            if exceeded(left, {r: n * v for r, v in self.delta(g.template).items()}):
                continue
            ok = [eg for eg in groups if eg.exemplar is not None and self._fits_empty(checker, eg.exemplar, g, view)]
            if ok:
                self._schedulable[g.name] = ok
        estimator = BinpackingEstimator(checker, self._base_factory(view, pods))
        out = []
        for name, ok in self._schedulable.items():
            g = self.cfg.group(name)
            # the estimator's thresholds: maxNodesPerScaleUp, the room maxNodesTotal leaves, and
            # the room of the group and its similar groups
            rooms = [self.cfg.group(s).max_size - sizes[s] for s in [name, *self.similar_groups(name, self._schedulable)]]
            budget = estimation_limit(self.cfg.max_nodes_per_scale_up, cluster_capacity(max_total, total), sng_capacity(rooms))
            self.stats.estimations += 1
            tmpl = node_named(g.template, f"template-{g.name}", {GROUP_LABEL: g.name})
            est = estimator.estimate(ok, tmpl, budget, name_prefix=f"e-{g.name}")
            count = est.nodes
            if g.zero_or_max_node_scaling and count > 0:
                count = g.max_size - sizes[name]  # zero or max: the only valid size is the max
            if count > 0:
                out.append(Option(g.name, count, est.pods, g.template, self.cfg.prices.node(g)))
        return out

    def _create(self, group: NodeGroup, count: int, now: float, current: int) -> None:
        """``count`` new nodes of ``group`` (``current`` nodes now, upcoming ones included)."""
        if self.record is not None:
            self.record.scale_ups.append(ScaleUpInfo(group.name, current, current + count, group.max_size))
        for _ in range(count):
            name = self.new_name(group.name)
            node = node_named(group.template, name, {GROUP_LABEL: group.name})
            self.upcoming[name] = Upcoming(group.name, now, node)
            self.provider.create(group, node)

    def _scaled_up(self, nodes: int, now: float) -> None:
        self.stats.scale_ups += 1
        self.stats.nodes_added += nodes
        self.last_scale_up = now

    def scale_up(self, view: ClusterView, now: float) -> bool:
        pods = self.pending(view, now)
        if not pods:
            return False
        checker = self.checker(view)
        pods = self.fit_upcoming(view, pods, checker)
        if self.record is not None:
            self.record.pending = pods
        if not pods:
            return False
        options = self.options(view, pods, now, checker)
        best = self.expander.best(options, view.snapshot.n)
        if best is None:
            return False
        snap = view.snapshot
        sizes = self.group_sizes(snap)
        group = self.cfg.group(best.group)
        new = best.node_count
        if self.cfg.max_nodes_total:  # GetCappedNewNodeCount
            new = min(new, self.cfg.max_nodes_total - self.cluster_size(snap))
        left = self.resources_left(snap, sizes)
        new = apply_limits(new, left, self.delta(group.template))
        if new <= 0 or (group.zero_or_max_node_scaling and new < group.max_size - sizes[group.name]):
            return False  # an atomic group grows to its max or not at all
        # balanceScaleUps: split between the group and its similar groups still under the limits,
        # then cap each share by what the limits leave (capScaleUpsByQuota)
        similar = [s for s in self.similar_groups(group.name, self._schedulable) if not exceeded(left, self.delta(self.cfg.group(s).template))]
        plan = balance_scale_up([(n, sizes[n], self.cfg.group(n).max_size) for n in [group.name, *similar]], new)
        added = 0
        for info in plan:
            g = self.cfg.group(info.group)
            d = self.delta(g.template)
            k = apply_limits(info.new - info.current, left, d)
            consume(left, d, k)
            if k > 0:
                self._create(g, k, now, info.current)
                added += k
        if not added:
            return False
        if self.record is not None:
            self.record.triggered = list(best.pods)
        self._scaled_up(added, now)
        return True

    def scale_up_to_min_size(self, view: ClusterView, now: float) -> bool:
        """ScaleUpToNodeGroupMinSize (``enforceNodeGroupMinSize``): every group below its min
        (registered plus upcoming nodes) and not backing off grows to it, within the resource
        limits and ``maxNodesTotal``. Unlike upstream, each group's nodes count against the
        limits for the next group, and ``maxNodesTotal`` caps the cluster rather than the group."""
        snap = view.snapshot
        sizes = self.group_sizes(snap)
        left = self.resources_left(snap, sizes)
        total = self.cluster_size(snap)
        added = 0
        for g in self.cfg.node_groups:
            size = sizes[g.name]
            if size >= g.min_size or self.groups[g.name].backoff_until > now:
                continue
            d = self.delta(g.template)
            if exceeded(left, d):
                continue
            k = apply_limits(g.min_size - size, left, d)
            if self.cfg.max_nodes_total:
                k = min(k, self.cfg.max_nodes_total - total)
            if k <= 0:
                continue
            consume(left, d, k)
            total += k
            self._create(g, k, now, size)
            added += k
        if added:
            self._scaled_up(added, now)
        return added > 0

    # ---- scale-down ----------------------------------------------------------------------
    def threshold(self, node: Node) -> float:
        sd = self.cfg.scale_down
        return sd.gpu_utilization_threshold if is_gpu_node(node) else sd.utilization_threshold

    def filter_out_unremovable(self, snap: Snapshot, now: float) -> list[str]:
        """FilterOutUnremovable: the nodes of node groups that may be unneeded: not being
        deleted, not protected by the scale-down-disabled annotation, utilisation under the
        threshold (a node without one, NaN, is not)."""
        sd = self.cfg.scale_down
        util = node_utilization(
            snap, ignore_daemonsets=sd.ignore_daemonsets_utilization, ignore_mirror=sd.ignore_mirror_pods_utilization
        )
        out = []
        for row in np.flatnonzero(util < 1.0).tolist():
            node = snap.nodes[row]
            if self.group_of(node) is None or unremovable_reason(node, now) is not None:
                continue
            if util[row] < self.threshold(node):
                out.append(node.name)
        if self.record is not None:
            self._explain_unremovable(snap, util, set(out), now)
        return out

    def _explain_unremovable(self, snap: Snapshot, util: np.ndarray, candidates: set[str], now: float) -> None:
        """Why each other node is not a candidate (CA's UnremovableReason), for the watcher."""
        why = self.record.unremovable if self.record is not None else {}
        for row, node in enumerate(snap.nodes[: snap.n]):
            if node.name in candidates:
                continue
            if self.group_of(node) is None:
                why[node.name] = eligibility.NOT_AUTOSCALED
            elif (reason := unremovable_reason(node, now)) is not None:
                why[node.name] = reason
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
                self.record.scale_downs.append(ScaleDownInfo(name, group, name in self.empty_since, pods))
            self.stats.drained_pods += len(snap.pods_on[snap.row_of[name]])
            self.unneeded_since.pop(name, None)
            self.empty_since.pop(name, None)
            self.provider.delete(name)
            self.stats.scale_downs += 1
            self.last_delete = now

    def unneeded_now(self, view: ClusterView, now: float) -> list[str]:
        """The nodes to remove now: empty ones unneeded long enough, then busy ones whose pods
        can all move elsewhere."""
        snap = view.snapshot
        wait = self.cfg.scale_down.unneeded_time
        empty = [n for n, t in self.empty_since.items() if now - t >= wait]
        busy = [n for n, t in self.unneeded_since.items() if now - t >= wait and n not in self.empty_since]
        why = self.record.unremovable if self.record is not None else {}
        why.update((n, eligibility.NOT_UNNEEDED_LONG_ENOUGH) for n, t in self.unneeded_since.items() if now - t < wait)
        if not empty and not busy:
            return []
        sizes = self.group_sizes(snap)
        mins = {g.name: g.min_size for g in self.cfg.node_groups}
        removed: list[str] = []
        for name in empty[: self.cfg.scale_down.max_empty_bulk_delete]:
            g = self.group_of(snap.nodes[snap.row_of[name]])
            if g is None or sizes[g] <= mins[g]:
                why[name] = eligibility.MIN_SIZE_REACHED
                continue
            sizes[g] -= 1
            removed.append(name)
        drains: list[str] = []
        if busy:
            drainer = Drainer(self.checker(view))
            with drainer.plan(snap) as try_drain:
                for name in busy:
                    if len(drains) >= self.cfg.scale_down.max_drain_parallelism:
                        break
                    g = self.group_of(snap.nodes[snap.row_of[name]])
                    if g is None or sizes[g] <= mins[g]:
                        why[name] = eligibility.MIN_SIZE_REACHED
                        continue
                    if try_drain(name, set(removed) | set(drains)) is None:
                        # its pods cannot move, so it is not unneeded: the timer starts again
                        self.unneeded_since[name] = now
                        why[name] = eligibility.BLOCKED_BY_POD if drainer.blocked else eligibility.NO_PLACE_TO_MOVE_PODS
                        continue
                    sizes[g] -= 1
                    drains.append(name)
        return [*removed, *drains]

"""The autoscaler's loop, independent of where it runs: the simulator drives it on virtual time,
``kubesched autoscale`` on a live cluster. It reads the cluster through a ``ClusterView`` and acts
through a ``NodeProvider``.

``ClusterAutoscaler.run_once`` is one iteration of Cluster Autoscaler's main loop (every
``scanInterval``): account for nodes that registered or never did, scale up for unschedulable
pods, then scale down unneeded nodes. This module holds the bookkeeping and the scale-up; the
scale-down half is ``kubesched.autoscale.scaledown``, the view, the provider and what the loop
records are ``kubesched.autoscale.interface``.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import numpy as np

from kubesched.api.objects import Node, Pod
from kubesched.autoscale.config import GROUP_LABEL, AutoscalerConfig, NodeGroup
from kubesched.autoscale.estimator import (
    BinpackingEstimator,
    PodGroup,
    cluster_capacity,
    equivalence_groups,
    estimation_limit,
    sng_capacity,
)
from kubesched.autoscale.expander import Expander, Option
from kubesched.autoscale.health import ClusterState
from kubesched.autoscale.interface import ClusterView, LoopRecord, NodeProvider, ScaleUpInfo, Stats
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
from kubesched.autoscale.scaledown import ScaleDownMixin
from kubesched.state.snapshot import Snapshot

BACKOFF_INITIAL = 300.0  # CA's node group backoff after a failed scale-up: 5 min, doubling ...
BACKOFF_MAX = 1800.0  # ... up to 30 min
BACKOFF_RESET = 3 * 3600.0  # a group's backoff history is forgotten 3 h after its last failure
REGISTERED_WINDOW = 10.0  # pending pods are tried on nodes this recently registered (or 2 scans)


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


class ClusterAutoscaler(ScaleDownMixin):
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
        self.health = ClusterState(config.ok_total_unready_count, config.max_total_unready_percentage, config.max_node_startup_time)
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

    def account_nodes(self, view: ClusterView, now: float) -> None:
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

    def measure(self, snap: Snapshot, now: float) -> None:
        """Readiness and health of the cluster and its groups now (clusterstate's UpdateNodes)."""
        self.health.update(snap, self.group_of, list(self.groups), {n: up.group for n, up in self.upcoming.items()}, now)

    # ---- the loop ------------------------------------------------------------------------
    def run_once(self, view: ClusterView) -> None:
        now = view.now()
        self.account_nodes(view, now)
        self.hinted = {}
        self.measure(view.snapshot, now)
        if not self.health.cluster_healthy():  # CA's RunOnce stops here: "Cluster is not ready for autoscaling"
            self.unneeded_since.clear()
            self.empty_since.clear()
            if self.record is not None:
                self.record.cluster_unhealthy = True
            return
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
    def safe_to_scale_up(self, group: str, now: float) -> bool:
        """IsNodeGroupSafeToScaleUp: healthy and not backing off."""
        return self.groups[group].backoff_until <= now and self.health.group_healthy(group)

    def pending(self, view: ClusterView, now: float) -> list[Pod]:
        cut = self.cfg.expendable_pods_priority_cutoff
        delay = self.cfg.new_pod_scale_up_delay
        return [p for p in view.unschedulable() if p.priority >= cut and now - view.created(p) >= delay]

    def checker(self, view: ClusterView) -> PredicateChecker:
        return PredicateChecker(view.framework_for)

    def scratch_factory(self, view: ClusterView, pods: list[Pod]) -> Callable[[], Snapshot]:
        snap = view.snapshot
        if any(reads_other_nodes(p) for p in pods):
            return snap.copy
        return lambda: snap.copy(nodes=(), pods=False)

    def fit_upcoming(self, view: ClusterView, pods: list[Pod], checker: PredicateChecker) -> list[Pod]:
        """The pods that no upcoming node will hold (CA leaves the others waiting for them).
        Nodes that registered lately count too: the scheduler may not have tried the pods on
        them yet. A node of a group registered but not started (NotStarted) is upcoming as a copy
        of its group's template, as CA's GetUpcomingNodes counts it."""
        live = view.snapshot
        starting = [(n, g) for n in self.health.starting(live) if n in live.row_of and (g := self.group_of(live.nodes[live.row_of[n]]))]
        if not (self.upcoming or self.registered or starting) or not pods:
            return pods
        snap = self.scratch_factory(view, pods)()
        rows_l = [snap.add_node(up.node) for up in self.upcoming.values()]
        rows_l += [snap.add_node(node_named(self.cfg.group(g).template, f"upcoming-{n}", {GROUP_LABEL: g})) for n, g in starting]
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
            if room <= 0 or not self.safe_to_scale_up(g.name, now):
                continue
            n = room if g.zero_or_max_node_scaling else 1  # an atomic group must fit whole
            if g.zero_or_max_node_scaling and max_total and total + n > max_total:
                continue
            if exceeded(left, {r: n * v for r, v in self.delta(g.template).items()}):
                continue
            ok = [eg for eg in groups if eg.exemplar is not None and self._fits_empty(checker, eg.exemplar, g, view)]
            if ok:
                self._schedulable[g.name] = ok
        estimator = BinpackingEstimator(checker, self.scratch_factory(view, pods))
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
            if size >= g.min_size or not self.safe_to_scale_up(g.name, now):
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

"""Replica apportionment: Duplicated, static weights, dynamic weights, Aggregated (Karmada's
``core/assignment.go``, ``division_algorithm.go`` and ``util/helper`` Dispenser with the Webster
(Sainte-Laguë) method).

Dynamic strategies are steady: a scale-up adds the new replicas by available replicas and keeps
the previous result; a scale-down shrinks the previous result in proportion. Ties in the Webster
method are broken by a party's seats, then by name, ascending or descending by the FNV-32a hash of
the workload's UID, exactly as Karmada does, so results are stable and reproducible.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass, field

from kubesched.multicluster.api import (
    AGGREGATED,
    DIVIDED,
    DUPLICATED,
    WEIGHTED,
    Binding,
    ClusterPreferences,
    StaticClusterWeight,
    TargetCluster,
)
from kubesched.multicluster.framework import SchedulerError, UnschedulableError
from kubesched.multicluster.gosort import go_sort
from kubesched.multicluster.selectors import cluster_matches
from kubesched.multicluster.spread import ClusterDetailInfo

DUPLICATED_STRATEGY = "Duplicated"
AGGREGATED_STRATEGY = "Aggregated"
STATIC_WEIGHT_STRATEGY = "StaticWeight"
DYNAMIC_WEIGHT_STRATEGY = "DynamicWeight"


# ---- Webster (Sainte-Laguë) --------------------------------------------------------------------
@dataclass
class Party:
    name: str
    votes: int
    seats: int


def fnv32a(data: bytes) -> int:
    h = 0x811C9DC5
    for b in data:
        h = ((h ^ b) * 0x01000193) & 0xFFFFFFFF
    return h


def tie_breaker_by_uid(uid: str):  # noqa: ANN201 - a comparison function
    """Fewer seats win a tie; then names ascending, or descending when the UID's FNV-32a is odd."""
    descending = bool(uid) and fnv32a(uid.encode()) & 1 == 1

    def less(a: Party, b: Party) -> bool:
        if a.seats != b.seats:
            return a.seats < b.seats
        return a.name > b.name if descending else a.name < b.name

    return less


class _Entry:
    """A heap entry ordered as WebsterPriorityQueue.Less (the highest priority pops first)."""

    __slots__ = ("party", "tie")

    def __init__(self, party: Party, tie) -> None:  # noqa: ANN001
        self.party = party
        self.tie = tie

    def __lt__(self, other: _Entry) -> bool:
        a, b = self.party, other.party
        pa = float(a.votes) / float(2 * a.seats + 1)
        pb = float(b.votes) / float(2 * b.seats + 1)
        if pa == pb:
            if self.tie is not None:
                return self.tie(a, b)
            if a.seats != b.seats:
                return a.seats < b.seats
            return a.name < b.name
        return pa > pb


def allocate_webster_seats(new_seats: int, votes: dict[str, int], initial: dict[str, int], tie=None) -> list[Party]:  # noqa: ANN001
    """AllocateWebsterSeats: hand out ``new_seats`` one by one; parties sorted by name."""
    parties: dict[str, Party] = {n: Party(n, 0, s) for n, s in initial.items()}
    for n, v in votes.items():
        if n in parties:
            parties[n].votes = v
        else:
            parties[n] = Party(n, v, 0)
    if not parties:
        return []
    heap = [_Entry(p, tie) for p in parties.values()]
    heapq.heapify(heap)
    for _ in range(new_seats):
        e = heapq.heappop(heap)
        e.party.seats += 1
        heapq.heappush(heap, e)
    return sorted(parties.values(), key=lambda p: p.name)


@dataclass
class ClusterWeightInfo:
    cluster_name: str
    weight: int
    last_replicas: int = 0


@dataclass
class Dispenser:
    """Divides ``num_replicas`` among clusters by weight, on top of an initial result."""

    num_replicas: int
    result: list[TargetCluster] = field(default_factory=list)
    uid: str = ""

    @property
    def done(self) -> bool:
        return self.num_replicas == 0 and len(self.result) != 0

    def allocate_by_weight(self, weights: list[ClusterWeightInfo]) -> None:
        if self.done:
            return
        if sum(w.weight for w in weights) == 0:
            return
        initial = {t.name: t.replicas for t in self.result}
        votes = {w.cluster_name: w.weight for w in weights}
        parties = allocate_webster_seats(self.num_replicas, votes, initial, tie_breaker_by_uid(self.uid))
        self.result = [TargetCluster(p.name, p.seats) for p in parties]
        self.num_replicas = 0


def spread_replicas_by_target_clusters(
    num: int, tcs: list[TargetCluster], init: list[TargetCluster], uid: str
) -> list[TargetCluster]:
    """SpreadReplicasByTargetClusters: ``tcs`` replicas are the weights."""
    last = {t.name: t.replicas for t in init}
    weights = [ClusterWeightInfo(t.name, t.replicas, last.get(t.name, 0)) for t in tcs]
    d = Dispenser(num, list(init), uid)
    d.allocate_by_weight(weights)
    return d.result


def merge_target_clusters(old: list[TargetCluster], new: list[TargetCluster]) -> list[TargetCluster]:
    """util.MergeTargetClusters: replicas summed per cluster, old order first."""
    if not old:
        return new
    if not new:
        return old
    total = {t.name: t.replicas for t in old}
    order = [t.name for t in old]
    for t in new:
        if t.name not in total:
            order.append(t.name)
            total[t.name] = 0
        total[t.name] += t.replicas
    return [TargetCluster(n, total[n]) for n in order]


# ---- the assignment state ----------------------------------------------------------------------
@dataclass
class AssignState:
    candidates: list[ClusterDetailInfo]
    binding: Binding
    strategy_type: str = ""
    fresh: bool = False  # a rescheduling the user triggered: ignore the previous result
    scheduled_clusters: list[TargetCluster] = field(default_factory=list)
    assigned_replicas: int = 0
    available_clusters: list[TargetCluster] = field(default_factory=list)
    available_replicas: int = 0
    target_replicas: int = 0
    weight_preference: ClusterPreferences | None = None

    @classmethod
    def new(cls, candidates: list[ClusterDetailInfo], binding: Binding) -> AssignState:
        strategy = ""
        pl = binding.placement
        rs = pl.replica_scheduling
        if pl.replica_scheduling_type() == DUPLICATED:
            strategy = DUPLICATED_STRATEGY
        elif pl.replica_scheduling_type() == DIVIDED and rs is not None:
            if rs.replica_division_preference == AGGREGATED:
                strategy = AGGREGATED_STRATEGY
            elif rs.replica_division_preference == WEIGHTED:
                wp = rs.weight_preference
                strategy = DYNAMIC_WEIGHT_STRATEGY if wp is not None and wp.dynamic_weight else STATIC_WEIGHT_STRATEGY
        return cls(candidates, binding, strategy, weight_preference=rs.weight_preference if rs else None)

    def build_scheduled_clusters(self) -> None:
        names = {c.name for c in self.candidates}
        self.scheduled_clusters = [t for t in self.binding.clusters if t.name in names]
        self.assigned_replicas = sum(t.replicas for t in self.scheduled_clusters)

    def set_available_clusters(self, clusters: list[TargetCluster]) -> None:
        self.available_clusters = clusters
        self.available_replicas = sum(t.replicas for t in clusters)

    def resort_available_clusters(self) -> list[TargetCluster]:
        """Clusters already holding replicas first, so a scale-up adds to them first."""
        prior = {t.name for t in self.scheduled_clusters if t.replicas > 0}
        if not prior:
            return self.available_clusters
        prev = [t for t in self.available_clusters if t.name in prior]
        left = [t for t in self.available_clusters if t.name not in prior]
        self.available_clusters = prev + left
        return self.available_clusters


def _by_replicas_desc(a: TargetCluster, b: TargetCluster) -> bool:
    return a.replicas > b.replicas  # TargetClustersList.Less


def sorted_by_replicas(clusters: list[TargetCluster]) -> list[TargetCluster]:
    out = list(clusters)
    go_sort(out, _by_replicas_desc)
    return out


# ---- strategies --------------------------------------------------------------------------------
def assign_by_duplicated_strategy(state: AssignState) -> list[TargetCluster]:
    return [TargetCluster(c.name, state.binding.replicas) for c in state.candidates]


def default_weight_preference(candidates: list[ClusterDetailInfo]) -> ClusterPreferences:
    from kubesched.multicluster.api import ClusterAffinity

    return ClusterPreferences(tuple(StaticClusterWeight(ClusterAffinity(cluster_names=(c.name,)), 1) for c in candidates))


def static_weight_info_list(
    candidates: list[ClusterDetailInfo], weights: tuple[StaticClusterWeight, ...], last: tuple[TargetCluster, ...]
) -> list[ClusterWeightInfo]:
    out = []
    for c in candidates:
        weight = 0
        for rule in weights:
            if cluster_matches(c.cluster, rule.target_cluster):
                weight = max(weight, rule.weight)
        last_replicas = next((t.replicas for t in last if t.name == c.name), 0)
        if weight > 0:
            out.append(ClusterWeightInfo(c.name, weight, last_replicas))
    if sum(w.weight for w in out) == 0:
        out += [ClusterWeightInfo(c.name, 1) for c in candidates]
    return out


def assign_by_static_weight_strategy(state: AssignState) -> list[TargetCluster]:
    wp = state.weight_preference or default_weight_preference(state.candidates)
    weights = static_weight_info_list(state.candidates, wp.static_weight_list, state.binding.clusters)
    d = Dispenser(state.binding.replicas, [], state.binding.uid)
    d.allocate_by_weight(weights)
    return d.result


def assign_by_dynamic_strategy(state: AssignState) -> list[TargetCluster]:
    state.build_scheduled_clusters()
    try:
        if state.fresh:
            return dynamic_fresh_scale(state)
        if state.assigned_replicas > state.binding.replicas:
            return dynamic_scale_down(state)
        if state.assigned_replicas < state.binding.replicas:
            return dynamic_scale_up(state)
    except UnschedulableError as e:
        direction = "fresh scale" if state.fresh else ("scale down" if state.assigned_replicas > state.binding.replicas else "scale up")
        raise UnschedulableError(f"failed to {'do ' if state.fresh else ''}{direction}: {e}") from None
    return state.scheduled_clusters


def dynamic_divide_replicas(state: AssignState) -> list[TargetCluster]:
    if state.available_replicas < state.target_replicas:
        raise UnschedulableError(f"Clusters available replicas {state.available_replicas} are not enough to schedule.")
    if state.strategy_type == AGGREGATED_STRATEGY:
        state.available_clusters = state.resort_available_clusters()
        total = 0
        for i, t in enumerate(state.available_clusters):
            total += t.replicas
            if total >= state.target_replicas:
                state.available_clusters = state.available_clusters[: i + 1]
                break
    elif state.strategy_type != DYNAMIC_WEIGHT_STRATEGY:
        raise SchedulerError(f"undefined strategy type: {state.strategy_type}")
    spread = spread_replicas_by_target_clusters(state.target_replicas, state.available_clusters, [], state.binding.uid)
    return merge_target_clusters(state.scheduled_clusters, spread)


def dynamic_scale_down(state: AssignState) -> list[TargetCluster]:
    state.target_replicas = state.binding.replicas
    state.set_available_clusters(sorted_by_replicas(state.scheduled_clusters))
    state.scheduled_clusters = []
    return dynamic_divide_replicas(state)


def dynamic_scale_up(state: AssignState) -> list[TargetCluster]:
    state.target_replicas = state.binding.replicas - state.assigned_replicas
    state.set_available_clusters(sorted_by_replicas([TargetCluster(c.name, c.allocatable_replicas) for c in state.candidates]))
    return dynamic_divide_replicas(state)


def dynamic_fresh_scale(state: AssignState) -> list[TargetCluster]:
    state.target_replicas = state.binding.replicas
    avail = {c.name: c.allocatable_replicas for c in state.candidates}
    for t in state.scheduled_clusters:
        if t.name in avail:
            avail[t.name] += t.replicas
    state.set_available_clusters(sorted_by_replicas([TargetCluster(c.name, avail[c.name]) for c in state.candidates]))
    state.scheduled_clusters = []
    return dynamic_divide_replicas(state)


ASSIGN_FUNCS = {
    DUPLICATED_STRATEGY: assign_by_duplicated_strategy,
    AGGREGATED_STRATEGY: assign_by_dynamic_strategy,
    STATIC_WEIGHT_STRATEGY: assign_by_static_weight_strategy,
    DYNAMIC_WEIGHT_STRATEGY: assign_by_dynamic_strategy,
}


# ---- AssignReplicas ----------------------------------------------------------------------------
def assign_replicas(clusters: list[ClusterDetailInfo], binding: Binding, fresh: bool = False) -> list[TargetCluster]:
    """AssignReplicas: workloads get replicas per strategy; anything else goes to every cluster."""
    if not clusters:
        raise SchedulerError("no clusters available to schedule")
    if binding.replicas > 0 or binding.requirements:
        return _assign_workload_replicas(clusters, binding, fresh)
    return [TargetCluster(c.name, 0) for c in clusters]


def enable_overflow(binding: Binding) -> bool:
    pl = binding.placement
    if pl.cluster_affinity is not None or pl.cluster_affinities is None or not binding.observed_affinity_name:
        return False
    return any(t.affinity_name == binding.observed_affinity_name and t.overflow is not None for t in pl.cluster_affinities)


def _assign_workload_replicas(clusters: list[ClusterDetailInfo], binding: Binding, fresh: bool) -> list[TargetCluster]:
    if not enable_overflow(binding):
        return assign_replicas_to_clusters(clusters, binding, fresh)
    tiers: dict[int, list[ClusterDetailInfo]] = {}
    tier_available: dict[int, int] = {}
    for c in clusters:
        tiers.setdefault(c.overflow_order, []).append(c)
        tier_available[c.overflow_order] = tier_available.get(c.overflow_order, 0) + c.available_replicas
    results: list[TargetCluster] = []
    remaining = binding.replicas
    from dataclasses import replace

    for order in range(max(tiers) + 1):
        if not tiers.get(order):
            continue
        part = min(remaining, tier_available[order])
        results += assign_replicas_to_clusters(tiers[order], replace(binding, replicas=part), fresh)
        remaining -= part
        if remaining <= 0:
            break
    if remaining > 0:
        raise UnschedulableError("Clusters available replicas are not enough to schedule.")
    return results


def assign_replicas_to_clusters(clusters: list[ClusterDetailInfo], binding: Binding, fresh: bool = False) -> list[TargetCluster]:
    state = AssignState.new(clusters, binding)
    state.fresh = fresh
    fn = ASSIGN_FUNCS.get(state.strategy_type)
    if fn is None:
        rs = binding.placement.replica_scheduling
        raise SchedulerError(
            f"unsupported replica scheduling strategy, replicaSchedulingType: {binding.placement.replica_scheduling_type()}, "
            f"replicaDivisionPreference: {rs.replica_division_preference if rs else ''}, please try another scheduling strategy"
        )
    return [t for t in fn(state) if t.replicas > 0]


def attach_zero_replicas_cluster(clusters: list[ClusterDetailInfo], targets: list[TargetCluster]) -> list[TargetCluster]:
    """attachZeroReplicasCluster (--enable-empty-workload-propagation): every selected cluster
    appears in the result, with 0 replicas when it got none."""
    names = {t.name for t in targets}
    return list(targets) + [TargetCluster(c.name, 0) for c in clusters if c.name not in names]

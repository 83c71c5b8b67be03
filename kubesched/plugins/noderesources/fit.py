"""NodeResourcesFit: does the node have room for the pod's requests, and how full would it be.

Filter follows upstream ``fitsRequest``: the pod count, then cpu, memory, ephemeral-storage and
every scalar resource (extended, hugepages, kubernetes.io/-prefixed) the pod requests; all
shortfalls are reported together as ``Insufficient <name>``. A shortfall the node could not
cover even when empty (request > allocatable) makes the node UnschedulableAndUnresolvable, so
preemption does not try it. Score applies the configured scoring strategy.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from kubesched.api.resources import CPU, EPHEMERAL_STORAGE, MEMORY, PODS
from kubesched.config.args import plugin_args
from kubesched.framework.interfaces import (
    FilterPlugin,
    PreFilterPlugin,
    PreScorePlugin,
    RowLocal,
    ScorePlugin,
)
from kubesched.framework.status import Code, FilterResult, PreFilterResult, Status
from kubesched.plugins.noderesources import (
    is_extended_resource_name,
    is_scalar_resource_name,
)
from kubesched.plugins.noderesources.strategies import (
    ResourceSpec,
    Scorer,
    allocation_matrices,
    least_allocated_scorer,
    most_allocated_scorer,
    pod_request_list,
    requested_to_capacity_ratio_scorer,
    resource_specs,
    shape_points,
)
from kubesched.state.memo import NODES

if TYPE_CHECKING:
    from kubesched.api.objects import Pod
    from kubesched.framework.cycle_state import CycleState
    from kubesched.framework.handle import Handle
    from kubesched.state.snapshot import Snapshot

NAME = "NodeResourcesFit"
PRE_FILTER_STATE_KEY = "PreFilter" + NAME
PRE_SCORE_STATE_KEY = "PreScore" + NAME

LEAST_ALLOCATED = "LeastAllocated"
MOST_ALLOCATED = "MostAllocated"
REQUESTED_TO_CAPACITY_RATIO = "RequestedToCapacityRatio"
SCORING_STRATEGIES = (LEAST_ALLOCATED, MOST_ALLOCATED, REQUESTED_TO_CAPACITY_RATIO)

REASON_TOO_MANY_PODS = "Too many pods"


_POW2 = np.int64(1) << np.arange(63, dtype=np.int64)  # reason bit k
_COLUMNS = "NodeResourcesFit/columns"  # memo key: checked resources -> their snapshot columns


def insufficient(resource: str) -> str:
    """The reason string for a resource the node lacks."""
    return f"Insufficient {resource}"


@dataclass(frozen=True, slots=True)
class FitArgs:
    """NodeResourcesFitArgs after v1 defaulting and validation."""

    ignored_resources: frozenset[str]
    ignored_resource_groups: frozenset[str]
    strategy: str
    resources: tuple[ResourceSpec, ...]
    shape: tuple[tuple[int, int], ...] | None

    @classmethod
    def parse(cls, args: dict[str, Any] | None) -> FitArgs:
        """The args decoded, defaulted and validated as a configuration's are (``plugin_args``)."""
        a = plugin_args(NAME, args)
        strategy = a["scoringStrategy"]
        shape = None
        if strategy["type"] == REQUESTED_TO_CAPACITY_RATIO:
            shape = shape_points(strategy["requestedToCapacityRatio"]["shape"])
        return cls(
            frozenset(a["ignoredResources"]),
            frozenset(a["ignoredResourceGroups"]),
            strategy["type"],
            resource_specs(strategy["resources"]),
            shape,
        )

    def scorer(self) -> Scorer:
        if self.strategy == MOST_ALLOCATED:
            return most_allocated_scorer(self.resources)
        if self.strategy == REQUESTED_TO_CAPACITY_RATIO:
            assert self.shape is not None
            return requested_to_capacity_ratio_scorer(self.resources, self.shape)
        return least_allocated_scorer(self.resources)


@dataclass(frozen=True, slots=True)
class _PreFilterState:
    """The pod's effective requests, in the names fitsRequest checks."""

    requests: tuple[tuple[str, int], ...]  # cpu, memory, ephemeral-storage, then scalars by name
    scalar_count: int

    def clone(self) -> _PreFilterState:
        return self

    @property
    def empty(self) -> bool:
        return self.scalar_count == 0 and all(q == 0 for _, q in self.requests[:3])


@dataclass(frozen=True, slots=True)
class _PreScoreState:
    pod_requests: np.ndarray

    def clone(self) -> _PreScoreState:
        return self


def compute_pod_resource_request(pod: Pod) -> _PreFilterState:
    """computePodResourceRequest: what Resource.SetMaxResource keeps of the pod's requests."""
    reqs = pod.requests
    scalars = sorted(name for name in reqs if is_scalar_resource_name(name))
    items = [
        (CPU, reqs.get(CPU, 0)),
        (MEMORY, reqs.get(MEMORY, 0)),
        (EPHEMERAL_STORAGE, reqs.get(EPHEMERAL_STORAGE, 0)),
    ]
    items += [(name, reqs[name]) for name in scalars]
    return _PreFilterState(tuple(items), len(scalars))


class NodeResourcesFit(PreFilterPlugin, FilterPlugin, PreScorePlugin, ScorePlugin, RowLocal):
    """Filter on requests vs free allocatable; score with LeastAllocated / MostAllocated / RTCR."""

    name = NAME
    events_to_register = frozenset({"NodeAdd", "NodeUpdate", "AssignedPodUpdate", "AssignedPodDelete"})

    def __init__(self, args: dict[str, Any] | None = None, handle: Handle | None = None) -> None:
        super().__init__(args, handle)
        self.fit_args = FitArgs.parse(self.args)
        self._scorer = self.fit_args.scorer()
        self._checked_cache: dict[int, tuple[_PreFilterState, tuple[tuple[str, ...], np.ndarray]]] = {}

    # ---- PreFilter / Filter -------------------------------------------------------------------
    def pre_filter(self, state: CycleState, pod: Pod, snap: Snapshot) -> PreFilterResult | Status | None:
        """SidecarContainers is GA (locked on) in 1.36, so restartable init containers are fine."""
        state.write(PRE_FILTER_STATE_KEY, compute_pod_resource_request(pod))
        return None

    def add_pod(self, state: CycleState, pod: Pod, added: Pod, row: int, snap: Snapshot) -> None:
        """No PreFilterExtensions upstream: the state depends on the pod alone."""

    def remove_pod(self, state: CycleState, pod: Pod, removed: Pod, row: int, snap: Snapshot) -> None:
        """No PreFilterExtensions upstream: the state depends on the pod alone."""

    def _ignored(self, name: str) -> bool:
        """ignoredResources / ignoredResourceGroups cover extended resources only."""
        if not is_extended_resource_name(name):
            return False
        args = self.fit_args
        return name in args.ignored_resources or name.split("/", 1)[0] in args.ignored_resource_groups

    def filter(self, state: CycleState, pod: Pod, snap: Snapshot, rows: np.ndarray) -> FilterResult:
        """fitsRequest over rows; every shortfall is a reason, any unresolvable one decides the code."""
        s = state.read(PRE_FILTER_STATE_KEY)
        n = len(rows)
        if not isinstance(s, _PreFilterState):
            msg = f'error reading "{PRE_FILTER_STATE_KEY}" from cycleState: not found'
            return FilterResult(np.full(n, np.int8(Code.Error)), np.ones(n, np.int64), (msg,))
        names, qty, alloc, free = self._room(s, snap, rows)
        fail = free < qty  # (rows, checks); column 0 is the pod slot
        failing = np.flatnonzero(fail.any(axis=0))
        if failing.size == 0:
            return FilterResult(np.zeros(n, np.int8), np.zeros(n, np.int64))
        fail = fail[:, failing]
        # one reason per failing check, in check order (the pod slot first), as fitsRequest lists them
        reasons = tuple(REASON_TOO_MANY_PODS if j == 0 else insufficient(names[j]) for j in failing.tolist())
        bits = (fail * _POW2[: failing.size]).sum(axis=1)
        code = fail.any(axis=1).view(np.int8) * np.int8(Code.Unschedulable)
        # more than the node's whole allocatable: no eviction can help (the pod slot never is)
        over = alloc[:, 1:] < qty[1:]
        if over.any():
            code = np.maximum(code, over.any(axis=1).view(np.int8) * np.int8(Code.UnschedulableAndUnresolvable))
        return FilterResult(code, bits, reasons)

    def passes(self, state: CycleState, pod: Pod, snap: Snapshot, rows: np.ndarray) -> np.ndarray | None:
        """``filter``'s verdict alone: room for one more pod and for every checked request."""
        s = state.read(PRE_FILTER_STATE_KEY)
        if not isinstance(s, _PreFilterState):
            return None  # filter reports the error
        _, qty, _, free = self._room(s, snap, rows, with_alloc=False)
        # the ufunc's reduction: ndarray.all goes through a Python wrapper (the equivalence cache
        # re-judges changed rows with this every cycle)
        return np.logical_and.reduce(free >= qty, axis=1)

    def _room(
        self, s: _PreFilterState, snap: Snapshot, rows: np.ndarray, with_alloc: bool = True
    ) -> tuple[tuple[str, ...], np.ndarray, np.ndarray, np.ndarray]:
        """(checked resources, amounts, allocatable, free) over ``rows`` x checks; a resource no
        node has reads as zero allocatable and zero free. ``with_alloc`` False: ``free`` twice."""
        names, qty = self._checked(s)
        ri = snap.res_index

        def columns() -> tuple[np.ndarray, bool]:
            cols = np.asarray([ri.get(name, -1) for name in names], np.intp)
            return cols, bool((cols < 0).any())

        # columns are only ever appended: their count keys the lookup
        cols, missing = snap.memo.get((_COLUMNS, names, len(ri)), columns, on=NODES)
        # take() rows then columns: several times cheaper than a 2-D fancy index on a few rows
        r = np.asarray(rows, np.intp)
        row_alloc = snap.alloc.take(r, 0)
        free = (row_alloc - snap.requested.take(r, 0)).take(cols, 1)
        alloc = row_alloc.take(cols, 1) if with_alloc else free
        if missing:
            absent = cols < 0
            alloc[:, absent] = 0
            free[:, absent] = 0
        return names, qty, alloc, free

    def _checked(self, s: _PreFilterState) -> tuple[tuple[str, ...], np.ndarray]:
        """(resources, minimum free amount) ``filter`` checks: one pod slot, then every request
        it does not ignore."""
        # By identity: the equivalence cache passes each entry's own state object again and
        # again, and hashing the requests tuple on every call cost more than the lookup saves.
        hit = self._checked_cache.get(id(s))
        if hit is not None and hit[0] is s:
            return hit[1]
        items = [(PODS, 1)] + [
            (name, q) for name, q in (s.requests if not s.empty else ()) if q > 0 and not self._ignored(name)
        ]
        out = (tuple(n for n, _ in items), np.asarray([q for _, q in items], np.int64))
        if len(self._checked_cache) > 4096:
            self._checked_cache.clear()
        self._checked_cache[id(s)] = (s, out)  # holds s: its id is not reused while cached
        return out

    # ---- PreScore / Score ---------------------------------------------------------------------
    def _pod_requests(self, pod: Pod) -> np.ndarray:
        return pod_request_list(pod, self.fit_args.resources, non_zero=True)

    def pre_score(self, state: CycleState, pod: Pod, snap: Snapshot, rows: np.ndarray) -> Status | None:
        """Upstream never skips here: a pod without requests still scores by its non-zero defaults."""
        state.write(PRE_SCORE_STATE_KEY, _PreScoreState(self._pod_requests(pod)))
        return None

    def score(self, state: CycleState, pod: Pod, snap: Snapshot, rows: np.ndarray) -> np.ndarray:
        s = state.read(PRE_SCORE_STATE_KEY)
        pod_reqs = s.pod_requests if isinstance(s, _PreScoreState) else self._pod_requests(pod)
        requested, allocated, allocatable = allocation_matrices(
            snap, rows, self.fit_args.resources, pod_reqs, non_zero=True
        )
        return self._scorer(requested, allocated, allocatable)

"""Resource allocation scoring shared by NodeResourcesFit and NodeResourcesBalancedAllocation.

Mirrors upstream ``resource_allocation.go`` plus the scorers in ``least_allocated.go``,
``most_allocated.go``, ``requested_to_capacity_ratio.go`` and ``balanced_allocation.go``,
vectorised over node rows: every scorer takes ``(requested, allocated, allocatable)`` int64
matrices of shape ``(len(resources), len(rows))``, where ``allocatable == 0`` marks a resource
left out of that row's score, and returns one int64 score per row with Go's arithmetic.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from kubesched.api.resources import (
    CPU,
    DEFAULT_MEMORY_REQUEST,
    DEFAULT_MILLI_CPU_REQUEST,
    EPHEMERAL_STORAGE,
    MEMORY,
    parse_resource_list,
    pod_requests,
)
from kubesched.config import defaults as config_defaults
from kubesched.framework.interfaces import MAX_NODE_SCORE, go_div
from kubesched.plugins.noderesources import is_scalar_resource_name

if TYPE_CHECKING:
    from kubesched.api.objects import Pod
    from kubesched.state.snapshot import Snapshot

MAX_UTILIZATION = 100

Scorer = Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray]


@dataclass(frozen=True, slots=True)
class ResourceSpec:
    """config.ResourceSpec: a resource to score and its weight."""

    name: str
    weight: int


DEFAULT_RESOURCES: tuple[ResourceSpec, ...] = tuple(ResourceSpec(n, w) for n, w in config_defaults.DEFAULT_RESOURCES)
MAX_CUSTOM_PRIORITY_SCORE = config_defaults.MAX_CUSTOM_PRIORITY_SCORE  # shape scores 0..10, scaled x10


# ---- args ------------------------------------------------------------------------------------


def resource_specs(items: list[dict[str, Any]]) -> tuple[ResourceSpec, ...]:
    """``resources`` of defaulted args (``kubesched.config.args.plugin_args``) as ResourceSpecs."""
    return tuple(ResourceSpec(item["name"], int(item["weight"])) for item in items) or DEFAULT_RESOURCES


def shape_points(items: list[dict[str, Any]]) -> tuple[tuple[int, int], ...]:
    """``requestedToCapacityRatio.shape`` of validated args, scores scaled from 0..10 to 0..100."""
    scale = MAX_NODE_SCORE // MAX_CUSTOM_PRIORITY_SCORE
    return tuple((int(p["utilization"]), int(p["score"]) * scale) for p in items)


# ---- pod and node quantities -------------------------------------------------------------------


def _scoring_cpu_memory(pod: Pod) -> tuple[int, int]:
    """Incoming pod's (milli-CPU, memory) with the 100m / 200Mi defaults for scoring.

    resourceAllocationScorer always fills both defaults into containers that lack them and then
    applies pod-level requests; Pod.non_zero_* follow NodeInfo, which skips the defaults for a
    resource the pod sets at pod level. They differ only for pods with pod-level resources.
    """
    spec = pod.raw.get("spec") or {}
    res = spec.get("resources") or {}
    if not (res.get("requests") or res.get("limits")):
        return pod.non_zero_cpu, pod.non_zero_mem
    pod_level = parse_resource_list(res.get("requests"), "spec.resources.requests")
    for k, v in parse_resource_list(res.get("limits"), "spec.resources.limits").items():
        pod_level.setdefault(k, v)
    overhead = parse_resource_list(spec.get("overhead"), "spec.overhead")
    defaults = {CPU: DEFAULT_MILLI_CPU_REQUEST, MEMORY: DEFAULT_MEMORY_REQUEST}
    reqs = pod_requests(
        [{**defaults, **c.requests} for c in pod.containers],
        [({**defaults, **c.requests}, c.restartable) for c in pod.init_containers],
        overhead,
        pod_level,
    )
    return reqs.get(CPU, 0), reqs.get(MEMORY, 0)


def pod_request_list(pod: Pod, resources: Sequence[ResourceSpec], *, non_zero: bool) -> np.ndarray:
    """calculatePodResourceRequestList: the pod's request per scored resource.

    ``non_zero`` (NodeResourcesFit) counts containers without cpu/memory requests as 100m/200Mi;
    BalancedAllocation (``useRequested``) uses the real requests.
    """
    if non_zero:
        cpu, mem = _scoring_cpu_memory(pod)
    else:
        cpu, mem = pod.requests.get(CPU, 0), pod.requests.get(MEMORY, 0)
    by_name = {CPU: cpu, MEMORY: mem}
    return np.asarray([by_name.get(r.name, pod.requests.get(r.name, 0)) for r in resources], np.int64)


def allocation_matrices(
    snap: Snapshot,
    rows: np.ndarray,
    resources: Sequence[ResourceSpec],
    pod_requests_list: np.ndarray,
    *,
    non_zero: bool,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(requested, allocated, allocatable) per scored resource and row.

    calculateResourceAllocatableRequest: cpu/memory use the non-zero requested sums when
    ``non_zero``, everything else the real sums; a scalar resource the pod does not request,
    a resource the node does not offer, or any other name is left out (allocatable 0).
    ``requested`` = ``allocated`` + the pod's request, i.e. the node with the pod on it.
    """
    rows = np.asarray(rows, dtype=np.intp)
    n, nres = len(rows), len(resources)
    allocatable = np.zeros((nres, n), np.int64)
    allocated = np.zeros((nres, n), np.int64)
    for i, spec in enumerate(resources):
        name = spec.name
        if name == CPU or name == MEMORY:
            col = snap.res_index[name]
            used = (
                snap.non_zero_requested[rows, 0 if name == CPU else 1]
                if non_zero
                else snap.requested[rows, col]
            )
        elif name == EPHEMERAL_STORAGE:
            col = snap.res_index[name]
            used = snap.requested[rows, col]
        elif is_scalar_resource_name(name) and pod_requests_list[i] != 0 and name in snap.res_index:
            col = snap.res_index[name]
            used = snap.requested[rows, col]
        else:
            continue
        alloc = snap.alloc[rows, col]
        keep = alloc != 0
        allocatable[i] = alloc
        allocated[i] = np.where(keep, used, 0)
    requested = allocated + np.where(allocatable != 0, pod_requests_list[:, None], 0)
    return requested, allocated, allocatable


# ---- scorers -------------------------------------------------------------------------------------


def _weighted_average(
    per_resource: Callable[[np.ndarray, np.ndarray], np.ndarray], resources: Sequence[ResourceSpec]
) -> Scorer:
    """Σ score_r × w_r / Σ w_r over the resources a row has (Go integer division; 0 when none)."""
    weights = [r.weight for r in resources]

    def scorer(requested: np.ndarray, allocated: np.ndarray, allocatable: np.ndarray) -> np.ndarray:
        node, wsum = _weighted_sums(per_resource, weights, requested, allocatable, positive_only=False)
        return np.where(wsum == 0, 0, node // np.where(wsum == 0, 1, wsum))  # both non-negative

    return scorer


def _weighted_sums(
    per_resource: Callable[[np.ndarray, np.ndarray], np.ndarray],
    weights: Sequence[int],
    requested: np.ndarray,
    allocatable: np.ndarray,
    *,
    positive_only: bool,
) -> tuple[np.ndarray, np.ndarray]:
    """Per row: Σ score_r × w_r and Σ w_r over the resources the row has (allocatable != 0; with
    ``positive_only``, and a score above 0). ``per_resource(requested, capacity)``: the scores."""
    n = requested.shape[1]
    node = np.zeros(n, np.int64)
    wsum = np.zeros(n, np.int64)
    for i, w in enumerate(weights):
        on = allocatable[i] != 0
        score = per_resource(requested[i], np.where(on, allocatable[i], 1))
        use = on & (score > 0) if positive_only else on
        node += np.where(use, score * w, 0)
        wsum += np.where(use, w, 0)
    return node, wsum


def _least_requested_score(requested: np.ndarray, capacity: np.ndarray) -> np.ndarray:
    """(capacity - requested) × 100 / capacity; 0 once requested exceeds capacity."""
    # where requested <= capacity both operands are non-negative, so floor division is Go's
    return np.where(requested > capacity, 0, (capacity - requested) * MAX_NODE_SCORE // capacity)


def _most_requested_score(requested: np.ndarray, capacity: np.ndarray) -> np.ndarray:
    """requested × 100 / capacity, requested capped at capacity (non-zero defaults may overshoot)."""
    return np.minimum(requested, capacity) * MAX_NODE_SCORE // capacity  # non-negative operands


def least_allocated_scorer(resources: Sequence[ResourceSpec]) -> Scorer:
    """LeastAllocated: favour nodes with the most room left."""
    return _weighted_average(_least_requested_score, resources)


def most_allocated_scorer(resources: Sequence[ResourceSpec]) -> Scorer:
    """MostAllocated: favour the fullest nodes (bin packing)."""
    return _weighted_average(_most_requested_score, resources)


def broken_linear(p: np.ndarray, shape: Sequence[tuple[int, int]]) -> np.ndarray:
    """helper.BuildBrokenLinearFunction: piecewise-linear in p through (utilization, score) points."""
    p = np.asarray(p, np.int64)
    out = np.full(p.shape, shape[-1][1], np.int64)
    done = np.zeros(p.shape, bool)
    for i, (u, s) in enumerate(shape):
        hit = ~done & (p <= u)
        if i == 0:
            val = np.full(p.shape, s, np.int64)
        else:
            u0, s0 = shape[i - 1]
            val = s0 + go_div((s - s0) * (p - u0), u - u0)
        out = np.where(hit, val, out)
        done |= hit
    return out


def go_round(x: np.ndarray) -> np.ndarray:
    """math.Round: half away from zero, exact (no x + 0.5 rounding error)."""
    t = np.trunc(x)
    return t + np.where(np.abs(x - t) >= 0.5, np.sign(x), 0.0)


def requested_to_capacity_ratio_scorer(
    resources: Sequence[ResourceSpec], shape: Sequence[tuple[int, int]]
) -> Scorer:
    """RequestedToCapacityRatio: shape(utilization) per resource, rounded weighted mean of scores > 0."""
    weights = [r.weight for r in resources]

    def shaped(requested: np.ndarray, cap: np.ndarray) -> np.ndarray:
        util = np.where(requested > cap, MAX_UTILIZATION, go_div(requested * MAX_UTILIZATION, cap))
        return broken_linear(util, shape)

    def scorer(requested: np.ndarray, allocated: np.ndarray, allocatable: np.ndarray) -> np.ndarray:
        node, wsum = _weighted_sums(shaped, weights, requested, allocatable, positive_only=True)
        ratio = node.astype(np.float64) / np.where(wsum == 0, 1, wsum).astype(np.float64)
        return np.where(wsum == 0, 0, go_round(ratio).astype(np.int64))

    return scorer


def balanced_resource_score(requested: np.ndarray, allocatable: np.ndarray) -> np.ndarray:
    """int64((1 - std) × 100) of the per-resource fractions (capped at 1), float ops in Go's order.

    Two fractions: std = |f1 - f2| / 2; more: population std; fewer: 0.
    """
    nres, n = requested.shape
    on = allocatable != 0
    if nres == 2:  # the default (cpu, memory): std = |f1 - f2| / 2 where both are offered
        both = on[0] & on[1]
        f0 = np.minimum(requested[0] / np.where(on[0], allocatable[0], 1), 1.0)
        f1 = np.minimum(requested[1] / np.where(on[1], allocatable[1], 1), 1.0)
        std = np.where(both, np.abs((f0 - f1) / 2), 0.0)
        return np.trunc((1 - std) * float(MAX_NODE_SCORE)).astype(np.int64)
    frac = np.zeros((nres, n), np.float64)
    for i in range(nres):
        f = requested[i].astype(np.float64) / np.where(on[i], allocatable[i], 1).astype(np.float64)
        frac[i] = np.where(on[i], np.minimum(f, 1.0), 0.0)
    count = on.sum(axis=0)
    total = np.zeros(n, np.float64)
    first = np.zeros(n, np.float64)
    second = np.zeros(n, np.float64)
    seen = np.zeros(n, np.int64)
    for i in range(nres):
        total = total + frac[i]  # adding 0.0 for skipped resources leaves the sum exact
        first = np.where(on[i] & (seen == 0), frac[i], first)
        second = np.where(on[i] & (seen == 1), frac[i], second)
        seen += on[i]
    mean = total / np.maximum(count, 1).astype(np.float64)
    sq = np.zeros(n, np.float64)
    for i in range(nres):
        d = frac[i] - mean
        sq = sq + np.where(on[i], d * d, 0.0)
    std_many = np.sqrt(sq / np.maximum(count, 1).astype(np.float64))
    std_two = np.abs((first - second) / 2)
    std = np.where(count == 2, std_two, np.where(count > 2, std_many, 0.0))
    return np.trunc((1 - std) * float(MAX_NODE_SCORE)).astype(np.int64)


def balanced_resource_scorer(
    requested: np.ndarray, allocated: np.ndarray, allocatable: np.ndarray
) -> np.ndarray:
    """v1.36 BalancedAllocation: rewards the change in balance the pod brings, in [50, 100].

    MaxNodeScore/2 + (MaxNodeScore/2 + balance with pod - balance without pod) / 2: 75 when the
    balance does not change, 100 from fully unbalanced to balanced, 50 the other way round.
    """
    with_pod = balanced_resource_score(requested, allocatable)
    without_pod = balanced_resource_score(allocated, allocatable)
    half = MAX_NODE_SCORE // 2
    return half + go_div(half + with_pod - without_pod, 2)

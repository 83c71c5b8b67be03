"""An offline bound: how much GPU the pods that arrived by a level could occupy at best.

Any placement of those pods, in any order and knowing them all in advance, allocates at most
``max_allocated_milli``, so no policy can leave less than ``min_unallocated_pct`` of the GPUs
unallocated at that level. The bound is the optimum of a relaxation, solved as a MILP with
HiGHS (``scipy.optimize.milp``), time-limited:

* pods are grouped by shape (CPU, memory, GPU milli, GPU count, allowed models) and nodes by type
  (CPU, memory, GPUs, model); y[s, t] = pods of shape s on nodes of type t, an integer;
* per shape, at most the pods that arrived; a shape only on types it may use (model, GPU count
  up to the node's);
* per node type, summed over its nodes: CPU, memory and GPU milli within the type's total, and
  for j = 1..4 at most j shares above 1000/(j+1) milli per GPU (j + 1 of them overfill it), a
  whole GPU counting as j;
* maximise the GPU milli placed.

Every real placement satisfies these constraints (they are sums of per-node ones), so the
optimum bounds the real best from above; how tight it is is not known (per-node packing of CPU
against GPUs, and of shares onto single GPUs beyond the 500-milli rule, is relaxed). When the
bound is always HiGHS's dual bound (it stops at a small relative gap, or at the time limit: then
the bound is still valid, reported with its gap to the best integer solution found and marked as
not optimal); never the value of a solution it found.
"""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import asdict, dataclass

import numpy as np

from kubesched.api.resources import CPU, MEMORY
from kubesched.experiment.protocol import Prepared, gpu_capacity_milli
from kubesched.gpu.model import MILLI, node_gpu_count, node_gpu_model, pod_gpu_ask

SLOTS = 4
FORMULATION = (
    "pods by shape on node types; per type: CPU, memory, GPU milli, at most j shares above 1000/(j+1) "
    "milli per GPU for j = 1..4 (a relaxation of per-node packing)"
)


@dataclass
class Bound:
    level: float
    pods: int  # pods arrived by the level
    requested_milli: int
    capacity_milli: int
    max_allocated_milli: float  # the relaxation's optimum, or HiGHS's dual bound at the time limit
    min_unallocated_pct: float  # 100 - max allocated %: no placement leaves less unallocated
    optimal: bool  # HiGHS closed the gap to its tolerance (False: the time limit stopped it)
    gap: float  # relative gap between the dual bound and the best integer solution found
    seconds: float
    shapes: int
    node_types: int
    formulation: str = FORMULATION

    def to_json(self) -> dict:
        return asdict(self)


def arrived_by(prep: Prepared, level: float) -> list:
    """The prefix of the arrival sequence whose GPU request stays within ``level`` % of capacity."""
    cap = gpu_capacity_milli(prep.nodes)
    total, out = 0, []
    for pod in prep.pods:
        ask = pod_gpu_ask(pod)
        total += ask.total_milli if ask else 0
        if total * 100 > level * cap:
            break
        out.append(pod)
    return out


def offline_bound(prep: Prepared, level: float = 100.0, time_limit: float = 60.0) -> Bound:
    from scipy.optimize import Bounds, LinearConstraint, milp
    from scipy.sparse import coo_matrix

    t0 = time.perf_counter()
    pods = arrived_by(prep, level)
    shapes: Counter = Counter()
    for p in pods:
        ask = pod_gpu_ask(p)
        key = (
            int(p.requests.get(CPU, 0)),
            int(p.requests.get(MEMORY, 0)),
            ask.milli if ask else 0,
            ask.count if ask else 0,
            ask.models if ask else (),
        )
        shapes[key] += 1
    types: Counter = Counter()
    for n in prep.nodes:
        types[(int(n.allocatable.get(CPU, 0)), int(n.allocatable.get(MEMORY, 0)), node_gpu_count(n), node_gpu_model(n))] += 1
    S, T = list(shapes), list(types)
    pairs = [
        (i, j)
        for i, (c, m, milli, cnt, models) in enumerate(S)
        for j, (tc, tm, g, model) in enumerate(T)
        if c <= tc and m <= tm and cnt <= g and (not models or model in models)
    ]
    nv = len(pairs)
    gain = np.array([S[i][2] * S[i][3] for i, _ in pairs], np.float64)
    # rows: one per shape (its count), then per node type: CPU, memory, GPU milli, and the
    # share-count rows j = 1..SLOTS
    ns, per = len(S), 3 + SLOTS
    rows, cols, vals = [], [], []
    for v, (si, tj) in enumerate(pairs):
        c, m, milli, cnt, _ = S[si]
        base = ns + per * tj
        entries = [(si, 1.0), (base, c), (base + 1, m)]
        if cnt:
            entries.append((base + 2, milli * cnt))
            for j in range(1, SLOTS + 1):
                if milli == MILLI:  # a whole GPU takes every slot of its GPUs
                    entries.append((base + 2 + j, j * cnt))
                elif milli * (j + 1) > MILLI:  # j + 1 such shares do not fit one GPU
                    entries.append((base + 2 + j, 1.0))
        for row, val in entries:
            rows.append(row)
            cols.append(v)
            vals.append(val)
    ub = [shapes[k] for k in S]
    for key in T:
        tc, tm, g, _ = key
        n = types[key]
        ub += [n * tc, n * tm, n * g * MILLI, *(n * g * j for j in range(1, SLOTS + 1))]
    a = coo_matrix((vals, (rows, cols)), shape=(ns + per * len(T), nv)).tocsr()
    res = milp(
        -gain,
        constraints=LinearConstraint(a, -np.inf, np.asarray(ub, np.float64)),
        integrality=np.ones(nv),
        bounds=Bounds(0, np.inf),
        options={"time_limit": time_limit, "disp": False},
    )
    cap = gpu_capacity_milli(prep.nodes)
    requested = sum(S[i][2] * S[i][3] * shapes[S[i]] for i in range(ns))
    optimal = res.status == 0
    # HiGHS stops at a relative gap (1e-4 by default) or at the time limit: the bound is its dual
    # bound, never the objective of the integer solution it found
    dual = getattr(res, "mip_dual_bound", None)
    best = float(-dual) if dual is not None and np.isfinite(dual) else float(requested)
    gap = float(getattr(res, "mip_gap", None) or 0.0) if res.x is not None else float("nan")
    best = min(best, float(requested), float(cap))
    return Bound(level, len(pods), requested, cap, best, 100.0 - 100.0 * best / cap, optimal, gap,
                 time.perf_counter() - t0, len(S), len(T))

"""A packing plan from the expected pod-shape mix: the configuration LP solved once, offline.

The shapes are the trace's pod shapes (milli-CPU, GPU milli, GPU count, model spec) with their
popularity in the original trace (FGD's typical pods with no popularity cut): the distribution the
pods are drawn from, never a seed's arrival sequence. Their expected counts at ``fill`` x the
cluster's GPU capacity, and the cluster's node types (CPU, GPUs, card model, how many), make a
configuration LP: how many nodes of each type should hold each *configuration* (a multiset of
shapes one node can hold at once: CPU within allocatable, whole-GPU pods on whole GPUs, shares
packed onto single GPUs), maximising the GPU milli placed. It is solved by column generation (HiGHS
through scipy): each round prices a best configuration per node type with a small MILP at the LP's
duals. The work is limited deterministically (``rounds``, and ``node_limit`` branch-and-bound
nodes per pricing MILP), so the same command writes the same file on any machine and under any
load; a wall-clock limit on the whole solve is only a safety net, and ``time_limited`` in the
file's meta says when it cut the work short. CPU-only shapes get a token gain (1 milli), so that the plan leaves room for them where
CPU is spare. Memory and pod counts are not in the typical pods and are left out.

The configurations the LP uses (``nodes`` > 0) are the plan ``PlanScore`` steers by
(``kubesched.plugins.lookahead.plan``). The plan is written as JSON (``write_plan``).
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from kubesched.api.objects import Node
from kubesched.gpu.frag import TypicalPods, typical_pods_of
from kubesched.gpu.model import MILLI, parse_models
from kubesched.kit.report import write_json
from kubesched.plugins.lookahead.planfile import FORMAT, VERSION, node_type_key

CPU_ONLY_GAIN = 1.0  # milli-GPU per CPU-only pod: they are planned where CPU is spare
FILL = 1.005  # expected GPU milli asked, x capacity: the metric's last event (100.5 % arrived)
SAFETY_SECONDS = 14_400.0  # wall clock for a whole solve: never reached within the other limits (default: 526 CPU s, 3,228 s wall at a load of 10)


@dataclass(frozen=True)
class NodeType:
    cpu: int
    gpus: int
    model: str
    nodes: int

    @property
    def key(self) -> tuple[int, int, str]:
        return (self.cpu, self.gpus, self.model)


def node_types(nodes: Sequence[Node]) -> list[NodeType]:
    counts = Counter(node_type_key(n) for n in nodes)
    return [NodeType(c, g, m, k) for (c, g, m), k in counts.items()]


def _admits(t: NodeType, shapes: TypicalPods, s: int) -> bool:
    allowed = parse_models(shapes.spec[s])
    return (int(shapes.cpu[s]) <= t.cpu and int(shapes.count[s]) <= t.gpus
            and (not allowed or t.model in allowed))


def _gain(shapes: TypicalPods) -> np.ndarray:
    g = (shapes.milli * shapes.count).astype(np.float64)
    return np.where(g > 0, g, CPU_ONLY_GAIN)


def _price(t: NodeType, shapes: TypicalPods, profit: np.ndarray, limit: np.ndarray,
           node_limit: int, seconds: float) -> np.ndarray | None:
    """The best configuration of one node of type ``t`` at these profits: a MILP with one
    variable per whole-GPU or CPU-only shape, one per (share shape, GPU) and one binary per GPU
    taken whole, within ``node_limit`` branch-and-bound nodes (``seconds`` of wall clock: the
    safety net). Returns the count of each shape, or None when nothing profitable fits."""
    from scipy.optimize import Bounds, LinearConstraint, milp

    idx = [s for s in range(len(shapes)) if profit[s] > 1e-9 and _admits(t, shapes, s)]
    if not idx:
        return None
    share = [s for s in idx if 0 < shapes.milli[s] < MILLI]
    other = [s for s in idx if not 0 < shapes.milli[s] < MILLI]
    g = t.gpus
    n_other, n_z = len(other), len(share) * g
    n = n_other + n_z + g  # x (other shapes), z (share shape, GPU), h (GPU taken whole)
    rows: list[np.ndarray] = []
    ub: list[float] = []
    cpu = np.zeros(n)
    cpu[:n_other] = shapes.cpu[other]
    for k, s in enumerate(share):
        cpu[n_other + k * g : n_other + (k + 1) * g] = shapes.cpu[s]
    rows.append(cpu)
    ub.append(t.cpu)
    whole = np.zeros(n)
    whole[:n_other] = shapes.count[other]
    whole[n_other + n_z :] = -1.0
    rows.append(whole)  # whole GPUs asked <= GPUs taken whole
    ub.append(0.0)
    for j in range(g):  # shares on GPU j fit its 1000 milli, none when it is taken whole
        r = np.zeros(n)
        for k, s in enumerate(share):
            r[n_other + k * g + j] = shapes.milli[s]
        r[n_other + n_z + j] = MILLI
        rows.append(r)
        ub.append(MILLI)
    for k, s in enumerate(share):  # at most the expected count of each shape
        r = np.zeros(n)
        r[n_other + k * g : n_other + (k + 1) * g] = 1.0
        rows.append(r)
        ub.append(float(limit[s]))
    upper = np.concatenate([limit[other], np.full(n_z, np.inf), np.ones(g)])
    cost = np.zeros(n)
    cost[:n_other] = -profit[other]
    for k, s in enumerate(share):
        cost[n_other + k * g : n_other + (k + 1) * g] = -profit[s]
    res = milp(cost, constraints=LinearConstraint(np.array(rows), -np.inf, np.array(ub)), integrality=np.ones(n),
               bounds=Bounds(0, upper), options={"node_limit": node_limit, "time_limit": seconds, "disp": False})
    if res.x is None or -res.fun <= 1e-9:
        return None
    x = np.zeros(len(shapes))
    xr = np.round(res.x)
    x[other] = xr[:n_other]
    for k, s in enumerate(share):
        x[s] = xr[n_other + k * g : n_other + (k + 1) * g].sum()
    return x


def _homogeneous(t: NodeType, shapes: TypicalPods, s: int) -> int:
    """How many pods of shape ``s`` alone fit one node of type ``t`` (at least one: it admits it)."""
    cpu, milli, count = int(shapes.cpu[s]), int(shapes.milli[s]), int(shapes.count[s])
    by_cpu = t.cpu // cpu if cpu else 1 << 20
    if milli == 0:
        by_gpu = 1 << 20
    elif milli < MILLI:
        by_gpu = t.gpus * (MILLI // milli)
    else:
        by_gpu = t.gpus // count
    return max(1, min(by_cpu, by_gpu, 256))


@dataclass
class Plan:
    shapes: TypicalPods
    types: list[NodeType]
    columns: list[tuple[int, np.ndarray]]  # (node type index, count per shape)
    nodes: np.ndarray  # the LP's number of nodes per column (fractional)
    meta: dict[str, Any]  # written to the file: deterministic figures only (no times)
    cpu_seconds: float = 0.0
    wall_seconds: float = 0.0

    def used(self, min_nodes: float = 1e-6) -> Plan:
        """The columns the LP uses."""
        keep = [i for i, v in enumerate(self.nodes) if v > min_nodes]
        return Plan(self.shapes, self.types, [self.columns[i] for i in keep], self.nodes[keep], self.meta)

    def to_json(self) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "version": VERSION,
            "shapes": [{"milliCpu": int(c), "milliGpu": int(m), "gpuCount": int(k), "gpuModel": s, "percentage": float(p)}
                       for c, m, k, s, p in zip(self.shapes.cpu, self.shapes.milli, self.shapes.count,
                                                self.shapes.spec, self.shapes.p, strict=True)],
            "nodeTypes": [{"milliCpu": t.cpu, "gpus": t.gpus, "model": t.model, "nodes": t.nodes} for t in self.types],
            "configurations": [
                {"type": j, "nodes": round(float(v), 6), "pods": {str(s): int(x[s]) for s in np.flatnonzero(x)}}
                for (j, x), v in zip(self.columns, self.nodes, strict=True)
            ],
            "meta": self.meta,
        }


def solve_plan(shapes: TypicalPods, nodes: Sequence[Node], *, fill: float = FILL, rounds: int = 20,
               node_limit: int = 2000, seconds: float = SAFETY_SECONDS) -> Plan:
    """The configuration LP of ``shapes`` (popularity ``p``) on ``nodes`` by column generation;
    ``rounds`` at most, each pricing MILP within ``node_limit`` branch-and-bound nodes: the same
    plan on any machine. ``seconds`` (wall clock, the whole solve) is a safety net: when it stops
    the work, ``time_limited`` is true in the meta and the plan depends on the machine's load.
    Pricing is heuristic past the node limit: the plan is a guide, not a bound."""
    from scipy.optimize import linprog

    t0, w0 = time.process_time(), time.perf_counter()
    deadline = w0 + seconds
    types = node_types(nodes)
    cap = sum(t.nodes * t.gpus for t in types) * MILLI
    gain = _gain(shapes)
    per_pod = float(shapes.p @ (shapes.milli * shapes.count))
    avail = shapes.p * (fill * cap / per_pod)  # expected pods of each shape
    count = np.array([t.nodes for t in types], np.float64)
    cols: list[tuple[int, np.ndarray]] = []
    for j, t in enumerate(types):  # each shape alone, as many as fit: the LP starts near full
        for s in range(len(shapes)):
            if _admits(t, shapes, s):
                x = np.zeros(len(shapes))
                x[s] = _homogeneous(t, shapes, s)
                cols.append((j, x))
    lp_value, converged, time_limited, it = 0.0, False, False, 0
    sol = np.zeros(len(cols))
    while it < rounds and not time_limited:
        it += 1
        a = np.zeros((len(shapes) + len(types), len(cols)))
        for c, (j, x) in enumerate(cols):
            a[: len(shapes), c] = x
            a[len(shapes) + j, c] = 1
        c_gain = np.array([gain @ x for _, x in cols])
        lp = linprog(-c_gain, A_ub=a, b_ub=np.concatenate([avail, count]), bounds=(0, None), method="highs")
        if lp.status != 0:
            raise RuntimeError(f"the configuration LP failed: {lp.message}")
        sol, lp_value = lp.x, -float(lp.fun)
        duals = np.maximum(-np.asarray(lp.ineqlin.marginals), 0.0)
        pi, mu = duals[: len(shapes)], duals[len(shapes):]
        added = 0
        for j, t in enumerate(types):
            left = deadline - time.perf_counter()
            if left <= 0:
                time_limited = True
                break
            x = _price(t, shapes, gain - pi, avail, node_limit, left)
            time_limited = time_limited or time.perf_counter() >= deadline
            if x is not None and float((gain - pi) @ x) - mu[j] > 1e-3:
                cols.append((j, x))
                added += 1
        if added == 0 and not time_limited:
            converged = True
            break
    meta = {"lp_gpu_milli": lp_value, "capacity_milli": cap, "planned_allocated_pct": 100 * lp_value / cap,
            "fill": fill, "rounds": it, "converged": converged, "columns": len(cols),
            "limits": {"rounds": rounds, "node_limit": node_limit, "time_limit_s": seconds},
            "time_limited": time_limited}
    plan = Plan(shapes, types, cols, np.asarray(sol, np.float64), meta).used()
    plan.cpu_seconds, plan.wall_seconds = time.process_time() - t0, time.perf_counter() - w0
    return plan


def plan_for(trace_pods: Sequence[Any], nodes: Sequence[Node], **kw: Any) -> Plan:
    """The plan of a trace's pods (their shape distribution: every shape, no popularity cut)."""
    return solve_plan(typical_pods_of(trace_pods, 100), nodes, **kw)


def write_plan(path: Path, plan: Plan, **meta: Any) -> None:
    doc = plan.to_json()
    doc["meta"] = {**doc["meta"], **meta}
    write_json(path, doc, indent=1, newline=True)

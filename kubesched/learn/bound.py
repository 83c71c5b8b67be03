"""Offline bounds: how much GPU the pods the metric counts at a level could occupy at best.

The pods are those arrived by the last event the metric averages at the level
(``kubesched.learn.metric``: arrived % rounding to the level, 99.5-100.5 % for 100): every event
it averages allocates some of them. Any placement of those pods, in any order and knowing them
all in advance, allocates at most ``max_allocated_milli``, so every event's allocated %, rounded to
0.01 as the metric rounds it, is at most that bound's rounded the same way, and no policy's metric
can be below ``min_unallocated_pct``. Two relaxations, both solved with HiGHS (scipy); the bound
reported is always a proven one (a dual bound), never the value of a solution found. The work is
limited deterministically (``Limits``: column generation rounds, branch-and-bound nodes per MILP),
so the same run gives the same figures on any machine and under any load; a wall-clock limit stays
as a safety net only, and ``time_limited`` says when it cut the work short (the figures then depend
on the machine's load, and are still proven bounds).

``configuration_bound`` (the default) keeps per-node packing. Pods with GPUs are grouped by shape
(CPU, memory, GPU milli, GPU count, allowed models), nodes by type; a *configuration* is what one
node of a type can hold at once: CPU, memory and pod count within its allocatable, whole-GPU
pods on whole GPUs, shares packed onto single GPUs of 1000 milli (as GPU fill patterns). The
configuration LP (how many nodes of each type use each configuration, pods of a shape at most
those that arrived, nodes of a type at most those there are) is solved by column generation,
starting from FGD's own placement of the same pods (one configuration per node). For any prices
pi >= 0 on the shapes, ``sum(pi * arrived) + sum over types of nodes x max(0, best configuration's
GPU milli - pi x its pods)`` bounds every real placement (a Lagrangian bound; the best
configuration is a small MILP whose dual bound is used), so the bound is valid wherever the
column generation stops; when it converges the bound is the LP's optimum. Then an integer program
over the configurations found gives a real packing of the same pods (never worse than FGD's, whose
configurations are among them): the best possible lies between the two, and when they meet (to a
relative 10^-4) the packing is reported as optimal. Pods without GPUs are left out (they add
nothing to the objective, so leaving them out only relaxes).

``offline_bound`` (``--method aggregate``) sums over each node type instead: y[s, t] pods of shape
s on nodes of type t (integer); per type, summed over its nodes, CPU, memory and GPU milli fit,
and at most j shares above 1000/(j+1) milli fit per GPU (j = 1..4, a whole GPU counting as j).
Every real placement satisfies these sums, but they relax per-node packing, so this bound is far
looser.
"""

from __future__ import annotations

import math
import time
from collections import Counter
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from functools import lru_cache

import numpy as np

from kubesched.api.objects import Node, Pod
from kubesched.api.resources import CPU, MEMORY
from kubesched.errors import InputError
from kubesched.experiment.protocol import Prepared, arrived_milli, gpu_capacity_milli, percent_of, run
from kubesched.gpu.model import MILLI, node_gpu_count, node_gpu_model, pod_gpu_ask
from kubesched.learn import exact as exact_packing
from kubesched.learn.data import Instance
from kubesched.learn.metric import metric_pods

SLOTS = 4
METHODS = ("configurations", "aggregate")
FORMULATION = (
    "pods by shape on node types; per type: CPU, memory, GPU milli, at most j shares above 1000/(j+1) "
    "milli per GPU for j = 1..4 (a relaxation of per-node packing)"
)
CONFIG_FORMULATION = (
    "configuration LP: one column per packing of one node of a type (CPU, memory, pod count, whole GPUs, "
    "shares onto single GPUs); Lagrangian bound from column generation's duals"
)


@dataclass(frozen=True)
class Limits:
    """How much work a bound may do. ``rounds`` and ``nodes`` are deterministic; ``seconds`` (wall
    clock, per seed) is a safety net that a run within the other two should never reach."""

    rounds: int = 30  # column generation rounds (one LP and one pricing MILP per node type each)
    nodes: int = 10_000  # branch-and-bound nodes per MILP (pricing, the packing, the aggregate MILP)
    seconds: float = 600.0


@dataclass
class Bound:
    level: float
    pods: int  # pods arrived by the last event the metric averages at the level
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
    method: str = "aggregate"
    # the configuration bound only: the LP value where column generation stopped, and the best
    # packing found (GPU milli it places; the unallocated % it leaves: what is achievable)
    lp_value: float | None = None
    placement_milli: float | None = None
    max_unallocated_pct: float | None = None
    converged: bool | None = None  # column generation proved the configuration LP optimal
    iterations: int | None = None
    columns: int | None = None
    fgd_milli: float | None = None  # FGD's own placement of the same pods (the starting columns)
    arrived_pct: float | None = None  # arrived % after the last pod counted (99.5-100.5 at 100)
    time_limited: bool = False  # the wall-clock safety net stopped some of the work (load-dependent)
    # small instances: the exact per-node model ran too (kubesched.learn.exact); its variables
    exact_variables: int | None = None

    def to_json(self) -> dict:
        return asdict(self)


def bound_of(prep: Prepared, level: float = 100.0, limits: Limits = Limits(), method: str = "configurations") -> Bound:
    """The bound of ``method`` (one of ``METHODS``)."""
    if method == "aggregate":
        return offline_bound(prep, level, limits)
    if method == "configurations":
        return configuration_bound(prep, level, limits)
    raise ValueError(f"method must be one of {', '.join(METHODS)}, not {method!r}")


def seed_bound(inst: Instance, seed: int, level: float, limits: Limits, method: str) -> dict:
    """One seed's bound as a JSON object (top-level, so that it runs in a worker process)."""
    return {"seed": seed, **bound_of(inst.prepare(seed), level, limits, method).to_json()}


def counted_pods(prep: Prepared, level: float) -> list[Pod]:
    """The pods the metric counts at ``level``: arrived by the last event it averages there."""
    return prep.pods[: metric_pods(prep, level, f"seed {prep.seed}")]


def reported_unallocated(allocated_milli: float, cap: int) -> float:
    """The unallocated % the metric reports when every event it averages allocates
    ``allocated_milli``: it rounds each event's allocated % to 0.01 (and their mean again), and
    rounding is monotone, so when no event allocates more this is the least it can report."""
    return 100.0 - round(float(np.round(percent_of([allocated_milli], cap)[0], 2)), 2)


def _arrived_pct(pods: list[Pod], cap: int) -> float:
    return float(percent_of(arrived_milli(pods)[-1:], cap)[0]) if pods else 0.0


def offline_bound(prep: Prepared, level: float = 100.0, limits: Limits = Limits()) -> Bound:
    from scipy.optimize import Bounds, LinearConstraint, milp
    from scipy.sparse import coo_matrix

    t0 = time.perf_counter()
    pods = counted_pods(prep, level)
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
        options={"node_limit": limits.nodes, "time_limit": limits.seconds, "disp": False},
    )
    time_limited = time.perf_counter() - t0 >= limits.seconds
    cap = gpu_capacity_milli(prep.nodes)
    requested = sum(S[i][2] * S[i][3] * shapes[S[i]] for i in range(ns))
    optimal = res.status == 0
    # HiGHS stops at a relative gap (1e-4 by default) or at the node (or time) limit: the bound is
    # its dual bound, never the objective of the integer solution it found
    dual = getattr(res, "mip_dual_bound", None)
    best = float(-dual) if dual is not None and np.isfinite(dual) else float(requested)
    gap = float(getattr(res, "mip_gap", None) or 0.0) if res.x is not None else float("nan")
    best = min(best, float(requested), float(cap))
    return Bound(level, len(pods), requested, cap, best, reported_unallocated(best, cap), optimal, gap,
                 time.perf_counter() - t0, len(S), len(T), arrived_pct=_arrived_pct(pods, cap),
                 time_limited=time_limited)


# ---- the configuration bound: per-node packing kept --------------------------------------------
SMOOTHING = 0.7  # weight of the best bound's duals in the prices (then halved on a mispricing)
TOLERANCE = 1e-3  # milli-GPU
MAX_SHARE_SIZES = 100
MAX_PATTERNS = 50_000  # the shipped traces need at most 1,871


@dataclass(frozen=True)
class _Shape:
    cpu: int  # milli-CPU
    mem: int  # in the memory unit (exact)
    milli: int  # per GPU
    count: int
    models: tuple[str, ...]

    @property
    def gain(self) -> int:
        return self.milli * self.count

    @property
    def share(self) -> bool:
        return self.milli < MILLI


@dataclass(frozen=True)
class _NodeType:
    cpu: int
    mem: int  # in the memory unit (exact)
    gpus: int
    model: str
    pods: int

    def admits(self, s: _Shape) -> bool:
        return (s.cpu <= self.cpu and s.mem <= self.mem and s.count <= self.gpus
                and (not s.models or self.model in s.models))


def _shape_of(pod: Pod, unit: int) -> _Shape | None:
    """None for a pod without GPUs: it adds nothing to the objective, so leaving it out relaxes."""
    ask = pod_gpu_ask(pod)
    if ask is None or not ask.total_milli:
        return None
    mem = int(pod.requests.get(MEMORY, 0)) // unit
    return _Shape(int(pod.requests.get(CPU, 0)), mem, ask.milli, ask.count, tuple(ask.models or ()))


def _memory_unit(pods: list[Pod], nodes: list[Node]) -> int:
    """The largest unit every memory amount is a whole number of (exact arithmetic, small numbers)."""
    unit = 0
    for amount in [p.requests.get(MEMORY, 0) for p in pods] + [n.allocatable.get(MEMORY, 0) for n in nodes]:
        unit = math.gcd(unit, int(amount))
    return unit or 1


def _gpu_shapes(pods: list[Pod], unit: int) -> Counter:
    return Counter(sh for p in pods if (sh := _shape_of(p, unit)) is not None)


def _node_types_each(nodes: list[Node], unit: int) -> list[_NodeType]:
    return [
        _NodeType(int(n.allocatable.get(CPU, 0)), int(n.allocatable.get(MEMORY, 0)) // unit, node_gpu_count(n),
                  node_gpu_model(n), int(n.allocatable.get("pods", 1 << 30)))
        for n in nodes
    ]


def _node_types(nodes: list[Node], unit: int) -> Counter:
    return Counter(_node_types_each(nodes, unit))


class TooManyPatterns(ValueError):
    pass


@lru_cache(maxsize=256)
def _patterns(values: tuple[int, ...]) -> np.ndarray:
    """The maximal ways to fill one GPU with shares of these milli values (one row per pattern:
    how many of each value); any filling of a GPU is part of one of them. Refused beyond
    ``MAX_PATTERNS`` (many distinct small shares make them explode)."""
    if len(values) > MAX_SHARE_SIZES:
        raise TooManyPatterns(f"{len(values)} distinct GPU share sizes (at most {MAX_SHARE_SIZES})")
    out: list[list[int]] = []
    cur: list[int] = []

    def fill(i: int, left: int) -> None:
        if i == len(values):
            if all(v > left for v in values):
                out.append(list(cur))
                if len(out) > MAX_PATTERNS:
                    raise TooManyPatterns(f"more than {MAX_PATTERNS} ways to fill one GPU with the trace's shares")
            return
        for k in range(left // values[i], -1, -1):
            cur.append(k)
            fill(i + 1, left - k * values[i])
            cur.pop()

    fill(0, MILLI)
    return np.array(out, np.float64).reshape(len(out), len(values))


def check_configurable(pods: Iterable[Pod], source: str) -> None:
    """The configuration bound enumerates how shares fill one GPU: refuse, before anything runs, a
    trace whose share sizes would make that explode."""
    values = sorted({a.milli for p in pods if (a := pod_gpu_ask(p)) is not None and 0 < a.milli < MILLI})
    try:
        _patterns(tuple(values))
    except TooManyPatterns as e:
        raise InputError(f"{e}: too many for the configuration bound; --method aggregate works", source=source) from None


def _price(t: _NodeType, shapes: list[_Shape], profit: np.ndarray, limit: np.ndarray, nodes: int, time_limit: float):
    """The best single node of type ``t``: max sum(profit[s] * x[s]) over the packings of one
    node (CPU, memory, pod count; whole GPUs; shares onto single GPUs of 1000 milli, as GPU
    patterns), at most ``limit[s]`` of each shape, within ``nodes`` branch-and-bound nodes. Returns (an upper bound on the best value, the
    packing found or None)."""
    from scipy.optimize import Bounds, LinearConstraint, milp

    idx = [i for i, sh in enumerate(shapes) if profit[i] > 1e-9 and t.admits(sh)]
    if not idx or t.gpus == 0:
        return 0.0, None
    g = t.gpus
    values = tuple(sorted({shapes[i].milli for i in idx if shapes[i].share}))
    pats = _patterns(values) if values else np.zeros((0, 0))
    nx, npat = len(idx), len(pats)
    # variables: x (per shape), y (GPUs filled with each share pattern), h (GPUs taken whole)
    n = nx + npat + 1
    a_mat = np.zeros((5 + len(values), n))
    ub_rows = np.zeros(5 + len(values))
    for k, i in enumerate(idx):
        sh = shapes[i]
        a_mat[0, k], a_mat[1, k], a_mat[2, k] = sh.cpu, sh.mem, 1.0
        if sh.share:
            a_mat[5 + values.index(sh.milli), k] = 1.0
        else:
            a_mat[3, k] = sh.count
    ub_rows[:3] = t.cpu, t.mem, t.pods
    a_mat[3, n - 1] = -1.0  # whole GPUs asked <= GPUs taken whole
    a_mat[4, nx:] = 1.0  # GPUs with a pattern + GPUs taken whole <= the node's GPUs
    ub_rows[4] = g
    a_mat[5:, nx : nx + npat] = -pats.T  # shares of a value placed <= the patterns' room for it
    cost = np.zeros(n)
    cost[:nx] = -profit[idx]
    res = milp(cost, constraints=LinearConstraint(a_mat, -np.inf, ub_rows), integrality=np.ones(n),
               bounds=Bounds(0, np.concatenate([limit[idx], np.full(npat + 1, g)])),
               options={"node_limit": nodes, "time_limit": time_limit, "disp": False})
    dual = getattr(res, "mip_dual_bound", None)
    upper = float(-dual) if dual is not None and np.isfinite(dual) else float(profit[idx] @ limit[idx])
    if res.x is None:
        return upper, None
    x = np.zeros(len(shapes))
    x[idx] = np.round(res.x[:nx])
    return max(upper, float(profit @ x)), x


def _master(cols: list[tuple[int, np.ndarray]], gain: np.ndarray, ntypes: int) -> tuple[np.ndarray, np.ndarray]:
    """The master problem's rows (pods of each shape, then nodes of each type) and gains."""
    a_mat = np.zeros((len(gain) + ntypes, len(cols)))
    for c, (j, x) in enumerate(cols):
        a_mat[: len(gain), c] = x
        a_mat[len(gain) + j, c] = 1.0
    return a_mat, np.array([gain @ x for _, x in cols])


def _first_columns(
    prep: Prepared, pods: list[Pod], unit: int, shapes: list, types: list, gain: np.ndarray
) -> tuple[list[tuple[int, np.ndarray]], float]:
    """The first columns, (type, packing): FGD's own placement of the same pods (one column per
    node), so the packing found is never worse than FGD's, and one pod of each shape on each type
    that admits it; and the GPU milli FGD placed."""
    shape_of = {s: i for i, s in enumerate(shapes)}
    type_of = {n.name: types.index(t) for n, t in zip(prep.nodes, _node_types_each(prep.nodes, unit), strict=True)}
    fgd = run(prep.nodes, pods, "FGD", prep.seed, prep.typical, keep_snapshot=False)
    per_node: dict[str, np.ndarray] = {}
    for pod, node in zip(pods, fgd.nodes, strict=True):
        sh = _shape_of(pod, unit)
        if node is not None and sh is not None:
            per_node.setdefault(node, np.zeros(len(shapes)))[shape_of[sh]] += 1
    cols: list[tuple[int, np.ndarray]] = [(type_of[nd], x) for nd, x in per_node.items()]
    fgd_milli = float(sum(gain @ x for x in per_node.values()))
    for j, t in enumerate(types):
        for i, sh in enumerate(shapes):
            if t.admits(sh):
                x = np.zeros(len(shapes))
                x[i] = 1
                cols.append((j, x))
    return cols, fgd_milli


def _packing(
    cols: list[tuple[int, np.ndarray]], gain: np.ndarray, n_types: int, limits: np.ndarray, nodes: int, left: float
) -> float:
    """A real packing: the integer program over the columns found (what is achievable) within
    ``nodes`` branch-and-bound nodes and the time ``left``; NaN when there is none."""
    from scipy.optimize import Bounds, LinearConstraint, milp

    if not cols or left <= 0:
        return float("nan")
    a_mat, c_gain = _master(cols, gain, n_types)
    # (HiGHS takes no starting solution: the caller keeps FGD's placement if it finds worse)
    ip = milp(-c_gain, constraints=LinearConstraint(a_mat, -np.inf, limits), integrality=np.ones(len(cols)),
              bounds=Bounds(0, np.inf), options={"node_limit": nodes, "time_limit": max(left, 1.0), "disp": False})
    z = None if ip.x is None else np.round(ip.x)
    if z is not None and np.all(a_mat @ z <= limits + 1e-9):
        return float(c_gain @ z)
    return float("nan")


def configuration_bound(prep: Prepared, level: float = 100.0, limits: Limits = Limits()) -> Bound:
    """The bound with per-node packing kept: the configuration LP (one column per packing of one
    node of a type), by column generation; see the module docstring."""
    from scipy.optimize import linprog

    t0 = time.perf_counter()
    pods = counted_pods(prep, level)
    unit = _memory_unit(pods, prep.nodes)
    counts = _gpu_shapes(pods, unit)
    shapes = list(counts)
    avail = np.array([counts[s] for s in shapes], np.float64)
    gain = np.array([s.gain for s in shapes], np.float64)
    tcount = _node_types(prep.nodes, unit)
    types, nodes_of = list(tcount), np.array(list(tcount.values()), np.float64)
    cap = gpu_capacity_milli(prep.nodes)
    requested = sum(a.total_milli for p in pods if (a := pod_gpu_ask(p)) is not None)
    cols, fgd_milli = _first_columns(prep, pods, unit, shapes, types, gain)
    # the safety net covers the column generation and the integer program (not FGD's run)
    # (the integer program over the columns gets what is left after the column generation's 80 %)
    started = time.perf_counter()
    deadline, cg_deadline = started + limits.seconds, started + 0.8 * limits.seconds
    best_upper = min(float(cap), float(requested))
    lp_value, iterations, converged, time_limited = 0.0, 0, False, False
    center: np.ndarray | None = None  # the duals of the best bound so far (stabilisation)
    alpha = SMOOTHING
    while iterations < limits.rounds:
        if time.perf_counter() >= cg_deadline:
            time_limited = True
            break
        iterations += 1
        a_mat, c_gain = _master(cols, gain, len(types))
        lp = linprog(-c_gain, A_ub=a_mat, b_ub=np.concatenate([avail, nodes_of]), bounds=(0, None), method="highs")
        if lp.status != 0:
            break
        lp_value = -float(lp.fun)
        duals = np.maximum(-np.asarray(lp.ineqlin.marginals), 0.0)  # a maximisation's <= rows
        pi_lp, mu = duals[: len(shapes)], duals[len(shapes):]
        if best_upper - lp_value <= TOLERANCE:
            converged = True  # the bound meets the LP: the configuration LP's optimum
            break
        # prices between the best bound's duals and the LP's (Wentges smoothing: the LP's duals
        # jump between extreme points and tail off)
        pi = pi_lp if center is None else alpha * center + (1 - alpha) * pi_lp
        new, upper, exact = _price_types(types, nodes_of, shapes, gain, avail, pi, pi_lp, mu, limits.nodes, cg_deadline)
        cols += new
        added = len(new)
        time_limited = time_limited or upper == np.inf
        if upper < best_upper:
            best_upper, center = upper, pi
        if added == 0:
            if alpha == 0.0 and exact:
                converged = True  # no column prices out at the LP's duals: the LP is optimal
                break
            alpha = 0.0 if alpha < 0.2 else alpha / 2  # mispriced: move towards the LP's duals
    # every solver's time limit is what is left to a deadline: reaching one means the net was hit
    time_limited = time_limited or time.perf_counter() >= cg_deadline
    placed = _packing(cols, gain, len(types), np.concatenate([avail, nodes_of]), limits.nodes,
                      deadline - time.perf_counter())
    time_limited = time_limited or time.perf_counter() >= deadline
    placed = max(placed, fgd_milli) if np.isfinite(placed) else fgd_milli
    best = min(best_upper, float(requested), float(cap))
    exact_variables = None
    if best - placed > 1e-4 * best:  # on a small instance, the exact model may close the gap
        ex = _exact(prep.nodes, shapes, avail, unit, limits.nodes, deadline)
        if ex is not None:
            time_limited = time_limited or time.perf_counter() >= deadline
            placed = max(placed, ex.placed_milli) if np.isfinite(ex.placed_milli) else placed
            best, exact_variables = min(best, ex.bound_milli), ex.variables
    gap = (best - placed) / best if best > 0 and np.isfinite(placed) else float("nan")
    optimal = bool(np.isfinite(placed) and best - placed <= 1e-4 * best)  # the packing meets the bound
    return Bound(level, len(pods), requested, cap, best, reported_unallocated(best, cap), optimal, gap,
                 time.perf_counter() - t0, len(shapes), len(types), formulation=CONFIG_FORMULATION,
                 method="configurations", lp_value=lp_value, placement_milli=placed,
                 max_unallocated_pct=reported_unallocated(placed, cap) if np.isfinite(placed) else float("nan"),
                 converged=converged, iterations=iterations, columns=len(cols), fgd_milli=fgd_milli,
                 arrived_pct=_arrived_pct(pods, cap), time_limited=time_limited, exact_variables=exact_variables)


def _price_types(
    types: list[_NodeType], nodes_of: np.ndarray, shapes: list[_Shape], gain: np.ndarray, avail: np.ndarray,
    pi: np.ndarray, pi_lp: np.ndarray, mu: np.ndarray, node_limit: int, deadline: float,
) -> tuple[list[tuple[int, np.ndarray]], float, bool]:
    """One pricing round: (the columns that improve the LP at its duals ``pi_lp``/``mu``, the
    Lagrangian bound at prices ``pi`` (inf when the deadline cut the round short), whether every
    pricing MILP was solved exactly). Any pi >= 0 bounds the integer optimum: sum(pi * avail) plus,
    per type, its nodes x max(0, the best single node's gain - pi x its pods) (shape limits relaxed)."""
    cols: list[tuple[int, np.ndarray]] = []
    upper, exact = float(pi @ avail), True
    for j, t in enumerate(types):
        left = deadline - time.perf_counter()
        if left <= 0:
            return cols, np.inf, False
        val, x = _price(t, shapes, gain - pi, avail, node_limit, left)
        upper += nodes_of[j] * max(0.0, val)
        if x is None:
            exact = False
        elif float((gain - pi_lp) @ x) - mu[j] > TOLERANCE:
            cols.append((j, x))
    return cols, upper, exact


def _exact(
    nodes: list[Node], shapes: list[_Shape], avail: np.ndarray, unit: int, node_limit: int, deadline: float
) -> exact_packing.Packing | None:
    """The exact model's packing and bound (its packing is real and its dual bound proven, so
    either may improve what the columns gave); None above ``MAX_VARIABLES``."""
    shape_arrays, node_arrays = _exact_model(nodes, shapes, avail, unit)
    values = np.array(sorted({s.milli for s in shapes if s.share}), np.int64)
    patterns = _patterns(tuple(int(v) for v in values)) if len(values) else np.zeros((0, 0))
    if exact_packing.variables(shape_arrays, node_arrays, patterns) > exact_packing.MAX_VARIABLES:
        return None
    return exact_packing.solve(shape_arrays, node_arrays, patterns, values, node_limit, deadline - time.perf_counter())


def _exact_model(nodes: list[Node], shapes: list[_Shape], avail: np.ndarray, unit: int) -> tuple[exact_packing.Shapes, exact_packing.Nodes]:
    """The shapes and the nodes, one by one, as the exact model takes them."""
    each = _node_types_each(nodes, unit)
    admits = np.array([[t.admits(s) for t in each] for s in shapes], bool).reshape(len(shapes), len(each))
    return (
        exact_packing.Shapes(np.array([s.cpu for s in shapes]), np.array([s.mem for s in shapes]),
                     np.array([s.milli for s in shapes]), np.array([s.count for s in shapes]), avail, admits),
        exact_packing.Nodes(np.array([t.cpu for t in each]), np.array([t.mem for t in each]),
                    np.array([t.gpus for t in each]), np.array([t.pods for t in each]), each),
    )

"""An exact packing model for small instances: how many pods of each shape go on each node, and
how each node's GPUs are filled (HiGHS through scipy).

The configuration bound's integer program picks among the per-node packings column generation
found, which on a small instance can be far from the best real packing (5 nodes of `default`,
seed 1: 26,100 GPU milli placed where 27,830 fit). This model has no such restriction: every node
is its own. Per node, CPU, memory and pod count within allocatable; whole-GPU pods take whole
GPUs; the other GPUs are each filled by one maximal filling of one GPU with the instance's share
sizes (a *pattern*: any filling of a GPU is part of one), and a node holds no more shares of a
size than its patterns give room for. Pods of one shape are interchangeable and so are a node's
GPUs, so the variables count pods per (shape, node) and GPUs per (node, pattern); identical nodes
are ordered by what they hold, which removes symmetric solutions without removing any packing.
Its optimum is the best real packing of these pods and HiGHS's dual bound a proven bound on it,
both within a branch-and-bound node limit, so the same instance gives the same answer on any
machine (`default`'s instances of 5 to 40 nodes are solved to optimality in 0.1-30 s).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from kubesched.gpu.model import MILLI

#: the model is built only up to this many variables: `default`'s instances of 5 to 12 nodes need
#: 400 to 1,300 and are solved in about a second; 40 nodes need 24,000 (solved too, in half a
#: minute on a loaded core: not worth it by default), the whole cluster millions. Above it the
#: configuration packing stands alone.
MAX_VARIABLES = 10_000


@dataclass(frozen=True)
class Shapes:
    """One entry per pod shape: CPU, memory (any exact unit), milli per GPU, GPU count, how many
    pods, and which nodes admit it (the GPU model allowed), as arrays."""

    cpu: np.ndarray
    mem: np.ndarray
    milli: np.ndarray
    count: np.ndarray
    avail: np.ndarray
    admits: np.ndarray  # [shape, node]: the node's GPU model is allowed and one pod fits alone


@dataclass(frozen=True)
class Nodes:
    cpu: np.ndarray
    mem: np.ndarray
    gpus: np.ndarray
    pods: np.ndarray
    kind: list  # equal kinds: identical nodes (ordered by their gain)


@dataclass(frozen=True)
class Packing:
    placed_milli: float  # the best packing found (NaN: none within the limits)
    bound_milli: float  # HiGHS's proven bound on the best packing
    optimal: bool
    variables: int


def variables(shapes: Shapes, nodes: Nodes, patterns: np.ndarray) -> int:
    n_nodes = len(nodes.cpu)
    return int(shapes.admits.sum() + n_nodes * (1 + len(patterns)))


class _Builder:
    """Sparse rows of ``A x <= b``."""

    def __init__(self) -> None:
        self.rows: list[int] = []
        self.cols: list[int] = []
        self.vals: list[float] = []
        self.ub: list[float] = []

    def row(self, cols: list[int], vals: list[float], ub: float) -> None:
        r = len(self.ub)
        self.rows += [r] * len(cols)
        self.cols += cols
        self.vals += vals
        self.ub.append(ub)


def solve(shapes: Shapes, nodes: Nodes, patterns: np.ndarray, values: np.ndarray, node_limit: int,
          time_limit: float) -> Packing:
    """The best packing of the shapes' pods onto the nodes (see the module docstring).
    ``patterns[p, j]``: how many shares of ``values[j]`` milli the p-th maximal filling of one
    GPU holds."""
    from scipy.optimize import Bounds, LinearConstraint, milp
    from scipy.sparse import csr_matrix

    n_shapes, n_nodes = shapes.admits.shape
    y: dict[tuple[int, int], int] = {}
    for s, n in zip(*np.nonzero(shapes.admits), strict=True):
        y[int(s), int(n)] = len(y)
    nv = len(y)
    whole = {}  # [node]: GPUs taken whole
    for n in range(n_nodes):
        whole[n] = nv
        nv += 1
    filled = {}  # [node, pattern]: GPUs of the node filled with shares as the pattern says
    if len(values):
        for n in range(n_nodes):
            for p in range(len(patterns)):
                filled[n, p] = nv
                nv += 1
    gain = np.zeros(nv)
    upper = np.full(nv, np.inf)
    for (s, _), v in y.items():
        gain[v] = shapes.milli[s] * shapes.count[s]
        upper[v] = shapes.avail[s]
    a = _Builder()
    for s in range(n_shapes):
        cols = [y[s, n] for n in range(n_nodes) if (s, n) in y]
        if cols:
            a.row(cols, [1.0] * len(cols), float(shapes.avail[s]))
    on: list[list[tuple[int, int]]] = [[] for _ in range(n_nodes)]
    for (s, n), v in y.items():
        on[n].append((s, v))
    column = {int(v): j for j, v in enumerate(values)}
    for n in range(n_nodes):
        here = on[n]
        cols = [v for _, v in here]
        a.row(cols, [float(shapes.cpu[s]) for s, _ in here], float(nodes.cpu[n]))
        a.row(cols, [float(shapes.mem[s]) for s, _ in here], float(nodes.mem[n]))
        a.row(cols, [1.0] * len(cols), float(nodes.pods[n]))
        full = [(s, v) for s, v in here if shapes.milli[s] >= MILLI]
        a.row([v for _, v in full] + [whole[n]], [float(shapes.count[s]) for s, _ in full] + [-1.0], 0.0)
        for j in range(len(values)):  # shares of each size fit in the GPUs filled with them
            same = [v for s, v in here if shapes.milli[s] < MILLI and column[int(shapes.milli[s])] == j]
            uses = [p for p in range(len(patterns)) if patterns[p, j] > 0]
            if same:
                a.row(same + [filled[n, p] for p in uses], [1.0] * len(same) + [-float(patterns[p, j]) for p in uses], 0.0)
        pats = [filled[n, p] for p in range(len(patterns))] if len(values) else []
        a.row([whole[n]] + pats, [1.0] * (1 + len(pats)), float(nodes.gpus[n]))
    for n in range(1, n_nodes):
        if nodes.kind[n] == nodes.kind[n - 1]:  # identical nodes ordered by what they hold
            c1 = [v for _, v in on[n]]
            c0 = [v for _, v in on[n - 1]]
            a.row(c1 + c0, [float(gain[v]) for v in c1] + [-float(gain[v]) for v in c0], 0.0)
    mat = csr_matrix((a.vals, (a.rows, a.cols)), shape=(len(a.ub), nv))
    ub = np.array(a.ub)
    res = milp(-gain, constraints=LinearConstraint(mat, -np.inf, ub), integrality=np.ones(nv),
               bounds=Bounds(0, upper), options={"node_limit": node_limit, "time_limit": max(time_limit, 1.0),
                                                 "disp": False})
    placed = float("nan")
    if res.x is not None:
        x = np.round(res.x)
        if np.all(mat @ x <= ub + 1e-6) and np.all(x <= upper):
            placed = float(gain @ x)
    dual = getattr(res, "mip_dual_bound", None)
    bound = -float(dual) if dual is not None and np.isfinite(dual) else float("inf")
    return Packing(placed, bound, bool(res.status == 0), nv)

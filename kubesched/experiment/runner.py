"""One run of the grid, as a plain function of its ``RunSpec``: what a worker process or a Ray
task executes. It returns a ``RunRecord`` of plain Python values (picklable, JSON-ready), so the
process pool and Ray give the same bytes for the same spec.
"""

from __future__ import annotations

import math
import time
from dataclasses import asdict, dataclass, field
from typing import Any

from kubesched.experiment.grid import RunSpec

LEVELS = range(131)  # arrived workload 0..130 %
METRICS = ("unallocated", "frag_amount", "frag_ratio")

# per-process cache of parsed CSVs: a worker runs many (policy, seed) of the same trace
_NODES: dict[tuple[str, int | None], list] = {}
_PODS: dict[tuple[str, int | None], Any] = {}


@dataclass
class RunRecord:
    trace: str
    policy: str
    seed: int
    pods: int  # pods of the trace (before tuning)
    events: int  # pods attempted (after tuning to ``tune`` x capacity)
    failed: int
    nodes: int
    gpus: int
    run_seconds: float  # the scheduling loop
    total_seconds: float  # including loading the CSVs (when not cached) and preparing
    curves: dict[str, list[float]] = field(default_factory=dict)  # metric -> value per level 0..130
    #: CPU time of the worker for the whole run: unlike wall time, not inflated by a busy machine
    cpu_seconds: float = math.nan
    # the spec's knobs, so --resume never reuses a run made with other settings
    tune: float = 1.3
    max_nodes: int | None = None
    max_pods: int | None = None
    gpu_model: str = "annotations"  # records written before the flag are of annotation runs

    def matches(self, spec: RunSpec) -> bool:
        mine = (self.trace, self.policy, self.seed, self.tune, self.max_nodes, self.max_pods, self.gpu_model)
        return mine == (spec.trace, spec.policy, spec.seed, spec.tune, spec.max_nodes, spec.max_pods, spec.gpu_model)

    def at(self, metric: str, level: int) -> float:
        return self.curves[metric][level]

    def to_json(self) -> dict[str, Any]:
        d = asdict(self)
        d["curves"] = {k: [None if math.isnan(v) else v for v in vs] for k, vs in self.curves.items()}
        d["cpu_seconds"] = None if math.isnan(self.cpu_seconds) else self.cpu_seconds
        return d

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> RunRecord:
        d = dict(d)
        d["curves"] = {k: [math.nan if v is None else float(v) for v in vs] for k, vs in d["curves"].items()}
        d["cpu_seconds"] = math.nan if d.get("cpu_seconds") is None else float(d["cpu_seconds"])
        return cls(**d)


def subset(items: list, limit: int | None) -> list:
    """``limit`` items spread evenly over the list (keeps the node-model mix of the full cluster)."""
    if limit is None or limit >= len(items):
        return list(items)
    step = len(items) / limit
    return [items[int(i * step)] for i in range(limit)]


def load_inputs(spec: RunSpec) -> tuple[list, Any]:
    from kubesched.trace.openb import TracePods, read_nodes, read_pods

    nkey = (str(spec.node_file), spec.max_nodes)
    if nkey not in _NODES:
        _NODES[nkey] = subset(read_nodes(spec.node_file), spec.max_nodes)
    pkey = (str(spec.pod_file), spec.max_pods)
    if pkey not in _PODS:
        tp = read_pods(spec.pod_file)
        if spec.max_pods is not None:
            m = spec.max_pods
            tp = TracePods(tp.pods[:m], tp.creation_time[:m], tp.deletion_time[:m], [], tp.lines[:m], tp.source)
        _PODS[pkey] = tp
    return _NODES[nkey], _PODS[pkey]


def run_one(spec: RunSpec) -> RunRecord:
    """Prepare (shuffle, tune, node order) and run one (trace, policy, seed); bin the curves."""
    from kubesched.experiment.protocol import prepare, run_prepared
    from kubesched.gpu.model import node_gpu_count

    t0, c0 = time.perf_counter(), time.process_time()
    nodes, trace = load_inputs(spec)
    prep = prepare(trace, nodes, spec.seed, spec.tune)
    result = run_prepared(prep, spec.policy, keep_snapshot=False, gpu_model=spec.gpu_model)
    curve = result.curve(LEVELS)
    return RunRecord(
        trace=spec.trace,
        policy=spec.policy,
        seed=spec.seed,
        pods=prep.originals,
        events=len(prep.pods),
        failed=result.failed,
        nodes=len(nodes),
        gpus=sum(node_gpu_count(n) for n in nodes),
        run_seconds=round(result.seconds, 3),
        total_seconds=round(time.perf_counter() - t0, 3),
        curves={m: [float(v) for v in curve[m]] for m in METRICS},
        cpu_seconds=round(time.process_time() - c0, 3),
        tune=spec.tune,
        max_nodes=spec.max_nodes,
        max_pods=spec.max_pods,
        gpu_model=spec.gpu_model,
    )

"""The FGD paper's experiment ("inflation") protocol: one run = one policy, one trace, one seed.

``prepare`` orders the workload as the paper's simulator does: pods sorted by name, shuffled
with the seed, then clones sampled (with replacement, from the name-sorted trace) and appended
until the total GPU request reaches ``tune`` x the cluster's GPUs (or random pods dropped when
above); nodes get a seeded random order that breaks score ties. ``run`` schedules the pods one
at a time through the real ``Scheduler`` (no departures, no retries: a pod that fits nowhere is
dropped for good but still counts as arrived) and records, after every pod, arrived, allocated,
idle and fragmented milli-GPU. ``RunResult.curve`` bins them by arrived % (round half to even),
as the paper's analysis scripts do. See docs/gpu-sharing.md.

``gpu_model="dra"`` runs the same workload with its GPUs described the DRA way
(``kubesched.gpu.dra_workload``): ResourceSlices and ResourceClaims, allocated by DynamicResources
on the devices the policy's GPU choice prefers; the result is the annotation model's.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from kubesched.api.objects import Node, Pod
from kubesched.config import parse_config
from kubesched.dra.store import DraObjects
from kubesched.gpu.dra_workload import to_dra
from kubesched.gpu.frag import POPULARITY_THRESHOLD, TypicalPods, typical_pods_of
from kubesched.gpu.metrics import GpuMetricsTracker
from kubesched.gpu.model import MILLI, node_gpu_count, pod_gpu_ask
from kubesched.heap import frozen_heap
from kubesched.load import ClusterObjects
from kubesched.plugins import in_tree_registry
from kubesched.scheduler import Scheduler
from kubesched.state.snapshot import Snapshot
from kubesched.trace.openb import TracePods

SCHED_API = "kubescheduler.config.k8s.io/v1"
GPU_FILTER = "Open-Gpu-Share"
DRA_PLUGIN = "DynamicResources"
#: how the GPUs are written: annotations and extended resources, or ResourceSlices and claims
GPU_MODELS = ("annotations", "dra")

#: policy -> (score plugin, Open-Gpu-Share gpuSelMethod), as generate_run_scripts.py runs them.
POLICIES: dict[str, tuple[str, str]] = {
    "Random": ("RandomScore", "random"),
    "DotProd": ("DotProductScore", "best"),
    "GpuClustering": ("GpuClusteringScore", "best"),
    "GpuPacking": ("GpuPackingScore", "best"),
    "BestFit": ("BestFitScore", "best"),
    "FGD": ("FGDScore", "FGDScore"),
}
POLICY_WEIGHT = 1000


def policy_config(
    policy: str,
    typical: TypicalPods | None = None,
    *,
    scheduler_name: str = "default-scheduler",
    gpu_model: str = "annotations",
) -> dict:
    """The KubeSchedulerConfiguration of one policy: default filters plus Open-Gpu-Share, every
    default score (and pre-score) plugin off, the policy's score plugin at weight 1000, all nodes
    scored. FGD needs the typical pods (they go into FGDScoreArgs.typicalPods). With
    ``gpu_model="dra"`` DynamicResources (in the default profile either way) filters after
    Open-Gpu-Share, so that its allocator runs only on nodes whose GPUs can hold the pod: the
    same verdicts, a fraction of the work."""
    if policy not in POLICIES:
        raise ValueError(f"unknown policy {policy!r} (one of {', '.join(POLICIES)})")
    plugin, sel = POLICIES[policy]
    pre_score: dict[str, Any] = {"disabled": [{"name": "*"}]}
    if plugin == "RandomScore":
        pre_score["enabled"] = [{"name": plugin}]
    plugin_config: list[dict[str, Any]] = [{"name": GPU_FILTER, "args": {"gpuSelMethod": sel}}]
    if plugin == "FGDScore":
        if typical is None:
            raise ValueError("the FGD policy needs typical pods")
        plugin_config.append({"name": plugin, "args": {"typicalPods": typical.to_args()}})
    if gpu_model not in GPU_MODELS:
        raise ValueError(f"unknown GPU model {gpu_model!r} (one of {', '.join(GPU_MODELS)})")
    filters: dict[str, Any] = {"enabled": [{"name": GPU_FILTER}]}
    if gpu_model == "dra":
        filters = {"disabled": [{"name": DRA_PLUGIN}], "enabled": [{"name": GPU_FILTER}, {"name": DRA_PLUGIN}]}
    return {
        "apiVersion": SCHED_API,
        "kind": "KubeSchedulerConfiguration",
        "percentageOfNodesToScore": 100,
        "profiles": [
            {
                "schedulerName": scheduler_name,
                "plugins": {
                    "preFilter": {"enabled": [{"name": GPU_FILTER}]},
                    "filter": filters,
                    "reserve": {"enabled": [{"name": GPU_FILTER}]},
                    # every pod has the same priority, so preemption never finds victims
                    "postFilter": {"disabled": [{"name": "*"}]},
                    "preScore": pre_score,
                    "score": {
                        "disabled": [{"name": "*"}],
                        "enabled": [{"name": plugin, "weight": POLICY_WEIGHT}],
                    },
                },
                "pluginConfig": plugin_config,
            }
        ],
    }


# ---- preparing a run -----------------------------------------------------------------------
def copy_pod(pod: Pod, name: str | None = None) -> Pod:
    """A pending copy with its own name, uid and annotations (so runs never share mutable state)."""
    p = pod.copy()
    if name is not None:
        p.name = name
    p.uid = f"{p.namespace}/{p.name}"
    p.annotations = dict(pod.annotations)
    p.node_name = ""
    p.nominated_node_name = ""
    return p


def gpu_capacity_milli(nodes: Sequence[Node]) -> int:
    return sum(node_gpu_count(n) for n in nodes) * MILLI


@dataclass
class Prepared:
    pods: list[Pod]  # the arrival sequence
    nodes: list[Node]  # in the seeded tie-break order
    typical: TypicalPods  # from the original (un-tuned) trace
    seed: int
    tune: float
    originals: int  # pods of the trace (before cloning or dropping)


def prepare(
    trace_pods: TracePods | Sequence[Pod],
    nodes: Sequence[Node],
    seed: int,
    tune: float = 1.3,
    *,
    popularity_threshold: float = POPULARITY_THRESHOLD,
) -> Prepared:
    """Sort by name, shuffle, tune the total GPU request to ``tune`` x capacity (``tune <= 0``:
    keep the trace as it is), order nodes."""
    pods = trace_pods.pods if isinstance(trace_pods, TracePods) else list(trace_pods)
    if not pods:
        raise ValueError("no pods to run")
    if not nodes:
        raise ValueError("no nodes to run on")
    rng = np.random.default_rng(seed)
    original = sorted(pods, key=lambda p: p.name)
    typical = typical_pods_of(original, popularity_threshold)
    asks = [pod_gpu_ask(p) for p in original]
    per_gpu = [a.milli if a else 0 for a in asks]
    totals = [a.total_milli if a else 0 for a in asks]
    order = rng.permutation(len(original))
    seq = [copy_pod(original[i]) for i in order]
    seq_total = [totals[i] for i in order]
    total = sum(totals)
    target = tune * gpu_capacity_milli(nodes)
    if tune <= 0:
        pass  # as the simulator: no tuning at all
    elif total < target:
        if not any(per_gpu):
            raise ValueError("cannot tune up: no pod of the trace asks for a GPU")
        i = 0
        while True:  # the simulator's quirk: the stop test adds the per-GPU milli
            k = int(rng.integers(len(original)))
            if total + per_gpu[k] > target:
                break
            seq.append(copy_pod(original[k], f"{original[k].name}-tuned-{i}"))
            total += totals[k]
            i += 1
    elif total > target:
        while total > target and seq:
            k = int(rng.integers(len(seq)))
            seq.pop(k)
            total -= seq_total.pop(k)
    by_name = sorted(nodes, key=lambda n: n.name)
    prefix = rng.permutation(len(by_name))  # node i is "%04d-" % prefix[i] in the simulator
    node_order = [by_name[i] for i in np.argsort(prefix, kind="stable")]
    return Prepared(seq, node_order, typical, seed, tune, len(original))


# ---- the metric's binning -------------------------------------------------------------------
def percent_of(milli: np.ndarray | Sequence[int], capacity_milli: int) -> np.ndarray:
    return 100.0 * np.asarray(milli, np.float64) / capacity_milli


def arrived_milli(pods: Sequence[Pod]) -> np.ndarray:
    """GPU milli arrived after each pod of the sequence: every pod counts, placed or dropped, so
    this is the same for every policy run on the sequence."""
    return np.cumsum([a.total_milli if (a := pod_gpu_ask(p)) else 0 for p in pods], dtype=np.int64)


def binned(arrived_pct: np.ndarray, level: float) -> np.ndarray:
    """Which events the curve averages at ``level``: arrived % rounded (half to even, as numpy and
    merge_*_discrete.py) to ``level``; when none is, those rounded to within ``level`` +-1."""
    arrived = np.round(arrived_pct)
    sel = arrived == level
    if not sel.any():
        sel = (arrived >= level - 1) & (arrived <= level + 1)
    return sel


# ---- one run ---------------------------------------------------------------------------------
@dataclass
class RunResult:
    policy: str
    seed: int
    capacity_milli: int
    arrived_milli: np.ndarray  # per event (after each pod): total GPU milli of pods attempted
    used_milli: np.ndarray  # allocated milli-GPU
    idle_milli: np.ndarray
    frag_milli: np.ndarray  # sum of F_n(M) over nodes
    placed: np.ndarray  # bool per pod
    nodes: list[str | None]  # node per pod (None: failed)
    seconds: float = 0.0
    extra: dict[str, Any] = field(default_factory=dict)
    snapshot: Snapshot | None = field(default=None, repr=False)  # the cluster after the last pod

    def percent(self, milli: np.ndarray) -> np.ndarray:
        return percent_of(milli, self.capacity_milli)

    @property
    def failed(self) -> int:
        return int((~self.placed).sum())

    def curve(self, levels: Sequence[int] = range(131)) -> dict[str, np.ndarray]:
        """Per arrived-% level: mean unallocated %, frag amount % and frag ratio % (NaN when no
        event falls within the level +-1), binned as merge_*_discrete.py does."""
        arrived = self.percent(self.arrived_milli)
        alloc = np.round(self.percent(self.used_milli), 2)
        frag = self.percent(self.frag_milli)
        ratio = 100.0 * self.frag_milli / np.where(self.idle_milli > 0, self.idle_milli, 1)
        out = {k: np.full(len(levels), np.nan) for k in ("unallocated", "frag_amount", "frag_ratio")}
        for j, lvl in enumerate(levels):
            sel = binned(arrived, lvl)
            if not sel.any():
                continue
            out["unallocated"][j] = 100.0 - round(float(alloc[sel].mean()), 2)
            out["frag_amount"][j] = float(frag[sel].mean())
            out["frag_ratio"][j] = float(ratio[sel].mean())
        out["arrived"] = np.asarray(list(levels), np.float64)
        return out

    def unallocated_at(self, level: int) -> float:
        return float(self.curve([level])["unallocated"][0])


def build_scheduler(
    nodes: Sequence[Node],
    policy: str,
    seed: int,
    typical: TypicalPods | None,
    *,
    config: dict | None = None,
    dra: DraObjects | None = None,
) -> Scheduler:
    """A Scheduler over an in-memory snapshot of ``nodes`` (in that order) for one policy, or for
    ``config`` (a KubeSchedulerConfiguration dict; ``policy`` then only names it). ``dra``: the
    DRA objects of the cluster (its GPUs written the DRA way: the DRA policy configuration)."""
    registry = in_tree_registry(entry_points=False)
    gpu_model = "annotations" if dra is None else "dra"
    doc = policy_config(policy, typical, gpu_model=gpu_model) if config is None else config
    parsed = parse_config(doc, f"policy {policy}", registry.points_of)
    snap = Snapshot.of(ClusterObjects(nodes=list(nodes), dra=dra if dra is not None else DraObjects()))
    sched = Scheduler(parsed, snap, None, registry, seed=seed, tie_break="first")
    sched.failure_detail = False  # an unschedulable pod is dropped at once: nobody reads why
    return sched


def run(
    nodes: Sequence[Node],
    pods: Sequence[Pod],
    policy: str,
    seed: int,
    typical: TypicalPods | None = None,
    *,
    keep_snapshot: bool = True,
    config: dict | None = None,
    until_percent: float | None = None,
    gpu_model: str = "annotations",
) -> RunResult:
    """Schedule ``pods`` strictly one at a time on ``nodes`` (tie-break order = list order).

    ``typical`` (the target workload) drives FGD and the fragmentation metrics; without it the
    frag arrays stay 0 and the FGD policy is refused. ``keep_snapshot=False`` leaves
    ``RunResult.snapshot`` None (a small result to send between processes). ``config`` runs that
    KubeSchedulerConfiguration instead of the policy's. ``until_percent`` stops after the first
    pod that takes arrived above that % (the events up to there are exactly a full run's).
    ``gpu_model="dra"`` writes the GPUs of ``nodes`` and ``pods`` the DRA way first (each pod's
    claim is made when it arrives and released when it is dropped).
    """
    t0 = time.perf_counter()
    if gpu_model not in GPU_MODELS:
        raise ValueError(f"unknown GPU model {gpu_model!r} (one of {', '.join(GPU_MODELS)})")
    asks = [pod_gpu_ask(pod) for pod in pods]
    dra = None
    if gpu_model == "dra":
        converted = to_dra(nodes, pods)
        nodes, pods, dra = converted.nodes, converted.pods, converted.objects
    sched = build_scheduler(nodes, policy, seed, typical, config=config, dra=dra)
    snap = sched.snapshot
    tracker = GpuMetricsTracker(snap, typical)
    n = len(pods)
    arrived = np.zeros(n, np.int64)
    used = np.zeros(n, np.int64)
    idle = np.zeros(n, np.int64)
    frag = np.zeros(n, np.float64)
    placed = np.zeros(n, bool)
    where: list[str | None] = [None] * n
    total = 0
    cap = tracker.update().capacity_milli
    stop = None if until_percent is None else until_percent * cap / 100.0
    with frozen_heap():  # the trace and the cluster outlive the loop: no full GC passes over them
        for i, pod in enumerate(pods):
            ask = asks[i]
            total += ask.total_milli if ask else 0
            if dra is not None:
                snap.dra.create_pod_claims(pod)  # the resourceclaim controller, as the pod is created
            sched.add_pending(pod)
            res = sched.schedule_one()
            if res is not None and res.node is not None:
                placed[i] = True
                where[i] = res.node
            else:
                sched.delete_pod(pod)  # unschedulable: dropped for good, never retried
                if dra is not None:
                    snap.dra.release_pod(pod)
            m = tracker.update()
            arrived[i], used[i], idle[i], frag[i] = total, m.allocated_milli, m.idle_milli, m.frag_milli
            if stop is not None and total > stop:
                n = i + 1
                arrived, used, idle, frag, placed, where = (
                    arrived[:n], used[:n], idle[:n], frag[:n], placed[:n], where[:n]
                )
                break
    return RunResult(
        policy,
        seed,
        cap,
        arrived,
        used,
        idle,
        frag,
        placed,
        where,
        time.perf_counter() - t0,
        snapshot=snap if keep_snapshot else None,
    )


def run_prepared(prep: Prepared, policy: str, *, keep_snapshot: bool = True, gpu_model: str = "annotations") -> RunResult:
    return run(prep.nodes, prep.pods, policy, prep.seed, prep.typical, keep_snapshot=keep_snapshot, gpu_model=gpu_model)

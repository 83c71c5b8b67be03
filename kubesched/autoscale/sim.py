"""The autoscaler as a component of the simulator: the same engine, clock, event queue and
scheduler as ``kubesched simulate``; the autoscaler's loop runs on engine timers and changes the
cluster through the engine's node hooks. ``simulate_elastic`` runs one replay and returns the
elastic metrics (docs/autoscaling.md defines each).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from kubesched.api.objects import Node, Pod
from kubesched.autoscale.config import GROUP_LABEL, AutoscalerConfig, NodeGroup, Prices
from kubesched.autoscale.core import ClusterAutoscaler
from kubesched.autoscale.health import never_ready
from kubesched.autoscale.karpenter import KarpenterLike
from kubesched.autoscale.nodepool import CAPACITY_TYPE, ON_DEMAND, SPOT
from kubesched.config import SchedulerConfig
from kubesched.framework.registry import Registry
from kubesched.framework.runtime import Framework
from kubesched.gpu.model import node_gpu_count
from kubesched.plugins import in_tree_registry
from kubesched.scheduler import ScheduleResult
from kubesched.sim.engine import Engine, SimOptions
from kubesched.sim.states import FAILED, QUEUED, RUNNING
from kubesched.sim.workload import Workload

FAIL_AFTER = 900.0  # a pod not bound within 15 minutes of its arrival counts as failed
SLOW_PENDING = 60.0  # the "pending over 60 s" share
SAMPLE_EVERY = 60.0  # time-series resolution (s)


@dataclass
class NodeLife:
    name: str
    group: str
    gpus: int
    price: float  # per hour
    requested: float  # asked for (or present from the start)
    ready: float | None = None  # registered with the cluster
    gone: float | None = None  # deleted, or given up on
    capacity_type: str = ON_DEMAND  # karpenter.sh/capacity-type (NodePools); spot is priced apart


@dataclass
class Ledger:
    """Every node the run paid for, from request to deletion (provisioning time included)."""

    nodes: dict[str, NodeLife] = field(default_factory=dict)

    def open(self, life: NodeLife) -> None:
        self.nodes[life.name] = life

    def close(self, name: str, t: float) -> None:
        life = self.nodes.get(name)
        if life is not None and life.gone is None:
            life.gone = t

    def provisioned(self) -> tuple[int, int]:
        """(nodes, GPUs) paid for right now."""
        n = g = 0
        for life in self.nodes.values():
            if life.gone is None:
                n += 1
                g += life.gpus
        return n, g


class SimView:
    """ClusterView over a running Engine: unschedulable = pending pods whose last attempt failed."""

    def __init__(self, eng: Engine) -> None:
        self.eng = eng
        self.snapshot = eng.snap
        self.unsched: dict[int, None] = {}  # pod indices, in the order they failed
        self.created_at: dict[int, float] = {}  # recreated pods: when they were created again
        self.first_bind: dict[int, float] = {}
        self.on_new_unschedulable: list[Any] = []
        eng.sched.hooks.on_failed.append(self._failed)
        eng.sched.hooks.on_scheduled.append(self._scheduled)

    def _failed(self, res: ScheduleResult) -> None:
        i = self.eng.index.get(res.pod.uid)
        if i is not None and i not in self.unsched:
            self.unsched[i] = None
            for fn in self.on_new_unschedulable:
                fn()

    def _scheduled(self, res: ScheduleResult) -> None:
        i = self.eng.index.get(res.pod.uid)
        if i is None or res.node is None:
            return
        self.unsched.pop(i, None)
        self.first_bind.setdefault(i, self.eng.clock.now)

    def now(self) -> float:
        return self.eng.clock.now

    def unschedulable(self) -> list[Pod]:
        st = self.eng.state
        gone = [i for i in self.unsched if st[i] != QUEUED]
        for i in gone:
            del self.unsched[i]
        return [self.eng.pods[i] for i in self.unsched]

    def created(self, pod: Pod) -> float:
        i = self.eng.index[pod.uid]
        return self.created_at.get(i, self.eng.arrival[i])

    def framework_for(self, pod: Pod) -> Framework | None:
        return self.eng.sched.frameworks.get(pod.scheduler_name)


class SimProvider:
    """NodeProvider of the simulator: a node registers after a drawn provisioning delay (never,
    when the delay is longer than maxNodeProvisionTime), Ready unless drawn among the
    ``neverReadyFraction`` that stay unready (kubesched.autoscale.health); deleting a node evicts its pods, which
    are created again and scheduled anew (their run starts over). A spot node (NodePools) costs
    the spot price and, with ``spot.interruptionRate``, is interrupted at a drawn time after it
    registers (kubesched.autoscale.spot): deleted as consolidation deletes, its pods evicted."""

    def __init__(self, eng: Engine, view: SimView, cfg: AutoscalerConfig, rng: np.random.Generator, ledger: Ledger, seed: int = 0) -> None:
        self.eng, self.view, self.cfg, self.rng, self.ledger = eng, view, cfg, rng, ledger
        self.cancelled: set[str] = set()
        self.evictions = 0
        self.lost_gpu_s = 0.0
        self.interruptions = 0
        self.spot_rng = np.random.default_rng([seed, 13])  # its own stream: other draws stay as they were
        # neverReadyFraction: which new nodes never become Ready, on a stream of their own
        self.ready_rng = np.random.default_rng([seed, 17]) if cfg.never_ready_fraction > 0 else None

    def create(self, group: NodeGroup, node: Node) -> None:
        now = self.eng.clock.now
        ct = node.labels.get(CAPACITY_TYPE, ON_DEMAND)
        price = self.cfg.spot.price(self.cfg.prices.node(group), ct)
        self.ledger.open(NodeLife(node.name, group.name, group.gpus, price, now, capacity_type=ct))
        delay = self.cfg.provisioning_delay.sample(self.rng)
        if delay < self.cfg.max_node_provision_time:
            self.eng.call_at(now + delay, lambda: self._register(node))

    def _register(self, node: Node) -> None:
        if node.name in self.cancelled:
            return
        now = self.eng.clock.now
        if self.ready_rng is not None and self.ready_rng.random() < self.cfg.never_ready_fraction:
            node = never_ready(node, now)
        self.eng.add_node(node)
        self.ledger.nodes[node.name].ready = now
        if node.labels.get(CAPACITY_TYPE) == SPOT:
            wait = self.cfg.spot.time_to_interruption(self.spot_rng)
            if math.isfinite(wait):
                self.eng.call_at(now + wait, lambda: self._interrupt(node.name))

    def _interrupt(self, name: str) -> None:
        life = self.ledger.nodes[name]
        if life.gone is None and name in self.eng.snap.row_of:
            self.interruptions += 1
            self.delete(name)

    def delete(self, name: str) -> None:
        eng = self.eng
        now = eng.clock.now
        for i in eng.remove_node(name, requeue=True):
            self.evictions += 1
            self.lost_gpu_s += eng.gpu_req[i] / 1000.0 * (now - eng.bind_time[i])  # the run it had
            self.view.created_at[i] = now
        self.ledger.close(name, now)

    def cancel(self, name: str) -> None:
        self.cancelled.add(name)
        self.ledger.close(name, self.eng.clock.now)


def base_ledger(nodes: list[Node], prices: Prices, groups: dict[str, NodeGroup], t0: float) -> Ledger:
    led = Ledger()
    for nd in nodes:
        g = groups.get(nd.labels.get(GROUP_LABEL, ""))
        price = prices.node(g) if g is not None else prices.of(nd.allocatable, node_gpu_count(nd) * 1000)
        led.open(NodeLife(nd.name, g.name if g else "", node_gpu_count(nd), price, t0, t0))
    return led


@dataclass
class ElasticResult:
    summary: dict[str, Any]
    series: dict[str, list[float]]  # time series, one sample per SAMPLE_EVERY
    pods: dict[str, list[Any]]


def simulate_elastic(
    config: SchedulerConfig,
    workload: Workload,
    autoscaler: AutoscalerConfig | None,
    *,
    end_time: float,
    seed: int = 0,
    registry: Registry | None = None,
    prices: Prices | None = None,
    start_time: float = 0.0,
    max_wait: float | None = None,
) -> ElasticResult:
    """One replay of ``workload`` in time mode until ``end_time``, with ``autoscaler`` (None: the
    cluster stays as ``workload.nodes``). Nodes of the workload that carry the node-group label
    belong to that group (they count towards its min and max). ``max_wait``: a pod pending that
    long is withdrawn (it has failed; the queue stays bounded on a cluster far too small)."""
    opts = SimOptions(mode="time", seed=seed, end_time=end_time, record_events=False, bins=10, max_wait=max_wait)
    eng = Engine(config, workload, registry or in_tree_registry(), opts)
    eng.sched.failure_detail = False
    view = SimView(eng)
    prices = autoscaler.prices if autoscaler is not None else (prices or Prices())
    groups = {g.name: g for g in autoscaler.node_groups} if autoscaler is not None else {}
    ledger = base_ledger(workload.nodes, prices, groups, start_time)
    rng = np.random.default_rng([seed, 7])
    keys = ("t", "nodes", "provisioning", "pending", "gpu_alloc", "gpu_ready", "gpu_provisioned", "gpu_needed")
    series: dict[str, list[float]] = {k: [] for k in keys}
    provider: SimProvider | None = None
    loop: ClusterAutoscaler | None = None
    if autoscaler is not None:
        provider = SimProvider(eng, view, autoscaler, rng, ledger, seed)
        cls = KarpenterLike if autoscaler.mode == "karpenter" else ClusterAutoscaler
        loop = cls(autoscaler, provider, np.random.default_rng([seed, 11]))
        _arm(eng, view, loop, autoscaler, start_time, end_time)

    def sample() -> None:
        n, g = ledger.provisioned()
        series["t"].append(eng.clock.now)
        series["nodes"].append(eng.snap.n)
        series["provisioning"].append(n - eng.snap.n)
        series["pending"].append(eng.n_queued)
        series["gpu_alloc"].append(eng.totals.allocated.gpu / 1000.0)
        series["gpu_ready"].append(eng.totals.capacity.gpu / 1000.0)
        series["gpu_provisioned"].append(g)
        queued = np.fromiter(eng.state, np.int8, len(eng.state)) == QUEUED  # arrived, not running
        series["gpu_needed"].append(series["gpu_alloc"][-1] + int(eng.gpu_req[queued].sum()) / 1000.0)
        if eng.clock.now + SAMPLE_EVERY <= end_time:
            eng.call_at(eng.clock.now + SAMPLE_EVERY, sample)

    eng.call_at(start_time, sample)
    t0, c0 = time.perf_counter(), time.process_time()
    eng.run()
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    summary = elastic_metrics(eng, view, ledger, provider, loop, start_time, end_time)
    summary["run"] = {
        "wall_s": wall,
        "cpu_s": cpu,
        "scheduling_attempts": eng.sched.attempts,
        "scheduler_s": eng.sched_wall,
        "events": eng.n_events,
    }
    a = eng.arrays()
    pods = {
        "pod": [p.key for p in eng.pods],
        "arrival": list(eng.arrival),
        "first_bind": [view.first_bind.get(i, math.nan) for i in range(len(eng.pods))],
        "gpu_milli": [int(x) for x in eng.gpu_req],
        "state": a["state"].tolist(),
    }
    return ElasticResult(summary, series, pods)


def _arm(eng: Engine, view: SimView, loop: ClusterAutoscaler, cfg: AutoscalerConfig, start: float, end: float) -> None:
    """Run the loop every scanInterval (CA); Karpenter-like: every second while a batch is open,
    and one batchIdleDuration after a pod first fails, else every scanInterval."""
    interval = cfg.scan_interval
    karpenter = isinstance(loop, KarpenterLike)
    pending_tick: list[float] = []

    def tick() -> None:
        if pending_tick and pending_tick[0] <= eng.clock.now:
            pending_tick.clear()
        loop.run_once(view)
        now = eng.clock.now
        step = 1.0 if karpenter and loop.batch_open() else interval
        if now + step <= end:
            at(now + step)

    def at(t: float) -> None:
        if pending_tick and pending_tick[0] <= t:
            return
        pending_tick[:] = [t]
        eng.call_at(t, tick)

    if karpenter:
        view.on_new_unschedulable.append(lambda: at(eng.clock.now + min(cfg.karpenter.batch_idle, interval)))
    at(start)


def _pct(x: np.ndarray, q: float) -> float | None:
    return float(np.percentile(x, q)) if x.size else None


def elastic_metrics(
    eng: Engine,
    view: SimView,
    ledger: Ledger,
    provider: SimProvider | None,
    loop: ClusterAutoscaler | None,
    start: float,
    end: float,
) -> dict[str, Any]:
    """The metrics of docs/autoscaling.md, over [start, end]."""
    n = len(eng.pods)
    arrival = np.asarray(eng.arrival, float)
    arrived = arrival <= end
    # pods bound from the start (a cluster dump's running pods) count as bound on arrival
    bind = np.asarray(
        [view.first_bind.get(i, eng.arrival[i] if eng.wl.pods[i].node_name else math.nan) for i in range(n)], float
    )
    pending = np.where(np.isnan(bind), end - arrival, bind - arrival)[arrived]
    failed = (pending > FAIL_AFTER).sum()
    # allocated GPU-seconds: every run of every pod, cut at the end
    st = eng.arrays()
    gpu = eng.gpu_req / 1000.0
    run_s = 0.0
    for i in range(n):
        b, state = eng.bind_time[i], st["state"][i]
        if math.isnan(b) or state in (QUEUED, FAILED):  # never ran, or evicted and not running again
            continue
        e = end if state == RUNNING else eng.end_time[i]
        run_s += gpu[i] * (min(e, end) - b)
    lost = provider.lost_gpu_s if provider else 0.0
    alloc_gpu_h = (run_s + lost) / 3600.0
    node_h = gpu_h = cost = spot_cost = 0.0
    for life in ledger.nodes.values():
        t1 = min(life.gone if life.gone is not None else end, end)
        h = max(0.0, t1 - max(life.requested, start)) / 3600.0
        node_h += h
        gpu_h += h * life.gpus
        cost += h * life.price
        if life.capacity_type == SPOT:
            spot_cost += h * life.price
    stats = loop.stats if loop is not None else None
    return {
        "pods": int(arrived.sum()),
        "bound": int((~np.isnan(bind) & arrived).sum()),
        "failed": int(failed),
        "failed_pct": 100.0 * failed / max(1, int(arrived.sum())),
        "pending_s": {
            "p50": _pct(pending, 50),
            "p95": _pct(pending, 95),
            "p99": _pct(pending, 99),
            "mean": float(pending.mean()) if pending.size else None,
            "over_60s_pct": 100.0 * float((pending > SLOW_PENDING).mean()) if pending.size else None,
        },
        "node_hours": node_h,
        "gpu_hours": gpu_h,
        "allocated_gpu_hours": alloc_gpu_h,
        "allocation_efficiency": alloc_gpu_h / gpu_h if gpu_h > 0 else None,
        "peak_nodes": _peak_nodes(ledger),
        "scale_ups": stats.scale_ups if stats else 0,
        "nodes_added": stats.nodes_added if stats else 0,
        "scale_downs": stats.scale_downs if stats else 0,
        "failed_nodes": stats.failed_nodes if stats else 0,
        "evictions": provider.evictions if provider else 0,
        "lost_gpu_seconds": lost,
        "cost": cost,
        "cost_spot": spot_cost,  # of cost: spot nodes at the spot price
        "cost_on_demand": cost - spot_cost,
        "spot_interruptions": provider.interruptions if provider else 0,
        "span_h": (end - start) / 3600.0,
    }


def _peak_nodes(ledger: Ledger) -> int:
    """Most nodes paid for at once (provisioning ones included)."""
    ev = []
    for life in ledger.nodes.values():
        ev.append((life.requested, 1))
        if life.gone is not None:
            ev.append((life.gone, -1))
    ev.sort(key=lambda x: (x[0], x[1]))
    cur = peak = 0
    for _, d in ev:
        cur += d
        peak = max(peak, cur)
    return peak

"""Run one scheduler_perf workload in memory and measure it as scheduler_perf does.

The whole scheduling path runs: the scheduling queue, the framework with the default profile
(kubesched.config.default_config), assume into the Snapshot, and bind through DefaultBinder to
a MemoryCluster. Init pods are scheduled by the same scheduler first, unmeasured, as upstream;
then the measured pods are queued and scheduled while each one's bind time is recorded with
``time.perf_counter``.

What is and is not timed:

* Parsing pod manifests (``Pod.parse``, the informer's decode upstream) happens before the
  measured phase starts; queueing the pods (``add_pending``) is inside it.
* Backoff waits are skipped: when only backed-off pods remain, the benchmark clock jumps to the
  next expiry instead of sleeping (``idle_skipped_s`` reports the total). Upstream really waits,
  so a workload whose pods back off (PreemptionBasic) looks faster here than upstream would.
* Churn pods are created (and parsed) inside the measured phase, as they arrive upstream.
* Throughput samples follow scheduler_perf's throughputCollector exactly (``sample_throughput``).
"""

from __future__ import annotations

import gc
import random
import time
from collections.abc import Callable
from dataclasses import KW_ONLY, asdict, dataclass, field
from typing import Any

from kubesched.api.objects import Node, Pod
from kubesched.api.selectors import LabelSelector
from kubesched.api.storage import CSINode, PersistentVolume, PersistentVolumeClaim
from kubesched.bench import dra as D
from kubesched.bench import resource_templates as R
from kubesched.bench import templates as T
from kubesched.bench.measure import (
    Throughput,
    current_rss_mib,
    peak_rss_mib,
    reset_peak_rss,
    throughput,
)
from kubesched.bench.ops import (
    AllocClaims,
    BindPods,
    Churn,
    CreateDraObject,
    CreateNamespaces,
    CreateNodes,
    CreatePods,
    CreatePodSets,
    CreateResourceDriver,
    CreateService,
    SteadyPods,
)
from kubesched.bench.workloads import BenchWorkload
from kubesched.cluster.memory import MemoryCluster
from kubesched.config import default_config
from kubesched.heap import frozen_heap
from kubesched.plugins import in_tree_registry
from kubesched.scheduler import Scheduler, ScheduleResult
from kubesched.state.snapshot import Snapshot

Progress = Callable[[str, int, int], None]  # (phase, done, total)


# ---- the clock -------------------------------------------------------------------------------
class BenchClock:
    """Real elapsed time while the scheduler works; idle waits for backoff are skipped.

    The scheduling queue (backoff, timestamps) and churn both read it, so a pod backing off
    for 1 s comes back after 1 s of work or at once when nothing else is left to do.
    """

    def __init__(self) -> None:
        self._t0 = time.perf_counter()
        self.skipped = 0.0

    def __call__(self) -> float:
        return time.perf_counter() - self._t0 + self.skipped

    def advance(self, t: float) -> None:
        now = self()
        if t > now:
            self.skipped += t - now


# ---- results ---------------------------------------------------------------------------------
@dataclass
class BenchResult:
    workload: str
    test_case: str
    name: str
    scale: float
    seed: int
    params: dict[str, int]
    nodes: int
    init_pods: int
    measured_pods: int
    threshold: float | None
    target: float | None
    throughput: Throughput
    wall_s: float  # measured phase: queueing the pods to the last one handled
    cpu_s: float  # CPU time of this process in the measured phase (steadier than wall on a shared host)
    setup_s: float  # nodes, namespaces, init pods created and scheduled
    scheduled: int  # measured pods bound
    unschedulable: int  # measured pods left unbound
    init_scheduled: int
    init_unschedulable: int
    bound_pods: int  # pods bound without scheduling (BindPods)
    churn_created: int
    churn_scheduled: int
    preempted: int  # victims deleted by preemption, whole run
    attempts: int  # scheduling attempts in the measured phase
    idle_skipped_s: float
    peak_rss_mib: float
    rss_start_mib: float | None
    note: str = ""
    kernel_pods_per_s: float | None = None  # bare numpy kernel, shown beside SchedulingBasic
    extra: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        tp = d.pop("throughput")
        d["throughput"] = {
            "metric": "SchedulingThroughput",
            "unit": "pods/s",
            "Average": tp["average"],
            "Perc50": tp["perc50"],
            "Perc90": tp["perc90"],
            "Perc95": tp["perc95"],
            "Perc99": tp["perc99"],
            "samples": tp["samples"],
            "overall": tp["overall"],
            "headline": self.throughput.headline,
        }
        return d


# ---- the run ---------------------------------------------------------------------------------
INIT, MEASURED, CHURN = "init", "measured", "churn"


@dataclass(eq=False)
class WorkloadRun:
    """One workload's world: snapshot, in-memory cluster, scheduler, and the pods it created."""

    workload: BenchWorkload
    params: dict[str, int]
    _: KW_ONLY
    seed: int = 0
    progress: Progress | None = None
    churn_every: int | None = None
    steady_batches: int | None = None
    default_tolerations: bool = True

    def __post_init__(self) -> None:
        self.names = T.NameGenerator(self.seed)
        self.registry = in_tree_registry()
        self.config = default_config(self.registry.points_of)
        self.snapshot = Snapshot()
        self.cluster = MemoryCluster()
        self.clock = BenchClock()
        self.scheduler = Scheduler(
            self.config, self.snapshot, self.cluster, self.registry, seed=self.seed, clock=self.clock
        )
        self.scheduler.hooks.on_scheduled.append(self._on_scheduled)
        self.group: dict[str, str] = {}  # pod uid -> INIT | MEASURED | CHURN
        self.created = {INIT: 0, MEASURED: 0, CHURN: 0}
        self.scheduled = {INIT: 0, MEASURED: 0, CHURN: 0}
        self.bound_pods = 0
        self.nodes_created = 0  # createNodes' nextNodeIndex: a node template's {index}
        self.steady_in_flight = 0  # steady state: pods of the batch the time ran out on
        self.measured_times: list[float] = []
        self.placements: dict[str, str] = {}  # uid -> node, every pod the scheduler bound
        self._factories: dict[str, T.PodFactory] = {}
        self._churn: Churn | None = None
        self._churn_ns = ""
        self._phase = ""
        self._phase_total = 0

    # ---- creating objects --------------------------------------------------------------------
    def factory(self, template: str) -> T.PodFactory:
        f = self._factories.get(template)
        if f is None:
            f = T.PodFactory(
                T.POD_TEMPLATES[template](), self.names, default_tolerations=self.default_tolerations
            )
            self._factories[template] = f
        return f

    def ensure_namespace(self, ns: str, labels: dict[str, str] | None = None) -> None:
        if ns not in self.snapshot.namespaces:
            self.snapshot.set_namespace(ns, dict(labels or {}))

    def create_nodes(self, op: CreateNodes, op_index: int) -> None:
        count = self.workload.count(op.count, self.params)
        strategy = op.allocatable
        csi_nodes = []
        for i in range(count):
            tpl = T.base_node(op_index) if op.template is None else T.NODE_TEMPLATES[op.template]()
            label = (op.label_key, op.label_values[i % len(op.label_values)]) if op.label_key else None
            wire = T.instantiate_node(tpl, self.names, label, self.nodes_created)
            self.nodes_created += 1
            if strategy is not None:  # nodeAllocatableStrategy: a patch of allocatable, the CSINode
                wire["status"]["allocatable"].update(strategy.node_allocatable)
                name = wire["metadata"]["name"]
                csi = R.csi_node(name, dict(strategy.csi_drivers), strategy.migrated_plugins)
                csi_nodes.append(CSINode.parse(csi, f"CSINode {name}"))
            self.snapshot.add_node(Node.parse(wire))
        if csi_nodes:
            self.snapshot.storage.load(csi_nodes)

    def create_pods(
        self, template: str, namespace: str, count: int, group: str, volume: str | None = None
    ) -> list[Pod]:
        """``count`` pods of ``template``; with ``volume`` each gets its bound PV and PVC first.
        Claims the pods' templates call for are made as the resourceclaim controller would."""
        self.ensure_namespace(namespace)
        make = self.factory(template)
        out = []
        storage = []
        for i in range(count):
            wire = make(namespace)
            if volume is not None:
                pv, pvc = R.bound_volume(volume, namespace, i)
                storage += [PersistentVolume.parse(pv, "PersistentVolume"), PersistentVolumeClaim.parse(pvc, "PersistentVolumeClaim")]
                wire["spec"]["volumes"] = [R.pod_volume(pvc["metadata"]["name"])]
            pod = Pod.parse(wire)
            self.group[pod.uid] = group
            self.cluster.pods[pod.uid] = pod  # the "API server" copy; bind replaces it
            out.append(pod)
        if storage:
            self.snapshot.storage.load(storage)
        D.make_pod_claims(self.snapshot.dra, out)
        self.created[group] += count
        return out

    def delete_pods(self, uids: list[str]) -> None:
        """Pods deleted from the cluster, with the claims made for them."""
        for uid in uids:
            pod = self.snapshot.pod_by_uid.get(uid) or self.cluster.pods.get(uid)
            self.cluster.pods.pop(uid, None)
            self.cluster.bindings.pop(uid, None)
            if pod is not None:
                self.scheduler.delete_pod(pod)
                self.snapshot.dra.release_pod(pod)  # the resourceclaim controller deletes its claims

    def bind_pods(self, op: BindPods) -> None:
        """Bound pods straight onto nodes, round-robin, as a loaded cluster dump holds them."""
        count = self.workload.count(op.count, self.params)
        self.ensure_namespace(op.namespace)
        make = self.factory(op.template)
        nodes = self.snapshot.nodes
        for k in range(count):
            wire = make(op.namespace)
            node = nodes[k % len(nodes)].name
            wire["spec"]["nodeName"] = node
            pod = Pod.parse(wire)
            self.snapshot.add_pod(pod)
            self.cluster.pods[pod.uid] = pod
            self.cluster.bindings[pod.uid] = node
            self._report("bind", k + 1, count)
        self.bound_pods += count

    def add_service(self, op: CreateService) -> None:
        svc = T.service()
        self.ensure_namespace(op.namespace)
        name = self.names(svc["metadata"]["generateName"], "Service", op.namespace)
        sel = LabelSelector.parse({"matchLabels": svc["spec"]["selector"]}, "service.spec.selector")
        self.snapshot.workload_selectors.append(("Service", op.namespace, name, sel))

    # ---- scheduling --------------------------------------------------------------------------
    def _on_scheduled(self, res: ScheduleResult) -> None:
        uid = res.pod.uid
        g = self.group.get(uid)
        if g is None:
            return
        if g == MEASURED:
            self.measured_times.append(time.perf_counter())
        self.scheduled[g] += 1
        if res.node is not None:
            self.placements[uid] = res.node
        if g == self._phase:
            self._report(g, self.scheduled[g], self._phase_total)

    def _report(self, phase: str, done: int, total: int) -> None:
        """Progress every 0.5% (and at the end): cheap enough inside the measured phase."""
        if self.progress is not None and (done % max(1, total // 200) == 0 or done == total):
            self.progress(phase, done, total)

    def _drain(
        self, group: str, target: int, churn: _ChurnDriver | None = None, deadline: float | None = None
    ) -> None:
        """Schedule until ``target`` pods of ``group`` are bound, nothing is left to try, or the
        bench clock reaches ``deadline``."""
        sched = self.scheduler
        self._phase, self._phase_total = group, target
        while self.scheduled[group] < target:
            if deadline is not None and self.clock() >= deadline:
                break
            if churn is not None:
                churn.tick()
            if sched.schedule_one() is None:
                nxt = sched.queue.next_backoff_expiry()
                if nxt is None:
                    break
                self.clock.advance(nxt)

    def _enqueue(self, pods: list[Pod]) -> None:
        """Queue the pods and drop the list: only the queue and the cluster hold them, as live."""
        for pod in pods:
            self.scheduler.add_pending(pod)
        pods.clear()

    def schedule_init(self, pods: list[Pod]) -> None:
        target = self.scheduled[INIT] + len(pods)
        self._enqueue(pods)
        self._drain(INIT, target)

    def run_steady(self, op: SteadyPods) -> None:
        """createPods in steady state: ``op.count`` pods; when all are bound they are deleted
        (and their claims) and a new batch is created, until the duration is over on the bench
        clock (or, for tests, ``steady_batches`` batches are done). A batch that cannot complete
        ends the phase: its unbound pods are unschedulable."""
        deadline = None if self.steady_batches is not None else self.clock() + self.params[op.duration_param] / 1000
        batches = 0
        while self.steady_batches is None or batches < self.steady_batches:
            pods = self.create_pods(op.template, op.namespace, op.count, MEASURED)
            uids = [p.uid for p in pods]
            target = self.scheduled[MEASURED] + len(pods)
            self._enqueue(pods)
            self._drain(MEASURED, target, deadline=deadline)
            if self.scheduled[MEASURED] < target:
                if deadline is not None and self.clock() >= deadline:
                    self.steady_in_flight = target - self.scheduled[MEASURED]
                return
            batches += 1
            self.delete_pods(uids)

    def run(self) -> BenchResult:
        wl = self.workload
        gc.collect()
        rss_start = current_rss_mib()
        reset_peak_rss()
        t_setup = time.perf_counter()
        measured: tuple[CreatePods | SteadyPods, int] | None = None
        for i, op in enumerate(wl.ops):
            if isinstance(op, CreateNodes):
                self.create_nodes(op, i)
            elif isinstance(op, CreateResourceDriver):
                devices = wl.count(op.max_claims_per_node, self.params)
                D.create_resource_driver(self.snapshot.dra, self.snapshot.nodes, op.driver, op.nodes, devices)
            elif isinstance(op, CreateDraObject):
                if op.namespace:
                    self.ensure_namespace(op.namespace)
                D.create_objects(self.snapshot.dra, op.template, op.namespace, wl.count(op.count, self.params))
            elif isinstance(op, AllocClaims):
                D.allocate_claims(self.snapshot.dra, self.snapshot.nodes, op.namespace, random.Random(self.seed))
            elif isinstance(op, SteadyPods):
                measured = (op, i)
            elif isinstance(op, CreateNamespaces):
                for k in range(wl.count(op.count, self.params)):
                    self.ensure_namespace(f"{op.prefix}-{k}", dict(op.labels or {}))
            elif isinstance(op, CreateService):
                self.add_service(op)
            elif isinstance(op, Churn):
                self._churn, self._churn_ns = op, f"namespace-{i}"
            elif isinstance(op, BindPods):
                self.bind_pods(op)
            elif isinstance(op, CreatePodSets):
                pods: list[Pod] = []
                per = wl.count(op.per_namespace, self.params)
                for k in range(wl.count(op.count, self.params)):
                    pods += self.create_pods(op.template, f"{op.namespace_prefix}-{k}", per, INIT)
                self.schedule_init(pods)
            elif isinstance(op, CreatePods):
                if op.measured:
                    measured = (op, i)
                    continue
                ns = op.namespace or f"namespace-{i}"
                count = wl.count(op.count, self.params)
                self.schedule_init(self.create_pods(op.template, ns, count, INIT, op.volume))
        setup_s = time.perf_counter() - t_setup

        attempts0 = self.scheduler.attempts
        skipped0 = self.clock.skipped
        start = end = time.perf_counter()
        cpu0 = cpu1 = time.process_time()
        if measured is not None and isinstance(measured[0], SteadyPods):
            with frozen_heap():
                start, cpu0 = time.perf_counter(), time.process_time()
                self.run_steady(measured[0])
                end, cpu1 = time.perf_counter(), time.process_time()
        elif measured is not None:
            op, i = measured
            ns = op.namespace or f"namespace-{i}"
            pods = self.create_pods(op.template, ns, wl.count(op.count, self.params), MEASURED, op.volume)
            churn = None
            if self._churn is not None:
                churn = _ChurnDriver(self, self._churn, self._churn_ns, self.churn_every)
            with frozen_heap():  # the cluster set up so far lives through the phase, as in a live scheduler
                start, cpu0 = time.perf_counter(), time.process_time()
                if churn is not None:
                    churn.start()
                total = len(pods)
                self._enqueue(pods)
                self._drain(MEASURED, total, churn)
                end, cpu1 = time.perf_counter(), time.process_time()
        return self._result(setup_s, start, end, cpu1 - cpu0, attempts0, skipped0, rss_start)

    def _result(
        self,
        setup_s: float,
        start: float,
        end: float,
        cpu_s: float,
        attempts0: int,
        skipped0: float,
        rss_start: float | None,
    ) -> BenchResult:
        wl = self.workload
        init_created = self.created[INIT]
        return BenchResult(
            workload=wl.full_name,
            test_case=wl.test_case,
            name=wl.name,
            scale=0.0,  # run_workload fills in the scale the params came from
            seed=self.seed,
            params=dict(self.params),
            nodes=self.snapshot.n,
            init_pods=init_created,
            measured_pods=self.created[MEASURED],
            threshold=wl.threshold,
            target=wl.target,
            throughput=throughput(self.measured_times, start),
            wall_s=end - start,
            cpu_s=cpu_s,
            setup_s=setup_s,
            scheduled=self.scheduled[MEASURED],
            unschedulable=self.created[MEASURED] - self.scheduled[MEASURED] - self.steady_in_flight,
            init_scheduled=self.scheduled[INIT],
            init_unschedulable=init_created - self.scheduled[INIT],
            bound_pods=self.bound_pods,
            churn_created=self.created[CHURN],
            churn_scheduled=self.scheduled[CHURN],
            preempted=len(self.cluster.deleted),
            attempts=self.scheduler.attempts - attempts0,
            idle_skipped_s=self.clock.skipped - skipped0,
            peak_rss_mib=peak_rss_mib(),
            rss_start_mib=rss_start,
            note=wl.note,
            extra={"steady_in_flight": self.steady_in_flight} if self.steady_in_flight else {},
        )


class _ChurnDriver:
    """churn mode create: a new pod every interval on the bench clock (or every N cycles)."""

    def __init__(self, run: WorkloadRun, op: Churn, namespace: str, every_cycles: int | None) -> None:
        self.run = run
        self.op = op
        self.namespace = namespace
        self.interval = op.interval_ms / 1000.0
        self.every_cycles = every_cycles
        self.next_at = 0.0
        self.cycles = 0

    def start(self) -> None:
        # time.Ticker semantics: the first pod comes one interval after the op starts
        self.next_at = self.run.clock() + self.interval

    def _create(self) -> None:
        for pod in self.run.create_pods(self.op.template, self.namespace, 1, CHURN):
            self.run.scheduler.add_pending(pod)

    def tick(self) -> None:
        if self.every_cycles is not None:
            self.cycles += 1
            if self.cycles % self.every_cycles == 0:
                self._create()
            return
        now = self.run.clock()
        while now >= self.next_at:
            self._create()
            self.next_at += self.interval


def run_workload(
    workload: BenchWorkload,
    *,
    scale: float = 1.0,
    nodes: int | None = None,
    pods: int | None = None,
    seed: int = 0,
    progress: Progress | None = None,
    churn_every: int | None = None,
    steady_batches: int | None = None,
) -> BenchResult:
    """Build and run one workload; ``churn_every`` makes churn deterministic (every N cycles) and
    ``steady_batches`` a steady-state phase a number of batches instead of a duration, for tests."""
    params = workload.resolve(scale, nodes, pods)
    run = WorkloadRun(
        workload, params, seed=seed, progress=progress, churn_every=churn_every, steady_batches=steady_batches
    )
    res = run.run()
    res.scale, res.seed = scale, seed
    return res

"""One run of the edge–cloud experiment: a mode, a seed, the openb arrivals through member clusters.

Every site is a member cluster simulated by kubesched's simulator (``kubesched.sim.Engine``, its
scheduler, queue, backoff and metrics), driven on one shared clock. A pod arrives at its scaled
openb creation time with a home edge and a latency class; then, by mode:

- ``isolated``: it goes to its home edge and waits in that cluster's queue;
- ``cloud-only``: it goes to the cloud, unless the cloud is beyond its class's latency budget (then
  it fails at once: no cluster within budget);
- ``collaborative``: Karmada's pipeline decides, with ordered affinity terms (home edge, the other
  edges, the cloud), one cluster (spread ``maxGroups: 1``, Aggregated), the LatencyBudget filter
  and the NetworkOverhead score, and the simulated estimator (the member's scheduler) for
  available replicas. A pod no term can take waits at the federation level and is decided again
  whenever a member changes, as Karmada retries an unschedulable binding.

A pod not bound within its class's timeout fails (``timeout``), wherever it waits. Sites can go
offline and come back (``outage.py``): a pod lost with its site fails (``offline``) unless the
collaborative mode fails it over.
"""

from __future__ import annotations

import heapq
import math
import time
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from kubesched.api.objects import Node, Pod
from kubesched.multicluster.api import Binding, Cluster, parse_placement
from kubesched.multicluster.experiment.outage import Outage
from kubesched.multicluster.federation import Federation
from kubesched.multicluster.member import MemberCluster
from kubesched.multicluster.network import LATENCY_CLASS, USER_REGION, LatencyTable, Network, azure_table_path
from kubesched.multicluster.taints import TRUE, UNKNOWN, TimedTaint, taint_cluster_by_condition
from kubesched.sim.driver import WITHDRAW
from kubesched.sim.engine import Engine, SimOptions
from kubesched.sim.states import DONE, EVICTED, QUEUED, RUNNING
from kubesched.sim.totals import Levels
from kubesched.sim.workload import Workload

MODES = ("isolated", "cloud-only", "collaborative")
ARRIVE, DEADLINE, OFFLINE, BACK = 0, 1, 2, 3  # heap events: a pod's (index), a site's (outage index)
GPU_CONFIG = {
    "apiVersion": "kubescheduler.config.k8s.io/v1",
    "kind": "KubeSchedulerConfiguration",
    "profiles": [{"schedulerName": "default-scheduler", "plugins": {"multiPoint": {"enabled": [{"name": "Open-Gpu-Share"}]}}}],
}


@dataclass
class Prepared:
    """What every run shares: the sites' nodes, the pods (scaled arrivals), their classes."""

    scenario: Any
    site_nodes: dict[str, list[Node]]
    pods: list[Pod]
    arrival: list[float]
    duration: list[float | None]
    qos: list[str]
    network: Network
    end: float  # the runs end here: last arrival plus the longest class timeout
    window_start: float | None = None  # trace seconds after the first pod, when a window is replayed


def prepare(scenario, limit: int | None = None) -> Prepared:  # noqa: ANN001
    from kubesched.multicluster.experiment.scenario import qos_of_pods
    from kubesched.multicluster.experiment.window import select
    from kubesched.sim.openb import load_openb
    from kubesched.trace import bundled

    wl = load_openb(scenario.trace, scenario.nodes)
    t0 = min(wl.arrival) if wl.arrival else 0.0
    window_start = None
    if scenario.window_days is not None:
        wl, start = select(wl, scenario.window_days, scenario.window_start_days)
        window_start, t0 = start - t0, start
    if limit:
        wl = wl.head(limit)
    qos_by_name = qos_of_pods(bundled.pod_list(scenario.trace))
    order = np.random.default_rng(scenario.split_seed).permutation(len(wl.nodes))
    nodes = [wl.nodes[i] for i in order]
    site_nodes: dict[str, list[Node]] = {}
    k = 0
    for s in scenario.edges:
        n = int(round(s.share * len(nodes)))
        site_nodes[s.name] = nodes[k : k + n]
        k += n
    cloud = scenario.cloud[0]
    site_nodes[cloud.name] = nodes[k : k + int(round(cloud.share * len(nodes)))] if cloud.share else nodes[k:]
    arrival = [(a - t0) / scenario.time_scale for a in wl.arrival]
    net = Network(LatencyTable.read(azure_table_path()), scenario.access_rtt_ms, scenario.classes(), scenario.default_class)
    qos = [qos_by_name.get(p.name, "") for p in wl.pods]
    longest = max((c.timeout_s or 0.0 for c in scenario.qos_classes.values()), default=0.0)
    end = (max(arrival) if arrival else 0.0) + longest
    return Prepared(scenario, site_nodes, list(wl.pods), arrival, list(wl.duration), qos, net, end, window_start)


@dataclass
class RunOutput:
    mode: str
    seed: int
    home: np.ndarray  # site index of each pod's users
    site: np.ndarray  # site index where it was bound, -1 if never
    reason: list[str]  # "" placed, "timeout", "budget", "offline" (lost with its site)
    bind_time: np.ndarray
    engines: dict[str, Engine] = field(default_factory=dict)
    decide_s: float = 0.0
    wall_s: float = 0.0
    decisions: int = 0
    failovers: int = 0  # pods evicted from an offline site and decided again (collaborative)
    #: each site's time-weighted allocation (% of capacity: cpu, memory, gpu, ...) from the start
    #: to the last arrival: the clusters under load, without the drain after it
    while_arriving: dict[str, Levels] = field(default_factory=dict)


def _class_of(prep: Prepared, i: int):  # noqa: ANN202
    c = prep.scenario.qos_classes.get(prep.qos[i])
    return c if c is not None else prep.network.classes.get(prep.scenario.default_class)


def run(prep: Prepared, mode: str, seed: int, *, record_events: bool = False, bins: int = 100) -> RunOutput:
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}")
    t_start = time.perf_counter()
    replay = _Replay(prep, mode, seed, record_events, bins)
    while True:
        t = replay.next_time()
        if t > prep.end or not math.isfinite(t):
            break
        replay.t = t
        changed = replay.advance()
        while replay.heap and replay.heap[0][0] == t:
            _, kind, i = heapq.heappop(replay.heap)
            if kind == DEADLINE:
                # a pod failed over since has a later deadline: this one is past
                if replay.deadline[i] == t and replay.waiting.pop(i, None) is not None:
                    replay.out.reason[i] = "timeout"
            elif kind == ARRIVE:
                replay.arrive(i)
            else:
                replay.outage(prep.scenario.outages[i], kind == OFFLINE)
                changed = True
        if changed and replay.waiting:
            replay.retry()
        if not replay.out.while_arriving and t >= replay.last_arrival:
            replay.measure_load()
    out = replay.finish()
    out.wall_s = time.perf_counter() - t_start
    return out


def _homes(prep: Prepared, seed: int) -> np.ndarray:
    """The site index of each pod's users: an edge drawn by the edges' user weights."""
    edges = prep.scenario.edges
    idx = {s.name: k for k, s in enumerate(prep.scenario.sites)}
    rng = np.random.default_rng([seed, 7])
    weights = np.asarray([s.users for s in edges], float)
    picks = rng.choice(len(edges), size=len(prep.pods), p=weights / weights.sum())
    return np.asarray([idx[edges[j].name] for j in picks], np.int64)


def _engines(prep: Prepared, seed: int, record_events: bool, bins: int) -> dict[str, Engine]:
    """One simulator per site, opened over the run's span."""
    from kubesched.app import build_registry
    from kubesched.config.load import parse_config

    sc, n = prep.scenario, len(prep.pods)
    registry = build_registry([])
    config = parse_config(GPU_CONFIG, "edge-cloud scenario", registry.points_of)
    engines: dict[str, Engine] = {}
    for k, s in enumerate(sc.sites):
        wl = Workload(prep.site_nodes[s.name], prep.pods, [math.nan] * n, prep.duration, source=f"{sc.trace} at {s.name}")
        opts = SimOptions(mode="time", seed=seed * 100 + k, bins=bins, record_events=record_events)
        eng = Engine(config, wl, registry, opts)
        eng.open(0.0, prep.end)
        engines[s.name] = eng
    return engines


class _Replay:
    """One run's state: the member clusters on one clock, the arrivals and deadlines to come, and
    the pods waiting at the federation level (collaborative mode)."""

    def __init__(self, prep: Prepared, mode: str, seed: int, record_events: bool, bins: int) -> None:
        n = len(prep.pods)
        self.prep, self.mode = prep, mode
        self.sites = list(prep.scenario.sites)
        self.idx = {s.name: k for k, s in enumerate(self.sites)}
        self.engines = _engines(prep, seed, record_events, bins)
        self.out = RunOutput(mode, seed, _homes(prep, seed), np.full(n, -1, np.int64), [""] * n, np.full(n, math.nan),
                             self.engines)
        self.deadline = [math.inf] * n
        self.fed = _federation(prep, self.engines) if mode == "collaborative" else None
        self.heap: list[tuple[float, int, int]] = [(a, ARRIVE, i) for i, a in enumerate(prep.arrival)]
        for k, o in enumerate(prep.scenario.outages):
            self.heap.append((o.offline, OFFLINE, k))
            if o.back is not None:
                self.heap.append((o.back, BACK, k))
        heapq.heapify(self.heap)
        self.waiting: dict[int, Binding] = {}
        # each cluster's next event time; a cluster with nothing to do before t is left behind (its
        # state cannot change meanwhile) and catches up when it next runs or receives a pod
        self.nxt = {name: e.next_time() for name, e in self.engines.items()}
        self.t = 0.0
        self.last_arrival = max(prep.arrival, default=0.0)

    def measure_load(self) -> None:
        """Each cluster's mean allocation so far (called at the last arrival)."""
        for name, e in self.engines.items():
            e.run_until(self.t)
            self.nxt[name] = e.next_time()
            self.out.while_arriving[name] = e.totals.mean()

    def next_time(self) -> float:
        return min(self.heap[0][0] if self.heap else math.inf, min(self.nxt.values()))

    def advance(self) -> bool:
        """Run the clusters with events due by now; whether any of them changed."""
        changed = False
        for name, e in self.engines.items():
            if self.nxt[name] <= self.t:
                gen = e.snap.generation
                e.run_until(self.t)
                self.nxt[name] = e.next_time()
                changed |= e.snap.generation != gen
        return changed

    def send(self, i: int, site_name: str) -> None:
        self.out.site[i] = self.idx[site_name]
        eng = self.engines[site_name]
        eng.run_until(self.t)
        eng.submit(i, self.deadline[i])
        self.nxt[site_name] = eng.next_time()

    def decide(self, i: int, b: Binding) -> bool:
        t0 = time.perf_counter()
        d = self.fed.decide(b)  # type: ignore[union-attr]
        self.out.decide_s += time.perf_counter() - t0
        self.out.decisions += 1
        if d.scheduled:
            self.send(i, d.clusters[0].name)
        return d.scheduled

    def arrive(self, i: int) -> None:
        """Pod ``i`` arrives: to its home edge, to the cloud, or to the federation, by mode."""
        prep, cls = self.prep, _class_of(self.prep, i)
        self.deadline[i] = self.t + (cls.timeout_s if cls and cls.timeout_s is not None else math.inf)
        h = self.sites[self.out.home[i]]
        if self.mode == "isolated":
            self.send(i, h.name)
        elif self.mode == "cloud-only":
            cloud = prep.scenario.cloud[0]
            rtt = prep.network.user_rtt(h.region, Cluster(cloud.name, region=cloud.region))
            if cls is not None and cls.budget_ms is not None and (rtt is None or rtt > cls.budget_ms):
                self.out.reason[i] = "budget"
            else:
                self.send(i, cloud.name)
        else:
            b = _binding(prep, i, h.name, h.region, self.class_name(i))
            if not self.decide(i, b):
                self.waiting[i] = b
                heapq.heappush(self.heap, (self.deadline[i], DEADLINE, i))

    def outage(self, o: Outage, offline: bool) -> None:
        """Site ``o.site`` goes offline (its nodes and running pods go; collaborative mode taints
        it and fails its pods over) or comes back (its nodes return, the taint goes)."""
        name, eng = o.site, self.engines[o.site]
        nodes = self.prep.site_nodes[name]
        lost: list[int] = []
        # as a timer of the member's own timeline, so that its scheduler runs right after
        if offline:
            eng.call_at(self.t, lambda: lost.extend(i for node in nodes for i in eng.remove_node(node.name)))
        else:
            eng.call_at(self.t, lambda: [eng.add_node(node) for node in nodes])
        eng.run_until(self.t)
        if self.fed is not None:  # Ready turns Unknown, then True: the cluster controller's taints
            member = self.fed.by_name[name]
            timed = [TimedTaint(t, None) for t in member.cluster.taints]
            ready = UNKNOWN if offline else TRUE
            member.cluster = replace(member.cluster, taints=tuple(t.taint for t in taint_cluster_by_condition(ready, timed, self.t)))
        if not offline:
            self.nxt[name] = eng.next_time()
            return
        if self.fed is not None:
            k = self.idx[name]
            pending = [i for i in np.nonzero(self.out.site == k)[0] if eng.state[i] == QUEUED]
            for i in pending:
                eng.push(self.t, WITHDRAW, int(i))
            eng.run_until(self.t)
            for i in lost:  # placed in time once: a new class timeout to be placed again
                cls = _class_of(self.prep, i)
                self.deadline[i] = self.t + (cls.timeout_s if cls and cls.timeout_s is not None else math.inf)
            for i in sorted([*lost, *map(int, pending)]):
                self.out.site[i] = -1
                self.out.failovers += 1
                home = self.sites[self.out.home[i]]
                b = _binding(self.prep, i, home.name, home.region, self.class_name(i))
                if not self.decide(i, b):
                    self.waiting[i] = b
                    heapq.heappush(self.heap, (self.deadline[i], DEADLINE, i))
        self.nxt[name] = eng.next_time()

    def class_name(self, i: int) -> str:
        cls = _class_of(self.prep, i)
        return cls.name if cls else ""

    def retry(self) -> None:
        """Decide the waiting pods again after a member changed. Decisions only fail from too
        little room, and placing a pod never frees any: once a pod fails, the others with the
        same users, class and shape fail too this round."""
        failed: set[tuple] = set()
        for i in sorted(self.waiting):
            pod = self.prep.pods[i]
            key = (self.out.home[i], self.prep.qos[i], pod.signature(), _gpu_key(pod))
            if key in failed:
                continue
            if self.decide(i, self.waiting[i]):
                del self.waiting[i]
            else:
                failed.add(key)

    def finish(self) -> RunOutput:
        """Close the clusters; pods still waiting, or sent but never bound, timed out."""
        out = self.out
        for i in self.waiting:
            out.reason[i] = "timeout"
        for e in self.engines.values():
            e.close(self.prep.end)
        for i in range(len(self.prep.pods)):
            if out.site[i] >= 0:
                eng = self.engines[self.sites[out.site[i]].name]
                if eng.state[i] in (RUNNING, DONE):
                    out.bind_time[i] = eng.bind_time[i]
                elif eng.state[i] == EVICTED:  # its run ended with its site, and nothing placed it again
                    out.reason[i] = "offline"
                else:
                    out.reason[i] = "timeout"
        return out


def _gpu_key(pod: Pod) -> tuple:
    return tuple(sorted(pod.annotations.items()))


def _binding(prep: Prepared, i: int, home: str, region: str, cls: str) -> Binding:
    pod = prep.pods[i]
    placement = _placement(home)
    ann = {USER_REGION: region, LATENCY_CLASS: cls}
    return Binding("v1", "Pod", pod.namespace, pod.name, pod.uid, 1, pod, placement, annotations=ann, requirements=True,
                   policy=f"PropagationPolicy {pod.namespace}/{home}")


_PLACEMENTS: dict[str, Any] = {}


def _placement(home: str):  # noqa: ANN202
    """The collaborative policy of users homed at ``home``: home edge, other edges, cloud."""
    if home not in _PLACEMENTS:
        _PLACEMENTS[home] = parse_placement(
            {
                "clusterAffinities": [
                    {"affinityName": "home-edge", "clusterNames": [home]},
                    {"affinityName": "other-edges", "labelSelector": {"matchLabels": {"tier": "edge"}}, "exclude": [home]},
                    {"affinityName": "cloud", "labelSelector": {"matchLabels": {"tier": "cloud"}}},
                ],
                "spreadConstraints": [{"spreadByField": "cluster", "maxGroups": 1, "minGroups": 1}],
                "replicaScheduling": {"replicaSchedulingType": "Divided", "replicaDivisionPreference": "Aggregated"},
            },
            "placement",
        )
    return _PLACEMENTS[home]


def _federation(prep: Prepared, engines: dict[str, Engine]) -> Federation:
    from kubesched.multicluster.federation import resolve_plugins
    from kubesched.multicluster.network import LatencyBudget, NetworkOverhead

    members = []
    for s in prep.scenario.sites:
        eng = engines[s.name]
        c = Cluster(s.name, labels={"tier": s.tier}, region=s.region)
        members.append(MemberCluster.attached(c, eng.sched, list))
    net = prep.network
    overhead = NetworkOverhead(net, {m.name: m.cluster for m in members})
    plugins = resolve_plugins("*,LatencyBudget,NetworkOverhead", {"LatencyBudget": LatencyBudget(net), "NetworkOverhead": overhead})
    return Federation(members, plugins, "simulated", {"NetworkOverhead": net.weight})

"""Available replicas by simulation: kubesched's own scheduler on each member cluster's nodes.

For a replica that does not depend on where other replicas go (no inter-pod affinity or
anti-affinity, no hard topology spread, no host ports) the count is vectorised: the member's
real filter plugins judge one probe pod with the replica's node constraints but no requests (so a
node is judged by taints, node affinity and selectors, unschedulable, ...), and each admitted
node then takes ``min(free / request)`` replicas over every requested resource, its free pod
slots and, when the member's profile checks GPUs, its GPUs (shares fit per card, whole GPUs
need free cards of an allowed model). The probe's verdicts depend on the nodes and on existing
pods' (anti-)affinity terms, so they are cached per member until either changes; the counts read
the live columns.

Any other replica is placed for real: the member's scheduling cycle runs replica after replica,
each assumed on its node, until one does not fit (at most ``cap``), and every assumption is then
undone; the member's tie-break state is restored, so estimating never changes a later placement.

Assumed (in-flight) workloads are placed first, in that same what-if, as Karmada's node-resource
plugin places them (:func:`kubesched.multicluster.firstfit.simulate_assumed`): first fit over the
member's nodes in order, each workload once, and a workload whose replicas do not all fit keeps
those it placed (upstream has no rollback). The count then runs on what is left.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from kubesched.api.objects import Pod
from kubesched.api.resources import CPU, PODS, Resources
from kubesched.framework import cycle
from kubesched.framework.cycle_state import CycleState
from kubesched.gpu.model import ASK_ANNOTATIONS, MILLI, pod_gpu_ask
from kubesched.gpu.state import GpuState
from kubesched.multicluster.api import Binding, Cluster
from kubesched.multicluster.estimate import UNAUTHENTIC_REPLICA, Assumed, AssumedWorkload
from kubesched.multicluster.firstfit import SchedulingSimulator, simulate_assumed, snapshot_nodes
from kubesched.state.memo import AFFINITY_PODS, EVERYTHING, NODES

if TYPE_CHECKING:
    from collections.abc import Sequence

    from kubesched.multicluster.member import MemberCluster
    from kubesched.state.snapshot import Snapshot

RESOURCE_FILTERS = frozenset({"NodeResourcesFit"})  # judged by the closed form instead
GPU_FILTERS = frozenset({"Open-Gpu-Share"})
DEFAULT_CAP = 1000


def needs_sequential(pod: Pod) -> bool:
    """Does one replica's fit depend on where the others went?"""
    if pod.host_ports or pod.has_required_anti_affinity:
        return True
    if pod.pod_affinity is not None and pod.pod_affinity.required:
        return True
    return any(c.when_unsatisfiable == "DoNotSchedule" for c in pod.spread_constraints)


def probe_of(pod: Pod) -> Pod:
    """The replica's node constraints without its requests and GPU ask."""
    p = pod.copy()
    p.requests = {}
    p.non_zero_cpu = p.non_zero_mem = 0
    p.annotations = {k: v for k, v in pod.annotations.items() if k not in ASK_ANNOTATIONS}
    p.host_ports = ()
    return p


def _assumed_pod(namespace: str, name: str, requests: Resources | None) -> Pod:
    """A pod of an assumed component: its requests only (no labels or inter-pod terms: it is
    another workload's replica, not one of the template's)."""
    quantities = {k: f"{v}m" if k == CPU else str(v) for k, v in (requests or {}).items()}
    return Pod.parse({"metadata": {"name": name, "namespace": namespace, "uid": name},
                      "spec": {"containers": [{"name": "assumed", "resources": {"requests": quantities}}]}})


def place_assumed(snap: Snapshot, template: Pod, assumed: Sequence[AssumedWorkload]) -> None:
    """Bind the assumed workloads' replicas in ``snap`` where Karmada's first fit puts them."""
    sim = SchedulingSimulator(snapshot_nodes(snap), record=True)
    assert sim.placements is not None
    for k, aw in enumerate(assumed):
        start = len(sim.placements)
        simulate_assumed(sim, [aw.components])
        for j, (row, comp, n) in enumerate(sim.placements[start:]):
            base = _assumed_pod(aw.namespace or template.namespace,
                                f"assumed-{template.uid or template.name}-{k}-{start + j}", comp.requests)
            node = snap.nodes[row].name
            for r in range(n):
                p = base.with_node(node)
                p.name = p.uid = f"{base.name}-{r}"
                snap.add_pod(p)


def _probe_key(pod: Pod) -> tuple:
    return (
        pod.scheduler_name,
        pod.namespace,
        tuple(sorted(pod.node_selector.items())),
        pod.node_affinity,
        pod.tolerations,
        pod.node_name,
        tuple(sorted(pod.labels.items())),
    )


class SimulatedEstimator:
    """A ReplicaEstimator answering with each member's kubesched scheduler."""

    name = "simulated"

    def __init__(self, members: dict[str, MemberCluster], cap: int = DEFAULT_CAP) -> None:
        self.members = members
        self.cap = cap
        self.sequential_runs = 0

    def max_available_replicas(self, clusters: list[Cluster], binding: Binding, assumed: Assumed | None = None) -> list[int]:
        out = []
        for c in clusters:
            m = self.members.get(c.name)
            if m is None or m.scheduler is None or binding.template is None:
                out.append(UNAUTHENTIC_REPLICA)
            elif assumed and assumed.get(c.name):
                out.append(self.estimate_with_assumed(m, binding.template, assumed[c.name]))
            else:
                out.append(self.estimate(m, binding.template))
        return out

    def estimate_with_assumed(self, member: MemberCluster, pod: Pod, assumed: Sequence[AssumedWorkload]) -> int:
        """The count after the assumed workloads are placed, in a what-if that leaves no trace."""
        sched = member.scheduler
        assert sched is not None
        with sched.what_if() as snap:
            place_assumed(snap, pod, assumed)
            if pod.scheduler_name not in sched.frameworks:
                return 0
            if needs_sequential(pod):
                return self.sequential(member, pod)
            return int(self.per_node(member, pod).sum())

    def estimate(self, member: MemberCluster, pod: Pod) -> int:
        sched = member.scheduler
        assert sched is not None
        snap = sched.snapshot
        sig = (pod.signature(), tuple(pod.annotations.get(a) for a in ASK_ANNOTATIONS))

        def count() -> int:
            if pod.scheduler_name not in sched.frameworks:
                return 0
            if needs_sequential(pod):
                return self.sequential(member, pod)
            return int(self.per_node(member, pod).sum())

        # kept in the member's snapshot until anything there changes
        return snap.memo.get((self, "replicas", sig), count, on=EVERYTHING)

    # ---- vectorised ------------------------------------------------------------------------------
    def admitted(self, member: MemberCluster, pod: Pod) -> np.ndarray:
        """Rows whose non-resource filters admit the replica (the member's plugins, cached)."""
        sched = member.scheduler
        assert sched is not None
        snap = sched.snapshot
        fw = sched.frameworks[pod.scheduler_name]

        def probe_mask() -> np.ndarray:
            state = CycleState()
            rows = np.arange(snap.n, dtype=np.int32)
            pre, verdicts = cycle.filter_every_plugin(fw, state, probe_of(pod), snap, rows)
            if not pre.status.ok:
                return np.zeros(snap.n, bool)
            mask = np.ones(snap.n, bool)
            if pre.names is not None:
                mask &= np.isin(rows, snap.rows_of(pre.names))
            for plugin, res in verdicts.items():
                if res is not None and plugin not in RESOURCE_FILTERS:
                    mask &= res.code == 0
            return mask

        # the probe's verdicts follow the nodes, and existing pods' (anti-)affinity terms
        return snap.memo.get((self, "probe", _probe_key(pod)), probe_mask, on=NODES | AFFINITY_PODS)

    def per_node(self, member: MemberCluster, pod: Pod) -> np.ndarray:
        """Replicas each node can still take."""
        sched = member.scheduler
        assert sched is not None
        snap = sched.snapshot
        mask = self.admitted(member, pod)
        if snap.n == 0:
            return np.zeros(0, np.int64)
        alloc, req = snap.alloc, snap.requested
        pods = snap.res_index[PODS]
        count = np.maximum(alloc[:, pods] - req[:, pods], 0)
        for name, amount in pod.requests.items():
            if amount <= 0:
                continue
            col = snap.res_index.get(name)
            if col is None:
                return np.zeros(snap.n, np.int64)
            count = np.minimum(count, np.maximum(alloc[:, col] - req[:, col], 0) // amount)
        ask = pod_gpu_ask(pod)
        fw = sched.frameworks[pod.scheduler_name]
        if ask is not None and any(pl.name in GPU_FILTERS for pl in fw.filter):
            st = GpuState.of(snap)
            if ask.sharing:
                gpus = (st.left // ask.milli).sum(axis=1)
            else:
                gpus = (st.left == MILLI).sum(axis=1) // ask.count
            if ask.models:
                allowed = np.asarray([ask.allows(m) for m in st.models], bool)
                gpus = np.where(allowed[st.model], gpus, 0)
            count = np.minimum(count, gpus)
        return np.where(mask, count, 0).astype(np.int64)

    # ---- sequential ------------------------------------------------------------------------------
    def sequential(self, member: MemberCluster, pod: Pod) -> int:
        """Schedule replicas one by one (each assumed) in a what-if, and count them."""
        sched = member.scheduler
        assert sched is not None
        fw = sched.frameworks[pod.scheduler_name]
        placed = 0
        self.sequential_runs += 1
        with sched.what_if() as snap:
            for i in range(self.cap):
                p = pod.copy()
                p.name, p.uid = f"{pod.name}-estimate-{i}", f"{pod.uid or pod.name}-estimate-{i}"
                res = sched.schedule_pod(fw, CycleState(), p)
                if res.node is None:
                    break
                snap.add_pod(p.with_node(res.node))
                placed += 1
        return placed

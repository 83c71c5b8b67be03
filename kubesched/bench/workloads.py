"""scheduler_perf's workloads as op lists, by upstream name, with their CI thresholds.

A workload is upstream's ``workloadTemplate`` (ops whose counts name ``params``) plus one
``workloads`` entry (the params, the threshold). Counts scale with ``scale`` so the same
workload runs at 500 nodes for a quick look or at 5000 as upstream; ``--nodes`` and ``--pods``
set the main node count and the measured (or bound) pod count directly.

Rounding keeps every scaled workload satisfiable: node counts round up and pod counts round
down, so "one anti-affinity pod per node" workloads that are exactly full upstream stay at most
full (SchedulingRequiredPodAntiAffinityWithNSSelector: 6000 nodes for 4000 + 2000 pods).

Churn ("a 9-CPU pod every 200 ms") runs on the benchmark clock: real time while the scheduler
is busy, and idle waits for backoff skipped (their length is added, so churn due in them still
arrives). See kubesched.bench.runner.BenchClock.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from kubesched.bench.ops import (
    AllocClaims,
    BindPods,
    Churn,
    Count,
    CreateDraObject,
    CreateNamespaces,
    CreateNodes,
    CreatePods,
    CreatePodSets,
    CreateResourceDriver,
    CreateService,
    NodeAllocatable,
    Op,
    SteadyPods,
)
from kubesched.bench.resource_templates import AWS_EBS_PLUGIN, DRA_TEST_DRIVER, EBS_CSI_DRIVER
from kubesched.bench.templates import NAMESPACE_WITH_LABELS, ZONE_LABEL


# ---- workloads -----------------------------------------------------------------------------
@dataclass(frozen=True)
class BenchWorkload:
    """One scheduler_perf workload of a test case: its ops, params and CI threshold."""

    test_case: str
    name: str
    ops: tuple[Op, ...]
    params: Mapping[str, int]
    threshold: float | None = None  # upstream 2026 CI floor (SchedulingThroughput Average, pods/s)
    default: bool = True  # part of the default `kubesched bench` set
    node_params: tuple[str, ...] = ("initNodes",)  # scale with --nodes (rounded up)
    pod_param: str | None = "measurePods"  # set by --pods (rounded down when scaled)
    fixed_params: tuple[str, ...] = ()  # never scaled (pods per namespace)
    #: params computed from the others after scaling (devices left free whatever the scale)
    derived: Mapping[str, Callable[[Mapping[str, int]], int]] = field(default_factory=dict)
    note: str = ""

    @property
    def full_name(self) -> str:
        return f"{self.test_case}/{self.name}"

    @property
    def target(self) -> float | None:
        """kubesched's own target: ten times the upstream floor."""
        return None if self.threshold is None else 10 * self.threshold

    def resolve(
        self, scale: float = 1.0, nodes: int | None = None, pods: int | None = None
    ) -> dict[str, int]:
        """Concrete params: node counts scale up (ceil), pod and namespace counts down (floor,
        >= 1; a count that is 0 stays 0), then the ``derived`` ones."""
        if scale <= 0:
            raise ValueError("scale must be positive")
        base_nodes = sum(self.params[p] for p in self.node_params)
        node_factor = nodes / base_nodes if nodes is not None and base_nodes else scale
        pod_factor = scale
        if pods is not None and self.pod_param is not None:
            pod_factor = pods / self.params[self.pod_param]
        out: dict[str, int] = {}
        for k, v in self.params.items():
            if k in self.fixed_params or v == 0:
                out[k] = v
            elif k in self.node_params:
                out[k] = max(1, math.ceil(v * node_factor - 1e-9))
            elif k == self.pod_param:
                out[k] = max(1, math.floor(v * pod_factor + 1e-9))
            else:
                out[k] = max(1, math.floor(v * node_factor + 1e-9))
        for k, fn in self.derived.items():
            out[k] = fn(out)
        return out

    def count(self, c: Count, params: Mapping[str, int]) -> int:
        return c if isinstance(c, int) else params[c]


def _basic_ops() -> tuple[Op, ...]:
    return (
        CreateNodes("initNodes"),
        CreatePods("initPods", "pod-default"),
        CreatePods("measurePods", "pod-default", measured=True),
    )


def _affinity_ops(template: str, measured_template: str | None = None, zone1: bool = False) -> tuple[Op, ...]:
    """affinity/: nodes, namespaces sched-0/1, init pods in sched-0, measured in sched-1."""
    nodes = (
        CreateNodes("initNodes", "node-default", ZONE_LABEL, ("zone1",))
        if zone1
        else CreateNodes("initNodes")
    )
    return (
        nodes,
        CreateNamespaces("sched", 2),
        CreatePods("initPods", template, "sched-0"),
        CreatePods("measurePods", measured_template or template, "sched-1", measured=True),
    )


def _ns_selector_ops(template: str, zone1: bool = False) -> tuple[Op, ...]:
    nodes = CreateNodes("initNodes", None, ZONE_LABEL, ("zone1",)) if zone1 else CreateNodes("initNodes")
    return (
        nodes,
        CreateNamespaces("init-ns", "initNamespaces", NAMESPACE_WITH_LABELS),
        CreateNamespaces("measure-ns", 1, NAMESPACE_WITH_LABELS),
        CreatePodSets("initNamespaces", "init-ns", "initPodsPerNamespace", template),
        CreatePods("measurePods", template, "measure-ns-0", measured=True),
    )


MOON = ("moon-1", "moon-2", "moon-3")


def _spreading_ops(measured_template: str) -> tuple[Op, ...]:
    return (
        CreateNodes("initNodes", "node-default", ZONE_LABEL, MOON),
        CreatePods("initPods", "pod-default"),
        CreatePods("measurePods", measured_template, measured=True),
    )


def _volume_ops(volume: str, nodes: CreateNodes) -> tuple[Op, ...]:
    """volumes/: nodes, then init and measured pods with a bound PV and PVC each."""
    return (
        nodes,
        CreatePods("initPods", "pod-default", volume=volume),
        CreatePods("measurePods", "pod-default", measured=True, volume=volume),
    )


#: SchedulingMigratedInTreePVs' and SchedulingCSIPVs' nodeAllocatableStrategy: 39 EBS volumes a node.
def _ebs_limit(*migrated: str) -> NodeAllocatable:
    return NodeAllocatable({f"attachable-volumes-csi-{EBS_CSI_DRIVER}": "39"}, {EBS_CSI_DRIVER: 39}, migrated)


def _dra_nodes() -> tuple[Op, ...]:
    """dra/: plain nodes, DRA nodes, the test driver's slices and the DeviceClass."""
    return (
        CreateNodes("nodesWithoutDRA"),
        CreateNodes("nodesWithDRA", "node-with-dra-test-driver"),
        CreateResourceDriver(DRA_TEST_DRIVER, "scheduler-perf-dra-*", "maxClaimsPerNode"),
        CreateDraObject("deviceclass"),
    )


_DRA_NODES = ("nodesWithDRA", "nodesWithoutDRA")
_DRA_FIXED = ("maxClaimsPerNode", "durationMs")


def _steady_state(name: str, init_claims: int, threshold: float, in_use: Callable[[int], int] | None) -> BenchWorkload:
    """SteadyStateClusterResourceClaimTemplate/<name>: ``init_claims`` claims allocated up front,
    then 10 pods at a time for 10 s. ``in_use`` gives initClaims from the number of devices after
    scaling (half of them; all but 10, so that exactly 10 more pods fit), as upstream's 100-,
    200- and 500-node variants do."""
    ops = (
        *_dra_nodes(),
        CreateDraObject("resourceclaim", "init", "initClaims"),
        AllocClaims("init"),
        CreateDraObject("resourceclaimtemplate", "test"),
        SteadyPods(10, "pod-with-claim-template", "test"),
    )
    params = {"nodesWithDRA": 500, "nodesWithoutDRA": 0, "initClaims": init_claims, "maxClaimsPerNode": 10, "durationMs": 10000}
    derived = {} if in_use is None else {"initClaims": lambda p: in_use(p["nodesWithDRA"] * p["maxClaimsPerNode"])}
    return BenchWorkload(
        "SteadyStateClusterResourceClaimTemplate",
        name,
        ops,
        params,
        threshold,
        default=False,
        node_params=_DRA_NODES,
        pod_param=None,
        fixed_params=_DRA_FIXED,
        derived=derived,
        note="runs for 10 s whatever the scale: not in the default set",
    )


def _p(init_nodes: int, init_pods: int, measure_pods: int) -> dict[str, int]:
    return {"initNodes": init_nodes, "initPods": init_pods, "measurePods": measure_pods}


def _ns_params(nodes: int, per_ns: int, namespaces: int, measure: int) -> dict[str, int]:
    return {
        "initNodes": nodes,
        "initPodsPerNamespace": per_ns,
        "initNamespaces": namespaces,
        "measurePods": measure,
    }


_NS_FIXED = ("initPodsPerNamespace",)

WORKLOADS: tuple[BenchWorkload, ...] = (
    # ---- misc/ ----
    BenchWorkload("SchedulingBasic", "5000Nodes_10000Pods", _basic_ops(), _p(5000, 1000, 10000), 680),
    BenchWorkload("SchedulingBasic", "5000Nodes_50000Pods", _basic_ops(), _p(5000, 5000, 50000), 810),
    BenchWorkload(
        "SchedulingDaemonset",
        "15000Nodes",
        (
            CreateNodes(1, "node-with-name"),
            CreateNodes("initNodes", "node-default"),
            CreatePods("measurePods", "daemonset-pod", measured=True),
        ),
        {"initNodes": 15000, "measurePods": 30000},
        1100,
    ),
    BenchWorkload(
        "PreemptionBasic",
        "1000Nodes",
        (
            CreateNodes("initNodes"),
            CreatePods("initPods", "pod-low-priority"),
            CreatePods("measurePods", "pod-high-priority", measured=True),
        ),
        _p(1000, 4000, 1000),
        None,
        note="no 2026 threshold (18 pods/s for 500Nodes in 2024)",
    ),
    BenchWorkload(
        "PreemptionAsync",
        "5000Nodes",
        (
            CreateNodes("initNodes"),
            CreatePods("initPods", "pod-low-priority"),
            Churn("pod-high-priority"),
            CreatePods("measurePods", "pod-default", measured=True),
        ),
        _p(5000, 20000, 5000),
        570,
        default=False,
    ),
    BenchWorkload(
        "Unschedulable",
        "5kNodes/100Init/10kPods",
        (
            CreateNodes("initNodes"),
            CreatePods("initPods", "pod-default"),
            Churn("pod-high-priority-large-cpu"),
            CreatePods("measurePods", "pod-default", measured=True),
        ),
        _p(5000, 100, 10000),
        590,
    ),
    # ---- affinity/ ----
    BenchWorkload(
        "SchedulingPodAntiAffinity",
        "5000Nodes_2000Pods",
        _affinity_ops("pod-with-pod-anti-affinity"),
        _p(5000, 1000, 2000),
        60,
    ),
    BenchWorkload(
        "SchedulingPodMatchingAntiAffinity",
        "5000Nodes_5000Pods",
        _affinity_ops("pod-with-pod-anti-affinity", "pod-with-pod-anti-affinity-label"),
        _p(5000, 1000, 5000),
        595,
    ),
    BenchWorkload(
        "SchedulingPodAffinity",
        "5000Nodes_5000Pods",
        _affinity_ops("pod-with-pod-affinity", zone1=True),
        _p(5000, 5000, 5000),
        35,
    ),
    BenchWorkload(
        "SchedulingPreferredPodAffinity",
        "5000Nodes_5000Pods",
        _affinity_ops("pod-with-preferred-pod-affinity"),
        _p(5000, 5000, 5000),
        90,
    ),
    BenchWorkload(
        "SchedulingPreferredPodAntiAffinity",
        "5000Nodes_5000Pods",
        _affinity_ops("pod-with-preferred-pod-anti-affinity"),
        _p(5000, 5000, 5000),
        90,
    ),
    BenchWorkload(
        "SchedulingNodeAffinity",
        "5000Nodes_10000Pods",
        (
            CreateNodes("initNodes", "node-default", ZONE_LABEL, ("zone1",)),
            CreatePods("initPods", "pod-with-node-affinity"),
            CreatePods("measurePods", "pod-with-node-affinity", measured=True),
        ),
        _p(5000, 5000, 10000),
        220,
    ),
    BenchWorkload(
        "MixedSchedulingBasePod",
        "5000Nodes_5000Pods",
        (
            CreateNodes("initNodes", "node-default", ZONE_LABEL, ("zone1",)),
            CreateNamespaces("sched", 1),
            CreatePods("initPods", "pod-default", "sched-0"),
            CreatePods("initPods", "pod-with-pod-affinity", "sched-0"),
            CreatePods("initPods", "pod-with-pod-anti-affinity", "sched-0"),
            CreatePods("initPods", "pod-with-preferred-pod-affinity", "sched-0"),
            CreatePods("initPods", "pod-with-preferred-pod-anti-affinity", "sched-0"),
            CreatePods("measurePods", "pod-default", measured=True),
        ),
        _p(5000, 2000, 5000),
        140,
    ),
    BenchWorkload(
        "SchedulingRequiredPodAntiAffinityWithNSSelector",
        "5000Nodes_2000Pods",
        _ns_selector_ops("pod-anti-affinity-ns-selector"),
        _ns_params(6000, 40, 100, 2000),
        24,
        fixed_params=_NS_FIXED,
    ),
    BenchWorkload(
        "SchedulingPreferredAntiAffinityWithNSSelector",
        "5000Nodes_2000Pods",
        _ns_selector_ops("pod-preferred-anti-affinity-ns-selector"),
        _ns_params(5000, 40, 100, 2000),
        55,
        fixed_params=_NS_FIXED,
    ),
    BenchWorkload(
        "SchedulingRequiredPodAffinityWithNSSelector",
        "5000Nodes_2000Pods",
        _ns_selector_ops("pod-affinity-ns-selector", zone1=True),
        _ns_params(5000, 50, 100, 2000),
        35,
        fixed_params=_NS_FIXED,
    ),
    BenchWorkload(
        "SchedulingPreferredAffinityWithNSSelector",
        "5000Nodes_5000Pods",
        _ns_selector_ops("pod-preferred-affinity-ns-selector"),
        _ns_params(5000, 50, 100, 5000),
        90,
        fixed_params=_NS_FIXED,
    ),
    # ---- topology_spreading/ ----
    BenchWorkload(
        "TopologySpreading",
        "5000Nodes_5000Pods",
        _spreading_ops("pod-with-topology-spreading"),
        _p(5000, 5000, 5000),
        460,
    ),
    BenchWorkload(
        "PreferredTopologySpreading",
        "5000Nodes_5000Pods",
        _spreading_ops("pod-with-preferred-topology-spreading"),
        _p(5000, 5000, 5000),
        340,
    ),
    BenchWorkload(
        "DefaultTopologySpreading",
        "5000Nodes_50000Pods",
        (
            CreateNodes("initNodes", "node-default", ZONE_LABEL, MOON),
            CreateService("service-ns"),
            CreatePods("initPods", "pod-default"),
            CreatePods("measurePods", "pod-with-label", "service-ns", measured=True),
        ),
        _p(5000, 5000, 50000),
        160,
    ),
    BenchWorkload(
        "SchedulingWithNodeInclusionPolicy",
        "5000Nodes",
        (
            CreateNodes("normalNodes"),
            CreateNodes("taintNodes", "node-with-taint"),
            CreatePods("measurePods", "pod-with-node-inclusion-policy", measured=True),
        ),
        {"normalNodes": 4000, "taintNodes": 1000, "measurePods": 4000},
        270,
        node_params=("normalNodes", "taintNodes"),
    ),
    # ---- volumes/ ----
    BenchWorkload(
        "SchedulingSecrets",
        "5000Nodes_10000Pods",
        (
            CreateNodes("initNodes"),
            CreatePods("initPods", "pod-with-secret-volume"),
            CreatePods("measurePods", "pod-with-secret-volume", measured=True),
        ),
        _p(5000, 1000, 10000),
        790,
    ),
    BenchWorkload("SchedulingInTreePVs", "5000Nodes_2000Pods", _volume_ops("pv-aws", CreateNodes("initNodes")), _p(5000, 1000, 2000), 290),
    BenchWorkload(
        "SchedulingMigratedInTreePVs",
        "5000Nodes_5000Pods",
        _volume_ops("pv-aws", CreateNodes("initNodes", "node-default", allocatable=_ebs_limit(AWS_EBS_PLUGIN))),
        _p(5000, 5000, 5000),
        100,
    ),
    BenchWorkload(
        "SchedulingCSIPVs",
        "5000Nodes_5000Pods",
        _volume_ops("pv-csi", CreateNodes("initNodes", "node-default", allocatable=_ebs_limit())),
        _p(5000, 5000, 5000),
        100,
    ),
    # ---- dra/ ----
    BenchWorkload(
        "SchedulingWithResourceClaimTemplate",
        "5000pods_500nodes",
        (
            *_dra_nodes(),
            CreateDraObject("resourceclaimtemplate", "init"),
            CreatePods("initPods", "pod-with-claim-template", "init"),
            CreateDraObject("resourceclaimtemplate", "test"),
            CreatePods("measurePods", "pod-with-claim-template", "test", measured=True),
        ),
        {"nodesWithDRA": 500, "nodesWithoutDRA": 0, "initPods": 2500, "measurePods": 2500, "maxClaimsPerNode": 10},
        40,
        node_params=_DRA_NODES,
        fixed_params=("maxClaimsPerNode",),
    ),
    _steady_state("empty_500nodes", 0, 64, None),
    _steady_state("half_500nodes", 2500, 70, lambda devices: devices // 2),
    _steady_state("full_500nodes", 4990, 60, lambda devices: devices - 10),
    # ---- kubesched's own scale experiments (not upstream workloads) ----
    BenchWorkload(
        "SchedulingBasic",
        "50000Nodes_100000Pods",
        _basic_ops(),
        _p(50000, 10000, 100000),
        None,
        default=False,
        note="kubesched's: SchedulingBasic at 10x the nodes; must complete without a cliff",
    ),
    BenchWorkload(
        "Memory",
        "5000Nodes_150000Pods",
        (CreateNodes("initNodes"), BindPods("boundPods")),
        {"initNodes": 5000, "boundPods": 150000},
        None,
        default=False,
        pod_param="boundPods",
        note="kubesched's: RSS with 150,000 bound pods (the Kubernetes limit); target under 2 GiB",
    ),
)

_BY_NAME: dict[str, BenchWorkload] = {w.full_name.lower(): w for w in WORKLOADS}


def _key(name: str) -> str:
    return name.strip().lower()


def get(name: str) -> list[BenchWorkload]:
    """Workloads for a name: ``Case/Workload``, ``Case_Workload``, or ``Case`` (its default ones).

    Raises KeyError naming the unknown workload.
    """
    k = _key(name)
    if k in _BY_NAME:
        return [_BY_NAME[k]]
    for w in WORKLOADS:
        if k == f"{w.test_case}_{w.name}".lower():
            return [w]
    case = [w for w in WORKLOADS if w.test_case.lower() == k]
    if case:
        defaults = [w for w in case if w.default]
        return defaults or case
    raise KeyError(name)


def default_set() -> list[BenchWorkload]:
    return [w for w in WORKLOADS if w.default]


def select(names: list[str] | None) -> list[BenchWorkload]:
    """Workloads by name, in the order given (the default set when none), without repeats."""
    if not names:
        return default_set()
    out: list[BenchWorkload] = []
    for n in names:
        for w in get(n):
            if w not in out:
                out.append(w)
    return out

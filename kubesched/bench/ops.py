"""scheduler_perf's ops, as kubesched runs them (``kubesched.bench.runner``): nodes, namespaces,
pods, services, churn, DRA drivers and objects; a count is a literal or the name of a param
(``kubesched.bench.workloads`` holds the workloads built from them)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

Count = int | str  # a literal or the name of a param


# ---- ops -----------------------------------------------------------------------------------
@dataclass(frozen=True)
class NodeAllocatable:
    """nodeAllocatableStrategy: more allocatable on every node, and a CSINode per node giving
    each CSI driver's attach limit and naming the in-tree plugins migrated to CSI."""

    node_allocatable: Mapping[str, str]
    csi_drivers: Mapping[str, int]
    migrated_plugins: tuple[str, ...] = ()


@dataclass(frozen=True)
class CreateNodes:
    """createNodes; ``template`` None is makeBaseNode (generateName node-<opIndex>-)."""

    count: Count
    template: str | None = None
    label_key: str | None = None  # labelNodePrepareStrategy
    label_values: tuple[str, ...] = ()
    allocatable: NodeAllocatable | None = None  # nodeAllocatableStrategy


@dataclass(frozen=True)
class CreateNamespaces:
    prefix: str
    count: Count
    labels: Mapping[str, str] | None = None


@dataclass(frozen=True)
class CreatePods:
    """createPods; without ``namespace`` upstream uses ``namespace-<opIndex>``. With ``volume``
    (persistentVolumeTemplatePath: ``pv-aws`` or ``pv-csi``, with templates/pvc.yaml) each pod
    gets a PV and a PVC bound to each other before it is created."""

    count: Count
    template: str
    namespace: str | None = None
    measured: bool = False  # collectMetrics: true
    volume: str | None = None


@dataclass(frozen=True)
class SteadyPods:
    """createPods with steadyState: ``count`` pods; once all are bound they are deleted and
    ``count`` new ones created, until the ``duration_param`` (milliseconds) is over. Measured."""

    count: int
    template: str
    namespace: str
    duration_param: str = "durationMs"


@dataclass(frozen=True)
class CreateResourceDriver:
    """createResourceDriver: a ResourceSlice with ``max_claims_per_node`` devices of ``driver``
    for every node whose name matches the glob ``nodes``."""

    driver: str
    nodes: str
    max_claims_per_node: Count


@dataclass(frozen=True)
class CreateDraObject:
    """createAny of a DRA template (``deviceclass``, ``resourceclaimtemplate`` or, ``count`` of
    them, ``resourceclaim``)."""

    template: str
    namespace: str = ""
    count: Count = 1


@dataclass(frozen=True)
class AllocClaims:
    """allocResourceClaims: the namespace's claims allocated one at a time, each on the first
    node of a fresh random order where the structured allocator finds devices."""

    namespace: str


@dataclass(frozen=True)
class CreatePodSets:
    """createPodSets: ``per_namespace`` pods of ``template`` in each of ``<prefix>-0..count-1``."""

    count: Count
    namespace_prefix: str
    per_namespace: Count
    template: str


@dataclass(frozen=True)
class CreateService:
    """createAny with templates/service.yaml: a Service whose selector default spreading derives."""

    namespace: str


@dataclass(frozen=True)
class Churn:
    """churn mode: create: one pod of ``template`` every ``interval_ms`` during the measured phase."""

    template: str
    interval_ms: int = 200


@dataclass(frozen=True)
class BindPods:
    """Not upstream: pods bound straight to nodes, round-robin (a cluster dump's bound pods).

    The memory experiment uses it to hold 150,000 pods without scheduling them first.
    """

    count: Count
    template: str = "pod-default"
    namespace: str = "bound"


Op = (
    CreateNodes
    | CreateNamespaces
    | CreatePods
    | CreatePodSets
    | CreateService
    | Churn
    | BindPods
    | SteadyPods
    | CreateResourceDriver
    | CreateDraObject
    | AllocClaims
)

"""Default plugin sets, weights and field defaults of each config version (kube-scheduler 1.36).

Tables follow KK ``pkg/scheduler/apis/config/<version>/default_plugins.go`` and ``defaults.go``.
The volume plugins (VolumeRestrictions, NodeVolumeLimits, VolumeBinding, VolumeZone) are in every
table as upstream has them; the in-tree limit plugins of the older per-point tables (EBSLimits,
GCEPDLimits, AzureDiskLimits, removed in 1.32) are dropped by the resolver. DynamicResources is
in v1's table where upstream inserts it (before DefaultPreemption, DynamicResourceAllocation being
GA and locked); v1beta3 converts with v1's table, so it has it too; the v1beta1/v1beta2 tables
do not.
"""

from __future__ import annotations

from .types import EXTENSION_POINTS, V1, V1BETA1, V1BETA2, V1BETA3

#: Extension points of the built-in plugins (the registry cross-checks its own against this).
BUILTIN_POINTS: dict[str, frozenset[str]] = {
    "SchedulingGates": frozenset({"preEnqueue"}),
    "PrioritySort": frozenset({"queueSort"}),
    "NodeUnschedulable": frozenset({"filter"}),
    "NodeName": frozenset({"filter"}),
    "TaintToleration": frozenset({"filter", "preScore", "score"}),
    "NodeAffinity": frozenset({"preFilter", "filter", "preScore", "score"}),
    "NodePorts": frozenset({"preFilter", "filter"}),
    "NodeResourcesFit": frozenset({"preFilter", "filter", "preScore", "score"}),
    "VolumeRestrictions": frozenset({"preFilter", "filter"}),
    "NodeVolumeLimits": frozenset({"preFilter", "filter"}),
    "VolumeBinding": frozenset({"preFilter", "filter", "reserve", "preBind", "preScore", "score"}),
    "VolumeZone": frozenset({"preFilter", "filter"}),
    "PodTopologySpread": frozenset({"preFilter", "filter", "preScore", "score"}),
    "InterPodAffinity": frozenset({"preFilter", "filter", "preScore", "score"}),
    "DynamicResources": frozenset(
        {"preEnqueue", "preFilter", "filter", "postFilter", "score", "reserve", "preBind"}
    ),
    "DefaultPreemption": frozenset({"postFilter"}),
    "NodeResourcesBalancedAllocation": frozenset({"preScore", "score"}),
    "ImageLocality": frozenset({"score"}),
    "DefaultBinder": frozenset({"bind"}),
}


def builtin_points_of(name: str) -> frozenset[str] | None:
    """``points_of`` for the built-in plugins only (tests, tools without a registry)."""
    return BUILTIN_POINTS.get(name)


# (name, weight or None). Order is execution order within each point.
DefaultList = tuple[tuple[str, int | None], ...]

#: v1 ``multiPoint.enabled`` defaults.
V1_DEFAULT_MULTIPOINT: DefaultList = (
    ("SchedulingGates", None),
    ("PrioritySort", None),
    ("NodeUnschedulable", None),
    ("NodeName", None),
    ("TaintToleration", 3),
    ("NodeAffinity", 2),
    ("NodePorts", None),
    ("NodeResourcesFit", 1),
    ("VolumeRestrictions", None),
    ("NodeVolumeLimits", None),
    ("VolumeBinding", None),
    ("VolumeZone", None),
    ("PodTopologySpread", 2),
    ("InterPodAffinity", 2),
    ("DynamicResources", None),
    ("DefaultPreemption", None),
    ("NodeResourcesBalancedAllocation", 1),
    ("ImageLocality", 1),
    ("DefaultBinder", None),
)

#: v1beta3 defaults are v1's (same weights; SchedulingGates joined in 1.26 when gates went beta).
V1BETA3_DEFAULT_MULTIPOINT: DefaultList = V1_DEFAULT_MULTIPOINT

_VOLUME_FILTERS = (
    ("VolumeRestrictions", None),
    ("EBSLimits", None),
    ("GCEPDLimits", None),
    ("NodeVolumeLimits", None),
    ("AzureDiskLimits", None),
    ("VolumeBinding", None),
    ("VolumeZone", None),
)

#: v1beta2 per-point defaults (1.22-1.27). SchedulingGates at preEnqueue as from 1.27.
V1BETA2_DEFAULT_PLUGINS: dict[str, DefaultList] = {
    "preEnqueue": (("SchedulingGates", None),),
    "queueSort": (("PrioritySort", None),),
    "preFilter": (
        ("NodeResourcesFit", None),
        ("NodePorts", None),
        ("VolumeRestrictions", None),
        ("PodTopologySpread", None),
        ("InterPodAffinity", None),
        ("VolumeBinding", None),
        ("VolumeZone", None),
        ("NodeAffinity", None),
    ),
    "filter": (
        ("NodeUnschedulable", None),
        ("NodeName", None),
        ("TaintToleration", None),
        ("NodeAffinity", None),
        ("NodePorts", None),
        ("NodeResourcesFit", None),
        *_VOLUME_FILTERS,
        ("PodTopologySpread", None),
        ("InterPodAffinity", None),
    ),
    "postFilter": (("DefaultPreemption", None),),
    "preScore": (
        ("InterPodAffinity", None),
        ("PodTopologySpread", None),
        ("TaintToleration", None),
        ("NodeAffinity", None),
    ),
    "score": (
        ("NodeResourcesBalancedAllocation", 1),
        ("ImageLocality", 1),
        ("InterPodAffinity", 1),
        ("NodeResourcesFit", 1),
        ("NodeAffinity", 1),
        ("PodTopologySpread", 2),
        ("TaintToleration", 1),
    ),
    "reserve": (("VolumeBinding", None),),
    "preBind": (("VolumeBinding", None),),
    "bind": (("DefaultBinder", None),),
}

#: v1beta1 per-point defaults (1.20-1.22, gate DefaultPodTopologySpread on, so no SelectorSpread):
#: v1beta2's but for preFilter (no VolumeRestrictions or VolumeZone yet) and the score plugins.
#: SchedulingGates did not exist then; kubesched adds it so gated pods stay gated.
V1BETA1_DEFAULT_PLUGINS: dict[str, DefaultList] = {
    **V1BETA2_DEFAULT_PLUGINS,
    "preFilter": tuple(p for p in V1BETA2_DEFAULT_PLUGINS["preFilter"] if p[0] not in ("VolumeRestrictions", "VolumeZone")),
    "score": (
        ("NodeResourcesBalancedAllocation", 1),
        ("ImageLocality", 1),
        ("InterPodAffinity", 1),
        ("NodeResourcesLeastAllocated", 1),
        ("NodeAffinity", 1),
        ("NodePreferAvoidPods", 10000),
        ("PodTopologySpread", 2),
        ("TaintToleration", 1),
    ),
}

#: kube-scheduler plugins kubesched knows of but does not run: accepted in ``disabled``
#: silently, dropped with a warning when enabled.
UNSUPPORTED_PLUGINS: dict[str, str] = {
    "EBSLimits": "removed from kube-scheduler in 1.32 (NodeVolumeLimits enforces the CSI drivers' attach limits)",
    "GCEPDLimits": "removed from kube-scheduler in 1.32 (NodeVolumeLimits enforces the CSI drivers' attach limits)",
    "AzureDiskLimits": "removed from kube-scheduler in 1.32 (NodeVolumeLimits enforces the CSI drivers' attach limits)",
    "CinderLimits": "removed from kube-scheduler in 1.32 (NodeVolumeLimits enforces the CSI drivers' attach limits)",
    "NodePreferAvoidPods": "removed in v1beta2; use node taints instead",
    "SelectorSpread": (
        "removed in v1; PodTopologySpread with defaultingType System provides default spreading"
    ),
    "NodeLabel": "removed in v1beta2; use NodeAffinity args addedAffinity instead",
    "ServiceAffinity": "removed in v1beta2; use pod affinity/anti-affinity instead",
    "NodeDeclaredFeatures": "alpha, feature-gated plugin not implemented by kubesched",
    "GangScheduling": "alpha, feature-gated plugin not implemented by kubesched",
    "TopologyPlacementGenerator": "alpha, feature-gated plugin not implemented by kubesched",
    "PodGroupPodsCount": "alpha, feature-gated plugin not implemented by kubesched",
}

#: Plugins validation refuses to enable or configure (validation.go invalidPluginsByVersion, v1).
INVALID_PLUGINS: frozenset[str] = frozenset({"AzureDiskLimits", "CinderLimits", "EBSLimits", "GCEPDLimits"})

#: v1beta1 resource-scoring plugins folded into NodeResourcesFit's scoringStrategy.type.
RESOURCE_SCORERS: dict[str, str] = {
    "NodeResourcesLeastAllocated": "LeastAllocated",
    "NodeResourcesMostAllocated": "MostAllocated",
    "RequestedToCapacityRatio": "RequestedToCapacityRatio",
}

#: In-tree plugins with an Args kind kubesched defaults and validates (``<Name>Args``).
ARGS_PLUGINS: frozenset[str] = frozenset(
    {
        "NodeResourcesFit",
        "NodeResourcesBalancedAllocation",
        "InterPodAffinity",
        "PodTopologySpread",
        "NodeAffinity",
        "DefaultPreemption",
        "VolumeBinding",
        "DynamicResources",
    }
)

SCORING_STRATEGY_TYPES: tuple[str, ...] = ("LeastAllocated", "MostAllocated", "RequestedToCapacityRatio")

#: cpu and memory, weight 1 each: NodeResourcesFit / BalancedAllocation default resources.
DEFAULT_RESOURCES: tuple[tuple[str, int], ...] = (("cpu", 1), ("memory", 1))


def default_resources() -> list[dict]:
    """A fresh copy of the default resource list in wire form."""
    return [{"name": name, "weight": weight} for name, weight in DEFAULT_RESOURCES]


#: PodTopologySpread constraints applied with defaultingType System (KK podtopologyspread).
SYSTEM_DEFAULT_CONSTRAINTS: tuple[tuple[str, int], ...] = (
    ("kubernetes.io/hostname", 3),
    ("topology.kubernetes.io/zone", 5),
)


def system_default_constraints() -> list[dict]:
    """A fresh copy of the System default constraints in wire form."""
    return [
        {"maxSkew": skew, "topologyKey": key, "whenUnsatisfiable": "ScheduleAnyway"}
        for key, skew in SYSTEM_DEFAULT_CONSTRAINTS
    ]


MAX_CUSTOM_PRIORITY_SCORE = 10  # shape score upper bound (scaled x10 by the plugin)
MAX_TOTAL_SCORE = 2**63 - 1

# --- top-level defaults (v1 defaults.go) ---
DEFAULT_PARALLELISM = 16
DEFAULT_PERCENTAGE_OF_NODES_TO_SCORE = 0
DEFAULT_POD_INITIAL_BACKOFF_SECONDS = 1
DEFAULT_POD_MAX_BACKOFF_SECONDS = 10


def default_leader_election() -> dict:
    """component-base RecommendedDefaultLeaderElectionConfiguration + scheduler lock names."""
    return {
        "leaderElect": True,
        "leaseDuration": "15s",
        "renewDeadline": "10s",
        "retryPeriod": "2s",
        "resourceLock": "leases",
        "resourceName": "kube-scheduler",
        "resourceNamespace": "kube-system",
    }


def default_client_connection() -> dict:
    """The scheduler's own QPS/burst opinion and protobuf content type."""
    return {
        "kubeconfig": "",
        "acceptContentTypes": "",
        "contentType": "application/vnd.kubernetes.protobuf",
        "qps": 50.0,
        "burst": 100,
    }


# --- strict-decoding field sets per version ---

_COMMON_TOP = {
    "apiVersion",
    "kind",
    "parallelism",
    "leaderElection",
    "clientConnection",
    "enableProfiling",
    "enableContentionProfiling",
    "percentageOfNodesToScore",
    "podInitialBackoffSeconds",
    "podMaxBackoffSeconds",
    "profiles",
    "extenders",
}
TOP_LEVEL_FIELDS: dict[str, frozenset[str]] = {
    V1BETA1: frozenset(_COMMON_TOP | {"healthzBindAddress", "metricsBindAddress"}),
    V1BETA2: frozenset(_COMMON_TOP | {"healthzBindAddress", "metricsBindAddress"}),
    V1BETA3: frozenset(_COMMON_TOP),
    V1: frozenset(_COMMON_TOP | {"delayCacheUntilActive"}),
}

PROFILE_FIELDS: dict[str, frozenset[str]] = {
    V1BETA1: frozenset({"schedulerName", "plugins", "pluginConfig"}),
    V1BETA2: frozenset({"schedulerName", "plugins", "pluginConfig"}),
    V1BETA3: frozenset({"schedulerName", "plugins", "pluginConfig", "percentageOfNodesToScore"}),
    V1: frozenset({"schedulerName", "plugins", "pluginConfig", "percentageOfNodesToScore"}),
}

_POINTS_NO_PREENQUEUE = set(EXTENSION_POINTS) - {"preEnqueue"}
#: 1.36 alpha (workload-aware scheduling) points: accepted in v1, not run by kubesched.
PLACEMENT_POINTS: frozenset[str] = frozenset({"placementGenerate", "placementScore"})
PLUGINS_FIELDS: dict[str, frozenset[str]] = {
    V1BETA1: frozenset(_POINTS_NO_PREENQUEUE),
    V1BETA2: frozenset(_POINTS_NO_PREENQUEUE | {"preEnqueue"}),
    V1BETA3: frozenset(_POINTS_NO_PREENQUEUE | {"preEnqueue", "multiPoint"}),
    V1: frozenset(_POINTS_NO_PREENQUEUE | {"preEnqueue", "multiPoint"} | PLACEMENT_POINTS),
}

LEADER_ELECTION_FIELDS = frozenset(default_leader_election())
CLIENT_CONNECTION_FIELDS = frozenset(default_client_connection())
EXTENDER_FIELDS = frozenset(
    {
        "urlPrefix",
        "filterVerb",
        "preemptVerb",
        "prioritizeVerb",
        "weight",
        "bindVerb",
        "enableHTTPS",
        "tlsConfig",
        "httpTimeout",
        "nodeCacheCapable",
        "managedResources",
        "ignorable",
    }
)
EXTENDER_TLS_FIELDS = frozenset(
    {"insecure", "serverName", "certFile", "keyFile", "caFile", "certData", "keyData", "caData"}
)

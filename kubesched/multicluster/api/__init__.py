"""Karmada's scheduling API (cluster.karmada.io/v1alpha1, policy.karmada.io/v1alpha1), parsed strictly.

Kinds and field names are Karmada's, so existing objects load unchanged. Parsing applies what
Karmada's admission applies before the scheduler sees an object: the validating webhook's rules
(one clear error naming the field) and the mutating webhook's defaults (spread constraints default
to ``spreadByField: cluster`` and ``minGroups: 1``; ``replicaSchedulingType`` defaults to Divided and
a Divided strategy's ``replicaDivisionPreference`` to Weighted). A Cluster's resource models are
standardized and validated as Karmada's registry does on create, and a Cluster without any gets
Karmada's nine default grades (both with the CustomizedClusterResourceModeling gate on, its default). ``spec.failover`` and
``spec.propagateDeps`` are parsed for the failover controllers (``kubesched.multicluster.failover``);
other fields that do not affect placement (conflict resolution, suspension, ...) are accepted as
Karmada defines them and ignored.

The package holds one module per part: ``placement`` (cluster affinities, spread constraints,
replica scheduling), ``policy`` (PropagationPolicy, ClusterPropagationPolicy, failover behaviour,
ClusterTaintPolicy), ``cluster`` (Cluster, resource models), ``binding`` (a template with its
placement) and ``fields`` (strict reading); every public name is importable from here.
"""

from __future__ import annotations

from kubesched.multicluster.api.binding import (  # noqa: F401
    Binding,
    TargetCluster,
)
from kubesched.multicluster.api.cluster import (  # noqa: F401
    CLUSTER_API,
    DEFAULT_RESOURCE_MODELS,
    MAX_MODELED_NODES,
    AllocatableModeling,
    Cluster,
    ResourceModel,
    ResourceModelRange,
    ResourceSummary,
    parse_cluster,
    parse_resource_models,
)
from kubesched.multicluster.api.placement import (  # noqa: F401
    AGGREGATED,
    AVAILABLE_REPLICAS,
    DIVIDED,
    DUPLICATED,
    FIELD_KEYS,
    SPREAD_FIELDS,
    WEIGHTED,
    ClusterAffinity,
    ClusterAffinityTerm,
    ClusterPreferences,
    OverflowClusterAffinity,
    Placement,
    ReplicaSchedulingStrategy,
    SpreadConstraint,
    StaticClusterWeight,
    parse_placement,
)
from kubesched.multicluster.api.policy import (  # noqa: F401
    APPLICATION_PURGE_MODES,
    CLUSTER_PURGE_MODES,
    POLICY_API,
    PURGE_DIRECTLY,
    PURGE_GRACEFULLY,
    PURGE_GRACIOUSLY,
    PURGE_IMMEDIATELY,
    PURGE_NEVER,
    ApplicationFailoverBehavior,
    ClusterFailoverBehavior,
    ClusterTaintPolicy,
    FailoverBehavior,
    MatchCondition,
    PropagationPolicy,
    ResourceSelector,
    parse_cluster_taint_policy,
    parse_policy,
)

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
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from kubesched.api.fields import as_bool, as_int, as_int32, as_list, as_map, as_str, str_map
from kubesched.api.objects import Pod
from kubesched.api.quantity import INT64_MAX, parse_quantity, resource_value
from kubesched.api.resources import Resources, parse_resource_list
from kubesched.api.selectors import LabelSelector, NodeSelectorRequirement, validate_label_key
from kubesched.api.taints import Taint, Toleration, parse_taints, parse_tolerations
from kubesched.errors import InputError, join_path

CLUSTER_API = "cluster.karmada.io/v1alpha1"
POLICY_API = "policy.karmada.io/v1alpha1"

SPREAD_FIELDS = ("cluster", "region", "zone", "provider")
DUPLICATED, DIVIDED = "Duplicated", "Divided"
AGGREGATED, WEIGHTED = "Aggregated", "Weighted"
AVAILABLE_REPLICAS = "AvailableReplicas"
# ClusterAffinity.fieldSelector keys (util.ProviderField, RegionField, ZoneField)
FIELD_KEYS = ("provider", "region", "zone")


def _obj(value: Any, path: str, allowed: tuple[str, ...]) -> dict:
    """An object whose keys must all be in ``allowed`` (Karmada's CRDs prune nothing silently here)."""
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise InputError(f"expected an object, got {type(value).__name__}", path=path)
    for k in value:
        if k not in allowed:
            raise InputError(f'unknown field "{k}"', path=join_path(path, str(k)))
    return dict(value)


def _str_list(value: Any, path: str) -> tuple[str, ...]:
    return tuple(as_str(v, join_path(path, i)) for i, v in enumerate(as_list(value, path)))


# ---- ClusterAffinity ---------------------------------------------------------------------------
@dataclass(frozen=True)
class ClusterAffinity:
    label_selector: LabelSelector | None = None
    field_selector: tuple[NodeSelectorRequirement, ...] | None = None
    cluster_names: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()

    @property
    def empty(self) -> bool:
        return self.label_selector is None and self.field_selector is None and not self.cluster_names and not self.exclude

    @classmethod
    def parse(cls, d: Any, path: str, extra: tuple[str, ...] = ()) -> ClusterAffinity:
        m = _obj(d, path, ("labelSelector", "fieldSelector", "clusterNames", "exclude", *extra))
        fs = None
        if m.get("fieldSelector") is not None:
            fp = join_path(path, "fieldSelector")
            fm = _obj(m["fieldSelector"], fp, ("matchExpressions",))
            ep = join_path(fp, "matchExpressions")
            reqs = []
            for i, e in enumerate(as_list(fm.get("matchExpressions"), ep)):
                r = NodeSelectorRequirement.parse(e, join_path(ep, i))
                if r.key not in FIELD_KEYS:
                    raise InputError(f'unsupported key "{r.key}", must be provider, region, or zone', path=join_path(ep, i))
                if r.operator not in ("In", "NotIn"):
                    raise InputError(f'unsupported operator "{r.operator}", must be In or NotIn', path=join_path(ep, i))
                reqs.append(r)
            fs = tuple(reqs)
        return cls(
            LabelSelector.parse(m.get("labelSelector"), join_path(path, "labelSelector")),
            fs,
            _str_list(m.get("clusterNames"), join_path(path, "clusterNames")),
            _str_list(m.get("exclude"), join_path(path, "exclude")),
        )


@dataclass(frozen=True)
class OverflowClusterAffinity:
    affinity_name: str
    affinity: ClusterAffinity


@dataclass(frozen=True)
class ClusterAffinityTerm:
    affinity_name: str
    affinity: ClusterAffinity
    overflow: tuple[OverflowClusterAffinity, ...] | None = None


# ---- spread, replica scheduling ----------------------------------------------------------------
@dataclass(frozen=True)
class SpreadConstraint:
    spread_by_field: str = ""
    spread_by_label: str = ""
    max_groups: int = 0
    min_groups: int = 0


@dataclass(frozen=True)
class StaticClusterWeight:
    target_cluster: ClusterAffinity
    weight: int


@dataclass(frozen=True)
class ClusterPreferences:
    static_weight_list: tuple[StaticClusterWeight, ...] = ()
    dynamic_weight: str = ""


@dataclass(frozen=True)
class ReplicaSchedulingStrategy:
    replica_scheduling_type: str = DIVIDED
    replica_division_preference: str = ""
    weight_preference: ClusterPreferences | None = None


@dataclass(frozen=True)
class Placement:
    cluster_affinity: ClusterAffinity | None = None
    cluster_affinities: tuple[ClusterAffinityTerm, ...] | None = None
    cluster_tolerations: tuple[Toleration, ...] = ()
    spread_constraints: tuple[SpreadConstraint, ...] = ()
    replica_scheduling: ReplicaSchedulingStrategy | None = None

    def replica_scheduling_type(self) -> str:
        """Placement.ReplicaSchedulingType: Duplicated when no strategy is given."""
        return self.replica_scheduling.replica_scheduling_type if self.replica_scheduling else DUPLICATED


def parse_placement(d: Any, path: str) -> Placement:
    m = _obj(
        d,
        path,
        ("clusterAffinity", "clusterAffinities", "clusterTolerations", "spreadConstraints", "replicaScheduling", "workloadAffinity"),
    )
    if m.get("clusterAffinity") is not None and m.get("clusterAffinities") is not None:
        raise InputError("clusterAffinities cannot co-exist with clusterAffinity", path=path)
    rs = _parse_replica_scheduling(m.get("replicaScheduling"), join_path(path, "replicaScheduling"))
    ca = None
    if m.get("clusterAffinity") is not None:
        ca = ClusterAffinity.parse(m["clusterAffinity"], join_path(path, "clusterAffinity"))
    terms = None
    if m.get("clusterAffinities") is not None:
        terms = _parse_affinity_terms(m["clusterAffinities"], join_path(path, "clusterAffinities"), rs)
    tp = join_path(path, "clusterTolerations")
    tols = parse_tolerations(m.get("clusterTolerations"), tp)
    for i, t in enumerate(as_list(m.get("clusterTolerations"), tp)):
        if isinstance(t, Mapping) and t.get("operator") in ("Lt", "Gt"):
            raise InputError(f'Unsupported value: "{t["operator"]}"', path=join_path(join_path(tp, i), "operator"))
    return Placement(ca, terms, tols, _parse_spread(m.get("spreadConstraints"), join_path(path, "spreadConstraints")), rs)


def _parse_affinity_terms(value: Any, path: str, rs: ReplicaSchedulingStrategy | None) -> tuple[ClusterAffinityTerm, ...]:
    terms: list[ClusterAffinityTerm] = []
    names: set[str] = set()
    overflow_ok = rs is not None and rs.replica_scheduling_type == DIVIDED and (
        rs.replica_division_preference == AGGREGATED
        or (rs.weight_preference is not None and rs.weight_preference.dynamic_weight != "")
    )
    for i, t in enumerate(as_list(value, path)):
        ip = join_path(path, i)
        m = _obj(t, ip, ("affinityName", "labelSelector", "fieldSelector", "clusterNames", "exclude", "overflowAffinities"))
        name = validate_label_key(as_str(m.get("affinityName"), join_path(ip, "affinityName")), join_path(ip, "affinityName"))
        if name in names:
            raise InputError("each affinity term in a policy must have a unique name", path=path)
        names.add(name)
        aff = ClusterAffinity.parse(m, ip, ("affinityName", "overflowAffinities"))
        overflow = None
        if m.get("overflowAffinities") is not None:
            op = join_path(ip, "overflowAffinities")
            if not overflow_ok:
                raise InputError("overflowAffinities can only be used together with dynamic weight or aggregated scheduling", path=op)
            if aff.empty:
                raise InputError("overflowAffinities can only be used together with the inline ClusterAffinity", path=op)
            seen = {name}
            items = []
            for k, o in enumerate(as_list(m["overflowAffinities"], op)):
                kp = join_path(op, k)
                om = _obj(o, kp, ("affinityName", "labelSelector", "fieldSelector", "clusterNames", "exclude"))
                oname = validate_label_key(as_str(om.get("affinityName"), join_path(kp, "affinityName")), join_path(kp, "affinityName"))
                if oname in seen:
                    raise InputError(
                        "overflow affinity name must be unique and must not duplicate the primary group's affinityName",
                        path=join_path(kp, "affinityName"),
                    )
                seen.add(oname)
                items.append(OverflowClusterAffinity(oname, ClusterAffinity.parse(om, kp, ("affinityName",))))
            overflow = tuple(items)
        terms.append(ClusterAffinityTerm(name, aff, overflow))
    return tuple(terms)


def _parse_spread(value: Any, path: str) -> tuple[SpreadConstraint, ...]:
    out: list[SpreadConstraint] = []
    seen: set[str] = set()
    for i, c in enumerate(as_list(value, path)):
        ip = join_path(path, i)
        m = _obj(c, ip, ("spreadByField", "spreadByLabel", "maxGroups", "minGroups"))
        by_field = as_str(m.get("spreadByField"), join_path(ip, "spreadByField"))
        by_label = as_str(m.get("spreadByLabel"), join_path(ip, "spreadByLabel"))
        if by_field and by_field not in SPREAD_FIELDS:
            raise InputError(
                f'Unsupported value: "{by_field}": supported values: "cluster", "region", "zone", "provider"',
                path=join_path(ip, "spreadByField"),
            )
        if by_field and by_label:
            raise InputError("spreadByLabel should not co-exist with spreadByField", path=ip)
        max_g = as_int(m.get("maxGroups"), join_path(ip, "maxGroups")) or 0
        min_g = as_int(m.get("minGroups"), join_path(ip, "minGroups")) or 0
        if min_g < 0:
            raise InputError("minGroups lower than 0 is not allowed", path=ip)
        if max_g < 0:
            raise InputError("maxGroups lower than 0 is not allowed", path=ip)
        if max_g > 0 and max_g < min_g:
            raise InputError("maxGroups lower than minGroups is not allowed", path=ip)
        if not by_field and not by_label:  # mutating webhook: SetDefaultSpreadConstraints
            by_field = "cluster"
        if by_field:
            if by_field in seen:
                raise InputError(f"multiple {by_field} spread constraints are not allowed", path=path)
            seen.add(by_field)
        out.append(SpreadConstraint(by_field, by_label, max_g, min_g or 1))
    if seen and "cluster" not in seen:
        raise InputError(
            "the cluster spread constraint must be enabled in one of the constraints in case of SpreadByField is enabled",
            path=path,
        )
    return tuple(out)


def _parse_replica_scheduling(value: Any, path: str) -> ReplicaSchedulingStrategy | None:
    if value is None:
        return None
    m = _obj(value, path, ("replicaSchedulingType", "replicaDivisionPreference", "weightPreference"))
    typ = as_str(m.get("replicaSchedulingType"), join_path(path, "replicaSchedulingType")) or DIVIDED
    if typ not in (DUPLICATED, DIVIDED):
        raise InputError(f'Unsupported value: "{typ}": supported values: "Duplicated", "Divided"', path=join_path(path, "replicaSchedulingType"))
    pref = as_str(m.get("replicaDivisionPreference"), join_path(path, "replicaDivisionPreference"))
    if pref and pref not in (AGGREGATED, WEIGHTED):
        raise InputError(
            f'Unsupported value: "{pref}": supported values: "Aggregated", "Weighted"', path=join_path(path, "replicaDivisionPreference")
        )
    if typ == DIVIDED and not pref:  # mutating webhook: SetReplicaDivisionPreferenceWeighted
        pref = WEIGHTED
    wp = None
    if m.get("weightPreference") is not None:
        pp = join_path(path, "weightPreference")
        wm = _obj(m["weightPreference"], pp, ("staticWeightList", "dynamicWeight"))
        dyn = as_str(wm.get("dynamicWeight"), join_path(pp, "dynamicWeight"))
        if dyn and dyn != AVAILABLE_REPLICAS:
            raise InputError(f'Unsupported value: "{dyn}": supported values: "AvailableReplicas"', path=join_path(pp, "dynamicWeight"))
        sp = join_path(pp, "staticWeightList")
        weights = []
        for i, w in enumerate(as_list(wm.get("staticWeightList"), sp)):
            ip = join_path(sp, i)
            ww = _obj(w, ip, ("targetCluster", "weight"))
            weight = as_int(ww.get("weight"), join_path(ip, "weight"))
            if weight is None or weight < 1:
                raise InputError("should be greater than or equal to 1", path=join_path(ip, "weight"))
            weights.append(StaticClusterWeight(ClusterAffinity.parse(ww.get("targetCluster"), join_path(ip, "targetCluster")), weight))
        wp = ClusterPreferences(tuple(weights), dyn)
    return ReplicaSchedulingStrategy(typ, pref, wp)


# ---- PropagationPolicy / ClusterPropagationPolicy ----------------------------------------------
@dataclass(frozen=True)
class ResourceSelector:
    api_version: str
    kind: str
    namespace: str = ""
    name: str = ""
    label_selector: LabelSelector | None = None


# ---- failover (PropagationSpec.failover) --------------------------------------------------------
# PurgeMode: how the replicas left on the cluster a workload is evicted from go. Immediately and
# Graciously are the deprecated spellings of Directly and Gracefully (still accepted, same meaning).
PURGE_DIRECTLY, PURGE_GRACEFULLY, PURGE_NEVER = "Directly", "Gracefully", "Never"
PURGE_IMMEDIATELY, PURGE_GRACIOUSLY = "Immediately", "Graciously"
APPLICATION_PURGE_MODES = (PURGE_DIRECTLY, PURGE_GRACEFULLY, PURGE_NEVER, PURGE_IMMEDIATELY, PURGE_GRACIOUSLY)
CLUSTER_PURGE_MODES = (PURGE_DIRECTLY, PURGE_GRACEFULLY)


@dataclass(frozen=True)
class ApplicationFailoverBehavior:
    """spec.failover.application, defaulted as the CRD and the mutating webhook do."""

    toleration_seconds: int = 300  # decisionConditions.tolerationSeconds
    purge_mode: str = PURGE_GRACEFULLY
    grace_period_seconds: int | None = None  # 600 when Gracefully and unset (SetDefaultGracePeriodSeconds)


@dataclass(frozen=True)
class ClusterFailoverBehavior:
    purge_mode: str = PURGE_GRACEFULLY


@dataclass(frozen=True)
class FailoverBehavior:
    application: ApplicationFailoverBehavior | None = None
    cluster: ClusterFailoverBehavior | None = None  # None: the controller's --no-execute-taint-eviction-purge-mode


def _parse_failover(value: Any, path: str) -> FailoverBehavior | None:
    """FailoverBehavior with the CRD's enums and defaults and ValidateFailoverBehavior's rules
    (statePreservation is accepted and ignored: it needs the alpha StatefulFailoverInjection gate)."""
    if value is None:
        return None
    m = _obj(value, path, ("application", "cluster"))
    app = None
    if m.get("application") is not None:
        ap = join_path(path, "application")
        am = _obj(m["application"], ap, ("decisionConditions", "purgeMode", "gracePeriodSeconds", "statePreservation"))
        dp = join_path(ap, "decisionConditions")
        if am.get("decisionConditions") is None:
            raise InputError("Required value", path=dp)
        dm = _obj(am["decisionConditions"], dp, ("tolerationSeconds",))
        tp = join_path(dp, "tolerationSeconds")
        toleration = as_int32(dm.get("tolerationSeconds"), tp, 300)
        assert toleration is not None
        if toleration < 0:
            raise InputError("must be greater than or equal to 0", path=tp)
        mode = as_str(am.get("purgeMode"), join_path(ap, "purgeMode")) or PURGE_GRACEFULLY
        _check_purge_mode(mode, APPLICATION_PURGE_MODES, join_path(ap, "purgeMode"))
        gp = join_path(ap, "gracePeriodSeconds")
        grace = as_int32(am.get("gracePeriodSeconds"), gp, None)
        graceful = mode in (PURGE_GRACEFULLY, PURGE_GRACIOUSLY)
        if grace is not None and not graceful:
            raise InputError("only takes effect when purgeMode is gracefully", path=gp)
        if grace is not None and grace <= 0:
            raise InputError("must be greater than 0", path=gp)
        if graceful and grace is None:
            grace = 600
        app = ApplicationFailoverBehavior(toleration, mode, grace)
    cluster = None
    if m.get("cluster") is not None:
        cp = join_path(path, "cluster")
        cm = _obj(m["cluster"], cp, ("purgeMode", "statePreservation"))
        mode = as_str(cm.get("purgeMode"), join_path(cp, "purgeMode")) or PURGE_GRACEFULLY
        _check_purge_mode(mode, CLUSTER_PURGE_MODES, join_path(cp, "purgeMode"))
        cluster = ClusterFailoverBehavior(mode)
    return FailoverBehavior(app, cluster)


def _check_purge_mode(mode: str, allowed: tuple[str, ...], path: str) -> None:
    if mode not in allowed:
        shown = ", ".join(f'"{a}"' for a in allowed)
        raise InputError(f'Unsupported value: "{mode}": supported values: {shown}', path=path)


# ---- ClusterTaintPolicy (policy.karmada.io/v1alpha1) ------------------------------------------
@dataclass(frozen=True)
class MatchCondition:
    condition_type: str
    operator: str  # In | NotIn
    status_values: tuple[str, ...]


@dataclass(frozen=True)
class ClusterTaintPolicy:
    """``taints`` go on a cluster (of ``target_clusters``, every one when None) whose conditions
    match all of ``add_on``, and come off when they match all of ``remove_on``."""

    name: str
    taints: tuple[Taint, ...]
    add_on: tuple[MatchCondition, ...] = ()
    remove_on: tuple[MatchCondition, ...] = ()
    target_clusters: ClusterAffinity | None = None


def parse_cluster_taint_policy(m: dict, path: str) -> ClusterTaintPolicy:
    """The CRD's required fields and enums and the validating webhook's rule that no two taints
    share key and effect. NoExecute taints are accepted (Karmada's webhook needs
    ``--allow-no-execute-taint-policy`` for them)."""
    _obj(m, path, ("apiVersion", "kind", "metadata", "spec", "status"))
    mp = join_path(path, "metadata")
    name = as_str(as_map(m.get("metadata"), mp).get("name"), join_path(mp, "name"))
    if not name:
        raise InputError("metadata.name is required", path=join_path(mp, "name"))
    sp = join_path(path, "spec")
    spec = _obj(m.get("spec"), sp, ("targetClusters", "addOnConditions", "removeOnConditions", "taints"))
    tp = join_path(sp, "taints")
    taints = parse_taints(spec.get("taints"), tp)
    if not taints:
        raise InputError("should have at least 1 items", path=tp)
    for i, t in enumerate(taints):
        if any(u.key == t.key and u.effect == t.effect for u in taints[i + 1 :]):
            raise InputError(f"Duplicate taint with the same key({t.key}) and effect({t.effect}) is not allowed", path=join_path(tp, i))
    target = None
    if spec.get("targetClusters") is not None:
        target = ClusterAffinity.parse(spec["targetClusters"], join_path(sp, "targetClusters"))
    return ClusterTaintPolicy(name, taints, _match_conditions(spec.get("addOnConditions"), join_path(sp, "addOnConditions")),
                              _match_conditions(spec.get("removeOnConditions"), join_path(sp, "removeOnConditions")), target)


def _match_conditions(value: Any, path: str) -> tuple[MatchCondition, ...]:
    out = []
    for i, c in enumerate(as_list(value, path)):
        ip = join_path(path, i)
        cm = _obj(c, ip, ("conditionType", "operator", "statusValues"))
        ctype = as_str(cm.get("conditionType"), join_path(ip, "conditionType"))
        if not ctype:
            raise InputError("Required value", path=join_path(ip, "conditionType"))
        op = as_str(cm.get("operator"), join_path(ip, "operator"))
        if op not in ("In", "NotIn"):
            raise InputError(f'Unsupported value: "{op}": supported values: "In", "NotIn"', path=join_path(ip, "operator"))
        out.append(MatchCondition(ctype, op, _str_list(cm.get("statusValues"), join_path(ip, "statusValues"))))
    return tuple(out)


# PropagationSpec fields that do not change where replicas go: accepted, not modelled.
_SPEC_IGNORED = (
    "association",
    "preemption",
    "dependentOverrides",
    "conflictResolution",
    "activationPreference",
    "suspension",
    "preserveResourcesOnDeletion",
    "schedulePriority",
)


@dataclass(frozen=True)
class PropagationPolicy:
    kind: str  # PropagationPolicy | ClusterPropagationPolicy
    name: str
    namespace: str  # "" for ClusterPropagationPolicy
    resource_selectors: tuple[ResourceSelector, ...]
    placement: Placement
    priority: int = 0
    scheduler_name: str = "default-scheduler"
    source: str = ""
    failover: FailoverBehavior | None = None
    propagate_deps: bool = False

    @property
    def key(self) -> str:
        return f"{self.kind} {self.namespace}/{self.name}" if self.namespace else f"{self.kind} {self.name}"


def parse_policy(m: dict, path: str) -> PropagationPolicy:
    kind = m["kind"]
    _obj(m, path, ("apiVersion", "kind", "metadata", "spec", "status"))
    mp = join_path(path, "metadata")
    md = as_map(m.get("metadata"), mp)
    name = as_str(md.get("name"), join_path(mp, "name"))
    if not name:
        raise InputError("metadata.name is required", path=join_path(mp, "name"))
    namespace = ""
    if kind == "PropagationPolicy":
        namespace = as_str(md.get("namespace"), join_path(mp, "namespace")) or "default"
    sp = join_path(path, "spec")
    spec = _obj(m.get("spec"), sp, ("resourceSelectors", "placement", "priority", "schedulerName", "failover", "propagateDeps", *_SPEC_IGNORED))
    rp = join_path(sp, "resourceSelectors")
    selectors = []
    for i, s in enumerate(as_list(spec.get("resourceSelectors"), rp)):
        ip = join_path(rp, i)
        sm = _obj(s, ip, ("apiVersion", "kind", "namespace", "name", "labelSelector"))
        api_version = as_str(sm.get("apiVersion"), join_path(ip, "apiVersion"))
        k = as_str(sm.get("kind"), join_path(ip, "kind"))
        if not api_version or not k:
            raise InputError("apiVersion and kind are required", path=ip)
        ns = as_str(sm.get("namespace"), join_path(ip, "namespace"))
        if namespace:
            ns = ns or namespace  # mutating webhook: the policy's namespace
            if ns != namespace:
                raise InputError("namespace of resource selector must be the same as the namespace of the policy", path=join_path(ip, "namespace"))
        selectors.append(
            ResourceSelector(api_version, k, ns, as_str(sm.get("name"), join_path(ip, "name")),
                             LabelSelector.parse(sm.get("labelSelector"), join_path(ip, "labelSelector")))
        )
    if not selectors:
        raise InputError("must have at least 1 items", path=rp)
    priority = as_int32(spec.get("priority"), join_path(sp, "priority")) or 0
    return PropagationPolicy(
        kind,
        name,
        namespace,
        tuple(selectors),
        parse_placement(spec.get("placement"), join_path(sp, "placement")),
        priority,
        as_str(spec.get("schedulerName"), join_path(sp, "schedulerName")) or "default-scheduler",
        failover=_parse_failover(spec.get("failover"), join_path(sp, "failover")),
        propagate_deps=as_bool(spec.get("propagateDeps"), join_path(sp, "propagateDeps")),
    )


# ---- Cluster -----------------------------------------------------------------------------------
@dataclass(frozen=True)
class ResourceModelRange:
    """One resource's interval [min, max) in a grade (kubesched's units: cpu in millicores)."""

    name: str
    min: int
    max: int


@dataclass(frozen=True)
class ResourceModel:
    """``spec.resourceModels[*]``: a grade and its ranges, one per resource, in the same order in
    every grade."""

    grade: int
    ranges: tuple[ResourceModelRange, ...]


@dataclass(frozen=True)
class AllocatableModeling:
    """``status.resourceSummary.allocatableModelings[*]``: how many nodes fall in a grade."""

    grade: int
    count: int


@dataclass
class ResourceSummary:
    allocatable: Resources = field(default_factory=dict)
    allocating: Resources = field(default_factory=dict)
    allocated: Resources = field(default_factory=dict)
    allocatable_modelings: tuple[AllocatableModeling, ...] = ()


@dataclass
class Cluster:
    """A member cluster as Karmada's scheduler sees it (cluster.karmada.io/v1alpha1 Cluster)."""

    name: str
    labels: dict[str, str] = field(default_factory=dict)
    provider: str = ""
    region: str = ""
    zone: str = ""
    zones: tuple[str, ...] = ()
    taints: tuple[Taint, ...] = ()
    # status.apiEnablements as {groupVersion: {kinds}}; None when the status lists none
    api_enablements: dict[str, frozenset[str]] | None = None
    complete_api_enablements: bool = False
    resource_summary: ResourceSummary | None = None
    deleting: bool = False
    resource_models: tuple[ResourceModel, ...] = ()  # spec.resourceModels, standardized

    def api_enablement(self, api_version: str, kind: str) -> str:
        """Cluster.APIEnablement: APIEnabled, APIDisabled (the list is complete) or APIUnknown."""
        if self.api_enablements and kind in self.api_enablements.get(api_version, ()):
            return "APIEnabled"
        return "APIDisabled" if self.complete_api_enablements else "APIUnknown"


_CLUSTER_SPEC = (
    "id", "syncMode", "apiEndpoint", "secretRef", "impersonatorSecretRef", "insecureSkipTLSVerification",
    "proxyURL", "proxyHeader", "provider", "region", "zone", "zones", "taints", "resourceModels",
)
_CLUSTER_STATUS = ("kubernetesVersion", "apiEnablements", "conditions", "nodeSummary", "resourceSummary", "remedyActions")


def parse_cluster(m: dict, path: str, modeling: bool = True) -> Cluster:
    """A Cluster as Karmada's registry stores it on create. ``modeling``: the
    CustomizedClusterResourceModeling gate. On (Karmada's default), a Cluster without
    ``spec.resourceModels`` gets the nine default grades and listed ones are standardized; off, the
    models are validated as written, and as neither the cluster-status controller nor the general
    estimator reads models then, the Cluster keeps none (nor ``allocatableModelings``)."""
    _obj(m, path, ("apiVersion", "kind", "metadata", "spec", "status"))
    mp = join_path(path, "metadata")
    md = as_map(m.get("metadata"), mp)
    name = as_str(md.get("name"), join_path(mp, "name"))
    if not name:
        raise InputError("metadata.name is required", path=join_path(mp, "name"))
    sp = join_path(path, "spec")
    spec = _obj(m.get("spec"), sp, _CLUSTER_SPEC)
    stp = join_path(path, "status")
    status = _obj(m.get("status"), stp, _CLUSTER_STATUS)
    enablements: dict[str, frozenset[str]] | None = None
    ap = join_path(stp, "apiEnablements")
    if status.get("apiEnablements") is not None:
        enablements = {}
        for i, e in enumerate(as_list(status["apiEnablements"], ap)):
            ip = join_path(ap, i)
            em = _obj(e, ip, ("groupVersion", "resources"))
            rp = join_path(ip, "resources")
            kinds = [as_str(_obj(r, join_path(rp, k), ("name", "kind")).get("kind"), join_path(join_path(rp, k), "kind"))
                     for k, r in enumerate(as_list(em.get("resources"), rp))]
            gv = as_str(em.get("groupVersion"), join_path(ip, "groupVersion"))
            enablements[gv] = enablements.get(gv, frozenset()) | frozenset(kinds)
    complete = any(
        isinstance(c, Mapping) and c.get("type") == "CompleteAPIEnablements" and c.get("status") == "True"
        for c in as_list(status.get("conditions"), join_path(stp, "conditions"))
    )
    summary = None
    if status.get("resourceSummary") is not None:
        rp = join_path(stp, "resourceSummary")
        rm = _obj(status["resourceSummary"], rp, ("allocatable", "allocating", "allocated", "allocatableModelings"))
        summary = ResourceSummary(
            parse_resource_list(rm.get("allocatable"), join_path(rp, "allocatable")),
            parse_resource_list(rm.get("allocating"), join_path(rp, "allocating")),
            parse_resource_list(rm.get("allocated"), join_path(rp, "allocated")),
            _parse_modelings(rm.get("allocatableModelings"), join_path(rp, "allocatableModelings")) if modeling else (),
        )
    models = parse_resource_models(spec.get("resourceModels"), join_path(sp, "resourceModels"), standardize=modeling)
    return Cluster(
        name=name,
        labels=str_map(md.get("labels"), join_path(mp, "labels")),
        provider=as_str(spec.get("provider"), join_path(sp, "provider")),
        region=as_str(spec.get("region"), join_path(sp, "region")),
        zone=as_str(spec.get("zone"), join_path(sp, "zone")),
        zones=_str_list(spec.get("zones"), join_path(sp, "zones")),
        taints=parse_taints(spec.get("taints"), join_path(sp, "taints")),
        api_enablements=enablements,
        complete_api_enablements=complete,
        resource_summary=summary,
        deleting=bool(as_str(md.get("deletionTimestamp"), join_path(mp, "deletionTimestamp"))),
        resource_models=(models or DEFAULT_RESOURCE_MODELS) if modeling else (),
    )


#: The general estimator builds one node per node a Cluster's status counts in a grade: at most
#: this many in all (Kubernetes supports clusters of 5,000 nodes).
MAX_MODELED_NODES = 100_000


def _uint(value: Any, path: str) -> int:
    """A Go ``uint`` field: JSON decoding refuses a negative number or one past 64 bits."""
    v = as_int(value, path) or 0
    if not 0 <= v < 2**64:
        raise InputError(f"invalid value {v}: must be an unsigned 64-bit integer", path=path)
    return v


def _parse_modelings(value: Any, path: str) -> tuple[AllocatableModeling, ...]:
    out = []
    total = 0
    for i, a in enumerate(as_list(value, path)):
        ip = join_path(path, i)
        am = _obj(a, ip, ("grade", "count"))
        count = as_int(am.get("count"), join_path(ip, "count")) or 0  # a negative count is read: the estimator falls back
        total += max(count, 0)
        if total > MAX_MODELED_NODES:
            raise InputError(f"the grades count more than {MAX_MODELED_NODES:,} nodes in all", path=join_path(ip, "count"))
        out.append(AllocatableModeling(_uint(am.get("grade"), join_path(ip, "grade")), count))
    return tuple(out)


def parse_resource_models(value: Any, path: str, standardize: bool = True) -> tuple[ResourceModel, ...]:
    """``spec.resourceModels`` as Karmada's registry admits them on create: standardized first
    (StandardizeClusterResourceModels: sorted by grade, the first grade's mins taken as 0, the last
    grade's maxes as MaxInt64; only with CustomizedClusterResourceModeling on), then validated
    (ValidateClusterResourceModels: no two grades the same, the same resources in the same order in
    every grade, min < max, the first grade's mins 0, each grade's min equal to the grade below's
    max, the last grade's maxes MaxInt64). Validation compares exact quantities; the models keep
    kubesched's integer units."""
    parsed: list[tuple[int, list[tuple[str, Fraction, Fraction]], str]] = []
    for i, m in enumerate(as_list(value, path)):
        ip = join_path(path, i)
        mm = _obj(m, ip, ("grade", "ranges"))
        rp = join_path(ip, "ranges")
        ranges = []
        for j, r in enumerate(as_list(mm.get("ranges"), rp)):
            jp = join_path(rp, j)
            rr = _obj(r, jp, ("name", "min", "max"))
            name = as_str(rr.get("name"), join_path(jp, "name"))
            if not name:
                raise InputError("Required value", path=join_path(jp, "name"))
            bounds = []
            for key in ("min", "max"):
                if rr.get(key) is None:
                    raise InputError("Required value", path=join_path(jp, key))
                bounds.append(parse_quantity(rr[key], join_path(jp, key)))
            ranges.append((name, bounds[0], bounds[1]))
        parsed.append((_uint(mm.get("grade"), join_path(ip, "grade")), ranges, ip))
    if not parsed:
        return ()
    if standardize:
        parsed.sort(key=lambda m: m[0])  # sort.Slice by grade (equal grades are refused below)
        parsed[0] = (parsed[0][0], [(n, Fraction(0), hi) for n, _, hi in parsed[0][1]], parsed[0][2])
        parsed[-1] = (parsed[-1][0], [(n, lo, Fraction(INT64_MAX)) for n, lo, _ in parsed[-1][1]], parsed[-1][2])
    for i, (grade, ranges, ip) in enumerate(parsed):
        prev = parsed[i - 1] if i else None
        if prev is not None and grade == prev[0]:
            raise InputError("The grade of each models should not be the same", path=join_path(ip, "grade"))
        if prev is not None and len(prev[1]) != len(ranges):
            raise InputError("The number of resource types should be the same", path=join_path(ip, "ranges"))
        for j, (name, lo, hi) in enumerate(ranges):
            jp = join_path(join_path(ip, "ranges"), j)
            if hi <= lo:
                raise InputError("The max value of each resource must be greater than the min value", path=join_path(jp, "max"))
            if prev is None and lo != 0:
                raise InputError("The min value of each resource in the first model should be 0", path=join_path(jp, "min"))
            if prev is not None and prev[1][j][0] != name:
                raise InputError("The resource types of each models should be the same", path=join_path(jp, "name"))
            if prev is not None and prev[1][j][2] != lo:
                raise InputError("Model intervals for resources must be contiguous and non-overlapping", path=join_path(jp, "min"))
            if i == len(parsed) - 1 and -(-hi // 1) != INT64_MAX:  # Quantity.Value() rounds up
                raise InputError("The max value of each resource in the last model should be MaxInt64", path=join_path(jp, "max"))
    return tuple(
        ResourceModel(grade, tuple(ResourceModelRange(n, resource_value(n, lo), resource_value(n, hi)) for n, lo, hi in ranges))
        for grade, ranges, _ in parsed
    )


def _default_models() -> list[dict]:
    """SetDefaultClusterResourceModels: nine grades of cpu (cores) and memory, each doubling."""
    cpu = ["0", "1", "2", "4", "8", "16", "32", "64", "128", str(INT64_MAX)]
    mem = ["0", "4Gi", "16Gi", "32Gi", "64Gi", "128Gi", "256Gi", "512Gi", "1024Gi", str(INT64_MAX)]
    return [{"grade": g, "ranges": [{"name": "cpu", "min": cpu[g], "max": cpu[g + 1]},
                                    {"name": "memory", "min": mem[g], "max": mem[g + 1]}]} for g in range(9)]


#: The models Karmada's registry gives a Cluster created without any (CustomizedClusterResourceModeling on).
DEFAULT_RESOURCE_MODELS = parse_resource_models(_default_models(), "defaults")


# ---- the binding: a resource template with its placement ---------------------------------------
@dataclass(frozen=True)
class TargetCluster:
    name: str
    replicas: int = 0


@dataclass
class Binding:
    """What Karmada's scheduler schedules (ResourceBindingSpec/Status, the fields it reads)."""

    api_version: str
    kind: str
    namespace: str
    name: str
    uid: str
    replicas: int
    template: Pod | None  # the pod template replicas are made from (None: not a workload)
    placement: Placement
    clusters: tuple[TargetCluster, ...] = ()  # the previous result (spec.clusters)
    eviction_clusters: frozenset[str] = frozenset()  # spec.gracefulEvictionTasks[*].fromCluster
    observed_affinity_name: str = ""  # status.schedulerObservedAffinityName
    policy: str = ""
    requirements: bool = False  # ReplicaRequirements != nil: the template asks resources or nodes
    labels: dict[str, str] = field(default_factory=dict)
    annotations: dict[str, str] = field(default_factory=dict)
    failover: FailoverBehavior | None = None  # spec.failover, from the policy
    propagate_deps: bool = False  # spec.propagateDeps: application failover needs it

    @property
    def key(self) -> str:
        return f"{self.kind} {self.namespace}/{self.name}" if self.namespace else f"{self.kind} {self.name}"

    @property
    def is_workload(self) -> bool:
        """ResourceBindingSpec.IsWorkload: it has replicas or replica requirements."""
        return self.replicas > 0 or self.requirements

    def target_contains(self, name: str) -> bool:
        return any(t.name == name for t in self.clusters)

    def assigned_replicas_for(self, name: str) -> int:
        return next((t.replicas for t in self.clusters if t.name == name), 0)

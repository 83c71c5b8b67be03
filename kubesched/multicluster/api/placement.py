"""Karmada's Placement (policy.karmada.io/v1alpha1): cluster affinities, spread constraints and
replica scheduling, with the mutating webhook's defaults and the validating webhook's rules."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from kubesched.api.fields import as_int, as_list, as_str
from kubesched.api.selectors import LabelSelector, NodeSelectorRequirement, validate_label_key
from kubesched.api.taints import Toleration, parse_tolerations
from kubesched.errors import InputError, join_path
from kubesched.multicluster.api.fields import str_list, strict_object

SPREAD_FIELDS = ("cluster", "region", "zone", "provider")
DUPLICATED, DIVIDED = "Duplicated", "Divided"
AGGREGATED, WEIGHTED = "Aggregated", "Weighted"
AVAILABLE_REPLICAS = "AvailableReplicas"
# ClusterAffinity.fieldSelector keys (util.ProviderField, RegionField, ZoneField)
FIELD_KEYS = ("provider", "region", "zone")



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
        m = strict_object(d, path, ("labelSelector", "fieldSelector", "clusterNames", "exclude", *extra))
        fs = None
        if m.get("fieldSelector") is not None:
            fp = join_path(path, "fieldSelector")
            fm = strict_object(m["fieldSelector"], fp, ("matchExpressions",))
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
            str_list(m.get("clusterNames"), join_path(path, "clusterNames")),
            str_list(m.get("exclude"), join_path(path, "exclude")),
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
    m = strict_object(
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
        m = strict_object(t, ip, ("affinityName", "labelSelector", "fieldSelector", "clusterNames", "exclude", "overflowAffinities"))
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
                om = strict_object(o, kp, ("affinityName", "labelSelector", "fieldSelector", "clusterNames", "exclude"))
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
        m = strict_object(c, ip, ("spreadByField", "spreadByLabel", "maxGroups", "minGroups"))
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
    m = strict_object(value, path, ("replicaSchedulingType", "replicaDivisionPreference", "weightPreference"))
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
        wm = strict_object(m["weightPreference"], pp, ("staticWeightList", "dynamicWeight"))
        dyn = as_str(wm.get("dynamicWeight"), join_path(pp, "dynamicWeight"))
        if dyn and dyn != AVAILABLE_REPLICAS:
            raise InputError(f'Unsupported value: "{dyn}": supported values: "AvailableReplicas"', path=join_path(pp, "dynamicWeight"))
        sp = join_path(pp, "staticWeightList")
        weights = []
        for i, w in enumerate(as_list(wm.get("staticWeightList"), sp)):
            ip = join_path(sp, i)
            ww = strict_object(w, ip, ("targetCluster", "weight"))
            weight = as_int(ww.get("weight"), join_path(ip, "weight"))
            if weight is None or weight < 1:
                raise InputError("should be greater than or equal to 1", path=join_path(ip, "weight"))
            weights.append(StaticClusterWeight(ClusterAffinity.parse(ww.get("targetCluster"), join_path(ip, "targetCluster")), weight))
        wp = ClusterPreferences(tuple(weights), dyn)
    return ReplicaSchedulingStrategy(typ, pref, wp)

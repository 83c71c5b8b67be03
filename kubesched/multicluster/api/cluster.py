"""Karmada's Cluster (cluster.karmada.io/v1alpha1): what the scheduler reads of a member, resource
models standardized and validated as Karmada's registry does on create."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from kubesched.api.fields import as_int, as_list, as_str, str_map
from kubesched.api.quantity import INT64_MAX, parse_quantity, resource_value
from kubesched.api.resources import Resources, parse_resource_list
from kubesched.api.taints import Taint, parse_taints
from kubesched.errors import InputError, join_path
from kubesched.multicluster.api.fields import metadata_and_name, str_list, strict_object

CLUSTER_API = "cluster.karmada.io/v1alpha1"


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
    md, mp, name = metadata_and_name(m, path)
    sp = join_path(path, "spec")
    spec = strict_object(m.get("spec"), sp, _CLUSTER_SPEC)
    stp = join_path(path, "status")
    status = strict_object(m.get("status"), stp, _CLUSTER_STATUS)
    enablements: dict[str, frozenset[str]] | None = None
    ap = join_path(stp, "apiEnablements")
    if status.get("apiEnablements") is not None:
        enablements = {}
        for i, e in enumerate(as_list(status["apiEnablements"], ap)):
            ip = join_path(ap, i)
            em = strict_object(e, ip, ("groupVersion", "resources"))
            rp = join_path(ip, "resources")
            kinds = [as_str(strict_object(r, join_path(rp, k), ("name", "kind")).get("kind"), join_path(join_path(rp, k), "kind"))
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
        rm = strict_object(status["resourceSummary"], rp, ("allocatable", "allocating", "allocated", "allocatableModelings"))
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
        zones=str_list(spec.get("zones"), join_path(sp, "zones")),
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
        am = strict_object(a, ip, ("grade", "count"))
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
        mm = strict_object(m, ip, ("grade", "ranges"))
        rp = join_path(ip, "ranges")
        ranges = []
        for j, r in enumerate(as_list(mm.get("ranges"), rp)):
            jp = join_path(rp, j)
            rr = strict_object(r, jp, ("name", "min", "max"))
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

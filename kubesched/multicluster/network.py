"""Network-aware placement: latency between regions, users' latency to clusters, budgets per class.

Latency between regions comes from the shipped Azure P95 round-trip table (see
``kubesched/data/azure/README.md``) or a table of your own. A user in region R reaches a cluster
in region C in ``accessRttMs + RTT(R, C)`` (``accessRttMs`` alone when C is R); a workload names
its users' region and its latency class in annotations:

- ``kubesched.io/user-region``: e.g. ``Japan East`` (no annotation: no network constraint)
- ``kubesched.io/latency-class``: a class of the latency file (default: its ``defaultClass``)

Two cluster plugins read them:

- ``LatencyBudget`` (filter): rejects a cluster whose round trip from the users exceeds the
  class's budget.
- ``NetworkOverhead`` (filter and score): scheduler-plugins' NetworkOverhead lifted from nodes to
  clusters. A workload's dependencies are its users and the clusters running the workloads it
  names in ``kubesched.io/depends-on`` (``namespace/name``, comma-separated); each has the class
  budget as its maximum network cost. Cost to a dependency: 0 in the same cluster (upstream's same
  host), 1 in the same region and zone, the latency table's figure between regions (ms), and
  MaxCost 100 when a pair is unknown or a cluster has no region. Filter: reject when more
  dependencies are violated than satisfied. Score: the accumulated cost, normalised as upstream
  (``100 - 100 * (cost - min) / (max - min)``), so the cheapest cluster scores 100.
"""

from __future__ import annotations

import csv
import io
import math
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from kubesched.api.fields import as_int32, as_list, as_map, as_str
from kubesched.documents import read_text
from kubesched.errors import InputError, join_path
from kubesched.load import read_documents
from kubesched.multicluster.api import Binding, Cluster
from kubesched.multicluster.framework import MAX_CLUSTER_SCORE, SUCCESS, ClusterPlugin, Result, unschedulable

USER_REGION = "kubesched.io/user-region"
LATENCY_CLASS = "kubesched.io/latency-class"
DEPENDS_ON = "kubesched.io/depends-on"
AZURE_TABLE = "azure-network-latency-p95-2026-07-30.csv"
MAX_COST = 100  # NetworkOverhead's cost of an unknown pair
SAME_ZONE = 1
SAME_HOST = 0


def azure_table_path() -> Path:
    return Path(str(resources.files("kubesched") / "data" / "azure" / AZURE_TABLE))


@dataclass
class LatencyTable:
    """Round-trip times between regions, in ms (source row, destination column)."""

    rtt: dict[tuple[str, str], float] = field(default_factory=dict)
    regions: list[str] = field(default_factory=list)
    source: str = ""

    @classmethod
    def read(cls, path: str | Path) -> LatencyTable:
        out = cls(source=str(path))
        try:
            rows = list(csv.reader(io.StringIO(read_text(str(path)), newline="")))
        except csv.Error as e:
            raise InputError(f"invalid CSV: {e}", source=str(path)) from None
        if not rows or len(rows[0]) < 2:
            raise InputError("expected a header row: Source,REGION,...", source=str(path))
        dests = rows[0][1:]
        out.regions = list(dests)
        for i, row in enumerate(rows[1:], 2):
            if len(row) != len(dests) + 1:
                raise InputError(f"line {i}: expected {len(dests) + 1} fields, got {len(row)}", source=str(path))
            for d, v in zip(dests, row[1:], strict=True):
                if v.strip():
                    try:
                        ms = float(v)
                    except ValueError:
                        ms = math.nan
                    if not (math.isfinite(ms) and ms >= 0):
                        raise InputError(f'line {i}: "{v}" is not a number of milliseconds, 0 or more', source=str(path))
                    out.rtt[(row[0], d)] = ms
        return out

    def between(self, a: str, b: str) -> float | None:
        """RTT from a to b (the table's direction; the reverse when only that is given)."""
        if a == b:
            return 0.0
        v = self.rtt.get((a, b))
        return v if v is not None else self.rtt.get((b, a))


@dataclass(frozen=True)
class LatencyClass:
    name: str
    budget_ms: float | None  # None: no budget
    timeout_s: float | None = None  # the experiment's "not placed in time" limit


@dataclass
class Network:
    table: LatencyTable
    access_rtt_ms: float = 5.0
    classes: dict[str, LatencyClass] = field(default_factory=dict)
    default_class: str = ""
    weight: int = 1
    placements: dict[str, list[str]] = field(default_factory=dict)  # "ns/name" -> clusters (depends-on)

    def user_rtt(self, region: str, cluster: Cluster) -> float | None:
        """Round trip from users in ``region`` to ``cluster``; None when the table has no figure."""
        if not cluster.region:
            return None
        between = self.table.between(region, cluster.region)
        return None if between is None else self.access_rtt_ms + between

    def class_of(self, b: Binding) -> LatencyClass | None:
        name = b.annotations.get(LATENCY_CLASS) or self.default_class
        return self.classes.get(name)

    def budget(self, b: Binding) -> float | None:
        c = self.class_of(b)
        return None if c is None else c.budget_ms

    def plugins(self) -> list[ClusterPlugin]:
        return [LatencyBudget(self), NetworkOverhead(self)]


def load_network(path: str) -> Network:
    """A latency file: which table, the access RTT, the classes (kind NetworkLatency)."""
    docs = read_documents(path)
    if len(docs) != 1:
        raise InputError("expected one NetworkLatency document", source=path)
    dpath, doc = docs[0]
    try:
        return parse_network(doc, dpath, Path(path).parent)
    except InputError as e:
        raise e.within(source=path) from None


def _finite(v: Any) -> bool:
    return not isinstance(v, bool) and isinstance(v, int | float) and math.isfinite(v)


def parse_network(doc: Any, path: str, base: Path = Path(".")) -> Network:
    m = as_map(doc, path or "document")
    allowed = ("apiVersion", "kind", "table", "accessRttMs", "classes", "defaultClass", "weight")
    for k in m:
        if k not in allowed:
            raise InputError(f'unknown field "{k}"', path=join_path(path, k))
    if m.get("kind") != "NetworkLatency":
        raise InputError('kind must be "NetworkLatency"', path=join_path(path, "kind"))
    table_spec = as_str(m.get("table"), join_path(path, "table"), "azure")
    table = LatencyTable.read(azure_table_path() if table_spec == "azure" else base / table_spec)
    access = m.get("accessRttMs", 5)
    if not (_finite(access) and access >= 0):
        raise InputError("must be a number of milliseconds, 0 or more", path=join_path(path, "accessRttMs"))
    classes: dict[str, LatencyClass] = {}
    cp = join_path(path, "classes")
    for i, c in enumerate(as_list(m.get("classes"), cp)):
        ip = join_path(cp, i)
        cm = as_map(c, ip)
        for k in cm:
            if k not in ("name", "budgetMs", "timeoutSeconds"):
                raise InputError(f'unknown field "{k}"', path=join_path(ip, k))
        name = as_str(cm.get("name"), join_path(ip, "name"))
        if not name or name in classes:
            raise InputError("a class needs a unique, non-empty name", path=join_path(ip, "name"))
        budget = cm.get("budgetMs")
        if budget is not None and not (_finite(budget) and budget > 0):
            raise InputError("must be a positive number of milliseconds (or absent: no budget)", path=join_path(ip, "budgetMs"))
        timeout = cm.get("timeoutSeconds")
        if timeout is not None and not (_finite(timeout) and timeout >= 0):
            raise InputError("must be a number of seconds, 0 or more", path=join_path(ip, "timeoutSeconds"))
        classes[name] = LatencyClass(name, None if budget is None else float(budget), None if timeout is None else float(timeout))
    default = as_str(m.get("defaultClass"), join_path(path, "defaultClass"))
    if default and default not in classes:
        raise InputError(f'no class named "{default}"', path=join_path(path, "defaultClass"))
    weight = as_int32(m.get("weight"), join_path(path, "weight"), 1, 0)
    return Network(table, float(access), classes, default, weight)


# ---- plugins -------------------------------------------------------------------------------------
class LatencyBudget(ClusterPlugin):
    name = "LatencyBudget"
    filters = True

    def __init__(self, net: Network) -> None:
        self.net = net

    def filter(self, binding: Binding, cluster: Cluster) -> Result:
        region = binding.annotations.get(USER_REGION)
        budget = self.net.budget(binding)
        if not region or budget is None:
            return SUCCESS
        rtt = self.net.user_rtt(region, cluster)
        if rtt is None:
            return unschedulable("cluster(s) had no known latency to the workload's users")
        if rtt > budget:
            return unschedulable("cluster(s) exceeded the latency budget of the workload's class")
        return SUCCESS


@dataclass(frozen=True)
class _Dependency:
    region: str
    zone: str = ""
    cluster: str = ""  # "" for the users
    users: bool = False


class NetworkOverhead(ClusterPlugin):
    name = "NetworkOverhead"
    filters = True
    scores = True

    def __init__(self, net: Network, clusters: dict[str, Cluster] | None = None) -> None:
        self.net = net
        self.clusters = clusters or {}

    def dependencies(self, b: Binding) -> list[_Dependency]:
        out = []
        region = b.annotations.get(USER_REGION)
        if region:
            out.append(_Dependency(region, users=True))
        for ref in (s.strip() for s in b.annotations.get(DEPENDS_ON, "").split(",")):
            for name in self.net.placements.get(ref if "/" in ref else f"{b.namespace}/{ref}", []) if ref else []:
                c = self.clusters.get(name)
                out.append(_Dependency(c.region if c else "", c.zone if c else "", name))
        return out

    def cost(self, cluster: Cluster, dep: _Dependency) -> float:
        if dep.users:
            rtt = self.net.user_rtt(dep.region, cluster)
            return MAX_COST if rtt is None else rtt
        if dep.cluster == cluster.name:
            return SAME_HOST
        if not dep.region and not dep.zone:
            return MAX_COST
        if dep.region == cluster.region:
            return SAME_ZONE if dep.zone == cluster.zone else MAX_COST
        rtt = self.net.table.between(cluster.region, dep.region) if cluster.region else None
        return MAX_COST if rtt is None else rtt

    def filter(self, binding: Binding, cluster: Cluster) -> Result:
        budget = self.net.budget(binding)
        deps = self.dependencies(binding)
        if budget is None or not deps:
            return SUCCESS
        satisfied = violated = 0
        for d in deps:
            if self.cost(cluster, d) <= budget:
                satisfied += 1
            else:
                violated += 1
        if violated > satisfied:
            return unschedulable(
                f"Cluster {cluster.name} does not meet several network requirements from Workload dependencies: "
                f"Satisfied: {satisfied} Violated: {violated}"
            )
        return SUCCESS

    def score(self, binding: Binding, cluster: Cluster) -> int:
        return int(sum(self.cost(cluster, d) for d in self.dependencies(binding)))

    def normalize(self, binding: Binding, scores: list[int]) -> list[int]:
        if not scores:
            return scores
        lo, hi = min(scores), max(scores)
        if lo == 0 and hi == 0:
            return scores
        out = []
        for s in scores:
            norm = float(MAX_CLUSTER_SCORE) * float(s - lo) / float(hi - lo) if hi != lo else float(s - lo)
            out.append(MAX_CLUSTER_SCORE - int(norm))
        return out

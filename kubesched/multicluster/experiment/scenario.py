"""The edge–cloud scenario: sites, their capacity from the openb node list, users, latency classes.

Defaults (every field can be set in a scenario file, ``kind: EdgeCloudScenario``):

- four edge sites in Azure regions close to each other (Japan East, Korea Central, East Asia,
  Southeast Asia), each with 3 % of the openb node list, and one cloud region (West US 2) with the
  rest; the nodes are dealt out in a fixed shuffled order (the same split for every seed);
- users homed at the edges in proportion 40 : 20 : 20 : 20 (drawn per pod and seed), so the
  Japanese edge is overloaded and the others are not;
- the openb pods (``default`` trace) replayed in time mode with arrivals compressed ``timeScale``
  times (durations kept): the trace spreads 8,152 pods over 149 days, under 1 % of the cluster;
  ``windowDays`` replays only a window of the trace (the busiest, or from ``windowStartDays``);
- no outages (``outages``: sites that go offline mid-run and come back, ``outage.py``);
- a latency class from each pod's ``qos``: LS is latency-sensitive (round trip at most 100 ms,
  placed within 60 s), Burstable and Guaranteed standard (150 ms, 600 s), BE best-effort (no
  budget, 3,600 s).
"""

from __future__ import annotations

import csv
import gzip
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kubesched.api.fields import as_int, as_list, as_map, as_str
from kubesched.errors import InputError, join_path
from kubesched.multicluster.experiment.outage import Outage, parse_list
from kubesched.multicluster.experiment.outage import check as check_outages
from kubesched.multicluster.network import LatencyClass
from kubesched.trace import bundled

QOS_CLASSES: dict[str, LatencyClass] = {
    "LS": LatencyClass("latency-sensitive", 100.0, 60.0),
    "Burstable": LatencyClass("standard", 150.0, 600.0),
    "Guaranteed": LatencyClass("standard", 150.0, 600.0),
    "BE": LatencyClass("best-effort", None, 3600.0),
}


@dataclass(frozen=True)
class Site:
    name: str
    region: str
    tier: str  # edge | cloud
    share: float  # of the node list (the cloud takes what the edges leave when 0)
    users: float = 0.0  # weight of users homed here (edges)


DEFAULT_SITES = (
    Site("edge-japan-east", "Japan East", "edge", 0.03, 0.4),
    Site("edge-korea-central", "Korea Central", "edge", 0.03, 0.2),
    Site("edge-east-asia", "East Asia", "edge", 0.03, 0.2),
    Site("edge-southeast-asia", "Southeast Asia", "edge", 0.03, 0.2),
    Site("cloud-west-us-2", "West US 2", "cloud", 0.0),
)


@dataclass
class Scenario:
    trace: str = "default"
    nodes: str = "all"
    sites: tuple[Site, ...] = DEFAULT_SITES
    time_scale: float = 100.0
    access_rtt_ms: float = 5.0
    qos_classes: dict[str, LatencyClass] = field(default_factory=lambda: dict(QOS_CLASSES))
    default_class: str = "best-effort"
    split_seed: int = 0
    window_days: float | None = None  # replay only this many days of the trace (None: all of it)
    window_start_days: float | None = None  # from this day after its first pod (None: the busiest)
    outages: tuple[Outage, ...] = ()
    source: str = "built-in"

    @property
    def edges(self) -> list[Site]:
        return [s for s in self.sites if s.tier == "edge"]

    @property
    def cloud(self) -> list[Site]:
        return [s for s in self.sites if s.tier == "cloud"]

    def classes(self) -> dict[str, LatencyClass]:
        return {c.name: c for c in self.qos_classes.values()}


def _num(v: Any, path: str, lo: float, hi: float | None = None) -> float:
    if isinstance(v, bool) or not isinstance(v, int | float) or not math.isfinite(v) or v < lo or (hi is not None and v > hi):
        rng = f"between {lo} and {hi}" if hi is not None else f"at least {lo}"
        raise InputError(f"must be a number {rng}", path=path)
    return float(v)


def _keys(m: dict, path: str, allowed: tuple[str, ...]) -> None:
    for k in m:
        if k not in allowed:
            raise InputError(f'unknown field "{k}"', path=join_path(path, str(k)))


def parse_scenario(doc: Any, source: str) -> Scenario:
    try:
        sc = _parse(doc, source)
    except InputError as e:
        raise e.within(source=source) from None
    check(sc)
    return sc


def _parse(doc: Any, source: str) -> Scenario:
    m = as_map(doc, "document")
    _keys(m, "", ("apiVersion", "kind", "trace", "nodes", "sites", "timeScale", "accessRttMs", "classes", "splitSeed",
                     "windowDays", "windowStartDays", "outages"))
    if m.get("kind") != "EdgeCloudScenario":
        raise InputError('kind must be "EdgeCloudScenario"', path="kind")
    sc = Scenario(source=source)
    sc.trace = as_str(m.get("trace"), "trace", sc.trace)
    sc.nodes = as_str(m.get("nodes"), "nodes", sc.nodes)
    # files or shipped names, resolved now: an unknown one is this file's error, before any run
    bundled.pod_list(sc.trace, flag="trace")
    bundled.node_list(sc.nodes, flag="nodes")
    if "timeScale" in m:
        sc.time_scale = _num(m["timeScale"], "timeScale", 1e-9)
    if "accessRttMs" in m:
        sc.access_rtt_ms = _num(m["accessRttMs"], "accessRttMs", 0)
    if "windowDays" in m:
        sc.window_days = _num(m["windowDays"], "windowDays", 1e-9)
    if "windowStartDays" in m:
        sc.window_start_days = _num(m["windowStartDays"], "windowStartDays", 0)
    if "outages" in m:
        sc.outages = parse_list(m["outages"], "outages")
    if "splitSeed" in m:
        seed = as_int(m["splitSeed"], "splitSeed")
        if seed is None or seed < 0:
            raise InputError("must be an integer, 0 or more", path="splitSeed")
        sc.split_seed = seed
    if "sites" in m:
        sites = []
        for i, s in enumerate(as_list(m["sites"], "sites")):
            p = join_path("sites", i)
            sm = as_map(s, p)
            _keys(sm, p, ("name", "region", "tier", "share", "users"))
            tier = as_str(sm.get("tier"), join_path(p, "tier"))
            if tier not in ("edge", "cloud"):
                raise InputError('must be "edge" or "cloud"', path=join_path(p, "tier"))
            name = as_str(sm.get("name"), join_path(p, "name"))
            region = as_str(sm.get("region"), join_path(p, "region"))
            if not name or not region:
                raise InputError("name and region are required", path=p)
            sites.append(Site(name, region, tier, _num(sm.get("share", 0), join_path(p, "share"), 0, 1),
                              _num(sm.get("users", 0), join_path(p, "users"), 0)))
        sc.sites = tuple(sites)
    if "classes" in m:
        classes = {}
        for qos, c in as_map(m["classes"], "classes").items():
            p = join_path("classes", str(qos))
            cm = as_map(c, p)
            _keys(cm, p, ("name", "budgetMs", "timeoutSeconds"))
            budget = cm.get("budgetMs")
            classes[str(qos)] = LatencyClass(
                as_str(cm.get("name"), join_path(p, "name"), str(qos)),
                None if budget is None else _num(budget, join_path(p, "budgetMs"), 1e-9),
                _num(cm.get("timeoutSeconds", 3600), join_path(p, "timeoutSeconds"), 0),
            )
        sc.qos_classes = classes
    return sc


def check(sc: Scenario) -> None:
    names = [s.name for s in sc.sites]
    if len(set(names)) != len(names):
        raise InputError("site names must be unique", source=sc.source, path="sites")
    if not sc.edges or len(sc.cloud) != 1:
        raise InputError("a scenario needs at least one edge site and exactly one cloud site", source=sc.source, path="sites")
    if sum(s.users for s in sc.edges) <= 0:
        raise InputError("some edge site must have users", source=sc.source, path="sites")
    if sum(s.share for s in sc.sites) > 1:
        raise InputError("the sites' shares add up to more than the node list", source=sc.source, path="sites")
    if sc.window_start_days is not None and sc.window_days is None:
        raise InputError("a window start needs a window length (windowDays, --window)", source=sc.source,
                         path="windowStartDays")
    check_outages(sc.outages, names, sc.source, "outages")


def qos_of_pods(path: Path) -> dict[str, str]:
    """The ``qos`` column of an openb pod list (the pod loader keeps requests only)."""
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", newline="") as f:  # type: ignore[operator]
        return {row["name"].strip(): (row.get("qos") or "").strip() for row in csv.DictReader(f)}

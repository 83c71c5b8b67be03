"""A deliberately simple per-node oracle of the default profile's Filter and Score (kube-scheduler v1.36).

Written from ``pkg/scheduler/framework/plugins/*`` of kubernetes/kubernetes, one plain Python
loop per node, no numpy and nothing from ``kubesched.plugins``: it exists so that the vectorised
plugins can be checked, pod by pod, to buy speed without changing placement. It reads only
``kubesched.api`` objects and uses their scalar matchers (``LabelSelector.matches``,
``NodeSelector.matches``, ``Toleration.tolerates``) and the effective requests the API layer
computes on parse (``Pod.requests``, ``Pod.non_zero_cpu``/``non_zero_mem``).

Upstream references are given per function as ``<plugin dir>/<file>.go: <func>``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from kubesched.api.objects import Node, Pod
from kubesched.api.selectors import LabelSelector
from kubesched.api.taints import Taint, Toleration

MAX_NODE_SCORE = 100
MAX_INT32 = 2**31 - 1
HOSTNAME = "kubernetes.io/hostname"
ZONE = "topology.kubernetes.io/zone"

UNSCHEDULABLE = "Unschedulable"
UNRESOLVABLE = "UnschedulableAndUnresolvable"

#: Filter plugins of the v1 default profile, in execution order (volume plugins left out;
#: DynamicResources' Filter is skipped for these clusters' pods, which have no claims).
FILTER_ORDER = (
    "NodeUnschedulable",
    "NodeName",
    "TaintToleration",
    "NodeAffinity",
    "NodePorts",
    "NodeResourcesFit",
    "PodTopologySpread",
    "InterPodAffinity",
)

#: Score plugins of the v1 default profile and their weights (default_plugins.go).
DEFAULT_WEIGHTS: dict[str, int] = {
    "TaintToleration": 3,
    "NodeAffinity": 2,
    "NodeResourcesFit": 1,
    "PodTopologySpread": 2,
    "InterPodAffinity": 2,
    "DynamicResources": 1,
    "NodeResourcesBalancedAllocation": 1,
    "ImageLocality": 1,
}


def go_div(a: int, b: int) -> int:
    """Go's int64 ``a / b``: truncates toward zero."""
    q = abs(a) // abs(b)
    return -q if (a < 0) != (b < 0) else q


def go_round(x: float) -> int:
    """Go's math.Round: half away from zero (Python's round() is half to even)."""
    f = math.floor(abs(x))
    r = f + 1 if abs(x) - f >= 0.5 else f
    return int(r if x >= 0 else -r)


# ---- inputs --------------------------------------------------------------------------------
@dataclass
class Workload:
    """A Service, ReplicationController, ReplicaSet or StatefulSet, for helper.DefaultSelector.

    ``selector`` is the wire form: a label map for Service/RC, a LabelSelector dict otherwise.
    """

    kind: str
    namespace: str
    name: str
    selector: dict[str, Any] | None


@dataclass
class Cluster:
    """What the plugins read: nodes in snapshot order, their assigned pods, namespaces, workloads."""

    nodes: list[Node]
    pods_on: dict[str, list[Pod]]
    namespaces: dict[str, dict[str, str]] = field(default_factory=dict)  # Namespace objects only
    workloads: list[Workload] = field(default_factory=list)

    def pods(self, node: Node) -> list[Pod]:
        return self.pods_on.get(node.name, [])

    def all_pods(self) -> Iterable[tuple[Node, Pod]]:
        for node in self.nodes:
            for pod in self.pods(node):
                yield node, pod


@dataclass
class Config:
    """The profile args that matter here (defaults are kube-scheduler's)."""

    weights: dict[str, int] = field(default_factory=lambda: dict(DEFAULT_WEIGHTS))
    fit_strategy: str = "LeastAllocated"  # | MostAllocated | RequestedToCapacityRatio
    fit_resources: list[tuple[str, int]] = field(default_factory=lambda: [("cpu", 1), ("memory", 1)])
    fit_shape: list[tuple[int, int]] = field(default_factory=list)  # (utilization, score 0..10)
    balanced_resources: list[tuple[str, int]] = field(default_factory=lambda: [("cpu", 1), ("memory", 1)])
    hard_pod_affinity_weight: int = 1
    ignore_preferred_terms_of_existing_pods: bool = False
    # PodTopologySpreadArgs: (topologyKey, maxSkew, whenUnsatisfiable); System defaulting by default.
    system_defaulted: bool = True
    default_constraints: list[tuple[str, int, str]] = field(
        default_factory=lambda: [(HOSTNAME, 3, "ScheduleAnyway"), (ZONE, 5, "ScheduleAnyway")]
    )


@dataclass
class Verdict:
    """The status of the first filter plugin that rejected a node."""

    plugin: str
    code: str
    reasons: tuple[str, ...]


@dataclass
class Result:
    failures: dict[str, Verdict]  # infeasible node -> first failing plugin
    feasible: list[str]  # in node order
    scores: dict[str, dict[str, int]]  # feasible node -> plugin -> normalized (skipped plugins absent)
    totals: dict[str, int]

    @property
    def top(self) -> set[str]:
        if not self.totals:
            return set()
        best = max(self.totals.values())
        return {n for n, t in self.totals.items() if t == best}


# ---- shared helpers ------------------------------------------------------------------------
class Sel:
    """labels.Selector: AND of LabelSelectors; ``nothing`` is labels.Nothing() (a nil selector)."""

    def __init__(self, parts: Iterable[LabelSelector] = (), nothing: bool = False) -> None:
        self.parts = list(parts)
        self.nothing = nothing

    @classmethod
    def of(cls, selector: LabelSelector | None) -> Sel:
        return cls(nothing=True) if selector is None else cls([selector])

    def matches(self, labels: Mapping[str, str]) -> bool:
        return not self.nothing and all(p.matches(labels) for p in self.parts)

    @property
    def empty(self) -> bool:
        """Selector.Empty(): no requirements (true for Everything, false for Nothing)."""
        return not self.nothing and all(not p.requirements for p in self.parts)


def tolerated(taint: Taint, tolerations: Iterable[Toleration]) -> bool:
    """v1helper.TolerationsTolerateTaint."""
    return any(t.tolerates(taint) for t in tolerations)


def find_untolerated(
    taints: Iterable[Taint], tolerations: tuple[Toleration, ...], effects: tuple[str, ...]
) -> bool:
    """v1helper.FindMatchingUntoleratedTaint with a filter on the taint effect."""
    return any(t.effect in effects and not tolerated(t, tolerations) for t in taints)


def required_node_affinity_matches(pod: Pod, node: Node) -> bool:
    """nodeaffinity.GetRequiredNodeAffinity(pod).Match(node): nodeSelector AND required terms."""
    for k, v in pod.node_selector.items():
        if node.labels.get(k) != v:
            return False
    req = pod.node_affinity.required if pod.node_affinity else None
    return req is None or req.matches(node.labels, node.name)


def is_scalar_resource(name: str) -> bool:
    """schedutil.IsScalarResourceName: extended, hugepages-*, kubernetes.io/-prefixed, attachable volumes."""
    return "/" in name or name.startswith("hugepages-") or name.startswith("attachable-volumes-")


def node_requested(pods: Iterable[Pod]) -> dict[str, int]:
    """NodeInfo.Requested: the sum of the pods' effective requests."""
    out: dict[str, int] = {}
    for p in pods:
        for r, v in p.requests.items():
            out[r] = out.get(r, 0) + v
    return out


def node_non_zero_requested(pods: Iterable[Pod]) -> tuple[int, int]:
    """NodeInfo.NonZeroRequested: milli-CPU and memory with 100m / 200Mi for missing requests."""
    cpu = mem = 0
    for p in pods:
        cpu += p.non_zero_cpu
        mem += p.non_zero_mem
    return cpu, mem


def default_normalize(scores: dict[str, int], reverse: bool) -> dict[str, int]:
    """helper.DefaultNormalizeScore(MaxNodeScore, reverse)."""
    max_count = 0
    for s in scores.values():
        max_count = max(max_count, s)
    if max_count == 0:
        return {n: MAX_NODE_SCORE for n in scores} if reverse else dict(scores)
    out = {}
    for n, s in scores.items():
        v = go_div(MAX_NODE_SCORE * s, max_count)
        out[n] = MAX_NODE_SCORE - v if reverse else v
    return out


FilterFn = Callable[[Node], "tuple[str, tuple[str, ...]] | None"]


# ---- NodeUnschedulable, NodeName -----------------------------------------------------------
def filter_node_unschedulable(pod: Pod, node: Node) -> tuple[str, tuple[str, ...]] | None:
    """nodeunschedulable/node_unschedulable.go: Filter."""
    if not node.unschedulable:
        return None
    if tolerated(Taint("node.kubernetes.io/unschedulable", "", "NoSchedule"), pod.tolerations):
        return None
    return UNRESOLVABLE, ("node(s) were unschedulable",)


def filter_node_name(pod: Pod, node: Node) -> tuple[str, tuple[str, ...]] | None:
    """nodename/node_name.go: Filter."""
    if not pod.node_name or pod.node_name == node.name:
        return None
    return UNRESOLVABLE, ("node(s) didn't match the requested node name",)


# ---- TaintToleration -----------------------------------------------------------------------
def filter_taint_toleration(pod: Pod, node: Node) -> tuple[str, tuple[str, ...]] | None:
    """tainttoleration/taint_toleration.go: Filter (message without the taint since v1.35)."""
    if find_untolerated(node.taints, pod.tolerations, ("NoSchedule", "NoExecute")):
        return UNRESOLVABLE, ("node(s) had untolerated taint(s)",)
    return None


def score_taint_toleration(pod: Pod, nodes: list[Node]) -> dict[str, int]:
    """tainttoleration: Score counts intolerable PreferNoSchedule taints; NormalizeScore reversed."""
    tols = [t for t in pod.tolerations if t.effect in ("", "PreferNoSchedule")]
    raw = {}
    for node in nodes:
        raw[node.name] = sum(
            1 for t in node.taints if t.effect == "PreferNoSchedule" and not tolerated(t, tols)
        )
    return default_normalize(raw, reverse=True)


# ---- NodeAffinity --------------------------------------------------------------------------
def filter_node_affinity(pod: Pod, node: Node) -> tuple[str, tuple[str, ...]] | None:
    """nodeaffinity/node_affinity.go: Filter (no addedAffinity in the default profile)."""
    if required_node_affinity_matches(pod, node):
        return None
    return UNRESOLVABLE, ("node(s) didn't match Pod's node affinity/selector",)


def score_node_affinity(pod: Pod, nodes: list[Node]) -> dict[str, int] | None:
    """nodeaffinity: PreScore skips without preferred terms; Score sums matching weights."""
    preferred = pod.node_affinity.preferred if pod.node_affinity else ()
    if not preferred:
        return None
    raw = {}
    for node in nodes:
        total = 0
        for term in preferred:
            if term.weight != 0 and term.term.matches(node.labels, node.name):
                total += term.weight
        raw[node.name] = total
    return default_normalize(raw, reverse=False)


# ---- NodePorts -----------------------------------------------------------------------------
def ports_conflict(
    want_ip: str, want_proto: str, want_port: int, used: Iterable[tuple[str, str, int]]
) -> bool:
    """HostPortInfo.CheckConflict: 0.0.0.0 conflicts with any IP, a specific IP with itself or 0.0.0.0."""
    for ip, proto, port in used:
        if proto != want_proto or port != want_port:
            continue
        if want_ip == "0.0.0.0" or ip in ("0.0.0.0", want_ip):
            return True
    return False


def filter_node_ports(pod: Pod, node: Node, cluster: Cluster) -> tuple[str, tuple[str, ...]] | None:
    """nodeports/node_ports.go: Filter (PreFilter skips a pod without host ports)."""
    if not pod.host_ports:
        return None
    used = [(hp.host_ip, hp.protocol, hp.port) for p in cluster.pods(node) for hp in p.host_ports]
    for hp in pod.host_ports:
        if ports_conflict(hp.host_ip, hp.protocol, hp.port, used):
            return UNSCHEDULABLE, ("node(s) didn't have free ports for the requested pod ports",)
    return None


# ---- NodeResourcesFit ----------------------------------------------------------------------
def filter_fit(pod: Pod, node: Node, cluster: Cluster) -> tuple[str, tuple[str, ...]] | None:
    """noderesources/fit.go: fitsRequest; every shortfall is reported, in fitsRequest's order."""
    pods = cluster.pods(node)
    alloc = node.allocatable
    used = node_requested(pods)
    req = pod.requests
    reasons: list[str] = []
    unresolvable = False
    if len(pods) + 1 > alloc.get("pods", 0):
        reasons.append("Too many pods")
    scalars = {r: v for r, v in req.items() if is_scalar_resource(r)}
    if (
        req.get("cpu", 0) == 0
        and req.get("memory", 0) == 0
        and req.get("ephemeral-storage", 0) == 0
        and not scalars
    ):
        return (UNSCHEDULABLE, tuple(reasons)) if reasons else None
    for r in ("cpu", "memory", "ephemeral-storage"):
        want = req.get(r, 0)
        if want > 0 and want > alloc.get(r, 0) - used.get(r, 0):
            reasons.append(f"Insufficient {r}")
            unresolvable |= want > alloc.get(r, 0)
    for r in sorted(scalars):  # Go iterates a map; kubesched reports in name order
        want = scalars[r]
        if want == 0:
            continue
        if want > alloc.get(r, 0) - used.get(r, 0):
            reasons.append(f"Insufficient {r}")
            unresolvable |= want > alloc.get(r, 0)
    if not reasons:
        return None
    return (UNRESOLVABLE if unresolvable else UNSCHEDULABLE), tuple(reasons)


def _resource_pairs(
    pod: Pod, node: Node, cluster: Cluster, resources: list[tuple[str, int]], use_requested: bool
) -> list[tuple[int, int, int, int]]:
    """resource_allocation.go: calculateResourceAllocatableRequest per resource.

    Returns (allocatable, node's requested without the pod, pod's request, weight) for the
    resources that take part (allocatable > 0; a scalar resource only when the pod requests it).
    ``use_requested`` (BalancedAllocation) reads real requests; otherwise (Fit) cpu and memory
    use the non-zero requests of the node's pods and of the pod.
    """
    pods = cluster.pods(node)
    real = node_requested(pods)
    nz_cpu, nz_mem = node_non_zero_requested(pods)
    out = []
    for name, weight in resources:
        if use_requested:
            pod_req = pod.requests.get(name, 0)
        elif name == "cpu":
            pod_req = pod.non_zero_cpu
        elif name == "memory":
            pod_req = pod.non_zero_mem
        else:
            pod_req = pod.requests.get(name, 0)
        if pod_req == 0 and is_scalar_resource(name):
            continue
        if name == "cpu":
            alloc, have = node.allocatable.get("cpu", 0), (real.get("cpu", 0) if use_requested else nz_cpu)
        elif name == "memory":
            alloc, have = (
                node.allocatable.get("memory", 0),
                (real.get("memory", 0) if use_requested else nz_mem),
            )
        elif name == "ephemeral-storage":
            alloc, have = node.allocatable.get(name, 0), real.get(name, 0)
        elif is_scalar_resource(name) and name in node.allocatable:
            alloc, have = node.allocatable[name], real.get(name, 0)
        else:
            continue
        if alloc == 0:
            continue
        out.append((alloc, have, pod_req, weight))
    return out


def _broken_linear(shape: list[tuple[int, int]], p: int) -> int:
    """helper.BuildBrokenLinearFunction over (utilization, score) points."""
    for i, (u, s) in enumerate(shape):
        if p <= u:
            if i == 0:
                return s
            u0, s0 = shape[i - 1]
            return s0 + go_div((s - s0) * (p - u0), u - u0)
    return shape[-1][1]


def score_fit(pod: Pod, nodes: list[Node], cluster: Cluster, cfg: Config) -> dict[str, int]:
    """noderesources: least_allocated.go / most_allocated.go / requested_to_capacity_ratio.go."""
    out = {}
    shape = [(u, s * (MAX_NODE_SCORE // 10)) for u, s in cfg.fit_shape]
    for node in nodes:
        total = weight_sum = 0
        for alloc, have, pod_req, w in _resource_pairs(
            pod, node, cluster, cfg.fit_resources, use_requested=False
        ):
            req = have + pod_req
            if cfg.fit_strategy == "LeastAllocated":
                r = 0 if req > alloc else go_div((alloc - req) * MAX_NODE_SCORE, alloc)
            elif cfg.fit_strategy == "MostAllocated":
                r = go_div(min(req, alloc) * MAX_NODE_SCORE, alloc)
            else:
                util = 100 if req > alloc else go_div(req * 100, alloc)
                r = _broken_linear(shape, util)
                if r <= 0:
                    continue
            total += r * w
            weight_sum += w
        if weight_sum == 0:
            out[node.name] = 0
        elif cfg.fit_strategy == "RequestedToCapacityRatio":
            out[node.name] = go_round(total / weight_sum)
        else:
            out[node.name] = go_div(total, weight_sum)
    return out


# ---- NodeResourcesBalancedAllocation ---------------------------------------------------------
def balance(requested: list[int], allocatable: list[int]) -> int:
    """balancedResourceScore: int64((1 - std) * 100) over the usage fractions (capped at 1)."""
    fractions = []
    total = 0.0
    for req, alloc in zip(requested, allocatable, strict=True):
        f = req / alloc
        if f > 1:
            f = 1.0
        total += f
        fractions.append(f)
    std = 0.0
    if len(fractions) == 2:
        std = abs((fractions[0] - fractions[1]) / 2)
    elif len(fractions) > 2:
        mean = total / len(fractions)
        s = 0.0
        for f in fractions:
            s = s + (f - mean) * (f - mean)
        std = math.sqrt(s / len(fractions))
    return int((1 - std) * float(MAX_NODE_SCORE))


def score_balanced(pod: Pod, nodes: list[Node], cluster: Cluster, cfg: Config) -> dict[str, int] | None:
    """balanced_allocation.go (v1.36, kubernetes/kubernetes#135573): score the change in balance.

    PreScore skips a pod requesting none of the resources (#130260).
    """
    if all(pod.requests.get(r, 0) == 0 for r, _ in cfg.balanced_resources):
        return None
    out = {}
    for node in nodes:
        pairs = _resource_pairs(pod, node, cluster, cfg.balanced_resources, use_requested=True)
        alloc = [a for a, _, _, _ in pairs]
        with_pod = balance([h + p for _, h, p, _ in pairs], alloc)
        without_pod = balance([h for _, h, _, _ in pairs], alloc)
        out[node.name] = MAX_NODE_SCORE // 2 + go_div(MAX_NODE_SCORE // 2 + with_pod - without_pod, 2)
    return out


# ---- ImageLocality -------------------------------------------------------------------------
MB = 1024 * 1024
MIN_THRESHOLD = 23 * MB
MAX_CONTAINER_THRESHOLD = 1000 * MB


def normalized_image_name(name: str) -> str:
    """image_locality.go: normalizedImageName appends :latest when there is no tag."""
    if name.rfind(":") <= name.rfind("/"):
        name = name + ":latest"
    return name


def score_image_locality(pod: Pod, nodes: list[Node], cluster: Cluster) -> dict[str, int]:
    """image_locality.go: Score; sizes are the first reported per name (cache addNodeImageStates)."""
    size: dict[str, int] = {}
    holders: dict[str, set[str]] = {}
    for node in cluster.nodes:
        for img in node.images:
            for name in img.names:
                size.setdefault(name, img.size)
                holders.setdefault(name, set()).add(node.name)
    total_nodes = len(cluster.nodes)
    containers = [*pod.init_containers, *pod.containers]
    max_threshold = MAX_CONTAINER_THRESHOLD * len(containers)
    out = {}
    for node in nodes:
        on_node = {name for img in node.images for name in img.names}
        s = 0
        for c in containers:
            name = normalized_image_name(c.image)
            if name in on_node:
                spread = len(holders[name]) / total_nodes
                s += int(float(size[name]) * spread)
        s = min(max(s, MIN_THRESHOLD), max_threshold)
        out[node.name] = go_div(MAX_NODE_SCORE * (s - MIN_THRESHOLD), max_threshold - MIN_THRESHOLD)
    return out


# ---- PodTopologySpread ---------------------------------------------------------------------
@dataclass
class Constraint:
    """podtopologyspread/common.go: topologySpreadConstraint with its selector parsed."""

    max_skew: int
    key: str
    selector: Sel
    min_domains: int = 1
    node_affinity_policy: str = "Honor"
    node_taints_policy: str = "Ignore"

    def includes(self, pod: Pod, node: Node) -> bool:
        """matchNodeInclusionPolicies."""
        if self.node_affinity_policy == "Honor" and not required_node_affinity_matches(pod, node):
            return False
        if self.node_taints_policy == "Honor" and find_untolerated(
            node.taints, pod.tolerations, ("NoSchedule", "NoExecute")
        ):
            return False
        return True


def count_pods_matching(pods: Iterable[Pod], sel: Sel, namespace: str) -> int:
    """common.go: countPodsMatchSelector (v1.36 returns 0 for an Empty() selector, i.e. ``{}``)."""
    if sel.empty:
        return 0
    return sum(1 for p in pods if not p.deleting and p.namespace == namespace and sel.matches(p.labels))


def default_selector(pod: Pod, workloads: list[Workload]) -> Sel:
    """helper.DefaultSelector: matching Services' labels, plus the controller's selector."""
    label_set: dict[str, str] = {}
    for w in workloads:
        if w.kind == "Service" and w.namespace == pod.namespace and w.selector is not None:
            if all(pod.labels.get(k) == v for k, v in w.selector.items()):
                label_set.update(w.selector)
    parts = [LabelSelector.from_match_labels(label_set)]
    owner = next((o for o in pod.owners if o.controller), None)
    if owner is None:
        return Sel(parts)
    for w in workloads:
        if w.kind != owner.kind or w.namespace != pod.namespace or w.name != owner.name or w.selector is None:
            continue
        if w.kind == "ReplicationController":
            label_set.update(w.selector)
            parts = [LabelSelector.from_match_labels(label_set)]
        elif w.kind in ("ReplicaSet", "StatefulSet"):
            parts.append(LabelSelector.parse(w.selector, "selector"))
        break
    return Sel(parts)


def spread_constraints(pod: Pod, action: str, cluster: Cluster, cfg: Config) -> list[Constraint]:
    """The pod's constraints for ``action``, or the default ones with the derived selector."""
    if pod.spread_constraints:
        return [
            Constraint(
                c.max_skew,
                c.topology_key,
                Sel.of(c.selector),
                c.min_domains or 1,
                c.node_affinity_policy,
                c.node_taints_policy,
            )
            for c in pod.spread_constraints
            if c.when_unsatisfiable == action
        ]
    defaults = [(key, skew) for key, skew, when in cfg.default_constraints if when == action]
    if not defaults:
        return []
    sel = default_selector(pod, cluster.workloads)  # buildDefaultConstraints
    if sel.empty:
        return []
    return [Constraint(skew, key, sel) for key, skew in defaults]


def has_all_keys(node: Node, constraints: list[Constraint]) -> bool:
    return all(c.key in node.labels for c in constraints)


class SpreadFilter:
    """filtering.go: PreFilter counts matching pods per domain over all nodes; Filter checks skew."""

    def __init__(self, pod: Pod, cluster: Cluster, cfg: Config) -> None:
        self.pod = pod
        self.constraints = spread_constraints(pod, "DoNotSchedule", cluster, cfg)
        self.counts: list[dict[str, int]] = [{} for _ in self.constraints]
        for node in cluster.nodes:
            if not has_all_keys(node, self.constraints):
                continue
            for i, c in enumerate(self.constraints):
                if not c.includes(pod, node):
                    continue
                value = node.labels[c.key]
                n = count_pods_matching(cluster.pods(node), c.selector, pod.namespace)
                self.counts[i][value] = self.counts[i].get(value, 0) + n

    def __call__(self, node: Node) -> tuple[str, tuple[str, ...]] | None:
        for i, c in enumerate(self.constraints):
            if c.key not in node.labels:
                return UNRESOLVABLE, (
                    "node(s) didn't match pod topology spread constraints (missing required label)",
                )
            counts = self.counts[i]
            min_match = min(counts.values()) if counts else MAX_INT32
            if len(counts) < c.min_domains:
                min_match = 0
            self_match = 1 if c.selector.matches(self.pod.labels) else 0
            skew = counts.get(node.labels[c.key], 0) + self_match - min_match
            if skew > c.max_skew:
                return UNSCHEDULABLE, ("node(s) didn't match pod topology spread constraints",)
        return None


def score_spread(pod: Pod, nodes: list[Node], cluster: Cluster, cfg: Config) -> dict[str, int] | None:
    """scoring.go: PreScore, Score and NormalizeScore."""
    if not cluster.nodes:
        return None
    constraints = spread_constraints(pod, "ScheduleAnyway", cluster, cfg)
    if not constraints:
        return None
    require_all = bool(pod.spread_constraints) or not cfg.system_defaulted
    ignored = {n.name for n in nodes if require_all and not has_all_keys(n, constraints)}
    domains: list[dict[str, int]] = [{} for _ in constraints]
    for node in nodes:
        if node.name in ignored:
            continue
        for i, c in enumerate(constraints):
            if c.key != HOSTNAME:
                domains[i].setdefault(node.labels.get(c.key, ""), 0)
    weights = []
    for i, c in enumerate(constraints):
        size = len(nodes) - len(ignored) if c.key == HOSTNAME else len(domains[i])
        weights.append(math.log(size + 2))
    for node in cluster.nodes:
        if require_all and not has_all_keys(node, constraints):
            continue
        for i, c in enumerate(constraints):
            if not c.includes(pod, node):
                continue
            value = node.labels.get(c.key, "")
            if c.key == HOSTNAME or value not in domains[i]:
                continue
            domains[i][value] += count_pods_matching(cluster.pods(node), c.selector, pod.namespace)
    raw: dict[str, int] = {}
    for node in nodes:
        if node.name in ignored:
            raw[node.name] = 0
            continue
        score = 0.0
        for i, c in enumerate(constraints):
            if c.key not in node.labels:
                continue
            if c.key == HOSTNAME:
                cnt = count_pods_matching(cluster.pods(node), c.selector, pod.namespace)
            else:
                cnt = domains[i][node.labels[c.key]]
            score += float(cnt) * weights[i] + float(c.max_skew - 1)
        raw[node.name] = go_round(score)
    min_score, max_score = 2**63 - 1, 0
    for name, s in raw.items():
        if name in ignored:
            continue
        min_score = min(min_score, s)
        max_score = max(max_score, s)
    out = {}
    for name, s in raw.items():
        if name in ignored:
            out[name] = 0
        elif max_score == 0:
            out[name] = MAX_NODE_SCORE
        else:
            out[name] = go_div(MAX_NODE_SCORE * (max_score + min_score - s), max_score)
    return out


# ---- InterPodAffinity ----------------------------------------------------------------------
class Term:
    """framework.AffinityTerm: selector, namespaces, namespaceSelector, topologyKey."""

    def __init__(self, owner: Pod, t: Any, weight: int = 0) -> None:
        self.selector = Sel.of(t.selector)
        self.namespaces = set(t.namespaces)
        if not t.namespaces and t.namespace_selector is None:
            self.namespaces = {owner.namespace}
        # None is labels.Nothing(); a LabelSelector without requirements is Everything().
        self.ns_selector: LabelSelector | None = t.namespace_selector
        self.key: str = t.topology_key
        self.weight = weight

    def merge_namespaces(self, cluster: Cluster) -> Term:
        """interpodaffinity: mergeAffinityTermNamespacesIfNotEmpty (incoming pod's terms)."""
        if self.ns_selector is not None and self.ns_selector.requirements:
            self.namespaces |= {
                ns for ns, labels in cluster.namespaces.items() if self.ns_selector.matches(labels)
            }
            self.ns_selector = None
        return self

    def matches(self, pod: Pod, ns_labels: Mapping[str, str] | None) -> bool:
        """AffinityTerm.Matches."""
        ns_ok = pod.namespace in self.namespaces or (
            self.ns_selector is not None and self.ns_selector.matches(ns_labels or {})
        )
        return ns_ok and self.selector.matches(pod.labels)


def _terms(pod: Pod, which: str, required: bool, cluster: Cluster | None = None) -> list[Term]:
    aff = getattr(pod, which)
    if aff is None:
        return []
    if required:
        terms = [Term(pod, t) for t in aff.required]
    else:
        terms = [Term(pod, w.term, w.weight) for w in aff.preferred]
    if cluster is not None:
        for t in terms:
            t.merge_namespaces(cluster)
    return terms


def _bump(counts: dict[tuple[str, str], int], node: Node, key: str, by: int) -> None:
    if key in node.labels:
        pair = (key, node.labels[key])
        counts[pair] = counts.get(pair, 0) + by


class AffinityFilter:
    """interpodaffinity/filtering.go: PreFilter's three topology-pair counts, then Filter."""

    def __init__(self, pod: Pod, cluster: Cluster) -> None:
        self.pod = pod
        ns_labels = cluster.namespaces.get(pod.namespace)
        self.affinity = _terms(pod, "pod_affinity", True, cluster)
        self.anti = _terms(pod, "pod_anti_affinity", True, cluster)
        self.existing_anti: dict[tuple[str, str], int] = {}
        self.affinity_counts: dict[tuple[str, str], int] = {}
        self.anti_counts: dict[tuple[str, str], int] = {}
        for node, other in cluster.all_pods():
            for t in _terms(other, "pod_anti_affinity", True):
                if t.matches(pod, ns_labels):
                    _bump(self.existing_anti, node, t.key, 1)
            if self.affinity and all(t.matches(other, None) for t in self.affinity):
                for t in self.affinity:
                    _bump(self.affinity_counts, node, t.key, 1)
            for t in self.anti:
                if t.matches(other, None):
                    _bump(self.anti_counts, node, t.key, 1)
        self.skip = not self.existing_anti and not self.affinity and not self.anti

    def __call__(self, node: Node) -> tuple[str, tuple[str, ...]] | None:
        if self.skip:
            return None
        pods_exist = True
        for t in self.affinity:
            if t.key not in node.labels:
                return UNRESOLVABLE, ("node(s) didn't match pod affinity rules",)
            if self.affinity_counts.get((t.key, node.labels[t.key]), 0) <= 0:
                pods_exist = False
        if not pods_exist:
            first_of_group = not self.affinity_counts and all(
                t.matches(self.pod, None) for t in self.affinity
            )
            if not first_of_group:
                return UNRESOLVABLE, ("node(s) didn't match pod affinity rules",)
        if self.anti_counts:
            for t in self.anti:
                if t.key in node.labels and self.anti_counts.get((t.key, node.labels[t.key]), 0) > 0:
                    return UNSCHEDULABLE, ("node(s) didn't match pod anti-affinity rules",)
        if self.existing_anti:
            for k, v in node.labels.items():
                if self.existing_anti.get((k, v), 0) > 0:
                    return UNSCHEDULABLE, ("node(s) didn't satisfy existing pods anti-affinity rules",)
        return None


def score_inter_pod_affinity(
    pod: Pod, nodes: list[Node], cluster: Cluster, cfg: Config
) -> dict[str, int] | None:
    """interpodaffinity/scoring.go: PreScore (topologyScore), Score, NormalizeScore (min-max)."""
    if not nodes:
        return None
    pref_aff = _terms(pod, "pod_affinity", False, cluster)
    pref_anti = _terms(pod, "pod_anti_affinity", False, cluster)
    if cfg.ignore_preferred_terms_of_existing_pods and not pref_aff and not pref_anti:
        return None
    ns_labels = cluster.namespaces.get(pod.namespace)
    topology: dict[str, dict[str, int]] = {}

    def add(
        term: Term, weight: int, target: Pod, target_ns_labels: Mapping[str, str] | None, node: Node
    ) -> None:
        if term.matches(target, target_ns_labels) and term.key in node.labels:
            per_key = topology.setdefault(term.key, {})
            value = node.labels[term.key]
            per_key[value] = per_key.get(value, 0) + weight

    for node, other in cluster.all_pods():
        if not node.labels:
            continue
        for t in pref_aff:
            add(t, t.weight, other, None, node)
        for t in pref_anti:
            add(t, -t.weight, other, None, node)
        if cfg.hard_pod_affinity_weight > 0:
            for t in _terms(other, "pod_affinity", True):
                add(t, cfg.hard_pod_affinity_weight, pod, ns_labels, node)
        for t in _terms(other, "pod_affinity", False):
            add(t, t.weight, pod, ns_labels, node)
        for t in _terms(other, "pod_anti_affinity", False):
            add(t, -t.weight, pod, ns_labels, node)
    if not topology:
        return None  # PreScore: no node's pods contributed -> Skip
    raw = {}
    for node in nodes:
        s = 0
        for key, values in topology.items():
            if key in node.labels:
                s += values.get(node.labels[key], 0)
        raw[node.name] = s
    lo, hi = min(raw.values()), max(raw.values())
    diff = hi - lo
    out = {}
    for name, s in raw.items():
        f = float(MAX_NODE_SCORE) * ((s - lo) / diff) if diff > 0 else 0.0
        out[name] = int(f)
    return out


# ---- the profile ---------------------------------------------------------------------------
def evaluate(cluster: Cluster, pod: Pod, cfg: Config | None = None) -> Result:
    """Every node's first filter failure, and each feasible node's normalized scores and total."""
    cfg = cfg or Config()
    spread = SpreadFilter(pod, cluster, cfg)
    affinity = AffinityFilter(pod, cluster)
    filters: list[tuple[str, FilterFn]] = [
        ("NodeUnschedulable", lambda n: filter_node_unschedulable(pod, n)),
        ("NodeName", lambda n: filter_node_name(pod, n)),
        ("TaintToleration", lambda n: filter_taint_toleration(pod, n)),
        ("NodeAffinity", lambda n: filter_node_affinity(pod, n)),
        ("NodePorts", lambda n: filter_node_ports(pod, n, cluster)),
        ("NodeResourcesFit", lambda n: filter_fit(pod, n, cluster)),
        ("PodTopologySpread", spread),
        ("InterPodAffinity", affinity),
    ]
    failures: dict[str, Verdict] = {}
    feasible: list[Node] = []
    for node in cluster.nodes:
        for plugin, check in filters:
            res = check(node)
            if res is not None:
                failures[node.name] = Verdict(plugin, res[0], res[1])
                break
        else:
            feasible.append(node)
    per_plugin: dict[str, dict[str, int] | None] = {}
    if feasible:
        per_plugin = {
            "TaintToleration": score_taint_toleration(pod, feasible),
            "NodeAffinity": score_node_affinity(pod, feasible),
            "NodeResourcesFit": score_fit(pod, feasible, cluster, cfg),
            "PodTopologySpread": score_spread(pod, feasible, cluster, cfg),
            "InterPodAffinity": score_inter_pod_affinity(pod, feasible, cluster, cfg),
            # no PreScore to skip it: a pod without claims scores 0 everywhere (firstAvailable only)
            "DynamicResources": {n.name: 0 for n in feasible},
            "NodeResourcesBalancedAllocation": score_balanced(pod, feasible, cluster, cfg),
            "ImageLocality": score_image_locality(pod, feasible, cluster),
        }
    scores: dict[str, dict[str, int]] = {n.name: {} for n in feasible}
    totals = {n.name: 0 for n in feasible}
    for plugin, by_node in per_plugin.items():
        if by_node is None:
            continue
        w = cfg.weights.get(plugin, 1)
        for name, v in by_node.items():
            scores[name][plugin] = v
            totals[name] += v * w
    return Result(failures, [n.name for n in feasible], scores, totals)

"""Karpenter's NodePools (``karpenter.sh/v1``), as the Karpenter-like provisioner reads them from
the autoscaler file's ``nodePools`` list, and the NodeClaims it writes for the nodes it launches.

A NodePool selects instance types (the file's node groups) and capacity types (``spot``,
``on-demand``) through ``spec.template.spec.requirements``, caps what it launches with
``spec.limits``, and says how its nodes may be disrupted: ``spec.disruption`` (consolidation
policy, ``consolidateAfter``, budgets with cron schedules) and ``spec.template.spec.expireAfter``.
Budgets follow ``pkg/apis/v1/nodepool.go``: the most restrictive active budget for a reason wins;
a percentage rounds up; a budget with a schedule is active from each cron hit (UTC) for its
duration. Times here are seconds since the Unix epoch: the live loop's clock, and the
simulator's (whose time 0 is 1970-01-01T00:00:00Z, a Thursday).
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from functools import cached_property
from typing import Any

from kubesched.api.objects import Node
from kubesched.api.quantity import resource_value
from kubesched.api.selectors import NodeSelectorRequirement
from kubesched.api.taints import Taint, parse_taints
from kubesched.errors import InputError, SourceReader, describe, join_path

API_VERSION = "karpenter.sh/v1"
NODEPOOL_LABEL = "karpenter.sh/nodepool"
CAPACITY_TYPE = "karpenter.sh/capacity-type"
INSTANCE_TYPE = "node.kubernetes.io/instance-type"
DO_NOT_DISRUPT = "karpenter.sh/do-not-disrupt"
POOL_HASH = "karpenter.sh/nodepool-hash"  # the template's hash on each NodeClaim (and node): drift
POOL_HASH_VERSION_KEY = "karpenter.sh/nodepool-hash-version"  # the hash's scheme: no drift across schemes
POOL_HASH_VERSION = "v3"  # NodePoolHashVersion of karpenter.sh/v1
TERMINATION_FINALIZER = "karpenter.sh/termination"  # on each NodeClaim (and node) Karpenter launches
REGISTERED = "karpenter.sh/registered"  # labels Karpenter puts on a node it launched, once it
INITIALIZED = "karpenter.sh/initialized"  # has registered, and once it is ready
SPOT, ON_DEMAND = "spot", "on-demand"
CAPACITY_TYPES = (SPOT, ON_DEMAND)
EMPTY, UNDERUTILIZED, DRIFTED = "Empty", "Underutilized", "Drifted"
REASONS = (UNDERUTILIZED, EMPTY, DRIFTED)
POLICIES = ("WhenEmpty", "WhenEmptyOrUnderutilized")
GPU = "nvidia.com/gpu"
UNBOUNDED = 2**31 - 1  # math.MaxInt32: what an inactive budget allows
DEFAULT_EXPIRE_AFTER = 720 * 3600.0  # the CRD's default, 720h
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)

#: Karpenter's validation patterns (kubebuilder markers of nodepool.go)
NODES_PATTERN = re.compile(r"^((100|[0-9]{1,2})%|[0-9]+)$")
DURATION_PATTERN = re.compile(r"^(([0-9]+(s|m|h))+|Never)$")
BUDGET_DURATION_PATTERN = re.compile(r"^((([0-9]+(h|m))|([0-9]+h[0-9]+m))(0s)?)$")
DESCRIPTORS = ("@annually", "@yearly", "@monthly", "@weekly", "@daily", "@midnight", "@hourly")

POOL_KEYS = ("apiVersion", "kind", "metadata", "spec")
SPEC_KEYS = ("template", "disruption", "limits", "weight")
TEMPLATE_SPEC_KEYS = ("requirements", "taints", "startupTaints", "expireAfter", "nodeClassRef", "terminationGracePeriod")
DISRUPTION_KEYS = ("consolidationPolicy", "consolidateAfter", "budgets")
BUDGET_KEYS = ("nodes", "schedule", "duration", "reasons")


def go_seconds(text: str) -> float:
    """Seconds of a duration matching one of the patterns above (``1h30m``, ``45s``)."""
    units = {"h": 3600.0, "m": 60.0, "s": 1.0}
    return sum(float(n) * units[u] for n, u in re.findall(r"([0-9]+)([hms])", text))


@dataclass(frozen=True)
class Budget:
    """One ``spec.disruption.budgets`` entry."""

    nodes: str = "10%"
    schedule: str | None = None
    duration: float | None = None  # seconds
    reasons: tuple[str, ...] | None = None  # None: every reason

    def is_active(self, now: float) -> bool:
        """Budget.IsActive: the next cron hit after ``now - duration`` is not after ``now``."""
        if self.schedule is None:
            return True
        croniter = _croniter()
        t = EPOCH + timedelta(seconds=now)
        start = t - timedelta(seconds=self.duration or 0.0)
        nxt = croniter(_cron(self.schedule), start).get_next(datetime)
        return nxt <= t

    def allowed(self, now: float, num_nodes: int) -> int:
        """Budget.GetAllowedDisruptions: the count, or the percentage of ``num_nodes`` rounded
        up; ``UNBOUNDED`` while inactive."""
        if not self.is_active(now):
            return UNBOUNDED
        if self.nodes.endswith("%"):
            return math.ceil(num_nodes * int(self.nodes[:-1]) / 100)
        return int(self.nodes)


def _croniter(path: str = "") -> Any:
    """croniter (a budget's schedule), or the one line saying it is missing."""
    try:
        from croniter import croniter
    except ImportError:
        raise InputError("budget schedules need croniter: pip install croniter", path=path) from None
    return croniter


def _cron(schedule: str) -> str:
    """robfig/cron's descriptors in croniter's spelling (``@midnight`` is ``@daily``)."""
    return {"@annually": "@yearly", "@midnight": "@daily"}.get(schedule, schedule)


@dataclass
class NodePool:
    name: str
    requirements: tuple[NodeSelectorRequirement, ...] = ()
    labels: dict[str, str] = field(default_factory=dict)  # spec.template.metadata.labels
    taints: tuple[Taint, ...] = ()
    limits: dict[str, int] = field(default_factory=dict)  # cpu (milli), memory (bytes), nvidia.com/gpu, nodes ...
    consolidation_policy: str = "WhenEmptyOrUnderutilized"
    consolidate_after: float | None = 0.0  # None: Never (no consolidation)
    budgets: tuple[Budget, ...] = (Budget(),)
    expire_after: float | None = DEFAULT_EXPIRE_AFTER  # None: Never
    weight: int = 0
    template: dict[str, Any] = field(default_factory=dict)  # spec.template as written: its hash is drift's

    def allowed_disruptions(self, now: float, num_nodes: int, reason: str) -> int:
        """NodePool.GetAllowedDisruptionsByReason: the least any active budget that applies to
        ``reason`` allows (budgets without reasons apply to all)."""
        allowed = UNBOUNDED
        for b in self.budgets:
            if b.reasons is None or reason in b.reasons:
                allowed = min(allowed, b.allowed(now, num_nodes))
        return allowed

    @cached_property
    def template_hash(self) -> str:
        """What static drift compares: a hash of ``spec.template`` but its requirements, which
        drift compares with the node's labels instead (Karpenter's hash leaves them out too), as
        the API server stores it (``expireAfter`` defaulted to 720h) and as hashstructure reads
        it (IgnoreZeroValue, ZeroNil, SlicesAsSets: empty fields and list order count for
        nothing)."""
        spec = {k: v for k, v in (self.template.get("spec") or {}).items() if k != "requirements"}
        spec.setdefault("expireAfter", "720h")
        hashed = _canonical({**self.template, "spec": spec})
        return hashlib.sha256(json.dumps(hashed, sort_keys=True).encode()).hexdigest()[:16]

    def admits(self, labels: dict[str, str]) -> bool:
        """Whether an offering with these labels (an instance type's, plus its capacity type and
        the pool's name) meets every requirement."""
        return all(r.matches(labels) for r in self.requirements)

    def capacity_types(self) -> list[str]:
        """The capacity types the requirements allow; on-demand alone when they name none
        (the AWS provider's default requirement)."""
        named = [r for r in self.requirements if r.key == CAPACITY_TYPE]
        if not named:
            return [ON_DEMAND]
        return [ct for ct in CAPACITY_TYPES if all(r.matches({CAPACITY_TYPE: ct}) for r in named)]


def _canonical(value: Any) -> Any:
    """``value`` without empty maps, lists, strings and nulls, its lists sorted: equal for every
    spelling hashstructure hashes alike."""
    if isinstance(value, dict):
        out = {k: c for k, v in value.items() if (c := _canonical(v)) not in (None, "", {}, [])}
        return out
    if isinstance(value, list):
        items = [c for v in value if (c := _canonical(v)) not in (None, "", {}, [])]
        return sorted(items, key=lambda v: json.dumps(v, sort_keys=True))
    return value


def node_resources(node: Node) -> dict[str, int]:
    """What a node counts against a pool's limits: its allocatable resources, its GPUs as
    ``nvidia.com/gpu`` and one node."""
    from kubesched.gpu.model import node_gpu_count

    return {**{k: int(v) for k, v in node.allocatable.items()}, GPU: node_gpu_count(node), "nodes": 1}


def exceeds(limits: dict[str, int], used: dict[str, int], extra: dict[str, int]) -> bool:
    """Limits.ExceededBy for ``used + extra``: any limited resource over its limit."""
    return any(used.get(k, 0) + extra.get(k, 0) > lim for k, lim in limits.items())


def node_claim(pool: NodePool, node: Node, instance_type: str, capacity_type: str, registered: bool = True) -> dict[str, Any]:
    """The NodeClaim Karpenter writes for a node it launches from ``pool`` (``status.nodeName``
    once the node has registered)."""
    spec = pool.template.get("spec") or {}
    reqs = [
        {"key": NODEPOOL_LABEL, "operator": "In", "values": [pool.name]},
        {"key": INSTANCE_TYPE, "operator": "In", "values": [instance_type]},
        {"key": CAPACITY_TYPE, "operator": "In", "values": [capacity_type]},
    ]
    reqs += [r for r in spec.get("requirements") or [] if r.get("key") not in (INSTANCE_TYPE, CAPACITY_TYPE)]
    claim_spec: dict[str, Any] = {"requirements": reqs}
    for k in ("taints", "startupTaints", "nodeClassRef", "terminationGracePeriod"):
        if k in spec:
            claim_spec[k] = spec[k]
    claim_spec["expireAfter"] = spec.get("expireAfter", "720h")
    template_annotations = (pool.template.get("metadata") or {}).get("annotations") or {}
    return {
        "apiVersion": API_VERSION,
        "kind": "NodeClaim",
        "metadata": {
            "name": node.name,
            "labels": {k: v for k, v in node.labels.items() if k != "kubernetes.io/hostname"},
            "annotations": {**template_annotations, POOL_HASH: pool.template_hash, POOL_HASH_VERSION_KEY: POOL_HASH_VERSION},
            "ownerReferences": [{"apiVersion": API_VERSION, "kind": "NodePool", "name": pool.name, "blockOwnerDeletion": True}],
            "finalizers": [TERMINATION_FINALIZER],
        },
        "spec": claim_spec,
        "status": {
            **({"nodeName": node.name} if registered else {}),
            "conditions": claim_conditions(registered),
            "capacity": {k: str(v) for k, v in (node.raw.get("status") or {}).get("capacity", {}).items()},
            "allocatable": {k: str(v) for k, v in (node.raw.get("status") or {}).get("allocatable", {}).items()},
        },
    }


def claim_conditions(registered: bool) -> list[dict[str, str]]:
    """A launched claim's status conditions: Launched, and once its node has registered (ready
    at once here) Registered, Initialized and the root condition Ready."""
    out = [{"type": "Launched", "status": "True", "reason": "Launched"}]
    for t in ("Registered", "Initialized", "Ready"):
        out.append({"type": t, "status": "True", "reason": t} if registered else {"type": t, "status": "Unknown", "reason": "AwaitingReconciliation"})
    return out


# ---- reading -------------------------------------------------------------------------------


class _Reader(SourceReader):
    """The file's own field kinds on top of SourceReader's errors and mappings."""

    def duration(self, v: Any, path: str) -> float | None:
        """A NillableDuration: ``Never`` is None."""
        if not isinstance(v, str) or not DURATION_PATTERN.match(v):
            raise self.err(path, f'invalid value {_shown(v)}: expected a duration such as "30s", "1h30m" or "Never"')
        return None if v == "Never" else go_seconds(v)


def _shown(v: Any) -> str:
    return f'"{v}"' if isinstance(v, str) else describe(v)


def read_node_pools(value: Any, source: str | None = None, path: str = "nodePools") -> list[NodePool]:
    """The ``nodePools`` list of the autoscaler file, each a NodePool as Karpenter's CRD has it."""
    r = _Reader(source)
    if not isinstance(value, list):
        raise r.err(path, "expected a list of NodePools (apiVersion: karpenter.sh/v1, kind: NodePool)")
    pools: list[NodePool] = []
    for i, doc in enumerate(value):
        pool = _pool(r, doc, join_path(path, i))
        if any(p.name == pool.name for p in pools):
            raise r.err(join_path(join_path(path, i), "metadata.name"), f'duplicate NodePool "{pool.name}"')
        pools.append(pool)
    return pools


def _pool(r: _Reader, doc: Any, p: str) -> NodePool:
    d = r.mapping(doc, p, POOL_KEYS)
    if d.get("apiVersion") != API_VERSION:
        raise r.err(join_path(p, "apiVersion"), f"expected {API_VERSION}, got {_shown(d.get('apiVersion'))}")
    if d.get("kind") != "NodePool":
        raise r.err(join_path(p, "kind"), f"expected NodePool, got {_shown(d.get('kind'))}")
    meta = d.get("metadata")
    name = meta.get("name") if isinstance(meta, dict) else None
    if not isinstance(name, str) or not name:
        raise r.err(join_path(p, "metadata.name"), "required")
    sp = join_path(p, "spec")
    spec = r.mapping(d.get("spec"), sp, SPEC_KEYS)
    tp = join_path(sp, "template")
    template = r.mapping(spec.get("template"), tp, ("metadata", "spec"))
    pool = NodePool(name, template=template)
    tmeta = r.mapping(template.get("metadata") or {}, join_path(tp, "metadata"), ("labels", "annotations"))
    labels = tmeta.get("labels") or {}
    if not isinstance(labels, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in labels.items()):
        raise r.err(join_path(tp, "metadata.labels"), "expected a mapping of strings to strings")
    pool.labels = dict(labels)
    tsp = join_path(tp, "spec")
    ts = r.mapping(template.get("spec"), tsp, TEMPLATE_SPEC_KEYS)
    rp = join_path(tsp, "requirements")
    reqs = ts.get("requirements")
    if not isinstance(reqs, list):
        raise r.err(rp, "required: a list of node selector requirements")
    try:
        parsed = []
        for j, q in enumerate(reqs):
            if isinstance(q, dict) and "minValues" in q:  # instance-type flexibility: not modelled
                q = {k: v for k, v in q.items() if k != "minValues"}
            parsed.append(NodeSelectorRequirement.parse(q, join_path(rp, j)))
        pool.requirements = tuple(parsed)
        pool.taints = parse_taints(ts.get("taints"), join_path(tsp, "taints"))
    except InputError as e:
        raise e.within(source=r.source) from None
    if "expireAfter" in ts:
        pool.expire_after = r.duration(ts["expireAfter"], join_path(tsp, "expireAfter"))
    if "limits" in spec:
        pool.limits = _limits(r, spec["limits"], join_path(sp, "limits"))
    if "weight" in spec:
        w = spec["weight"]
        if isinstance(w, bool) or not isinstance(w, int) or not 1 <= w <= 100:
            raise r.err(join_path(sp, "weight"), f"invalid value {_shown(w)}: expected a whole number from 1 to 100")
        pool.weight = w
    _disruption(r, spec.get("disruption") or {}, join_path(sp, "disruption"), pool)
    return pool


def _limits(r: _Reader, value: Any, p: str) -> dict[str, int]:
    if not isinstance(value, dict):
        raise r.err(p, "expected a mapping of resource to quantity (cpu, memory, nvidia.com/gpu, nodes)")
    out = {}
    for k, v in value.items():
        if isinstance(v, bool) or not isinstance(v, (str, int, float)):
            raise r.err(join_path(p, k), f'expected a quantity such as "1000" or "4000Gi", got {describe(v)}')
        try:
            out[k] = resource_value(k, v, join_path(p, k))
        except InputError as e:
            raise e.within(source=r.source) from None
        if out[k] < 0:
            raise r.err(join_path(p, k), f"must be 0 or more, got {v}")
    return out


def _disruption(r: _Reader, value: Any, p: str, pool: NodePool) -> None:
    d = r.mapping(value, p, DISRUPTION_KEYS)
    if "consolidationPolicy" in d:
        pol = d["consolidationPolicy"]
        if pol not in POLICIES:
            raise r.err(join_path(p, "consolidationPolicy"), f'unknown value {_shown(pol)} (known: {", ".join(POLICIES)})')
        pool.consolidation_policy = pol
    if "consolidateAfter" in d:
        pool.consolidate_after = r.duration(d["consolidateAfter"], join_path(p, "consolidateAfter"))
    if "budgets" in d:
        bp = join_path(p, "budgets")
        if not isinstance(d["budgets"], list) or len(d["budgets"]) > 50:
            raise r.err(bp, "expected a list of at most 50 budgets")
        pool.budgets = tuple(_budget(r, b, join_path(bp, j)) for j, b in enumerate(d["budgets"]))


def _budget(r: _Reader, value: Any, p: str) -> Budget:
    b = r.mapping(value, p, BUDGET_KEYS)
    nodes = b.get("nodes", "10%")
    if not isinstance(nodes, str) or not NODES_PATTERN.match(nodes):
        raise r.err(join_path(p, "nodes"), f'invalid value {_shown(nodes)}: a count ("5") or a percentage up to "100%"')
    if ("schedule" in b) != ("duration" in b):
        raise r.err(p, "'schedule' must be set with 'duration'")
    schedule = duration = None
    if "schedule" in b:
        schedule = b["schedule"]
        sp = join_path(p, "schedule")
        if not isinstance(schedule, str) or not _valid_cron(schedule, sp, r.source):
            raise r.err(sp, f"invalid value {_shown(schedule)}: expected a cron schedule of 5 fields or {', '.join(DESCRIPTORS)}")
        dur = b["duration"]
        if not isinstance(dur, str) or not BUDGET_DURATION_PATTERN.match(dur):
            raise r.err(join_path(p, "duration"), f'invalid value {_shown(dur)}: expected hours and minutes such as "1h", "30m" or "1h30m"')
        duration = go_seconds(dur)
    reasons = None
    if "reasons" in b:
        rs = b["reasons"]
        if not isinstance(rs, list):
            raise r.err(join_path(p, "reasons"), f"expected a list of reasons ({', '.join(REASONS)})")
        for j, x in enumerate(rs):
            if x not in REASONS:
                raise r.err(join_path(join_path(p, "reasons"), j), f'unknown reason {_shown(x)} (known: {", ".join(REASONS)})')
        reasons = tuple(rs)
    return Budget(nodes, schedule, duration, reasons)


def _valid_cron(schedule: str, path: str, source: str | None) -> bool:
    """The CRD's pattern (a descriptor or five fields), then a parse as cron's standard syntax."""
    if schedule.startswith("@"):
        return schedule in DESCRIPTORS
    if len(schedule.split()) != 5:
        return False
    try:
        croniter = _croniter(path)
    except InputError as e:
        raise e.within(source=source) from None
    return bool(croniter.is_valid(schedule))

"""The nodes the Karpenter-like provisioner launches from NodePools, as they are written and read
back: their labels and annotations (``pool_node``, ``node_marks``), when they were launched and
when they expire (``launched_at``, ``expires_at``), and whether they have drifted from their pool
(``drift_reason``: Karpenter's static and requirements drift). Read from the Node itself, so that the live loop keeps
expiry and drift across a restart, as Karpenter reads them from the NodeClaim.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from datetime import datetime

from kubesched.api.objects import Node, Pod
from kubesched.autoscale.config import GROUP_LABEL, NodeGroup
from kubesched.autoscale.disruption import Offering
from kubesched.autoscale.eligibility import BEING_DELETED, unremovable_reason
from kubesched.autoscale.nodepool import (
    CAPACITY_TYPE,
    INITIALIZED,
    INSTANCE_TYPE,
    NODEPOOL_LABEL,
    POOL_HASH,
    POOL_HASH_VERSION,
    POOL_HASH_VERSION_KEY,
    REGISTERED,
    NodePool,
)
from kubesched.autoscale.predicate import node_named
from kubesched.state.snapshot import Snapshot

NODEPOOL_DRIFTED, REQUIREMENTS_DRIFTED = "NodePoolDrifted", "RequirementsDrifted"  # nodeclaim/disruption/drift.go


@dataclass
class Claim:
    """A node claim being packed: the offerings (shapes) that still hold every pod given to it."""

    shapes: list[NodeGroup]
    snaps: list[Snapshot]
    pods: list[Pod] = field(default_factory=list)
    offers: list[Offering] = field(default_factory=list)  # with NodePools: parallel to shapes


def pool_node(template: Node, name: str, pool: NodePool, group: str, capacity_type: str) -> Node:
    """A node of ``group`` launched from ``pool``: Karpenter's labels, the pool's template labels
    and taints, and the pool's template hash and its version (drift)."""
    labels = {**pool.labels, GROUP_LABEL: group, NODEPOOL_LABEL: pool.name, CAPACITY_TYPE: capacity_type, INSTANCE_TYPE: group}
    node = node_named(template, name, labels)
    raw = dict(node.raw)
    meta = dict(raw["metadata"])
    meta["annotations"] = {**(meta.get("annotations") or {}), POOL_HASH: pool.template_hash, POOL_HASH_VERSION_KEY: POOL_HASH_VERSION}
    raw["metadata"] = meta
    taints = (*node.taints, *pool.taints)
    if pool.taints:
        spec = dict(raw.get("spec") or {})
        spec["taints"] = [*(spec.get("taints") or []), *({"key": t.key, "value": t.value, "effect": t.effect} for t in pool.taints)]
        raw["spec"] = spec
    return dataclasses.replace(node, taints=taints, raw=raw)


def _annotations(node: Node) -> dict[str, str]:
    return (node.raw.get("metadata") or {}).get("annotations") or {}


def node_marks(node: Node) -> tuple[dict[str, str], dict[str, str]]:
    """(labels, annotations) a node launched from a NodePool carries once it has registered and
    is ready, beyond its own labels: ``karpenter.sh/registered`` and ``karpenter.sh/initialized``,
    and the pool hash annotations. Nothing for other nodes."""
    if NODEPOOL_LABEL not in node.labels:
        return {}, {}
    ann = {k: v for k, v in _annotations(node).items() if k in (POOL_HASH, POOL_HASH_VERSION_KEY)}
    return {REGISTERED: "true", INITIALIZED: "true"}, ann


def launched_by_provisioner(node: Node) -> bool:
    """A node this provisioner launched: of a NodePool, with the pool hash it writes on each one
    (a node that merely carries the pool's label is not its to expire)."""
    return NODEPOOL_LABEL in node.labels and POOL_HASH in _annotations(node)


def created_at(node: Node) -> float | None:
    """The node's ``metadata.creationTimestamp`` in seconds since the epoch (None: absent or
    not a timestamp)."""
    stamp = (node.raw.get("metadata") or {}).get("creationTimestamp")
    if isinstance(stamp, datetime):
        return stamp.timestamp()
    if not isinstance(stamp, str):
        return None
    try:
        return datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


def launched_at(node: Node, launched: dict[str, float]) -> float | None:
    """When the node's claim was made: as this process recorded it, else (launched before a
    restart) the node's creation time."""
    t = launched.get(node.name)
    if t is not None:
        return t
    return created_at(node) if launched_by_provisioner(node) else None


def expires_at(node: Node, pool: NodePool, launched: dict[str, float], expires: dict[str, float]) -> float | None:
    """When the node expires: its claim's ``expireAfter`` from its launch. A claim made by this
    process keeps the value it was made with; one made before a restart takes its pool's current
    value from the node's creation time. None: never."""
    if node.name in launched:
        return expires.get(node.name)
    t = launched_at(node, launched)
    if t is None or pool.expire_after is None:
        return None
    return t + pool.expire_after


def blocked_reason(node: Node, nominated: bool, now: float) -> str | None:
    """Why disruption may not take a node of a pool, as Karpenter's ValidateNodeDisruptable says
    it (its first check that fails): being deleted (the provider's ToBeDeletedByClusterAutoscaler
    taint), or about to receive pending pods. "" for Cluster Autoscaler's scale-down-disabled
    annotation (no Karpenter message); None when neither holds."""
    reason = unremovable_reason(node, now)
    if reason == BEING_DELETED:
        return "node is deleting or marked for deletion"
    if reason is not None:
        return ""
    return "node is nominated for a pending pod" if nominated else None


def drift_reason(node: Node, pool: NodePool) -> str | None:
    """Why a node this provisioner launched has drifted from its pool, as Karpenter's nodeclaim
    drift checks it: ``NodePoolDrifted`` (areStaticFieldsDrifted: its pool hash differs from the
    pool's present one, both of the same hash version; another version, or none, is no static
    drift), else ``RequirementsDrifted`` (areRequirementsDrifted: its labels no longer meet the
    pool's requirements). None: not drifted, or not launched by this provisioner."""
    ann = _annotations(node)
    if POOL_HASH not in ann:
        return None
    if ann.get(POOL_HASH_VERSION_KEY) == POOL_HASH_VERSION and ann[POOL_HASH] != pool.template_hash:
        return NODEPOOL_DRIFTED
    return None if pool.admits(node.labels) else REQUIREMENTS_DRIFTED


def is_drifted(node: Node, pool: NodePool) -> bool:
    return drift_reason(node, pool) is not None

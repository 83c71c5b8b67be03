"""Karpenter's disruption methods over NodePools (``pkg/controllers/disruption``), for the
Karpenter-like provisioner when the autoscaler file names ``nodePools``.

Each pass (every 10 s) takes the first method that finds something to do: expiration (forceful:
no budget, ``do-not-disrupt`` ignored), emptiness (every empty candidate the ``Empty`` budgets
allow), multi-node consolidation (the longest prefix, up to 100, of the candidates in order of
disruption cost whose pods fit on the other nodes plus at most one new, cheaper node; binary
search) and single-node consolidation (the first candidate that can be deleted, or replaced by one
cheaper node). A candidate is a node of a NodePool that consolidates (``consolidateAfter`` not
``Never``) whose pods have not changed for ``consolidateAfter``, with no
``karpenter.sh/do-not-disrupt: "true"`` on it or on any of its pods, whose pods PDBs let go, and
that pending pods are not about to land on. A replacement launches first; its candidates are
deleted once it registers, and count against their pool's budgets meanwhile. Spot candidates are
only replaced from pools that do not allow spot (upstream, a replacement whose requirements
allow spot takes the spot-to-spot path, off by default: SpotToSpotConsolidation).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from kubesched.api.objects import Node, Pod
from kubesched.autoscale.nodepool import CAPACITY_TYPE, DO_NOT_DISRUPT, SPOT, NodePool
from kubesched.autoscale.predicate import PredicateChecker, placed
from kubesched.state.snapshot import Snapshot

MAX_MULTI = 100  # multi-node consolidation considers at most this many candidates at once
# why single-node consolidation left a node (consolidation.go's Unconsolidatable messages)
NOT_CHEAPER = "Can't replace with a cheaper node"
SPOT_TO_SPOT = "SpotToSpotConsolidation is disabled, can't replace a spot node with a spot node"


def do_not_disrupt(node: Node, pods: list[Pod]) -> bool:
    """The ``karpenter.sh/do-not-disrupt: "true"`` annotation on the node or one of its pods."""
    ann = (node.raw.get("metadata") or {}).get("annotations") or {}
    return ann.get(DO_NOT_DISRUPT) == "true" or any(p.annotations.get(DO_NOT_DISRUPT) == "true" for p in pods)


@dataclass
class Candidate:
    name: str
    pool: NodePool
    group: str  # instance type
    capacity_type: str
    price: float
    pods: list[Pod]
    consolidatable: bool = True  # consolidateAfter has passed since its pods last changed
    drifted: bool = False  # launched from an older template of its pool

    @property
    def key(self) -> tuple[str, bool, bool]:
        return (self.name, self.consolidatable, self.drifted)


@dataclass
class Offering:
    """An instance type of a pool in one capacity type, at its price."""

    pool: NodePool
    group: str
    capacity_type: str
    price: float
    node: Node  # what a node of it looks like (the pool's labels and taints applied)


@dataclass
class Command:
    candidates: list[Candidate]
    replacement: Offering | None = None  # consolidation: at most one, cheaper
    reason: str = ""
    launches: list[Offering] = field(default_factory=list)  # drift: what its pods need anew


@dataclass
class Pending:
    """Replacements launched: their candidates go once all of them have registered."""

    replacements: list[str]
    candidates: list[str] = field(default_factory=list)
    reason: str = ""  # the disruption's (Underutilized, Drifted)


def place_all(checker: PredicateChecker, snap: Snapshot, pods: list[Pod], exclude: set[str]) -> list[Pod]:
    """Place ``pods`` on the nodes of ``snap`` not in ``exclude``, first fit, each pod as it would
    be created again; those placed stay in ``snap`` (call inside a trial). Returns the pods that
    found no node."""
    rows = np.asarray([r for r in snap.order.tolist() if snap.nodes[r].name not in exclude], np.int32)
    left = []
    for p in pods:
        target = checker.first_fit(snap, p.with_node(""), rows) if rows.size else None
        if target is None:
            left.append(p)
            continue
        snap.add_pod(placed(p, snap.nodes[target].name, "~consolidate"))
    return left


def fits_one(checker: PredicateChecker, scratch: Callable[[], Snapshot], node: Node, pods: list[Pod]) -> bool:
    """Whether every pod of ``pods`` fits together on one new ``node``."""
    snap = scratch()
    row = snap.add_node(node)
    rows = np.asarray([row], np.int32)
    for p in pods:
        if not checker.fits(snap, p.with_node(""), rows)[0]:
            return False
        snap.add_pod(placed(p, node.name, "~replace"))
    return True


def compute(
    cands: list[Candidate],
    snap: Snapshot,
    checker: PredicateChecker,
    offerings: Callable[[], list[Offering]],
    scratch: Callable[[], Snapshot],
    disrupting: set[str],
    why: list[str] | None = None,
) -> Command | None:
    """computeConsolidation: delete the candidates if their pods fit elsewhere, else replace
    them by the cheapest offering that holds the pods left over, if it costs less than they do;
    None when neither works (then, given ``why``, the reason is appended to it, if upstream has
    a message for it: ``explain``)."""
    pods = [p for c in cands for p in c.pods]
    exclude = {c.name for c in cands} | disrupting
    with snap.trial():
        left = place_all(checker, snap, pods, exclude)
    if not left:
        return Command(cands, None, "delete")
    price = sum(c.price for c in cands)
    all_spot = all(c.capacity_type == SPOT for c in cands)
    # multi-node: a replacement of a type being removed must beat the cheapest such candidate
    same_type: dict[str, float] = {}
    for c in cands:
        same_type[c.group] = min(same_type.get(c.group, price), c.price)
    for o in offerings():  # cheapest first
        if o.price >= price:
            break  # "Can't replace with a cheaper node"
        if len(cands) > 1 and o.price >= same_type.get(o.group, price):
            continue  # filterOutSameType: deleting the others alone would do
        if all_spot and SPOT in o.pool.capacity_types():
            # the replacement's requirements allow spot: Karpenter takes the spot-to-spot path,
            # off by default (SpotToSpotConsolidation), so no replacement from such a pool
            continue
        if fits_one(checker, scratch, o.node, left):
            return Command(cands, o, "replace")
    if why is not None:
        why.extend(explain(cands, left, checker, offerings, scratch))
    return None


def explain(
    cands: list[Candidate], left: list[Pod], checker: PredicateChecker, offerings: Callable[[], list[Offering]], scratch: Callable[[], Snapshot]
) -> list[str]:
    """Why ``compute`` found no replacement for the pods ``left`` over, as upstream says it: one
    node of a spot-allowing pool would take them for spot candidates (spot-to-spot is off), or
    only a node no cheaper than the candidates would. Nothing when no single node holds them
    (upstream counts the claims they need, or the pods that would not schedule)."""
    price = sum(c.price for c in cands)
    all_spot = all(c.capacity_type == SPOT for c in cands)
    holding = [o for o in offerings() if fits_one(checker, scratch, o.node, left)]
    if all_spot and any(o.price < price and SPOT in o.pool.capacity_types() for o in holding):
        return [SPOT_TO_SPOT]
    return [NOT_CHEAPER] if holding else []


def consolidation_disabled(pool: NodePool) -> str | None:
    """consolidation's ShouldDisrupt: why no node of ``pool`` is consolidated (None: it may be)."""
    if pool.consolidate_after is None:
        return f'NodePool "{pool.name}" has consolidation disabled'
    if pool.consolidation_policy != "WhenEmptyOrUnderutilized":
        return f'NodePool "{pool.name}" has non-empty consolidation disabled'
    return None


def multi_node(
    cands: list[Candidate],
    budgets: dict[str, int],
    try_cmd: Callable[[list[Candidate]], Command | None],
) -> Command | None:
    """firstNConsolidationOption: candidates within their pools' budgets, in order, then the
    largest n (2 or more) whose first n consolidate together, by binary search."""
    ok = []
    for c in cands:
        if budgets.get(c.pool.name, 0) <= 0:
            continue
        ok.append(c)
        budgets[c.pool.name] -= 1
    ok = ok[:MAX_MULTI]
    if len(ok) < 2:
        return None
    lo, hi = 1, len(ok) - 1
    best = None
    while lo <= hi:
        mid = (lo + hi) // 2
        cmd = try_cmd(ok[: mid + 1])
        if cmd is not None:
            best, lo = cmd, mid + 1
        else:
            hi = mid - 1
    return best


def capacity_type_of(node: Node) -> str:
    return node.labels.get(CAPACITY_TYPE, "on-demand")

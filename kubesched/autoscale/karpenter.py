"""A Karpenter-like provisioner, for contrast with Cluster Autoscaler's node groups.

No group is grown as a whole: pending pods are batched (the batch closes after
``batchIdleDuration`` without a new pending pod, or ``batchMaxDuration`` after it opened), packed
first-fit-decreasing onto new node claims, and each claim launches the cheapest node shape that
holds all its pods (the shapes are the configured node groups, used as instance types).
Consolidation deletes nodes that have been empty, or (``WhenEmptyOrUnderutilized``) whose pods
can all move to other nodes, with no pod change for ``consolidateAfter``, at most
``budgets.nodes`` per pass (disruption budget). To keep the simulation cheap, only nodes under
the scale-down utilisation threshold are simulated for moving their pods, and a node whose pods
could not move is simulated again a minute later at the earliest. Replacing a node by a cheaper
one is not modelled.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from kubesched.api.objects import Pod
from kubesched.autoscale.config import GROUP_LABEL, AutoscalerConfig, NodeGroup
from kubesched.autoscale.core import (
    DRAIN_RECHECK,
    ClusterAutoscaler,
    ClusterView,
    Drainer,
    NodeProvider,
    Upcoming,
)
from kubesched.autoscale.eligibility import unremovable_reason
from kubesched.autoscale.predicate import PredicateChecker, node_named, placed
from kubesched.autoscale.utilization import node_utilization
from kubesched.state.snapshot import Snapshot

CONSOLIDATION_PERIOD = 10.0  # how often consolidation looks for candidates
RECENT_CLAIMS = 4  # a pod tries the newest claims of the batch before opening another


@dataclass
class Claim:
    """A node claim being packed: the shapes that still hold every pod given to it."""

    shapes: list[NodeGroup]
    snaps: list[Snapshot]
    pods: list[Pod] = field(default_factory=list)


class KarpenterLike(ClusterAutoscaler):
    def __init__(self, config: AutoscalerConfig, provider: NodeProvider, rng: np.random.Generator) -> None:
        super().__init__(config, provider, rng)
        self.seen: set[str] = set()
        self.batch_start: float | None = None
        self.last_new = 0.0
        self.last_consolidation = -float("inf")
        self.stable_since: dict[str, tuple[int, float]] = {}  # node -> (pod count, since)
        self.recheck_at: dict[str, float] = {}  # node -> when its pods are worth simulating again

    def batch_open(self) -> bool:
        return self.batch_start is not None

    def run_once(self, view: ClusterView) -> None:
        now = view.now()
        self._register(view, now)
        self.hinted = {}
        pending = self.pending(view, now)
        new = [p.uid for p in pending if p.uid not in self.seen]
        if new:
            self.seen.update(new)
            self.last_new = now
            if self.batch_start is None:
                self.batch_start = now
        kc = self.cfg.karpenter
        if self.batch_start is not None and (now - self.last_new >= kc.batch_idle or now - self.batch_start >= kc.batch_max):
            self.batch_start = None
            self.seen = {p.uid for p in pending}
            self.provision(view, pending, now)
        if self.cfg.scale_down.enabled and now - self.last_consolidation >= CONSOLIDATION_PERIOD:
            self.last_consolidation = now
            if pending and self.registered and not self.hinted:  # where pending pods are about to land
                self.fit_upcoming(view, pending, self.checker(view))
            self.consolidate(view, now)

    # ---- provisioning --------------------------------------------------------------------
    def _shape_snap(self, view: ClusterView, g: NodeGroup) -> tuple[Snapshot, int]:
        snap = self._base_factory(view, [])()
        row = snap.add_node(node_named(g.template, f"claim-{g.name}", {GROUP_LABEL: g.name}))
        return snap, row

    def provision(self, view: ClusterView, pods: list[Pod], now: float) -> None:
        checker = self.checker(view)
        pods = self.fit_upcoming(view, pods, checker)
        if not pods:
            return
        sizes = self.group_sizes(view.snapshot)
        total = self.cluster_size(view.snapshot)

        def key(p: Pod) -> tuple[int, int]:
            return (p.requests.get("cpu", 0), p.requests.get("memory", 0))

        claims: list[Claim] = []
        for pod in sorted(pods, key=key, reverse=True):
            if any(self._try_claim(checker, c, pod) for c in claims[-RECENT_CLAIMS:][::-1]):
                continue
            shapes, snaps = [], []
            for g in self.cfg.node_groups:
                if sizes[g.name] + sum(1 for c in claims if c.shapes[0] is g) >= g.max_size:
                    continue
                snap, row = self._shape_snap(view, g)
                if checker.fits(snap, pod, np.asarray([row], np.int32))[0]:
                    snap.add_pod(placed(pod, snap.nodes[row].name))
                    shapes.append(g)
                    snaps.append(snap)
            if not shapes:
                continue  # no shape holds it: it stays pending
            if self.cfg.max_nodes_total and total + len(claims) >= self.cfg.max_nodes_total:
                break
            order = np.argsort([self.cfg.prices.node(g) for g in shapes], kind="stable")
            claims.append(Claim([shapes[i] for i in order], [snaps[i] for i in order], [pod]))
        for c in claims:
            g = c.shapes[0]  # the cheapest shape still holding every pod of the claim
            name = self.new_name(g.name)
            node = node_named(g.template, name, {GROUP_LABEL: g.name})
            self.upcoming[name] = Upcoming(g.name, now, node)
            self.provider.create(g, node)
            self.stats.nodes_added += 1
        if claims:
            self.stats.scale_ups += 1
            self.last_scale_up = now

    def _try_claim(self, checker: PredicateChecker, claim: Claim, pod: Pod) -> bool:
        keep = []
        for g, snap in zip(claim.shapes, claim.snaps, strict=True):
            row = 0
            if checker.fits(snap, pod, np.asarray([row], np.int32))[0]:
                keep.append((g, snap))
        if not keep:
            return False
        for _, snap in keep:
            snap.add_pod(placed(pod, snap.nodes[0].name))
        claim.shapes = [g for g, _ in keep]
        claim.snaps = [s for _, s in keep]
        claim.pods.append(pod)
        return True

    # ---- consolidation -------------------------------------------------------------------
    def consolidate(self, view: ClusterView, now: float) -> None:
        snap = view.snapshot
        kc = self.cfg.karpenter
        live: dict[str, tuple[int, float]] = {}
        for row, node in enumerate(snap.nodes):
            if self.group_of(node) is None:
                continue
            count = len(snap.pods_on[row])
            prev = self.stable_since.get(node.name)
            live[node.name] = prev if prev is not None and prev[0] == count else (count, now)
        self.stable_since = live
        if self.batch_open():
            return  # pods are about to be provisioned for: no disruption meanwhile
        # a node that pending pods are about to land on is not disrupted (Karpenter: nominated),
        # nor one being deleted or protected by the operator (Cluster Autoscaler's marks)
        due = [
            n
            for n, (_, t) in live.items()
            if now - t >= kc.consolidate_after
            and n not in self.hinted
            and unremovable_reason(snap.nodes[snap.row_of[n]], now) is None
        ]
        if not due:
            return
        budget = kc.budget(len(live))
        sizes = self.group_sizes(snap)
        mins = {g.name: g.min_size for g in self.cfg.node_groups}
        empty = [n for n in due if live[n][0] == 0]
        busy = sorted((n for n in due if live[n][0] > 0), key=lambda n: live[n][0])
        removed: list[str] = []
        for name in empty:
            g = self.group_of(snap.nodes[snap.row_of[name]])
            if len(removed) >= budget or g is None or sizes[g] <= mins[g]:
                continue
            sizes[g] -= 1
            removed.append(name)
        if kc.consolidation == "WhenEmptyOrUnderutilized" and busy and len(removed) < budget:
            util = node_utilization(snap)
            drainer = Drainer(self.checker(view))
            with drainer.plan(snap) as try_drain:
                for name in busy:
                    if len(removed) >= budget:
                        break
                    row = snap.row_of[name]
                    g = self.group_of(snap.nodes[row])
                    if g is None or sizes[g] <= mins[g] or not util[row] < self.threshold(snap.nodes[row]):
                        continue
                    if self.recheck_at.get(name, 0.0) > now:
                        continue
                    if try_drain(name, set(removed)) is None:
                        self.recheck_at[name] = now + DRAIN_RECHECK
                        continue
                    sizes[g] -= 1
                    removed.append(name)
        for name in removed:
            self.stats.drained_pods += len(snap.pods_on[snap.row_of[name]])
            self.stable_since.pop(name, None)
            self.provider.delete(name)
            self.stats.scale_downs += 1
            self.last_delete = now

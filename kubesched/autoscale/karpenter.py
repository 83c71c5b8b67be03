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

With ``nodePools`` in the autoscaler file, Karpenter's own model applies instead (docs/autoscaling.md,
"Karpenter-like provisioner"): each claim comes from the first NodePool (highest weight first)
with an offering (instance type and capacity type its requirements admit) that holds the pod and
stays within the pool's limits; nodes carry ``karpenter.sh/nodepool``,
``karpenter.sh/capacity-type`` and ``node.kubernetes.io/instance-type``; disruption follows
``kubesched.autoscale.disruption`` (expiry, emptiness, multi- and single-node consolidation with
replacement, per-pool budgets with schedules, ``karpenter.sh/do-not-disrupt``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from kubesched.api.objects import Node, Pod
from kubesched.autoscale.claims import Claim, blocked_reason, expires_at, is_drifted, launched_at, pool_node
from kubesched.autoscale.config import GROUP_LABEL, AutoscalerConfig, NodeGroup
from kubesched.autoscale.core import ClusterAutoscaler, Upcoming
from kubesched.autoscale.disruption import (
    Candidate,
    Command,
    Offering,
    Pending,
    capacity_type_of,
    compute,
    consolidation_disabled,
    do_not_disrupt,
    multi_node,
    place_all,
)
from kubesched.autoscale.eligibility import unremovable_reason
from kubesched.autoscale.interface import ClusterView, NodeProvider
from kubesched.autoscale.karppools import NodePoolsMixin, add_to
from kubesched.autoscale.karprecord import (
    EXPIRED,
    PROVISIONING,
    KarpenterRecord,
    note_blocked,
    note_launch,
    note_removal,
    note_unconsolidatable,
)
from kubesched.autoscale.nodepool import (
    DRIFTED,
    EMPTY,
    UNDERUTILIZED,
    NodePool,
    exceeds,
    node_resources,
)
from kubesched.autoscale.predicate import PredicateChecker, node_named, placed
from kubesched.autoscale.scaledown import DRAIN_RECHECK, Drainer
from kubesched.autoscale.utilization import node_utilization
from kubesched.state.snapshot import Snapshot

CONSOLIDATION_PERIOD = 10.0  # how often consolidation looks for candidates
RECENT_CLAIMS = 4  # a pod tries the newest claims of the batch before opening another
CONSOLIDATED_TTL = 300.0  # a consolidated cluster is looked at again after 5 min (cluster.go)


class KarpenterLike(NodePoolsMixin, ClusterAutoscaler):
    def __init__(self, config: AutoscalerConfig, provider: NodeProvider, rng: np.random.Generator) -> None:
        super().__init__(config, provider, rng)
        self.seen: set[str] = set()
        self.batch_start: float | None = None
        self.last_new = 0.0
        self.last_consolidation = -float("inf")
        self.stable_since: dict[str, tuple[int, float]] = {}  # node -> (pod count, since)
        self.recheck_at: dict[str, float] = {}  # node -> when its pods are worth simulating again
        self.set_pools(config.node_pools)
        self.launched: dict[str, float] = {}  # NodePool nodes: when their claim was made
        self.expires: dict[str, float] = {}  # ... and when it expires (its claim's expireAfter)
        self.candidates: list[str] = []  # what the last disruption pass could take (consolidatable, drifted)
        self.pending_cmds: list[Pending] = []  # replacements launched, their candidates to delete
        self.consolidated: tuple[tuple[object, ...], float] | None = None  # a pass found nothing: (state, when)

    def batch_open(self) -> bool:
        return self.batch_start is not None

    def run_once(self, view: ClusterView) -> None:
        now = view.now()
        self.account_nodes(view, now)
        self.hinted = {}
        if isinstance(self.record, KarpenterRecord):
            self.record.sizes = self.group_sizes(view.snapshot)
        pending = self.pending(view, now)
        if self.pools:  # a pod bound since is new when it is pending again (evicted, interrupted)
            self.seen &= {p.uid for p in pending}
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
            if self.pools:
                self.disrupt(view, now)
            else:
                self.consolidate(view, now)
        if self.record is not None:  # the last pass's candidates: the status's and metrics' unneeded nodes
            self.record.unneeded = [n for n in self.candidates if n in view.snapshot.row_of]

    # ---- provisioning --------------------------------------------------------------------
    def _shape_snap(self, view: ClusterView, g: NodeGroup) -> tuple[Snapshot, int]:
        snap = self.scratch_factory(view, [])()
        row = snap.add_node(node_named(g.template, f"claim-{g.name}", {GROUP_LABEL: g.name}))
        return snap, row

    def provision(self, view: ClusterView, pods: list[Pod], now: float) -> None:
        checker = self.checker(view)
        pods = self.fit_upcoming(view, pods, checker)
        if self.record is not None:
            self.record.pending = pods
        if not pods:
            return
        if self.pools:
            self.provision_pools(view, pods, now, checker)
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
            note_launch(self.record, g, node, c.pods)
            self.provider.create(g, node)
            self.stats.nodes_added += 1
        if isinstance(self.record, KarpenterRecord):  # the pods no claim took stay pending
            held = {p.uid for c in claims for p in c.pods}
            self.record.unlaunchable = [p for p in pods if p.uid not in held]
        if claims:
            self.stats.scale_ups += 1
            self.last_scale_up = now

    def _try_claim(self, checker: PredicateChecker, claim: Claim, pod: Pod) -> bool:
        keep = [
            i for i, snap in enumerate(claim.snaps) if checker.fits(snap, pod, np.asarray([0], np.int32))[0]
        ]  # the claim's node is row 0 of each of its snapshots
        if not keep:
            return False
        for i in keep:
            claim.snaps[i].add_pod(placed(pod, claim.snaps[i].nodes[0].name))
        claim.shapes = [claim.shapes[i] for i in keep]
        claim.snaps = [claim.snaps[i] for i in keep]
        if claim.offers:
            claim.offers = [claim.offers[i] for i in keep]
        claim.pods.append(pod)
        return True

    def provision_pools(self, view: ClusterView, pods: list[Pod], now: float, checker: PredicateChecker) -> None:
        chosen, left = self.plan_claims(view, pods, checker)
        for o, held in chosen:
            self.launch(o, now, held)
        if isinstance(self.record, KarpenterRecord):
            self.record.unlaunchable = left
        if chosen:
            self.stats.scale_ups += 1
            self.last_scale_up = now

    def plan_claims(
        self, view: ClusterView, pods: list[Pod], checker: PredicateChecker
    ) -> tuple[list[tuple[Offering, list[Pod]]], list[Pod]]:
        """Karpenter's scheduling simulation for new capacity: the pods packed onto new claims,
        each from the first pool (by weight) with an offering that holds its first pod within the
        pool's limits; each claim then takes the cheapest offering still holding all its pods
        and within the limits. Returns the offerings to launch (each with its pods) and the pods
        no claim holds."""
        used = self.pool_usage(view.snapshot)
        sizes = self.group_sizes(view.snapshot)
        total = self.cluster_size(view.snapshot)
        scratch = self.scratch_factory(view, pods)
        claims: list[Claim] = []
        left: list[Pod] = []
        for pod in sorted(pods, key=lambda p: (p.requests.get("cpu", 0), p.requests.get("memory", 0)), reverse=True):
            if any(self._try_claim(checker, c, pod) for c in claims[-RECENT_CLAIMS:][::-1]):
                continue
            if self.cfg.max_nodes_total and total + len(claims) >= self.cfg.max_nodes_total:
                left.append(pod)
                continue
            claim = None
            for pool in self.pools:
                fit = []
                for o in self.offerings(pool):
                    g = self.cfg.group(o.group)
                    if sizes[g.name] >= g.max_size or exceeds(pool.limits, used[pool.name], node_resources(o.node)):
                        continue
                    snap = scratch()
                    row = snap.add_node(o.node)
                    if checker.fits(snap, pod, np.asarray([row], np.int32))[0]:
                        snap.add_pod(placed(pod, o.node.name))
                        fit.append((o, g, snap))
                if fit:
                    claim = Claim([g for _, g, _ in fit], [s for _, _, s in fit], [pod], [o for o, _, _ in fit])
                    break
            if claim is None:
                left.append(pod)  # no pool can launch a node for it: it stays pending
                continue
            claims.append(claim)
            o = claim.offers[0]
            sizes[o.group] += 1  # what the claim will most likely launch counts already
            add_to(used[o.pool.name], node_resources(o.node))
        used = self.pool_usage(view.snapshot)
        chosen = []
        for c in claims:
            o = next((o for o in c.offers if not exceeds(o.pool.limits, used[o.pool.name], node_resources(o.node))), None)
            if o is None:
                left.extend(c.pods)
                continue
            add_to(used[o.pool.name], node_resources(o.node))
            chosen.append((o, c.pods))
        return chosen, left

    def launch(self, o: Offering, now: float, pods: Sequence[Pod] = (), reason: str = PROVISIONING) -> str:
        g = self.cfg.group(o.group)
        name = self.new_name(g.name)
        node = pool_node(g.template, name, o.pool, g.name, o.capacity_type)
        self.upcoming[name] = Upcoming(g.name, now, node)
        note_launch(self.record, g, node, list(pods), reason)
        self.launched[name] = now
        if o.pool.expire_after is not None:  # the claim keeps the value it was made with
            self.expires[name] = now + o.pool.expire_after
        self.provider.create(g, node)
        self.stats.nodes_added += 1
        return name

    # ---- consolidation -------------------------------------------------------------------
    def consolidate(self, view: ClusterView, now: float) -> None:
        snap = view.snapshot
        kc = self.cfg.karpenter
        self._track_stability(snap, now, lambda node: self.group_of(node) is not None)
        live = self.stable_since
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
        self.candidates = due
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
            self._remove(name, snap, now, EMPTY if live[name][0] == 0 else UNDERUTILIZED)

    # ---- disruption with NodePools ---------------------------------------------------------
    def update_pools(self, pools: list[NodePool]) -> None:
        """New NodePool specs (a changed file): nodes launched from an older template of a pool
        have drifted."""
        self.set_pools(pools)
        self.consolidated = None

    def disrupt(self, view: ClusterView, now: float) -> None:
        """One pass of Karpenter's disruption controller: the first method that finds a command
        runs it (expiration, then emptiness, drift, multi-node and single-node consolidation)."""
        snap = view.snapshot
        gone = self._finish_replacements(snap, now)  # deleted this pass: no candidates any more
        self._track_stability(snap, now, lambda node: self.pool_of(node) is not None)
        if self._expire(snap, now, gone) or self.batch_open():
            return  # pods are about to be provisioned for: no voluntary disruption meanwhile
        disrupting = {n for c in self.pending_cmds for n in c.candidates} | gone
        cands = self._candidates(view, now, disrupting)
        self.candidates = [c.name for c in cands if c.consolidatable or c.drifted]
        state = (snap.n, len(self.upcoming), int(snap.requested[:, snap.res_index["pods"]].sum()), *(c.key for c in cands))
        if self.consolidated is not None and self.consolidated[0] == state and now - self.consolidated[1] < CONSOLIDATED_TTL:
            return  # IsConsolidated: nothing changed since a pass that found nothing to do
        budgets = self._budgets(snap, now, disrupting)
        empty = []
        for c in cands:
            if c.consolidatable and not c.pods and budgets[EMPTY][c.pool.name] > 0:
                budgets[EMPTY][c.pool.name] -= 1
                empty.append(c)
        if empty:
            self._execute(Command(empty, None, "delete"), snap, now, EMPTY)
            return
        checker = self.checker(view)
        drifted = sorted((c for c in cands if c.drifted and c.pods), key=lambda c: self._launched_at(snap, c.name))
        cmd = self._drift(view, drifted, budgets[DRIFTED], checker, disrupting)
        if cmd is None:
            cmd = self._consolidate_pools(view, now, cands, budgets[UNDERUTILIZED], checker, disrupting)
        if cmd is None:
            # a budget that held a candidate back may open without the cluster changing: then
            # the cluster is not consolidated (upstream's constrainedByBudgets)
            held = any(
                budgets[reason][c.pool.name] <= 0
                for c in cands
                for reason, applies in ((EMPTY, c.consolidatable and not c.pods), (DRIFTED, c.drifted), (UNDERUTILIZED, c.consolidatable and bool(c.pods)))
                if applies
            )
            if not held:
                self.consolidated = (state, now)
            return
        self._execute(cmd, snap, now, DRIFTED if cmd.reason == DRIFTED else UNDERUTILIZED)

    def _budgets(self, snap: Snapshot, now: float, disrupting: set[str]) -> dict[str, dict[str, int]]:
        """BuildDisruptionBudgetMapping: per reason and pool, what the budgets allow less the
        pool's nodes being disrupted."""
        nodes = self.pool_nodes(snap)
        busy = {p.name: 0 for p in self.pools}
        for n in disrupting:
            pool = self.pool_of(snap.nodes[snap.row_of[n]]) if n in snap.row_of else None
            if pool is not None:
                busy[pool.name] += 1
        return {
            reason: {p.name: p.allowed_disruptions(now, nodes[p.name], reason) - busy[p.name] for p in self.pools}
            for reason in (EMPTY, DRIFTED, UNDERUTILIZED)
        }

    def _drift(
        self, view: ClusterView, cands: list[Candidate], budget: dict[str, int], checker: PredicateChecker, disrupting: set[str]
    ) -> Command | None:
        """Drift: the first drifted node (with pods) the budget allows whose pods fit on the other
        nodes plus new claims (as many as they need; no cheaper-node condition)."""
        snap = view.snapshot
        for c in cands:
            if budget.get(c.pool.name, 0) <= 0:
                continue
            with snap.trial():
                left = place_all(checker, snap, c.pods, {c.name} | disrupting)
            chosen, unplaced = self.plan_claims(view, [p.with_node("") for p in left], checker) if left else ([], [])
            if unplaced:
                continue  # its pods would not all schedule: blocked
            return Command([c], None, DRIFTED, [o for o, _ in chosen])
        return None

    def _consolidate_pools(
        self,
        view: ClusterView,
        now: float,
        cands: list[Candidate],
        budget: dict[str, int],
        checker: PredicateChecker,
        disrupting: set[str],
    ) -> Command | None:
        snap = view.snapshot
        explaining = isinstance(self.record, KarpenterRecord)  # only live: the reasons cost simulations
        for c in cands if explaining else ():
            if (off := consolidation_disabled(c.pool)) is not None:
                note_unconsolidatable(self.record, c.name, off)
        busy = [c for c in cands if c.consolidatable and c.pods and c.pool.consolidation_policy == "WhenEmptyOrUnderutilized"]
        if not busy:
            return None
        scratch = self.scratch_factory(view, [p for c in busy for p in c.pods])
        by_price = sorted((o for p in self.pools for o in self.offerings(p)), key=lambda o: o.price)

        def offers() -> list[Offering]:
            used = self.pool_usage(snap)
            return [o for o in by_price if not exceeds(o.pool.limits, used[o.pool.name], node_resources(o.node))]

        def attempt(group: list[Candidate], why: list[str] | None = None) -> Command | None:
            return compute(group, snap, checker, offers, scratch, disrupting, why)

        cmd = multi_node(busy, dict(budget), attempt)
        if cmd is not None:
            return cmd
        for c in busy:
            # a node whose pods could not move waits a minute before it is simulated again
            if budget.get(c.pool.name, 0) <= 0 or self.recheck_at.get(c.name, 0.0) > now:
                continue
            why: list[str] | None = [] if explaining else None
            cmd = attempt([c], why)
            if cmd is not None:
                return cmd
            self.recheck_at[c.name] = now + DRAIN_RECHECK
            for reason in why or ():
                note_unconsolidatable(self.record, c.name, reason)
        return None

    def _track_stability(self, snap: Snapshot, now: float, managed: Callable[[Node], bool]) -> None:
        """Since when each managed node has held its present number of pods."""
        live: dict[str, tuple[int, float]] = {}
        for row, node in enumerate(snap.nodes):
            if not managed(node):
                continue
            count = len(snap.pods_on[row])
            prev = self.stable_since.get(node.name)
            live[node.name] = prev if prev is not None and prev[0] == count else (count, now)
        self.stable_since = live

    def _candidates(self, view: ClusterView, now: float, disrupting: set[str]) -> list[Candidate]:
        """The nodes disruption may take, in order of disruption cost (fewest pods first): of a
        NodePool, not already being disrupted, not about to receive pending pods, without
        do-not-disrupt on it or its pods, and whose pods PDBs let go."""
        snap = view.snapshot
        drainer = Drainer(self.checker(view))
        out = []
        for name, (_, since) in self.stable_since.items():
            row = snap.row_of[name]
            node = snap.nodes[row]
            pool = self.pool_of(node)
            if pool is None or name in disrupting:
                continue
            why = blocked_reason(node, name in self.hinted, now)
            if why is not None:
                if why:
                    note_blocked(self.record, name, why)
                continue
            pods = list(snap.pods_on[row].values())
            if do_not_disrupt(node, pods) or not all(drainer.movable(p, {}, snap) for p in pods):
                continue
            g = self.cfg.group(node.labels[GROUP_LABEL])
            ct = capacity_type_of(node)
            c = Candidate(name, pool, g.name, ct, self.cfg.spot.price(self.cfg.prices.node(g), ct), pods)
            c.consolidatable = pool.consolidate_after is not None and now - since >= pool.consolidate_after
            c.drifted = is_drifted(node, pool)
            out.append(c)
        return sorted(out, key=lambda c: len(c.pods))

    def _execute(self, cmd: Command, snap: Snapshot, now: float, reason: str) -> None:
        """Delete the candidates now, or launch the replacements and delete the candidates once
        they have registered (the candidates count against the budgets meanwhile)."""
        news = [cmd.replacement] if cmd.replacement is not None else list(cmd.launches)
        if not news:
            for c in cmd.candidates:
                self._remove(c.name, snap, now, reason)
            return
        names = [self.launch(o, now, reason=reason.lower()) for o in news]
        self.stats.scale_ups += 1
        self.pending_cmds.append(Pending(names, [c.name for c in cmd.candidates], reason))

    def _launched_at(self, snap: Snapshot, name: str) -> float:
        return launched_at(snap.nodes[snap.row_of[name]], self.launched) or 0.0

    def _remove(self, name: str, snap: Snapshot, now: float, reason: str) -> None:
        """Delete the node for ``reason`` (Empty, Underutilized, Drifted, Expired)."""
        row = snap.row_of[name]
        node = snap.nodes[row]
        note_removal(self.record, node, self.group_of(node) or "", list(snap.pods_on[row].values()), reason)
        self.stable_since.pop(name, None)
        self.launched.pop(name, None)
        self.expires.pop(name, None)
        evicted = len(snap.pods_on[row])  # before the provider deletes the node
        self.provider.delete(name)
        self.stats.removed(evicted)
        self.last_delete = now

    def _finish_replacements(self, snap: Snapshot, now: float) -> set[str]:
        """Delete the candidates whose replacements have all registered; a command one of whose
        replacements never registered is given up (its candidates stay). Returns the nodes deleted."""
        keep = []
        gone = set()
        for cmd in self.pending_cmds:
            if all(n in snap.row_of for n in cmd.replacements):
                for name in cmd.candidates:
                    if name in snap.row_of:
                        self._remove(name, snap, now, cmd.reason)
                        gone.add(name)
            elif all(n in snap.row_of or n in self.upcoming for n in cmd.replacements):
                keep.append(cmd)
        self.pending_cmds = keep
        return gone

    def _expire(self, snap: Snapshot, now: float, gone: set[str]) -> bool:
        """Expiration (the NodeClaim expiration controller): a node whose claim's expireAfter
        has passed since it was made goes, whatever the budgets or do-not-disrupt."""
        due = []
        for node in snap.nodes[: snap.n]:
            pool = self.pool_of(node) if node.name not in gone else None
            t = expires_at(node, pool, self.launched, self.expires) if pool is not None else None
            if t is not None and now >= t:
                due.append(node.name)
        for name in due:
            self._remove(name, snap, now, EXPIRED)
        return bool(due)

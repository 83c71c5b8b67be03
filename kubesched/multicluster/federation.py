"""A federation: member clusters, the cluster-level plugins and estimators, and Karmada's scheduler.

``Federation.decide(binding)`` runs the cluster-level pipeline on the members' current state;
``Federation.apply(decision)`` creates the replicas in the chosen members, where each member's
own kubesched scheduler places them, so the next decision sees them (as Karmada does once the
members report back, or at once with its SchedulingOvercommitProtection).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kubesched.errors import InputError, did_you_mean
from kubesched.multicluster.api import Binding
from kubesched.multicluster.estimate import Assumed, Estimators, GeneralEstimator, ReplicaEstimator
from kubesched.multicluster.framework import DEFAULT_PLUGINS, IN_TREE, ClusterFramework, ClusterPlugin
from kubesched.multicluster.member import MemberCluster
from kubesched.multicluster.scheduler import BindingDecision, FederationScheduler
from kubesched.multicluster.simulated import SimulatedEstimator

ESTIMATORS = ("general", "simulated", "both")


def resolve_plugins(spec: str, extra: dict[str, ClusterPlugin] | None = None) -> list[ClusterPlugin]:
    """Karmada's ``--plugins`` syntax: ``*`` for every in-tree plugin, ``-Name`` to disable one,
    ``Name`` to enable one (in-tree or given in ``extra``)."""
    extra = extra or {}
    known = {**{n: None for n in IN_TREE}, **extra}
    chosen: list[str] = []
    for item in [s.strip() for s in spec.split(",") if s.strip()]:
        if item == "*":
            chosen += [n for n in DEFAULT_PLUGINS if n not in chosen]
            continue
        name = item[1:] if item.startswith("-") else item
        if name not in known:
            hint = did_you_mean(name, known) or f" (known: {', '.join(known)})"
            raise InputError(f'unknown plugin "{name}"{hint}', source="--plugins")
        if item.startswith("-"):
            chosen = [n for n in chosen if n != name]
        elif name not in chosen:
            chosen.append(name)
    return [extra[n] if n in extra else IN_TREE[n]() for n in chosen]


@dataclass
class Federation:
    members: list[MemberCluster]
    plugins: list[ClusterPlugin] = field(default_factory=lambda: [IN_TREE[n]() for n in DEFAULT_PLUGINS])
    estimator: str = "both"
    weights: dict[str, int] = field(default_factory=dict)
    empty_workload_propagation: bool = False

    def __post_init__(self) -> None:
        if self.estimator not in ESTIMATORS:
            raise InputError(f'unknown estimator "{self.estimator}" (expected one of {", ".join(ESTIMATORS)})', source="--estimator")
        self.by_name = {m.name: m for m in self.members}
        self.reschedules = 0  # apply_changes' count: it names the replicas each creates
        self.simulated = SimulatedEstimator({m.name: m for m in self.members if m.scheduler is not None})
        chosen: list[ReplicaEstimator] = []
        if self.estimator in ("general", "both"):
            chosen.append(GeneralEstimator())
        if self.estimator in ("simulated", "both"):
            chosen.append(self.simulated)
        self.scheduler = FederationScheduler(
            ClusterFramework(self.plugins, self.weights), Estimators(chosen), empty_workload_propagation=self.empty_workload_propagation
        )

    def decide(self, binding: Binding, *, explain: bool = False, assumed: Assumed | None = None) -> BindingDecision:
        """``assumed``: per member, workloads assigned there whose pods it does not show yet
        (Karmada's AssumedWorkloads): both estimators deduct them first."""
        for m in self.members:
            m.refresh()
        return self.scheduler.schedule(binding, [m.cluster for m in self.members], explain=explain, assumed=assumed)

    def record(self, decision: BindingDecision) -> None:
        """Remember where a workload went (NetworkOverhead's ``depends-on`` reads it)."""
        from kubesched.multicluster.network import NetworkOverhead

        b = decision.binding
        for p in self.plugins:
            if isinstance(p, NetworkOverhead):
                p.net.placements[f"{b.namespace}/{b.name}"] = [t.name for t in decision.clusters]

    def apply_changes(self, decision: BindingDecision) -> None:
        """Create the replicas a rescheduling adds to each cluster beyond what its binding had
        there (``decision.binding.clusters``, the previous result), as ``apply`` does for a first
        decision; replicas it takes away are left in place."""
        b = decision.binding
        if b.template is None:
            return
        self.reschedules += 1
        for t in decision.clusters:
            added = t.replicas - b.assigned_replicas_for(t.name)
            m = self.by_name.get(t.name)
            if added > 0 and m is not None and m.scheduler is not None:
                m.create(b.template, f"{b.name}-{t.name}-r{self.reschedules}", added)

    def workload_health(self, binding: Binding, cluster: str) -> str | None:
        """The health Karmada's interpreter reports for a workload on a member with a dump:
        Unhealthy while a replica created there (``apply``, ``apply_changes``) is not bound,
        else Healthy; None for a member without a dump (nothing to tell)."""
        m = self.by_name.get(cluster)
        if m is None or m.scheduler is None:
            return None
        prefix = f"{m.name}/{binding.namespace}/{binding.name}-{m.name}-"
        return "Unhealthy" if any(uid.startswith(prefix) for uid in m.pending) else "Healthy"

    def apply(self, decision: BindingDecision) -> None:
        """Create the decided replicas in their members (members without a dump are skipped)."""
        b = decision.binding
        if b.template is None:
            return
        for t in decision.clusters:
            m = self.by_name.get(t.name)
            if m is not None and m.scheduler is not None and t.replicas > 0:
                m.create(b.template, f"{b.name}-{t.name}", t.replicas)

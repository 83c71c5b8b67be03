"""The JSON documents of ``kubesched multicluster schedule|explain`` (contracts: docs/multicluster.md)."""

from __future__ import annotations

from typing import Any

from kubesched.multicluster.api import Binding
from kubesched.multicluster.scheduler import Attempt, BindingDecision


def workload_key(b: Binding) -> str:
    return f"{b.kind} {b.namespace}/{b.name}"


def decision_json(d: BindingDecision) -> dict[str, Any]:
    b = d.binding
    return {
        "workload": workload_key(b),
        "policy": b.policy,
        "replicas": b.replicas,
        "result": d.reason,
        "message": d.message,
        "affinityName": d.affinity_name or None,
        "clusters": [{"name": t.name, "replicas": t.replicas} for t in d.clusters],
    }


def _attempt_json(at: Attempt) -> dict[str, Any]:
    chosen = {t.name: t.replicas for t in at.clusters or []}
    clusters = []
    for v in at.verdicts:
        name = v.cluster.name
        clusters.append(
            {
                "name": name,
                "feasible": v.feasible,
                "filter": [{"plugin": p, "code": r.code.name, "reasons": list(r.reasons)} for p, r in v.filters],
                "score": [{"plugin": p, "score": raw, "normalized": norm} for p, raw, norm in v.scores],
                "total": v.total,
                "availableReplicas": at.available.get(name),
                "estimates": at.estimates.get(name, {}),
                "selected": name in at.selected,
                "replicas": chosen.get(name, 0) if at.clusters is not None else None,
            }
        )
    return {
        "affinityName": at.affinity_name or None,
        "clusters": clusters,
        "result": at.reason,
        "message": at.error,
    }


def explain_json(d: BindingDecision) -> dict[str, Any]:
    return {**decision_json(d), "attempts": [_attempt_json(a) for a in d.attempts]}

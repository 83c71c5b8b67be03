"""Explain one pod: every node, every filter plugin's verdict, every score plugin's numbers.

Unlike a scheduling cycle, every enabled filter plugin runs on every node (no early exit),
so all reasons show at once. The selected node is the one the scheduling cycle would pick
among the feasible nodes (same scores, same seeded tie-break).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from kubesched.api.objects import Pod
from kubesched.framework import cycle
from kubesched.framework.diagnosis import NO_NODES
from kubesched.framework.runtime import Framework
from kubesched.framework.status import Status
from kubesched.scheduler import Scheduler


def _status_json(st: Status, plugin: str) -> dict[str, Any]:
    return {"plugin": plugin, "code": st.code.name, "reasons": list(st.reasons)}


def explain_pod(sched: Scheduler, pod: Pod, errors: list[BaseException] | None = None) -> dict[str, Any]:
    """The explain contract (docs/cli.md). ``errors`` collects what plugins raised (--debug)."""
    fw = sched.frameworks.get(pod.scheduler_name)
    if fw is None:
        raise KeyError(pod.scheduler_name)
    snap = sched.snapshot
    out: dict[str, Any] = {"pod": pod.key, "profile": fw.profile_name, "nodes": [], "selected": None, "message": None}
    if snap.n == 0:
        out["message"] = NO_NODES
        return out
    every = cycle.evaluate_every_plugin(fw, pod, snap, sched.cycle)
    if every.error is not None:
        out["message"] = every.error.status.message
        if errors is not None and every.error.cause is not None:
            errors.append(every.error.cause)
    if every.feasible is None:  # PreFilter or Filter failed: nothing to show per node
        return out
    rows, feasible = every.rows, every.feasible
    node_filters = _filter_entries(fw, every, len(rows))
    score_by_row: dict[int, tuple[list[dict[str, Any]], int]] = {}
    if every.scores is not None:
        scores = every.scores
        # plain lists first: indexing numpy arrays element by element costs more than the rest
        per_plugin = [(name, raw.tolist(), norm.tolist(), w) for name, (raw, norm, w) in scores.per_plugin.items()]
        totals = scores.total.tolist()
        for j, row in enumerate(scores.rows.tolist()):
            entries = [
                {"plugin": name, "raw": int(raw[j]), "normalized": int(norm[j]), "weight": w, "weighted": int(norm[j]) * w}
                for name, raw, norm, w in per_plugin
            ]
            score_by_row[row] = (entries, int(totals[j]))
    if every.selected is not None:
        out["selected"] = snap.nodes[every.selected].name
    if not feasible.any():
        out["message"] = every.diagnosis.fit_error(snap.n)
    for i, row in enumerate(rows.tolist()):
        entries, total = score_by_row.get(row, ([], None))
        out["nodes"].append(
            {
                "name": snap.nodes[row].name,
                "feasible": bool(feasible[i]),
                "filter": node_filters[i],
                "score": entries,
                "total": total,
            }
        )
    return out


def _filter_entries(fw: Framework, every: cycle.EveryPlugin, n: int) -> list[list[dict[str, Any]]]:
    """Per node, every filter plugin's verdict (a PreFilter rejection is that plugin's verdict
    on every node; rows a PreFilterResult left out say so last)."""
    node_filters: list[list[dict[str, Any]]] = [[] for _ in range(n)]
    if every.rejected:
        for entries in node_filters:
            entries.extend(_status_json(st, plugin) for plugin, st in every.rejected.items())
        return node_filters
    for pl in fw.filter:
        res = every.verdicts.get(pl.name)
        # one verdict per distinct (code, reasons) pair, copied per node: thousands of nodes
        # share a handful of verdicts (copies, so that YAML output has no aliases)
        seen: dict[tuple[int, int], dict[str, Any]] = {}
        codes = res.code.tolist() if res is not None else [0] * n
        bits = res.reason_bits.tolist() if res is not None else [0] * n
        for i in range(n):
            e = seen.get((codes[i], bits[i]))
            if e is None:
                st = Status(plugin=pl.name) if res is None else res.status_at(i, pl.name)
                e = seen[codes[i], bits[i]] = _status_json(st, pl.name)
            node_filters[i].append({"plugin": e["plugin"], "code": e["code"], "reasons": list(e["reasons"])})
    if every.inside is not None:
        assert every.pre is not None
        outside = _status_json(every.pre.outside, "PreFilterResult")
        for i in np.flatnonzero(~every.inside).tolist():
            node_filters[i].append(dict(outside, reasons=list(outside["reasons"])))
    return node_filters

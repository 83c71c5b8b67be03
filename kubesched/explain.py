"""Explain one pod: every node, every filter plugin's verdict, every score plugin's numbers.

Unlike a scheduling cycle, every enabled filter plugin runs on every node (no early exit),
so all reasons show at once. The selected node is the one the scheduling cycle would pick
among the feasible nodes (same scores, same seeded tie-break).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from kubesched.api.objects import Pod
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.diagnosis import NO_NODES, Diagnosis, NodeFailures
from kubesched.framework.runtime import PluginFailure
from kubesched.framework.status import Code, Status
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
    state = CycleState()
    rows = np.asarray(snap.order, np.int32)
    try:
        _names, pre_status, with_nodes, per_plugin = fw.run_pre_filter(state, pod, snap, run_all=True)
        rejected_pre = {p: st for p, st in per_plugin.items() if st.code not in (Code.Success, Code.Skip)}
        results = fw.filter_all(state, pod, snap, rows) if not rejected_pre else {}
    except PluginFailure as e:
        out["message"] = e.status.message
        if errors is not None and e.cause is not None:
            errors.append(e.cause)
        return out
    allowed = np.ones(len(rows), bool)
    if _names is not None:
        allowed = np.isin(rows, snap.rows_of(_names))
    node_filters: list[list[dict[str, Any]]] = [[] for _ in rows]
    feasible = np.ones(len(rows), bool)
    diag = Diagnosis()
    if rejected_pre:
        # A PreFilter rejection is that plugin's verdict on every node.
        for i in range(len(rows)):
            for plugin, st in rejected_pre.items():
                node_filters[i].append(_status_json(st, plugin))
        feasible[:] = False
        diag.absent_status = pre_status
        diag.pre_filter_msg = pre_status.message
    else:
        for pl in fw.filter:
            res = results.get(pl.name)
            # one verdict per distinct (code, reasons) pair, copied per node: thousands of nodes
            # share a handful of verdicts (copies, so that YAML output has no aliases)
            seen: dict[tuple[int, int], dict[str, Any]] = {}
            codes = res.code.tolist() if res is not None else [0] * len(rows)
            bits = res.reason_bits.tolist() if res is not None else [0] * len(rows)
            for i in range(len(rows)):
                e = seen.get((codes[i], bits[i]))
                if e is None:
                    st = Status(plugin=pl.name) if res is None else res.status_at(i, pl.name)
                    e = seen[codes[i], bits[i]] = _status_json(st, pl.name)
                node_filters[i].append({"plugin": e["plugin"], "code": e["code"], "reasons": list(e["reasons"])})
            if res is not None:
                failed = res.code != 0
                feasible &= ~failed
                # the cycle would report the first failing plugin of each node
                first = failed & ~np.isin(rows, diag.rows_with_code(Code.Unschedulable)) & ~np.isin(
                    rows, diag.rows_with_code(Code.UnschedulableAndUnresolvable)
                )
                if first.any():
                    diag.failures.append(NodeFailures.from_result(pl.name, rows, res, first))
        if _names is not None:
            feasible &= allowed
            msg = f"node(s) didn't satisfy plugin(s) [{' '.join(sorted(with_nodes))}]"
            for i in np.nonzero(~allowed)[0]:
                node_filters[i].append({"plugin": "PreFilterResult", "code": "UnschedulableAndUnresolvable", "reasons": [msg]})
            diag.absent_status = Status(Code.UnschedulableAndUnresolvable, (msg,))
    feas_rows = rows[feasible]
    score_by_row: dict[int, tuple[list[dict[str, Any]], int]] = {}
    if feas_rows.size:
        try:
            scores = fw.run_score(state, pod, snap, feas_rows)
        except PluginFailure as e:
            out["message"] = e.status.message
            if errors is not None and e.cause is not None:
                errors.append(e.cause)
            scores = None
        if scores is not None:
            # plain lists first: indexing numpy arrays element by element costs more than the rest
            per_plugin = [(name, raw.tolist(), norm.tolist(), w) for name, (raw, norm, w) in scores.per_plugin.items()]
            totals = scores.total.tolist()
            for j, row in enumerate(feas_rows.tolist()):
                entries = [
                    {
                        "plugin": name,
                        "raw": int(raw[j]),
                        "normalized": int(norm[j]),
                        "weight": w,
                        "weighted": int(norm[j]) * w,
                    }
                    for name, raw, norm, w in per_plugin
                ]
                score_by_row[row] = (entries, int(totals[j]))
            if feas_rows.size == 1:
                out["selected"] = snap.nodes[int(feas_rows[0])].name
            else:
                out["selected"] = snap.nodes[sched.select_host(scores)].name
    else:
        out["message"] = diag.fit_error(snap.n)
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

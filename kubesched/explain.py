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


def explain_pod(sched: Scheduler, pod: Pod, errors: list[BaseException] | None = None) -> dict[str, Any]:
    """The explain contract (docs/cli.md). ``errors`` collects what plugins raised (--debug)."""
    out = explain_columns(sched, pod, errors)
    columns = out.pop("columns")
    return {"pod": out["pod"], "profile": out["profile"], "nodes": nodes_of(columns), "selected": out["selected"], "message": out["message"]}


def explain_columns(sched: Scheduler, pod: Pod, errors: list[BaseException] | None = None) -> dict[str, Any]:
    """The explain contract with its nodes as columns instead (``columns``; None when PreFilter or
    a filter failed and there is nothing per node): ``name``, ``feasible``, ``total`` per node;
    ``filter``: the plugins, each distinct verdict once (``verdicts``: code and reasons) and per
    plugin each node's verdict (``at``: an index, -1 where the plugin gave none); ``score``: the
    plugins, their weights and per plugin each node's ``raw``, ``normalized`` and ``weighted``
    score (None where not scored). Thousands of nodes share a handful of verdicts: built per
    plugin from its verdict arrays, without a dict per node and plugin (which `kubesched ui`'s
    decision view would only turn back into columns)."""
    fw = sched.frameworks.get(pod.scheduler_name)
    if fw is None:
        raise KeyError(pod.scheduler_name)
    snap = sched.snapshot
    out: dict[str, Any] = {"pod": pod.key, "profile": fw.profile_name, "columns": None, "selected": None, "message": None}
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
    n = len(rows)
    scored = _score_columns(every, n)
    if every.selected is not None:
        out["selected"] = snap.nodes[every.selected].name
    if not feasible.any():
        out["message"] = every.diagnosis.fit_error(snap.n)
    out["columns"] = {
        "name": [snap.nodes[r].name for r in rows.tolist()],
        "feasible": feasible.tolist(),
        "total": scored.pop("total"),
        "filter": _filter_columns(fw, every, n),
        "score": scored,
    }
    return out


class _Verdicts:
    """Each distinct (code, reasons) once, in the order first seen."""

    def __init__(self) -> None:
        self.index: dict[tuple[str, tuple[str, ...]], int] = {}

    def of(self, st: Status) -> int:
        key = (st.code.name, tuple(st.reasons))
        v = self.index.get(key)
        if v is None:
            v = self.index[key] = len(self.index)
        return v

    def listed(self) -> list[dict[str, Any]]:
        return [{"code": c, "reasons": list(r)} for c, r in self.index]


def _filter_columns(fw: Framework, every: cycle.EveryPlugin, n: int) -> dict[str, Any]:
    """Every filter plugin's verdict on every node (a PreFilter rejection is that plugin's verdict
    on every node; the nodes a PreFilterResult left out get one more, "PreFilterResult")."""
    verdicts = _Verdicts()
    plugins: list[str] = []
    at: list[list[int]] = []
    if every.rejected:
        for plugin, st in every.rejected.items():
            plugins.append(plugin)
            at.append([verdicts.of(st)] * n)
        return {"plugins": plugins, "verdicts": verdicts.listed(), "at": at}
    for pl in fw.filter:
        plugins.append(pl.name)
        res = every.verdicts.get(pl.name)
        if res is None:  # its PreFilter skipped it: passed everywhere
            at.append([verdicts.of(Status(plugin=pl.name))] * n)
            continue
        pairs = np.stack([res.code.astype(np.int64), res.reason_bits.astype(np.int64)])
        distinct, first, inverse = np.unique(pairs, axis=1, return_index=True, return_inverse=True)
        ids = np.array([verdicts.of(res.status_at(int(i), pl.name)) for i in first.tolist()], np.int64)
        at.append(ids[inverse.reshape(-1)].tolist())
    if every.inside is not None and not every.inside.all():
        assert every.pre is not None
        v = verdicts.of(every.pre.outside)
        plugins.append("PreFilterResult")
        at.append(np.where(every.inside, -1, v).tolist())
    return {"plugins": plugins, "verdicts": verdicts.listed(), "at": at}


def _score_columns(every: cycle.EveryPlugin, n: int) -> dict[str, Any]:
    """The scored nodes' numbers per plugin, in node order (None where a node was not scored)."""
    total: list[int | None] = [None] * n
    out: dict[str, Any] = {"plugins": [], "weight": [], "raw": [], "normalized": [], "weighted": [], "total": total}
    if every.scores is None:
        return out
    scores = every.scores
    position = {row: i for i, row in enumerate(every.rows.tolist())}
    at = [position[r] for r in scores.rows.tolist()]
    for i, t in zip(at, scores.total.tolist(), strict=True):
        total[i] = int(t)
    for name, (raw, norm, w) in scores.per_plugin.items():
        cols = ([None] * n, [None] * n, [None] * n)
        for i, r, m in zip(at, raw.tolist(), norm.tolist(), strict=True):
            cols[0][i], cols[1][i], cols[2][i] = int(r), int(m), int(m) * w
        out["plugins"].append(name)
        out["weight"].append(w)
        out["raw"].append(cols[0])
        out["normalized"].append(cols[1])
        out["weighted"].append(cols[2])
    return out


def nodes_of(columns: dict[str, Any] | None) -> list[dict[str, Any]]:
    """The contract's ``nodes`` from ``explain_columns``' columns: per node its name, feasibility,
    every filter plugin's verdict, its scores per plugin and total."""
    if columns is None:
        return []
    f, s = columns["filter"], columns["score"]
    verdicts = f["verdicts"]
    out = []
    for i, name in enumerate(columns["name"]):
        filt = [
            {"plugin": p, "code": verdicts[at[i]]["code"], "reasons": list(verdicts[at[i]]["reasons"])}
            for p, at in zip(f["plugins"], f["at"], strict=True)
            if at[i] >= 0
        ]
        score = [
            {"plugin": p, "raw": s["raw"][k][i], "normalized": s["normalized"][k][i], "weight": s["weight"][k], "weighted": s["weighted"][k][i]}
            for k, p in enumerate(s["plugins"])
            if s["raw"][k][i] is not None
        ]
        out.append({"name": name, "feasible": columns["feasible"][i], "filter": filt, "score": score, "total": columns["total"][i]})
    return out

"""The decision view: one pod's attempts and, for the attempt picked, kubesched explain against the
cluster as that attempt saw it (Filter and Score as columns the page draws), every extension
point's result (``points``), the pod's volumes and claims (``volumes``), and why the run's node
is where it is."""

from __future__ import annotations

from typing import Any, NamedTuple

from kubesched.api.objects import Pod
from kubesched.errors import InputError
from kubesched.explain import nodes_of
from kubesched.framework.cycle import num_feasible_nodes_to_find
from kubesched.ui import points, volumes
from kubesched.ui.runs import Attempt
from kubesched.ui.sources import LIVE, Workspace

DECISIONS_KEPT = 64
#: the columns of an explain with nothing per node (PreFilter or a filter failed)
EMPTY_COLUMNS: dict[str, Any] = {
    "name": [], "feasible": [], "total": [], "filter": {"plugins": [], "verdicts": [], "at": []},
    "score": {"plugins": [], "weight": [], "raw": [], "normalized": [], "weighted": []},
}


def decision_view(ws: Workspace, key: str, attempt: int | None = None) -> dict[str, Any]:
    """``decision_tables`` with the explain contract whole (``explain.nodes``: a dict per node
    and plugin, as `kubesched explain -o json` writes it) instead of its columns."""
    d = decision_tables(ws, key, attempt)
    ex = d["explain"]
    contract = {"pod": ex["pod"], "profile": ex["profile"], "nodes": nodes_of(d["tables"]), "selected": ex["selected"], "message": ex["message"]}
    return {**{k: v for k, v in d.items() if k != "tables"}, "explain": contract}


def decision_tables(ws: Workspace, key: str, attempt: int | None = None) -> dict[str, Any]:
    """One pod: every attempt, and explain against the cluster as an attempt saw it (default: its
    last attempt; a pod never tried is judged against the end of the run), its nodes as columns
    (``tables``, ``explain_columns``), which the page draws. The last few are kept: going back to
    a pod or an attempt costs nothing. Concurrent callers take turns on the timeline's lock (the
    explain moves its one snapshot; the cache is shared)."""
    if ws.timeline is None:
        raise InputError("this source has no per-pod decisions (an experiment folder has dashboards only)", path="pod")
    with ws.timeline.lock:
        kept = ws.decisions.get((key, attempt))
        if kept is not None:
            ws.decisions.move_to_end((key, attempt))
            return kept
        out = _decision(ws, key, attempt)
        ws.decisions[key, attempt] = out
        while len(ws.decisions) > DECISIONS_KEPT:
            ws.decisions.popitem(last=False)
        return out


class Explained(NamedTuple):
    """What the exports need of a pod's decision."""

    columns: dict[str, Any]  # explain's nodes as columns (``explain_columns``)
    selected: str | None  # the node the run gave it
    points: list[dict[str, Any]]  # every extension point's result (kubesched.ui.points)
    recorded: bool  # the run recorded its attempt's results (a simulation's attempts.csv does not)


def explained(ws: Workspace, key: str) -> Explained:
    """A pod's explain as its last attempt saw the cluster, the node the run gave it and every
    extension point's result (for the exports). A decision the view keeps is reused; others are
    explained without being kept, so that an export of many pods does not push out the decisions
    the user looked at."""
    if ws.timeline is None:
        raise InputError("this source has no per-pod decisions (an experiment folder has dashboards only)", path="pod")
    with ws.timeline.lock:
        kept = ws.decisions.get((key, None))
        if kept is not None:
            return Explained(kept["tables"], kept["selected"], kept["points"], kept["points_recorded"])
        pod, _, chosen, step = _basis(ws, key, None)
        _, columns, _, _, rows = _explain(ws, pod, step)
        selected = chosen.node if chosen and chosen.outcome == "scheduled" else None
        return Explained(columns, selected, points.rows_of(rows, chosen), bool(chosen and chosen.results is not None))


def _explain(
    ws: Workspace, pod: Pod, step: int
) -> tuple[dict[str, Any], dict[str, Any], dict[str, dict[str, float]], float, list[dict[str, Any]]]:
    """``Timeline.explain`` as columns, hearing the PreFilter and PreScore results too: (the
    contract without nodes, its nodes as columns, plugin time, explain's ms, the results).
    Callers hold the timeline's lock."""
    assert ws.timeline is not None
    heard = points.ExplainResults()
    fws = list(ws.timeline.scheduler.frameworks.values())
    for fw in fws:
        fw.add_recorder(heard)
    try:
        explain, timing, took = ws.timeline.explain(pod, step, columns=True)
    finally:
        for fw in fws:
            fw.remove_recorder(heard)
    columns = explain.pop("columns") or EMPTY_COLUMNS
    return explain, columns, timing, took, heard.rows


def _basis(ws: Workspace, key: str, attempt: int | None) -> tuple[Pod, list[Attempt], Attempt | None, int]:
    """(the pod, its attempts, the attempt picked (None: never tried), the step it saw)."""
    assert ws.timeline is not None
    pod = ws.pods.get(key)
    if pod is None:
        raise InputError(f"no pod {key!r} in this source", path="pod")
    tries: list[Attempt] = ws.attempts.get(key, [])
    if attempt is None:
        chosen = tries[-1] if tries else None
    else:
        chosen = next((a for a in tries if a.attempt == attempt), None)
        if chosen is None:
            raise InputError(f"pod {key} has {len(tries)} attempt(s), no attempt {attempt}", path="attempt")
    step = chosen.step if chosen else len(ws.timeline)
    if pod.scheduler_name not in ws.timeline.scheduler.frameworks:
        raise InputError(
            f'spec.schedulerName "{pod.scheduler_name}" matches no profile ({", ".join(ws.timeline.scheduler.frameworks)})',
            path="pod",
        )
    return pod, tries, chosen, step


def _decision(ws: Workspace, key: str, attempt: int | None) -> dict[str, Any]:
    assert ws.timeline is not None
    pod, tries, chosen, step = _basis(ws, key, attempt)
    explain, columns, timing, took, rows = _explain(ws, pod, step)
    storage = volumes.pod_storage(
        ws.timeline.scheduler.frameworks[pod.scheduler_name], ws.timeline.seek(step), pod.with_node("") if pod.node_name else pod, columns
    )
    victims = [v for a in tries for v in a.victims]
    nominated = next((a.nominated_node for a in reversed(tries) if a.nominated_node), None)
    return {
        "pod": key,
        "basis": {
            "step": step,
            "steps": len(ws.timeline),
            "attempt": chosen.attempt if chosen else None,
            "what": "the cluster now (live)" if ws.kind == LIVE
            else "the cluster just before this attempt" if chosen else "the cluster at the end of the run",
        },
        "attempts": [a.to_json() for a in tries],
        "selected": chosen.node if chosen and chosen.outcome == "scheduled" else None,
        "selected_why": _why_selected(ws, pod, tries, chosen, columns),
        "nominated_node": nominated,
        "victims": victims,
        "points": points.rows_of(rows, chosen),
        "points_recorded": bool(chosen and chosen.results is not None),
        "volumes": storage,
        "explain": explain,
        "tables": columns,
        "explain_plugin_ms": {p: {k: round(v, 4) for k, v in d.items()} for p, d in timing.items()},
        "explain_ms": round(took, 3),
        "weights": _weights(ws, pod),
    }


def _why_selected(
    ws: Workspace, pod: Pod, tries: list[Attempt], chosen: Attempt | None, columns: dict[str, Any]
) -> dict[str, Any] | None:
    """Why the run's node (the ★) is where it is, against explain's scores of every node:
    ``kind`` is "nominated" (an earlier preemption's node, tried first and taken when it passes
    the filters, unscored), "tie" (several nodes share the top total; the run's draw picked),
    "top" (the highest total), "subset" (the cycle scored only the feasible nodes it found
    before stopping) or "other"; ``text`` says it in a sentence. None: the attempt placed nothing."""
    if chosen is None or chosen.outcome != "scheduled" or not chosen.node:
        return None
    assert ws.timeline is not None
    node = chosen.node
    totals = {name: t for name, t in zip(columns["name"], columns["total"], strict=True) if t is not None}
    top = max(totals.values()) if totals else None
    ties = sorted(k for k, v in totals.items() if v == top)
    mine = totals.get(node)
    out: dict[str, Any] = {"node": node, "score": mine, "top_score": top, "top_nodes": len(ties)}
    higher = f"; explain, which scores every node, gives {ties[0]} {top} against {mine}" if mine is not None and top is not None and mine < top else ""
    earlier = next((a for a in reversed(tries) if a.attempt < chosen.attempt and a.nominated_node), None)
    if earlier is not None and earlier.nominated_node == node:
        out["kind"] = "nominated"
        out["text"] = (
            f"the node attempt {earlier.attempt}'s preemption nominated: a pod's nominated node is tried first and "
            f"taken when it passes the filters, without scoring the others{higher}"
        )
        return out
    if mine is None:
        out["kind"] = "other"
        out["text"] = (
            "it fails a filter in this explain: explain does not replay other pods' nominations, which the "
            "scheduling cycle saw"
        )
        return out
    if mine == top:
        if len(ties) == 1:
            out["kind"], out["text"] = "top", f"the highest total score ({top})"
            return out
        sim_first = ws.inputs.get("tie_break") == "first"
        how = "by node order (--tie-break first)" if sim_first else f"by the run's seeded random draw (seed {ws.seed})"
        out["kind"] = "tie"
        out["text"] = f"tie: {len(ties)} nodes share the top total score {top}; the scheduler broke it {how}"
        return out
    fw = ws.timeline.scheduler.frameworks[pod.scheduler_name]
    pct = fw.percentage_of_nodes_to_score
    if pct is None:
        pct = ws.timeline.config.percentage_of_nodes_to_score
    nodes = len(columns["name"])
    find = num_feasible_nodes_to_find(nodes, pct or 0)
    if len(totals) > find:
        out["kind"] = "subset"
        out["text"] = (
            f"the scheduling cycle stops filtering once it has found {find} feasible nodes of {nodes} "
            f"(percentageOfNodesToScore), starting where the previous cycle stopped, and scores only those; "
            f"{len(totals)} nodes are feasible here{higher}"
        )
        return out
    out["kind"] = "other"
    out["text"] = f"explain's scores differ from the cycle's: it does not replay other pods' nominations{higher}"
    return out


def _weights(ws: Workspace, pod: Pod) -> dict[str, int]:
    assert ws.timeline is not None
    fw = ws.timeline.scheduler.frameworks.get(pod.scheduler_name)
    return dict(fw.score_weights) if fw else {}



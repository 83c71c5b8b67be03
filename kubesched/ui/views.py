"""The JSON each page of the UI reads. Columnar (one list per column) so that 150,000 pods travel
and sit in the browser as a few arrays, not 150,000 objects. All numbers are computed here, with
numpy; the page only draws, searches and sorts them."""

from __future__ import annotations

from collections import Counter
from typing import Any

import numpy as np

from kubesched.api.objects import Pod
from kubesched.api.resources import CPU, MEMORY, PODS
from kubesched.errors import InputError
from kubesched.gpu.model import MILLI, node_gpu_count, node_gpu_model, pod_gpu_ask
from kubesched.sim.metrics import reason_kinds
from kubesched.state.snapshot import Snapshot
from kubesched.ui.runs import Attempt
from kubesched.ui.sources import CLUSTER, SIMULATION, Workspace

#: resources shown first, in this order; other extended resources follow when some node has them
MAIN_RESOURCES = (CPU, MEMORY, PODS)
HIDDEN_RESOURCES = ("ephemeral-storage", "alibabacloud.com/gpu-count")


def _pct(req: np.ndarray, alloc: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.where(alloc > 0, 100.0 * req / np.maximum(alloc, 1), np.nan)
    return np.round(out, 2)


def _list(a: np.ndarray) -> list[Any]:
    """JSON-ready: NaN becomes null."""
    if a.dtype.kind == "f":
        return [None if x != x else x for x in a.tolist()]
    return a.tolist()


def resources_of(snap: Snapshot) -> list[str]:
    alloc = snap.alloc
    extra = [
        r for r in snap.resources
        if r not in MAIN_RESOURCES and r not in HIDDEN_RESOURCES and snap.n and alloc[:, snap.res_index[r]].any()
    ]
    return [*MAIN_RESOURCES, *extra]


def gpu_columns(snap: Snapshot) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """(GPUs per node, milli used per GPU (nodes x max GPUs, -1 where a node has no such GPU), models)."""
    n = snap.n
    counts = np.fromiter((node_gpu_count(nd) for nd in snap.nodes), np.int64, n)
    models = [node_gpu_model(nd) for nd in snap.nodes]
    width = int(counts.max()) if n and counts.any() else 0
    used = np.full((n, width), -1, np.int64)
    if width:
        from kubesched.gpu.state import GpuState

        st = GpuState.of(snap)
        left = st.left[:n]
        for g in range(width):
            has = counts > g
            col = left[:, g] if g < left.shape[1] else np.full(n, MILLI)
            used[has, g] = MILLI - col[has]
    return counts, used, models


def pod_gpu_milli(pod: Pod) -> int:
    try:
        ask = pod_gpu_ask(pod)
    except ValueError:
        return 0
    return 0 if ask is None else ask.total_milli


def cluster_view(ws: Workspace, step: int | None = None) -> dict[str, Any]:
    """Nodes (with allocation per resource and per GPU), the cluster's allocation, the pods table,
    pending pods and their reasons, at ``step`` (default: the end of the run)."""
    if ws.timeline is None:
        raise InputError("this source has no cluster to show (an experiment folder has dashboards only)", path="step")
    tl = ws.timeline
    with tl.lock:
        snap, step = tl.at(step)
        total = len(tl)
        res = resources_of(snap)
        idx = [snap.res_index[r] for r in res]
        alloc = snap.alloc[:, idx]
        req = snap.requested[:, idx]
        counts, gpu_used, models = gpu_columns(snap)
        nodes: dict[str, Any] = {
            "name": [nd.name for nd in snap.nodes],
            "unschedulable": snap.unschedulable.tolist(),
            "taints": [len(nd.taints) for nd in snap.nodes],
            "pods": snap.requested[:, snap.res_index[PODS]].tolist(),
            "gpus": counts.tolist(),
            "gpu_model": models,
            "gpu_used": gpu_used.tolist(),
        }
        for j, r in enumerate(res):
            nodes[f"alloc:{r}"] = alloc[:, j].tolist()
            nodes[f"req:{r}"] = req[:, j].tolist()
            nodes[f"pct:{r}"] = _list(_pct(req[:, j], alloc[:, j]))
        gpu_cap = int(counts.sum()) * MILLI
        gpu_req = int(np.clip(gpu_used, 0, None).sum())
        cluster = {r: {"requested": int(req[:, j].sum()), "allocatable": int(alloc[:, j].sum())} for j, r in enumerate(res)}
        for v in cluster.values():
            v["pct"] = round(100.0 * v["requested"] / v["allocatable"], 2) if v["allocatable"] else None
        if gpu_cap:
            cluster["gpu"] = {"requested": gpu_req, "allocatable": gpu_cap, "pct": round(100.0 * gpu_req / gpu_cap, 2)}
        bound = {p.key: snap.nodes[row].name for row, pods in enumerate(snap.pods_on[: snap.n]) for p in pods.values()}
    pods = pods_table(ws, bound)
    pending = pending_pods(ws)
    return {
        "step": step,
        "steps": total,
        "time": step_time(ws, step),
        "resources": res,
        "nodes": nodes,
        "cluster": cluster,
        "pods": pods,
        "pending": pending,
    }


def step_time(ws: Workspace, step: int) -> float | None:
    """The run's clock at a step: the time of the last attempt that started at or before it."""
    best = None
    for tries in ws.attempts.values():
        for a in tries:
            if a.step <= step and (best is None or a.time > best):
                best = a.time
    return best


def _outcome(ws: Workspace, key: str, node_now: str | None) -> tuple[str, str | None, int, str]:
    """(state, final node, attempts, last message) of a pod over the whole run."""
    tries = ws.attempts.get(key, [])
    last = tries[-1] if tries else None
    pod = ws.pods.get(key)
    if last is None:
        if pod is not None and pod.node_name:
            return "bound in input", pod.node_name, 0, ""
        skipped = ws.skipped.get(key)
        if skipped is not None:  # `schedule` did not try it: gated, another scheduler, finished
            return skipped["reason"], None, 0, skipped["message"]
        return ("running" if node_now else "not tried"), node_now, 0, ""
    if last.outcome == "scheduled":
        return "scheduled", last.node, len(tries), ""
    return last.outcome, None, len(tries), last.message or ""


def pods_table(ws: Workspace, bound_now: dict[str, str]) -> dict[str, list[Any]]:
    """Every pod: where it is at the step shown, its outcome over the run, its requests."""
    if ws.pod_columns is None:
        ws.pod_columns = _pod_columns(ws)
    cols = dict(ws.pod_columns)
    cols["node_now"] = [bound_now.get(k, "") for k in cols["pod"]]
    return cols


def _pod_columns(ws: Workspace) -> dict[str, list[Any]]:
    """The columns no step changes, computed once per workspace."""
    by_key = ws.pods
    if ws.kind == SIMULATION and ws.pod_table:
        t = ws.pod_table
        keys = t["pod"]
        known = [by_key.get(k) for k in keys]
        return {
            "pod": keys,
            "state": t["state"],
            "node": t["node"],
            "attempts": t["attempts"],
            "cpu": [p.requests.get(CPU, 0) if p else None for p in known],
            "memory": [p.requests.get(MEMORY, 0) if p else None for p in known],
            "gpu_milli": t["gpu_milli"],
            "priority": [p.priority if p else None for p in known],
            "message": t.get("message", [""] * len(keys)),
        }
    keys = list(by_key)
    cols: dict[str, list[Any]] = {
        c: [] for c in ("pod", "state", "node", "attempts", "cpu", "memory", "gpu_milli", "priority", "message")
    }
    for k in keys:
        pod = by_key[k]
        state, node, n, msg = _outcome(ws, k, pod.node_name or None)
        cols["pod"].append(k)
        cols["state"].append(state)
        cols["node"].append(node or "")
        cols["attempts"].append(n)
        cols["cpu"].append(pod.requests.get(CPU, 0))
        cols["memory"].append(pod.requests.get(MEMORY, 0))
        cols["gpu_milli"].append(pod_gpu_milli(pod))
        cols["priority"].append(pod.priority)
        cols["message"].append(msg)
    return cols


def pending_pods(ws: Workspace) -> dict[str, Any]:
    """Pods that ended without a node, their FailedScheduling message, and the reason histogram
    (node counts stripped, as simulate's failed_by_reason)."""
    rows: list[dict[str, Any]] = []
    if ws.kind == SIMULATION and ws.pod_table:
        t = ws.pod_table
        for k, st, msg in zip(t["pod"], t["state"], t.get("message", [""] * len(t["pod"])), strict=True):
            if st in ("failed", "withdrawn", "pending"):
                rows.append({"pod": k, "state": st, "message": msg})
    else:
        for k in ws.pods:
            tries = ws.attempts.get(k)
            if tries and tries[-1].outcome != "scheduled":
                rows.append({"pod": k, "state": tries[-1].outcome, "message": tries[-1].message or ""})
    hist: Counter[str] = Counter()
    for r in rows:
        hist.update(set(reason_kinds(r["message"])) or {"(no message)"})
    return {"pods": rows, "reasons": [{"reason": k, "pods": v} for k, v in hist.most_common()]}


# ---- decision view ----------------------------------------------------------------------------
DECISIONS_KEPT = 64


def decision_view(ws: Workspace, key: str, attempt: int | None = None) -> dict[str, Any]:
    """One pod: every attempt, and the explain tables against the cluster as an attempt saw it
    (default: its last attempt; a pod never tried is judged against the end of the run). The
    last few are kept: going back to a pod or an attempt costs nothing. Concurrent callers take
    turns on the timeline's lock (the explain moves its one snapshot; the cache is shared)."""
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


def _decision(ws: Workspace, key: str, attempt: int | None) -> dict[str, Any]:
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
    explain, timing, took = ws.timeline.explain(pod, step)
    victims = [v for a in tries for v in a.victims]
    nominated = next((a.nominated_node for a in reversed(tries) if a.nominated_node), None)
    return {
        "pod": key,
        "basis": {
            "step": step,
            "steps": len(ws.timeline),
            "attempt": chosen.attempt if chosen else None,
            "what": "the cluster just before this attempt" if chosen else "the cluster at the end of the run",
        },
        "attempts": [a.to_json() for a in tries],
        "selected": chosen.node if chosen and chosen.outcome == "scheduled" else None,
        "nominated_node": nominated,
        "victims": victims,
        "explain": explain,
        "explain_plugin_ms": {p: {k: round(v, 4) for k, v in d.items()} for p, d in timing.items()},
        "explain_ms": round(took, 3),
        "weights": _weights(ws, pod),
    }


def _weights(ws: Workspace, pod: Pod) -> dict[str, int]:
    assert ws.timeline is not None
    fw = ws.timeline.scheduler.frameworks.get(pod.scheduler_name)
    return dict(fw.score_weights) if fw else {}


# ---- balance and comparison (what-if) ---------------------------------------------------------
def balance(snap: Snapshot) -> dict[str, dict[str, float | None]]:
    """min / max / mean / sd of allocation (% of allocatable) over nodes, per resource (GPU: per
    node's GPU milli)."""
    out: dict[str, dict[str, float | None]] = {}
    res = resources_of(snap)
    for r in res:
        j = snap.res_index[r]
        a = snap.alloc[:, j]
        has = a > 0
        out[r] = _stats(100.0 * snap.requested[has, j] / a[has]) if has.any() else _stats(np.zeros(0))
    counts, used, _ = gpu_columns(snap)
    if counts.any():
        has = counts > 0
        milli = np.clip(used, 0, None).sum(axis=1)
        out["gpu"] = _stats(100.0 * milli[has] / (counts[has] * MILLI))
    return out


def _stats(v: np.ndarray) -> dict[str, float | None]:
    if v.size == 0:
        return {"min": None, "max": None, "mean": None, "sd": None, "nodes": 0}
    return {
        "min": round(float(v.min()), 2),
        "max": round(float(v.max()), 2),
        "mean": round(float(v.mean()), 2),
        "sd": round(float(v.std()), 2),
        "nodes": int(v.size),
    }


def placement_diff(runs: list[dict[str, str | None]], names: list[str]) -> list[dict[str, Any]]:
    """Pods whose final node differs between runs (None: not placed)."""
    keys: list[str] = []
    seen: set[str] = set()
    for r in runs:
        for k in r:
            if k not in seen:
                seen.add(k)
                keys.append(k)
    out = []
    for k in keys:
        where = [r.get(k) for r in runs]
        if len(set(where)) > 1:
            out.append({"pod": k, "nodes": dict(zip(names, where, strict=True))})
    return out


def is_cluster(ws: Workspace) -> bool:
    return ws.kind == CLUSTER

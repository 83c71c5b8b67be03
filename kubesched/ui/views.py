"""The JSON each page of the UI reads. Columnar (one list per column) so that 150,000 pods travel
and sit in the browser as a few arrays, not 150,000 objects. All numbers are computed here, with
numpy; the page only draws, searches and sorts them."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Any

import numpy as np

from kubesched.api.objects import Pod
from kubesched.api.resources import CPU, MEMORY, PODS
from kubesched.errors import InputError
from kubesched.gpu.model import GPU_COUNT, GPU_MILLI, MILLI, node_gpu_count, node_gpu_model
from kubesched.gpu.state import GpuState
from kubesched.sim.gpu import node_gpu_milli, pod_gpu_milli
from kubesched.sim.metrics import reason_kinds
from kubesched.state.snapshot import Snapshot
from kubesched.ui.sources import CLUSTER, LIVE, SIMULATION, Workspace

#: resources shown first, in this order; other extended resources follow when some node has them
MAIN_RESOURCES = (CPU, MEMORY, PODS)
#: not shown as resources: GPU-sharing nodes' GPUs are the "gpu" figure (gpu-milli is informational)
HIDDEN_RESOURCES = ("ephemeral-storage", GPU_COUNT, GPU_MILLI)
#: the GPU figure's name in ``resources`` and the node columns: milli-GPU, counted as the simulator does
GPU = "gpu"


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
        st = GpuState.of(snap)
        left = st.left[:n]
        for g in range(width):
            has = counts > g
            col = left[:, g] if g < left.shape[1] else np.full(n, MILLI)
            used[has, g] = MILLI - col[has]
    return counts, used, models


def gpu_asks(snap: Snapshot, milli: Callable[[Pod], int] | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per node, in milli-GPU: (capacity, what its pods ask, what of that sits on no GPU).

    Capacity and asks are counted as `kubesched simulate` counts them (GPU-sharing annotations,
    else ``nvidia.com/gpu``), so the cluster's figure at a step is the simulation's at that step.
    A configuration without a GPU filter (the default one: GPU asks are annotations, which
    NodeResourcesFit does not read) can bind more than a node's GPUs hold; the pods that find
    no GPU left are kept on no GPU by ``GpuState``, and counted here as *unseated*. ``milli``:
    a pod's ask (default ``shown_gpu_milli``; the cluster view passes one that remembers them)."""
    n = snap.n
    ask = milli or shown_gpu_milli
    cap = np.fromiter((node_gpu_milli(nd) for nd in snap.nodes), np.int64, n)
    asked = np.fromiter((sum(map(ask, pods.values())) for pods in snap.pods_on[:n]), np.int64, n)
    unseated = np.zeros(n, np.int64)
    if n and any(node_gpu_count(nd) for nd in snap.nodes):
        st = GpuState.of(snap)
        for row, allocs in enumerate(st.allocs[:n]):
            unseated[row] = sum(a.milli * max(a.tag, 1) for a in allocs.values() if not a.indices)
    return cap, asked, unseated


def shown_gpu_milli(pod: Pod) -> int:
    """What the views show a pod asks of GPUs in milli: the simulator's ``pod_gpu_milli`` without
    DRA claims, and 0 for a malformed ask (which no GPU plugin would have placed) instead of an error."""
    try:
        return pod_gpu_milli(pod)
    except InputError:
        return 0


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
        gpu_cap, gpu_asked, gpu_unseated = gpu_asks(snap, _ask_of(ws))
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
        cluster = {r: {"requested": int(req[:, j].sum()), "allocatable": int(alloc[:, j].sum())} for j, r in enumerate(res)}
        if gpu_cap.any():  # milli-GPU: every bound pod's ask, including what sits on no GPU
            res = [*res, GPU]
            nodes[f"alloc:{GPU}"] = gpu_cap.tolist()
            nodes[f"req:{GPU}"] = gpu_asked.tolist()
            nodes[f"pct:{GPU}"] = _list(_pct(gpu_asked, gpu_cap))
            nodes["gpu_unseated"] = gpu_unseated.tolist()
            cluster[GPU] = {
                "requested": int(gpu_asked.sum()),
                "allocatable": int(gpu_cap.sum()),
                "unseated": int(gpu_unseated.sum()),
                "unseated_nodes": int((gpu_unseated > 0).sum()),
            }
        for v in cluster.values():
            v["pct"] = round(100.0 * v["requested"] / v["allocatable"], 2) if v["allocatable"] else None
        bound = {p.key: snap.nodes[row].name for row, pods in enumerate(snap.pods_on[: snap.n]) for p in pods.values()}
        # under the lock too: a live cluster's pods change between two reads
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


def _ask_of(ws: Workspace) -> Callable[[Pod], int]:
    """A pod's GPU ask, remembered by key for the workspace (a pod asks the same at every step;
    parsing 10,000 pods' annotations again for each step shown cost 30 ms)."""
    known = ws.gpu_milli

    def ask(pod: Pod) -> int:
        v = known.get(pod.key)
        if v is None:
            v = known[pod.key] = shown_gpu_milli(pod)
        return v

    return ask


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
            return ("bound" if ws.kind == LIVE else "bound in input"), pod.node_name, 0, ""
        skipped = ws.skipped.get(key)
        if skipped is not None:  # `schedule` did not try it: gated, another scheduler, finished
            return skipped["reason"], None, 0, skipped["message"]
        return ("running" if node_now else "pending" if ws.kind == LIVE else "not tried"), node_now, 0, ""
    if last.outcome == "scheduled":
        return "scheduled", last.node, len(tries), ""
    if ws.kind == LIVE and pod is not None and pod.node_name:  # bound since, by someone we did not hear
        return "bound", pod.node_name, len(tries), ""
    return last.outcome, None, len(tries), last.message or ""


def pods_table(ws: Workspace, bound_now: dict[str, str]) -> dict[str, list[Any]]:
    """Every pod: where it is at the step shown, its outcome over the run, its requests."""
    if ws.pod_columns is None:
        ws.pod_columns = _pod_columns(ws)
    cols = dict(ws.pod_columns)
    cols["node_now"] = [bound_now.get(k, "") for k in cols["pod"]]
    return cols


def _pod_columns(ws: Workspace) -> dict[str, list[Any]]:
    """The columns no step changes, computed once per workspace. A pod taken off its node for
    good (a preemption's victim, a removed node's pod) has no final node; its message says
    how, when, from where and by whom."""
    by_key = ws.pods
    if ws.kind == SIMULATION and ws.pod_table:
        t = ws.pod_table
        keys = t["pod"]
        known = [by_key.get(k) for k in keys]
        gone = [ws.removed.get(k) for k in keys]
        return {
            "pod": keys,
            "state": [g.how if g else s for g, s in zip(gone, t["state"], strict=True)],
            "node": ["" if g else n for g, n in zip(gone, t["node"], strict=True)],
            "attempts": t["attempts"],
            "cpu": [p.requests.get(CPU, 0) if p else None for p in known],
            "memory": [p.requests.get(MEMORY, 0) if p else None for p in known],
            "gpu_milli": t["gpu_milli"],
            "priority": [p.priority if p else None for p in known],
            "message": [g.describe() if g else m for g, m in zip(gone, t.get("message", [""] * len(keys)), strict=True)],
        }
    keys = list(by_key)
    cols: dict[str, list[Any]] = {
        c: [] for c in ("pod", "state", "node", "attempts", "cpu", "memory", "gpu_milli", "priority", "message")
    }
    for k in keys:
        pod = by_key[k]
        state, node, n, msg = _outcome(ws, k, pod.node_name or None)
        gone = ws.removed.get(k)
        if gone is not None:
            state, node, msg = gone.how, None, gone.describe()
        cols["pod"].append(k)
        cols["state"].append(state)
        cols["node"].append(node or "")
        cols["attempts"].append(n)
        cols["cpu"].append(pod.requests.get(CPU, 0))
        cols["memory"].append(pod.requests.get(MEMORY, 0))
        cols["gpu_milli"].append(shown_gpu_milli(pod))
        cols["priority"].append(pod.priority)
        cols["message"].append(msg)
    return cols


def pending_pods(ws: Workspace) -> dict[str, Any]:
    """Pods that ended without a node, their FailedScheduling message, and the reason histogram
    (node counts stripped, as simulate's failed_by_reason)."""
    rows: list[dict[str, Any]] = []
    if ws.kind == LIVE:
        return _live_pending(ws)
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
    return {"pods": rows, "reasons": _reasons(rows)}


def _reasons(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    hist: Counter[str] = Counter()
    for r in rows:
        hist.update(set(reason_kinds(r["message"])) or {"(no message)"})
    return [{"reason": k, "pods": v} for k, v in hist.most_common()]


def _live_pending(ws: Workspace) -> dict[str, Any]:
    """A live cluster's pods without a node: the message of the cluster's scheduler (its last
    PodScheduled=False condition, when it wrote one) and kubesched's verdict against the cluster
    now (``explain``: where the pod would go, or why no node fits). The reasons count kubesched's
    verdicts. Callers hold the timeline's lock."""
    keys = [k for k, p in ws.pods.items() if not p.node_name]
    verdicts = ws.live.verdicts(keys)
    rows = []
    for k in keys:
        tries = ws.attempts.get(k)
        v = verdicts.get(k, {"fits": None, "text": ""})
        rows.append({
            "pod": k, "state": "pending", "cluster_message": tries[-1].message or "" if tries else "",
            "message": v["text"], "fits": v["fits"],
        })
    return {"pods": rows, "reasons": _reasons([r for r in rows if not r["fits"]])}


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
    cap, asked, _ = gpu_asks(snap)
    if cap.any():
        has = cap > 0
        out[GPU] = _stats(100.0 * asked[has] / cap[has])
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

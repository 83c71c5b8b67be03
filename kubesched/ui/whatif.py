"""What-if: the same cluster under two or more configurations, or with pods moved by hand, each run
through the Python scheduler (`schedule` in memory), compared side by side: placements that differ
and the balance of allocation over nodes (min / max / mean / sd per resource)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from kubesched.api.load import ClusterObjects
from kubesched.errors import InputError
from kubesched.ui.sources import CLUSTER, Workspace, open_cluster
from kubesched.ui.views import balance, placement_diff

MAX_CONFIGS = 6


def _moved(objs: ClusterObjects, moves: list[dict[str, Any]]) -> ClusterObjects:
    """The objects with each moved pod bound to its node (as if created with spec.nodeName)."""
    nodes = {n.name for n in objs.nodes}
    by_key = {p.key: i for i, p in enumerate(objs.pods)}
    pods = list(objs.pods)
    for i, m in enumerate(moves):
        if not isinstance(m, dict):
            raise InputError("expected {pod, node}", path=f"moves[{i}]")
        key, node = m.get("pod"), m.get("node")
        if not isinstance(key, str) or key not in by_key:
            raise InputError(f"no pod {key!r} in this cluster", path=f"moves[{i}].pod")
        if not isinstance(node, str) or node not in nodes:
            raise InputError(f"no node {node!r} in this cluster", path=f"moves[{i}].node")
        j = by_key[key]
        pods[j] = pods[j].with_node(node)
    return replace(objs, pods=pods)


def compare(ws: Workspace, body: Any) -> dict[str, Any]:
    """``{"configs": [{"name", "yaml"}...], "moves": [{"pod", "node"}...]}`` -> runs compared."""
    if ws.kind != CLUSTER or ws.objects is None:
        raise InputError("what-if runs need a cluster (open a cluster dump, or a configuration)", path="source")
    if not isinstance(body, dict):
        raise InputError("expected a JSON object with configs and moves", path="body")
    configs = body.get("configs")
    moves = body.get("moves") or []
    if not isinstance(configs, list) or not configs:
        raise InputError("expected a list of one or more configurations", path="configs")
    if len(configs) > MAX_CONFIGS:
        raise InputError(f"at most {MAX_CONFIGS} configurations at once", path="configs")
    if not isinstance(moves, list):
        raise InputError("expected a list of {pod, node}", path="moves")
    objs = _moved(ws.objects, moves)
    names: list[str] = []
    runs = []
    for i, c in enumerate(configs):
        if not isinstance(c, dict) or not isinstance(c.get("yaml", ""), str):
            raise InputError("expected {name, yaml}", path=f"configs[{i}]")
        name = str(c.get("name") or f"config {i + 1}")
        try:
            other = open_cluster(
                ws.files, c.get("yaml") or "", seed=ws.seed, plugin_paths=ws.plugin_paths, objects=objs,
                config_source=f"configs[{i}]",
            )
        except InputError as e:
            raise e.within(source=f"configs[{i}] ({name})") from None
        names.append(name)
        runs.append(other)
    finals = []
    out_runs = []
    for name, other in zip(names, runs, strict=True):
        assert other.timeline is not None and other.run is not None
        with other.timeline.lock:
            snap = other.timeline.seek(len(other.timeline))
            stats = balance(snap)
        final = {p["pod"]: p["node"] for p in other.run.placements}
        for m in moves:
            final[m["pod"]] = m["node"]
        finals.append(final)
        placed = sum(1 for v in final.values() if v)
        out_runs.append(
            {
                "name": name,
                "balance": stats,
                "placed": placed,
                "unschedulable": sum(1 for p in other.run.placements if not p["node"]),
                "preempted": sum(len(p["victims"]) for p in other.run.placements),
                "placements": other.run.placements,
            }
        )
    return {"runs": out_runs, "diff": placement_diff(finals, names), "moves": moves}

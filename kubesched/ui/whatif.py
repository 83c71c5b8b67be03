"""What-if: the same cluster under two or more configurations, or with pods moved by hand, each run
through the Python scheduler (`schedule` in memory), compared side by side: placements that differ
and the balance of allocation over nodes (min / max / mean / sd per resource)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

from kubesched.errors import InputError
from kubesched.framework.registry import Registry
from kubesched.load import ClusterObjects
from kubesched.state.snapshot import Snapshot
from kubesched.ui.sources import CLUSTER, SIMULATION, Workspace, open_cluster
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


def compare(
    ws: Workspace, body: Any, registry: Registry, check: Callable[[], None] | None = None
) -> dict[str, Any]:
    """``{"configs": [{"name", "yaml"}...], "moves": [{"pod", "node"}...]}`` -> runs compared.
    The configurations come from the browser: ``registry`` resolves their plugins (sealed: it
    imports no module a configuration names); ``check`` runs after every attempt and may raise."""
    if ws.kind == SIMULATION and ws.workload is not None:
        return compare_simulations(ws, body, registry, check)
    if ws.kind != CLUSTER or ws.objects is None:
        raise InputError("what-if runs need a cluster dump, a configuration or a simulation with inputs.json", path="source")
    if not isinstance(body, dict):
        raise InputError("expected a JSON object with configs and moves", path="body")
    configs = body.get("configs")
    moves = body.get("moves") or []
    if not isinstance(moves, list):
        raise InputError("expected a list of {pod, node}", path="moves")
    objs = _moved(ws.objects, moves)
    _check_configs(configs)
    names: list[str] = []
    runs = []
    for i, c in enumerate(configs):
        name = str(c.get("name") or f"config {i + 1}")
        try:
            other = open_cluster(
                ws.files, c.get("yaml") or "", seed=ws.seed, objects=objs, config_source=f"configs[{i}]",
                registry=registry, check=check,
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


def _check_configs(configs: Any) -> None:
    if not isinstance(configs, list) or not configs:
        raise InputError("expected a list of one or more configurations", path="configs")
    if len(configs) > MAX_CONFIGS:
        raise InputError(f"at most {MAX_CONFIGS} configurations at once", path="configs")
    for i, c in enumerate(configs):
        if not isinstance(c, dict) or not isinstance(c.get("yaml", ""), str):
            raise InputError("expected {name, yaml}", path=f"configs[{i}]")


def compare_simulations(
    ws: Workspace, body: Any, registry: Registry, check: Callable[[], None] | None = None
) -> dict[str, Any]:
    """Replay the simulation's workload once per configuration (same mode, seed and options as the
    folder's run) and compare: balance over nodes of the pods running at the end, pods placed,
    failed and preempted, and the pods whose node differs."""
    from kubesched.sim.runner import simulate
    from kubesched.sim.usage import UsageModel
    from kubesched.ui.sources import parse_config_text

    if not isinstance(body, dict):
        raise InputError("expected a JSON object with configs", path="body")
    if body.get("moves"):
        raise InputError("moving pods by hand needs a cluster source; a simulation replays its workload", path="moves")
    configs = body.get("configs")
    _check_configs(configs)
    inp = ws.inputs
    parsed = []
    for i, c in enumerate(configs):
        try:
            parsed.append((str(c.get("name") or f"config {i + 1}"), parse_config_text(c.get("yaml") or "", registry, f"configs[{i}]")))
        except InputError as e:
            raise e.within(source=f"configs[{i}]") from None
    wl = ws.workload
    nodes_by_name = {n.name: n for n in wl.nodes}
    pods_by_key = {p.key: p for p in wl.pods}
    out_runs, finals = [], []
    for name, cfg in parsed:
        res = simulate(
            cfg, wl, mode=inp.get("mode") or "time", seed=inp.get("seed"), registry=registry,
            usage=UsageModel.parse(inp.get("usage_fraction") or "0.5:1.0"), bins=int(inp.get("bins") or 100),
            max_wait=inp.get("max_wait"), tie_break=inp.get("tie_break") or "random", record_events=False,
            progress=(lambda _done, _total: check()) if check is not None else None,
        )
        t = res.pods
        final = {k: (n or None) for k, n in zip(t["pod"], t["node"], strict=True)}
        running = [
            pods_by_key[k].with_node(n)
            for k, n, st in zip(t["pod"], t["node"], t["state"], strict=True)
            if st == "running" and n in nodes_by_name
        ]
        snap = Snapshot.of(ClusterObjects(nodes=wl.nodes, pods=running))
        s = res.summary["pods"]
        finals.append(final)
        out_runs.append(
            {
                "name": name,
                "balance": balance(snap),
                "placed": s["scheduled"],
                "unschedulable": s["failed"],
                "preempted": s["preempted"],
                "allocation_pct": res.summary["allocation_pct"],
                "placements": [{"pod": k, "node": v} for k, v in final.items()],
            }
        )
    names = [r["name"] for r in out_runs]
    return {"runs": out_runs, "diff": placement_diff(finals, names), "moves": []}

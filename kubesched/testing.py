"""Builders for tests and examples: wire-format dicts, snapshots, and one-plugin runs.

Plugin test tables read like kube-scheduler's (st.MakePod().Req(...)...), but as plain
dicts so the same cases can be written to YAML and fed to the CLI.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np

from kubesched.api.objects import Namespace, Node, Pod
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.interfaces import FilterPlugin, PreFilterPlugin, PreScorePlugin, ScorePlugin
from kubesched.framework.status import Code, FilterResult, PreFilterResult, Status
from kubesched.load import ClusterObjects
from kubesched.state.snapshot import Snapshot


def make_node(
    name: str,
    *,
    cpu: str | int | None = None,
    memory: str | int | None = None,
    pods: int | None = 110,
    labels: dict[str, str] | None = None,
    taints: list[dict] | None = None,
    unschedulable: bool = False,
    images: list[tuple[list[str], int]] | None = None,
    extra: dict[str, Any] | None = None,
) -> dict:
    alloc: dict[str, Any] = {}
    if cpu is not None:
        alloc["cpu"] = str(cpu)
    if memory is not None:
        alloc["memory"] = str(memory)
    if pods is not None:
        alloc["pods"] = str(pods)
    alloc.update({k: str(v) for k, v in (extra or {}).items()})
    d: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, **(labels or {})}},
        "spec": {},
        "status": {"allocatable": alloc, "capacity": dict(alloc)},
    }
    if taints:
        d["spec"]["taints"] = taints
    if unschedulable:
        d["spec"]["unschedulable"] = True
    if images:
        d["status"]["images"] = [{"names": n, "sizeBytes": s} for n, s in images]
    return d


def make_pod(
    name: str,
    *,
    namespace: str = "default",
    requests: dict[str, Any] | None = None,
    containers: list[dict] | None = None,
    labels: dict[str, str] | None = None,
    node: str | None = None,
    priority: int | None = None,
    spec: dict[str, Any] | None = None,
    uid: str | None = None,
) -> dict:
    if containers is None:
        c: dict[str, Any] = {"name": "c", "image": "pause"}
        if requests:
            c["resources"] = {"requests": {k: str(v) for k, v in requests.items()}}
        containers = [c]
    d: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": namespace, "uid": uid or f"{namespace}-{name}", "labels": labels or {}},
        "spec": {"containers": containers, **(spec or {})},
    }
    if node:
        d["spec"]["nodeName"] = node
    if priority is not None:
        d["spec"]["priority"] = priority
    return d



def spread_constraint(
    max_skew: int,
    key: str,
    when: str,
    selector: dict | None = None,
    min_domains: int | None = None,
    node_affinity_policy: str | None = None,
    node_taints_policy: str | None = None,
    match_label_keys: list[str] | None = None,
) -> dict:
    """A topologySpreadConstraint, with the arguments of upstream's ``st.SpreadConstraint``
    (maxSkew, key, whenUnsatisfiable, selector, minDomains, nodeAffinityPolicy, nodeTaintsPolicy,
    matchLabelKeys); None leaves a field out."""
    d: dict[str, Any] = {"maxSkew": max_skew, "topologyKey": key, "whenUnsatisfiable": when}
    optional = {
        "labelSelector": selector,
        "minDomains": min_domains,
        "nodeAffinityPolicy": node_affinity_policy,
        "nodeTaintsPolicy": node_taints_policy,
        "matchLabelKeys": match_label_keys,
    }
    d.update({k: v for k, v in optional.items() if v is not None})
    return d

def build_snapshot(
    nodes: Iterable[dict | Node], pods: Iterable[dict | Pod] = (), namespaces: Iterable[dict] = ()
) -> Snapshot:
    """``Snapshot.of`` the objects, given as wire dicts or parsed."""
    return Snapshot.of(
        ClusterObjects(
            nodes=[n if isinstance(n, Node) else Node.parse(n) for n in nodes],
            pods=[as_pod(p) for p in pods],
            namespaces=[Namespace.parse(ns) for ns in namespaces],
        )
    )


def as_pod(p: dict | Pod) -> Pod:
    return p if isinstance(p, Pod) else Pod.parse(p)


def run_filter(plugin: Any, pod: dict | Pod, snap: Snapshot, state: CycleState | None = None) -> list[Status]:
    """PreFilter then Filter of one plugin over every node, as a list of per-node Statuses.

    A PreFilter rejection is reported on every node; Skip makes every node pass.
    """
    pod = as_pod(pod)
    state = state or CycleState()
    rows = np.arange(snap.n, dtype=np.int32)
    if isinstance(plugin, PreFilterPlugin):
        res = plugin.pre_filter(state, pod, snap)
        status = res.status if isinstance(res, PreFilterResult) else (res or Status())
        if status.code == Code.Skip:
            return [Status(plugin=plugin.name) for _ in rows]
        if not status.ok:
            return [Status(status.code, status.reasons, plugin.name) for _ in rows]
    if not isinstance(plugin, FilterPlugin):
        return [Status(plugin=plugin.name) for _ in rows]
    result: FilterResult = plugin.filter(state, pod, snap, rows)
    return [result.status_at(i, plugin.name) for i in range(len(rows))]


def run_score(
    plugin: Any, pod: dict | Pod, snap: Snapshot, rows: Iterable[int] | None = None, state: CycleState | None = None
) -> tuple[list[int], list[int]]:
    """(raw, normalized) scores of one plugin over ``rows`` (default: every node).

    Runs the plugin's PreFilter first when it has one (some score plugins read its state).
    """
    pod = as_pod(pod)
    state = state or CycleState()
    rows_arr = np.arange(snap.n, dtype=np.int32) if rows is None else np.asarray(list(rows), np.int32)
    if isinstance(plugin, PreFilterPlugin):
        plugin.pre_filter(state, pod, snap)
    if isinstance(plugin, PreScorePlugin):
        st = plugin.pre_score(state, pod, snap, rows_arr)
        if st is not None and st.code == Code.Skip:
            zeros = [0] * len(rows_arr)
            return zeros, zeros
    assert isinstance(plugin, ScorePlugin)
    raw = np.asarray(plugin.score(state, pod, snap, rows_arr), np.int64)
    norm = plugin.normalize(state, pod, raw.copy())
    return raw.tolist(), (raw if norm is None else norm).tolist()

"""Cluster snapshots in and out, and kube-scheduler-simulator's result annotations.

kube-scheduler-simulator (kubernetes-sigs) records each pod's scheduling results as JSON strings in
pod annotations, which its web UI reads (its plugin/annotation and plugin/resultstore packages).
``simulator_annotations`` writes the same keys and shapes from kubesched's decision of a pod (the
explain of the cluster its attempt saw, and the attempt's own results; ``kubesched.ui.points``):

- ``prefilter-result-status``: plugin -> ``"success"`` or the status message ("" for a Skip)
- ``prefilter-result``: plugin -> the node names its PreFilterResult kept (plugins that narrowed)
- ``filter-result``: node -> plugin -> ``"passed"`` or the reason
- ``postfilter-result``: node -> plugin -> ``"preemption victim"`` on the nominated node; every
  other node the cycle judged and found failing maps to ``{}`` (only when PostFilter ran)
- ``prescore-result``: plugin -> ``"success"`` or the message
- ``score-result`` / ``finalscore-result``: node -> plugin -> raw / normalized x weight (strings)
- ``reserve-result``, ``permit-result`` (``"wait"`` for Wait), ``prebind-result``, ``bind-result``:
  plugin -> ``"success"`` or the message; ``permit-result-timeout``: plugin -> Go's duration text
- ``selected-node``: the node the attempt reserved ("" when none)

Every key is written, ``{}`` where the point has nothing, as the simulator writes them.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import yaml

from kubesched.errors import InputError
from kubesched.framework.waiting import go_duration
from kubesched.load import ClusterObjects, finish_objects, parse_objects
from kubesched.state.snapshot import Snapshot
from kubesched.ui.points import explicit_nodes

PREFIX = "kube-scheduler-simulator.sigs.k8s.io/"
PREFILTER_STATUS = PREFIX + "prefilter-result-status"
PREFILTER_RESULT = PREFIX + "prefilter-result"
FILTER_RESULT = PREFIX + "filter-result"
POSTFILTER_RESULT = PREFIX + "postfilter-result"
PRESCORE_RESULT = PREFIX + "prescore-result"
SCORE_RESULT = PREFIX + "score-result"
FINALSCORE_RESULT = PREFIX + "finalscore-result"
RESERVE_RESULT = PREFIX + "reserve-result"
PERMIT_RESULT = PREFIX + "permit-result"
PERMIT_TIMEOUT = PREFIX + "permit-result-timeout"
PREBIND_RESULT = PREFIX + "prebind-result"
BIND_RESULT = PREFIX + "bind-result"
SELECTED_NODE = PREFIX + "selected-node"
PASSED = "passed"
NOMINATED = "preemption victim"  # resultstore.PostFilterNominatedMessage
#: the plugin-keyed results, by extension point
BY_PLUGIN = {
    "PreFilter": PREFILTER_STATUS, "PreScore": PRESCORE_RESULT, "Reserve": RESERVE_RESULT, "Permit": PERMIT_RESULT,
    "PreBind": PREBIND_RESULT, "Bind": BIND_RESULT,
}


def _compact(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"))


def simulator_annotations(
    columns: dict[str, Any], bound_to: str | None, points: list[dict[str, Any]] | None = None, recorded: bool = False
) -> dict[str, str]:
    """The simulator's result annotations from explain's nodes as columns (``explain_columns``)
    and the pod's extension-point results (``points``). ``recorded``: the run recorded the binding
    points (a simulation folder does not: a bound pod then gets DefaultBinder's success, as it
    must have)."""
    filt: dict[str, dict[str, str]] = {}
    score: dict[str, dict[str, str]] = {}
    final: dict[str, dict[str, str]] = {}
    f, sc = columns["filter"], columns["score"]
    said = [PASSED if v["code"] == "Success" else "; ".join(v["reasons"]) or v["code"] for v in f["verdicts"]]
    for i, name in enumerate(columns["name"]):
        filt[name] = {p: said[at[i]] for p, at in zip(f["plugins"], f["at"], strict=True) if at[i] >= 0}
        if columns["total"][i] is not None and sc["plugins"]:
            score[name] = {p: str(raw[i]) for p, raw in zip(sc["plugins"], sc["raw"], strict=True)}
            final[name] = {p: str(w[i]) for p, w in zip(sc["plugins"], sc["weighted"], strict=True)}
    rows = points or []
    by_plugin: dict[str, dict[str, str]] = {key: {} for key in BY_PLUGIN.values()}
    nodes: dict[str, list[str]] = {}
    timeouts: dict[str, str] = {}
    post: dict[str, dict[str, str]] = {}
    for r in rows:
        point, plugin = r["point"], r["plugin"]
        if point in BY_PLUGIN:
            by_plugin[BY_PLUGIN[point]][plugin] = r["result"]
        if "nodes" in r:
            nodes[plugin] = r["nodes"]
        if point == "Permit":
            timeouts[plugin] = go_duration(r.get("timeout", 0.0))
        if point == "PostFilter":
            if not post:
                post = {n: {} for n in explicit_nodes(columns, rows)}
            if r["code"] == "Success" and r.get("nominated"):
                post.setdefault(r["nominated"], {})[plugin] = NOMINATED
    if bound_to and not recorded and not by_plugin[BIND_RESULT]:
        by_plugin[BIND_RESULT]["DefaultBinder"] = "success"
    reserved = bound_to or ""
    out = {
        PREFILTER_STATUS: _compact(by_plugin[PREFILTER_STATUS]),
        PREFILTER_RESULT: _compact(nodes),
        FILTER_RESULT: _compact(filt),
        POSTFILTER_RESULT: _compact(post),
        PRESCORE_RESULT: _compact(by_plugin[PRESCORE_RESULT]),
        SCORE_RESULT: _compact(score),
        FINALSCORE_RESULT: _compact(final),
        RESERVE_RESULT: _compact(by_plugin[RESERVE_RESULT]),
        PERMIT_RESULT: _compact(by_plugin[PERMIT_RESULT]),
        PERMIT_TIMEOUT: _compact(timeouts),
        PREBIND_RESULT: _compact(by_plugin[PREBIND_RESULT]),
        BIND_RESULT: _compact(by_plugin[BIND_RESULT]),
        SELECTED_NODE: reserved,
    }
    return out


def snapshot_objects(
    snap: Snapshot, objs: ClusterObjects | None, pending: list[Any], order: dict[str, int]
) -> list[dict[str, Any]]:
    """Kubernetes objects of the cluster at a step: namespaces and priority classes as loaded,
    nodes, pods on nodes (spec.nodeName set; on each node in ``order``, by pod key: the order in
    which the timeline moved there would otherwise show) and the pods still without a node."""
    items: list[dict[str, Any]] = []
    if objs is not None:
        items += [
            {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns.name, "labels": dict(ns.labels)}}
            for ns in objs.namespaces
        ]
        items += [
            {
                "apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": pc.name},
                "value": pc.value, "globalDefault": pc.global_default, "preemptionPolicy": pc.preemption_policy,
            }
            for pc in objs.priority_classes
        ]
    items += [as_object(n, "v1", "Node") for n in snap.nodes]
    for row in range(snap.n):
        for pod in sorted(snap.pods_on[row].values(), key=lambda p: order.get(p.key, len(order))):
            d = as_object(pod, "v1", "Pod")
            d.setdefault("spec", {})["nodeName"] = snap.nodes[row].name
            if pod.annotations:
                d.setdefault("metadata", {})["annotations"] = dict(pod.annotations)
            items.append(d)
    for pod in pending:
        d = as_object(pod, "v1", "Pod")
        d.setdefault("spec", {}).pop("nodeName", None)
        items.append(d)
    return items


def as_object(obj: Any, api_version: str, kind: str) -> dict[str, Any]:
    raw = getattr(obj, "raw", None)
    d = copy.deepcopy(raw) if isinstance(raw, dict) and raw else {"metadata": {"name": getattr(obj, "name", "")}}
    d.setdefault("apiVersion", api_version)
    d.setdefault("kind", kind)
    return d


#: libyaml's emitter when PyYAML has it: the same text as the pure-Python one, hundreds of times
#: faster on the annotations' long JSON strings (which the pure-Python emitter scans character by
#: character, twice)
_DUMPER: type = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


def dump_list(items: list[dict[str, Any]]) -> str:
    return yaml.dump({"apiVersion": "v1", "kind": "List", "items": items}, Dumper=_DUMPER, sort_keys=False)


def parse_snapshot(text: str, source: str = "snapshot") -> ClusterObjects:
    """Cluster objects from uploaded YAML or JSON (what `kubectl get -o yaml` or the export writes)."""
    return snapshot_objects_of(snapshot_documents(text, source), source)


def snapshot_documents(text: str, source: str = "snapshot") -> list[tuple[str, Any]]:
    """(field path, document) pairs of an uploaded snapshot."""
    try:
        docs = [d for d in yaml.safe_load_all(text) if d is not None]
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f" at line {mark.line + 1} column {mark.column + 1}" if mark else ""
        raise InputError(f"not valid YAML or JSON{where}", source=source) from None
    if not docs:
        raise InputError("no objects found", source=source)
    return [(f"[{i}]" if len(docs) > 1 else "", d) for i, d in enumerate(docs)]


def snapshot_objects_of(docs: list[tuple[str, Any]], source: str = "snapshot") -> ClusterObjects:
    """The objects of ``snapshot_documents``; a snapshot without nodes is refused."""
    objs = parse_objects(source, docs)
    finish_objects(objs, [source])
    if not objs.nodes:
        raise InputError("no Node objects: a snapshot needs the cluster's nodes", source=source, path="items")
    return objs

"""Cluster snapshots in and out, and kube-scheduler-simulator's result annotations.

kube-scheduler-simulator (kubernetes-sigs) records each pod's scheduling results as JSON strings in
pod annotations, which its web UI reads. ``simulator_annotations`` writes the same keys and shapes
from kubesched's explain contract, so a pod exported from kubesched shows in that UI too:

- ``kube-scheduler-simulator.sigs.k8s.io/filter-result``: node -> plugin -> ``"passed"`` or the reason
- ``kube-scheduler-simulator.sigs.k8s.io/score-result``: node -> plugin -> raw score (a string)
- ``kube-scheduler-simulator.sigs.k8s.io/finalscore-result``: node -> plugin -> normalized x weight (a string)
- ``kube-scheduler-simulator.sigs.k8s.io/prefilter-result-status``: plugin -> ``"success"`` or the message
- ``kube-scheduler-simulator.sigs.k8s.io/selected-node``: the node, when one was selected
- ``kube-scheduler-simulator.sigs.k8s.io/bind-result``: ``{"DefaultBinder": "success"}`` for a bound pod
"""

from __future__ import annotations

import copy
import json
from typing import Any

import yaml

from kubesched.errors import InputError
from kubesched.load import ClusterObjects, finish_objects, parse_objects
from kubesched.state.snapshot import Snapshot

PREFIX = "kube-scheduler-simulator.sigs.k8s.io/"
FILTER_RESULT = PREFIX + "filter-result"
SCORE_RESULT = PREFIX + "score-result"
FINALSCORE_RESULT = PREFIX + "finalscore-result"
PREFILTER_STATUS = PREFIX + "prefilter-result-status"
SELECTED_NODE = PREFIX + "selected-node"
BIND_RESULT = PREFIX + "bind-result"
PASSED = "passed"


def simulator_annotations(explain: dict[str, Any], bound_to: str | None) -> dict[str, str]:
    """The simulator's result annotations from an ``explain -o json`` document."""
    filt: dict[str, dict[str, str]] = {}
    score: dict[str, dict[str, str]] = {}
    final: dict[str, dict[str, str]] = {}
    prefilter: dict[str, str] = {}
    for node in explain.get("nodes", []):
        name = node["name"]
        filt[name] = {f["plugin"]: PASSED if f["code"] == "Success" else "; ".join(f["reasons"]) or f["code"] for f in node["filter"]}
        if node["score"]:
            score[name] = {s["plugin"]: str(s["raw"]) for s in node["score"]}
            final[name] = {s["plugin"]: str(s["weighted"]) for s in node["score"]}
    for node in explain.get("nodes", [])[:1]:
        for f in node["filter"]:
            if f["plugin"] != "PreFilterResult":
                prefilter.setdefault(f["plugin"], "success")
    out = {
        FILTER_RESULT: json.dumps(filt, separators=(",", ":")),
        SCORE_RESULT: json.dumps(score, separators=(",", ":")),
        FINALSCORE_RESULT: json.dumps(final, separators=(",", ":")),
        PREFILTER_STATUS: json.dumps(prefilter, separators=(",", ":")),
    }
    selected = bound_to or explain.get("selected")
    if selected:
        out[SELECTED_NODE] = selected
    if bound_to:
        out[BIND_RESULT] = json.dumps({"DefaultBinder": "success"}, separators=(",", ":"))
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
    try:
        docs = [d for d in yaml.safe_load_all(text) if d is not None]
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f" at line {mark.line + 1} column {mark.column + 1}" if mark else ""
        raise InputError(f"not valid YAML or JSON{where}", source=source) from None
    if not docs:
        raise InputError("no objects found", source=source)
    objs = parse_objects(source, [(f"[{i}]" if len(docs) > 1 else "", d) for i, d in enumerate(docs)])
    finish_objects(objs, [source])
    if not objs.nodes:
        raise InputError("no Node objects: a snapshot needs the cluster's nodes", source=source, path="items")
    return objs

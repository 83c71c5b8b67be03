"""kube-scheduler's integration tests (test/integration/scheduler), run through kubesched's whole
path: the objects are written to a file, loaded as ``kubesched schedule -f`` loads them (strict
decoding, API-server validation, Priority admission), and every pending pod goes through the
queue, the scheduling cycle (PreFilter to Score, PostFilter's preemption) and binding.

Upstream creates the existing pods one by one, waits for each to be scheduled, then creates the
incoming pod. Here they are queued in that order: each is placed (or bound already) before the
next is tried, so the incoming pod sees the same cluster.

The builders follow ``pkg/scheduler/testing`` (``st.MakeNode``, ``st.MakePod``): a node's capacity
and allocatable default to 32 pods and nothing else, and nodes carry only the labels a test
gives them (there is no kubelet to add ``kubernetes.io/hostname``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from kubesched.app import Session, build_session
from kubesched.batch import BatchResult, schedule_all

PAUSE = "registry.k8s.io/pause:3.10.1"
HOSTNAME = "kubernetes.io/hostname"
ZONE = "topology.kubernetes.io/zone"

#: the seeds each table case runs with: kube-scheduler breaks score ties at random, so a case
#: whose candidates are several nodes must hold whichever the draw
SEEDS = (1, 2, 3)


def node(
    name: str,
    labels: dict[str, str] | None = None,
    *,
    capacity: dict[str, str] | None = None,
    taints: list[dict] | None = None,
    images: dict[str, int] | None = None,
) -> dict:
    """``st.MakeNode().Name(name).Label(...).Capacity(capacity).Taints(taints).Images(images)``."""
    res = {"pods": "32", **(capacity or {})}
    d: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": dict(labels or {})},
        "spec": {},
        "status": {"capacity": dict(res), "allocatable": dict(res)},
    }
    if taints:
        d["spec"]["taints"] = taints
    if images:
        d["status"]["images"] = [{"names": [n], "sizeBytes": size} for n, size in images.items()]
    return d


def container(image: str = PAUSE, name: str = "container", requests: dict[str, str] | None = None) -> dict:
    c: dict[str, Any] = {"name": name, "image": image}
    if requests:
        c["resources"] = {"requests": dict(requests)}
    return c


def pod(
    name: str,
    namespace: str = "default",
    *,
    labels: dict[str, str] | None = None,
    node_name: str | None = None,
    containers: list[dict] | None = None,
    **spec: Any,
) -> dict:
    """``st.MakePod().Name(name).Namespace(ns).Label(...).Node(node_name).Container(pause)``; other
    keyword arguments are pod spec fields, as the wire form spells them."""
    s: dict[str, Any] = {"containers": containers or [container()], **spec}
    if node_name:
        s["nodeName"] = node_name
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": namespace, "labels": dict(labels or {})},
        "spec": s,
    }


def namespace(name: str, labels: dict[str, str] | None = None) -> dict:
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name, "labels": dict(labels or {})}}


def foo_pod(name: str, node_name: str | None = None, labels: dict[str, str] | None = None, **spec: Any) -> dict:
    """``st.MakePod().Name(name).Node(node_name).Label("foo", "")...``, in namespace "default"."""
    return pod(name, labels={"foo": "", **(labels or {})}, node_name=node_name, **spec)


def on(*placements: str, bar: tuple[str, ...] = ()) -> list[dict]:
    """Existing pods "p<suffix>" labelled foo (and bar="" for the suffixes in ``bar``), each on
    "node-<first character of the suffix>"."""
    return [foo_pod(f"p{s}", f"node-{s[0]}", {"bar": ""} if s in bar else None) for s in placements]


def exists(*keys: str) -> dict:
    """``st.MakeLabelSelector().Exists(k)...``"""
    return {"matchExpressions": [{"key": k, "operator": "Exists"} for k in keys]}


def expr(key: str, op: str, *values: str) -> dict:
    e: dict[str, Any] = {"key": key, "operator": op}
    if values:
        e["values"] = list(values)
    return e


def term(topology_key: str, *exprs: dict, **fields: Any) -> dict:
    """A PodAffinityTerm whose labelSelector has ``exprs`` as matchExpressions."""
    return {"labelSelector": {"matchExpressions": list(exprs)}, "topologyKey": topology_key, **fields}


def profile_config(plugins: dict | None = None, plugin_config: list[dict] | None = None) -> dict:
    """A KubeSchedulerConfiguration with the one profile "default-scheduler"."""
    profile: dict[str, Any] = {"schedulerName": "default-scheduler"}
    if plugins:
        profile["plugins"] = plugins
    if plugin_config:
        profile["pluginConfig"] = plugin_config
    return {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration", "profiles": [profile]}


def scoring_config(pre_score: str | None, score: str) -> dict:
    """``initTestSchedulerForScoringTests``: every PreScore and Score plugin disabled but ``score``
    (weight 1) and ``pre_score``; the filters stay the default ones."""
    pre: dict[str, Any] = {"disabled": [{"name": "*"}]}
    if pre_score:
        pre["enabled"] = [{"name": pre_score}]
    return profile_config({"preScore": pre, "score": {"enabled": [{"name": score, "weight": 1}], "disabled": [{"name": "*"}]}})


@dataclass
class Outcome(BatchResult):
    """Every pod's outcome, and the session that scheduled them (its plugins, its cluster)."""

    session: Session | None = None


def schedule(
    tmp_path: Path,
    objects: list[dict],
    *,
    then: Sequence[list[dict]] = (),
    config: dict | None = None,
    seed: int = 1,
    plugin_paths: Sequence[str] = (),
) -> Outcome:
    """Write ``objects`` and the pods of ``then`` (and ``config``) to files, load them as
    ``kubesched schedule`` does and place every pending pod of ``objects``, in the order they are
    listed; then, one list of ``then`` at a time, the pods created once the earlier ones were
    placed (or found unschedulable). Returns every pod's outcome."""
    session = load(tmp_path, [*objects, *(p for step in then for p in step)], config, seed, plugin_paths)
    loaded = session.objects.pods
    out = Outcome(session=session)
    for step in ([o for o in objects if o["kind"] == "Pod"], *then):
        keys = {_key(p) for p in step}
        session.objects.pods = [p for p in loaded if p.key in keys]
        result = schedule_all(session)
        # a pod still queued from an earlier step may be tried again: its last outcome counts
        again = {e["pod"] for e in result.placements}
        out.placements = [e for e in out.placements if e["pod"] not in again] + result.placements
        out.skipped += result.skipped
    return out


def load(
    tmp_path: Path, objects: list[dict], config: dict | None = None, seed: int = 1, plugin_paths: Sequence[str] = ()
) -> Session:
    """Write ``objects`` (and ``config``) to files and load them as ``kubesched schedule`` does,
    scheduling nothing: for tests that drive the scheduler a step at a time."""
    tmp_path.mkdir(parents=True, exist_ok=True)
    cluster = tmp_path / "cluster.yaml"
    cluster.write_text(yaml.safe_dump_all(objects, sort_keys=False))
    config_path = None
    if config is not None:
        config_path = tmp_path / "config.yaml"
        config_path.write_text(yaml.safe_dump(config, sort_keys=False))
    return build_session([str(cluster)], str(config_path) if config_path else None, seed, list(plugin_paths))


def _key(obj: dict) -> str:
    md = obj["metadata"]
    return f"{md['namespace']}/{md['name']}"


def placed(result: BatchResult, pod_obj: dict) -> str | None:
    """The node the pod was bound to (None: unschedulable)."""
    entry = result.entry(_key(pod_obj))
    assert entry is not None, f"{_key(pod_obj)} was never tried"
    return entry.get("node")


def unschedulable_message(result: BatchResult, pod_obj: dict) -> str:
    entry = result.entry(_key(pod_obj))
    assert entry is not None and entry.get("node") is None, entry
    return entry["message"]

"""A small cluster, a running extender on 127.0.0.1:0, and real-HTTP helpers for the server tests."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import yaml

from kubesched.app import build_config, build_registry
from kubesched.cli import main
from kubesched.extender.service import Extender
from kubesched.load import load_cluster
from kubesched.server.httpd import HTTPServer
from kubesched.server.metrics import SchedulerMetrics
from kubesched.testing import make_node, make_pod

GUARDED = {"app": "guarded"}


def _started(d: dict[str, Any], second: int) -> dict[str, Any]:
    d["status"] = {"phase": "Running", "startTime": f"2024-01-01T00:00:{second:02d}Z"}
    return d


def cluster_docs() -> list[dict[str, Any]]:
    """Seven nodes that fail in every way filters can, and pods to score, bind and preempt."""
    return [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "default"}},
        {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "high"}, "value": 2000},
        {
            "apiVersion": "policy/v1",
            "kind": "PodDisruptionBudget",
            "metadata": {"name": "guarded", "namespace": "default"},
            "spec": {"selector": {"matchLabels": GUARDED}},
            "status": {"disruptionsAllowed": 0},
        },
        make_node("n1", cpu="2", memory="4Gi", labels={"zone": "a"}),
        make_node(
            "n2", cpu="8", memory="16Gi", labels={"zone": "b"},
            taints=[{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}],
        ),
        make_node("n3", cpu="8", memory="16Gi", labels={"zone": "a"}, unschedulable=True),
        make_node("n4", cpu="1", memory="4Gi", labels={"zone": "b"}),
        make_node("n5", cpu="8", memory="16Gi", labels={"zone": "a", "disk": "ssd"}),
        make_node("n6", cpu="4", memory="8Gi", labels={"zone": "b"}),
        make_node("n7", cpu="4", memory="16Gi", labels={"zone": "a"}),
        # n1: 1750m of 2 CPUs used by three lower-priority pods (preemption candidates)
        _started(make_pod("low-a", requests={"cpu": "500m", "memory": "256Mi"}, node="n1", priority=0), 1),
        _started(
            make_pod("low-b", requests={"cpu": "1", "memory": "256Mi"}, node="n1", priority=0, labels=GUARDED), 2
        ),
        _started(make_pod("mid", requests={"cpu": "250m", "memory": "256Mi"}, node="n1", priority=1000), 3),
        _started(make_pod("busy6", requests={"cpu": "2", "memory": "2Gi"}, node="n6", priority=0), 4),
        _started(make_pod("busy7", requests={"cpu": "500m", "memory": "8Gi"}, node="n7", priority=0), 5),
        make_pod("pending-1", requests={"cpu": "100m", "memory": "128Mi"}),
        make_pod("pending-2", requests={"cpu": "100m", "memory": "128Mi"}),
    ]


def web_pod(**spec: Any) -> dict[str, Any]:
    """Fits n5, n6, n7 only: n1/n4 lack CPU, n2 is tainted, n3 is cordoned."""
    return make_pod("web", requests={"cpu": "1500m", "memory": "1Gi"}, spec=spec or None, uid="web-uid")


def preemptor_pod() -> dict[str, Any]:
    """Priority from the "high" PriorityClass (the server resolves it): 2000."""
    d = make_pod("urgent", requests={"cpu": "1500m", "memory": "256Mi"}, uid="urgent-uid")
    d["spec"]["priorityClassName"] = "high"
    return d


def write(tmp_path: Path, name: str, docs: list[dict[str, Any]] | dict[str, Any]) -> str:
    p = tmp_path / name
    p.write_text(yaml.safe_dump_all(docs if isinstance(docs, list) else [docs]))
    return str(p)


@contextmanager
def running_extender(
    files: list[str],
    *,
    prefix: str = "",
    seed: int = 1,
    max_body: int | None = None,
    config_path: str | None = None,
    plugin_paths: list[str] | None = None,
) -> Iterator[tuple[Extender, str]]:
    """An extender on an ephemeral loopback port, shut down on exit: (extender, base URL)."""
    registry = build_registry(plugin_paths)
    config = build_config(config_path, registry)
    ext = Extender(config, registry, load_cluster(files), seed=seed, metrics=SchedulerMetrics(seed=seed))
    if max_body is None:
        server = ext.server(("127.0.0.1", 0), prefix)
    else:
        server = HTTPServer(("127.0.0.1", 0), ext.handlers(prefix), metrics=ext.metrics, max_body=max_body)
    server.start()
    try:
        yield ext, server.url
    finally:
        server.shutdown()


def http(url: str, body: bytes | None = None, method: str | None = None) -> tuple[int, str, bytes]:
    """(status, content type, body) over real HTTP; error statuses are returned, not raised."""
    req = urllib.request.Request(url, data=body, method=method)
    if body is not None:
        req.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.status, r.headers.get("Content-Type", ""), r.read()
    except urllib.error.HTTPError as e:
        with e:
            return e.code, e.headers.get("Content-Type", ""), e.read()


def post(url: str, doc: Any) -> tuple[int, Any]:
    """POST a JSON document; the decoded JSON answer (or the text of an error)."""
    status, ctype, body = http(url, json.dumps(doc).encode(), "POST")
    if ctype.startswith("application/json"):
        return status, json.loads(body)
    return status, body.decode()


def explain(capsys: Any, cluster: str, pod_file: str) -> dict[str, Any]:
    """What ``kubesched explain -o json`` says about a pod."""
    code = main(["explain", "-f", cluster, "--pod", pod_file, "-o", "json", "--seed", "1"])
    out = capsys.readouterr()
    assert code == 0, out.err
    return json.loads(out.out)


def explain_verdicts(result: dict[str, Any]) -> tuple[list[str], dict[str, str], dict[str, str]]:
    """(feasible nodes, FailedNodes, FailedAndUnresolvableNodes) as a scheduling cycle reports them.

    A node stops at its first failing filter; a node outside a PreFilter result fails with that.
    """
    passed: list[str] = []
    failed: dict[str, str] = {}
    unresolvable: dict[str, str] = {}
    for n in result["nodes"]:
        if n["feasible"]:
            passed.append(n["name"])
            continue
        narrowed = [e for e in n["filter"] if e["plugin"] == "PreFilterResult"]
        first = narrowed[0] if narrowed else next(e for e in n["filter"] if e["code"] != "Success")
        target = unresolvable if first["code"] == "UnschedulableAndUnresolvable" else failed
        target[n["name"]] = ", ".join(first["reasons"])
    return passed, failed, unresolvable


def node_list(docs: list[dict[str, Any]], names: list[str] | None = None) -> dict[str, Any]:
    """A v1.NodeList of the cluster's nodes (all, or ``names`` in that order)."""
    nodes = {d["metadata"]["name"]: d for d in docs if d.get("kind") == "Node"}
    items = [nodes[n] for n in (names if names is not None else list(nodes))]
    return {"apiVersion": "v1", "kind": "NodeList", "metadata": {}, "items": items}

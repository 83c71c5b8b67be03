"""``kubesched extender --kubeconfig``: the extender's state from its own watch of a (test) API server.

The extender runs in this process on an ephemeral port and talks real HTTP to tests/kubeapi through
the official client's configuration; requests are real ExtenderArgs over real HTTP.
"""

from __future__ import annotations

import re
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from extender_testlib import http, post

from kubesched.app import build_config, build_registry
from kubesched.cli import main
from kubesched.extender.service import Extender
from kubesched.extender.watch import ClusterWatch
from kubesched.live.client import KubeClient, load_configuration
from kubesched.testing import make_node, make_pod
from tests.kubeapi import KubeAPIServer
from tests.kubeapi.fixtures import kube_api, kubeconfig  # noqa: F401

wait_for = KubeAPIServer.wait_for


def bound_pod(name: str, node: str, cpu: str, priority: int = 0) -> dict[str, Any]:
    d = make_pod(name, requests={"cpu": cpu, "memory": "128Mi"}, node=node, priority=priority)
    d["status"] = {"phase": "Running", "startTime": "2024-01-01T00:00:00Z"}
    return d


def web(cpu: str = "1", priority: int | None = None) -> dict[str, Any]:
    """The pod kube-scheduler asks about (as it sends it: with a uid, not yet bound)."""
    return make_pod("web", requests={"cpu": cpu, "memory": "256Mi"}, uid="web-uid", priority=priority)


@contextmanager
def watching_extender(kubeconfig: str, *, start: bool = True) -> Iterator[tuple[Extender, ClusterWatch, str]]:  # noqa: F811
    registry = build_registry([])
    config = build_config(None, registry)
    watch = ClusterWatch(config, registry, KubeClient(load_configuration(kubeconfig)), seed=1)
    ext = Extender(config, registry, seed=1, watch=watch)
    server = ext.server(("127.0.0.1", 0)).start()
    try:
        if start:
            watch.start()
            assert watch.wait_synced(10), "the extender's informers did not list"
        yield ext, watch, server.url
    finally:
        server.shutdown()
        watch.close()


@pytest.fixture
def cluster(kube_api: KubeAPIServer) -> KubeAPIServer:  # noqa: F811
    """n1 (2 CPUs) is full of bound pods, n2 (4 CPUs) has one; low-priority pods on n1 can be preempted."""
    kube_api.create(make_node("n1", cpu="2", memory="8Gi"))
    kube_api.create(make_node("n2", cpu="4", memory="8Gi"))
    kube_api.create(bound_pod("fill-a", "n1", "1500m"))
    kube_api.create(bound_pod("fill-b", "n1", "500m", priority=1000))
    kube_api.create(bound_pod("half", "n2", "2"))
    return kube_api


def test_node_names_resolve_against_the_watched_cluster(cluster: KubeAPIServer, kubeconfig: str) -> None:  # noqa: F811
    with watching_extender(kubeconfig) as (_, _, url):
        status, res = post(f"{url}/filter", {"Pod": web(), "NodeNames": ["n1", "n2"]})
        assert status == 200, res
        assert res["NodeNames"] == ["n2"]
        assert res["FailedNodes"] == {"n1": "Insufficient cpu"}

        # prioritize: n2 holds 2 of 4 CPUs; a 1-CPU pod fits better on an empty node n3 once it exists
        status, res = post(f"{url}/filter", {"Pod": web(), "NodeNames": ["n2", "n3"]})
        assert status == 400 and 'NodeNames[1]: node "n3" is not in the cluster' in res

        cluster.create(make_node("n3", cpu="4", memory="8Gi"))
        cluster.create(bound_pod("late", "n2", "1500m"))  # n2: 3.5 of 4 CPUs now

        def n2_full_and_n3_known() -> bool:
            s, r = post(f"{url}/filter", {"Pod": web(), "NodeNames": ["n2", "n3"]})
            return s == 200 and r["NodeNames"] == ["n3"]

        assert wait_for(n2_full_and_n3_known, timeout=10), post(f"{url}/filter", {"Pod": web(), "NodeNames": ["n2", "n3"]})
        _, res = post(f"{url}/filter", {"Pod": web(), "NodeNames": ["n2", "n3"]})
        assert res["FailedNodes"] == {"n2": "Insufficient cpu"}

        status, scores = post(f"{url}/prioritize", {"Pod": web("500m"), "NodeNames": ["n2", "n3"]})
        assert status == 200
        by_host = {s["Host"]: s["Score"] for s in scores}
        assert by_host["n3"] > by_host["n2"], by_host  # the emptier node scores higher (LeastAllocated)

        # a deleted pod frees its node again
        cluster.delete("Pod", "late", "default")
        assert wait_for(
            lambda: post(f"{url}/filter", {"Pod": web(), "NodeNames": ["n2", "n3"]})[1]["NodeNames"] == ["n2", "n3"],
            timeout=10,
        )


def test_full_node_objects_count_the_watched_pods(cluster: KubeAPIServer, kubeconfig: str) -> None:  # noqa: F811
    nodes = {"apiVersion": "v1", "kind": "NodeList", "items": [cluster.get("Node", "n1"), cluster.get("Node", "n2")]}
    with watching_extender(kubeconfig) as (_, _, url):
        status, res = post(f"{url}/filter", {"Pod": web(), "Nodes": nodes})
        assert status == 200, res
        assert [n["metadata"]["name"] for n in res["Nodes"]["items"]] == ["n2"]
        assert res["FailedNodes"] == {"n1": "Insufficient cpu"}


def test_bind_goes_through_the_binding_subresource(cluster: KubeAPIServer, kubeconfig: str) -> None:  # noqa: F811
    created = cluster.create(make_pod("web", requests={"cpu": "1", "memory": "256Mi"}, uid="api-web-uid"))
    uid = created["metadata"]["uid"]
    with watching_extender(kubeconfig) as (_, _, url):
        args = {"PodName": "web", "PodNamespace": "default", "PodUID": uid, "Node": "n2"}
        status, res = post(f"{url}/bind", args)
        assert (status, res) == (200, {"Error": ""})
        assert cluster.get("Pod", "web", "default")["spec"]["nodeName"] == "n2"
        assert ("POST", "/api/v1/namespaces/default/pods/web/binding") in cluster.requests

        # the bound pod counts on n2 at once (2 + 1 of 4 CPUs): a 1500m pod no longer fits there
        _, res = post(f"{url}/filter", {"Pod": web("1500m"), "NodeNames": ["n2"]})
        assert res["FailedNodes"] == {"n2": "Insufficient cpu"}

        status, res = post(f"{url}/bind", {**args, "Node": "n1"})  # the API server's 409
        assert status == 200
        assert "409" in res["Error"] and 'already assigned to node "n2"' in res["Error"], res
        assert cluster.get("Pod", "web", "default")["spec"]["nodeName"] == "n2"

        status, res = post(f"{url}/bind", {**args, "PodName": "ghost", "PodUID": ""})
        assert status == 200 and res["Error"] == 'pods "ghost" not found in namespace "default"'


def test_preempt_uses_the_watched_pods(cluster: KubeAPIServer, kubeconfig: str) -> None:  # noqa: F811
    uids = {p["metadata"]["name"]: p["metadata"]["uid"] for p in cluster.list("Pod")}
    with watching_extender(kubeconfig) as (_, _, url):
        # a 1-CPU pod of priority 500 on n1: only fill-a (priority 0) may go, and it is enough
        doc = {
            "Pod": web("1", priority=500),
            "NodeNameToMetaVictims": {"n1": {"Pods": [{"UID": uids["fill-a"]}, {"UID": uids["fill-b"]}],
                                             "NumPDBViolations": 0}},
        }
        status, res = post(f"{url}/preempt", doc)
        assert status == 200, res
        assert res["NodeNameToMetaVictims"] == {"n1": {"Pods": [{"UID": uids["fill-a"]}], "NumPDBViolations": 0}}


def test_not_ready_until_the_caches_sync(cluster: KubeAPIServer, kubeconfig: str) -> None:  # noqa: F811
    with watching_extender(kubeconfig, start=False) as (_, watch, url):
        assert http(f"{url}/readyz")[0] == 503
        assert http(f"{url}/healthz")[0] == 200
        status, res = post(f"{url}/filter", {"Pod": web(), "NodeNames": ["n1"]})
        assert status == 503 and "not synced" in res
        watch.start()
        assert watch.wait_synced(10)
        assert http(f"{url}/readyz")[0] == 200
        assert post(f"{url}/filter", {"Pod": web(), "NodeNames": ["n2"]})[1]["NodeNames"] == ["n2"]


def test_command_watches_and_stops_on_sigterm(cluster: KubeAPIServer, kubeconfig: str) -> None:  # noqa: F811
    proc = subprocess.Popen(
        [sys.executable, "-m", "kubesched.cli", "extender", "--kubeconfig", kubeconfig, "--listen", "127.0.0.1:0"],
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stderr is not None
        line = proc.stderr.readline()
        m = re.search(r"on (http://127\.0\.0\.1:\d+) \(watching the cluster at http://127\.0\.0\.1:\d+", line)
        assert m, line
        url = m.group(1)
        assert wait_for(lambda: http(f"{url}/readyz")[0] == 200, timeout=15)
        status, res = post(f"{url}/filter", {"Pod": web(), "NodeNames": ["n1", "n2"]})
        assert status == 200 and res["NodeNames"] == ["n2"]
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=30) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        if proc.stderr is not None:
            proc.stderr.close()


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["--kubeconfig", "/nonexistent/kubeconfig"], "kubesched: error: /nonexistent/kubeconfig: --kubeconfig: no such file"),
        (["--kubeconfig", "KC", "-f", "cluster.yaml"], "kubesched: error: -f: the extender holds -f files or a watched"),
        (["--kubeconfig", "KC", "--in-cluster"], "kubesched: error: --in-cluster: give --kubeconfig or --in-cluster"),
        (["--kubeconfig", "KC", "--kube-api-qps", "0"], "kubesched: error: --kube-api-qps: must be a positive number"),
    ],
)
def test_bad_arguments_exit_2_with_one_line(capsys: Any, tmp_path: Path, argv: list[str], expected: str) -> None:
    kc = tmp_path / "kubeconfig"
    kc.write_text("apiVersion: v1\nkind: Config\n")
    code = main(["extender", "--listen", "127.0.0.1:0", *[str(kc) if a == "KC" else a for a in argv]])
    err = capsys.readouterr().err
    assert code == 2
    assert err.startswith(expected) and err.count("\n") == 1, err

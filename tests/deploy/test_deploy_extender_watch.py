"""Extender mode with ``extender.watchCluster``: its RBAC, token, arguments and NOTES, and a real
`kubesched extender` started from the rendered arguments against the test API server (tests/kubeapi).
"""

from __future__ import annotations

import json
import re
import ssl
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
import yaml
from deploy_testlib import (
    by_kind,
    container,
    granted,
    https_context,
    mount_secrets,
    objects,
    one,
    parse_cli,
    render,
)
from test_deploy_rbac import check_binding

from kubesched.live.resources import REQUIRED, WORKLOADS
from kubesched.server.httpd import parse_listen
from kubesched.testing import make_node, make_pod
from tests.kubeapi import KubeAPIServer
from tests.kubeapi.fixtures import kube_api, kubeconfig  # noqa: F401

Rules = dict[tuple[str, str, str | None], set[str]]

# What kubesched.extender.watch lists and watches: the live scheduler's REQUIRED resources
# plus WORKLOADS (the default profile's PodTopologySpread has system default constraints).
WATCH: Rules = {
    ("", "nodes", None): {"list", "watch"},
    ("", "namespaces", None): {"list", "watch"},
    ("", "pods", None): {"list", "watch"},
    ("scheduling.k8s.io", "priorityclasses", None): {"list", "watch"},
    ("policy", "poddisruptionbudgets", None): {"list", "watch"},
    ("", "services", None): {"list", "watch"},
    ("", "replicationcontrollers", None): {"list", "watch"},
    ("apps", "replicasets", None): {"list", "watch"},
    ("apps", "statefulsets", None): {"list", "watch"},
}
# bind: POST pods/{name}/binding, and a GET of a pod the watch has not shown yet (ClusterWatch.find_pod).
BIND: Rules = {("", "pods", None): {"get"}, ("", "pods/binding", None): {"create"}}


def merged(*tables: Rules) -> Rules:
    out: Rules = {}
    for table in tables:
        for key, verbs in table.items():
            out.setdefault(key, set()).update(verbs)
    return out


def extender_values(**extender: bool) -> dict[str, Any]:
    return {"mode": "extender", "extender": extender}


def api_call(method: str, url: str) -> tuple[str, str, str]:
    """An API request as RBAC sees it: (apiGroup, resource[/subresource], verb)."""
    split = urlsplit(url)
    parts = split.path.strip("/").split("/")
    group, rest = ("", parts[2:]) if parts[0] == "api" else (parts[1], parts[3:])
    if len(rest) >= 3 and rest[0] == "namespaces":  # a namespaced path: namespaces/NS/RESOURCE/...
        rest = rest[2:]
    resource = rest[0] + (f"/{rest[2]}" if len(rest) > 2 else "")
    if method == "GET":
        verb = "get" if len(rest) > 1 else "watch" if parse_qs(split.query).get("watch") == ["true"] else "list"
    else:
        verb = {"POST": "create", "PUT": "update", "PATCH": "patch", "DELETE": "delete"}[method]
    return group, resource, verb


def test_api_call_names_what_rbac_checks() -> None:
    assert api_call("GET", "/api/v1/nodes?limit=500") == ("", "nodes", "list")
    assert api_call("GET", "/api/v1/namespaces?watch=true&resourceVersion=3") == ("", "namespaces", "watch")
    assert api_call("GET", "/api/v1/namespaces/default/pods/web") == ("", "pods", "get")
    assert api_call("POST", "/api/v1/namespaces/default/pods/web/binding") == ("", "pods/binding", "create")
    assert api_call("GET", "/apis/apps/v1/replicasets?watch=true") == ("apps", "replicasets", "watch")


@pytest.mark.parametrize("bind", [True, False])
def test_watching_extender_gets_exactly_its_api_calls(bind: bool) -> None:
    objs = objects(render(extender_values(watchCluster=True, bind=bind), namespace="sched-system"))
    role = one(objs, "ClusterRole")
    assert granted(role) == (merged(WATCH, BIND) if bind else WATCH)
    check_binding(one(objs, "ClusterRoleBinding"), role, objs, "sched-system")
    # no Lease, no namespaced role at all: the extender elects no leader
    assert not by_kind(objs, "Role") and not by_kind(objs, "RoleBinding")
    # the token is mounted (the default for a ServiceAccount: the field is left out)
    assert "automountServiceAccountToken" not in one(objs, "ServiceAccount")
    assert one(objs, "Deployment")["spec"]["template"]["spec"]["automountServiceAccountToken"] is True


def test_watch_table_is_what_the_watch_lists() -> None:
    """WATCH follows kubesched.live.resources, so a new informer cannot go ungranted unnoticed."""
    paths = {r.path for r in (*REQUIRED, *WORKLOADS)}
    assert {api_call("GET", p)[:2] for p in paths} == {(g, r) for g, r, _ in WATCH}


def test_watch_is_the_default_and_extra_rules_apply() -> None:
    extra = {"apiGroups": ["example.com"], "resources": ["widgets"], "verbs": ["list", "watch"]}
    objs = objects(render({"mode": "extender", "rbac": {"extraRules": [extra]}}))
    # binding is opt-in (extender.bind: true): by default the extender may not bind
    assert granted(one(objs, "ClusterRole")) == merged(WATCH, {("example.com", "widgets", None): {"list", "watch"}})


@pytest.mark.parametrize("watch", [True, False])
def test_args_config_and_notes_follow_the_watch(watch: bool) -> None:
    values = extender_values(watchCluster=watch, bind=True)
    values["kubeApi"] = {"qps": 20, "burst": 40}
    rendered = render(values)
    objs = objects(rendered)
    args = parse_cli(container(objs)["args"])
    assert args.command == "extender"
    assert (args.in_cluster, args.kubeconfig) == (watch, None)
    config = yaml.safe_load(one(objs, "ConfigMap")["data"]["config.yaml"])
    notes = rendered["NOTES.txt"]
    stanza = yaml.safe_load(notes.split("extenders:", 1)[1].split("(see", 1)[0])[0]
    if watch:
        assert (args.kube_api_qps, args.kube_api_burst) == (20, 40)
        assert config["clientConnection"] == {"qps": 20, "burst": 40}
        assert stanza["nodeCacheCapable"] is True and stanza["bindVerb"] == "bind"
    else:
        assert "clientConnection" not in config
        assert stanza["nodeCacheCapable"] is False and "bindVerb" not in stanza
    # the probe that keeps kube-scheduler's calls away until the watch has synced
    assert container(objs)["readinessProbe"]["httpGet"]["path"] == "/readyz"


def test_notes_leave_bind_verb_out_without_the_bind_permission() -> None:
    notes = render(extender_values(watchCluster=True, bind=False))["NOTES.txt"]
    stanza = yaml.safe_load(notes.split("extenders:", 1)[1].split("(see", 1)[0])[0]
    assert stanza["nodeCacheCapable"] is True and "bindVerb" not in stanza


def http(method: str, url: str, body: Any = None, ctx: ssl.SSLContext | None = None) -> tuple[int, Any]:
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(url, data=data, method=method)
    try:
        with urllib.request.urlopen(req, timeout=5, context=ctx) as resp:  # noqa: S310 - loopback only
            return resp.status, resp.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


def test_rendered_args_run_a_watching_extender(kube_api: KubeAPIServer, kubeconfig: str, tmp_path: Path) -> None:  # noqa: F811
    objs = objects(render({"mode": "extender", "extender": {"bind": True}}))
    (tmp_path / "config.yaml").write_text(one(objs, "ConfigMap")["data"]["config.yaml"])
    mounted = mount_secrets(objs, tmp_path / "secrets")  # the generated certificates, as mounted
    kube_api.create(make_node("n1", cpu="4", memory="8Gi"))
    kube_api.create(make_node("n2", cpu="500m", memory="8Gi"))
    kube_api.create(make_pod("web", requests={"cpu": "1"}, uid="web-uid"))
    # The rendered arguments, changed only where a test must: the ConfigMap's file written here, a
    # free loopback port, and --kubeconfig in place of --in-cluster (no service account in a test).
    argv = []
    for arg in map(mounted, container(objs)["args"]):
        if arg.startswith("--config="):
            arg = f"--config={tmp_path / 'config.yaml'}"
        elif arg.startswith("--listen="):
            assert parse_listen(arg.split("=", 1)[1]) == ("0.0.0.0", 8888)
            arg = "--listen=127.0.0.1:0"
        elif arg == "--in-cluster":
            arg = f"--kubeconfig={kubeconfig}"
        argv.append(arg)
    assert f"--kubeconfig={kubeconfig}" in argv and "--kube-api-qps=50" in argv
    proc = subprocess.Popen([sys.executable, "-m", "kubesched.cli", *argv], stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stderr is not None
        line = proc.stderr.readline()
        m = re.search(r"on (https://127\.0\.0\.1:\d+) \(watching the cluster at ", line)
        assert m, line
        base, url = m.group(1), m.group(1) + parse_cli(argv).url_prefix
        # the readiness probe's path: 200 once every informer has listed
        ready = container(objs)["readinessProbe"]["httpGet"]["path"]
        anon, scheduler = https_context(objs), https_context(objs, client=True)  # tlsConfig caFile (+ certFile)
        assert KubeAPIServer.wait_for(lambda: http("GET", base + ready, ctx=anon)[0] == 200, timeout=15)

        # nodeCacheCapable: true, as the NOTES say: names resolved against the watched nodes
        pod = kube_api.get("Pod", "web", "default")
        status, text = http("POST", f"{url}/filter", {"Pod": pod, "NodeNames": ["n1", "n2"]}, ctx=anon)
        assert status == 401, text  # the verbs need kube-scheduler's client certificate
        status, text = http("POST", f"{url}/filter", {"Pod": pod, "NodeNames": ["n1", "n2"]}, ctx=scheduler)
        assert status == 200, text
        res = json.loads(text)
        assert res["NodeNames"] == ["n1"]
        assert {**res["FailedNodes"], **res["FailedAndUnresolvableNodes"]} == {"n2": "Insufficient cpu"}

        # bindVerb: bind, as the NOTES say: the binding reaches the API server
        args = {"PodName": "web", "PodNamespace": "default", "PodUID": "web-uid", "Node": "n1"}
        status, text = http("POST", f"{url}/bind", args, ctx=scheduler)
        assert status == 200 and json.loads(text).get("Error", "") == "", text
        assert kube_api.get("Pod", "web", "default")["spec"]["nodeName"] == "n1"
    finally:
        proc.terminate()
        proc.wait(timeout=30)
        if proc.stderr is not None:
            proc.stderr.close()
    # everything it asked of the API server is granted by the rendered ClusterRole
    rules = granted(one(objs, "ClusterRole"))
    calls = {api_call(method, path) for method, path in kube_api.requests}
    assert ("", "pods/binding", "create") in calls and ("", "nodes", "watch") in calls
    for group, resource, verb in calls:
        assert verb in rules.get((group, resource, None), set()), (group, resource, verb)

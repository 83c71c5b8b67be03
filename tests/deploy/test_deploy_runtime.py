"""What the Deployment runs: its arguments parse, its ports agree, its probes hit paths that answer 200.

The probes are sent over real HTTP to kubesched's own servers, built from the rendered arguments
and ConfigMap: the `kubesched run` runner's metrics server, and in extender mode a real Extender.
"""

from __future__ import annotations

import base64
import json
import urllib.error
import urllib.request
from pathlib import Path

import pytest
import yaml
from deploy_testlib import (
    container,
    granted,
    https_context,
    mount_secrets,
    objects,
    one,
    parse_cli,
    render,
    run_flags,
)

from kubesched.app import build_config, build_registry
from kubesched.extender.service import Extender
from kubesched.load import ClusterObjects
from kubesched.server.httpd import parse_listen
from kubesched.server.metrics import SchedulerMetrics
from kubesched.testing import make_node, make_pod


def get(url: str, ctx=None, token: str | None = None) -> tuple[int, str]:
    req = urllib.request.Request(url, headers={"Authorization": f"Bearer {token}"} if token else {})
    with urllib.request.urlopen(req, timeout=5, context=ctx) as resp:  # noqa: S310 - loopback only
        return resp.status, resp.read().decode()


def probe_paths(c: dict) -> dict[str, tuple[str, str]]:
    """probe -> (path, port name)."""
    return {k: (c[k]["httpGet"]["path"], c[k]["httpGet"]["port"]) for k in ("livenessProbe", "readinessProbe")}


KUBECONFIG = """\
apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: x, context: {cluster: c, user: u}}]
current-context: x
"""


def api_group_resource(path: str) -> tuple[str, str]:
    """/api/v1/nodes -> ("", "nodes"); /apis/apps/v1/replicasets -> ("apps", "replicasets")."""
    parts = path.strip("/").split("/")
    return ("", parts[2]) if parts[0] == "api" else (parts[1], parts[3])


@pytest.fixture
def runner(tmp_path: Path):
    """`kubesched run` built from the rendered Deployment args and ConfigMap (nothing contacts a cluster).

    Only two arguments are changed: the config path (the ConfigMap's file, written here) and the
    metrics address (a free loopback port instead of :10251); --kubeconfig stands in for the
    in-cluster service account.
    """
    from kubesched.live.cli import build_runner

    objs = objects(render(namespace="sched-system"))
    (tmp_path / "config.yaml").write_text(one(objs, "ConfigMap")["data"]["config.yaml"])
    (tmp_path / "kubeconfig").write_text(KUBECONFIG)
    mounted = mount_secrets(objs, tmp_path)  # the generated certificate and /metrics token
    argv = []
    for arg in map(mounted, container(objs)["args"]):
        if arg.startswith("--config="):
            arg = f"--config={tmp_path / 'config.yaml'}"
        elif arg.startswith("--metrics-listen="):
            arg = "--metrics-listen=127.0.0.1:0"
        argv.append(arg)
    r = build_runner(run_flags([*argv, f"--kubeconfig={tmp_path / 'kubeconfig'}"]))
    yield objs, r
    r.writers.close()
    if r.http is not None:
        r.http.shutdown()


def test_scheduler_args_build_the_runner_the_chart_describes(runner) -> None:
    objs, r = runner
    args = run_flags(container(objs)["args"])
    assert args.config == "/etc/kubesched/config.yaml" and args.log_format == "json"
    assert (r.options.qps, r.options.burst) == (50, 100)
    assert r.options.leader_elect is True and r.elector is not None
    lease = r.elector.config
    role = one(objs, "Role")
    assert lease.namespace == role["metadata"]["namespace"] == "sched-system"
    assert [lease.name] == role["rules"][1]["resourceNames"] == ["kubesched"]
    assert (lease.lease_duration, lease.renew_deadline, lease.retry_period) == (15, 10, 2)
    assert list(r.sched.frameworks) == ["kubesched"]
    # SIGTERM: the binds in flight get their time before the kubelet's SIGKILL
    grace = one(objs, "Deployment")["spec"]["template"]["spec"]["terminationGracePeriodSeconds"]
    assert r.options.shutdown_timeout == 20 and grace == 30


def test_every_watched_resource_is_granted(runner) -> None:
    """RBAC follows the code: each informer's list and watch is allowed by the ClusterRole."""
    objs, r = runner
    rules = granted(one(objs, "ClusterRole"))
    watched = {api_group_resource(inf.resource.path) for inf in r.informers}
    assert {("", "pods"), ("", "nodes"), ("apps", "replicasets")} <= watched
    for group, resource in watched:
        assert {"list", "watch"} <= rules.get((group, resource, None), set()), (group, resource)


def test_scheduler_probes_hit_the_runners_server(runner) -> None:
    objs, r = runner
    c = container(objs)
    assert r.http is not None
    r.http.start()
    probes = probe_paths(c)
    assert probes == {"livenessProbe": ("/livez", "metrics"), "readinessProbe": ("/readyz", "metrics")}
    assert r.http.url.startswith("https://")
    assert {p["httpGet"]["scheme"] for p in (c["livenessProbe"], c["readinessProbe"])} == {"HTTPS"}
    ctx = https_context(objs)  # the kubelet does not verify probe certificates; Prometheus does
    assert get(r.http.url + "/livez", ctx)[0] == 200
    with pytest.raises(urllib.error.HTTPError) as err:  # caches not synced yet: not ready
        get(r.http.url + "/readyz", ctx)
    assert err.value.code == 503
    r.ready.set()
    assert get(r.http.url + "/readyz", ctx)[0] == 200
    # /metrics: the token of the generated Secret (what the ServiceMonitor sends), or 401
    with pytest.raises(urllib.error.HTTPError) as err:
        get(r.http.url + "/metrics", ctx)
    assert err.value.code == 401
    token = next(o for o in objs if o["kind"] == "Secret" and o["metadata"]["name"].endswith("-metrics-token"))
    status, body = get(r.http.url + "/metrics", ctx, base64.b64decode(token["data"]["token"]).decode())
    assert status == 200 and "scheduler_pending_pods" in body


def test_scheduler_ports_agree() -> None:
    objs = objects(render())
    c = container(objs)
    _, port = parse_listen(run_flags(c["args"]).metrics_listen)
    (cport,) = c["ports"]
    assert (cport["name"], cport["containerPort"]) == ("metrics", port) == ("metrics", 10251)
    svc = one(objs, "Service")
    assert svc["spec"]["ports"] == [{"name": "metrics", "port": 10251, "targetPort": "metrics", "protocol": "TCP"}]
    assert svc["spec"]["selector"].items() <= one(objs, "Deployment")["spec"]["template"]["metadata"]["labels"].items()


def test_metrics_port_and_log_format_are_values() -> None:
    objs = objects(render({"metrics": {"port": 9100}, "logFormat": "text"}))
    c = container(objs)
    args = run_flags(c["args"])
    assert parse_listen(args.metrics_listen)[1] == 9100 == c["ports"][0]["containerPort"]
    assert args.log_format == "text"
    assert one(objs, "Service")["spec"]["ports"][0]["port"] == 9100


def test_extender_mode_serves_what_the_chart_promises(tmp_path: Path) -> None:
    """Without watchCluster (the watching extender: test_deploy_extender_watch.py)."""
    values = {"mode": "extender", "extender": {"watchCluster": False}, "tls": {"enabled": False}, "metricsAuth": {"enabled": False}}
    objs = objects(render(values))
    c = container(objs)
    args = parse_cli(c["args"])
    assert args.command == "extender"
    host, port = parse_listen(args.listen)
    assert host == "0.0.0.0"  # reachable through the Service
    (cport,) = c["ports"]
    assert (cport["name"], cport["containerPort"]) == ("http", port) == ("http", 8888)
    assert one(objs, "Service")["spec"]["ports"][0]["targetPort"] == "http"
    assert {name for _, name in probe_paths(c).values()} == {"http"}

    config = tmp_path / "config.yaml"
    config.write_text(one(objs, "ConfigMap")["data"]["config.yaml"])
    registry = build_registry()
    ext = Extender(build_config(str(config), registry), registry, ClusterObjects(), seed=1, metrics=SchedulerMetrics())
    with ext.server(parse_listen("127.0.0.1:0"), args.url_prefix) as server:
        for path, _ in probe_paths(c).values():
            assert get(server.url + path)[0] == 200, path
        # the urlPrefix NOTES.txt tells kube-scheduler to use
        notes = render(values)["NOTES.txt"]
        prefix = yaml.safe_load(notes.split("extenders:", 1)[1].split("(see", 1)[0])[0]["urlPrefix"]
        path = "/" + prefix.split("://", 1)[1].split("/", 1)[1] + "/filter"
        body = {
            "Pod": make_pod("web", requests={"cpu": "1"}),
            "Nodes": {"items": [make_node("n1", cpu="4", memory="8Gi"), make_node("n2", cpu="500m", memory="8Gi")]},
        }
        req = urllib.request.Request(server.url + path, data=json.dumps(body).encode(), method="POST")
        with urllib.request.urlopen(req, timeout=5) as resp:  # noqa: S310 - loopback only
            result = json.loads(resp.read())
        assert [n["metadata"]["name"] for n in result["Nodes"]["items"]] == ["n1"]
        # more than n2 could ever hold: NodeResourcesFit calls that unresolvable
        assert {**result["FailedNodes"], **result["FailedAndUnresolvableNodes"]} == {"n2": "Insufficient cpu"}
        assert "kubesched_extender_requests_total" in get(server.url + "/metrics")[1]


@pytest.mark.parametrize("mode", ["scheduler", "extender"])
def test_pods_run_locked_down(mode: str) -> None:
    objs = objects(render({"mode": mode}))
    pod = one(objs, "Deployment")["spec"]["template"]["spec"]
    c = container(objs)
    assert pod["securityContext"]["runAsNonRoot"] is True and pod["securityContext"]["runAsUser"] != 0
    assert c["securityContext"]["readOnlyRootFilesystem"] is True
    assert c["securityContext"]["allowPrivilegeEscalation"] is False
    assert c["securityContext"]["capabilities"] == {"drop": ["ALL"]}
    # the only writable place is an emptyDir at /tmp (MPLCONFIGDIR points into it)
    tmp = next(m for m in c["volumeMounts"] if m["mountPath"] == "/tmp")
    assert "emptyDir" in next(v for v in pod["volumes"] if v["name"] == tmp["name"])
    assert {e["name"]: e["value"] for e in c["env"]}["MPLCONFIGDIR"].startswith("/tmp/")
    assert c["resources"]["requests"] and c["resources"]["limits"]["memory"]

"""What an operator watches of ``kubesched autoscale``, as of Cluster Autoscaler: the status
ConfigMap, events on pods, nodes and that ConfigMap (one Event per repeated message, its count
growing), and CA's metrics scraped over HTTP from the project's metrics server. The controller
runs iteration by iteration (``Controller.once``) against the test API server through the
unmodified official client; pods are made unschedulable as a scheduler marks them."""

from __future__ import annotations

import shutil
import time

import pytest
import yaml
from prometheus_client.parser import text_string_to_metric_families

from kubesched.autoscale.eligibility import SCALE_DOWN_DISABLED
from kubesched.autoscale.live import build_controller, metrics_server
from kubesched.autoscale.status import LAST_UPDATED
from kubesched.cli import build_parser
from tests.live.live_harness import events, http_get, node, pod
from tests.live.test_autoscale_live import AUTOSCALER as E2E_AUTOSCALER
from tests.live.test_autoscale_live import TOLERATE
from tests.plugins.loadaware.test_loadaware_prometheus import PrometheusServer

AUTOSCALER = E2E_AUTOSCALER.replace("unneededTime: 0.5", "unneededTime: 0")  # an unneeded node goes at once
UNSCHEDULABLE = {"phase": "Pending", "conditions": [
    {"type": "PodScheduled", "status": "False", "reason": "Unschedulable", "message": "0/1 nodes are available"}]}
READY = {"conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady"}]}
GROUP = "autoscaling.kubesched.io/node-group"


def controller(kubeconfig: str, tmp_path, *flags: str):  # noqa: ANN001, ANN201
    cfg = tmp_path / "as.yaml"
    cfg.write_text(AUTOSCALER)
    argv = ["autoscale", "--kubeconfig", kubeconfig, "--autoscaler", str(cfg), "--address", "127.0.0.1:0", *flags]
    args = build_parser().parse_args(argv)
    return args, build_controller(args)


def pending(name: str, cpu: str) -> dict:
    return {**pod(name, cpu=cpu, spec=TOLERATE), "status": UNSCHEDULABLE}


def ready_node(name: str, cpu: str, group: str | None = None, annotations: dict | None = None) -> dict:
    body = node(name, cpu=cpu, memory="16Gi")
    body["status"] = {**body["status"], **READY}
    if group:
        body["metadata"]["labels"][GROUP] = group
    if annotations:
        body["metadata"]["annotations"] = annotations
    return body


def status_of(kube_api) -> dict:  # noqa: ANN001
    cm = kube_api.get("ConfigMap", "cluster-autoscaler-status", "kube-system")
    assert cm is not None and LAST_UPDATED in cm["metadata"]["annotations"]
    return yaml.safe_load(cm["data"]["status"])


def group_status(status: dict, name: str) -> dict:
    return next(g for g in status["nodeGroups"] if g["name"] == name)


def scrape(url: str) -> dict[tuple[str, tuple], float]:
    code, body = http_get(url + "/metrics")
    assert code == 200
    return {(s.name, tuple(sorted(s.labels.items()))): s.value for f in text_string_to_metric_families(body) for s in f.samples}


def test_scale_up_and_empty_scale_down_as_an_operator_sees_them(kube_api, kubeconfig, tmp_path):
    kube_api.create(ready_node("base", "1"))
    args, ctl = controller(kubeconfig, tmp_path)
    http = metrics_server(args, ctl.metrics, lambda: ctl.iterations > 0)
    with http:
        # a pod no group can hold: one NotTriggerScaleUp Event, its count growing each iteration
        kube_api.create(pending("huge", "100"))
        for _ in range(3):
            ctl.once()
        (nt,) = events(kube_api, "NotTriggerScaleUp", "huge")
        assert nt["message"] == "pod didn't trigger scale-up: 2 Insufficient cpu"
        assert nt["count"] == 3 and nt["type"] == "Normal" and nt["source"]["component"] == "cluster-autoscaler"
        assert nt["involvedObject"]["kind"] == "Pod" and nt["involvedObject"]["namespace"] == "default"
        status = status_of(kube_api)
        assert status["autoscalerStatus"] == "Running"
        assert status["clusterWide"]["scaleUp"]["status"] == "NoActivity"
        assert status["clusterWide"]["health"]["nodeCounts"]["registered"] == {
            "total": 1, "ready": 1, "notStarted": 0, "unready": {"total": 0, "resourceUnready": 0}}
        assert status["clusterWide"]["scaleDown"] == {"status": "NoCandidates", **{k: status["clusterWide"]["scaleDown"][k] for k in ("lastProbeTime", "lastTransitionTime")}}

        # a pod the big group holds (3 CPUs): scale-up, its events and the group in progress
        kube_api.create(pending("big-one", "3"))
        ctl.once()
        (tr,) = events(kube_api, "TriggeredScaleUp", "big-one")
        assert tr["message"] == "pod triggered scale-up: [{big 0->1 (max: 2)}]"
        (up,) = events(kube_api, "ScaledUpGroup")
        assert up["involvedObject"]["kind"] == "ConfigMap" and up["involvedObject"]["name"] == "cluster-autoscaler-status"
        assert up["involvedObject"]["namespace"] == "kube-system" and up["metadata"]["namespace"] == "kube-system"
        assert up["message"] == "Scale-up: setting group big size to 1 instead of 0 (max: 2)"
        assert events(kube_api, "NotTriggerScaleUp", "huge")[0]["count"] == 3  # not in a loop that scaled up
        big = group_status(status_of(kube_api), "big")
        assert big["scaleUp"]["status"] == "InProgress" and big["health"]["cloudProviderTarget"] == 1
        assert (big["health"]["minSize"], big["health"]["maxSize"]) == (0, 2)
        assert big["health"]["nodeCounts"]["unregistered"] == 1
        assert status_of(kube_api)["clusterWide"]["scaleUp"]["status"] == "InProgress"
        m = scrape(http.url)
        assert m[("cluster_autoscaler_scaled_up_nodes_total", ())] == 1
        assert m[("cluster_autoscaler_unschedulable_pods_count", ())] == 2
        assert m[("cluster_autoscaler_node_groups_count", (("node_group_type", "autoscaled"),))] == 2
        assert m[("cluster_autoscaler_function_duration_seconds_count", (("function", "main"),))] == 4
        assert abs(m[("cluster_autoscaler_last_activity", (("activity", "scaleUp"),))] - time.time()) < 60

        # the pods go: the new node is empty and removed at once (unneededTime 0)
        kube_api.delete("Pod", "big-one", "default")
        kube_api.delete("Pod", "huge", "default")
        ctl.once()
        assert group_status(status_of(kube_api), "big")["scaleUp"]["status"] == "NoActivity"
        for _ in range(3):
            if kube_api.get("Node", "big-1") is None:
                break
            ctl.once()
        assert kube_api.get("Node", "big-1") is None
        (empty,) = events(kube_api, "ScaleDownEmpty")
        assert empty["message"] == 'Scale-down: removing empty node "big-1"'
        (marked,) = [e for e in events(kube_api, "ScaleDown") if e["involvedObject"]["kind"] == "Node"]
        assert marked["involvedObject"]["name"] == "big-1" and marked["metadata"]["namespace"] == "default"
        assert marked["message"] == "marked the node as toBeDeleted/unschedulable"
        m = scrape(http.url)
        assert m[("cluster_autoscaler_scaled_down_nodes_total", (("reason", "empty"),))] == 1
        assert m[("cluster_autoscaler_scaled_down_nodes_total", (("reason", "underutilized"),))] == 0
        assert m[("cluster_autoscaler_evicted_pods_total", ())] == 0
        assert m[("cluster_autoscaler_nodes_count", (("state", "ready"),))] >= 1
        # base is of no node group: unremovable, NotAutoscaled
        assert m[("cluster_autoscaler_unremovable_nodes_count", (("reason", "NotAutoscaled"),))] == 1


def test_drain_events_unremovable_reasons_and_the_status_flags(kube_api, kubeconfig, tmp_path):
    """Two big nodes, one pod each; big-v0 is protected by the annotation: big-v1 is drained."""
    args, ctl = controller(kubeconfig, tmp_path, "--namespace", "default", "--status-config-map-name", "ca-status")
    for i in range(2):
        kube_api.create(ready_node(f"big-v{i}", "8", "big", {SCALE_DOWN_DISABLED: "true"} if i == 0 else None))
        kube_api.create(pod(f"p{i}", cpu="1", spec={**TOLERATE, "nodeName": f"big-v{i}"}))
    for _ in range(5):
        ctl.once()
        if ctl.loop.stats.scale_downs:
            break
    assert kube_api.get("Node", "big-v1") is None
    (evicted,) = [e for e in events(kube_api, "ScaleDown") if e["involvedObject"]["kind"] == "Pod"]
    assert evicted["involvedObject"]["name"] == "p1" and evicted["message"] == "deleting pod for node scale down"
    (drained,) = [e for e in events(kube_api, "ScaleDown") if e["involvedObject"]["kind"] == "ConfigMap"]
    assert drained["message"] == "Scale-down: node big-v1 removed with drain"
    assert drained["involvedObject"]["name"] == "ca-status" and drained["involvedObject"]["namespace"] == "default"
    assert kube_api.get("ConfigMap", "cluster-autoscaler-status", "kube-system") is None
    assert kube_api.get("ConfigMap", "ca-status", "default") is not None
    metrics = dict((s.name, s) for f in text_string_to_metric_families(ctl.metrics.exposition()[0].decode()) for s in f.samples
                   if s.labels.get("reason") in (None, "ScaleDownDisabledAnnotation", "underutilized"))
    assert metrics["cluster_autoscaler_unremovable_nodes_count"].value == 1  # big-v0
    assert metrics["cluster_autoscaler_scaled_down_nodes_total"].value == 1
    assert metrics["cluster_autoscaler_evicted_pods_total"].value == 1


def test_status_configmap_off(kube_api, kubeconfig, tmp_path):
    """--write-status-configmap=false: no ConfigMap, and no events on it (CA's LogEventRecorder
    is inactive then); the pods' events stay."""
    kube_api.create(ready_node("base", "1"))
    _, ctl = controller(kubeconfig, tmp_path, "--write-status-configmap=false")
    kube_api.create(pending("big-one", "3"))
    ctl.once()
    assert kube_api.list("ConfigMap", "kube-system") == []
    assert events(kube_api, "TriggeredScaleUp", "big-one") and not events(kube_api, "ScaledUpGroup")


def test_a_real_prometheus_scrapes_the_autoscalers_metrics(kube_api, kubeconfig, tmp_path):
    """Prometheus (the Debian package, on loopback) scrapes --address as it would scrape CA."""
    binary = shutil.which("prometheus")
    if binary is None:
        pytest.fail("the prometheus binary is not on PATH: run scripts/install-test-deps.sh (Debian package prometheus)")
    kube_api.create(ready_node("base", "1"))
    args, ctl = controller(kubeconfig, tmp_path)
    kube_api.create(pending("big-one", "3"))
    ctl.once()
    with metrics_server(args, ctl.metrics, lambda: ctl.iterations > 0) as http:
        host, port = http.address
        config = tmp_path / "prometheus.yml"
        config.write_text(
            "global: {scrape_interval: 1s, scrape_timeout: 1s}\n"
            f"scrape_configs: [{{job_name: cluster-autoscaler, static_configs: [{{targets: ['{host}:{port}']}}]}}]\n"
        )
        prom = PrometheusServer(binary, config, tmp_path / "data", tmp_path / "prometheus.log")
        prom.start()
        try:
            prom.wait_for("cluster_autoscaler_scaled_up_nodes_total", lambda r: bool(r) and float(r[0]["value"][1]) == 1, timeout=30)
            (row,) = prom.query('cluster_autoscaler_node_groups_count{node_group_type="autoscaled"}')
            assert row["metric"]["job"] == "cluster-autoscaler" and float(row["value"][1]) == 2
        finally:
            prom.stop()


def test_a_node_protected_after_the_listing_is_not_reported_as_removed(kube_api, kubeconfig, tmp_path):
    """The KWOK provider reads the node afresh and leaves it when an operator annotated it since
    the listing: no scale-down events, no scale-down counted."""
    kube_api.create(ready_node("big-v0", "8", "big"))
    _, ctl = controller(kubeconfig, tmp_path)
    listed = ctl.core.list_node

    def list_then_protect(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        out = listed(*args, **kwargs)
        kube_api.patch("Node", "big-v0", {"metadata": {"annotations": {SCALE_DOWN_DISABLED: "true"}}})
        return out

    ctl.core.list_node = list_then_protect
    ctl.once()
    assert kube_api.get("Node", "big-v0") is not None
    assert ctl.provider.declined == {"big-v0"}
    assert not events(kube_api, "ScaleDownEmpty") and not events(kube_api, "ScaleDown")
    assert ctl.metrics.registry.get_sample_value("cluster_autoscaler_scaled_down_nodes_total", {"reason": "empty"}) == 0

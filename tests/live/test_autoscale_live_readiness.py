"""Node readiness live: ``kubesched autoscale`` reads each Node's Ready condition and
creationTimestamp from the API server (the same ClusterState as the simulator,
kubesched.autoscale.health). Unready nodes created just now are NotStarted; past
``maxNodeStartupTime`` too many unready nodes make the cluster unhealthy: the status ConfigMap
says so, ``cluster_safe_to_autoscale`` is 0 and the pending pod gets no node; once the nodes
report Ready the loop scales up again."""

from __future__ import annotations

from kubesched.autoscale.live import build_controller, metrics_server
from kubesched.cli import build_parser
from tests.live.live_harness import events, http_get
from tests.live.test_autoscale_live_watch import (
    AUTOSCALER,
    controller,
    pending,
    ready_node,
    scrape,
    status_of,
)


def unready(body: dict) -> dict:
    body["status"]["conditions"] = [{"type": "Ready", "status": "False", "reason": "KubeletNotReady"}]
    return body


def sick_cluster(kube_api) -> None:  # noqa: ANN001
    kube_api.create(ready_node("base", "1"))
    for i in range(4):  # 4 unready of 5: more than 3 and more than 45 %
        kube_api.create(unready(ready_node(f"sick-{i}", "1")))
    kube_api.create(pending("big-one", "3"))


def test_unready_nodes_just_created_are_not_started(kube_api, kubeconfig, tmp_path):
    sick_cluster(kube_api)
    _, ctl = controller(kubeconfig, tmp_path)
    ctl.once()
    health = status_of(kube_api)["clusterWide"]["health"]
    assert health["status"] == "Healthy"
    assert health["nodeCounts"]["registered"] == {"total": 5, "ready": 1, "notStarted": 4, "unready": {"total": 0, "resourceUnready": 0}}


def test_an_unhealthy_cluster_waits_until_its_nodes_are_ready(kube_api, kubeconfig, tmp_path):
    sick_cluster(kube_api)
    cfg = tmp_path / "as.yaml"
    cfg.write_text(AUTOSCALER + "flags: [--max-node-startup-time=0s]\n")  # unready at once
    args = build_parser().parse_args(["autoscale", "--kubeconfig", kubeconfig, "--autoscaler", str(cfg), "--address", "127.0.0.1:0"])
    ctl = build_controller(args)
    http = metrics_server(args, ctl.metrics, lambda: ctl.iterations > 0)
    with http:
        ctl.once()
        status = status_of(kube_api)
        assert status["clusterWide"]["health"]["status"] == "Unhealthy"
        assert status["clusterWide"]["health"]["nodeCounts"]["registered"]["unready"]["total"] == 4
        assert not ctl.loop.upcoming
        assert scrape(http.url)[("cluster_autoscaler_cluster_safe_to_autoscale", ())] == 0
        (warning,) = events(kube_api, "ClusterUnhealthy")  # on the status ConfigMap, as CA's LogRecorder
        assert (warning["type"], warning["message"], warning["involvedObject"]["kind"]) == ("Warning", "Cluster is unhealthy", "ConfigMap")
        assert not events(kube_api, "NotTriggerScaleUp")  # the iteration stopped before scale-up
        for i in range(4):
            n = kube_api.get("Node", f"sick-{i}")
            n["status"]["conditions"] = [{"type": "Ready", "status": "True", "reason": "KubeletReady"}]
            kube_api.update(n)
        ctl.once()
        assert status_of(kube_api)["clusterWide"]["health"]["status"] == "Healthy"
        assert [u.group for u in ctl.loop.upcoming.values()] == ["big"]
        assert http_get(http.url + "/healthz")[0] == 200

"""The default chart's ClusterRole against what `kubesched run` really asks of an API server
when pods have volumes and ResourceClaims (tests/kubeapi, the PV controller of tests/live):
every request, PreBind's updates included, is one the role grants."""

from __future__ import annotations

from deploy_testlib import granted, objects, one, render
from test_deploy_extender_watch import api_call

from kubesched.testing_storage import make_csi_node, make_pvc, make_storage_class, pvc_volume
from tests.kubeapi import KubeAPIServer
from tests.kubeapi.fixtures import kube_api, kubeconfig  # noqa: F401
from tests.live.dra_builders import device_class, gpu_claim, gpu_slice
from tests.live.live_harness import node, node_of, pod, running
from tests.live.pv_controller import PVController


def test_every_request_of_run_with_volumes_and_claims_is_granted(kube_api: KubeAPIServer, kubeconfig: str) -> None:  # noqa: F811
    kube_api.create(node("n1"))
    kube_api.create(device_class())
    kube_api.create(gpu_slice("n1", 1))
    kube_api.create(make_csi_node("n1", {"csi.example.com": None}))
    kube_api.create(make_storage_class("fast", mode="WaitForFirstConsumer"))
    kube_api.create(make_pvc("scratch", storage_class="fast", uid="uid-scratch"))
    kube_api.create(pod("job", spec={"volumes": [pvc_volume("scratch", "data")]}))
    kube_api.create(gpu_claim("c0"))
    kube_api.create(pod("trainer", spec={"resourceClaims": [{"name": "gpu", "resourceClaimName": "c0"}]}))
    kube_api.fail_next("PUT", r"/resourceclaims/c0/status$", 409)  # so the re-read (GET) happens too
    with PVController(kube_api), running(kubeconfig):
        assert kube_api.wait_for(lambda: node_of(kube_api, "job") and node_of(kube_api, "trainer"), 15)
    rules = granted(one(objects(render()), "ClusterRole"))
    calls = {api_call(method, path) for method, path in kube_api.requests}
    assert {
        ("", "persistentvolumeclaims", "update"),
        ("resource.k8s.io", "resourceclaims", "update"),
        ("resource.k8s.io", "resourceclaims", "get"),
        ("resource.k8s.io", "resourceclaims/status", "update"),
        ("resource.k8s.io", "resourceslices", "watch"),
        ("storage.k8s.io", "csistoragecapacities", "list"),
    } <= calls
    for group, resource, verb in calls:
        if group == "coordination.k8s.io":
            continue  # the Lease: the namespaced Role's, checked in test_deploy_rbac.py
        assert verb in rules.get((group, resource, None), set()), (group, resource, verb)


def test_every_request_of_ui_on_a_live_cluster_is_a_read_the_viewer_role_grants(
    kube_api: KubeAPIServer, kubeconfig: str  # noqa: F811
) -> None:
    from kubesched.app import build_registry
    from kubesched.ui.live import connect, open_live
    from kubesched.ui.sources import parse_config_text
    from tests.ui.conftest import ui_client

    kube_api.create(node("n1"))
    kube_api.create(pod("web", cpu="8", scheduler="default-scheduler"))
    registry = build_registry()
    ws = open_live(connect(kubeconfig, None), parse_config_text("", registry), "", registry)
    try:
        c = ui_client(ws)
        assert kube_api.wait_for(lambda: c.get("/api/cluster").json()["pending"]["pods"], 10)
        assert c.get("/api/decision?pod=default/web").status_code == 200
    finally:
        ws.live.close()
    rules = granted(one([r for r in objects(render({"rbac": {"viewer": {"create": True}}}))
                         if r["metadata"]["name"] == "kubesched-viewer"], "ClusterRole"))
    calls = {api_call(method, path) for method, path in kube_api.requests}
    assert ("", "pods", "watch") in calls and ("resource.k8s.io", "resourceclaims", "list") in calls
    assert {(g, res, verb) for g, res, verb in calls if verb not in rules.get((g, res, None), set())} == set()

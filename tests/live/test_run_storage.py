"""``kubesched run`` with volumes, against the test API server: the storage kinds are watched,
VolumeZone/VolumeBinding place pods on their volumes' zone, and VolumeBinding's PreBind binds
claims through the API (a PV's claimRef, a claim's selected node) and waits until the PV
controller (tests/live/pv_controller.py, as kube-controller-manager and a provisioner would)
has bound them, before the pod's binding; it gives up after bindTimeoutSeconds."""

from __future__ import annotations

import time
from pathlib import Path

import yaml
from live_harness import binding_posts, events, node, node_of, pod, running
from pv_controller import BIND_COMPLETED, SELECTED_NODE, ZONE, PVController

from kubesched.testing_storage import make_csi_node, make_pv, make_pvc, make_storage_class, pvc_volume
from tests.kubeapi import KubeAPIServer


def zonal_nodes(api: KubeAPIServer) -> None:
    """Three roomy nodes in zone a and one small one in zone b: left to resources alone, a pod
    goes to zone a."""
    for name, zone, cpu in (("a1", "a", "16"), ("a2", "a", "16"), ("a3", "a", "16"), ("b1", "b", "2")):
        api.create(node(name, cpu=cpu, labels={ZONE: zone, "kubernetes.io/hostname": name}))
        api.create(make_csi_node(name, {"csi.example.com": None}, topology_keys={"csi.example.com": [ZONE]}))


def zone_b() -> list[dict]:
    return [{"matchExpressions": [{"key": ZONE, "operator": "In", "values": ["b"]}]}]


def claim_pod(name: str, claim: str) -> dict:
    return pod(name, spec={"volumes": [pvc_volume(claim, "data")]})


def first_request(api: KubeAPIServer, method: str, fragment: str) -> int:
    return next(i for i, (m, p) in enumerate(api.requests) if m == method and fragment in p)


def test_statefulset_pod_lands_in_its_bound_volumes_zone(kube_api: KubeAPIServer, kubeconfig: str) -> None:
    zonal_nodes(kube_api)
    kube_api.create(make_storage_class("standard", mode="Immediate"))
    kube_api.create(make_pv("pv-web-0", storage_class="standard", capacity="10Gi", node_affinity=zone_b(),
                            claim=("default", "data-web-0", "uid-data-web-0"), phase="Bound"))
    kube_api.create(make_pvc("data-web-0", storage_class="standard", request="10Gi", volume_name="pv-web-0",
                             uid="uid-data-web-0", phase="Bound", annotations={BIND_COMPLETED: "yes"}))
    kube_api.create(claim_pod("web-0", "data-web-0"))
    kube_api.create(pod("plain"))  # no volume: resources alone send it to zone a
    with running(kubeconfig):
        assert kube_api.wait_for(lambda: node_of(kube_api, "web-0") and node_of(kube_api, "plain"), 10)
    assert node_of(kube_api, "web-0") == "b1"
    assert node_of(kube_api, "plain", "default").startswith("a")
    # the claim was bound already: nothing written besides the binding
    assert not [p for m, p in kube_api.requests if m == "PUT" and "persistentvolume" in p]


def test_wait_for_first_consumer_binds_an_available_pv_through_the_api(kube_api: KubeAPIServer, kubeconfig: str) -> None:
    zonal_nodes(kube_api)
    kube_api.create(make_storage_class("local", mode="WaitForFirstConsumer", provisioner="kubernetes.io/no-provisioner"))
    kube_api.create(make_pv("pv-b", storage_class="local", capacity="10Gi", node_affinity=zone_b()))
    kube_api.create(make_pvc("data", storage_class="local", request="5Gi", uid="uid-data"))
    kube_api.create(claim_pod("db", "data"))
    with PVController(kube_api) as ctl, running(kubeconfig):
        assert kube_api.wait_for(lambda: node_of(kube_api, "db"), 10)
    assert node_of(kube_api, "db") == "b1" and ctl.bound == ["data"]
    pv, claim = kube_api.get("PersistentVolume", "pv-b"), kube_api.get("PersistentVolumeClaim", "data", "default")
    assert pv["spec"]["claimRef"]["uid"] == "uid-data" and claim["spec"]["volumeName"] == "pv-b"
    assert pv["metadata"]["annotations"]["pv.kubernetes.io/bound-by-controller"] == "yes"
    # PreBind's PUT of the PV, then the pod's binding once the controller had bound the claim
    assert first_request(kube_api, "PUT", "/persistentvolumes/pv-b") < first_request(kube_api, "POST", "/pods/db/binding")


def test_wait_for_first_consumer_claim_is_provisioned_on_the_chosen_node(kube_api: KubeAPIServer, kubeconfig: str) -> None:
    zonal_nodes(kube_api)
    kube_api.create(make_storage_class("fast", mode="WaitForFirstConsumer", allowed_topologies=[{ZONE: ["b"]}]))
    kube_api.create(make_pvc("scratch", storage_class="fast", request="1Gi", uid="uid-scratch"))
    kube_api.create(claim_pod("job", "scratch"))
    with PVController(kube_api) as ctl, running(kubeconfig):
        assert kube_api.wait_for(lambda: node_of(kube_api, "job"), 10)
    claim = kube_api.get("PersistentVolumeClaim", "scratch", "default")
    assert node_of(kube_api, "job") == "b1" == claim["metadata"]["annotations"][SELECTED_NODE]
    assert ctl.provisioned == ["pvc-uid-scratch"] == [claim["spec"]["volumeName"]]
    pv = kube_api.get("PersistentVolume", "pvc-uid-scratch")
    assert pv["spec"]["claimRef"]["name"] == "scratch"
    assert first_request(kube_api, "PUT", "/persistentvolumeclaims/scratch") < first_request(
        kube_api, "POST", "/pods/job/binding"
    )


def timeout_config(tmp_path: Path, seconds: int) -> str:
    config = tmp_path / "sched.yaml"
    config.write_text(yaml.safe_dump({
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "profiles": [{"schedulerName": "kubesched",
                      "pluginConfig": [{"name": "VolumeBinding", "args": {"bindTimeoutSeconds": seconds}}]}],
    }))
    return str(config)


def test_binding_fails_when_no_controller_binds_the_claim_in_time(
    kube_api: KubeAPIServer, kubeconfig: str, tmp_path: Path
) -> None:
    """No PV controller: PreBind writes the selected node, waits bindTimeoutSeconds (1 s) and
    fails the binding cycle with upstream's error; the pod is not bound and is tried again."""
    zonal_nodes(kube_api)
    kube_api.create(make_storage_class("fast", mode="WaitForFirstConsumer"))
    kube_api.create(make_pvc("scratch", storage_class="fast", uid="uid-scratch"))
    kube_api.create(claim_pod("job", "scratch"))
    with running(kubeconfig, "--config", timeout_config(tmp_path, 1)) as r:
        t0 = time.monotonic()
        assert kube_api.wait_for(lambda: events(kube_api, "FailedScheduling", "job"), 10)
        waited = time.monotonic() - t0
        # the event is posted from the binding cycle, the outcome counted after it: wait for both
        assert kube_api.wait_for(lambda: r.outcomes["requeued"] >= 1, 10)
    message = events(kube_api, "FailedScheduling", "job")[0]["message"]
    assert "binding volumes: context deadline exceeded" in message
    assert 0.9 <= waited < 8
    assert not binding_posts(kube_api, "job") and node_of(kube_api, "job") is None


def test_a_provisioner_that_gives_up_fails_the_binding(kube_api: KubeAPIServer, kubeconfig: str) -> None:
    """A provisioner signals failure by removing the selected-node annotation: checkBindings'
    "provisioning failed" ends the wait at once."""
    zonal_nodes(kube_api)
    kube_api.create(make_storage_class("fast", mode="WaitForFirstConsumer"))
    kube_api.create(make_pvc("scratch", storage_class="fast", uid="uid-scratch"))
    kube_api.create(claim_pod("job", "scratch"))
    with PVController(kube_api, fail=True), running(kubeconfig):
        assert kube_api.wait_for(lambda: events(kube_api, "FailedScheduling", "job"), 10)
    message = events(kube_api, "FailedScheduling", "job")[0]["message"]
    assert 'binding volumes: provisioning failed for PVC "scratch"' in message
    assert not binding_posts(kube_api, "job")


def test_a_binding_waiting_for_its_volume_holds_up_no_other_pod(
    kube_api: KubeAPIServer, kubeconfig: str, tmp_path: Path
) -> None:
    """With --max-in-flight-bindings 1, a pod whose PreBind waits for a provisioner that never
    comes (bindTimeoutSeconds 2) does not count toward the bound nor hold a binder: pods without
    volumes created meanwhile bind at once."""
    zonal_nodes(kube_api)
    kube_api.create(make_storage_class("fast", mode="WaitForFirstConsumer"))
    kube_api.create(make_pvc("scratch", storage_class="fast", uid="uid-scratch"))
    kube_api.create(claim_pod("job", "scratch"))
    flags = ("--config", timeout_config(tmp_path, 2), "--max-in-flight-bindings", "1", "--bind-workers", "1")
    with running(kubeconfig, *flags):
        # PreBind has written the selected node: the job's binding is now waiting
        assert kube_api.wait_for(
            lambda: SELECTED_NODE in (kube_api.get("PersistentVolumeClaim", "scratch", "default") or {})["metadata"].get(
                "annotations", {}
            ),
            10,
        )
        t0 = time.monotonic()
        for i in range(3):
            kube_api.create(pod(f"web-{i}"))
        assert kube_api.wait_for(lambda: all(node_of(kube_api, f"web-{i}") for i in range(3)), 10)
        took = time.monotonic() - t0
        assert not events(kube_api, "FailedScheduling", "job")  # still waiting
    assert took < 1.5

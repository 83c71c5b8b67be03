"""The test-side helpers (create/get/list/update/patch/delete) and the patch flavours over HTTP."""

from __future__ import annotations

import pytest
from kubernetes import client

from tests.kubeapi import APIError, KubeAPIServer
from tests.kubeapi.fixtures import kube_api, kubeconfig  # noqa: F401


def test_helpers_store_like_the_api_and_emit_events(kube_api, core, stream):  # noqa: F811
    rv = core.list_node().metadata.resource_version
    s = stream(core.list_node, resource_version=rv)
    node = kube_api.create({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1", "namespace": "x"},
                            "status": {"allocatable": {"cpu": "4"}}})
    meta = node["metadata"]
    assert "namespace" not in meta and meta["uid"] and meta["creationTimestamp"] and meta["generation"] == 1
    assert node["status"] == {"allocatable": {"cpu": "4"}}  # the helper keeps status (tests need it)
    with pytest.raises(APIError) as err:
        kube_api.create(node)
    assert err.value.code == 409 and err.value.body["reason"] == "AlreadyExists"
    node["spec"] = {"unschedulable": True}
    updated = kube_api.update(node)
    assert updated["metadata"]["generation"] == 2
    with pytest.raises(APIError) as err:  # node still carries the first resourceVersion
        kube_api.update(node)
    assert err.value.code == 409 and err.value.body["reason"] == "Conflict"
    kube_api.patch("Node", "n1", {"metadata": {"labels": {"zone": "a"}}})
    assert kube_api.get("Node", "n1")["metadata"]["labels"] == {"zone": "a"}
    assert [n["metadata"]["name"] for n in kube_api.list("Node")] == ["n1"]
    kube_api.delete("Node", "n1")
    assert kube_api.get("Node", "n1") is None and kube_api.list("Node") == []
    assert kube_api.wait_for(lambda: len(s.events) == 4)
    assert s.types() == [("ADDED", "n1"), ("MODIFIED", "n1"), ("MODIFIED", "n1"), ("DELETED", "n1")]
    with pytest.raises(KeyError, match="Widget"):
        kube_api.get("Widget", "w")


def test_patch_flavours_over_http(kube_api, core):  # noqa: F811
    kube_api.create({"kind": "Pod", "metadata": {"name": "p", "labels": {"a": "1", "b": "2"},
                                                 "finalizers": ["x"]},
                     "spec": {"containers": [{"name": "c", "image": "v1"}, {"name": "d", "image": "v1"}]}})
    # A dict body goes as a strategic merge patch: containers merge by name, null deletes.
    core.patch_namespaced_pod("p", "default", {"metadata": {"labels": {"a": None}, "finalizers": ["y"]},
                                               "spec": {"containers": [{"name": "d", "image": "v2"}]}})
    got = kube_api.get("Pod", "p")
    assert got["metadata"]["labels"] == {"b": "2"} and got["metadata"]["finalizers"] == ["x", "y"]
    assert [(c["name"], c["image"]) for c in got["spec"]["containers"]] == [("c", "v1"), ("d", "v2")]
    # A list body goes as a JSON patch.
    core.patch_namespaced_pod("p", "default", [{"op": "replace", "path": "/spec/containers/0/image", "value": "v3"},
                                               {"op": "remove", "path": "/metadata/labels/b"}])
    got = kube_api.get("Pod", "p")
    assert got["spec"]["containers"][0]["image"] == "v3" and got["metadata"].get("labels") == {}
    with pytest.raises(client.ApiException) as err:
        core.patch_namespaced_pod("p", "default", [{"op": "test", "path": "/spec/containers/0/image", "value": "no"}])
    assert err.value.status == 400
    # A patch carrying a stale resourceVersion is a conflict.
    stale = str(int(got["metadata"]["resourceVersion"]) - 1)
    with pytest.raises(client.ApiException) as err:
        core.patch_namespaced_pod("p", "default", {"metadata": {"resourceVersion": stale, "labels": {"z": "1"}}})
    assert err.value.status == 409
    core.create_namespaced_pod_eviction("p", "default", {"metadata": {"name": "p"}})
    assert kube_api.get("Pod", "p") is None


def test_bounded_history_expires_old_watch_positions():
    with KubeAPIServer(max_history=10, preload=False) as api:
        v1 = client.CoreV1Api(client.ApiClient(api.client_configuration()))
        rv = v1.list_config_map_for_all_namespaces().metadata.resource_version
        for i in range(12):
            api.create({"kind": "ConfigMap", "metadata": {"name": f"cm{i}"}})
        resp = v1.list_config_map_for_all_namespaces(watch=True, resource_version=rv, timeout_seconds=1,
                                                     _preload_content=False)
        assert b'"type":"ERROR"' in resp.data and b'"code":410' in resp.data
        recent = str(api.resource_version - 2)
        resp = v1.list_config_map_for_all_namespaces(watch=True, resource_version=recent, timeout_seconds=1,
                                                     _preload_content=False)
        assert resp.data.count(b'"type":"ADDED"') == 2

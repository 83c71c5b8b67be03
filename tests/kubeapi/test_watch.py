"""List + watch through the official client: order, bookmarks, 410, selectors, dropped and hung streams."""

from __future__ import annotations

import json
import time

import pytest
import urllib3
from kubernetes import client, watch

from tests.kubeapi import KubeAPIServer
from tests.kubeapi.fixtures import kube_api, kubeconfig  # noqa: F401


def pod(name: str, **spec: object) -> dict:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "labels": {"app": "web"}},
            "spec": {"containers": [{"name": "c", "image": "nginx"}], **spec}}


def test_watch_from_list_rv_sees_later_changes_in_order(kube_api, core, stream):  # noqa: F811
    core.create_namespaced_pod("default", pod("p0"))
    listed = core.list_namespaced_pod("default")
    assert [p.metadata.name for p in listed.items] == ["p0"]
    rv = int(listed.metadata.resource_version)
    s = stream(core.list_namespaced_pod, "default", resource_version=str(rv))
    core.create_namespaced_pod("default", pod("p1"))
    core.create_node({"metadata": {"name": "n1"}})  # another kind: not on this watch
    core.patch_namespaced_pod("p0", "default", {"metadata": {"labels": {"tier": "a"}}})
    core.delete_namespaced_pod("p1", "default", grace_period_seconds=0)
    assert kube_api.wait_for(lambda: len(s.events) >= 3)
    assert s.types() == [("ADDED", "p1"), ("MODIFIED", "p0"), ("DELETED", "p1")]
    rvs = [int(e["object"].metadata.resource_version) for e in s.events]
    assert rv < rvs[0] < rvs[1] < rvs[2] == kube_api.resource_version
    assert isinstance(s.events[1]["object"], client.V1Pod)
    assert s.events[1]["object"].metadata.labels == {"app": "web", "tier": "a"}


def test_watch_without_rv_starts_with_the_current_state(kube_api, core, stream):  # noqa: F811
    for name in ("a", "b"):
        kube_api.create(pod(name))
    s = stream(core.list_pod_for_all_namespaces)
    assert kube_api.wait_for(lambda: len(s.events) >= 2)
    kube_api.create({**pod("c"), "metadata": {"name": "c", "namespace": "kube-system"}})
    assert kube_api.wait_for(lambda: len(s.events) >= 3)
    assert s.types() == [("ADDED", "a"), ("ADDED", "b"), ("ADDED", "c")]


def test_bookmarks_come_periodically_and_only_when_allowed(core, stream, tmp_path):
    with KubeAPIServer(bookmark_interval=0.1) as api:
        v1 = client.CoreV1Api(client.ApiClient(api.client_configuration()))
        rv = v1.list_node().metadata.resource_version
        with_bm = stream(v1.list_node, resource_version=rv, allow_watch_bookmarks=True)
        without = stream(v1.list_node, resource_version=rv)
        assert api.wait_for(lambda: sum(e["type"] == "BOOKMARK" for e in with_bm.events) >= 2)
        api.create({"kind": "Node", "metadata": {"name": "n1"}})
        assert api.wait_for(lambda: without.types() == [("ADDED", "n1")])
        assert api.wait_for(lambda: with_bm.events[-1]["type"] == "BOOKMARK"
                            and with_bm.events[-1]["raw_object"]["metadata"]["resourceVersion"]
                            == str(api.resource_version))
        assert [e["type"] for e in without.events] == ["ADDED"]
        bookmark = with_bm.events[-1]["raw_object"]
        assert bookmark["kind"] == "Node" and bookmark["apiVersion"] == "v1"
        assert with_bm.watch.resource_version == str(api.resource_version)  # the client tracks it


def test_send_bookmarks_on_demand(kube_api, core, stream):  # noqa: F811
    rv = core.list_namespaced_pod("default").metadata.resource_version
    s = stream(core.list_namespaced_pod, "default", resource_version=rv, allow_watch_bookmarks=True)
    assert kube_api.wait_for(lambda: kube_api.watch_count == 1)
    kube_api.send_bookmarks()
    assert kube_api.wait_for(lambda: [e["type"] for e in s.events] == ["BOOKMARK"])


def test_watch_from_a_compacted_rv_is_410_expired(kube_api, core):  # noqa: F811
    rv = core.list_namespaced_pod("default").metadata.resource_version
    kube_api.create(pod("p1"))
    kube_api.compact()
    # On the wire: HTTP 200, then one ERROR event carrying a Status, then the stream ends.
    resp = core.list_namespaced_pod("default", watch=True, resource_version=rv, _preload_content=False)
    assert resp.status == 200
    lines = [json.loads(line) for line in resp.data.splitlines()]
    assert lines == [{"type": "ERROR", "object": {
        "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": f"too old resource version: {rv} ({kube_api.resource_version})", "reason": "Expired",
        "code": 410}}]
    # The client's Watch retries once from the same RV, then raises ApiException(410).
    before = len(kube_api.requests)
    with pytest.raises(client.ApiException) as err:
        for _ in watch.Watch().stream(core.list_namespaced_pod, "default", resource_version=rv):
            pass
    assert err.value.status == 410
    assert len([r for r in kube_api.requests[before:] if "watch=true" in r[1]]) == 2
    # Relisting gives an RV the watch accepts.
    fresh = core.list_namespaced_pod("default")
    assert [p.metadata.name for p in fresh.items] == ["p1"]
    resp = core.list_namespaced_pod("default", watch=True, resource_version=fresh.metadata.resource_version,
                                    timeout_seconds=1, _preload_content=False)
    assert resp.data == b""


def test_field_selector_watch_turns_binding_into_deleted(kube_api, core, stream):  # noqa: F811
    kube_api.create({"kind": "Node", "metadata": {"name": "n1"}})
    unassigned = stream(core.list_pod_for_all_namespaces, field_selector="spec.nodeName=")
    assigned = stream(core.list_pod_for_all_namespaces, field_selector="spec.nodeName!=")
    assert kube_api.wait_for(lambda: kube_api.watch_count == 2)
    kube_api.create(pod("p1"))
    body = client.V1Binding(metadata=client.V1ObjectMeta(name="p1"),
                            target=client.V1ObjectReference(kind="Node", name="n1"))
    core.create_namespaced_pod_binding("p1", "default", body, _preload_content=False)
    assert kube_api.wait_for(lambda: len(unassigned.events) >= 2 and len(assigned.events) >= 1)
    assert unassigned.types() == [("ADDED", "p1"), ("DELETED", "p1")]
    assert assigned.types() == [("ADDED", "p1")]
    assert assigned.events[0]["object"].spec.node_name == "n1"


def test_label_selector_watch_and_namespace_scope(kube_api, core, stream):  # noqa: F811
    s = stream(core.list_namespaced_pod, "default", label_selector="app in (web,db),!canary")
    assert kube_api.wait_for(lambda: kube_api.watch_count == 1)
    kube_api.create(pod("web"))
    kube_api.create({**pod("canary"), "metadata": {"name": "canary", "labels": {"app": "web", "canary": "1"}}})
    kube_api.create({**pod("other-ns"), "metadata": {"name": "other-ns", "namespace": "kube-system",
                                                      "labels": {"app": "web"}}})
    kube_api.create({**pod("last"), "metadata": {"name": "last", "labels": {"app": "db"}}})
    assert kube_api.wait_for(lambda: len(s.events) >= 2)
    assert s.types() == [("ADDED", "web"), ("ADDED", "last")]


def test_drop_watches_ends_the_stream(kube_api, core, stream):  # noqa: F811
    s = stream(core.list_namespaced_pod, "default", resource_version="0")
    assert kube_api.wait_for(lambda: kube_api.watch_count == 1)
    kube_api.drop_watches()
    assert s.done.wait(5)
    # A cut connection is an error to the client, not a clean end (which the Watch would re-watch).
    assert isinstance(s.error, urllib3.exceptions.ProtocolError)
    assert kube_api.wait_for(lambda: kube_api.watch_count == 0)


def test_hung_watch_times_out_and_a_new_watch_works(kube_api, core, stream):  # noqa: F811
    rv = core.list_namespaced_pod("default").metadata.resource_version
    s = stream(core.list_namespaced_pod, "default", resource_version=rv, _request_timeout=(2, 0.5))
    assert kube_api.wait_for(lambda: kube_api.watch_count == 1)
    kube_api.hang_watches(30)
    kube_api.create(pod("p1"))
    assert s.done.wait(5)
    assert s.events == [] and "timed out" in str(s.error).lower()
    again = stream(core.list_namespaced_pod, "default", resource_version=rv, _request_timeout=(2, 5))
    assert kube_api.wait_for(lambda: again.types() == [("ADDED", "p1")])


def test_timeout_seconds_ends_the_watch_cleanly(kube_api, core):  # noqa: F811
    t0 = time.monotonic()
    events = list(watch.Watch().stream(core.list_node, resource_version="0", timeout_seconds=1))
    assert 0.9 < time.monotonic() - t0 < 5
    assert events == []

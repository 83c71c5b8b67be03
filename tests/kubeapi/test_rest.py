"""REST verbs through the official client: binding, status patches, leases, events, CRs, errors, lists."""

from __future__ import annotations

import json

import pytest
from kubernetes import client

from tests.kubeapi.fixtures import kube_api, kubeconfig  # noqa: F401


def pod(name: str, ns: str = "default", **spec: object) -> dict:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": ns},
            "spec": {"containers": [{"name": "c", "image": "nginx"}], **spec}}


def binding(name: str, node: str, uid: str | None = None) -> client.V1Binding:
    return client.V1Binding(metadata=client.V1ObjectMeta(name=name, uid=uid),
                            target=client.V1ObjectReference(kind="Node", name=node))


def status_of(err: pytest.ExceptionInfo[client.ApiException]) -> dict:
    return json.loads(err.value.body)


def test_binding_sets_node_once_then_conflicts(kube_api, core):  # noqa: F811
    created = core.create_namespaced_pod("default", pod("p1"))
    resp = core.create_namespaced_pod_binding("p1", "default", binding("p1", "n1", created.metadata.uid),
                                              _preload_content=False)
    # The real API answers a Status (so the client's V1Binding return type cannot be used: read raw).
    assert resp.status == 201 and json.loads(resp.data)["status"] == "Success"
    bound = core.read_namespaced_pod("p1", "default")
    assert bound.spec.node_name == "n1"
    assert [(c.type, c.status) for c in bound.status.conditions] == [("PodScheduled", "True")]
    with pytest.raises(client.ApiException) as err:
        core.create_namespaced_pod_binding("p1", "default", binding("p1", "n2"), _preload_content=False)
    assert err.value.status == 409
    assert status_of(err) == {
        "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": 'Operation cannot be fulfilled on pods/binding "p1": pod p1 is already assigned to node "n1"',
        "reason": "Conflict", "details": {"name": "p1", "kind": "pods/binding"}, "code": 409}
    assert kube_api.get("Pod", "p1")["spec"]["nodeName"] == "n1"


def test_binding_a_missing_or_replaced_pod_fails(kube_api, core):  # noqa: F811
    with pytest.raises(client.ApiException) as err:
        core.create_namespaced_pod_binding("ghost", "default", binding("ghost", "n1"), _preload_content=False)
    assert err.value.status == 404 and status_of(err)["message"] == 'pods "ghost" not found'
    kube_api.create(pod("p1"))
    with pytest.raises(client.ApiException) as err:  # a binding for an older pod of that name
        core.create_namespaced_pod_binding("p1", "default", binding("p1", "n1", uid="old-uid"),
                                           _preload_content=False)
    assert err.value.status == 409 and "Precondition failed: UID in precondition: old-uid" in err.value.body
    # The older /bindings endpoint binds too.
    core.create_namespaced_binding("default", binding("p1", "n1"), _preload_content=False)
    assert kube_api.get("Pod", "p1")["spec"]["nodeName"] == "n1"


def test_status_patch_merges_conditions_by_type(kube_api, core):  # noqa: F811
    kube_api.create({**pod("p1"), "status": {"phase": "Pending", "conditions": [
        {"type": "Ready", "status": "False", "reason": "Starting"}]}})
    unschedulable = {"type": "PodScheduled", "status": "False", "reason": "Unschedulable",
                     "message": "0/3 nodes are available: 3 Insufficient cpu."}
    core.patch_namespaced_pod_status("p1", "default", {"status": {"conditions": [unschedulable]}})
    core.patch_namespaced_pod_status("p1", "default", {"status": {"nominatedNodeName": "n2", "conditions": [
        {"type": "PodScheduled", "message": "preempting"}]}})
    got = kube_api.get("Pod", "p1")["status"]
    assert got["nominatedNodeName"] == "n2"
    assert got["conditions"] == [{"type": "Ready", "status": "False", "reason": "Starting"},
                                 {**unschedulable, "message": "preempting"}]
    # The main resource ignores status, and a pod's node cannot be set by an update.
    core.patch_namespaced_pod("p1", "default", {"status": {"phase": "Running"}})
    assert kube_api.get("Pod", "p1")["status"]["phase"] == "Pending"
    with pytest.raises(client.ApiException) as err:
        core.patch_namespaced_pod("p1", "default", {"spec": {"nodeName": "n1"}})
    assert err.value.status == 422 and status_of(err)["reason"] == "Invalid"


def test_lease_updates_need_the_current_resource_version(kube_api, api_client):  # noqa: F811
    leases = client.CoordinationV1Api(api_client)
    body = {"metadata": {"name": "sched"}, "spec": {"holderIdentity": "a", "leaseDurationSeconds": 15}}
    lease = leases.create_namespaced_lease("kube-system", body)
    stale = lease.metadata.resource_version
    lease.spec.holder_identity = "a"
    lease.spec.lease_transitions = 1
    renewed = leases.replace_namespaced_lease("sched", "kube-system", lease)
    assert int(renewed.metadata.resource_version) > int(stale)
    lease.spec.holder_identity = "b"  # still carries the stale resourceVersion
    with pytest.raises(client.ApiException) as err:
        leases.replace_namespaced_lease("sched", "kube-system", lease)
    assert err.value.status == 409
    assert status_of(err)["message"] == (
        'Operation cannot be fulfilled on leases.coordination.k8s.io "sched": the object has been modified; '
        "please apply your changes to the latest version and try again")
    assert status_of(err)["details"] == {"name": "sched", "group": "coordination.k8s.io", "kind": "leases"}
    lease.metadata.resource_version = None
    with pytest.raises(client.ApiException) as err:
        leases.replace_namespaced_lease("sched", "kube-system", lease)
    assert err.value.status == 422
    assert kube_api.get("Lease", "sched", "kube-system")["spec"]["holderIdentity"] == "a"


def test_events_both_apis_share_one_store(kube_api, core, api_client):  # noqa: F811
    ref = {"kind": "Pod", "namespace": "default", "name": "p1", "uid": "u1", "apiVersion": "v1"}
    events_v1 = client.EventsV1Api(api_client)
    events_v1.create_namespaced_event("default", {
        "metadata": {"name": "p1.1"}, "eventTime": "2024-01-01T00:00:00.000000Z", "type": "Normal",
        "reason": "Scheduled", "note": "Successfully assigned default/p1 to n1", "action": "Binding",
        "reportingController": "kubesched", "reportingInstance": "kubesched-a", "regarding": ref})
    core.create_namespaced_event("default", {"metadata": {"name": "p1.2"}, "involvedObject": ref,
                                             "eventTime": "2024-01-01T00:00:01.000000Z", "type": "Warning",
                                             "reason": "FailedScheduling", "message": "no"})
    assert [(e["reason"], e["message"]) for e in kube_api.list("Event", "default")] == [
        ("Scheduled", "Successfully assigned default/p1 to n1"), ("FailedScheduling", "no")]
    seen = events_v1.list_namespaced_event("default")
    assert [(e.reason, e.note, e.regarding.name) for e in seen.items] == [
        ("Scheduled", "Successfully assigned default/p1 to n1", "p1"), ("FailedScheduling", "no", "p1")]
    warnings = core.list_namespaced_event("default", field_selector="type=Warning,involvedObject.name=p1")
    assert [e.metadata.name for e in warnings.items] == ["p1.2"]


def test_custom_resources_podgroups(kube_api, api_client):  # noqa: F811
    crs = client.CustomObjectsApi(api_client)
    args = ("scheduling.x-k8s.io", "v1alpha1", "default", "podgroups")
    crs.create_namespaced_custom_object(*args, {"apiVersion": "scheduling.x-k8s.io/v1alpha1", "kind": "PodGroup",
                                                "metadata": {"name": "pg"}, "spec": {"minMember": 3}})
    crs.patch_namespaced_custom_object_status(*args, "pg", {"status": {"phase": "Scheduling", "scheduled": 1}})
    got = crs.get_namespaced_custom_object(*args, "pg")
    assert got["spec"] == {"minMember": 3} and got["status"] == {"phase": "Scheduling", "scheduled": 1}
    listed = crs.list_namespaced_custom_object(*args)
    assert listed["kind"] == "PodGroupList" and listed["items"][0]["kind"] == "PodGroup"
    with pytest.raises(client.ApiException) as err:  # no strategic merge for custom resources
        crs.patch_namespaced_custom_object(*args, "pg", {"spec": {"minMember": 2}},
                                           _content_type="application/strategic-merge-patch+json")
    assert err.value.status == 415
    eq = ("scheduling.x-k8s.io", "v1alpha1", "default", "elasticquotas")
    crs.create_namespaced_custom_object(*eq, {"metadata": {"name": "q"}, "spec": {"max": {"cpu": "4"}}})
    assert kube_api.get("ElasticQuota", "q")["spec"] == {"max": {"cpu": "4"}}


def test_injected_faults_hit_matching_requests_only(kube_api, core):  # noqa: F811
    kube_api.create(pod("p1"))
    kube_api.fail_next("POST", r"/pods/p1/binding$", 500, times=2)
    kube_api.fail_next("GET", r"/nodes", 503, body={"kind": "Status", "code": 503, "message": "custom"})
    for _ in range(2):
        with pytest.raises(client.ApiException) as err:
            core.create_namespaced_pod_binding("p1", "default", binding("p1", "n1"), _preload_content=False)
        assert err.value.status == 500 and status_of(err)["reason"] == "InternalError"
    assert kube_api.get("Pod", "p1")["spec"].get("nodeName") is None
    core.create_namespaced_pod_binding("p1", "default", binding("p1", "n1"), _preload_content=False)
    with pytest.raises(client.ApiException) as err:
        core.list_node()
    assert err.value.status == 503 and status_of(err)["message"] == "custom"
    assert core.list_node().items == []
    assert kube_api.requests[-6:] == [
        ("POST", "/api/v1/namespaces/default/pods/p1/binding")] * 3 + [("GET", "/api/v1/nodes")] * 2


def test_error_bodies_are_shaped_like_the_api_servers(kube_api, core):  # noqa: F811
    core.create_namespaced_pod("default", pod("p1"))
    with pytest.raises(client.ApiException) as err:
        core.create_namespaced_pod("default", pod("p1"))
    assert status_of(err) == {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                              "message": 'pods "p1" already exists', "reason": "AlreadyExists",
                              "details": {"name": "p1", "kind": "pods"}, "code": 409}
    with pytest.raises(client.ApiException) as err:
        core.read_namespaced_pod("nope", "default")
    assert status_of(err) == {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                              "message": 'pods "nope" not found', "reason": "NotFound",
                              "details": {"name": "nope", "kind": "pods"}, "code": 404}
    with pytest.raises(client.ApiException) as err:
        core.list_namespaced_pod("default", field_selector="spec.bogus=1")
    assert err.value.status == 400 and status_of(err)["message"] == "field label not supported: spec.bogus"


def test_pagination_and_expired_continue(kube_api, core):  # noqa: F811
    for i in range(5):
        kube_api.create(pod(f"p{i}"))
    first = core.list_namespaced_pod("default", limit=2)
    assert [p.metadata.name for p in first.items] == ["p0", "p1"]
    assert first.metadata.remaining_item_count == 3
    kube_api.create(pod("p9"))  # after the snapshot: later pages do not show it
    names, token = [], first.metadata._continue
    while token:
        page = core.list_namespaced_pod("default", limit=2, _continue=token)
        assert page.metadata.resource_version == first.metadata.resource_version
        names += [p.metadata.name for p in page.items]
        token = page.metadata._continue
    assert names == ["p2", "p3", "p4"]
    kube_api.compact()
    with pytest.raises(client.ApiException) as err:
        core.list_namespaced_pod("default", limit=2, _continue=first.metadata._continue)
    assert err.value.status == 410 and status_of(err)["reason"] == "Expired"


def test_list_at_an_exact_resource_version(kube_api, core):  # noqa: F811
    kube_api.create(pod("a"))
    rv = core.list_namespaced_pod("default").metadata.resource_version
    kube_api.create(pod("b"))
    kube_api.delete("Pod", "a")
    then = core.list_namespaced_pod("default", resource_version=rv, resource_version_match="Exact")
    assert [p.metadata.name for p in then.items] == ["a"]
    now = core.list_namespaced_pod("default", resource_version=rv, resource_version_match="NotOlderThan")
    assert [p.metadata.name for p in now.items] == ["b"]
    kube_api.compact()
    with pytest.raises(client.ApiException) as err:
        core.list_namespaced_pod("default", resource_version=rv, resource_version_match="Exact")
    assert err.value.status == 410


def test_selectors_on_lists(kube_api, core):  # noqa: F811
    kube_api.create({**pod("bound", nodeName="n1"), "status": {"phase": "Running"}})
    kube_api.create({**pod("done", nodeName="n1"), "status": {"phase": "Succeeded"}})
    kube_api.create(pod("mine", schedulerName="kubesched"))
    kube_api.create({**pod("labelled"), "metadata": {"name": "labelled", "labels": {"tier": "3"}}})

    def names(**kw: str) -> list[str]:
        return [p.metadata.name for p in core.list_pod_for_all_namespaces(**kw).items]

    assert names(field_selector="spec.nodeName=") == ["labelled", "mine"]
    assert names(field_selector="spec.nodeName=n1,status.phase!=Succeeded") == ["bound"]
    assert names(field_selector="spec.schedulerName=kubesched") == ["mine"]
    assert names(field_selector="metadata.name=done") == ["done"]
    assert names(label_selector="tier>2") == ["labelled"]
    assert names(label_selector="tier notin (3)") == ["bound", "done", "mine"]


def test_admission_defaults(kube_api, core, api_client):  # noqa: F811
    sched = client.SchedulingV1Api(api_client)
    sched.create_priority_class({"metadata": {"name": "high"}, "value": 1000, "preemptionPolicy": "Never"})
    p = core.create_namespaced_pod("default", {**pod("p"), "spec": {**pod("p")["spec"], "priorityClassName": "high"},
                                               "status": {"phase": "Running"}})
    assert (p.spec.priority, p.spec.preemption_policy, p.spec.scheduler_name) == (1000, "Never", "default-scheduler")
    assert p.status.phase == "Pending"  # create cannot set a pod's status
    with pytest.raises(client.ApiException) as err:
        core.create_namespaced_pod("default", {**pod("q"), "spec": {**pod("q")["spec"], "priorityClassName": "x"}})
    assert err.value.status == 403
    ns = core.create_namespace({"metadata": {"name": "team-a"}})
    assert ns.metadata.labels == {"kubernetes.io/metadata.name": "team-a"} and ns.status.phase == "Active"


def test_deletes_and_discovery(kube_api, core, api_client):  # noqa: F811
    kube_api.create(pod("p1"))
    gone = core.delete_namespaced_pod("p1", "default", grace_period_seconds=0)
    assert gone.metadata.name == "p1" and kube_api.get("Pod", "p1") is None
    kube_api.create({"kind": "ConfigMap", "metadata": {"name": "cm"}, "data": {"k": "v"}})
    st = core.delete_namespaced_config_map("cm", "default")
    assert st["status"] == "Success" and st["details"]["name"] == "cm"  # a Status (the client leaves a dict)
    assert client.VersionApi(api_client).get_code().major == "1"
    groups = {g.name for g in client.ApisApi(api_client).get_api_versions().groups}
    assert {"coordination.k8s.io", "events.k8s.io", "scheduling.x-k8s.io", "policy"} <= groups
    pods = [r for r in core.get_api_resources().resources if r.name.startswith("pods")]
    assert {r.name for r in pods} == {"pods", "pods/status", "pods/binding", "pods/eviction"}


def test_resource_claims_status_subresource_conflicts_and_reservation_patch(kube_api, api_client):  # noqa: F811
    """resource.k8s.io/v1 through the official client: the status subresource keeps the spec, a
    stale resourceVersion is a 409, and Unreserve's strategic merge patch deletes one
    reservedFor entry by uid."""
    res = client.ResourceV1Api(api_client)
    claim = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": "gpu"},
             "spec": {"devices": {"requests": [{"name": "g", "exactly": {"deviceClassName": "gpu"}}]}},
             "status": {"reservedFor": [{"resource": "pods", "name": "x", "uid": "u0"}]}}
    created = res.create_namespaced_resource_claim("default", claim)
    assert created.status is None  # create cannot set status where status is a subresource
    body = api_client.sanitize_for_serialization(created)
    body["status"] = {"reservedFor": [{"resource": "pods", "name": "a", "uid": "ua"},
                                      {"resource": "pods", "name": "b", "uid": "ub"}]}
    body["spec"]["devices"]["requests"][0]["name"] = "ignored"
    updated = res.replace_namespaced_resource_claim_status("gpu", "default", body)
    assert [r.uid for r in updated.status.reserved_for] == ["ua", "ub"]
    assert updated.spec.devices.requests[0].name == "g"  # a status write keeps the spec
    with pytest.raises(client.ApiException) as err:  # body still carries the old resourceVersion
        res.replace_namespaced_resource_claim_status("gpu", "default", body)
    assert err.value.status == 409 and status_of(err)["reason"] == "Conflict"
    patch = {"metadata": {"uid": created.metadata.uid}, "status": {"reservedFor": [{"$patch": "delete", "uid": "ua"}]}}
    res.patch_namespaced_resource_claim_status("gpu", "default", patch)
    assert [r["uid"] for r in kube_api.get("ResourceClaim", "gpu")["status"]["reservedFor"]] == ["ub"]
    names = {r.name for r in res.get_api_resources().resources}
    assert {"deviceclasses", "resourceslices", "resourceclaims", "resourceclaims/status",
            "resourceclaimtemplates"} <= names


def test_storage_kinds_for_the_volume_plugins(kube_api, api_client):  # noqa: F811
    storage = client.StorageV1Api(api_client)
    storage.create_csi_driver({"metadata": {"name": "csi.example.com"}, "spec": {"storageCapacity": True}})
    storage.create_namespaced_csi_storage_capacity("default", {
        "metadata": {"name": "cap"}, "storageClassName": "fast", "capacity": "10Gi"})
    storage.create_volume_attachment({"metadata": {"name": "va"}, "spec": {
        "attacher": "csi.example.com", "nodeName": "n1", "source": {"persistentVolumeName": "pv"}}})
    assert [d.metadata.name for d in storage.list_csi_driver().items] == ["csi.example.com"]
    assert storage.list_csi_storage_capacity_for_all_namespaces().items[0].capacity == "10Gi"
    assert kube_api.get("VolumeAttachment", "va")["spec"]["nodeName"] == "n1"

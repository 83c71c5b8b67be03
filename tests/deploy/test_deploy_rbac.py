"""RBAC: exactly what `kubesched run` does to the API, nothing more; none for the extender without its watch.

The watching extender's RBAC is checked in test_deploy_extender_watch.py."""

from __future__ import annotations

from deploy_testlib import by_kind, granted, objects, one, render

# (apiGroup, resource, resourceName or None) -> verbs: the API calls of `kubesched run`
# (kubesched/live: informers list+watch, bind, status patches, events and their series patches,
# preemption's deletes, its Lease) and of the scheduler-plugins CRDs named in issue 4.
CLUSTER_WIDE: dict[tuple[str, str, str | None], set[str]] = {
    ("", "nodes", None): {"list", "watch"},
    ("", "namespaces", None): {"list", "watch"},
    ("", "pods", None): {"list", "watch", "delete"},
    ("", "pods/binding", None): {"create"},
    ("", "pods/status", None): {"patch"},
    ("", "events", None): {"create", "patch"},
    ("events.k8s.io", "events", None): {"create", "patch"},
    ("scheduling.k8s.io", "priorityclasses", None): {"list", "watch"},
    ("policy", "poddisruptionbudgets", None): {"list", "watch"},
    # PodTopologySpread's default constraints (kubesched.live.resources.WORKLOADS)
    ("", "services", None): {"list", "watch"},
    ("", "replicationcontrollers", None): {"list", "watch"},
    ("apps", "replicasets", None): {"list", "watch"},
    ("apps", "statefulsets", None): {"list", "watch"},
    ("scheduling.x-k8s.io", "podgroups", None): {"list", "watch"},
    ("scheduling.x-k8s.io", "elasticquotas", None): {"list", "watch"},
    # the volume plugins (kubesched.live.resources.PLUGIN_RESOURCES); VolumeBinding's PreBind
    # updates PVs and claims (kubesched.live.objects)
    ("", "persistentvolumes", None): {"list", "watch", "update"},
    ("", "persistentvolumeclaims", None): {"list", "watch", "update"},
    ("storage.k8s.io", "storageclasses", None): {"list", "watch"},
    ("storage.k8s.io", "csinodes", None): {"list", "watch"},
    ("storage.k8s.io", "csidrivers", None): {"list", "watch"},
    ("storage.k8s.io", "csistoragecapacities", None): {"list", "watch"},
    ("storage.k8s.io", "volumeattachments", None): {"list", "watch"},
    # DynamicResources: PreBind's finalizer update, status update and re-read after a conflict,
    # PostFilter's status update, Unreserve's status patch (v1.36 authorizes allocation and
    # reservedFor changes on resourceclaims/binding too)
    ("resource.k8s.io", "deviceclasses", None): {"list", "watch"},
    ("resource.k8s.io", "resourceslices", None): {"list", "watch"},
    ("resource.k8s.io", "resourceclaims", None): {"get", "list", "watch", "update"},
    ("resource.k8s.io", "resourceclaims/status", None): {"update", "patch"},
    ("resource.k8s.io", "resourceclaims/binding", None): {"update", "patch"},
}


def lease_rules(lease: str) -> dict[tuple[str, str, str | None], set[str]]:
    return {
        ("coordination.k8s.io", "leases", None): {"create"},
        ("coordination.k8s.io", "leases", lease): {"get", "update"},
    }


def check_binding(binding: dict, role: dict, objs: list[dict], namespace: str) -> None:
    assert binding["roleRef"] == {
        "apiGroup": "rbac.authorization.k8s.io",
        "kind": role["kind"],
        "name": role["metadata"]["name"],
    }
    sa = one(objs, "ServiceAccount")
    assert binding["subjects"] == [
        {"kind": "ServiceAccount", "name": sa["metadata"]["name"], "namespace": namespace}
    ]
    pod_spec = one(objs, "Deployment")["spec"]["template"]["spec"]
    assert pod_spec["serviceAccountName"] == sa["metadata"]["name"]


def test_cluster_role_is_exactly_the_scheduler_calls() -> None:
    objs = objects(render(namespace="sched-system"))
    role = one(objs, "ClusterRole")
    assert granted(role) == CLUSTER_WIDE
    check_binding(one(objs, "ClusterRoleBinding"), role, objs, "sched-system")


def test_leases_only_in_the_release_namespace_and_only_its_own() -> None:
    objs = objects(render(namespace="sched-system"))
    role = one(objs, "Role")
    assert role["metadata"]["namespace"] == "sched-system"
    assert granted(role) == lease_rules("kubesched")
    binding = one(objs, "RoleBinding")
    assert binding["metadata"]["namespace"] == "sched-system"
    check_binding(binding, role, objs, "sched-system")
    # no extension-apiserver-authentication-reader binding: kubesched does no delegated authn
    assert len(by_kind(objs, "RoleBinding")) == 1


def test_lease_name_follows_the_first_profile() -> None:
    objs = objects(render({"profiles": [{"schedulerName": "gpu"}, {"schedulerName": "cpu"}]}))
    assert granted(one(objs, "Role")) == lease_rules("gpu")


def test_extra_rules_are_added_to_the_cluster_role() -> None:
    extra = {"apiGroups": ["example.com"], "resources": ["widgets"], "verbs": ["list", "watch"]}
    objs = objects(render({"rbac": {"extraRules": [extra]}}))
    assert granted(one(objs, "ClusterRole")) == {**CLUSTER_WIDE, ("example.com", "widgets", None): {"list", "watch"}}


def test_extender_without_watch_gets_no_api_access() -> None:
    objs = objects(render({"mode": "extender", "extender": {"watchCluster": False}}))
    kinds = {o["kind"] for o in objs}
    assert not kinds & {"ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding"}
    assert one(objs, "ServiceAccount")["automountServiceAccountToken"] is False
    assert one(objs, "Deployment")["spec"]["template"]["spec"]["automountServiceAccountToken"] is False


def test_rbac_can_be_left_to_the_cluster_admin() -> None:
    objs = objects(render({"rbac": {"create": False}, "serviceAccount": {"create": False, "name": "sched"}}))
    assert {o["kind"] for o in objs} == {"ConfigMap", "Deployment", "Service", "Secret"}  # Secrets: TLS, token
    assert one(objs, "Deployment")["spec"]["template"]["spec"]["serviceAccountName"] == "sched"


def watched_kinds() -> set[tuple[str, str]]:
    """(apiGroup, resource) of every kind kubesched's informers can watch (kubesched.live.resources)."""
    from kubesched.live.resources import PLUGIN_RESOURCES, REQUIRED, WORKLOADS

    out = set()
    for r in {*REQUIRED, *WORKLOADS, *(x for rs in PLUGIN_RESOURCES.values() for x in rs)}:
        parts = r.path.strip("/").split("/")
        out.add(("", parts[2]) if parts[0] == "api" else (parts[1], parts[3]))
    return out


def test_viewer_role_lists_and_watches_what_kubesched_ui_watches_and_nothing_more() -> None:
    assert not [r for r in by_kind(objects(render()), "ClusterRole") if r["metadata"]["name"].endswith("-viewer")]
    sre = {"kind": "Group", "name": "sre", "apiGroup": "rbac.authorization.k8s.io"}
    objs = objects(render({"rbac": {"viewer": {"create": True, "subjects": [sre]}}}))
    viewer = next(r for r in by_kind(objs, "ClusterRole") if r["metadata"]["name"] == "kubesched-viewer")
    assert granted(viewer) == {(g, res, None): {"list", "watch"} for g, res in watched_kinds()}
    binding = next(b for b in by_kind(objs, "ClusterRoleBinding") if b["metadata"]["name"] == "kubesched-viewer")
    assert binding["roleRef"]["name"] == "kubesched-viewer" and binding["subjects"] == [sre]
    # without subjects: the role alone, to bind as you like
    alone = objects(render({"rbac": {"viewer": {"create": True}}}))
    assert not [b for b in by_kind(alone, "ClusterRoleBinding") if b["metadata"]["name"] == "kubesched-viewer"]

"""Every rendered object and every file of deploy/manifests/ against Kubernetes' own schemas.

Two independent checks: the strict OpenAPI schemas of Kubernetes v1.36 (kubernetes-validate:
unknown fields and wrong types are errors) and the official client's models (a field the model
does not know is dropped on the round trip, a missing required field is an error).
"""

from __future__ import annotations

import copy

import kubernetes_validate
import pytest
from deploy_testlib import KUBE_VERSION, client_round_trip, manifest_objects, objects, render

VALUE_SETS = {
    "default": None,
    "extender": {"mode": "extender"},
    "extender-no-bind": {"mode": "extender", "extender": {"bind": False}},
    "extender-no-watch": {"mode": "extender", "extender": {"watchCluster": False}},
    "everything": {
        "priorityClassName": "system-cluster-critical",
        "imagePullSecrets": [{"name": "regcred"}],
        "nodeSelector": {"kubernetes.io/os": "linux"},
        "tolerations": [{"key": "node-role.kubernetes.io/control-plane", "effect": "NoSchedule"}],
        "affinity": {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [
                        {"matchExpressions": [{"key": "kubernetes.io/arch", "operator": "In", "values": ["amd64"]}]}
                    ]
                }
            }
        },
        "podAnnotations": {"example.com/team": "platform"},
        "podLabels": {"team": "platform"},
        "serviceAccount": {"annotations": {"example.com/role": "x"}},
        "rbac": {"extraRules": [{"apiGroups": ["example.com"], "resources": ["widgets"], "verbs": ["list", "watch"]}]},
        "logFormat": "text",
    },
}


def validate(obj: dict, where: str) -> None:
    assert kubernetes_validate.validate(obj, KUBE_VERSION, strict=True) == KUBE_VERSION.rpartition(".")[0], where
    assert client_round_trip(obj) == obj, f"{where}: fields the client's {obj['kind']} model does not know"


@pytest.mark.parametrize("name", list(VALUE_SETS))
def test_rendered_objects_are_valid(name: str) -> None:
    objs = [o for o in objects(render(VALUE_SETS[name])) if o["kind"] != "ServiceMonitor"]
    assert len(objs) >= 4
    for obj in objs:
        validate(obj, f"{name}: {obj['kind']}")


def test_manifest_files_are_valid() -> None:
    found = manifest_objects()
    assert {o["kind"] for _, o in found} == {
        "Namespace",
        "ServiceAccount",
        "ClusterRole",
        "ClusterRoleBinding",
        "Role",
        "RoleBinding",
        "ConfigMap",
        "Service",
        "Deployment",
    }
    for file, obj in found:
        validate(obj, file)


@pytest.mark.parametrize(
    "break_it",
    [
        lambda d: d["spec"]["template"]["spec"]["containers"][0].update(livenesProbe={}),  # misspelt field
        lambda d: d["spec"].update(replicas="2"),  # wrong type
        lambda d: d["spec"]["template"]["spec"]["containers"][0].pop("name"),  # required field
    ],
    ids=["unknown-field", "wrong-type", "missing-required"],
)
def test_both_checks_reject_a_broken_deployment(break_it) -> None:
    dep = next(o for _, o in manifest_objects() if o["kind"] == "Deployment")
    bad = copy.deepcopy(dep)
    break_it(bad)
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(bad, KUBE_VERSION, strict=True)
    try:
        back = client_round_trip(bad)
    except ValueError:  # the model refused it (pydantic's ValidationError is a ValueError)
        return
    assert back != bad


def test_service_monitor_scrapes_the_metrics_port() -> None:
    """No schema for the Prometheus Operator's CRD here: check what it must point at."""
    objs = objects(render({"serviceMonitor": {"enabled": True, "labels": {"release": "prom"}}}))
    sm = next(o for o in objs if o["kind"] == "ServiceMonitor")
    svc = next(o for o in objs if o["kind"] == "Service")
    assert sm["apiVersion"] == "monitoring.coreos.com/v1"
    assert sm["metadata"]["labels"]["release"] == "prom"
    assert sm["spec"]["selector"]["matchLabels"].items() <= svc["metadata"]["labels"].items()
    assert sm["spec"]["namespaceSelector"]["matchNames"] == [svc["metadata"]["namespace"]]
    (endpoint,) = sm["spec"]["endpoints"]
    assert endpoint["port"] in [p["name"] for p in svc["spec"]["ports"]]
    assert endpoint["path"] == "/metrics"
    assert not any(o["kind"] == "ServiceMonitor" for o in objects(render()))

"""Names and namespaces as the API server judges them on create, and container names.

The issue's inputs the API server refuses and kubesched accepted: a pod in namespace ``Team_A``
(namespaces are DNS-1123 labels), an init container named as a container (names are unique
across containers, init containers and ephemeral containers). The same gap for the other kinds
read: Node, Namespace, PriorityClass, PodDisruptionBudget, Service, ReplicationController,
ReplicaSet, StatefulSet, PodGroup and ElasticQuota names and namespaces.

The third input of the issue, a topology spread constraint whose ``topologyKey`` is no label
key, the v1.36 API server accepts: ``ValidateTopologyKey`` (pkg/apis/core/validation) checks
only that it is not empty, and no declarative validation covers it (k8s.io/api v0.36
``TopologySpreadConstraint.TopologyKey`` has no ``+k8s:`` tag). A pod affinity term's
``topologyKey`` is a label name (``ValidateLabelName``). Both are pinned below.

Ported from kubernetes v1.36 (staging/src/k8s.io/apimachinery/pkg/api/validation/
objectmeta_test.go): TestValidateObjectMetaNamespaces, 2 of 2 checks (kubesched reports the
first of upstream's two errors for the 64-character namespace).
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

from kubesched.api import field_validation
from kubesched.errors import InputError
from kubesched.load import load_cluster
from kubesched.testing import make_node, make_pod

LABEL_MSG = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start "
    "and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is "
    "'[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
)
SUBDOMAIN_MSG = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must "
    "start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is "
    "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
)
DNS1035_MSG = (
    "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic "
    "character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for "
    "validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"
)


def load(tmp_path: Path, *objs: dict[str, Any], validate: str = "strict"):
    f = tmp_path / "c.json"
    f.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": list(objs)}))
    return load_cluster([str(f)], validate)


def refused(tmp_path: Path, *objs: dict[str, Any]) -> str:
    with pytest.raises(InputError) as e:
        load(tmp_path, *objs)
    return str(e.value).removeprefix(f"{tmp_path / 'c.json'}: ")


def meta(kind: str, api: str, name: str, namespace: str | None = None, **rest: Any) -> dict[str, Any]:
    md: dict[str, Any] = {"name": name}
    if namespace is not None:
        md["namespace"] = namespace
    return {"apiVersion": api, "kind": kind, "metadata": md, **rest}


# -- the inputs ------------------------------------------------------------------------


def test_a_pod_namespace_is_a_dns1123_label(tmp_path: Path) -> None:
    assert refused(tmp_path, make_pod("web", namespace="Team_A")) == (
        f'items[0].metadata.namespace: Invalid value: "Team_A": {LABEL_MSG}'
    )
    assert refused(tmp_path, make_pod("web", namespace="team.a")) == (
        'items[0].metadata.namespace: Invalid value: "team.a": must not contain dots'
    )
    assert [p.key for p in load(tmp_path, make_pod("web", namespace="team-a")).pods] == ["team-a/web"]


def test_container_names_are_unique_across_containers_init_and_ephemeral_containers(tmp_path: Path) -> None:
    init = make_pod("p", spec={"initContainers": [{"name": "c", "image": "busybox"}]})  # make_pod's container is "c"
    assert refused(tmp_path, init) == 'items[0].spec.initContainers[0].name: Duplicate value: "c"'
    eph = make_pod("p", spec={"ephemeralContainers": [{"name": "c", "image": "busybox"}]})
    assert refused(tmp_path, eph) == 'items[0].spec.ephemeralContainers[0].name: Duplicate value: "c"'
    two = make_pod("p", containers=[{"name": "a", "image": "i"}, {"name": "a", "image": "i"}])
    assert refused(tmp_path, two) == 'items[0].spec.containers[1].name: Duplicate value: "a"'
    unnamed = make_pod("p", containers=[{"image": "i"}])
    assert refused(tmp_path, unnamed) == "items[0].spec.containers[0].name: Required value"
    upper = make_pod("p", containers=[{"name": "Main", "image": "i"}])
    assert refused(tmp_path, upper) == f'items[0].spec.containers[0].name: Invalid value: "Main": {LABEL_MSG}'
    ok = make_pod("p", spec={"initContainers": [{"name": "setup", "image": "i"}]})
    assert load(tmp_path, ok).pods[0].name == "p"


def test_a_spread_topology_key_is_only_required_an_affinity_one_is_a_label_name(tmp_path: Path) -> None:
    spread = {"maxSkew": 1, "topologyKey": "not a key", "whenUnsatisfiable": "DoNotSchedule"}
    assert load(tmp_path, make_pod("p", spec={"topologySpreadConstraints": [spread]})).pods[0].name == "p"
    term = {"labelSelector": {"matchLabels": {"a": "b"}}, "topologyKey": "not a key"}
    aff = {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}}
    assert refused(tmp_path, make_pod("p", spec={"affinity": aff})).startswith(
        'items[0].spec.affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].topologyKey: '
        'Invalid value: "not a key": name part must consist of'
    )


# -- every kind read -----------------------------------------------------------------------------

CASES: dict[str, tuple[dict[str, Any], str]] = {
    "pod name": (make_pod("Web_1"), f'metadata.name: Invalid value: "Web_1": {SUBDOMAIN_MSG}'),
    "node name": (make_node("Node_1"), f'metadata.name: Invalid value: "Node_1": {SUBDOMAIN_MSG}'),
    "namespace name": (meta("Namespace", "v1", "team.a"), 'metadata.name: Invalid value: "team.a": must not contain dots'),
    "PriorityClass name": (
        meta("PriorityClass", "scheduling.k8s.io/v1", "High", value=5),
        f'metadata.name: Invalid value: "High": {SUBDOMAIN_MSG}',
    ),
    "PodDisruptionBudget name": (
        meta("PodDisruptionBudget", "policy/v1", "a/b", spec={}),
        "metadata.name: Invalid value: \"a/b\": may not contain '/'",
    ),
    "PodDisruptionBudget namespace": (
        meta("PodDisruptionBudget", "policy/v1", "pdb", "Team_A", spec={}),
        f'metadata.namespace: Invalid value: "Team_A": {LABEL_MSG}',
    ),
    "Service name": (meta("Service", "v1", "1-web", spec={}), f'metadata.name: Invalid value: "1-web": {DNS1035_MSG}'),
    "ReplicationController namespace": (
        meta("ReplicationController", "v1", "rc", "Team_A", spec={}),
        f'metadata.namespace: Invalid value: "Team_A": {LABEL_MSG}',
    ),
    "ReplicaSet name": (meta("ReplicaSet", "apps/v1", "RS", spec={}), f'metadata.name: Invalid value: "RS": {SUBDOMAIN_MSG}'),
    "StatefulSet name": (
        meta("StatefulSet", "apps/v1", "db.v1", spec={}),
        'metadata.name: Invalid value: "db.v1": must not contain dots',
    ),
    "PodGroup namespace": (
        meta("PodGroup", "scheduling.x-k8s.io/v1alpha1", "g", "Team_A", spec={"minMember": 1}),
        f'metadata.namespace: Invalid value: "Team_A": {LABEL_MSG}',
    ),
    "ElasticQuota name": (
        meta("ElasticQuota", "scheduling.x-k8s.io/v1alpha1", "Quota", "team", spec={}),
        f'metadata.name: Invalid value: "Quota": {SUBDOMAIN_MSG}',
    ),
    "a Service without a name": (meta("Service", "v1", "", spec={}), "metadata.name: Required value: name or generateName is required"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_names_and_namespaces_of_every_kind_read(case: str, tmp_path: Path) -> None:
    obj, message = CASES[case]
    assert refused(tmp_path, obj) == f"items[0].{message}"


def test_a_cluster_scoped_object_namespace_is_dropped_not_judged(tmp_path: Path) -> None:
    node = make_node("n1")
    node["metadata"]["namespace"] = "Team_A"  # the API server clears it on create
    assert [n.name for n in load(tmp_path, node).nodes] == ["n1"]


def test_ValidateObjectMetaNamespaces() -> None:
    """objectmeta_test.go TestValidateObjectMetaNamespaces: a namespace with a dot, one of 64 characters."""
    with pytest.raises(InputError, match=r'^field\.namespace: Invalid value: "foo\.bar"'):
        field_validation.object_namespace({"name": "test", "namespace": "foo.bar"}, "field")
    letters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
    long = "".join(random.Random(0).choice(letters) for _ in range(64))
    with pytest.raises(InputError, match="Invalid value: .*must be no more than 63 characters"):
        field_validation.object_namespace({"name": "test", "namespace": long}, "field")

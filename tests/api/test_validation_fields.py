"""API-server validation of topology spread constraints, resource requirements and nodes: upstream's
tables, ported.

From kubernetes v1.36 ``pkg/apis/core/validation/validation_test.go``:

- TestValidateTopologySpreadConstraints: 21 of 22 cases, each with upstream's field path and
  message (kubesched reports the first problem; upstream's "use negative MinDomains with
  ScheduleAnyway" lists two, the first is compared). Left out: "invalid matchLabels set on
  labelSelector when AllowInvalidTopologySpreadConstraintLabelSelector is true", an option the
  API server sets only to keep updating pods stored before the selector was validated; files are
  judged as new pods.
- TestValidateResourceRequirements: 5 of 5 valid cases, 5 of 6 error cases. Left out: "pod
  resource with hugepages", which the table runs with every PodValidationOptions off; v1.36's
  defaults admit hugepages in pod-level resources (``SupportedPodLevelResources`` adds them).
- TestValidateNode: the 4 valid nodes and 7 of 12 error cases: labels, taints. Left out: a
  zero-length name (kubesched does not judge name formats), the preferAvoidPods annotation's
  content (read by no v1.36 plugin) and pod CIDRs (not read by the scheduler).
- TestValidateNodeUpdate: the 3 cases on capacity and allocatable (extended resources must be
  whole numbers), judged as the new node.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from kubesched.api import field_validation, schema, validation
from kubesched.errors import InputError

# -- TestValidateTopologySpreadConstraints --------------------------------------------------------

FIELD = "field"
NOT_POSITIVE = "must be greater than zero"
ZONE = "k8s.io/zone"
DNS = "DoNotSchedule"
ANY = "ScheduleAnyway"
NAME_PART = (
    "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
    "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
    "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
)


def tsc(max_skew: int | None = 1, key: str | None = ZONE, when: str | None = DNS, **fields: Any) -> dict[str, Any]:
    """A constraint in wire form; None leaves a required field out."""
    c: dict[str, Any] = {}
    for name, value in (("maxSkew", max_skew), ("topologyKey", key), ("whenUnsatisfiable", when)):
        if value is not None:
            c[name] = value
    return {**c, **fields}


NOT_IN = {"matchExpressions": [{"key": "foo", "operator": "NotIn", "values": ["value1", "value2"]}]}

SPREAD_VALID = {
    "all required fields ok": [tsc(minDomains=3)],
    "can use MinDomains with ScheduleAnyway, when MinDomains = nil": [tsc(when=ANY)],
    "multiple constraints ok with all required fields": [tsc(), tsc(2, "k8s.io/node", ANY)],
    "supported policy name set on NodeAffinityPolicy and NodeTaintsPolicy": [
        tsc(nodeAffinityPolicy="Honor", nodeTaintsPolicy="Ignore")
    ],
    "valid matchLabels set on labelSelector when AllowInvalidTopologySpreadConstraintLabelSelector is false": [
        tsc(labelSelector={"matchLabels": {"foo": "foo"}})
    ],
}

# name -> (constraints, field path, message)
SPREAD_ERRORS: dict[str, tuple[list[dict], str, str]] = {
    "missing MaxSkew": ([tsc(None)], "field[0].maxSkew", f"Invalid value: 0: {NOT_POSITIVE}"),
    "negative MaxSkew": ([tsc(-1)], "field[0].maxSkew", f"Invalid value: -1: {NOT_POSITIVE}"),
    "negative minDomains is invalid": ([tsc(minDomains=-1)], "field[0].minDomains", f"Invalid value: -1: {NOT_POSITIVE}"),
    "cannot use non-nil MinDomains with ScheduleAnyway": (
        [tsc(when=ANY, minDomains=10)],
        "field[0].minDomains",
        "Invalid value: 10: can only use minDomains if whenUnsatisfiable=DoNotSchedule, not ScheduleAnyway",
    ),
    "use negative MinDomains with ScheduleAnyway(invalid)": (
        [tsc(when=ANY, minDomains=-1)],
        "field[0].minDomains",
        f"Invalid value: -1: {NOT_POSITIVE}",
    ),
    "missing TopologyKey": ([tsc(key=None)], "field[0].topologyKey", "Required value: can not be empty"),
    "missing scheduling mode": (
        [tsc(when=None)],
        "field[0].whenUnsatisfiable",
        'Unsupported value: "": supported values: "DoNotSchedule", "ScheduleAnyway"',
    ),
    "unsupported scheduling mode": (
        [tsc(when="N/A")],
        "field[0].whenUnsatisfiable",
        'Unsupported value: "N/A": supported values: "DoNotSchedule", "ScheduleAnyway"',
    ),
    "multiple constraints missing TopologyKey on partial ones": (
        [tsc(key=None, when=ANY), tsc(2)],
        "field[0].topologyKey",
        "Required value: can not be empty",
    ),
    "duplicate constraints": (
        [tsc(), tsc(2)],
        "field[0].{topologyKey, whenUnsatisfiable}",
        'Duplicate value: "{k8s.io/zone, DoNotSchedule}"',
    ),
    "unsupported policy name set on NodeAffinityPolicy": (
        [tsc(nodeAffinityPolicy="Unknown", nodeTaintsPolicy="Ignore")],
        "field[0].nodeAffinityPolicy",
        'Unsupported value: "Unknown": supported values: "Honor", "Ignore"',
    ),
    "unsupported policy name set on NodeTaintsPolicy": (
        [tsc(nodeAffinityPolicy="Honor", nodeTaintsPolicy="Unknown")],
        "field[0].nodeTaintsPolicy",
        'Unsupported value: "Unknown": supported values: "Honor", "Ignore"',
    ),
    "key in MatchLabelKeys isn't correctly defined": (
        [tsc(labelSelector={}, matchLabelKeys=["/simple"])],
        "field[0].matchLabelKeys[0]",
        'Invalid value: "/simple": prefix part must be non-empty',
    ),
    "key exists in both matchLabelKeys and labelSelector": (
        [tsc(matchLabelKeys=["foo"], labelSelector=NOT_IN)],
        "field[0].matchLabelKeys[0]",
        'Invalid value: "foo": exists in both matchLabelKeys and labelSelector',
    ),
    "key in MatchLabelKeys is forbidden to be specified when labelSelector is not set": (
        [tsc(matchLabelKeys=["foo"])],
        "field[0].matchLabelKeys",
        "Forbidden: must not be specified when labelSelector is not set",
    ),
    "invalid matchLabels set on labelSelector when AllowInvalidTopologySpreadConstraintLabelSelector is false": (
        [tsc(labelSelector={"matchLabels": {"NoUppercaseOrSpecialCharsLike=Equals": "foo"}})],
        "field[0].labelSelector.matchLabels",
        f'Invalid value: "NoUppercaseOrSpecialCharsLike=Equals": {NAME_PART}',
    ),
}


@pytest.mark.parametrize("name", list(SPREAD_VALID))
def test_validate_topology_spread_constraints_valid(name: str) -> None:
    field_validation.spread_constraints(copy.deepcopy(SPREAD_VALID[name]), FIELD)


@pytest.mark.parametrize("name", list(SPREAD_ERRORS))
def test_validate_topology_spread_constraints_errors(name: str) -> None:
    constraints, path, message = SPREAD_ERRORS[name]
    with pytest.raises(InputError) as err:
        field_validation.spread_constraints(copy.deepcopy(constraints), FIELD)
    assert (err.value.path, err.value.reason) == (path, message)


# -- TestValidateResourceRequirements -------------------------------------------------------------


def req(limits: dict[str, str], requests: dict[str, str]) -> dict[str, Any]:
    return {"limits": limits, "requests": requests}


# name -> (requirements, pod level)
RESOURCES_VALID: dict[str, tuple[dict, bool]] = {
    "limits and requests of hugepage resource are equal": (
        req({"cpu": "10", "hugepages-2Mi": "2Mi"}, {"cpu": "10", "hugepages-2Mi": "2Mi"}),
        False,
    ),
    "limits and requests of memory resource are equal": (req({"memory": "2Mi"}, {"memory": "2Mi"}), False),
    "limits and requests of cpu resource are equal": (req({"cpu": "10"}, {"cpu": "10"}), False),
    "pod: limits and requests of memory resource are equal": (req({"memory": "2Mi"}, {"memory": "2Mi"}), True),
    "pod: limits and requests of cpu resource are equal": (req({"cpu": "10"}, {"cpu": "10"}), True),
}

# name -> (requirements, pod level, error as shown)
RESOURCES_ERRORS: dict[str, tuple[dict, bool, str]] = {
    "hugepage resource without cpu or memory": (
        req({"hugepages-2Mi": "2Mi"}, {"hugepages-2Mi": "2Mi"}),
        False,
        "resources: Forbidden: HugePages require cpu or memory",
    ),
    "pod resource with ephemeral-storage": (
        req({"ephemeral-storage": "2Mi"}, {"ephemeral-storage2Mi": "2Mi"}),
        True,
        'resources.limits.ephemeral-storage: Unsupported value: "ephemeral-storage": supported values: "cpu", "memory"',
    ),
    "pod resource with unsupported prefixed resources": (
        req({"kubernetesio/cpu": "2"}, {"kubernetesio/memory": "2"}),
        True,
        'resources.limits.kubernetesio/cpu: Unsupported value: "kubernetesio/cpu": supported values: "cpu", "memory"',
    ),
    "pod resource with unsupported native resources": (
        req({"kubernetes.io/" + "a" * 63: "2"}, {"kubernetes.io/" + "a" * 63: "2"}),
        True,
        f'resources.limits.kubernetes.io/{"a" * 63}: Unsupported value: "kubernetes.io/{"a" * 63}": '
        'supported values: "cpu", "memory"',
    ),
    "pod resource with unsupported empty native resource name": (
        req({"kubernetes.io/": "2"}, {"kubernetes.io": "2"}),
        True,
        'resources.limits.kubernetes.io/: Invalid value: "kubernetes.io/": name part must be non-empty',
    ),
}


@pytest.mark.parametrize("name", list(RESOURCES_VALID))
def test_validate_resource_requirements_valid(name: str) -> None:
    res, pod_level = RESOURCES_VALID[name]
    validation.resource_requirements(copy.deepcopy(res), "resources", pod_level=pod_level)


@pytest.mark.parametrize("name", list(RESOURCES_ERRORS))
def test_validate_resource_requirements_errors(name: str) -> None:
    res, pod_level, shown = RESOURCES_ERRORS[name]
    with pytest.raises(InputError) as err:
        validation.resource_requirements(copy.deepcopy(res), "resources", pod_level=pod_level)
    assert str(err.value) == shown


def test_hugepages_without_cpu_or_memory_refuse_the_pod_in_any_container() -> None:
    """The API server refuses such a pod, so kubesched does not schedule it: the whole pod is judged."""
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p", "namespace": "ns"},
        "spec": {
            "containers": [{"name": "a", "image": "i", "resources": req({"cpu": "1"}, {"cpu": "1"})}],
            "initContainers": [{"name": "b", "image": "i", "resources": req({"hugepages-1Gi": "1Gi"}, {"hugepages-1Gi": "1Gi"})}],
        },
    }
    with pytest.raises(InputError) as err:
        validation.pod(pod, "")
    assert str(err.value) == "spec.initContainers[0].resources: Forbidden: HugePages require cpu or memory"


# -- TestValidateNode / TestValidateNodeUpdate ------------------------------------------------------

VALID_SELECTOR = {"a": "b"}
INVALID_SELECTOR = {"NoUppercaseOrSpecialCharsLike=Equals": "b"}
PREFER_AVOID_PODS = "scheduler.alpha.kubernetes.io/preferAvoidPods"
EXTERNAL_IP = [{"type": "ExternalIP", "address": "something"}]


def make_node(name: str, *, labels: dict | None = None, annotations: dict | None = None,
              capacity: dict | None = None, allocatable: dict | None = None, **spec: Any) -> dict[str, Any]:
    md: dict[str, Any] = {"name": name}
    if labels is not None:
        md["labels"] = labels
    if annotations is not None:
        md["annotations"] = annotations
    status: dict[str, Any] = {"addresses": EXTERNAL_IP}
    if capacity is not None:
        status["capacity"] = capacity
    if allocatable is not None:
        status["allocatable"] = allocatable
    return {"apiVersion": "v1", "kind": "Node", "metadata": md, "spec": spec, "status": status}


def judge_node(node: dict) -> None:
    schema.check("Node", node, "")
    validation.node(node, "")


CPU_MEM_0 = {"cpu": "10", "memory": "0"}
CPU_MEM_10G = {"cpu": "10", "memory": "10G"}

NODE_VALID = {
    "extended resources and hugepages": make_node(
        "abc",
        labels=VALID_SELECTOR,
        capacity={"cpu": "10", "memory": "10G", "my.org/gpu": "10", "hugepages-2Mi": "10Gi", "hugepages-1Gi": "10Gi"},
    ),
    "valid taint": make_node(
        "dedicated-node1", capacity=CPU_MEM_0, taints=[{"key": "GPU", "value": "true", "effect": "NoSchedule"}]
    ),
    "preferAvoidPods annotation": make_node(
        "abc",
        annotations={PREFER_AVOID_PODS: '{"preferAvoidPods": [{"podSignature": {"podController": {"apiVersion": "v1", '
                     '"kind": "ReplicationController", "name": "foo", "uid": "abcdef123456", "controller": true}}, '
                     '"reason": "some reason", "message": "some message"}]}'},
        capacity=CPU_MEM_0,
    ),
    "pod CIDRs": make_node("abc", capacity=CPU_MEM_0, podCIDRs=["192.168.0.0/16"]),
    # TestValidateNodeUpdate
    "valid-extended-resources": make_node(
        "valid-extended-resources", capacity={"cpu": "10", "memory": "10G", "example.com/a": "5", "example.com/b": "10"}
    ),
}


def taint(key: str, value: str, effect: str) -> dict[str, str]:
    return {"key": key, "value": value, "effect": effect}


# name -> (node, error as shown)
NODE_ERRORS: dict[str, tuple[dict, str]] = {
    "invalid-labels": (
        make_node("abc-123", labels=INVALID_SELECTOR, capacity=CPU_MEM_10G),
        f'metadata.labels: Invalid value: "NoUppercaseOrSpecialCharsLike=Equals": {NAME_PART}',
    ),
    "missing-taint-key": (
        make_node("dedicated-node1", taints=[taint("", "special-user-1", "NoSchedule")]),
        'spec.taints[0].key: Invalid value: "": name part must be non-empty',
    ),
    "bad-taint-key": (
        make_node("dedicated-node1", taints=[taint("NoUppercaseOrSpecialCharsLike=Equals", "special-user-1", "NoSchedule")]),
        f'spec.taints[0].key: Invalid value: "NoUppercaseOrSpecialCharsLike=Equals": {NAME_PART}',
    ),
    "bad-taint-value": (
        make_node("dedicated-node2", capacity=CPU_MEM_0, taints=[taint("dedicated", "some\\bad\\value", "NoSchedule")]),
        'spec.taints[0].value: Invalid value: "some\\\\bad\\\\value": a valid label must be an empty string or consist',
    ),
    "missing-taint-effect": (
        make_node("dedicated-node3", capacity=CPU_MEM_0, taints=[taint("dedicated", "special-user-3", "")]),
        "spec.taints[0].effect: Required value",
    ),
    "invalid-taint-effect": (
        make_node("dedicated-node3", capacity=CPU_MEM_0, taints=[taint("dedicated", "special-user-3", "NoScheduleNoAdmit")]),
        'spec.taints[0].effect: Unsupported value: "NoScheduleNoAdmit": supported values: "NoSchedule", '
        '"PreferNoSchedule", "NoExecute"',
    ),
    "duplicated-taints-with-same-key-effect": (
        make_node(
            "dedicated-node1",
            taints=[taint("dedicated", "special-user-1", "NoSchedule"), taint("dedicated", "special-user-2", "NoSchedule")],
        ),
        'spec.taints[1]: Duplicate value: "dedicated=special-user-2:NoSchedule": taints must be unique by key and '
        "effect pair",
    ),
    # TestValidateNodeUpdate
    "invalid-fractional-extended-capacity": (
        make_node("invalid-fractional-extended-capacity", capacity={"cpu": "10", "memory": "10G", "example.com/a": "500m"}),
        'status.capacity.example.com/a: Invalid value: "500m": must be an integer',
    ),
    "invalid-fractional-extended-allocatable": (
        make_node(
            "invalid-fractional-extended-allocatable",
            capacity={"cpu": "10", "memory": "10G", "example.com/a": "5"},
            allocatable={"cpu": "10", "memory": "10G", "example.com/a": "4.5"},
        ),
        'status.allocatable.example.com/a: Invalid value: "4.5": must be an integer',
    ),
}


@pytest.mark.parametrize("name", list(NODE_VALID))
def test_validate_node_valid(name: str) -> None:
    judge_node(copy.deepcopy(NODE_VALID[name]))


@pytest.mark.parametrize("name", list(NODE_ERRORS))
def test_validate_node_errors(name: str) -> None:
    node, shown = NODE_ERRORS[name]
    with pytest.raises(InputError) as err:
        judge_node(copy.deepcopy(node))
    assert str(err.value).startswith(shown), str(err.value)

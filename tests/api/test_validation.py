"""API-server validation of what the scheduler reads: upstream's tables, ported.

From kubernetes v1.36 ``pkg/apis/core/validation/validation_test.go`` (TestValidatePod,
TestValidatePodSpec: the cases on fields kubesched checks, with upstream's expected error
substrings) and ``pkg/apis/scheduling/validation/validation_test.go`` (TestValidatePriorityClass).
Objects are the wire form upstream's ``podtest.MakePod`` builds; each is judged as the file loader
judges it: the strict schema check, then validation.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from kubesched.api import schema, validation
from kubesched.errors import InputError


def make_pod(name: str = "123", **spec: Any) -> dict[str, Any]:
    """podtest.MakePod: one container, defaulted fields left to the API server's defaults."""
    base: dict[str, Any] = {
        "containers": [
            {"name": "ctr", "image": "image", "imagePullPolicy": "IfNotPresent", "terminationMessagePolicy": "File"}
        ],
        "restartPolicy": "Always",
        "dnsPolicy": "ClusterFirst",
        "terminationGracePeriodSeconds": 30,
    }
    base.update(spec)
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "ns"}, "spec": base}


def with_labels(pod: dict, labels: dict[str, str]) -> dict:
    pod["metadata"]["labels"] = labels
    return pod


def container(name: str = "ctr", **fields: Any) -> dict[str, Any]:
    return {"name": name, "image": "image", "imagePullPolicy": "IfNotPresent", "terminationMessagePolicy": "File", **fields}


def resources(limits: dict[str, str], requests: dict[str, str]) -> dict[str, Any]:
    """podtest.MakeResourceRequirements(limits, requests)."""
    out: dict[str, Any] = {}
    if limits:
        out["limits"] = limits
    if requests:
        out["requests"] = requests
    return out


def node_affinity(**na: Any) -> dict[str, Any]:
    return {"nodeAffinity": na}


def required_terms(*terms: dict) -> dict[str, Any]:
    return {"nodeSelectorTerms": list(terms)}


def selector(*exprs: dict, labels: dict[str, str] | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if labels:
        out["matchLabels"] = labels
    if exprs:
        out["matchExpressions"] = list(exprs)
    return out


def expr(key: str, op: str, *values: str) -> dict[str, Any]:
    e: dict[str, Any] = {"key": key, "operator": op}
    if values:
        e["values"] = list(values)
    return e


def judge(obj: dict) -> None:
    kind = obj["kind"]
    schema.check(kind, obj, "")
    {"Pod": validation.pod, "Node": validation.node, "PriorityClass": validation.priority_class}[kind](obj, "")


KEY_NOT_IN = expr("key", "NotIn", "value1", "value2")


def affinity_term(**fields: Any) -> dict[str, Any]:
    return {"labelSelector": selector(KEY_NOT_IN), "topologyKey": "k8s.io/zone", **fields}


def pod_affinity(kind: str, hard: bool, term: dict) -> dict[str, Any]:
    if hard:
        return {kind: {"requiredDuringSchedulingIgnoredDuringExecution": [term]}}
    return {kind: {"preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 10, "podAffinityTerm": term}]}}


# -- TestValidatePod ---------------------------------------------------------------------------

POD_SUCCESS: dict[str, dict] = {
    "basic fields": make_pod(),
    "serialized node affinity requirements": make_pod(
        affinity=node_affinity(
            requiredDuringSchedulingIgnoredDuringExecution=required_terms(
                {
                    "matchExpressions": [expr("key2", "In", "value1", "value2")],
                    "matchFields": [expr("metadata.name", "In", "host1")],
                }
            ),
            preferredDuringSchedulingIgnoredDuringExecution=[
                {"weight": 10, "preference": {"matchExpressions": [expr("foo", "In", "bar")]}}
            ],
        )
    ),
    "serialized node affinity requirements, II": make_pod(
        affinity=node_affinity(
            requiredDuringSchedulingIgnoredDuringExecution=required_terms({"matchExpressions": []}),
            preferredDuringSchedulingIgnoredDuringExecution=[{"weight": 10, "preference": {"matchExpressions": []}}],
        )
    ),
    "valid extended resources for init container": make_pod(
        initContainers=[container("valid-extended", resources=resources({"example.com/a": "10"}, {"example.com/a": "10"}))]
    ),
    "valid extended resources for regular container": make_pod(
        containers=[container("valid-extended", resources=resources({"example.com/a": "10"}, {"example.com/a": "10"}))]
    ),
    # Upstream's object carries the selector the API server merged matchLabelKeys into; a
    # manifest (what kubesched reads) has the keys only in matchLabelKeys.
    "MatchLabelKeys/MismatchLabelKeys in required PodAffinity": make_pod(
        affinity=pod_affinity("podAffinity", True, affinity_term(matchLabelKeys=["key2"], mismatchLabelKeys=["key3"]))
    ),
    "MatchLabelKeys/MismatchLabelKeys in preferred PodAntiAffinity": make_pod(
        affinity=pod_affinity(
            "podAntiAffinity", False, affinity_term(matchLabelKeys=["key2"], mismatchLabelKeys=["key3"])
        )
    ),
    "LabelSelector can have the same key as MismatchLabelKeys": make_pod(
        affinity=pod_affinity(
            "podAffinity",
            True,
            {
                "labelSelector": selector(KEY_NOT_IN, expr("key2", "In", "value1"), expr("key2", "NotIn", "value1")),
                "topologyKey": "k8s.io/zone",
                "mismatchLabelKeys": ["key2"],
            },
        )
    ),
}


@pytest.mark.parametrize("name", list(POD_SUCCESS))
def test_validate_pod_success(name: str) -> None:
    judge(copy.deepcopy(POD_SUCCESS[name]))


def _required(*exprs: dict, fields: list | None = None) -> dict:
    term: dict[str, Any] = {"matchExpressions": list(exprs)} if exprs else {}
    if fields is not None:
        term["matchFields"] = fields
    return make_pod(affinity=node_affinity(requiredDuringSchedulingIgnoredDuringExecution=required_terms(term)))


NA = "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0]"

POD_ERRORS: dict[str, tuple[str, dict]] = {
    "bad label": (
        "NoUppercaseOrSpecialCharsLike=Equals",
        with_labels(make_pod(), {"NoUppercaseOrSpecialCharsLike=Equals": "bar"}),
    ),
    "invalid node selector requirement in node affinity, operator can't be null": (
        NA + ".matchExpressions[0].operator",
        _required({"key": "key1"}),
    ),
    "invalid node selector requirement in node affinity, key is invalid": (
        NA + ".matchExpressions[0].key",
        _required(expr("invalid key ___@#", "Exists")),
    ),
    "invalid node field selector requirement in node affinity, more values for field selector": (
        NA + ".matchFields[0].values",
        _required(fields=[expr("metadata.name", "In", "host1", "host2")]),
    ),
    "invalid node field selector requirement in node affinity, invalid operator": (
        NA + ".matchFields[0].operator",
        _required(fields=[expr("metadata.name", "Exists")]),
    ),
    "invalid node field selector requirement in node affinity, invalid key": (
        NA + ".matchFields[0].key",
        _required(fields=[expr("metadata.namespace", "In", "ns1")]),
    ),
    "invalid preferredSchedulingTerm in node affinity, weight should be in range 1-100": (
        "must be in the range 1-100",
        make_pod(
            affinity=node_affinity(
                preferredDuringSchedulingIgnoredDuringExecution=[
                    {"weight": 199, "preference": {"matchExpressions": [expr("foo", "In", "bar")]}}
                ]
            )
        ),
    ),
    "invalid requiredDuringSchedulingIgnoredDuringExecution node selector, nodeSelectorTerms must have at least one term": (
        "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms",
        make_pod(affinity=node_affinity(requiredDuringSchedulingIgnoredDuringExecution=required_terms())),
    ),
    "invalid weight in preferredDuringSchedulingIgnoredDuringExecution in pod affinity annotations, weight should be in range 1-100": (
        "must be in the range 1-100",
        make_pod(
            affinity={
                "podAffinity": {
                    "preferredDuringSchedulingIgnoredDuringExecution": [
                        {
                            "weight": 109,
                            "podAffinityTerm": {
                                "labelSelector": selector(expr("key2", "NotIn", "value1", "value2")),
                                "namespaces": ["ns"],
                                "topologyKey": "region",
                            },
                        }
                    ]
                }
            }
        ),
    ),
    "invalid labelSelector in preferredDuringSchedulingIgnoredDuringExecution in podaffinity annotations, values should be empty if the operator is Exists": (
        "spec.affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].podAffinityTerm.labelSelector.matchExpressions[0].values",
        make_pod(
            affinity=pod_affinity(
                "podAntiAffinity",
                False,
                {
                    "labelSelector": selector(expr("key2", "Exists", "value1", "value2")),
                    "namespaces": ["ns"],
                    "topologyKey": "region",
                },
            )
        ),
    ),
    "invalid namespaceSelector in preferredDuringSchedulingIgnoredDuringExecution in podaffinity, In operator must include Values": (
        "spec.affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].podAffinityTerm.namespaceSelector.matchExpressions[0].values",
        make_pod(
            affinity=pod_affinity(
                "podAntiAffinity",
                False,
                {"namespaceSelector": selector(expr("key2", "In")), "namespaces": ["ns"], "topologyKey": "region"},
            )
        ),
    ),
    "invalid namespaceSelector in preferredDuringSchedulingIgnoredDuringExecution in podaffinity, Exists operator can not have values": (
        "spec.affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].podAffinityTerm.namespaceSelector.matchExpressions[0].values",
        make_pod(
            affinity=pod_affinity(
                "podAntiAffinity",
                False,
                {
                    "namespaceSelector": selector(expr("key2", "Exists", "value1", "value2")),
                    "namespaces": ["ns"],
                    "topologyKey": "region",
                },
            )
        ),
    ),
    "invalid name space in preferredDuringSchedulingIgnoredDuringExecution in podaffinity annotations, namespace should be valid": (
        "spec.affinity.podAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].podAffinityTerm.namespace",
        make_pod(
            affinity=pod_affinity(
                "podAffinity",
                False,
                {
                    "labelSelector": selector(expr("key2", "Exists")),
                    "namespaces": ["INVALID_NAMESPACE"],
                    "topologyKey": "region",
                },
            )
        ),
    ),
    **{
        f"invalid {'hard' if hard else 'soft'} pod {'anti-' if anti else ''}affinity, empty topologyKey is not allowed for {'hard' if hard else 'soft'} pod {'anti-' if anti else ''}affinity": (
            "can not be empty",
            make_pod(
                affinity=pod_affinity(
                    "podAntiAffinity" if anti else "podAffinity",
                    hard,
                    {"labelSelector": selector(expr("key2", "In", "value1", "value2")), "namespaces": ["ns"]},
                )
            ),
        )
        for hard in (True, False)
        for anti in (False, True)
    },
    **{
        f"invalid {'hard' if hard else 'soft'} pod {'anti-' if anti else ''}affinity, key in {field} isn't correctly defined": (
            "prefix part must be non-empty",
            make_pod(
                affinity=pod_affinity(
                    "podAntiAffinity" if anti else "podAffinity",
                    hard,
                    affinity_term(**{field[0].lower() + field[1:]: ["/simple"]}),
                )
            ),
        )
        for hard in (True, False)
        for anti in (False, True)
        for field in ("MatchLabelKeys", "MismatchLabelKeys")
    },
    **{
        f"invalid {'hard' if hard else 'soft'} pod {'anti-' if anti else ''}affinity, key exists in both matchLabelKeys and labelSelector": (
            "exists in both matchLabelKeys and labelSelector",
            with_labels(
                make_pod(
                    affinity=pod_affinity(
                        "podAntiAffinity" if anti else "podAffinity",
                        hard,
                        {
                            "labelSelector": selector(expr("key", "NotIn", "value2")),
                            "topologyKey": "k8s.io/zone",
                            "matchLabelKeys": ["key"],
                        },
                    )
                ),
                {"key": "value1"},
            ),
        )
        for hard in (True, False)
        for anti in (False, True)
    },
    **{
        f"invalid {'hard' if hard else 'soft'} pod {'anti-' if anti else ''}affinity, key exists in both MatchLabelKeys and MismatchLabelKeys": (
            "exists in both matchLabelKeys and mismatchLabelKeys",
            make_pod(
                affinity=pod_affinity(
                    "podAntiAffinity" if anti else "podAffinity",
                    hard,
                    affinity_term(matchLabelKeys=["samekey"], mismatchLabelKeys=["samekey"]),
                )
            ),
        )
        for hard in (True, False)
        for anti in (False, True)
    },
    "invalid toleration key": (
        "spec.tolerations[0].key",
        make_pod(tolerations=[{"key": "nospecialchars^=@", "operator": "Equal", "value": "bar", "effect": "NoSchedule"}]),
    ),
    "invalid toleration operator": (
        "spec.tolerations[0].operator",
        make_pod(tolerations=[{"key": "foo", "operator": "In", "value": "bar", "effect": "NoSchedule"}]),
    ),
    "value must be empty when `operator` is 'Exists'": (
        "spec.tolerations[0].operator",
        make_pod(tolerations=[{"key": "foo", "operator": "Exists", "value": "bar", "effect": "NoSchedule"}]),
    ),
    "operator must be 'Exists' when `key` is empty": (
        "spec.tolerations[0].operator",
        make_pod(tolerations=[{"operator": "Equal", "value": "bar", "effect": "NoSchedule"}]),
    ),
    "effect must be 'NoExecute' when `TolerationSeconds` is set": (
        "spec.tolerations[0].effect",
        make_pod(
            "pod-forgiveness-invalid",
            tolerations=[
                {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoSchedule", "tolerationSeconds": 20}
            ],
        ),
    ),
    "invalid extended resource name in container request": (
        "must be a standard resource for containers",
        make_pod(containers=[container("invalid", resources=resources({"invalid-name": "2"}, {"invalid-name": "2"}))]),
    ),
    "invalid extended resource requirement: request must be == limit": (
        "must be equal to example.com/a",
        make_pod(containers=[container("invalid", resources=resources({"example.com/a": "2"}, {"example.com/a": "1"}))]),
    ),
    "invalid extended resource requirement without limit": (
        "Limit must be set",
        make_pod(containers=[container("invalid", resources=resources({}, {"example.com/a": "2"}))]),
    ),
    "invalid fractional extended resource in container request": (
        "must be an integer",
        make_pod(containers=[container("invalid", resources=resources({}, {"example.com/a": "500m"}))]),
    ),
    "invalid fractional extended resource in init container request": (
        "must be an integer",
        make_pod(initContainers=[container("invalid", resources=resources({}, {"example.com/a": "500m"}))]),
    ),
    "invalid fractional extended resource in container limit": (
        "must be an integer",
        make_pod(containers=[container("invalid", resources=resources({"example.com/a": "2.5"}, {"example.com/a": "5"}))]),
    ),
    "invalid fractional extended resource in init container limit": (
        "must be an integer",
        make_pod(
            initContainers=[container("invalid", resources=resources({"example.com/a": "2.5"}, {"example.com/a": "2.5"}))]
        ),
    ),
}


@pytest.mark.parametrize("name", list(POD_ERRORS))
def test_validate_pod_errors(name: str) -> None:
    expected, pod = POD_ERRORS[name]
    with pytest.raises(InputError) as err:
        judge(copy.deepcopy(pod))
    assert expected in str(err.value)
    assert "\n" not in str(err.value)


# -- TestValidatePodSpec: the host-network cases (defaulting fills an unset hostPort first) -------


def host_network_pod(host_port: int, container_port: int) -> dict:
    return make_pod(
        hostNetwork=True,
        containers=[container(ports=[{"hostPort": host_port, "containerPort": container_port, "protocol": "TCP"}])],
    )


def test_validate_pod_spec_populate_host_network() -> None:
    judge(host_network_pod(8080, 8080))


def test_validate_pod_spec_with_host_network_host_port_not_equal_to_container_port() -> None:
    with pytest.raises(InputError, match=r"ports\[0\]\.hostPort: Invalid value: 8080: must match `containerPort`"):
        judge(host_network_pod(8080, 2600))


# -- TestValidatePriorityClass (scheduling) ------------------------------------------------------


def priority_class(name: str, value: int, namespace: str = "", global_default: bool = False, **extra: Any) -> dict:
    md: dict[str, Any] = {"name": name}
    if namespace:
        md["namespace"] = namespace
    return {
        "apiVersion": "scheduling.k8s.io/v1",
        "kind": "PriorityClass",
        "metadata": md,
        "value": value,
        "globalDefault": global_default,
        **extra,
    }


@pytest.mark.parametrize(
    "name, pc",
    [
        ("no description", priority_class("tier1", 100)),
        ("with description", priority_class("tier1", 200, description="Used for the highest priority pods.")),
        ("system node critical", priority_class("system-node-critical", 2000001000, description="system priority class 0")),
    ],
)
def test_validate_priority_class_success(name: str, pc: dict) -> None:
    judge(pc)


@pytest.mark.parametrize(
    "name, pc, expected",
    [
        ("with namespace", priority_class("tier1", 100, namespace="foo"), "metadata.namespace: Forbidden"),
        ("invalid name", priority_class("tier&1", 100), "metadata.name: Invalid value"),
        ("incorrect system class name", priority_class("system-node-critical", 0), "must be 2000001000"),
        ("incorrect system class value", priority_class("system-something", 2000001000), "not a known system priority class"),
        # The Priority admission plugin's own check (and this validation's) on user classes
        (
            "value above HighestUserDefinablePriority",
            priority_class("huge", 1_000_000_001),
            "value: Forbidden: maximum allowed value of a user defined priority is 1000000000",
        ),
        ("preemption policy", priority_class("tier1", 1, preemptionPolicy="Sometimes"), 'Unsupported value: "Sometimes"'),
    ],
)
def test_validate_priority_class_errors(name: str, pc: dict, expected: str) -> None:
    with pytest.raises(InputError) as err:
        judge(pc)
    assert expected in str(err.value)

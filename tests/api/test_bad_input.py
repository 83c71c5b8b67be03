"""Bad cluster input through the CLI: one line naming the file and the field, exit code 2.

Each case is an input the API server refuses (validation, admission, strict decoding) or one
that used to crash, change results or pass silently; the expected text is the part of the line
after the file name.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from kubesched.cli import main

NODE: dict[str, Any] = {
    "apiVersion": "v1",
    "kind": "Node",
    "metadata": {"name": "n1"},
    "status": {"allocatable": {"cpu": "1", "memory": "1Gi", "pods": "110"}},
}


def node(name: str = "n1", **status: Any) -> dict[str, Any]:
    n = copy.deepcopy(NODE)
    n["metadata"]["name"] = name
    n["status"]["allocatable"].update(status)
    return n


def pod(name: str = "p", **spec: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"containers": [{"name": "c", "image": "i", "resources": {"requests": {"cpu": "100m"}}}]}
    body.update(spec)
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"}, "spec": body}


def ctr(**fields: Any) -> dict[str, Any]:
    return {"name": "c", "image": "i", **fields}


def pc(name: str, value: int, default: bool = False) -> dict[str, Any]:
    return {
        "apiVersion": "scheduling.k8s.io/v1",
        "kind": "PriorityClass",
        "metadata": {"name": name},
        "value": value,
        "globalDefault": default,
    }


def tainted(*taints: dict) -> dict[str, Any]:
    n = node()
    n["spec"] = {"taints": list(taints)}
    return n


REQUIRED_NA = {
    "nodeAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [{"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a b"]}]}]
        }
    }
}

CASES: list[tuple[str, list[dict], str]] = [
    (
        "negative overhead",
        [node(), pod(overhead={"cpu": "-3"}, containers=[ctr(resources={"requests": {"cpu": "4"}})])],
        'documents[1].spec.overhead.cpu: Invalid value: "-3": must be greater than or equal to 0',
    ),
    ("duplicate pod", [node(), pod(), pod()], 'documents[2]: duplicate Pod "default/p" (first at '),
    (
        "preemptionPolicy Sometimes",
        [node(), pod(preemptionPolicy="Sometimes")],
        'spec.preemptionPolicy: Unsupported value: "Sometimes": supported values: "PreemptLowerPriority", "Never"',
    ),
    ("priority as a string", [node(), pod(priority="5")], 'spec.priority: expected an integer (int32), got string "5"'),
    ("priority past int32", [node(), pod(priority=3_000_000_000)], "spec.priority: invalid value 3000000000: out of the int32 range"),
    (
        "requests above limits",
        [node(), pod(containers=[ctr(resources={"requests": {"cpu": "2"}, "limits": {"cpu": "1"}})])],
        'resources.requests.cpu: Invalid value: "2": must be less than or equal to cpu limit of 1',
    ),
    (
        "fractional extended resource",
        [node(), pod(containers=[ctr(resources={"requests": {"example.com/gpu": "500m"}, "limits": {"example.com/gpu": "500m"}})])],
        'resources.limits.example.com/gpu: Invalid value: "500m": must be an integer',
    ),
    (
        "unequal extended resource",
        [node(), pod(containers=[ctr(resources={"requests": {"example.com/gpu": "1"}, "limits": {"example.com/gpu": "2"}})])],
        "must be equal to example.com/gpu limit of 2",
    ),
    (
        "hostPort protocol",
        [node(), pod(containers=[ctr(ports=[{"containerPort": 80, "hostPort": 80, "protocol": "tcp"}])])],
        'ports[0].protocol: Unsupported value: "tcp": supported values: "SCTP", "TCP", "UDP"',
    ),
    (
        "hostPort range",
        [node(), pod(containers=[ctr(ports=[{"containerPort": 80, "hostPort": 70000}])])],
        "ports[0].hostPort: Invalid value: 70000: must be between 1 and 65535, inclusive",
    ),
    (
        "lower-case toleration operator",
        [node(), pod(tolerations=[{"key": "a", "operator": "exists"}])],
        'spec.tolerations[0].operator: Unsupported value: "exists": supported values: "Equal", "Exists"',
    ),
    (
        "selector label key",
        [
            node(),
            pod(
                affinity={
                    "podAffinity": {
                        "requiredDuringSchedulingIgnoredDuringExecution": [
                            {"labelSelector": {"matchLabels": {"bad key": "x"}}, "topologyKey": "zone"}
                        ]
                    }
                }
            ),
        ],
        'labelSelector.matchLabels: Invalid value: "bad key": name part must consist of',
    ),
    ("toleration key", [node(), pod(tolerations=[{"key": "bad key", "operator": "Exists"}])], 'tolerations[0].key: Invalid value: "bad key"'),
    (
        "topology key",
        [
            node(),
            pod(
                affinity={
                    "podAntiAffinity": {
                        "requiredDuringSchedulingIgnoredDuringExecution": [
                            {"labelSelector": {"matchLabels": {"a": "b"}}, "topologyKey": "bad key"}
                        ]
                    }
                }
            ),
        ],
        'requiredDuringSchedulingIgnoredDuringExecution[0].topologyKey: Invalid value: "bad key"',
    ),
    (
        "duplicate spread constraints",
        [
            node(),
            pod(
                topologySpreadConstraints=[
                    {"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule", "labelSelector": {}}
                ]
                * 2
            ),
        ],
        'topologySpreadConstraints[0].{topologyKey, whenUnsatisfiable}: Duplicate value: "{zone, DoNotSchedule}"',
    ),
    (
        "duplicate taints",
        [tainted({"key": "a", "effect": "NoSchedule"}, {"key": "a", "value": "x", "effect": "NoSchedule"}), pod()],
        "spec.taints[1]: Duplicate value",
    ),
    ("negative allocatable", [node(cpu="-1"), pod()], 'status.allocatable.cpu: Invalid value: "-1": must be greater than or equal to 0'),
    ("fractional allocatable", [node(pods="1.5"), pod()], 'status.allocatable.pods: Invalid value: "1.5": must be an integer'),
    (
        "PriorityClass above 1e9",
        [node(), pc("huge", 2_000_000_000), pod()],
        "documents[1].value: Forbidden: maximum allowed value of a user defined priority is 1000000000",
    ),
    (
        "two global defaults",
        [node(), pc("a", 1, True), pc("b", 2, True), pod()],
        "documents[2]: PriorityClass a is already marked as default. Only one default can exist",
    ),
    (
        "required node affinity value",
        [node(), pod(affinity=REQUIRED_NA)],
        'nodeSelectorTerms[0].matchExpressions[0].values[0]: Invalid value: "a b": a valid label must be an empty string',
    ),
    (
        "unknown field",
        [node(), pod(toleration=[{"key": "a", "operator": "Exists"}])],
        'documents[1].spec.toleration: unknown field "toleration" (PodSpec has no such field); did you mean "tolerations"?',
    ),
    ("wrong apiVersion", [node(), {**pod(), "apiVersion": "apps/v1"}], 'documents[1].apiVersion: Pod is served as apiVersion "v1", not "apps/v1"'),
    (
        "KubeSchedulerConfiguration given with -f",
        [{"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"}],
        "kind: a KubeSchedulerConfiguration is the scheduler's configuration: give it with --config, not -f",
    ),
    ("integer written '--5'", [node(), pod(priority="--5")], 'spec.priority: expected an integer (int32), got string "--5"'),
    (
        "integer written '²'",
        [node(), pod(containers=[ctr(ports=[{"containerPort": 80, "hostPort": "²"}])])],
        'ports[0].hostPort: expected an integer (int32), got string "²"',
    ),
    (
        "Arabic-Indic digits",
        [node(), pod(containers=[ctr(resources={"requests": {"cpu": "١٢"}})])],
        'resources.requests.cpu: invalid quantity "١٢"',
    ),
    (
        "pod requests past int64",
        [node(), pod(containers=[ctr(resources={"requests": {"cpu": "8Ei"}}), {**ctr(resources={"requests": {"cpu": "8Ei"}}), "name": "d"}])],
        "documents[1].spec: the pod's requests add up to",
    ),
    (
        "bound pods past int64 on a node",
        [
            node(memory="8Ei"),
            pod("a", nodeName="n1", containers=[ctr(resources={"requests": {"memory": "7Ei"}})]),
            pod("b", nodeName="n1", containers=[ctr(resources={"requests": {"memory": "7Ei"}})]),
        ],
        "documents[2].spec.nodeName: the requests of the pods bound to node n1 add up to 14Ei memory, past the int64 range",
    ),
    (
        "GPU count past what a node has",
        [node(**{"alibabacloud.com/gpu-count": "100000"}), pod()],
        "status.allocatable.alibabacloud.com/gpu-count: 100000 GPUs, more than a node can have (128)",
    ),
]


@pytest.mark.parametrize("name, docs, expected", CASES, ids=[c[0] for c in CASES])
def test_bad_cluster_input_is_one_line_exit_2(
    name: str, docs: list[dict], expected: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    f = tmp_path / "c.yaml"
    f.write_text(yaml.safe_dump_all(docs))
    assert main(["schedule", "-f", str(f)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"kubesched: error: {f}: ") and err.count("\n") == 1, err
    assert expected in err


RAW_CASES: list[tuple[str, str, bytes, str]] = [
    ("non-UTF-8 file", "c.yaml", b"kind: Pod\nmetadata: {name: \xff}\n", "cannot read: not UTF-8 text (byte 0xff at line 2"),
    ("NUL character", "c.yaml", b"kind: Pod\nmetadata: {name: a\x00}\n", "invalid YAML at line 2 column 19: unacceptable character #x0000"),
    ("deeply nested YAML", "c.yaml", b"a: " + b"[" * 5000 + b"]" * 5000, "exceeded maximum nesting depth"),
    ("deeply nested JSON", "c.json", b"[" * 5000 + b"]" * 5000, "invalid JSON at line 1 column 1026"),
    ("bad tagged value", "c.yaml", b"kind: !!float x\n", 'invalid YAML at line 1 column 7: invalid !!float value "x"'),
    ("duplicate key", "c.yaml", b"kind: Pod\nkind: Node\n", 'invalid YAML at line 2 column 1: duplicate field "kind" (first at line 1)'),
    ("alias cycle", "c.yaml", b"a: &x [*x]\n", "an alias refers to a node that contains it"),
    (
        "alias bomb",
        "c.yaml",
        ("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n" + "".join(f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 10)}]\n" for i in range(1, 9))).encode(),
        "aliases expand the document to more than 1,000,000 nodes",
    ),
]


@pytest.mark.parametrize("name, fname, data, expected", RAW_CASES, ids=[c[0] for c in RAW_CASES])
def test_unreadable_input_is_one_line_exit_2(
    name: str, fname: str, data: bytes, expected: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    f = tmp_path / fname
    f.write_bytes(data)
    assert main(["schedule", "-f", str(f)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"kubesched: error: {f}: ") and err.count("\n") == 1, err
    assert expected in err


@pytest.mark.parametrize("parser", ["libyaml", "pure-Python"])
def test_nesting_is_bounded_whatever_parser_reads_the_file(parser: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # Not every libyaml build bounds nesting (CI's did not); the loader's own bound must hold.
    from kubesched import documents
    from kubesched.errors import InputError

    if parser == "pure-Python":
        monkeypatch.setattr(documents, "_BaseLoader", yaml.SafeLoader)
    n = documents.MAX_DEPTH
    assert documents.load_documents("a: " + "[" * (n - 1) + "]" * (n - 1), "ok.yaml")
    with pytest.raises(InputError, match=r"line 1 column 1003: exceeded maximum nesting depth"):
        documents.load_documents("a: " + "[" * 5000 + "]" * 5000, "deep.yaml")


def test_seed_must_be_a_whole_number(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as e:
        main(["schedule", "--seed", "-1"])
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert err == 'kubesched schedule: error: argument --seed: invalid value "-1": expected a whole number from 0 to 2^63-1\n'


def _json(tmp_path: Path, docs: list[dict]) -> str:
    f = tmp_path / "c.json"
    f.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": docs}))
    return str(f)


def test_pod_naming_an_unknown_priority_class_is_a_warning(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    f = _json(tmp_path, [node(), pod(priorityClassName="nope", priority=7)])
    assert main(["schedule", "-f", f, "-o", "json", "--seed", "0"]) == 0
    out = capsys.readouterr()
    assert out.err == (
        'kubesched: warning: pod default/p: spec.priorityClassName "nope" names no PriorityClass in the input '
        "(the API server would refuse the pod); its priority is 7\n"
    )
    assert json.loads(out.out)["placements"][0]["node"] == "n1"


def test_system_priority_classes_are_built_in(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The API server creates system-node-critical and system-cluster-critical itself."""
    from kubesched.load import load_cluster

    objs = load_cluster([_json(tmp_path, [node(), pod(priorityClassName="system-node-critical")])])
    assert objs.pods[0].priority == 2_000_001_000 and not objs.warnings


def test_preferred_node_affinity_value_is_admitted(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The API server admits any value in preferred terms; kube-scheduler's PreScore then fails
    for the pod (with one feasible node scoring is skipped and the pod is placed)."""
    preferred = {
        "nodeAffinity": {
            "preferredDuringSchedulingIgnoredDuringExecution": [
                {"weight": 1, "preference": {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a b"]}]}}
            ]
        }
    }
    f = _json(tmp_path, [node("n1"), node("n2"), pod(affinity=preferred)])
    assert main(["schedule", "-f", f, "-o", "json"]) == 0
    placement = json.loads(capsys.readouterr().out)["placements"][0]
    assert placement["node"] is None and 'values[0]: invalid label value "a b"' in placement["message"]
    f = _json(tmp_path, [node("n1"), pod(affinity=preferred)])
    assert main(["schedule", "-f", f, "-o", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["placements"][0]["node"] == "n1"


def test_kubectl_dump_fields_load(tmp_path: Path) -> None:
    """What `kubectl get -o yaml` adds (status, managedFields, timestamps, ownerReferences) is known."""
    from kubesched.load import load_cluster

    p = pod(nodeName="n1")
    p["metadata"].update(
        {
            "uid": "u1",
            "resourceVersion": "42",
            "creationTimestamp": "2026-01-02T03:04:05Z",
            "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "rs", "uid": "u0", "controller": True}],
            "managedFields": [{"manager": "m", "operation": "Update", "fieldsType": "FieldsV1", "fieldsV1": {"f:spec": {}}}],
        }
    )
    p["status"] = {
        "phase": "Running",
        "startTime": "2026-01-02T03:04:05Z",
        "conditions": [{"type": "Ready", "status": "True", "lastProbeTime": None}],
        "containerStatuses": [{"name": "c", "ready": True, "restartCount": 0, "image": "i", "imageID": "", "state": {"running": {"startedAt": "2026-01-02T03:04:05Z"}}}],
    }
    f = tmp_path / "dump.yaml"
    f.write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": [node(), p]}))
    objs = load_cluster([str(f)])
    assert [x.key for x in objs.pods] == ["default/p"] and objs.pods[0].owners[0].name == "rs"

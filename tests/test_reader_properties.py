"""Property tests over every reader: any input loads or fails with one InputError line.

Manifests, scheduler configurations (with scheduler-plugins' args), openb CSVs, synthetic
specs and quantities are fed values of every JSON type at the fields they read, plus the
strings that used to slip through (``"--5"``, ``"²"``, ``"١٢"``, huge numbers). A reader may
accept the input or raise ``InputError``; anything else (a traceback) fails the test.
"""

from __future__ import annotations

import copy
import csv
import io
import json
import tempfile
from pathlib import Path
from typing import Any

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kubesched.api.quantity import parse_quantity, resource_value
from kubesched.app import build_config, build_registry
from kubesched.errors import InputError
from kubesched.load import load_cluster
from kubesched.scheduler import Scheduler
from kubesched.sim.synthetic import generate, load_spec
from kubesched.state.snapshot import Snapshot
from kubesched.trace.openb import read_nodes, read_pods

TRICKY_STRINGS = ["--5", "²", "١٢", "1_000", " 7", "0x10", "1e400", "-0", "9" * 40, "nan", "inf", "", "a b",
                  "Exists", "exists", "TCP", "tcp", "100m", "-1", "1.5", "8Ei", "9Ei", "1e30", "\x00", "é"]  # fmt: skip
scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.sampled_from([0, 1, -1, 2**31, 2**63, 10**9 + 1, 65536]),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from(TRICKY_STRINGS),
    st.text(max_size=12),
)
values = st.recursive(
    scalars,
    lambda children: st.one_of(
        st.lists(children, max_size=3), st.dictionaries(st.sampled_from(["a", "key", "operator", "values", "x"]), children, max_size=3)
    ),
    max_leaves=8,
)
SETTINGS = settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


def _set(doc: Any, path: list[str | int], value: Any) -> None:
    """Put ``value`` at ``path``; an earlier edit may have replaced a parent: then no change."""
    cur = doc
    try:
        for p in path[:-1]:
            cur = cur[p]
        cur[path[-1]] = value
    except (KeyError, IndexError, TypeError):
        pass


BASE: list[dict[str, Any]] = [
    {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": "n1", "labels": {"zone": "a"}},
        "spec": {"taints": [{"key": "k", "value": "v", "effect": "NoSchedule"}]},
        "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}},
    },
    {
        "apiVersion": "scheduling.k8s.io/v1",
        "kind": "PriorityClass",
        "metadata": {"name": "high"},
        "value": 100,
    },
    {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p", "namespace": "default", "labels": {"app": "x"}},
        "spec": {
            "priorityClassName": "high",
            "containers": [
                {
                    "name": "c",
                    "image": "i",
                    "resources": {"requests": {"cpu": "1"}, "limits": {"cpu": "2"}},
                    "ports": [{"containerPort": 80, "hostPort": 80}],
                }
            ],
            "tolerations": [{"key": "k", "operator": "Exists"}],
            "affinity": {
                "nodeAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": {
                        "nodeSelectorTerms": [{"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]}]
                    }
                }
            },
            "topologySpreadConstraints": [
                {"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule", "labelSelector": {"matchLabels": {"app": "x"}}}
            ],
        },
    },
]
POD = ["items", 2, "spec"]
MANIFEST_PATHS: list[list[str | int]] = [
    ["items", 0, "status", "allocatable", "cpu"],
    ["items", 0, "status", "allocatable", "pods"],
    ["items", 0, "status", "allocatable", "example.com/gpu"],
    ["items", 0, "spec", "taints", 0, "effect"],
    ["items", 0, "spec", "taints"],
    ["items", 0, "metadata", "labels"],
    ["items", 0, "spec", "unschedulable"],
    ["items", 1, "value"],
    ["items", 1, "globalDefault"],
    ["items", 2, "metadata", "name"],
    ["items", 2, "metadata", "labels", "app"],
    ["items", 2, "metadata", "annotations"],
    [*POD, "priority"],
    [*POD, "preemptionPolicy"],
    [*POD, "overhead"],
    [*POD, "nodeName"],
    [*POD, "schedulingGates"],
    [*POD, "containers", 0, "resources", "requests", "cpu"],
    [*POD, "containers", 0, "resources", "limits"],
    [*POD, "containers", 0, "ports", 0, "hostPort"],
    [*POD, "containers", 0, "ports", 0, "protocol"],
    [*POD, "tolerations", 0, "operator"],
    [*POD, "tolerations", 0, "tolerationSeconds"],
    [*POD, "affinity", "nodeAffinity", "requiredDuringSchedulingIgnoredDuringExecution", "nodeSelectorTerms", 0, "matchExpressions", 0, "values"],
    [*POD, "affinity", "podAntiAffinity"],
    [*POD, "topologySpreadConstraints", 0, "maxSkew"],
    [*POD, "topologySpreadConstraints", 0, "labelSelector"],
    [*POD, "initContainers"],
    [*POD, "resources"],
    [*POD, "bogusField"],
]


@SETTINGS
@given(st.lists(st.tuples(st.sampled_from(MANIFEST_PATHS), values), min_size=1, max_size=3), st.booleans())
def test_manifests_load_or_fail_in_one_line(tmp_path_factory: Any, edits: list, as_json: bool) -> None:
    doc = {"apiVersion": "v1", "kind": "List", "items": copy.deepcopy(BASE)}
    for path, value in edits:
        _set(doc, path, value)
    folder: Path = tmp_path_factory.mktemp("m")
    f = folder / ("c.json" if as_json else "c.yaml")
    try:
        f.write_text(yaml.safe_dump(doc) if not as_json else __import__("json").dumps(doc, allow_nan=True))
    except (ValueError, TypeError):
        return
    try:
        load_cluster([str(f)])
    except InputError as e:
        assert "\n" not in str(e) and str(e).startswith(str(f))


# Edits the API server's validation refuses but whose values have the right JSON types: with
# --validate=warn or ignore they reach parsing and scheduling, which must load and schedule them
# or refuse them in one line.
NA = [*POD, "affinity", "nodeAffinity"]
REQ_TERM = [*NA, "requiredDuringSchedulingIgnoredDuringExecution", "nodeSelectorTerms", 0, "matchExpressions", 0]
TSC = [*POD, "topologySpreadConstraints", 0]
INVALID_EDITS: list[tuple[list[str | int], Any]] = [
    (["items", 0, "metadata", "name"], "Bad_Node"), (["items", 2, "metadata", "namespace"], "Team_A"),
    ([*POD, "containers", 0, "name"], ""), ([*POD, "initContainers"], [{"name": "c", "image": "x"}]),
    ([*TSC, "topologyKey"], "not a key"), ([*TSC, "maxSkew"], -3), ([*TSC, "matchLabelKeys"], ["app"]),
    ([*REQ_TERM, "operator"], "Foo"), ([*REQ_TERM, "values"], []), ([*REQ_TERM, "key"], "bad key"),
    ([*NA, "preferredDuringSchedulingIgnoredDuringExecution"], [{"weight": 0, "preference": {}}]),
    ([*POD, "affinity", "podAntiAffinity"], {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"labelSelector": {"matchLabels": {"app": "x"}}, "topologyKey": "bad key", "namespaces": ["Bad_NS"]}]}),
    ([*POD, "tolerations", 0, "tolerationSeconds"], 5), ([*POD, "tolerations", 1], {"operator": "Exists", "value": "v"}),
    (["items", 0, "spec", "taints", 1], {"key": "k", "value": "v", "effect": "NoSchedule"}),
    (["items", 0, "spec", "taints", 0, "value"], "bad value!"),
    ([*POD, "containers", 0, "resources"], {"requests": {"cpu": "2"}, "limits": {"cpu": "1"}}),
    ([*POD, "containers", 0, "resources"], {"requests": {"example.com/gpu": "0.5"}, "limits": {"example.com/gpu": "0.5"}}),
    ([*POD, "containers", 0, "resources"], {"requests": {"foo": "1"}}),
    ([*POD, "containers", 0, "ports"], [{"containerPort": 80, "hostPort": 80}, {"containerPort": 81, "hostPort": 80}]),
    ([*POD, "resources"], {"requests": {"cpu": "100m"}}), ([*POD, "schedulingGates"], [{"name": "g"}, {"name": "g"}]),
    ([*POD, "preemptionPolicy"], "Always"), ([*POD, "overhead"], {"cpu": "-1"}),
    (["items", 1, "value"], 2_000_000_000), (["items", 1, "preemptionPolicy"], "Sometimes"),
    (["items", 0, "status", "allocatable", "cpu"], "-1"), (["items", 0, "status", "allocatable", "example.com/gpu"], "0.5"),
    ([*POD, "bogus"], {"a": 1}),
]  # fmt: skip


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from(INVALID_EDITS), min_size=1, max_size=4), st.sampled_from(["warn", "ignore"]))
def test_manifests_the_api_server_refuses_load_and_schedule_or_fail_in_one_line(edits: list, mode: str) -> None:
    """--validate=warn and ignore skip the API server's validation: what parsing then admits must
    schedule without a traceback (a negative allocatable, a weight of 0, an operator no parser
    knows, ...)."""
    from kubesched.app import build_session
    from kubesched.batch import schedule_all

    doc = {"apiVersion": "v1", "kind": "List", "items": copy.deepcopy(BASE)}
    for path, value in edits:
        _set(doc, path, copy.deepcopy(value))
    with tempfile.TemporaryDirectory() as folder:
        f = Path(folder) / "c.json"
        f.write_text(json.dumps(doc))
        try:
            schedule_all(build_session([str(f)], seed=1, validate=mode))
        except InputError as e:
            assert "\n" not in str(e) and str(e).startswith(str(f))


CONFIG_ARGS: list[tuple[str, list[str]]] = [
    ("Coscheduling", ["permitWaitingTimeSeconds", "podGroupBackoffSeconds"]),
    ("TargetLoadPacking", ["targetUtilization", "defaultRequests", "defaultRequestsMultiplier", "metricProvider"]),
    ("LoadVariationRiskBalancing", ["safeVarianceMargin", "safeVarianceSensitivity", "metricProvider"]),
    ("LowestLoad", ["resources", "mode"]),
    ("CapacityScheduling", ["anything"]),
    ("NodeResourcesFit", ["scoringStrategy", "ignoredResources"]),
    ("PodTopologySpread", ["defaultConstraints", "defaultingType"]),
]


@SETTINGS
@given(st.sampled_from(CONFIG_ARGS), st.data())
def test_plugin_args_load_or_fail_in_one_line(tmp_path_factory: Any, plugin: tuple[str, list[str]], data: Any) -> None:
    name, fields = plugin
    args = {f: data.draw(values) for f in data.draw(st.lists(st.sampled_from(fields), max_size=2, unique=True))}
    cfg = {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "profiles": [
            {
                "schedulerName": "default-scheduler",
                "plugins": {"multiPoint": {"enabled": [{"name": name}]}},
                "pluginConfig": [{"name": name, "args": args}],
            }
        ],
    }
    f = tmp_path_factory.mktemp("c") / "sched.yaml"
    try:
        f.write_text(yaml.safe_dump(cfg))
    except (ValueError, TypeError):
        return
    registry = build_registry([])
    try:
        config = build_config(str(f), registry)
        Scheduler(config, Snapshot(), None, registry)
    except InputError as e:
        assert "\n" not in str(e)
        assert str(e).startswith(str(f)), str(e)


def _csv(header: list[str], rows: list[list[str]]) -> str:
    buf = io.StringIO()
    w = csv.writer(buf)
    w.writerow(header)
    w.writerows(rows)
    return buf.getvalue()


cells = st.one_of(st.sampled_from(TRICKY_STRINGS + ["0", "1", "8", "1000", "500", "12000", "V100", "10.5"]), st.text(max_size=6))


@SETTINGS
@given(st.lists(st.lists(cells, min_size=5, max_size=5), min_size=1, max_size=4),
       st.lists(st.lists(cells, min_size=8, max_size=8), min_size=1, max_size=4))  # fmt: skip
def test_openb_csvs_load_or_fail_in_one_line(tmp_path_factory: Any, node_rows: list, pod_rows: list) -> None:
    folder: Path = tmp_path_factory.mktemp("t")
    nodes = folder / "nodes.csv"
    pods = folder / "pods.csv"
    nodes.write_text(_csv(["sn", "cpu_milli", "memory_mib", "gpu", "model"], node_rows))
    header = ["name", "cpu_milli", "memory_mib", "num_gpu", "gpu_milli", "gpu_spec", "creation_time", "deletion_time"]
    pods.write_text(_csv(header, pod_rows))
    for read in (lambda: read_nodes(nodes), lambda: read_pods(pods), lambda: read_pods(pods, skip_invalid=True)):
        try:
            read()
        except InputError as e:
            assert "\n" not in str(e)


SPEC_PATHS: list[str] = [
    "nodes", "nodes.0", "nodes.0.count", "nodes.0.cpu", "nodes.0.memory", "nodes.0.gpus", "nodes.0.gpuModel",
    "nodes.0.namePrefix", "pods", "pods.count", "pods.arrivalRate", "pods.duration", "pods.duration.mean",
    "pods.cpu", "pods.cpu.values", "pods.cpu.weights", "pods.memory", "pods.gpu", "pods.gpu.fraction",
    "pods.gpu.count", "pods.gpu.milli", "pods.namespace",
]  # fmt: skip
small_values = st.one_of(
    st.none(), st.booleans(), st.integers(-3, 40), st.sampled_from([10**9, 2**70, -(2**70), 1e308, 1e-300]),
    st.floats(allow_nan=True), st.sampled_from(TRICKY_STRINGS), st.text(max_size=6),
    st.lists(st.integers(-2, 5), max_size=3), st.dictionaries(st.sampled_from(["dist", "value", "min", "max", "count"]), st.integers(-2, 9), max_size=2),
)  # fmt: skip


@SETTINGS
@given(st.lists(st.tuples(st.sampled_from(SPEC_PATHS), small_values), min_size=1, max_size=4))
def test_synthetic_specs_generate_or_fail_in_one_line(edits: list) -> None:
    overrides = [f"{path}={yaml.safe_dump(value, default_flow_style=True).strip().removesuffix('...').strip()}" for path, value in edits]
    try:
        spec, source = load_spec(None, ["pods.count=40", "nodes.0.count=4", *overrides])
        wl = generate(spec, 1, source)
    except InputError as e:
        assert "\n" not in str(e)
        return
    assert len(wl.nodes) <= 100_000 and len(wl.pods) <= 1_000_000


@settings(max_examples=400, deadline=None)
@given(st.one_of(st.text(max_size=30), st.sampled_from(TRICKY_STRINGS), st.integers(), st.floats(), st.booleans(), st.none()))
def test_quantities_parse_or_fail_in_one_line(raw: Any) -> None:
    for parse in (lambda: parse_quantity(raw, "q"), lambda: resource_value("cpu", raw, "q"), lambda: resource_value("memory", raw, "q")):
        try:
            parse()
        except InputError as e:
            assert "\n" not in str(e) and str(e).startswith("q: ")

"""Property tests over the newer input files: any file loads or fails with one InputError line
naming the file, never another exception (issue 22).

Each reader gets a valid document of its kind changed in one to three places: a field given a
value of another JSON type or an odd YAML scalar (a timestamp, ``!!binary``, ``!!set``, NaN,
huge numbers, control characters), a field removed, an unknown field added, a node repeated
through an anchor, a value nested a thousand levels deep, or the file's bytes broken (a non-UTF-8
byte). The readers: Karmada objects and resource templates (``multicluster schedule -f``, then
Karmada's pipeline on those clusters), the network latency file (``--latency``), the edge-cloud
scenario (``multicluster simulate --scenario``), the autoscaler options (``--autoscaler``) and
the synthetic workload spec (``simulate --synthetic FILE``).
"""

from __future__ import annotations

import copy
import datetime
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kubesched.api.objects import Node
from kubesched.app import example_path
from kubesched.autoscale.configfile import load_file
from kubesched.errors import InputError
from kubesched.load import read_documents
from kubesched.multicluster.experiment.scenario import parse_scenario
from kubesched.multicluster.federation import Federation
from kubesched.multicluster.load import match_policy, read_setup, to_binding
from kubesched.multicluster.member import MemberCluster
from kubesched.multicluster.network import load_network
from kubesched.sim.synthetic import generate, load_spec

SETTINGS = settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
DEEP = "__deep__"  # stands for a value nested past the readers' depth bound, written as flow YAML

TRICKY = ["", "x", "-1", "1e400", "2Gi", "Exists", "In", "Divided", "cluster", "\x00", "é", "a" * 70, "2024-13-45"]
scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 40),
    st.sampled_from([2**31 - 1, 2**31, 2**63, 2**70, -(2**70)]),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from(TRICKY),
    st.text(max_size=8),
    st.dates(min_value=datetime.date(1, 1, 1)),  # a YAML timestamp
    st.binary(max_size=4),  # !!binary
    st.frozensets(st.integers(0, 3), max_size=2).map(set),  # !!set
    st.just(DEEP),
)
values = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.dictionaries(st.sampled_from(["a", "name", "dist", "key", "kind", "value"]), inner, max_size=3),
    ),
    max_leaves=6,
)


def field_paths(doc: Any, base: tuple = ()) -> list[tuple]:
    """Every path into ``doc`` (``()`` first), down to 30 levels."""
    out = [base]
    if len(base) > 30:
        return out
    if isinstance(doc, dict):
        for k, v in doc.items():
            out += field_paths(v, (*base, k))
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            out += field_paths(v, (*base, i))
    return out


@st.composite
def edited(draw: st.DrawFn, base: list[Any]) -> bytes:
    """``base`` (a list of documents) changed in one to three places, as YAML bytes."""
    docs = copy.deepcopy(base)
    paths = [(d, p) for d, doc in enumerate(docs) for p in field_paths(doc) if p]
    for _ in range(draw(st.integers(1, 3))):
        d, path = draw(st.sampled_from(paths))
        try:
            parent = docs[d]
            for p in path[:-1]:
                parent = parent[p]
            key = path[-1]
            parent[key]  # noqa: B018 - an earlier edit may have replaced the parent
        except (KeyError, IndexError, TypeError):
            continue
        op = draw(st.sampled_from(["set", "set", "set", "drop", "extra", "alias"]))
        if op == "set":
            parent[key] = draw(values)
        elif op == "drop" and isinstance(parent, dict):
            del parent[key]
        elif op == "extra" and isinstance(parent, dict):
            parent[draw(st.sampled_from(["bogus", "<<", "1"]))] = draw(values)
        elif op == "alias":
            d2, other = draw(st.sampled_from(paths))
            if d2 == d and (other[: len(path)] == path or path[: len(other)] == other):
                continue  # a node containing itself: not a document
            try:
                shared = docs[d2]
                for p in other:
                    shared = shared[p]
            except (KeyError, IndexError, TypeError):
                continue
            parent[key] = shared  # the dump writes an anchor and an alias
    text = yaml.safe_dump_all(docs, sort_keys=False, allow_unicode=True)
    deep = draw(st.sampled_from([10, 600, 1100]))
    data = text.replace(DEEP, "[" * deep + "]" * deep).encode()
    if draw(st.integers(0, 9)) == 0:  # a byte no UTF-8 text holds
        at = draw(st.integers(0, len(data)))
        data = data[:at] + draw(st.sampled_from([b"\xff", b"\xc3", b"\x80"])) + data[at:]
    return data


def _fails_in_one_line(err: InputError, f: Path) -> None:
    assert "\n" not in str(err), str(err)
    assert str(err).startswith(f"{f}: "), str(err)


def _write(tmp_path_factory: pytest.TempPathFactory, name: str, data: bytes) -> Path:
    f = tmp_path_factory.mktemp("in") / name
    f.write_bytes(data)
    return f


#: what the sweeps put at every field in turn (a YAML timestamp, a huge number, NaN, and a value
#: of each JSON type); None stands for removing the field
SWEEP = [None, 7, 2**70, float("nan"), "x", ["x"], {"a": 1}, datetime.date(2024, 1, 2)]
_DROP = object()


def _dump(doc: Any) -> str:
    return yaml.dump(doc, Dumper=getattr(yaml, "CSafeDumper", yaml.SafeDumper), sort_keys=False)


def _sweep(tmp_path: Path, base: list[Any], load: Any) -> None:
    """Every field of ``base`` in turn removed, or given each of ``SWEEP``: ``load(file)`` loads
    or raises one InputError line naming the file. Every other outcome is listed in the failure."""
    f = tmp_path / "in.yaml"
    bad = []
    texts = [_dump(doc) for doc in base]  # the documents left as they are
    for d, doc in enumerate(base):
        for path in field_paths(doc)[1:]:
            for value in (_DROP, *SWEEP):
                changed = copy.deepcopy(doc)
                parent = changed
                for p in path[:-1]:
                    parent = parent[p]
                if value is _DROP:
                    if not isinstance(parent, dict):
                        continue
                    del parent[path[-1]]
                else:
                    parent[path[-1]] = value
                f.write_text("---\n".join([*texts[:d], _dump(changed), *texts[d + 1 :]]))
                try:
                    load(f)
                except InputError as e:
                    if "\n" in str(e) or not str(e).startswith(f"{f}: "):
                        bad.append(f"{path} = {value!r}: {e}")
                except Exception as e:  # noqa: BLE001 - what the sweep looks for
                    bad.append(f"{path} = {value!r}: {type(e).__name__}: {e}")
    assert not bad, f"{len(bad)} inputs: " + "; ".join(bad[:8])


# ---- Karmada objects and resource templates ---------------------------------------------------
FEDERATION = list(yaml.safe_load_all(Path(example_path("multicluster/federation.yaml")).read_text()))
# a status the general estimator reads (the example's clusters have none: their dumps carry it)
FEDERATION[0]["status"] = {
    "apiEnablements": [{"groupVersion": "apps/v1", "resources": [{"name": "deployments", "kind": "Deployment"}]}],
    "conditions": [{"type": "CompleteAPIEnablements", "status": "True"}],
    "resourceSummary": {"allocatable": {"cpu": "8", "memory": "32Gi", "pods": "110"}, "allocated": {"cpu": "1"}},
}
FEDERATION[0]["status"]["conditions"].append({"type": "Ready", "status": "False"})
FEDERATION[3]["spec"] |= {"propagateDeps": True, "failover": {
    "application": {"decisionConditions": {"tolerationSeconds": 30}, "purgeMode": "Gracefully", "gracePeriodSeconds": 60},
    "cluster": {"purgeMode": "Directly"}}}
FEDERATION.append(
    {
        "apiVersion": "policy.karmada.io/v1alpha1",
        "kind": "ClusterTaintPolicy",
        "metadata": {"name": "down"},
        "spec": {"targetClusters": {"clusterNames": ["edge-tokyo"]},
                 "addOnConditions": [{"conditionType": "Ready", "operator": "NotIn", "statusValues": ["True"]}],
                 "removeOnConditions": [{"conditionType": "Ready", "operator": "In", "statusValues": ["True"]}],
                 "taints": [{"key": "down", "effect": "NoExecute"}]},
    }
)
FEDERATION.append(
    {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "j", "namespace": "default", "labels": {"class": "batch"}},
        "spec": {"parallelism": 2, "completions": 3, "template": {"spec": {"containers": [{"name": "c", "image": "i"}]}}},
    }
)


def _schedule(f: Path) -> None:
    """``multicluster schedule -f FILE`` without member dumps: the file read, then what loaded
    through Karmada's pipeline (clusters judged by their status alone)."""
    setup = read_setup([str(f)])
    fed = Federation([MemberCluster(c) for c in setup.clusters.values()])
    for t in setup.templates:
        policy = match_policy(t, setup.policies)
        if policy is not None:
            fed.decide(to_binding(t, policy))


def test_every_field_of_karmada_objects(tmp_path: Path) -> None:
    _sweep(tmp_path, FEDERATION, _schedule)


@SETTINGS
@given(st.data())
def test_karmada_objects_load_or_fail_in_one_line(tmp_path_factory: pytest.TempPathFactory, data: st.DataObject) -> None:
    f = _write(tmp_path_factory, "federation.yaml", data.draw(edited(FEDERATION)))
    try:
        _schedule(f)
    except InputError as e:
        _fails_in_one_line(e, f)


LATENCY = list(yaml.safe_load_all(Path(example_path("multicluster/latency.yaml")).read_text()))


def test_every_field_of_latency_files(tmp_path: Path) -> None:
    _sweep(tmp_path, LATENCY, lambda f: load_network(str(f)))


@SETTINGS
@given(st.data())
def test_latency_files_load_or_fail_in_one_line(tmp_path_factory: pytest.TempPathFactory, data: st.DataObject) -> None:
    f = _write(tmp_path_factory, "latency.yaml", data.draw(edited(LATENCY)))
    try:
        load_network(str(f))
    except InputError as e:
        _fails_in_one_line(e, f)


SCENARIO = {
    "apiVersion": "kubesched.io/v1alpha1", "kind": "EdgeCloudScenario", "trace": "default", "nodes": "gpu",
    "timeScale": 100, "accessRttMs": 5, "splitSeed": 0, "windowDays": 7, "windowStartDays": 140,
    "outages": [{"site": "edge", "offline": 60, "back": "2m"}],
    "sites": [{"name": "edge", "region": "Japan East", "tier": "edge", "share": 0.05, "users": 1},
              {"name": "cloud", "region": "West US 2", "tier": "cloud", "share": 0}],
    "classes": {"LS": {"name": "latency-sensitive", "budgetMs": 100, "timeoutSeconds": 60}, "BE": {"name": "best-effort"}},
}  # fmt: skip


def _scenario(f: Path) -> None:
    docs = read_documents(str(f))  # as the command reads it
    if len(docs) == 1:
        parse_scenario(docs[0][1], str(f))


def test_every_field_of_scenarios(tmp_path: Path) -> None:
    _sweep(tmp_path, [SCENARIO], _scenario)


@SETTINGS
@given(st.data())
def test_scenarios_load_or_fail_in_one_line(tmp_path_factory: pytest.TempPathFactory, data: st.DataObject) -> None:
    f = _write(tmp_path_factory, "scenario.yaml", data.draw(edited([SCENARIO])))
    try:
        _scenario(f)
    except InputError as e:
        _fails_in_one_line(e, f)


# ---- the autoscaler options --------------------------------------------------------------------
AUTOSCALER = yaml.safe_load(
    """
mode: cluster-autoscaler
expander: priority,least-waste
priorities: {50: ["^g2-"], 10: [".*"]}
coresTotal: "0:320"
memoryTotal: "0:1024"
gpuTotal: ["V100M16:0:16"]
enforceNodeGroupMinSize: true
balanceSimilarNodeGroups: true
balancingIgnoreLabels: [example.com/pool]
balancingLabels: []
memoryDifferenceRatio: 0.015
maxAllocatableDifferenceRatio: 0.05
maxFreeDifferenceRatio: 0.05
maxNodesPerScaleUp: 1000
flags: ["--max-drain-parallelism=1", "--scale-down-delay-after-add=10m", "--v=2"]
scanInterval: 10
provisioningDelay: {dist: lognormal, median: 60, sigma: 0.5}
maxNodeProvisionTime: 900
maxNodesTotal: 0
expendablePodsPriorityCutoff: -10
newPodScaleUpDelay: 0
scaleDown: {enabled: true, utilizationThreshold: 0.5, gpuUtilizationThreshold: 0.5, unneededTime: 600,
  delayAfterAdd: 600, delayAfterDelete: 0, delayAfterFailure: 180, maxEmptyBulkDelete: 10, maxDrainParallelism: 1,
  ignoreDaemonSetsUtilization: false, ignoreMirrorPodsUtilization: true}
karpenter: {batchIdleDuration: 1, batchMaxDuration: 10, consolidationPolicy: WhenEmpty, consolidateAfter: 30,
  budgets: [{nodes: "10%"}]}
prices: {gpu: 1.0, cpu: 0.0, memory: 0.0}
nodeGroups:
- {name: g2, shape: g2-8gpu-96c-384g, min: 0, max: 5}
- {name: small, template: {cpu: "8", memory: 32Gi, gpus: 1, gpuModel: V100M16, pods: 110, labels: {a: b},
   taints: [{key: k, value: v, effect: NoSchedule}], extendedResources: {example.com/fpga: 2}}, max: 20, price: 1.2,
   zeroOrMaxNodeScaling: false}
"""
)
SHAPES = {
    "g2-8gpu-96c-384g": Node.parse(
        {"metadata": {"name": "g2-8gpu-96c-384g"}, "status": {"allocatable": {"cpu": "96", "memory": "384Gi", "pods": "110"}}}
    )
}


def _autoscaler(f: Path) -> None:
    cfg = load_file(str(f), SHAPES, groups_required=False)
    # what loaded can be used: the delays drawn, every group's node built
    delay = cfg.provisioning_delay
    assert delay.sample(np.random.default_rng(0)) >= 0 and delay.mean >= 0 and delay.high >= 0
    assert all(g.template.allocatable for g in cfg.node_groups)


def test_every_field_of_autoscaler_options(tmp_path: Path) -> None:
    _sweep(tmp_path, [AUTOSCALER], _autoscaler)


@SETTINGS
@given(st.data())
def test_autoscaler_options_load_or_fail_in_one_line(tmp_path_factory: pytest.TempPathFactory, data: st.DataObject) -> None:
    f = _write(tmp_path_factory, "autoscaler.yaml", data.draw(edited([AUTOSCALER])))
    try:
        _autoscaler(f)
    except InputError as e:
        _fails_in_one_line(e, f)


# ---- the synthetic workload spec ---------------------------------------------------------------
SYNTHETIC = yaml.safe_load(
    """
nodes:
- {count: 3, cpu: "32", memory: 128Gi, gpus: 8, gpuModel: V100, namePrefix: a-}
- {count: 1, cpu: "8", memory: 16Gi}
pods:
  count: 30
  arrivalRate: 0.5
  namespace: default
  duration: {dist: lognormal, median: 600, sigma: 1}
  cpu: {dist: choice, values: ["1", "2", "4"], weights: [3, 2, 1]}
  memory: {dist: uniform, min: 1Gi, max: 8Gi}
  gpu: {fraction: 0.5, shareFraction: 0.4, milli: {dist: uniform, min: 100, max: 900}, count: {dist: choice, values: [1, 2]}}
"""
)


def _synthetic(f: Path) -> None:
    spec, source = load_spec(str(f))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a numpy warning is a second line on stderr
        wl = generate(spec, 0, source)
    assert all(v > 0 for p in wl.pods for v in p.requests.values())


def test_every_field_of_synthetic_specs(tmp_path: Path) -> None:
    _sweep(tmp_path, [SYNTHETIC], _synthetic)


@SETTINGS
@given(st.data())
def test_synthetic_spec_files_generate_or_fail_in_one_line(tmp_path_factory: pytest.TempPathFactory, data: st.DataObject) -> None:
    f = _write(tmp_path_factory, "spec.yaml", data.draw(edited([SYNTHETIC])))
    try:
        _synthetic(f)
    except InputError as e:
        _fails_in_one_line(e, f)

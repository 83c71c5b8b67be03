"""The general estimator with resource models, and its component-set estimate: karmada-io/karmada's
pkg/estimator/client/general_test.go ported under its Go names. Models are built as the Go tables
build them (straight into the struct, so ranges without a max and unsorted counts are allowed);
amounts are kubesched's units (cpu in millicores, memory in bytes)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kubesched.api.objects import Pod
from kubesched.api.resources import parse_resource_list
from kubesched.app import example_path
from kubesched.cli import main
from kubesched.multicluster.api import (
    AllocatableModeling,
    Binding,
    Cluster,
    Placement,
    ResourceModel,
    ResourceModelRange,
    ResourceSummary,
)
from kubesched.multicluster.estimate import (
    MAX_INT64,
    AssumedComponent,
    AssumedWorkload,
    GeneralEstimator,
    allowed_pod_number,
    replicas_by_cluster_summary,
    replicas_by_models,
    sets_by_models,
)
from kubesched.multicluster.firstfit import Component

GPU = "nvidia.com/gpu"


def R(d: dict[str, str] | None = None) -> dict[str, int]:  # noqa: N802 - a ResourceList literal
    return parse_resource_list(d or {}, "test")


def models(*grades: dict[str, str]) -> tuple[ResourceModel, ...]:
    """Grades 0, 1, ... with each resource's min (the max is not read by the estimator)."""
    return tuple(ResourceModel(g, tuple(ResourceModelRange(n, v, 0) for n, v in R(mins).items())) for g, mins in enumerate(grades))


def cluster(ms=(), counts=(), allocatable=None, allocated=None, name="", summary=True) -> Cluster:  # noqa: ANN001
    s = ResourceSummary(R(allocatable), {}, R(allocated), tuple(AllocatableModeling(g, c) for g, c in counts)) if summary else None
    return Cluster(name, resource_summary=s, resource_models=tuple(ms))


def aw(*components: tuple[int, dict[str, str] | None], namespace: str = "") -> AssumedWorkload:
    return AssumedWorkload(namespace, tuple(AssumedComponent(r, None if req is None else R(req)) for r, req in components))


def comp(replicas: int, requests: dict[str, str] | None) -> Component:
    return Component(replicas, None if requests is None else R(requests))


CPU_0_1_2 = models({"cpu": "0"}, {"cpu": "1"}, {"cpu": "2"})
CPU_MEM_3 = models({"cpu": "0", "memory": "0"}, {"cpu": "1", "memory": "1Gi"}, {"cpu": "2", "memory": "2Gi"})
ONE_EACH = ((0, 1), (1, 1), (2, 1))

# TestGetMaximumReplicasBasedOnResourceModels: 5 of 5 cases (None: upstream's error, -1)
REPLICAS_BY_MODELS = [
    ("No grade defined should result in an error", cluster(summary=False), {"cpu": "1"}, None),
    ("Partially compliant grades", cluster(CPU_0_1_2, ONE_EACH), {"cpu": "1.5"}, 1),
    ("No compliant grades", cluster(CPU_0_1_2, ONE_EACH), {"cpu": "3"}, 0),
    # when looking at cpu grade 1 meets, at memory grade 2: one grade-2 node
    ("Multi resource request", cluster(CPU_MEM_3, ONE_EACH), {"cpu": "1", "memory": "1.5Gi"}, 1),
    ("request exceeds highest grade", cluster(CPU_MEM_3, ONE_EACH), {"cpu": "1", "memory": "2.5Gi"}, 0),
]


@pytest.mark.parametrize(("name", "c", "requests", "want"), REPLICAS_BY_MODELS, ids=[r[0] for r in REPLICAS_BY_MODELS])
def test_get_maximum_replicas_based_on_resource_models(name, c, requests, want):
    assert replicas_by_models(c, R(requests)) == want
    # counted grade by grade, as first fit of one-replica sets on the model nodes counts them
    assert sets_by_models(c, [Component(1, R(requests))], (), 2**31 - 1) == want


@pytest.mark.parametrize("requests", [{"cpu": "500m"}, {"cpu": "1", "memory": "1Gi"}, {}, {"memory": "3Gi"}, {GPU: "1"},
                                      {"example.com/not-tracked": "1"}])
def test_replicas_by_models_is_first_fit_summed_by_grade(requests):
    """The default grades with several nodes a grade: the sum by grade is first fit's count."""
    from kubesched.multicluster.api import DEFAULT_RESOURCE_MODELS

    counts = tuple(AllocatableModeling(g, n) for g, n in ((0, 3), (1, 5), (2, 2), (4, 7), (8, 1)))
    c = Cluster("c", resource_summary=ResourceSummary({}, {}, {}, counts), resource_models=DEFAULT_RESOURCE_MODELS)
    assert replicas_by_models(c, R(requests)) == sets_by_models(c, [Component(1, R(requests))], (), 2**31 - 1)


def test_replicas_by_models_are_capped_at_max_int32():
    """20 million grade-8 nodes of 110 pod slots: first fit stops at MAX_INT32 sets."""
    from kubesched.multicluster.api import DEFAULT_RESOURCE_MODELS

    c = Cluster("c", resource_summary=ResourceSummary({}, {}, {}, (AllocatableModeling(8, 20_000_000),)),
                resource_models=DEFAULT_RESOURCE_MODELS)
    assert replicas_by_models(c, {}) == 2**31 - 1


BIGU = 100
HALF_1_2 = models({"cpu": "500m"}, {"cpu": "1000m"}, {"cpu": "2000m"})
FLINK = (comp(1, {"cpu": "1", "memory": "2Gi"}), comp(3, {"cpu": "3", "memory": "10Gi"}))
# TestGetMaximumSetsBasedOnResourceModels: 7 of 7 cases
SETS_BY_MODELS = [
    ("No grades defined → error", cluster(), [comp(1, {"cpu": "1500m"})], BIGU, None),
    ("No resource requirement", cluster(HALF_1_2, ((0, 5), (1, 0), (2, 10))), [comp(1, {})], BIGU, BIGU),
    # 10 grade-2 nodes x 1 replica each = 10 sets (1 replica per set)
    ("CPU-only: 3 grades, only highest compliant", cluster(HALF_1_2, ((0, 5), (1, 0), (2, 10))),
     [comp(1, {"cpu": "1500m"})], BIGU, 10),
    ("Multi-resource with GPUs across grades",
     cluster(models({"cpu": "1000m", "memory": "2Gi", GPU: "0"}, {"cpu": "2000m", "memory": "4Gi", GPU: "1"},
                    {"cpu": "4000m", "memory": "8Gi", GPU: "2"}), ((0, 4), (1, 3), (2, 2))),
     [comp(2, {"cpu": "2000m", "memory": "4Gi", GPU: "1"})], BIGU, 3),
    ("No compliant grades = 0 sets", cluster(models({"cpu": "1000m"}, {"cpu": "2000m"}), ((0, 10), (1, 10))),
     [comp(1, {"cpu": "3000m"})], BIGU, 0),
    ("Multi-component JM/TM across grades (CPU+Mem)",
     cluster(models({"cpu": "1000m", "memory": "2Gi"}, {"cpu": "3000m", "memory": "10Gi"}, {"cpu": "4000m", "memory": "12Gi"}),
             ((0, 2), (1, 6), (2, 3)), {"cpu": "32", "memory": "100Gi", "pods": "1000"}, {"cpu": "4", "memory": "4Gi", "pods": "50"}),
     list(FLINK), 100, 3),
    # two sets at most: the task managers fit only the largest nodes
    ("Three-component CRD across 4 grades (CPU+Mem)",
     cluster(models({"cpu": "1000m", "memory": "2Gi"}, {"cpu": "2000m", "memory": "4Gi"}, {"cpu": "3000m", "memory": "6Gi"},
                    {"cpu": "8000m", "memory": "12Gi"}), ((0, 2), (1, 3), (2, 2), (3, 6))),
     [*FLINK, comp(1, {"cpu": "500m", "memory": "1Gi"})], 100, 2),
]


@pytest.mark.parametrize(("name", "c", "components", "bound", "want"), SETS_BY_MODELS, ids=[r[0] for r in SETS_BY_MODELS])
def test_get_maximum_sets_based_on_resource_models(name, c, components, bound, want):
    assert sets_by_models(c, components, (), bound) == want


def _template(requests: dict[str, str] | None) -> Pod:
    res = {"requests": requests} if requests else {}
    return Pod.parse({"metadata": {"name": "w", "namespace": "default"}, "spec": {"containers": [{"name": "c", "resources": res}]}})


def binding(requests: dict[str, str] | None) -> Binding:
    return Binding("apps/v1", "Deployment", "default", "w", "", 5, _template(requests), Placement(), requirements=requests is not None)


HALF_CPU_1GI = {"cpu": "500m", "memory": "1Gi"}
BASIC = {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "100"}, "allocated": {"cpu": "1", "memory": "2Gi", "pods": "20"}}
# TestMaxAvailableReplicas: 3 of 3 cases (the estimator over a request's clusters)
MAX_AVAILABLE = [
    ("single cluster with resources", [cluster(**BASIC)], HALF_CPU_1GI, {}, [6]),
    ("cluster with no resources", [cluster(summary=False)], {"cpu": "1"}, {}, [0]),
    ("assumed workloads reduce replicas", [cluster(name="member1", **BASIC)], HALF_CPU_1GI,
     {"member1": [aw((2, HALF_CPU_1GI), namespace="default")]}, [4]),
]


@pytest.mark.parametrize(("name", "clusters", "requests", "assumed", "want"), MAX_AVAILABLE, ids=[r[0] for r in MAX_AVAILABLE])
def test_max_available_replicas(name, clusters, requests, assumed, want):
    assert GeneralEstimator().max_available_replicas(clusters, binding(requests), assumed) == want


def test_max_available_replicas_general_with_resource_models():
    """TestMaxAvailableReplicasGeneralWithResourceModels: 1 of 1 case. Three grade-1 nodes (1 cpu
    each) hold 2 replicas of 500m each; 4 assumed replicas of 500m leave room for 2."""
    c = cluster(models({"cpu": "0"}, {"cpu": "1"}), ((0, 0), (1, 3)), {"pods": "100", "cpu": "3"})
    b = binding({"cpu": "500m"})
    assert GeneralEstimator.for_cluster(c, b) == 6
    assert GeneralEstimator.for_cluster(c, b, [aw((4, {"cpu": "500m"}), namespace="default")]) == 2


def test_models_replace_the_summary_and_are_capped_by_free_pods():
    """The models' answer stands even where the summary would allow more (the same cluster
    without counts per grade answers from the summary), and never above the free pod count."""
    ms = models({"cpu": "0"}, {"cpu": "1"})
    b = binding({"cpu": "500m"})
    assert GeneralEstimator.for_cluster(cluster(ms, (), {"pods": "100", "cpu": "8"}), b) == 16
    assert GeneralEstimator.for_cluster(cluster(ms, ((1, 3),), {"pods": "100", "cpu": "8"}), b) == 6
    assert GeneralEstimator.for_cluster(cluster(ms, ((1, 3),), {"pods": "4", "cpu": "8"}), b) == 4
    # a negative count is upstream's error: the summary decides
    assert GeneralEstimator.for_cluster(cluster(ms, ((1, -1),), {"pods": "100", "cpu": "8"}), b) == 16
    # counts in the status but no models in the spec (a dump of another Karmada): the summary decides
    assert GeneralEstimator.for_cluster(cluster((), ((1, 3),), {"pods": "100", "cpu": "8"}), b) == 16


# TestGetAllowedPodNumber: 3 of 3 cases
ALLOWED_PODS = [
    ("normal case", {"pods": "100"}, {"pods": "40"}, {"pods": "10"}, 50),
    ("no allocatable pods", {}, {"pods": "10"}, {}, 0),
    ("over allocation", {"pods": "100"}, {"pods": "90"}, {"pods": "20"}, 0),
]


@pytest.mark.parametrize(("name", "allocatable", "allocated", "allocating", "want"), ALLOWED_PODS, ids=[r[0] for r in ALLOWED_PODS])
def test_get_allowed_pod_number(name, allocatable, allocated, allocating, want):
    assert allowed_pod_number(ResourceSummary(R(allocatable), R(allocating), R(allocated))) == want


# TestGetMaximumReplicasBasedOnClusterSummary: 2 of 2 cases
BY_SUMMARY = [
    ("sufficient resources", {"cpu": "4", "memory": "8Gi"}, {"cpu": "1", "memory": "2Gi"}, 6),
    ("insufficient memory", {"cpu": "4", "memory": "2Gi"}, {"cpu": "1", "memory": "1.5Gi"}, 0),
]


@pytest.mark.parametrize(("name", "allocatable", "allocated", "want"), BY_SUMMARY, ids=[r[0] for r in BY_SUMMARY])
def test_get_maximum_replicas_based_on_cluster_summary(name, allocatable, allocated, want):
    s = ResourceSummary(R(allocatable), {}, R(allocated))
    assert replicas_by_cluster_summary(s, R(HALF_CPU_1GI)) == want


def test_cluster_summary_without_requests_is_unbounded():
    assert replicas_by_cluster_summary(ResourceSummary(R({"cpu": "1"})), {}) == MAX_INT64


JM_TM = [comp(1, {"cpu": "1"}), comp(2, {"cpu": "1.5"})]
# TestGetMaxAvailableComponentSetsGeneral: 7 of 7 cases
COMPONENT_SETS = [
    ("nil resource summary", cluster(summary=False), [], 0),
    ("no allowed pods", cluster(allocatable={"pods": "10"}, allocated={"pods": "10"}), [], 0),
    ("empty component list should return max pod allowance", cluster(allocatable={"pods": "10"}), [], 10),
    ("basic resource estimation",
     cluster(allocatable={"pods": "100", "cpu": "10", "memory": "8Gi"}, allocated={"pods": "20", "cpu": "0", "memory": "2Gi"}),
     JM_TM, 2),
    # a set asks 5 cpu and 6Gi; 10 cpu and 6Gi are free: min(2, 1)
    ("resource estimation with mixed components",
     cluster(allocatable={"pods": "100", "cpu": "10", "memory": "8Gi"}, allocated={"pods": "20", "cpu": "0", "memory": "2Gi"}),
     [comp(1, {"cpu": "1", "memory": "2Gi"}), comp(2, {"cpu": "2000m", "memory": "2Gi"})], 1),
    ("estimation limited by pod count", cluster(allocatable={"pods": "3", "cpu": "100", "memory": "1Ti"}),
     [comp(3, {"cpu": "10m", "memory": "1Mi"})], 1),
    # a set asks 8 cpu, 16Gi, 2 GPUs: min(40/8, 64/16, 8/2)
    ("custom resource estimation with GPUs",
     cluster(allocatable={"pods": "20", "cpu": "40", "memory": "64Gi", GPU: "8"},
             allocated={"pods": "0", "cpu": "0", "memory": "0Gi", GPU: "0"}),
     [comp(2, {"cpu": "4", "memory": "8Gi", GPU: "1"})], 4),
]


@pytest.mark.parametrize(("name", "c", "components", "want"), COMPONENT_SETS, ids=[r[0] for r in COMPONENT_SETS])
def test_get_max_available_component_sets_general(name, c, components, want):
    assert GeneralEstimator.component_sets_for_cluster(c, components) == want


def _base(cpu: str) -> Cluster:
    return cluster(allocatable={"pods": "100", "cpu": cpu, "memory": "8Gi"})


# TestMaxAvailableComponentSets_AssumedWorkloadDeduction: 6 of 6 cases (a set asks 4 cpu)
ASSUMED_SETS = [
    ("no assumed workloads — baseline unchanged", _base("10"), [], 2),
    ("assumed workload deducts CPU, reduces set count", _base("10"), [aw((1, {"cpu": "1"}), (2, {"cpu": "1500m"}), namespace="ns")], 1),
    ("assumed workload exhausts all CPU → 0 sets", _base("8"), [aw((4, {"cpu": "2"}), namespace="ns")], 0),
    ("assumed workload exhausts pod budget → 0 sets", cluster(allocatable={"pods": "3", "cpu": "100"}), [aw((3, None))], 0),
    ("multiple assumed workloads — cumulative deduction", _base("12"),
     [aw((1, {"cpu": "1"}), namespace="ns-a"), aw((2, {"cpu": "1500m"}), namespace="ns-b")], 2),
    ("assumed workload with no resource requirements — only pod deduction", _base("10"), [aw((3, None))], 2),
]


@pytest.mark.parametrize(("name", "c", "assumed", "want"), ASSUMED_SETS, ids=[r[0] for r in ASSUMED_SETS])
def test_max_available_component_sets_assumed_workload_deduction(name, c, assumed, want):
    assert GeneralEstimator.component_sets_for_cluster(c, JM_TM, assumed) == want


def test_max_available_component_sets_resource_models_with_assumed_workloads():
    """TestMaxAvailableComponentSets_ResourceModelsWithAssumedWorkloads: 1 of 1 case. Two grade-1
    nodes of 2 cpu: 4 one-cpu sets; an assumed workload of 2 x 1 cpu takes one node's worth."""
    c = cluster(models({"cpu": "0"}, {"cpu": "2"}), ((0, 0), (1, 2)), {"pods": "220", "cpu": "4"})
    worker = [comp(1, {"cpu": "1"})]
    assert GeneralEstimator.component_sets_for_cluster(c, worker) == 4
    assert GeneralEstimator.component_sets_for_cluster(c, worker, [aw((2, {"cpu": "1"}))]) == 2


def test_max_available_component_sets_per_cluster_routing():
    """TestMaxAvailableComponentSets_PerClusterRouting: 1 of 1 case. Each cluster deducts only its
    own assumed workloads."""
    clusters = [cluster(name=n, allocatable={"pods": "100", "cpu": "8"}) for n in ("cluster-a", "cluster-b")]
    got = GeneralEstimator().max_available_component_sets(clusters, [comp(2, {"cpu": "2"})], {"cluster-a": [aw((2, {"cpu": "2"}))]})
    assert got == [1, 2]


def test_the_component_model_bound_applies_below_the_summary():
    """The models bound a set count the summary allows (and never raise it)."""
    ms = models({"cpu": "0"}, {"cpu": "2"})
    loose = cluster(ms, ((1, 1),), {"pods": "100", "cpu": "64"})
    assert GeneralEstimator.component_sets_for_cluster(loose, [comp(1, {"cpu": "1"})]) == 2
    tight = cluster(ms, ((1, 10),), {"pods": "100", "cpu": "3"})
    assert GeneralEstimator.component_sets_for_cluster(tight, [comp(1, {"cpu": "1"})]) == 3



def test_models_on_the_shipped_example_see_edge_tokyos_fragments(tmp_path, capsys):
    """edge-tokyo's 4 nodes have 1.5 cpu free each: the summary (CustomizedClusterResourceModeling
    off) sees 6 cpus and answers 3 two-cpu replicas; with cpu grades of [1, 2) and [2, 4), or
    Karmada's default grades (the gate on, no models listed), the nodes count as grade 1 (1 cpu
    each), no replica fits, and the web tier goes to the next affinity term, as with the simulated
    estimator."""
    ex = Path(example_path("multicluster/federation.yaml")).parent
    text = (ex / "federation.yaml").read_text()
    grades = "  resourceModels:\n" + "".join(
        f"  - {{grade: {g}, ranges: [{{name: cpu, min: '{lo}', max: '{hi}'}}]}}\n" for g, (lo, hi) in enumerate([(0, 1), (1, 2), (2, 4)])
    )
    members = [a for m in ("edge-tokyo", "edge-seoul", "cloud-westus2") for a in ("-f", f"{m}={ex / m}.yaml")]
    got = {}
    models = text.replace("  zones: [japaneast-1]\n", "  zones: [japaneast-1]\n" + grades, 1)
    for name, body, gate in (("summary", text, "false"), ("defaults", text, "true"), ("models", models, "true")):
        f = tmp_path / f"{name}.yaml"
        f.write_text(body)
        assert main(["multicluster", "explain", "default/web", "-f", str(f), *members, "--estimator", "general", "-o", "json",
                     "--seed", "1", "--feature-gates", f"CustomizedClusterResourceModeling={gate}"]) == 0
        doc = json.loads(capsys.readouterr().out)
        tokyo = next(c for c in doc["attempts"][0]["clusters"] if c["name"] == "edge-tokyo")
        got[name] = (tokyo["estimates"]["general"], [c["name"] for c in doc["clusters"]])
    assert got == {"summary": (3, ["edge-tokyo"]), "defaults": (0, ["edge-seoul"]), "models": (0, ["edge-seoul"])}

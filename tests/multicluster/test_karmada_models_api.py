"""Resource models in the Cluster API and the nodes counted per grade: karmada-io/karmada's
pkg/apis/cluster (validation, mutation), pkg/modeling and the cluster-status controller's tests,
ported under their Go names as far as they are expressible (the modeling package's linked list and
red-black tree are a dict here). Amounts are kubesched's units: cpu in millicores, memory in bytes
(a Go ``NewMilliQuantity(1024)`` of memory, 1.024 bytes, is 2 here: nodes hold whole bytes, so
"at least 1.024" and "at least 2" file every node the same)."""

from __future__ import annotations

import json

import pytest

from kubesched.api.objects import Node, Pod
from kubesched.api.quantity import INT64_MAX
from kubesched.errors import InputError
from kubesched.multicluster.api import (
    DEFAULT_RESOURCE_MODELS,
    AllocatableModeling,
    Cluster,
    ResourceModel,
    ResourceModelRange,
    parse_cluster,
    parse_resource_models,
)
from kubesched.multicluster.modeling import (
    GradeSummary,
    ModelingError,
    allocatable_modelings,
    node_available,
    search_last_less_element,
)

MAX = str(INT64_MAX)


def rm(*grades: tuple[int, list[tuple[str, object, object]]]) -> list[dict]:
    return [{"grade": g, "ranges": [{"name": n, "min": lo, "max": hi} for n, lo, hi in ranges]} for g, ranges in grades]


# TestValidateCluster: its 8 resource-model cases of 22. Upstream's table leaves syncMode unset,
# so every row fails there whatever the models; here each row is judged on its models. The
# registry standardizes models before validating them (the first grade's mins become 0, the last
# grade's maxes MaxInt64), so three rows are admitted as standardized, and two hold valid models.
VALIDATE = [
    ("invalid cluster resource models with the same grade", rm((1, [("cpu", 0, 2)]), (2, [("cpu", 2, MAX)])), None),
    ("invalid cluster resource models with different numbers of resource types",
     rm((1, [("cpu", 0, 2)]), (2, [("cpu", 2, MAX), ("memory", 2, MAX)])),
     "spec.resourceModels[1].ranges: The number of resource types should be the same"),
    ("invalid cluster resource models with unreasonable ranges", rm((1, [("cpu", 2, 0)])), None),
    ("invalid cluster resource models which the min value of each resource in the first model is not 0",
     rm((1, [("cpu", 1, MAX)])), None),
    ("invalid cluster resource models which the max value of each resource in the last model is not MaxInt64",
     rm((1, [("cpu", 0, 2)])), None),
    ("invalid cluster resource models which the resource types of each models are different",
     rm((1, [("cpu", 0, 2)]), (2, [("memory", 2, MAX)])),
     "spec.resourceModels[1].ranges[0].name: The resource types of each models should be the same"),
    ("invalid cluster resource models with contiguous and non-overlapping", rm((1, [("cpu", 0, 2)]), (2, [("cpu", 1, MAX)])),
     "spec.resourceModels[1].ranges[0].min: Model intervals for resources must be contiguous and non-overlapping"),
    ("invalid cluster resource models with invalid resource name", rm((1, [("test", 0, MAX)])), None),
]


def _cluster(models: list[dict], status: dict | None = None, modeling: bool = True) -> Cluster:
    doc = {"apiVersion": "cluster.karmada.io/v1alpha1", "kind": "Cluster", "metadata": {"name": "foo"},
           "spec": {"resourceModels": models}}
    if status is not None:
        doc["status"] = status
    return parse_cluster(doc, "", modeling)


@pytest.mark.parametrize(("name", "models", "error"), VALIDATE, ids=[r[0] for r in VALIDATE])
def test_validate_cluster(name, models, error):
    if error is None:
        c = _cluster(models)
        assert c.resource_models[0].ranges[0].min == 0 and c.resource_models[-1].ranges[0].max == INT64_MAX
    else:
        with pytest.raises(InputError) as e:
            _cluster(models)
        assert str(e.value) == error


def test_validation_refuses_what_standardizing_cannot_mend():
    with pytest.raises(InputError, match=r"resourceModels\[1\].grade: The grade of each models should not be the same"):
        _cluster(rm((1, [("cpu", 0, 2)]), (1, [("cpu", 2, MAX)])))
    # a middle grade's interval is checked as given
    with pytest.raises(InputError, match=r"resourceModels\[1\].ranges\[0\].max: The max value of each resource must be greater"):
        _cluster(rm((0, [("cpu", 0, 2)]), (1, [("cpu", 2, 2)]), (2, [("cpu", 2, MAX)])))
    # exact quantities: 1 cpu and 1000m are the same boundary
    assert _cluster(rm((0, [("cpu", 0, "1")]), (1, [("cpu", "1000m", MAX)]))).resource_models[1].ranges[0].min == 1000
    for bad, msg in [({"grade": -1, "ranges": []}, "grade: invalid value -1"), ({"grade": 0, "ranges": [{"min": 0, "max": 1}]}, "name: Required value"),
                     ({"grade": 0, "ranges": [{"name": "cpu", "min": "x", "max": 1}]}, "min"), ({"grade": 0, "rangez": []}, 'unknown field "rangez"')]:
        with pytest.raises(InputError, match=msg):
            _cluster([bad])


# With CustomizedClusterResourceModeling off the registry does not standardize, and
# ValidateCluster judges the models as written: the three rows standardizing mends are refused.
AS_WRITTEN = {
    "invalid cluster resource models with unreasonable ranges":
        "spec.resourceModels[0].ranges[0].max: The max value of each resource must be greater than the min value",
    "invalid cluster resource models which the min value of each resource in the first model is not 0":
        "spec.resourceModels[0].ranges[0].min: The min value of each resource in the first model should be 0",
    "invalid cluster resource models which the max value of each resource in the last model is not MaxInt64":
        "spec.resourceModels[0].ranges[0].max: The max value of each resource in the last model should be MaxInt64",
}


@pytest.mark.parametrize(("name", "models", "error"), VALIDATE, ids=[r[0] for r in VALIDATE])
def test_validate_cluster_as_written(name, models, error):
    want = AS_WRITTEN.get(name, error)
    if want is None:  # valid as written: admitted, but not used
        assert _cluster(models, modeling=False).resource_models == ()
        return
    with pytest.raises(InputError) as e:
        _cluster(models, modeling=False)
    assert str(e.value) == want


# TestSetDefaultClusterResourceModels: 1 of 1 case (cpu in millicores, memory in bytes)
def test_set_default_cluster_resource_models():
    cpu = [0, 1, 2, 4, 8, 16, 32, 64, 128]
    mem = [0, 4, 16, 32, 64, 128, 256, 512, 1024]
    want = [ResourceModel(g, (ResourceModelRange("cpu", cpu[g] * 1000, cpu[g + 1] * 1000 if g < 8 else INT64_MAX),
                              ResourceModelRange("memory", mem[g] << 30, mem[g + 1] << 30 if g < 8 else INT64_MAX)))
            for g in range(9)]
    assert list(DEFAULT_RESOURCE_MODELS) == want


# TestStrategy_PrepareForCreate: 3 of 3 cases, on what the Cluster keeps. With the gate off its
# models are not read by anything (no allocatableModelings, no estimate from grades), so the
# Cluster keeps none.
def test_strategy_prepare_for_create():
    # featureGate CustomizedClusterResourceModeling is false
    assert _cluster([], modeling=False).resource_models == ()
    # featureGate CustomizedClusterResourceModeling is true and cluster.Spec.ResourceModels is nil
    assert _cluster([]).resource_models == DEFAULT_RESOURCE_MODELS
    # featureGate CustomizedClusterResourceModeling is true and cluster.Spec.ResourceModels is not nil
    got = _cluster(rm((2, [("cpu", 2, MAX)]), (1, [("cpu", 0, 2)]))).resource_models
    assert got == (ResourceModel(1, (ResourceModelRange("cpu", 0, 2000),)), ResourceModel(2, (ResourceModelRange("cpu", 2000, INT64_MAX),)))


def test_with_the_gate_off_grades_in_the_status_are_not_read():
    status = {"resourceSummary": {"allocatable": {"cpu": "8", "pods": "10"}, "allocatableModelings": [{"grade": 0, "count": 1}]}}
    c = _cluster(rm((0, [("cpu", 0, MAX)])), status, modeling=False)
    assert c.resource_models == () and c.resource_summary.allocatable_modelings == ()


def test_a_member_given_only_as_a_dump_gets_the_default_models(tmp_path):
    from kubesched.multicluster.load import read_setup

    dump = tmp_path / "m.yaml"
    dump.write_text("apiVersion: v1\nkind: List\nitems: []\n")
    assert read_setup([f"m={dump}"]).clusters["m"].resource_models == DEFAULT_RESOURCE_MODELS
    assert read_setup([f"m={dump}"], modeling=False).clusters["m"].resource_models == ()


# TestStandardizeClusterResourceModels: 3 of 3 cases (the registry's step before validation)
STANDARDIZE = [
    ("sort models", rm((2, [("cpu", 2, MAX)]), (1, [("cpu", 0, 2)])), [(1, 0, 2000), (2, 2000, INT64_MAX)]),
    ("start with 0", rm((1, [("cpu", 1, MAX)])), [(1, 0, INT64_MAX)]),
    ("end with MaxInt64", rm((1, [("cpu", 0, 2)])), [(1, 0, INT64_MAX)]),
]


@pytest.mark.parametrize(("name", "models", "want"), STANDARDIZE, ids=[r[0] for r in STANDARDIZE])
def test_standardize_cluster_resource_models(name, models, want):
    got = parse_resource_models(models, "spec.resourceModels")
    assert [(m.grade, m.ranges[0].min, m.ranges[0].max) for m in got] == want


def test_allocatable_modelings_are_read_from_a_cluster_dump():
    status = {"resourceSummary": {"allocatable": {"cpu": "8", "pods": "10"},
                                  "allocatableModelings": [{"grade": 0, "count": 1}, {"grade": 1, "count": 3}]}}
    c = _cluster(rm((0, [("cpu", 0, 1)]), (1, [("cpu", 1, MAX)])), status)
    assert c.resource_summary.allocatable_modelings == (AllocatableModeling(0, 1), AllocatableModeling(1, 3))
    status["resourceSummary"]["allocatableModelings"] = [{"grade": 0, "cnt": 1}]
    with pytest.raises(InputError, match=r'status.resourceSummary.allocatableModelings\[0\].cnt: unknown field "cnt"'):
        _cluster([], status)


def test_a_bad_model_is_one_line_naming_file_and_field(tmp_path, capsys):
    from kubesched.cli import main

    f = tmp_path / "fed.yaml"
    f.write_text(json.dumps({"apiVersion": "cluster.karmada.io/v1alpha1", "kind": "Cluster", "metadata": {"name": "m"},
                             "spec": {"resourceModels": rm((0, [("cpu", 0, 2)]), (1, [("cpu", 1, MAX)]))}}))
    assert main(["multicluster", "schedule", "-f", str(f)]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err == (f"kubesched: error: {f}: document.spec.resourceModels[1].ranges[0].min: "
                                 "Model intervals for resources must be contiguous and non-overlapping\n")


# ---- pkg/modeling -------------------------------------------------------------------------------
def models(*grades: dict[str, int]) -> list[ResourceModel]:
    return [ResourceModel(g, tuple(ResourceModelRange(n, v, 0) for n, v in mins.items())) for g, mins in enumerate(grades)]


# cpu [0, 1) and [1m, 2), memory [0, 1024) and [1.024, 2048) bytes as the Go tables write them
TWO = models({"cpu": 0, "memory": 0}, {"cpu": 1, "memory": 2})


def test_init_summary():
    """TestInitSummary: 1 of 1 case."""
    assert len(GradeSummary(TWO).grades) == 2


def test_init_summary_error():
    """TestInitSummaryError: 1 of 1 case (the second grade lists fewer resources)."""
    with pytest.raises(ModelingError):
        GradeSummary([*TWO[:1], ResourceModel(1, (ResourceModelRange("cpu", 1, 0),))])


def test_init_summary_with_one_grade():
    """TestInitSummaryWithOneGrade: 1 of 1 case."""
    assert len(GradeSummary(TWO[:1]).grades) == 1


def test_search_last_less_element():
    """TestSearchLastLessElement: 3 of 3 cases."""
    assert search_last_less_element([1999, 4327, 9783, 12378, 23480, 74217], 10000) == 2
    assert search_last_less_element([1000, 3400, 4500, 8700, 11599, 62300, 95600, 134600], 9700) == 3
    assert search_last_less_element([1000, 2000], 0) == -1


def test_get_index():
    """TestGetIndex: 2 of 2 cases."""
    rs = GradeSummary(TWO)
    assert rs.index({"cpu": 1, "memory": 1024}) == 1
    assert rs.index({"cpu": 20, "memory": 1024 * 100}) == 1
    assert rs.index({"cpu": 0, "memory": 1024 * 100}) == 0  # the lowest grade over the resources
    assert rs.index({"cpu": -1, "memory": 0}) == -1


def test_cluster_resource_node_comparator():
    """TestClusterResourceNodeComparator: 3 of 3 cases, as the order of the nodes' keys (the
    models' resources in order; the quantity does not take part)."""
    rs = GradeSummary(TWO)
    assert rs.key({"cpu": 10, "memory": 1024}) > rs.key({"cpu": 2, "memory": 1024})
    assert rs.key({"cpu": 6, "memory": 1024}) == rs.key({"cpu": 6, "memory": 1024, "pods": 3})
    assert rs.key({"cpu": 6, "memory": 1024}) < rs.key({"cpu": 6, "memory": 1024 * 10})


def test_get_node_num_from_model():
    """TestGetNodeNumFromModel: 1 of 1 case (two nodes alike count once)."""
    rs = GradeSummary(TWO)
    rs.add({"cpu": 8, "memory": 1024 * 3}, 3)
    rs.add({"cpu": 1, "memory": 1024 * 6}, 1)
    rs.add({"cpu": 1, "memory": 1024 * 6}, 2)
    assert [g.distinct for g in rs.grades] == [0, 2]


def test_ll_convert_to_rbt():
    """TestLlConvertToRbt: 1 of 1 case, as what the tree holds: six distinct vectors in one grade
    (past five upstream switches to the tree) keep their own counts."""
    rs = GradeSummary(TWO)
    crns = [((2, 1024 * 7), 6), ((6, 1024 * 3), 5), ((5, 1024 * 8), 4), ((8, 1024 * 3), 3), ((1, 1024 * 6), 2), ((2, 1024 * 12), 1)]
    for (cpu, mem), q in [crns[4], crns[0], crns[5], crns[2], crns[1], crns[3]]:
        rs.add({"cpu": cpu, "memory": mem}, q)
    g = rs.grades[1]
    assert g.distinct == 6 and g.quantity == 21
    assert g.nodes[(1, 1024 * 6)] == 2 and g.nodes[(2, 1024 * 12)] == 1 and g.nodes[(2, 1024 * 7)] == 6


def test_rbt_convert_to_ll():
    """TestRbtConvertToLl: 1 of 1 case: a grade nothing was filed under holds no vectors."""
    rs = GradeSummary(TWO)
    assert [g.distinct for g in rs.grades] == [0, 0] and [g.quantity for g in rs.grades] == [0, 0]


def test_add_to_resource_summary():
    """TestAddToResourceSummary: 1 of 1 case."""
    rs = GradeSummary(TWO)
    rs.add({"cpu": 8, "memory": 1024 * 3}, 3)
    rs.add({"cpu": 1, "memory": 1024 * 6}, 1)
    rs.add({"cpu": 1, "memory": 1024 * 6}, 2)
    assert [(g.distinct, g.quantity) for g in rs.grades] == [(0, 0), (2, 6)]
    rs.add({"cpu": 0, "memory": 19}, 2)
    assert (rs.grades[0].distinct, rs.grades[0].quantity) == (1, 2)


# ---- the cluster-status controller ------------------------------------------------------------
# TestGetNodeAvailable: 4 of 4 cases
NODE_AVAILABLE = [
    ("resource isn't enough", {"pods": 10}, {"pods": 11}, None),
    ("resource is enough", {"pods": 10}, {"pods": 9}, {"pods": 1}),
    ("podResources is nil", {"pods": 10}, None, {"pods": 10}),
    ("allocatedResourceList is nil", {"pods": 10}, {"pods": 0}, {"pods": 10}),
]


@pytest.mark.parametrize(("name", "allocatable", "used", "want"), NODE_AVAILABLE, ids=[r[0] for r in NODE_AVAILABLE])
def test_get_node_available(name, allocatable, used, want):
    assert node_available(allocatable, used) == want


def _node(name: str, allocatable: dict) -> Node:
    return Node.parse({"metadata": {"name": name}, "status": {"allocatable": allocatable}})


def _pod(name: str, node: str, requests: dict, phase: str = "Running") -> Pod:
    return Pod.parse({"metadata": {"name": name, "namespace": "default"}, "status": {"phase": phase},
                      "spec": {"nodeName": node, "containers": [{"name": "c", "resources": {"requests": requests}}]}})


# TestGetAllocatableModelings: 4 of 4 cases (its nodes have no name and its bound pod names
# "node1": here the nodes are a and b, and the pod's node is none of them)
TEST_NODES = [_node("a", {"test": "0"}), _node("b", {"test": "0"})]
GET_MODELINGS = [
    ("suc to get AllocatableModeling", TWO, [_pod("p", "", {"test": "0"})], ((0, 2), (1, 0))),
    ("cluster.Spec.ResourceModels is empty", [], [_pod("p", "", {"test": "0"})], ()),
    ("InitSummary occurs error", [TWO[0], ResourceModel(1, (ResourceModelRange("cpu", 1, 0),))], [_pod("p", "", {"test": "0"})], ()),
    ("pod.Spec.NodeName isn't 0", TWO, [_pod("p", "node1", {"test": "0"})], ((0, 2), (1, 0))),
]


@pytest.mark.parametrize(("name", "ms", "pods", "want"), GET_MODELINGS, ids=[r[0] for r in GET_MODELINGS])
def test_get_allocatable_modelings(name, ms, pods, want):
    assert allocatable_modelings(ms, TEST_NODES, pods) == tuple(AllocatableModeling(g, c) for g, c in want)


CPU_GRADES = models({"cpu": 0}, {"cpu": 1000}, {"cpu": 2000})


def test_pods_requests_lower_a_nodes_grade():
    """Free is allocatable minus the requests of the non-terminal pods bound there."""
    nodes = [_node("a", {"cpu": "4", "pods": "10"}), _node("b", {"cpu": "4", "pods": "10"}), _node("c", {"cpu": "1500m", "pods": "10"})]
    pods = [_pod("x", "a", {"cpu": "2500m"}), _pod("y", "b", {"cpu": "3"}, phase="Succeeded"), _pod("z", "", {"cpu": "4"})]
    assert allocatable_modelings(CPU_GRADES, nodes, pods) == (AllocatableModeling(0, 0), AllocatableModeling(1, 2), AllocatableModeling(2, 1))


def test_a_node_without_free_pod_slots_ends_the_count():
    """Upstream ``break``s at the first node with no free pod slot: the nodes after it are not
    counted at all."""
    nodes = [_node("a", {"cpu": "4", "pods": "10"}), _node("full", {"cpu": "4", "pods": "1"}), _node("c", {"cpu": "4", "pods": "10"})]
    got = allocatable_modelings(CPU_GRADES, nodes, [_pod("x", "full", {"cpu": "1"})])
    assert got == (AllocatableModeling(0, 0), AllocatableModeling(1, 0), AllocatableModeling(2, 1))


def test_a_member_reports_its_nodes_per_grade():
    """A member with a dump: its Cluster's status counts the nodes per grade, and follows the
    replicas kubesched creates there."""
    from kubesched.load import ClusterObjects
    from kubesched.multicluster.member import MemberCluster

    nodes = [_node(f"n{i}", {"cpu": "4", "memory": "8Gi", "pods": "10"}) for i in range(3)]
    c = Cluster("m", resource_models=tuple(CPU_GRADES))
    member = MemberCluster(c, ClusterObjects(nodes=nodes))
    assert [a.count for a in member.cluster.resource_summary.allocatable_modelings] == [0, 0, 3]
    member.create(_pod("w", "", {"cpu": "3"}), "w", 2)  # two nodes keep 1 cpu each
    member.refresh()
    assert [a.count for a in member.cluster.resource_summary.allocatable_modelings] == [0, 2, 1]
    plain = MemberCluster(Cluster("p"), ClusterObjects(nodes=nodes))
    assert plain.cluster.resource_summary.allocatable_modelings == ()


def test_counts_past_what_can_be_modelled_are_refused():
    """One model node is built per counted node: a dump counting 10^12 nodes would never finish."""
    status = {"resourceSummary": {"allocatableModelings": [{"grade": 0, "count": 60_000}, {"grade": 1, "count": 10**12}]}}
    with pytest.raises(InputError, match=r"allocatableModelings\[1\].count: the grades count more than 100,000 nodes in all"):
        _cluster(rm((0, [("cpu", 0, 1)]), (1, [("cpu", 1, MAX)])), status)
    with pytest.raises(InputError, match=r"grade: invalid value 18446744073709551616"):
        _cluster([{"grade": 2**64, "ranges": [{"name": "cpu", "min": 0, "max": 1}]}])

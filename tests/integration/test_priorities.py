"""kube-scheduler v1.36 test/integration/scheduler/scoring/priorities_test.go, through the whole
cycle (see integration_testlib). As upstream's ``initTestSchedulerForScoringTests``, each test
keeps the default filters and enables one Score plugin (and its PreScore), except
TestNodeResourcesScoring, which runs the default profile with NodeResourcesFit's scoring strategy.

TestNodeResourcesScoring: 2 of 2. TestNodeAffinityScoring: 1 of 1. TestPodAffinityScoring: 6 of
6 (the matchLabelKeys cases with the MatchLabelKeysInPodAffinity gate on, v1.36's default).
TestTaintTolerationScoring: 3 of 3. TestImageLocalityScoring: 1 of 1.
TestPodTopologySpreadScoring: 6 of 7; left out: "matchLabelKeys ignored when feature gate
disabled" (MatchLabelKeysInPodTopologySpread off; kubesched has only v1.36's default, on).
TestDefaultPodTopologySpreadScoring: 3 of 3 (300 nodes in 3 zones, pods of a Service added 3, 9
and 15 at a time, every zone equally loaded after each step).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from integration_testlib import (
    HOSTNAME,
    SEEDS,
    ZONE,
    container,
    exists,
    expr,
    foo_pod,
    namespace,
    node,
    on,
    placed,
    pod,
    profile_config,
    schedule,
    scoring_config,
    term,
)

from kubesched.testing import spread_constraint as spread

GPU = "example.com/gpu"


# -- TestNodeResourcesScoring ---------------------------------------------------------------------


def fit_config(strategy: str) -> dict:
    """``initTestSchedulerForNodeResourcesTest``: the default profile, NodeResourcesFit scoring
    cpu and memory at weight 1 and example.com/gpu at weight 2."""
    resources = [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}, {"name": GPU, "weight": 2}]
    return profile_config(plugin_config=[{"name": "NodeResourcesFit", "args": {"scoringStrategy": {"type": strategy, "resources": resources}}}])


def res_pod(name: str, node_name: str | None = None, sidecar: dict[str, str] | None = None) -> dict:
    """``st.MakePod().Res({cpu: 2, memory: 4G, gpu: 1})`` (requests and limits), with
    ``SidecarReq(sidecar)``: a restartable init container."""
    res = {"cpu": "2", "memory": "4G", GPU: "1"}
    main = container(name="con0", requests=res)
    main["resources"]["limits"] = dict(res)
    p = pod(name, node_name=node_name, containers=[main])
    if sidecar:
        init = container(name="sidecar", requests=sidecar)
        init["restartPolicy"] = "Always"
        p["spec"]["initContainers"] = [init]
    return p


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize(
    ("strategy", "expected"),
    [("LeastAllocated", "node-2"), ("MostAllocated", "node-1")],
    ids=[
        "with least allocated strategy, take existing sidecars into consideration",
        "with most allocated strategy, take existing sidecars into consideration",
    ],
)
def test_node_resources_scoring(strategy: str, expected: str, seed: int, tmp_path: Path) -> None:
    """TestNodeResourcesScoring: node-1's existing pod has a sidecar, so node-1 is the fuller."""
    cap = {"cpu": "8", "memory": "16G", GPU: "4"}
    nodes = [node("node-1", capacity=cap), node("node-2", capacity=cap)]
    existing = [res_pod("existing-pod-1", "node-1", sidecar={"cpu": "2", "memory": "2G"}), res_pod("existing-pod-2", "node-2")]
    incoming = res_pod("pod")
    result = schedule(tmp_path, [*nodes, *existing, incoming], config=fit_config(strategy), seed=seed)
    assert placed(result, incoming) == expected


# -- TestNodeAffinityScoring ----------------------------------------------------------------------


@pytest.mark.parametrize("seed", SEEDS)
def test_node_affinity_scoring(seed: int, tmp_path: Path) -> None:
    label_key, label_value = "kubernetes.io/node-topologyKey", "topologyvalue"
    nodes = [node(f"testnode-{i}") for i in range(4)] + [node("testnode-4", {label_key: label_value})]
    incoming = pod(
        "pod-with-node-affinity",
        affinity={
            "nodeAffinity": {
                "preferredDuringSchedulingIgnoredDuringExecution": [
                    {"weight": 20, "preference": {"matchExpressions": [expr(label_key, "In", label_value)]}}
                ]
            }
        },
    )
    result = schedule(tmp_path, [*nodes, incoming], config=scoring_config("NodeAffinity", "NodeAffinity"), seed=seed)
    assert placed(result, incoming) == "testnode-4"


# -- TestPodAffinityScoring -----------------------------------------------------------------------

TOPOLOGY_KEY = "node-topologykey"


def topology_nodes(values: list[int], extra: tuple[str, ...] = ()) -> list[dict]:
    """node1..nodeN labelled node-topologykey=topologyvalue<v>, then unlabelled ``extra`` nodes."""
    return [node(f"node{i}", {TOPOLOGY_KEY: f"topologyvalue{v}"}) for i, v in enumerate(values, 1)] + [node(n) for n in extra]


def weighted(weight: int, t: dict) -> dict:
    return {"weight": weight, "podAffinityTerm": t}


@dataclass
class AffinityScoreCase:
    name: str
    incoming: dict
    existing: list[dict]
    nodes: list[dict]
    expected: list[str]


TWELVE_NODES = topology_nodes([0, 1, 2, 3, 4, 0, 1, 2, 3, 4], ("other-node1", "other-node2"))
SIX_NODES = topology_nodes([0, 1, 2, 0, 1, 2])
S1_OR_S3 = expr("service", "In", "S1", "S3")
ATTRACTOR = pod("attractor-pod", "ns1", labels={"service": "S1"}, node_name="node1")


def incoming_foo_bar(aff: dict) -> dict:
    return pod("incoming", "ns1", labels={"foo": "", "bar": "a"}, affinity=aff)


def bound(name: str, node_name: str, bar: str) -> dict:
    return pod(name, "ns1", labels={"foo": "", "bar": bar}, node_name=node_name)


POD_AFFINITY_SCORING = [
    AffinityScoreCase(
        "pod affinity",
        pod("pod1", "ns1", affinity={"podAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
            weighted(50, term(TOPOLOGY_KEY, S1_OR_S3))
        ]}}),
        [ATTRACTOR],
        TWELVE_NODES,
        ["node1", "node6"],
    ),
    AffinityScoreCase(
        "pod affinity with namespace selector",
        pod("pod1", "ns2", affinity={"podAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
            weighted(50, term(TOPOLOGY_KEY, S1_OR_S3, namespaceSelector={}))
        ]}}),
        [ATTRACTOR],
        TWELVE_NODES,
        ["node1", "node6"],
    ),
    AffinityScoreCase(
        "anti affinity: matchLabelKeys is merged into LabelSelector with In operator (feature flag: enabled)",
        incoming_foo_bar({"podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
            weighted(50, term(TOPOLOGY_KEY, expr("foo", "Exists"), matchLabelKeys=["bar"]))
        ]}}),
        [bound("pod1", "node1", "fuga"), bound("pod2", "node2", "a")],
        topology_nodes([0, 1]),
        ["node1"],
    ),
    AffinityScoreCase(
        "anti affinity: mismatchLabelKeys is merged into LabelSelector with NotIn operator  (feature flag: enabled)",
        incoming_foo_bar({"podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
            weighted(50, term(TOPOLOGY_KEY, expr("foo", "Exists"), mismatchLabelKeys=["bar"]))
        ]}}),
        [bound("pod1", "node1", "fuga"), bound("pod2", "node2", "a")],
        topology_nodes([0, 1]),
        ["node2"],
    ),
    AffinityScoreCase(
        "affinity: matchLabelKeys is merged into LabelSelector with In operator (feature flag: enabled)",
        incoming_foo_bar({"podAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
            weighted(50, term(TOPOLOGY_KEY, expr("foo", "Exists"), matchLabelKeys=["bar"])),
            weighted(10, term(TOPOLOGY_KEY, expr("bar", "In", "hoge"))),
        ]}}),
        [bound("pod1", "node1", "hoge"), bound("pod2", "node2", "hoge"), bound("pod3", "node3", "a")],
        SIX_NODES,
        ["node3", "node6"],
    ),
    AffinityScoreCase(
        "affinity: mismatchLabelKeys is merged into LabelSelector with NotIn operator (feature flag: enabled)",
        incoming_foo_bar({"podAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
            weighted(50, term(TOPOLOGY_KEY, expr("foo", "Exists"), mismatchLabelKeys=["bar"])),
            weighted(10, term(TOPOLOGY_KEY, expr("bar", "In", "hoge"))),
        ]}}),
        [bound("pod1", "node1", "a"), bound("pod2", "node2", "a"), bound("pod3", "node3", "hoge")],
        SIX_NODES,
        ["node3", "node6"],
    ),
]


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("case", POD_AFFINITY_SCORING, ids=[c.name for c in POD_AFFINITY_SCORING])
def test_pod_affinity_scoring(case: AffinityScoreCase, seed: int, tmp_path: Path) -> None:
    namespaces = [namespace("ns1", {"team": "team1"}), namespace("ns2", {"team": "team1"})]
    objects = [*namespaces, *case.nodes, *case.existing, case.incoming]
    result = schedule(tmp_path, objects, config=scoring_config("InterPodAffinity", "InterPodAffinity"), seed=seed)
    assert placed(result, case.incoming) in case.expected


# -- TestTaintTolerationScoring -------------------------------------------------------------------

EXAMPLE_TAINT = {"key": "example-key", "value": "example-value", "effect": "PreferNoSchedule"}


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize(
    ("tolerations", "tainted", "expected"),
    [
        ([], False, {"node-1", "node-2"}),
        ([{"key": "example-key", "operator": "Equal", "value": "example-value", "effect": "PreferNoSchedule"}], True, {"node-1", "node-2"}),
        ([{"key": "other-key", "operator": "Equal", "value": "other-value", "effect": "PreferNoSchedule"}], True, {"node-2"}),
    ],
    ids=["no taints or tolerations", "pod with toleration for node's taint", "pod without toleration for node's taint"],
)
def test_taint_toleration_scoring(tolerations: list[dict], tainted: bool, expected: set[str], seed: int, tmp_path: Path) -> None:
    nodes = [node("node-1", taints=[EXAMPLE_TAINT] if tainted else None), node("node-2")]
    incoming = pod("test-pod", tolerations=tolerations)
    result = schedule(tmp_path, [*nodes, incoming], config=scoring_config("TaintToleration", "TaintToleration"), seed=seed)
    assert placed(result, incoming) in expected


# -- TestImageLocalityScoring ---------------------------------------------------------------------


@pytest.mark.parametrize("seed", SEEDS)
def test_image_locality_scoring(seed: int, tmp_path: Path) -> None:
    """The pod's one image is on one node only, 3000 MiB large: that node wins."""
    image = "fake-large-image:v1"
    nodes = [node("testnode-large-image", images={image: 3000 * 1024 * 1024})] + [node(f"testnode-{i}") for i in range(10)]
    incoming = pod("pod-using-large-image", containers=[container(image, "fake-large-image-v1-container")])
    result = schedule(tmp_path, [*nodes, incoming], config=scoring_config(None, "ImageLocality"), seed=seed)
    assert placed(result, incoming) == "testnode-large-image"


# -- TestPodTopologySpreadScoring -----------------------------------------------------------------

SOFT, HARD = "ScheduleAnyway", "DoNotSchedule"
K1_TAINT = {"key": "k1", "value": "v1", "effect": "NoSchedule"}
PREFER_UNSCHEDULABLE = [{"key": "node.kubernetes.io/unschedulable", "value": "", "effect": "PreferNoSchedule"}]
SCORING_NODES = [
    node("node-0", {"node": "node-0", "zone": "zone-0"}, taints=[K1_TAINT]),
    node("node-1", {"node": "node-1", "zone": "zone-0"}),
    node("node-2", {"node": "node-2", "zone": "zone-1"}),
    node("node-3", {"node": "node-3", "zone": "zone-1"}),
]
INCLUSION_NODES = [
    node("node-1", {"node": "node-1", "zone": "zone-1", "foo": ""}),
    node("node-2", {"node": "node-2", "zone": "zone-1", "foo": ""}, taints=PREFER_UNSCHEDULABLE),
    node("node-3", {"node": "node-3", "zone": "zone-2", "foo": ""}),
    node("node-4", {"node": "node-4", "zone": "zone-2"}),
]



@dataclass
class SpreadScoreCase:
    name: str
    incoming: dict
    existing: list[dict]
    want: list[str]
    nodes: list[dict] = field(default_factory=lambda: SCORING_NODES)


SOFT_NODE = spread(1, "node", SOFT, exists("foo"))
POD_TOPOLOGY_SPREAD_SCORING = [
    SpreadScoreCase(
        "place pod on a ~0~/1/2/3 cluster with MaxSkew=1, node-1 is the preferred fit",
        foo_pod("p", topologySpreadConstraints=[SOFT_NODE]),
        on("1", "2a", "2b", "3a", "3b", "3c"),
        ["node-1"],
    ),
    SpreadScoreCase(
        "combined with hardSpread constraint on a ~4~/0/1/2 cluster",
        foo_pod("p", topologySpreadConstraints=[SOFT_NODE, spread(1, "zone", HARD, exists("foo"))]),
        on("0a", "0b", "0c", "0d", "2", "3a", "3b"),
        ["node-2"],
    ),
    SpreadScoreCase(
        "soft constraint with two node inclusion Constraints, zone: honor/ignore, node: honor/ignore",
        foo_pod("p", nodeSelector={"foo": ""}, topologySpreadConstraints=[spread(1, "zone", SOFT, exists("foo")), SOFT_NODE]),
        on("1a", "2a", "2b", "4a"),
        ["node-3"],
        INCLUSION_NODES,
    ),
    SpreadScoreCase(
        "soft constraint with two node inclusion Constraints, zone: ignore/ignore, node: honor/honor",
        foo_pod(
            "p",
            nodeSelector={"foo": ""},
            topologySpreadConstraints=[
                spread(1, "zone", SOFT, exists("foo"), node_affinity_policy="Ignore"),
                spread(1, "node", SOFT, exists("foo"), node_taints_policy="Honor"),
            ],
        ),
        on("1a", "2a", "2b", "4a"),
        ["node-3"],
        INCLUSION_NODES,
    ),
    SpreadScoreCase(
        "matchLabelKeys ANDed with LabelSelector when LabelSelector isn't empty, node-2 is the preferred fit",
        foo_pod("p", labels={"bar": ""}, topologySpreadConstraints=[spread(1, "node", SOFT, exists("foo"), match_label_keys=["bar"])]),
        on("1", "2a", "2b", "3a", "3b", "3c", bar=("1", "3a", "3b")),
        ["node-2"],
    ),
    SpreadScoreCase(
        "matchLabelKeys ANDed with LabelSelector when LabelSelector is empty, node-1 is the preferred fit",
        foo_pod("p", topologySpreadConstraints=[spread(1, "node", SOFT, {}, match_label_keys=["foo"])]),
        on("1", "2a", "2b", "3a", "3b", "3c"),
        ["node-1"],
    ),
]


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("case", POD_TOPOLOGY_SPREAD_SCORING, ids=[c.name for c in POD_TOPOLOGY_SPREAD_SCORING])
def test_pod_topology_spread_scoring(case: SpreadScoreCase, seed: int, tmp_path: Path) -> None:
    config = scoring_config("PodTopologySpread", "PodTopologySpread")
    result = schedule(tmp_path, [*case.nodes, *case.existing, case.incoming], config=config, seed=seed)
    assert placed(result, case.incoming) in case.want


# -- TestDefaultPodTopologySpreadScoring ----------------------------------------------------------


def test_default_pod_topology_spread_scoring(tmp_path: Path) -> None:
    """Pods of a Service, no constraints of their own: the system default constraints spread
    them over the zones; after 3, 12 and 27 pods every zone holds as many."""
    zone_of = {f"node-{i}": f"zone-{i % 3}" for i in range(300)}
    nodes = [node(n, {HOSTNAME: n, ZONE: z}) for n, z in zone_of.items()]
    service = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": "test-service", "namespace": "default"},
        "spec": {"selector": {"service": "test-service"}, "ports": [{"port": 80, "targetPort": 80}]},
    }
    pods = [pod(f"p-{i}", labels={"service": "test-service"}) for i in range(27)]
    config = scoring_config("PodTopologySpread", "PodTopologySpread")
    result = schedule(tmp_path, [*nodes, service, *pods], config=config, seed=1)
    order = [e["node"] for e in result.placements]  # in the order they were placed
    assert len(order) == 27 and all(order)
    for total in (3, 12, 27):  # the subtests "3-pods", "12-pods", "27-pods"
        zones = Counter(zone_of[n] for n in order[:total])
        assert len(zones) == 3 and max(zones.values()) == min(zones.values()), (total, zones)

"""kube-scheduler v1.36 test/integration/scheduler/filters/filters_test.go, through the whole cycle
(see integration_testlib).

TestInterPodAffinity: 20 of 20 cases. Upstream runs the matchLabelKeys/mismatchLabelKeys cases
with the MatchLabelKeysInPodAffinity gate on, v1.36's default and kubesched's only behaviour.
TestInterPodAffinityWithNamespaceSelector: 2 of 2.
TestPodTopologySpreadFilter: 19 of 20. Left out: "matchLabelKeys ignored when feature gate
disabled" (MatchLabelKeysInPodTopologySpread off; kubesched has only v1.36's default, on). The
"feature gate disabled" NodeInclusionPolicy case is kept: its constraints set no policy, so the
gate's state does not change the outcome.
TestPodAffinityMatchLabelKeyEnablement is left out: it checks what the API server stores with the
gate switched on and off; the merge itself is checked by the matchLabelKeys cases here.
TestUnschedulablePodBecomesSchedulable: see test_unschedulable_becomes_schedulable.py.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pytest
from integration_testlib import (
    SEEDS,
    container,
    exists,
    expr,
    foo_pod,
    namespace,
    node,
    on,
    placed,
    pod,
    schedule,
    term,
    unschedulable_message,
)

from kubesched.testing import spread_constraint as spread

POD_LABEL = {"service": "securityscan"}
POD_LABEL2 = {"security": "S1"}
NS = "ns1"  # TestInterPodAffinity's default namespace


def affinity(*required: dict) -> dict:
    return {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": list(required)}}


def anti_affinity(*required: dict) -> dict:
    return {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": list(required)}}


def both(aff: list[dict], anti: list[dict]) -> dict:
    return {**affinity(*aff), **anti_affinity(*anti)}


def fakename(labels: dict[str, str] = POD_LABEL2, name: str = "fakename", **spec) -> dict:
    return pod(name, NS, labels=labels, **spec)


def existing(name: str = "fakename2", node_name: str = "testnode-0", labels: dict[str, str] = POD_LABEL, **kw) -> dict:
    ns = kw.pop("namespace", NS)
    return pod(name, ns, labels=labels, node_name=node_name, **kw)


def mem_1g() -> list[dict]:
    return [container(requests={"memory": "1G"})]


@dataclass
class Case:
    name: str
    pod: dict
    fits: bool
    pods: list[dict] = field(default_factory=list)


IN_SCAN = expr("service", "In", "securityscan", "value2")
IN_ANTIVIRUS = expr("service", "In", "antivirusscan", "value2")

INTER_POD_AFFINITY = [
    Case(
        "validates that a pod with an invalid podAffinity is rejected because of the LabelSelectorRequirement is invalid",
        fakename(affinity=affinity(term("region", expr("security", "DoesNotExist")))),
        fits=False,
    ),
    Case(
        "validates that Inter-pod-Affinity is respected if not matching",
        fakename(affinity=affinity(term("region", expr("security", "In", "securityscan")))),
        fits=False,
    ),
    Case(
        "validates that InterPodAffinity is respected if matching. requiredDuringSchedulingIgnoredDuringExecution "
        "in PodAffinity using In operator that matches the existing pod",
        fakename(affinity=affinity(term("region", IN_SCAN))),
        fits=True,
        pods=[existing()],
    ),
    Case(
        "validates that InterPodAffinity is respected if matching. requiredDuringSchedulingIgnoredDuringExecution "
        "in PodAffinity using not in operator in labelSelector that matches the existing pod",
        fakename(affinity=affinity(term("region", expr("service", "NotIn", "securityscan3", "value3")))),
        fits=True,
        pods=[existing()],
    ),
    Case(
        "validates that inter-pod-affinity is respected when pods have different Namespaces",
        fakename(affinity=affinity(term("region", IN_SCAN, namespaces=["diff-namespace"]))),
        fits=False,
        pods=[existing(namespace="ns2")],
    ),
    Case(
        "Doesn't satisfy the PodAffinity because of unmatching labelSelector with the existing pod",
        fakename(POD_LABEL, affinity=affinity(term("region", IN_ANTIVIRUS))),
        fits=False,
        pods=[existing()],
    ),
    Case(
        "validates that InterPodAffinity is respected if matching with multiple affinities in multiple "
        "RequiredDuringSchedulingIgnoredDuringExecution ",
        fakename(
            affinity=affinity(
                term("region", expr("service", "Exists"), expr("wrongkey", "DoesNotExist")),
                term("region", expr("service", "In", "securityscan"), expr("service", "NotIn", "WrongValue")),
            )
        ),
        fits=True,
        pods=[existing()],
    ),
    Case(
        "The labelSelector requirements(items of matchExpressions) are ANDed, the pod cannot schedule onto the "
        "node because one of the matchExpression items doesn't match.",
        fakename(
            affinity=affinity(
                term("region", expr("service", "Exists"), expr("wrongkey", "DoesNotExist")),
                term("region", expr("service", "In", "securityscan2"), expr("service", "NotIn", "WrongValue")),
            )
        ),
        fits=False,
        pods=[existing()],
    ),
    Case(
        "validates that InterPod Affinity and AntiAffinity is respected if matching",
        fakename(affinity=both([term("region", IN_SCAN)], [term("node", IN_ANTIVIRUS)])),
        fits=True,
        pods=[existing()],
    ),
    Case(
        "satisfies the PodAffinity and PodAntiAffinity and PodAntiAffinity symmetry with the existing pod",
        fakename(affinity=both([term("region", IN_SCAN)], [term("node", IN_ANTIVIRUS)])),
        fits=True,
        pods=[existing(affinity=anti_affinity(term("node", IN_ANTIVIRUS)))],
    ),
    Case(
        "satisfies the PodAffinity but doesn't satisfies the PodAntiAffinity with the existing pod",
        fakename(affinity=both([term("region", IN_SCAN)], [term("zone", IN_SCAN)])),
        fits=False,
        pods=[existing()],
    ),
    Case(
        "satisfies the PodAffinity and PodAntiAffinity but doesn't satisfies PodAntiAffinity symmetry with the "
        "existing pod",
        fakename(POD_LABEL, affinity=both([term("region", IN_SCAN)], [term("node", IN_ANTIVIRUS)])),
        fits=False,
        pods=[existing(affinity=anti_affinity(term("zone", expr("service", "In", "securityscan", "value3"))))],
    ),
    Case(
        # the existing pod is bound to a node that does not exist: it counts nowhere
        "pod matches its own Label in PodAffinity and that matches the existing pod Labels",
        fakename(POD_LABEL, affinity=affinity(term("region", expr("service", "NotIn", "securityscan", "value2")))),
        fits=False,
        pods=[existing(node_name="machine2")],
    ),
    Case(
        "Verify that PodAntiAffinity of an existing pod is respected when PodAntiAffinity symmetry is not "
        "satisfied with the existing pod",
        fakename(POD_LABEL),
        fits=False,
        pods=[existing(affinity=anti_affinity(term("zone", IN_SCAN)))],
    ),
    Case(
        "Verify that PodAntiAffinity from existing pod is respected when pod statisfies PodAntiAffinity symmetry "
        "with the existing pod",
        fakename(POD_LABEL, name="fake-name"),
        fits=True,
        pods=[
            existing(
                "fake-name2", affinity=anti_affinity(term("zone", expr("service", "NotIn", "securityscan", "value2")))
            )
        ],
    ),
    Case(
        "nodes[0] and nodes[1] have same topologyKey and label value. nodes[0] has an existing pod that matches "
        "the inter pod affinity rule. The new pod can not be scheduled onto either of the two nodes.",
        pod(
            "fake-name2",
            NS,
            nodeSelector={"region": "r1"},
            affinity=anti_affinity(term("region", expr("foo", "In", "abc"))),
        ),
        fits=False,
        pods=[existing("fakename", labels={"foo": "abc"})],
    ),
    Case(
        "anti affinity: matchLabelKeys is merged into LabelSelector with In operator (feature flag: enabled)",
        pod(
            "incoming",
            NS,
            labels={"foo": "", "bar": "a"},
            affinity=anti_affinity(term("zone", expr("foo", "Exists"), matchLabelKeys=["bar"])),
        ),
        fits=True,
        pods=[existing("pod1", labels={"foo": "", "bar": "fuga"}), existing("pod2", labels={"foo": "", "bar": "hoge"})],
    ),
    Case(
        "anti affinity: mismatchLabelKeys is merged into LabelSelector with NotIn operator (feature flag: enabled)",
        pod(
            "incoming",
            NS,
            labels={"foo": "", "bar": "a"},
            affinity=anti_affinity(term("zone", expr("foo", "Exists"), mismatchLabelKeys=["bar"])),
        ),
        fits=True,
        pods=[existing("pod1", labels={"foo": "", "bar": "a"}), existing("pod2", labels={"foo": "", "bar": "a"})],
    ),
    Case(
        # pod1 matches but fills anothernode-0's memory; the pods on testnode-0 do not match
        "affinity: matchLabelKeys is merged into LabelSelector with In operator (feature flag: enabled)",
        pod(
            "incoming",
            NS,
            labels={"foo": "", "bar": "a"},
            containers=mem_1g(),
            affinity=affinity(term("node", expr("foo", "Exists"), matchLabelKeys=["bar"])),
        ),
        fits=False,
        pods=[
            existing("pod1", "anothernode-0", {"foo": "", "bar": "a"}, containers=mem_1g()),
            existing("pod2", labels={"foo": "", "bar": "hoge"}),
            existing("pod3", labels={"foo": "", "bar": "fuga"}),
        ],
    ),
    Case(
        "affinity: mismatchLabelKeys is merged into LabelSelector with NotIn operator (feature flag: enabled)",
        pod(
            "incoming",
            NS,
            labels={"foo": "", "bar": "a"},
            containers=mem_1g(),
            affinity=affinity(term("node", expr("foo", "Exists"), mismatchLabelKeys=["bar"])),
        ),
        fits=False,
        pods=[
            existing("pod1", "anothernode-0", {"foo": "", "bar": "fuga"}, containers=mem_1g()),
            existing("pod2", labels={"foo": "", "bar": "a"}),
            existing("pod3", labels={"foo": "", "bar": "a"}),
        ],
    ),
]

TEAM_NAMESPACES = [namespace("ns1", {"team": "team1"}), namespace("ns2", {"team": "team1"}), namespace("ns3", {"team": "team2"})]


@pytest.mark.parametrize("case", INTER_POD_AFFINITY, ids=[c.name for c in INTER_POD_AFFINITY])
def test_inter_pod_affinity(case: Case, tmp_path: Path) -> None:
    """TestInterPodAffinity: two nodes alike in region and zone, one "node" value each, 1G of memory."""
    nodes = [
        node("testnode-0", {"region": "r1", "zone": "z11", "node": "n1"}, capacity={"memory": "1G"}),
        node("anothernode-0", {"region": "r1", "zone": "z11", "node": "n2"}, capacity={"memory": "1G"}),
    ]
    result = schedule(tmp_path, [*nodes, *TEAM_NAMESPACES, *case.pods, case.pod])
    if case.fits:
        assert placed(result, case.pod) in {"testnode-0", "anothernode-0"}
    else:
        assert unschedulable_message(result, case.pod).startswith("0/2 nodes are available: ")


@pytest.mark.parametrize(("ns", "fits"), [("ns2", True), ("ns3", False)], ids=["MatchingNamespaces", "MismatchingNamespaces"])
def test_inter_pod_affinity_with_namespace_selector(ns: str, fits: bool, tmp_path: Path) -> None:
    """TestInterPodAffinityWithNamespaceSelector: the term selects namespaces labelled team=team1."""
    nodes = [node(f"testnode-{i}", {"region": "r1", "zone": "z11"}) for i in range(2)]
    incoming = pod(
        "pod-ns-selector",
        "ns1",
        affinity=affinity(
            term(
                "region",
                expr("service", "In", "securityscan"),
                namespaceSelector={"matchExpressions": [expr("team", "In", "team1")]},
            )
        ),
    )
    attractor = pod("fakename2", ns, labels=POD_LABEL, node_name="testnode-0")
    result = schedule(tmp_path, [*nodes, *TEAM_NAMESPACES, attractor, incoming])
    if fits:
        assert placed(result, incoming) in {"testnode-0", "testnode-1"}
    else:
        assert unschedulable_message(result, incoming).startswith("0/2 nodes are available: ")


# -- TestPodTopologySpreadFilter ---------------------------------------------------------------

HARD = "DoNotSchedule"
UNSCHEDULABLE_TAINT = [{"key": "node.kubernetes.io/unschedulable", "value": "", "effect": "NoSchedule"}]
DEFAULT_NODES = [
    node("node-0", {"node": "node-0", "zone": "zone-0"}),
    node("node-1", {"node": "node-1", "zone": "zone-0"}),
    node("node-2", {"node": "node-2", "zone": "zone-1"}),
    node("node-3", {"node": "node-3", "zone": "zone-1"}),
]
# node-3 unlabelled foo; the second variant taints node-2 instead of node-3
INCLUSION_NODES = [
    node("node-1", {"node": "node-1", "zone": "zone-1", "foo": ""}),
    node("node-2", {"node": "node-2", "zone": "zone-1", "foo": ""}),
    node("node-3", {"node": "node-3", "zone": "zone-2"}),
    node("node-4", {"node": "node-4", "zone": "zone-2", "foo": ""}),
]
TAINTED_3_NODES = [
    INCLUSION_NODES[0],
    INCLUSION_NODES[1],
    node("node-3", {"node": "node-3", "zone": "zone-2"}, taints=UNSCHEDULABLE_TAINT),
    INCLUSION_NODES[3],
]
TAINTED_2_NODES = [
    INCLUSION_NODES[0],
    node("node-2", {"node": "node-2", "zone": "zone-1", "foo": ""}, taints=UNSCHEDULABLE_TAINT),
    INCLUSION_NODES[2],
    INCLUSION_NODES[3],
]



def zero_grace(pods: list[dict]) -> list[dict]:
    for p in pods:
        p["spec"]["terminationGracePeriodSeconds"] = 0
    return pods


def not_node_0() -> dict:
    """NodeAffinityNotIn("node", ["node-0"]): mocks a 3-node cluster."""
    return {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [{"matchExpressions": [expr("node", "NotIn", "node-0")]}]
            }
        }
    }


def in_zone_0() -> dict:
    return {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [{"matchExpressions": [expr("zone", "In", "zone-0")]}]
            }
        }
    }


def node_affinity_foo() -> dict:
    return {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [{"matchExpressions": [expr("foo", "In", "")]}]
            }
        }
    }


@dataclass
class SpreadCase:
    name: str
    incoming: dict
    existing: list[dict]
    candidates: list[str] | None  # None: unschedulable
    nodes: list[dict] = field(default_factory=lambda: DEFAULT_NODES)


SPREAD_FOO_NODE1 = spread(1, "node", HARD, exists("foo"))
SPREAD_FOO_ZONE1 = spread(1, "zone", HARD, exists("foo"))

POD_TOPOLOGY_SPREAD_FILTER = [
    SpreadCase(
        "place pod on a 1/1/0/1 cluster with MaxSkew=1, node-2 is the only fit",
        foo_pod("p", topologySpreadConstraints=[SPREAD_FOO_NODE1]),
        on("0", "1", "3"),
        ["node-2"],
    ),
    SpreadCase(
        "place pod on a 2/0/0/1 cluster with MaxSkew=2, node-{1,2,3} are good fits",
        foo_pod("p", topologySpreadConstraints=[spread(2, "node", HARD, exists("foo"))]),
        on("0a", "0b", "3"),
        ["node-1", "node-2", "node-3"],
    ),
    SpreadCase(
        "pod is required to be placed on zone0, so only node-1 fits",
        foo_pod("p", affinity=in_zone_0(), topologySpreadConstraints=[SPREAD_FOO_NODE1]),
        on("0", "3"),
        ["node-1"],
    ),
    SpreadCase(
        "two constraints: pod can only be placed to zone-1/node-2",
        foo_pod("p", topologySpreadConstraints=[SPREAD_FOO_ZONE1, SPREAD_FOO_NODE1]),
        on("0", "1", "3a", "3b"),
        ["node-2"],
    ),
    SpreadCase(
        "pod cannot be placed onto any node",
        foo_pod("p", affinity=not_node_0(), topologySpreadConstraints=[SPREAD_FOO_ZONE1, SPREAD_FOO_NODE1]),
        on("1a", "1b", "2a", "2b", "3"),
        None,
    ),
    SpreadCase(
        "high priority pod can preempt others",
        foo_pod("p", priority=100, affinity=not_node_0(), topologySpreadConstraints=[SPREAD_FOO_ZONE1, SPREAD_FOO_NODE1]),
        zero_grace(on("1a", "1b", "2a", "2b", "3")),
        ["node-1", "node-2", "node-3"],
    ),
    SpreadCase(
        "pods spread across nodes as 2/2/1, maxSkew is 2, and the number of domains < minDomains, then the third node fits",
        foo_pod("p", affinity=not_node_0(), topologySpreadConstraints=[spread(2, "node", HARD, exists("foo"), min_domains=4)]),
        zero_grace(on("1a", "1b", "2a", "2b", "3")),
        ["node-3"],
    ),
    SpreadCase(
        "pods spread across nodes as 2/2/1, maxSkew is 2, and the number of domains > minDomains, then the all nodes fit",
        foo_pod("p", affinity=not_node_0(), topologySpreadConstraints=[spread(2, "node", HARD, exists("foo"), min_domains=2)]),
        zero_grace(on("1a", "1b", "2a", "2b", "3")),
        ["node-1", "node-2", "node-3"],
    ),
    SpreadCase(
        "pods spread across zone as 2/1, maxSkew is 2 and the number of domains < minDomains, then the third and fourth nodes fit",
        foo_pod("p", topologySpreadConstraints=[spread(2, "zone", HARD, exists("foo"), min_domains=3)]),
        [foo_pod("p1a", "node-0"), foo_pod("p2a", "node-1"), foo_pod("p3a", "node-2")],
        ["node-2", "node-3"],
    ),
    SpreadCase(
        "pods spread across zone as 2/1, maxSkew is 2 and the number of domains < minDomains, then the all nodes fit",
        foo_pod("p", topologySpreadConstraints=[spread(2, "zone", HARD, exists("foo"), min_domains=1)]),
        [foo_pod("p1a", "node-1"), foo_pod("p2a", "node-2"), foo_pod("p3a", "node-3")],
        ["node-0", "node-1", "node-2", "node-3"],
    ),
    SpreadCase(
        "NodeAffinityPolicy honored with labelSelectors, pods spread across zone as 2/1",
        foo_pod("p", nodeSelector={"foo": ""}, topologySpreadConstraints=[SPREAD_FOO_ZONE1]),
        on("1a", "2a", "3a", "4a"),
        ["node-4"],
        INCLUSION_NODES,
    ),
    SpreadCase(
        "NodeAffinityPolicy ignored with nodeAffinity, pods spread across zone as 1/~2~",
        foo_pod(
            "p",
            affinity=node_affinity_foo(),
            topologySpreadConstraints=[spread(1, "zone", HARD, exists("foo"), node_affinity_policy="Ignore")],
        ),
        on("1a", "3a", "4a"),
        ["node-1", "node-2"],
        INCLUSION_NODES,
    ),
    SpreadCase(
        "NodeTaintsPolicy honored, pods spread across zone as 2/1",
        foo_pod("p", topologySpreadConstraints=[spread(1, "zone", HARD, exists("foo"), node_taints_policy="Honor")]),
        on("1a", "2a", "3a", "4a"),
        ["node-4"],
        TAINTED_3_NODES,
    ),
    SpreadCase(
        "NodeTaintsPolicy ignored, pods spread across zone as 2/2",
        foo_pod("p", topologySpreadConstraints=[SPREAD_FOO_ZONE1]),
        on("1a", "2a", "3a", "4a"),
        ["node-1", "node-2", "node-4"],
        TAINTED_3_NODES,
    ),
    SpreadCase(
        "two node inclusion Constraints, zone: honor/ignore, node: honor/ignore",
        foo_pod("p", nodeSelector={"foo": ""}, topologySpreadConstraints=[SPREAD_FOO_ZONE1, SPREAD_FOO_NODE1]),
        on("1a", "2a", "3a", "4a"),
        ["node-4"],
        TAINTED_2_NODES,
    ),
    SpreadCase(
        "feature gate disabled, two node inclusion Constraints, zone: honor/ignore, node: honor/ignore",
        foo_pod("p", nodeSelector={"foo": ""}, topologySpreadConstraints=[SPREAD_FOO_ZONE1, SPREAD_FOO_NODE1]),
        on("1a", "2a", "3a", "4a"),
        ["node-4"],
        TAINTED_2_NODES,
    ),
    SpreadCase(
        "two node inclusion Constraints, zone: ignore/ignore, node: honor/honor",
        foo_pod(
            "p",
            nodeSelector={"foo": ""},
            topologySpreadConstraints=[
                spread(1, "zone", HARD, exists("foo"), node_affinity_policy="Ignore"),
                spread(1, "node", HARD, exists("foo"), node_taints_policy="Honor"),
            ],
        ),
        on("1a", "2a", "3a", "4a"),
        ["node-1", "node-4"],
        TAINTED_2_NODES,
    ),
    SpreadCase(
        "matchLabelKeys ANDed with LabelSelector when LabelSelector isn't empty, pods spread across zone as 0/1",
        foo_pod("p", labels={"bar": ""}, topologySpreadConstraints=[spread(1, "zone", HARD, exists("foo"), match_label_keys=["bar"])]),
        [foo_pod("p1a", "node-0"), foo_pod("p2a", "node-1"), foo_pod("p3a", "node-2", {"bar": ""})],
        ["node-0", "node-1"],
    ),
    SpreadCase(
        "matchLabelKeys ANDed with LabelSelector when LabelSelector is empty, pods spread across zone as 2/1",
        foo_pod("p", topologySpreadConstraints=[spread(1, "zone", HARD, {}, match_label_keys=["foo"])]),
        [foo_pod("p1a", "node-0"), foo_pod("p2a", "node-1"), foo_pod("p3a", "node-2")],
        ["node-2", "node-3"],
    ),
]


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("case", POD_TOPOLOGY_SPREAD_FILTER, ids=[c.name for c in POD_TOPOLOGY_SPREAD_FILTER])
def test_pod_topology_spread_filter(case: SpreadCase, seed: int, tmp_path: Path) -> None:
    """TestPodTopologySpreadFilter: placed on one of the candidate nodes, or unschedulable."""
    result = schedule(tmp_path, [*case.nodes, *case.existing, case.incoming], seed=seed)
    if case.candidates is None:
        assert unschedulable_message(result, case.incoming).startswith(f"0/{len(case.nodes)} nodes are available: ")
    else:
        assert placed(result, case.incoming) in case.candidates

"""InterPodAffinity PreFilter/Filter: kube-scheduler's filtering_test.go tables, ported.

Upstream cases are kept in order with their names; where a case needed a change to run here it
says so (an empty topologyKey is rejected by our parser, so such cases use a key no node has,
which yields the same verdict). The invalid-label-syntax cases are a parse error here.
"""

from __future__ import annotations

import random
from typing import Any

import numpy as np
import pytest

from kubesched.api.objects import Node, Pod
from kubesched.errors import InputError
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.status import Code
from kubesched.plugins.interpodaffinity import InterPodAffinity
from kubesched.plugins.interpodaffinity.filtering import (
    ERR_REASON_AFFINITY,
    ERR_REASON_ANTI_AFFINITY,
    ERR_REASON_EXISTING_ANTI_AFFINITY,
    PreFilterState,
)
from kubesched.plugins.interpodaffinity.plugin import PRE_FILTER_STATE_KEY
from kubesched.testing import build_snapshot, make_node, make_pod, run_filter

OK = None
AFF = (Code.UnschedulableAndUnresolvable, (ERR_REASON_AFFINITY,))
ANTI = (Code.Unschedulable, (ERR_REASON_ANTI_AFFINITY,))
EXIST = (Code.Unschedulable, (ERR_REASON_EXISTING_ANTI_AFFINITY,))
SKIP = "skip"

NAMESPACES = [
    {"metadata": {"name": "subteam1.team1", "labels": {"team": "team1"}}},
    {"metadata": {"name": "subteam2.team1", "labels": {"team": "team1"}}},
    {"metadata": {"name": "subteam1.team2", "labels": {"team": "team2"}}},
    {"metadata": {"name": "subteam2.team2", "labels": {"team": "team2"}}},
]


# ---- builders (st.MakePod().PodAffinityIn(...) in dict form) --------------------------------------


def expr(key: str, op: str, values: list[str] | None = None) -> dict:
    e: dict[str, Any] = {"key": key, "operator": op}
    if values is not None:
        e["values"] = values
    return e


def term(
    *exprs: dict, topo: str, namespaces: list[str] | None = None, nss: dict | None = None, **extra: Any
) -> dict:
    t: dict[str, Any] = {"labelSelector": {"matchExpressions": list(exprs)}, "topologyKey": topo}
    if namespaces is not None:
        t["namespaces"] = namespaces
    if nss is not None:
        t["namespaceSelector"] = nss
    t.update(extra)
    return t


def In(key: str, values: list[str], topo: str, **kw: Any) -> dict:  # noqa: N802 - mirrors st.PodAffinityIn
    return term(expr(key, "In", values), topo=topo, **kw)


def NotIn(key: str, values: list[str], topo: str, **kw: Any) -> dict:  # noqa: N802
    return term(expr(key, "NotIn", values), topo=topo, **kw)


def Exists(key: str, topo: str, **kw: Any) -> dict:  # noqa: N802
    return term(expr(key, "Exists"), topo=topo, **kw)


_seq = iter(range(10**9))


def pod(
    *,
    labels: dict[str, str] | None = None,
    ns: str = "default",
    node: str | None = None,
    aff: list[dict] = (),  # type: ignore[assignment]
    anti: list[dict] = (),  # type: ignore[assignment]
    name: str | None = None,
) -> dict:
    affinity: dict[str, Any] = {}
    if aff:
        affinity["podAffinity"] = {"requiredDuringSchedulingIgnoredDuringExecution": list(aff)}
    if anti:
        affinity["podAntiAffinity"] = {"requiredDuringSchedulingIgnoredDuringExecution": list(anti)}
    n = name or f"p{next(_seq)}"
    return make_pod(
        n, namespace=ns, labels=labels, node=node, spec={"affinity": affinity} if affinity else None
    )


def node(name: str, **labels: str) -> dict:
    return make_node(name, labels=labels)


def verdicts(statuses: list) -> list:
    return [None if s.ok else (s.code, s.reasons) for s in statuses]


def run(incoming: dict, pods: list[dict], nodes: list[dict], args: dict | None = None) -> tuple[Any, list]:
    """(PreFilter verdict: None or SKIP, per-node Filter verdicts)."""
    snap = build_snapshot(nodes, pods, NAMESPACES)
    pl = InterPodAffinity(args)
    p = Pod.parse(incoming)
    state = CycleState()
    st = pl.pre_filter(state, p, snap)
    if st is not None and st.code == Code.Skip:
        return SKIP, [None] * snap.n
    assert st is None
    res = pl.filter(state, p, snap, np.arange(snap.n))
    return None, [
        None if res.code[i] == 0 else (Code(int(res.code[i])), res.status_at(i).reasons)
        for i in range(snap.n)
    ]


# ---- TestRequiredAffinitySingleNode ---------------------------------------------------------------

POD_LABEL = {"service": "securityscan"}
POD_LABEL2 = {"security": "S1"}
NODE1 = node("node1", region="r1", zone="z11")
EXISTING = pod(labels=POD_LABEL, node="node1")

SINGLE_NODE = [
    (
        "A pod that has no required pod affinity scheduling rules can schedule onto a node with no existing pods",
        pod(),
        [],
        SKIP,
        OK,
    ),
    (
        "satisfies with requiredDuringSchedulingIgnoredDuringExecution in PodAffinity using In operator that matches the existing pod",
        pod(labels=POD_LABEL2, aff=[In("service", ["securityscan", "value2"], "region")]),
        [EXISTING],
        None,
        OK,
    ),
    (
        "satisfies the pod with requiredDuringSchedulingIgnoredDuringExecution in PodAffinity using not in operator in labelSelector that matches the existing pod",
        pod(labels=POD_LABEL2, aff=[NotIn("service", ["securityscan3", "value3"], "region")]),
        [EXISTING],
        None,
        OK,
    ),
    (
        # upstream: no topologyKey; "region" gives the same verdict (the namespace decides).
        "Does not satisfy the PodAffinity with labelSelector because of diff Namespace",
        pod(
            labels=POD_LABEL2,
            aff=[In("service", ["securityscan", "value2"], "region", namespaces=["DiffNameSpace"])],
        ),
        [pod(ns="ns", labels={"service": "securityscan"}, node="node1")],
        None,
        AFF,
    ),
    (
        # upstream: topologyKey ""; any key gives the same verdict (the selector decides).
        "Doesn't satisfy the PodAffinity because of unmatching labelSelector with the existing pod",
        pod(labels=POD_LABEL, aff=[In("service", ["antivirusscan", "value2"], "region")]),
        [EXISTING],
        None,
        AFF,
    ),
    (
        "satisfies the PodAffinity with different label Operators in multiple RequiredDuringSchedulingIgnoredDuringExecution ",
        pod(
            labels=POD_LABEL2,
            aff=[
                term(expr("service", "Exists"), expr("wrongkey", "DoesNotExist"), topo="region"),
                term(
                    expr("service", "In", ["securityscan"]),
                    expr("service", "NotIn", ["WrongValue"]),
                    topo="region",
                ),
            ],
        ),
        [EXISTING],
        None,
        OK,
    ),
    (
        "The labelSelector requirements(items of matchExpressions) are ANDed, the pod cannot schedule onto the node because one of the matchExpression item don't match.",
        pod(
            labels=POD_LABEL2,
            aff=[
                term(expr("service", "Exists"), expr("wrongkey", "DoesNotExist"), topo="region"),
                term(
                    expr("service", "In", ["securityscan2"]),
                    expr("service", "NotIn", ["WrongValue"]),
                    topo="region",
                ),
            ],
        ),
        [EXISTING],
        None,
        AFF,
    ),
    (
        "satisfies the PodAffinity and PodAntiAffinity with the existing pod",
        pod(
            labels=POD_LABEL2,
            aff=[In("service", ["securityscan", "value2"], "region")],
            anti=[In("service", ["antivirusscan", "value2"], "node")],
        ),
        [EXISTING],
        None,
        OK,
    ),
    (
        "satisfies the PodAffinity and PodAntiAffinity and PodAntiAffinity symmetry with the existing pod",
        pod(
            labels=POD_LABEL2,
            aff=[In("service", ["securityscan", "value2"], "region")],
            anti=[In("service", ["antivirusscan", "value2"], "node")],
        ),
        [pod(labels=POD_LABEL, node="node1", anti=[In("service", ["antivirusscan", "value2"], "node")])],
        None,
        OK,
    ),
    (
        "satisfies the PodAffinity but doesn't satisfy the PodAntiAffinity with the existing pod",
        pod(
            labels=POD_LABEL2,
            aff=[In("service", ["securityscan", "value2"], "region")],
            anti=[In("service", ["securityscan", "value2"], "zone")],
        ),
        [EXISTING],
        None,
        ANTI,
    ),
    (
        "satisfies the PodAffinity and PodAntiAffinity but doesn't satisfy PodAntiAffinity symmetry with the existing pod",
        pod(
            labels=POD_LABEL,
            aff=[In("service", ["securityscan", "value2"], "region")],
            anti=[In("service", ["antivirusscan", "value2"], "node")],
        ),
        [pod(labels=POD_LABEL, node="node1", anti=[In("service", ["securityscan", "value2"], "zone")])],
        None,
        EXIST,
    ),
    (
        "pod matches its own Label in PodAffinity and that matches the existing pod Labels",
        pod(labels=POD_LABEL, aff=[NotIn("service", ["securityscan", "value2"], "region")]),
        [pod(labels={"service": "securityscan"}, node="node2")],
        None,
        AFF,
    ),
    (
        "verify that PodAntiAffinity from existing pod is respected when pod has no AntiAffinity constraints. doesn't satisfy PodAntiAffinity symmetry with the existing pod",
        pod(labels=POD_LABEL),
        [pod(labels=POD_LABEL, node="node1", anti=[In("service", ["securityscan", "value2"], "zone")])],
        None,
        EXIST,
    ),
    (
        "verify that PodAntiAffinity from existing pod is respected when pod has no AntiAffinity constraints. satisfy PodAntiAffinity symmetry with the existing pod",
        pod(labels=POD_LABEL),
        [pod(labels=POD_LABEL, node="node1", anti=[NotIn("service", ["securityscan", "value2"], "zone")])],
        SKIP,
        OK,
    ),
    (
        "satisfies the PodAntiAffinity with existing pod but doesn't satisfy PodAntiAffinity symmetry with incoming pod",
        pod(labels=POD_LABEL, anti=[Exists("service", "region"), Exists("security", "region")]),
        [pod(labels=POD_LABEL2, node="node1", anti=[Exists("security", "zone")])],
        None,
        ANTI,
    ),
    (
        "PodAntiAffinity symmetry check a1: incoming pod and existing pod partially match each other on AffinityTerms",
        pod(labels=POD_LABEL, anti=[Exists("service", "zone"), Exists("security", "zone")]),
        [pod(labels=POD_LABEL2, node="node1", anti=[Exists("security", "zone")])],
        None,
        ANTI,
    ),
    (
        "PodAntiAffinity symmetry check a2: incoming pod and existing pod partially match each other on AffinityTerms",
        pod(labels=POD_LABEL2, anti=[Exists("security", "zone")]),
        [pod(labels=POD_LABEL, node="node1", anti=[Exists("service", "zone"), Exists("security", "zone")])],
        None,
        EXIST,
    ),
    (
        "PodAntiAffinity symmetry check b1: incoming pod and existing pod partially match each other on AffinityTerms",
        pod(labels={"abc": "", "xyz": ""}, anti=[Exists("abc", "zone"), Exists("def", "zone")]),
        [
            pod(
                labels={"def": "", "xyz": ""},
                node="node1",
                anti=[Exists("abc", "zone"), Exists("def", "zone")],
            )
        ],
        None,
        ANTI,
    ),
    (
        "PodAntiAffinity symmetry check b2: incoming pod and existing pod partially match each other on AffinityTerms",
        pod(labels={"def": "", "xyz": ""}, anti=[Exists("abc", "zone"), Exists("def", "zone")]),
        [
            pod(
                labels={"abc": "", "xyz": ""},
                node="node1",
                anti=[Exists("abc", "zone"), Exists("def", "zone")],
            )
        ],
        None,
        ANTI,
    ),
    (
        "affinity with NamespaceSelector",
        pod(
            labels=POD_LABEL2,
            aff=[
                In(
                    "service",
                    ["securityscan", "value2"],
                    "region",
                    nss={"matchExpressions": [expr("team", "In", ["team1"])]},
                )
            ],
        ),
        [pod(ns="subteam1.team1", labels=POD_LABEL, node="node1")],
        None,
        OK,
    ),
    (
        "affinity with non-matching NamespaceSelector",
        pod(
            labels=POD_LABEL2,
            aff=[
                In(
                    "service",
                    ["securityscan", "value2"],
                    "region",
                    nss={"matchExpressions": [expr("team", "In", ["team1"])]},
                )
            ],
        ),
        [pod(ns="subteam1.team2", labels=POD_LABEL, node="node1")],
        None,
        AFF,
    ),
    (
        "anti-affinity with matching NamespaceSelector",
        pod(
            ns="subteam1.team1",
            labels=POD_LABEL2,
            anti=[
                In(
                    "service",
                    ["securityscan", "value2"],
                    "zone",
                    nss={"matchExpressions": [expr("team", "In", ["team1"])]},
                )
            ],
        ),
        [pod(ns="subteam2.team1", labels=POD_LABEL, node="node1")],
        None,
        ANTI,
    ),
    (
        "anti-affinity with matching all NamespaceSelector",
        pod(
            ns="subteam1.team1",
            labels=POD_LABEL2,
            anti=[In("service", ["securityscan", "value2"], "zone", nss={})],
        ),
        [pod(ns="subteam2.team1", labels=POD_LABEL, node="node1")],
        None,
        ANTI,
    ),
    (
        "anti-affinity with non-matching NamespaceSelector",
        pod(
            ns="subteam1.team1",
            labels=POD_LABEL2,
            anti=[
                In(
                    "service",
                    ["securityscan", "value2"],
                    "zone",
                    nss={"matchExpressions": [expr("team", "In", ["team1"])]},
                )
            ],
        ),
        [pod(ns="subteam1.team2", labels=POD_LABEL, node="node1")],
        None,
        OK,
    ),
]


@pytest.mark.parametrize(
    ("name", "incoming", "pods", "want_pre", "want"), SINGLE_NODE, ids=[c[0][:90] for c in SINGLE_NODE]
)
def test_required_affinity_single_node(
    name: str, incoming: dict, pods: list, want_pre: Any, want: Any
) -> None:
    pre, got = run(incoming, pods, [NODE1])
    assert pre == want_pre
    assert got == [want]


@pytest.mark.parametrize(
    "incoming",
    [
        pod(
            labels=POD_LABEL,
            aff=[In("service", ["{{.bad-value.}}"], "region"), In("service", ["antivirusscan"], "node")],
        ),
        pod(
            labels=POD_LABEL,
            aff=[In("service", ["foo"], "region"), In("service", ["{{.bad-value.}}"], "node")],
        ),
    ],
    ids=["invalid affinity label syntax", "invalid anti-affinity label syntax"],
)
def test_invalid_label_syntax_is_rejected_at_parse(incoming: dict) -> None:
    """Upstream fails PreFilter (UnschedulableAndUnresolvable, parsing pod); we reject the manifest."""
    with pytest.raises(InputError):
        Pod.parse(incoming)


# ---- TestRequiredAffinityMultipleNodes ------------------------------------------------------------

RG_CHINA = {"region": "China"}
RG_CHINA_AZ1 = {"region": "China", "az": "az1"}
RG_INDIA = {"region": "India"}


def nodes3(a: str = "node1", b: str = "node2", c: str = "node3") -> list[dict]:
    return [node(a, **RG_CHINA), node(b, **RG_CHINA_AZ1), node(c, **RG_INDIA)]


def ab(zone_b: str = "z2", zone_a: str = "z1") -> list[dict]:
    return [
        node("nodeA", region="r1", zone=zone_a, hostname="nodeA"),
        node("nodeB", region="r1", zone=zone_b, hostname="nodeB"),
    ]


MULTI_NODE = [
    (
        "A pod can be scheduled onto all the nodes that have the same topology key & label value with one of them has an existing pod that matches the affinity rules",
        pod(aff=[In("foo", ["bar"], "region")]),
        [pod(name="p1", node="node1", labels={"foo": "bar"})],
        nodes3(),
        None,
        [OK, OK, AFF],
    ),
    (
        "The affinity rule is to schedule all of the pods of this collection to the same zone. The first pod of the collection should not be blocked from being scheduled onto any node, even there's no existing pod that matches the rule anywhere.",
        pod(
            labels={"foo": "bar", "service": "securityscan"},
            aff=[In("foo", ["bar"], "zone"), In("service", ["securityscan"], "zone")],
        ),
        [pod(name="p1", node="nodeA", labels={"foo": "bar"})],
        [node("nodeA", zone="az1", hostname="h1"), node("nodeB", zone="az2", hostname="h2")],
        None,
        [OK, OK],
    ),
    (
        "The first pod of the collection can only be scheduled on nodes labelled with the requested topology keys",
        pod(
            labels={"foo": "bar", "service": "securityscan"},
            aff=[In("foo", ["bar"], "zone"), In("service", ["securityscan"], "zone")],
        ),
        [pod(name="p1", node="nodeA", labels={"foo": "bar"})],
        [node("nodeA", zoneLabel="az1", hostname="h1"), node("nodeB", zoneLabel="az2", hostname="h2")],
        None,
        [AFF, AFF],
    ),
    (
        "NodeA and nodeB have same topologyKey and label value. NodeA has an existing pod that matches the inter pod affinity rule. The pod can not be scheduled onto nodeA and nodeB.",
        pod(anti=[In("foo", ["abc"], "region")]),
        [pod(node="nodeA", labels={"foo": "abc"})],
        [node("nodeA", region="r1", hostname="nodeA"), node("nodeB", region="r1", hostname="nodeB")],
        None,
        [ANTI, ANTI],
    ),
    (
        "This test ensures that anti-affinity matches a pod when any term of the anti-affinity rule matches a pod.",
        pod(anti=[In("foo", ["abc"], "region"), In("service", ["securityscan"], "zone")]),
        [pod(node="nodeA", labels={"foo": "abc", "service": "securityscan"})],
        ab(),
        None,
        [ANTI, ANTI],
    ),
    (
        "NodeA and nodeB have same topologyKey and label value. NodeA has an existing pod that matches the inter pod affinity rule. The pod can not be scheduled onto nodeA and nodeB but can be scheduled onto nodeC",
        pod(anti=[In("foo", ["abc"], "region")]),
        [pod(node="nodeA", labels={"foo": "abc"})],
        nodes3("nodeA", "nodeB", "nodeC"),
        None,
        [ANTI, ANTI, OK],
    ),
    (
        "NodeA and nodeB have same topologyKey and label value. NodeA has an existing pod that matches the inter pod affinity rule. The pod can not be scheduled onto nodeA, nodeB, but can be scheduled onto nodeC (NodeC has an existing pod that match the inter pod affinity rule but in different namespace)",
        pod(ns="NS1", labels={"foo": "123"}, anti=[In("foo", ["bar"], "region")]),
        [
            pod(node="nodeA", ns="NS1", labels={"foo": "bar"}),
            pod(node="nodeC", ns="NS2", anti=[In("foo", ["123"], "region")]),
        ],
        nodes3("nodeA", "nodeB", "nodeC"),
        None,
        [ANTI, ANTI, OK],
    ),
    (
        "Test existing pod's anti-affinity: if an existing pod has a term with invalid topologyKey, labelSelector of the term is firstly checked, and then topologyKey of the term is also checked",
        pod(labels={"foo": ""}),
        [pod(node="nodeA", anti=[Exists("foo", "invalid-node-label")])],
        ab(zone_b="z1"),
        SKIP,
        [OK, OK],
    ),
    (
        "Test incoming pod's anti-affinity: even if labelSelector matches, we still check if topologyKey matches",
        pod(anti=[Exists("foo", "invalid-node-label")]),
        [pod(node="nodeA", labels={"foo": ""})],
        ab(zone_b="z1"),
        None,
        [OK, OK],
    ),
    (
        "Test existing pod's anti-affinity: incoming pod wouldn't considered as a fit as it violates each existingPod's terms on all nodes",
        pod(labels={"foo": "", "bar": ""}),
        [pod(node="nodeA", anti=[Exists("foo", "zone")]), pod(node="nodeA", anti=[Exists("bar", "region")])],
        ab(),
        None,
        [EXIST, EXIST],
    ),
    (
        "Test incoming pod's anti-affinity: incoming pod wouldn't considered as a fit as it at least violates one anti-affinity rule of existingPod",
        pod(anti=[Exists("foo", "zone"), Exists("bar", "region")]),
        [pod(node="nodeA", labels={"foo": ""}), pod(node="nodeB", labels={"bar": ""})],
        ab(),
        None,
        [ANTI, ANTI],
    ),
    (
        "Test existing pod's anti-affinity: only when labelSelector and topologyKey both match, it's counted as a single term match - case when one term has invalid topologyKey",
        pod(labels={"foo": "", "bar": ""}),
        [pod(node="nodeA", anti=[Exists("foo", "invalid-node-label"), Exists("bar", "zone")])],
        ab(),
        None,
        [EXIST, OK],
    ),
    (
        "Test incoming pod's anti-affinity: only when labelSelector and topologyKey both match, it's counted as a single term match - case when one term has invalid topologyKey",
        pod(anti=[Exists("foo", "invalid-node-label"), Exists("bar", "zone")]),
        [pod(name="podA", node="nodeA", labels={"foo": "", "bar": ""})],
        ab(),
        None,
        [ANTI, OK],
    ),
    (
        "Test existing pod's anti-affinity: only when labelSelector and topologyKey both match, it's counted as a single term match - case when all terms have valid topologyKey",
        pod(labels={"foo": "", "bar": ""}),
        [pod(node="nodeA", anti=[Exists("foo", "region"), Exists("bar", "zone")])],
        ab(),
        None,
        [EXIST, EXIST],
    ),
    (
        "Test incoming pod's anti-affinity: only when labelSelector and topologyKey both match, it's counted as a single term match - case when all terms have valid topologyKey",
        pod(anti=[Exists("foo", "region"), Exists("bar", "zone")]),
        [pod(node="nodeA", labels={"foo": "", "bar": ""})],
        ab(),
        None,
        [ANTI, ANTI],
    ),
    (
        "Test existing pod's anti-affinity: existingPod on nodeA and nodeB has at least one anti-affinity term matches incoming pod, so incoming pod can only be scheduled to nodeC",
        pod(labels={"foo": "", "bar": ""}),
        [
            pod(node="nodeA", anti=[Exists("foo", "zone"), Exists("labelA", "zone")]),
            pod(node="nodeB", anti=[Exists("bar", "zone"), Exists("labelB", "zone")]),
        ],
        ab() + [node("nodeC", region="r1", zone="z3", hostname="nodeC")],
        None,
        [EXIST, EXIST, OK],
    ),
    (
        "Test incoming pod's affinity: firstly check if all affinityTerms match, and then check if all topologyKeys match",
        pod(aff=[Exists("foo", "region"), Exists("bar", "zone")]),
        [pod(name="pod1", labels={"foo": "", "bar": ""}, node="nodeA")],
        ab(zone_b="z1"),
        None,
        [OK, OK],
    ),
    (
        "Test incoming pod's affinity: firstly check if all affinityTerms match, and then check if all topologyKeys match, and the match logic should be satisfied on the same pod",
        pod(aff=[Exists("foo", "region"), Exists("bar", "zone")]),
        [
            pod(name="pod1", node="nodeA", labels={"foo": ""}),
            pod(name="pod2", node="nodeB", labels={"bar": ""}),
        ],
        ab(),
        None,
        [AFF, AFF],
    ),
]


@pytest.mark.parametrize(
    ("name", "incoming", "pods", "nodes", "want_pre", "want"), MULTI_NODE, ids=[c[0][:90] for c in MULTI_NODE]
)
def test_required_affinity_multiple_nodes(
    name: str, incoming: dict, pods: list, nodes: list, want_pre: Any, want: list
) -> None:
    pre, got = run(incoming, pods, nodes)
    assert pre == want_pre
    assert got == want


def test_filter_without_prefilter_is_an_error() -> None:
    """TestPreFilterDisabled: Filter with no PreFilter state is an Error, as upstream."""
    snap = build_snapshot([NODE1])
    res = InterPodAffinity().filter(CycleState(), Pod.parse(pod()), snap, np.arange(1))
    st = res.status_at(0)
    assert st.code == Code.Error
    assert st.reasons == ('error reading "PreFilterInterPodAffinity" from cycleState: not found',)


def test_filter_over_a_subset_of_rows() -> None:
    snap = build_snapshot(nodes3("nodeA", "nodeB", "nodeC"), [pod(node="nodeA", labels={"foo": "abc"})])
    pl = InterPodAffinity()
    p = Pod.parse(pod(anti=[In("foo", ["abc"], "region")]))
    state = CycleState()
    assert pl.pre_filter(state, p, snap) is None
    rows = np.array([2, 0])
    res = pl.filter(state, p, snap, rows)
    assert [int(c) for c in res.code] == [0, int(Code.Unschedulable)]


def test_run_filter_helper_reports_plugin_name() -> None:
    snap = build_snapshot(nodes3(), [pod(node="node1", labels={"foo": "bar"})])
    statuses = run_filter(InterPodAffinity(), pod(aff=[In("foo", ["bar"], "region")]), snap)
    assert [s.ok for s in statuses] == [True, True, False]
    assert statuses[2].plugin == "InterPodAffinity"
    assert statuses[2].reasons == (ERR_REASON_AFFINITY,)


# ---- TestPreFilterStateAddRemovePod -------------------------------------------------------------

SEL1 = {"foo": "bar"}
ANTI_FOO_BAR = [In("foo", ["bar"], "region")]
COMPLEX = [In("foo", ["bar", "buzz"], "region"), NotIn("service", ["bar", "security", "test"], "zone")]
NODES_ABC = [
    node("nodeA", region="r1", zone="z11"),
    node("nodeB", region="r1", zone="z12"),
    node("nodeC", region="r2", zone="z21"),
]


def pairs(counts: dict[str, np.ndarray], snap: Any) -> dict[tuple[str, str], int]:
    """topologyToMatchedTermCount view of a counts dict: nonzero (key, value) -> count."""
    out = {}
    for key, arr in counts.items():
        values = snap.labels.values_of(key)
        for code, c in enumerate(arr.tolist()):
            if c:
                out[(key, values[code])] = c
    return out


def state_view(s: PreFilterState, snap: Any) -> tuple:
    return (
        pairs(s.existing_anti_affinity_counts, snap),
        pairs(s.affinity_counts, snap),
        pairs(s.anti_affinity_counts, snap),
    )


ADD_REMOVE = [
    (
        "preFilterState anti-affinity terms are updated correctly after adding and removing a pod",
        pod(name="pending", labels=SEL1, anti=ANTI_FOO_BAR),
        [pod(name="p1", labels=SEL1, node="nodeA"), pod(name="p2", node="nodeC", anti=ANTI_FOO_BAR)],
        pod(name="addedPod", labels=SEL1, node="nodeB", anti=ANTI_FOO_BAR),
        {("region", "r1"): 2},
        {},
    ),
    (
        "preFilterState anti-affinity terms are updated correctly after adding and removing a pod (complex)",
        pod(name="pending", labels=SEL1, anti=COMPLEX),
        [pod(name="p1", labels=SEL1, node="nodeA"), pod(name="p2", node="nodeC", anti=ANTI_FOO_BAR)],
        pod(name="addedPod", labels=SEL1, node="nodeA", anti=COMPLEX),
        {("region", "r1"): 2, ("zone", "z11"): 2, ("zone", "z21"): 1},
        {},
    ),
    (
        "preFilterState matching pod affinity and anti-affinity are updated correctly after adding and removing a pod",
        pod(name="pending", labels=SEL1, aff=COMPLEX),
        [
            pod(name="p1", labels=SEL1, node="nodeA"),
            pod(name="p2", node="nodeC", anti=ANTI_FOO_BAR, aff=COMPLEX),
        ],
        pod(name="addedPod", labels=SEL1, node="nodeA", anti=COMPLEX),
        {},
        {("region", "r1"): 2, ("zone", "z11"): 2},
    ),
]


@pytest.mark.parametrize(
    ("name", "pending", "existing", "added", "want_anti", "want_aff"),
    ADD_REMOVE,
    ids=[c[0] for c in ADD_REMOVE],
)
def test_prefilter_state_add_remove_pod(
    name: str, pending: dict, existing: list, added: dict, want_anti: dict, want_aff: dict
) -> None:
    pl = InterPodAffinity()
    p = Pod.parse(pending)

    def prefilter(pods: list) -> tuple[Any, CycleState, PreFilterState]:
        snap = build_snapshot(NODES_ABC, pods)
        state = CycleState()
        assert pl.pre_filter(state, p, snap) is None
        return snap, state, state.read(PRE_FILTER_STATE_KEY)

    all_snap, _, all_state = prefilter([*existing, added])
    snap, state, s = prefilter(existing)
    original = state_view(s.clone(), snap)
    cloned = state.clone()

    added_pod = Pod.parse(added)
    pl.add_pod(state, p, added_pod, snap.row_of[added_pod.node_name], snap)
    s = state.read(PRE_FILTER_STATE_KEY)
    assert pairs(s.anti_affinity_counts, snap) == want_anti
    assert pairs(s.affinity_counts, snap) == want_aff
    assert state_view(s, snap) == state_view(all_state, all_snap)
    # The clone taken before AddPod is unaffected.
    assert state_view(cloned.read(PRE_FILTER_STATE_KEY), snap) == original

    pl.remove_pod(state, p, added_pod, snap.row_of[added_pod.node_name], snap)
    assert state_view(state.read(PRE_FILTER_STATE_KEY), snap) == original


# ---- TestGetTPMapMatchingIncomingAffinityAntiAffinity ---------------------------------------------


def normal(*labels: str) -> dict:
    return pod(name="normal", node="nodeA", labels=dict.fromkeys(labels, ""))


INCOMING_COUNTS = [
    ("nil test", [], pod(name="aaa-normal"), {}, {}),
    (
        "incoming pod without affinity/anti-affinity causes a no-op",
        [normal("aaa")],
        pod(name="aaa-normal"),
        {},
        {},
    ),
    (
        "no pod has label that violates incoming pod's affinity and anti-affinity",
        [normal("bbb")],
        pod(aff=[Exists("aaa", "hostname")], anti=[Exists("aaa", "hostname")]),
        {},
        {},
    ),
    (
        "existing pod matches incoming pod's affinity and anti-affinity - single term case",
        [normal("aaa")],
        pod(aff=[Exists("aaa", "hostname")], anti=[Exists("aaa", "hostname")]),
        {("hostname", "nodeA"): 1},
        {("hostname", "nodeA"): 1},
    ),
    (
        "existing pod matches incoming pod's affinity and anti-affinity - multiple terms case",
        [normal("aaa", "bbb")],
        pod(aff=[Exists("aaa", "hostname"), Exists("bbb", "hostname")], anti=[Exists("aaa", "hostname")]),
        {("hostname", "nodeA"): 2},  # one for each term
        {("hostname", "nodeA"): 1},
    ),
    (
        "existing pod not match incoming pod's affinity but matches anti-affinity",
        [normal("aaa")],
        pod(
            aff=[Exists("aaa", "hostname"), Exists("bbb", "hostname")],
            anti=[Exists("aaa", "hostname"), Exists("bbb", "hostname")],
        ),
        {},
        {("hostname", "nodeA"): 1},
    ),
    (
        "incoming pod's anti-affinity has more than one term - existing pod violates partial term - case 1",
        [normal("aaa", "bbb")],
        pod(
            aff=[Exists("aaa", "hostname"), Exists("ccc", "hostname")],
            anti=[Exists("aaa", "hostname"), Exists("ccc", "hostname")],
        ),
        {},
        {("hostname", "nodeA"): 1},
    ),
    (
        "incoming pod's anti-affinity has more than one term - existing pod violates partial term - case 2",
        [normal("bbb")],
        pod(
            aff=[Exists("aaa", "hostname"), Exists("bbb", "hostname")],
            anti=[Exists("aaa", "hostname"), Exists("bbb", "hostname")],
        ),
        {},
        {("hostname", "nodeA"): 1},
    ),
]


@pytest.mark.parametrize(
    ("name", "existing", "incoming", "want_aff", "want_anti"),
    INCOMING_COUNTS,
    ids=[c[0] for c in INCOMING_COUNTS],
)
def test_incoming_affinity_anti_affinity_counts(
    name: str, existing: list, incoming: dict, want_aff: dict, want_anti: dict
) -> None:
    from kubesched.plugins.interpodaffinity.filtering import ANTI_AFFINITY_TAG, build_state
    from kubesched.plugins.interpodaffinity.terms import ExistingTermIndex

    snap = build_snapshot([node("nodeA", hostname="nodeA")], existing)
    s = build_state(Pod.parse(incoming), snap, ExistingTermIndex(lambda p: [], [ANTI_AFFINITY_TAG]))
    assert pairs(s.affinity_counts, snap) == want_aff
    assert pairs(s.anti_affinity_counts, snap) == want_anti


# ---- beyond the upstream tables ------------------------------------------------------------------


def test_match_label_keys_are_merged_into_the_selector() -> None:
    """matchLabelKeys (merged at parse time) keeps affinity within the pod's own revision."""
    mk = In("app", ["web"], "region", matchLabelKeys=["rev"])
    incoming = pod(labels={"app": "web", "rev": "2"}, aff=[mk])
    existing = [
        pod(node="node1", labels={"app": "web", "rev": "1"}),
        pod(node="node3", labels={"app": "web", "rev": "2"}),
    ]
    assert run(incoming, existing, nodes3()) == (None, [AFF, AFF, OK])


def test_mismatch_label_keys_exclude_the_pods_own_group() -> None:
    """mismatchLabelKeys: anti-affinity to every other tenant, not to the pod's own."""
    mmk = Exists("app", "region", mismatchLabelKeys=["tenant"])
    incoming = pod(labels={"app": "x", "tenant": "a"}, anti=[mmk])
    existing = [
        pod(node="node1", labels={"app": "x", "tenant": "a"}),
        pod(node="node3", labels={"app": "x", "tenant": "b"}),
    ]
    assert run(incoming, existing, nodes3()) == (None, [OK, OK, ANTI])


def test_existing_term_namespace_selector_reads_incoming_namespace_labels() -> None:
    """An existing pod's namespaceSelector is matched against the incoming pod's namespace labels."""
    existing = [
        pod(
            node="node1",
            ns="other",
            anti=[Exists("app", "region", nss={"matchLabels": {"team": "team1"}})],
        )
    ]
    assert run(pod(ns="subteam1.team1", labels={"app": "a"}), existing, nodes3())[1] == [EXIST, EXIST, OK]
    assert run(pod(ns="subteam1.team2", labels={"app": "a"}), existing, nodes3())[0] == SKIP


def test_terminating_pods_still_count() -> None:
    """Upstream counts every pod in the NodeInfo, terminating or not."""
    dying = pod(node="node1", labels={"foo": "abc"})
    dying["metadata"]["deletionTimestamp"] = "2024-01-01T00:00:00Z"
    assert run(pod(anti=[In("foo", ["abc"], "region")]), [dying], nodes3())[1] == [ANTI, ANTI, OK]


def test_first_pod_rule_needs_no_match_anywhere() -> None:
    """Self-affinity passes only while no pod in the cluster matches all the terms."""
    incoming = pod(labels={"app": "db"}, aff=[In("app", ["db"], "zone")])
    nodes = [node("n1", zone="a"), node("n2", zone="b"), node("n3")]
    assert run(incoming, [], nodes)[1] == [OK, OK, AFF]
    assert run(incoming, [pod(node="n1", labels={"app": "db"})], nodes)[1] == [OK, AFF, AFF]


# ---- randomized comparison with a direct port of the Go code --------------------------------------


def _go_term_matches(
    t: Any, term_ns: frozenset | None, nss: Any, target: Pod, ns_labels: dict | None
) -> bool:
    if t.selector is None:
        return False
    in_ns = (term_ns is None or target.namespace in term_ns) or (
        nss is not None and nss.matches(ns_labels or {})
    )
    return in_ns and t.selector.matches(target.labels)


def oracle_filter(p: Pod, snap: Any) -> tuple[Any, list]:
    """PreFilter + Filter written as upstream: maps of topology pairs, loops over nodes and pods."""
    nodes = snap.nodes
    pods_on = {n.name: list(snap.pods_on[i].values()) for i, n in enumerate(nodes)}

    def merged(t: Any) -> frozenset | None:
        if t.namespace_selector is not None and t.namespace_selector.is_empty:
            return None
        ns = set(t.resolved_namespaces(p.namespace))
        if t.namespace_selector is not None:
            ns |= {n for n in snap.namespaces_matching(t.namespace_selector)}
        return frozenset(ns)

    aff = list(p.pod_affinity.required) if p.pod_affinity else []
    anti = list(p.pod_anti_affinity.required) if p.pod_anti_affinity else []
    aff_ns = [merged(t) for t in aff]
    anti_ns = [merged(t) for t in anti]
    ns_labels = snap.namespaces.get(p.namespace)
    existing: dict = {}
    affc: dict = {}
    antic: dict = {}
    for n in nodes:
        for e in pods_on[n.name]:
            for t in e.pod_anti_affinity.required if e.pod_anti_affinity else ():
                if _go_term_matches(
                    t, t.resolved_namespaces(e.namespace), t.namespace_selector, p, ns_labels
                ):
                    if t.topology_key in n.labels:
                        k = (t.topology_key, n.labels[t.topology_key])
                        existing[k] = existing.get(k, 0) + 1
            if aff and all(_go_term_matches(t, ns, None, e, None) for t, ns in zip(aff, aff_ns, strict=True)):
                for t in aff:
                    if t.topology_key in n.labels:
                        k = (t.topology_key, n.labels[t.topology_key])
                        affc[k] = affc.get(k, 0) + 1
            for t, ns in zip(anti, anti_ns, strict=True):
                if _go_term_matches(t, ns, None, e, None) and t.topology_key in n.labels:
                    k = (t.topology_key, n.labels[t.topology_key])
                    antic[k] = antic.get(k, 0) + 1
    if not existing and not aff and not anti:
        return SKIP, [None] * len(nodes)
    self_match = bool(aff) and all(
        _go_term_matches(t, ns, None, p, None) for t, ns in zip(aff, aff_ns, strict=True)
    )
    out = []
    for n in nodes:
        ok_aff = True
        exist = True
        for t in aff:
            if t.topology_key not in n.labels:
                ok_aff = False
                break
            if affc.get((t.topology_key, n.labels[t.topology_key]), 0) <= 0:
                exist = False
        if ok_aff and not exist:
            ok_aff = not affc and self_match
        if not ok_aff:
            out.append(AFF)
            continue
        if antic and any(
            t.topology_key in n.labels and antic.get((t.topology_key, n.labels[t.topology_key]), 0) > 0
            for t in anti
        ):
            out.append(ANTI)
            continue
        if existing and any(existing.get((k, v), 0) > 0 for k, v in n.labels.items()):
            out.append(EXIST)
            continue
        out.append(None)
    return None, out


def random_term(rng: random.Random) -> dict:
    key = rng.choice(["app", "tier", "team"])
    op = rng.choice(["In", "NotIn", "Exists", "DoesNotExist"])
    values = rng.sample(["a", "b", "c"], rng.randint(1, 2)) if op in ("In", "NotIn") else None
    kw: dict[str, Any] = {}
    r = rng.random()
    if r < 0.15:
        kw["namespaces"] = rng.sample(["ns1", "ns2", "ns3"], rng.randint(1, 2))
    elif r < 0.3:
        kw["nss"] = rng.choice(
            [{}, {"matchLabels": {"env": "prod"}}, {"matchExpressions": [expr("env", "DoesNotExist")]}]
        )
    return term(
        expr(key, op, values), topo=rng.choice(["zone", "region", "kubernetes.io/hostname", "rack"]), **kw
    )


def random_labels(rng: random.Random) -> dict[str, str]:
    return {k: rng.choice(["a", "b", "c"]) for k in ("app", "tier", "team") if rng.random() < 0.6}


def random_cluster(rng: random.Random) -> tuple[list, list]:
    nodes = []
    for i in range(rng.randint(1, 8)):
        labels = {}
        if rng.random() < 0.85:
            labels["zone"] = rng.choice(["z1", "z2", "z3"])
        if rng.random() < 0.7:
            labels["region"] = rng.choice(["r1", "r2"])
        if rng.random() < 0.3:
            labels["rack"] = rng.choice(["k1", "k2"])
        nodes.append(node(f"n{i}", **labels))
    pods = []
    for _ in range(rng.randint(0, 12)):
        pods.append(
            pod(
                node=f"n{rng.randrange(len(nodes))}",
                ns=rng.choice(["ns1", "ns2", "ns3"]),
                labels=random_labels(rng),
                aff=[random_term(rng) for _ in range(rng.choice([0, 0, 1]))],
                anti=[random_term(rng) for _ in range(rng.choice([0, 0, 1, 2]))],
            )
        )
    return nodes, pods


@pytest.mark.parametrize("seed", range(300))
def test_matches_direct_port_of_upstream(seed: int) -> None:
    rng = random.Random(seed)
    nodes, pods = random_cluster(rng)
    nss = [{"metadata": {"name": "ns1", "labels": {"env": "prod"}}}, {"metadata": {"name": "ns2"}}]
    snap = build_snapshot(nodes, pods, nss)
    incoming = Pod.parse(
        pod(
            ns=rng.choice(["ns1", "ns2", "ns3"]),
            labels=random_labels(rng),
            aff=[random_term(rng) for _ in range(rng.choice([0, 1, 2]))],
            anti=[random_term(rng) for _ in range(rng.choice([0, 1, 2]))],
        )
    )
    pl = InterPodAffinity()
    state = CycleState()
    st = pl.pre_filter(state, incoming, snap)
    want_pre, want = oracle_filter(incoming, snap)
    if want_pre == SKIP:
        assert st is not None and st.code == Code.Skip
        return
    assert st is None
    res = pl.filter(state, incoming, snap, np.arange(snap.n))
    got = [
        None if res.code[i] == 0 else (Code(int(res.code[i])), res.status_at(i).reasons)
        for i in range(snap.n)
    ]
    assert got == want


def test_term_index_follows_snapshot_changes() -> None:
    """The cached grouping of existing terms tracks pods added, removed, replaced and nodes removed."""
    from kubesched.plugins.interpodaffinity.plugin import PRE_SCORE_STATE_KEY

    rng = random.Random(7)
    nodes, pods = random_cluster(random.Random(3))
    for _ in range(30):
        pods.extend(random_cluster(rng)[1])
    pods = [p for p in pods if int(p["spec"]["nodeName"][1:]) < len(nodes)]
    snap = build_snapshot(nodes, [])
    pl = InterPodAffinity()  # keeps its index across calls
    for step in range(120):
        r = rng.random()
        if pods and r < 0.6:
            snap.add_pod(Pod.parse(pods.pop()))
        elif snap.pod_by_uid and r < 0.8:
            # Same uid, another Pod object, maybe another node (an update or a re-assume).
            old = snap.pod_by_uid[rng.choice(list(snap.pod_by_uid))]
            snap.add_pod(old.with_node(rng.choice(snap.nodes).name))
        elif snap.pod_by_uid and r < 0.97:
            snap.remove_pod(rng.choice(list(snap.pod_by_uid)))
        else:
            # A node change: rows may move (removal of an empty node) or labels change.
            empty = [n.name for i, n in enumerate(snap.nodes) if not snap.pods_on[i]]
            if empty and snap.n > 1 and rng.random() < 0.5:
                snap.remove_node(rng.choice(empty))
            else:
                victim = rng.choice(snap.nodes)
                labels = {**victim.labels, "zone": rng.choice(["z1", "z2", "z3"])}
                snap.update_node(Node.parse(node(victim.name, **labels)))
        incoming = Pod.parse(
            pod(
                labels=random_labels(rng),
                ns=rng.choice(["ns1", "ns2", "ns3"]),
                anti=[random_term(rng) for _ in range(rng.choice([0, 1]))],
            )
        )
        results = []
        for candidate in (pl, InterPodAffinity()):
            state = CycleState()
            st = candidate.pre_filter(state, incoming, snap)
            pre = state.read(PRE_FILTER_STATE_KEY)
            sc = candidate.pre_score(state, incoming, snap, np.arange(snap.n))
            score = state.read(PRE_SCORE_STATE_KEY)
            results.append(
                (
                    st is None,
                    None if pre is None else state_view(pre, snap),
                    sc is None,
                    None if score is None else pairs(score.topology_score, snap),
                )
            )
        assert results[0] == results[1], step

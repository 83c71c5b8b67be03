"""InterPodAffinity PreScore/Score/NormalizeScore: kube-scheduler's scoring_test.go tables, ported.

Upstream's namespace "" is "default" here (our parser defaults it); the two invalid-label-syntax
cases are a parse error here instead of a PreScore error.
"""

from __future__ import annotations

import random
from typing import Any

import numpy as np
import pytest

from kubesched.api.objects import Pod
from kubesched.errors import InputError
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.status import Code
from kubesched.plugins.interpodaffinity import InterPodAffinity
from kubesched.plugins.interpodaffinity.scoring import normalize_scores
from kubesched.testing import build_snapshot, make_node, make_pod, run_score

SKIP = "skip"
MAX = 100

NAMESPACES = [
    {"metadata": {"name": "subteam1.team1", "labels": {"team": "team1"}}},
    {"metadata": {"name": "subteam2.team1", "labels": {"team": "team1"}}},
    {"metadata": {"name": "subteam1.team2", "labels": {"team": "team2"}}},
    {"metadata": {"name": "subteam2.team2", "labels": {"team": "team2"}}},
]


def expr(key: str, op: str, values: list[str] | None = None) -> dict:
    e: dict[str, Any] = {"key": key, "operator": op}
    if values is not None:
        e["values"] = values
    return e


def term(*exprs: dict, topo: str, **extra: Any) -> dict:
    return {"labelSelector": {"matchExpressions": list(exprs)}, "topologyKey": topo, **extra}


def weighted(weight: int, t: dict) -> dict:
    return {"weight": weight, "podAffinityTerm": t}


def affinity(
    pref_aff: list[dict] = (),  # type: ignore[assignment]
    pref_anti: list[dict] = (),  # type: ignore[assignment]
    req_aff: list[dict] = (),  # type: ignore[assignment]
    req_anti: list[dict] = (),  # type: ignore[assignment]
) -> dict:
    out: dict[str, Any] = {}
    if pref_aff or req_aff:
        out["podAffinity"] = {
            "preferredDuringSchedulingIgnoredDuringExecution": list(pref_aff),
            "requiredDuringSchedulingIgnoredDuringExecution": list(req_aff),
        }
    if pref_anti or req_anti:
        out["podAntiAffinity"] = {
            "preferredDuringSchedulingIgnoredDuringExecution": list(pref_anti),
            "requiredDuringSchedulingIgnoredDuringExecution": list(req_anti),
        }
    return out


_seq = iter(range(10**9))


def pod(
    *, labels: dict | None = None, node: str | None = None, aff: dict | None = None, ns: str = "default"
) -> dict:
    return make_pod(
        f"p{next(_seq)}", namespace=ns, labels=labels, node=node, spec={"affinity": aff} if aff else None
    )


def node(name: str, labels: dict[str, str]) -> dict:
    return make_node(name, labels=labels)


RG_CHINA = {"region": "China"}
RG_INDIA = {"region": "India"}
AZ1 = {"az": "az1"}
AZ2 = {"az": "az2"}
RG_CHINA_AZ1 = {"region": "China", "az": "az1"}
S1 = {"security": "S1"}
S2 = {"security": "S2"}

STAY_WITH_S1_IN_REGION = affinity(pref_aff=[weighted(5, term(expr("security", "In", ["S1"]), topo="region"))])
STAY_WITH_S2_IN_REGION = affinity(pref_aff=[weighted(6, term(expr("security", "In", ["S2"]), topo="region"))])
AFFINITY3 = affinity(
    pref_aff=[
        weighted(8, term(expr("security", "NotIn", ["S1"]), expr("security", "In", ["S2"]), topo="region")),
        weighted(2, term(expr("security", "Exists"), expr("wrongkey", "DoesNotExist"), topo="region")),
    ]
)
HARD_AFFINITY = affinity(
    req_aff=[
        term(expr("security", "In", ["S1", "value2"]), topo="region"),
        term(expr("security", "Exists"), expr("wrongkey", "DoesNotExist"), topo="region"),
    ]
)
AWAY_FROM_S1_IN_AZ = affinity(pref_anti=[weighted(5, term(expr("security", "In", ["S1"]), topo="az"))])
AWAY_FROM_S2_IN_AZ = affinity(pref_anti=[weighted(5, term(expr("security", "In", ["S2"]), topo="az"))])
STAY_S1_REGION_AWAY_S2_AZ = affinity(
    pref_aff=[weighted(8, term(expr("security", "In", ["S1"]), topo="region"))],
    pref_anti=[weighted(5, term(expr("security", "In", ["S2"]), topo="az"))],
)
_NS_TERM = term(
    expr("security", "In", ["S1"]),
    topo="region",
    namespaces=["subteam2.team2"],
    namespaceSelector={"matchExpressions": [expr("team", "In", ["team1"])]},
)
AFFINITY_NS_SELECTOR = affinity(pref_aff=[weighted(5, _NS_TERM)])
ANTI_AFFINITY_NS_SELECTOR = affinity(pref_anti=[weighted(5, _NS_TERM)])


def nodes_named(*label_sets: dict[str, str]) -> list[dict]:
    return [node(f"node{i + 1}", labels) for i, labels in enumerate(label_sets)]


def run(
    incoming: dict,
    pods: list[dict],
    nodes: list[dict],
    args: dict | None = None,
    rows: list[int] | None = None,
) -> Any:
    """SKIP when PreScore skips, else the normalized scores over ``rows`` (default: all nodes)."""
    snap = build_snapshot(nodes, pods, NAMESPACES)
    pl = InterPodAffinity(args)
    p = Pod.parse(incoming)
    state = CycleState()
    rows_arr = np.arange(snap.n) if rows is None else np.asarray(rows)
    st = pl.pre_score(state, p, snap, rows_arr)
    if st is not None:
        assert st.code == Code.Skip
        return SKIP
    raw = pl.score(state, p, snap, rows_arr)
    norm = pl.normalize(state, p, raw.copy())
    return (raw if norm is None else norm).tolist()


PREFERRED = [
    (
        "all nodes are same priority as Affinity is nil",
        pod(labels=S1),
        [],
        nodes_named(RG_CHINA, RG_INDIA, AZ1),
        False,
        SKIP,
    ),
    (
        "Affinity: pod that matches topology key & pods in nodes will get high score comparing to others"
        "which doesn't match either pods in nodes or in topology key",
        pod(labels=S1, aff=STAY_WITH_S1_IN_REGION),
        [pod(node="node1", labels=S1), pod(node="node2", labels=S2), pod(node="node3", labels=S1)],
        nodes_named(RG_CHINA, RG_INDIA, AZ1),
        False,
        [MAX, 0, 0],
    ),
    (
        "All the nodes that have the same topology key & label value with one of them has an existing pod that match the affinity rules, have the same score",
        pod(aff=STAY_WITH_S1_IN_REGION),
        [pod(node="node1", labels=S1)],
        nodes_named(RG_CHINA, RG_CHINA_AZ1, RG_INDIA),
        False,
        [MAX, MAX, 0],
    ),
    (
        "Affinity: nodes in one region has more matching pods comparing to other region, so the region which has more matches will get high score",
        pod(labels=S1, aff=STAY_WITH_S2_IN_REGION),
        [
            pod(node="node1", labels=S2),
            pod(node="node1", labels=S2),
            pod(node="node2", labels=S2),
            pod(node="node3", labels=S2),
            pod(node="node4", labels=S2),
            pod(node="node5", labels=S2),
        ],
        nodes_named(RG_CHINA, RG_INDIA, RG_CHINA, RG_CHINA, RG_INDIA),
        False,
        [MAX, 0, MAX, MAX, 0],
    ),
    (
        "Affinity: different Label operators and values for pod affinity scheduling preference, including some match failures ",
        pod(labels=S1, aff=AFFINITY3),
        [pod(node="node1", labels=S1), pod(node="node2", labels=S2), pod(node="node3", labels=S1)],
        nodes_named(RG_CHINA, RG_INDIA, AZ1),
        False,
        [20, MAX, 0],
    ),
    (
        "Affinity symmetry: considered only the preferredDuringSchedulingIgnoredDuringExecution in pod affinity symmetry",
        pod(labels=S2),
        [
            pod(node="node1", aff=STAY_WITH_S1_IN_REGION, labels=S1),
            pod(node="node2", aff=STAY_WITH_S2_IN_REGION, labels=S2),
        ],
        nodes_named(RG_CHINA, RG_INDIA, AZ1),
        False,
        [0, MAX, 0],
    ),
    (
        "Affinity symmetry with namespace selector",
        pod(ns="subteam1.team1", labels=S1),
        [
            pod(node="node1", aff=AFFINITY_NS_SELECTOR, labels=S1),
            pod(node="node2", aff=STAY_WITH_S2_IN_REGION, labels=S2),
        ],
        nodes_named(RG_CHINA, RG_INDIA, AZ1),
        False,
        [MAX, 0, 0],
    ),
    (
        "AntiAffinity symmetry with namespace selector",
        pod(ns="subteam1.team1", labels=S1),
        [
            pod(node="node1", aff=ANTI_AFFINITY_NS_SELECTOR, labels=S1),
            pod(node="node2", aff=STAY_WITH_S2_IN_REGION, labels=S2),
        ],
        nodes_named(RG_CHINA, RG_INDIA, AZ1),
        False,
        [0, MAX, MAX],
    ),
    (
        "Affinity symmetry: considered RequiredDuringSchedulingIgnoredDuringExecution in pod affinity symmetry",
        pod(labels=S1),
        [pod(node="node1", aff=HARD_AFFINITY, labels=S1), pod(node="node2", aff=HARD_AFFINITY, labels=S2)],
        nodes_named(RG_CHINA, RG_INDIA, AZ1),
        False,
        [MAX, MAX, 0],
    ),
    (
        "Anti Affinity: pod that does not match existing pods in node will get high score ",
        pod(labels=S1, aff=AWAY_FROM_S1_IN_AZ),
        [pod(node="node1", labels=S1), pod(node="node2", labels=S2)],
        nodes_named(AZ1, RG_CHINA),
        False,
        [0, MAX],
    ),
    (
        "Anti Affinity: pod that does not match topology key & match the pods in nodes will get higher score comparing to others ",
        pod(labels=S1, aff=AWAY_FROM_S1_IN_AZ),
        [pod(node="node1", labels=S1), pod(node="node2", labels=S1)],
        nodes_named(AZ1, RG_CHINA),
        False,
        [0, MAX],
    ),
    (
        "Anti Affinity: one node has more matching pods comparing to other node, so the node which has more unmatches will get high score",
        pod(labels=S1, aff=AWAY_FROM_S1_IN_AZ),
        [pod(node="node1", labels=S1), pod(node="node1", labels=S1), pod(node="node2", labels=S2)],
        nodes_named(AZ1, RG_INDIA),
        False,
        [0, MAX],
    ),
    (
        "Anti Affinity symmetry: the existing pods in node which has anti affinity match will get high score",
        pod(labels=S2),
        [
            pod(node="node1", aff=AWAY_FROM_S2_IN_AZ, labels=S1),
            pod(node="node2", aff=AWAY_FROM_S1_IN_AZ, labels=S2),
        ],
        nodes_named(AZ1, AZ2),
        False,
        [0, MAX],
    ),
    (
        "Affinity and Anti Affinity: considered only preferredDuringSchedulingIgnoredDuringExecution in both pod affinity & anti affinity",
        pod(labels=S1, aff=STAY_S1_REGION_AWAY_S2_AZ),
        [pod(node="node1", labels=S1), pod(node="node2", labels=S1)],
        nodes_named(RG_CHINA, AZ1),
        False,
        [MAX, 0],
    ),
    (
        "Affinity and Anti Affinity: considering both affinity and anti-affinity, the pod to schedule and existing pods have the same labels",
        pod(labels=S1, aff=STAY_S1_REGION_AWAY_S2_AZ),
        [
            pod(node="node1", labels=S1),
            pod(node="node1", labels=S1),
            pod(node="node2", labels=S1),
            pod(node="node3", labels=S1),
            pod(node="node3", labels=S1),
            pod(node="node4", labels=S1),
            pod(node="node5", labels=S1),
        ],
        nodes_named(RG_CHINA_AZ1, RG_INDIA, RG_CHINA, RG_CHINA, RG_INDIA),
        False,
        [MAX, 0, MAX, MAX, 0],
    ),
    (
        "Affinity and Anti Affinity and symmetry: considered only preferredDuringSchedulingIgnoredDuringExecution in both pod affinity & anti affinity & symmetry",
        pod(labels=S1, aff=STAY_S1_REGION_AWAY_S2_AZ),
        [
            pod(node="node1", labels=S1),
            pod(node="node2", labels=S2),
            pod(node="node3", aff=STAY_S1_REGION_AWAY_S2_AZ),
            pod(node="node4", aff=AWAY_FROM_S1_IN_AZ),
        ],
        nodes_named(RG_CHINA, AZ1, RG_INDIA, AZ2),
        False,
        [MAX, 0, MAX, 0],
    ),
    (
        "Avoid panic when partial nodes in a topology don't have pods with affinity",
        pod(labels=S1),
        [pod(node="node1", labels=S1), pod(node="node2", aff=STAY_S1_REGION_AWAY_S2_AZ)],
        nodes_named(RG_CHINA, RG_CHINA),
        False,
        [0, 0],
    ),
    (
        "Affinity with pods matching NamespaceSelector",
        pod(ns="subteam1.team1", labels=S1, aff=AFFINITY_NS_SELECTOR),
        [
            pod(node="node1", ns="subteam1.team1", labels=S1),
            pod(node="node1", ns="subteam1.team1", labels=S1),
            pod(node="node1", ns="subteam1.team2", labels=S1),
            pod(node="node2", ns="subteam2.team1", labels=S1),
        ],
        nodes_named(RG_CHINA, RG_INDIA),
        False,
        [MAX, 0],
    ),
    (
        "Affinity with pods matching both NamespaceSelector and Namespaces fields",
        pod(ns="subteam1.team1", labels=S1, aff=AFFINITY_NS_SELECTOR),
        [
            pod(node="node1", ns="subteam1.team1", labels=S1),
            pod(node="node1", ns="subteam1.team1", labels=S1),
            pod(node="node1", ns="subteam2.team2", labels=S1),
            pod(node="node2", ns="subteam2.team1", labels=S1),
        ],
        nodes_named(RG_CHINA, RG_INDIA),
        False,
        [MAX, 0],
    ),
    (
        "Affinity with pods matching NamespaceSelector (anti-affinity)",
        pod(ns="subteam1.team1", labels=S1, aff=ANTI_AFFINITY_NS_SELECTOR),
        [
            pod(node="node1", ns="subteam1.team1", labels=S1),
            pod(node="node1", ns="subteam1.team1", labels=S1),
            pod(node="node1", ns="subteam1.team2", labels=S1),
            pod(node="node2", ns="subteam2.team1", labels=S1),
        ],
        nodes_named(RG_CHINA, RG_INDIA),
        False,
        [0, MAX],
    ),
    (
        "Affinity with pods matching both NamespaceSelector and Namespaces fields (anti-affinity)",
        pod(ns="subteam1.team1", labels=S1, aff=ANTI_AFFINITY_NS_SELECTOR),
        [
            pod(node="node1", ns="subteam1.team1", labels=S1),
            pod(node="node1", ns="subteam1.team1", labels=S1),
            pod(node="node1", ns="subteam2.team2", labels=S1),
            pod(node="node2", ns="subteam2.team1", labels=S1),
        ],
        nodes_named(RG_CHINA, RG_INDIA),
        False,
        [0, MAX],
    ),
    (
        "Ignore preferred terms of existing pods",
        pod(labels=S2),
        [
            pod(node="node1", aff=STAY_S1_REGION_AWAY_S2_AZ, labels=S1),
            pod(node="node2", aff=STAY_WITH_S2_IN_REGION, labels=S2),
        ],
        nodes_named(RG_CHINA, RG_INDIA),
        True,
        SKIP,
    ),
    (
        "Do not ignore preferred terms of existing pods",
        pod(labels=S2),
        [
            pod(node="node1", aff=STAY_S1_REGION_AWAY_S2_AZ, labels=S1),
            pod(node="node2", aff=STAY_WITH_S2_IN_REGION, labels=S2),
        ],
        nodes_named(RG_CHINA, RG_INDIA),
        False,
        [0, MAX],
    ),
    ("No nodes to score", pod(labels=S2), [], [], False, SKIP),
]


@pytest.mark.parametrize(
    ("name", "incoming", "pods", "nodes", "ignore", "want"), PREFERRED, ids=[c[0][:90] for c in PREFERRED]
)
def test_preferred_affinity(
    name: str, incoming: dict, pods: list, nodes: list, ignore: bool, want: Any
) -> None:
    args = {"hardPodAffinityWeight": 1, "ignorePreferredTermsOfExistingPods": ignore}
    assert run(incoming, pods, nodes, args) == want


@pytest.mark.parametrize(
    "aff",
    [
        affinity(pref_aff=[weighted(8, term(expr("security", "In", ["{{.bad-value.}}"]), topo="region"))]),
        affinity(pref_anti=[weighted(5, term(expr("security", "In", ["{{.bad-value.}}"]), topo="az"))]),
    ],
    ids=["invalid Affinity fails PreScore", "invalid AntiAffinity fails PreScore"],
)
def test_invalid_label_syntax_is_rejected_at_parse(aff: dict) -> None:
    with pytest.raises(InputError):
        Pod.parse(pod(aff=aff))


HARD_POD_AFFINITY = affinity(
    req_aff=[
        term(
            expr("service", "In", ["S1"]),
            topo="region",
            namespaces=["default", "subteam2.team2"],  # upstream: "" (the tests' default namespace)
            namespaceSelector={"matchExpressions": [expr("team", "In", ["team1"])]},
        )
    ]
)
SERVICE_S1 = {"service": "S1"}
HARD_NODES = nodes_named(RG_CHINA, RG_INDIA, AZ1)
HARD_PODS = [pod(node="node1", aff=HARD_POD_AFFINITY), pod(node="node2", aff=HARD_POD_AFFINITY)]

HARD_WEIGHT = [
    ("with default weight", pod(labels=SERVICE_S1), 1, [MAX, MAX, 0]),
    ("with zero weight", pod(labels=SERVICE_S1), 0, SKIP),
    ("with no matching namespace", pod(ns="subteam1.team2", labels=SERVICE_S1), 1, SKIP),
    ("with matching NamespaceSelector", pod(ns="subteam1.team1", labels=SERVICE_S1), 1, [MAX, MAX, 0]),
    ("with matching Namespaces", pod(ns="subteam2.team2", labels=SERVICE_S1), 1, [MAX, MAX, 0]),
]


@pytest.mark.parametrize(("name", "incoming", "weight", "want"), HARD_WEIGHT, ids=[c[0] for c in HARD_WEIGHT])
def test_preferred_affinity_with_hard_pod_affinity_symmetric_weight(
    name: str, incoming: dict, weight: int, want: Any
) -> None:
    assert run(incoming, HARD_PODS, HARD_NODES, {"hardPodAffinityWeight": weight}) == want


# ---- args, formula and framework details ------------------------------------------------------------


def test_default_args() -> None:
    pl = InterPodAffinity()
    assert pl.hard_pod_affinity_weight == 1
    assert pl.ignore_preferred_terms_of_existing_pods is False
    assert InterPodAffinity({"hardPodAffinityWeight": 0}).hard_pod_affinity_weight == 0
    assert InterPodAffinity(None).hard_pod_affinity_weight == 1


def test_hard_weight_scales_raw_score() -> None:
    snap = build_snapshot(HARD_NODES, HARD_PODS, NAMESPACES)
    raw, norm = run_score(InterPodAffinity({"hardPodAffinityWeight": 7}), pod(labels=SERVICE_S1), snap)
    assert raw == [7, 7, 0]
    assert norm == [MAX, MAX, 0]


def test_normalize_uses_go_float_arithmetic() -> None:
    """100 * (float64(29) / float64(100)) is 28.999999999999996, truncated to 28 as in Go."""
    assert normalize_scores(np.array([0, 29, 100], np.int64)).tolist() == [0, 28, 100]
    assert normalize_scores(np.array([-5, 0, -5], np.int64)).tolist() == [0, 100, 0]
    assert normalize_scores(np.array([3, 3], np.int64)).tolist() == [0, 0]
    assert normalize_scores(np.array([-7, 1, 2], np.int64)).tolist() == [0, 88, 100]


def test_normalize_is_over_the_scored_rows_only() -> None:
    """Min and max come from the nodes being scored, not from every node."""
    pods = [pod(node="node1", labels=S1), pod(node="node2", labels=S1), pod(node="node2", labels=S1)]
    nodes = nodes_named({"zone": "a"}, {"zone": "b"}, {"zone": "c"})
    incoming = pod(aff=affinity(pref_aff=[weighted(10, term(expr("security", "Exists"), topo="zone"))]))
    assert run(incoming, pods, nodes) == [50, MAX, 0]
    assert run(incoming, pods, nodes, rows=[0, 1]) == [0, MAX]


def test_ignore_preferred_terms_still_scores_when_incoming_pod_has_preferences() -> None:
    """The flag only short-cuts pods without preferred terms; otherwise existing pods still count."""
    pods = [pod(node="node1", aff=STAY_WITH_S1_IN_REGION, labels=S2), pod(node="node2", labels=S2)]
    incoming = pod(labels=S1, aff=AWAY_FROM_S2_IN_AZ)
    nodes = nodes_named(RG_CHINA, {"region": "India", "az": "az1"})
    want = run(incoming, pods, nodes, {"ignorePreferredTermsOfExistingPods": False})
    assert want == [MAX, 0]
    assert run(incoming, pods, nodes, {"ignorePreferredTermsOfExistingPods": True}) == want


def test_duplicate_terms_count_twice() -> None:
    t = weighted(3, term(expr("security", "Exists"), topo="region"))
    existing = [pod(node="node1", aff=affinity(pref_aff=[t, t]))]
    snap = build_snapshot(nodes_named(RG_CHINA, RG_INDIA), existing)
    raw, _ = run_score(InterPodAffinity(), pod(labels=S1), snap)
    assert raw == [6, 0]


# ---- randomized comparison with a direct port of the Go code ----------------------------------------


def oracle_scores(p: Pod, snap: Any, hard: int, ignore: bool, rows: list[int]) -> Any:
    """PreScore/Score/NormalizeScore as upstream writes them, loops and maps."""
    aff = list(p.pod_affinity.preferred) if p.pod_affinity else []
    anti = list(p.pod_anti_affinity.preferred) if p.pod_anti_affinity else []
    if ignore and not (aff or anti):
        return SKIP

    def merged(t: Any) -> frozenset | None:
        if t.namespace_selector is not None and t.namespace_selector.is_empty:
            return None
        ns = set(t.resolved_namespaces(p.namespace))
        if t.namespace_selector is not None:
            ns |= set(snap.namespaces_matching(t.namespace_selector))
        return frozenset(ns)

    ns_labels = snap.namespaces.get(p.namespace, {})

    def incoming_matches(t: Any, target: Pod) -> bool:
        ns = merged(t)
        return (
            t.selector is not None
            and (ns is None or target.namespace in ns)
            and t.selector.matches(target.labels)
        )

    def existing_matches(t: Any, owner: Pod) -> bool:
        in_ns = p.namespace in t.resolved_namespaces(owner.namespace) or (
            t.namespace_selector is not None and t.namespace_selector.matches(ns_labels)
        )
        return t.selector is not None and in_ns and t.selector.matches(p.labels)

    topo: dict[str, dict[str, int]] = {}

    def process(t: Any, weight: int, matched: bool, labels: dict) -> None:
        if matched and t.topology_key in labels:
            d = topo.setdefault(t.topology_key, {})
            d[labels[t.topology_key]] = d.get(labels[t.topology_key], 0) + weight

    for i, n in enumerate(snap.nodes):
        if not n.labels:
            continue
        for e in snap.pods_on[i].values():
            for w in aff:
                process(w.term, w.weight, incoming_matches(w.term, e), n.labels)
            for w in anti:
                process(w.term, -w.weight, incoming_matches(w.term, e), n.labels)
            if e.pod_affinity:
                if hard > 0:
                    for t in e.pod_affinity.required:
                        process(t, hard, existing_matches(t, e), n.labels)
                for w in e.pod_affinity.preferred:
                    process(w.term, w.weight, existing_matches(w.term, e), n.labels)
            if e.pod_anti_affinity:
                for w in e.pod_anti_affinity.preferred:
                    process(w.term, -w.weight, existing_matches(w.term, e), n.labels)
    if not topo:
        return SKIP
    scores = []
    for r in rows:
        labels = snap.nodes[r].labels
        scores.append(sum(vals.get(labels[k], 0) for k, vals in topo.items() if k in labels))
    lo, hi = min(scores), max(scores)
    return [int(100.0 * (float(s - lo) / float(hi - lo))) if hi > lo else 0 for s in scores]


def random_term(rng: random.Random) -> dict:
    key = rng.choice(["app", "tier"])
    op = rng.choice(["In", "NotIn", "Exists", "DoesNotExist"])
    values = rng.sample(["a", "b", "c"], rng.randint(1, 2)) if op in ("In", "NotIn") else None
    extra: dict[str, Any] = {}
    r = rng.random()
    if r < 0.15:
        extra["namespaces"] = rng.sample(["ns1", "ns2", "ns3"], rng.randint(1, 2))
    elif r < 0.3:
        extra["namespaceSelector"] = rng.choice([{}, {"matchLabels": {"env": "prod"}}])
    return term(expr(key, op, values), topo=rng.choice(["zone", "region", "rack"]), **extra)


def random_affinity(rng: random.Random, scale: int) -> dict | None:
    aff = affinity(
        pref_aff=[weighted(rng.randint(1, 100), random_term(rng)) for _ in range(rng.randint(0, scale))],
        pref_anti=[weighted(rng.randint(1, 100), random_term(rng)) for _ in range(rng.randint(0, scale))],
        req_aff=[random_term(rng) for _ in range(rng.choice([0, 0, 1]))],
    )
    return aff or None


@pytest.mark.parametrize("seed", range(300))
def test_matches_direct_port_of_upstream(seed: int) -> None:
    rng = random.Random(seed)
    nodes = []
    for i in range(rng.randint(1, 7)):
        labels = {}
        for key, vals, p in (
            ("zone", ["z1", "z2", "z3"], 0.8),
            ("region", ["r1", "r2"], 0.6),
            ("rack", ["k1"], 0.3),
        ):
            if rng.random() < p:
                labels[key] = rng.choice(vals)
        nodes.append({**node(f"n{i}", {}), "metadata": {"name": f"n{i}", "labels": labels}})
    pods = [
        pod(
            node=f"n{rng.randrange(len(nodes))}",
            ns=rng.choice(["ns1", "ns2", "ns3"]),
            labels={k: rng.choice(["a", "b", "c"]) for k in ("app", "tier") if rng.random() < 0.7},
            aff=random_affinity(rng, 1) if rng.random() < 0.5 else None,
        )
        for _ in range(rng.randint(0, 12))
    ]
    nss = [{"metadata": {"name": "ns1", "labels": {"env": "prod"}}}, {"metadata": {"name": "ns2"}}]
    snap = build_snapshot(nodes, pods, nss)
    incoming = Pod.parse(
        pod(
            ns=rng.choice(["ns1", "ns2", "ns3"]),
            labels={k: rng.choice(["a", "b", "c"]) for k in ("app", "tier") if rng.random() < 0.7},
            aff=random_affinity(rng, 2) if rng.random() < 0.7 else None,
        )
    )
    hard = rng.choice([0, 1, 5])
    ignore = rng.random() < 0.3
    rows = sorted(rng.sample(range(snap.n), rng.randint(1, snap.n)))
    want = oracle_scores(incoming, snap, hard, ignore, rows)
    pl = InterPodAffinity({"hardPodAffinityWeight": hard, "ignorePreferredTermsOfExistingPods": ignore})
    state = CycleState()
    st = pl.pre_score(state, incoming, snap, np.asarray(rows))
    if want == SKIP:
        assert st is not None and st.code == Code.Skip
        return
    assert st is None
    raw = pl.score(state, incoming, snap, np.asarray(rows))
    assert pl.normalize(state, incoming, raw).tolist() == want

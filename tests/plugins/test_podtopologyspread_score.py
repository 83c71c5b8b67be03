"""PodTopologySpread PreScore/Score/NormalizeScore: ports of upstream scoring_test.go tables (v1.36).

Upstream TestPreScoreSkip, TestPreScoreStateEmptyNodes and TestPodTopologySpreadScore (run, as
upstream, with SystemDefaulting args). The "matchLabelKeys ignored when feature gate disabled"
case is dropped: the gate is locked on in 1.36.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as hs

from kubesched.api.objects import Pod
from kubesched.api.selectors import LabelSelector
from kubesched.api.taints import first_untolerated
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.status import Code, PluginError, Status
from kubesched.plugins.podtopologyspread import PodTopologySpread
from kubesched.plugins.podtopologyspread.common import PRE_SCORE_STATE_KEY
from kubesched.plugins.podtopologyspread.defaults import constraints_for, default_selector
from kubesched.plugins.podtopologyspread.scoring import PreScoreState
from kubesched.testing import build_snapshot, make_node, make_pod, run_score, spread_constraint

HOST = "kubernetes.io/hostname"
ZONE = "topology.kubernetes.io/zone"
FOO = {"matchExpressions": [{"key": "foo", "operator": "Exists"}]}
BAR = {"matchExpressions": [{"key": "bar", "operator": "Exists"}]}
TAINTS = [{"key": "node.kubernetes.io/unschedulable", "value": "", "effect": "NoSchedule"}]
LIST_ARGS = {"defaultingType": "List"}
SYSTEM_ARGS = {"defaultingType": "System"}


# -- builders ----------------------------------------------------------------------------------


def node(name: str, labels: dict[str, str], taints: bool = False) -> dict:
    """A node with exactly ``labels``."""
    d = make_node(name, taints=TAINTS if taints else None)
    d["metadata"]["labels"] = dict(labels)
    return d


def hn(name: str, taints: bool = False, **labels: str) -> dict:
    """A node with the hostname label plus ``labels``."""
    return node(name, {HOST: name, **labels}, taints)


def sc(
    skew: int,
    key: str,
    when: str = "ScheduleAnyway",
    selector: dict | None = None,
    affinity_policy: str | None = None,
    taints_policy: str | None = None,
    match_label_keys: list[str] | None = None,
) -> dict:
    return spread_constraint(skew, key, when, selector, None, affinity_policy, taints_policy, match_label_keys)


def pod(
    name: str = "p",
    labels: dict[str, str] | None = None,
    constraints: list[dict] | None = None,
    *,
    node_name: str | None = None,
    namespace: str = "default",
    node_selector: dict[str, str] | None = None,
    affinity_in: tuple[str, list[str]] | None = None,
    terminating: bool = False,
    owner: tuple[str, str] | None = None,
) -> dict:
    spec: dict[str, Any] = {}
    if constraints:
        spec["topologySpreadConstraints"] = constraints
    if node_selector is not None:
        spec["nodeSelector"] = node_selector
    if affinity_in:
        key, values = affinity_in
        spec["affinity"] = {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [
                        {"matchExpressions": [{"key": key, "operator": "In", "values": values}]}
                    ]
                }
            }
        }
    d = make_pod(name, namespace=namespace, labels=labels or {}, node=node_name, spec=spec)
    if terminating:
        d["metadata"]["deletionTimestamp"] = "2024-01-01T00:00:00Z"
    if owner:
        d["metadata"]["ownerReferences"] = [{"kind": owner[0], "name": owner[1], "controller": True}]
    return d


def ep(
    name: str, node_name: str, namespace: str = "default", terminating: bool = False, **labels: str
) -> dict:
    return pod(name, labels, node_name=node_name, namespace=namespace, terminating=terminating)


def foo_pods(spec: str) -> list[dict]:
    """'a2 b1' -> p-a1, p-a2 on node-a and p-b1 on node-b, all labelled foo."""
    out = []
    for part in spec.split():
        suffix, n = part[0], int(part[1:])
        out += [ep(f"p-{suffix}{i}", f"node-{suffix}", foo="") for i in range(1, n + 1)]
    return out


def weight(size: int) -> float:
    return math.log(size + 2)


def scores_of(
    p: dict | Pod,
    nodes: list[dict],
    existing: list[dict],
    failed: list[dict] = (),  # type: ignore[assignment]
    args: dict | None = None,
    workloads: list | None = None,
) -> dict[str, int]:
    """PreScore over ``nodes`` (failed nodes are in the snapshot only), Score, NormalizeScore."""
    snap = build_snapshot([*nodes, *failed], existing)
    if workloads:
        snap.workload_selectors = workloads
    rows = [snap.row_of[n["metadata"]["name"]] for n in nodes]
    plugin = PodTopologySpread(SYSTEM_ARGS if args is None else args)
    _, normalized = run_score(plugin, p, snap, rows)
    return {snap.nodes[r].name: s for r, s in zip(rows, normalized, strict=True)}


def pre_score(
    p: dict, nodes: list[dict], args: dict, workloads: list | None = None
) -> tuple[Status | None, CycleState, Any]:
    snap = build_snapshot(nodes)
    if workloads:
        snap.workload_selectors = workloads
    plugin = PodTopologySpread(args)
    state = CycleState()
    st = plugin.pre_score(state, Pod.parse(p), snap, np.arange(snap.n, dtype=np.int32))
    return st, state, snap


# -- TestPreScoreSkip --------------------------------------------------------------------------


def test_pre_score_skip_without_soft_constraints() -> None:
    st, _, _ = pre_score(pod(), [hn("node-a"), hn("node-b")], LIST_ARGS)
    assert st is not None and st.code == Code.Skip


def test_pre_score_skip_default_constraints_and_a_replicaset_that_doesnt_match() -> None:
    args = {
        "defaultingType": "List",
        "defaultConstraints": [
            {"maxSkew": 2, "topologyKey": "planet", "whenUnsatisfiable": "ScheduleAnyway"}
        ],
    }
    p = pod(labels={"foo": "bar", "baz": "sup"}, owner=("ReplicaSet", "rs2"))
    # Named entry: the pod's controller rs2 does not exist.
    workloads = [("ReplicaSet", "default", "rs1", LabelSelector.parse(FOO, ""))]
    st, _, _ = pre_score(p, [node("node-a", {"planet": "mars"})], args, workloads)
    assert st is not None and st.code == Code.Skip
    # Unnamed entry: rs1's selector (Exists tar) does not select the pod either.
    workloads = [
        (
            "ReplicaSet",
            "default",
            LabelSelector.parse({"matchExpressions": [{"key": "tar", "operator": "Exists"}]}, ""),
        )
    ]
    st, _, _ = pre_score(p, [node("node-a", {"planet": "mars"})], args, workloads)
    assert st is not None and st.code == Code.Skip


def test_pre_score_skip_when_no_nodes() -> None:
    st, _, _ = pre_score(pod(labels={"foo": ""}, constraints=[sc(1, "zone", selector=FOO)]), [], LIST_ARGS)
    assert st is not None and st.code == Code.Skip


# -- TestPreScoreStateEmptyNodes ---------------------------------------------------------------

ZONE_NODES = [hn("node-a", zone="zone1"), hn("node-b", zone="zone1"), hn("node-x", zone="zone2")]
FOO_NODES = [
    hn("node-a", zone="zone1", foo=""),
    hn("node-b", zone="zone1", foo=""),
    hn("node-x", zone="zone2"),
]
RS1_FOO = [("ReplicaSet", "default", "rs1", LabelSelector.parse(FOO, ""))]

PRE_SCORE_STATE_CASES = [
    pytest.param(
        pod(labels={"foo": ""}, constraints=[sc(1, "zone", selector=FOO), sc(1, HOST, selector=FOO)]),
        ZONE_NODES, LIST_ARGS, None,
        [("zone", 1), (HOST, 1)], set(), [{"zone1": 0, "zone2": 0}, {}], [weight(2), weight(3)],
        id="normal case",
    ),
    pytest.param(
        pod(labels={"foo": ""}, constraints=[sc(1, "zone")]),
        ZONE_NODES, LIST_ARGS, None,
        [("zone", 1)], set(), [{"zone1": 0, "zone2": 0}], [weight(2)],
        id="null selector",
    ),
    pytest.param(
        pod(labels={"foo": ""}, constraints=[sc(1, "zone", selector=FOO), sc(1, HOST, selector=BAR)]),
        [hn("node-a", zone="zone1"), hn("node-b", zone="zone1"), hn("node-x")], LIST_ARGS, None,
        [("zone", 1), (HOST, 1)], {"node-x"}, [{"zone1": 0}, {}], [weight(1), weight(2)],
        id="node-x doesn't have label zone",
    ),
    pytest.param(
        pod(labels={"foo": "tar", "baz": "sup"}, owner=("ReplicaSet", "rs1")),
        [hn("node-a", **{ZONE: "mars"}), hn("node-b", **{ZONE: "mars"}), hn("node-c"), hn("node-d")],
        SYSTEM_ARGS, RS1_FOO,
        [(HOST, 3), (ZONE, 5)], set(), [{}, {"mars": 0, "": 0}], [weight(4), weight(2)],
        id="system default constraints and a replicaset",
    ),
    pytest.param(
        pod(labels={"foo": "tar", "baz": "sup"}, owner=("ReplicaSet", "rs1")),
        [hn("node-a", rack="rack1", planet="mars")],
        {
            "defaultingType": "List",
            "defaultConstraints": [
                {"maxSkew": 1, "topologyKey": HOST, "whenUnsatisfiable": "ScheduleAnyway"},
                {"maxSkew": 2, "topologyKey": "rack", "whenUnsatisfiable": "DoNotSchedule"},
                {"maxSkew": 2, "topologyKey": "planet", "whenUnsatisfiable": "ScheduleAnyway"},
            ],
        },
        RS1_FOO,
        [(HOST, 1), ("planet", 2)], set(), [{}, {"mars": 0}], [weight(1), weight(1)],
        id="default constraints and a replicaset",
    ),
    pytest.param(
        pod(
            labels={"foo": "bar", "baz": "sup"},
            owner=("ReplicaSet", "rs1"),
            constraints=[
                sc(1, "zone", "DoNotSchedule", BAR),
                sc(2, "planet", selector={"matchLabels": {"baz": "sup"}}),
            ],
        ),
        [node("node-a", {"planet": "mars", "galaxy": "andromeda"})],
        {
            "defaultingType": "List",
            "defaultConstraints": [{"maxSkew": 2, "topologyKey": "galaxy", "whenUnsatisfiable": "ScheduleAnyway"}],
        },
        RS1_FOO,
        [("planet", 2)], set(), [{"mars": 0}], [weight(1)],
        id="default constraints and a replicaset, but pod has constraints",
    ),
    pytest.param(
        pod(labels={"foo": ""}, constraints=[sc(1, "zone", selector=BAR)], node_selector={"foo": ""}),
        FOO_NODES, LIST_ARGS, None,
        [("zone", 1)], set(), [{"zone1": 0, "zone2": 0}], [weight(2)],
        id="NodeAffinityPolicy honored with labelSelectors",
    ),
    pytest.param(
        pod(labels={"foo": ""}, constraints=[sc(1, "zone", selector=BAR, affinity_policy="Ignore")], node_selector={"foo": ""}),
        FOO_NODES, LIST_ARGS, None,
        [("zone", 1)], set(), [{"zone1": 0, "zone2": 0}], [weight(2)],
        id="NodeAffinityPolicy ignored with labelSelectors",
    ),
    pytest.param(
        pod(labels={"foo": ""}, constraints=[sc(1, "zone", selector=BAR)], affinity_in=("foo", [""])),
        FOO_NODES, LIST_ARGS, None,
        [("zone", 1)], set(), [{"zone1": 0, "zone2": 0}], [weight(2)],
        id="NodeAffinityPolicy honored with nodeAffinity",
    ),
    pytest.param(
        pod(labels={"foo": ""}, constraints=[sc(1, "zone", selector=BAR, affinity_policy="Ignore")], affinity_in=("foo", [""])),
        FOO_NODES, LIST_ARGS, None,
        [("zone", 1)], set(), [{"zone1": 0, "zone2": 0}], [weight(2)],
        id="NodeAffinityPolicy ignored with nodeAffinity",
    ),
    pytest.param(
        pod(labels={"foo": ""}, constraints=[sc(1, "zone", selector=BAR, taints_policy="Honor")]),
        [*FOO_NODES[:2], hn("node-x", True, zone="zone2")], LIST_ARGS, None,
        [("zone", 1)], set(), [{"zone1": 0, "zone2": 0}], [weight(2)],
        id="NodeTaintsPolicy honored",
    ),
    pytest.param(
        pod(labels={"foo": ""}, constraints=[sc(1, "zone", selector=BAR)]),
        [*FOO_NODES[:2], hn("node-x", True, zone="zone2")], LIST_ARGS, None,
        [("zone", 1)], set(), [{"zone1": 0, "zone2": 0}], [weight(2)],
        id="NodeTaintsPolicy ignored",
    ),
]  # fmt: skip


@pytest.mark.parametrize(
    ("p", "nodes", "args", "workloads", "constraints", "ignored", "counts", "weights"), PRE_SCORE_STATE_CASES
)
def test_pre_score_state(
    p: dict,
    nodes: list,
    args: dict,
    workloads: list | None,
    constraints: list,
    ignored: set,
    counts: list,
    weights: list,
) -> None:
    status, state, snap = pre_score(p, nodes, args, workloads)
    assert status is None
    st: PreScoreState = state.read(PRE_SCORE_STATE_KEY)
    assert [(c.topology_key, c.max_skew) for c in st.constraints] == constraints
    assert {snap.nodes[r].name for r in np.flatnonzero(st.ignored)} == ignored
    got = [
        st.topology_value_counts(i, snap.labels.values_of(c.topology_key))
        for i, c in enumerate(st.constraints)
    ]
    assert got == counts
    assert st.weights == weights


def test_default_selector_from_replicaset_and_services() -> None:
    """helper.DefaultSelector: services selecting the pod plus the controlling ReplicaSet's selector."""
    p = Pod.parse(pod(labels={"foo": "tar", "baz": "sup", "app": "x"}, owner=("ReplicaSet", "rs1")))
    workloads = [
        ("Service", "default", LabelSelector.from_match_labels({"app": "x"})),
        ("Service", "default", LabelSelector.from_match_labels({"app": "y"})),  # does not select the pod
        ("Service", "other", LabelSelector.from_match_labels({"baz": "sup"})),  # other namespace
        ("ReplicaSet", "default", "rs1", LabelSelector.parse(FOO, "")),
        ("ReplicaSet", "default", "rs2", LabelSelector.from_match_labels({"baz": "sup"})),  # not the owner
        ("StatefulSet", "default", "rs1", LabelSelector.from_match_labels({"baz": "sup"})),  # wrong kind
    ]
    sel = default_selector(p, workloads)
    assert sel == LabelSelector.parse(
        {"matchLabels": {"app": "x"}, "matchExpressions": [{"key": "foo", "operator": "Exists"}]}, ""
    )
    assert default_selector(Pod.parse(pod(labels={"a": "b"})), workloads).is_empty


# -- TestPodTopologySpreadScore ----------------------------------------------------------------

H4 = [hn("node-a"), hn("node-b"), hn("node-c"), hn("node-d")]
H4_SPREAD_4321 = foo_pods("a4 b3 c2 d1")
AXBY_PODS = foo_pods("a4 b2 x1 y3")
ZONE_ABXY = [
    hn("node-a", zone="zone1"),
    hn("node-b", zone="zone1"),
    hn("node-x", zone="zone2"),
    hn("node-y", zone="zone2"),
]
NODE_ABC = [
    node("node-a", {"node": "node-a", "foo": ""}),
    node("node-b", {"node": "node-b", "foo": ""}),
    node("node-c", {"node": "node-c"}),
]
NODE_ABC_TAINTED = [
    node("node-a", {"node": "node-a"}),
    node("node-b", {"node": "node-b"}),
    node("node-c", {"node": "node-c"}, True),
]
ABC_2_1_1 = foo_pods("a2 b1 c1")
ZONE_ABCD = [
    hn("node-a", zone="zone1"),
    hn("node-b", zone="zone1"),
    hn("node-c", zone="zone2"),
    hn("node-d", zone="zone2"),
]
MIXED_PODS = [
    ep("p-a1", "node-a", foo=""),
    ep("p-b1", "node-b", foo="", bar=""),
    ep("p-y1", "node-c", foo=""),
    ep("p-y2", "node-c", bar=""),
]
FOO_HOST = pod(labels={"foo": ""}, constraints=[sc(1, HOST, selector=FOO)])
FOO_ZONE_BAR_HOST = pod(
    labels={"foo": "", "bar": ""}, constraints=[sc(1, "zone", selector=FOO), sc(1, HOST, selector=BAR)]
)


def s4(a: int, b: int, c: int, d: int) -> dict[str, int]:
    return {"node-a": a, "node-b": b, "node-c": c, "node-d": d}


SCORE_CASES = [
    pytest.param(FOO_HOST, [hn("node-a"), hn("node-b")], [], [], None, {"node-a": 100, "node-b": 100},
                 id="one constraint on node, no existing pods"),
    pytest.param(FOO_HOST, [hn("node-a")], foo_pods("a2 b1"), [hn("node-b")], None, {"node-a": 100},
                 id="one constraint on node, only one node is candidate"),
    pytest.param(FOO_HOST, [hn("node-a"), hn("node-b")], foo_pods("a1 b1"), [], None, {"node-a": 100, "node-b": 100},
                 id="one constraint on node, all nodes have the same number of matching pods"),
    pytest.param(FOO_HOST, H4, foo_pods("a2 b1 d3"), [], None, s4(20, 60, 100, 0),
                 id="one constraint on node, all 4 nodes are candidates"),
    pytest.param(pod(labels={"foo": ""}, constraints=[sc(1, HOST)]), H4, foo_pods("a2 b1 d3"), [], None,
                 s4(100, 100, 100, 100), id="one constraint on node, null selector"),
    pytest.param(pod(labels={"foo": ""}, constraints=[sc(2, HOST, selector=FOO)]), H4, foo_pods("a2 b1 d3"), [], None,
                 s4(33, 66, 100, 16), id="one constraint on node, all 4 nodes are candidates, maxSkew=2"),
    pytest.param(pod(labels={"foo": ""}, constraints=[sc(3, HOST, selector=FOO)]), H4, H4_SPREAD_4321, [], None,
                 s4(44, 66, 77, 100), id="one constraint on node, all 4 nodes are candidates, maxSkew=3"),
    pytest.param(pod(labels={"foo": ""}), H4, H4_SPREAD_4321, [], [("Service", "default", LabelSelector.from_match_labels({"foo": ""}))],
                 s4(44, 66, 77, 100), id="system defaulting, nodes don't have zone, pods match service"),
    pytest.param(FOO_HOST, [hn("node-a"), hn("node-b"), hn("node-x")], AXBY_PODS, [hn("node-y")], None,
                 {"node-a": 33, "node-b": 83, "node-x": 100}, id="one constraint on node, 3 out of 4 nodes are candidates"),
    pytest.param(FOO_HOST, [hn("node-a"), node("node-b", {"n": "node-b"}), hn("node-x")], AXBY_PODS, [hn("node-y")], None,
                 {"node-a": 16, "node-b": 0, "node-x": 100},
                 id="one constraint on node, 3 out of 4 nodes are candidates, one node doesn't match topology key"),
    pytest.param(pod(labels={"foo": ""}, constraints=[sc(1, "zone", selector=FOO)]), ZONE_ABXY[:3], AXBY_PODS, ZONE_ABXY[3:],
                 None, {"node-a": 75, "node-b": 75, "node-x": 100},
                 id="one constraint on zone, 3 out of 4 nodes are candidates"),
    pytest.param(pod(labels={"foo": ""}, constraints=[sc(1, "zone", selector=FOO), sc(1, HOST, selector=FOO)]),
                 [ZONE_ABXY[0], ZONE_ABXY[2]], foo_pods("a2 b1 x2 y4"), [ZONE_ABXY[1], ZONE_ABXY[3]], None,
                 {"node-a": 100, "node-x": 63}, id="two Constraints on zone and node, 2 out of 4 nodes are candidates"),
    pytest.param(FOO_ZONE_BAR_HOST, ZONE_ABXY,
                 [ep("p-a1", "node-a", foo=""), ep("p-b1", "node-b", foo="", bar=""), ep("p-y1", "node-y", foo=""),
                  ep("p-y2", "node-y", bar="")], [], None,
                 {"node-a": 60, "node-b": 20, "node-x": 100, "node-y": 60},
                 id="two Constraints on zone and node, with different labelSelectors"),
    pytest.param(FOO_ZONE_BAR_HOST, ZONE_ABXY,
                 [ep("p-b1", "node-b", bar=""), ep("p-x1", "node-x", foo=""), ep("p-y1", "node-y", foo="", bar="")], [], None,
                 {"node-a": 100, "node-b": 60, "node-x": 40, "node-y": 0},
                 id="two Constraints on zone and node, with different labelSelectors, some nodes have 0 pods"),
    pytest.param(FOO_ZONE_BAR_HOST, ZONE_ABXY[:3],
                 [ep("p-a1", "node-a", foo=""), ep("p-b1", "node-b", foo="", bar=""), ep("p-y1", "node-y", foo=""),
                  ep("p-y2", "node-y", bar="")], ZONE_ABXY[3:], None,
                 {"node-a": 50, "node-b": 25, "node-x": 100},
                 id="two Constraints on zone and node, with different labelSelectors, 3 out of 4 nodes are candidates"),
    pytest.param(FOO_HOST, [hn("node-a"), hn("node-b")],
                 [ep("p-a1", "node-a", "ns1", foo=""), *foo_pods("a1 b2")], [], None, {"node-a": 100, "node-b": 33},
                 id="existing pods in a different namespace do not count"),
    pytest.param(FOO_HOST, [hn("node-a"), hn("node-b")],
                 [ep("p-a", "node-a", terminating=True, foo=""), ep("p-b", "node-b", foo="")], [], None,
                 {"node-a": 100, "node-b": 0}, id="terminating Pods should be excluded"),
    pytest.param(pod(labels={"foo": ""}, constraints=[sc(1, "node", selector=FOO)], node_selector={"foo": ""}),
                 NODE_ABC, ABC_2_1_1, [], None, {"node-a": 0, "node-b": 33, "node-c": 100},
                 id="NodeAffinityPolicy honoed with labelSelectors"),
    pytest.param(pod(labels={"foo": ""}, constraints=[sc(1, "node", selector=FOO, affinity_policy="Ignore")],
                     node_selector={"foo": ""}),
                 NODE_ABC, ABC_2_1_1, [], None, {"node-a": 66, "node-b": 100, "node-c": 100},
                 id="NodeAffinityPolicy ignored with labelSelectors"),
    pytest.param(pod(labels={"foo": ""}, constraints=[sc(1, "node", selector=FOO)], affinity_in=("foo", [""])),
                 NODE_ABC, ABC_2_1_1, [], None, {"node-a": 0, "node-b": 33, "node-c": 100},
                 id="NodeAffinityPolicy honoed with nodeAffinity"),
    pytest.param(pod(labels={"foo": ""}, constraints=[sc(1, "node", selector=FOO, affinity_policy="Ignore")],
                     affinity_in=("foo", [""])),
                 NODE_ABC, ABC_2_1_1, [], None, {"node-a": 66, "node-b": 100, "node-c": 100},
                 id="NodeAffinityPolicy ignored with nodeAffinity"),
    pytest.param(pod(labels={"foo": ""}, constraints=[sc(1, "node", selector=FOO, taints_policy="Honor")]),
                 NODE_ABC_TAINTED, ABC_2_1_1, [], None, {"node-a": 0, "node-b": 33, "node-c": 100},
                 id="NodeTaintsPolicy honored"),
    pytest.param(pod(labels={"foo": ""}, constraints=[sc(1, "node", selector=FOO)]),
                 NODE_ABC_TAINTED, ABC_2_1_1, [], None, {"node-a": 66, "node-b": 100, "node-c": 100},
                 id="NodeTaintsPolicy ignored"),
    pytest.param(pod(labels={"foo": "", "bar": ""},
                     constraints=[sc(1, "zone", selector={}, match_label_keys=["foo"]), sc(1, HOST, selector={}, match_label_keys=["bar"])]),
                 ZONE_ABCD, MIXED_PODS, [], None, s4(60, 20, 60, 100),
                 id="matchLabelKeys ANDed with LabelSelector when LabelSelector is empty"),
    pytest.param(pod(labels={"foo": "", "bar": "", "baz": ""},
                     constraints=[sc(1, "zone", selector=FOO), sc(1, HOST, selector=BAR, match_label_keys=["baz"])]),
                 ZONE_ABCD,
                 [ep("p-a1", "node-a", foo=""), ep("p-b1", "node-b", foo="", bar="", baz=""), ep("p-c1", "node-c", foo=""),
                  ep("p-c2", "node-c", bar=""), ep("p-d3", "node-c", bar="", baz="")], [], None,
                 s4(60, 20, 60, 100), id="matchLabelKeys ANDed with LabelSelector when LabelSelector isn't empty"),
]  # fmt: skip


@pytest.mark.parametrize(("p", "nodes", "existing", "failed", "workloads", "want"), SCORE_CASES)
def test_pod_topology_spread_score(
    p: dict, nodes: list, existing: list, failed: list, workloads: list | None, want: dict
) -> None:
    assert scores_of(p, nodes, existing, failed, workloads=workloads) == want


def test_min_domains_has_no_effect_when_schedule_anyway() -> None:
    """Upstream builds this pod directly (the API server would reject minDomains with ScheduleAnyway)."""
    p = Pod.parse(pod(labels={"foo": ""}, constraints=[sc(2, "node", selector=FOO)]))
    p = dataclasses.replace(
        p, spread_constraints=(dataclasses.replace(p.spread_constraints[0], min_domains=10),)
    )
    nodes = [node(n, {"node": n}) for n in ("node-a", "node-b", "node-c")]
    assert scores_of(p, nodes, foo_pods("a2 b2 c1")) == {"node-a": 75, "node-b": 75, "node-c": 100}


# -- raw scores, normalization and helpers ---------------------------------------------------


def test_raw_scores_follow_upstream_float_formula() -> None:
    """Score = round(cnt * log(size + 2) + maxSkew - 1); hostname size = filtered nodes."""
    snap = build_snapshot(H4, foo_pods("a2 b1 d3"))
    raw, norm = run_score(PodTopologySpread(LIST_ARGS), FOO_HOST, snap)
    w = math.log(4 + 2)
    assert raw == [int(math.floor(c * w + 0.5)) for c in (2, 1, 0, 3)]
    assert norm == [20, 60, 100, 0]


def test_ignored_nodes_score_zero_and_are_left_out_of_min_max() -> None:
    snap = build_snapshot([hn("node-a"), node("node-b", {"n": "b"}), hn("node-x")], foo_pods("a4 x1"))
    raw, norm = run_score(PodTopologySpread(LIST_ARGS), FOO_HOST, snap)
    assert raw[1] == 0 and norm[1] == 0
    # min over non-ignored is node-x (1 pod), not node-b's 0.
    assert norm == [100 * (raw[0] + raw[2] - raw[0]) // raw[0], 0, 100]


def test_system_defaults_nodes_without_zone_are_a_domain() -> None:
    """System defaulting: nodes lacking the zone label share the "" domain and are not ignored."""
    nodes = [hn("node-a", **{ZONE: "z1"}), hn("node-b", **{ZONE: "z1"}), hn("node-c"), hn("node-d")]
    existing = [
        ep("p-a1", "node-a", app="web"),
        ep("p-c1", "node-c", app="web"),
        ep("p-d1", "node-d", app="web"),
    ]
    workloads = [("Service", "default", LabelSelector.from_match_labels({"app": "web"}))]
    snap = build_snapshot(nodes, existing)
    snap.workload_selectors = workloads
    plugin = PodTopologySpread()
    state = CycleState()
    p = Pod.parse(pod(labels={"app": "web"}))
    assert plugin.pre_score(state, p, snap, np.arange(4, dtype=np.int32)) is None
    st = state.read(PRE_SCORE_STATE_KEY)
    assert not st.ignored.any()
    assert st.topology_value_counts(1, snap.labels.values_of(ZONE)) == {"z1": 1, "": 2}
    raw = plugin.score(state, p, snap, np.arange(4, dtype=np.int32)).tolist()
    wh, wz = math.log(4 + 2), math.log(2 + 2)
    want = [
        math.floor(1 * wh + 2 + 1 * wz + 4 + 0.5),
        math.floor(0 * wh + 2 + 1 * wz + 4 + 0.5),
        math.floor(1 * wh + 2 + 0.5),  # no zone label: the zone constraint does not apply
        math.floor(1 * wh + 2 + 0.5),
    ]
    assert raw == want
    # With List defaulting the same constraints require both keys: zone-less nodes are ignored.
    args = {
        "defaultingType": "List",
        "defaultConstraints": [
            {"maxSkew": 3, "topologyKey": HOST, "whenUnsatisfiable": "ScheduleAnyway"},
            {"maxSkew": 5, "topologyKey": ZONE, "whenUnsatisfiable": "ScheduleAnyway"},
        ],
    }
    plugin = PodTopologySpread(args)
    state = CycleState()
    assert plugin.pre_score(state, p, snap, np.arange(4, dtype=np.int32)) is None
    st = state.read(PRE_SCORE_STATE_KEY)
    assert st.ignored.tolist() == [False, False, True, True]
    assert st.weights == [math.log(2 + 2), math.log(1 + 2)]


def test_pod_without_selector_for_defaults_skips() -> None:
    """System defaults with no Service/controller selecting the pod: PreScore skips."""
    st, _, _ = pre_score(pod(labels={"app": "web"}), H4, SYSTEM_ARGS)
    assert st is not None and st.code == Code.Skip


def test_score_without_pre_score_is_an_error() -> None:
    snap = build_snapshot(H4)
    with pytest.raises(PluginError, match="PreScorePodTopologySpread"):
        PodTopologySpread(LIST_ARGS).score(
            CycleState(), Pod.parse(FOO_HOST), snap, np.arange(4, dtype=np.int32)
        )


def test_round_half_away_from_zero() -> None:
    from kubesched.plugins.podtopologyspread.scoring import _round_half_away

    x = np.array([0.0, 0.49999999999999994, 0.5, 1.5, 2.5, 2.4999999, 7.0])
    assert _round_half_away(x).tolist() == [0.0, 0.0, 1.0, 2.0, 3.0, 2.0, 7.0]


# -- differential test: vectorised PreScore/Score/Normalize vs a literal port of scoring.go ---


def _ref_inclusion(c: Any, p: Pod, n: Any) -> bool:
    if c.node_affinity_policy == "Honor":
        if any(n.labels.get(k) != v for k, v in p.node_selector.items()):
            return False
        na = p.node_affinity
        if na is not None and na.required is not None and not na.required.matches(n.labels, n.name):
            return False
    if c.node_taints_policy == "Honor":
        if first_untolerated(n.taints, p.tolerations, ("NoSchedule", "NoExecute")) is not None:
            return False
    return True


def _ref_count(pods: list[Pod], c: Any, ns: str) -> int:
    if c.selector is not None and c.selector.is_empty:
        return 0  # v1.36: countPodsMatchSelector returns 0 for an empty selector
    return sum(
        1
        for q in pods
        if not q.deleting and q.namespace == ns and c.selector is not None and c.selector.matches(q.labels)
    )


def _ref_scores(plugin: PodTopologySpread, p: Pod, snap: Any, rows: list[int]) -> list[int] | None:
    constraints = constraints_for(p, "ScheduleAnyway", plugin.default_constraints, snap)
    if not constraints or snap.n == 0:
        return None
    require_all = bool(p.spread_constraints) or not plugin.system_defaulted
    has_all = [all(c.topology_key in n.labels for c in constraints) for n in snap.nodes]
    ignored: set[int] = set()
    counts: list[dict[str, int]] = [{} for _ in constraints]
    for r in rows:
        if require_all and not has_all[r]:
            ignored.add(r)
            continue
        for i, c in enumerate(constraints):
            if c.topology_key != HOST:
                counts[i].setdefault(snap.nodes[r].labels.get(c.topology_key, ""), 0)
    weights = [
        math.log((len(rows) - len(ignored) if c.topology_key == HOST else len(counts[i])) + 2)
        for i, c in enumerate(constraints)
    ]
    for r, n in enumerate(snap.nodes):
        if require_all and not has_all[r]:
            continue
        for i, c in enumerate(constraints):
            if not _ref_inclusion(c, p, n):
                continue
            v = n.labels.get(c.topology_key, "")
            if c.topology_key == HOST or v not in counts[i]:
                continue
            counts[i][v] += _ref_count(list(snap.pods_on[r].values()), c, p.namespace)
    raw = []
    for r in rows:
        if r in ignored:
            raw.append(0)
            continue
        score = 0.0
        n = snap.nodes[r]
        for i, c in enumerate(constraints):
            if c.topology_key not in n.labels:
                continue
            if c.topology_key == HOST:
                cnt = _ref_count(list(snap.pods_on[r].values()), c, p.namespace)
            else:
                cnt = counts[i][n.labels[c.topology_key]]
            score += float(cnt) * weights[i] + float(c.max_skew - 1)
        raw.append(int(math.floor(score)) + (1 if score - math.floor(score) >= 0.5 else 0))
    valid = [s for r, s in zip(rows, raw, strict=True) if r not in ignored]
    min_score = min(valid) if valid else 2**63 - 1
    max_score = max([0, *valid])
    out = []
    for r, s in zip(rows, raw, strict=True):
        if r in ignored:
            out.append(0)
        elif max_score == 0:
            out.append(100)
        else:
            out.append(100 * (max_score + min_score - s) // max_score)
    return out


_KEYS = ("zone", "rack", HOST)
_SELECTORS = (FOO, BAR, None, {}, {"matchLabels": {"foo": "x"}})


@hs.composite
def _cluster(draw: Any) -> tuple[dict, list[dict], list[dict], list[int], dict]:
    nodes = []
    n_nodes = draw(hs.integers(1, 7))
    for k in range(n_nodes):
        labels = {}
        for key, values in (
            ("zone", ["z1", "z2", ""]),
            ("rack", ["r1", "r2"]),
            (HOST, [f"n{k}"]),
            (ZONE, ["a", "b", ""]),
        ):
            if draw(hs.integers(0, 3)) > 0:
                labels[key] = draw(hs.sampled_from(values))
        if draw(hs.booleans()):
            labels["disk"] = "ssd"
        nodes.append(node(f"n{k}", labels, draw(hs.booleans())))
    existing = []
    for j in range(draw(hs.integers(0, 12))):
        labels = {k: draw(hs.sampled_from(["", "x"])) for k in ("foo", "bar") if draw(hs.booleans())}
        existing.append(
            pod(
                f"e{j}",
                labels,
                node_name=f"n{draw(hs.integers(0, n_nodes - 1))}",
                namespace=draw(hs.sampled_from(["default", "default", "other"])),
                terminating=draw(hs.integers(0, 5)) == 0,
            )
        )
    constraints = []
    if draw(hs.integers(0, 3)) > 0:
        for _ in range(draw(hs.integers(1, 3))):
            constraints.append(
                sc(
                    draw(hs.integers(1, 5)),
                    draw(hs.sampled_from(_KEYS)),
                    draw(hs.sampled_from(["ScheduleAnyway", "ScheduleAnyway", "DoNotSchedule"])),
                    draw(hs.sampled_from(_SELECTORS)),
                    affinity_policy=draw(hs.sampled_from([None, "Honor", "Ignore"])),
                    taints_policy=draw(hs.sampled_from([None, "Honor", "Ignore"])),
                )
            )
    incoming = pod(
        labels={k: "" for k in ("foo", "bar") if draw(hs.booleans())},
        constraints=constraints,
        node_selector={"disk": "ssd"} if draw(hs.booleans()) else None,
        affinity_in=("zone", ["z1"]) if draw(hs.booleans()) else None,
    )
    rows = sorted(draw(hs.sets(hs.integers(0, n_nodes - 1), min_size=1)))
    args = draw(
        hs.sampled_from(
            [
                SYSTEM_ARGS,
                LIST_ARGS,
                {
                    "defaultingType": "List",
                    "defaultConstraints": [
                        {"maxSkew": 2, "topologyKey": "zone", "whenUnsatisfiable": "ScheduleAnyway"},
                        {"maxSkew": 1, "topologyKey": HOST, "whenUnsatisfiable": "ScheduleAnyway"},
                    ],
                },
            ]
        )
    )
    return incoming, nodes, existing, rows, args


@settings(max_examples=300, deadline=None)
@given(_cluster())
def test_scores_match_literal_port(case: tuple[dict, list[dict], list[dict], list[int], dict]) -> None:
    incoming, nodes, existing, rows, args = case
    snap = build_snapshot(nodes, existing)
    snap.workload_selectors = [("Service", "default", LabelSelector.parse(FOO, ""))]
    p = Pod.parse(incoming)
    plugin = PodTopologySpread(args)
    state = CycleState()
    want = _ref_scores(plugin, p, snap, rows)
    status = plugin.pre_score(state, p, snap, np.asarray(rows, np.int32))
    if want is None:
        assert status is not None and status.code == Code.Skip
        return
    assert status is None
    raw = plugin.score(state, p, snap, np.asarray(rows, np.int32))
    assert plugin.normalize(state, p, raw).tolist() == want

"""PodTopologySpread PreFilter/Filter: ports of upstream filtering_test.go tables (v1.36).

Upstream tables TestPreFilterState, TestPreFilterStateAddPod, TestPreFilterStateRemovePod,
TestSingleConstraint, TestMultipleConstraints and TestPreFilterDisabled. Cases that only exist
to exercise feature gates which are locked on in 1.36 (NodeInclusionPolicy, MatchLabelKeys,
MinDomains "disabled") are dropped; their gate-on twins are kept.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as hs

from kubesched.api.objects import Pod
from kubesched.api.selectors import LabelSelector
from kubesched.api.taints import first_untolerated
from kubesched.errors import InputError
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.status import Code, PluginError
from kubesched.plugins.podtopologyspread import PodTopologySpread
from kubesched.plugins.podtopologyspread.common import PRE_FILTER_STATE_KEY
from kubesched.plugins.podtopologyspread.filtering import PreFilterState
from kubesched.testing import build_snapshot, make_node, make_pod, run_filter, spread_constraint

OK = Code.Success
UNSCHED = Code.Unschedulable
UNRESOLVABLE = Code.UnschedulableAndUnresolvable
REASON = "node(s) didn't match pod topology spread constraints"
REASON_MISSING = "node(s) didn't match pod topology spread constraints (missing required label)"

FOO = {"matchExpressions": [{"key": "foo", "operator": "Exists"}]}
BAR = {"matchExpressions": [{"key": "bar", "operator": "Exists"}]}
TAINTS = [{"key": "node.kubernetes.io/unschedulable", "value": "", "effect": "NoSchedule"}]
LIST_ARGS = {"defaultingType": "List"}


# -- builders (st.MakeNode / st.MakePod equivalents) -----------------------------------------


def node(name: str, taints: bool = False, **labels: str) -> dict:
    """A node with exactly ``labels`` (no implicit hostname label)."""
    d = make_node(name, taints=TAINTS if taints else None)
    d["metadata"]["labels"] = dict(labels)
    return d


def zn(name: str, zone: str, **extra: Any) -> dict:
    """A node labelled zone=<zone>, node=<name>."""
    return node(name, zone=zone, node=name, **extra)


STD4 = [zn("node-a", "zone1"), zn("node-b", "zone1"), zn("node-x", "zone2"), zn("node-y", "zone2")]


def sc(
    skew: int,
    key: str,
    when: str = "DoNotSchedule",
    selector: dict | None = None,
    min_domains: int | None = None,
    affinity_policy: str | None = None,
    taints_policy: str | None = None,
    match_label_keys: list[str] | None = None,
) -> dict:
    """st.SpreadConstraint(maxSkew, key, when, selector, minDomains, affinityPolicy, taintsPolicy, mlk)."""
    return spread_constraint(skew, key, when, selector, min_domains, affinity_policy, taints_policy, match_label_keys)


def pod(
    name: str = "p",
    labels: dict[str, str] | None = None,
    constraints: list[dict] | None = None,
    *,
    node_name: str | None = None,
    namespace: str = "default",
    node_selector: dict[str, str] | None = None,
    affinity_in: tuple[str, list[str]] | None = None,
    affinity_not_in: tuple[str, list[str]] | None = None,
    tolerate: str | None = None,
    terminating: bool = False,
    owner: tuple[str, str] | None = None,
) -> dict:
    spec: dict[str, Any] = {}
    if constraints:
        spec["topologySpreadConstraints"] = constraints
    if node_selector is not None:
        spec["nodeSelector"] = node_selector
    if affinity_in or affinity_not_in:
        key, values = affinity_in or affinity_not_in  # type: ignore[misc]
        op = "In" if affinity_in else "NotIn"
        spec["affinity"] = {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [
                        {"matchExpressions": [{"key": key, "operator": op, "values": values}]}
                    ]
                }
            }
        }
    if tolerate:
        spec["tolerations"] = [{"key": tolerate, "operator": "Exists", "effect": "NoSchedule"}]
    d = make_pod(name, namespace=namespace, labels=labels or {}, node=node_name, spec=spec)
    if terminating:
        d["metadata"]["deletionTimestamp"] = "2024-01-01T00:00:00Z"
    if owner:
        d["metadata"]["ownerReferences"] = [{"kind": owner[0], "name": owner[1], "controller": True}]
    return d


def ep(
    name: str, node_name: str, namespace: str = "default", terminating: bool = False, **labels: str
) -> dict:
    """An existing (assigned) pod."""
    return pod(name, labels, node_name=node_name, namespace=namespace, terminating=terminating)


def foo_pods(spec: str) -> list[dict]:
    """'a2 b1 y3' -> pods p-a1, p-a2 on node-a, p-b1 on node-b, p-y1..3 on node-y, all labelled foo."""
    out = []
    for part in spec.split():
        suffix, n = part[0], int(part[1:])
        out += [ep(f"p-{suffix}{i}", f"node-{suffix}", foo="") for i in range(1, n + 1)]
    return out


INCOMING_FOO_ZONE = pod(labels={"foo": ""}, constraints=[sc(1, "zone", selector=FOO)])
INCOMING_FOO_ZONE_NODE = pod(
    labels={"foo": ""}, constraints=[sc(1, "zone", selector=FOO), sc(1, "node", selector=FOO)]
)
INCOMING_FOO_ZONE_BAR_NODE = pod(
    labels={"foo": "", "bar": ""}, constraints=[sc(1, "zone", selector=FOO), sc(1, "node", selector=BAR)]
)


def run_pre_filter(
    p: dict, nodes: list[dict], existing: list[dict], args: dict | None = None, workloads: list | None = None
) -> tuple[Any, CycleState, Any]:
    snap = build_snapshot(nodes, existing)
    if workloads:
        snap.workload_selectors = workloads
    plugin = PodTopologySpread(LIST_ARGS if args is None else args)
    state = CycleState()
    res = plugin.pre_filter(state, Pod.parse(p), snap)
    return res, state, snap


def state_view(st: PreFilterState, snap: Any) -> list[tuple[dict[str, int], int, int]]:
    """Per constraint: (TpValueToMatchNum, min match num (critical path 0), number of domains)."""
    out = []
    for i, c in enumerate(st.constraints):
        values = snap.labels.values_of(c.topology_key)
        present = st.present[i]
        mn = int(st.counts[i][present].min()) if present.any() else 2**31 - 1
        out.append((st.match_num(i, values), mn, st.domains_num(i)))
    return out


# -- TestPreFilterState ------------------------------------------------------------------------

ZONE_2x2_PODS = foo_pods("a2 b1 y2")

PRE_FILTER_STATE_CASES = [
    pytest.param(
        pod(labels={"foo": ""}, constraints=[sc(5, "zone", selector={"matchLabels": {"foo": "bar"}})]),
        STD4,
        [],
        [({"zone1": 0, "zone2": 0}, 0, 2)],
        id="clean cluster with one spreadConstraint",
    ),
    pytest.param(
        INCOMING_FOO_ZONE,
        STD4,
        ZONE_2x2_PODS,
        [({"zone1": 3, "zone2": 2}, 2, 2)],
        id="normal case with one spreadConstraint",
    ),
    pytest.param(
        pod(labels={"foo": ""}, constraints=[sc(1, "zone")]),
        STD4,
        ZONE_2x2_PODS,
        [({"zone1": 0, "zone2": 0}, 0, 2)],
        id="normal case with null label selector",
    ),
    pytest.param(
        INCOMING_FOO_ZONE,
        [*STD4, zn("node-o", "zone3"), zn("node-p", "zone3")],
        ZONE_2x2_PODS,
        [({"zone1": 3, "zone2": 2, "zone3": 0}, 0, 3)],
        id="normal case with one spreadConstraint, on a 3-zone cluster",
    ),
    pytest.param(
        INCOMING_FOO_ZONE,
        STD4,
        [
            ep("p-a1", "node-a", foo=""),
            ep("p-a2", "node-a", namespace="ns1", foo=""),
            ep("p-b1", "node-b", foo=""),
            ep("p-y1", "node-y", namespace="ns2", foo=""),
            ep("p-y2", "node-y", foo=""),
        ],
        [({"zone1": 2, "zone2": 1}, 1, 2)],
        id="namespace mismatch doesn't count",
    ),
    pytest.param(
        INCOMING_FOO_ZONE_NODE,
        STD4,
        foo_pods("a2 b1 y4"),
        [
            ({"zone1": 3, "zone2": 4}, 3, 2),
            ({"node-a": 2, "node-b": 1, "node-x": 0, "node-y": 4}, 0, 4),
        ],
        id="normal case with two spreadConstraints",
    ),
    pytest.param(
        pod(
            labels={"foo": ""},
            constraints=[
                sc(1, "zone", "ScheduleAnyway", FOO),
                sc(1, "zone", selector=FOO),
                sc(1, "node", "ScheduleAnyway", FOO),
                sc(1, "node", selector=FOO),
            ],
        ),
        [zn("node-a", "zone1"), zn("node-b", "zone1"), zn("node-y", "zone2")],
        foo_pods("a2 b1 y4"),
        [({"zone1": 3, "zone2": 4}, 3, 2), ({"node-a": 2, "node-b": 1, "node-y": 4}, 1, 3)],
        id="soft spreadConstraints should be bypassed",
    ),
    pytest.param(
        INCOMING_FOO_ZONE_BAR_NODE,
        [zn("node-a", "zone1"), zn("node-b", "zone1"), zn("node-y", "zone2")],
        [ep("p-a", "node-a", foo=""), ep("p-b", "node-b", bar="")],
        [({"zone1": 1, "zone2": 0}, 0, 2), ({"node-a": 0, "node-b": 1, "node-y": 0}, 0, 3)],
        id="different labelSelectors - simple version",
    ),
    pytest.param(
        INCOMING_FOO_ZONE_BAR_NODE,
        [zn("node-a", "zone1"), zn("node-b", "zone1"), zn("node-y", "zone2")],
        [
            ep("p-a1", "node-a", foo=""),
            ep("p-a2", "node-a", foo="", bar=""),
            ep("p-b1", "node-b", foo=""),
            ep("p-y1", "node-y", foo=""),
            ep("p-y2", "node-y", foo="", bar=""),
            ep("p-y3", "node-y", foo=""),
            ep("p-y4", "node-y", foo="", bar=""),
        ],
        [({"zone1": 3, "zone2": 4}, 3, 2), ({"node-a": 1, "node-b": 0, "node-y": 2}, 0, 3)],
        id="different labelSelectors - complex pods",
    ),
    pytest.param(
        pod(
            labels={"foo": ""},
            constraints=[sc(1, "zone", selector=FOO), sc(1, "node", selector=FOO)],
            affinity_not_in=("node", ["node-x"]),
        ),
        STD4,
        foo_pods("a2 b1 y4"),
        [({"zone1": 3, "zone2": 4}, 3, 2), ({"node-a": 2, "node-b": 1, "node-y": 4}, 1, 3)],
        id="two spreadConstraints, and with podAffinity",
    ),
    pytest.param(
        INCOMING_FOO_ZONE_NODE,
        STD4,
        foo_pods("a2 b1 y4"),
        [
            ({"zone1": 3, "zone2": 4}, 3, 2),
            ({"node-a": 2, "node-b": 1, "node-x": 0, "node-y": 4}, 0, 4),
        ],
        id="TpKeyToDomainsNum is calculated when MinDomains is enabled",
    ),
    pytest.param(
        pod(labels={"foo": ""}, constraints=[sc(1, "node", selector=BAR)], node_selector={"foo": ""}),
        [
            node("node-a", node="node-a", foo=""),
            node("node-b", node="node-b", foo=""),
            node("node-c", node="node-c", bar=""),
        ],
        [
            ep("p-a", "node-a", bar=""),
            ep("p-b", "node-b", bar=""),
            ep("p-c", "node-b", bar=""),
            ep("p-d", "node-c"),
        ],
        [({"node-a": 1, "node-b": 2}, 1, 2)],
        id="NodeAffinityPolicy honored with labelSelectors",
    ),
    pytest.param(
        pod(
            labels={"foo": ""},
            constraints=[sc(1, "node", selector=BAR, affinity_policy="Ignore")],
            node_selector={"foo": ""},
        ),
        [
            node("node-a", node="node-a", foo=""),
            node("node-b", node="node-b", foo=""),
            node("node-c", node="node-c", bar=""),
        ],
        [
            ep("p-a", "node-a", bar=""),
            ep("p-b", "node-b", bar=""),
            ep("p-c", "node-b", bar=""),
            ep("p-d", "node-c"),
        ],
        [({"node-a": 1, "node-b": 2, "node-c": 0}, 0, 3)],
        id="NodeAffinityPolicy ignored with labelSelectors",
    ),
    pytest.param(
        pod(labels={"foo": ""}, constraints=[sc(1, "node", selector=BAR)], affinity_in=("foo", [""])),
        [
            node("node-a", node="node-a", foo=""),
            node("node-b", node="node-b", foo=""),
            node("node-c", node="node-c", bar=""),
        ],
        [
            ep("p-a", "node-a", bar=""),
            ep("p-c", "node-b", bar=""),
            ep("p-d", "node-b", bar=""),
            ep("p-e", "node-c"),
        ],
        [({"node-a": 1, "node-b": 2}, 1, 2)],
        id="NodeAffinityPolicy honored with nodeAffinity",
    ),
    pytest.param(
        pod(
            labels={"foo": ""},
            constraints=[sc(1, "node", selector=BAR, affinity_policy="Ignore")],
            affinity_in=("foo", [""]),
        ),
        [
            node("node-a", node="node-a", foo=""),
            node("node-b", node="node-b", foo=""),
            node("node-c", node="node-c", bar=""),
        ],
        [
            ep("p-a", "node-a", bar=""),
            ep("p-b", "node-b", bar=""),
            ep("p-c", "node-b", bar=""),
            ep("p-d", "node-c"),
        ],
        [({"node-a": 1, "node-b": 2, "node-c": 0}, 0, 3)],
        id="NodeAffinityPolicy ignored with nodeAffinity",
    ),
    pytest.param(
        pod(labels={"foo": ""}, constraints=[sc(1, "node", selector=BAR)]),
        [
            node("node-a", node="node-a"),
            node("node-b", node="node-b"),
            node("node-c", True, node="node-c", bar=""),
        ],
        [
            ep("p-a", "node-a", bar=""),
            ep("p-b", "node-b", bar=""),
            ep("p-c", "node-b", bar=""),
            ep("p-d", "node-c"),
        ],
        [({"node-a": 1, "node-b": 2, "node-c": 0}, 0, 3)],
        id="NodeTaintsPolicy ignored",
    ),
    pytest.param(
        pod(labels={"foo": ""}, constraints=[sc(1, "node", selector=BAR, taints_policy="Honor")]),
        [
            node("node-a", node="node-a"),
            node("node-b", node="node-b"),
            node("node-c", True, node="node-c", bar=""),
        ],
        [
            ep("p-a", "node-a", bar=""),
            ep("p-b", "node-b", bar=""),
            ep("p-c", "node-b", bar=""),
            ep("p-d", "node-c"),
        ],
        [({"node-a": 1, "node-b": 2}, 1, 2)],
        id="NodeTaintsPolicy honored",
    ),
    pytest.param(
        pod(
            labels={"foo": ""},
            constraints=[sc(1, "node", selector=BAR, taints_policy="Honor")],
            tolerate="node.kubernetes.io/unschedulable",
        ),
        [
            node("node-a", node="node-a"),
            node("node-b", node="node-b"),
            node("node-c", True, node="node-c", bar=""),
        ],
        [
            ep("p-a", "node-a", bar=""),
            ep("p-b", "node-b", bar=""),
            ep("p-c", "node-b", bar=""),
            ep("p-d", "node-c"),
        ],
        [({"node-a": 1, "node-b": 2, "node-c": 0}, 0, 3)],
        id="NodeTaintsPolicy honored with tolerated taints",
    ),
    pytest.param(
        pod(
            labels={"foo": ""},
            constraints=[sc(1, "zone", selector=FOO), sc(1, "node", selector=FOO, affinity_policy="Ignore")],
            node_selector={"foo": ""},
        ),
        [zn("node-a", "zone1", foo=""), zn("node-b", "zone1"), zn("node-x", "zone2", foo="")],
        [ep("p-b1", "node-b", foo=""), ep("p-b2", "node-b", foo=""), ep("p-x1", "node-x", foo="")],
        [({"zone1": 0, "zone2": 1}, 0, 2), ({"node-a": 0, "node-b": 2, "node-x": 1}, 0, 3)],
        id="two node inclusion Constraints, zone: honor/ignore, node: ignore/ignore",
    ),
    pytest.param(
        pod(
            labels={"foo": ""},
            constraints=[sc(1, "zone", selector=FOO, taints_policy="Honor"), sc(1, "node", selector=FOO)],
        ),
        [zn("node-a", "zone1", foo=""), zn("node-b", "zone1", taints=True), zn("node-x", "zone2", foo="")],
        [ep("p-b1", "node-b", foo=""), ep("p-b2", "node-b", foo=""), ep("p-x1", "node-x", foo="")],
        [({"zone1": 0, "zone2": 1}, 0, 2), ({"node-a": 0, "node-b": 2, "node-x": 1}, 0, 3)],
        id="two node inclusion Constraints, zone: honor/honor, node: honor/ignore",
    ),
    pytest.param(
        pod(
            labels={"foo": ""},
            constraints=[sc(1, "zone", selector=FOO), sc(1, "node", selector=FOO)],
            node_selector={"foo": ""},
        ),
        [
            zn("node-a", "zone1"),
            zn("node-b", "zone1", taints=True, foo=""),
            zn("node-x", "zone2", foo=""),
            zn("node-y", "zone2"),
        ],
        [
            ep("p-a1", "node-a", foo=""),
            ep("p-a2", "node-a", foo=""),
            ep("p-x1", "node-x", foo=""),
            ep("p-y1", "node-y", foo=""),
        ],
        [({"zone1": 0, "zone2": 1}, 0, 2), ({"node-b": 0, "node-x": 1}, 0, 2)],
        id="two node inclusion Constraints, zone: honor/ignore, node: honor/ignore",
    ),
    pytest.param(
        pod(
            labels={"foo": ""},
            constraints=[
                sc(1, "zone", selector=FOO, affinity_policy="Ignore"),
                sc(1, "node", selector=FOO, taints_policy="Honor"),
            ],
            node_selector={"foo": ""},
        ),
        [
            zn("node-a", "zone1"),
            zn("node-b", "zone1", taints=True, foo=""),
            zn("node-x", "zone2", foo=""),
            zn("node-y", "zone2", foo=""),
        ],
        [
            ep("p-a1", "node-a", foo=""),
            ep("p-a2", "node-a", foo=""),
            ep("p-x1", "node-x", foo=""),
            ep("p-x2", "node-x", foo=""),
            ep("p-y1", "node-y", foo=""),
        ],
        [({"zone1": 2, "zone2": 3}, 2, 2), ({"node-x": 2, "node-y": 1}, 1, 2)],
        id="two node inclusion Constraints, zone: ignore/ignore, node: honor/honor",
    ),
    pytest.param(
        pod(
            labels={"foo": "", "bar": "a"},
            constraints=[sc(1, "zone", selector=FOO, match_label_keys=["bar"])],
        ),
        STD4,
        [
            ep("p-a1", "node-a", foo=""),
            ep("p-a2", "node-a", foo="", bar="a"),
            ep("p-b1", "node-b", foo=""),
            ep("p-y1", "node-y", foo="", bar="a"),
            ep("p-y2", "node-y", bar=""),
        ],
        [({"zone1": 1, "zone2": 1}, 1, 2)],
        id="matchLabelKeys ANDed with LabelSelector when LabelSelector isn't empty",
    ),
    pytest.param(
        pod(labels={"foo": "a"}, constraints=[sc(1, "zone", selector={}, match_label_keys=["foo"])]),
        STD4,
        [ep(n, f"node-{n[2]}", foo="a") for n in ("p-a1", "p-a2", "p-b1", "p-y1", "p-y2")],
        [({"zone1": 3, "zone2": 2}, 2, 2)],
        id="matchLabelKeys ANDed with LabelSelector when LabelSelector is empty",
    ),
    pytest.param(
        pod(labels={"foo": ""}, constraints=[sc(1, "zone", match_label_keys=["bar"])]),
        STD4,
        [ep(n, f"node-{n[2]}", foo="a") for n in ("p-a1", "p-a2", "p-b1", "p-y1", "p-y2")],
        [({"zone1": 0, "zone2": 0}, 0, 2)],
        id="key in matchLabelKeys is ignored when LabelSelector is nil when feature gate enabled",
    ),
    pytest.param(
        pod(labels={"foo": ""}, constraints=[sc(1, "zone", selector=FOO, match_label_keys=["bar"])]),
        STD4,
        [ep(n, f"node-{n[2]}", foo="a") for n in ("p-a1", "p-a2", "p-b1", "p-y1", "p-y2")],
        [({"zone1": 3, "zone2": 2}, 2, 2)],
        id="key in matchLabelKeys is ignored when it isn't exist in pod.labels",
    ),
]


@pytest.mark.parametrize(("p", "nodes", "existing", "want"), PRE_FILTER_STATE_CASES)
def test_pre_filter_state(p: dict, nodes: list[dict], existing: list[dict], want: list) -> None:
    res, state, snap = run_pre_filter(p, nodes, existing)
    assert res is None
    st = state.read(PRE_FILTER_STATE_KEY)
    assert state_view(st, snap) == want


SERVICE_FOO_BAR = [("Service", "default", LabelSelector.from_match_labels({"foo": "bar"}))]


def test_pre_filter_default_constraints_and_a_service() -> None:
    args = {
        "defaultingType": "List",
        "defaultConstraints": [
            {"maxSkew": 3, "topologyKey": "node", "whenUnsatisfiable": "DoNotSchedule"},
            {"maxSkew": 2, "topologyKey": "node", "whenUnsatisfiable": "ScheduleAnyway"},
            {"maxSkew": 5, "topologyKey": "rack", "whenUnsatisfiable": "DoNotSchedule"},
        ],
    }
    res, state, _ = run_pre_filter(pod(labels={"foo": "bar", "baz": "kar"}), [], [], args, SERVICE_FOO_BAR)
    assert res is None
    st = state.read(PRE_FILTER_STATE_KEY)
    assert [(c.max_skew, c.topology_key) for c in st.constraints] == [(3, "node"), (5, "rack")]
    want_sel = LabelSelector.from_match_labels({"foo": "bar"})
    assert all(c.selector == want_sel for c in st.constraints)
    assert all(c.min_domains is None and c.node_affinity_policy == "Honor" for c in st.constraints)
    assert all(c.node_taints_policy == "Ignore" for c in st.constraints)
    assert [st.domains_num(i) for i in range(2)] == [0, 0]


def test_pre_filter_default_constraints_and_a_service_that_doesnt_match() -> None:
    args = {
        "defaultingType": "List",
        "defaultConstraints": [{"maxSkew": 3, "topologyKey": "node", "whenUnsatisfiable": "DoNotSchedule"}],
    }
    workloads = [("Service", "default", LabelSelector.from_match_labels({"baz": "kep"}))]
    res, _, _ = run_pre_filter(pod(labels={"foo": "bar"}), [], [], args, workloads)
    assert res.code == Code.Skip


def test_pre_filter_default_constraints_and_a_service_but_pod_has_constraints() -> None:
    args = {
        "defaultingType": "List",
        "defaultConstraints": [{"maxSkew": 2, "topologyKey": "node", "whenUnsatisfiable": "DoNotSchedule"}],
    }
    p = pod(
        labels={"foo": "bar", "baz": "tar"},
        constraints=[
            sc(1, "zone", selector={"matchLabels": {"baz": "tar"}}),
            sc(2, "planet", "ScheduleAnyway", {"matchLabels": {"fot": "rok"}}),
        ],
    )
    res, state, _ = run_pre_filter(p, [], [], args, SERVICE_FOO_BAR)
    assert res is None
    st = state.read(PRE_FILTER_STATE_KEY)
    assert [(c.max_skew, c.topology_key) for c in st.constraints] == [(1, "zone")]
    assert st.constraints[0].selector == LabelSelector.from_match_labels({"baz": "tar"})


def test_pre_filter_default_soft_constraints_and_a_service() -> None:
    args = {
        "defaultingType": "List",
        "defaultConstraints": [{"maxSkew": 2, "topologyKey": "node", "whenUnsatisfiable": "ScheduleAnyway"}],
    }
    res, _, _ = run_pre_filter(pod(labels={"foo": "bar"}), [], [], args, SERVICE_FOO_BAR)
    assert res.code == Code.Skip


def test_pre_filter_skip_if_not_specified() -> None:
    res, _, _ = run_pre_filter(pod(labels={"foo": ""}), [zn("node-a", "zone1")], [])
    assert res.code == Code.Skip


def test_pre_filter_system_defaults_skip() -> None:
    """System defaults are all ScheduleAnyway: PreFilter always skips for pods without constraints."""
    res, _, _ = run_pre_filter(pod(labels={"foo": "bar"}), STD4, [], {}, SERVICE_FOO_BAR)
    assert res.code == Code.Skip


# -- TestPreFilterStateAddPod / TestPreFilterStateRemovePod ------------------------------------

NODE_FOO = pod(labels={"foo": ""}, constraints=[sc(1, "node", selector=FOO)])
ZONE_AFF_NOT_IN = pod(
    labels={"foo": ""}, constraints=[sc(1, "zone", selector=FOO)], affinity_not_in=("foo", ["bar"])
)
AB_FOO_NODES = [
    node("node-a", zone="zone1", node="node-a", foo="bar"),
    node("node-b", zone="zone2", node="node-b", foo=""),
]
AB_NODES = [zn("node-a", "zone1"), zn("node-b", "zone1")]
AX_NODES = [zn("node-a", "zone1"), zn("node-x", "zone2")]
ABX_NODES = [zn("node-a", "zone1"), zn("node-b", "zone1"), zn("node-x", "zone2")]
TAINTED_A = [zn("node-a", "zone1", taints=True), zn("node-b", "zone2")]

ADD_POD_CASES = [
    pytest.param(NODE_FOO, ep("p-a1", "node-a", foo=""), [], AB_NODES, [({"node-a": 1, "node-b": 0}, 0, 2)],
                 id="node a and b both impact current min match"),
    pytest.param(NODE_FOO, ep("p-a1", "node-a", foo=""), [ep("p-b1", "node-b", foo="")], AB_NODES,
                 [({"node-a": 1, "node-b": 1}, 1, 2)], id="only node a impacts current min match"),
    pytest.param(NODE_FOO, ep("p-a1", "node-a", namespace="ns1", foo=""), [ep("p-b1", "node-b", foo="")], AB_NODES,
                 [({"node-a": 0, "node-b": 1}, 0, 2)],
                 id="add a pod in a different namespace doesn't change topologyKeyToMinPodsMap"),
    pytest.param(NODE_FOO, ep("p-b2", "node-b", foo=""), [ep("p-b1", "node-b", foo="")], AB_NODES,
                 [({"node-a": 0, "node-b": 2}, 0, 2)], id="add pod on non-critical node won't trigger re-calculation"),
    pytest.param(INCOMING_FOO_ZONE_NODE, ep("p-a1", "node-a", foo=""), [], AX_NODES,
                 [({"zone1": 1, "zone2": 0}, 0, 2), ({"node-a": 1, "node-x": 0}, 0, 2)],
                 id="node a and x both impact topologyKeyToMinPodsMap on zone and node"),
    pytest.param(INCOMING_FOO_ZONE_NODE, ep("p-a1", "node-a", foo=""), [ep("p-x1", "node-x", foo="")], AX_NODES,
                 [({"zone1": 1, "zone2": 1}, 1, 2), ({"node-a": 1, "node-x": 1}, 1, 2)],
                 id="only node a impacts topologyKeyToMinPodsMap on zone and node"),
    pytest.param(INCOMING_FOO_ZONE_NODE, ep("p-a1", "node-a", foo=""),
                 [ep("p-b1", "node-b", foo=""), ep("p-b2", "node-b", foo=""), ep("p-x1", "node-x", foo="")], ABX_NODES,
                 [({"zone1": 3, "zone2": 1}, 1, 2), ({"node-a": 1, "node-b": 2, "node-x": 1}, 1, 3)],
                 id="node a impacts topologyKeyToMinPodsMap on node, node x impacts topologyKeyToMinPodsMap on zone"),
    pytest.param(INCOMING_FOO_ZONE_BAR_NODE, ep("p-a1", "node-a", foo=""),
                 [ep("p-b1", "node-b", foo="", bar=""), ep("p-x1", "node-x", foo="", bar=""), ep("p-x2", "node-x", bar="")],
                 ABX_NODES,
                 [({"zone1": 2, "zone2": 1}, 1, 2), ({"node-a": 0, "node-b": 1, "node-x": 2}, 0, 3)],
                 id="Constraints hold different labelSelectors, node a impacts topologyKeyToMinPodsMap on zone"),
    pytest.param(INCOMING_FOO_ZONE_BAR_NODE, ep("p-a1", "node-a", foo="", bar=""),
                 [ep("p-b1", "node-b", bar=""), ep("p-x1", "node-x", foo="", bar=""), ep("p-x2", "node-x", bar="")],
                 ABX_NODES,
                 [({"zone1": 1, "zone2": 1}, 1, 2), ({"node-a": 1, "node-b": 1, "node-x": 2}, 1, 3)],
                 id="Constraints hold different labelSelectors, node a impacts topologyKeyToMinPodsMap on both zone and node"),
    pytest.param(ZONE_AFF_NOT_IN, ep("p-a1", "node-a", foo="", zone="zone1"),
                 [ep("p-a2", "node-a", foo="", zone="zone1"), ep("p-b1", "node-b", foo="", zone="zone2")], AB_FOO_NODES,
                 [({"zone2": 1}, 1, 1)],
                 id="add a pod when scheduling node affinity unmatched pod with NodeInclusionPolicy enabled"),
    pytest.param(INCOMING_FOO_ZONE, ep("p-b1", "node-b", foo="", zone="zone2"),
                 [ep("p-a1", "node-a", foo="", zone="zone1"), ep("p-b2", "node-b", foo="", zone="zone2")], AB_FOO_NODES,
                 [({"zone1": 1, "zone2": 2}, 1, 2)],
                 id="add a pod when scheduling node affinity matched pod with NodeInclusionPolicy enabled"),
    pytest.param(INCOMING_FOO_ZONE, ep("p-b1", "node-b", zone="zone2"),
                 [ep("p-a1", "node-a", foo="", zone="zone1"), ep("p-b2", "node-b", foo="", zone="zone2")], AB_FOO_NODES,
                 [({"zone1": 1, "zone2": 1}, 1, 2)],
                 id="add a label selector not matched pod when with NodeInclusionPolicy enabled"),
    pytest.param(pod(labels={"foo": ""}, constraints=[sc(1, "zone", selector=FOO)], tolerate="node.kubernetes.io/unschedulable"),
                 ep("p-b1", "node-b", foo="", zone="zone2"),
                 [ep("p-a1", "node-a", foo="", zone="zone1"), ep("p-b2", "node-b", foo="", zone="zone2")], TAINTED_A,
                 [({"zone1": 1, "zone2": 2}, 1, 2)],
                 id="add a pod when scheduling taint tolerated pod with NodeInclusionPolicy enabled"),
]  # fmt: skip


@pytest.mark.parametrize(("preemptor", "added", "existing", "nodes", "want"), ADD_POD_CASES)
def test_pre_filter_state_add_pod(
    preemptor: dict, added: dict, existing: list, nodes: list, want: list
) -> None:
    res, state, snap = run_pre_filter(preemptor, nodes, existing)
    assert res is None
    added_pod = Pod.parse(added)
    plugin = PodTopologySpread(LIST_ARGS)
    plugin.add_pod(state, Pod.parse(preemptor), added_pod, snap.row_of[added_pod.node_name], snap)
    assert state_view(state.read(PRE_FILTER_STATE_KEY), snap) == want


ZONE_4 = [zn("node-a", "zone1"), zn("node-b", "zone1"), zn("node-x", "zone2"), zn("node-y", "zone2")]

REMOVE_POD_CASES = [
    pytest.param(INCOMING_FOO_ZONE, ABX_NODES, foo_pods("a1 b1 x1"), 0, None, [({"zone1": 1, "zone2": 1}, 1, 2)],
                 id="one spreadConstraint on zone, topologyKeyToMinPodsMap unchanged"),
    pytest.param(INCOMING_FOO_ZONE, ZONE_4, foo_pods("a1 b1 x1 y1"), 0, None, [({"zone1": 1, "zone2": 2}, 1, 2)],
                 id="one spreadConstraint on node, topologyKeyToMinPodsMap changed"),
    pytest.param(INCOMING_FOO_ZONE, ZONE_4, [ep("p-a0", "node-a", bar=""), *foo_pods("a1 b1 x1 y1")], 0, None,
                 [({"zone1": 2, "zone2": 2}, 2, 2)], id="delete an irrelevant pod won't help"),
    pytest.param(INCOMING_FOO_ZONE, ZONE_4, foo_pods("a1 b1 x1 y1"), -1, ep("p-a0", "node-a", bar=""),
                 [({"zone1": 2, "zone2": 2}, 2, 2)], id="delete a non-existing pod won't help"),
    pytest.param(INCOMING_FOO_ZONE_NODE, ABX_NODES, foo_pods("a2 b1 x2"), 3, None,
                 [({"zone1": 3, "zone2": 1}, 1, 2), ({"node-a": 2, "node-b": 1, "node-x": 1}, 1, 3)],
                 id="two spreadConstraints"),
    pytest.param(ZONE_AFF_NOT_IN, AB_FOO_NODES,
                 [ep("p-a2", "node-a", foo="", zone="zone1"), ep("p-b1", "node-b", foo="", zone="zone2")],
                 -1, ep("p-a1", "node-a", foo="", zone="zone1"), [({"zone2": 1}, 1, 1)],
                 id="remove a pod when scheduling node affinity unmatched pod with NodeInclusionPolicy enabled"),
    pytest.param(INCOMING_FOO_ZONE, AB_FOO_NODES,
                 [ep("p-a1", "node-a", foo="", zone="zone1"), ep("p-b2", "node-b", foo="", zone="zone2")],
                 -1, ep("p-b1", "node-b", foo="", zone="zone2"), [({"zone1": 1, "zone2": 0}, 0, 2)],
                 id="remove a pod when scheduling node affinity matched pod with NodeInclusionPolicy enabled"),
]  # fmt: skip


@pytest.mark.parametrize(("preemptor", "nodes", "existing", "idx", "deleted", "want"), REMOVE_POD_CASES)
def test_pre_filter_state_remove_pod(
    preemptor: dict, nodes: list, existing: list, idx: int, deleted: dict | None, want: list
) -> None:
    res, state, snap = run_pre_filter(preemptor, nodes, existing)
    assert res is None
    removed = Pod.parse(existing[idx] if idx >= 0 else deleted)
    plugin = PodTopologySpread(LIST_ARGS)
    plugin.remove_pod(state, Pod.parse(preemptor), removed, snap.row_of[removed.node_name], snap)
    assert state_view(state.read(PRE_FILTER_STATE_KEY), snap) == want


def test_add_pod_then_clone_is_independent() -> None:
    """AddPod on a clone (preemption dry run) leaves the original state untouched."""
    _, state, snap = run_pre_filter(NODE_FOO, AB_NODES, [ep("p-b1", "node-b", foo="")])
    clone = state.clone()
    plugin = PodTopologySpread(LIST_ARGS)
    plugin.add_pod(
        clone, Pod.parse(NODE_FOO), Pod.parse(ep("p-a1", "node-a", foo="")), snap.row_of["node-a"], snap
    )
    assert state_view(clone.read(PRE_FILTER_STATE_KEY), snap) == [({"node-a": 1, "node-b": 1}, 1, 2)]
    assert state_view(state.read(PRE_FILTER_STATE_KEY), snap) == [({"node-a": 0, "node-b": 1}, 0, 2)]


def test_min_match_stays_exact_after_repeated_adds() -> None:
    """Domains 1/2/2: three adds (a, a, b) leave min 2 on c; the exact minimum tracks it."""
    nodes = [node(n, node=n) for n in ("node-a", "node-b", "node-c")]
    existing = [
        ep("p-a1", "node-a", foo=""),
        *[ep(f"p-{s}{i}", f"node-{s}", foo="") for s in "bc" for i in (1, 2)],
    ]
    _, state, snap = run_pre_filter(NODE_FOO, nodes, existing)
    plugin = PodTopologySpread(LIST_ARGS)
    for i, target in enumerate(("node-a", "node-a", "node-b")):
        plugin.add_pod(
            state, Pod.parse(NODE_FOO), Pod.parse(ep(f"n{i}", target, foo="")), snap.row_of[target], snap
        )
    st = state.read(PRE_FILTER_STATE_KEY)
    assert state_view(st, snap) == [({"node-a": 3, "node-b": 3, "node-c": 2}, 2, 3)]
    assert st.min_match_num(0) == 2


# -- TestSingleConstraint / TestMultipleConstraints -------------------------------------------


def codes_of(p: dict, nodes: list[dict], existing: list[dict]) -> dict[str, Code]:
    snap = build_snapshot(nodes, existing)
    statuses = run_filter(PodTopologySpread(LIST_ARGS), p, snap)
    out = {}
    for n, s in zip(snap.nodes, statuses, strict=True):
        out[n.name] = s.code
        if s.code == UNSCHED:
            assert s.reasons == (REASON,)
        elif s.code == UNRESOLVABLE:
            assert s.reasons == (REASON_MISSING,)
        else:
            assert s.reasons == ()
    return out


def w(a: Code, b: Code, x: Code, y: Code) -> dict[str, Code]:
    return {"node-a": a, "node-b": b, "node-x": x, "node-y": y}


ABC = ("node-a", "node-b", "node-c")
ABC_NODES = [node(n, node=n) for n in ABC]
ABC_221 = foo_pods("a2 b2 c1")
SPREAD_2103 = foo_pods("a2 b1 y3")
NODE_ABXY_FOO = [
    node("node-a", node="node-a", foo=""),
    node("node-b", node="node-b", foo=""),
    node("node-x", node="node-x", foo=""),
    node("node-y", node="node-y"),
]
NODE_ABXY_TAINTED = [*NODE_ABXY_FOO[:3], node("node-y", True, node="node-y")]
ABY_FOO = [ep("p-b1", "node-a", foo=""), ep("p-b2", "node-b", foo=""), ep("p-y1", "node-y", foo="")]

SINGLE_CONSTRAINT_CASES = [
    pytest.param(INCOMING_FOO_ZONE, STD4, [], w(OK, OK, OK, OK), id="no existing pods"),
    pytest.param(pod(labels={"foo": ""}, constraints=[sc(1, "zone", selector=BAR)]), STD4, [], w(OK, OK, OK, OK),
                 id="no existing pods, incoming pod doesn't match itself"),
    pytest.param(INCOMING_FOO_ZONE, STD4,
                 [ep("p-a1", "node-a", "ns1", foo=""), ep("p-b1", "node-a", "ns2", foo=""), *foo_pods("x1 y1")],
                 w(OK, OK, UNSCHED, UNSCHED), id="existing pods in a different namespace do not count"),
    pytest.param(pod(labels={"foo": ""}, constraints=[sc(1, "zone")]), STD4, foo_pods("x1 y1"), w(OK, OK, OK, OK),
                 id="existing pods do not match null selector"),
    pytest.param(INCOMING_FOO_ZONE, STD4, SPREAD_2103, w(OK, OK, OK, OK),
                 id="pods spread across zones as 3/3, all nodes fit"),
    pytest.param(INCOMING_FOO_ZONE,
                 [zn("node-a", "zone1"), node("node-b", zon="zone1", node="node-b"), zn("node-x", "zone2"), zn("node-y", "zone2")],
                 foo_pods("a1 b1 x1 y1"), w(OK, UNRESOLVABLE, UNSCHED, UNSCHED),
                 id="pods spread across zones as 1/2 due to absence of label 'zone' on node-b"),
    pytest.param(pod(labels={"foo": ""}, constraints=[sc(1, "rack", selector=FOO)]),
                 [zn("node-a", "zone1"), zn("node-x", "zone2")], [],
                 {"node-a": UNRESOLVABLE, "node-x": UNRESOLVABLE},
                 id="pod cannot be scheduled as all nodes don't have label 'rack'"),
    pytest.param(NODE_FOO, STD4, SPREAD_2103, w(UNSCHED, UNSCHED, OK, UNSCHED),
                 id="pods spread across nodes as 2/1/0/3, only node-x fits"),
    pytest.param(pod(labels={"foo": ""}, constraints=[sc(2, "node", selector=FOO)]), STD4, SPREAD_2103,
                 w(UNSCHED, OK, OK, UNSCHED), id="pods spread across nodes as 2/1/0/3, maxSkew is 2, node-b and node-x fit"),
    pytest.param(pod(labels={"bar": ""}, constraints=[sc(1, "node", selector=FOO)]), STD4, SPREAD_2103,
                 w(UNSCHED, OK, OK, UNSCHED), id="pods spread across nodes as 2/1/0/3, but pod doesn't match itself"),
    pytest.param(pod(labels={"foo": ""}, constraints=[sc(1, "node", selector=FOO)], affinity_in=("node", ["node-a", "node-y"])),
                 STD4, SPREAD_2103, w(OK, OK, OK, UNSCHED),
                 id="incoming pod has nodeAffinity, pods spread as 2/~1~/~0~/3, hence node-a fits"),
    pytest.param(NODE_FOO, [node("node-a", node="node-a"), node("node-b", node="node-b")],
                 [ep("p-a", "node-a", terminating=True, foo=""), ep("p-b", "node-b", foo="")],
                 {"node-a": OK, "node-b": UNSCHED}, id="terminating Pods should be excluded"),
    pytest.param(pod(labels={"foo": ""}, constraints=[sc(1, "zone", selector=FOO)], affinity_not_in=("node", ["node-b"])),
                 STD4, foo_pods("b2 y1"), w(OK, OK, UNSCHED, UNSCHED),
                 id="incoming pod has nodeAffinity, pods spread as 0/~2~/0/1, hence node-a fits"),
    pytest.param(pod(labels={"foo": ""}, constraints=[sc(2, "node", selector=FOO, min_domains=4)]), ABC_NODES, ABC_221,
                 {"node-a": UNSCHED, "node-b": UNSCHED, "node-c": OK},
                 id="pods spread across nodes as 2/2/1, maxSkew is 2, and the number of domains < minDomains, then the third node fits"),
    pytest.param(pod(labels={"foo": ""}, constraints=[sc(2, "node", selector=FOO, min_domains=2)]), ABC_NODES, ABC_221,
                 {"node-a": OK, "node-b": OK, "node-c": OK},
                 id="pods spread across nodes as 2/2/1, maxSkew is 2, and the number of domains > minDomains, then the all nodes fit"),
    pytest.param(pod(labels={"foo": ""}, constraints=[sc(2, "zone", selector=FOO, min_domains=3)]), STD4, ABY_FOO,
                 w(UNSCHED, UNSCHED, OK, OK),
                 id="pods spread across zone as 2/1, maxSkew is 2 and the number of domains < minDomains, then the third and fourth nodes fit"),
    pytest.param(pod(labels={"foo": ""}, constraints=[sc(2, "zone", selector=FOO, min_domains=1)]), STD4, ABY_FOO,
                 w(OK, OK, OK, OK),
                 id="pods spread across zone as 2/1, maxSkew is 2 and the number of domains > minDomains, then the all nodes fit"),
    pytest.param(pod(labels={"foo": ""}, constraints=[sc(1, "node", selector=FOO)], node_selector={"foo": ""}),
                 NODE_ABXY_FOO, ABY_FOO, w(UNSCHED, UNSCHED, OK, OK), id="NodeAffinityPolicy honored with labelSelectors"),
    pytest.param(pod(labels={"foo": ""}, constraints=[sc(1, "node", selector=FOO, affinity_policy="Ignore")],
                     node_selector={"foo": ""}),
                 NODE_ABXY_FOO, ABY_FOO, w(UNSCHED, UNSCHED, OK, UNSCHED), id="NodeAffinityPolicy ignored with labelSelectors"),
    pytest.param(pod(labels={"foo": ""}, constraints=[sc(1, "node", selector=FOO)], affinity_in=("foo", [""])),
                 NODE_ABXY_FOO, ABY_FOO, w(UNSCHED, UNSCHED, OK, OK), id="NodeAffinityPolicy honored with nodeAffinity"),
    pytest.param(pod(labels={"foo": ""}, constraints=[sc(1, "node", selector=FOO, affinity_policy="Ignore")],
                     affinity_in=("foo", [""])),
                 NODE_ABXY_FOO, ABY_FOO, w(UNSCHED, UNSCHED, OK, UNSCHED), id="NodeAffinityPolicy ignored with nodeAffinity"),
    pytest.param(pod(labels={"foo": ""}, constraints=[sc(1, "node", selector=FOO, taints_policy="Honor")]),
                 NODE_ABXY_TAINTED, ABY_FOO, w(UNSCHED, UNSCHED, OK, OK), id="NodeTaintsPolicy honored"),
    pytest.param(NODE_FOO, NODE_ABXY_TAINTED, ABY_FOO, w(UNSCHED, UNSCHED, OK, UNSCHED), id="NodeTaintsPolicy ignored"),
]  # fmt: skip


@pytest.mark.parametrize(("p", "nodes", "existing", "want"), SINGLE_CONSTRAINT_CASES)
def test_single_constraint(p: dict, nodes: list, existing: list, want: dict) -> None:
    assert codes_of(p, nodes, existing) == want


MULTIPLE_CONSTRAINTS_CASES = [
    pytest.param(INCOMING_FOO_ZONE_NODE, STD4, SPREAD_2103, w(UNSCHED, UNSCHED, OK, UNSCHED),
                 id="two Constraints on zone and node, spreads = [3/3, 2/1/0/3]"),
    pytest.param(INCOMING_FOO_ZONE_NODE, STD4, foo_pods("a2 b1 y4"), w(UNSCHED, UNSCHED, UNSCHED, UNSCHED),
                 id="two Constraints on zone and node, spreads = [3/4, 2/1/0/4]"),
    pytest.param(INCOMING_FOO_ZONE_BAR_NODE, STD4, [ep("p-a1", "node-a", foo=""), ep("p-y1", "node-y", bar="")],
                 w(UNSCHED, UNSCHED, OK, UNSCHED), id="Constraints hold different labelSelectors, spreads = [1/0, 1/0/0/1]"),
    pytest.param(INCOMING_FOO_ZONE_BAR_NODE, STD4,
                 [ep("p-a1", "node-a", foo=""), ep("p-x1", "node-x", bar=""), ep("p-y1", "node-y", bar="")],
                 w(UNSCHED, UNSCHED, UNSCHED, UNSCHED),
                 id="Constraints hold different labelSelectors, spreads = [1/0, 0/0/1/1]"),
    pytest.param(INCOMING_FOO_ZONE_BAR_NODE, STD4,
                 [ep("p-a1", "node-a", foo=""), ep("p-a2", "node-a", foo="", bar=""), ep("p-y1", "node-y", foo=""),
                  ep("p-y2", "node-y", foo="", bar=""), ep("p-y3", "node-y", foo="")],
                 w(UNSCHED, OK, UNSCHED, UNSCHED), id="Constraints hold different labelSelectors, spreads = [2/3, 1/0/0/1]"),
    pytest.param(pod(labels={"bar": ""}, constraints=[sc(1, "zone", selector=FOO), sc(1, "node", selector=BAR)]), STD4,
                 [ep("p-a1", "node-a", foo=""), ep("p-x1", "node-x", bar=""), ep("p-y1", "node-y", bar="")],
                 w(OK, OK, UNSCHED, UNSCHED),
                 id="Constraints hold different labelSelectors but pod doesn't match itself on 'zone' constraint"),
    pytest.param(INCOMING_FOO_ZONE_NODE,
                 [zn("node-a", "zone1"), zn("node-b", "zone1"), node("node-x", zone="zone2"), zn("node-y", "zone2")],
                 [ep("p-a1", "node-a", foo=""), ep("p-y3", "node-y", foo="")], w(UNSCHED, OK, UNRESOLVABLE, UNSCHED),
                 id="two Constraints on zone and node, absence of label 'node' on node-x, spreads = [1/1, 1/0/0/1]"),
    pytest.param(pod(labels={"foo": ""}, constraints=[sc(1, "zone", selector=FOO), sc(1, "node", selector=FOO, affinity_policy="Ignore")],
                     node_selector={"foo": ""}),
                 [zn("node-a", "zone1", foo=""), zn("node-b", "zone1", foo=""), zn("node-x", "zone2", foo=""), zn("node-y", "zone2")],
                 foo_pods("a1 b1 y1"), w(UNSCHED, UNSCHED, OK, UNSCHED),
                 id="two node inclusion Constraints, zone: honor/ignore, node: ignore/ignore"),
    pytest.param(pod(labels={"foo": ""}, constraints=[sc(1, "zone", selector=FOO, taints_policy="Honor"), sc(1, "node", selector=FOO)]),
                 [zn("node-a", "zone1", foo=""), zn("node-b", "zone1", foo=""), zn("node-x", "zone2", foo=""),
                  zn("node-y", "zone2", taints=True)],
                 foo_pods("a1 b1 y1"), w(UNSCHED, UNSCHED, OK, UNSCHED),
                 id="two node inclusion Constraints, zone: honor/honor, node: honor/ignore"),
    pytest.param(pod(labels={"foo": ""}, constraints=[sc(1, "zone", selector=FOO), sc(1, "node", selector=FOO)],
                     node_selector={"foo": ""}),
                 [zn("node-a", "zone1", foo=""), zn("node-b", "zone1"), zn("node-x", "zone2", foo=""),
                  zn("node-y", "zone2", taints=True, foo="")],
                 foo_pods("a1 b1 y1"), w(UNSCHED, OK, OK, UNSCHED),
                 id="two node inclusion Constraints, zone: honor/ignore, node: honor/ignore"),
    pytest.param(pod(labels={"foo": ""},
                     constraints=[sc(1, "zone", selector=FOO, taints_policy="Honor"), sc(1, "node", selector=FOO, affinity_policy="Ignore")],
                     node_selector={"foo": ""}),
                 [zn("node-a", "zone1", foo=""), zn("node-b", "zone1"), zn("node-x", "zone2", foo=""),
                  zn("node-y", "zone2", taints=True, foo="")],
                 foo_pods("a1 b1 y1"), w(UNSCHED, UNSCHED, OK, UNSCHED),
                 id="two node inclusion Constraints, zone: honor/honor, node: ignore/ignore"),
]  # fmt: skip


@pytest.mark.parametrize(("p", "nodes", "existing", "want"), MULTIPLE_CONSTRAINTS_CASES)
def test_multiple_constraints(p: dict, nodes: list, existing: list, want: dict) -> None:
    assert codes_of(p, nodes, existing) == want


def test_first_failing_constraint_decides_code() -> None:
    """Constraint order decides: a skew failure on the first hides a missing key on the second."""
    p = pod(labels={"foo": ""}, constraints=[sc(1, "node", selector=FOO), sc(1, "rack", selector=FOO)])
    nodes = [node("node-a", node="node-a"), node("node-b", node="node-b", rack="r1")]
    got = codes_of(p, nodes, foo_pods("a2"))
    # rack is missing on node-a, so node-a is not an eligible domain for either constraint.
    assert got == {"node-a": UNRESOLVABLE, "node-b": OK}
    p2 = pod(labels={"foo": ""}, constraints=[sc(1, "node", selector=FOO)])
    assert codes_of(p2, nodes, foo_pods("a2")) == {"node-a": UNSCHED, "node-b": OK}


def test_filter_subset_of_rows() -> None:
    """Filter evaluates only the rows it is given, with counts over all nodes."""
    snap = build_snapshot(STD4, SPREAD_2103)
    plugin = PodTopologySpread(LIST_ARGS)
    state = CycleState()
    p = Pod.parse(NODE_FOO)
    assert plugin.pre_filter(state, p, snap) is None
    rows = np.array([snap.row_of["node-y"], snap.row_of["node-x"]], np.int32)
    res = plugin.filter(state, p, snap, rows)
    assert [Code(int(c)) for c in res.code] == [UNSCHED, OK]


def test_pre_filter_disabled() -> None:
    """Filter without PreFilter state is an Error (TestPreFilterDisabled)."""
    snap = build_snapshot([node("node-a")])
    plugin = PodTopologySpread(LIST_ARGS)
    with pytest.raises(PluginError, match='reading "PreFilterPodTopologySpread" from cycleState: not found'):
        plugin.filter(CycleState(), Pod.parse(pod()), snap, np.arange(1, dtype=np.int32))


# -- args ----------------------------------------------------------------------------------


def test_default_args_are_system_defaults() -> None:
    for args in (None, {}, {"defaultingType": "System"}):
        plugin = PodTopologySpread(args)
        assert plugin.system_defaulted
        got = [
            (c.topology_key, c.max_skew, c.when_unsatisfiable, c.selector) for c in plugin.default_constraints
        ]
        assert got == [
            ("kubernetes.io/hostname", 3, "ScheduleAnyway", None),
            ("topology.kubernetes.io/zone", 5, "ScheduleAnyway", None),
        ]


def test_list_defaulting_without_constraints_disables_defaults() -> None:
    plugin = PodTopologySpread({"defaultingType": "List", "defaultConstraints": []})
    assert not plugin.system_defaulted and plugin.default_constraints == ()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({"defaultingType": "Fancy"}, "Unsupported value"),
        (
            {
                "defaultConstraints": [
                    {"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule"}
                ]
            },
            'defaultingType: Invalid value: "System": when .defaultConstraints are not empty',
        ),
        (
            {
                "defaultingType": "List",
                "defaultConstraints": [
                    {
                        "maxSkew": 1,
                        "topologyKey": "zone",
                        "whenUnsatisfiable": "DoNotSchedule",
                        "labelSelector": {},
                    }
                ],
            },
            "constraint must not define a selector",
        ),
        (
            {
                "defaultingType": "List",
                "defaultConstraints": [
                    {"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule"},
                    {"maxSkew": 2, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule"},
                ],
            },
            "Duplicate value",
        ),
        (
            {
                "defaultingType": "List",
                "defaultConstraints": [
                    {"maxSkew": 0, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule"}
                ],
            },
            r"maxSkew: Invalid value: 0: not in valid range \(0, inf\)",
        ),
    ],
)
def test_invalid_args(args: dict, message: str) -> None:
    with pytest.raises(InputError, match=message):
        PodTopologySpread(args)


def test_list_default_hard_constraint_filters_with_replicaset_selector() -> None:
    """A List DoNotSchedule default constraint uses the controlling ReplicaSet's selector."""
    args = {
        "defaultingType": "List",
        "defaultConstraints": [{"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule"}],
    }
    snap = build_snapshot(STD4, [ep("p-a1", "node-a", app="web"), ep("p-x1", "node-x", app="db")])
    snap.workload_selectors = [
        ("ReplicaSet", "default", LabelSelector.from_match_labels({"app": "web"})),
        ("ReplicaSet", "other", LabelSelector.from_match_labels({"app": "web"})),
    ]
    p = pod(labels={"app": "web"}, owner=("ReplicaSet", "web-123"))
    statuses = run_filter(PodTopologySpread(args), p, snap)
    assert [s.code for s in statuses] == [UNSCHED, UNSCHED, OK, OK]
    # Without a controller reference no ReplicaSet contributes: PreFilter skips, all pass.
    statuses = run_filter(PodTopologySpread(args), pod(labels={"app": "web"}), snap)
    assert [s.code for s in statuses] == [OK] * 4


# -- differential test: vectorised Filter vs a literal per-node port of filtering.go -----------


def _ref_inclusion(c: Any, p: Pod, n: Any) -> bool:
    """matchNodeInclusionPolicies, per node."""
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


def _ref_filter(p: Pod, snap: Any) -> list[Code]:
    constraints = [c for c in p.spread_constraints if c.when_unsatisfiable == "DoNotSchedule"]
    if not constraints:
        return [OK] * snap.n
    tp: list[dict[str, int]] = [{} for _ in constraints]
    for row, n in enumerate(snap.nodes):
        if any(c.topology_key not in n.labels for c in constraints):
            continue
        pods = list(snap.pods_on[row].values())
        for i, c in enumerate(constraints):
            if not _ref_inclusion(c, p, n):
                continue
            v = n.labels[c.topology_key]
            tp[i][v] = tp[i].get(v, 0) + _ref_count(pods, c, p.namespace)
    out = []
    for n in snap.nodes:
        code = OK
        for i, c in enumerate(constraints):
            if c.topology_key not in n.labels:
                code = UNRESOLVABLE
                break
            md = 1 if c.min_domains is None else c.min_domains
            mn = 0 if len(tp[i]) < md else min(tp[i].values())
            self_match = 1 if c.selector is not None and c.selector.matches(p.labels) else 0
            if tp[i].get(n.labels[c.topology_key], 0) + self_match - mn > c.max_skew:
                code = UNSCHED
                break
        out.append(code)
    return out


_KEYS = ("zone", "rack", "kubernetes.io/hostname")
_SELECTORS = (FOO, BAR, None, {}, {"matchLabels": {"foo": "x"}})


@hs.composite
def _cluster(draw: Any) -> tuple[dict, list[dict], list[dict]]:
    nodes = []
    n_nodes = draw(hs.integers(1, 7))
    for k in range(n_nodes):
        labels = {}
        for key, values in (
            ("zone", ["z1", "z2", ""]),
            ("rack", ["r1", "r2"]),
            ("kubernetes.io/hostname", [f"n{k}"]),
        ):
            if draw(hs.integers(0, 3)) > 0:
                labels[key] = draw(hs.sampled_from(values))
        if draw(hs.booleans()):
            labels["disk"] = "ssd"
        d = node(f"n{k}", draw(hs.booleans()))
        d["metadata"]["labels"] = labels
        nodes.append(d)
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
    for _ in range(draw(hs.integers(1, 3))):
        when = draw(hs.sampled_from(["DoNotSchedule", "DoNotSchedule", "ScheduleAnyway"]))
        constraints.append(
            sc(
                draw(hs.integers(1, 3)),
                draw(hs.sampled_from(_KEYS)),
                when,
                draw(hs.sampled_from(_SELECTORS)),
                min_domains=draw(hs.sampled_from([None, 1, 2, 4])) if when == "DoNotSchedule" else None,
                affinity_policy=draw(hs.sampled_from([None, "Honor", "Ignore"])),
                taints_policy=draw(hs.sampled_from([None, "Honor", "Ignore"])),
            )
        )
    incoming = pod(
        labels={k: "" for k in ("foo", "bar") if draw(hs.booleans())},
        constraints=constraints,
        node_selector={"disk": "ssd"} if draw(hs.booleans()) else None,
        affinity_in=("zone", ["z1"]) if draw(hs.booleans()) else None,
        tolerate="node.kubernetes.io/unschedulable" if draw(hs.booleans()) else None,
    )
    return incoming, nodes, existing


@settings(max_examples=300, deadline=None)
@given(_cluster())
def test_filter_matches_literal_port(case: tuple[dict, list[dict], list[dict]]) -> None:
    incoming, nodes, existing = case
    snap = build_snapshot(nodes, existing)
    p = Pod.parse(incoming)
    got = [s.code for s in run_filter(PodTopologySpread(LIST_ARGS), p, snap)]
    assert got == _ref_filter(p, snap)

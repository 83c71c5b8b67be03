"""NodeAffinity: upstream node_affinity_test.go tables (PreFilter, Filter, PreScore, Score)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kubesched.api.objects import Node, Pod
from kubesched.errors import InputError
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.interfaces import MAX_NODE_SCORE
from kubesched.framework.status import Code, PreFilterResult, Status
from kubesched.plugins.nodeaffinity import (
    ERR_REASON_CONFLICT,
    ERR_REASON_ENFORCED,
    ERR_REASON_POD,
    NAME,
    NodeAffinity,
    pre_filter_node_names,
)
from kubesched.testing import build_snapshot, make_pod, run_score

# -- builders, shaped like st.MakePod()/v1 literals in the Go tests -------------------------------


def expr(key: str, op: str, *values: str) -> dict[str, Any]:
    d: dict[str, Any] = {"key": key, "operator": op}
    if values:
        d["values"] = list(values)
    return d


def name_in(*names: str) -> dict[str, Any]:
    return {"key": "metadata.name", "operator": "In", "values": list(names)}


def term(exprs: list[dict] | None = None, fields: list[dict] | None = None) -> dict[str, Any]:
    d: dict[str, Any] = {}
    if exprs is not None:
        d["matchExpressions"] = exprs
    if fields is not None:
        d["matchFields"] = fields
    return d


def required(*terms: dict) -> dict[str, Any]:
    return {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": list(terms)}}


def preferred(*weighted: tuple[int, dict]) -> dict[str, Any]:
    return {
        "preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": w, "preference": t} for w, t in weighted
        ]
    }


def pod(node_selector: dict[str, str] | None = None, node_affinity: dict | None = None) -> Pod:
    spec: dict[str, Any] = {}
    if node_selector is not None:
        spec["nodeSelector"] = node_selector
    if node_affinity is not None:
        spec["affinity"] = {"nodeAffinity": node_affinity}
    return Pod.parse(make_pod("p", spec=spec))


def node(name: str, labels: dict[str, str] | None = None) -> dict[str, Any]:
    """A node with exactly ``labels`` (no automatic hostname label, as in the Go tests)."""
    return {
        "metadata": {"name": name, "labels": dict(labels or {})},
        "status": {"allocatable": {"pods": "110"}},
    }


POD_FAIL = Status(Code.UnschedulableAndUnresolvable, (ERR_REASON_POD,), NAME)
ENFORCED_FAIL = Status(Code.UnschedulableAndUnresolvable, (ERR_REASON_ENFORCED,), NAME)
OK = Status(plugin=NAME)
SKIP = "skip"
CONFLICT = "conflict"


def names(*n: str) -> frozenset[str]:
    return frozenset(n)


# (name, pod, node labels, node name, args, want filter, want prefilter, run prefilter)
# want prefilter: None (success, no narrowing), SKIP, CONFLICT, or a frozenset of node names.
FILTER_CASES: list[tuple[str, Pod, dict[str, str], str, dict, Status, Any, bool]] = [
    ("missing labels", pod({"foo": "bar"}), {}, "node", {}, POD_FAIL, None, True),
    ("same labels", pod({"foo": "bar"}), {"foo": "bar"}, "node", {}, OK, None, True),
    ("node labels are superset", pod({"foo": "bar"}), {"foo": "bar", "baz": "blah"}, "node", {}, OK, None, True),
    ("node labels are subset", pod({"foo": "bar", "baz": "blah"}), {"foo": "bar"}, "node", {}, POD_FAIL, None, True),
    (
        "matchExpressions In matches the node",
        pod(node_affinity=required(term([expr("foo", "In", "bar", "value2")]))),
        {"foo": "bar"}, "node", {}, OK, None, True,
    ),
    (
        "matchExpressions Gt matches the node",
        pod(node_affinity=required(term([expr("kernel-version", "Gt", "0204")]))),
        {"kernel-version": "0206"}, "node", {}, OK, None, True,
    ),
    (
        "matchExpressions NotIn matches the node",
        pod(node_affinity=required(term([expr("mem-type", "NotIn", "DDR", "DDR2")]))),
        {"mem-type": "DDR3"}, "node", {}, OK, None, True,
    ),
    (
        "matchExpressions Exists matches the node",
        pod(node_affinity=required(term([expr("GPU", "Exists")]))),
        {"GPU": "NVIDIA-GRID-K1"}, "node", {}, OK, None, True,
    ),
    (
        "affinity that doesn't match the node's labels",
        pod(node_affinity=required(term([expr("foo", "In", "value1", "value2")]))),
        {"foo": "bar"}, "node", {}, POD_FAIL, None, True,
    ),
    (
        "empty MatchExpressions matches no objects",
        pod(node_affinity=required(term([]))),
        {"foo": "bar"}, "node", {}, POD_FAIL, None, True,
    ),
    ("no Affinity", pod(), {"foo": "bar"}, "node", {}, OK, SKIP, True),
    ("Affinity but nil required NodeSelector", pod(node_affinity={}), {"foo": "bar"}, "node", {}, OK, SKIP, True),
    (
        "multiple matchExpressions ANDed that match the node",
        pod(node_affinity=required(term([expr("GPU", "Exists"), expr("GPU", "NotIn", "AMD", "INTER")]))),
        {"GPU": "NVIDIA-GRID-K1"}, "node", {}, OK, None, True,
    ),
    (
        "multiple matchExpressions ANDed that don't match the node",
        pod(node_affinity=required(term([expr("GPU", "Exists"), expr("GPU", "In", "AMD", "INTER")]))),
        {"GPU": "NVIDIA-GRID-K1"}, "node", {}, POD_FAIL, None, True,
    ),
    (
        "multiple NodeSelectorTerms ORed, one matches",
        pod(
            node_affinity=required(
                term([expr("foo", "In", "bar", "value2")]), term([expr("diffkey", "In", "wrong", "value2")])
            )
        ),
        {"foo": "bar"}, "node", {}, OK, None, True,
    ),
    (
        "affinity and nodeSelector both satisfied",
        pod({"foo": "bar"}, required(term([expr("foo", "Exists")]))),
        {"foo": "bar"}, "node", {}, OK, None, True,
    ),
    (
        "affinity matches but nodeSelector does not",
        pod({"foo": "bar"}, required(term([expr("foo", "Exists")]))),
        {"foo": "barrrrrr"}, "node", {}, POD_FAIL, None, True,
    ),
    (
        "matchFields In matches the node",
        pod(node_affinity=required(term(fields=[name_in("node1")]))),
        {}, "node1", {}, OK, names("node1"), True,
    ),
    (
        "matchFields In does not match the node",
        pod(node_affinity=required(term(fields=[name_in("node1")]))),
        {}, "node2", {}, POD_FAIL, names("node1"), True,
    ),
    (
        "two terms: matchFields does not match, but matchExpressions matches",
        pod(node_affinity=required(term(fields=[name_in("node1"), name_in("node2")]), term([expr("foo", "In", "bar")]))),
        {"foo": "bar"}, "node2", {}, OK, None, True,
    ),
    (
        "one term: matchFields does not match, but matchExpressions matches",
        pod(node_affinity=required(term([expr("foo", "In", "bar")], [name_in("node1")]))),
        {"foo": "bar"}, "node2", {}, POD_FAIL, names("node1"), True,
    ),
    (
        "one term: both matchFields and matchExpressions match",
        pod(node_affinity=required(term([expr("foo", "In", "bar")], [name_in("node1")]))),
        {"foo": "bar"}, "node1", {}, OK, names("node1"), True,
    ),
    (
        "two terms: both matchFields and matchExpressions do not match",
        pod(node_affinity=required(term(fields=[name_in("node1")]), term([expr("foo", "In", "not-match-to-bar")]))),
        {"foo": "bar"}, "node2", {}, POD_FAIL, None, True,
    ),
    (
        "two terms of node.Name affinity",
        pod(node_affinity=required(term(fields=[name_in("node1")]), term(fields=[name_in("node2")]))),
        {}, "node2", {}, OK, names("node1", "node2"), True,
    ),
    (
        "two conflicting matchFields requirements",
        pod(node_affinity=required(term(fields=[name_in("node1"), name_in("node2")]))),
        {"foo": "bar"}, "node2", {}, POD_FAIL, CONFLICT, True,
    ),
    (
        "matches added affinity and Pod's node affinity",
        pod(node_affinity=required(term([expr("zone", "In", "foo")]))),
        {"zone": "foo"}, "node2",
        {"addedAffinity": required(term(fields=[name_in("node2")]))},
        OK, None, True,
    ),
    (
        "matches added affinity but not Pod's node affinity",
        pod(node_affinity=required(term([expr("zone", "In", "bar")]))),
        {"zone": "foo"}, "node2",
        {"addedAffinity": required(term(fields=[name_in("node2")]))},
        POD_FAIL, None, True,
    ),
    (
        "doesn't match added affinity",
        pod(),
        {"zone": "foo"}, "node2",
        {"addedAffinity": required(term([expr("zone", "In", "bar")]))},
        ENFORCED_FAIL, None, True,
    ),
    (
        "matches node selector correctly even if PreFilter is not called",
        pod({"foo": "bar"}),
        {"foo": "bar", "baz": "blah"}, "node", {}, OK, None, False,
    ),
    (
        "matches node affinity correctly even if PreFilter is not called",
        pod(node_affinity=required(term([expr("GPU", "Exists"), expr("GPU", "NotIn", "AMD", "INTER")]))),
        {"GPU": "NVIDIA-GRID-K1"}, "node", {}, OK, None, False,
    ),
    # Beyond the upstream table.
    (
        "fails both added and pod affinity: only the enforced reason (checked first)",
        pod({"foo": "bar"}),
        {"zone": "foo"}, "node2",
        {"addedAffinity": required(term([expr("zone", "In", "bar")]))},
        ENFORCED_FAIL, None, True,
    ),
    (
        "added affinity with only preferred terms enforces nothing",
        pod(),
        {}, "node",
        {"addedAffinity": preferred((5, term([expr("zone", "In", "bar")])))},
        OK, SKIP, True,
    ),
    (
        "matchFields NotIn does not narrow in PreFilter",
        pod(node_affinity=required(term(fields=[{"key": "metadata.name", "operator": "NotIn", "values": ["node1"]}]))),
        {}, "node1", {}, POD_FAIL, None, True,
    ),
    (
        "Lt compares integers, not strings",
        pod(node_affinity=required(term([expr("gen", "Lt", "10")]))),
        {"gen": "9"}, "node", {}, OK, None, True,
    ),
    (
        "DoesNotExist",
        pod(node_affinity=required(term([expr("gpu", "DoesNotExist")]))),
        {"gpu": "x"}, "node", {}, POD_FAIL, None, True,
    ),
]  # fmt: skip


def _normalize_pre_filter(res: PreFilterResult | Status | None) -> Any:
    if res is None:
        return None
    if isinstance(res, PreFilterResult):
        assert res.status.ok
        return res.node_names
    if res.code == Code.Skip:
        return SKIP
    if res == Status(Code.UnschedulableAndUnresolvable, (ERR_REASON_CONFLICT,), NAME):
        return CONFLICT
    return res


@pytest.mark.parametrize(
    ("name", "the_pod", "labels", "node_name", "args", "want", "want_pre_filter", "run_pre_filter"),
    FILTER_CASES,
    ids=[c[0] for c in FILTER_CASES],
)
def test_filter(
    name: str,
    the_pod: Pod,
    labels: dict[str, str],
    node_name: str,
    args: dict,
    want: Status,
    want_pre_filter: Any,
    run_pre_filter: bool,
) -> None:
    snap = build_snapshot([node(node_name, labels)])
    plugin = NodeAffinity(args)
    state = CycleState()
    if run_pre_filter:
        assert _normalize_pre_filter(plugin.pre_filter(state, the_pod, snap)) == want_pre_filter
    # As upstream's test, Filter runs even after a PreFilter Skip or rejection.
    res = plugin.filter(state, the_pod, snap, np.arange(1, dtype=np.int32))
    assert res.status_at(0, NAME) == want


def test_invalid_label_value_in_term_matches_no_node() -> None:
    """TestNodeAffinity "Pod with an invalid value in Affinity term won't be scheduled onto the
    node": the pod decodes (LazyErrorNodeSelector), its term matches nothing."""
    p = pod(node_affinity=required(term([expr("foo", "NotIn", "invalid value: ___@#$%^")])))
    assert p.node_affinity is not None and p.node_affinity.required is not None
    assert p.node_affinity.required.terms[0].error is not None
    snap = build_snapshot([node("node1", {"foo": "bar"})])
    plugin = NodeAffinity({})
    state = CycleState()
    assert plugin.pre_filter(state, p, snap) is None
    assert plugin.filter(state, p, snap, np.arange(1, dtype=np.int32)).status_at(0, NAME) == POD_FAIL


def test_unparsable_term_leaves_other_terms() -> None:
    """A term kube-scheduler cannot parse is skipped; the pod's other terms still match."""
    p = pod(
        node_affinity=required(term([expr("zone", "Gt", "not-a-number")]), term([expr("zone", "In", "z1")]))
    )
    snap = build_snapshot([node("node1", {"zone": "z1"})])
    plugin = NodeAffinity({})
    state = CycleState()
    plugin.pre_filter(state, p, snap)
    assert plugin.filter(state, p, snap, np.arange(1, dtype=np.int32)).status_at(0, NAME).code == Code.Success


def test_unparsable_preferred_term_fails_pre_score() -> None:
    """NewPreferredSchedulingTerms returns the parse error: PreScore reports it (the pod is not
    scored; a cycle with one feasible node never reaches PreScore)."""
    p = pod(node_affinity=preferred((5, term([expr("zone", "In", "a b")]))))
    snap = build_snapshot([node("node1", {"zone": "z1"})])
    st = NodeAffinity({}).pre_score(CycleState(), p, snap, np.arange(1, dtype=np.int32))
    assert st is not None and st.code == Code.Error and 'values[0]' in st.message and "a b" in st.message


def test_filter_many_nodes_subset_of_rows() -> None:
    snap = build_snapshot(
        [
            node("a", {"zone": "z1"}),
            node("b", {"zone": "z2"}),
            node("c", {"zone": "z1", "gpu": "1"}),
            node("d"),
        ]
    )
    p = pod({"zone": "z1"}, required(term([expr("gpu", "Exists")]), term(fields=[name_in("a")])))
    plugin = NodeAffinity({"addedAffinity": required(term([expr("zone", "Exists")]))})
    state = CycleState()
    assert plugin.pre_filter(state, p, snap) is None
    res = plugin.filter(state, p, snap, np.array([3, 2, 1, 0], np.int32))
    assert [res.status_at(i, NAME) for i in range(4)] == [ENFORCED_FAIL, OK, POD_FAIL, OK]


def test_pre_filter_node_names_union_and_intersection() -> None:
    p = pod(node_affinity=required(term(fields=[name_in("a"), name_in("a")]), term(fields=[name_in("b")])))
    assert p.node_affinity is not None and p.node_affinity.required is not None
    assert pre_filter_node_names(p.node_affinity.required) == names("a", "b")


def test_pre_filter_node_names_may_name_unknown_nodes() -> None:
    """Names are returned as written; the framework intersects them with known nodes."""
    snap = build_snapshot([node("a")])
    res = NodeAffinity().pre_filter(
        CycleState(), pod(node_affinity=required(term(fields=[name_in("ghost")]))), snap
    )
    assert isinstance(res, PreFilterResult) and res.node_names == names("ghost")


def test_args_defaults() -> None:
    for args in (None, {}, {"addedAffinity": None}):
        plugin = NodeAffinity(args)
        assert plugin.added_node_selector is None
        assert plugin.added_preferred == ()


def test_bad_added_affinity_is_reported_with_its_path() -> None:
    with pytest.raises(InputError, match="addedAffinity"):
        NodeAffinity({"addedAffinity": required(term([expr("zone", "Bogus", "x")]))})


# -- scoring --------------------------------------------------------------------------------------

LABEL1 = {"foo": "bar"}
LABEL2 = {"key": "value"}
LABEL3 = {"az": "az1"}
LABEL4 = {"abc": "az11", "def": "az22"}
LABEL5 = {"foo": "bar", "key": "value", "az": "az1"}
AFFINITY1 = preferred((2, term([expr("foo", "In", "bar")])))
AFFINITY2 = preferred(
    (2, term([expr("foo", "In", "bar")])),
    (4, term([expr("key", "In", "value")])),
    (5, term([expr("foo", "In", "bar"), expr("key", "In", "value"), expr("az", "In", "az1")])),
)

# (name, pod node affinity, nodes [(name, labels)], args, want normalized, run PreScore)
SCORE_CASES: list[tuple[str, dict | None, list[tuple[str, dict]], dict, list[int], bool]] = [
    (
        "all nodes are same priority as NodeAffinity is nil",
        None, [("node1", LABEL1), ("node2", LABEL2), ("node3", LABEL3)], {}, [0, 0, 0], False,
    ),
    (
        "no node matches preferred scheduling requirements so all nodes' priority is zero",
        AFFINITY1, [("node1", LABEL4), ("node2", LABEL2), ("node3", LABEL3)], {}, [0, 0, 0], True,
    ),
    (
        "only node1 matches the preferred scheduling requirements of pod",
        AFFINITY1, [("node1", LABEL1), ("node2", LABEL2), ("node3", LABEL3)], {}, [MAX_NODE_SCORE, 0, 0], True,
    ),
    (
        "all nodes match the preferred scheduling requirements of pod but with different priorities",
        AFFINITY2, [("node1", LABEL1), ("node5", LABEL5), ("node2", LABEL2)], {}, [18, MAX_NODE_SCORE, 36], True,
    ),
    (
        "added affinity",
        None, [("node1", LABEL1), ("node2", LABEL2)], {"addedAffinity": AFFINITY1}, [MAX_NODE_SCORE, 0], True,
    ),
    (
        "added affinity and pod has default affinity",
        AFFINITY1,
        [("node1", LABEL1), ("node2", LABEL2), ("node3", LABEL5)],
        {"addedAffinity": preferred((3, term([expr("key", "In", "value")])))},
        [40, 60, MAX_NODE_SCORE],
        True,
    ),
    (
        "calculate the priorities correctly even if PreScore is not called",
        AFFINITY2, [("node1", LABEL1), ("node5", LABEL5), ("node2", LABEL2)], {}, [18, MAX_NODE_SCORE, 36], False,
    ),
    # Beyond the upstream table.
    (
        "a preferred term without a preference matches nothing",
        preferred((7, {}), (3, term([expr("foo", "Exists")]))),
        [("node1", LABEL1), ("node2", LABEL2)], {}, [MAX_NODE_SCORE, 0], True,
    ),
    (
        "preferred matchFields by node name",
        preferred((10, term(fields=[name_in("node2")])), (30, term([expr("key", "In", "value")]))),
        [("node1", LABEL1), ("node2", LABEL2)], {}, [0, MAX_NODE_SCORE], True,
    ),
]  # fmt: skip


@pytest.mark.parametrize(
    ("name", "affinity", "nodes", "args", "want", "run_pre_score"),
    SCORE_CASES,
    ids=[c[0] for c in SCORE_CASES],
)
def test_score(
    name: str,
    affinity: dict | None,
    nodes: list[tuple[str, dict]],
    args: dict,
    want: list[int],
    run_pre_score: bool,
) -> None:
    snap = build_snapshot([node(n, labels) for n, labels in nodes])
    p = pod(node_affinity=affinity)
    plugin = NodeAffinity(args)
    state = CycleState()
    rows = np.arange(snap.n, dtype=np.int32)
    if run_pre_score:
        assert plugin.pre_score(state, p, snap, rows) is None
    raw = plugin.score(state, p, snap, rows)
    assert raw.dtype == np.int64
    assert plugin.normalize(state, p, raw).tolist() == want


def test_pre_score_skips_without_preferred_terms() -> None:
    snap = build_snapshot([node("node1", LABEL1)])
    status = NodeAffinity().pre_score(CycleState(), pod(), snap, np.arange(1))
    assert status is not None and status.code == Code.Skip


def test_broken_preferred_affinity_key_fails_pre_score() -> None:
    """Upstream PreScore errors on an invalid key (the file loader refuses such a pod first, as
    the API server does; a pod decoded from elsewhere reaches the plugin)."""
    p = pod(node_affinity=preferred((2, term([expr("invalid key", "In", "bar")]))))
    snap = build_snapshot([node("node1", LABEL1)])
    st = NodeAffinity().pre_score(CycleState(), p, snap, np.arange(1, dtype=np.int32))
    assert st is not None and st.code == Code.Error and "invalid key" in st.message


def test_run_score_helper_and_raw_scores() -> None:
    snap = build_snapshot([node("node1", LABEL1), node("node5", LABEL5), node("node2", LABEL2)])
    raw, normalized = run_score(NodeAffinity(), pod(node_affinity=AFFINITY2), snap)
    assert raw == [2, 11, 4]
    assert normalized == [18, 100, 36]


# -- property: vectorised masks agree with per-node matching -------------------------------------

_kv = st.sampled_from(["a", "b", "c"])
_val = st.sampled_from(["1", "2", "10"])
_labels = st.dictionaries(_kv, _val, max_size=3)
_expr = st.one_of(
    st.builds(lambda k, vs: expr(k, "In", *vs), _kv, st.lists(_val, min_size=1, max_size=2, unique=True)),
    st.builds(lambda k, vs: expr(k, "NotIn", *vs), _kv, st.lists(_val, min_size=1, max_size=2, unique=True)),
    st.builds(lambda k: expr(k, "Exists"), _kv),
    st.builds(lambda k: expr(k, "DoesNotExist"), _kv),
    st.builds(lambda k, v: expr(k, "Gt", v), _kv, _val),
    st.builds(lambda k, v: expr(k, "Lt", v), _kv, _val),
)
_field = st.builds(
    lambda op, n: {"key": "metadata.name", "operator": op, "values": [n]},
    st.sampled_from(["In", "NotIn"]),
    st.sampled_from(["n0", "n1", "n2"]),
)
_term = st.builds(
    lambda e, f: term(e or None, f or None), st.lists(_expr, max_size=2), st.lists(_field, max_size=1)
)


@settings(max_examples=150, deadline=None)
@given(
    node_labels=st.lists(_labels, min_size=1, max_size=5),
    node_selector=st.one_of(st.none(), _labels),
    req_terms=st.one_of(st.none(), st.lists(_term, min_size=1, max_size=2)),
    pref=st.lists(st.tuples(st.integers(1, 100), _term), max_size=3),
)
def test_matches_per_node_reference(
    node_labels: list[dict],
    node_selector: dict | None,
    req_terms: list[dict] | None,
    pref: list[tuple[int, dict]],
) -> None:
    snap = build_snapshot([node(f"n{i}", labels) for i, labels in enumerate(node_labels)])
    aff: dict[str, Any] = {}
    if req_terms is not None:
        aff.update(required(*req_terms))
    if pref:
        aff.update(preferred(*pref))
    p = pod(node_selector, aff or None)
    plugin = NodeAffinity()
    state = CycleState()
    rows = np.arange(snap.n, dtype=np.int32)
    pre = plugin.pre_filter(state, p, snap)
    res = plugin.filter(state, p, snap, rows)
    na = p.node_affinity
    for i, n in enumerate(snap.nodes):
        fits = all(n.labels.get(k) == v for k, v in (node_selector or {}).items())
        if na is not None and na.required is not None:
            fits = fits and na.required.matches(n.labels, n.name)
        assert res.status_at(i, NAME) == (OK if fits else POD_FAIL)
        if isinstance(pre, PreFilterResult) and fits:
            assert n.name in pre.node_names  # narrowing never drops a fitting node
        if isinstance(pre, Status) and pre.code == Code.UnschedulableAndUnresolvable:
            assert not fits  # a PreFilter rejection only for truly conflicting terms
    raw = plugin.score(state, p, snap, rows).tolist()
    want = [
        sum(
            w
            for w, t in ((t.weight, t.term) for t in (na.preferred if na else ()))
            if t.matches(n.labels, n.name)
        )
        for n in snap.nodes
    ]
    assert raw == want


def test_mask_cache_follows_node_changes_and_snapshots() -> None:
    """Masks are reused across Filter calls but never outlive a node change or another snapshot."""
    snap = build_snapshot([node("a", {"zone": "z1"}), node("b", {"zone": "z2"})])
    p = pod({"zone": "z1"})
    plugin = NodeAffinity({"addedAffinity": required(term([expr("tier", "NotIn", "x")]))})
    state = CycleState()
    plugin.pre_filter(state, p, snap)
    rows = np.arange(2, dtype=np.int32)
    assert plugin.filter(state, p, snap, rows).failed.tolist() == [False, True]
    assert plugin.filter(state.clone(), p, snap, np.array([1], np.int32)).failed.tolist() == [True]
    snap.update_node(Node.parse(node("b", {"zone": "z1", "tier": "x"})))
    assert [plugin.filter(state, p, snap, rows).status_at(i, NAME) for i in range(2)] == [OK, ENFORCED_FAIL]
    other = build_snapshot([node("c", {"zone": "z1", "tier": "x"})])
    assert plugin.filter(state, p, other, np.arange(1)).status_at(0, NAME) == ENFORCED_FAIL


def test_added_affinity_accepts_what_upstream_args_validation_accepts() -> None:
    """Empty nodeSelectorTerms (matches nothing), weight 0 (dropped) and weights above 100."""
    snap = build_snapshot([node("a", {"zone": "z1"}), node("b", {"zone": "z2"})])
    plugin = NodeAffinity(
        {
            "addedAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": []},
                **preferred(
                    (0, term([expr("zone", "In", "z2")])),
                    (200, term([expr("zone", "In", "z1")])),
                    (50, term([expr("zone", "In", "z2")])),
                ),
            }
        }
    )
    assert [t.weight for t in plugin.added_preferred] == [200, 50]
    res = plugin.filter(CycleState(), pod(), snap, np.arange(2, dtype=np.int32))
    assert [res.status_at(i, NAME) for i in range(2)] == [ENFORCED_FAIL, ENFORCED_FAIL]
    raw, normalized = run_score(plugin, pod(), snap)
    assert raw == [200, 50]
    assert normalized == [100, 25]

"""Label and node selectors: parsing/validation tables, matching tables, mask == matches."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from kubesched.api.selectors import (
    FieldRequirement,
    LabelSelector,
    NodeSelector,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    PreferredSchedulingTerm,
    Requirement,
    parse_preferred_terms,
)
from kubesched.errors import InputError
from kubesched.state.labels import LabelIndex

# -- label selectors: matching ---------------------------------------------------------------

WEB = {"app": "web", "tier": "frontend", "env": "prod"}

LABEL_MATCH_CASES: list[tuple[dict[str, Any], dict[str, str], bool]] = [
    ({}, WEB, True),
    ({}, {}, True),
    ({"matchLabels": {"app": "web"}}, WEB, True),
    ({"matchLabels": {"app": "db"}}, WEB, False),
    ({"matchLabels": {"app": "web", "env": "dev"}}, WEB, False),
    ({"matchLabels": {"app": "web"}}, {}, False),
    ({"matchLabels": {"empty": ""}}, {"empty": ""}, True),
    ({"matchLabels": {"empty": ""}}, {}, False),
    ({"matchExpressions": [{"key": "app", "operator": "In", "values": ["web", "api"]}]}, WEB, True),
    ({"matchExpressions": [{"key": "app", "operator": "In", "values": ["db"]}]}, WEB, False),
    ({"matchExpressions": [{"key": "missing", "operator": "In", "values": ["x"]}]}, WEB, False),
    ({"matchExpressions": [{"key": "app", "operator": "NotIn", "values": ["db"]}]}, WEB, True),
    ({"matchExpressions": [{"key": "app", "operator": "NotIn", "values": ["web"]}]}, WEB, False),
    ({"matchExpressions": [{"key": "missing", "operator": "NotIn", "values": ["x"]}]}, WEB, True),
    ({"matchExpressions": [{"key": "app", "operator": "Exists"}]}, WEB, True),
    ({"matchExpressions": [{"key": "missing", "operator": "Exists"}]}, WEB, False),
    ({"matchExpressions": [{"key": "missing", "operator": "DoesNotExist"}]}, WEB, True),
    ({"matchExpressions": [{"key": "app", "operator": "DoesNotExist", "values": []}]}, WEB, False),
    (
        {
            "matchLabels": {"app": "web"},
            "matchExpressions": [
                {"key": "env", "operator": "In", "values": ["prod"]},
                {"key": "canary", "operator": "DoesNotExist"},
            ],
        },
        WEB,
        True,
    ),
    (
        {
            "matchLabels": {"app": "web"},
            "matchExpressions": [{"key": "tier", "operator": "NotIn", "values": ["frontend"]}],
        },
        WEB,
        False,
    ),
    ({"matchLabels": None, "matchExpressions": None}, WEB, True),
]


@pytest.mark.parametrize(("sel", "labels", "expected"), LABEL_MATCH_CASES)
def test_label_selector_matches(sel: dict[str, Any], labels: dict[str, str], expected: bool) -> None:
    selector = LabelSelector.parse(sel, "spec.selector")
    assert selector is not None
    assert selector.matches(labels) is expected
    idx = LabelIndex()
    idx.append(labels, "only")
    idx.append({"unrelated": "x"}, "other")
    assert bool(selector.mask(idx)[0]) is expected


def test_none_and_empty() -> None:
    assert LabelSelector.parse(None, "x") is None
    empty = LabelSelector.parse({}, "x")
    assert empty is not None and empty.is_empty
    assert not LabelSelector.from_match_labels({"a": "b"}).is_empty
    idx = LabelIndex()
    for i in range(3):
        idx.append({"i": str(i)}, f"n{i}")
    assert empty.mask(idx).tolist() == [True, True, True]


def test_selectors_are_canonical_and_hashable() -> None:
    a = LabelSelector.parse(
        {
            "matchLabels": {"b": "2", "a": "1"},
            "matchExpressions": [{"key": "c", "operator": "In", "values": ["y", "x"]}],
        },
        "s",
    )
    b = LabelSelector.parse(
        {
            "matchExpressions": [{"key": "c", "operator": "In", "values": ["x", "y"]}],
            "matchLabels": {"a": "1", "b": "2"},
        },
        "s",
    )
    assert a == b and hash(a) == hash(b)
    assert {a: 1}[b] == 1
    assert str(a) == "a in (1),b in (2),c in (x,y)"
    with pytest.raises(AttributeError):
        a.requirements = ()  # type: ignore[misc]


def test_hand_built_bad_gt_matches_nothing() -> None:
    idx = LabelIndex()
    idx.append({"a": "5"}, "n0")
    for r in (Requirement("a", "Gt", frozenset(["x"])), Requirement("a", "Lt", frozenset(["1", "9"]))):
        assert not r.matches({"a": "5"})
        assert r.mask(idx).tolist() == [False]


def test_with_requirements_and_from_match_labels() -> None:
    base = LabelSelector.from_match_labels({"app": "web"})
    merged = base.with_requirements([Requirement("pod-template-hash", "In", frozenset(["abc"]))])
    assert merged.matches({"app": "web", "pod-template-hash": "abc"})
    assert not merged.matches({"app": "web", "pod-template-hash": "def"})
    assert base.matches({"app": "web", "pod-template-hash": "def"})  # unchanged
    assert merged.with_requirements([]) == merged
    assert LabelSelector().with_requirements([Requirement("a", "Exists")]).matches({"a": ""})


# -- label selectors: validation -------------------------------------------------------------

LABEL_INVALID: list[tuple[Any, str, str]] = [
    (
        {"matchExpressions": [{"key": "a", "operator": "Equals", "values": ["x"]}]},
        "s.matchExpressions[0].operator",
        'unknown operator "Equals"',
    ),
    (
        {"matchExpressions": [{"key": "a", "operator": "Gt", "values": ["1"]}]},
        "s.matchExpressions[0].operator",
        "Gt",
    ),
    ({"matchExpressions": [{"key": "a"}]}, "s.matchExpressions[0].operator", 'unknown operator ""'),
    ({"matchExpressions": [{"key": "a", "operator": "In"}]}, "s.matchExpressions[0].values", "non-empty"),
    (
        {"matchExpressions": [{"key": "a", "operator": "NotIn", "values": []}]},
        "s.matchExpressions[0].values",
        "non-empty",
    ),
    (
        {"matchExpressions": [{"key": "a", "operator": "Exists", "values": ["x"]}]},
        "s.matchExpressions[0].values",
        "empty",
    ),
    (
        {"matchExpressions": [{"key": "a", "operator": "DoesNotExist", "values": ["x"]}]},
        "s.matchExpressions[0].values",
        "empty",
    ),
    ({"matchExpressions": [{"operator": "Exists"}]}, "s.matchExpressions[0].key", "non-empty"),
    (
        {"matchExpressions": [{"key": "bad key", "operator": "Exists"}]},
        "s.matchExpressions[0].key",
        "invalid label key",
    ),
    (
        {"matchExpressions": [{"key": "a/b/c", "operator": "Exists"}]},
        "s.matchExpressions[0].key",
        "a qualified name must consist of",
    ),
    ({"matchExpressions": [{"key": "/b", "operator": "Exists"}]}, "s.matchExpressions[0].key", "prefix"),
    (
        {"matchExpressions": [{"key": "Example.com/b", "operator": "Exists"}]},
        "s.matchExpressions[0].key",
        "prefix",
    ),
    ({"matchExpressions": [{"key": "x" * 64, "operator": "Exists"}]}, "s.matchExpressions[0].key", "63"),
    (
        {"matchExpressions": [{"key": "a", "operator": "In", "values": ["ok", "-bad"]}]},
        "s.matchExpressions[0].values[1]",
        "invalid label value",
    ),
    (
        {"matchExpressions": [{"key": "a", "operator": "In", "values": [1]}]},
        "s.matchExpressions[0].values[0]",
        "string",
    ),
    (
        {"matchExpressions": [{"key": "a", "operator": "In", "values": "x"}]},
        "s.matchExpressions[0].values",
        "list",
    ),
    (
        {"matchExpressions": [{"key": "a", "operator": "Exists", "extra": 1}]},
        "s.matchExpressions[0].extra",
        "unknown field",
    ),
    ({"matchExpressions": {"key": "a"}}, "s.matchExpressions", "list"),
    ({"matchExpressions": ["a"]}, "s.matchExpressions[0]", "object"),
    ({"matchLabels": {"app": True}}, "s.matchLabels.app", "string"),
    ({"matchLabels": {"app": "x" * 64}}, "s.matchLabels.app", "63"),
    ({"matchLabels": {"bad key": "x"}}, "s.matchLabels", "invalid label key"),
    ({"matchLabels": ["a"]}, "s.matchLabels", "object"),
    ({"matchLabel": {"a": "b"}}, "s.matchLabel", 'unknown field "matchLabel"'),
    ("app=web", "s", "object"),
]


@pytest.mark.parametrize(("sel", "path", "message"), LABEL_INVALID)
def test_label_selector_invalid(sel: Any, path: str, message: str) -> None:
    with pytest.raises(InputError) as err:
        LabelSelector.parse(sel, "s")
    assert err.value.path == path
    assert message in err.value.reason


def test_unknown_operator_message_exact() -> None:
    with pytest.raises(InputError) as err:
        LabelSelector.parse(
            {"matchExpressions": [{"key": "a", "operator": "X", "values": ["1"]}]}, "spec.sel"
        )
    assert str(err.value) == 'spec.sel.matchExpressions[0].operator: unknown operator "X"'


@pytest.mark.parametrize(
    "key", ["a", "a.b-c_d", "example.com/a", "kubernetes.io/hostname", "x" * 63, "a1.b2/C-3", "A"]
)
def test_valid_label_keys(key: str) -> None:
    assert LabelSelector.parse({"matchExpressions": [{"key": key, "operator": "Exists"}]}, "s") is not None


# -- node selectors --------------------------------------------------------------------------

NODE = {
    "zone": "us-1a",
    "cores": "16",
    "gpu": "true",
    "weird": "12abc",
    "neg": "-5",
    "big": "9223372036854775807",
}


def expr(key: str, op: str, *values: str) -> dict[str, Any]:
    d: dict[str, Any] = {"key": key, "operator": op}
    if values:
        d["values"] = list(values)
    return d


def term(*exprs: dict[str, Any], fields: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    d: dict[str, Any] = {}
    if exprs:
        d["matchExpressions"] = list(exprs)
    if fields is not None:
        d["matchFields"] = fields
    return d


NAME_IN = {"key": "metadata.name", "operator": "In", "values": ["node-1"]}
NAME_NOT_IN = {"key": "metadata.name", "operator": "NotIn", "values": ["node-1"]}

NODE_MATCH_CASES: list[tuple[list[dict[str, Any]], str, bool]] = [
    ([term(expr("zone", "In", "us-1a", "us-1b"))], "node-1", True),
    ([term(expr("zone", "In", "us-1b"))], "node-1", False),
    ([term(expr("zone", "NotIn", "us-1b"))], "node-1", True),
    ([term(expr("zone", "NotIn", "us-1a"))], "node-1", False),
    ([term(expr("nope", "NotIn", "x"))], "node-1", True),
    ([term(expr("gpu", "Exists"))], "node-1", True),
    ([term(expr("nope", "Exists"))], "node-1", False),
    ([term(expr("nope", "DoesNotExist"))], "node-1", True),
    ([term(expr("gpu", "DoesNotExist"))], "node-1", False),
    ([term(expr("cores", "Gt", "8"))], "node-1", True),
    ([term(expr("cores", "Gt", "16"))], "node-1", False),
    ([term(expr("cores", "Lt", "17"))], "node-1", True),
    ([term(expr("cores", "Lt", "16"))], "node-1", False),
    ([term(expr("cores", "Gt", "-100"))], "node-1", True),
    ([term(expr("neg", "Lt", "-4"))], "node-1", True),
    ([term(expr("big", "Gt", "9223372036854775806"))], "node-1", True),  # exact, not float
    ([term(expr("weird", "Gt", "1"))], "node-1", False),  # non-integer label: no match
    ([term(expr("weird", "Lt", "99999"))], "node-1", False),
    ([term(expr("zone", "Gt", "1"))], "node-1", False),
    ([term(expr("nope", "Lt", "1"))], "node-1", False),  # absent label: no match
    ([term(expr("cores", "Gt", "+8"))], "node-1", True),
    # AND within a term, OR across terms
    ([term(expr("zone", "In", "us-1a"), expr("gpu", "DoesNotExist"))], "node-1", False),
    ([term(expr("zone", "In", "us-1b")), term(expr("gpu", "Exists"))], "node-1", True),
    ([term(expr("zone", "In", "us-1b")), term(expr("gpu", "In", "false"))], "node-1", False),
    # matchFields
    ([term(fields=[NAME_IN])], "node-1", True),
    ([term(fields=[NAME_IN])], "node-2", False),
    ([term(fields=[NAME_NOT_IN])], "node-1", False),
    ([term(fields=[NAME_NOT_IN])], "node-2", True),
    ([term(expr("zone", "In", "us-1a"), fields=[NAME_IN])], "node-1", True),
    ([term(expr("zone", "In", "us-1b"), fields=[NAME_IN])], "node-1", False),
    ([term(expr("zone", "In", "us-1a"), fields=[NAME_IN])], "node-2", False),
    # an empty term matches nothing, even next to terms that do not match either
    ([term()], "node-1", False),
    ([{"matchExpressions": [], "matchFields": []}], "node-1", False),
    ([None], "node-1", False),
    ([term(), term(expr("gpu", "Exists"))], "node-1", True),
]


@pytest.mark.parametrize(("terms", "node_name", "expected"), NODE_MATCH_CASES)
def test_node_selector_matches(terms: list[dict[str, Any]], node_name: str, expected: bool) -> None:
    sel = NodeSelector.parse({"nodeSelectorTerms": terms}, "aff")
    assert sel is not None
    assert sel.matches(NODE, node_name) is expected
    idx = LabelIndex()
    idx.append({}, "filler")
    row = idx.append(NODE, node_name)
    idx.append({"zone": "other", "cores": "x"}, "node-x")
    assert bool(sel.mask(idx)[row]) is expected


def test_node_selector_none_and_parts() -> None:
    assert NodeSelector.parse(None, "x") is None
    sel = NodeSelector.parse({"nodeSelectorTerms": [term(expr("a", "Gt", "1"), fields=[NAME_IN])]}, "x")
    assert sel is not None
    (t,) = sel.terms
    assert t.match_expressions == (NodeSelectorRequirement("a", "Gt", frozenset(["1"])),)
    assert t.match_fields == (FieldRequirement("In", "node-1"),)
    assert hash(sel) == hash(
        NodeSelector.parse({"nodeSelectorTerms": [term(expr("a", "Gt", "1"), fields=[NAME_IN])]}, "y")
    )
    assert NodeSelectorTerm().is_empty
    idx = LabelIndex()
    idx.append({"a": "2"}, "node-1")
    assert NodeSelectorTerm().mask(idx).tolist() == [False]
    assert t.mask(idx).tolist() == [True]


NODE_INVALID: list[tuple[Any, str, str]] = [
    ({}, "a.nodeSelectorTerms", "at least one"),
    ({"nodeSelectorTerms": []}, "a.nodeSelectorTerms", "at least one"),
    (
        {"nodeSelectorTerms": [term(expr("z", "Like", "x"))]},
        "a.nodeSelectorTerms[0].matchExpressions[0].operator",
        "Like",
    ),
    (
        {"nodeSelectorTerms": [term(expr("z", "In"))]},
        "a.nodeSelectorTerms[0].matchExpressions[0].values",
        "non-empty",
    ),
    (
        {"nodeSelectorTerms": [term(expr("z", "Exists", "x"))]},
        "a.nodeSelectorTerms[0].matchExpressions[0].values",
        "empty",
    ),
    (
        {"nodeSelectorTerms": [term(expr("z", "Gt"))]},
        "a.nodeSelectorTerms[0].matchExpressions[0].values",
        "exactly one",
    ),
    (
        {"nodeSelectorTerms": [term(expr("z", "Lt", "1", "2"))]},
        "a.nodeSelectorTerms[0].matchExpressions[0].values",
        "exactly one",
    ),
    (
        {"nodeSelectorTerms": [term(expr("z", "Gt", "1.5"))]},
        "a.nodeSelectorTerms[0].matchExpressions[0].values[0]",
        "integers",
    ),
    (
        {"nodeSelectorTerms": [term(expr("z", "Gt", "9223372036854775808"))]},
        "a.nodeSelectorTerms[0].matchExpressions[0].values[0]",
        "integers",
    ),
    (
        {"nodeSelectorTerms": [term(), term(expr("bad key", "Exists"))]},
        "a.nodeSelectorTerms[1].matchExpressions[0].key",
        "invalid label key",
    ),
    (
        {
            "nodeSelectorTerms": [
                term(fields=[{"key": "metadata.namespace", "operator": "In", "values": ["x"]}])
            ]
        },
        "a.nodeSelectorTerms[0].matchFields[0].key",
        "metadata.name",
    ),
    (
        {"nodeSelectorTerms": [term(fields=[{"key": "metadata.name", "operator": "Exists"}])]},
        "a.nodeSelectorTerms[0].matchFields[0].operator",
        "In or NotIn",
    ),
    (
        {
            "nodeSelectorTerms": [
                term(fields=[{"key": "metadata.name", "operator": "In", "values": ["a", "b"]}])
            ]
        },
        "a.nodeSelectorTerms[0].matchFields[0].values",
        "exactly one",
    ),
    (
        {"nodeSelectorTerms": [term(fields=[{"key": "metadata.name", "operator": "In", "values": []}])]},
        "a.nodeSelectorTerms[0].matchFields[0].values",
        "exactly one",
    ),
    (
        {"nodeSelectorTerms": [{"matchExpression": []}]},
        "a.nodeSelectorTerms[0].matchExpression",
        "unknown field",
    ),
    ({"nodeSelectorTerms": "x"}, "a.nodeSelectorTerms", "list"),
    ({"terms": []}, "a.terms", "unknown field"),
]


@pytest.mark.parametrize(("sel", "path", "message"), NODE_INVALID)
def test_node_selector_invalid(sel: Any, path: str, message: str) -> None:
    with pytest.raises(InputError) as err:
        NodeSelector.parse(sel, "a")
    assert err.value.path == path
    assert message in err.value.reason


def test_preferred_terms() -> None:
    terms = parse_preferred_terms(
        [
            {"weight": 10, "preference": term(expr("zone", "In", "us-1a"))},
            {"weight": 100, "preference": term(expr("gpu", "Exists"))},
            {"weight": 1},  # no preference: an empty term, accepted but never matches
        ],
        "p",
    )
    assert [t.weight for t in terms] == [10, 100, 1]
    assert [t.term.matches(NODE, "n") for t in terms] == [True, True, False]
    assert parse_preferred_terms(None, "p") == []
    assert isinstance(terms[0], PreferredSchedulingTerm)


@pytest.mark.parametrize(
    ("items", "path", "message"),
    [
        ([{"weight": 0, "preference": term(expr("a", "Exists"))}], "p[0].weight", "1-100"),
        ([{"weight": 101, "preference": term(expr("a", "Exists"))}], "p[0].weight", "1-100"),
        ([{"weight": "5", "preference": term(expr("a", "Exists"))}], "p[0].weight", "integer"),
        ([{"weight": True, "preference": term(expr("a", "Exists"))}], "p[0].weight", "integer"),
        ([{"preference": term(expr("a", "Exists"))}], "p[0].weight", "integer"),
        (
            [
                {"weight": 1, "preference": term(expr("a", "Exists"))},
                {"weight": 1, "preference": term(expr("a", "Nope"))},
            ],
            "p[1].preference.matchExpressions[0].operator",
            "Nope",
        ),
        ({"weight": 1}, "p", "list"),
    ],
)
def test_preferred_terms_invalid(items: Any, path: str, message: str) -> None:
    with pytest.raises(InputError) as err:
        parse_preferred_terms(items, "p")
    assert err.value.path == path
    assert message in err.value.reason


# -- property: mask(index) == [matches(row)] ------------------------------------------------

KEYS = ["a", "b", "c", "example.com/d"]
VALUES = ["0", "1", "7", "-3", "x", "", "10", "007", "9223372036854775807"]

label_sets = st.dictionaries(st.sampled_from(KEYS), st.sampled_from(VALUES), max_size=len(KEYS))
value_sets = st.frozensets(st.sampled_from(VALUES + ["never"]), min_size=1, max_size=3)
label_requirements = st.one_of(
    st.builds(Requirement, st.sampled_from(KEYS + ["zz"]), st.sampled_from(["In", "NotIn"]), value_sets),
    st.builds(Requirement, st.sampled_from(KEYS + ["zz"]), st.sampled_from(["Exists", "DoesNotExist"])),
)
int_requirements = st.builds(
    lambda k, op, n: Requirement(k, op, frozenset([str(n)])),
    st.sampled_from(KEYS + ["zz"]),
    st.sampled_from(["Gt", "Lt"]),
    st.integers(-5, 12) | st.just(2**63 - 2),
)
label_selectors = st.builds(LabelSelector, st.lists(label_requirements, max_size=4).map(tuple))


def node_requirements() -> st.SearchStrategy[NodeSelectorRequirement]:
    return st.one_of(label_requirements, int_requirements).map(
        lambda r: NodeSelectorRequirement(r.key, r.op, r.values)
    )


field_requirements = st.builds(
    FieldRequirement, st.sampled_from(["In", "NotIn"]), st.sampled_from(["n0", "n3", "zz"])
)
node_terms = st.builds(
    NodeSelectorTerm,
    st.lists(node_requirements(), max_size=3).map(tuple),
    st.lists(field_requirements, max_size=2).map(tuple),
)
node_selectors = st.builds(NodeSelector, st.lists(node_terms, min_size=1, max_size=3).map(tuple))

# Random index histories: appends, updates and swap-removes.
index_ops = st.lists(
    st.one_of(
        st.tuples(st.just("append"), label_sets),
        st.tuples(st.just("update"), st.integers(0, 30), label_sets),
        st.tuples(st.just("remove"), st.integers(0, 30)),
    ),
    max_size=25,
)


def build_index(ops: list[tuple]) -> LabelIndex:
    idx = LabelIndex(capacity=1)
    counter = 0
    for op in ops:
        if op[0] == "append":
            idx.append(op[1], f"n{counter}")
            counter += 1
        elif op[0] == "update" and len(idx):
            idx.update(op[1] % len(idx), op[2])
        elif op[0] == "remove" and len(idx):
            idx.swap_remove(op[1] % len(idx))
    return idx


@settings(max_examples=300, deadline=None, database=None)
@given(index_ops, label_selectors)
def test_label_selector_mask_equals_matches(ops: list[tuple], selector: LabelSelector) -> None:
    idx = build_index(ops)
    expected = [selector.matches(idx.labels(r)) for r in range(len(idx))]
    got = selector.mask(idx)
    assert got.dtype == np.bool_ and got.shape == (len(idx),)
    assert got.tolist() == expected


@settings(max_examples=300, deadline=None, database=None)
@given(index_ops, node_selectors)
def test_node_selector_mask_equals_matches(ops: list[tuple], selector: NodeSelector) -> None:
    idx = build_index(ops)
    expected = [selector.matches(idx.labels(r), idx.name(r)) for r in range(len(idx))]
    got = selector.mask(idx)
    assert got.dtype == np.bool_ and got.shape == (len(idx),)
    assert got.tolist() == expected
    for t in selector.terms:
        assert t.mask(idx).tolist() == [t.matches(idx.labels(r), idx.name(r)) for r in range(len(idx))]


@settings(max_examples=200, deadline=None, database=None)
@given(label_sets, label_selectors)
def test_parse_of_wire_form_round_trips(labels: dict[str, str], selector: LabelSelector) -> None:
    """A selector written back to matchExpressions parses to an equal, equally-matching selector."""
    wire = {
        "matchExpressions": [
            {"key": r.key, "operator": r.op, **({"values": sorted(r.values)} if r.values else {})}
            for r in selector.requirements
        ]
    }
    assume(all(v != "-3" for r in selector.requirements for v in r.values))  # not a valid label value
    parsed = LabelSelector.parse(wire, "s")
    assert parsed is not None
    assert set(parsed.requirements) == set(selector.requirements)
    assert parsed.matches(labels) == selector.matches(labels)

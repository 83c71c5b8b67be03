"""LabelIndex: columns stay consistent with each row's labels through append/update/swap_remove."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kubesched.state.labels import LabelIndex, parse_int64


def assert_consistent(idx: LabelIndex, expected: list[tuple[str, dict[str, str]]]) -> None:
    """Every column and name agrees with the expected (name, labels) rows."""
    assert len(idx) == len(expected)
    assert list(idx.names()) == [n for n, _ in expected]
    keys = set(idx.keys()) | {k for _, labels in expected for k in labels}
    for key in keys:
        codes = idx.codes(key)
        assert codes.dtype == np.int32
        assert len(codes) == len(expected)
        values = idx.values_of(key)
        for row, (_name, labels) in enumerate(expected):
            if key in labels:
                assert codes[row] >= 0
                assert values[codes[row]] == labels[key]
                assert idx.vocab(key)[labels[key]] == codes[row]
            else:
                assert codes[row] == -1
    for row, (name, labels) in enumerate(expected):
        assert idx.labels(row) == labels
        assert idx.row_of(name) == row
        assert idx.name(row) == name


def test_append_and_codes() -> None:
    idx = LabelIndex()
    assert len(idx) == 0
    assert idx.append({"zone": "a", "tier": "gpu"}, "n0") == 0
    assert idx.append({"zone": "b"}, "n1") == 1
    assert idx.append({"zone": "a"}, "n2") == 2
    assert list(idx.codes("zone")) == [0, 1, 0]
    assert list(idx.codes("tier")) == [0, -1, -1]
    assert list(idx.codes("never-seen")) == [-1, -1, -1]
    assert dict(idx.vocab("zone")) == {"a": 0, "b": 1}
    assert idx.values_of("zone") == ["a", "b"]
    assert dict(idx.vocab("never-seen")) == {}
    assert idx.values_of("never-seen") == []


def test_codes_is_a_readonly_view_without_copy() -> None:
    idx = LabelIndex()
    for i in range(10):
        idx.append({"k": str(i % 3)}, f"n{i}")
    a, b = idx.codes("k"), idx.codes("k")
    assert np.shares_memory(a, b)
    with pytest.raises(ValueError):
        a[0] = 5
    # An unknown key still has the current length.
    assert len(idx.codes("nope")) == 10
    idx.append({}, "n10")
    assert len(idx.codes("nope")) == 11
    assert idx.codes("k")[10] == -1


def test_update_changes_adds_and_drops_keys() -> None:
    idx = LabelIndex()
    idx.append({"a": "1", "b": "x"}, "n0")
    idx.append({"a": "2"}, "n1")
    idx.update(0, {"a": "2", "c": "new"})
    assert_consistent(idx, [("n0", {"a": "2", "c": "new"}), ("n1", {"a": "2"})])
    assert idx.codes("a")[0] == idx.codes("a")[1]


def test_swap_remove_moves_last_row() -> None:
    idx = LabelIndex()
    idx.append({"zone": "a", "x": "1"}, "n0")
    idx.append({"zone": "b"}, "n1")
    idx.append({"zone": "c", "y": "2"}, "n2")
    idx.swap_remove(0)
    # The last row (n2) now sits in row 0.
    assert_consistent(idx, [("n2", {"zone": "c", "y": "2"}), ("n1", {"zone": "b"})])
    assert idx.row_of("n0") is None
    # A later append must not inherit stale codes from the freed slot.
    idx.append({}, "n3")
    assert_consistent(idx, [("n2", {"zone": "c", "y": "2"}), ("n1", {"zone": "b"}), ("n3", {})])
    idx.swap_remove(2)  # removing the last row moves nothing
    assert_consistent(idx, [("n2", {"zone": "c", "y": "2"}), ("n1", {"zone": "b"})])
    idx.swap_remove(0)
    idx.swap_remove(0)
    assert_consistent(idx, [])
    assert len(idx.codes("zone")) == 0


def test_errors() -> None:
    idx = LabelIndex()
    idx.append({}, "n0")
    with pytest.raises(ValueError):
        idx.append({}, "n0")
    with pytest.raises(IndexError):
        idx.update(1, {})
    with pytest.raises(IndexError):
        idx.swap_remove(-1)
    with pytest.raises(IndexError):
        idx.labels(5)


def test_labels_returns_a_copy() -> None:
    idx = LabelIndex()
    src = {"a": "1"}
    idx.append(src, "n0")
    src["a"] = "2"
    got = idx.labels(0)
    got["a"] = "3"
    assert idx.labels(0) == {"a": "1"}


def test_int_values() -> None:
    idx = LabelIndex()
    for i, v in enumerate(["10", "-3", "abc", "+7", "1.5", "9223372036854775807", "9223372036854775808", ""]):
        idx.append({"n": v}, f"n{i}")
    floats = idx.int_values("n")
    assert floats[0] == 10 and floats[1] == -3 and floats[3] == 7
    assert math.isnan(floats[2]) and math.isnan(floats[4]) and math.isnan(floats[6]) and math.isnan(floats[7])
    ints, valid = idx.int64_values("n")
    assert list(valid) == [True, True, False, True, False, True, False, False]
    assert ints[5] == 2**63 - 1  # exact, unlike the float table
    # Tables follow vocabulary growth.
    idx.append({"n": "42"}, "late")
    assert idx.int_values("n")[-1] == 42
    assert idx.int64_values("n")[0][-1] == 42
    assert len(idx.int_values("missing")) == 0


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("0", 0),
        ("-0", 0),
        ("+5", 5),
        ("007", 7),
        ("", None),
        ("1e3", None),
        (" 1", None),
        ("1_0", None),
        ("٣", None),
    ],
)
def test_parse_int64(text: str, expected: int | None) -> None:
    assert parse_int64(text) == expected


def test_name_mask() -> None:
    idx = LabelIndex()
    for i in range(5):
        idx.append({}, f"n{i}")
    assert list(idx.name_mask(["n1", "n3", "ghost"])) == [False, True, False, True, False]
    idx.swap_remove(1)
    assert list(idx.name_mask(["n4"])) == [False, True, False, False]


def test_many_nodes_grow() -> None:
    idx = LabelIndex(capacity=1)
    expected = []
    for i in range(3000):
        labels = {"zone": f"z{i % 3}", "host": f"h{i}"}
        if i % 7 == 0:
            labels["gpu"] = "true"
        idx.append(labels, f"n{i}")
        expected.append((f"n{i}", labels))
    assert_consistent(idx, expected)
    assert int((idx.codes("gpu") >= 0).sum()) == len(range(0, 3000, 7))


_labels = st.dictionaries(
    st.sampled_from(["a", "b", "c", "d"]), st.sampled_from(["0", "1", "2", "x"]), max_size=4
)
_ops = st.lists(
    st.one_of(
        st.tuples(st.just("append"), _labels),
        st.tuples(st.just("update"), st.integers(0, 20), _labels),
        st.tuples(st.just("remove"), st.integers(0, 20)),
    ),
    max_size=40,
)


@settings(max_examples=150, deadline=None, database=None)
@given(_ops)
def test_random_operations_stay_consistent(ops: list[tuple]) -> None:
    idx = LabelIndex(capacity=2)
    model: list[tuple[str, dict[str, str]]] = []
    counter = 0
    for op in ops:
        if op[0] == "append":
            name = f"n{counter}"
            counter += 1
            assert idx.append(op[1], name) == len(model)
            model.append((name, dict(op[1])))
        elif op[0] == "update" and model:
            row = op[1] % len(model)
            idx.update(row, op[2])
            model[row] = (model[row][0], dict(op[2]))
        elif op[0] == "remove" and model:
            row = op[1] % len(model)
            idx.swap_remove(row)
            last = model.pop()
            if row < len(model):
                model[row] = last
    assert_consistent(idx, model)

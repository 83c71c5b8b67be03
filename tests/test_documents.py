"""kubesched.documents: YAML from parser events equals PyYAML's safe loading; failures are one line."""

from __future__ import annotations

import datetime

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from kubesched import documents
from kubesched.errors import InputError

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=False),
    st.text(max_size=20),
    st.sampled_from(["yes", "off", "~", "0x1F", "1_000", "2020-10-05", "<<", "=", "-", ".inf", "010", "1:20"]),
)
values = st.recursive(
    scalars,
    lambda children: st.one_of(
        st.lists(children, max_size=4), st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=25,
)


def _safe_load_all(text: str) -> list:
    """PyYAML's own result, with timestamps as strings (as the event builder keeps them)."""

    class Loader(documents.StrictLoader):
        pass

    Loader.add_constructor("tag:yaml.org,2002:timestamp", lambda loader, node: loader.construct_scalar(node))
    return list(yaml.load_all(text, Loader=Loader))


@settings(max_examples=150, deadline=None)
@given(st.lists(values, min_size=1, max_size=3), st.booleans())
def test_event_builder_matches_pyyaml(docs: list, flow: bool) -> None:
    text = yaml.safe_dump_all(docs, default_flow_style=flow)
    assert documents.load_documents(text, "x.yaml", keep_empty=True) == _safe_load_all(text)


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=200))
def test_any_text_loads_or_is_one_input_error(text: str) -> None:
    try:
        documents.load_documents(text, "x.yaml")
    except InputError as e:
        assert "\n" not in str(e) and str(e).startswith("x.yaml: ")


YAML_SNIPPETS = ["a:", " b", "- ", "[", "]", "{", "}", ",", ":", "&a ", "*a", "!!int ", "!!float ", "!foo ", "\t", "\n",
                 "'", '"', "? ", "<<: ", "---\n", "...\n", "%YAML 1.1\n", "|\n", ">\n", "\x00", "\x85", "#"]  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(st.sampled_from(YAML_SNIPPETS), st.text(max_size=3)), max_size=40))
def test_yaml_shaped_noise_loads_or_is_one_input_error(parts: list[str]) -> None:
    text = "".join(parts)
    try:
        documents.load_documents(text, "x.yaml")
    except InputError as e:
        assert "\n" not in str(e)


def test_timestamps_stay_strings_as_kubernetes_reads_them() -> None:
    assert documents.load_documents("t: 2001-12-14t21:59:43.10-05:00\n", "x.yaml") == [
        {"t": "2001-12-14t21:59:43.10-05:00"}
    ]
    assert not isinstance(documents.load_documents("d: 2020-01-01\n", "x.yaml")[0]["d"], datetime.date)


def test_merge_keys_and_anchors_are_yaml_semantics() -> None:
    text = "base: &b {x: 1, y: 2}\nobj:\n  <<: *b\n  y: 3\n"
    assert documents.load_documents(text, "x.yaml") == [{"base": {"x": 1, "y": 2}, "obj": {"x": 1, "y": 3}}]


def test_json_fast_path_and_errors() -> None:
    assert documents.load_documents('{"a": [1, 2.5, "x"]}', "x.json") == [{"a": [1, 2.5, "x"]}]
    # a YAML file holding one JSON value is read as JSON; YAML flow syntax still works
    assert documents.load_documents('{"a": 1}', "x.yaml") == [{"a": 1}]
    assert documents.load_documents("{a: 1}", "x.yaml") == [{"a": 1}]
    with pytest.raises(InputError, match=r"^x\.json: invalid JSON at line 2 column 1: "):
        documents.load_documents('{"a":\n}', "x.json")
    with pytest.raises(InputError, match=r"invalid JSON at line 1 column 7"):  # NaN is not JSON
        documents.load_documents('{"a": NaN}', "x.json")


def test_byte_order_mark_and_utf8(tmp_path) -> None:
    f = tmp_path / "bom.yaml"
    f.write_bytes(b"\xef\xbb\xbfkind: Pod\n")
    assert documents.read_documents(str(f)) == [{"kind": "Pod"}]
    f.write_bytes(b"kind: \xc3\x28\n")
    with pytest.raises(InputError, match=r"not UTF-8 text \(byte 0xc3 at line 1, offset 6\)"):
        documents.read_documents(str(f))


def test_missing_file(tmp_path) -> None:
    with pytest.raises(InputError, match="cannot read config file: No such file"):
        documents.read_documents(str(tmp_path / "nope.yaml"), "config file")


def test_shared_nodes_within_bound_are_fine() -> None:
    text = "a: &a [1, 2]\nb: [*a, *a, *a]\n"
    doc = documents.load_documents(text, "x.yaml")[0]
    assert doc["b"] == [[1, 2]] * 3

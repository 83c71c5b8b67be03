"""Reading cluster dumps: YAML and JSON, multi-document, kind: List, typed lists, PriorityClasses."""

import json

import pytest
import yaml

from kubesched.errors import InputError
from kubesched.load import load_cluster
from kubesched.testing import make_node, make_pod


def test_kubectl_list_dump_in_json(tmp_path):
    dump = {
        "apiVersion": "v1",
        "kind": "List",
        "items": [
            make_node("n1", cpu="2"),
            make_pod("p", requests={"cpu": "1"}, node="n1"),
            {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team", "labels": {"a": "b"}}},
            {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm"}},
        ],
    }
    f = tmp_path / "dump.json"
    f.write_text(json.dumps(dump))
    objs = load_cluster([str(f)])
    assert [n.name for n in objs.nodes] == ["n1"]
    assert objs.pods[0].node_name == "n1"
    assert objs.namespaces[0].labels == {"a": "b"}
    assert objs.skipped == {"ConfigMap": 1}


def test_multi_document_yaml_and_typed_lists(tmp_path):
    node_list = {"apiVersion": "v1", "kind": "NodeList", "items": [{k: v for k, v in make_node("a").items() if k != "kind"}]}
    f = tmp_path / "c.yaml"
    f.write_text(yaml.safe_dump_all([node_list, make_pod("x"), None, make_node("b")]))
    objs = load_cluster([str(f)])
    assert [n.name for n in objs.nodes] == ["a", "b"]
    assert [p.name for p in objs.pods] == ["x"]


def test_priority_classes_resolve_priorities(tmp_path):
    docs = [
        {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "hi"}, "value": 100},
        {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "base"}, "value": 5,
         "globalDefault": True},
        make_pod("a", spec={"priorityClassName": "hi"}),
        make_pod("b"),
        make_pod("c", priority=7),
    ]
    f = tmp_path / "c.yaml"
    f.write_text(yaml.safe_dump_all(docs))
    prio = {p.name: p.priority for p in load_cluster([str(f)]).pods}
    assert prio == {"a": 100, "b": 5, "c": 7}


@pytest.mark.parametrize(
    "text, expected",
    [
        ("kind: Node\nmetadata: {name: a\n", "invalid YAML at line"),
        ("apiVersion: v1\nmetadata: {name: a}\n", "kind is required"),
        ("apiVersion: v1\nkind: Widget\nmetadata: {name: a}\n", 'kind: unknown kind "Widget"'),
        (yaml.safe_dump(make_node("a", cpu="four")), 'status.capacity.cpu: invalid quantity "four"'),
        (yaml.safe_dump_all([make_node("a"), make_node("a")]), 'duplicate Node "a"'),
    ],
)
def test_bad_files_name_file_and_field(tmp_path, text, expected):
    f = tmp_path / "bad.yaml"
    f.write_text(text)
    with pytest.raises(InputError) as e:
        load_cluster([str(f)])
    assert expected in str(e.value) and "bad.yaml" in str(e.value)

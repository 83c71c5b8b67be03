"""Reading config files: YAML and JSON, and malformed input reported with the file and line."""

from __future__ import annotations

import json

import pytest
from config_testlib import fake_points_of, score

from kubesched.config import V1, load_config, parse_document
from kubesched.errors import InputError


def write(tmp_path, name: str, text: str | bytes) -> str:
    path = tmp_path / name
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text)
    return str(path)


def test_load_yaml(tmp_path) -> None:
    path = write(
        tmp_path,
        "sched.yaml",
        "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nparallelism: 4\n"
        "profiles:\n- schedulerName: my-scheduler\n  plugins:\n    score:\n      disabled:\n      - name: ImageLocality\n",
    )
    cfg = load_config(path, fake_points_of)
    assert cfg.parallelism == 4
    assert cfg.source == path
    assert cfg.scheduler_names == ["my-scheduler"]
    assert "ImageLocality" not in dict(score(cfg))


def test_load_json(tmp_path) -> None:
    path = write(
        tmp_path,
        "sched.json",
        json.dumps({"apiVersion": V1, "kind": "KubeSchedulerConfiguration", "percentageOfNodesToScore": 50}),
    )
    assert load_config(path, fake_points_of).percentage_of_nodes_to_score == 50


def test_malformed_yaml_names_file_and_line(tmp_path) -> None:
    path = write(
        tmp_path,
        "bad.yaml",
        "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles:\n  - schedulerName: [a\n",
    )
    with pytest.raises(InputError) as info:
        load_config(path, fake_points_of)
    msg = str(info.value)
    assert msg.startswith(f"{path}: invalid YAML at line ")
    assert info.value.source == path
    assert "\n" not in msg


def test_malformed_yaml_line_number(tmp_path) -> None:
    path = write(tmp_path, "tabs.yaml", "kind: KubeSchedulerConfiguration\nprofiles:\n\t- a\n")
    with pytest.raises(InputError, match=r"invalid YAML at line 3 column 1"):
        load_config(path, fake_points_of)


def test_duplicate_key_is_an_error_with_line(tmp_path) -> None:
    path = write(
        tmp_path,
        "dup.yaml",
        "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nparallelism: 2\nparallelism: 3\n",
    )
    with pytest.raises(InputError) as info:
        load_config(path, fake_points_of)
    assert str(info.value) == (
        f'{path}: invalid YAML at line 4 column 1: duplicate field "parallelism" (first at line 3)'
    )


def test_malformed_json_names_line(tmp_path) -> None:
    path = write(tmp_path, "bad.json", '{\n  "apiVersion": "kubescheduler.config.k8s.io/v1",\n  "kind": \n}')
    with pytest.raises(InputError, match=r"bad\.json: invalid JSON at line 4 column 1"):
        load_config(path, fake_points_of)


def test_empty_file(tmp_path) -> None:
    path = write(tmp_path, "empty.yaml", "# nothing\n")
    with pytest.raises(InputError) as info:
        load_config(path, fake_points_of)
    assert str(info.value) == f"{path}: empty document: expected a KubeSchedulerConfiguration"


def test_multiple_documents(tmp_path) -> None:
    path = write(tmp_path, "two.yaml", "kind: A\n---\nkind: B\n")
    with pytest.raises(InputError, match=r"expected one YAML document, found 2"):
        load_config(path, fake_points_of)


def test_missing_file(tmp_path) -> None:
    path = str(tmp_path / "nope.yaml")
    with pytest.raises(InputError) as info:
        load_config(path, fake_points_of)
    assert str(info.value).startswith(f"{path}: cannot read config file:")


def test_not_utf8(tmp_path) -> None:
    path = write(tmp_path, "bin.yaml", b"\xff\xfe\x00kind")
    with pytest.raises(InputError, match="cannot read config file"):
        load_config(path, fake_points_of)


def test_field_error_in_file_names_file_and_path(tmp_path) -> None:
    path = write(
        tmp_path,
        "sched.yaml",
        "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles:\n"
        "- pluginConfig:\n  - name: DefaultPreemption\n  - name: NodeResourcesFit\n    args:\n"
        "      scoringStrategy:\n        type: Fastest\n",
    )
    with pytest.raises(InputError) as info:
        load_config(path, fake_points_of)
    assert str(info.value).startswith(
        f'{path}: profiles[0].pluginConfig[1].args.scoringStrategy.type: Unsupported value: "Fastest"'
    )


def test_scalar_document(tmp_path) -> None:
    path = write(tmp_path, "s.yaml", "just text\n")
    with pytest.raises(InputError, match=r"expected a KubeSchedulerConfiguration mapping, got string"):
        load_config(path, fake_points_of)


def test_parse_document_yaml_is_json_superset() -> None:
    assert parse_document('{"a": [1, 2]}', "x.yaml") == {"a": [1, 2]}

"""The oracle on its own, against values from kube-scheduler's unit tests and Go's arithmetic."""

from __future__ import annotations

from oracle_plugins import default_normalize, go_div, go_round, normalized_image_name


def test_go_arithmetic() -> None:
    assert go_div(-7, 2) == -3 and go_div(7, -2) == -3 and go_div(7, 2) == 3
    assert [go_round(x) for x in (0.5, 1.5, 2.5, -2.5, 2.4999999999999996)] == [1, 2, 3, -3, 2]


def test_default_normalize_matches_upstream_tables() -> None:
    # tainttoleration TestTaintTolerationScore: 0, 1, 2 intolerable taints -> 100, 50, 0.
    assert default_normalize({"a": 0, "b": 1, "c": 2}, reverse=True) == {"a": 100, "b": 50, "c": 0}
    # nodeaffinity TestNodeAffinityPriority: raw 2, 11, 4 -> 18, 100, 36.
    assert default_normalize({"a": 2, "b": 11, "c": 4}, reverse=False) == {"a": 18, "b": 100, "c": 36}
    assert default_normalize({"a": 0, "b": 0}, reverse=True) == {"a": 100, "b": 100}


def test_normalized_image_name() -> None:
    # imagelocality TestNormalizedImageName.
    assert normalized_image_name("root") == "root:latest"
    assert normalized_image_name("gcr.io:5000/root") == "gcr.io:5000/root:latest"
    assert normalized_image_name("root@" + "sha256:" + "0" * 64) == "root@sha256:" + "0" * 64
    assert normalized_image_name("gcr.io:5000/root:v1") == "gcr.io:5000/root:v1"

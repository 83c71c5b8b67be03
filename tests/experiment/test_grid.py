"""Grid parsing: seeds, policies, traces (names, families, 'all'), the data folder."""

from __future__ import annotations

from pathlib import Path

import pytest

from kubesched.errors import InputError
from kubesched.experiment.grid import (
    NODE_FILE,
    PAPER_TRACES,
    build_grid,
    check_data_dir,
    parse_policies,
    parse_seeds,
    parse_traces,
)


@pytest.mark.parametrize(
    ("text", "seeds"),
    [
        ("42-51", list(range(42, 52))),
        ("42", [42]),
        ("42,45", [42, 45]),
        ("42-44,50", [42, 43, 44, 50]),
        ("44,42-44", [44, 42, 43]),  # duplicates kept once, first position
        (" 7 - 8 ", [7, 8]),
    ],
)
def test_parse_seeds(text: str, seeds: list[int]) -> None:
    assert parse_seeds(text) == seeds


@pytest.mark.parametrize(("text", "word"), [("51-42", "empty range"), ("abc", "not an integer"), ("", "empty"),
                                            ("42,,43", "empty"), ("-3", "not an integer"), ("1-x", "not an integer"),
                                            ("0-20000", "more than")])
def test_parse_seeds_rejects(text: str, word: str) -> None:
    with pytest.raises(InputError) as e:
        parse_seeds(text)
    assert str(e.value).startswith("--seeds: ") and word in str(e.value)


def test_parse_policies() -> None:
    assert parse_policies("fgd,BestFit,FGD") == ["FGD", "BestFit"]
    with pytest.raises(InputError, match=r"^--policies: unknown policy 'Tetris'"):
        parse_policies("FGD,Tetris")


def _data(tmp_path: Path, traces: list[str]) -> Path:
    (tmp_path / NODE_FILE).write_text("sn,cpu_milli,memory_mib,gpu,model\n")
    for t in traces:
        (tmp_path / f"openb_pod_list_{t}.csv").write_text("name\n")
    return tmp_path


def test_parse_traces_names_families_all(tmp_path: Path) -> None:
    d = _data(tmp_path, [*PAPER_TRACES, "cpu037"])
    assert parse_traces("gpushare,default", d) == ["gpushare40", "gpushare60", "gpushare80", "gpushare100", "default"]
    assert parse_traces("all", d) == list(PAPER_TRACES) and len(PAPER_TRACES) == 17
    assert parse_traces("cpu037", d) == ["cpu037"]  # any pod list in the folder, beyond the paper's


def test_parse_traces_rejects_unknown_and_missing(tmp_path: Path) -> None:
    d = _data(tmp_path, ["default"])
    with pytest.raises(InputError, match=r"^--traces: unknown trace 'nope'.*available: default"):
        parse_traces("default,nope", d)
    with pytest.raises(InputError, match=r"^--traces: unknown trace 'gpushare40'"):
        parse_traces("all", d)  # 'all' needs every paper trace


def test_check_data_dir(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"^--data-dir: not a folder"):
        check_data_dir(tmp_path / "missing")
    with pytest.raises(InputError, match=rf"^--data-dir: no {NODE_FILE}"):
        check_data_dir(tmp_path)
    assert check_data_dir(_data(tmp_path, [])) == tmp_path


def test_build_grid_order_and_keys(tmp_path: Path) -> None:
    grid = build_grid(["default", "cpu050"], ["FGD", "Random"], [1, 2], tmp_path, max_pods=5)
    assert [s.key for s in grid[:3]] == ["default/FGD/seed-1", "default/FGD/seed-2", "default/Random/seed-1"]
    assert len(grid) == 8 and {s.max_pods for s in grid} == {5}
    assert grid[-1].pod_file == tmp_path / "openb_pod_list_cpu050.csv"

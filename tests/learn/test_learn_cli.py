"""`kubesched learn`: bad input is one line and exit code 2."""

from __future__ import annotations

from pathlib import Path

import pytest

from kubesched.cli import main


@pytest.mark.parametrize(
    "flags, start",
    [
        (["search", "--trace", "nope"], "kubesched: error: --trace: \"nope\": no such file, and not a shipped openb pod list"),
        (["search", "--train-seeds", "40-44"], "kubesched: error: --train-seeds: seeds 42,43,44 are held out"),
        (["search", "--val-seeds", "x"], "kubesched: error: --val-seeds: not an integer seed"),
        (["search", "--train-seeds", "1-3", "--val-seeds", "3-4"], "kubesched: error: --val-seeds: validation seeds must differ"),
        (["search", "--trials", "0"], "kubesched: error: --trials: must be at least 1"),
        (["search", "--max-nodes", "0"], "kubesched: error: --max-nodes: must be at least 1"),
        (["train", "--bc-smoothing", "1"], "kubesched: error: --bc-smoothing: must be in [0, 1), got 1.0"),
        (["train", "--frag-shaping", "-1"], "kubesched: error: --frag-shaping: must be a number at least 0, got -1.0"),
        (["train", "--ent-coef", "nan"], "kubesched: error: --ent-coef: must be a number at least 0, got nan"),
    ],
)
def test_bad_input_exits_2(flags: list[str], start: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["learn", *flags, "-d", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert err.startswith(start), err
    assert err.count("\n") == 1
    assert not (tmp_path / "o").exists()


def test_search_writes_its_outputs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "s"
    rc = main(["learn", "search", "--max-nodes", "40", "--max-pods", "200", "--trials", "2", "--finalists", "1",
               "--train-seeds", "0", "--val-seeds", "100", "--workers", "1", "-d", str(out)])
    assert rc == 0
    assert {p.name for p in out.iterdir()} == {"search.json", "best-config.yaml", "trials.csv"}
    assert "chosen:" in capsys.readouterr().out

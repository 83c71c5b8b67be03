"""The searched policy and the RL policy ship as the files `kubesched learn eval` takes
(kubesched/learn/shipped/search.json for ``--search``, policy.npz for ``--model``): they load and
run on a small instance, and the package data carries every shipped file."""

from __future__ import annotations

import fnmatch
import json
import tomllib
from pathlib import Path

import pytest

from kubesched.cli import main
from kubesched.learn.search import params_from_json
from kubesched.plugins.learned.features import DEFAULT_K, FEATURE_SET
from kubesched.plugins.learned.model import load_model

ROOT = Path(__file__).resolve().parents[2]
SHIPPED = ROOT / "kubesched" / "learn" / "shipped"


def test_the_shipped_search_is_the_documented_choice() -> None:
    doc = json.loads((SHIPPED / "search.json").read_text())
    params = params_from_json(doc["chosen"]["params"])
    assert params.describe() == doc["chosen"]["describe"]
    assert dict(params.weights)["FGD"] > 0 and doc["train_seeds"] == [0, 1, 2] and doc["val_seeds"] == [100, 101, 102, 103]
    assert len(doc["trials"]) == 30


def test_the_shipped_model_is_a_trained_residual_policy() -> None:
    model = load_model(SHIPPED / "policy.npz")
    assert (model.k, model.feature_set, model.base) == (DEFAULT_K, FEATURE_SET, "FGD")
    assert [w.shape[1] for w in model.weights] == [64, 64, DEFAULT_K]
    assert model.meta["seeds"] == list(range(8))


def test_learn_eval_takes_the_shipped_policies(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Both files on a small instance (40 nodes, 300 pods), two seeds."""
    out = tmp_path / "e"
    rc = main(["learn", "eval", "--max-nodes", "40", "--max-pods", "300", "--seeds", "100-101", "--workers", "1",
               "--no-plots", "--search", str(SHIPPED / "search.json"), "--model", str(SHIPPED / "policy.npz"),
               "-d", str(out)])
    assert rc == 0
    res = json.loads((out / "result.json").read_text())
    pol = res["traces"]["default"]["policies"]
    assert set(pol) == {"FGD", "BestFit", "search", "learned"}
    for name in ("search", "learned"):
        assert len(pol[name]["values"]) == 2 and all(0 <= v <= 100 for v in pol[name]["values"])
    assert res["candidates"]["search"]["train_seeds"] == [0, 1, 2]
    assert res["candidates"]["learned"]["kind"] == "rl" and res["latency"]["decisions"] > 0
    assert "| learned |" in capsys.readouterr().out


def test_the_package_data_carries_every_shipped_file() -> None:
    patterns = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]["kubesched"]
    files = [p.relative_to(ROOT / "kubesched").as_posix() for p in SHIPPED.iterdir() if p.is_file()]
    assert {"learn/shipped/search.json", "learn/shipped/policy.npz"} <= set(files)
    for f in files:
        assert any(fnmatch.fnmatch(f, pat) for pat in patterns), f

"""The search track: configurations any command runs unchanged, and a smoke search that learns."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import yaml

from kubesched.cli import main
from kubesched.config import parse_config
from kubesched.experiment.protocol import policy_config
from kubesched.learn.data import Instance
from kubesched.learn.search import BESTFIT_PARAMS, FGD_PARAMS, LEXICOGRAPHIC, Params, evaluate, search
from kubesched.plugins import in_tree_registry


def test_fgd_params_are_the_fgd_policy(small: Instance) -> None:
    for seed in (0, 1):
        assert evaluate(small, FGD_PARAMS, seed)[0] == evaluate(small, policy_config("FGD", small.prepare(0).typical), seed)[0]
        assert evaluate(small, BESTFIT_PARAMS, seed)[0] == evaluate(small, policy_config("BestFit"), seed)[0]


def test_tie_break_is_lexicographic() -> None:
    p = Params.of({"FGD": 3, "BestFit": 2}, 500.0, "GpuPacking")
    assert p.score_weights() == {"FGDScore": 3 * LEXICOGRAPHIC, "BestFitScore": 2 * LEXICOGRAPHIC, "GpuPackingScore": 1}
    assert Params.of({"FGD": 1}, tie_break="FGD").score_weights() == {"FGDScore": LEXICOGRAPHIC + 1}
    with pytest.raises(ValueError):
        Params.of({"FGD": 0})
    with pytest.raises(ValueError):
        Params.of({"Nope": 1})


def test_config_runs_in_schedule_unchanged(small: Instance, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    p = Params.of({"FGD": 10, "BestFit": 1, "DotProd": 2}, 250.0, "GpuClustering")
    doc = p.config(small.prepare(0).typical)
    parse_config(doc, "test", in_tree_registry(entry_points=False).points_of)
    f = tmp_path / "best.yaml"
    f.write_text(yaml.safe_dump(doc))
    assert main(["schedule", "--config", str(f), "-o", "json"]) == 0
    assert '"node"' in capsys.readouterr().out


def test_smoke_search_beats_random() -> None:
    """A few trials on a small fixed instance: the chosen policy leaves less GPU unallocated than
    random placement on validation seeds it never trained on, and no worse than FGD there."""
    tiny = Instance("default", "gpu", max_nodes=40, max_pods=250)
    res = search(tiny, [0, 1], [100, 101], trials=4, finalists=2, sampler_seed=0)
    assert len(res.trials) == 4 and res.trials[0]["describe"] == FGD_PARAMS.describe()
    chosen = res.chosen["validation_mean"]
    fgd = res.finalists[0]["validation_mean"]
    random = np.mean([evaluate(tiny, policy_config("Random"), s)[0] for s in (100, 101)])
    assert chosen <= fgd
    assert chosen < random - 1.0
    assert res.cpu_seconds > 0

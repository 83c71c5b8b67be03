"""The track's metric is defined or refused, never NaN: on a small instance whose pods jump over
98.5-101.5 % arrived (8 nodes, seed 4: from 82.43 % to 109.10 %) nothing averages NaN."""

from __future__ import annotations

from pathlib import Path

import pytest

from kubesched.cli import main
from kubesched.errors import InputError
from kubesched.learn.data import Instance
from kubesched.learn.metric import metric_pods
from kubesched.learn.search import FGD_PARAMS, evaluate

JUMPY = Instance("default", "gpu", max_nodes=8, max_pods=100)
SEED = 4  # arrived goes from 82.43 % to 109.10 % in one pod
FLAGS = ["--max-nodes", "8", "--max-pods", "100"]


def test_undefined_metric_is_refused_not_nan() -> None:
    with pytest.raises(InputError, match=r"seed 4: no pod's arrival lands between 98.5 % and 101.5 % arrived "
                                         r"\(arrived goes from 82.43 % to 109.10 %\)"):
        metric_pods(JUMPY.prepare(SEED))
    with pytest.raises(InputError, match="seed 4"):
        evaluate(JUMPY, FGD_PARAMS, SEED)  # the search's objective and eval's values


def test_defined_metric_counts_through_the_last_binned_event() -> None:
    n = metric_pods(JUMPY.prepare(0))
    value, _ = evaluate(JUMPY, FGD_PARAMS, 0)
    assert n > 0 and 0 <= value < 100


@pytest.mark.parametrize(
    "argv",
    [
        ["search", *FLAGS, "--train-seeds", "3-4", "--val-seeds", "100", "--trials", "1"],
        ["eval", *FLAGS, "--seeds", "3-4"],
        ["bound", *FLAGS, "--seeds", "3-4"],
    ],
)
def test_cli_refuses_before_anything_runs(argv: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = ["-d", str(tmp_path / "o")] if argv[0] != "bound" else []
    assert main(["learn", *argv, *out, "--workers", "1"]) == 2
    captured = capsys.readouterr()
    assert captured.err.startswith("kubesched: error: trace default: seed 4: no pod's arrival lands between")
    assert captured.err.count("\n") == 1 and captured.out == ""
    assert not (tmp_path / "o").exists()


def test_env_info_has_no_nan_metric() -> None:
    from kubesched.rl import NodeSelectEnv

    env = NodeSelectEnv(seeds=[SEED], max_nodes=8, max_pods=100, k=4)
    _, info = env.reset(seed=0)
    done = False
    while not done:
        _, _, done, _, info = env.step(0)
    assert "unallocated_at_100" not in info and info["failed_gpus"] >= 0
    env.reset(seed=0, options={"run_seed": 0})  # a seed where it is defined: present and finite
    done = False
    while not done:
        _, _, done, _, info = env.step(0)
    assert 0 <= info["unallocated_at_100"] < 100

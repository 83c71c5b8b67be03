"""`kubesched tune`: bad input is one line and exit 2, before anything is written."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from tune_helpers import write_pack_case

from kubesched.cli import main


def _run(args: list[str], capsys) -> tuple[int, str]:  # noqa: ANN001
    rc = main(["tune", *args])
    return rc, capsys.readouterr().err


@pytest.mark.parametrize(
    ("extra", "needle"),
    [
        (["--metric", "gpu.unknown"], 'unknown metric "gpu.unknown"'),
        (["--metric", "pods.failed", "--weights", "NodeResourcesFit,Nope"], 'unknown plugin "Nope"'),
        (["--metric", "pods.failed", "--weight-range", "50-10"], "--weight-range"),
        (["--metric", "pods.failed", "--param", "NodeResourcesFit.scoringStrategy.type=A|B"], "value 'A'"),
        (["--metric", "pods.failed", "--param", "Nope.x=1:2"], 'unknown plugin "Nope"'),
        (["--metric", "pods.failed", "--sim-seeds", "1,x"], "--sim-seeds"),
        (["--metric", "pods.failed", "--trials", "-1"], "--trials"),
        (["--metric", "pods.failed", "--profile", "other"], 'no profile "other"'),
        (["--metric", "pods.failed", "--inflate", "0"], "--inflate"),
        (["--metric", "pods.failed", "--direction", "down"], "--direction"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(tmp_path: Path, capsys, extra: list[str], needle: str) -> None:  # noqa: ANN001
    cluster, _ = write_pack_case(tmp_path)
    out = tmp_path / "out"
    rc, err = _run(["-f", str(cluster), "--out-dir", str(out), *extra], capsys)
    assert rc == 2
    assert err.startswith("kubesched: error:") and err.count("\n") == 1 and needle in err
    assert not out.exists()


def test_a_base_config_that_fails_to_load(tmp_path: Path, capsys) -> None:  # noqa: ANN001
    cluster, _ = write_pack_case(tmp_path)
    bad = tmp_path / "bad.yaml"
    bad.write_text(
        "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles: 3\n"
    )
    rc, err = _run(["-f", str(cluster), "--config", str(bad), "--metric", "pods.failed"], capsys)
    assert rc == 2 and str(bad) in err and err.count("\n") == 1


def test_no_workload_and_undefined_metric(tmp_path: Path, capsys) -> None:  # noqa: ANN001
    rc, err = _run(["--metric", "pods.failed"], capsys)
    assert rc == 2 and "exactly one workload" in err
    cluster, base = write_pack_case(tmp_path)
    # no GPU in the cluster: the simulator has no fragmentation figure, so there is nothing to tune
    rc, err = _run(
        [
            "-f",
            str(cluster),
            "--config",
            str(base),
            "--metric",
            "gpu.frag_pct.mean",
            "--trials",
            "1",
            "--out-dir",
            str(tmp_path / "o"),
        ],
        capsys,
    )
    assert rc == 2 and "reports no value" in err


def test_without_optuna_it_says_how_to_install(tmp_path: Path, capsys, monkeypatch) -> None:  # noqa: ANN001
    cluster, _ = write_pack_case(tmp_path)
    monkeypatch.setitem(sys.modules, "optuna", None)  # what `import optuna` meets when it is not installed
    rc, err = _run(["-f", str(cluster), "--metric", "pods.failed"], capsys)
    assert rc == 2 and "pip install 'kubesched[tune]'" in err and err.count("\n") == 1


def test_importing_kubesched_and_its_cli_does_not_import_optuna() -> None:
    code = "import sys, kubesched.cli as c; c.build_parser(); assert 'optuna' not in sys.modules, 'optuna imported'"
    subprocess.run([sys.executable, "-c", code], check=True)


def test_help_lists_the_metrics(capsys) -> None:  # noqa: ANN001
    with pytest.raises(SystemExit) as e:
        main(["tune", "--help"])
    assert e.value.code == 0
    text = capsys.readouterr().out
    assert "gpu.unallocated_pct" in text and "queueing_delay_s.p90" in text and "--weight-range" in text


def test_storage_keeps_the_study_and_a_taken_name_is_refused(tmp_path: Path, capsys) -> None:  # noqa: ANN001
    import optuna

    cluster, base = write_pack_case(tmp_path)
    url = f"sqlite:///{tmp_path / 'tune.db'}"
    common = ["-f", str(cluster), "--config", str(base), "--mode", "arrival", "--metric", "pods.failed"]
    common += ["--trials", "2", "--storage", url, "--study-name", "s1", "--no-progress"]
    assert _run([*common, "--out-dir", str(tmp_path / "a")], capsys)[0] == 0
    assert len(optuna.load_study(study_name="s1", storage=url).trials) == 3  # base config + 2
    rc, err = _run([*common, "--out-dir", str(tmp_path / "b")], capsys)
    assert rc == 2 and 'study "s1" already exists' in err and not (tmp_path / "b").exists()
    rc, err = _run([*common[:-5], "--storage", "nosuchdriver://x", "--out-dir", str(tmp_path / "c")], capsys)
    assert rc == 2 and "--storage" in err and not (tmp_path / "c").exists()


def test_constant_objective_warnings() -> None:
    from kubesched.tune.metrics import constant_objective_warnings

    (w,) = constant_objective_warnings(["gpu.unallocated_pct"], [[100.0], [100.0], [100.0]], "time")
    assert w.startswith("metric gpu.unallocated_pct was 100 in all 3 trials")
    assert "use --mode arrival or --inflate" in w
    (w,) = constant_objective_warnings(["pods.failed"], [[2.0], [2.0]], "arrival")
    assert "could not optimise it" in w and "--mode arrival" not in w
    assert constant_objective_warnings(["pods.failed"], [[2.0], [1.0]], "time") == []
    assert constant_objective_warnings(["pods.failed"], [[2.0]], "time") == []  # one trial: nothing to compare
    two = constant_objective_warnings(["pods.failed", "gpu.allocated_milli"], [[1.0, 5.0], [2.0, 5.0]], "time")
    assert len(two) == 1 and two[0].startswith("metric gpu.allocated_milli was 5 ")


def test_a_final_state_metric_in_time_mode_warns(tmp_path: Path, capsys) -> None:  # noqa: ANN001
    import json

    import yaml

    from kubesched.testing import make_node, make_pod

    docs = [make_node(f"n{i}", cpu="4", memory="8Gi") for i in range(2)]
    for i in range(3):
        p = make_pod(f"p{i}", requests={"cpu": "1"})
        p["metadata"]["annotations"] = {"kubesched.io/arrival-time": str(i), "kubesched.io/duration": "60"}
        docs.append(p)
    cluster = tmp_path / "c.yaml"
    cluster.write_text(yaml.safe_dump_all(docs))
    out = tmp_path / "out"
    rc, err = _run(
        ["-f", str(cluster), "--metric", "allocation_pct.cpu.final", "--trials", "2", "--no-progress", "--no-plots", "-d", str(out)],
        capsys,
    )
    assert rc == 0
    (line,) = [ln for ln in err.splitlines() if "warning" in ln]
    assert "metric allocation_pct.cpu.final was 0 in all 3 trials" in line and "--mode arrival" in line
    assert json.loads((out / "summary.json").read_text())["warnings"] == [line.removeprefix("kubesched: warning: ")]


def test_the_best_config_counts_the_trials_asked_for(tmp_path: Path, capsys) -> None:  # noqa: ANN001
    """``--trials 2`` reads "of 2 trials and the base config" (Optuna holds the base config as a
    trial too: "of 3" read as if three trials had been asked for)."""
    cluster, base = write_pack_case(tmp_path)
    out = tmp_path / "out"
    args = ["-f", str(cluster), "--config", str(base), "--mode", "arrival", "--metric", "pods.failed"]
    assert _run([*args, "--trials", "2", "--no-progress", "--no-plot", "--out-dir", str(out)], capsys)[0] == 0
    first = (out / "best-config.yaml").read_text().splitlines()[0]
    assert "of 2 trials and the base config;" in first, first


def test_the_report_cuts_no_name_at_80_columns(tmp_path: Path, capsys, monkeypatch) -> None:  # noqa: ANN001
    """Issue 29: at 80 columns the weights table read ``InterPodAffinity.ignorePreferredTermsOfExi…``;
    a table too wide for the terminal is printed a block per row instead."""
    monkeypatch.setenv("COLUMNS", "80")
    cluster, base = write_pack_case(tmp_path)
    arg = "InterPodAffinity.ignorePreferredTermsOfExistingPods"
    args = ["-f", str(cluster), "--config", str(base), "--mode", "arrival", "--metric", "pods.failed",
            "--weights", "NodeResourcesBalancedAllocation,NodeResourcesFit", "--param", f"{arg}=true|false",
            "--param", "NodeResourcesFit.scoringStrategy.type=MostAllocated|LeastAllocated",
            "--trials", "2", "--no-progress", "--no-plot", "--out-dir", str(tmp_path / "out")]
    assert main(["tune", *args]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert arg in lines, lines  # the weights table (~88 columns wide) as blocks, the arg on a line of its own
    assert "…" not in "".join(lines) and max(map(len, lines)) <= 80
    assert any("pods.failed" in line and "tuned" in line for line in lines)  # the metrics table still fits

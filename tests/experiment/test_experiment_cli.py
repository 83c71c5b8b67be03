"""`kubesched experiment fgd`: bad input is one line naming the flag (exit 2, nothing written); a tiny
real grid on an openb subset runs through the process pool and through local Ray with identical
results."""

from __future__ import annotations

import csv
import gzip
import json
import sys
from pathlib import Path

import pytest

from kubesched.cli import main
from kubesched.trace.bundled import node_list, pod_list


@pytest.mark.parametrize(
    ("flags", "start"),
    [
        (["--traces", "default,bogus"], "--traces: unknown trace 'bogus'"),
        (["--policies", "FGD,Tetris"], "--policies: unknown policy 'Tetris'"),
        (["--seeds", "51-42"], "--seeds: empty range '51-42'"),
        (["--seeds", "x"], "--seeds: not an integer seed"),
        (["--workers", "0"], "--workers: must be at least 1"),
        (["--tune", "nan"], "--tune: must be a positive number"),
        (["--ray-address", " "], "--ray-address: empty address"),
        (["--data-dir", "/nonexistent/openb"], "--data-dir: not a folder"),
    ],
)
def test_bad_input_exits_2(flags: list[str], start: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out"
    code = main(["experiment", "fgd", "--out-dir", str(out), *flags])
    err = capsys.readouterr().err
    assert code == 2
    assert err.startswith(f"kubesched: error: {start}") and err.count("\n") == 1
    assert not out.exists()  # validated before anything is written


def test_report_only_without_runs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["experiment", "fgd", "--report-only", "--out-dir", str(tmp_path / "none")]
    assert main(argv) == 2
    assert capsys.readouterr().err.startswith("kubesched: error: --report-only: no runs in ")


def test_data_dir_without_nodes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["experiment", "fgd", "--data-dir", str(tmp_path), "--out-dir", str(tmp_path / "o")]) == 2
    assert "--data-dir: no openb_node_list_gpu_node.csv" in capsys.readouterr().err


def test_data_dir_of_plain_csvs(tmp_path: Path) -> None:
    """--data-dir reads a user's own uncompressed copy; the runs equal the shipped trace's."""
    own = tmp_path / "openb"
    own.mkdir()
    for src in (node_list("gpu"), pod_list("default")):
        (own / src.name.removesuffix(".gz")).write_bytes(gzip.decompress(src.read_bytes()))
    _run(tmp_path / "own", "--data-dir", str(own), "--seeds", "42", "--policies", "FGD", "--no-plots")
    _run(tmp_path / "shipped", "--seeds", "42", "--policies", "FGD", "--no-plots")
    assert _curves(tmp_path / "own") == _curves(tmp_path / "shipped")


def _run(out: Path, *extra: str) -> None:
    argv = [
        "experiment", "fgd", "--traces", "default", "--policies", "BestFit,FGD",
        "--seeds", "42-43", "--max-nodes", "150", "--max-pods", "600", "--workers", "2", "--no-progress",
        "--out-dir", str(out), *extra,
    ]
    assert main(argv) == 0


def _curves(out: Path) -> dict[str, dict]:
    recs = {}
    for p in sorted((out / "runs").rglob("*.json")):
        d = json.loads(p.read_text())
        for k in ("run_seconds", "total_seconds", "cpu_seconds"):
            d.pop(k)
        recs[str(p.relative_to(out))] = d
    return recs


def test_tiny_grid_process_pool_and_ray_agree(tmp_path: Path) -> None:
    pool, ray_out = tmp_path / "pool", tmp_path / "ray"
    _run(pool)
    rows = list(csv.DictReader(open(pool / "runs.csv")))
    assert [(r["policy"], r["seed"]) for r in rows] == [("BestFit", "42"), ("BestFit", "43"), ("FGD", "42"), ("FGD", "43")]
    for r in rows:
        assert r["nodes"] == "150" and r["pods"] == "600" and int(r["events"]) > 600  # tuned up to 130 %
        assert 0 < float(r["unallocated_100"]) < 30 and float(r["unallocated_130"]) <= float(r["unallocated_100"])
    fgd = [float(r["unallocated_130"]) for r in rows if r["policy"] == "FGD"]
    best = [float(r["unallocated_130"]) for r in rows if r["policy"] == "BestFit"]
    assert sum(fgd) < sum(best)  # FGD strands less than BestFit, even on a subset
    assert {p.name for p in (pool / "figures").iterdir()} == {"curve_default.png", "bars_default.png", "frag_default.png"}
    assert (pool / "aggregate.csv").is_file() and (pool / "summary.md").is_file()
    assert "ray" not in sys.modules  # the process-pool path never imports Ray

    _run(ray_out, "--ray-address", "local", "--no-plots")
    assert json.loads((ray_out / "grid.json").read_text())["backend"] == "ray (local)"
    a, b = _curves(pool), _curves(ray_out)
    assert len(a) == 4 and a == b  # same seeds, same bytes (timings aside)

    # --resume reuses every finished run: nothing is recomputed
    _run(pool, "--resume", "--no-plots")
    assert json.loads((pool / "grid.json").read_text())["ran"] == 0
    # --report-only runs nothing, even for seeds not run yet: it aggregates what is there
    _run(pool, "--report-only", "--seeds", "42-45", "--no-plots")
    meta = json.loads((pool / "grid.json").read_text())
    assert (meta["ran"], meta["reused"]) == (0, 4)


def test_importing_never_imports_ray() -> None:
    import subprocess

    code = (
        "import sys, kubesched, kubesched.cli\n"
        "from kubesched.experiment import aggregate, cli, fanout, figures, grid, published, report, runner\n"
        "kubesched.cli.build_parser()\n"
        "assert 'ray' not in sys.modules and 'matplotlib' not in sys.modules, sorted(sys.modules)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


def test_gpu_model_dra_gives_the_same_grid(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """--gpu-model dra: the same run with the GPUs as ResourceSlices and ResourceClaims gives the
    annotation run's curves; a record says which model made it, and --resume does not take a
    run of the other model for one of this."""
    from kubesched.experiment.grid import build_grid
    from kubesched.experiment.report import read_run, write_run
    from kubesched.experiment.runner import run_one
    from kubesched.trace.bundled import OPENB_DIR

    flags = ["--traces", "default", "--policies", "FGD", "--seeds", "42", "--max-nodes", "30", "--max-pods", "150",
             "--workers", "1", "--no-progress", "--no-plots"]
    dra = tmp_path / "dra"
    assert main(["experiment", "fgd", *flags, "--gpu-model", "dra", "--out-dir", str(dra)]) == 0
    (d,) = _curves(dra).values()
    (spec,) = build_grid(["default"], ["FGD"], [42], Path(OPENB_DIR).resolve(), max_nodes=30, max_pods=150)
    ann = tmp_path / "ann"
    write_run(ann, run_one(spec))  # the annotation run, in this process
    (a,) = _curves(ann).values()
    assert (a.pop("gpu_model"), d.pop("gpu_model")) == ("annotations", "dra")
    assert a == d
    assert [r["gpu_model"] for r in csv.DictReader(open(dra / "runs.csv"))] == ["dra"]
    assert read_run(ann, spec) is not None and read_run(dra, spec) is None  # --resume would run it again
    capsys.readouterr()
    with pytest.raises(SystemExit) as exit_:
        main(["experiment", "fgd", *flags, "--gpu-model", "cdi", "--out-dir", str(tmp_path / "x")])
    assert exit_.value.code == 2
    assert "argument --gpu-model: invalid choice: 'cdi'" in capsys.readouterr().err

"""``kubesched experiment elastic``: a small run end to end, and bad input as one line, exit 2."""

from __future__ import annotations

import csv
import json

import pytest

from kubesched.cli import main


def test_small_scenario_writes_its_outputs(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")  # the printed table: no line wider than the terminal
    out = tmp_path / "out"
    rc = main(
        [
            "experiment", "elastic", "--limit", "250", "--seeds", "0", "--workers", "1",
            "--modes", "static-base,static-peak,ca-least-waste,karpenter", "--profiles", "pack",
            "--compression", "600", "-d", str(out),
        ]
    )  # fmt: skip
    assert rc == 0
    rows = list(csv.DictReader(open(out / "runs.csv")))
    assert [r["mode"] for r in rows] == ["static-base", "static-peak", "ca-least-waste", "karpenter"]
    summary = json.loads((out / "summary.json").read_text())
    by = {a["mode"]: a for a in summary["aggregate"]}
    assert by["static-peak"]["gpu_hours_vs_static_peak"] == pytest.approx(1.0)
    # the autoscaler starts from the base cluster and grows: it adds nodes, static-base does not
    assert by["ca-least-waste"]["nodes_added"] > 0 and by["static-base"]["nodes_added"] == 0
    assert by["ca-least-waste"]["failed_pct"] <= by["static-base"]["failed_pct"]
    assert summary["scenario"]["base_shape"] == "g2-8gpu-96c-384g"
    assert len(summary["scenario"]["node_groups"]) == 15
    assert summary["pareto"]
    series = list(csv.DictReader(open(out / "series" / "ca-least-waste-pack-seed0.csv")))
    assert {"t", "nodes", "provisioning", "pending", "gpu_alloc", "gpu_provisioned"} <= set(series[0])
    page = (out / "report.html").read_text()
    assert "Pareto front" in page and page.count("data:image/png;base64,") >= 4
    printed = capsys.readouterr().out.splitlines()
    assert any(line.startswith("ca-least-waste  pack") for line in printed), printed  # a block per row
    assert max(map(len, printed)) <= 80


@pytest.mark.parametrize(
    ("doc", "line"),
    [
        ("expander: cheapest\n", 'expander: unknown expander "cheapest"'),
        ("nodeGroups:\n- {name: g, shape: h100-8gpu, max: 2}\n", 'nodeGroups[0].shape: unknown node shape "h100-8gpu"'),
        ("nodeGroups:\n- {name: g, shape: g2-8gpu-96c-384g, min: 3, max: 1}\n", "nodeGroups[0].min: min (3) is greater than max (1)"),
        ("scaleDown: {delayAfterAdd: -10}\n", "scaleDown.delayAfterAdd: must be 0 or more seconds"),
    ],
)
def test_bad_autoscaler_file_is_one_line_exit_2(tmp_path, capsys, doc, line):
    f = tmp_path / "as.yaml"
    f.write_text(doc)
    rc = main(["experiment", "elastic", "--limit", "10", "--autoscaler", str(f), "-d", str(tmp_path / "o")])
    err = capsys.readouterr().err.strip()
    assert rc == 2
    assert err.count("\n") == 0 and f"{f}: {line}" in err
    assert not (tmp_path / "o").exists()  # nothing half-written


def test_bad_flags(capsys, tmp_path):
    assert main(["experiment", "elastic", "--delay", "90:30", "-d", str(tmp_path / "o")]) == 2
    assert "--delay: min (90) is greater than max (30)" in capsys.readouterr().err
    assert main(["experiment", "elastic", "--modes", "ca-cheapest", "-d", str(tmp_path / "o")]) == 2
    assert '--modes: unknown value "ca-cheapest"' in capsys.readouterr().err

"""`kubesched bench` on the command line: table, JSON file, listing, bad arguments."""

from __future__ import annotations

import json

from kubesched.cli import main


def test_bench_json_file(tmp_path, capsys):
    out = tmp_path / "bench.json"
    code = main(
        ["bench", "--scale", "0.01", "--workload", "SchedulingBasic", "--json", str(out), "--seed", "2"]
    )
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert "SchedulingBasic/5000Nodes_10000Pods" in captured.out
    assert "kernel" in captured.out
    data = json.loads(out.read_text())
    assert data["schema"] == "kubesched.bench/v1"
    assert data["scale"] == 0.01 and data["seed"] == 2
    assert data["machine"]["nproc"] >= 1
    names = [r["workload"] for r in data["results"]]
    assert names == ["SchedulingBasic/5000Nodes_10000Pods", "SchedulingBasic/5000Nodes_50000Pods"]
    for r in data["results"]:
        assert r["scheduled"] == r["measured_pods"] and r["unschedulable"] == 0
        assert r["kernel_pods_per_s"] > 0
        tp = r["throughput"]
        assert tp["metric"] == "SchedulingThroughput" and tp["unit"] == "pods/s"
        assert tp["overall"] > 0
    assert data["kernel"][0]["adaptive"]["nodes"] == 50


def test_bench_json_stdout(capsys):
    code = main(["bench", "--workload", "Memory", "--nodes", "10", "--pods", "50", "--json", "-"])
    captured = capsys.readouterr()
    assert code == 0
    data = json.loads(captured.out)  # the table went to stderr
    (r,) = data["results"]
    assert r["bound_pods"] == 50 and r["nodes"] == 10


def test_bench_list(capsys):
    assert main(["bench", "--list"]) == 0
    out = capsys.readouterr().out
    assert "SchedulingPodAntiAffinity/5000Nodes_2000Pods" in out and "Memory/5000Nodes_150000Pods" in out


def test_bench_bad_arguments(capsys):
    assert main(["bench", "--workload", "NoSuchThing"]) == 2
    err = capsys.readouterr().err
    assert "unknown workload 'NoSuchThing'" in err and err.count("\n") == 1
    assert main(["bench", "--scale", "-1"]) == 2
    assert main(["bench", "--workload", "Memory", "--nodes", "0"]) == 2


def test_bench_output_json_and_wide(capsys):
    argv = ["bench", "--workload", "Memory", "--nodes", "10", "--pods", "50", "--no-progress"]
    assert main([*argv, "-o", "json"]) == 0
    captured = capsys.readouterr()
    (r,) = json.loads(captured.out)["results"]  # stdout is JSON alone; the table is on stderr
    assert r["bound_pods"] == 50 and "Memory/5000Nodes_150000Pods" in captured.err
    assert main([*argv, "--wide"]) == 0
    wide = capsys.readouterr().out
    assert main(argv) == 0
    key = capsys.readouterr().out
    assert "RSS MiB" in wide and "RSS MiB" not in key and "--wide: every column" in key
    assert main([*argv, "-o", "json", "--json", "x.json"]) == 2
    assert "give one of them" in capsys.readouterr().err

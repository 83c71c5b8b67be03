"""Workload sources: the seeded synthetic generator and a slice of the real openb trace."""

from __future__ import annotations

import gzip
import json
import warnings
from pathlib import Path

import numpy as np
import pytest
from sim_helpers import gpu_cfg

from kubesched.cli import main
from kubesched.errors import InputError
from kubesched.gpu.model import pod_gpu_ask
from kubesched.sim.runner import simulate
from kubesched.sim.synthetic import generate, load_spec
from kubesched.trace.bundled import node_list, pod_list

SPEC = {
    "nodes": [
        {"count": 3, "cpu": "16", "memory": "64Gi", "gpus": 4, "gpuModel": "A", "namePrefix": "a-"},
        {"count": 2, "cpu": "8", "memory": "32Gi"},
    ],
    "pods": {
        "count": 400,
        "arrivalRate": 2.0,
        "duration": {"dist": "lognormal", "median": 30, "sigma": 0.5},
        "cpu": {"dist": "uniform", "min": "500m", "max": "2"},
        "memory": {"dist": "choice", "values": ["1Gi", "2Gi"], "weights": [3, 1]},
        "gpu": {"fraction": 0.5, "shareFraction": 0.5, "milli": {"dist": "uniform", "min": 100, "max": 900}},
    },
}


def fingerprint(wl) -> list[tuple]:  # noqa: ANN001
    return [
        (p.name, tuple(sorted(p.requests.items())), tuple(sorted(p.annotations.items())), a, d)
        for p, a, d in zip(wl.pods, wl.arrival, wl.duration, strict=True)
    ]


def test_synthetic_is_seeded() -> None:
    a, b, c = generate(SPEC, 11), generate(SPEC, 11), generate(SPEC, 12)
    assert fingerprint(a) == fingerprint(b)
    assert fingerprint(a) != fingerprint(c)
    assert [n.name for n in a.nodes] == ["a-0", "a-1", "a-2", "node-1-0", "node-1-1"]


def test_synthetic_follows_its_distributions() -> None:
    wl = generate(SPEC, 5)
    arrival = np.asarray(wl.arrival)
    gaps = np.diff(np.concatenate([[0.0], arrival]))
    assert np.all(gaps > 0) and gaps.mean() == pytest.approx(0.5, rel=0.2)  # Poisson, rate 2/s
    dur = np.asarray(wl.duration, float)
    assert np.median(dur) == pytest.approx(30, rel=0.2)
    cpu = np.asarray([p.requests["cpu"] for p in wl.pods])
    assert cpu.min() >= 500 and cpu.max() <= 2000
    asks = [pod_gpu_ask(p) for p in wl.pods]
    gpu = [a for a in asks if a is not None]
    assert len(gpu) / len(asks) == pytest.approx(0.5, abs=0.1)
    share = [a for a in gpu if a.sharing]
    assert len(share) / len(gpu) == pytest.approx(0.5, abs=0.12)
    assert all(100 <= a.milli <= 900 for a in share)
    assert all(a.milli == 1000 for a in gpu if not a.sharing)


def test_same_seed_same_simulation() -> None:
    cfg, reg = gpu_cfg("BestFitScore")
    spec = {**SPEC, "pods": {**SPEC["pods"], "count": 150}}  # busy enough to queue and retry
    r1 = simulate(cfg, generate(spec, 3), seed=3, registry=reg, bins=10)
    r2 = simulate(cfg, generate(spec, 3), seed=3, registry=reg, bins=10)
    assert r1.summary["run"]["scheduling_attempts"] > 150
    assert json.dumps(r1.pods) == json.dumps(r2.pods)
    assert r1.summary["queueing_delay_s"] == r2.summary["queueing_delay_s"]


def test_spec_overrides_and_errors() -> None:
    spec, _ = load_spec(None, ["pods.count=7", "nodes.0.gpus=2"])
    wl = generate(spec, 0)
    assert len(wl.pods) == 7 and wl.nodes[0].allocatable["alibabacloud.com/gpu-count"] == 2
    with pytest.raises(InputError, match="pods.gpu.fraction: invalid value 1.5: must be at least 0 and at most 1"):
        generate({"pods": {"gpu": {"fraction": 1.5}}}, 0)
    with pytest.raises(InputError, match=r"nodes\[0\].cpu: invalid quantity"):
        generate({"nodes": {"cpu": "lots"}}, 0)
    with pytest.raises(InputError, match="no list item 3"):
        load_spec(None, ["nodes.3.count=1"])


def test_huge_drawn_requests_stay_positive() -> None:
    # a quantity past int64 is clamped to 2^63-1, which as a float cast back to int64 wrapped to a
    # negative request (a one-line error without the file, and a numpy RuntimeWarning on stderr)
    spec = {"nodes": {"count": 2, "gpus": 1}, "pods": {"count": 50, "cpu": {"dist": "choice", "values": ["1", 2**70]},
                                            "memory": {"dist": "uniform", "min": "1Gi", "max": "8Ei"}}}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        wl = generate(spec, 0)
    cpu = [p.requests["cpu"] for p in wl.pods]
    assert min(cpu) == 1000 and max(cpu) == 2**62
    assert all(0 < p.requests["memory"] <= 2**62 for p in wl.pods)


def test_a_retry_storm_stops_in_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # issue 22: one default node (32 cores) for pods sized for sixteen; every completion retries
    # every waiting pod, as kube-scheduler does, so the attempts grow with the square of the pods
    # (431,000 for the default 1,000 pods: minutes). 150 pods would take 8,576 attempts; the run
    # stops at 50 per pod (7,500), names the spec and says why.
    spec = tmp_path / "one-node.yaml"
    spec.write_text("nodes: [{}]\npods: {count: 150, gpu: {fraction: 0}}\n")
    rc = main(["simulate", "--synthetic", str(spec), "--out-dir", str(tmp_path / "out"), "--no-plots"])
    err = capsys.readouterr().err
    assert rc == 2 and err.count("\n") == 1, err
    assert err.startswith(f"kubesched: error: synthetic ({spec}): stopped after 7,500 scheduling attempts (50 per pod)")
    assert "pods are waiting and every pod completion retries each of them" in err
    assert not (tmp_path / "out" / "summary.json").exists()


def test_the_attempt_bound_ends_the_engine(tmp_path: Path) -> None:
    cfg, reg = gpu_cfg("BestFitScore")
    spec, source = load_spec(None, ["nodes.0.count=1", "nodes.0.cpu=4", "pods.count=120", "pods.gpu.fraction=0"])
    with pytest.raises(InputError, match=r"^synthetic \(synthetic\): stopped after 500 scheduling attempts \(4.16667 per pod\)"):
        simulate(cfg, generate(spec, 0, source), seed=0, registry=reg, max_attempts=500)


# ---- the real trace -----------------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["time", "arrival"])
def test_openb_slice(mode: str) -> None:
    from kubesched.sim.openb import load_openb

    wl = load_openb(str(pod_list("default")), str(node_list("gpu"))).head(400)
    assert len(wl.nodes) == 1213 and len(wl.pods) == 400
    cfg, reg = gpu_cfg("BestFitScore")
    res = simulate(cfg, wl, mode=mode, seed=0, registry=reg, bins=20)
    s = res.summary
    assert s["gpu"]["capacity_milli"] == 6_212_000  # the paper's 6212 GPUs
    assert s["pods"]["scheduled"] + s["pods"]["failed"] == 400
    assert s["pods"]["scheduled"] > 390  # a nearly empty cluster takes almost everything
    assert s["allocation_pct"]["gpu"]["peak"] > 0
    frag = s["gpu"]["frag_pct"]["mean"]
    assert frag is not None and 0 < frag < 100
    if mode == "time":
        assert s["queueing_delay_s"]["p50"] == 0.0 and s["pods"]["completed"] == s["pods"]["scheduled"]
    else:
        # a pod of the slice only lands once: the GPUs it holds are what the summary counts
        held = sum(g for g, st in zip(res.pods["gpu_milli"], res.pods["state"], strict=True) if st == "running")
        assert s["gpu"]["allocated_milli"] == held


def test_openb_skip_invalid_is_counted(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    lines = gzip.decompress(pod_list("default").read_bytes()).decode().splitlines()[:60]
    lines[5] = lines[5].replace(",1000,", ",abc,", 1) if ",1000," in lines[5] else lines[5] + ",extra"
    lines[9] = "broken-row"
    trace = tmp_path / "pods.csv"
    trace.write_text("\n".join(lines) + "\n")
    nodes = str(node_list("gpu"))
    out = tmp_path / "out"
    rc = main(["simulate", "--trace", str(trace), "--nodes", nodes, "--out-dir", str(out), "--no-plots"])
    assert rc == 2
    assert f"{trace}:" in capsys.readouterr().err
    rc = main(
        ["simulate", "--trace", str(trace), "--nodes", nodes, "--out-dir", str(out), "--no-plots", "--skip-invalid"]
    )
    assert rc == 0
    err = capsys.readouterr().err
    assert "skipped 2 invalid row(s)" in err
    s = json.loads((out / "summary.json").read_text())
    assert s["pods"]["skipped_input_rows"] == 2 and s["pods"]["total"] == 57
    assert len(s["skipped_rows"]) == 2 and all(str(trace) in r for r in s["skipped_rows"])

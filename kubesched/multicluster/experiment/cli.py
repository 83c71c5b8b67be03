"""``kubesched multicluster simulate``: isolated, cloud-only and collaborative on the same arrivals
(the flags are in ``kubesched.commands.multicluster``)."""

from __future__ import annotations

import argparse
import math
from typing import Any

from kubesched.errors import InputError
from kubesched.kit.pool import Pool, workers_from


def parse_seeds(text: str) -> list[int]:
    out: list[int] = []
    try:
        for part in text.split(","):
            lo, sep, hi = part.strip().partition("-")
            out += list(range(int(lo), int(hi) + 1)) if sep else [int(lo)]
    except ValueError:
        raise InputError(f'invalid seeds "{text}" (e.g. 0-9 or 1,2,5)', source="--seeds") from None
    if not out:
        raise InputError("no seeds", source="--seeds")
    return out


def _scenario(args: argparse.Namespace):  # noqa: ANN202
    from dataclasses import replace

    from kubesched.multicluster.experiment.scenario import Scenario, check, parse_scenario

    if args.scenario:
        from kubesched.load import read_documents

        docs = read_documents(args.scenario)
        if len(docs) != 1:
            raise InputError("expected one EdgeCloudScenario document", source=args.scenario)
        sc = parse_scenario(docs[0][1], args.scenario)
    else:
        sc = Scenario()
    if args.busy:  # (window days, time scale): the regime the flag names
        days, scale = args.busy
        sc = replace(sc, time_scale=scale, window_days=days, window_start_days=None)
    if args.time_scale is not None:
        if not (math.isfinite(args.time_scale) and args.time_scale > 0):
            raise InputError(f"must be a positive number, got {args.time_scale:g}", source="--time-scale")
        sc = replace(sc, time_scale=args.time_scale)
    if args.window is not None:
        if not (math.isfinite(args.window) and args.window > 0):
            raise InputError(f"must be a positive number of days, got {args.window:g}", source="--window")
        sc = replace(sc, window_days=args.window)
    if args.window_start is not None:
        if not (math.isfinite(args.window_start) and args.window_start >= 0):
            raise InputError(f"must be a number of days, 0 or more, got {args.window_start:g}", source="--window-start")
        if sc.window_days is None:
            raise InputError("needs --window (the window's length)", source="--window-start")
        sc = replace(sc, window_start_days=args.window_start)
    if args.outage:
        from kubesched.multicluster.experiment.outage import check as check_outages
        from kubesched.multicluster.experiment.outage import parse_flag

        sc = replace(sc, outages=tuple(parse_flag(t) for t in args.outage))
        check_outages(sc.outages, [s.name for s in sc.sites], "--outage", None)
    check(sc)
    return sc


def _window(sc, args: argparse.Namespace) -> dict[str, Any] | None:  # noqa: ANN001
    """The replayed window (its start, length and pods), checked before any run."""
    from kubesched.multicluster.experiment.window import locate

    if sc.window_days is None:
        return None
    flag = args.window_start is not None or not args.scenario
    start, pods = locate(sc, "--window-start" if flag else args.scenario, None if flag else "windowStartDays")
    return {"startDays": start, "days": sc.window_days, "busiest": sc.window_start_days is None, "pods": pods}


_PREP: dict[tuple, Any] = {}


def _one(task: tuple) -> tuple[dict[str, Any], dict[str, tuple[list[float], list[float]]]]:
    """A worker's run: (metrics, GPU series per cluster); the first seed also writes member reports."""
    from pathlib import Path

    from kubesched.multicluster.experiment.metrics import run_metrics
    from kubesched.multicluster.experiment.run import prepare, run
    from kubesched.sim.report import write_outputs
    from kubesched.sim.runner import result_of

    sc, limit, mode, seed, out, first, plots = task
    key = (repr(sc), limit)
    if key not in _PREP:
        _PREP.clear()
        _PREP[key] = prepare(sc, limit)
    prep = _PREP[key]
    res = run(prep, mode, seed, record_events=first and plots)
    metrics = run_metrics(prep, res)
    series: dict[str, tuple[list[float], list[float]]] = {}
    if first:
        for name, eng in res.engines.items():
            r = result_of(eng)
            series[name] = ([float(x) for x in r.bins["end"]], [float(x) for x in r.bins["gpu_alloc_pct"]])
            if plots:
                folder = Path(out) / "members" / mode / name
                folder.mkdir(parents=True, exist_ok=True)
                write_outputs(r, folder, plots=True)
    return metrics, series


def _describe_run(metrics: dict[str, Any]) -> str:
    """One finished run, for the progress line."""
    from kubesched.multicluster.experiment.metrics import get

    lat = get(metrics, "latency_ms.mean")
    latency = f"{lat:.1f} ms" if math.isfinite(lat) else "–"
    return (f"{metrics['mode']} seed {metrics['seed']}: failures {get(metrics, 'failure_pct'):.2f} %, "
            f"mean latency {latency}, {metrics['run']['wall_s']:.0f} s")


def run_cli(args: argparse.Namespace) -> int:
    from kubesched.errors import require_extra
    from kubesched.kit.progress import Steps
    from kubesched.kit.report import print_document, print_table, write_json
    from kubesched.multicluster.experiment.metrics import aggregate, paired_tests, tested
    from kubesched.multicluster.experiment.report import comparison_rows, runs_table, write
    from kubesched.multicluster.experiment.run import MODES
    from kubesched.sim.report import json_ready, prepare_out_dir, write_csv

    sc = _scenario(args)
    window = _window(sc, args)
    seeds = parse_seeds(args.seeds)
    modes = [m.strip() for m in args.modes.split(",") if m.strip()]
    for m in modes:
        if m not in MODES:
            raise InputError(f'unknown mode "{m}" (expected {", ".join(MODES)})', source="--modes")
    workers = workers_from(args.workers)
    if args.limit is not None and args.limit < 1:
        raise InputError("must be at least 1", source="--limit")
    if len(seeds) > 1 and tested(modes):  # the paired tests, after every run: checked before the first
        require_extra("scipy.stats", "scipy (the paired tests over seeds)", "multicluster", "multicluster simulate")
    out = prepare_out_dir(args.out_dir, "--out-dir")
    tasks = [(sc, args.limit, m, s, str(out), s == seeds[0], not args.no_plots) for s in seeds for m in modes]
    results: dict[int, tuple[dict[str, Any], dict]] = {}
    (out / "runs").mkdir(exist_ok=True)
    with Pool(min(workers, len(tasks)), start="fork") as pool, \
            Steps("edge–cloud runs", len(tasks), not args.no_progress) as step:
        # a worker prepares the scenario once (_PREP); each run is on disk as soon as it finishes
        for i, task, (metrics, series) in pool.as_completed(_one, tasks):
            results[i] = (metrics, series)
            write_json(out / "runs" / f"{task[2]}-seed{task[3]}.json", json_ready(metrics), indent=1, atomic=True)
            write_csv(out / "runs.csv", runs_table([results[k][0] for k in sorted(results)]))
            step(_describe_run(metrics))
    runs = [results[i][0] for i in range(len(tasks))]
    series = {t[2]: results[i][1] for i, t in enumerate(tasks) if t[5]}
    doc = {
        "scenario": {
            "description": describe(sc, window),
            "sites": [s.__dict__ for s in sc.sites],
            "timeScale": sc.time_scale,
            "window": window,
            "outages": [o.__dict__ for o in sc.outages],
            "trace": sc.trace,
            "nodes": sc.nodes,
            "classes": {q: c.__dict__ for q, c in sc.qos_classes.items()},
            "accessRttMs": sc.access_rtt_ms,
            "limit": args.limit,
        },
        "seeds": seeds,
        "modes": modes,
        "aggregate": aggregate(runs, modes),
        "tests": paired_tests(runs) if len(seeds) > 1 else [],
        "runs": runs,
    }
    write(out, doc, runs, series, modes, not args.no_plots)
    if args.output in ("json", "yaml"):
        print_document(json_ready({k: doc[k] for k in ("scenario", "seeds", "aggregate", "tests")}), args.output)
    else:
        from rich.console import Console

        title = f"edge–cloud experiment, {len(seeds)} seed(s) — mean ± sd"
        print_table(title, ["metric", *modes], comparison_rows(doc["aggregate"], modes), right=modes)
        for test in doc["tests"]:
            p = test["wilcoxon_p"]
            Console().print(f"{test['metric']}: {test['a']} vs {test['b']} ({test['better']} is better): mean difference "
                            f"{test['mean_difference']:.3f}, paired t p={test['t_test_p']}, Wilcoxon p={p}")
        Console().print(f"written to {out}/")
    return 0


def describe(sc, window: dict[str, Any] | None = None) -> str:  # noqa: ANN001
    edges = ", ".join(f"{s.name} ({s.region}, {s.share:.0%} of nodes, users {s.users:g})" for s in sc.edges)
    cloud = sc.cloud[0]
    part = ""
    if window:
        which = "the busiest window" if window["busiest"] else "the window"
        part = f" ({which} of {window['days']:g} days from day {window['startDays']:.2f}: {window['pods']} pods)"
    return (f"openb {sc.trace} on {sc.nodes} nodes{part}, arrivals {sc.time_scale:g}x faster; edges {edges}; cloud "
            f"{cloud.name} ({cloud.region}, the remaining nodes)")

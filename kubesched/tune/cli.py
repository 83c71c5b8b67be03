"""`kubesched tune`: search score-plugin weights (and args) for a simulator metric with Optuna."""

from __future__ import annotations

import argparse
import math
import sys
from typing import Any

from kubesched import argtypes
from kubesched.errors import InputError
from kubesched.flags import add_no_plots, add_out_dir, add_workload_source
from kubesched.tune.metrics import METRICS

INSTALL_HINT = "kubesched tune needs optuna: pip install 'kubesched[tune]'"


def _epilog() -> str:
    names = "\n".join(f"  {m:34} {d}" for m, d in METRICS.items())
    return (
        "metrics (summary.json keys of `kubesched simulate`) and their default direction:\n"
        f"{names}\n\n"
        "Writes best-config.yaml (a ready-to-use KubeSchedulerConfiguration), trials.csv, tradeoff.png "
        "and summary.json to -d/--out-dir. See docs/tune.md."
    )


def add_parser(sub: Any) -> None:
    p = sub.add_parser(
        "tune",
        help="search plugin weights (and args) that optimise a simulator metric (Optuna)",
        description="Simulate the workload with many score-plugin weightings (and plugin args) chosen by Optuna; "
        "report the best as a KubeSchedulerConfiguration.",
        epilog=_epilog(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    src = add_workload_source(p, "workload (exactly one, as in `kubesched simulate`)")
    src.add_argument(
        "--node-sample", type=int, metavar="N", help="a seeded random subset of N nodes (--seed)"
    )
    src.add_argument(
        "--inflate",
        type=float,
        metavar="X",
        help="FGD protocol per simulator seed: shuffle the pods, clone or drop them to X times the GPU capacity, "
        "replay in arrival mode (nodes in a seeded order)",
    )
    sim = p.add_argument_group("simulation")
    sim.add_argument(
        "--mode", choices=("time", "arrival"), help="replay mode (default time; arrival with --inflate)"
    )
    sim.add_argument("--tie-break", choices=("random", "first"), help="default random; first with --inflate")
    sim.add_argument(
        "--max-wait", type=float, metavar="SECONDS", help="time mode: withdraw pods pending longer"
    )
    sim.add_argument(
        "--sim-seeds",
        default="0",
        metavar="N,N",
        help="simulator seeds; the metric is their mean (default 0)",
    )
    sim.add_argument(
        "--eval-seeds", metavar="N,N", help="held-out seeds: re-run base and best on them at the end"
    )
    space = p.add_argument_group("search space")
    space.add_argument("--config", help="base KubeSchedulerConfiguration (default: the default profile)")
    space.add_argument(
        "--plugin-path", action="append", default=[], help="Python file defining plugins (repeatable)"
    )
    space.add_argument("--profile", metavar="NAME", help="the profile to tune (default: the first)")
    space.add_argument(
        "--weights",
        metavar="A,B",
        help="score plugins whose weight is tuned (default: the profile's score plugins)",
    )
    space.add_argument("--no-weights", action="store_true", help="tune only --param args, keep every weight")
    space.add_argument(
        "--weight-range",
        default="1-100",
        metavar="LOW-HIGH",
        help="weights tried (default 1-100; LOW 0 also tries switching a plugin off)",
    )
    space.add_argument(
        "--weight-scale", choices=("log", "linear"), default="log", help="sample weights (default log)"
    )
    space.add_argument(
        "--param",
        action="append",
        default=[],
        metavar="PLUGIN.PATH=LOW:HIGH|A|B",
        help="also tune a plugin arg, e.g. NodeResourcesFit.scoringStrategy.type=LeastAllocated|MostAllocated "
        "(repeatable; LOW:HIGH[:log] for numbers)",
    )
    st = p.add_argument_group("study")
    st.add_argument(
        "--metric", required=True, metavar="NAME[,NAME]", help="metric(s) to optimise (listed below)"
    )
    st.add_argument(
        "--direction", metavar="minimize|maximize", help="per metric, comma-separated (default: as listed)"
    )
    st.add_argument("--trials", type=int, default=50, help="trials after the base config (default 50)")
    st.add_argument("--timeout", type=float, metavar="S", help="start no trial after S seconds")
    st.add_argument(
        "--seed", type=argtypes.seed, default=0, help="sampler seed (and --node-sample); equal seeds, equal runs"
    )
    st.add_argument(
        "--sampler",
        choices=("auto", "tpe", "nsga2", "random"),
        default="auto",
        help="auto: TPE for one metric, NSGA-II for several",
    )
    st.add_argument("--jobs", type=int, default=1, help="trials run in parallel processes (default 1)")
    st.add_argument(
        "--storage", metavar="URL", help="Optuna storage (e.g. sqlite:///tune.db); default in memory"
    )
    st.add_argument("--study-name", metavar="NAME", help="study name in --storage")
    add_out_dir(st, "tune-out", "best-config.yaml, trials.csv, tradeoff.png and summary.json")
    add_no_plots(st, "skip tradeoff.png")
    st.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.set_defaults(func=run)


def _seeds(text: str, flag: str) -> list[int]:
    try:
        seeds = [int(s) for s in text.split(",") if s.strip()]
    except ValueError:
        raise InputError(f'{flag}: invalid seed list "{text}": expected integers like 1,2,3') from None
    if not seeds or len(set(seeds)) != len(seeds) or min(seeds) < 0:
        raise InputError(f'{flag}: invalid seed list "{text}": expected distinct integers >= 0')
    return seeds


def _check(args: argparse.Namespace) -> None:
    sources = [bool(args.trace or args.nodes), bool(args.file), args.synthetic is not None]
    if sum(sources) != 1:
        raise InputError(
            "give exactly one workload: --trace NAME|FILE [--nodes NAME|FILE], -f FILE, or --synthetic [SPEC]"
        )
    if args.nodes and not args.trace:
        raise InputError("--nodes: only with --trace (the node list the trace replays on)")
    if args.synth and args.synthetic is None:
        raise InputError("--synth: only with --synthetic")
    if args.skip_invalid and not args.trace:
        raise InputError("--skip-invalid: only with --trace")
    for flag, v in (("--limit", args.limit), ("--node-sample", args.node_sample), ("--jobs", args.jobs)):
        if v is not None and v <= 0:
            raise InputError(f"{flag}: must be greater than 0, got {v}")
    if args.trials < 0:
        raise InputError(f"--trials: must be 0 or more, got {args.trials}")
    if args.timeout is not None and (not math.isfinite(args.timeout) or args.timeout <= 0):
        raise InputError(f"--timeout: must be a positive number of seconds, got {args.timeout}")
    if args.inflate is not None:
        if not math.isfinite(args.inflate) or args.inflate <= 0:
            raise InputError(
                f"--inflate: must be a positive factor (1.3 = 130 % of the GPU capacity), got {args.inflate}"
            )
        if args.file:
            raise InputError("--inflate: only with --trace or --synthetic")
        if args.mode == "time":
            raise InputError("--inflate: replays in arrival mode; leave out --mode time")
    if args.max_wait is not None and (not math.isfinite(args.max_wait) or args.max_wait <= 0):
        raise InputError(f"--max-wait: must be a positive number of seconds, got {args.max_wait}")
    if args.max_wait is not None and (args.inflate is not None or (args.mode or "time") != "time"):
        raise InputError("--max-wait: only with --mode time")
    if args.study_name and not args.storage:
        raise InputError("--study-name: only with --storage")
    if args.no_weights and args.weights:
        raise InputError("--no-weights: not with --weights")
    if args.no_weights and not args.param:
        raise InputError("--no-weights: give the args to tune with --param")


def _source(args: argparse.Namespace):  # noqa: ANN202 - WorkloadSource, imported lazily
    from kubesched.tune.workload import WorkloadSource

    src = WorkloadSource(
        inflate=args.inflate, node_sample=args.node_sample, sample_seed=args.seed, limit=args.limit
    )
    if args.synthetic is not None:
        from kubesched.sim.synthetic import generate, load_spec

        spec, source = load_spec(args.synthetic, args.synth)
        generate(spec, 0, source)  # a bad spec fails here, once, before any trial
        src.spec, src.spec_source = spec, source
        return src
    if args.trace:
        from kubesched.sim.openb import load_openb

        wl = load_openb(args.trace, args.nodes, skip_invalid=args.skip_invalid)
        if wl.skipped:
            sys.stderr.write(
                f"kubesched: warning: skipped {len(wl.skipped)} invalid row(s) of {args.trace}: {wl.skipped[0]}\n"
            )
    else:
        from kubesched.sim.workload import from_manifests

        wl = from_manifests(args.file, args.validate)
        for w in wl.objects.warnings:
            sys.stderr.write(f"kubesched: warning: {w}\n")
    if not wl.pods:
        raise InputError("the workload has no pods", source=wl.source or None)
    src.fix(wl)
    return src


def run(args: argparse.Namespace) -> int:
    try:
        import optuna  # noqa: F401 - only to say how to install it
    except ImportError:
        raise InputError(INSTALL_HINT) from None
    from kubesched.app import build_config, build_registry
    from kubesched.sim.report import prepare_out_dir
    from kubesched.tune.metrics import constant_objective_warnings, parse_metrics
    from kubesched.tune.objective import Evaluator
    from kubesched.tune.output import print_report, write_outputs
    from kubesched.tune.space import SearchSpace, WeightRange, parse_param
    from kubesched.tune.study import StudySettings, open_study

    # everything is checked before the first simulation and before --out-dir is created
    _check(args)
    metrics, directions = parse_metrics(args.metric, args.direction)
    sim_seeds = _seeds(args.sim_seeds, "--sim-seeds")
    eval_seeds = _seeds(args.eval_seeds, "--eval-seeds") if args.eval_seeds else []
    if set(eval_seeds) & set(sim_seeds):
        sys.stderr.write("kubesched: warning: --eval-seeds overlap --sim-seeds: those are not held out\n")
    weight_range = WeightRange.parse(args.weight_range, args.weight_scale)
    params = [parse_param(s) for s in args.param]
    registry = build_registry(args.plugin_path)
    base = build_config(args.config, registry)
    for w in base.warnings:
        sys.stderr.write(f"kubesched: warning: {w}\n")
    weights = [] if args.no_weights else None
    if args.weights is not None:
        weights = [w.strip() for w in args.weights.split(",") if w.strip()]
        if not weights:
            raise InputError("--weights: name at least one score plugin")
    space = SearchSpace(
        base, registry, profile=args.profile, weights=weights, weight_range=weight_range, params=params
    )
    space.check()
    source = _source(args)
    mode = "arrival" if args.inflate is not None else (args.mode or "time")
    tie = args.tie_break or ("first" if args.inflate is not None else "random")
    evaluator = Evaluator(space, source, mode, tie, args.max_wait)
    settings = StudySettings(
        metrics,
        directions,
        args.trials,
        args.timeout,
        args.seed,
        sim_seeds,
        eval_seeds,
        args.jobs,
        args.sampler,
        args.storage,
        args.study_name,
    )
    study = open_study(settings)
    out_dir = prepare_out_dir(args.out_dir)
    outcome = _run_with_progress(evaluator, settings, study, not args.no_progress)
    simulation = {
        "mode": mode,
        "tie_break": tie,
        "workload": source.for_seed(sim_seeds[0]).source,
        "config": args.config,
        "inflate": args.inflate,
        "node_sample": args.node_sample,
        "limit": args.limit,
        "max_wait": args.max_wait,
    }
    completed = [r.values for r in outcome.records if r.state == "COMPLETE" and r.values is not None]
    warnings = constant_objective_warnings(metrics, completed, mode)
    written = write_outputs(
        outcome, space, out_dir, plot=not args.no_plots, simulation=simulation, warnings=warnings
    )
    print_report(outcome, space, written)
    for w in warnings:
        sys.stderr.write(f"kubesched: warning: {w}\n")
    return 0


def _run_with_progress(evaluator: Any, settings: Any, study: Any, want: bool) -> Any:
    from rich.console import Console

    from kubesched.tune.study import run_study

    err = Console(stderr=True)
    if not (want and err.is_terminal):
        return run_study(evaluator, settings, study=study)
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    cols = (
        TextColumn("tuning"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.description}"),
        TimeElapsedColumn(),
    )
    with Progress(*cols, console=err, transient=True) as prog:
        task = prog.add_task("", total=settings.trials)

        def step(rec: Any, best: Any) -> None:
            vals = ", ".join(f"{v:.4g}" for v in best.values or [])
            prog.update(task, advance=1, description=f"best {vals}")

        return run_study(evaluator, settings, step, study)

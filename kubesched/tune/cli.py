"""`kubesched tune`: search score-plugin weights (and args) for a simulator metric with Optuna (the
flags are in ``kubesched.commands.tune``)."""

from __future__ import annotations

import argparse
import json
import math
import sys
from typing import Any

from kubesched.errors import InputError
from kubesched.sim.cli import check_workload_source

INSTALL_HINT = "kubesched tune needs optuna: pip install 'kubesched[tune]'"


def _seeds(text: str, flag: str) -> list[int]:
    try:
        seeds = [int(s) for s in text.split(",") if s.strip()]
    except ValueError:
        raise InputError(f'{flag}: invalid seed list "{text}": expected integers like 1,2,3') from None
    if not seeds or len(set(seeds)) != len(seeds) or min(seeds) < 0:
        raise InputError(f'{flag}: invalid seed list "{text}": expected distinct integers >= 0')
    return seeds


def _check(args: argparse.Namespace) -> None:
    check_workload_source(args)
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
    if args.output == "table":
        print_report(outcome, space, written)
    else:
        from kubesched.kit.report import print_document

        print_document(json.loads(written["summary"].read_text()), args.output)
    for w in warnings:
        sys.stderr.write(f"kubesched: warning: {w}\n")
    return 0


def _run_with_progress(evaluator: Any, settings: Any, study: Any, want: bool) -> Any:
    """The study, with the long commands' bar (``kubesched.kit.progress``) on a terminal; quiet
    elsewhere (a trial's line would say no more than trials.csv)."""
    from kubesched.kit.progress import Steps
    from kubesched.tune.study import run_study

    with Steps("tuning", settings.trials, want, lines=False) as step:

        def trial_done(rec: Any, best: Any) -> None:
            step("best " + ", ".join(f"{v:.4g}" for v in best.values or []))

        return run_study(evaluator, settings, trial_done, study)

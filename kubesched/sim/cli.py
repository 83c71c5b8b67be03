"""`kubesched simulate`: replay a workload through the scheduler and write a report folder (the
flags are in ``kubesched.commands.simulate``)."""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path
from typing import Any

from kubesched.errors import InputError

MAX_BINS = 100_000  # time bins: one state sample each


def check_workload_source(args: argparse.Namespace) -> None:
    """The workload flags (``kubesched.commands.flags.add_workload_source``, simulate's and tune's):
    exactly one source, and each flag only with the source it belongs to."""
    sources = [bool(args.trace or args.nodes), bool(args.file), args.synthetic is not None]
    if sum(sources) != 1:
        raise InputError("give exactly one workload: --trace NAME|FILE [--nodes NAME|FILE], -f FILE, or --synthetic [SPEC]")
    if args.nodes and not args.trace:
        raise InputError("--nodes: only with --trace (the node list the trace replays on)")
    if args.synth and args.synthetic is None:
        raise InputError("--synth: only with --synthetic")
    if args.skip_invalid and not args.trace:
        raise InputError("--skip-invalid: only with --trace")


def _check(args: argparse.Namespace) -> None:
    check_workload_source(args)
    if args.limit is not None and args.limit <= 0:
        raise InputError(f"--limit: must be greater than 0, got {args.limit}")
    if not 0 < args.bins <= MAX_BINS:
        raise InputError(f"--bins: must be from 1 to {MAX_BINS:,}, got {args.bins}")
    if args.max_wait is not None and (not math.isfinite(args.max_wait) or args.max_wait <= 0):
        raise InputError(f"--max-wait: must be a positive number of seconds, got {args.max_wait}")
    if args.max_wait is not None and args.mode != "time":
        raise InputError("--max-wait: only with --mode time")
    if args.max_attempts_per_pod < 0:
        raise InputError(f"--max-attempts-per-pod: must be 0 (no limit) or more, got {args.max_attempts_per_pod}")


def run_warnings(summary: dict[str, Any]) -> list[str]:
    """What a reader of the outputs should know about this run before reading them."""
    out = []
    run = summary["run"]
    if summary["mode"] == "time" and run["sim_end_s"] == run["sim_start_s"]:
        out.append(
            "every event of this run happened at one instant (t = 0: no pod has an arrival time or a "
            "duration, as in a cluster dump): the time-mode plots have one point and the mean is the "
            "final state; --mode arrival plots the placements in arrival order"
        )
    return out


def load_workload(args: argparse.Namespace):  # noqa: ANN201 - Workload, imported lazily
    if args.trace:
        from kubesched.sim.openb import load_openb

        wl = load_openb(args.trace, args.nodes, skip_invalid=args.skip_invalid)
    elif args.file:
        from kubesched.sim.workload import from_manifests

        # a namespace rebuilt from an inputs.json (kubesched ui) may carry no mode: strict, as before --validate
        wl = from_manifests(args.file, getattr(args, "validate", "strict"))
    else:
        from kubesched.sim.synthetic import generate, load_spec

        spec, source = load_spec(args.synthetic, args.synth)
        wl = generate(spec, args.seed, source)
    wl = wl.head(args.limit) if args.limit else wl
    if getattr(args, "gpu_model", "annotations") == "dra":
        from kubesched.sim.workload import with_dra_gpus

        try:
            wl = with_dra_gpus(wl)
        except ValueError as e:
            raise InputError(str(e), source="--gpu-model") from None
    return wl


def write_inputs(args: argparse.Namespace, out: Path) -> None:
    """inputs.json (and config.yaml): what the run replayed, so that `kubesched ui` can rebuild
    its workload and configuration. Paths are absolute; shipped trace names stay names."""
    import json
    import shutil

    def path_or_name(v: str | None) -> str | None:
        return str(Path(v).resolve()) if v and Path(v).exists() else v

    inputs: dict[str, Any] = {
        "trace": path_or_name(args.trace),
        "nodes": path_or_name(args.nodes),
        "files": [str(Path(f).resolve()) for f in args.file or []],
        "validate": args.validate,
        "synthetic": path_or_name(args.synthetic),
        "synth": list(args.synth),
        "skip_invalid": args.skip_invalid,
        "limit": args.limit,
        "mode": args.mode,
        "seed": args.seed,
        "tie_break": args.tie_break,
        "gpu_model": getattr(args, "gpu_model", "annotations"),
        "usage_fraction": args.usage_fraction,
        "max_wait": args.max_wait,
        "bins": args.bins,
        "plugin_path": [str(Path(f).resolve()) for f in args.plugin_path],
        "config": None,
    }
    if args.config:
        shutil.copyfile(args.config, out / "config.yaml")
        inputs["config"] = "config.yaml"
    (out / "inputs.json").write_text(json.dumps(inputs, indent=2) + "\n")


def run(args: argparse.Namespace) -> int:
    from rich.console import Console

    from kubesched.app import build_config, build_registry, check_plugins
    from kubesched.sim.report import prepare_out_dir, write_outputs
    from kubesched.sim.runner import simulate
    from kubesched.sim.usage import UsageModel

    # everything is validated before the output folder is created: bad input writes nothing
    _check(args)
    usage = UsageModel.parse(args.usage_fraction)
    registry = build_registry(args.plugin_path)
    config = build_config(args.config, registry)
    check_plugins(config, registry)  # plugin args that only fail when built
    for w in config.warnings:
        sys.stderr.write(f"kubesched: warning: {w}\n")
    wl = load_workload(args)
    for w in wl.objects.warnings:
        sys.stderr.write(f"kubesched: warning: {w}\n")
    if wl.skipped:
        sys.stderr.write(f"kubesched: warning: skipped {len(wl.skipped)} invalid row(s) of {args.trace}: {wl.skipped[0]}\n")
    if not wl.pods:
        raise InputError("the workload has no pods", source=wl.source or None)
    out = prepare_out_dir(args.out_dir)
    err = Console(stderr=True)
    show = not args.no_progress and sys.stdout.isatty() and err.is_terminal
    kwargs = dict(
        mode=args.mode, seed=args.seed, registry=registry, usage=usage, bins=args.bins,
        max_wait=args.max_wait, tie_break=args.tie_break, debug=args.debug,
        max_attempts=args.max_attempts_per_pod * len(wl.pods) or None,
    )
    if show:
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

        cols = (TextColumn("simulating [dim]pods arrived[/dim]"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
        with Progress(*cols, console=err, transient=True) as prog:
            task = prog.add_task("sim", total=len(wl.pods))
            result = simulate(config, wl, progress=lambda d, t: prog.update(task, completed=d, total=t), **kwargs)
    else:
        result = simulate(config, wl, **kwargs)
    for w in run_warnings(result.summary):
        sys.stderr.write(f"kubesched: warning: {w}\n")
    write_outputs(result, out, plots=not args.no_plots)
    write_inputs(args, out)
    if args.output in ("json", "yaml"):
        from kubesched.kit.report import print_document
        from kubesched.sim.report import json_ready

        print_document(json_ready(result.summary), args.output)
    else:
        from rich.table import Table
        from rich.text import Text

        from kubesched.sim.report import summary_rows

        table = Table(title=f"kubesched simulate → {out}/report.html", show_header=False)
        table.add_column(no_wrap=True)
        table.add_column(overflow="fold")
        for k, v in summary_rows(result.summary):
            table.add_row(Text(k), Text(v))
        Console().print(table)
    return 0

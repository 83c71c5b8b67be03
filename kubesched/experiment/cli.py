"""`kubesched experiment fgd`: the FGD paper's grid (traces x policies x seeds), fanned out over
local processes or a Ray cluster, aggregated, compared with the published numbers and plotted."""

from __future__ import annotations

import argparse
import json
import math
import platform
import sys
import time
from pathlib import Path
from typing import Any

from kubesched.errors import InputError
from kubesched.experiment.grid import DEFAULT_SEEDS
from kubesched.experiment.published import POLICIES
from kubesched.flags import add_no_plots, add_out_dir
from kubesched.trace.bundled import OPENB_DIR


def add_parser(sub: Any) -> Any:
    """The ``experiment`` command and its ``fgd`` subcommand; returns the subcommands' action, to
    which ``kubesched.cli`` adds ``elastic`` (the autoscaler's experiment, a layer above this one)."""
    p = sub.add_parser(
        "experiment",
        help="reproduce published scheduling experiments",
        description="Reproduce published scheduling experiments (today: the FGD paper's grid on the openb trace).",
    )
    esub = p.add_subparsers(dest="experiment_command", required=True, metavar="COMMAND", help="one of:")
    f = esub.add_parser(
        "fgd",
        help="the FGD paper's unallocated-GPU grid on the openb traces (Weng et al., ATC '23)",
        description="Run every (trace, policy, seed) of the FGD paper's protocol, write per-run and aggregate "
        "CSV/JSON, the paper's figures with the published values overlaid, and a measured-vs-published "
        "summary to -d/--out-dir. See docs/fgd.md.",
    )
    f.add_argument("--traces", default="default", help="comma list of trace names or families, or 'all' (default: default)")
    f.add_argument("--policies", default=",".join(POLICIES), help=f"comma list (default: {','.join(POLICIES)})")
    f.add_argument("--seeds", default=DEFAULT_SEEDS, help=f"seeds: 42-51, 42,45 or a mix (default: {DEFAULT_SEEDS})")
    f.add_argument(
        "--data-dir",
        metavar="DIR",
        help="folder of your own copy of the openb CSVs (.csv or .csv.gz; default: the trace shipped with kubesched)",
    )
    f.add_argument("--workers", type=int, default=None, help="parallel runs (default: all cores)")
    f.add_argument(
        "--ray-address", metavar="ADDR", help="run on Ray instead of local processes: ADDR, 'auto', or 'local'"
    )
    add_out_dir(f, "fgd-out", "the runs, aggregates, figures and report")
    f.add_argument("--resume", action="store_true", help="reuse the runs already in --out-dir (same trace/policy/seed)")
    f.add_argument(
        "--report-only", action="store_true", help="run nothing: aggregate, compare and plot the runs already in --out-dir"
    )
    f.add_argument("--tune", type=float, default=1.3, help="arrived workload to reach, x GPU capacity (default 1.3)")
    f.add_argument("--max-nodes", type=int, metavar="N", help="smoke runs: N nodes spread over the node list")
    f.add_argument("--max-pods", type=int, metavar="N", help="smoke runs: the first N pods of each trace")
    f.add_argument(
        "--gpu-model",
        choices=("annotations", "dra"),
        default="annotations",
        help="how the GPUs are described: annotations and extended resources (default), or DRA ResourceSlices "
        "and ResourceClaims allocated by DynamicResources (the same result, slower)",
    )
    add_no_plots(f, "skip the PNG figures")
    f.add_argument("--no-progress", action="store_true", help="no progress bar (one line per run on stderr instead)")
    f.set_defaults(func=run)
    return esub


def _positive(value: int | None, flag: str) -> None:
    if value is not None and value < 1:
        raise InputError(f"must be at least 1, got {value}", source=flag)


def build(args: argparse.Namespace) -> tuple[list, list[str], list[str]]:
    """Validate every flag (before anything is written) and return (grid, traces, policies)."""
    from kubesched.experiment.grid import (
        build_grid,
        check_data_dir,
        parse_policies,
        parse_seeds,
        parse_traces,
    )

    data_dir = check_data_dir(args.data_dir or OPENB_DIR)
    traces = parse_traces(args.traces, data_dir)
    policies = parse_policies(args.policies)
    seeds = parse_seeds(args.seeds)
    _positive(args.workers, "--workers")
    _positive(args.max_nodes, "--max-nodes")
    _positive(args.max_pods, "--max-pods")
    if not math.isfinite(args.tune) or args.tune <= 0:
        raise InputError(f"must be a positive number, got {args.tune}", source="--tune")
    if args.ray_address is not None:
        if not args.ray_address.strip():
            raise InputError("empty address (use ADDR, 'auto' or 'local')", source="--ray-address")
        from kubesched.experiment.fanout import import_ray

        import_ray()
    grid = build_grid(
        traces, policies, seeds, data_dir.resolve(), tune=args.tune, max_nodes=args.max_nodes, max_pods=args.max_pods,
        gpu_model=getattr(args, "gpu_model", "annotations"),
    )
    return grid, traces, policies


def execute(grid: list, todo: list, args: argparse.Namespace, out: Path, workers: int, show: bool) -> list:
    """Run ``todo`` (a subset of ``grid``), writing each record as it finishes; returns the records."""
    from kubesched.experiment.fanout import run_local, run_ray
    from kubesched.experiment.report import write_run

    stream = run_ray(todo, args.ray_address, workers) if args.ray_address else run_local(todo, workers)
    records = []

    def finished(spec: Any, rec: Any) -> str:
        write_run(out, rec)
        records.append(rec)
        return (
            f"{spec.trace} {spec.policy} seed {spec.seed}: unallocated@100 {rec.at('unallocated', 100):.2f} %, "
            f"{rec.failed} failed, {rec.run_seconds:.1f} s"
        )

    if not show:
        for i, (spec, rec) in enumerate(stream, 1):
            sys.stderr.write(f"[{i}/{len(todo)}] {finished(spec, rec)}\n")
        return records
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    cols = (
        TextColumn("fgd grid"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(), TimeRemainingColumn(),
        TextColumn("[dim]{task.description}"),
    )
    with Progress(*cols, console=Console(stderr=True)) as prog:
        task = prog.add_task("", total=len(todo))
        for spec, rec in stream:
            prog.update(task, advance=1, description=finished(spec, rec))
    return records


def run(args: argparse.Namespace) -> int:
    from rich.console import Console

    from kubesched.experiment.aggregate import aggregate, compare
    from kubesched.experiment.fanout import default_workers
    from kubesched.experiment.report import (
        read_run,
        write_aggregate,
        write_comparison,
        write_runs_csv,
        write_summary,
    )

    grid, traces, policies = build(args)
    if args.report_only and not Path(args.out_dir, "runs").is_dir():
        raise InputError(f"no runs in {args.out_dir}", source="--report-only")
    from kubesched.sim.report import prepare_out_dir

    out = prepare_out_dir(args.out_dir, source="--out-dir")
    workers = args.workers or default_workers()
    done = {}
    if args.resume or args.report_only:
        for spec in grid:
            rec = read_run(out, spec)
            if rec is not None:
                done[spec.key] = rec
    todo = [] if args.report_only else [s for s in grid if s.key not in done]
    if not done and not todo:
        raise InputError(f"no finished runs of this grid in {out}", source="--report-only")
    err = Console(stderr=True)
    show = not args.no_progress and err.is_terminal
    backend = f"ray ({args.ray_address})" if args.ray_address else f"processes ({workers} workers)"
    err.print(f"kubesched experiment fgd: {len(todo)} runs to do ({len(done)} reused) on {backend} → {out}")
    t0 = time.perf_counter()
    new = execute(grid, todo, args, out, workers, show) if todo else []
    wall = time.perf_counter() - t0
    records = list(done.values()) + new
    agg = aggregate(records)
    # a node/pod subset is a different experiment: the paper's numbers do not apply to it
    comps = [] if args.max_nodes or args.max_pods else compare(agg)
    write_runs_csv(out, records)
    write_aggregate(out, agg)
    write_comparison(out, comps)
    summary = write_summary(out, comps, policies)
    # traces with no finished run (possible with --report-only) are left out of the figures
    ran_traces = [t for t in traces if any(r.trace == t for r in records)]
    figs = [] if args.no_plots else _figures(agg, ran_traces, policies, out)
    meta = {
        "args": {k: v for k, v in vars(args).items() if k != "func"},
        "traces": traces, "policies": policies, "seeds": sorted({s.seed for s in grid}),
        "runs": len(grid), "ran": len(new), "reused": len(done), "backend": backend,
        "wall_seconds": round(wall, 1), "run_seconds_sum": round(sum(r.run_seconds for r in new), 1),
        "machine": {"python": platform.python_version(), "platform": platform.platform(), "cpus": workers},
    }
    (out / "grid.json").write_text(json.dumps(meta, indent=1))
    _print_summary(agg, comps, policies, summary, figs, wall, len(new))
    return 0


def _figures(agg: Any, traces: list[str], policies: list[str], out: Path) -> list[Path]:
    from kubesched.experiment.figures import draw_all

    return draw_all(agg, traces, policies, out / "figures")


def _print_summary(agg: Any, comps: list, policies: list[str], summary: Path, figs: list, wall: float, ran: int) -> None:
    """Measured unallocated % at 100 and 130 % per trace and policy, beside the published values."""
    from rich.console import Console
    from rich.table import Table

    by_key = {(c.trace, c.policy, c.level): c for c in comps}
    order = {p: i for i, p in enumerate(policies)}
    keys = sorted(
        {(t, p, lvl) for (t, p, m, lvl) in agg if m == "unallocated" and lvl in (100, 130)},
        key=lambda k: (k[0] != "default", k[0], k[2], order.get(k[1], 99)),
    )
    table = Table(title=f"kubesched experiment fgd → {summary}")
    for col in ("trace", "arrived", "policy", "n", "measured", "published", "within spread"):
        table.add_column(col)
    for trace, policy, lvl in keys:
        st = agg[(trace, policy, "unallocated", lvl)]
        sd = "" if st.n < 2 else f" ± {st.sd:.2f}"
        c = by_key.get((trace, policy, lvl))
        pub, verdict = "", "n/a"
        if c is not None:
            pub = f"{c.published.mean:.2f}" + ("" if c.published.sd is None else f" ± {c.published.sd:.2f}")
            verdict = {True: "[green]yes", False: "[red]no", None: "n/a"}[c.within]
        table.add_row(trace, f"{lvl} %", policy, str(st.n), f"{st.mean:.2f}{sd}", pub, verdict)
    con = Console()
    con.print(table)
    con.print(f"{ran} runs in {wall:.1f} s; {len(figs)} figures in {summary.parent / 'figures'}")

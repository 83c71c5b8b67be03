"""`kubesched experiment fgd`: the FGD paper's grid (traces x policies x seeds), fanned out over
local processes or a Ray cluster, aggregated, compared with the published numbers and plotted
(the flags are in ``kubesched.commands.experiment``)."""

from __future__ import annotations

import argparse
import json
import math
import platform
import time
from pathlib import Path
from typing import Any

from kubesched.errors import InputError
from kubesched.kit.pool import workers_from
from kubesched.kit.progress import Steps
from kubesched.kit.report import pm, print_document, print_table, write_json
from kubesched.trace.bundled import OPENB_DIR


def build(args: argparse.Namespace) -> tuple[list, list[str], list[str]]:
    """Validate every flag (before anything is written) and return (grid, traces, policies)."""
    from kubesched.experiment.grid import (
        at_least_one,
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
    workers_from(args.workers)
    at_least_one(args.max_nodes, "--max-nodes")
    at_least_one(args.max_pods, "--max-pods")
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

    with Steps("fgd grid", len(todo), show) as step:
        for spec, rec in stream:
            step(finished(spec, rec))
    return records


def run(args: argparse.Namespace) -> int:
    from rich.console import Console

    from kubesched.experiment.aggregate import aggregate, compare
    from kubesched.experiment.report import (
        comparison_rows,
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
    workers = workers_from(args.workers)
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
    backend = f"ray ({args.ray_address})" if args.ray_address else f"processes ({workers} workers)"
    err.print(f"kubesched experiment fgd: {len(todo)} runs to do ({len(done)} reused) on {backend} → {out}")
    t0 = time.perf_counter()
    new = execute(grid, todo, args, out, workers, not args.no_progress) if todo else []
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
    write_json(out / "grid.json", meta, indent=1)
    if args.output == "table":
        _print_summary(agg, comps, policies, summary, figs, wall, len(new))
    else:
        stats = json.loads((out / "aggregate.json").read_text())["stats"]
        print_document({"grid": meta, "stats": stats, "comparison": comparison_rows(comps)}, args.output)
    return 0


def _figures(agg: Any, traces: list[str], policies: list[str], out: Path) -> list[Path]:
    from kubesched.experiment.figures import draw_all

    return draw_all(agg, traces, policies, out / "figures")


def _print_summary(agg: Any, comps: list, policies: list[str], summary: Path, figs: list, wall: float, ran: int) -> None:
    """Measured unallocated % at 100 and 130 % per trace and policy, beside the published values."""
    from rich.console import Console

    by_key = {(c.trace, c.policy, c.level): c for c in comps}
    order = {p: i for i, p in enumerate(policies)}
    keys = sorted(
        {(t, p, lvl) for (t, p, m, lvl) in agg if m == "unallocated" and lvl in (100, 130)},
        key=lambda k: (k[0] != "default", k[0], k[2], order.get(k[1], 99)),
    )
    rows = []
    for trace, policy, lvl in keys:
        st = agg[(trace, policy, "unallocated", lvl)]
        c = by_key.get((trace, policy, lvl))
        pub, verdict = "", "n/a"
        if c is not None:
            pub = pm(c.published.mean, c.published.sd)
            verdict = {True: "[green]yes", False: "[red]no", None: "n/a"}[c.within]
        rows.append((trace, f"{lvl} %", policy, str(st.n), pm(st.mean, st.sd), pub, verdict))
    header = ("trace", "arrived", "policy", "n", "measured", "published", "within spread")
    print_table(f"kubesched experiment fgd → {summary}", header, rows, right=("n",), keys=3)
    con = Console()
    con.print(f"{ran} runs in {wall:.1f} s; {len(figs)} figures in {summary.parent / 'figures'}")

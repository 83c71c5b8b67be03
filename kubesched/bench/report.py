"""`kubesched bench` output: a rich table on stdout and the same figures as JSON.

Also the command's driver (selection, progress bar, kernel figure), so kubesched/cli.py only
parses arguments.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table
from rich.text import Text

from kubesched import UPSTREAM_RELEASE, __version__
from kubesched.bench import workloads as W
from kubesched.bench.kernel import KernelResult, run_kernel
from kubesched.bench.runner import BenchResult, run_workload
from kubesched.errors import InputError

JSON_SCHEMA = "kubesched.bench/v1"
#: Progress bars only for runs long enough to watch (pods to schedule or bind in one workload).
PROGRESS_MIN_PODS = 2000


# ---- machine ---------------------------------------------------------------------------------
def cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def machine() -> dict[str, Any]:
    import numpy

    return {
        "nproc": os.cpu_count(),
        "cpu": cpu_model(),
        "python": platform.python_version(),
        "numpy": numpy.__version__,
        "platform": platform.platform(),
    }


# ---- formatting ------------------------------------------------------------------------------
def _f(x: float | None, digits: int = 0) -> str:
    return "–" if x is None else f"{x:,.{digits}f}"


def _vs(value: float | None, floor: float | None) -> str:
    if value is None or not floor:
        return "–"
    ratio = value / floor
    colour = "green" if ratio >= 10 else ("yellow" if ratio >= 1 else "red")
    return f"[{colour}]{ratio:.1f}x[/{colour}]"


def _row(r: BenchResult, wide: bool) -> list[str]:
    tp = r.throughput
    if not wide:
        return [r.workload, str(r.nodes), str(r.measured_pods), _f(tp.headline), _vs(tp.headline, r.threshold), _f(r.wall_s, 2)]
    churn = f"{r.churn_created - r.churn_scheduled}/{r.churn_created}" if r.churn_created else ""
    return [
        r.workload,
        str(r.nodes),
        str(r.init_pods + r.bound_pods),
        str(r.measured_pods),
        _f(tp.average),
        _f(tp.perc50),
        _f(tp.perc90),
        _f(tp.perc95),
        _f(tp.perc99),
        _f(tp.overall),
        _f(r.threshold),
        _f(r.target),
        _vs(tp.headline, r.threshold),
        _f(r.wall_s, 2),
        _f(r.cpu_s, 2),
        _f(r.peak_rss_mib),
        str(r.unschedulable),
        churn,
    ]


#: (header, style) of the key columns, then of every column (--wide)
KEY_COLUMNS = (("workload", ""), ("nodes", ""), ("pods", ""), ("pods/s", "bold"), ("×floor", ""), ("wall s", ""))
WIDE_COLUMNS = (
    ("workload", ""), ("nodes", ""), ("init", ""), ("meas.", ""),
    ("avg", ""), ("p50", ""), ("p90", ""), ("p95", ""), ("p99", ""), ("whole", "bold"),
    ("floor", "dim"), ("target", "dim"), ("×floor", ""),
    ("wall s", ""), ("cpu s", ""), ("RSS MiB", ""), ("unsch.", ""), ("churn", ""),
)  # fmt: skip


def results_table(results: list[BenchResult], wide: bool = False) -> Table:
    """The key figures per workload (every figure with ``wide``), one row each."""
    t = Table(title="kubesched bench — SchedulingThroughput (pods/s) of the measured pods")
    for i, (header, style) in enumerate(WIDE_COLUMNS if wide else KEY_COLUMNS):
        t.add_column(header, justify="left" if i == 0 else "right", style=style or None, no_wrap=True)
    for r in results:
        t.add_row(*_row(r, wide))
    return t


def results_blocks(results: list[BenchResult], wide: bool = False) -> Table:
    """The same figures for a narrow terminal: the workload on one line, its figures under it."""
    t = Table(title="kubesched bench — SchedulingThroughput (pods/s) of the measured pods")
    t.add_column("workload / figures", overflow="fold")
    headers = [h for h, _ in (WIDE_COLUMNS if wide else KEY_COLUMNS)]
    for r in results:
        name, *values = _row(r, wide)
        figures = Text.from_markup(" · ".join(f"{h} {v}" for h, v in zip(headers[1:], values, strict=True) if v))
        t.add_row(Text.assemble((name, "bold"), "\n", figures))
    return t


def print_results(console: Console, results: list[BenchResult], wide: bool = False) -> None:
    """The table when it fits the console, else one block per workload."""
    from kubesched.render import fitting

    console.print(fitting(console, results_table(results, wide), lambda: results_blocks(results, wide)))


def results_notes(kernel: dict[int, tuple[KernelResult, KernelResult]] | None = None, wide: bool = False) -> list[str]:
    """Lines printed under the table: how to read it, and the bare kernel beside SchedulingBasic."""
    if wide:
        how = (
            "avg..p99: scheduler_perf's 1-second samples of the measured pods; whole = measured pods /"
            " measured phase; floor = upstream's 2026 CI threshold; target = 10 × floor (kubesched's own goal);"
            " ×floor = avg (whole when under 3 samples) / floor; init counts bound pods too;"
            " churn = unscheduled/created."
        )
    else:
        how = (
            "pods = measured pods; pods/s = scheduler_perf's Average of 1-second samples (the whole phase's"
            " rate when under 3 samples); ×floor = pods/s / upstream's 2026 CI threshold. --wide: every column."
        )
    notes = [how]
    for nodes, (k_all, k_adaptive) in sorted((kernel or {}).items()):
        notes.append(
            f"Bare numpy fit-and-score kernel, {nodes} nodes: [bold]{k_adaptive.pods_per_s:,.0f}[/bold] pods/s"
            f" scoring the adaptive feasible set as the scheduler does, {k_all.pods_per_s:,.0f} pods/s scoring"
            " every node (compare with SchedulingBasic)."
        )
    return notes


def list_table() -> Table:
    t = Table(title="kubesched bench workloads (scheduler_perf names; * = default set)")
    t.add_column("workload", no_wrap=True)
    t.add_column("params")
    t.add_column("floor", justify="right")
    t.add_column("target", justify="right")
    t.add_column("note", style="dim")
    for w in W.WORKLOADS:
        params = ", ".join(f"{k}={v}" for k, v in w.params.items())
        t.add_row(("* " if w.default else "  ") + w.full_name, params, _f(w.threshold), _f(w.target), w.note)
    return t


def to_json(
    results: list[BenchResult],
    *,
    scale: float,
    seed: int,
    kernel: dict[int, tuple[KernelResult, KernelResult]] | None = None,
) -> dict[str, Any]:
    return {
        "schema": JSON_SCHEMA,
        "kubesched": __version__,
        "upstream": UPSTREAM_RELEASE,
        "machine": machine(),
        "scale": scale,
        "seed": seed,
        "kernel": [
            {"all_nodes": a.to_dict(), "adaptive": b.to_dict()}
            for _, (a, b) in sorted((kernel or {}).items())
        ],
        "results": [r.to_dict() for r in results],
    }


# ---- the command -----------------------------------------------------------------------------
@contextmanager
def _progress(console: Console, enabled: bool) -> Iterator[Callable[[str, str, int, int], None]]:
    """A progress callback ``(workload, phase, done, total)`` drawing rich bars (no-op when off)."""
    if not enabled:
        yield lambda *_: None
        return
    cols = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    with Progress(*cols, console=console, transient=True) as prog:
        tasks: dict[tuple[str, str], Any] = {}

        def update(workload: str, phase: str, done: int, total: int) -> None:
            key = (workload, phase)
            if key not in tasks:
                tasks[key] = prog.add_task(f"{workload} [dim]{phase}[/dim]", total=total)
            prog.update(tasks[key], completed=done, total=total)

        yield update


def _check_args(args: argparse.Namespace) -> None:
    if args.scale <= 0:
        raise InputError(f"--scale: must be greater than 0, got {args.scale}")
    for flag in ("nodes", "pods"):
        v = getattr(args, flag)
        if v is not None and v <= 0:
            raise InputError(f"--{flag}: must be greater than 0, got {v}")


def run_bench(args: argparse.Namespace) -> int:
    """`kubesched bench`: run the selected workloads, print the table, write --json."""
    if getattr(args, "output", "table") == "json":
        if args.json not in (None, "-"):
            raise InputError("-o json writes to stdout; --json FILE writes a file: give one of them")
        args.json = "-"
    to_stderr = args.json == "-"  # the JSON takes stdout
    out = Console(stderr=to_stderr)
    if args.list:
        out.print(list_table())
        return 0
    _check_args(args)
    try:
        selected = W.select(args.workload)
    except KeyError as e:
        known = ", ".join(sorted({w.test_case for w in W.WORKLOADS}))
        raise InputError(f"--workload: unknown workload {e.args[0]!r} (known: {known}; see --list)") from None
    err = Console(stderr=True)
    show = err.is_terminal and not getattr(args, "no_progress", False)
    results: list[BenchResult] = []
    kernel: dict[int, tuple[KernelResult, KernelResult]] = {}
    with _progress(err, show) as update:
        for w in selected:
            params = w.resolve(args.scale, args.nodes, args.pods)
            big = max(params.values()) >= PROGRESS_MIN_PODS

            def cb(phase: str, done: int, total: int, _name: str = w.full_name, _big: bool = big) -> None:
                if _big:
                    update(_name, phase, done, total)

            r = run_workload(
                w, scale=args.scale, nodes=args.nodes, pods=args.pods, seed=args.seed, progress=cb
            )
            if w.test_case == "SchedulingBasic" and r.measured_pods:
                if r.nodes not in kernel:
                    n_pods = min(r.measured_pods, 10000)
                    kernel[r.nodes] = (
                        run_kernel(r.nodes, n_pods),
                        run_kernel(r.nodes, n_pods, adaptive=True),
                    )
                k_all, k_adaptive = kernel[r.nodes]
                r.kernel_pods_per_s = k_adaptive.pods_per_s
                r.extra["kernel_all_nodes_pods_per_s"] = k_all.pods_per_s
            results.append(r)
    print_results(out, results, args.wide)
    for line in results_notes(kernel, args.wide):
        out.print(line, highlight=False)
    if args.json:
        data = to_json(results, scale=args.scale, seed=args.seed, kernel=kernel)
        text = json.dumps(data, indent=2) + "\n"
        if args.json == "-":
            sys.stdout.write(text)
        else:
            try:
                Path(args.json).write_text(text, encoding="utf-8")
            except OSError as e:
                raise InputError(f"cannot write: {e.strerror or e}", source=args.json) from None
    return 0

"""``kubesched bench``: kube-scheduler's scheduler_perf workloads, in memory (``kubesched.bench``)."""

from __future__ import annotations

import argparse

from kubesched.commands import flags
from kubesched.commands.declare import command
from kubesched.commands.lazy import lazy_handler


@command("bench", run=lazy_handler("kubesched.bench.report", "run_bench"))
def bench(p: argparse.ArgumentParser) -> None:
    """kube-scheduler's scheduler_perf workloads, in memory, in pods/s

    Rebuild kube-scheduler's scheduler_perf workloads in memory, schedule them and report
    SchedulingThroughput (pods/s) against upstream's CI floor. The table shows the key columns;
    --wide shows every figure, -o json the whole result.
    """
    p.add_argument("--workload", action="append", metavar="NAME", help="Case/Workload, Case_Workload or Case (repeatable)")
    p.add_argument("--scale", type=float, default=1.0, help="scale node and pod counts (0.1: 500 nodes)")
    p.add_argument("--nodes", type=int, help="set the main node count (init pods follow it)")
    p.add_argument("--pods", type=int, help="set the measured (or bound) pod count")
    flags.add_output(
        p, ("table", "json"), "table (default), or json: the results as JSON on stdout (the table goes to stderr)"
    )
    p.add_argument("--wide", action="store_true", help="every column: percentiles, floor, target, CPU, memory, churn")
    p.add_argument("--json", metavar="FILE", help="also write the results as JSON to FILE ('-': stdout, as -o json)")
    flags.add_seed(p, 0, "seed for generated names and the tie-break (default 0)")
    p.add_argument("--list", action="store_true", help="list the workloads and exit")
    flags.add_no_progress(p)

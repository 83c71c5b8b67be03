"""``kubesched simulate``: replay a workload on a virtual clock (``kubesched.sim``)."""

from __future__ import annotations

import argparse

from kubesched.commands import flags
from kubesched.commands.declare import command
from kubesched.commands.lazy import lazy_handler

#: time mode: attempts per pod, on average, after which a run stops (a retry storm; see --help)
DEFAULT_ATTEMPTS_PER_POD = 50


@command("simulate", run=lazy_handler("kubesched.sim.cli", "run"))
def simulate(p: argparse.ArgumentParser) -> None:
    """replay a workload (openb trace, manifests, synthetic) on a virtual clock and report metrics

    Discrete-event simulation of the scheduler on a workload; writes CSV, JSON, PNG plots and an
    HTML report to -d/--out-dir and prints a summary (-o).
    """
    flags.add_workload_source(p, "workload (exactly one)")
    p.add_argument("--mode", choices=("time", "arrival"), default="time", help="replay by time (default) or arrival order")
    flags.add_config(p)
    flags.add_plugin_path(p)
    flags.add_seed(p, 0, "seed for tie-breaks, usage draws and synthetic workloads (default 0: equal runs unless you change it)")
    p.add_argument("--tie-break", choices=("random", "first"), default="random", help="among equal top scores")
    p.add_argument(
        "--gpu-model",
        choices=("annotations", "dra"),
        default="annotations",
        help="dra: write the workload's GPUs (gpu-count nodes, gpu-milli pods) as ResourceSlices and "
        "ResourceClaimTemplates, allocated by DynamicResources (default: as they are written)",
    )
    flags.add_out_dir(p, "sim-out", "the CSV, JSON, PNG and HTML files")
    p.add_argument("--bins", type=int, default=100, help="time mode: number of time bins (default 100)")
    p.add_argument("--max-wait", type=float, metavar="SECONDS", help="time mode: withdraw pods pending longer")
    p.add_argument(
        "--max-attempts-per-pod", type=int, default=DEFAULT_ATTEMPTS_PER_POD, metavar="N",
        help="time mode: stop (exit 2) once the scheduler has made N attempts per pod on average: a cluster far "
        f"too small for its pods, whose every completion retries every waiting pod (default {DEFAULT_ATTEMPTS_PER_POD}; 0: no limit)",
    )
    p.add_argument(
        "--usage-fraction", default="0.5:1.0", metavar="LOW:HIGH", help="share of requests a pod uses (uniform)"
    )
    flags.add_no_plots(p, "skip the PNG plots (the HTML report has none then)")
    flags.add_no_progress(p, "also off when stdout is not a TTY")
    flags.add_output(
        p, flags.CONTRACT_FORMATS,
        "table (default), or the summary (summary.json) as JSON/YAML on stdout (docs/cli.md#result-documents)",
        folder_flag=True,
    )
    flags.add_debug(p)

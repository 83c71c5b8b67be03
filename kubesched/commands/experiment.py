"""``kubesched experiment fgd|elastic``: published scheduling experiments (``kubesched.experiment``,
``kubesched.autoscale.experiment``)."""

from __future__ import annotations

import argparse

from kubesched.commands import flags
from kubesched.commands.declare import Group
from kubesched.commands.lazy import lazy_handler
from kubesched.errors import InputError, did_you_mean
from kubesched.experiment.grid import DEFAULT_SEEDS
from kubesched.experiment.published import POLICIES

#: ``kubesched.autoscale.scenario.all_modes()``, spelled out so that --help needs no numpy (a test
#: keeps the two equal)
ELASTIC_MODES = (
    "static-base", "static-peak", "ca-random", "ca-most-pods", "ca-least-waste", "ca-least-nodes", "ca-priority",
    "ca-price", "karpenter",
)


experiment = Group(
    "experiment", "reproduce published scheduling experiments",
    "Reproduce published scheduling experiments (today: the FGD paper's grid on the openb trace).",
)

_RUN_FGD = lazy_handler("kubesched.experiment.cli", "run")


def run_fgd(args: argparse.Namespace) -> int:
    """Policy names are spelled exactly, as kube-scheduler's plugin names: one in another case
    ("Bestfit") or close to one is refused with the right spelling, not guessed."""
    for item in (s.strip() for s in args.policies.split(",")):
        hint = did_you_mean(item, POLICIES) if item and item not in POLICIES else ""
        if hint:
            raise InputError(f'unknown policy "{item}"{hint}', source="--policies")
    return _RUN_FGD(args)


@experiment.command("fgd", run=run_fgd)
def _fgd(p: argparse.ArgumentParser) -> None:
    """the FGD paper's unallocated-GPU grid on the openb traces (Weng et al., ATC '23)

    Run every (trace, policy, seed) of the FGD paper's protocol, write per-run and aggregate
    CSV/JSON, the paper's figures with the published values overlaid, and a measured-vs-published
    summary to -d/--out-dir. See docs/fgd.md.
    """
    p.add_argument("--traces", default="default", help="comma list of trace names or families, or 'all' (default: default)")
    p.add_argument(
        "--policies", default=",".join(POLICIES), help=f"comma list, names as written (default: {','.join(POLICIES)})"
    )
    p.add_argument("--seeds", default=DEFAULT_SEEDS, help=f"seeds: 42-51, 42,45 or a mix (default: {DEFAULT_SEEDS})")
    p.add_argument(
        "--data-dir",
        metavar="DIR",
        help="folder of your own copy of the openb CSVs (.csv or .csv.gz; default: the trace shipped with kubesched)",
    )
    flags.add_workers(p)
    p.add_argument(
        "--ray-address", metavar="ADDR", help="run on Ray instead of local processes: ADDR, 'auto', or 'local'"
    )
    flags.add_out_dir(p, "fgd-out", "the runs, aggregates, figures and report")
    p.add_argument("--resume", action="store_true", help="reuse the runs already in --out-dir (same trace/policy/seed)")
    p.add_argument(
        "--report-only", action="store_true", help="run nothing: aggregate, compare and plot the runs already in --out-dir"
    )
    p.add_argument("--tune", type=float, default=1.3, help="arrived workload to reach, x GPU capacity (default 1.3)")
    flags.add_instance_size(p, "smoke runs", "each trace")
    p.add_argument(
        "--gpu-model",
        choices=("annotations", "dra"),
        default="annotations",
        help="how the GPUs are described: annotations and extended resources (default), or DRA ResourceSlices "
        "and ResourceClaims allocated by DynamicResources (the same result, slower)",
    )
    flags.add_no_plots(p, "skip the PNG figures")
    flags.add_result_output(p, "grid.json, aggregate.json's stats and the comparison")
    flags.add_no_progress(p, "one line per run on stderr instead")


@experiment.command("elastic", run=lazy_handler("kubesched.autoscale.experiment", "run"))
def _elastic(p: argparse.ArgumentParser) -> None:
    """the openb elastic scenario: static clusters vs Cluster Autoscaler vs Karpenter-like

    Replay the openb pods with compressed arrivals on a small base cluster that an autoscaler grows
    and shrinks; write runs.csv, summary.json, time series and report.html to -d/--out-dir. See
    docs/autoscaling.md.
    """
    flags.add_openb_lists(
        p, "pod list: a shipped name or a CSV path (default: default)",
        "node list whose node shapes become node groups (default: gpu, 15 shapes)",
    )
    p.add_argument("--compression", "-k", type=float, default=60.0, help="arrival compression k (default 60)")
    p.add_argument("--base-nodes", type=int, default=8, help="base cluster: nodes of the most common shape (default 8)")
    p.add_argument("--delay", default="60:120", help="provisioning delay, seconds: MIN:MAX (uniform) or one number (default 60:120)")
    p.add_argument("--modes", default="all", help=f"comma list or 'all' ({', '.join(ELASTIC_MODES)})")
    p.add_argument("--profiles", default="spread,pack", help="scheduling profiles: spread, pack (default both)")
    p.add_argument("--seeds", default="0-9", help="seeds: 0-9, 1,3 or a mix (default 0-9)")
    p.add_argument("--autoscaler", metavar="FILE", help="autoscaler options (YAML; node groups default to the shapes)")
    p.add_argument("--peak-headroom", type=float, default=0.1, help="static-peak: capacity above the peak demand (default 0.1)")
    flags.add_limit(p, "only the first N pods by arrival (smoke runs)")
    flags.add_workers(p)
    flags.add_out_dir(p, "elastic-out", "runs.csv, summary.json, series/ and report.html")
    flags.add_no_plots(p, "no report figures")
    flags.add_result_output(p, "summary.json")
    flags.add_no_progress(p, "one line per run on stderr instead")

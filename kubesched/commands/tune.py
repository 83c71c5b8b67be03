"""``kubesched tune``: search plugin weights (and args) for a simulator metric (``kubesched.tune``)."""

from __future__ import annotations

import argparse

from kubesched.commands import flags
from kubesched.commands.declare import command
from kubesched.commands.lazy import lazy_handler
from kubesched.tune.metrics import METRICS


def _epilog() -> str:
    names = "\n".join(f"  {m:34} {d}" for m, d in METRICS.items())
    return (
        "metrics (summary.json keys of `kubesched simulate`) and their default direction:\n"
        f"{names}\n\n"
        "Writes best-config.yaml (a ready-to-use KubeSchedulerConfiguration), trials.csv, tradeoff.png "
        "and summary.json to -d/--out-dir. See docs/tune.md."
    )


@command("tune", run=lazy_handler("kubesched.tune.cli", "run"), epilog=_epilog())
def tune(p: argparse.ArgumentParser) -> None:
    """search plugin weights (and args) that optimise a simulator metric (Optuna)

    Simulate the workload with many score-plugin weightings (and plugin args) chosen by Optuna;
    report the best as a KubeSchedulerConfiguration.
    """
    _add_workload(p)
    _add_simulation(p)
    _add_search_space(p)
    _add_study(p)


def _add_workload(p: argparse.ArgumentParser) -> None:
    src = flags.add_workload_source(p, "workload (exactly one, as in `kubesched simulate`)")
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


def _add_simulation(p: argparse.ArgumentParser) -> None:
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


def _add_search_space(p: argparse.ArgumentParser) -> None:
    space = p.add_argument_group("search space")
    flags.add_config(space, "base KubeSchedulerConfiguration (default: the default profile)")
    flags.add_plugin_path(space)
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


def _add_study(p: argparse.ArgumentParser) -> None:
    st = p.add_argument_group("study")
    st.add_argument(
        "--metric", required=True, metavar="NAME[,NAME]", help="metric(s) to optimise (listed below)"
    )
    st.add_argument(
        "--direction", metavar="minimize|maximize", help="per metric, comma-separated (default: as listed)"
    )
    st.add_argument("--trials", type=int, default=50, help="trials after the base config (default 50)")
    st.add_argument("--timeout", type=float, metavar="S", help="start no trial after S seconds")
    flags.add_seed(st, 0, "sampler seed (and --node-sample); equal seeds, equal runs")
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
    flags.add_out_dir(st, "tune-out", "best-config.yaml, trials.csv, tradeoff.png and summary.json")
    flags.add_no_plots(st, "skip tradeoff.png")
    flags.add_result_output(st, "summary.json")
    flags.add_no_progress(st)

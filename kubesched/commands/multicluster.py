"""``kubesched multicluster schedule|explain|simulate``: cluster-level scheduling with Karmada's
semantics (``kubesched.multicluster``)."""

from __future__ import annotations

import argparse

from kubesched.commands import flags
from kubesched.commands.declare import Group
from kubesched.commands.lazy import lazy_handler
from kubesched.multicluster.gates import KARMADA_FLAG_GATES


def _add_federation_flags(p: argparse.ArgumentParser) -> None:
    """The flags of ``schedule`` and ``explain``: the member clusters and how they are judged."""
    p.add_argument(
        "-f", "--file", action="append", required=True, metavar="[NAME=]FILE",
        help="Karmada objects and resource templates (FILE), or member cluster NAME's dump (NAME=FILE); repeatable",
    )
    p.add_argument("--estimator", choices=("general", "simulated", "both"), default="both",
                   help="available replicas from the resource summary, kubesched's scheduler on the member, or the "
                   "smaller of both (default, as Karmada with its scheduler-estimator)")
    p.add_argument("--plugins", default="*", metavar="LIST",
                   help="cluster plugins, Karmada's syntax: '*' all in-tree, '-Name' off, 'Name' on (default '*')")
    p.add_argument("--latency", metavar="FILE",
                   help="network: users' latency to each cluster and workload classes (enables the network plugins)")
    p.add_argument("--enable-empty-workload-propagation", action="store_true",
                   help="as Karmada's flag: selected clusters that get 0 replicas stay in the result")
    flags.add_feature_gates(p)
    p.set_defaults(other_feature_gates=KARMADA_FLAG_GATES)  # Karmada's, read by kubesched.multicluster.cli
    flags.add_config(p, "KubeSchedulerConfiguration for every member's scheduler")
    flags.add_plugin_path(p, "node plugins")
    flags.add_seed(p, help="seed for the members' tie-breaks")
    flags.add_output(
        p, ("table", "json", "yaml"), "table (default), or the JSON/YAML contract (docs/multicluster.md)"
    )


multicluster = Group(
    "multicluster", "cluster-level scheduling with Karmada's semantics (schedule, explain, simulate)",
    "Schedule workloads over member clusters as Karmada's scheduler does: which clusters each resource "
    "template goes to and how many replicas each gets.",
)


@multicluster.command("schedule", run=lazy_handler("kubesched.multicluster.cli", "cmd_schedule"))
def _schedule(p: argparse.ArgumentParser) -> None:
    """decide which clusters every resource template goes to, and how many replicas

    Decide, for every resource template and its PropagationPolicy, the member clusters and the
    replicas each gets, and print the bindings.
    """
    _add_federation_flags(p)
    p.add_argument("--independent", action="store_true",
                   help="decide every workload on the initial state (default: each decision's replicas are created in "
                   "the members first, so later decisions see them)")
    p.add_argument("--events", metavar="FILE",
                   help="then follow the decisions through member failures and recoveries over time: a FailoverTimeline "
                   "(failover flags, timed conditions and application health; docs/multicluster.md)")


@multicluster.command("explain", run=lazy_handler("kubesched.multicluster.cli", "cmd_explain"))
def _explain(p: argparse.ArgumentParser) -> None:
    """every cluster's filter verdicts, scores and available replicas for one workload

    Show, for one workload, every member cluster's filter verdicts, scores and available replicas,
    and the clusters selected.
    """
    p.add_argument("workload", metavar="[KIND/]NAMESPACE/NAME", help="the resource template to explain")
    _add_federation_flags(p)


#: ``simulate --busy``: the 14 busiest days of the openb trace, arrivals 500 times faster
BUSY_WINDOW_DAYS, BUSY_TIME_SCALE = 14.0, 500.0


@multicluster.command("simulate", run=lazy_handler("kubesched.multicluster.experiment.cli", "run_cli"))
def _simulate(p: argparse.ArgumentParser) -> None:
    """the edge-cloud experiment: isolated, cloud-only and collaborative on the same openb arrivals

    Replays the openb pods in time mode over edge clusters and a cloud region, in three modes, for
    several seeds; writes runs.csv, summary.json, plots and report.html to -d/--out-dir.
    """
    p.add_argument("--scenario", metavar="FILE", help="an EdgeCloudScenario (default: the built-in one, docs/multicluster.md)")
    p.add_argument("--seeds", default="0-9", help="seeds, e.g. 0-9 or 1,2,5 (default 0-9)")
    p.add_argument("--modes", default="isolated,cloud-only,collaborative", help="comma-separated (default: all three)")
    p.add_argument("--time-scale", "-k", type=float, metavar="K",
                   help="compress arrivals K times, durations kept (overrides the scenario's timeScale, default 100)")
    p.add_argument("--window", type=float, metavar="DAYS",
                   help="replay only DAYS days of the trace: the busiest window (the most GPUs asked by the pods "
                   "arriving in it) unless --window-start says where (default: the whole trace, 149 days)")
    p.add_argument("--window-start", type=float, metavar="DAY",
                   help="start the --window DAY days after the trace's first pod instead of at the busiest")
    p.add_argument("--busy", action="store_const", const=(BUSY_WINDOW_DAYS, BUSY_TIME_SCALE),
                   help=f"the busy regime measured in docs/multicluster.md: --window {BUSY_WINDOW_DAYS:g} -k {BUSY_TIME_SCALE:g} "
                   "(edges mostly above 50 %% GPU while pods arrive); --window and -k still override it")
    p.add_argument("--outage", action="append", metavar="SITE:OFFLINE[:BACK]",
                   help="site SITE goes offline at OFFLINE and comes back at BACK (never, if left out), times of the "
                   "run's clock in seconds or as durations (edge-japan-east:1h:1h30m); its running pods are lost, "
                   "or failed over in collaborative mode; repeatable (overrides the scenario's outages)")
    flags.add_limit(p)
    flags.add_workers(p, 1)
    flags.add_out_dir(p, "multicluster-out", "runs.csv, summary.json, plots and report.html")
    flags.add_no_plots(p, "no PNG plots and no per-cluster reports")
    flags.add_no_progress(p, "one line per finished run on stderr instead")
    flags.add_result_output(p, "summary.json without its runs")

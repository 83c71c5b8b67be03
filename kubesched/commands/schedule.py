"""``kubesched schedule``: place every pending pod of a cluster dump."""

from __future__ import annotations

import argparse
import sys

from kubesched.commands import flags
from kubesched.commands.declare import command
from kubesched.commands.printing import emit, templates_note, warn

#: ``schedule -o``: the contract's formats, and kubectl's ``wide`` and ``name`` (as ``kubectl get pods``)
SCHEDULE_FORMATS = (*flags.CONTRACT_FORMATS, "wide", "name")
SCHEDULE_HELP = (
    flags.CONTRACT_HELP + "; wide: one line per pod, every field in its own column (lines as long as they need); "
    "name: pod/NAME of every pod listed, as kubectl's -o name"
)


def add_cluster_flags(
    p: argparse.ArgumentParser, formats: tuple[str, ...] = flags.CONTRACT_FORMATS, help: str = flags.CONTRACT_HELP
) -> None:
    """The flags of the commands that schedule a cluster dump (``schedule``, ``explain``)."""
    flags.add_cluster_files(p)
    flags.add_seed(p)
    flags.add_config(p)
    flags.add_feature_gates(p)
    flags.add_plugin_path(p)
    flags.add_output(p, formats, help)
    flags.add_debug(p)


def run(args: argparse.Namespace) -> int:
    from kubesched.app import build_session
    from kubesched.batch import schedule_all

    s = build_session(flags.cluster_files(args), args.config, args.seed, args.plugin_path, validate=args.validate)
    warn(s.config.warnings)
    warn(s.objects.warnings)
    note = templates_note(s.objects)
    if note:
        warn([note])
    if args.debug:
        from kubesched.debug import PluginTracebacks

        PluginTracebacks().attach(s.scheduler)
    result = schedule_all(s)  # every pending pod: they compete for the same nodes, whatever -n shows
    if args.namespace is not None and not args.all_namespaces:
        result = result.in_namespace(args.namespace)
        if not result.placements and not result.skipped:  # as kubectl's "No resources found in NS namespace."
            sys.stderr.write(f'kubesched: no pending pod in namespace "{args.namespace}" ({result.pending_all} in all)\n')
    if args.output == "table":
        from kubesched.render import schedule_table

        schedule_table(result)
    elif args.output == "wide":
        from kubesched.render import schedule_wide

        schedule_wide(result)
    elif args.output == "name":  # kubectl's -o name: the resource and its name, no namespace
        for entry in (*result.placements, *result.skipped):
            sys.stdout.write(f"pod/{entry['pod'].partition('/')[2]}\n")
    else:
        emit(result.to_json(), args.output)
    return 0


@command("schedule", run=run)
def schedule(p: argparse.ArgumentParser) -> None:
    """place every pending pod of a cluster dump

    Schedule every pending pod of the cluster objects (a `kubectl get
    nodes,pods,namespaces,priorityclasses -A -o yaml` dump) in queue order, one at a time, with
    preemption, and print where each went, the pods it preempted, kube-scheduler's FailedScheduling
    message for those that fit nowhere, and why the pods left out were not tried (scheduling gates,
    another scheduler, finished, being deleted).
    """
    p.add_argument(
        "-n", "--namespace",
        help="show only this namespace's pods (every pending pod is still scheduled: they compete for the "
        "same nodes); default: every namespace",
    )
    p.add_argument(
        "-A", "--all-namespaces", action="store_true",
        help="show every namespace's pods (the default; as kubectl, -A wins over -n)",
    )
    add_cluster_flags(p, SCHEDULE_FORMATS, SCHEDULE_HELP)

"""The ``kubesched`` command. User mistakes print one line and exit 2; never a traceback."""

from __future__ import annotations

import argparse
import importlib
import json
import sys
from collections.abc import Callable, Sequence
from typing import Any

import yaml

from kubesched import UPSTREAM_RELEASE, __version__, argtypes, features
from kubesched.debug import add_debug
from kubesched.errors import InputError
from kubesched.flags import add_validate
from kubesched.server import security
from kubesched.server.httpd import DEFAULT_MAX_BODY, Limits

EXIT_USAGE = 2

# Subcommands that live in their own modules: each module has ``add_parser(sub)``, which adds its
# subparser(s) and sets ``func``. Importing must stay cheap (import heavy things inside func).
COMMAND_MODULES: tuple[str, ...] = (
    "kubesched.sim.cli",
    "kubesched.live.cli",
    "kubesched.experiment.cli",
    "kubesched.tune.cli",
    "kubesched.multicluster.cli",
    "kubesched.autoscale.cli",
    "kubesched.ui.cli",
    "kubesched.learn.cli",
)


def _emit(data: Any, fmt: str) -> None:
    if fmt == "json":
        sys.stdout.write(json.dumps(data, indent=2) + "\n")
    else:
        sys.stdout.write(yaml.safe_dump(data, sort_keys=False))


def _warn(warnings: list[str]) -> None:
    for w in warnings:
        sys.stderr.write(f"kubesched: warning: {w}\n")


def _files(args: argparse.Namespace) -> list[str]:
    from kubesched.app import example_path

    return args.file or [example_path()]


# ---- schedule ----------------------------------------------------------------------------
def cmd_schedule(args: argparse.Namespace) -> int:
    from kubesched.app import build_session
    from kubesched.batch import schedule_all

    s = build_session(_files(args), args.config, args.seed, args.plugin_path, validate=args.validate)
    _warn(s.config.warnings)
    _warn(s.objects.warnings)
    if args.debug:
        from kubesched.debug import PluginTracebacks

        PluginTracebacks().attach(s.scheduler)
    result = schedule_all(s)  # every pending pod: they compete for the same nodes, whatever -n shows
    if args.namespace is not None:
        result = result.in_namespace(args.namespace)
        if not result.placements and not result.skipped:  # as kubectl's "No resources found in NS namespace."
            sys.stderr.write(f'kubesched: no pending pod in namespace "{args.namespace}" ({result.pending_all} in all)\n')
    if args.output == "table":
        from kubesched.render import schedule_table

        schedule_table(result)
    else:
        _emit(result.to_json(), args.output)
    return 0


# ---- explain -----------------------------------------------------------------------------
def _pod_ref(args: argparse.Namespace) -> tuple[str, str]:
    """NAMESPACE/POD, or POD with -n NAMESPACE (kubectl's habit), or POD in "default"."""
    ref: str = args.pod_ref
    if "/" in ref:
        ns, _, name = ref.partition("/")
        if args.namespace and args.namespace != ns:
            raise InputError(f'pod "{ref}" names namespace "{ns}" but -n says "{args.namespace}"')
        return ns, name
    return args.namespace or "default", ref


def cmd_explain(args: argparse.Namespace) -> int:
    from kubesched.app import build_session
    from kubesched.batch import schedule_all
    from kubesched.explain import explain_pod
    from kubesched.framework.runtime import PluginFailure
    from kubesched.load import parse_objects, read_documents, resolve_priorities

    if bool(args.pod_ref) == bool(args.pod):
        raise InputError("give exactly one of NAMESPACE/POD (or POD with -n NAMESPACE) or --pod FILE")
    if args.namespace and args.pod:
        raise InputError("-n/--namespace: only with a pod name (a --pod file names its own namespace)")
    s = build_session(_files(args), args.config, args.seed, args.plugin_path, validate=args.validate)
    _warn(s.config.warnings)
    _warn(s.objects.warnings)
    if args.pod:
        objs = parse_objects(args.pod, read_documents(args.pod), args.validate)
        if len(objs.pods) != 1:
            raise InputError(f"expected exactly one Pod, found {len(objs.pods)}", source=args.pod)
        objs.priority_classes = s.objects.priority_classes
        resolve_priorities(objs)
        _warn(objs.warnings)
        pod = objs.pods[0]
    else:
        ns, name = _pod_ref(args)
        pod = next((p for p in s.objects.pods if p.namespace == ns and p.name == name), None)
        if pod is None:
            raise InputError(f'pod "{ns}/{name}" not found in {", ".join(_files(args))}')
    if pod.scheduler_name not in s.scheduler.frameworks:
        raise InputError(
            f'pod {pod.key}: spec.schedulerName "{pod.scheduler_name}" matches no profile '
            f"({', '.join(s.scheduler.frameworks)})"
        )
    outcome = None
    if args.after_schedule:
        batch = schedule_all(s)
        outcome = batch.entry(pod.key) if not args.pod else None
        # the pod as the run left it: if it was placed, it is taken off its node again below
        bound = s.cluster.bindings.get(pod.uid)
        if bound:
            pod = pod.with_node(bound)
    # an already-bound pod is explained as if it were pending: take it off its node first
    if pod.node_name and not args.pod and s.scheduler.snapshot.remove_pod(pod.uid) is not None:
        pod = pod.with_node("")
    try:
        gated = s.scheduler.frameworks[pod.scheduler_name].run_pre_enqueue(pod)
    except PluginFailure as e:
        gated = e.status
    errors: list[BaseException] = []
    result = explain_pod(s.scheduler, pod, errors)
    if args.debug:
        from kubesched.debug import PluginTracebacks

        tracebacks = PluginTracebacks()
        for exc in errors:
            tracebacks.report(pod.key, exc)
    result["basis"] = "after-schedule" if args.after_schedule else "input"
    result["gated"] = None if gated.ok else {"plugin": gated.plugin or None, "message": gated.message}
    if args.after_schedule:
        result["schedule"] = outcome
    if args.output == "table":
        from kubesched.render import explain_table

        explain_table(result)
    else:
        _emit(result, args.output)
    return 0


# ---- plugins / config --------------------------------------------------------------------
def cmd_plugins_list(args: argparse.Namespace) -> int:
    from kubesched.app import build_registry

    reg = build_registry(args.plugin_path)
    rows = []
    for info in reg.infos():
        try:
            points = sorted(reg.resolve(info.name).extension_points())
            err = ""
        except InputError as e:
            points, err = [], str(e)
        rows.append({"name": info.name, "origin": info.origin, "target": info.target, "points": points, "error": err})
    if args.output == "table":
        from kubesched.render import plugins_table

        plugins_table(rows)
    else:
        _emit({"plugins": rows}, args.output)
    return 0


def cmd_plugins_new(args: argparse.Namespace) -> int:
    """Write a plugin skeleton and its test, then say how to enable it."""
    from kubesched.scaffold import enable_snippet, write_skeleton

    plugin, test = write_skeleton(args.name, args.dir, args.kind)
    sys.stdout.write(f"wrote {plugin}\nwrote {test}\n\n{enable_snippet(args.name, args.kind, plugin)}")
    return 0


def cmd_config_view(args: argparse.Namespace) -> int:
    from kubesched.app import build_config, build_registry, check_plugins
    from kubesched.config import effective_config, resolved_table

    reg = build_registry(args.plugin_path, import_module_names=args.import_plugins)
    cfg = build_config(args.config, reg)
    check_plugins(cfg, reg)  # refuse what ``schedule`` refuses: plugins check their own args
    _warn(cfg.warnings)
    if args.output == "table":
        from kubesched.render import config_table

        config_table(resolved_table(cfg))
    else:
        _emit(effective_config(cfg), args.output)
    return 0


# ---- bench -------------------------------------------------------------------------------
def cmd_bench(args: argparse.Namespace) -> int:
    from kubesched.bench.report import run_bench

    return run_bench(args)


# ---- extender ----------------------------------------------------------------------------
def cmd_extender(args: argparse.Namespace) -> int:
    from kubesched.extender.service import run

    return run(args)


# ---- parser ------------------------------------------------------------------------------
def _common(p: argparse.ArgumentParser, files: bool = True) -> None:
    if files:
        p.add_argument(
            "-f", "--file", action="append", help="cluster objects (YAML/JSON; repeatable); default: shipped example"
        )
        add_validate(p)
        p.add_argument("--seed", type=argtypes.seed, default=None, help="seed for the random tie-break (reproducible runs)")
    p.add_argument("--config", help="KubeSchedulerConfiguration file (v1, v1beta3, v1beta2, v1beta1)")
    p.add_argument(
        "--feature-gates", metavar="NAME=BOOL,...",
        help="kube-scheduler feature gates, v1.36 defaults otherwise (docs/config.md#feature-gates)",
    )
    p.add_argument("--plugin-path", action="append", default=[], help="Python file defining plugins (repeatable; it is run: only trusted files)")
    p.add_argument(
        "-o", "--output", choices=("table", "json", "yaml"), default="table",
        help="table (default; fits the terminal's width), or the JSON/YAML contract (docs/cli.md)",
    )
    if files:
        add_debug(p)


def build_parser() -> argparse.ArgumentParser:
    parser = argtypes.OneLineParser(
        prog="kubesched",
        description=f"A kube-scheduler {UPSTREAM_RELEASE}-compatible scheduler and scheduling lab.",
    )
    parser.add_argument("--version", action="version", version=f"kubesched {__version__} (kube-scheduler {UPSTREAM_RELEASE})")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND", help="one of:")
    p = sub.add_parser(
        "schedule",
        help="place every pending pod of a cluster dump",
        description="Schedule every pending pod of the cluster objects (a `kubectl get nodes,pods,namespaces,"
        "priorityclasses -A -o yaml` dump) in queue order, one at a time, with preemption, and print where each "
        "went, the pods it preempted, kube-scheduler's FailedScheduling message for those that fit nowhere, and "
        "why the pods left out were not tried (scheduling gates, another scheduler, finished, being deleted).",
    )
    p.add_argument(
        "-n", "--namespace",
        help="show only this namespace's pods (every pending pod is still scheduled: they compete for the "
        "same nodes); default: every namespace",
    )
    _common(p)
    p.set_defaults(func=cmd_schedule)
    p = sub.add_parser(
        "explain",
        help="show every node's filter and score verdicts for one pod",
        description="Run every filter plugin on every node and every score plugin on the feasible nodes for one "
        "pod, and show each verdict, reason and score with the node the scheduling cycle selects. The pod is "
        "judged against the input cluster as given (the other pending pods are not placed first) unless "
        "--after-schedule is given.",
    )
    p.add_argument(
        "pod_ref", nargs="?", metavar="NAMESPACE/POD",
        help="the pod to explain, from the cluster objects (POD alone: namespace from -n, else default)",
    )
    p.add_argument("-n", "--namespace", help="the pod's namespace when POD is given without one")
    p.add_argument("--pod", metavar="FILE", help="a Pod manifest to explain as given (instead of NAMESPACE/POD)")
    p.add_argument(
        "--after-schedule", action="store_true",
        help="first place the other pending pods as `kubesched schedule` does (preemption included), then "
        "explain the pod against the cluster as they leave it",
    )
    _common(p)
    p.set_defaults(func=cmd_explain)
    p = sub.add_parser("plugins", help="plugin tools", description="List the available plugins or write a new one.")
    psub = p.add_subparsers(dest="plugins_command", required=True, metavar="COMMAND", help="one of:")
    pl = psub.add_parser(
        "list",
        help="every available plugin, its origin and extension points",
        description="Every plugin kubesched can enable: built-in, from Python entry points (group "
        "kubesched.plugins) and from --plugin-path files, with the extension points each implements.",
    )
    pl.add_argument(
        "--plugin-path", action="append", default=[],
        help="Python file defining plugins (repeatable; it is run: only trusted files)",
    )
    pl.add_argument("-o", "--output", choices=("table", "json", "yaml"), default="table", help="output format (default table)")
    pl.set_defaults(func=cmd_plugins_list)
    pn = psub.add_parser(
        "new",
        help="write a plugin skeleton (NAME.py) and its pytest test",
        description="Write NAME.py (a per-node score or filter plugin) and test_NAME.py, and print the "
        "configuration that enables it.",
    )
    pn.add_argument("name", metavar="NAME", help="the plugin's class and configured name, e.g. LowLatencyFirst")
    pn.add_argument("--dir", default=".", help="where to write the files (default: current directory)")
    pn.add_argument("--kind", choices=("score", "filter"), default="score", help="extension point (default: score)")
    pn.set_defaults(func=cmd_plugins_new)
    p = sub.add_parser("config", help="configuration tools", description="Inspect a KubeSchedulerConfiguration.")
    csub = p.add_subparsers(dest="config_command", required=True, metavar="COMMAND", help="one of:")
    cv = csub.add_parser(
        "view",
        help="the resolved configuration as a v1 document (defaults merged, versions converted)",
        description="Print the configuration as kubesched resolves it: defaults merged, multiPoint expanded, "
        "older versions converted (with their own default weights), and the conversion warnings.",
    )
    _common(cv, files=False)
    cv.add_argument(
        "--import-plugins", action="store_true",
        help="import the modules of module:Class plugin names to resolve them (runs their code; default: refuse)",
    )
    cv.set_defaults(output="yaml")
    cv.set_defaults(func=cmd_config_view)
    p = sub.add_parser(
        "bench",
        help="kube-scheduler's scheduler_perf workloads, in memory, in pods/s",
        description="Rebuild kube-scheduler's scheduler_perf workloads in memory, schedule them and report "
        "SchedulingThroughput (pods/s) against upstream's CI floor. The table shows the key columns; "
        "--wide shows every figure, -o json the whole result.",
    )
    p.add_argument("--workload", action="append", metavar="NAME", help="Case/Workload, Case_Workload or Case (repeatable)")
    p.add_argument("--scale", type=float, default=1.0, help="scale node and pod counts (0.1: 500 nodes)")
    p.add_argument("--nodes", type=int, help="set the main node count (init pods follow it)")
    p.add_argument("--pods", type=int, help="set the measured (or bound) pod count")
    p.add_argument(
        "-o", "--output", choices=("table", "json"), default="table",
        help="table (default), or json: the results as JSON on stdout (the table goes to stderr)",
    )
    p.add_argument("--wide", action="store_true", help="every column: percentiles, floor, target, CPU, memory, churn")
    p.add_argument("--json", metavar="FILE", help="also write the results as JSON to FILE ('-': stdout, as -o json)")
    p.add_argument("--seed", type=argtypes.seed, default=0, help="seed for generated names and the tie-break")
    p.add_argument("--list", action="store_true", help="list the workloads and exit")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.set_defaults(func=cmd_bench)
    p = sub.add_parser(
        "extender",
        help="serve the kube-scheduler extender protocol (filter, prioritize, bind, preempt)",
        description="Serve kubesched's plugins to a stock kube-scheduler over the extender HTTP protocol "
        "(filter, prioritize, bind, preempt). See docs/extender.md.",
    )
    p.add_argument(
        "-f", "--file", action="append", help="cluster objects the extender holds (NodeNames mode, bind); default: none"
    )
    add_validate(p)
    p.add_argument("--config", help="KubeSchedulerConfiguration file (v1, v1beta3, v1beta2, v1beta1)")
    p.add_argument("--plugin-path", action="append", default=[], help="Python file defining plugins (repeatable; it is run: only trusted files)")
    p.add_argument("--listen", default="127.0.0.1:8888", help="HOST:PORT to serve on (':8888': every interface)")
    p.add_argument("--url-prefix", default="", help="also serve the verbs under this path (the urlPrefix's path)")
    p.add_argument("--seed", type=argtypes.seed, default=None, help="seed for random choices (reproducible runs)")
    p.add_argument("--kubeconfig", help="watch this cluster for NodeNames mode, bind and preempt (instead of -f)")
    p.add_argument("--in-cluster", action="store_true", help="watch the cluster through the pod's service account")
    p.add_argument("--context", help="kubeconfig context (default: its current context)")
    p.add_argument("--kube-api-qps", type=float, default=50.0, help="API requests per second (default 50)")
    p.add_argument("--kube-api-burst", type=int, default=100, help="API request burst (default 100)")
    security.add_flags(p, verbs=True)
    p.add_argument(
        "--max-request-bytes", type=int, default=DEFAULT_MAX_BODY, metavar="N",
        help=f"refuse bodies larger than this with 413 (default {DEFAULT_MAX_BODY >> 20} MiB)",
    )
    p.add_argument(
        "--max-requests-in-flight", type=int, default=Limits.max_in_flight, metavar="N",
        help=f"verb requests read and served at once; more wait, then get 503 (default {Limits.max_in_flight})",
    )
    p.set_defaults(func=cmd_extender)
    added = {mod: importlib.import_module(mod).add_parser(sub) for mod in COMMAND_MODULES}
    from kubesched.autoscale.experiment import add_parser as add_elastic

    add_elastic(added["kubesched.experiment.cli"])  # `experiment elastic`: autoscale sits above experiment
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    func: Callable[[argparse.Namespace], int] = args.func
    try:
        if hasattr(args, "feature_gates"):  # this run's gates (v1.36's defaults when not given)
            features.set_from_flag(args.feature_gates or "")
        return func(args)
    except InputError as e:
        sys.stderr.write(f"kubesched: error: {e}\n")
        return EXIT_USAGE
    except BrokenPipeError:
        return 0


if __name__ == "__main__":
    sys.exit(main())

"""``kubesched explain``: every node's filter and score verdicts for one pod."""

from __future__ import annotations

import argparse

from kubesched.commands.declare import command
from kubesched.commands.flags import cluster_files
from kubesched.commands.printing import emit, warn
from kubesched.commands.schedule import add_cluster_flags
from kubesched.errors import InputError


def _pod_ref(args: argparse.Namespace) -> tuple[str, str]:
    """NAMESPACE/POD, or POD with -n NAMESPACE (kubectl's habit), or POD in "default"."""
    ref: str = args.pod_ref
    if "/" in ref:
        ns, _, name = ref.partition("/")
        if args.namespace and args.namespace != ns:
            raise InputError(f'pod "{ref}" names namespace "{ns}" but -n says "{args.namespace}"')
        return ns, name
    return args.namespace or "default", ref


def run(args: argparse.Namespace) -> int:
    from kubesched.app import build_session
    from kubesched.batch import schedule_all
    from kubesched.explain import explain_pod
    from kubesched.framework.failures import PluginFailure
    from kubesched.load import parse_objects, read_documents, resolve_priorities

    if bool(args.pod_ref) == bool(args.pod):
        raise InputError("give exactly one of NAMESPACE/POD (or POD with -n NAMESPACE) or --pod FILE")
    if args.namespace and args.pod:
        raise InputError("-n/--namespace: only with a pod name (a --pod file names its own namespace)")
    s = build_session(cluster_files(args), args.config, args.seed, args.plugin_path, validate=args.validate)
    warn(s.config.warnings)
    warn(s.objects.warnings)
    if args.pod:
        objs = parse_objects(args.pod, read_documents(args.pod), args.validate)
        if len(objs.pods) != 1:
            raise InputError(f"expected exactly one Pod, found {len(objs.pods)}", source=args.pod)
        objs.priority_classes = s.objects.priority_classes
        resolve_priorities(objs)
        warn(objs.warnings)
        pod = objs.pods[0]
    else:
        ns, name = _pod_ref(args)
        pod = next((p for p in s.objects.pods if p.namespace == ns and p.name == name), None)
        if pod is None:
            raise InputError(f'pod "{ns}/{name}" not found in {", ".join(cluster_files(args))}')
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
        emit(result, args.output)
    return 0


@command("explain", run=run)
def explain(p: argparse.ArgumentParser) -> None:
    """show every node's filter and score verdicts for one pod

    Run every filter plugin on every node and every score plugin on the feasible nodes for one pod,
    and show each verdict, reason and score with the node the scheduling cycle selects. The pod is
    judged against the input cluster as given (the other pending pods are not placed first) unless
    --after-schedule is given.
    """
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
    add_cluster_flags(p)

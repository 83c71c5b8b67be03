"""``kubesched multicluster schedule|explain``: the cluster-level layer on the command line (the flags
are in ``kubesched.commands.multicluster``)."""

from __future__ import annotations

import argparse
import sys

from kubesched.errors import InputError
from kubesched.kit.report import print_document


def _warn_missing_dumps(setup, decisions: list) -> None:  # noqa: ANN001 - a load.Setup
    """A Cluster object with no member dump and no ``status.apiEnablements`` fails APIEnablement
    ("did not have the API resource", Karmada's words): most often the member files were not
    given. Say so once, on stderr, when it decided something."""
    from kubesched.multicluster.framework import APIEnablement

    blind = {name for name, c in setup.clusters.items() if name not in setup.dumps and c.api_enablements is None}
    hit = sorted({
        v.cluster.name
        for d in decisions for at in d.attempts for v in at.verdicts
        if v.cluster.name in blind and any(p == APIEnablement.name and not r.ok for p, r in v.filters)
    })
    if not hit:
        return
    sys.stderr.write(
        f"kubesched: warning: no member dump for {', '.join(hit)} and no status.apiEnablements in "
        f"{'its Cluster object' if len(hit) == 1 else 'their Cluster objects'}: "
        f"every template is rejected there as not having the API resource; give each member's dump as -f NAME=FILE "
        f"(e.g. -f {hit[0]}={hit[0]}.yaml)\n"
    )


def build(args: argparse.Namespace):  # noqa: ANN201 - (Federation, bindings, skipped, setup)
    from kubesched.app import build_config, build_registry
    from kubesched.multicluster.federation import Federation, resolve_plugins
    from kubesched.multicluster.gates import CUSTOMIZED_CLUSTER_RESOURCE_MODELING, parse_karmada_gates
    from kubesched.multicluster.load import load_members, match_policy, read_setup, to_binding
    from kubesched.multicluster.network import NetworkOverhead, load_network

    setup = read_setup(args.file, parse_karmada_gates(args.feature_gates).enabled(CUSTOMIZED_CLUSTER_RESOURCE_MODELING))
    if not setup.clusters:
        raise InputError("no member clusters: give Cluster objects or member dumps as NAME=FILE", source="-f")
    registry = build_registry(args.plugin_path)
    config = build_config(args.config, registry)
    extra: dict = {}
    weights: dict[str, int] = {}
    spec = args.plugins
    if args.latency:
        net = load_network(args.latency)
        extra = {p.name: p for p in net.plugins()}
        weights["NetworkOverhead"] = net.weight
        if spec == "*":
            spec = "*," + ",".join(extra)
    plugins = resolve_plugins(spec, extra)
    fed = Federation(load_members(setup, config, registry, args.seed), plugins, args.estimator, weights,
                     args.enable_empty_workload_propagation)
    for p in plugins:
        if isinstance(p, NetworkOverhead):
            p.clusters = {m.name: m.cluster for m in fed.members}
    bindings, skipped = [], []
    for t in setup.templates:
        policy = match_policy(t, setup.policies)
        if policy is None:
            skipped.append({"workload": t.key, "reason": "no PropagationPolicy or ClusterPropagationPolicy matches"})
        elif policy.scheduler_name != "default-scheduler":  # another Karmada scheduler's binding
            skipped.append({"workload": t.key, "reason": f'{policy.key} names schedulerName "{policy.scheduler_name}"'})
        else:
            bindings.append(to_binding(t, policy))
    return fed, bindings, skipped, setup


def cmd_schedule(args: argparse.Namespace) -> int:
    from kubesched.multicluster.output import decision_json

    fed, bindings, skipped, setup = build(args)
    timeline = None
    if args.events:
        from kubesched.multicluster.timeline import load_timeline

        timeline = load_timeline(args.events, set(setup.clusters))
    out, decisions = [], []
    for b in bindings:
        d = fed.decide(b)
        decisions.append(d)
        if not args.independent and d.scheduled:
            fed.apply(d)
            fed.record(d)
        out.append(decision_json(d))
    doc = {"decisions": out, "skipped": skipped}
    if timeline is not None:
        from kubesched.multicluster.timeline import failover_json, run_timeline

        events, ctl = run_timeline(timeline, args.events, fed, [d for d in decisions if d.scheduled], setup.conditions,
                                   tuple(setup.taint_policies), apply=not args.independent)
        doc["failover"] = failover_json(events, ctl)
    if args.output == "table":
        from kubesched.multicluster.render import failover_table, schedule_table

        schedule_table(doc, [m.name for m in fed.members])
        if timeline is not None:
            failover_table(doc["failover"])
    else:
        print_document(doc, args.output)
    _warn_missing_dumps(setup, decisions)
    return 0


def cmd_explain(args: argparse.Namespace) -> int:
    from kubesched.multicluster.output import explain_json

    fed, bindings, _, setup = build(args)
    ref = args.workload.split("/")
    if len(ref) not in (2, 3):
        raise InputError("expected [KIND/]NAMESPACE/NAME", source=args.workload)
    kind = ref[0] if len(ref) == 3 else None
    ns, name = ref[-2], ref[-1]
    found = [b for b in bindings if b.namespace == ns and b.name == name and (kind is None or b.kind == kind)]
    if len(found) != 1:
        what = "no" if not found else "more than one"
        raise InputError(f"{what} propagated resource template matches (give KIND/NAMESPACE/NAME)", source=args.workload)
    decision = fed.decide(found[0], explain=True)
    doc = explain_json(decision)
    if args.output == "table":
        from kubesched.multicluster.render import explain_table

        explain_table(doc)
    else:
        print_document(doc, args.output)
    _warn_missing_dumps(setup, [decision])
    return 0

"""Checks for a change to the scheduling core: same placements, and what one run costs.

    python bench/pipeline_check.py placements [--scale 0.1] [--workload NAME ...]
    python bench/pipeline_check.py replay BestFit [--pods 1200]
    python bench/pipeline_check.py workload SchedulingBasic/5000Nodes_10000Pods [--pods 1000]

``placements`` prints, per bench workload (the default set unless named), the number of pods
bound and a hash of every placement (pod namespace/name -> node; churn made deterministic), so two
checkouts can be compared line by line. ``replay`` runs one FGD-protocol replay (the default
openb trace, seed 42, its first ``--pods`` pods on a quarter as many nodes) and ``workload``
one bench workload at ``--scale``; each runs inside ``sys.call_tracing``, so that callgrind can
count the instructions of the run alone:

    python -m compileall -q kubesched   # with PYTHONDONTWRITEBYTECODE set, imports compile otherwise
    valgrind --tool=callgrind --collect-atstart=no --toggle-collect='sys_call_tracing*' \\
        --callgrind-out-file=/dev/null python bench/pipeline_check.py replay BestFit --pods 1200

Instructions per measured pod of a workload: the difference of two ``workload`` runs, with
``--pods`` P and 2P, divided by P.
"""

from __future__ import annotations

import argparse
import hashlib
import sys

from kubesched.bench import workloads as W
from kubesched.bench.runner import WorkloadRun, run_workload


def placements(scale: float, names: list[str] | None, seed: int) -> None:
    for w in W.select(names):
        run = WorkloadRun(w, w.resolve(scale, None, None), seed=seed, churn_every=50)
        names: dict[str, str] = {}  # by namespace/name: uids count across the workloads of a process
        run.scheduler.hooks.on_scheduled.append(lambda res, names=names: names.setdefault(res.pod.uid, res.pod.key))
        run.run()
        bound = sorted((names[uid], node) for uid, node in run.placements.items())
        digest = hashlib.sha256(repr(bound).encode()).hexdigest()[:16]
        print(f"{w.full_name} {len(run.placements)} {digest}", flush=True)


def replay(policy: str, pods: int) -> None:
    from kubesched.experiment.grid import RunSpec
    from kubesched.experiment.protocol import prepare, run_prepared
    from kubesched.experiment.runner import load_inputs
    from kubesched.trace.bundled import OPENB_DIR

    spec = RunSpec("default", policy, 42, str(OPENB_DIR.resolve()), max_pods=pods, max_nodes=max(1, pods // 4))
    nodes, trace = load_inputs(spec)
    prep = prepare(trace, nodes, spec.seed, spec.tune)
    result = sys.call_tracing(run_prepared, (prep, policy))
    print(f"{policy}: {len(prep.pods)} pods on {len(nodes)} nodes, {result.failed} failed")


def workload(name: str, pods: int | None, scale: float, seed: int) -> None:
    w = W.select([name])[0]
    res = sys.call_tracing(lambda: run_workload(w, scale=scale, pods=pods, seed=seed), ())
    print(f"{w.full_name}: {res.measured_pods} measured pods, {res.scheduled} scheduled")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="command", required=True)
    p = sub.add_parser("placements", help="placement hash of each bench workload")
    p.add_argument("--scale", type=float, default=0.1, help="bench scale (default 0.1)")
    p.add_argument("--workload", action="append", help="a workload (repeatable; default: the default set)")
    p.add_argument("--seed", type=int, default=1, help="seed for names and the tie-break (default 1)")
    r = sub.add_parser("replay", help="one FGD-protocol replay, the run inside sys.call_tracing")
    r.add_argument("policy", help="BestFit, FGD, Random, DotProd, GpuClustering or GpuPacking")
    r.add_argument("--pods", type=int, default=1200, help="the trace's first N pods (default 1200)")
    k = sub.add_parser("workload", help="one bench workload, inside sys.call_tracing")
    k.add_argument("name", help="Case/Workload, as kubesched bench --workload")
    k.add_argument("--pods", type=int, help="measured pods (default: the workload's, scaled)")
    k.add_argument("--scale", type=float, default=0.1, help="bench scale (default 0.1)")
    k.add_argument("--seed", type=int, default=1, help="seed (default 1)")
    args = ap.parse_args()
    if args.command == "placements":
        placements(args.scale, args.workload, args.seed)
    elif args.command == "replay":
        replay(args.policy, args.pods)
    else:
        workload(args.name, args.pods, args.scale, args.seed)


if __name__ == "__main__":
    main()

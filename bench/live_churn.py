"""Nodes deleted mid-burst: how many pods does `kubesched run` bind to nodes already gone?

The test API server (tests/kubeapi) runs in this process and, like kube-apiserver, accepts a
binding to a node that does not exist. `kubesched run` runs as its own process with the default
client rate limit (50 QPS, burst 100), so scheduling outruns binding. After ``--delete-after``
pods are bound, ``--delete`` of the ``--nodes`` nodes are deleted at once. Each binding the
server accepts is recorded with its arrival time; the figures are

* late bindings: accepted for a node whose deletion the server had committed before the
  binding arrived, and how long before (the pod ends bound to a node that no longer exists);
* pods bound, pods bound to nodes that still exist (the others were bound before their node was
  deleted, or late), pods bound more than once (must be 0).

    python bench/live_churn.py [--nodes 200] [--delete 40] [--pods 900] [--runs 3] [--json out.json]

Run from the repository root. A benchmark measures; nothing asserts.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.live import free_port, stop, wait_ready  # noqa: E402
from kubesched.testing import make_node, make_pod  # noqa: E402
from tests.kubeapi import KubeAPIServer  # noqa: E402


def one_run(args: argparse.Namespace, seed: int) -> dict:
    api = KubeAPIServer(bookmark_interval=1.0)
    api.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "churn"}})
    names = [f"node-{i}" for i in range(args.nodes)]
    for n in names:
        api.create(make_node(n, cpu="8", memory="32Gi", pods=110))
    tmp = Path(tempfile.mkdtemp(prefix="kubesched-churn-"))
    kubeconfig = api.write_kubeconfig(tmp / "kubeconfig")
    port = free_port()
    cmd = [
        sys.executable, "-m", "kubesched.cli", "run", "--kubeconfig", kubeconfig,
        "--metrics-listen", f"127.0.0.1:{port}", "--seed", str(seed), "--log-level", "warning",
        *args.sched_arg,
    ]
    sched = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=open(tmp / "sched.log", "w"))  # noqa: SIM115
    try:
        if not wait_ready(f"http://127.0.0.1:{port}/readyz", 120):
            raise SystemExit(f"scheduler never became ready; see {tmp / 'sched.log'}")
        accepted = api.record_bindings()
        for i in range(args.pods):
            d = make_pod(f"p-{i}", namespace="churn", requests={"cpu": "100m"}, spec={"schedulerName": "kubesched"})
            del d["metadata"]["uid"]
            api.create(d)
        t0 = time.monotonic()
        while len(accepted) < args.delete_after and time.monotonic() - t0 < 120:
            time.sleep(0.002)
        deleted_at: dict[str, float] = {}
        for n in names[:: max(1, args.nodes // args.delete)][: args.delete]:
            api.delete("Node", n)
            deleted_at[n] = time.monotonic()
        end = time.monotonic() + args.timeout
        while time.monotonic() < end:  # every pod bound, or time out
            if all(p["spec"].get("nodeName") for p in api.list("Pod", "churn")):
                break
            time.sleep(0.2)
        pods = api.list("Pod", "churn")
    finally:
        stop(sched)
        api.close()
    late = [(p, n, t - deleted_at[n]) for p, n, t in accepted if n in deleted_at and t > deleted_at[n]]
    per_pod: dict[str, int] = {}
    for p, _, _ in accepted:
        per_pod[p] = per_pod.get(p, 0) + 1
    on = [p["spec"].get("nodeName") for p in pods]
    return {
        "seed": seed,
        "late_bindings": len(late),
        "late_max_s": max((x for _, _, x in late), default=0.0),
        "bound": sum(1 for n in on if n),
        "bound_to_existing": sum(1 for n in on if n and n not in deleted_at),
        "bound_twice": sum(1 for c in per_pod.values() if c > 1),
        "pods": args.pods,
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nodes", type=int, default=200)
    ap.add_argument("--delete", type=int, default=40, help="nodes deleted at once, mid-burst")
    ap.add_argument("--pods", type=int, default=900)
    ap.add_argument("--delete-after", type=int, default=150, help="delete once this many pods are bound")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--timeout", type=float, default=90.0, help="seconds to wait for the pods after the deletion")
    ap.add_argument("--sched-arg", action="append", default=[], help="extra `kubesched run` argument (repeatable)")
    ap.add_argument("--json", help="write the results here")
    args = ap.parse_args()
    results = []
    for seed in range(1, args.runs + 1):
        r = one_run(args, seed)
        results.append(r)
        print(f"run {seed}: {r['late_bindings']} bindings accepted for nodes already deleted "
              f"(up to {r['late_max_s']:.1f} s after the deletion); {r['bound']}/{r['pods']} pods bound, "
              f"{r['bound_to_existing']} to existing nodes, {r['bound_twice']} bound twice")
    if args.json:
        Path(args.json).write_text(json.dumps({"args": vars(args), "runs": results}, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())

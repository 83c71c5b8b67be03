"""Benchmark of the live path: `kubesched run` against the test API server, over real HTTP.

The API server (tests/kubeapi, the same REST + watch protocol as kube-apiserver) runs in this
process; `kubesched run` runs as its own process and talks to it through the official client,
exactly as it would to a cluster. Two phases, on N nodes (default 5000, scheduler_perf's node):

* burst: P pods created at once; throughput = pods / (last bound - first created), the figure
  Kubernetes' scheduler-throughput test reports;
* steady: pods created at a fixed rate below capacity; p50/p90/p99 of creation-to-bound latency
  (an upper bound of queue-to-bound: it includes the watch delivery to the scheduler).

    python bench/live.py [--nodes 5000] [--pods 5000] [--rate 200] [--steady-pods 2000] [--json out.json]

Run from the repository root (it imports tests.kubeapi). A benchmark measures; nothing asserts.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from kubesched.testing import make_node, make_pod  # noqa: E402
from tests.kubeapi import KubeAPIServer  # noqa: E402


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_ready(url: str, timeout: float) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        try:
            with urllib.request.urlopen(url, timeout=1) as r:  # noqa: S310 - loopback
                if r.status == 200:
                    return True
        except OSError:
            pass
        time.sleep(0.1)
    return False


class BoundWatcher:
    """Records when each pod is bound: wraps the store's binding subresource (no polling, so the
    measurement adds no load to the API server's process)."""

    def __init__(self, api: KubeAPIServer) -> None:
        self.pending: dict[str, float] = {}  # name -> created at
        self.latency: dict[str, float] = {}
        self.bound_at: dict[str, float] = {}
        self.lock = threading.Lock()
        store = api.store
        real_bind = store.bind

        def bind(res, namespace, name, node, *a, **kw):  # noqa: ANN001, ANN002, ANN003, ANN202
            out = real_bind(res, namespace, name, node, *a, **kw)
            now = time.monotonic()
            with self.lock:
                t0 = self.pending.pop(name, None)
            if t0 is not None:
                self.latency[name] = now - t0
                self.bound_at[name] = now
            return out

        store.bind = bind

    def add(self, name: str, t: float) -> None:
        with self.lock:
            self.pending[name] = t

    def wait(self, n: int, timeout: float) -> bool:
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if len(self.latency) >= n:
                return True
            time.sleep(0.02)
        return False


def stop(sched: subprocess.Popen) -> None:
    """SIGTERM (graceful: bindings in flight finish), SIGKILL after a minute."""
    sched.send_signal(signal.SIGTERM)
    try:
        sched.wait(60)
    except subprocess.TimeoutExpired:
        sched.kill()


def cpu_seconds(pid: int, which: tuple[int, ...] = (11, 12)) -> float:
    """CPU seconds of a process (Linux /proc): user + system by default."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return sum(int(fields[i]) for i in which) / os.sysconf("SC_CLK_TCK")


def scheduled_events(api: KubeAPIServer) -> list[dict]:
    return [e for e in api.list("Event", "bench") if e.get("reason") == "Scheduled"]


def pod(name: str) -> dict:
    d = make_pod(name, namespace="bench", requests={"cpu": "100m", "memory": "500Mi"}, spec={"schedulerName": "kubesched"})
    del d["metadata"]["uid"]
    return d


def percentiles(xs: list[float]) -> dict[str, float]:
    a = np.asarray(xs)
    return {f"p{q}": float(np.percentile(a, q)) for q in (50, 90, 99)} | {"max": float(a.max())}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nodes", type=int, default=5000)
    ap.add_argument("--pods", type=int, default=5000, help="pods of the burst phase")
    ap.add_argument("--rate", type=float, default=200.0, help="pods/s of the steady phase")
    ap.add_argument("--steady-pods", type=int, default=2000)
    ap.add_argument("--qps", type=float, default=5000.0, help="--kube-api-qps of the scheduler")
    ap.add_argument("--json", help="write the results here")
    ap.add_argument("--sched-arg", action="append", default=[], help="extra `kubesched run` argument (repeatable)")
    args = ap.parse_args()

    api = KubeAPIServer(bookmark_interval=1.0)
    api.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "bench"}})
    for i in range(args.nodes):
        api.create(make_node(f"node-{i}", cpu="4", memory="32Gi", pods=110))
    tmp = Path(tempfile.mkdtemp(prefix="kubesched-live-bench-"))
    kubeconfig = api.write_kubeconfig(tmp / "kubeconfig")
    port = free_port()
    cmd = [
        sys.executable, "-m", "kubesched.cli", "run", "--kubeconfig", kubeconfig,
        "--metrics-listen", f"127.0.0.1:{port}", "--kube-api-qps", str(args.qps),
        "--kube-api-burst", str(int(args.qps)), "--seed", "1", "--log-level", "warning", *args.sched_arg,
    ]
    sched = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=open(tmp / "sched.log", "w"))  # noqa: SIM115
    results: dict = {
        "machine": {"nproc": os.cpu_count(), "python": platform.python_version(), "cpu": platform.processor()},
        "nodes": args.nodes,
    }
    try:
        t_start = time.monotonic()
        if not wait_ready(f"http://127.0.0.1:{port}/readyz", 120):
            print("scheduler never became ready; see", tmp / "sched.log", file=sys.stderr)
            return 1
        results["ready_s"] = time.monotonic() - t_start
        spy = None
        if os.environ.get("KUBESCHED_BENCH_PYSPY"):  # a flame graph of every scheduler thread
            spy = subprocess.Popen(
                ["py-spy", "record", "-p", str(sched.pid), "-o", os.environ["KUBESCHED_BENCH_PYSPY"],
                 "-f", "raw", "--gil", "-r", "100"],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            )
        watcher = BoundWatcher(api)

        # burst
        cpu0 = (cpu_seconds(sched.pid), time.process_time(), cpu_seconds(sched.pid, (12,)))
        t0 = time.monotonic()
        for i in range(args.pods):
            watcher.add(f"burst-{i}", time.monotonic())
            api.create(pod(f"burst-{i}"))
        created = time.monotonic()
        ok = watcher.wait(args.pods, 600)
        last = max(watcher.bound_at.values()) if watcher.bound_at else float("nan")
        sched_cpu = cpu_seconds(sched.pid) - cpu0[0]
        sched_sys = cpu_seconds(sched.pid, (12,)) - cpu0[2]
        server_cpu = time.process_time() - cpu0[1]
        results["burst"] = {
            "scheduler_cpu_s": sched_cpu,
            "scheduler_sys_s": sched_sys,
            "api_server_cpu_s": server_cpu,
            "pods": args.pods,
            "bound": len(watcher.latency),
            "complete": ok,
            "create_s": created - t0,
            "pods_per_s": len(watcher.latency) / (last - t0),
        }
        if spy is not None:
            spy.send_signal(signal.SIGINT)
            spy.wait(60)
        print(f"burst: {len(watcher.latency)}/{args.pods} bound in {last - t0:.2f} s "
              f"= {results['burst']['pods_per_s']:.0f} pods/s (creation took {created - t0:.2f} s); "
              f"CPU: scheduler {sched_cpu:.1f} s ({sched_sys:.1f} s system), API server {server_cpu:.1f} s")

        # steady
        base = len(watcher.latency)
        gap = 1.0 / args.rate
        t0 = time.monotonic()
        for i in range(args.steady_pods):
            due = t0 + i * gap
            delay = due - time.monotonic()
            if delay > 0:
                time.sleep(delay)
            watcher.add(f"steady-{i}", time.monotonic())
            api.create(pod(f"steady-{i}"))
        ok = watcher.wait(base + args.steady_pods, 600)
        lat = [v for k, v in watcher.latency.items() if k.startswith("steady-")]
        results["steady"] = {"rate": args.rate, "pods": args.steady_pods, "bound": len(lat), "complete": ok} | {
            k: v for k, v in percentiles(lat).items()
        }
        s = results["steady"]
        print(f"steady at {args.rate:.0f} pods/s: creation-to-bound p50 {s['p50'] * 1000:.0f} ms, "
              f"p90 {s['p90'] * 1000:.0f} ms, p99 {s['p99'] * 1000:.0f} ms, max {s['max'] * 1000:.0f} ms")
        # Scheduled events are written behind the bindings (queued, fire and forget): count them
        want = args.pods + args.steady_pods
        end = time.monotonic() + 60
        while time.monotonic() < end and len(scheduled_events(api)) < want:
            time.sleep(0.2)
        results["scheduled_events"] = len(scheduled_events(api))
        results["events_caught_up_s"] = time.monotonic() - (end - 60)
        print(f"Scheduled events written: {results['scheduled_events']}/{want} "
              f"({results['events_caught_up_s']:.1f} s after the last pod was bound)")
    finally:
        stop(sched)
        api.close()
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())

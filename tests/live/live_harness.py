"""Running ``kubesched run`` against the test API server (tests/kubeapi), in-process or as a process."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from kubesched.cli import build_parser
from kubesched.live.cli import build_runner
from kubesched.live.runner import Runner
from kubesched.testing import make_node, make_pod
from tests.kubeapi import KubeAPIServer

ROOT = Path(__file__).resolve().parents[2]
# short timings so the suite stays fast; the defaults are kube-scheduler's
FAST = ["--metrics-listen", "127.0.0.1:0", "--watch-backoff", "0.05", "--watch-idle-timeout", "5", "--seed", "1"]
LEASE = [
    "--leader-elect",
    "--leader-elect-resource-namespace", "default",
    "--leader-elect-lease-duration", "2",
    "--leader-elect-renew-deadline", "1.5",
    "--leader-elect-retry-period", "0.2",
]


def node(name: str, cpu: str = "4", memory: str = "8Gi", **kw: Any) -> dict:
    return make_node(name, cpu=cpu, memory=memory, **kw)


def pod(name: str, cpu: str = "1", scheduler: str = "kubesched", **kw: Any) -> dict:
    """A pending pod for the API server (it assigns the uid)."""
    spec = {"schedulerName": scheduler, **kw.pop("spec", {})}
    d = make_pod(name, requests={"cpu": cpu}, spec=spec, **kw)
    del d["metadata"]["uid"]
    return d


def node_of(api: KubeAPIServer, name: str, namespace: str = "default") -> str | None:
    p = api.get("Pod", name, namespace)
    return (p or {}).get("spec", {}).get("nodeName")


def all_bound(api: KubeAPIServer, names: list[str]) -> bool:
    return all(node_of(api, n) for n in names)


def binding_posts(api: KubeAPIServer, name: str | None = None) -> list[str]:
    """Paths of the binding POSTs (of one pod, or of all)."""
    return [
        p for m, p in api.requests
        if m == "POST" and p.endswith("/binding") and (name is None or p.endswith(f"/pods/{name}/binding"))
    ]


def events(api: KubeAPIServer, reason: str, pod_name: str | None = None) -> list[dict]:
    out = []
    for e in api.list("Event"):
        obj = e.get("involvedObject") or {}
        if e.get("reason") == reason and (pod_name is None or obj.get("name") == pod_name):
            out.append(e)
    return out


def http_get(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=5) as r:  # noqa: S310 - loopback test server
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


@contextmanager
def running(kubeconfig: str, *flags: str) -> Iterator[Runner]:
    """``kubesched run`` in a thread of this process; stopped (gracefully) on exit."""
    args = build_parser().parse_args(["run", "--kubeconfig", kubeconfig, *FAST, *flags])
    runner = build_runner(args)
    t = threading.Thread(target=runner.serve, name="kubesched-run", daemon=True)
    t.start()
    try:
        assert runner.ready.wait(10), "caches never synced"
        yield runner
    finally:
        runner.stop()
        t.join(20)
        assert not t.is_alive(), "kubesched run did not stop"


class Process:
    """``kubesched run`` as a child process (for signals); stderr goes to a file."""

    def __init__(self, kubeconfig: str, log: Path, *flags: str) -> None:
        self.log = log
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        self._err = log.open("wb")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "kubesched.cli", "run", "--kubeconfig", kubeconfig, *FAST, *flags],
            stdout=subprocess.DEVNULL,
            stderr=self._err,
            env=env,
            cwd=ROOT,
        )

    def text(self) -> str:
        return self.log.read_text()

    def wait_log(self, needle: str, timeout: float = 15.0) -> bool:
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if needle in self.text():
                return True
            if self.proc.poll() is not None:
                return needle in self.text()
            time.sleep(0.02)
        return False

    def signal(self, sig: int = signal.SIGTERM) -> None:
        self.proc.send_signal(sig)

    def wait(self, timeout: float = 20.0) -> int:
        try:
            return self.proc.wait(timeout)
        finally:
            self._err.close()

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(5)
        self._err.close()

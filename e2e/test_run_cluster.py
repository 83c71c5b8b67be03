"""``kubesched run`` on a real cluster: binding, events, conditions, leader election, SIGTERM.

Each test works in a namespace of its own with a scheduler name of its own; pods are tiny
(pause image, 1m CPU) so any cluster with one schedulable node can run them.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from kubernetes import client as k8s_client

ROOT = Path(__file__).resolve().parents[1]
PAUSE = "registry.k8s.io/pause:3.10"


def wait_for(predicate: Callable[[], object], timeout: float = 60.0, interval: float = 0.5) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if predicate():
            return True
        time.sleep(interval)
    return bool(predicate())


def pod_body(name: str, scheduler: str, cpu: str = "1m") -> dict:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name},
        "spec": {
            "schedulerName": scheduler,
            "terminationGracePeriodSeconds": 0,
            "containers": [{"name": "pause", "image": PAUSE, "resources": {"requests": {"cpu": cpu, "memory": "4Mi"}}}],
        },
    }


class Run:
    """``kubesched run`` as a child process, as a user starts it."""

    def __init__(self, kubeconfig: str, config: str, log: Path, *flags: str) -> None:
        self.log = log
        self._out = log.open("wb")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "kubesched.cli", "run", "--kubeconfig", kubeconfig, "--config", config,
             "--metrics-listen", "127.0.0.1:0", *flags],
            stdout=subprocess.DEVNULL,
            stderr=self._out,
            cwd=ROOT,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
        )

    def text(self) -> str:
        return self.log.read_text()

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 40.0) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        try:
            return self.proc.wait(timeout)
        finally:
            self._out.close()


@contextmanager
def running(kubeconfig: str, config: str, log: Path, *flags: str) -> Iterator[Run]:
    r = Run(kubeconfig, config, log, *flags)
    try:
        yield r
    finally:
        if r.proc.poll() is None:
            r.stop()


def node_of(core: k8s_client.CoreV1Api, ns: str, name: str) -> str | None:
    return core.read_namespaced_pod(name, ns).spec.node_name


def events_for(core: k8s_client.CoreV1Api, ns: str, name: str, reason: str) -> list:
    evs = core.list_namespaced_event(ns, field_selector=f"involvedObject.name={name}").items
    return [e for e in evs if e.reason == reason]


def test_binds_a_pod_and_reports_a_failure(
    kubeconfig_path: str, core: k8s_client.CoreV1Api, namespace: str, scheduler_name: str, sched_config: str, tmp_path: Path
) -> None:
    with running(kubeconfig_path, sched_config, tmp_path / "run.log") as r:
        core.create_namespaced_pod(namespace, pod_body("small", scheduler_name))
        core.create_namespaced_pod(namespace, pod_body("huge", scheduler_name, cpu="100000"))
        assert wait_for(lambda: node_of(core, namespace, "small")), r.text()
        node = node_of(core, namespace, "small")
        assert wait_for(lambda: events_for(core, namespace, "small", "Scheduled")), r.text()
        (ev,) = events_for(core, namespace, "small", "Scheduled")
        assert ev.message == f"Successfully assigned {namespace}/small to {node}"
        assert ev.reporting_component == scheduler_name
        assert wait_for(lambda: events_for(core, namespace, "huge", "FailedScheduling")), r.text()
        msg = events_for(core, namespace, "huge", "FailedScheduling")[0].message
        assert msg.startswith("0/") and " nodes are available: " in msg and "Insufficient cpu" in msg

        def condition():  # noqa: ANN202
            conds = core.read_namespaced_pod_status("huge", namespace).status.conditions or []
            return next((c for c in conds if c.type == "PodScheduled"), None)

        assert wait_for(lambda: condition() is not None), r.text()
        c = condition()
        assert (c.status, c.reason, c.message) == ("False", "Unschedulable", msg)
        assert node_of(core, namespace, "huge") is None
        assert r.stop() == 0  # SIGTERM: graceful


def test_two_replicas_one_leader(
    kubeconfig_path: str, core: k8s_client.CoreV1Api, namespace: str, scheduler_name: str, sched_config: str, tmp_path: Path
) -> None:
    lease = [
        "--leader-elect",
        "--leader-elect-resource-namespace", namespace,
        "--leader-elect-lease-duration", "4",
        "--leader-elect-renew-deadline", "3",
        "--leader-elect-retry-period", "0.5",
    ]
    coord = k8s_client.CoordinationV1Api(core.api_client)

    def holder() -> str:
        try:
            return coord.read_namespaced_lease(scheduler_name, namespace).spec.holder_identity or ""
        except k8s_client.ApiException:
            return ""

    with running(kubeconfig_path, sched_config, tmp_path / "a.log", *lease) as a:
        assert wait_for(holder), a.text()
        first = holder()
        with running(kubeconfig_path, sched_config, tmp_path / "b.log", *lease) as b:
            core.create_namespaced_pod(namespace, pod_body("one", scheduler_name))
            assert wait_for(lambda: node_of(core, namespace, "one")), a.text() + b.text()
            assert holder() == first
            assert a.stop() == 0  # releases the lease
            assert wait_for(lambda: holder() not in ("", first), 30), b.text()
            core.create_namespaced_pod(namespace, pod_body("two", scheduler_name))
            assert wait_for(lambda: node_of(core, namespace, "two")), b.text()
            assert "scheduled" in b.text() and "pod=" + namespace + "/two" in b.text()

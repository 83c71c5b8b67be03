"""An API server that cannot be reached: one line per distinct failure, not one per informer and
retry, then a summary when the scheduler stops."""

from __future__ import annotations

import logging
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from kubesched.live.client import ApiError
from kubesched.live.failures import FailureLog, cause

REFUSED = "MaxRetryError", "HTTPConnectionPool(host='127.0.0.1', port=9): Max retries exceeded with url: {} (Caused by NewConnectionError(...Connection refused))"


def _refused(path: str) -> ApiError:
    return ApiError(0, REFUSED[0], REFUSED[1].format(path))


def test_the_same_failure_of_every_informer_is_said_once(caplog: pytest.LogCaptureFixture) -> None:
    now = [0.0]
    failures = FailureLog(remind_every=60.0, clock=lambda: now[0])
    with caplog.at_level(logging.INFO, logger="kubesched.live"):
        for t in range(50):
            now[0] = float(t)
            for kind, path in (("Node", "/api/v1/nodes"), ("Pod", "/api/v1/pods?limit=500")):
                failures.failed(kind, _refused(path), 0.2)
        assert [r.levelname for r in caplog.records] == ["WARNING"]  # 100 failed requests, one line
        assert "with url" not in caplog.records[0].getMessage()
        now[0] = 60.0
        failures.failed("Node", _refused("/api/v1/nodes"), 0.2)  # a reminder a minute on
        failures.recovered("Node")
        failures.recovered("Pod")  # the last informer meeting it lists again: over
        failures.failed("Pod", ApiError(403, "Forbidden", "pods is forbidden"), 1.0)  # another failure: said
        failures.close()
    lines = [(r.levelname, r.getMessage().split(":")[0], getattr(r, "kv", None)) for r in caplog.records]
    assert lines == [
        ("WARNING", "Node", None),
        ("WARNING", "still failing", {"failed_requests": 101, "informers": 2, "for_s": 60.0}),
        ("INFO", "recovered", {"failed_requests": 101, "informers": 0, "for_s": 60.0}),
        ("WARNING", "Pod", None),
        ("WARNING", "still failing at stop", {"failed_requests": 1, "informers": 1, "for_s": 0.0}),
    ]


def test_cause_leaves_out_what_differs_between_requests() -> None:
    assert cause(_refused("/api/v1/nodes")) == cause(_refused("/apis/apps/v1/replicasets?limit=500"))
    assert cause(ApiError(0, "X", "<urllib3.connection.HTTPConnection object at 0x7f12ab>: refused")) == (
        "0 X: <urllib3.connection.HTTPConnection>: refused"
    )


def test_run_against_a_closed_loopback_port_logs_a_few_lines(tmp_path: Path) -> None:
    with socket.socket() as held:  # bound, never listening: connections to it are refused
        held.bind(("127.0.0.1", 0))
        port = held.getsockname()[1]
        kubeconfig = tmp_path / "kubeconfig"
        kubeconfig.write_text(
            "apiVersion: v1\nkind: Config\ncurrent-context: c\n"
            f"clusters: [{{name: c, cluster: {{server: 'http://127.0.0.1:{port}'}}}}]\n"
            "contexts: [{name: c, context: {cluster: c, user: u}}]\nusers: [{name: u, user: {token: t}}]\n"
        )
        argv = ["run", "--kubeconfig", str(kubeconfig), "--metrics-listen", "off", "--leader-elect=false", "--watch-backoff", "0.01"]
        with subprocess.Popen([sys.executable, "-m", "kubesched.cli", *argv], stderr=subprocess.PIPE, text=True) as proc:
            try:
                assert proc.stderr is not None
                first = proc.stderr.readline()
                assert first.startswith("kubesched: seed "), first
                failure = proc.stderr.readline()
                assert "Connection refused" in failure and "WARNING" in failure, failure
                time.sleep(1.5)  # ~20 informers retry every 10-600 ms: well over a hundred failed requests
                proc.send_signal(signal.SIGTERM)
                rest = proc.communicate(timeout=60)[1].splitlines()
            finally:
                if proc.poll() is None:
                    proc.kill()
    assert proc.returncode == 0
    assert len(rest) == 2, rest  # the summary, then "stopped"
    assert "still failing at stop" in rest[0] and "stopped" in rest[1]
    requests = int(rest[0].split("failed_requests=")[1].split()[0])
    assert requests > 50

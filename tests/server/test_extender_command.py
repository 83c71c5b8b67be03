"""``kubesched extender`` as users run it: a real process, real HTTP, SIGTERM, and bad arguments."""

from __future__ import annotations

import re
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from extender_testlib import cluster_docs, http, post, web_pod, write

from kubesched.cli import main


def test_serves_until_sigterm(tmp_path: Path):
    cluster = write(tmp_path, "cluster.yaml", cluster_docs())
    proc = subprocess.Popen(
        [sys.executable, "-m", "kubesched.cli", "extender", "-f", cluster, "--listen", "127.0.0.1:0",
         "--url-prefix", "/sched", "--seed", "1"],
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stderr is not None
        line = proc.stderr.readline()  # the announcement, once the socket listens
        m = re.search(r"on (http://127\.0\.0\.1:\d+) \(7 nodes, 7 pods held", line)
        assert m, line
        url = m.group(1)
        assert http(f"{url}/readyz")[0] == 200
        status, res = post(f"{url}/sched/filter", {"Pod": web_pod(), "NodeNames": ["n1", "n5"]})
        assert status == 200 and res["NodeNames"] == ["n5"]
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=60) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        if proc.stderr is not None:
            proc.stderr.close()


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["--listen", "8888"], 'kubesched: error: --listen: expected HOST:PORT, got "8888"'),
        (["--listen", "127.0.0.1:http"], 'kubesched: error: --listen: port must be a number, got "http"'),
        (["-f", "/nonexistent/cluster.yaml"], "kubesched: error: /nonexistent/cluster.yaml: cannot read"),
        (["--config", "/nonexistent/sched.yaml"], "kubesched: error: /nonexistent/sched.yaml"),
    ],
)
def test_bad_arguments_exit_2_with_one_line(capsys, argv, expected):
    code = main(["extender", *argv])
    err = capsys.readouterr().err
    assert code == 2
    assert err.startswith(expected) and err.count("\n") == 1, err


def test_port_in_use_exits_2(capsys):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        code = main(["extender", "--listen", f"127.0.0.1:{port}"])
    err = capsys.readouterr().err
    assert code == 2
    assert err.startswith(f"kubesched: error: --listen: cannot listen on 127.0.0.1:{port}:"), err
    assert err.count("\n") == 1

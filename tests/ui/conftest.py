"""Fixtures of the UI tests: a cluster with a preemption, a small simulation and a small
experiment written by the real commands, and a running `kubesched ui` server."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from kubesched.cli import main

HERE = Path(__file__).parent
PREEMPT = str(HERE / "preempt.yaml")


@pytest.fixture(scope="session")
def sim_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A time-mode simulation of 6 nodes and 120 pods (some fail: the cluster is small)."""
    out = tmp_path_factory.mktemp("sim")
    rc = main(
        [
            "simulate", "--synthetic", "--synth", "nodes.0.count=6", "--synth", "pods.count=120",
            "--synth", "pods.arrivalRate=0.5", "--max-wait", "120", "--seed", "3", "--no-plots", "--no-progress", "--out-dir", str(out),
        ]
    )
    assert rc == 0
    return out


@pytest.fixture(scope="session")
def exp_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("exp")
    rc = main(
        [
            "experiment", "fgd", "--traces", "default", "--policies", "Random,BestFit", "--seeds", "1-2",
            "--max-nodes", "24", "--max-pods", "120", "--workers", "1", "--no-plots", "--no-progress",
            "--out-dir", str(out),
        ]
    )
    assert rc == 0
    return out


TOKEN = "token-of-the-ui-tests"
AUTH = {"Authorization": f"Bearer {TOKEN}"}


def ui_app(ws, *, port: int = 80, **kw):  # noqa: ANN001, ANN201
    """build_app with the tests' token, answering to Host "testserver" (Starlette's TestClient) too."""
    from kubesched.ui.guard import Access
    from kubesched.ui.server import build_app

    return build_app(ws, access=Access.for_listen("127.0.0.1", port, TOKEN, ["testserver"]), **kw)


def ui_client(ws, **kw):  # noqa: ANN001, ANN201
    """A TestClient of the app that sends the token, as the page (its cookie) or a script would."""
    from starlette.testclient import TestClient

    return TestClient(ui_app(ws, **kw), headers=AUTH)


class Server:
    """`kubesched ui`'s app under uvicorn on a free loopback port, in a thread."""

    def __init__(self, ws, wrap=None, **kw) -> None:  # noqa: ANN001
        import uvicorn

        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        app = ui_app(ws, port=self.port, **kw)
        app = wrap(app) if wrap is not None else app  # e.g. a recorder of what the server answered
        self.server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off"))
        self.thread = threading.Thread(target=self.server.run, kwargs={"sockets": [self.sock]}, daemon=True)
        self.thread.start()
        deadline = time.monotonic() + 10
        while not self.server.started:
            if time.monotonic() > deadline:
                raise RuntimeError("kubesched ui did not start")
            time.sleep(0.02)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def page(self, view: str) -> str:
        """The URL a browser opens: the printed one (with the token), then the view's fragment."""
        return f"{self.url}/?token={TOKEN}#/{view}"

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(10)
        self.sock.close()


@pytest.fixture
def serve() -> Iterator:
    servers: list[Server] = []

    def start(ws, **kw) -> Server:  # noqa: ANN001
        s = Server(ws, **kw)
        servers.append(s)
        return s

    yield start
    for s in servers:
        s.stop()

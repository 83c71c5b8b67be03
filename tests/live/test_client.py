"""KubeClient against a tiny loopback HTTP server: raw JSON bodies, errors, and watch streams
(chunked, lines split across chunks, a silent stream hitting the read timeout)."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import orjson
import pytest
from kubernetes import client as k8s_client

from kubesched.live.client import ApiError, KubeClient

CHUNKS = [
    b'{"type":"ADDED","object":{"kind":"Pod","metadata":{"name":"a","resourceVersion":"5"}}}\n{"type":"MOD',
    b'IFIED","object":{"kind":"Pod","metadata":{"name":"a","resourceVersion":"6"}}}\n',
    b'{"type":"BOOKMARK","object":{"kind":"Pod","metadata":{"resourceVersion":"9"}}}\n',
]


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    seen: list[tuple[str, str, bytes, str]] = []

    def log_message(self, *args: object) -> None:
        pass

    def _reply(self, status: int, body: dict) -> None:
        data = orjson.dumps(body)
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:  # noqa: N802
        Handler.seen.append(("GET", self.path, b"", self.headers.get("Authorization", "")))
        if self.path.startswith("/stream"):
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            for c in CHUNKS:
                self.wfile.write(f"{len(c):x}\r\n".encode() + c + b"\r\n")
                self.wfile.flush()
                time.sleep(0.02)
            if "silent" in self.path:
                time.sleep(2.0)  # open but quiet: the client's read timeout must fire
            self.wfile.write(b"0\r\n\r\n")
        elif self.path.startswith("/gone"):
            self._reply(410, {"kind": "Status", "reason": "Expired", "message": "too old resource version: 1 (5)", "code": 410})
        else:
            self._reply(200, {"kind": "PodList", "items": [{"metadata": {"name": "x"}}], "metadata": {"resourceVersion": "7"}})

    def do_POST(self) -> None:  # noqa: N802
        body = self.rfile.read(int(self.headers["Content-Length"]))
        Handler.seen.append(("POST", self.path, body, self.headers.get("Content-Type", "")))
        self._reply(409, {"kind": "Status", "reason": "Conflict", "message": 'pod a is already assigned to node "n1"'})


@contextmanager
def server() -> Iterator[KubeClient]:
    srv = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    srv.daemon_threads = True
    t = threading.Thread(target=srv.serve_forever, args=(0.05,), daemon=True)
    t.start()
    cfg = k8s_client.Configuration()
    cfg.host = f"http://127.0.0.1:{srv.server_address[1]}"
    cfg.api_key = {"BearerToken": "secret"}
    cfg.api_key_prefix = {"BearerToken": "Bearer"}
    Handler.seen = []
    try:
        yield KubeClient(cfg)
    finally:
        srv.shutdown()
        srv.server_close()


def test_request_decodes_raw_json_and_sends_auth() -> None:
    with server() as c:
        resp = c.request("GET", "/api/v1/pods", query=[("limit", 500)])
        assert resp.body["items"] == [{"metadata": {"name": "x"}}]
        method, path, _, auth = Handler.seen[0]
        assert (method, path, auth) == ("GET", "/api/v1/pods?limit=500", "Bearer secret")


def test_error_status_becomes_api_error_with_reason() -> None:
    with server() as c:
        with pytest.raises(ApiError) as e:
            c.request("POST", "/api/v1/namespaces/d/pods/a/binding", body={"kind": "Binding"})
        assert (e.value.status, e.value.reason) == (409, "Conflict")
        assert "already assigned" in e.value.message
        assert orjson.loads(Handler.seen[0][2]) == {"kind": "Binding"}
        assert Handler.seen[0][3] == "application/json"


def test_watch_stream_splits_lines_across_chunks() -> None:
    with server() as c:
        stream = c.watch("/stream", [("watch", "true")], read_timeout=5)
        evs = list(stream.events())
    assert [e["type"] for e in evs] == ["ADDED", "MODIFIED", "BOOKMARK"]
    assert evs[1]["object"]["metadata"]["resourceVersion"] == "6"


def test_watch_refused_with_410() -> None:
    with server() as c:
        with pytest.raises(ApiError) as e:
            c.watch("/gone", [], read_timeout=5)
    assert e.value.status == 410 and e.value.reason == "Expired"


def test_silent_stream_hits_read_timeout() -> None:
    with server() as c:
        stream = c.watch("/stream-silent", [], read_timeout=0.3)
        got = []
        t0 = time.monotonic()
        with pytest.raises(ApiError) as e:
            for ev in stream.events():
                got.append(ev["type"])
        assert time.monotonic() - t0 < 1.5  # not the server's 2 s of silence
    assert got == ["ADDED", "MODIFIED", "BOOKMARK"]
    assert e.value.status == 0  # a transport failure: the informer reconnects


def test_transport_failure_is_status_zero() -> None:
    cfg = k8s_client.Configuration()
    cfg.host = "http://127.0.0.1:9"  # discard port: nothing listens
    cfg.retries = 0
    with pytest.raises(ApiError) as e:
        KubeClient(cfg).request("GET", "/api/v1/nodes", timeout=(0.5, 0.5))
    assert e.value.status == 0

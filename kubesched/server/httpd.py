"""A small threaded HTTP server: JSON POST routes, health probes and ``/metrics``.

Shared by ``kubesched extender`` and (later) ``kubesched run``. Built on the standard library's
``ThreadingHTTPServer``: the scheduler core holds its own lock, so a thread per connection is
enough, and nothing beyond ``prometheus-client`` is needed. Every error answer is one line of
text; a handler bug is a 500 with one line and a logged traceback, and the server keeps serving.
"""

from __future__ import annotations

import json
import logging
import signal
import socket
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import FrameType
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from kubesched.errors import InputError

if TYPE_CHECKING:
    from kubesched.server.metrics import SchedulerMetrics

log = logging.getLogger("kubesched.server")

#: A request body larger than this is refused (413) before it is read.
DEFAULT_MAX_BODY = 64 << 20
HEALTH_PATHS = ("/healthz", "/livez")


@dataclass
class Response:
    status: int
    body: bytes
    content_type: str = "application/json"

    @classmethod
    def json(cls, obj: Any, status: int = 200) -> Response:
        return cls(status, json.dumps(obj, separators=(",", ":")).encode())

    @classmethod
    def text(cls, line: str, status: int = 200) -> Response:
        """One line of text (errors and probes); newlines in the reason are flattened."""
        one = " ".join(line.splitlines()).strip()
        return cls(status, (one + "\n").encode(), "text/plain; charset=utf-8")


#: POST handler: the raw body in, a response out. Raise InputError for a bad body (-> 400).
PostHandler = Callable[[bytes], Response]


def parse_listen(value: str) -> tuple[str, int]:
    """``host:port``, ``:port`` (all interfaces) or ``[v6]:port``; port 0 picks a free one."""
    host, sep, port_s = value.rpartition(":")
    if not sep:
        raise InputError(f'expected HOST:PORT, got "{value}"', path="--listen")
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    elif ":" in host:
        raise InputError(f'put an IPv6 address in brackets ([::1]:8888), got "{value}"', path="--listen")
    try:
        port = int(port_s)
    except ValueError:
        raise InputError(f'port must be a number, got "{port_s}"', path="--listen") from None
    if not 0 <= port <= 65535:
        raise InputError(f"port must be in 0..65535, got {port}", path="--listen")
    return host or "0.0.0.0", port


class _Server(ThreadingHTTPServer):
    daemon_threads = True  # an idle keep-alive connection never blocks shutdown
    allow_reuse_address = True
    app: HTTPServer


class _Server6(_Server):
    address_family = socket.AF_INET6


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as Go's http.Client expects
    server_version = "kubesched"
    timeout = 60  # a silent client never holds a thread forever
    server: _Server

    # ---- plumbing --------------------------------------------------------------------
    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base class's name
        log.debug("%s - %s", self.address_string(), format % args)

    def _send(self, resp: Response, close: bool = False) -> None:
        self.send_response(resp.status)
        self.send_header("Content-Type", resp.content_type)
        self.send_header("Content-Length", str(len(resp.body)))
        if close:
            self.send_header("Connection", "close")
            self.close_connection = True
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(resp.body)

    def _path(self) -> str:
        return urlsplit(self.path).path or "/"

    # ---- GET -------------------------------------------------------------------------
    def do_GET(self) -> None:  # noqa: N802 - BaseHTTPRequestHandler's naming
        app = self.server.app
        path = self._path()
        if path in HEALTH_PATHS:
            self._send(Response.text("ok"))
        elif path == "/readyz":
            ready = app.ready is None or app.ready()
            self._send(Response.text("ok") if ready else Response.text("not ready", 503))
        elif path == "/metrics" and app.metrics is not None:
            try:
                body, ctype = app.metrics.exposition(self.headers.get("Accept"))
            except Exception as e:  # noqa: BLE001 - a collector bug must not kill the connection
                log.exception("metrics exposition failed")
                self._send(Response.text(f"metrics: {type(e).__name__}: {e}", 500))
                return
            self._send(Response(200, body, ctype))
        elif path in app.post:
            self._send(Response.text(f"{path}: use POST", 405))
        else:
            self._send(Response.text(f"{path}: not found", 404))

    do_HEAD = do_GET  # noqa: N815 - probes may use HEAD

    # ---- POST ------------------------------------------------------------------------
    def do_POST(self) -> None:  # noqa: N802
        app = self.server.app
        path = self._path()
        handler = app.post.get(path)
        if handler is None:
            allowed = path in HEALTH_PATHS or path in ("/readyz", "/metrics")
            self._send(Response.text(f"{path}: {'use GET' if allowed else 'not found'}", 405 if allowed else 404), close=True)
            return
        if self.headers.get("Transfer-Encoding", "").lower() not in ("", "identity"):
            self._send(Response.text(f"{path}: chunked bodies are not supported; send Content-Length", 411), close=True)
            return
        length_s = self.headers.get("Content-Length")
        if length_s is None:
            self._send(Response.text(f"{path}: Content-Length required", 411), close=True)
            return
        try:
            length = int(length_s)
            if length < 0:
                raise ValueError
        except ValueError:
            self._send(Response.text(f"{path}: invalid Content-Length {length_s!r}", 400), close=True)
            return
        if length > app.max_body:
            self._send(Response.text(f"{path}: body of {length} bytes exceeds the {app.max_body}-byte limit", 413), close=True)
            return
        try:
            body = self.rfile.read(length)
        except OSError:
            self.close_connection = True
            return
        if len(body) < length:
            self.close_connection = True  # the client went away mid-body
            return
        try:
            resp = handler(body)
        except InputError as e:
            resp = Response.text(str(e), 400)
        except Exception as e:  # noqa: BLE001 - a bug answers 500 in one line; the server keeps serving
            log.exception("handler for %s failed", path)
            resp = Response.text(f"{path}: internal error: {type(e).__name__}: {e}", 500)
        self._send(resp)


class HTTPServer:
    """Health probes, optional ``/metrics``, and JSON POST routes, on one listening socket."""

    def __init__(
        self,
        listen: tuple[str, int],
        post: Mapping[str, PostHandler] | None = None,
        *,
        metrics: SchedulerMetrics | None = None,
        ready: Callable[[], bool] | None = None,
        max_body: int = DEFAULT_MAX_BODY,
    ) -> None:
        self.post: dict[str, PostHandler] = dict(post or {})
        self.metrics = metrics
        self.ready = ready
        self.max_body = max_body
        host = listen[0]
        cls = _Server6 if ":" in host else _Server
        try:
            self._server = cls(listen, _Handler)
        except OSError as e:
            raise InputError(f"cannot listen on {host}:{listen[1]}: {e.strerror or e}", path="--listen") from None
        self._server.app = self
        self._thread: threading.Thread | None = None

    @property
    def address(self) -> tuple[str, int]:
        host, port = self._server.server_address[:2]
        return str(host), int(port)

    @property
    def url(self) -> str:
        host, port = self.address
        if host in ("0.0.0.0", "::"):
            host = "127.0.0.1" if host == "0.0.0.0" else "::1"
        return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"

    def start(self) -> HTTPServer:
        """Serve from a background thread (tests, and ``serve_until_signalled``)."""
        self._thread = threading.Thread(
            target=self._server.serve_forever, args=(0.05,), name="kubesched-http", daemon=True
        )  # a short poll interval: shutdown returns promptly
        self._thread.start()
        return self

    def shutdown(self) -> None:
        """Stop accepting, finish the loop, close the socket."""
        if self._thread is not None:
            self._server.shutdown()
            self._thread.join()
            self._thread = None
        self._server.server_close()

    def __enter__(self) -> HTTPServer:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.shutdown()


def serve_until_signalled(server: HTTPServer, on_start: Callable[[], None] | None = None) -> None:
    """Serve until SIGINT or SIGTERM, then shut down cleanly (called from the main thread)."""
    stop = threading.Event()

    def handle(signum: int, frame: FrameType | None) -> None:
        stop.set()

    old = {s: signal.signal(s, handle) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        server.start()
        if on_start is not None:
            on_start()
        while not stop.wait(0.5):
            pass
    finally:
        server.shutdown()
        for s, h in old.items():
            signal.signal(s, h)


__all__ = ["DEFAULT_MAX_BODY", "HTTPServer", "PostHandler", "Response", "parse_listen", "serve_until_signalled"]

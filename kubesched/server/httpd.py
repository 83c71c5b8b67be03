"""kubesched's HTTP(S) server: JSON POST routes, health probes and ``/metrics``.

Shared by ``kubesched extender`` and ``kubesched run``. HTTP/1.1 framing is h11's (a strict
RFC 9110/9112 state machine: conflicting ``Content-Length`` headers, oversized header blocks and
malformed request lines are protocol errors, answered 4xx and the connection closed, so no
leftover bytes ever run as a second request). This module does the I/O around it, one thread per
connection (the handlers block on the scheduler's lock), with the limits of a server on a
cluster network:

- a listen backlog of ``Limits.backlog`` and at most ``max_connections`` connections; past that
  a new connection takes the place of the connection idle the longest (one waiting for its first
  request or between requests: it is closed, as a keep-alive client expects an idle connection
  may be), and only when none is idle do new connections wait in the kernel's queue (Go's
  ``LimitListener``), so idle connections never starve new clients (600 idle connections
  delayed a probe 11 s);
- deadlines: a new connection must deliver its TLS handshake and first request line and headers
  within ``header_timeout``; a keep-alive connection may then wait ``idle_timeout`` for the next
  request, whose headers again get ``header_timeout`` from its first byte; a body gets
  ``body_timeout``; a silent or slow client is dropped (408 when it had started a request);
- a request's line and headers are bounded in bytes (``max_header_bytes``, h11's limit on a
  block still arriving, checked again on a complete one) and in count (``max_headers``, Apache's
  ``LimitRequestFields``): past either, 431 and close;
- at most ``max_in_flight`` POST requests are read and handled at once (each holds its body and
  its decoded document), and a body over ``max_body`` is refused with 413 before it is read;
- other methods get a one-line 405 with ``Allow``; every error answer is one line of text. A
  handler bug is a 500 with one line and a logged traceback, and the server keeps serving.

TLS and who may call what are ``kubesched.server.security``'s (certificates reloaded on change,
client certificates, bearer tokens for ``/metrics``); ``/healthz``, ``/livez`` and ``/readyz``
stay open, as kube-scheduler's do.
"""

from __future__ import annotations

import json
import logging
import selectors
import signal
import socket
import ssl
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from http import HTTPStatus
from types import FrameType
from typing import TYPE_CHECKING, Any, Protocol
from urllib.parse import urlsplit

import h11

from kubesched.errors import InputError

if TYPE_CHECKING:
    from kubesched.server.security import Access, ServingTLS

log = logging.getLogger("kubesched.server")

#: A request body larger than this is refused (413) before it is read.
DEFAULT_MAX_BODY = 16 << 20
HEALTH_PATHS = ("/healthz", "/livez")
#: Paths anyone may call, as kube-scheduler's ``--authorization-always-allow-paths``.
OPEN_PATHS = (*HEALTH_PATHS, "/readyz")
_READ_CHUNK = 256 << 10


@dataclass(frozen=True)
class Limits:
    """What one server lets its clients hold: connections, time, bodies."""

    max_body: int = DEFAULT_MAX_BODY
    max_in_flight: int = 2  # POST requests being read or handled at once (each holds its body, decoded)
    max_connections: int = 512
    backlog: int = 1024  # the kernel caps it at net.core.somaxconn
    header_timeout: float = 10.0
    body_timeout: float = 60.0
    idle_timeout: float = 120.0  # longer than Go's idle keep-alive (90 s): the client closes first
    write_timeout: float = 60.0
    max_header_bytes: int = 64 << 10  # the request line and headers
    max_headers: int = 100  # header fields per request (Apache's LimitRequestFields default)


@dataclass
class Response:
    status: int
    body: bytes
    content_type: str = "application/json"
    headers: list[tuple[str, str]] = field(default_factory=list)

    @classmethod
    def json(cls, obj: Any, status: int = 200) -> Response:
        return cls(status, json.dumps(obj, separators=(",", ":")).encode())

    @classmethod
    def text(cls, line: str, status: int = 200, headers: list[tuple[str, str]] | None = None) -> Response:
        """One line of text (errors and probes); newlines in the reason are flattened."""
        one = " ".join(line.splitlines()).strip()
        return cls(status, (one + "\n").encode(), "text/plain; charset=utf-8", headers or [])


class Exposition(Protocol):
    """What ``/metrics`` serves: kube-scheduler's (``SchedulerMetrics``) or Cluster Autoscaler's
    (``kubesched.autoscale.metrics.AutoscalerMetrics``)."""

    def exposition(self, accept: str | None = None) -> tuple[bytes, str]: ...


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


class _Timeout(Exception):
    """A deadline of the connection passed."""


class _Close(Exception):
    """End the connection now, without an answer (the peer went away or broke the protocol)."""


class _Connection:
    """One client connection: TLS handshake, then requests until close, error or deadline."""

    def __init__(self, server: HTTPServer, sock: socket.socket, accepted: float) -> None:
        self.server = server
        self.limits = server.limits
        self.sock: socket.socket = sock
        self.accepted = accepted
        self.h11 = h11.Connection(h11.SERVER, max_incomplete_event_size=server.limits.max_header_bytes)
        self.verified_peer = False  # a client certificate verified against the client CA
        # when the connection began waiting for a request (its first, or the next on keep-alive);
        # None while a request is being read or answered: only an idle connection is evicted
        self.idle_since: float | None = accepted
        self.evicted = False

    # ---- I/O -------------------------------------------------------------------------
    def _recv(self, deadline: float) -> bytes:
        left = deadline - time.monotonic()
        if left <= 0:
            raise _Timeout
        self.sock.settimeout(left)
        try:
            return self.sock.recv(_READ_CHUNK)
        except TimeoutError:
            raise _Timeout from None
        except (OSError, ssl.SSLError):
            raise _Close from None

    def _next_event(self, deadline: float) -> Any:
        while True:
            ev = self.h11.next_event()
            if ev is not h11.NEED_DATA:
                return ev
            self.h11.receive_data(self._recv(deadline))

    def _send(self, method: bytes, resp: Response, close: bool) -> None:
        headers = [("content-type", resp.content_type), ("content-length", str(len(resp.body))), *resp.headers]
        if close:
            headers.append(("connection", "close"))
        try:
            phrase = HTTPStatus(resp.status).phrase.encode()
        except ValueError:
            phrase = b""
        out = self.h11.send(h11.Response(status_code=resp.status, headers=headers, reason=phrase)) or b""
        if method != b"HEAD" and resp.body:
            out += self.h11.send(h11.Data(data=resp.body)) or b""
        out += self.h11.send(h11.EndOfMessage()) or b""
        self.sock.settimeout(self.limits.write_timeout)
        try:
            self.sock.sendall(out)
        except (OSError, ssl.SSLError):
            raise _Close from None

    def _send_error(self, method: bytes, status: int, line: str) -> None:
        """A one-line error, then close (the request's body, if any, is not read)."""
        if self.h11.our_state in (h11.IDLE, h11.SEND_RESPONSE):
            self._send(method, Response.text(line, status), close=True)
        raise _Close

    # ---- the connection ----------------------------------------------------------------
    def run(self) -> None:
        try:
            if self.server.tls is not None:
                self._handshake()
            first = True
            while self._one_request(first):
                first = False
        except (_Close, _Timeout):
            pass
        except Exception:  # noqa: BLE001 - a bug in this module must not kill the server
            log.exception("HTTP connection failed")
        finally:
            self._close()

    def _handshake(self) -> None:
        assert self.server.tls is not None
        ctx = self.server.tls.context()
        left = self.accepted + self.limits.header_timeout - time.monotonic()
        if left <= 0:
            raise _Timeout
        raw = self.sock
        self.sock = ctx.wrap_socket(raw, server_side=True, do_handshake_on_connect=False)
        self.sock.settimeout(left)
        try:
            self.sock.do_handshake()
        except (OSError, ssl.SSLError) as e:  # a plain-HTTP client, a bad client certificate, a timeout
            log.debug("TLS handshake failed: %s", e)
            raise _Close from None
        assert isinstance(self.sock, ssl.SSLSocket)
        self.verified_peer = bool(self.sock.getpeercert())  # {} or None: no verified certificate

    def _one_request(self, first: bool) -> bool:
        """Serve one request; whether the connection stays open for another."""
        lim = self.limits
        started = bool(self.h11.trailing_data[0])  # a pipelined request is already buffered
        if started:
            self.idle_since = None
        elif not first:
            self.idle_since = time.monotonic()
        if first:
            deadline = self.accepted + lim.header_timeout
        else:
            deadline = time.monotonic() + (lim.header_timeout if started else lim.idle_timeout)
        try:
            while True:
                ev = self.h11.next_event()
                if ev is not h11.NEED_DATA:
                    break
                try:
                    data = self._recv(deadline)
                except _Timeout:
                    if not started:  # nothing asked: close quietly
                        raise _Close from None
                    self._send_error(b"GET", 408, "request headers not received in time")
                if data and not started:
                    started = True
                    self.idle_since = None
                    if not first:
                        deadline = time.monotonic() + lim.header_timeout
                self.h11.receive_data(data)
        except h11.RemoteProtocolError as e:
            status = e.error_status_hint if e.error_status_hint >= 400 else 400
            if status == 431:
                self._send_error(b"GET", status, f"request headers over the {lim.max_header_bytes}-byte limit")
            self._send_error(b"GET", status, f"bad request: {e}")
        if isinstance(ev, h11.ConnectionClosed):
            return False
        assert isinstance(ev, h11.Request)
        self.idle_since = None
        self._check_header_size(ev)
        resp, close = self._dispatch(ev)
        if not close and self.h11.their_state is h11.SEND_BODY:  # a request without a body: its end
            try:
                close = not isinstance(self._next_event(time.monotonic() + lim.header_timeout), h11.EndOfMessage)
            except h11.RemoteProtocolError:
                close = True
        self._send(ev.method, resp, close)
        if close or self.h11.our_state is h11.MUST_CLOSE or self.h11.their_state is not h11.DONE:
            return False
        self.h11.start_next_cycle()
        return True

    def _check_header_size(self, req: h11.Request) -> None:
        """431 for a request with too many header fields, or a header block that arrived whole in
        one read past ``max_header_bytes`` (h11 bounds only a block still incomplete)."""
        lim = self.limits
        if len(req.headers) > lim.max_headers:
            self._send_error(req.method, 431, f"{len(req.headers)} request header fields; at most {lim.max_headers}")
        size = len(req.method) + len(req.target) + 12 + sum(len(k) + len(v) + 4 for k, v in req.headers)
        if size > lim.max_header_bytes:
            self._send_error(req.method, 431, f"request headers of {size} bytes, over the {lim.max_header_bytes}-byte limit")

    def _dispatch(self, req: h11.Request) -> tuple[Response, bool]:
        """The answer to a request whose headers are in; reads the body of the POST routes."""
        app = self.server
        path = urlsplit(req.target.decode("latin-1")).path or "/"
        method = req.method
        has_body = _has_body(req)
        kind = app.route(path)
        if kind is None:
            return Response.text(f"{path}: not found", 404), has_body
        allow = "POST" if kind == "post" else "GET, HEAD"
        if method.decode("latin-1") not in allow.split(", "):
            return Response.text(f"{path}: method {method.decode('latin-1')} not allowed; use {allow}", 405, [("allow", allow)]), True
        if not app.access.allows(kind, self.verified_peer, _bearer(req)):
            return app.access.denial(path), has_body
        if kind != "post":
            return app.get(path, _header(req, b"accept")), has_body
        return self._post(req, path), False

    def _post(self, req: h11.Request, path: str) -> Response:
        app, lim = self.server, self.limits
        length_s = _header(req, b"content-length")
        chunked = _header(req, b"transfer-encoding") is not None
        if chunked and length_s is not None:
            self._send_error(b"POST", 400, f"{path}: both Content-Length and Transfer-Encoding")
        if not chunked and length_s is None:
            self._send_error(b"POST", 411, f"{path}: Content-Length required")
        if length_s is not None and int(length_s) > lim.max_body:
            self._send_error(b"POST", 413, f"{path}: body of {int(length_s)} bytes exceeds the {lim.max_body}-byte limit")
        if not app.in_flight.acquire(timeout=lim.body_timeout):
            self._send_error(b"POST", 503, f"{path}: {lim.max_in_flight} requests in flight; try again")
        try:
            if self.h11.client_is_waiting_for_100_continue:
                self.sock.settimeout(lim.write_timeout)
                self.sock.sendall(self.h11.send(h11.InformationalResponse(status_code=100, headers=[])) or b"")
            body = self._read_body(path)
            handler = app.post[path]
            try:
                return handler(body)
            except InputError as e:
                return Response.text(str(e), 400)
            except Exception as e:  # noqa: BLE001 - a bug answers 500 in one line; the server keeps serving
                log.exception("handler for %s failed", path)
                return Response.text(f"{path}: internal error: {type(e).__name__}: {e}", 500)
        finally:
            app.in_flight.release()

    def _read_body(self, path: str) -> bytes:
        lim = self.limits
        deadline = time.monotonic() + lim.body_timeout
        parts: list[bytes] = []
        size = 0
        while True:
            try:
                ev = self._next_event(deadline)
            except _Timeout:
                self._send_error(b"POST", 408, f"{path}: body not received in time")
            except h11.RemoteProtocolError as e:
                self._send_error(b"POST", 400, f"{path}: bad request: {e}")
            if isinstance(ev, h11.Data):
                size += len(ev.data)
                if size > lim.max_body:
                    self._send_error(b"POST", 413, f"{path}: body exceeds the {lim.max_body}-byte limit")
                parts.append(bytes(ev.data))
            elif isinstance(ev, h11.EndOfMessage):
                return b"".join(parts)
            else:  # ConnectionClosed mid-body
                raise _Close

    def _close(self) -> None:
        """Close after a short lingering read, so that a client still sending a refused body reads
        our answer instead of a reset (Go's net/http does the same)."""
        try:
            if self.h11.their_state not in (h11.DONE, h11.CLOSED, h11.IDLE, h11.MUST_CLOSE):
                self.sock.shutdown(socket.SHUT_WR)
                end = time.monotonic() + 0.5
                drained = 0
                while drained < (256 << 10) and time.monotonic() < end:
                    self.sock.settimeout(max(0.01, end - time.monotonic()))
                    chunk = self.sock.recv(65536)
                    if not chunk:
                        break
                    drained += len(chunk)
        except (OSError, ssl.SSLError):
            pass
        finally:
            self.sock.close()
            self.server.forget(self)


def _header(req: h11.Request, name: bytes) -> bytes | None:
    for k, v in req.headers:
        if k == name:
            return v
    return None


def _has_body(req: h11.Request) -> bool:
    length = _header(req, b"content-length")
    return _header(req, b"transfer-encoding") is not None or (length is not None and length != b"0")


def _bearer(req: h11.Request) -> str | None:
    auth = _header(req, b"authorization")
    if auth is None:
        return None
    scheme, _, token = auth.decode("latin-1").partition(" ")
    return token.strip() if scheme.lower() == "bearer" else None


class HTTPServer:
    """Health probes, optional ``/metrics``, and JSON POST routes, on one listening socket."""

    def __init__(
        self,
        listen: tuple[str, int],
        post: Mapping[str, PostHandler] | None = None,
        *,
        metrics: Exposition | None = None,
        ready: Callable[[], bool] | None = None,
        max_body: int | None = None,
        limits: Limits | None = None,
        tls: ServingTLS | None = None,
        access: Access | None = None,
    ) -> None:
        from kubesched.server.security import Access

        self.post: dict[str, PostHandler] = dict(post or {})
        self.metrics = metrics
        self.ready = ready
        self.limits = limits or Limits()
        if max_body is not None:
            self.limits = replace(self.limits, max_body=max_body)
        self.tls = tls
        self.access = access or Access()
        self.in_flight = threading.BoundedSemaphore(self.limits.max_in_flight)
        self._slots = threading.BoundedSemaphore(self.limits.max_connections)
        self._open: set[_Connection] = set()
        self._open_lock = threading.Lock()
        host, port = listen
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        try:
            self._sock = socket.create_server((host, port), family=family, backlog=self.limits.backlog)
        except OSError as e:
            raise InputError(f"cannot listen on {host}:{port}: {e.strerror or e}", path="--listen") from None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    @property
    def max_body(self) -> int:
        return self.limits.max_body

    @property
    def address(self) -> tuple[str, int]:
        host, port = self._sock.getsockname()[:2]
        return str(host), int(port)

    @property
    def url(self) -> str:
        host, port = self.address
        if host in ("0.0.0.0", "::"):
            host = "127.0.0.1" if host == "0.0.0.0" else "::1"
        scheme = "https" if self.tls is not None else "http"
        return f"{scheme}://[{host}]:{port}" if ":" in host else f"{scheme}://{host}:{port}"

    # ---- routes ----------------------------------------------------------------------
    def route(self, path: str) -> str | None:
        """"probe", "metrics" or "post" for a path this server serves, else None."""
        if path in OPEN_PATHS:
            return "probe"
        if path == "/metrics" and self.metrics is not None:
            return "metrics"
        if path in self.post:
            return "post"
        return None

    def get(self, path: str, accept: bytes | None) -> Response:
        if path in HEALTH_PATHS:
            return Response.text("ok")
        if path == "/readyz":
            ready = self.ready is None or self.ready()
            return Response.text("ok") if ready else Response.text("not ready", 503)
        assert self.metrics is not None
        try:
            body, ctype = self.metrics.exposition(accept.decode("latin-1") if accept else None)
        except Exception as e:  # noqa: BLE001 - a collector bug must not kill the connection
            log.exception("metrics exposition failed")
            return Response.text(f"metrics: {type(e).__name__}: {e}", 500)
        return Response(200, body, ctype)

    # ---- serving ---------------------------------------------------------------------
    def forget(self, conn: _Connection) -> None:
        with self._open_lock:
            if conn in self._open:
                self._open.discard(conn)
                self._slots.release()

    def _evict_idle(self) -> bool:
        """Close the connection idle the longest to make room for a new one; False if none is idle.
        Its thread sees the shutdown as the peer closing, closes and frees its slot."""
        with self._open_lock:
            if any(c.evicted for c in self._open):
                return True  # one is closing already: its slot is on the way
            idle = [c for c in self._open if c.idle_since is not None]
            if not idle:
                return False
            oldest = min(idle, key=lambda c: c.idle_since or 0.0)
            oldest.evicted = True
        try:
            # the plain socket's shutdown, also under TLS: SSLSocket.shutdown would drop the TLS
            # state under the connection's thread
            socket.socket.shutdown(oldest.sock, socket.SHUT_RDWR)
        except OSError:
            pass
        return True

    def _accept_loop(self) -> None:
        sel = selectors.DefaultSelector()
        sel.register(self._sock, selectors.EVENT_READ)
        try:
            while not self._stop.is_set():
                if not self._slots.acquire(blocking=False):
                    # at max_connections: a client waiting in the backlog takes the place of the
                    # longest idle connection (its slot comes back as it closes); with none idle,
                    # it waits there
                    if sel.select(0.05):
                        self._evict_idle()
                    if not self._slots.acquire(timeout=0.05):
                        continue
                taken = False
                try:
                    if not sel.select(0.05):
                        continue
                    try:
                        sock, _ = self._sock.accept()
                    except OSError:
                        continue
                    conn = _Connection(self, sock, time.monotonic())
                    with self._open_lock:
                        self._open.add(conn)
                    taken = True
                    threading.Thread(target=conn.run, name="kubesched-http-conn", daemon=True).start()
                finally:
                    if not taken:
                        self._slots.release()
        finally:
            sel.close()

    def start(self) -> HTTPServer:
        """Serve from a background thread (tests, and ``serve_until_signalled``)."""
        self._thread = threading.Thread(target=self._accept_loop, name="kubesched-http", daemon=True)
        self._thread.start()
        return self

    def shutdown(self) -> None:
        """Stop accepting, close the socket and every open connection."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
            self._thread = None
        self._sock.close()
        with self._open_lock:
            conns = list(self._open)
        for c in conns:
            try:
                c.sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

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


__all__ = [
    "DEFAULT_MAX_BODY",
    "HTTPServer",
    "Limits",
    "OPEN_PATHS",
    "PostHandler",
    "Response",
    "parse_listen",
    "serve_until_signalled",
]

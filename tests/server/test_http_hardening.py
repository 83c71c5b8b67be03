"""The HTTP layer under hostile or careless clients: raw sockets on loopback, real HTTP.

Each test is the regression test of one defect of the earlier server: a listen backlog of 5, a
smuggled second request behind conflicting Content-Length headers, 501 HTML pages for other
methods, no cap on requests in flight, slow or silent clients holding a thread forever, idle
connections at the connection cap making new clients wait (600 idle connections, cap 512, delayed
``/healthz`` 11 s), and 10,000 request headers accepted.
"""

from __future__ import annotations

import json
import re
import selectors
import socket
import threading
import time
from http.client import HTTPConnection
from pathlib import Path

import pytest
from extender_testlib import cluster_docs, http, post, running_extender, web_pod, write

from kubesched.server.httpd import HTTPServer, Limits, Response


def exchange(url: str, data: bytes, *, wait: float = 5.0) -> bytes:
    """Send raw bytes, read until the server closes (or ``wait`` passes): everything it said."""
    host, port = url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=wait) as s:
        s.sendall(data)
        out = b""
        end = time.monotonic() + wait
        while time.monotonic() < end:
            s.settimeout(max(0.01, end - time.monotonic()))
            try:
                chunk = s.recv(65536)
            except TimeoutError:
                break
            except ConnectionResetError:
                break
            if not chunk:
                break
            out += chunk
        return out


def responses(raw: bytes) -> list[int]:
    """The status codes in a byte stream of answers."""
    return [int(code) for code in re.findall(rb"HTTP/1\.1 (\d{3}) ", raw)]


@pytest.fixture(scope="module")
def extender(tmp_path_factory: pytest.TempPathFactory):
    cluster = write(Path(tmp_path_factory.mktemp("hard")), "cluster.yaml", cluster_docs())
    with running_extender([cluster]) as (ext, url):
        yield ext, url


def test_600_simultaneous_connections_are_all_answered():
    """Backlog 5 reset or dropped most of 600 connections opened at once; all are served now."""
    with HTTPServer(("127.0.0.1", 0)) as srv:
        port = srv.address[1]
        socks = []
        for _ in range(600):
            s = socket.socket()
            s.setblocking(False)
            s.connect_ex(("127.0.0.1", port))
            socks.append(s)
        sel = selectors.DefaultSelector()
        got: dict[socket.socket, bytes] = {}
        for s in socks:
            sel.register(s, selectors.EVENT_WRITE)
            got[s] = b""
        open_ = set(socks)
        end = time.monotonic() + 60
        while open_ and time.monotonic() < end:
            for key, ev in sel.select(0.5):
                s = key.fileobj
                assert isinstance(s, socket.socket)
                try:
                    if ev & selectors.EVENT_WRITE:
                        s.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
                        sel.modify(s, selectors.EVENT_READ)
                        continue
                    chunk = s.recv(4096)
                except OSError:
                    chunk = b""
                got[s] += chunk
                if not chunk:
                    sel.unregister(s)
                    open_.discard(s)
        for s in socks:
            s.close()
        answered = sum(1 for v in got.values() if v.startswith(b"HTTP/1.1 200"))
        assert answered == 600


def test_conflicting_content_length_is_refused_and_nothing_is_smuggled(extender):
    ext, url = extender
    bind = json.dumps({"PodName": "pending-1", "PodNamespace": "default", "Node": "n5"}).encode()
    smuggled = b"POST /bind HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n%s" % (len(bind), bind)
    body = b"{}"
    for headers in (
        b"Content-Length: %d\r\nContent-Length: %d\r\n" % (len(body), len(body) + len(smuggled)),
        b"Content-Length: %d, %d\r\n" % (len(body), len(body) + len(smuggled)),
        b"Content-Length: %d\r\nTransfer-Encoding: chunked\r\n" % len(body),
    ):
        raw = exchange(url, b"POST /filter HTTP/1.1\r\nHost: x\r\n" + headers + b"\r\n" + body + smuggled)
        assert responses(raw) == [400], raw
        assert raw.endswith(b"\n") and raw.split(b"\r\n\r\n", 1)[1].count(b"\n") == 1
    assert ext.cluster.bindings == {}  # the /bind never ran
    assert not any(p.node_name for p in ext.cluster.pods.values() if p.name == "pending-1")


@pytest.mark.parametrize("method", ["DELETE", "PUT", "PATCH", "OPTIONS", "TRACE", "BREW"])
def test_other_methods_get_a_one_line_405(extender, method):
    _, url = extender
    for path, allow in (("/filter", "POST"), ("/healthz", "GET, HEAD"), ("/metrics", "GET, HEAD")):
        raw = exchange(url, f"{method} {path} HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n".encode())
        head, _, body = raw.partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 405 Method Not Allowed"), raw
        assert f"\r\nallow: {allow}\r\n".encode() in head + b"\r\n"
        assert body == f"{path}: method {method} not allowed; use {allow}\n".encode()
    assert http(f"{url}/filter")[:1] == (405,)


def test_body_over_the_limit_is_413_before_it_is_read(tmp_path):
    cluster = write(tmp_path, "cluster.yaml", cluster_docs())
    with running_extender([cluster], max_body=1000) as (_, url):
        # announced: answered at once although the 10 GB never come
        t0 = time.monotonic()
        raw = exchange(url, b"POST /filter HTTP/1.1\r\nHost: x\r\nContent-Length: 10000000000\r\n\r\n{")
        assert responses(raw) == [413]
        assert raw.endswith(b"/filter: body of 10000000000 bytes exceeds the 1000-byte limit\n")
        assert time.monotonic() - t0 < 4
        # chunked: counted as it arrives
        chunk = b"x" * 600
        data = b"%x\r\n%s\r\n" % (len(chunk), chunk)
        raw = exchange(url, b"POST /filter HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n" + data * 3 + b"0\r\n\r\n")
        assert responses(raw) == [413]
        assert raw.endswith(b"/filter: body exceeds the 1000-byte limit\n")
        # a chunked body within the limit is served
        doc = json.dumps({"Pod": {"metadata": {"name": "p"}}, "NodeNames": ["n5"]}).encode()
        raw = exchange(url, b"POST /filter HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
                       + b"%x\r\n%s\r\n0\r\n\r\n" % (len(doc), doc))
        assert responses(raw) == [200] and b'"NodeNames":["n5"]' in raw


def test_requests_in_flight_are_capped():
    """With max_in_flight=1 a second POST waits for the first, then gets 503 past its deadline."""
    entered = threading.Event()
    release = threading.Event()
    running = []

    def slow(body: bytes) -> Response:
        running.append(1)
        entered.set()
        release.wait(10)
        peak = len(running)
        running.pop()
        return Response.text(f"peak {peak}")

    limits = Limits(max_in_flight=1, body_timeout=0.5)
    with HTTPServer(("127.0.0.1", 0), {"/slow": slow}, limits=limits) as srv:
        first: list[tuple[int, str, bytes]] = []
        t = threading.Thread(target=lambda: first.append(http(f"{srv.url}/slow", b"{}", "POST")))
        t.start()
        assert entered.wait(10)
        status, _, body = http(f"{srv.url}/slow", b"{}", "POST")
        assert (status, body) == (503, b"/slow: 1 requests in flight; try again\n")
        assert http(f"{srv.url}/healthz")[0] == 200  # probes are not POSTs: never queued
        release.set()
        t.join(10)
        assert first[0][0] == 200 and first[0][2] == b"peak 1\n"
        assert http(f"{srv.url}/slow", b"{}", "POST")[0] == 200


def test_slow_and_silent_clients_are_dropped_and_others_served():
    limits = Limits(header_timeout=0.5, body_timeout=0.5, idle_timeout=0.8)
    with HTTPServer(("127.0.0.1", 0), {"/echo": lambda b: Response(200, b)}, limits=limits) as srv:
        url = srv.url
        held = [socket.create_connection(srv.address) for _ in range(20)]  # silent
        for s in held[:10]:
            s.sendall(b"POST /echo HTTP/1.1\r\nHost:")  # half a request
        assert http(f"{url}/healthz")[0] == 200  # served meanwhile
        t0 = time.monotonic()
        for s in held:
            s.settimeout(5)
            data = s.recv(4096)
            # a started request gets 408, a silent connection is closed without a word
            assert data.startswith(b"HTTP/1.1 408") or data == b""
            s.close()
        assert time.monotonic() - t0 < 3
        # a slow body: the headers arrive, the body does not
        raw = exchange(url, b"POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n0123456789")
        assert responses(raw) == [408]
        assert raw.endswith(b"/echo: body not received in time\n")
        # bytes that are no HTTP at all: a protocol error, or dropped at the header deadline
        assert responses(exchange(url, b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03\r\n\r\n")) == [400]
        t0 = time.monotonic()
        assert responses(exchange(url, b"\x00" * 100)) == [400]
        assert responses(exchange(url, b"x" * 100)) == [408]  # no line end: the header deadline ends it
        assert time.monotonic() - t0 < 3
        # an idle keep-alive connection is closed after idle_timeout
        c = HTTPConnection(*srv.address, timeout=5)
        c.request("GET", "/healthz")
        assert c.getresponse().read() == b"ok\n"
        sock = c.sock
        assert sock is not None
        t0 = time.monotonic()
        assert sock.recv(10) == b""
        assert 0.5 < time.monotonic() - t0 < 3
        c.close()


def test_keep_alive_pipelining_and_expect_continue(extender):
    _, url = extender
    doc = json.dumps({"Pod": web_pod(), "NodeNames": ["n1", "n5"]}).encode()
    one = b"POST /filter HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n%s" % (len(doc), doc)
    raw = exchange(url, one + one + b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    assert responses(raw) == [200] * 3
    assert raw.count(b'"NodeNames":["n5"]') == 2
    host, port = url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=5) as s:
        s.sendall(b"POST /filter HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: %d\r\n\r\n" % len(doc))
        assert s.recv(4096).startswith(b"HTTP/1.1 100 ")
        s.sendall(doc)
        assert s.recv(65536).startswith(b"HTTP/1.1 200 OK")
    c = HTTPConnection(host, int(port), timeout=10)
    for _ in range(3):  # one connection, three requests
        c.request("POST", "/filter", doc)
        r = c.getresponse()
        assert r.status == 200 and json.loads(r.read())["NodeNames"] == ["n5"]
    c.close()
    assert post(f"{url}/filter", {"Pod": web_pod(), "NodeNames": ["n5"]})[0] == 200


def test_idle_connections_make_room_for_new_clients():
    """At the cap, a new client takes the place of the connection idle the longest (a silent one
    or a keep-alive one between requests), never of one in the middle of a request."""
    limits = Limits(max_connections=6)  # a header deadline of 10 s, idle keep-alive 120 s
    with HTTPServer(("127.0.0.1", 0), limits=limits) as srv:
        keep = HTTPConnection(*srv.address, timeout=5)  # idle the longest: between two requests
        keep.request("GET", "/healthz")
        assert keep.getresponse().read() == b"ok\n"
        silent = [socket.create_connection(srv.address) for _ in range(2)]
        busy = [socket.create_connection(srv.address) for _ in range(3)]
        for s in busy:
            s.sendall(b"GET /healthz HTTP/1.1\r\nHost:")  # half a request: not idle
        time.sleep(0.2)  # every connection accepted: the cap is reached
        clients = []
        for _ in range(3):  # three new clients that stay connected: each needs a place
            t0 = time.monotonic()
            c = HTTPConnection(*srv.address, timeout=5)
            c.request("GET", "/healthz")
            assert c.getresponse().read() == b"ok\n"
            assert time.monotonic() - t0 < 2.0  # before: until a deadline freed a place (10 s)
            clients.append(c)
        assert keep.sock is not None
        keep.sock.settimeout(2)
        assert keep.sock.recv(10) == b""  # closed to make room
        for s in silent:
            s.settimeout(2)
            assert s.recv(10) == b""
            s.close()
        for s in busy:  # untouched: their requests are answered once complete
            s.sendall(b" x\r\nConnection: close\r\n\r\n")
            s.settimeout(5)
            assert s.recv(4096).startswith(b"HTTP/1.1 200")
            s.close()
        keep.close()
        for c in clients:  # the newest idle ones were never the ones closed
            c.request("GET", "/healthz")
            assert c.getresponse().read() == b"ok\n"
            c.close()


def test_600_idle_connections_do_not_delay_a_probe():
    """The default cap (512) and header deadline (10 s): before, the probe waited 11 s."""
    with HTTPServer(("127.0.0.1", 0)) as srv:
        held = [socket.create_connection(srv.address) for _ in range(600)]
        try:
            t0 = time.monotonic()
            assert http(f"{srv.url}/healthz")[0] == 200
            assert time.monotonic() - t0 < 3.0  # about 0.15 s here
        finally:
            for s in held:
                s.close()


@pytest.mark.parametrize(
    "headers, why",
    [
        (b"".join(b"x-h%d: v\r\n" % i for i in range(10_000)), b"10001 request header fields; at most 100"),
        (b"x-big: " + b"v" * (70 << 10) + b"\r\n", b"over the 65536-byte limit"),
    ],
    ids=["10000-headers", "70-KiB-header"],
)
def test_too_many_or_too_large_headers_are_431(headers: bytes, why: bytes):
    with HTTPServer(("127.0.0.1", 0)) as srv:
        raw = exchange(srv.url, b"GET /healthz HTTP/1.1\r\nHost: x\r\n" + headers + b"\r\n")
        assert responses(raw) == [431]
        assert why in raw and raw.count(b"\n", raw.index(b"\r\n\r\n") + 4) == 1
        # a header block that arrives whole in one read is measured too (h11 bounds only one still arriving)
        many_small = b"".join(b"x-h%d: %s\r\n" % (i, b"v" * 900) for i in range(90))
        raw = exchange(srv.url, b"GET /healthz HTTP/1.1\r\nHost: x\r\n" + many_small + b"\r\n")
        assert responses(raw) == [431] and b"over the 65536-byte limit" in raw
        at_limit = b"".join(b"x-h%d: v\r\n" % i for i in range(98))  # with Host and Connection: 100
        raw = exchange(srv.url, b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n" + at_limit + b"\r\n")
        assert responses(raw) == [200]

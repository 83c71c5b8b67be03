"""Load test of kubesched's HTTP layer: `kubesched extender` as its own process, on loopback only.

Four phases, each bounded in requests and time, against the shipped example cluster (-f):

* connect: C connections (default 600) opened at once from one thread (non-blocking connects),
  then one GET /healthz on each; how many were answered, and how many were refused or reset (the
  listen backlog's test);
* probes, throughput: K keep-alive clients (default 8) send R requests each: GET /healthz (the
  HTTP layer alone), then small POST /filter requests (NodeNames of four nodes, the extender's
  work too); requests/s, p50 and p99 latency;
* hold: S clients (default 64) each open a connection and send half a request line, then stay
  silent; whether a fresh /healthz is still answered meanwhile, and how long the server keeps the
  silent connections;
* big bodies: B clients (default 4) at once send a /filter body of N node names (default 4
  million names, ~46 MB); the status codes, and the server's peak memory (VmHWM from /proc).

    python bench/http_load.py [--connect 600] [--clients 8] [--requests 500] [--big 4]
                              [--big-names 4000000] [--modes http,https,mtls] [--json out.json]
                              [-- EXTRA EXTENDER ARGS]

`--modes` runs the phases once per mode, each against a fresh extender, and ends with a table of
the modes side by side (requests/s, p99, the server's peak memory):

* http: plain HTTP (the default);
* https: HTTPS with a self-signed certificate made at run time (the `cryptography` package, a
  test dependency), which the clients verify (`--tls` is `--modes https`);
* mtls: HTTPS with `--client-ca-file`: each client also presents a certificate signed by a CA
  made at run time, as kube-scheduler does with `tlsConfig.certFile`.

Run from the repository root. Everything is on 127.0.0.1; every phase is bounded in requests and
time. A benchmark measures; nothing asserts.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import platform
import re
import signal
import socket
import ssl
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "kubesched" / "examples" / "cluster.yaml"
POD = {"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}]}}


def vm_kib(pid: int, field: str) -> int:
    """A VmRSS/VmHWM line of /proc/PID/status in KiB (0 where /proc is not there)."""
    try:
        text = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return 0
    m = re.search(rf"^{field}:\s+(\d+) kB", text, re.M)
    return int(m.group(1)) if m else 0


class Target:
    def __init__(self, host: str, port: int, ctx: ssl.SSLContext | None) -> None:
        self.host, self.port, self.ctx = host, port, ctx

    def conn(self, timeout: float = 30.0) -> http.client.HTTPConnection:
        if self.ctx is not None:
            return http.client.HTTPSConnection(self.host, self.port, timeout=timeout, context=self.ctx)
        return http.client.HTTPConnection(self.host, self.port, timeout=timeout)

    def raw(self, timeout: float) -> socket.socket:
        s = socket.create_connection((self.host, self.port), timeout=timeout)
        return self.ctx.wrap_socket(s, server_hostname=self.host) if self.ctx is not None else s


def node_names(n: int) -> list[str]:
    """The first four names of the example cluster are real; the rest are made up."""
    import yaml

    names = [d["metadata"]["name"] for d in yaml.safe_load_all(EXAMPLE.read_text()) if d and d.get("kind") == "Node"]
    return names[:n]


def phase_connect(t: Target, clients: int, timeout: float = 30.0) -> dict[str, object]:
    """C connections opened from one thread as fast as the kernel takes them, then one GET each."""
    import selectors

    sel = selectors.DefaultSelector()
    outcomes: dict[str, int] = {}
    socks: list[socket.socket] = []
    t0 = time.perf_counter()
    for _ in range(clients):
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.setblocking(False)
        s.connect_ex((t.host, t.port))
        socks.append(s)
    request = b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
    pending: dict[socket.socket, bytes] = {}
    if t.ctx is not None:
        # TLS: each handshake in turn (blocking), its request sent at once: a connection that
        # waited for all the others' handshakes before sending would meet the server's header
        # deadline, which is not what this phase measures
        for s in socks:
            try:
                s.setblocking(True)
                s.settimeout(timeout)
                tls = t.ctx.wrap_socket(s, server_hostname=t.host)
                tls.sendall(request)
            except OSError as e:
                key = "reset" if isinstance(e, ConnectionResetError) else type(e).__name__
                outcomes[key] = outcomes.get(key, 0) + 1
                continue
            tls.setblocking(False)
            sel.register(tls, selectors.EVENT_READ)
            pending[tls] = b""
    else:
        for s in socks:
            sel.register(s, selectors.EVENT_WRITE)
            pending[s] = b""

    def done(s: socket.socket, outcome: str) -> None:
        outcomes[outcome] = outcomes.get(outcome, 0) + 1
        sel.unregister(s)
        pending.pop(s)
        s.close()

    end = time.perf_counter() + timeout
    while pending and time.perf_counter() < end:
        for key, ev in sel.select(timeout=0.5):
            s = key.fileobj
            assert isinstance(s, socket.socket)
            try:
                if ev & selectors.EVENT_WRITE:
                    s.sendall(request)
                    sel.modify(s, selectors.EVENT_READ)
                    continue
                chunk = s.recv(4096)
            except ssl.SSLWantReadError:
                continue
            except ConnectionRefusedError:
                done(s, "refused")
                continue
            except ConnectionResetError:
                done(s, "reset")
                continue
            except OSError as e:
                done(s, type(e).__name__)
                continue
            if chunk:
                pending[s] += chunk
                continue
            answer = pending[s]
            done(s, "ok" if answer.startswith(b"HTTP/1.1 200") else ("no answer" if not answer else "other"))
    for s in list(pending):
        done(s, "timeout")
    return {"clients": clients, "outcomes": outcomes, "seconds": round(time.perf_counter() - t0, 3)}


def phase_probe_throughput(t: Target, clients: int, requests: int) -> dict[str, object]:
    """The HTTP layer alone: keep-alive GET /healthz."""
    return _throughput(t, clients, requests, "GET", "/healthz", None)


def phase_throughput(t: Target, clients: int, requests: int) -> dict[str, object]:
    """The extender's work too: keep-alive POST /filter of four node names."""
    body = json.dumps({"Pod": POD, "NodeNames": node_names(4)}).encode()
    return _throughput(t, clients, requests, "POST", "/filter", body)


def _throughput(t: Target, clients: int, requests: int, method: str, path: str, body: bytes | None) -> dict[str, object]:
    lat: list[list[float]] = [[] for _ in range(clients)]
    errors = [0] * clients

    def one(i: int) -> None:
        c = t.conn()
        for _ in range(requests):
            t0 = time.perf_counter()
            try:
                c.request(method, path, body, {"Content-Type": "application/json"} if body else {})
                r = c.getresponse()
                r.read()
                if r.status != 200:
                    errors[i] += 1
            except (OSError, http.client.HTTPException):
                errors[i] += 1
                c.close()
                c = t.conn()
            lat[i].append(time.perf_counter() - t0)
        c.close()

    threads = [threading.Thread(target=one, args=(i,)) for i in range(clients)]
    t0 = time.perf_counter()
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    wall = time.perf_counter() - t0
    all_lat = np.array([x for xs in lat for x in xs]) * 1000
    return {
        "clients": clients,
        "requests": int(all_lat.size),
        "errors": sum(errors),
        "requests_per_s": round(all_lat.size / wall, 1),
        "p50_ms": round(float(np.percentile(all_lat, 50)), 2),
        "p99_ms": round(float(np.percentile(all_lat, 99)), 2),
    }


def phase_hold(t: Target, clients: int, watch: float) -> dict[str, object]:
    """Silent half-requests: is the server still answering, and when does it drop them?"""
    socks: list[socket.socket] = []
    for _ in range(clients):
        try:
            s = t.raw(timeout=watch + 5)
            s.sendall(b"POST /filter HTTP/1.1\r\nHost: x\r\n")  # and nothing more
            socks.append(s)
        except OSError:
            break
    t0 = time.perf_counter()
    try:
        c = t.conn(timeout=10)
        c.request("GET", "/healthz")
        r = c.getresponse()
        r.read()
        fresh = f"{r.status} in {1000 * (time.perf_counter() - t0):.0f} ms"
        c.close()
    except (OSError, http.client.HTTPException) as e:
        fresh = f"{type(e).__name__} after {1000 * (time.perf_counter() - t0):.0f} ms"
    dropped = 0
    deadline = t0 + watch
    for s in socks:
        s.settimeout(max(0.01, deadline - time.perf_counter()))
        try:
            s.recv(4096)  # an answer (408) or EOF: the server let go
            dropped += 1
        except TimeoutError:
            pass
        except OSError:
            dropped += 1
    for s in socks:
        s.close()
    return {
        "silent_clients": len(socks),
        "fresh_healthz": fresh,
        f"dropped_within_{watch:g}s": dropped,
    }


def phase_big(t: Target, clients: int, names: int, pid: int) -> dict[str, object]:
    body = json.dumps({"Pod": POD, "NodeNames": [f"n{i}" for i in range(names)]}).encode()
    statuses: list[str] = []
    lock = threading.Lock()

    def one() -> None:
        """Headers first; a server that refuses the body answers before it is sent (as Go's client
        sees it too: it reads an early answer instead of failing on the closed connection)."""
        try:
            s = t.raw(timeout=300)
            s.sendall(b"POST /filter HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                      b"Content-Length: %d\r\nConnection: close\r\n\r\n" % len(body))
            s.settimeout(0.3)
            try:
                answer = s.recv(65536)
            except TimeoutError:
                answer = b""
            if not answer:
                s.settimeout(300)
                s.sendall(body)
                while chunk := s.recv(65536):
                    answer += chunk
            s.close()
            head, _, text = answer.partition(b"\r\n\r\n")
            status = head.split(b" ", 2)[1].decode() if head.startswith(b"HTTP/1.1 ") else "no answer"
            out = status + (f" {text[:120].decode(errors='replace').strip()}" if status != "200" else "")
        except OSError as e:
            out = type(e).__name__
        with lock:
            statuses.append(out)

    before = vm_kib(pid, "VmHWM")
    threads = [threading.Thread(target=one) for _ in range(clients)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    return {
        "clients": clients,
        "body_mb": round(len(body) / 1e6, 1),
        "statuses": sorted(statuses),
        "peak_mib_before": round(before / 1024),
        "peak_mib_after": round(vm_kib(pid, "VmHWM") / 1024),
    }


def _pem(d: Path, stem: str, cert: object, key: object) -> tuple[Path, Path]:
    from cryptography.hazmat.primitives import serialization

    crt, pem = d / f"{stem}.crt", d / f"{stem}.key"
    crt.write_bytes(cert.public_bytes(serialization.Encoding.PEM))  # type: ignore[attr-defined]
    pem.write_bytes(
        key.private_bytes(  # type: ignore[attr-defined]
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
    )
    return crt, pem


def _certificate(subject: str, issuer: tuple[str, object] | None, *, ca: bool, server: bool = False):  # noqa: ANN202
    """(certificate, key): self-signed when ``issuer`` is None, else signed by (its name, its key)."""
    import datetime
    import ipaddress

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, subject)])
    issuer_name = name if issuer is None else x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, issuer[0])])
    now = datetime.datetime.now(datetime.UTC)
    b = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(issuer_name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(hours=1))
        .add_extension(x509.BasicConstraints(ca=ca, path_length=None), True)
    )
    if server:
        b = b.add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), False)
    elif not ca:
        b = b.add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.CLIENT_AUTH]), False)
    return b.sign(key if issuer is None else issuer[1], hashes.SHA256()), key  # type: ignore[arg-type]


def make_cert(d: Path) -> tuple[Path, Path]:
    """A self-signed certificate for 127.0.0.1 (the bench's client trusts exactly it)."""
    return _pem(d, "tls", *_certificate("kubesched-bench", None, ca=True, server=True))


def make_client_cert(d: Path) -> tuple[Path, Path, Path]:
    """A client CA (for --client-ca-file) and a client certificate and key it signed."""
    ca, ca_key = _certificate("kubesched-bench-client-ca", None, ca=True)
    ca_crt, _ = _pem(d, "client-ca", ca, ca_key)
    crt, key = _pem(d, "client", *_certificate("kube-scheduler", ("kubesched-bench-client-ca", ca_key), ca=False))
    return ca_crt, crt, key


MODES = ("http", "https", "mtls")


def run_mode(mode: str, a: argparse.Namespace, tmp: Path) -> dict[str, object]:
    """Start a fresh extender for ``mode``, run the phases against it, stop it."""
    cmd = [sys.executable, "-m", "kubesched.cli", "extender", "-f", str(EXAMPLE), "--listen", "127.0.0.1:0", "--seed", "1"]
    ctx = None
    if mode in ("https", "mtls"):
        crt, key = make_cert(tmp)
        cmd += ["--tls-cert-file", str(crt), "--tls-private-key-file", str(key)]
        ctx = ssl.create_default_context(cafile=str(crt))
    if mode == "mtls":
        assert ctx is not None
        ca, client_crt, client_key = make_client_cert(tmp)
        cmd += ["--client-ca-file", str(ca)]
        ctx.load_cert_chain(client_crt, client_key)
    cmd += a.extra
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.Popen(cmd, stderr=subprocess.PIPE, text=True, cwd=ROOT, env=env)
    report: dict[str, object] = {"mode": mode}
    try:
        assert proc.stderr is not None
        line = proc.stderr.readline()
        m = re.search(r"on (https?)://([\d.]+):(\d+)", line)
        if not m:
            raise RuntimeError(f"the extender did not start: {line}{proc.stderr.read()}")
        threading.Thread(target=proc.stderr.read, daemon=True).start()  # drain its log
        report["scheme"] = m.group(1)
        t = Target(m.group(2), int(m.group(3)), ctx)
        report["rss_mib_at_start"] = round(vm_kib(proc.pid, "VmRSS") / 1024)
        phases = a.phases.split(",")
        for name, run in (
            ("connect", lambda: phase_connect(t, a.connect)),
            ("probes", lambda: phase_probe_throughput(t, a.clients, a.requests)),
            ("throughput", lambda: phase_throughput(t, a.clients, a.requests)),
            ("hold", lambda: phase_hold(t, a.hold, a.hold_watch)),
            ("big", lambda: phase_big(t, a.big, a.big_names, proc.pid)),
        ):
            if name in phases:
                report[name] = run()
                print(f"{mode:5} {name:10}", report[name], flush=True)
            if name == "throughput":  # the peak of the small requests, before any big body
                report["peak_mib_small"] = round(vm_kib(proc.pid, "VmHWM") / 1024)
        report["peak_mib"] = round(vm_kib(proc.pid, "VmHWM") / 1024)
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    return report


def comparison(reports: list[dict[str, Any]]) -> str:
    """The modes side by side: requests/s and p99 of the keep-alive phases, and peak memory."""
    rows = [("", *(r["mode"] for r in reports))]
    for phase, label in (("probes", "GET /healthz"), ("throughput", "POST /filter")):
        if all(phase in r for r in reports):
            rows.append((f"{label}: requests/s", *(f"{r[phase]['requests_per_s']:.0f}" for r in reports)))
            rows.append((f"{label}: p50 / p99 ms", *(f"{r[phase]['p50_ms']} / {r[phase]['p99_ms']}" for r in reports)))
            rows.append((f"{label}: errors", *(str(r[phase]["errors"]) for r in reports)))
    if all("connect" in r for r in reports):
        rows.append(("connect: answered", *(f"{r['connect']['outcomes'].get('ok', 0)} of {r['connect']['clients']}" for r in reports)))
    if all("peak_mib_small" in r for r in reports):
        rows.append(("server MiB: RSS at start → peak after small requests", *(f"{r['rss_mib_at_start']} → {r['peak_mib_small']}" for r in reports)))
    if all("big" in r for r in reports):
        rows.append(("big bodies: peak MiB", *(str(r["big"]["peak_mib_after"]) for r in reports)))
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip() for row in rows)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--connect", type=int, default=600)
    ap.add_argument("--clients", type=int, default=8)
    ap.add_argument("--requests", type=int, default=500)
    ap.add_argument("--hold", type=int, default=64)
    ap.add_argument("--hold-watch", type=float, default=15.0, help="seconds to watch the silent clients")
    ap.add_argument("--big", type=int, default=4)
    ap.add_argument("--big-names", type=int, default=4_000_000)
    ap.add_argument("--modes", default="http", help=f"comma-separated, in order: {', '.join(MODES)} (default http)")
    ap.add_argument("--tls", action="store_true", help="the same as --modes https")
    ap.add_argument("--phases", default="connect,probes,throughput,hold,big")
    ap.add_argument("--json", metavar="FILE")
    ap.add_argument("extra", nargs="*", help="more `kubesched extender` arguments (after --)")
    a = ap.parse_args()
    modes = ["https"] if a.tls else [m.strip() for m in a.modes.split(",") if m.strip()]
    bad = [m for m in modes if m not in MODES]
    if bad or not modes:
        ap.error(f"--modes: expected some of {', '.join(MODES)}, got {a.modes!r}")
    for bounded in ("connect", "clients", "requests", "hold", "big", "big_names"):
        if not 0 <= getattr(a, bounded) <= 10_000_000:
            ap.error(f"--{bounded.replace('_', '-')}: expected 0 to 10,000,000")

    reports = []
    with tempfile.TemporaryDirectory(prefix="kubesched-http-load-") as d:
        for mode in modes:
            (Path(d) / mode).mkdir()
            try:
                reports.append(run_mode(mode, a, Path(d) / mode))
            except RuntimeError as e:
                sys.stderr.write(f"{e}\n")
                return 1
    if len(reports) > 1:
        print(comparison(reports))
    if a.json:
        report = {"machine": {"nproc": os.cpu_count(), "python": platform.python_version()}, "modes": reports}
        Path(a.json).write_text(json.dumps(report, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""HTTPS, client certificates and bearer tokens, end to end with real TLS clients on loopback:
Python's ssl (urllib, http.client), and curl and openssl where installed."""

from __future__ import annotations

import json
import os
import shutil
import socket
import ssl
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from extender_testlib import cluster_docs, web_pod, write
from tls_testlib import CA

from kubesched.app import build_config, build_registry
from kubesched.cli import main
from kubesched.extender.service import Extender
from kubesched.load import load_cluster
from kubesched.server import security
from kubesched.server.metrics import SchedulerMetrics
from kubesched.server.security import Access, ServingTLS, TokenFile

FILTER = json.dumps({"Pod": web_pod(), "NodeNames": ["n1", "n5"]}).encode()


def client_ctx(ca: CA, cert=None) -> ssl.SSLContext:
    ctx = ssl.create_default_context(cafile=str(ca.path))
    if cert is not None:
        ctx.load_cert_chain(str(cert.cert), str(cert.key))
    return ctx


def fetch(url: str, ctx: ssl.SSLContext, body: bytes | None = None, token: str | None = None) -> tuple[int, bytes]:
    req = urllib.request.Request(url, data=body, method="POST" if body is not None else "GET")
    if token is not None:
        req.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(req, timeout=30, context=ctx) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        with e:
            return e.code, e.read()


def peer_cert(url: str, ctx: ssl.SSLContext) -> bytes:
    host, port = url.removeprefix("https://").split(":")
    with socket.create_connection((host, int(port)), timeout=10) as raw, ctx.wrap_socket(raw, server_hostname=host) as s:
        der = s.getpeercert(binary_form=True)
        assert der is not None
        return der


@pytest.fixture
def pki(tmp_path: Path):
    ca = CA(tmp_path, "server-ca")
    clients = CA(tmp_path, "client-ca")
    other = CA(tmp_path, "other-ca")
    server = ca.issue("kubesched", file_stem="tls")
    token = tmp_path / "tokens"
    token.write_text("# scrapers\ns3cr3t-token\n")
    return {
        "dir": tmp_path,
        "ca": ca,
        "server": server,
        "client": clients.issue("kube-scheduler", server=False),
        "stranger": other.issue("someone", server=False),
        "clients": clients,
        "token": token,
    }


def serve(pki, *, client_ca: bool = True, tokens: bool = True):
    cluster = write(pki["dir"], "cluster.yaml", cluster_docs())
    registry = build_registry(None)
    ext = Extender(build_config(None, registry), registry, load_cluster([cluster]), seed=1, metrics=SchedulerMetrics(seed=1))
    tls = ServingTLS(str(pki["server"].cert), str(pki["server"].key), str(pki["clients"].path) if client_ca else None)
    access = Access(client_certs=client_ca, metrics_tokens=TokenFile(str(pki["token"])) if tokens else None)
    return ext.server(("127.0.0.1", 0), "/scheduler", tls=tls, access=access).start()


def test_verbs_need_a_client_certificate_probes_stay_open(pki):
    srv = serve(pki)
    try:
        url = srv.url
        assert url.startswith("https://127.0.0.1:")
        anon = client_ctx(pki["ca"])
        known = client_ctx(pki["ca"], pki["client"])
        status, body = fetch(f"{url}/scheduler/filter", known, FILTER)
        assert status == 200 and json.loads(body)["NodeNames"] == ["n5"]
        assert fetch(f"{url}/filter", anon, FILTER) == (
            401,
            b"/filter: unauthorized: send a client certificate signed by --client-ca-file\n",
        )
        for probe in ("/healthz", "/livez", "/readyz"):
            assert fetch(f"{url}{probe}", anon) == (200, b"ok\n")
        # /metrics: a client certificate or a bearer token
        assert fetch(f"{url}/metrics", anon)[0] == 401
        assert fetch(f"{url}/metrics", anon, token="wrong")[0] == 401
        status, body = fetch(f"{url}/metrics", anon, token="s3cr3t-token")
        assert status == 200 and b"kubesched_extender_requests_total" in body
        assert fetch(f"{url}/metrics", known)[0] == 200
        # a certificate from a CA the server does not trust fails the handshake
        with pytest.raises((ssl.SSLError, urllib.error.URLError, ConnectionResetError)):
            fetch(f"{url}/filter", client_ctx(pki["ca"], pki["stranger"]), FILTER)
        # a client that does not trust the server's CA refuses it
        with pytest.raises(urllib.error.URLError, match="CERTIFICATE_VERIFY_FAILED"):
            fetch(f"{url}/healthz", client_ctx(pki["clients"]))
        # plain HTTP at the TLS port: no answer, and the server keeps serving
        with socket.create_connection(srv.address, timeout=5) as s:
            s.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
            try:
                data = s.recv(100)
            except ConnectionResetError:
                data = b""
            assert not data.startswith(b"HTTP/1.1 200")
        assert fetch(f"{url}/healthz", anon) == (200, b"ok\n")
    finally:
        srv.shutdown()


def test_without_a_client_ca_verbs_are_open_and_metrics_take_the_token(pki):
    srv = serve(pki, client_ca=False)
    try:
        anon = client_ctx(pki["ca"])
        assert fetch(f"{srv.url}/filter", anon, FILTER)[0] == 200
        assert fetch(f"{srv.url}/metrics", anon) == (401, b"/metrics: unauthorized: send a bearer token of --metrics-token-file\n")
        assert fetch(f"{srv.url}/metrics", anon, token="s3cr3t-token")[0] == 200
    finally:
        srv.shutdown()


def test_certificate_and_token_files_are_reloaded_on_change(pki, monkeypatch):
    monkeypatch.setattr(security, "RELOAD_CHECK_SECONDS", 0.0)
    srv = serve(pki)
    try:
        anon = client_ctx(pki["ca"])
        assert peer_cert(srv.url, anon) == pki["server"].der
        renewed = pki["ca"].issue("kubesched-renewed", file_stem="renewed")
        # a Secret volume update: the files are replaced at once
        os.replace(renewed.cert, pki["server"].cert)
        os.replace(renewed.key, pki["server"].key)
        assert peer_cert(srv.url, anon) == renewed.der
        # a half-written update does not load: the previous certificate stays
        pki["server"].cert.write_text("-----BEGIN CERTIFICATE-----\ntruncated")
        assert peer_cert(srv.url, anon) == renewed.der
        # the token file too
        pki["token"].write_text("rotated\n")
        time.sleep(0.01)
        assert fetch(f"{srv.url}/metrics", anon, token="s3cr3t-token")[0] == 401
        assert fetch(f"{srv.url}/metrics", anon, token="rotated")[0] == 200
    finally:
        srv.shutdown()


@pytest.mark.skipif(shutil.which("curl") is None, reason="curl is not installed")
def test_curl_with_client_certificate(pki):
    srv = serve(pki)
    try:
        base = ["curl", "-sS", "--cacert", str(pki["ca"].path), "-o", "-", "-w", "%{http_code}"]
        out = subprocess.run(
            [*base, "--cert", str(pki["client"].cert), "--key", str(pki["client"].key), "-H", "Content-Type: application/json",
             "--data-binary", FILTER.decode(), f"{srv.url}/scheduler/filter"],
            capture_output=True, text=True, timeout=60, check=True,
        ).stdout
        assert out.endswith("200") and '"NodeNames":["n5"]' in out
        out = subprocess.run([*base, "--data-binary", "{}", f"{srv.url}/filter"], capture_output=True, text=True, timeout=60).stdout
        assert out.endswith("401")
        out = subprocess.run([*base, "-H", "Authorization: Bearer s3cr3t-token", f"{srv.url}/metrics"],
                             capture_output=True, text=True, timeout=60).stdout
        assert out.endswith("200") and "scheduler_pending_pods" in out
    finally:
        srv.shutdown()


@pytest.mark.skipif(shutil.which("openssl") is None, reason="openssl is not installed")
def test_openssl_sees_tls12_or_later_and_the_served_chain(pki):
    srv = serve(pki)
    try:
        host, port = srv.address
        done = subprocess.run(
            ["openssl", "s_client", "-connect", f"{host}:{port}", "-CAfile", str(pki["ca"].path), "-tls1_1"],
            input="", capture_output=True, text=True, timeout=60,
        )
        assert done.returncode != 0  # TLS 1.1 is refused
        done = subprocess.run(
            ["openssl", "s_client", "-connect", f"{host}:{port}", "-CAfile", str(pki["ca"].path), "-verify_return_error"],
            input="", capture_output=True, text=True, timeout=60,
        )
        assert "Verify return code: 0 (ok)" in done.stdout
        assert "CN=kubesched" in done.stdout or "CN = kubesched" in done.stdout
    finally:
        srv.shutdown()


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["--tls-cert-file", "{cert}"], "--tls-private-key-file: --tls-cert-file and --tls-private-key-file go together"),
        (["--client-ca-file", "{ca}"], "--client-ca-file: client certificates need TLS"),
        (["--metrics-token-file", "{token}"], "--metrics-token-file: a bearer token needs TLS"),
        (["--tls-cert-file", "{ca}", "--tls-private-key-file", "{key}"], "--tls-cert-file: cannot load the certificate and key"),
        (["--tls-cert-file", "{cert}", "--tls-private-key-file", "/nonexistent.key"], '--tls-private-key-file: cannot read "/nonexistent.key"'),
        (["--tls-cert-file", "{cert}", "--tls-private-key-file", "{key}", "--client-ca-file", "{key}"],
         "--client-ca-file: cannot load the CA certificates"),
        (["--tls-cert-file", "{cert}", "--tls-private-key-file", "{key}", "--metrics-token-file", "{empty}"], "--metrics-token-file:"),
        (["--max-request-bytes", "0"], "--max-request-bytes: must be a positive integer, got 0"),
    ],
)
def test_bad_tls_flags_exit_2_with_one_line(pki, capsys, argv, expected):
    (pki["dir"] / "empty").write_text("\n# nothing\n")
    values = {"cert": pki["server"].cert, "key": pki["server"].key, "ca": pki["clients"].path, "token": pki["token"],
              "empty": pki["dir"] / "empty"}
    code = main(["extender", "--listen", "127.0.0.1:0", *[a.format(**values) for a in argv]])
    err = capsys.readouterr().err
    assert code == 2
    assert err.startswith(f"kubesched: error: {expected}") and err.count("\n") == 1, err

"""The Prometheus bearer token from a file (a mounted Secret): sent on every query, re-read when the
file changes, never shown by ``config view`` or a repr; ``token`` and ``tokenFile`` are exclusive."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
import yaml

from kubesched.cli import main
from kubesched.errors import InputError
from kubesched.plugins.loadaware.args import parse_target_load_packing
from kubesched.plugins.loadaware.prometheus import PrometheusSource

EMPTY = json.dumps({"status": "success", "data": {"resultType": "vector", "result": []}}).encode()


@pytest.fixture
def recorder():
    """A loopback HTTP endpoint answering the query API with no series; it records Authorization."""
    seen: list[str | None] = []

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 - http.server's name
            seen.append(self.headers.get("Authorization"))
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(EMPTY)))
            self.end_headers()
            self.wfile.write(EMPTY)

        def log_message(self, *args: object) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}", seen
    finally:
        httpd.shutdown()
        httpd.server_close()


def provider(url: str, **mp: object):
    return parse_target_load_packing({"metricProvider": {"type": "Prometheus", "address": url, **mp}}).provider


def test_token_file_is_sent_and_reread(recorder, tmp_path: Path):
    url, seen = recorder
    token = tmp_path / "token"
    token.write_text("first-token\n")
    src = PrometheusSource(provider(url, tokenFile=str(token)))
    src.query("up")
    token.write_text("rotated-token\n")
    src.query("up")
    assert seen == ["Bearer first-token", "Bearer rotated-token"]


def test_token_is_not_in_reprs(recorder):
    url, _ = recorder
    p = provider(url, token="s3cr3t")
    assert p.token == "s3cr3t" and "s3cr3t" not in repr(p)


def test_token_and_token_file_are_exclusive_and_the_file_must_be_readable(tmp_path: Path):
    with pytest.raises(InputError, match="metricProvider.tokenFile: set only one of token and tokenFile"):
        provider("http://127.0.0.1:9", token="x", tokenFile="/t")
    with pytest.raises(InputError, match='metricProvider.tokenFile: cannot read "/nonexistent/token"'):
        PrometheusSource(provider("http://127.0.0.1:9", tokenFile="/nonexistent/token"))


def test_config_view_redacts_the_token(tmp_path: Path, capsys):
    token_file = tmp_path / "token"  # config view builds the plugins as schedule does: the file must be readable
    token_file.write_text("file-s3cr3t")
    cfg = tmp_path / "sched.yaml"
    cfg.write_text(yaml.safe_dump({
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "profiles": [{
            "schedulerName": "a",
            "plugins": {"score": {"enabled": [{"name": "TargetLoadPacking"}]}},
            "pluginConfig": [{"name": "TargetLoadPacking", "args": {
                "metricProvider": {"type": "Prometheus", "address": "http://127.0.0.1:9", "token": "s3cr3t-value"}}}],
        }, {
            "schedulerName": "b",
            "plugins": {"score": {"enabled": [{"name": "TargetLoadPacking"}]}},
            "pluginConfig": [{"name": "TargetLoadPacking", "args": {
                "metricProvider": {"type": "Prometheus", "address": "http://127.0.0.1:9", "tokenFile": str(token_file)}}}],
        }],
    }))
    for output in ("yaml", "json"):
        assert main(["config", "view", "--config", str(cfg), "-o", output]) == 0
        out = capsys.readouterr().out
        assert "s3cr3t-value" not in out
        assert "<redacted>" in out and str(token_file) in out and "file-s3cr3t" not in out

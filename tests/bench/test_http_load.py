"""bench/http_load.py runs end to end in its three modes (a small load: the figures are the
benchmark's, never asserted): each mode's extender serves the scheme it should, every request is
answered 200 (in mtls the extender has --client-ca-file, so /filter answers only clients that
present the certificate the bench made), and the comparison table has a column per mode."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_http_https_and_mtls_in_one_run(tmp_path: Path) -> None:
    out = tmp_path / "load.json"
    proc = subprocess.run(
        [sys.executable, "bench/http_load.py", "--modes", "http,https,mtls", "--phases", "probes,throughput",
         "--clients", "2", "--requests", "10", "--json", str(out)],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    modes = json.loads(out.read_text())["modes"]
    assert [(m["mode"], m["scheme"]) for m in modes] == [("http", "http"), ("https", "https"), ("mtls", "https")]
    for m in modes:
        for phase in ("probes", "throughput"):
            assert m[phase]["requests"] == 20 and m[phase]["errors"] == 0, (m["mode"], phase, m[phase])
        assert m["peak_mib_small"] >= m["rss_mib_at_start"] > 0
    assert any(line.split() == ["http", "https", "mtls"] for line in proc.stdout.splitlines())
    assert "POST /filter: requests/s" in proc.stdout


def test_bad_mode_is_one_line(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "bench/http_load.py", "--modes", "http,quic"], cwd=ROOT, capture_output=True, text=True, timeout=60,
    )
    assert proc.returncode == 2
    assert "--modes: expected some of http, https, mtls, got 'http,quic'" in proc.stderr

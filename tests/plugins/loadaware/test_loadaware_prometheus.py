"""LoadAware against a real Prometheus (conftest.py): PromQL, node mapping, scores, cache, staleness,
and the fallback to requests when Prometheus is down. The down test stops Prometheus: keep it last.

A real Prometheus on loopback (session-scoped, scrape every 1 s) scrapes a node-exporter look-alike
whose values the tests set. A missing binary fails the tests: run scripts/install-test-deps.sh.
"""

from __future__ import annotations

import json
import logging
import shutil
import socket
import subprocess
import threading
import time
import urllib.parse
import urllib.request
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import numpy as np
import pytest
import yaml

from kubesched.cli import main
from kubesched.framework.handle import Handle
from kubesched.framework.utilization import UtilizationUnavailable
from kubesched.plugins.loadaware import LoadVariationRiskBalancing, TargetLoadPacking
from kubesched.plugins.loadaware.args import parse_target_load_packing
from kubesched.plugins.loadaware.prometheus import PrometheusSource
from kubesched.plugins.loadaware.targetloadpacking import tlp_scores
from kubesched.plugins.lowestload import LowestLoad
from kubesched.testing import build_snapshot, make_node, make_pod, run_score

NCPU = 2
MEM_TOTAL = 8 * 1024**3


class NodeExporter:
    """node_cpu_seconds_total (counters integrated from the set utilization) and node_memory_*."""

    def __init__(self, util: dict[str, tuple[float, float]]) -> None:
        self.util = dict(util)  # node -> (cpu ratio, memory ratio)
        self.lock = threading.Lock()
        self.last = time.monotonic()
        self.idle = {n: 1000.0 for n in util}
        self.busy = {n: 500.0 for n in util}

    def render(self) -> str:
        with self.lock:
            now = time.monotonic()
            dt, self.last = now - self.last, now
            lines = ["# TYPE node_cpu_seconds_total counter"]
            for node, (cpu, _) in self.util.items():
                self.idle[node] += (1.0 - cpu) * dt
                self.busy[node] += cpu * dt
                for c in range(NCPU):
                    labels = f'instance="{node}:9100",node="{node}",cpu="{c}"'
                    lines.append(f'node_cpu_seconds_total{{{labels},mode="idle"}} {self.idle[node]:.6f}')
                    lines.append(f'node_cpu_seconds_total{{{labels},mode="user"}} {self.busy[node]:.6f}')
            for name, value in (
                ("MemTotal", lambda m: MEM_TOTAL),
                ("MemAvailable", lambda m: MEM_TOTAL * (1 - m)),
            ):
                lines.append(f"# TYPE node_memory_{name}_bytes gauge")
                for node, (_, mem) in self.util.items():
                    lines.append(
                        f'node_memory_{name}_bytes{{instance="{node}:9100",node="{node}"}} {value(mem):.0f}'
                    )
            return "\n".join(lines) + "\n"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class PrometheusServer:
    def __init__(self, binary: str, config: Path, data: Path, log: Path) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = log
        self.cmd = [
            binary,
            f"--config.file={config}",
            f"--storage.tsdb.path={data}",
            f"--web.listen-address=127.0.0.1:{self.port}",
            "--log.level=warn",
        ]
        self.proc: subprocess.Popen | None = None

    def start(self) -> None:
        with open(self.log, "ab") as out:
            self.proc = subprocess.Popen(self.cmd, stdout=out, stderr=subprocess.STDOUT)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()

    def query(self, promql: str) -> list:
        url = f"{self.url}/api/v1/query?" + urllib.parse.urlencode({"query": promql})
        with urllib.request.urlopen(url, timeout=2) as r:
            return json.loads(r.read())["data"]["result"]

    def wait_for(self, promql: str, ok, timeout: float) -> None:
        """Until ``ok(result of promql)`` (bounded; the log tail on failure)."""
        deadline = time.monotonic() + timeout
        last: object = None
        while time.monotonic() < deadline:
            if self.proc is not None and self.proc.poll() is not None:
                break
            try:
                if ok(self.query(promql)):
                    return
            except OSError as e:
                last = e
            time.sleep(0.2)
        tail = self.log.read_text(errors="replace")[-2000:] if self.log.exists() else ""
        # say whether it waited out the time or the process ended first (its exit code then)
        how = f"exited with code {self.proc.returncode}" if self.proc is not None and self.proc.poll() is not None else f"within {timeout:.0f} s"
        pytest.fail(f"Prometheus had no data for {promql!r} ({how}; {last}); log:\n{tail}")


# Fast windows for tests: rate over 3 s, avg/stddev over 3 s at 1 s resolution.
FAST = {"window": "3s", "resolution": "1s", "rateWindow": "3s"}
SERVED = {"n0": (0.05, 0.30), "n1": (0.25, 0.50), "n2": (0.70, 0.20)}


@pytest.fixture(scope="session")
def prometheus(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[PrometheusServer, NodeExporter]]:
    binary = shutil.which("prometheus")
    if binary is None:
        pytest.fail(
            "the prometheus binary is not on PATH: run scripts/install-test-deps.sh "
            "(Debian package prometheus)"
        )
    exporter = NodeExporter(SERVED)

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 - http.server's name
            body = exporter.render().encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/plain; version=0.0.4")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    tmp = tmp_path_factory.mktemp("prometheus")
    config = tmp / "prometheus.yml"
    config.write_text(
        "global: {scrape_interval: 1s, scrape_timeout: 1s, evaluation_interval: 1s}\n"
        "scrape_configs:\n"
        "  - job_name: node\n"
        "    honor_labels: true\n"  # keep the exporter's instance labels (one per node)
        f"    static_configs: [{{targets: ['127.0.0.1:{httpd.server_address[1]}']}}]\n"
    )
    server = PrometheusServer(binary, config, tmp / "data", tmp / "prometheus.log")
    server.start()
    try:
        # 6 scrapes of every series: each step of the plugins' 3 s subquery then has a 3 s rate
        # over 3 samples (earlier rates are extrapolated from 2 and off by a lot)
        server.wait_for(
            'min(count_over_time(node_cpu_seconds_total{mode="idle"}[7s]))',
            lambda r: bool(r) and float(r[0]["value"][1]) >= 6,
            timeout=30,
        )
        yield server, exporter
    finally:
        server.stop()
        httpd.shutdown()
        httpd.server_close()


def provider_args(url: str, **extra) -> dict:
    return {"metricProvider": {"type": "Prometheus", "address": url}, "prometheus": {**FAST, **extra}}


def source(url: str, clock=None, **extra) -> PrometheusSource:
    provider = parse_target_load_packing(provider_args(url, **extra)).provider
    return PrometheusSource(provider, clock=clock) if clock else PrometheusSource(provider)


NODES = [make_node(f"n{i}", cpu="4", memory="8Gi") for i in range(4)]  # n3 has no metrics


@pytest.mark.parametrize("label", ["instance", "node"])
def test_source_reads_the_served_utilization(prometheus, label):
    server, _ = prometheus
    usage = source(server.url, nodeLabel=label).usage()
    assert sorted(usage) == ["n0", "n1", "n2"]  # instance "n0:9100" maps to node n0
    for node, (cpu, mem) in SERVED.items():
        u = usage[node]
        assert abs(u.cpu_avg - 100 * cpu) < 3, (node, u)
        assert abs(u.mem_avg - 100 * mem) < 0.5, (node, u)
        assert 0 <= u.cpu_std < 3 and 0 <= u.mem_std < 0.5, (node, u)  # constant load


def test_tlp_scores_as_trimaran_from_prometheus(prometheus):
    server, _ = prometheus
    snap = build_snapshot(NODES)
    pl = TargetLoadPacking(provider_args(server.url), Handle(snap))
    raw, _ = run_score(pl, make_pod("p", requests={"cpu": "200m"}), snap)
    # served CPU 5 / 25 / 70 % plus the pod's 300m of 4000m: 12.5 -> 59, 32.5 -> 89, 77.5 -> 15
    want = tlp_scores(np.array([12.5, 32.5, 77.5]), 40).tolist()
    assert want == [59, 89, 15]
    assert all(abs(r - w) <= 4 for r, w in zip(raw[:3], want, strict=True)), raw
    assert raw[1] > raw[0] > raw[2] and raw[3] == 0  # packing toward 40 %; no metrics -> min score


def test_lvrb_scores_as_trimaran_from_prometheus(prometheus):
    server, _ = prometheus
    snap = build_snapshot(NODES)
    pl = LoadVariationRiskBalancing(provider_args(server.url), Handle(snap))
    raw, _ = run_score(pl, make_pod("p", requests={"cpu": "400m", "memory": "1Gi"}), snap)
    # cpu mu = u + .1, mem mu = m + .125, sigma ~ 0: score = min over both of (1 - mu/2) * 100
    want = [round(min(100 - 50 * (c + 0.1), 100 - 50 * (m + 0.125))) for c, m in SERVED.values()]
    assert want == [79, 69, 60]
    assert all(abs(r - w) <= 2 for r, w in zip(raw[:3], want, strict=True)), raw
    assert raw[3] == 0


def test_schedule_cli_places_by_prometheus_load(prometheus, tmp_path, capsys):
    server, _ = prometheus
    cluster = tmp_path / "cluster.yaml"
    cluster.write_text(yaml.safe_dump_all([*NODES, make_pod("web", requests={"cpu": "200m"})]))
    cfg = tmp_path / "sched.yaml"
    cfg.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "kubescheduler.config.k8s.io/v1",
                "kind": "KubeSchedulerConfiguration",
                "profiles": [
                    {
                        "schedulerName": "default-scheduler",
                        "plugins": {"score": {"enabled": [{"name": "TargetLoadPacking", "weight": 10}]}},
                        "pluginConfig": [{"name": "TargetLoadPacking", "args": provider_args(server.url)}],
                    }
                ],
            }
        )
    )
    code = main(["schedule", "-f", str(cluster), "--config", str(cfg), "--seed", "1", "-o", "json"])
    out = capsys.readouterr()
    assert code == 0, out.err
    assert {p["pod"]: p["node"] for p in json.loads(out.out)["placements"]}["default/web"] == "n1"


def test_lowestload_measured_mode_from_prometheus(prometheus):
    server, _ = prometheus
    snap = build_snapshot(NODES)
    pl = LowestLoad({"mode": "Measured", **provider_args(server.url)}, Handle(snap))
    raw, _ = run_score(pl, make_pod("p", requests={"cpu": "200m"}), snap)
    # 100 - (cpu share + memory share) // 2 with measured use: n0 (10 + 30) -> 80, n1 (30 + 50) -> 60,
    # n2 (75 + 20) -> 53; n3 has no series: its requests (cpu 5, memory 0) -> 98
    assert all(abs(r - w) <= 2 for r, w in zip(raw[:3], [80, 60, 53], strict=True)), raw
    assert raw[3] == 98


def test_cache_serves_within_the_update_interval(prometheus):
    server, _ = prometheus
    now = [0.0]
    src = source(server.url, clock=lambda: now[0], updateIntervalSeconds=30)
    first = src.usage()
    now[0] = 29.0
    assert src.usage() is first  # no new query inside the interval
    now[0] = 30.0
    second = src.usage()
    assert second is not first and sorted(second) == sorted(first)


def test_prometheus_down_staleness_and_requests_fallback(prometheus, caplog):
    """Stops the session's Prometheus: must stay the last test of this module."""
    server, _ = prometheus
    now = [0.0]
    src = source(server.url, clock=lambda: now[0], updateIntervalSeconds=10, stalenessSeconds=60)
    cached = src.usage()
    server.stop()
    with caplog.at_level(logging.WARNING, logger="kubesched.loadaware"):
        now[0] = 30.0  # refresh fails; 30 s old data are within the staleness limit
        assert src.usage() is cached
        assert "unreachable" in caplog.text and "using metrics from 30 s ago" in caplog.text
        now[0] = 61.0  # beyond the limit: unavailable
        with pytest.raises(UtilizationUnavailable, match="beyond stalenessSeconds 60"):
            src.usage()

    # a plugin whose Prometheus is down scores from requests, and says so
    busy = [make_pod("x", node="n0", requests={"cpu": "1"})]
    snap = build_snapshot(NODES, busy)
    pl = TargetLoadPacking(provider_args(server.url), Handle(snap))
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="kubesched.loadaware"):
        raw, _ = run_score(pl, make_pod("p", requests={"cpu": "200m"}), snap)
    assert raw == [89, 51, 51, 51]  # n0: (1000 + 300)/4000 -> 32.5; others 7.5 (n3 too: requests exist)
    assert "TargetLoadPacking" in caplog.text and "falling back to requests" in caplog.text

"""The Grafana dashboard queries only series kubesched exposes, with labels they carry, in valid PromQL.

The series come from a real scheduling run with ``SchedulerMetrics`` attached, scraped over HTTP
and parsed by prometheus_client; the PromQL goes through Prometheus' own ``promtool``.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml
from deploy_testlib import DEPLOY

from kubesched.app import build_session
from kubesched.server.httpd import HTTPServer, parse_listen
from kubesched.server.metrics import RequestTimer, SchedulerMetrics
from kubesched.testing import make_node, make_pod

DASHBOARD = DEPLOY / "grafana" / "kubesched-dashboard.json"
#: Labels Prometheus adds to every scraped series (kubernetes_sd / ServiceMonitor relabelling).
TARGET_LABELS = {"job", "instance", "namespace", "pod", "service", "container", "endpoint"}
#: What the issue asks the dashboard to show, as the metric each panel family is built on.
REQUIRED = {
    "scheduler_schedule_attempts_total",
    "scheduler_scheduling_attempt_duration_seconds_bucket",
    "scheduler_pending_pods",
    "scheduler_plugin_execution_duration_seconds_bucket",
    "scheduler_pod_scheduling_sli_duration_seconds_bucket",
}
PROMQL_FUNCS_AND_KEYWORDS = {
    "sum", "max", "min", "avg", "count", "rate", "irate", "increase", "histogram_quantile", "by", "without",
    "on", "ignoring", "group_left", "group_right", "and", "or", "unless", "label_values", "le",
}  # fmt: skip


def dashboard() -> dict:
    return json.loads(DASHBOARD.read_text())


def panels(dash: dict) -> list[dict]:
    out = []
    for p in dash["panels"]:
        out.append(p)
        out.extend(p.get("panels", []))
    return out


def exprs(dash: dict) -> list[str]:
    found = [t["expr"] for p in panels(dash) for t in p.get("targets", [])]
    for var in dash["templating"]["list"]:
        if var["type"] == "query":
            found.append(var["query"]["query"] if isinstance(var["query"], dict) else var["query"])
    return found


def concrete(expr: str) -> str:
    """Grafana's variables replaced as Grafana would for "All" (PromQL that Prometheus can parse)."""
    expr = expr.replace("$__rate_interval", "5m").replace("$__interval", "1m")
    expr = re.sub(r"\$\{?(job|profile)\}?", ".*", expr)
    m = re.fullmatch(r"label_values\((.*),\s*\w+\)", expr)
    return m.group(1) if m else expr


@pytest.fixture(scope="module")
def exposed(tmp_path_factory: pytest.TempPathFactory) -> dict[str, set[str]]:
    """Sample name -> label names, scraped from /metrics after a real run that fills every family."""
    from prometheus_client.parser import text_string_to_metric_families

    docs = [
        make_node("n1", cpu="2", memory="4Gi"),
        make_node("n2", cpu="2", memory="4Gi"),
        make_pod("low1", requests={"cpu": "1500m"}, node="n1", priority=0),
        make_pod("low2", requests={"cpu": "1500m"}, node="n2", priority=0),
        make_pod("fits", requests={"cpu": "100m"}),
        make_pod("urgent", requests={"cpu": "1500m"}, priority=1000),
        make_pod("never", requests={"cpu": "16"}),
    ]
    path = tmp_path_factory.mktemp("dash") / "cluster.yaml"
    path.write_text(yaml.safe_dump_all(docs))
    s = build_session([str(path)], seed=1)
    metrics = SchedulerMetrics(plugin_sample_percent=100, seed=1)
    metrics.attach(s.scheduler)
    for pod in s.pending:
        s.scheduler.add_pending(pod)
    s.scheduler.run_until_idle(advance=s.clock.advance)
    with RequestTimer(metrics, "filter"):
        pass
    with HTTPServer(parse_listen("127.0.0.1:0"), metrics=metrics) as server:
        import urllib.request

        with urllib.request.urlopen(server.url + "/metrics", timeout=5) as resp:  # noqa: S310 - loopback
            text = resp.read().decode()
    out: dict[str, set[str]] = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            out.setdefault(sample.name, set()).update(sample.labels)
    return out


def test_dashboard_is_importable_grafana_json() -> None:
    dash = dashboard()
    assert dash["uid"] and dash["title"] and isinstance(dash["schemaVersion"], int)
    ps = panels(dash)
    ids = [p["id"] for p in ps]
    assert len(ids) == len(set(ids))
    names = {v["name"] for v in dash["templating"]["list"]}
    assert {"datasource", "job", "profile"} <= names
    for p in ps:
        if p["type"] == "row":
            continue
        assert p["datasource"] == {"type": "prometheus", "uid": "${datasource}"}, p["title"]
        assert p["targets"] and all(t["expr"] for t in p["targets"]), p["title"]
        g = p["gridPos"]
        assert 0 <= g["x"] and g["x"] + g["w"] <= 24, p["title"]


def metric_refs(expr: str) -> list[tuple[str, set[str]]]:
    """(metric name, label names in its matcher) for every selector in ``expr``."""
    out = []
    for m in re.finditer(r"\b([a-zA-Z_:][a-zA-Z0-9_:]*)\s*(\{[^}]*\})?", expr):
        name, matcher = m.group(1), m.group(2) or ""
        if name in PROMQL_FUNCS_AND_KEYWORDS or not name.startswith(("scheduler_", "kubesched_")):
            continue
        out.append((name, set(re.findall(r"([a-zA-Z_]\w*)\s*(?:=~|!~|!=|=)", matcher))))
    return out


def test_every_queried_series_and_label_exists(exposed: dict[str, set[str]]) -> None:
    used = set()
    for expr in exprs(dashboard()):
        refs = metric_refs(expr)
        assert refs, f"no kubesched metric in {expr!r}"
        labels_here: set[str] = set(TARGET_LABELS)
        for name, matchers in refs:
            assert name in exposed, f"{name} is not exposed by kubesched.server.metrics ({expr})"
            assert matchers <= exposed[name] | TARGET_LABELS, f"{name}: unknown label(s) in {expr}"
            labels_here |= exposed[name]
            used.add(name)
        for group in re.findall(r"\bby\s*\(([^)]*)\)", expr):
            labels = {x.strip() for x in group.split(",") if x.strip()}
            assert labels <= labels_here, f"grouping by unknown label(s) {labels - labels_here} in {expr}"
    assert REQUIRED <= used


def test_the_check_catches_a_missing_metric(exposed: dict[str, set[str]]) -> None:
    """A name kube-scheduler has but kubesched does not expose must not pass for present."""
    assert "scheduler_scheduling_algorithm_duration_seconds_bucket" not in exposed
    assert "scheduler_schedule_attempts_total" in exposed
    assert exposed["scheduler_plugin_execution_duration_seconds_bucket"] >= {"plugin", "extension_point", "le"}


def test_promql_parses_with_promtool(tmp_path: Path) -> None:
    promtool = shutil.which("promtool")
    assert promtool, "promtool comes with Prometheus: run scripts/install-test-deps.sh"
    rules = {
        "groups": [
            {"name": "dashboard", "rules": [{"record": f"kubesched:q{i}", "expr": concrete(e)} for i, e in enumerate(exprs(dashboard()))]}
        ]
    }
    path = tmp_path / "rules.yaml"
    path.write_text(yaml.safe_dump(rules))
    proc = subprocess.run([promtool, "check", "rules", str(path)], capture_output=True, text=True, timeout=30)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    n = len(rules["groups"][0]["rules"])
    assert f"SUCCESS: {n} rules found" in proc.stdout
    # and promtool does reject bad PromQL
    path.write_text(yaml.safe_dump({"groups": [{"name": "x", "rules": [{"record": "x:y", "expr": "sum by (le ("}]}]}))
    assert subprocess.run([promtool, "check", "rules", str(path)], capture_output=True, timeout=30).returncode != 0

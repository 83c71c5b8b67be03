"""kube-scheduler's metrics after a real scheduling run, read back from ``/metrics`` over HTTP."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from extender_testlib import cluster_docs, http, post, running_extender, web_pod, write
from prometheus_client import REGISTRY
from prometheus_client.parser import text_string_to_metric_families

from kubesched.app import build_session
from kubesched.framework.status import Code
from kubesched.scheduler import ScheduleResult
from kubesched.server.httpd import HTTPServer
from kubesched.server.metrics import SchedulerMetrics, attempts_label, exponential_buckets
from kubesched.testing import make_node, make_pod

# family names as the text parser reports them (counters without _total)
FAMILIES = {
    "scheduler_schedule_attempts": "counter",
    "scheduler_scheduling_attempt_duration_seconds": "histogram",
    "scheduler_pending_pods": "gauge",
    "scheduler_queue_incoming_pods": "counter",
    "scheduler_framework_extension_point_duration_seconds": "histogram",
    "scheduler_plugin_execution_duration_seconds": "histogram",
    "scheduler_pod_scheduling_sli_duration_seconds": "histogram",
    "scheduler_pod_scheduling_attempts": "histogram",
    "scheduler_preemption_attempts": "counter",
    "scheduler_preemption_victims": "histogram",
    "scheduler_cache_size": "gauge",
    "scheduler_unschedulable_pods": "gauge",
}
LABELS = {
    "scheduler_schedule_attempts_total": {"result", "profile"},
    "scheduler_scheduling_attempt_duration_seconds_count": {"result", "profile"},
    "scheduler_pending_pods": {"queue"},
    "scheduler_queue_incoming_pods_total": {"queue", "event"},
    "scheduler_framework_extension_point_duration_seconds_count": {"extension_point", "status", "profile"},
    "scheduler_plugin_execution_duration_seconds_count": {"plugin", "extension_point", "status"},
    "scheduler_pod_scheduling_sli_duration_seconds_count": {"attempts"},
    "scheduler_pod_scheduling_attempts_count": set(),
    "scheduler_preemption_attempts_total": set(),
    "scheduler_preemption_victims_count": set(),
    "scheduler_cache_size": {"type"},
    "scheduler_unschedulable_pods": {"plugin", "profile"},
}
PROFILE = "default-scheduler"


def run_cluster(tmp_path: Path) -> str:
    """Two full-ish nodes; a pod that fits, one that must preempt, one that never fits, one gated."""
    docs = [
        make_node("n1", cpu="2", memory="4Gi"),
        make_node("n2", cpu="2", memory="4Gi"),
        make_pod("low1", requests={"cpu": "1500m"}, node="n1", priority=0),
        make_pod("low2", requests={"cpu": "1500m"}, node="n2", priority=0),
        make_pod("fits", requests={"cpu": "100m"}),
        make_pod("urgent", requests={"cpu": "1500m"}, priority=1000),
        make_pod("never", requests={"cpu": "16"}),
        make_pod("gated", requests={"cpu": "100m"}, spec={"schedulingGates": [{"name": "wait"}]}),
    ]
    return write(tmp_path, "run.yaml", docs)


def scrape(url: str, accept: str | None = None) -> dict[str, Any]:
    """family name -> parsed family, read over HTTP and parsed by prometheus_client's parser."""
    status, ctype, body = http(f"{url}/metrics")
    assert status == 200 and ctype.startswith("text/plain")
    return {f.name: f for f in text_string_to_metric_families(body.decode())}


def value(fams: dict[str, Any], sample: str, **labels: str) -> float:
    """Sum of the samples named ``sample`` whose labels include ``labels``."""
    family = next(f for f in fams.values() if any(s.name == sample for s in f.samples))
    return sum(
        s.value for s in family.samples if s.name == sample and all(s.labels.get(k) == v for k, v in labels.items())
    )


@pytest.fixture
def scheduled(tmp_path: Path):
    """A ``schedule`` run with metrics attached: (session, metrics, results, scraped families)."""
    s = build_session([run_cluster(tmp_path)], seed=3)
    metrics = SchedulerMetrics(plugin_sample_percent=100, seed=3)
    metrics.attach(s.scheduler)
    results: list[ScheduleResult] = []
    s.scheduler.hooks.on_scheduled.append(results.append)
    s.scheduler.hooks.on_failed.append(results.append)
    for pod in s.pending:
        s.scheduler.add_pending(pod)
    s.scheduler.run_until_idle(advance=s.clock.advance)
    with HTTPServer(("127.0.0.1", 0), metrics=metrics) as srv:
        fams = scrape(srv.url)
        assert http(f"{srv.url}/healthz")[0] == 200
    return s, metrics, results, fams


def test_every_family_with_its_type_and_labels(scheduled):
    _, _, _, fams = scheduled
    for name, kind in FAMILIES.items():
        assert name in fams, name
        assert fams[name].type == kind, name
    for sample, labels in LABELS.items():
        found = [s for f in fams.values() for s in f.samples if s.name == sample]
        assert found, sample
        assert all(set(s.labels) == labels for s in found), sample


def test_attempts_and_results_match_the_run(scheduled):
    s, _, results, fams = scheduled
    ok = [r for r in results if r.node]
    failed = [r for r in results if not r.node]
    assert {r.pod.name for r in ok} == {"fits", "urgent"}
    assert value(fams, "scheduler_schedule_attempts_total", result="scheduled", profile=PROFILE) == 2
    assert value(fams, "scheduler_schedule_attempts_total", result="unschedulable", profile=PROFILE) == len(failed)
    assert value(fams, "scheduler_schedule_attempts_total", result="error") == 0
    # every attempt's duration is observed, including those whose duration is set after the hooks
    assert value(fams, "scheduler_scheduling_attempt_duration_seconds_count", result="scheduled") == 2
    assert value(fams, "scheduler_scheduling_attempt_duration_seconds_count", result="unschedulable") == len(failed)
    # urgent needed two attempts (preempt, then bind); fits one
    attempts = {r.pod.name: r.attempt for r in ok}
    assert attempts == {"fits": 1, "urgent": 2}
    assert value(fams, "scheduler_pod_scheduling_attempts_count") == 2
    assert value(fams, "scheduler_pod_scheduling_attempts_sum") == 3
    assert value(fams, "scheduler_pod_scheduling_sli_duration_seconds_count", attempts="1") == 1
    assert value(fams, "scheduler_pod_scheduling_sli_duration_seconds_count", attempts="2") == 1


def test_preemption(scheduled):
    s, _, results, fams = scheduled
    rejected = [r for r in results if r.code in (Code.Unschedulable, Code.UnschedulableAndUnresolvable)]
    assert value(fams, "scheduler_preemption_attempts_total") == len(rejected)  # PostFilter ran each time
    assert len(s.cluster.deleted) == 1
    assert value(fams, "scheduler_preemption_victims_count") == 1
    assert value(fams, "scheduler_preemption_victims_sum") == 1


def test_queue_and_cache(scheduled):
    s, _, _, fams = scheduled
    counts = s.scheduler.queue.counts()
    assert counts["gated"] == 1
    for q in ("active", "backoff", "unschedulable", "gated"):
        assert value(fams, "scheduler_pending_pods", queue=q) == counts[q], q
    assert value(fams, "scheduler_queue_incoming_pods_total", queue="active", event="PodAdd") == 3  # not the gated one
    assert value(fams, "scheduler_queue_incoming_pods_total", event="ScheduleAttemptFailure") >= 1
    assert value(fams, "scheduler_cache_size", type="nodes") == 2
    assert value(fams, "scheduler_cache_size", type="pods") == len(s.scheduler.snapshot.pod_by_uid) == 3
    assert value(fams, "scheduler_cache_size", type="assumed_pods") == 0
    # by the plugin that rejected each pod: "never" by NodeResourcesFit, "gated" by its PreEnqueue gate
    rejected = {
        (x.labels["plugin"], x.labels["profile"]): x.value for x in fams["scheduler_unschedulable_pods"].samples
    }
    assert rejected == {("NodeResourcesFit", PROFILE): 1, ("SchedulingGates", PROFILE): 1}


def test_extension_points_and_plugins(scheduled):
    _, _, _, fams = scheduled
    points = {
        s.labels["extension_point"]
        for s in fams["scheduler_framework_extension_point_duration_seconds"].samples
        if s.name.endswith("_count") and s.labels["profile"] == PROFILE
    }
    assert {"PreFilter", "PostFilter", "PreScore", "Score"} <= points
    plugins = {
        (s.labels["plugin"], s.labels["extension_point"])
        for s in fams["scheduler_plugin_execution_duration_seconds"].samples
        if s.name.endswith("_count")
    }
    assert ("NodeResourcesFit", "Filter") in plugins
    assert ("NodeResourcesFit", "PreFilter") in plugins
    assert ("DefaultPreemption", "PostFilter") in plugins
    assert ("TaintToleration", "Score") in plugins


def test_plugin_metrics_are_sampled(tmp_path):
    """At 0% no plugin timing is kept, while extension points are still recorded every cycle."""
    s = build_session([run_cluster(tmp_path)], seed=3)
    metrics = SchedulerMetrics(plugin_sample_percent=0)
    metrics.attach(s.scheduler)
    for pod in s.pending:
        s.scheduler.add_pending(pod)
    s.scheduler.run_until_idle(advance=s.clock.advance)
    fams = {f.name: f for f in metrics.registry.collect()}
    assert not [x for x in fams["scheduler_plugin_execution_duration_seconds"].samples]
    assert [x for x in fams["scheduler_framework_extension_point_duration_seconds"].samples]


def test_openmetrics_on_request(scheduled):
    _, metrics, _, _ = scheduled
    body, ctype = metrics.exposition("application/openmetrics-text; version=1.0.0")
    assert ctype.startswith("application/openmetrics-text")
    assert body.decode().rstrip().endswith("# EOF")


def test_dedicated_registry_and_chained_queue_callback(tmp_path):
    """Two instances never collide, nothing lands on the global registry, earlier callbacks still run."""
    s = build_session([run_cluster(tmp_path)], seed=3)
    seen: list[tuple[str, str]] = []
    s.scheduler.queue.on_incoming = lambda q, e: seen.append((q, e))
    first, second = SchedulerMetrics(), SchedulerMetrics()
    first.attach(s.scheduler)
    for pod in s.pending:
        s.scheduler.add_pending(pod)
    assert ("active", "PodAdd") in seen
    assert first.registry is not second.registry
    assert not [n for n in REGISTRY._names_to_collectors if n.startswith("scheduler_")]


def test_helpers():
    assert exponential_buckets(0.001, 2, 3) == [0.001, 0.002, 0.004]
    assert [attempts_label(n) for n in (1, 14, 15, 40)] == ["1", "14", "15+", "15+"]


def test_extender_serves_its_metrics(tmp_path):
    """The extender's port serves /metrics: its requests, the framework timings, the cache it holds."""
    cluster = write(tmp_path, "cluster.yaml", cluster_docs())
    with running_extender([cluster]) as (_, url):
        for _ in range(3):
            assert post(f"{url}/filter", {"Pod": web_pod(), "NodeNames": ["n5", "n6"]})[0] == 200
        assert post(f"{url}/prioritize", {"Pod": web_pod(), "NodeNames": ["n5", "n6"]})[0] == 200
        assert http(f"{url}/filter", b"{", "POST")[0] == 400
        fams = scrape(url)
    assert value(fams, "kubesched_extender_requests_total", verb="filter", code="200") == 3
    assert value(fams, "kubesched_extender_requests_total", verb="filter", code="400") == 1
    assert value(fams, "kubesched_extender_requests_total", verb="prioritize", code="200") == 1
    assert value(fams, "kubesched_extender_request_duration_seconds_count", verb="filter") == 4
    pre = value(
        fams, "scheduler_framework_extension_point_duration_seconds_count", extension_point="PreFilter", profile=PROFILE
    )
    assert pre == 4  # three filters and one prioritize
    assert value(fams, "scheduler_framework_extension_point_duration_seconds_count", extension_point="Score") == 1
    assert value(fams, "scheduler_cache_size", type="nodes") == 7
    assert set(FAMILIES) <= set(fams)


def test_scrape_is_the_text_format(tmp_path):
    """Without an Accept header: the plain text format Prometheus scrapes by default."""
    cluster = write(tmp_path, "cluster.yaml", cluster_docs())
    with running_extender([cluster]) as (_, url):
        status, ctype, body = http(f"{url}/metrics")
    assert status == 200 and ctype.startswith("text/plain; version=0.0.4")
    assert b"# TYPE scheduler_pending_pods gauge" in body


def test_readiness_and_head_probes():
    ready = [False]
    with HTTPServer(("127.0.0.1", 0), metrics=SchedulerMetrics(), ready=lambda: ready[0]) as srv:
        assert http(f"{srv.url}/readyz") == (503, "text/plain; charset=utf-8", b"not ready\n")
        assert http(f"{srv.url}/livez")[0] == 200
        ready[0] = True
        assert http(f"{srv.url}/readyz")[0] == 200
        status, _, body = http(f"{srv.url}/healthz", method="HEAD")
        assert (status, body) == (200, b"")

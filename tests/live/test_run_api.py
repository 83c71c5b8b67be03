"""``kubesched run`` end to end against the test API server: watch, bind, events, status, faults.

The scheduler runs in a thread of the test process, talks HTTP to tests/kubeapi through the
official client's configuration, and is stopped gracefully after each test.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
from live_harness import (
    all_bound,
    binding_posts,
    events,
    http_get,
    node,
    node_of,
    pod,
    running,
)
from prometheus_client.parser import text_string_to_metric_families

from kubesched.api.objects import Node, Pod
from kubesched.app import build_registry
from kubesched.cluster.memory import MemoryCluster
from kubesched.config.load import DEFAULTS_SOURCE, parse_config
from kubesched.config.types import KIND, V1
from kubesched.scheduler import Scheduler
from kubesched.state.snapshot import Snapshot
from tests.kubeapi import KubeAPIServer


def offline_message(nodes: list[dict], pending: dict) -> str:
    """The FailedScheduling message the in-memory scheduler gives for the same cluster."""
    reg = build_registry([])
    cfg = parse_config(
        {"apiVersion": V1, "kind": KIND, "profiles": [{"schedulerName": "kubesched"}]}, DEFAULTS_SOURCE, reg.points_of
    )
    snap = Snapshot()
    for n in nodes:
        snap.add_node(Node.parse(n))
    sched = Scheduler(cfg, snap, MemoryCluster(), reg, seed=1)
    sched.add_pending(Pod.parse({**pending, "metadata": {**pending["metadata"], "uid": "x"}}))
    res = sched.schedule_one()
    assert res is not None and res.node is None and res.message
    return res.message


def test_binds_through_the_binding_subresource_with_events_and_conditions(
    kube_api: KubeAPIServer, kubeconfig: str
) -> None:
    nodes = [node(f"n{i}") for i in range(3)]
    for n in nodes:
        kube_api.create(n)
    names = [f"web-{i}" for i in range(6)]
    for n in names:
        kube_api.create(pod(n))
    big = pod("big", cpu="16")
    kube_api.create(big)
    kube_api.create(pod("theirs", scheduler="default-scheduler"))  # another scheduler's pod
    with running(kubeconfig) as r:
        assert kube_api.wait_for(lambda: all_bound(kube_api, names), 10)
        assert kube_api.wait_for(lambda: len(events(kube_api, "Scheduled")) == 6 and events(kube_api, "FailedScheduling"))
        assert kube_api.wait_for(lambda: (kube_api.get("Pod", "big", "default") or {}).get("status", {}).get("conditions"))
        # each pod bound exactly once, through pods/{name}/binding
        assert sorted(binding_posts(kube_api)) == sorted(f"/api/v1/namespaces/default/pods/{n}/binding" for n in names)
        for n in names:
            (ev,) = events(kube_api, "Scheduled", n)
            assert ev["message"] == f"Successfully assigned default/{n} to {node_of(kube_api, n)}"
            assert ev["type"] == "Normal"
            assert ev["reportingComponent"] == "kubesched"
        # kube-scheduler's exact FitError, in the event and in the PodScheduled condition
        want = offline_message(nodes, big)
        (failed,) = events(kube_api, "FailedScheduling", "big")
        assert failed["message"] == want and failed["type"] == "Warning"
        (cond,) = [c for c in kube_api.get("Pod", "big", "default")["status"]["conditions"] if c["type"] == "PodScheduled"]
        assert (cond["status"], cond["reason"], cond["message"]) == ("False", "Unschedulable", want)
        assert node_of(kube_api, "theirs") is None
        assert r.outcomes["bound"] == 6
        # a status-only update (the condition just written) did not trigger another attempt
        time.sleep(1.2)  # longer than the first backoff
        assert r.sched.queue.counts()["unschedulable"] == 1
        assert r.metrics.schedule_attempts.labels("unschedulable", "kubesched")._value.get() == 1


def test_pod_becomes_feasible_when_a_node_is_added(kube_api: KubeAPIServer, kubeconfig: str) -> None:
    kube_api.create(node("small", cpu="1"))
    kube_api.create(pod("needs-4", cpu="4"))
    with running(kubeconfig):
        assert kube_api.wait_for(lambda: events(kube_api, "FailedScheduling", "needs-4"))
        assert node_of(kube_api, "needs-4") is None
        kube_api.create(node("large", cpu="8"))  # NodeAdd moves the pod out of the unschedulable pods
        assert kube_api.wait_for(lambda: node_of(kube_api, "needs-4") == "large", 5)


def test_a_failed_binding_is_retried_while_the_informer_has_the_pod_unbound(
    kube_api: KubeAPIServer, kubeconfig: str
) -> None:
    """kube-scheduler's handleSchedulingFailure asks its pod informer, whatever the API answered:
    a pod it still has unbound is requeued (a 404 or 409 from a proxy, a stale route, an injected
    fault: the pod was dropped for good before), one deleted or bound elsewhere is forgotten."""
    kube_api.create(node("n0"))
    kube_api.create(node("n1"))
    with running(kubeconfig) as r:
        real = kube_api.store.bind

        def bind(res: Any, namespace: str, name: str, node_name: str, *a: Any, **kw: Any) -> Any:
            if name == "doomed":  # deleted under the binding: a real 404
                kube_api.delete("Pod", name, namespace)
                assert kube_api.wait_for(lambda: f"{namespace}/{name}" not in r._pods.store, 5)
            elif name == "taken":  # bound by someone else first: a real 409
                real(res, namespace, name, "n1")
                assert kube_api.wait_for(lambda: r.settled(r._pods.store[f"{namespace}/{name}"]), 5)
            return real(res, namespace, name, node_name, *a, **kw)

        kube_api.store.bind = bind  # type: ignore[method-assign]
        kube_api.fail_next("POST", r"/pods/flaky/binding", 500)
        kube_api.fail_next("POST", r"/pods/proxied/binding", 404)
        kube_api.fail_next("POST", r"/pods/conflict/binding", 409)
        for name in ("flaky", "proxied", "conflict", "doomed", "taken"):
            kube_api.create(pod(name))
        assert kube_api.wait_for(lambda: all_bound(kube_api, ["flaky", "proxied", "conflict"]), 10)
        for name in ("flaky", "proxied", "conflict"):  # the failure, then the retry after backoff
            assert len(binding_posts(kube_api, name)) == 2
        assert kube_api.wait_for(lambda: events(kube_api, "Scheduled", "conflict"))
        message = events(kube_api, "FailedScheduling", "proxied")[0]["message"]
        assert message.startswith('running Bind plugin "DefaultBinder": 404')
        time.sleep(1.5)  # longer than the initial backoff
        assert len(binding_posts(kube_api, "doomed")) == 1 and kube_api.get("Pod", "doomed") is None
        assert len(binding_posts(kube_api, "taken")) == 1 and node_of(kube_api, "taken") == "n1"
        assert not events(kube_api, "FailedScheduling", "doomed") and not events(kube_api, "FailedScheduling", "taken")
        assert r.outcomes == {"bound": 3, "dropped": 2, "requeued": 3}
        assert len(r.sched.queue) == 0


def test_relists_after_410_and_recovers_from_dropped_watches(kube_api: KubeAPIServer, kubeconfig: str) -> None:
    kube_api.create(node("n0"))
    kube_api.create(pod("before"))
    with running(kubeconfig, "--watch-backoff", "0.3") as r:
        assert kube_api.wait_for(lambda: node_of(kube_api, "before") == "n0")
        lists = {inf.kind: inf.lists for inf in r.informers}
        kube_api.drop_watches()
        kube_api.create(pod("during"))  # happens while no watch is open
        kube_api.create(node("n1"))
        kube_api.compact()  # the watches' resourceVersions are now too old: 410 on re-watch
        assert kube_api.wait_for(lambda: node_of(kube_api, "during") is not None, 10)
        assert kube_api.wait_for(lambda: all(inf.lists == lists[inf.kind] + 1 for inf in r.informers), 5)
        assert r.sched.snapshot.n == 2
        kube_api.drop_watches()  # no compaction: re-watch from the last resourceVersion, no relist
        kube_api.create(pod("after"))
        assert kube_api.wait_for(lambda: node_of(kube_api, "after") is not None, 10)
        assert all(inf.lists == lists[inf.kind] + 1 for inf in r.informers)
        for name in ("before", "during", "after"):
            assert len(binding_posts(kube_api, name)) == 1


def test_silent_watch_is_abandoned_after_the_idle_timeout(kubeconfig: str, kube_api: KubeAPIServer) -> None:
    kube_api.create(node("n0"))
    with running(kubeconfig, "--watch-idle-timeout", "1.5"):
        kube_api.hang_watches(30)  # open, silent, never cut by the server within the test
        time.sleep(0.1)
        kube_api.create(pod("p"))
        t0 = time.monotonic()
        assert kube_api.wait_for(lambda: node_of(kube_api, "p") == "n0", 10)
        assert time.monotonic() - t0 < 8


def test_preemption_deletes_the_victim_and_nominates(kube_api: KubeAPIServer, kubeconfig: str) -> None:
    kube_api.create(node("n0", cpu="2"))
    kube_api.create(pod("low", cpu="2", spec={"priority": 0}))
    with running(kubeconfig) as r:
        assert kube_api.wait_for(lambda: node_of(kube_api, "low") == "n0")
        kube_api.create(pod("high", cpu="2", spec={"priority": 1000}))
        assert kube_api.wait_for(lambda: kube_api.get("Pod", "low", "default") is None, 5)
        assert kube_api.wait_for(lambda: node_of(kube_api, "high") == "n0", 10)
        (pre,) = events(kube_api, "Preempted", "low")
        assert pre["message"].startswith("Preempted by pod ") and pre["message"].endswith(" on node n0")
        failed = events(kube_api, "FailedScheduling", "high")[0]["message"]
        assert failed.startswith("0/1 nodes are available: 1 Insufficient cpu.")
        assert ("PATCH", "/api/v1/namespaces/default/pods/high/status") in kube_api.requests  # nominatedNodeName
        body, _ = r.metrics.exposition()
        assert b"scheduler_preemption_victims_count 1.0" in body


def test_probes_and_metrics(kube_api: KubeAPIServer, kubeconfig: str) -> None:
    kube_api.create(node("n0", cpu="2"))
    kube_api.create(pod("fits"))
    kube_api.create(pod("too-big", cpu="8"))
    with running(kubeconfig) as r:
        assert r.http is not None
        url = r.http.url
        assert kube_api.wait_for(lambda: node_of(kube_api, "fits") == "n0")
        assert kube_api.wait_for(lambda: events(kube_api, "FailedScheduling", "too-big"))
        for path in ("/healthz", "/livez", "/readyz"):
            assert http_get(url + path) == (200, "ok\n")
        status, text = http_get(url + "/metrics")
        assert status == 200
        samples = {
            (s.name, tuple(sorted(s.labels.items()))): s.value
            for fam in text_string_to_metric_families(text)
            for s in fam.samples
        }
        assert samples[("scheduler_schedule_attempts_total", (("profile", "kubesched"), ("result", "scheduled")))] == 1
        assert samples[("scheduler_schedule_attempts_total", (("profile", "kubesched"), ("result", "unschedulable")))] == 1
        assert samples[("scheduler_pending_pods", (("queue", "unschedulable"),))] == 1
        assert samples[("scheduler_pending_pods", (("queue", "active"),))] == 0
        assert samples[("scheduler_cache_size", (("type", "nodes"),))] == 1
        assert samples[("scheduler_pod_scheduling_sli_duration_seconds_count", (("attempts", "1"),))] == 1
        key = ("scheduler_scheduling_attempt_duration_seconds_count", (("profile", "kubesched"), ("result", "scheduled")))
        assert samples[key] == 1
        # Cluster Autoscaler's signal is the pod's PodScheduled=False/Unschedulable condition;
        # kube-scheduler's gauge says which plugin keeps how many pods pending
        (cond,) = [c for c in kube_api.get("Pod", "too-big", "default")["status"]["conditions"]
                   if c["type"] == "PodScheduled"]
        assert (cond["status"], cond["reason"]) == ("False", "Unschedulable")
        unsched = ("scheduler_unschedulable_pods", (("plugin", "NodeResourcesFit"), ("profile", "kubesched")))
        assert samples[unsched] == 1
        kube_api.create(node("big", cpu="16"))  # NodeAdd: too-big is tried again and bound
        assert kube_api.wait_for(lambda: node_of(kube_api, "too-big") == "big", 5)
        _, text = http_get(url + "/metrics")
        after = {(s.name, tuple(sorted(s.labels.items()))): s.value
                 for fam in text_string_to_metric_families(text) for s in fam.samples}
        assert after[unsched] == 0  # the series stays, at 0
        assert after[("scheduler_pod_scheduling_sli_duration_seconds_count", (("attempts", "2"),))] == 1


def test_not_ready_until_synced(tmp_path: Path) -> None:
    with KubeAPIServer() as api:
        kc = api.write_kubeconfig(tmp_path / "kc")
        api.fail_next("GET", r"^/api/v1/nodes\?", 500, times=3)  # the node list fails a few times
        api.create(node("n0"))
        with running(kc) as r:  # `running` waits for readiness: the list was retried with backoff
            assert r.ready.is_set() and r.sched.snapshot.n == 1
        gets = [p for m, p in api.requests if m == "GET" and p.startswith("/api/v1/nodes?") and "watch" not in p]
        assert len(gets) >= 4


@pytest.mark.parametrize("fmt", ["json", "text"])
def test_one_log_line_per_decision(kube_api: KubeAPIServer, kubeconfig: str, fmt: str, capsys: pytest.CaptureFixture) -> None:
    import json

    from kubesched.live import logs

    kube_api.create(node("n0", cpu="1"))
    kube_api.create(pod("ok"))
    kube_api.create(pod("no", cpu="4"))
    logs.setup(fmt, "info")
    with running(kubeconfig):
        assert kube_api.wait_for(lambda: node_of(kube_api, "ok") and events(kube_api, "FailedScheduling", "no"))
    err = capsys.readouterr().err.splitlines()
    if fmt == "json":
        recs = [json.loads(x) for x in err]
        sched = [x for x in recs if x["msg"] == "scheduled"]
        fail = [x for x in recs if x["msg"] == "unschedulable"]
        assert [(x["pod"], x["node"], x["attempt"]) for x in sched] == [("default/ok", "n0", 1)]
        assert fail[0]["pod"] == "default/no" and fail[0]["reason"].startswith("0/1 nodes are available")
        assert all(x["duration_ms"] >= 0 for x in sched + fail)
    else:
        assert any(" INFO scheduled pod=default/ok node=n0 " in x for x in err)
        assert any(" INFO unschedulable pod=default/no " in x and 'reason="0/1 nodes' in x for x in err)

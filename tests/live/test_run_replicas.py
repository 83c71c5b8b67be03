"""Two replicas with --leader-elect, SIGTERM draining, and bad input: ``kubesched run`` as a user runs it."""

from __future__ import annotations

import json
import signal
import threading
from pathlib import Path

import pytest
from live_harness import LEASE, Process, all_bound, binding_posts, events, node, node_of, pod, running

from kubesched.cli import build_parser, main
from kubesched.live.cli import build_runner
from tests.kubeapi import KubeAPIServer


def lease_holder(api: KubeAPIServer) -> str:
    lease = api.get("Lease", "kubesched", "default") or {}
    return str((lease.get("spec") or {}).get("holderIdentity") or "")


def test_only_the_leader_schedules_and_the_standby_takes_over(kube_api: KubeAPIServer, kubeconfig: str) -> None:
    kube_api.create(node("n0", cpu="32"))
    with running(kubeconfig, *LEASE) as a:
        assert a.elector is not None and a.elector.leading.wait(5)
        with running(kubeconfig, *LEASE) as b:
            assert b.ready.is_set()  # a standby is ready (its caches are synced)
            names = [f"p{i}" for i in range(8)]
            for n in names:
                kube_api.create(pod(n))
            assert kube_api.wait_for(lambda: all_bound(kube_api, names), 10)
            assert b.elector is not None and not b.elector.leading.is_set()
            assert kube_api.wait_for(lambda: a.outcomes["bound"] == 8)
            assert b.outcomes["bound"] == 0
            assert lease_holder(kube_api) == a.elector.config.identity
            assert len(b.sched.queue) == 0  # the standby saw them bound and dropped them from its queue
            a.stop()  # graceful: releases the lease, the standby need not wait for it to expire
            assert b.elector.leading.wait(3)
            assert a.exit_code == 0
            kube_api.create(pod("later"))
            assert kube_api.wait_for(lambda: node_of(kube_api, "later") == "n0", 5)
            assert kube_api.wait_for(lambda: b.outcomes["bound"] == 1)
            assert lease_holder(kube_api) == b.elector.config.identity
    assert all(len(binding_posts(kube_api, n)) == 1 for n in [*names, "later"])


def test_a_killed_leader_is_replaced_after_the_lease_expires(kube_api: KubeAPIServer, kubeconfig: str, tmp_path: Path) -> None:
    kube_api.create(node("n0", cpu="32"))
    leader = Process(kubeconfig, tmp_path / "leader.log", *LEASE)
    try:
        assert leader.wait_log("scheduling"), leader.text()
        kube_api.create(pod("first"))
        assert kube_api.wait_for(lambda: node_of(kube_api, "first") == "n0", 10)
        with running(kubeconfig, *LEASE) as standby:
            assert standby.elector is not None
            leader.kill()  # SIGKILL: no release; the lease must expire on the standby's clock
            kube_api.create(pod("second"))
            assert standby.elector.leading.wait(6)
            assert kube_api.wait_for(lambda: node_of(kube_api, "second") == "n0", 5)
            lease = kube_api.get("Lease", "kubesched", "default")
            assert lease["spec"]["leaseTransitions"] >= 1
    finally:
        leader.kill()
    assert len(binding_posts(kube_api)) == 2


def test_sigterm_drains_bindings_in_flight(kube_api: KubeAPIServer, kubeconfig: str, tmp_path: Path) -> None:
    kube_api.create(node("n0", cpu="1000"))
    names = [f"p{i:03d}" for i in range(120)]
    for n in names:
        kube_api.create(pod(n, cpu="100m"))
    # a slow client (20 writes/s, no burst) keeps bindings queued when SIGTERM arrives
    proc = Process(kubeconfig, tmp_path / "run.log", "--kube-api-qps", "20", "--kube-api-burst", "1", "--log-format", "json")
    try:
        assert kube_api.wait_for(lambda: len(binding_posts(kube_api)) >= 5, 15), proc.text()
        proc.signal(signal.SIGTERM)
        assert proc.wait(30) == 0
    finally:
        proc.kill()
    records = [json.loads(line) for line in proc.text().splitlines()]
    stopped = [r for r in records if r["msg"] == "stopped"]
    assert stopped and stopped[0]["exit_code"] == 0
    bound = [n for n in names if node_of(kube_api, n)]
    decided = [r["pod"] for r in records if r["msg"] == "scheduled"]
    # every binding the scheduler started finished: nothing assumed was left unbound or bound twice
    assert len(binding_posts(kube_api)) == len(bound) == stopped[0]["bound"] == len(decided)
    assert sorted(decided) == sorted(f"default/{n}" for n in bound)
    assert 0 < len(bound) < len(names)  # it did stop early
    assert not [r for r in records if r["msg"] == "shutdown: bindings still in flight"]
    # and the events of those bindings were flushed before exit
    assert len(events(kube_api, "Scheduled")) == len(bound)


def test_losing_the_lease_stops_scheduling(kube_api: KubeAPIServer, kubeconfig: str) -> None:
    kube_api.create(node("n0"))
    args = build_parser().parse_args(["run", "--kubeconfig", kubeconfig, "--metrics-listen", "off", *LEASE])
    r = build_runner(args)
    t = threading.Thread(target=r.serve, daemon=True)
    t.start()
    try:
        assert r.elector is not None and r.elector.leading.wait(5)
        kube_api.fail_next("*", r"/leases/kubesched", 500, times=1000)  # the API refuses every renewal
        t.join(10)
        assert not t.is_alive() and r.exit_code == 1  # as kube-scheduler: leadership lost -> exit
    finally:
        r.stop()
        t.join(5)


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (["--kubeconfig", "/nonexistent/kubeconfig"], "/nonexistent/kubeconfig: --kubeconfig: no such file"),
        (["--kube-api-qps", "0"], "--kube-api-qps: must be a positive number"),
        (["--kube-api-burst", "-3"], "--kube-api-burst: must be a positive integer"),
        (["--leader-elect-renew-deadline", "20"], "--leader-elect-renew-deadline: must be less than"),
        (["--metrics-listen", "nowhere"], "--metrics-listen: expected HOST:PORT"),
        (["--config", "/nonexistent/sched.yaml"], "/nonexistent/sched.yaml"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(argv: list[str], needle: str, capsys: pytest.CaptureFixture, tmp_path: Path) -> None:
    kc = tmp_path / "kc"
    kc.write_text("apiVersion: v1\nkind: Config\nclusters: []\ncontexts: []\n")
    full = argv if "--kubeconfig" in argv else ["--kubeconfig", str(kc), *argv]
    assert main(["run", *full]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and needle in err[0], err


def test_bad_kubeconfig_and_no_cluster(tmp_path: Path, capsys: pytest.CaptureFixture, monkeypatch: pytest.MonkeyPatch) -> None:
    kc = tmp_path / "kc"
    kc.write_text("clusters: [\n")
    assert main(["run", "--kubeconfig", str(kc)]) == 2
    assert capsys.readouterr().err.startswith(f"kubesched: error: {kc}: invalid kubeconfig: ")
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    assert main(["run"]) == 2  # no --kubeconfig: in-cluster, as kube-scheduler; not in a pod here
    assert "not running in a cluster" in capsys.readouterr().err

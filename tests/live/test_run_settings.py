"""``kubesched run`` honours the configuration file's leaderElection and clientConnection; flags win.

kube-scheduler's precedence (cmd/kube-scheduler/app/options): the file (or the v1 defaults),
then any leader-election flag given. kubesched lets --kubeconfig and --kube-api-* override the
file too (kube-scheduler ignores these deprecated flags when --config is given).
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from live_harness import FAST, node, node_of, pod, running

from kubesched.app import build_registry
from kubesched.cli import build_parser, main
from kubesched.live.cli import build_runner, run_config
from kubesched.live.runner import Runner
from kubesched.live.settings import Settings, resolve
from tests.kubeapi import KubeAPIServer

V1 = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"}


def write_config(tmp_path: Path, **blocks: object) -> str:
    path = tmp_path / "sched.yaml"
    path.write_text(yaml.safe_dump({**V1, "profiles": [{"schedulerName": "mine"}], **blocks}))
    return str(path)


def settings(*argv: str) -> Settings:
    args = build_parser().parse_args(["run", *argv])
    config = run_config(args.config, build_registry([]))
    return resolve(args, config, from_file=bool(args.config))


def lease_of(s: Settings) -> tuple:
    c = s.lease
    return (s.leader_elect, c.name, c.namespace, c.lease_duration, c.renew_deadline, c.retry_period)


def test_without_a_file_the_v1_defaults_apply() -> None:
    s = settings()
    assert (s.qps, s.burst) == (50, 100)
    # leaderElect defaults to true in v1; the Lease is named after the profile, not "kube-scheduler"
    assert lease_of(s) == (True, "kubesched", "kube-system", 15, 10, 2)
    assert s.kubeconfig.value is None and s.warnings == []


def test_the_file_applies_and_each_flag_given_overrides_its_field(tmp_path: Path) -> None:
    cfg = write_config(
        tmp_path,
        leaderElection={"leaderElect": False, "leaseDuration": "30s", "renewDeadline": "20s", "retryPeriod": "5s",
                        "resourceName": "their-lease", "resourceNamespace": "sched"},
        clientConnection={"qps": 7, "burst": 9, "kubeconfig": "/from/the/file"},
    )
    s = settings("--config", cfg)
    assert lease_of(s)[:3] == (False, "their-lease", "sched")  # off: the durations are not used
    assert (s.qps, s.burst, s.kubeconfig.value) == (7, 9, "/from/the/file")
    assert s.kubeconfig.field == "clientConnection.kubeconfig" and s.kubeconfig.source == cfg

    s = settings("--config", cfg, "--leader-elect", "--leader-elect-lease-duration", "1m", "--lease-name", "x")
    assert lease_of(s) == (True, "x", "sched", 60, 20, 5)
    s = settings("--config", cfg, "--leader-elect=true", "--leader-elect-retry-period", "0.5",
                 "--leader-elect-resource-namespace", "ns")
    assert lease_of(s) == (True, "their-lease", "ns", 30, 20, 0.5)
    s = settings("--config", cfg, "--kube-api-qps", "3", "--kubeconfig", "/from/the/flag")
    assert (s.qps, s.burst, s.kubeconfig.value, s.kubeconfig.flag) == (3, 9, "/from/the/flag", "--kubeconfig")
    s = settings("--config", cfg, "--kube-api-burst", "4")
    assert (s.qps, s.burst) == (7, 4)


def test_leader_elect_false_on_the_command_line_wins_over_the_file(tmp_path: Path) -> None:
    cfg = write_config(tmp_path, leaderElection={"leaderElect": True})
    assert settings("--config", cfg).leader_elect is True
    for off in ("--leader-elect=false", "--leader-elect=0", "--leader-elect=False"):
        assert settings("--config", cfg, off).leader_elect is False


def test_a_lease_name_written_in_the_file_is_used_even_if_it_is_the_default(tmp_path: Path) -> None:
    cfg = write_config(tmp_path, leaderElection={"resourceName": "kube-scheduler"})
    assert settings("--config", cfg).lease.name == "kube-scheduler"
    assert settings("--config", write_config(tmp_path)).lease.name == "mine"  # not written: the profile's name


def test_a_negative_qps_means_no_client_side_limit(tmp_path: Path, kube_api: KubeAPIServer, kubeconfig: str) -> None:
    cfg = write_config(tmp_path, clientConnection={"qps": -1})
    args = build_parser().parse_args(["run", "--config", cfg, "--kubeconfig", kubeconfig, *FAST])
    r = build_runner(args)
    try:
        assert r.options.qps == -1 and r.client.limiter is None and r.elector is not None
        assert r.elector.client.limiter is None and all(inf.client.limiter is None for inf in r.informers)
    finally:
        close(r)


def close(r: Runner) -> None:
    r.writers.close()
    if r.http is not None:
        r.http.shutdown()


def test_the_values_reach_the_clients_and_the_elector(tmp_path: Path, kube_api: KubeAPIServer, kubeconfig: str) -> None:
    cfg = write_config(
        tmp_path,
        leaderElection={"leaseDuration": "8s", "renewDeadline": "6s", "retryPeriod": "1s",
                        "resourceName": "my-lease", "resourceNamespace": "default"},
        clientConnection={"qps": 30, "burst": 60, "kubeconfig": kubeconfig},
    )
    r = build_runner(build_parser().parse_args(["run", "--config", cfg, *FAST, "--kube-api-burst", "70"]))
    try:
        assert r.client.host == kube_api.url  # the file's kubeconfig
        clients = [r.client, r.recorder.client, r.elector.client, *(inf.client for inf in r.informers)]
        assert {(c.limiter.qps, c.limiter.burst) for c in clients} == {(30, 70)}
        assert len({id(c.limiter) for c in clients}) == len(clients)  # each its own bucket
        c = r.elector.config
        assert (c.name, c.namespace, c.lease_duration, c.renew_deadline, c.retry_period) == (
            "my-lease", "default", 8, 6, 1)
    finally:
        close(r)
    # and the elector holds that Lease on the API server
    kube_api.create(node("n0"))
    kube_api.create(pod("p", scheduler="mine"))
    with running(kubeconfig, "--config", cfg):
        assert kube_api.wait_for(lambda: node_of(kube_api, "p") == "n0", 10)
        lease = kube_api.get("Lease", "my-lease", "default")
        assert lease is not None and lease["spec"]["leaseDurationSeconds"] == 8
        assert lease["spec"]["holderIdentity"]


def test_leader_election_off_in_the_file_takes_no_lease(tmp_path: Path, kube_api: KubeAPIServer, kubeconfig: str) -> None:
    cfg = write_config(tmp_path, leaderElection={"leaderElect": False})
    kube_api.create(node("n0"))
    kube_api.create(pod("p", scheduler="mine"))
    with running(kubeconfig, "--config", cfg) as r:
        assert r.elector is None
        assert kube_api.wait_for(lambda: node_of(kube_api, "p") == "n0", 10)
    assert not [p for _, p in kube_api.requests if "/leases" in p]


def test_protobuf_is_json_with_a_warning_when_asked_for(tmp_path: Path) -> None:
    assert settings().warnings == []  # the default contentType is protobuf: silently JSON
    cfg = write_config(tmp_path, clientConnection={
        "contentType": "application/vnd.kubernetes.protobuf",
        "acceptContentTypes": "application/vnd.kubernetes.protobuf,application/json",
    })
    assert settings("--config", cfg).warnings == [
        f"{cfg}: clientConnection.contentType: application/vnd.kubernetes.protobuf is not supported by the "
        "kubernetes Python client; requests are sent as application/json",
        f"{cfg}: clientConnection.acceptContentTypes: application/vnd.kubernetes.protobuf is not supported by "
        "the kubernetes Python client; responses are read as application/json",
    ]
    (w,) = settings("--kube-api-content-type", "application/vnd.kubernetes.protobuf").warnings
    assert w.startswith("--kube-api-content-type: application/vnd.kubernetes.protobuf is not supported")
    assert settings("--kube-api-content-type", "application/json").warnings == []


def test_the_warning_is_printed_once_on_stderr(tmp_path: Path, kube_api: KubeAPIServer, kubeconfig: str,
                                              capsys: pytest.CaptureFixture) -> None:
    cfg = write_config(tmp_path, clientConnection={"contentType": "application/vnd.kubernetes.protobuf"})
    close(build_runner(build_parser().parse_args(["run", "--config", cfg, "--kubeconfig", kubeconfig, *FAST])))
    err = capsys.readouterr().err.splitlines()
    assert err == [f"kubesched: warning: {cfg}: clientConnection.contentType: application/vnd.kubernetes.protobuf "
                   "is not supported by the kubernetes Python client; requests are sent as application/json"]


@pytest.mark.parametrize(
    ("blocks", "flags", "line"),
    [
        ({}, ["--leader-elect=maybe"], "--leader-elect: invalid boolean 'maybe' (true or false)"),
        ({}, ["--leader-elect-lease-duration", "5x"], '--leader-elect-lease-duration: invalid duration "5x"'),
        ({}, ["--leader-elect-retry-period", "0"], '--leader-elect-retry-period: invalid value "0": must be greater'),
        ({}, ["--leader-elect-resource-lock", "configmaps"], '--leader-elect-resource-lock: invalid value "configmaps"'),
        ({"leaderElection": {"leaseDuration": "5s", "renewDeadline": "4s"}}, ["--leader-elect-renew-deadline", "10s"],
         "--leader-elect-renew-deadline: must be less than the lease duration (SCHED: leaderElection.leaseDuration, 5s)"),
        ({"leaderElection": {"leaderElect": False, "retryPeriod": "20s"}}, ["--leader-elect"],
         "SCHED: leaderElection.retryPeriod: must be less than the renew deadline "
         "(SCHED: leaderElection.renewDeadline, 10s)"),
        ({"clientConnection": {"kubeconfig": "/no/such/kubeconfig"}}, [],
         "SCHED: clientConnection.kubeconfig: no such file: /no/such/kubeconfig"),
        ({"clientConnection": {"contentType": "text/plain"}}, [],
         'SCHED: clientConnection.contentType: unsupported media type "text/plain"'),
        ({"clientConnection": {"acceptContentTypes": "application/yaml"}}, [],
         'SCHED: clientConnection.acceptContentTypes: unsupported media type "application/yaml"'),
        ({}, ["--kube-api-content-type", "application/cbor"], '--kube-api-content-type: unsupported media type'),
        ({}, ["--kube-api-qps", "nan"], "--kube-api-qps: must be a positive number"),
    ],
)
def test_bad_settings_are_one_line_and_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture, blocks: dict,
                                              flags: list[str], line: str) -> None:
    cfg = write_config(tmp_path, **blocks)
    kc = tmp_path / "kc"
    kc.write_text("apiVersion: v1\nkind: Config\nclusters: []\ncontexts: []\n")
    argv = ["run", "--config", cfg, *flags]
    if "kubeconfig" not in blocks.get("clientConnection", {}):
        argv += ["--kubeconfig", str(kc)]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("kubesched: error: " + line.replace("SCHED", cfg)), err

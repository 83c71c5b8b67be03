"""LowestLoad: the formula table, Measured mode, bad args (exit 2 naming the field), the example config."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest
import yaml

from kubesched.api.objects import Pod
from kubesched.cli import main
from kubesched.errors import InputError
from kubesched.framework.handle import Handle
from kubesched.framework.interfaces import ROW_LOCAL
from kubesched.framework.utilization import NodeUsage, UtilizationUnavailable
from kubesched.plugins.lowestload import LowestLoad
from kubesched.testing import build_snapshot, make_node, make_pod, run_score

EXAMPLE = str(Path(__file__).resolve().parents[2] / "kubesched" / "examples" / "lowestload.yaml")


@pytest.mark.parametrize(
    ("args", "nodes", "existing", "pod", "want"),
    [
        # empty node, pod 1 cpu / 2Gi on 4 cpu / 8Gi: shares 25, 25 -> 75
        ({}, [make_node("a", cpu="4", memory="8Gi")], [], {"cpu": "1", "memory": "2Gi"}, [75]),
        # existing load counts: (1+1)/4=50, (2+2)/8=50 -> 50; the empty node 75
        (
            {},
            [make_node("a", cpu="4", memory="8Gi"), make_node("b", cpu="4", memory="8Gi")],
            [make_pod("x", node="a", requests={"cpu": "1", "memory": "2Gi"})],
            {"cpu": "1", "memory": "2Gi"},
            [50, 75],
        ),
        # weights: cpu 3 x share 50 + memory 1 x share 0 -> 150 // 4 = 37 -> 63
        (
            {"resources": [{"name": "cpu", "weight": 3}, {"name": "memory", "weight": 1}]},
            [make_node("a", cpu="2", memory="8Gi")],
            [],
            {"cpu": "1"},
            [63],
        ),
        # integer division floors each share: 1/3 cpu -> 33 -> 67 (cpu only)
        ({"resources": [{"name": "cpu"}]}, [make_node("a", cpu="3", memory="1Gi")], [], {"cpu": "1"}, [67]),
        # overcommitted: share capped at 100 -> 0, never negative
        ({"resources": [{"name": "cpu"}]}, [make_node("a", cpu="1", memory="1Gi")], [], {"cpu": "3"}, [0]),
        # a resource the node does not offer is left out of its mean; none offered -> 0
        ({"resources": [{"name": "example.com/gpu"}]}, [make_node("a", cpu="1")], [], {"cpu": "1"}, [0]),
        (
            {"resources": [{"name": "cpu"}, {"name": "example.com/gpu"}]},
            [make_node("a", cpu="4", extra={"example.com/gpu": 4}), make_node("b", cpu="4")],
            [],
            {"cpu": "2", "example.com/gpu": "1"},
            [63, 50],  # a: shares cpu 50, gpu 25 -> 75 // 2 = 37 -> 63; b: gpu left out -> 50
        ),
        # best-effort pod: the node's existing load only; an empty node scores 100
        ({}, [make_node("a", cpu="4", memory="8Gi")], [], None, [100]),
    ],
)
def test_score_table(args, nodes, existing, pod, want):
    snap = build_snapshot(nodes, existing)
    raw, norm = run_score(LowestLoad(args), make_pod("p", requests=pod), snap)
    assert raw == want and norm == want


@pytest.mark.parametrize(
    ("args", "field"),
    [
        ({"mode": "Guess"}, "LowestLoadArgs.mode"),
        ({"metricProvider": {"type": "Prometheus"}}, "LowestLoadArgs.metricProvider"),  # Requested mode
        ({"mode": "Measured", "metricProvider": {"type": "SignalFx"}}, "LowestLoadArgs.metricProvider.type"),
        ({"mode": "Measured", "prometheus": {"window": "soon"}}, "LowestLoadArgs.prometheus.window"),
        ({"resources": [{"name": "cpu", "weight": 0}]}, "LowestLoadArgs.resources[0].weight"),
        ({"resources": [{"name": "cpu", "weight": 101}]}, "LowestLoadArgs.resources[0].weight"),
        ({"resources": [{"name": "cpu"}, {"name": "cpu"}]}, "LowestLoadArgs.resources[1].name"),
        ({"resources": [{"weight": 1}]}, "LowestLoadArgs.resources[0].name"),
        ({"resources": "cpu"}, "LowestLoadArgs.resources"),
        ({"resource": []}, "LowestLoadArgs.resource"),
        ({"kind": "OtherArgs"}, "LowestLoadArgs.kind"),
    ],
)
def test_bad_args(args, field):
    with pytest.raises(InputError) as e:
        LowestLoad(args)
    assert e.value.path == field


class DictSource:
    """Measured utilization with fixed answers; None = down."""

    def __init__(self, usage):
        self.data = usage

    def usage(self):
        if self.data is None:
            raise UtilizationUnavailable("test source is down")
        return self.data


def _measured(usage, nodes, existing=()):
    snap = build_snapshot(nodes, existing)
    handle = Handle(snap)
    handle.utilization = DictSource(usage)
    return LowestLoad({"mode": "Measured"}, handle), snap


def test_measured_mode_reads_utilization_and_falls_back_per_node():
    nodes = [make_node(n, cpu="4", memory="8Gi") for n in ("a", "b", "c")]
    existing = [make_pod("x", node="c", requests={"cpu": "2", "memory": "2Gi"})]
    usage = {"a": NodeUsage(cpu_avg=50, mem_avg=25), "b": NodeUsage(cpu_avg=10, mem_avg=float("nan"))}
    pl, snap = _measured(usage, nodes, existing)
    assert pl.sign_pod(Pod.parse(make_pod("p")), snap) is None  # measurements change without the snapshot changing
    raw, norm = run_score(pl, make_pod("p", requests={"cpu": "1", "memory": "2Gi"}), snap)
    # a: cpu (2000 + 1000)/4000 = 75, mem (2Gi + 2Gi)/8Gi = 50 -> 62 -> 38
    # b: cpu (400 + 1000) -> 35; memory unmeasured -> requests 0 + 2Gi -> 25 -> 30 -> 70
    # c: no measurement -> requests: cpu 75, mem 50 -> 38
    assert raw == [38, 70, 38] and norm == raw


def test_measured_mode_uses_requests_while_the_source_is_down(caplog):
    nodes = [make_node("a", cpu="4", memory="8Gi"), make_node("b", cpu="4", memory="8Gi")]
    pl, snap = _measured(None, nodes, [make_pod("x", node="a", requests={"cpu": "2"})])
    with caplog.at_level(logging.WARNING, logger="kubesched.loadaware"):
        raw, _ = run_score(pl, make_pod("p", requests={"cpu": "1"}), snap)
    assert raw == [63, 88]  # a: cpu 75, mem 0 -> 37 -> 63; b: 25, 0 -> 12 -> 88
    assert "LowestLoad" in caplog.text and "falling back to requests" in caplog.text
    pl.handle.utilization.data = {"a": NodeUsage(0, mem_avg=0), "b": NodeUsage(100, mem_avg=0)}
    assert run_score(pl, make_pod("p", requests={"cpu": "1"}), snap)[0] == [88, 50]  # measured wins again


def test_envelope_and_defaults_accepted():
    p = LowestLoad(
        {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "LowestLoadArgs", "mode": "Requested"}
    )
    assert [r.name for r in p.resources] == ["cpu", "memory"]
    assert p.sign_pod(Pod.parse(make_pod("p")), build_snapshot([])) == ROW_LOCAL


def _config(tmp_path, args: dict) -> str:
    cfg = tmp_path / "sched.yaml"
    cfg.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "kubescheduler.config.k8s.io/v1",
                "kind": "KubeSchedulerConfiguration",
                "profiles": [
                    {
                        "schedulerName": "default-scheduler",
                        "plugins": {"score": {"enabled": [{"name": "LowestLoad", "weight": 50}]}},
                        "pluginConfig": [{"name": "LowestLoad", "args": args}],
                    }
                ],
            }
        )
    )
    return str(cfg)


def test_cli_bad_args_exit_2_naming_the_field(tmp_path, capsys):
    code = main(["schedule", "--config", _config(tmp_path, {"resources": [{"name": "cpu", "weight": -1}]})])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "pluginConfig[0].args.resources[0].weight" in err


def test_cli_steers_to_the_least_loaded_node(tmp_path, capsys):
    cluster = tmp_path / "cluster.yaml"
    docs = [make_node(f"n{i}", cpu="4", memory="8Gi") for i in range(3)]
    docs += [
        make_pod("busy0", node="n0", requests={"cpu": "3"}),
        make_pod("busy2", node="n2", requests={"cpu": "2"}),
    ]
    docs += [make_pod("new", requests={"cpu": "500m"})]
    cluster.write_text(yaml.safe_dump_all(docs))
    code = main(
        ["schedule", "-f", str(cluster), "--config", _config(tmp_path, {}), "--seed", "1", "-o", "json"]
    )
    out = capsys.readouterr()
    assert code == 0, out.err
    assert {p["pod"]: p["node"] for p in json.loads(out.out)["placements"]}["default/new"] == "n1"
    code = main(
        ["explain", "-f", str(cluster), "--config", _config(tmp_path, {}), "default/new", "-o", "json"]
    )
    assert code == 0 and "LowestLoad" in capsys.readouterr().out


def test_example_config_runs_on_the_example_cluster(capsys):
    code = main(["schedule", "--config", EXAMPLE, "--seed", "1", "-o", "json"])
    out = capsys.readouterr()
    assert code == 0, out.err
    placements = json.loads(out.out)["placements"]
    assert placements and any(p["node"] for p in placements)

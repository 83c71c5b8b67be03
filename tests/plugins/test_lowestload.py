"""LowestLoad: the formula table, bad args (exit 2 naming the field), and the example config."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from kubesched.cli import main
from kubesched.errors import InputError
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
        ({"mode": "Measured"}, "LowestLoadArgs.mode"),
        ({"mode": "Guess"}, "LowestLoadArgs.mode"),
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


def test_measured_mode_says_when_it_comes():
    with pytest.raises(InputError, match="LoadAware"):
        LowestLoad({"mode": "Measured"})


def test_envelope_and_defaults_accepted():
    p = LowestLoad(
        {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "LowestLoadArgs", "mode": "Requested"}
    )
    assert [r.name for r in p.resources] == ["cpu", "memory"] and p.row_local


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
    assert code == 2 and err.count("\n") == 1 and "LowestLoadArgs.resources[0].weight" in err


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

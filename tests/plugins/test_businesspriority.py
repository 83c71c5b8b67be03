"""BusinessPriority: formula table (docs/plugins/BusinessPriority.md), bad args, example config."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from kubesched.cli import main
from kubesched.errors import InputError
from kubesched.framework.interfaces import SignPlugin
from kubesched.plugins.businesspriority import BusinessPriority
from kubesched.testing import build_snapshot, make_node, make_pod, run_score

EXAMPLE = str(Path(__file__).resolve().parents[2] / "kubesched" / "examples" / "businesspriority.yaml")
PRIO = "kubesched.io/business-priority"
BUDGET = "kubesched.io/latency-budget-ms"
TIER = "kubesched.io/latency-tier"


def pod(
    annotations: dict[str, str] | None = None, priority: int | None = None, requests: dict | None = None
) -> dict:
    p = make_pod(
        "p", requests=requests if requests is not None else {"cpu": "1", "memory": "2Gi"}, priority=priority
    )
    p["metadata"]["annotations"] = annotations or {}
    return p


def tiered(*tiers: str | None) -> list[dict]:
    return [
        make_node(f"n{i}", cpu="4", memory="8Gi", labels={TIER: t} if t is not None else {})
        for i, t in enumerate(tiers)
    ]


@pytest.mark.parametrize(
    ("args", "pod_", "nodes", "want"),
    [
        # default weights 0.4/0.3/0.3; F = 75 (1 cpu / 2Gi on 4 / 8Gi); S = 0 -> latency term 100
        ({}, pod({PRIO: "100"}), tiered(None), [82]),  # (400*75 + 300*75 + 300*100) // 1000
        ({}, pod({PRIO: "0"}), tiered(None), [52]),  # (0 + 22500 + 30000) // 1000
        # bad annotation: falls back to spec.priority 500 * 100 // maxPriority 1000 = 50 -> 400*37
        ({}, pod({PRIO: "high"}, priority=500), tiered(None), [67]),
        ({}, pod({PRIO: "150"}), tiered(None), [52]),  # out of range -> spec.priority 0
        ({}, pod(priority=5000), tiered(None), [82]),  # spec.priority above maxPriority -> P = 100
        # latency only: budget 0 ms -> S = 100, T = 100 - tier * 100 // 3; missing/bad tier = worst
        (
            {"weights": {"latency": 1}},
            pod({BUDGET: "0"}),
            tiered("0", "3", None, "fast", "-1"),
            [100, 0, 0, 0, 0],
        ),
        # budget 500 ms -> S = 50: 50 * T // 100 + 50; tier 1 -> T = 67 -> 83; tier 9 capped at 3
        ({"weights": {"latency": 1}}, pod({BUDGET: "500"}), tiered("0", "1", "3", "9"), [100, 83, 50, 50]),
        # no or bad budget: not latency-sensitive -> 100 everywhere
        ({"weights": {"latency": 1}}, pod({BUDGET: "soon"}), tiered("0", "3"), [100, 100]),
        # free resources only: LowestLoad's score
        ({"weights": {"freeResources": 2}}, pod(), tiered("0", None), [75, 75]),
        # custom keys and scales
        (
            {
                "weights": {"latency": 1},
                "latencyBudgetAnnotation": "b",
                "nodeLatencyTierLabel": "t",
                "maxLatencyTier": 1,
                "relaxedLatencyBudgetMs": 100,
            },
            pod({"b": "50"}),
            [make_node("a", cpu="4", labels={"t": "0"}), make_node("b", cpu="4", labels={"t": "1"})],
            [100, 50],
        ),
    ],
)
def test_score_table(args, pod_, nodes, want):
    raw, norm = run_score(BusinessPriority(args), pod_, build_snapshot(nodes))
    assert raw == want and norm == want


@pytest.mark.parametrize(
    ("args", "field"),
    [
        ({"weights": {"priority": 0, "freeResources": 0, "latency": 0}}, "BusinessPriorityArgs.weights"),
        ({"weights": {"latency": -0.1}}, "BusinessPriorityArgs.weights.latency"),
        ({"weights": {"priority": "high"}}, "BusinessPriorityArgs.weights.priority"),
        ({"weights": {"cost": 1}}, "BusinessPriorityArgs.weights.cost"),
        ({"weights": [0.4]}, "BusinessPriorityArgs.weights"),
        ({"priorityAnnotation": ""}, "BusinessPriorityArgs.priorityAnnotation"),
        ({"maxLatencyTier": 0}, "BusinessPriorityArgs.maxLatencyTier"),
        ({"maxPriority": "1k"}, "BusinessPriorityArgs.maxPriority"),
        ({"resources": [{"name": "cpu", "weight": 0}]}, "BusinessPriorityArgs.resources[0].weight"),
        ({"latencyTier": "x"}, "BusinessPriorityArgs.latencyTier"),
    ],
)
def test_bad_args(args, field):
    with pytest.raises(InputError) as e:
        BusinessPriority(args)
    assert e.value.path == field


def test_not_signed():
    """Annotations are not in the pod signature and the plugin does not sign pods, so the
    equivalence cache never reuses its scores."""
    assert not isinstance(BusinessPriority({}), SignPlugin)


def _write(tmp_path: Path, args: dict) -> tuple[str, str]:
    docs: list[dict] = tiered("2", "0", "3")
    p = pod({PRIO: "90", BUDGET: "20"}, requests={"cpu": "100m"})
    p["metadata"]["name"] = p["metadata"]["uid"] = "checkout"
    docs.append(p)
    cluster = tmp_path / "cluster.yaml"
    cluster.write_text(yaml.safe_dump_all(docs))
    cfg = tmp_path / "sched.yaml"
    cfg.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "kubescheduler.config.k8s.io/v1",
                "kind": "KubeSchedulerConfiguration",
                "profiles": [
                    {
                        "schedulerName": "default-scheduler",
                        "plugins": {"score": {"enabled": [{"name": "BusinessPriority", "weight": 50}]}},
                        "pluginConfig": [{"name": "BusinessPriority", "args": args}],
                    }
                ],
            }
        )
    )
    return str(cluster), str(cfg)


def test_cli_latency_sensitive_pod_goes_to_the_low_tier(tmp_path, capsys):
    cluster, cfg = _write(tmp_path, {"weights": {"priority": 0.4, "freeResources": 0.3, "latency": 0.3}})
    code = main(["schedule", "-f", cluster, "--config", cfg, "--seed", "1", "-o", "json"])
    out = capsys.readouterr()
    assert code == 0, out.err
    assert json.loads(out.out)["placements"][0]["node"] == "n1"
    assert main(["explain", "-f", cluster, "--config", cfg, "default/checkout", "-o", "json"]) == 0
    assert "BusinessPriority" in capsys.readouterr().out


def test_cli_bad_args_exit_2_naming_the_field(tmp_path, capsys):
    cluster, cfg = _write(tmp_path, {"weights": {"latency": -1}})
    code = main(["schedule", "-f", cluster, "--config", cfg])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "pluginConfig[0].args.weights.latency" in err


def test_example_config_runs_on_the_example_cluster(capsys):
    code = main(["schedule", "--config", EXAMPLE, "--seed", "1", "-o", "json"])
    out = capsys.readouterr()
    assert code == 0, out.err
    placements = json.loads(out.out)["placements"]
    assert placements and any(p["node"] for p in placements)

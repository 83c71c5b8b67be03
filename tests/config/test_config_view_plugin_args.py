"""``config view`` refuses the configurations ``schedule`` refuses, with the same line: plugins that
are not upstream's check their args when they are built (kube-scheduler's out-of-tree plugins
do so in their factories), so ``config view`` builds every profile's plugins too. Before, it
printed configurations whose plugin args ``schedule`` refused."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from kubesched.cli import main

PLUGIN = '''
from kubesched.errors import InputError
from kubesched.framework.interfaces import ScorePlugin


class Picky(ScorePlugin):
    name = "Picky"

    def __init__(self, args=None, handle=None):
        super().__init__(args, handle)
        if (args or {}).get("level") != "high":
            raise InputError('invalid value: want "high"', path="PickyArgs.level")

    def score(self, state, pod, snapshot, rows):
        import numpy as np
        return np.zeros(len(rows), np.int64)
'''

# name -> (the plugin, the extension point it is enabled at, its args)
CASES: dict[str, tuple[str, str, dict[str, Any]]] = {
    "Coscheduling negative wait": ("Coscheduling", "permit", {"permitWaitingTimeSeconds": -1}),
    "Open-Gpu-Share unknown method": ("Open-Gpu-Share", "filter", {"gpuSelMethod": "fastest"}),
    "BusinessPriority unknown weight": ("BusinessPriority", "score", {"weights": {"speed": 1}}),
    "CapacityScheduling takes no args": ("CapacityScheduling", "preFilter", {"x": 1}),
    "TargetLoadPacking bad metric provider": ("TargetLoadPacking", "score", {"metricProvider": {"type": "Nope"}}),
    "a --plugin-path plugin's own check": ("Picky", "score", {"level": "low"}),
}


def config(plugin: str, point: str, args: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "profiles": [{
            "schedulerName": "default-scheduler",
            "plugins": {point: {"enabled": [{"name": plugin}]}},
            "pluginConfig": [{"name": plugin, "args": args}],
        }],
    }


@pytest.mark.parametrize("case", list(CASES))
def test_config_view_refuses_what_schedule_refuses(case: str, tmp_path: Path, capsys) -> None:
    plugin, point, args = CASES[case]
    cfg = tmp_path / "sched.yaml"
    cfg.write_text(yaml.safe_dump(config(plugin, point, args)))
    (tmp_path / "picky.py").write_text(PLUGIN)
    flags = ["--config", str(cfg), "--plugin-path", str(tmp_path / "picky.py")]
    assert main(["schedule", *flags]) == 2
    refused = capsys.readouterr().err
    assert main(["config", "view", *flags]) == 2
    out = capsys.readouterr()
    assert out.err == refused and out.err.count("\n") == 1 and out.out == ""
    assert f"{cfg}: " in out.err and "Traceback" not in out.err


def test_valid_args_are_still_shown(tmp_path: Path, capsys) -> None:
    cfg = tmp_path / "sched.yaml"
    cfg.write_text(yaml.safe_dump(config("Coscheduling", "permit", {"permitWaitingTimeSeconds": 5})))
    assert main(["config", "view", "--config", str(cfg), "-o", "json"]) == 0
    assert '"permitWaitingTimeSeconds": 5' in capsys.readouterr().out

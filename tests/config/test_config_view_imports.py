"""``config view`` imports no ``module:Class`` named in a configuration (importing runs the module's
code) unless ``--import-plugins`` asks for it; ``schedule`` imports it, as it must to run it."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import yaml

from kubesched.cli import main

PLUGIN = '''
from pathlib import Path
Path(__file__).with_name("imported.marker").write_text("the module ran")

from kubesched.framework.interfaces import Plugin, ScorePlugin


class Lowest(ScorePlugin):
    name = "Lowest"

    def score(self, state, pod, snapshot, rows):
        import numpy as np
        return np.zeros(len(rows), np.int64)
'''


@pytest.fixture
def module_plugin(tmp_path: Path, monkeypatch):
    mod = "kubesched_view_probe"
    (tmp_path / f"{mod}.py").write_text(PLUGIN)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, mod, raising=False)
    cfg = tmp_path / "sched.yaml"
    cfg.write_text(yaml.safe_dump({
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "profiles": [{"schedulerName": "x", "plugins": {"score": {"enabled": [{"name": f"{mod}:Lowest"}]}}}],
    }))
    return cfg, tmp_path / "imported.marker", mod


def test_config_view_does_not_import_module_names(module_plugin, capsys):
    cfg, marker, mod = module_plugin
    assert main(["config", "view", "--config", str(cfg)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f'plugin "{mod}:Lowest" names a Python module' in err
    assert "--import-plugins" in err
    assert not marker.exists() and mod not in sys.modules


def test_import_plugins_opts_in(module_plugin, capsys):
    cfg, marker, mod = module_plugin
    assert main(["config", "view", "--config", str(cfg), "--import-plugins", "-o", "json"]) == 0
    assert f"{mod}:Lowest" in capsys.readouterr().out
    assert marker.exists()

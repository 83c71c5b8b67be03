"""``config view -o table`` at 80, 120 and 200 columns: every profile, extension point and plugin
name whole on one line, nothing cut ("…"), no line wider than the terminal (issue 29: at 80
columns the profile read ``default-schedul…`` and ``order`` ``ord…``)."""

from __future__ import annotations

import pytest
from cli_testlib import WIDTHS, max_line, render, whole

from kubesched.app import build_config, build_registry
from kubesched.config import resolved_table
from kubesched.render import config_table

TWO_PROFILES = """
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
- schedulerName: gpu-binpacking-scheduler-for-training
  pluginConfig:
  - name: NodeResourcesFit
    args: {scoringStrategy: {type: MostAllocated}}
"""


@pytest.mark.parametrize("width", WIDTHS)
def test_every_name_whole(tmp_path, width):
    path = tmp_path / "sched.yaml"
    path.write_text(TWO_PROFILES)
    rows = resolved_table(build_config(str(path), build_registry([])))
    text = render(lambda c: config_table(rows, console=c), width)
    tokens = {r["profile"] for r in rows} | {r["point"] for r in rows} | {r["plugin"] for r in rows}
    tokens |= {"order", "weight"}
    assert not whole(text, tokens), f"cut at {width} columns: {whole(text, tokens)}\n{text}"
    assert "…" not in text and max_line(text) <= width
    # every row is there, once: a plugin line per (profile, point, plugin)
    assert sum(line.count("│") > 0 for line in text.splitlines() if "NodeResourcesFit" in line) == sum(
        r["plugin"] == "NodeResourcesFit" for r in rows
    )

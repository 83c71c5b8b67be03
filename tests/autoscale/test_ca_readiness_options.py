"""The readiness and health options in the autoscaler file and as Cluster Autoscaler's flags
(``--ok-total-unready-count``, ``--max-total-unready-percentage``, ``--max-node-startup-time``,
``--scale-down-unready-time``, ``--scale-down-unready-enabled``), their defaults (CA's: 3, 45 %,
15 min, 20 min, true) and their bad values, one line naming the file and the field."""

from __future__ import annotations

import pytest

from kubesched.autoscale.config import AutoscalerConfig
from kubesched.autoscale.configfile import load
from kubesched.errors import InputError
from tests.autoscale.readiness_helpers import build_node, groups, loop, measured

GROUP = {"name": "g", "template": {"cpu": "1", "memory": "1Gi"}, "max": 10}


def test_defaults_are_cas():
    cfg = AutoscalerConfig()
    assert (cfg.ok_total_unready_count, cfg.max_total_unready_percentage, cfg.max_node_startup_time) == (3, 45.0, 900.0)
    assert (cfg.scale_down.unready_time, cfg.scale_down.unready_enabled, cfg.never_ready_fraction) == (1200.0, True, 0.0)


def test_keys_and_flags_set_the_same_fields():
    keys = load({
        "okTotalUnreadyCount": 5, "maxTotalUnreadyPercentage": 30, "maxNodeStartupTime": 600, "neverReadyFraction": 0.1,
        "scaleDown": {"unreadyTime": 300, "unreadyEnabled": False}, "nodeGroups": [GROUP],
    }, "a.yaml")  # fmt: skip
    flags = load({"flags": [
        "--ok-total-unready-count=5", "--max-total-unready-percentage=30", "--max-node-startup-time=10m",
        "--scale-down-unready-time=5m", "--scale-down-unready-enabled=false",
    ], "neverReadyFraction": 0.1, "nodeGroups": [GROUP]}, "a.yaml")  # fmt: skip
    for cfg in (keys, flags):
        assert (cfg.ok_total_unready_count, cfg.max_total_unready_percentage, cfg.max_node_startup_time) == (5, 30.0, 600.0)
        assert (cfg.scale_down.unready_time, cfg.scale_down.unready_enabled, cfg.never_ready_fraction) == (300.0, False, 0.1)


def test_the_thresholds_drive_health():
    """4 unready of 5: unhealthy by default (4 > 3 and 80 % > 45 %); healthy with
    okTotalUnreadyCount 4, or maxTotalUnreadyPercentage 80."""
    nodes = [build_node(f"g-{i}", "g", ready=i == 0) for i in range(5)]
    for options, healthy in (({}, False), ({"ok_total_unready_count": 4}, True), ({"max_total_unready_percentage": 80.0}, True)):
        ca = loop(groups(("g", 0, 10)), **options)
        measured(ca, nodes)
        assert ca.health.cluster_healthy() is healthy, options


@pytest.mark.parametrize(
    ("doc", "message"),
    [
        ({"okTotalUnreadyCount": -1}, "okTotalUnreadyCount: must be 0 or more, got -1"),
        ({"okTotalUnreadyCount": 1.5}, 'okTotalUnreadyCount: invalid value "1.5": expected a whole number'),
        ({"maxTotalUnreadyPercentage": 120}, "maxTotalUnreadyPercentage: must be a percentage from 0 to 100, got 120"),
        ({"maxTotalUnreadyPercentage": "45%"}, 'maxTotalUnreadyPercentage: invalid value "45%": expected a number'),
        ({"maxNodeStartupTime": -5}, "maxNodeStartupTime: must be 0 or more seconds, got -5"),
        ({"neverReadyFraction": 2}, "neverReadyFraction: must be between 0 and 1, got 2"),
        ({"scaleDown": {"unreadyTime": -1}}, "scaleDown.unreadyTime: must be 0 or more seconds, got -1"),
        ({"scaleDown": {"unreadyEnabled": "no"}}, 'scaleDown.unreadyEnabled: invalid value "no": expected true or false'),
        ({"flags": ["--scale-down-unready-time=20"]}, 'flags[0] (--scale-down-unready-time): invalid duration "20"'),
        ({"flags": ["--ok-total-unready-count=-2"]}, "flags[0] (--ok-total-unready-count): must be 0 or more, got -2"),
        ({"flags": ["--max-total-unready-percentage=101"]}, "flags[0] (--max-total-unready-percentage): must be a percentage"),
        ({"flags": ["--scale-down-unready-enabled=perhaps"]}, 'flags[0] (--scale-down-unready-enabled): invalid boolean "perhaps"'),
        ({"flags": ["--max-node-startup-time=1m"], "maxNodeStartupTime": 60}, "maxNodeStartupTime is set in the file too"),
    ],
)
def test_bad_values_name_the_file_and_field(doc, message):
    with pytest.raises(InputError) as e:
        load({**doc, "nodeGroups": [GROUP]}, "as.yaml")
    assert str(e.value).startswith("as.yaml: ") and message in str(e.value), str(e.value)
    assert "\n" not in str(e.value)

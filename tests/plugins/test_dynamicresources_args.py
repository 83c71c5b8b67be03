"""DynamicResourcesArgs: v1 defaulting and ValidateDynamicResourcesArgs against the feature gates
(apis/config/validation), and ``--feature-gates`` as the CLI takes it."""

from __future__ import annotations

from pathlib import Path

import pytest

from kubesched import features
from kubesched.app import example_path
from kubesched.cli import main
from kubesched.config.args import default_args, plugin_args
from kubesched.errors import InputError


def test_defaults_follow_the_gates() -> None:
    assert default_args("DynamicResources") == {"filterTimeout": "10s", "bindingTimeout": "10m0s"}
    with features.override(DRASchedulerFilterTimeout=False, DRADeviceBindingConditions=False):
        assert default_args("DynamicResources") == {}


@pytest.mark.parametrize(
    ("args", "gates", "message"),
    [
        ({"filterTimeout": "-1s"}, {}, 'filterTimeout: Invalid value: "-1s": must be zero or positive'),
        ({"filterTimeout": "1s"}, {"DRASchedulerFilterTimeout": False},
         "filterTimeout: Forbidden: DRASchedulingFilterTimeout feature gate is disabled"),
        ({"bindingTimeout": "500ms"}, {}, 'bindingTimeout: Invalid value: "500ms": must be at least 1 second'),
        ({"bindingTimeout": "5m"}, {"DRAResourceClaimDeviceStatus": False},
         "bindingTimeout: Forbidden: DRADeviceBindingConditions or DRAResourceClaimDeviceStatus feature gate is disabled"),
        ({"filterTimout": "1s"}, {}, 'unknown field "filterTimout"'),
    ],
)
def test_validation(args: dict, gates: dict, message: str) -> None:
    """TestValidateDynamicResourcesArgs' rules, with upstream's wording (the gate name in the
    filterTimeout message is upstream's typo)."""
    with features.override(**gates), pytest.raises(InputError) as info:
        plugin_args("DynamicResources", args)
    assert message in str(info.value)


def test_valid_values_pass() -> None:
    assert plugin_args("DynamicResources", {"filterTimeout": "0s", "bindingTimeout": "1s"}) == {
        "filterTimeout": "0s", "bindingTimeout": "1s",
    }


def test_feature_gates_flag(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """--feature-gates: unknown names and locked gates are one-line errors (exit 2); a valid
    setting holds for the run only."""
    dump = example_path("dra-cluster.yaml")
    assert main(["schedule", "-f", dump, "--feature-gates", "NoSuchGate=true"]) == 2
    assert capsys.readouterr().err.strip() == "kubesched: error: --feature-gates: unrecognized feature gate: NoSuchGate"
    assert main(["schedule", "-f", dump, "--feature-gates", "DynamicResourceAllocation=false"]) == 2
    assert "feature is locked to true" in capsys.readouterr().err
    assert main(["schedule", "-f", dump, "-o", "json", "--feature-gates", "DRAPrioritizedList=false"]) == 0
    assert "has subrequests, but the DRAPrioritizedList feature is disabled" in capsys.readouterr().out
    assert main(["schedule", "-f", dump, "-o", "json"]) == 0  # defaults again
    assert "DRAPrioritizedList" not in capsys.readouterr().out
    assert features.current() == features.DEFAULT

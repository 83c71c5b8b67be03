"""kubesched.features: v1.36's gate defaults, ``--feature-gates`` parsing, and ``override`` in
both forms (keywords, or one gate and its value as upstream's SetFeatureGateDuringTest)."""

from __future__ import annotations

import pytest

from kubesched import features
from kubesched.errors import InputError


def test_defaults() -> None:
    assert features.enabled("DRAPrioritizedList")
    assert not features.enabled("DRAListTypeAttributes")
    assert not features.enabled("StorageCapacityScoring")


def test_override_forms() -> None:
    with features.override("StorageCapacityScoring", True):
        assert features.enabled("StorageCapacityScoring")
    with features.override(DRAPrioritizedList=False, DRADeviceTaints=False) as gates:
        assert not gates.enabled("DRAPrioritizedList") and not features.enabled("DRADeviceTaints")
    assert features.current() == features.DEFAULT
    with pytest.raises(InputError, match="unrecognized feature gate: Nope"), features.override("Nope", True):
        pass


@pytest.mark.parametrize(
    ("flag", "message"),
    [
        ("DRAPrioritizedList", "missing bool value for DRAPrioritizedList"),
        ("DRAPrioritizedList=yes", "invalid value of DRAPrioritizedList=yes"),
        ("DRAAdminAccess=false", "cannot set feature gate DRAAdminAccess to false, feature is locked to true"),
    ],
)
def test_flag_errors(flag: str, message: str) -> None:
    with pytest.raises(InputError, match=message):
        features.set_from_flag(flag)
    assert features.current() == features.DEFAULT


def test_flag_sets_and_resets() -> None:
    try:
        assert not features.set_from_flag(" DRAPrioritizedList=false, DRADeviceTaints=0 ").enabled("DRADeviceTaints")
        assert not features.enabled("DRAPrioritizedList")
    finally:
        features.set_from_flag("")
    assert features.current() == features.DEFAULT

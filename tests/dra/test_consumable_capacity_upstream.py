"""k8s.io/dynamic-resource-allocation/structured's TestConsumableCapacity (the incubating
allocator's consumable_capacity_test.go), ported under the upstream names: what one allocation
consumes of a capacity (``calculateConsumedCapacity``) and whether it breaks the capacity's
request policy (``violatesPolicy``).

The table read is a post-v1.36 copy: its fractional-range cases (the DRAFractionalCapacityRange
gate, after v1.36) and its not-representable cases (errors added after v1.36 for requests past
int64) are left out; the integer-path cases are ported: 14 of 28 of calculate-consumed-capacity,
5 of 8 of violate-capacity-sharing.
"""

from __future__ import annotations

from typing import Any

import pytest

from kubesched.api.quantity import parse_quantity
from kubesched.dra.capacity import consumed_amount, violates_policy
from kubesched.dra.objects import CapacityPolicy

MAX_INT64 = "9223372036854775807"


def policy(default: str | None = None, *, min: str | None = None, max: str | None = None, step: str | None = None,
           values: tuple[str, ...] | None = None) -> CapacityPolicy:
    raw: dict[str, Any] = {}
    if default is not None:
        raw["default"] = default
    if values is not None:
        raw["validValues"] = list(values)
    if min is not None or max is not None or step is not None:
        raw["validRange"] = {k: v for k, v in (("min", min), ("max", max), ("step", step)) if v is not None}
    out = CapacityPolicy.parse(raw, "requestPolicy")
    assert out is not None
    return out


# name -> (requested, capacity value, policy, expected consumption)
CALCULATE: dict[str, tuple[str | None, str, CapacityPolicy | None, str]] = {
    "empty": (None, "1", policy(), "1"),
    "max-safe-boundary-rounds-to-maxint64": ("9223372036854775806", MAX_INT64, policy("1", min="1", step="2"), MAX_INT64),
    "min in range": (None, "2", policy("1", min="1"), "1"),
    "default in set": (None, "2", policy("1", values=("1",)), "1"),
    "more than min in range": ("2", "2", policy("1", min="1"), "2"),
    "less than min in range": ("1", "2", policy("1", min="2"), "2"),
    "with step (round up)": ("2", "3", policy("1", min="1", step="2"), "3"),
    "with step (no remaining)": ("2", "2", policy("1", min="1", step="1"), "2"),
    "integer-step-sub-milli-request-rounds-up-without-fractional-range": ("1.0000001", "3", policy("1", min="1", step="1"), "2"),
    "negative-step-request-below-min-returns-min": ("5", "15", policy("10", min="10", step="-1"), "10"),
    "positive-binary-step-request-above-min-rounds-to-itself": ("3Gi", "3Gi", policy("1Gi", min="1Gi", step="1Gi"), "3Gi"),
    "valid value in set": ("2", "3", policy("1", values=("1", "2", "3")), "2"),
    "set (round up)": ("2", "3", policy("1", values=("1", "3")), "3"),
    "larger than set": ("3", "3", policy("1", values=("1", "2")), "3"),
}


@pytest.mark.parametrize("name", list(CALCULATE))
def test_calculate_consumed_capacity(name: str) -> None:
    """TestConsumableCapacity/calculate-consumed-capacity."""
    requested, value, pol, want = CALCULATE[name]
    got = consumed_amount(None if requested is None else parse_quantity(requested), parse_quantity(value), pol)
    assert got == parse_quantity(want)


# name -> (requested, policy, violates)
VIOLATE: dict[str, tuple[str, CapacityPolicy | None, bool]] = {
    "no constraint": ("1", None, False),
    "less than maximum": ("1", policy("1", min="1", max="2"), False),
    "more than maximum": ("2", policy("1", min="1", max="1"), True),
    "in set": ("1", policy("1", values=("1",)), False),
    "not in set": ("2", policy("1", values=("1",)), True),
}


@pytest.mark.parametrize("name", list(VIOLATE))
def test_violate_capacity_sharing(name: str) -> None:
    """TestConsumableCapacity/violate-capacity-sharing."""
    requested, pol, want = VIOLATE[name]
    assert violates_policy(parse_quantity(requested), pol) is want

"""Consumable capacity (DRAConsumableCapacity): what one allocation of a device consumes of each
capacity, by the capacity's request policy, and whether it fits beside what others consume."""

from __future__ import annotations

from collections.abc import Mapping
from fractions import Fraction

from kubesched.api.quantity import value as qvalue
from kubesched.dra.objects import CapacityPolicy, Device

#: fully qualified capacity name (``<domain>/<name>``) -> amount
Consumed = Mapping[str, Fraction]


def _num(q: Fraction) -> Fraction | int:
    """A whole quantity as an int (the search adds and compares many: ints are faster)."""
    return q.numerator if q.denominator == 1 else q


def _qualified(name: str, driver: str) -> str:
    """MakeFullyQualifiedName: a name without a domain is the driver's."""
    return name if "/" in name else f"{driver}/{name}"


_CAPACITIES: dict[tuple[Device, str], dict[str, tuple[str, Fraction, CapacityPolicy | None]]] = {}


def device_capacities(device: Device, driver: str) -> dict[str, tuple[str, Fraction, CapacityPolicy | None]]:
    """resolveDeviceCapacity: fully qualified name -> (the name as the device writes it, value,
    request policy); a name written with the driver's domain wins over the same name without.
    Kept per device (a device object never changes)."""
    hit = _CAPACITIES.get((device, driver))
    if hit is not None:
        return hit
    out: dict[str, tuple[str, Fraction, CapacityPolicy | None]] = {}
    prefix = driver + "/"
    for name, value in device.capacity.items():
        if name.startswith(prefix):
            out[name] = (name, _num(value), device.capacity_policies.get(name))
    for name, value in device.capacity.items():
        key = _qualified(name, driver)
        if key not in out:
            out[key] = (name, _num(value), device.capacity_policies.get(name))
    if len(_CAPACITIES) > 200_000:
        _CAPACITIES.clear()
    _CAPACITIES[(device, driver)] = out
    return out


def _request_key(name: str, driver: str, capacity: Mapping[str, Fraction]) -> str | None:
    """resolveCapacityName: the device capacity a request names (its domain may be left out,
    or given as the driver's), or None."""
    if name in capacity:
        return _qualified(name, driver)
    domain, sep, ident = name.partition("/")
    if sep:
        return name if domain == driver and ident in capacity else None
    return f"{driver}/{name}" if f"{driver}/{name}" in capacity else None


def _round_up_range(requested: Fraction, policy: CapacityPolicy) -> Fraction:
    """roundUpRange on the integer path (Quantity.Value() rounds up)."""
    assert policy.min is not None
    if requested < policy.min:
        return policy.min
    if policy.step is None:
        return requested
    step, low = qvalue(policy.step), qvalue(policy.min)
    n = -((qvalue(requested) - low) // -step)  # ceil
    return Fraction(low + step * n)


def consumed_amount(requested: Fraction | None, value: Fraction, policy: CapacityPolicy | None) -> Fraction:
    """calculateConsumedCapacity: what one allocation consumes of a capacity: the request
    (rounded up to the policy's range steps or next valid value), else the policy's default,
    else all of it."""
    if requested is None:
        return policy.default if policy is not None and policy.default is not None else value
    if policy is None:
        return requested
    if policy.has_range and policy.min is not None:
        return _round_up_range(requested, policy)
    if policy.valid_values:
        return next((v for v in policy.valid_values if requested <= v), requested)
    return requested


def violates_policy(amount: Fraction, policy: CapacityPolicy | None) -> bool:
    """violatesPolicy: above the range's maximum, off its steps, or not a valid value (the
    default always passes)."""
    if policy is None or (policy.default is not None and amount == policy.default):
        return False
    if policy.has_range:
        if policy.max is not None and amount > policy.max:
            return True
        if policy.step is not None:
            return (qvalue(amount) - qvalue(policy.min or Fraction(0))) % qvalue(policy.step) != 0
        return False
    if policy.valid_values:
        return amount not in policy.valid_values
    return False


def request_consumes(requests: Mapping[str, Fraction] | None, device: Device, driver: str) -> dict[str, Fraction] | None:
    """What one allocation of the device consumes per capacity (fully qualified names), or None
    when the request names a capacity the device does not have (twice, in both spellings), or a
    consumption is negative: upstream skips the device then."""
    caps = device_capacities(device, driver)
    wanted: dict[str, Fraction] = {}
    for name, amount in (requests or {}).items():
        key = _request_key(name, driver, device.capacity)
        if key is None or key in wanted:
            return None
        wanted[key] = _num(amount)
    out = {key: consumed_amount(wanted.get(key), value, policy) for key, (_, value, policy) in caps.items()}
    return None if any(v < 0 for v in out.values()) else out


def capacity_fits(
    consumes: Mapping[str, Fraction], device: Device, driver: str, current: Consumed | None, allocating: Consumed | None
) -> bool:
    """cmpRequestOverCapacity: each consumption keeps its policy, and what allocated claims
    (``current``), the search so far (``allocating``) and this request consume together stays
    within the capacity."""
    for key, (_, value, policy) in device_capacities(device, driver).items():
        amount = consumes[key]
        if violates_policy(amount, policy):
            return False
        total = amount + (current.get(key, 0) if current else 0) + (allocating.get(key, 0) if allocating else 0)
        if total > value:
            return False
    return True


def status_names(consumed: Mapping[str, Fraction], device: Device, driver: str) -> tuple[tuple[str, Fraction], ...]:
    """The consumed capacity as the result records it: each name spelled as the device does."""
    caps = device_capacities(device, driver)
    return tuple((caps[key][0], amount) for key, amount in consumed.items())

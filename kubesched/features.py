"""Feature gates: the ones of kube-scheduler v1.36 that change what kubesched's plugins do.

kube-scheduler reads one process-wide gate set (component-base's ``DefaultFeatureGate``, set with
``--feature-gates``) and hands each plugin a snapshot of it (``feature.Features``); argument
validation reads the same set. kubesched keeps that shape: :func:`current` is the process's
gates, ``--feature-gates`` sets them once at start (:func:`set_from_flag`), and
:func:`override` changes them for a block (tests). Defaults are v1.36's (the last versioned
spec at or below 1.36 in ``pkg/features/kube_features.go``); a locked gate cannot be set to the
other value, as upstream refuses it.
"""

from __future__ import annotations

import contextlib
from collections.abc import Collection, Iterator, Mapping
from dataclasses import dataclass, field

from kubesched.errors import InputError

#: name -> (v1.36 default, locked to its default)
GATES: dict[str, tuple[bool, bool]] = {
    "DynamicResourceAllocation": (True, True),
    "DRAPrioritizedList": (True, False),
    "DRAAdminAccess": (True, True),
    "DRADeviceTaints": (True, False),
    "DRADeviceTaintRules": (False, False),
    "DRAExtendedResource": (True, False),
    "DRADeviceBindingConditions": (True, False),
    "DRAResourceClaimDeviceStatus": (True, False),
    "DRAPartitionableDevices": (True, False),
    "DRAConsumableCapacity": (True, False),
    "DRASchedulerFilterTimeout": (True, False),
    "DRAListTypeAttributes": (False, False),
    "DRANodeAllocatableResources": (False, False),
    "DRAWorkloadResourceClaims": (False, False),
    "SchedulerQueueingHints": (True, True),
    # VolumeBinding's Score and VolumeBindingArgs.shape (alpha, off)
    "StorageCapacityScoring": (False, False),
}


@dataclass(frozen=True)
class FeatureGates:
    """An immutable gate set: the defaults of ``known`` (v1.36's kube-scheduler gates unless
    another component's table is given) with ``changed`` on top."""

    changed: Mapping[str, bool] = field(default_factory=dict)
    known: Mapping[str, tuple[bool, bool]] = field(default_factory=lambda: GATES, repr=False)

    def enabled(self, name: str) -> bool:
        if name in self.changed:
            return self.changed[name]
        return self.known[name][0]

    def with_values(self, values: Mapping[str, bool]) -> FeatureGates:
        for name, value in values.items():
            if name not in self.known:
                raise InputError(f"unrecognized feature gate: {name}", path="--feature-gates")
            default, locked = self.known[name]
            if locked and value != default:
                raise InputError(
                    f"cannot set feature gate {name} to {str(value).lower()}, feature is locked to {str(default).lower()}",
                    path="--feature-gates",
                )
        return FeatureGates({**self.changed, **values}, self.known)


DEFAULT = FeatureGates()
_current = DEFAULT


def current() -> FeatureGates:
    """The process's gates (``--feature-gates`` over v1.36's defaults)."""
    return _current


def enabled(name: str) -> bool:
    """``current().enabled(name)``."""
    return _current.enabled(name)


def parse_flag(text: str) -> dict[str, bool]:
    """``--feature-gates`` syntax: ``Name=true,Other=false`` (component-base's mapStringBool)."""
    out: dict[str, bool] = {}
    for part in text.split(","):
        part = part.strip()
        if not part:
            continue
        name, sep, raw = part.partition("=")
        name, raw = name.strip(), raw.strip()
        if not sep:
            raise InputError(f"missing bool value for {name}", path="--feature-gates")
        if raw.lower() not in ("true", "false", "1", "0", "t", "f"):
            raise InputError(f"invalid value of {name}={raw}, err: strconv.ParseBool: parsing {raw!r}: invalid syntax", path="--feature-gates")
        out[name] = raw.lower() in ("true", "1", "t")
    return out


def set_from_flag(text: str, others: Collection[str] = ()) -> FeatureGates:
    """Apply ``--feature-gates`` to the process's gates (bad names or values: InputError). Names in
    ``others`` are another component's gates (the multicluster commands' Karmada gates), left to it."""
    global _current
    _current = DEFAULT.with_values({k: v for k, v in parse_flag(text).items() if k not in others})
    return _current


@contextlib.contextmanager
def override(gate: str | None = None, value: bool | None = None, /, **values: bool) -> Iterator[FeatureGates]:
    """The process's gates with ``values`` (and ``gate`` set to ``value``) set, for the block
    (upstream's featuregatetesting.SetFeatureGateDuringTest)."""
    global _current
    if gate is not None:
        if value is None:
            raise TypeError("override(gate, value): value missing")
        values = {gate: value, **values}
    saved = _current
    _current = saved.with_values(values)
    try:
        yield _current
    finally:
        _current = saved

"""Feature gates kubesched reads, at kube-scheduler v1.36's defaults.

kubesched has no ``--feature-gates`` flag: each gate below is fixed at its v1.36 default. A test
turns one on or off for its duration with ``override`` (upstream's
featuregatetesting.SetFeatureGateDuringTest).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

#: gate -> default at v1.36
DEFAULTS: dict[str, bool] = {
    # VolumeBinding's Score and VolumeBindingArgs.shape (alpha since 1.33, off in 1.36)
    "StorageCapacityScoring": False,
}
_state = dict(DEFAULTS)


def enabled(gate: str) -> bool:
    return _state[gate]


@contextmanager
def override(gate: str, value: bool) -> Iterator[None]:
    """``gate`` set to ``value`` inside the block."""
    if gate not in DEFAULTS:
        raise KeyError(gate)
    old = _state[gate]
    _state[gate] = value
    try:
        yield
    finally:
        _state[gate] = old

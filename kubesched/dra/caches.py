"""What the allocator keeps across cycles: CEL verdicts per selector and device (``MatchCache``)
and a node's answer for claims of one spec while nothing it depends on changed
(``AllocationCache``)."""

from __future__ import annotations

from typing import Any

from kubesched.api.objects import Node
from kubesched.dra.cel import CelError, Selector, device_input
from kubesched.dra.claims import Allocation
from kubesched.dra.objects import Device
from kubesched.dra.pools import Features


class MatchCache:
    """(selector text, device) -> verdict (True, False, or the CelError text). A verdict depends
    on the expression and what CEL sees of the device (driver, attributes, capacity,
    ``allowMultipleAllocations``) alone, so it holds across cycles, nodes, and devices that look
    the same (the GPUs of one model on every node: one evaluation each)."""

    def __init__(self, limit: int = 200_000) -> None:
        self._verdicts: dict[tuple[str, tuple], bool | str] = {}
        self._inputs: dict[tuple[str, Device], tuple] = {}  # (driver, device) -> what CEL sees
        self._limit = limit

    def __len__(self) -> int:
        return len(self._verdicts)

    def verdict(self, selector: Selector, driver: str, device: Device) -> bool | str:
        seen = self._inputs.get((driver, device))
        if seen is None:
            if len(self._inputs) >= self._limit:
                self._inputs.clear()
            seen = self._inputs[(driver, device)] = (
                driver,
                tuple(sorted(device.attributes.items())),
                tuple(sorted(device.capacity.items())),
                device.allow_multiple_allocations,
            )
        key = (selector.expression, seen)
        hit = self._verdicts.get(key)
        if hit is not None:
            return hit
        try:
            out: bool | str = selector.matches(
                device_input(driver, device.attributes, device.capacity, device.allow_multiple_allocations)
            )
        except CelError as e:
            out = str(e)
        if len(self._verdicts) >= self._limit:
            self._verdicts.clear()
        self._verdicts[key] = out
        return out


class AllocationCache:
    """What ``Allocator.allocate`` found on a node for claims of one spec, while nothing it
    depends on changed: kept under (node, the claims' specs, features, the versions of the
    node's pools: how often what their devices' holders hold changed). Its owner clears it when
    classes or slices change. Not upstream's, which searches on every node of every cycle; the
    answers are the same (a share ID is made anew for the claim asking)."""

    LIMIT = 100_000  # entries per spec; and specs kept

    def __init__(self) -> None:
        # (claims' spec key, features) -> (node name, versions of its pools) -> (node, answer)
        self._buckets: dict[tuple, dict[tuple, tuple[Node, list[Allocation] | None]]] = {}

    def __len__(self) -> int:
        return sum(map(len, self._buckets.values()))

    def clear(self) -> None:
        self._buckets.clear()

    def bucket(self, key: Any, features: Features) -> dict[tuple, tuple[Node, list[Allocation] | None]]:
        """The answers for claims of one spec (an allocator takes it once, then asks per node)."""
        b = self._buckets.get((key, features))
        if b is None:
            if len(self._buckets) >= self.LIMIT:
                self._buckets.clear()
            b = self._buckets[(key, features)] = {}
        elif len(b) >= self.LIMIT:
            b.clear()
        return b

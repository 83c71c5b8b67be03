"""A claim's constraints during the search: ``matchAttribute`` (every device of the named
requests has the same value) and ``distinctAttribute`` (each a different one)."""

from __future__ import annotations

from dataclasses import dataclass, field

from kubesched.dra.objects import Attribute, Device
from kubesched.dra.pools import DeviceID


def _applies(requests: frozenset[str], request: str, sub: str) -> bool:
    """Whether a constraint naming ``requests`` (none: all) covers the request or subrequest."""
    if not requests:
        return True
    return request in requests or (bool(sub) and f"{request}/{sub}" in requests)


@dataclass(slots=True)
class MatchAttribute:
    """matchAttributeConstraint: every device of the named requests has the same value."""

    requests: frozenset[str]
    attribute: str
    value: Attribute | None = None
    count: int = 0

    def add(self, request: str, sub: str, device: Device, did: DeviceID) -> bool:
        if not _applies(self.requests, request, sub):
            return True
        attr = lookup_attribute(device, did, self.attribute)
        if attr is None:
            return False
        if self.count == 0:
            self.value, self.count = attr, 1
            return True
        if self.value != attr:
            return False
        self.count += 1
        return True

    def remove(self, request: str, sub: str) -> None:
        if _applies(self.requests, request, sub):
            self.count -= 1


@dataclass(slots=True)
class DistinctAttribute:
    """distinctAttributeConstraint (consumable capacity): every device of the named requests has
    the attribute, each with another value. As upstream, the candidate is compared with the
    values taken so far in order, and a value of another kind than the first one compared
    ends the comparison as distinct."""

    requests: frozenset[str]
    attribute: str
    values: list[Attribute] = field(default_factory=list)

    def add(self, request: str, sub: str, device: Device, did: DeviceID) -> bool:
        if not _applies(self.requests, request, sub):
            return True
        attr = lookup_attribute(device, did, self.attribute)
        if attr is None or not self._distinct(attr):
            return False
        self.values.append(attr)
        return True

    def _distinct(self, attr: Attribute) -> bool:
        for kind, value in self.values:
            if kind != attr[0]:
                return True
            if value == attr[1]:
                return False
        return True

    def remove(self, request: str, sub: str) -> None:
        if _applies(self.requests, request, sub):
            self.values.pop()


def lookup_attribute(device: Device, did: DeviceID, name: str) -> Attribute | None:
    """A fully qualified attribute; the driver's own domain may be left out on the device."""
    attr = device.attributes.get(name)
    if attr is not None:
        return attr
    domain, sep, ident = name.partition("/")
    if not sep or domain != did[0]:
        return None
    return device.attributes.get(ident)

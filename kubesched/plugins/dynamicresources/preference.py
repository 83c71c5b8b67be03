"""Devices another plugin would rather a pod got (kubesched's, not upstream's).

Upstream's allocator takes the first devices that satisfy the claims, in slice order. A plugin
that chooses devices itself (Open-Gpu-Share's ``gpuSelMethod``: the best-fitting GPU, the one
FGD fragments least) writes a ``DevicePreference`` into the cycle state at PreFilter; at Reserve,
DynamicResources asks it for the chosen node and, when the node's allocation does not hold those
devices, allocates again trying them first. Without a preference nothing changes.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from kubesched.dra.pools import DeviceID

#: the cycle state key of the preference
PREFERRED_DEVICES = "DynamicResources/preferredDevices"

#: node name -> the devices to try first, in order (empty: no preference on that node)
DevicePreference = Callable[[str], Sequence[DeviceID]]

"""Spot capacity for the Karpenter-like provisioner: what a spot node costs against its
on-demand price, and how often the simulator interrupts one (the autoscaler file's ``spot``).

An interruption is a simulator event: each spot node, once registered, draws the time to its
interruption from an exponential distribution with ``interruptionRate`` interruptions per
node-hour, from a generator seeded by the run's seed (so a replay is deterministic). At that time
the node is drained and deleted, its pods are created again and scheduled anew, and the
provisioner launches capacity for them as for any pending pod (Karpenter's interruption
controller cordons, drains and deletes an interrupted node; the 2-minute warning is not modelled).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from kubesched.errors import InputError, check_mapping, describe, join_path

DEFAULT_PRICE_FACTOR = 0.4  # spot at 40 % of on-demand, about the discount clouds advertise


@dataclass(frozen=True)
class SpotOptions:
    price_factor: float = DEFAULT_PRICE_FACTOR  # a spot node-hour costs this times on-demand
    interruption_rate: float = 0.0  # interruptions per spot node-hour; 0: none

    def price(self, on_demand: float, capacity_type: str) -> float:
        return on_demand * self.price_factor if capacity_type == "spot" else on_demand

    def time_to_interruption(self, rng: np.random.Generator) -> float:
        """Seconds from registration to interruption (inf without interruptions)."""
        if self.interruption_rate <= 0:
            return math.inf
        return float(rng.exponential(3600.0 / self.interruption_rate))


def read_spot(value: Any, source: str | None = None, path: str = "spot") -> SpotOptions:
    """``spot: {priceFactor: 0.4, interruptionRate: 0.05}``."""
    d = check_mapping(value, path, ("priceFactor", "interruptionRate"), source)
    out = {}
    for key, lo, hi in (("priceFactor", 0.0, 1.0), ("interruptionRate", 0.0, 3600.0)):
        if key not in d:
            continue
        v = d[key]
        p = join_path(path, key)
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
            raise InputError(f"expected a number, got {describe(v)}", source=source, path=p)
        if not lo <= v <= hi:
            raise InputError(f"must be from {lo:g} to {hi:g}, got {v:g}", source=source, path=p)
        out[key] = float(v)
    return SpotOptions(out.get("priceFactor", DEFAULT_PRICE_FACTOR), out.get("interruptionRate", 0.0))

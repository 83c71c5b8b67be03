"""Partitionable devices' shared counters during one node's search: what each pool's counter
sets hold less what allocated devices consume (counted once per pool), and what the devices
being allocated consume."""

from __future__ import annotations

from collections.abc import Collection, Mapping
from fractions import Fraction

from kubesched.dra.capacity import Consumed
from kubesched.dra.pools import Candidate, DeviceID


class SharedCounters:
    def __init__(self, allocated: Collection[DeviceID], consumed: Mapping[DeviceID, Consumed]) -> None:
        self.allocated = allocated  # devices allocated claims hold whole
        self.consumed = consumed  # devices shared by allocated claims
        self.available: dict[str, dict[str, dict[str, Fraction]]] = {}  # pool -> counter set -> counter -> left
        self.used: dict[str, dict[str, dict[str, Fraction]]] = {}  # the same, taken by this search

    def take(self, cand: Candidate) -> bool:
        """checkAvailableCounters: the pool's counters less those of allocated devices must cover
        what the devices being allocated consume."""
        pool = cand.pool
        avail = self.available.get(pool.name)
        if avail is None:
            avail = {}
            every = [*pool.slices, *pool.others]
            for s in every:
                for name, counters in s.shared_counters.items():
                    avail[name] = dict(counters)
            for s in every:
                for d in s.devices:
                    did = (s.driver, s.pool, d.name)
                    if did not in self.allocated and not self.consumed.get(did):
                        continue
                    for cc in d.consumes_counters:
                        have = avail.get(cc.counter_set)
                        if have is None:
                            continue
                        for name, v in cc.counters.items():
                            if name in have:
                                have[name] -= v
            self.available[pool.name] = avail
        used = self.used.setdefault(pool.name, {})
        for cc in cand.device.consumes_counters:
            mine = used.setdefault(cc.counter_set, {})
            for name, v in cc.counters.items():
                mine[name] = mine.get(name, Fraction(0)) + v
        for set_name, counters in avail.items():
            mine = used.get(set_name, {})
            for name, v in counters.items():
                if v < mine.get(name, Fraction(0)):
                    self.give_back(cand)
                    return False
        return True

    def give_back(self, cand: Candidate) -> None:
        used = self.used.get(cand.pool.name, {})
        for cc in cand.device.consumes_counters:
            mine = used.get(cc.counter_set, {})
            for name, v in cc.counters.items():
                mine[name] = mine.get(name, Fraction(0)) - v

"""Which utilization a load-aware plugin reads, and its fallback to requests.

``metricProvider.type``:
- ``Prometheus``: a PrometheusSource of the plugin's own (cache, staleness);
- ``Simulator``: ``Handle.utilization``, the simulator's usage model;
- unset: ``Handle.utilization`` when the handle has one (simulation), else requests.

When the source raises UtilizationUnavailable (Prometheus down, stale, no series) or there is
none, ``read()`` returns None and the plugin scores from requests; a warning says so once per
outage, and an info line when measurements come back.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

import numpy as np

from kubesched.framework.utilization import NodeUsage, UtilizationSource, UtilizationUnavailable
from kubesched.plugins.loadaware.args import PROMETHEUS, SIMULATOR, MetricProvider
from kubesched.plugins.loadaware.prometheus import PrometheusSource
from kubesched.state.memo import NODES

if TYPE_CHECKING:
    from kubesched.framework.handle import Handle
    from kubesched.state.snapshot import Snapshot

log = logging.getLogger("kubesched.loadaware")


class UtilizationReader:
    """One per plugin instance; the Prometheus cache lives in its source."""

    def __init__(self, owner: str, provider: MetricProvider, handle: Handle | None) -> None:
        self.owner = owner
        self.provider = provider
        self.handle = handle
        self.prometheus: PrometheusSource | None = (
            PrometheusSource(provider, owner=owner) if provider.type == PROMETHEUS else None
        )
        self.falling_back: bool | None = None  # None until the first read

    @property
    def source(self) -> UtilizationSource | None:
        if self.prometheus is not None:
            return self.prometheus
        return getattr(self.handle, "utilization", None)

    def read(self) -> dict[str, NodeUsage] | None:
        """The measured usage now, or None: score from requests."""
        src = self.source
        if src is None:
            why = (
                "metricProvider type Simulator but no simulator utilization on this run"
                if self.provider.type == SIMULATOR
                else "no metricProvider configured and no simulator utilization"
            )
            return self._fallback(why)
        try:
            usage = src.usage()
        except UtilizationUnavailable as e:
            return self._fallback(str(e))
        if self.falling_back:
            log.info("%s: measured utilization available again", self.owner)
        self.falling_back = False
        return usage

    def _fallback(self, why: str) -> None:
        if not self.falling_back:
            log.warning("%s: %s; falling back to requests-based utilization", self.owner, why)
        self.falling_back = True
        return None

    def columns(self, usage: dict[str, NodeUsage], snap: Snapshot) -> tuple[np.ndarray, ...]:
        """(cpu_avg, cpu_std, mem_avg, mem_std) per snapshot row in percent; NaN where unmeasured."""

        def build() -> tuple[np.ndarray, ...]:
            nan = float("nan")
            missing = NodeUsage(nan, nan, nan, nan)
            per = [usage.get(node.name, missing) for node in snap.nodes]
            return tuple(
                np.fromiter((getattr(u, f) for u in per), np.float64, len(per))
                for f in ("cpu_avg", "cpu_std", "mem_avg", "mem_std")
            )

        # kept only for Prometheus, per fetch (a simulator's usage may change in place)
        if self.prometheus is None or self.prometheus.fetches == 0:
            return build()
        return snap.memo.get((self, "columns"), build, on=NODES, version=self.prometheus.fetches)

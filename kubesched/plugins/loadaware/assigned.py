"""Pods placed since the metrics were taken (Trimaran's PodAssignEventHandler, from the snapshot).

Measurements lag: a pod bound a moment ago is not in the node's measured CPU yet, and without a
correction TargetLoadPacking would pile a burst of pods onto the same node. Upstream caches pods
from the informer with the time they were seen and adds the predicted CPU of those seen after the
window end, or less than 60 s before it. kubesched notices new pods from the rows whose pods
changed (the snapshot's memo follows them), so each scoring cycle costs only those rows.

One difference: pods already on the nodes when the plugin first looks are taken as measured
(upstream's informer stamps them "now" at start-up and counts them twice for a minute).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np

from kubesched.state.memo import NODES

if TYPE_CHECKING:
    from kubesched.api.objects import Pod
    from kubesched.state.snapshot import Snapshot

METRICS_AGENT_REPORTING_INTERVAL_SECONDS = 60  # upstream's metricsAgentReportingIntervalSeconds


class AssignedPods:
    """(uid, node) -> when first seen there; entries too old to matter are dropped.

    Keyed by node too, so a pod forgotten and placed again elsewhere counts again.
    """

    def __init__(self) -> None:
        self._known: set[tuple[str, str]] = set()
        self.recent: dict[tuple[str, str], float] = {}  # first-seen time of pods seen after start

    def _see(self, snap: Snapshot, row: int, now: float, baseline: bool) -> None:
        node = snap.nodes[row].name
        for uid in snap.pods_on[row]:
            key = (uid, node)
            if key not in self._known:
                self._known.add(key)
                if not baseline:
                    self.recent[key] = now

    def update(self, snap: Snapshot, now: float) -> None:
        """Record pods that appeared on any node since the last call: the rows whose pods changed
        (the snapshot's memo follows them), every row when nodes changed; the first look at a
        snapshot takes what it finds as measured."""

        def see_all(old: AssignedPods | None) -> AssignedPods:
            for row in range(snap.n):
                self._see(snap, row, now, baseline=old is None)
            return self

        def see_rows(_: AssignedPods, rows: list[int]) -> None:
            for row in set(rows):
                if row < snap.n:
                    self._see(snap, row, now, False)

        snap.memo.follow((self, "seen"), see_all, see_rows, on=NODES)

    def missing_milli(self, snap: Snapshot, window_end: float, predict: Callable[[Pod], int]) -> np.ndarray:
        """Per snapshot row, the predicted milli-CPU of pods not yet in metrics ending at ``window_end``."""
        out = np.zeros(snap.n, np.int64)
        horizon = window_end - METRICS_AGENT_REPORTING_INTERVAL_SECONDS
        for key, seen in list(self.recent.items()):
            if seen <= horizon:  # in the measurements by now, and for every later window
                del self.recent[key]
                continue
            uid, node = key
            pod = snap.pod_by_uid.get(uid)
            if pod is None or pod.node_name != node:
                continue  # gone (or moved: counted under its new key)
            out[snap.row_of[node]] += predict(pod)
        return out

"""Cluster Autoscaler's predicate checker: the real scheduler's PreFilter and Filter plugins,
run on any snapshot (the live one, or a scratch one holding template nodes)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import numpy as np

from kubesched.api.objects import Node, Pod
from kubesched.framework import cycle
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.diagnosis import Diagnosis
from kubesched.framework.failures import PluginFailure
from kubesched.framework.runtime import Framework
from kubesched.gpu.model import GPU_INDEX
from kubesched.state.snapshot import Snapshot

HOSTNAME = "kubernetes.io/hostname"


class PredicateChecker:
    """``fits(snap, pod, rows)``: the rows (of ``snap``) that would pass the pod's profile's
    filters, as a boolean mask; no scoring, no nominated pods (CA's simulation has none)."""

    def __init__(self, framework_for: Callable[[Pod], Framework | None]) -> None:
        self.framework_for = framework_for
        self.checks = 0  # filter runs, for the run's statistics

    def _filter(self, snap: Snapshot, pod: Pod, rows: np.ndarray) -> tuple[np.ndarray, Diagnosis | None]:
        fw = self.framework_for(pod)
        if fw is None or rows.size == 0:
            return np.zeros(rows.size, bool), None
        self.checks += 1
        state = CycleState()
        try:
            pre = cycle.pre_filter(fw, state, pod, snap)
            if not pre.status.ok:
                return np.zeros(rows.size, bool), None
            return cycle.filter_nodes(fw, state, pod, snap, rows, pre, nominated=False)
        except PluginFailure:
            return np.zeros(rows.size, bool), None

    def fits(self, snap: Snapshot, pod: Pod, rows: np.ndarray) -> np.ndarray:
        return self._filter(snap, pod, rows)[0]

    def reasons(self, snap: Snapshot, pod: Pod, row: int) -> tuple[str, ...] | None:
        """None when the pod fits on ``row``, else why not (the failing filter's reasons, as
        CA's CheckPredicates error carries them)."""
        ok, diag = self._filter(snap, pod, np.asarray([row], np.int32))
        if ok[0]:
            return None
        status = diag.status_of(row) if diag is not None else None
        return status.reasons if status is not None else ()

    def first_fit(self, snap: Snapshot, pod: Pod, rows: np.ndarray) -> int | None:
        """The first row of ``rows`` the pod fits on, or None."""
        ok = self.fits(snap, pod, rows)
        hit = np.flatnonzero(ok)
        return int(rows[hit[0]]) if hit.size else None


def node_named(template: Node, name: str, extra_labels: dict[str, str] | None = None) -> Node:
    """A copy of ``template`` named ``name`` (hostname label too): a new node of its group."""
    labels = {**template.labels, **(extra_labels or {}), HOSTNAME: name}
    raw = dict(template.raw)
    raw["metadata"] = {**raw.get("metadata", {}), "name": name, "labels": labels}
    return dataclasses.replace(template, name=name, uid=name, labels=labels, raw=raw)


def placed(pod: Pod, node: str, uid_suffix: str = "") -> Pod:
    """A hypothetical copy of ``pod`` on ``node``: GPUs chosen afresh there (no GPU index)."""
    p = pod.with_node(node)
    if GPU_INDEX in p.annotations:
        p.annotations = {k: v for k, v in p.annotations.items() if k != GPU_INDEX}
    if uid_suffix:
        p.uid = pod.uid + uid_suffix
    return p


def reads_other_nodes(pod: Pod) -> bool:
    """Whether the filters may look at other nodes' pods for this pod (then a simulation needs
    the cluster's pods, not only the template nodes)."""
    return bool(pod.spread_constraints) or pod.has_affinity_terms

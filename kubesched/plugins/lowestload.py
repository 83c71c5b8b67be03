"""LowestLoad: prefer the node with the lowest load once the pod is on it.

Load is the requested share of allocatable (``mode: Requested``): for every listed resource,
``min(requested + pod, allocatable) * 100 // allocatable`` on the node's real requests (no
100m/200Mi scoring defaults), averaged with the resource weights (integer division). Score =
100 - load, in [0, 100]. Unlike NodeResourcesFit's LeastAllocated it reads real requests, counts
a resource whether or not the pod asks for it, and gives 0 (not a free pass) to a node offering
none of the listed resources. ``mode: Measured`` takes cpu and memory in use from measured
utilization instead (Prometheus or the simulator, as the LoadAware plugins read it), falling back
to requests per node without measurements and for all nodes when the source is down. Not enabled
by default.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from kubesched.api.resources import CPU, MEMORY
from kubesched.errors import InputError, join_path
from kubesched.framework.interfaces import MAX_NODE_SCORE, ROW_LOCAL, ScorePlugin, Signature, SignPlugin
from kubesched.framework.plugin_args import args_body, shown
from kubesched.plugins.loadaware.args import parse_metric_provider
from kubesched.plugins.loadaware.source import UtilizationReader

if TYPE_CHECKING:
    from kubesched.api.objects import Pod
    from kubesched.framework.cycle_state import CycleState
    from kubesched.framework.handle import Handle
    from kubesched.state.snapshot import Snapshot

NAME = "LowestLoad"
MODES = ("Requested", "Measured")


@dataclass(frozen=True, slots=True)
class LoadResource:
    """A resource counted in the load and its weight (a positive integer)."""

    name: str
    weight: int


DEFAULT_LOAD_RESOURCES: tuple[LoadResource, ...] = (LoadResource("cpu", 1), LoadResource("memory", 1))


def parse_load_resources(raw: Any, path: str) -> tuple[LoadResource, ...]:
    """``resources: [{name, weight}]``; empty or absent means cpu:1, memory:1."""
    if raw is None:
        return DEFAULT_LOAD_RESOURCES
    if not isinstance(raw, list):
        raise InputError(f"expected a list, got {type(raw).__name__}", path=path)
    if not raw:
        return DEFAULT_LOAD_RESOURCES
    out: list[LoadResource] = []
    seen: set[str] = set()
    for i, item in enumerate(raw):
        ip = join_path(path, i)
        if not isinstance(item, Mapping):
            raise InputError(f"expected an object, got {type(item).__name__}", path=ip)
        for key in item:
            if key not in ("name", "weight"):
                raise InputError(f'unknown field "{key}" (known: name, weight)', path=join_path(ip, str(key)))
        name = item.get("name")
        if not isinstance(name, str) or not name:
            raise InputError("required: a resource name", path=join_path(ip, "name"))
        if name in seen:
            raise InputError(f'duplicate value "{name}"', path=join_path(ip, "name"))
        seen.add(name)
        weight = item.get("weight", 1)
        if isinstance(weight, bool) or not isinstance(weight, int) or not 1 <= weight <= 100:
            raise InputError(
                f"invalid value {shown(weight)}: must be an integer in [1, 100]", path=join_path(ip, "weight")
            )
        out.append(LoadResource(name, weight))
    return tuple(out)


def free_score(
    snap: Snapshot,
    rows: np.ndarray,
    pod: Pod,
    resources: Sequence[LoadResource],
    used: Mapping[str, np.ndarray] | None = None,
) -> np.ndarray:
    """100 - weighted mean used share (with the pod) per row; 0 where no resource is offered.

    Use is the requested amount unless ``used`` gives a column over ``rows`` for the resource.
    """
    rows = np.asarray(rows, dtype=np.intp)
    n = len(rows)
    total = np.zeros(n, np.int64)
    wsum = np.zeros(n, np.int64)
    for res in resources:
        col = snap.res_index.get(res.name)
        if col is None:
            continue
        alloc = snap.alloc[rows, col]
        base = used.get(res.name) if used is not None else None
        in_use = (snap.requested[rows, col] if base is None else base) + int(pod.requests.get(res.name, 0))
        on = alloc > 0
        safe = np.where(on, alloc, 1)
        share = np.minimum(in_use, safe) * MAX_NODE_SCORE // safe  # non-negative operands: Go's division
        total += np.where(on, share * res.weight, 0)
        wsum += np.where(on, res.weight, 0)
    load = total // np.where(wsum == 0, 1, wsum)
    return np.where(wsum == 0, 0, np.clip(MAX_NODE_SCORE - load, 0, MAX_NODE_SCORE)).astype(np.int64)


class LowestLoad(ScorePlugin, SignPlugin):
    """Score only, no normalization. Row-local in Requested mode (the pod's requests and the
    node's own row); not in Measured mode, whose input changes without the snapshot changing."""

    name = NAME

    def __init__(self, args: dict[str, Any] | None = None, handle: Handle | None = None) -> None:
        super().__init__(args, handle)
        body = args_body(NAME, self.args, ("resources", "mode", "metricProvider", "prometheus"))
        root = f"{NAME}Args"
        mode = body.get("mode", "Requested")
        mpath = join_path(root, "mode")
        if mode not in MODES:
            raise InputError(f"unknown value {shown(mode)} (supported: {', '.join(MODES)})", path=mpath)
        self.mode: str = mode
        self.resources = parse_load_resources(body.get("resources"), join_path(root, "resources"))
        self.reader: UtilizationReader | None = None
        if mode == "Measured":
            self.reader = UtilizationReader(NAME, parse_metric_provider(body, root), handle)
        else:
            for key in ("metricProvider", "prometheus"):
                if key in body:
                    raise InputError('only used with mode "Measured"', path=join_path(root, key))

    def sign_pod(self, pod: Pod, snap: Snapshot) -> Signature | None:
        return ROW_LOCAL if self.reader is None else None

    def score(self, state: CycleState, pod: Pod, snap: Snapshot, rows: np.ndarray) -> np.ndarray:
        if self.reader is None:
            return free_score(snap, rows, pod, self.resources)
        return free_score(snap, rows, pod, self.resources, self._measured(snap, rows))

    def _measured(self, snap: Snapshot, rows: np.ndarray) -> dict[str, np.ndarray] | None:
        """cpu and memory in use (millicores, bytes) per row: measured where known, else requested."""
        assert self.reader is not None
        usage = self.reader.read()
        if usage is None:
            return None  # requests for every node; the reader has logged why
        rows = np.asarray(rows, dtype=np.intp)
        cpu_avg, _, mem_avg, _ = (c[rows] for c in self.reader.columns(usage, snap))
        out: dict[str, np.ndarray] = {}
        for res, pct in ((CPU, cpu_avg), (MEMORY, mem_avg)):
            col = snap.res_index.get(res)
            if col is None:
                continue
            known = ~np.isnan(pct)
            measured = np.floor(np.where(known, pct, 0.0) * snap.alloc[rows, col] / 100.0).astype(np.int64)
            out[res] = np.where(known, np.maximum(measured, 0), snap.requested[rows, col])
        return out

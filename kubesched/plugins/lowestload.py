"""LowestLoad: prefer the node with the lowest load once the pod is on it.

Load is the requested share of allocatable (``mode: Requested``): for every listed resource,
``min(requested + pod, allocatable) * 100 // allocatable`` on the node's real requests (no
100m/200Mi scoring defaults), averaged with the resource weights (integer division). Score =
100 - load, in [0, 100]. Unlike NodeResourcesFit's LeastAllocated it reads real requests, counts
a resource whether or not the pod asks for it, and gives 0 (not a free pass) to a node offering
none of the listed resources. ``mode: Measured`` (utilization from Prometheus) comes with the
LoadAware work of issue 6 and is rejected for now. Not enabled by default.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from kubesched.errors import InputError, join_path
from kubesched.framework.interfaces import MAX_NODE_SCORE, ScorePlugin

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


def args_body(name: str, args: Mapping[str, Any] | None, allowed: Sequence[str]) -> dict[str, Any]:
    """The args without their optional apiVersion/kind envelope; unknown fields are errors.

    The config layer passes the args of non-upstream plugins through raw, so each plugin checks
    its own envelope and fields (paths start at ``<Name>Args``).
    """
    root = f"{name}Args"
    if args is None:
        return {}
    if not isinstance(args, Mapping):
        raise InputError(f"expected an object, got {type(args).__name__}", path=root)
    body = dict(args)
    body.pop("apiVersion", None)
    kind = body.pop("kind", None)
    if kind is not None and kind != root:
        raise InputError(
            f'invalid value "{kind}": has to match plugin args "{root}"', path=join_path(root, "kind")
        )
    for key in body:
        if key not in allowed:
            raise InputError(
                f'unknown field "{key}" (known: {", ".join(allowed)})', path=join_path(root, str(key))
            )
    return body


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
                f"invalid value {weight!r}: must be an integer in [1, 100]", path=join_path(ip, "weight")
            )
        out.append(LoadResource(name, weight))
    return tuple(out)


def free_score(snap: Snapshot, rows: np.ndarray, pod: Pod, resources: Sequence[LoadResource]) -> np.ndarray:
    """100 - weighted mean requested share (with the pod) per row; 0 where no resource is offered."""
    rows = np.asarray(rows, dtype=np.intp)
    n = len(rows)
    total = np.zeros(n, np.int64)
    wsum = np.zeros(n, np.int64)
    for res in resources:
        col = snap.res_index.get(res.name)
        if col is None:
            continue
        alloc = snap.alloc[rows, col]
        used = snap.requested[rows, col] + int(pod.requests.get(res.name, 0))
        on = alloc > 0
        safe = np.where(on, alloc, 1)
        share = np.minimum(used, safe) * MAX_NODE_SCORE // safe  # non-negative operands: Go's division
        total += np.where(on, share * res.weight, 0)
        wsum += np.where(on, res.weight, 0)
    load = total // np.where(wsum == 0, 1, wsum)
    return np.where(wsum == 0, 0, np.clip(MAX_NODE_SCORE - load, 0, MAX_NODE_SCORE)).astype(np.int64)


class LowestLoad(ScorePlugin):
    """Score only; row-local (reads the pod's requests and the node's own row), no normalization."""

    name = NAME
    has_args = True
    row_local = True

    def __init__(self, args: dict[str, Any] | None = None, handle: Handle | None = None) -> None:
        super().__init__(args, handle)
        body = args_body(NAME, self.args, ("resources", "mode"))
        root = f"{NAME}Args"
        mode = body.get("mode", "Requested")
        mpath = join_path(root, "mode")
        if mode == "Measured":
            raise InputError(
                'unsupported value "Measured": measured utilization (Prometheus) comes with the LoadAware '
                'plugins of issue 6; use "Requested"',
                path=mpath,
            )
        if mode != "Requested":
            raise InputError(f'unknown value {mode!r} (supported: "Requested")', path=mpath)
        self.mode: str = mode
        self.resources = parse_load_resources(body.get("resources"), join_path(root, "resources"))

    def score(self, state: CycleState, pod: Pod, snap: Snapshot, rows: np.ndarray) -> np.ndarray:
        return free_score(snap, rows, pod, self.resources)

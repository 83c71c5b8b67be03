"""Per-node plugins: the easy way to write scheduling logic; the framework vectorises the call.

    class LowestLoad(NodeScorePlugin):
        name = "LowestLoad"
        def score_node(self, pod, node) -> int:
            return 100 - 100 * node.requested.get("cpu", 0) // max(node.allocatable.get("cpu", 1), 1)

or, for plain functions, ``score_plugin("LowestLoad")(fn)`` / ``filter_plugin("Name")(fn)``.
``node`` is a NodeInfo (node, pods, requested, allocatable).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np

from kubesched.framework.interfaces import FilterPlugin, ScorePlugin
from kubesched.framework.status import Code, FilterResult, Status

if TYPE_CHECKING:
    from kubesched.api.objects import Pod
    from kubesched.framework.cycle_state import CycleState
    from kubesched.state.snapshot import NodeInfo, Snapshot

FilterVerdict = Status | bool | str | None


def _as_status(v: FilterVerdict) -> Status:
    """True/None/Success pass; False fails; a string fails with that reason."""
    if v is None or v is True:
        return Status()
    if v is False:
        return Status(Code.Unschedulable, ("node(s) didn't pass the filter",))
    if isinstance(v, str):
        return Status(Code.Unschedulable, (v,))
    return v


class NodeFilterPlugin(FilterPlugin):
    """Implement ``filter_node(pod, node) -> Status | bool | str | None``."""

    def filter_node(self, pod: Pod, node: NodeInfo) -> FilterVerdict:
        raise NotImplementedError

    def filter(self, state: CycleState, pod: Pod, snap: Snapshot, rows: np.ndarray) -> FilterResult:
        statuses = [_as_status(self.filter_node(pod, snap.node_info(int(r)))) for r in rows]
        reasons: list[str] = []
        code = np.zeros(len(rows), np.int8)
        bits = np.zeros(len(rows), np.int64)
        for i, st in enumerate(statuses):
            if st.ok:
                continue
            code[i] = int(st.code)
            for r in st.reasons:
                if r not in reasons:
                    reasons.append(r)
                bits[i] |= 1 << reasons.index(r)
        return FilterResult(code, bits, tuple(reasons))


class NodeScorePlugin(ScorePlugin):
    """Implement ``score_node(pod, node) -> int`` in [0, 100] (or override ``normalize``)."""

    def score_node(self, pod: Pod, node: NodeInfo) -> int:
        raise NotImplementedError

    def score(self, state: CycleState, pod: Pod, snap: Snapshot, rows: np.ndarray) -> np.ndarray:
        return np.fromiter((int(self.score_node(pod, snap.node_info(int(r)))) for r in rows), np.int64, len(rows))


def score_plugin(name: str) -> Callable[[Callable[[Pod, NodeInfo], int]], type[NodeScorePlugin]]:
    """Turn ``fn(pod, node) -> int`` into a score plugin class named ``name``."""

    def wrap(fn: Callable[[Pod, NodeInfo], int]) -> type[NodeScorePlugin]:
        def score_node(self: NodeScorePlugin, pod: Pod, node: NodeInfo) -> int:
            return fn(pod, node)

        attrs = {"name": name, "score_node": score_node, "__doc__": fn.__doc__, "__module__": fn.__module__}
        return type(name, (NodeScorePlugin,), attrs)

    return wrap


def filter_plugin(name: str) -> Callable[[Callable[[Pod, NodeInfo], FilterVerdict]], type[NodeFilterPlugin]]:
    """Turn ``fn(pod, node) -> bool | str | Status`` into a filter plugin class named ``name``."""

    def wrap(fn: Callable[[Pod, NodeInfo], FilterVerdict]) -> type[NodeFilterPlugin]:
        def filter_node(self: NodeFilterPlugin, pod: Pod, node: NodeInfo) -> FilterVerdict:
            return fn(pod, node)

        attrs = {"name": name, "filter_node": filter_node, "__doc__": fn.__doc__, "__module__": fn.__module__}
        return type(name, (NodeFilterPlugin,), attrs)

    return wrap

"""Per-node plugins: the easy way to write scheduling logic; the framework vectorises the call.

    class LowestLoad(NodeScorePlugin):
        name = "LowestLoad"
        def score_node(self, pod, node) -> int:
            return 100 - 100 * node.requested.get("cpu", 0) // max(node.allocatable.get("cpu", 1), 1)

or, for plain functions, ``score_plugin("LowestLoad")(fn)`` / ``filter_plugin("Name")(fn)``.
``node`` is a NodeInfo (node, pods, requested, allocatable).

A strategy that picks the node itself subclasses ``NodeSelectorStrategy`` and implements
``select_node(pod, nodes) -> str | None`` (or decorates a function with ``node_selector("Name")``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np

from kubesched.framework.interfaces import FilterPlugin, Plugin, ScorePlugin
from kubesched.framework.status import Code, FilterResult, Status, at_node

if TYPE_CHECKING:
    from kubesched.api.objects import Pod
    from kubesched.framework.cycle_state import CycleState
    from kubesched.state.snapshot import NodeInfo, Snapshot

FilterVerdict = Status | bool | str | None
T = TypeVar("T")
B = TypeVar("B", bound=Plugin)


def _as_status(v: FilterVerdict) -> Status:
    """True/None/Success pass; False fails; a string fails with that reason."""
    if v is None or v is True:
        return Status()
    if v is False:
        return Status(Code.Unschedulable, ("node(s) didn't pass the filter",))
    if isinstance(v, str):
        return Status(Code.Unschedulable, (v,))
    return v


def _per_node(fn: Callable[[Pod, NodeInfo], T], pod: Pod, snap: Snapshot, rows: np.ndarray) -> Iterator[T]:
    """``fn(pod, node)`` for each row; an exception remembers the node it was raised on (the
    Error status names it)."""
    for r in rows:
        info = snap.node_info(int(r))
        try:
            yield fn(pod, info)
        except Exception as e:
            raise at_node(e, info.name) from None


class NodeFilterPlugin(FilterPlugin):
    """Implement ``filter_node(pod, node) -> Status | bool | str | None``."""

    def filter_node(self, pod: Pod, node: NodeInfo) -> FilterVerdict:
        raise NotImplementedError

    def filter(self, state: CycleState, pod: Pod, snap: Snapshot, rows: np.ndarray) -> FilterResult:
        return FilterResult.from_statuses([_as_status(v) for v in _per_node(self.filter_node, pod, snap, rows)])


class NodeScorePlugin(ScorePlugin):
    """Implement ``score_node(pod, node) -> int`` in [0, 100] (or override ``normalize``)."""

    def score_node(self, pod: Pod, node: NodeInfo) -> int:
        raise NotImplementedError

    def score(self, state: CycleState, pod: Pod, snap: Snapshot, rows: np.ndarray) -> np.ndarray:
        return np.fromiter((int(v) for v in _per_node(self.score_node, pod, snap, rows)), np.int64, len(rows))


def _plugin_class(name: str, base: type[B], method: str, fn: Callable[[Pod, Any], Any]) -> type[B]:
    """A subclass of ``base`` named ``name`` whose ``method(self, pod, x)`` returns ``fn(pod, x)``;
    it takes ``fn``'s docstring and module, as the class ``fn`` stands for."""

    def call(self: B, pod: Pod, arg: Any) -> Any:
        return fn(pod, arg)

    call.__name__, call.__qualname__ = method, f"{name}.{method}"
    attrs = {"name": name, method: call, "__doc__": fn.__doc__, "__module__": fn.__module__}
    return type(name, (base,), attrs)


def score_plugin(name: str) -> Callable[[Callable[[Pod, NodeInfo], int]], type[NodeScorePlugin]]:
    """Turn ``fn(pod, node) -> int`` into a score plugin class named ``name``."""
    return lambda fn: _plugin_class(name, NodeScorePlugin, "score_node", fn)


def filter_plugin(name: str) -> Callable[[Callable[[Pod, NodeInfo], FilterVerdict]], type[NodeFilterPlugin]]:
    """Turn ``fn(pod, node) -> bool | str | Status`` into a filter plugin class named ``name``."""
    return lambda fn: _plugin_class(name, NodeFilterPlugin, "filter_node", fn)


class NodeSelectorStrategy(FilterPlugin):
    """Implement ``select_node(pod, nodes) -> str | None``: the node the pod goes to, or None.

    ``nodes`` are the NodeInfos of every node that passes the profile's other filters (resources,
    taints, affinity...), counting the pods of equal or higher priority nominated to it, in
    node-tree order. The adapter is a Filter: the chosen node passes and
    every other node fails as UnschedulableAndUnresolvable (preemption cannot change a choice), so
    only the chosen node is feasible and scores cannot outvote it. None makes the pod
    unschedulable with a reason naming the plugin. The choice is made once per scheduling cycle.
    """

    def select_node(self, pod: Pod, nodes: list[NodeInfo]) -> str | None:
        raise NotImplementedError

    def _choice(self, state: CycleState, pod: Pod, snap: Snapshot) -> str | None:
        key = f"NodeSelectorStrategy/{self.name}"
        cached = state.read(key)
        if cached is not None:
            return cached[0]
        rows = snap.order.astype(np.int32)
        fw = self.handle.framework if self.handle is not None else None
        if fw is not None and rows.size:
            # the other filters' verdicts over every node, with the pods of equal or higher
            # priority nominated to it, as the cycle judges nodes; other strategies are left
            # out (each would ask this one back)
            others = [pl for pl in fw.filter if not isinstance(pl, NodeSelectorStrategy)]
            rows = rows[fw.filter_rows(state, pod, snap, rows, None, only=others)]
        nodes = [snap.node_info(int(r)) for r in rows]
        picked = self.select_node(pod, nodes)
        if picked is not None and not isinstance(picked, str):
            picked = getattr(picked, "name", picked)  # a NodeInfo or Node is accepted too
        if picked is not None and picked not in {n.name for n in nodes}:
            raise ValueError(
                f"select_node returned {picked!r}, which is not one of the {len(nodes)} feasible nodes"
            )
        state.write(key, (picked,))
        return picked

    def filter(self, state: CycleState, pod: Pod, snap: Snapshot, rows: np.ndarray) -> FilterResult:
        picked = self._choice(state, pod, snap)
        n = len(rows)
        if picked is None:
            reason = f"node(s) not chosen by {self.name}: it selected no node"
            return FilterResult.from_mask(np.ones(n, bool), reason, Code.UnschedulableAndUnresolvable)
        chosen = snap.row_of.get(picked, -1)
        reason = f"node(s) not chosen by {self.name}"
        return FilterResult.from_mask(np.asarray(rows) != chosen, reason, Code.UnschedulableAndUnresolvable)


SelectFn = Callable[["Pod", "list[NodeInfo]"], "str | None"]


def node_selector(name: str) -> Callable[[SelectFn], type[NodeSelectorStrategy]]:
    """Turn ``fn(pod, nodes) -> node name | None`` into a strategy plugin class named ``name``."""
    return lambda fn: _plugin_class(name, NodeSelectorStrategy, "select_node", fn)

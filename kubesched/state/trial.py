"""The journal of ``Snapshot.trial()``: what a what-if changed, undone newest first.

Consumers ask "what if this pod were there, or those pods gone" (preemption's dry runs, the
nominated pods' second Filter pass, the autoscaler's simulations, the multicluster estimator,
explaining a pod that is already bound) by changing the live snapshot inside ``with
snap.trial():``. Each change appends one entry here; on exit the entries are undone in reverse
through the snapshot's own methods, and the nodes whose pods were taken away get their pods back
in the order they had (the order victims are considered in).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from kubesched.api.objects import Pod
    from kubesched.state.snapshot import Snapshot

# entry kinds: (ADD_POD, uid), (REMOVE_POD, pod), (ADOPT, orphan pod its node came for),
# (ADD_NODE, name), (UPDATE_NODE, node as it was), (NAMESPACE, name, labels as they were or None)
ADD_POD, REMOVE_POD, ADOPT, ADD_NODE, UPDATE_NODE, NAMESPACE = range(6)


class Trial:
    __slots__ = ("ops", "orders", "parent", "kept")

    def __init__(self, parent: Trial | None) -> None:
        self.ops: list[tuple[Any, ...]] = []
        # node name -> the uids of its pods, in order, before the first pod left it in this trial
        self.orders: dict[str, tuple[str, ...]] = {}
        self.parent = parent  # the enclosing trial, journalling again once this one ends
        self.kept = False

    def keep(self) -> None:
        """Keep this trial's changes when it ends: an enclosing trial takes them over (and
        undoes them with its own); without one they stay."""
        self.kept = True

    def __len__(self) -> int:
        return len(self.ops)

    def removed(self, pod: Pod, on_node: dict[str, Pod]) -> None:
        """``pod`` leaves its node, whose pods are ``on_node`` (still including it)."""
        self.ops.append((REMOVE_POD, pod))
        if pod.node_name not in self.orders:
            self.orders[pod.node_name] = tuple(on_node)

    def close(self, snap: Snapshot) -> None:
        """The end of the block: revert, or hand the kept entries to the enclosing trial."""
        if not self.kept:
            self.revert(snap)
        elif self.parent is not None:
            self.parent.ops.extend(self.ops)
            for name, uids in self.orders.items():
                self.parent.orders.setdefault(name, uids)

    def revert(self, snap: Snapshot) -> None:
        """Undo every entry, newest first (the snapshot journals none of these steps)."""
        for op in reversed(self.ops):
            kind = op[0]
            if kind == ADD_POD:
                snap.remove_pod(op[1])
            elif kind == REMOVE_POD:
                snap.add_pod(op[1])
            elif kind == ADOPT:
                snap.orphans[op[1].uid] = op[1]
            elif kind == ADD_NODE:
                snap.remove_node(op[1])
            elif kind == UPDATE_NODE:
                snap.update_node(op[1])
            elif op[2] is None:
                snap.remove_namespace(op[1])
            else:
                snap.set_namespace(op[1], op[2])
        for name, uids in self.orders.items():
            row = snap.row_of.get(name)
            if row is None:
                continue
            on = snap.pods_on[row]
            order = [u for u in uids if u in on]
            if list(on) != order:
                pods = [on[u] for u in order]
                on.clear()  # in place: readers may hold the dict
                on.update(zip(order, pods, strict=True))
        self.ops.clear()
        self.orders.clear()

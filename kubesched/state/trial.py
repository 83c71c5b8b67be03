"""The journal of ``Snapshot.trial()``: what a what-if changed, undone newest first.

Consumers ask "what if this pod were there, or those pods gone" (preemption's dry runs, the
nominated pods' second Filter pass, the autoscaler's simulations, the multicluster estimator,
explaining a pod that is already bound) by changing the live snapshot inside ``with
snap.trial():``. Each change appends one entry here. On exit each pod touched is put back as it
started through the snapshot's own methods (nothing to do for one taken away and given back, as
most of a preemption dry run's are), the node and namespace entries are undone newest first, and
the nodes whose pods were taken away get their pods back in the order they had (the order
victims are considered in).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from kubesched.api.objects import Pod
    from kubesched.state.snapshot import Snapshot

# entry kinds: (ADD_POD, uid), (REMOVE_POD, pod taken off its node), (REMOVE_ORPHAN, pod),
# (ADOPT, orphan pod its node came for), (ADD_NODE, name), (UPDATE_NODE, node as it was),
# (NAMESPACE, name, labels as they were or None)
ADD_POD, REMOVE_POD, REMOVE_ORPHAN, ADOPT, ADD_NODE, UPDATE_NODE, NAMESPACE = range(7)


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
        """Put every pod the trial touched back as it was, then undo the node and namespace
        entries newest first (the snapshot journals none of these steps). A pod taken away and
        given back (a reprieved victim) is where it was: only its node's order is put back."""
        first: dict[str, tuple[int, Pod | None]] = {}  # uid -> the entry that says how it started
        for op in self.ops:
            kind = op[0]
            if kind == ADD_POD:
                first.setdefault(op[1], (ADD_POD, None))
            elif kind in (REMOVE_POD, REMOVE_ORPHAN, ADOPT):
                first.setdefault(op[1].uid, (kind, op[1]))
        for uid, (kind, pod) in first.items():
            if kind == REMOVE_POD:  # on its node at the start
                if snap.pod_by_uid.get(uid) is not pod:
                    if uid in snap.orphans:
                        snap.remove_pod(uid)
                    snap.add_pod(pod)  # type: ignore[arg-type]  # replaces a placed one itself
            elif kind == ADD_POD:  # not there at the start
                snap.remove_pod(uid)
            elif snap.orphans.get(uid) is not pod or uid in snap.pod_by_uid:  # an orphan at the start
                snap.remove_pod(uid)
                snap.orphans[uid] = pod  # type: ignore[assignment]
        for op in reversed(self.ops):
            kind = op[0]
            if kind == ADD_NODE:
                snap.remove_node(op[1])
            elif kind == UPDATE_NODE:
                snap.update_node(op[1])
            elif kind == NAMESPACE and op[2] is None:
                snap.remove_namespace(op[1])
            elif kind == NAMESPACE:
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

"""Why each row of an entry fails its local filters, kept up to date lazily, so that a pod that
fits nowhere gets its FitError (message, per-node statuses, plugins to requeue on) without a pass
of every filter over every node: only rows whose pods changed since the entry's last such pod are
filtered again, with reasons. The message needs only counts (a ``bincount`` over the records);
the per-node failures are built when first read (``Diagnosis.pending``)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from kubesched.framework.diagnosis import Diagnosis, NodeFailures
from kubesched.framework.status import Code, Status

if TYPE_CHECKING:
    from kubesched.api.objects import Pod
    from kubesched.framework.cycle_state import CycleState
    from kubesched.framework.equivalence.entry import Entry
    from kubesched.framework.runtime import Framework
    from kubesched.state.snapshot import Snapshot

#: The status of every node when failure details are off (``Scheduler.failure_detail``)
NO_DETAIL = Status(Code.Unschedulable, ("node(s) didn't fit the pod (reasons not recorded)",))


class Disagreement(Exception):
    """The records say a row passes where the verdicts said none does (never expected)."""


@dataclass
class Records:
    plugin: np.ndarray  # int16 per row: index into Roles.local_filters of the first rejecting plugin, -1 none
    code: np.ndarray  # int8: that plugin's code
    reason: np.ndarray  # int32: index into ``sets``, the plugin's reasons for the row
    sets: list[tuple[str, ...]]
    ids: dict[tuple[str, ...], int]
    log_pos: int  # Snapshot.changed_rows position the records are current with
    diagnosis: Diagnosis | None = None  # built from the records as they are (shared until a row changes)

    def reason_id(self, reasons: tuple[str, ...], bits: int) -> int:
        """The id in ``sets`` of the reasons that ``bits`` selects (added when new)."""
        chosen = tuple(x for k, x in enumerate(reasons) if bits >> k & 1)
        rid = self.ids.get(chosen)
        if rid is None:
            rid = self.ids[chosen] = len(self.sets)
            self.sets.append(chosen)
        return rid


def diagnose(fw: Framework, pod: Pod, snap: Snapshot, e: Entry, state: CycleState) -> Diagnosis:
    """The Diagnosis the regular path would build for a pod no node fits (every node checked,
    each stopping at its first failing filter), from the entry's records."""
    log = snap.changed_rows
    r = e.records
    if r is None:
        n = snap.n
        r = e.records = Records(np.full(n, -1, np.int16), np.zeros(n, np.int8), np.zeros(n, np.int32), [], {}, 0)
        record(fw, pod, snap, e, state, r, e.verdicts.order, 0)
    elif len(log) > r.log_pos:
        refresh_records(fw, pod, snap, e, state, np.asarray(sorted(set(log[r.log_pos :])), np.int64))
    r.log_pos = len(log)
    if r.diagnosis is not None:
        return r.diagnosis.copy()
    if (r.plugin < 0).any():
        raise Disagreement
    # Rows grouped by (first rejecting plugin, its reasons): counts now, the rows on demand.
    nsets = len(r.sets)
    key = r.plugin.astype(np.int64) * nsets + r.reason
    counts = np.bincount(key)
    present = np.flatnonzero(counts).tolist()
    groups = [(e.roles.local_filters[k // nsets].name, r.sets[k % nsets], k) for k in present]
    hist: Counter[str] = Counter()
    for (_, reasons, _), c in zip(groups, counts[present].tolist(), strict=True):
        for reason in reasons:
            hist[reason] += c
    code = r.code.copy()  # the records change later: the per-node failures read them as now

    def failures() -> list[NodeFailures]:
        out = []
        for name, reasons, k in groups:
            rows = np.flatnonzero(key == k)
            bits = np.full(rows.size, (1 << len(reasons)) - 1, np.int64)
            out.append(NodeFailures(name, rows, code[rows], bits, reasons))
        return out

    names = {name for name, _, _ in groups}
    diag = Diagnosis(unschedulable_plugins=names, histogram=hist, pending=failures, failed=int(key.size), messages={})
    r.diagnosis = diag
    return diag.copy()


def refresh_records(fw: Framework, pod: Pod, snap: Snapshot, e: Entry, state: CycleState, stale: np.ndarray) -> None:
    """Filter ``stale`` rows again with reasons; their verdicts follow from the records."""
    r = e.records
    assert r is not None
    # Filters before the first one that reads a row's pods read the node alone: a row one of
    # them rejected keeps its record (and its verdict), and the others still pass them.
    first = e.roles.first_pod_filter
    if first:
        was = r.plugin[stale]
        keep = (was < 0) | (was >= first)
        if not keep.all():
            stale = stale[keep]
    if not stale.size:
        return
    if record(fw, pod, snap, e, state, r, stale, first):  # some row's reasons changed
        r.diagnosis = None
    e.verdicts.set_ok(stale, r.plugin[stale] < 0)
    e.rescoring.unscored.update(stale.tolist())


def record(
    fw: Framework, pod: Pod, snap: Snapshot, e: Entry, state: CycleState, r: Records, rows: np.ndarray, first: int
) -> bool:
    """Filter ``rows`` (distinct) again from the ``first`` local filter on, with reasons, into
    their records (each row stops at its first failing filter); True when some row's record
    changed. ``state`` is the cycle's (each-cycle plugins' PreFilter state as of now)."""
    rows = rows.astype(np.intp)
    plugin = np.full(rows.size, -1, np.int16)
    code = np.zeros(rows.size, np.int8)
    reason = np.zeros(rows.size, np.int32)
    alive = np.arange(rows.size)  # positions of rows no filter rejected yet
    skip = state.skip_filter
    for pi in range(first, len(e.roles.local_filters)):
        pl = e.roles.local_filters[pi]
        if pl.name in skip:
            continue
        res, failed = fw.filter_plugin(pl, state, pod, snap, rows if alive.size == rows.size else rows[alive])
        if failed is None:
            continue
        at = alive[failed]
        plugin[at] = pi
        code[at] = res.code[failed]
        bits = res.reason_bits[failed]
        b0 = int(bits[0])
        if (bits == b0).all():  # the common case: one reason set for every failed row
            reason[at] = r.reason_id(res.reasons, b0)
        else:
            values, inverse = np.unique(bits, return_inverse=True)
            ids = np.fromiter((r.reason_id(res.reasons, int(b)) for b in values.tolist()), np.int32, values.size)
            reason[at] = ids[inverse]
        alive = alive[~failed]
        if not alive.size:
            break
    changed = not (
        np.array_equal(plugin, r.plugin[rows])
        and np.array_equal(code, r.code[rows])
        and np.array_equal(reason, r.reason[rows])
    )
    r.plugin[rows], r.code[rows], r.reason[rows] = plugin, code, reason
    return changed

"""Equivalence cache: pods with equal scheduling signatures reuse per-node verdicts.

Most pods of a workload are copies of one template. When every enabled filter and score
plugin judges a node from that node's row alone (``Plugin.row_local``), a pod's filter
verdicts and raw scores for all nodes can be kept and only rows whose pods changed since
(``Snapshot.changed_rows``) need to be judged again — and only when they fall inside the
window of nodes the cycle examines. Normalisation, weights, the adaptive node count, the
rotating start index and the seeded tie-break run exactly as in the regular cycle, so the
placements are the same; ``tests/framework/test_equivalence.py`` checks that.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from kubesched.framework.cycle_state import CycleState
from kubesched.framework.interfaces import ScorePlugin
from kubesched.framework.status import Code

if TYPE_CHECKING:
    from kubesched.api.objects import Pod
    from kubesched.framework.runtime import Framework
    from kubesched.state.snapshot import Snapshot

MAX_ENTRIES = 32


@dataclass
class Entry:
    structure: int
    log_pos: int
    state: CycleState
    ok: np.ndarray  # bool per row: passes every filter
    raw: dict[str, np.ndarray]  # score plugin -> raw score per row (valid where ok)
    static: np.ndarray  # weighted sum of the scores that need no normalisation, per row
    order: np.ndarray  # evaluation order of rows (snapshot.order at build time)
    csum: np.ndarray = field(default_factory=lambda: np.zeros(1, np.int64))  # prefix sums of ok[order]
    pos: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))  # row -> position in order
    dirty: set[int] = field(default_factory=set)  # rows whose pods changed since their verdicts
    unscored: set[int] = field(default_factory=set)  # rows filtered again but not scored again

    def reindex(self) -> None:
        c = np.zeros(len(self.order) + 1, np.int64)
        np.cumsum(self.ok[self.order], out=c[1:])
        self.csum = c


@dataclass
class Window:
    rows: np.ndarray  # feasible rows in evaluation order
    processed: int
    total: np.ndarray | None  # weighted totals for rows (None when fewer than 2 rows)
    per_plugin: dict[str, tuple[np.ndarray, np.ndarray, int]]
    state: CycleState


def _normalizes(pl: object) -> bool:
    return type(pl).normalize is not ScorePlugin.normalize


class EquivalenceCache:
    def __init__(self) -> None:
        self._entries: OrderedDict[tuple, Entry] = OrderedDict()
        self.hits = 0
        self.misses = 0
        self.keep_details = False  # per-plugin scores in the Window (explain-style output)

    def clear(self) -> None:
        self._entries.clear()

    def _build(self, fw: Framework, pod: Pod, snap: Snapshot) -> Entry | None:
        """PreFilter + PreScore once, then filter and raw-score every node."""
        for pl in (*fw.filter, *fw.score):
            if not pl.row_local and not pl.may_skip(pod, snap):
                return None
        state = CycleState()
        names, st, _with_nodes, _ = fw.run_pre_filter(state, pod, snap)
        if not st.ok:
            return None
        if not all(pl.row_local or pl.name in state.skip_filter for pl in fw.filter):
            return None
        if names is None:
            order = np.asarray(snap.order, np.int64)
        else:  # PreFilter narrowed the candidates (by the pod's own terms, as row-local plugins do)
            chosen = snap.rows_of(names).astype(np.int64)
            order = chosen[np.argsort(snap.order_positions[chosen], kind="stable")]
        rows = order.astype(np.int32)
        ok = np.zeros(snap.n, bool)
        ok[rows] = fw.filter_rows_plain(state, pod, snap, rows, None)
        rows = np.arange(snap.n, dtype=np.int32)
        skip: set[str] = set()
        for pl in fw.pre_score:
            out = pl.pre_score(state, pod, snap, rows[ok])
            if out is not None and out.code == Code.Skip:
                skip.add(pl.name)
            elif out is not None and not out.ok:
                return None
        state.skip_score = skip
        if not all(pl.row_local or pl.name in skip for pl in fw.score):
            return None
        raw: dict[str, np.ndarray] = {}
        feas = rows[ok]
        static = np.zeros(snap.n, np.int64)
        for pl in fw.score:
            if pl.name in skip:
                continue
            arr = np.zeros(snap.n, np.int64)
            if feas.size:
                arr[feas] = np.asarray(pl.score(state, pod, snap, feas), np.int64)
            raw[pl.name] = arr
            if not _normalizes(pl):
                static += arr * fw.score_weights.get(pl.name, 1)
        e = Entry(snap.structure, len(snap.changed_rows), state, ok, raw, static, order)
        e.pos = np.full(snap.n, -1, np.int64)  # -1: not a candidate
        e.pos[order] = np.arange(len(order))
        e.reindex()
        return e

    def _refresh(self, fw: Framework, pod: Pod, snap: Snapshot, e: Entry, rows: np.ndarray) -> None:
        """Filter stale rows again now; their scores only when a window needs them."""
        e.ok[rows] = fw.filter_rows_plain(e.state, pod, snap, rows, None)
        e.unscored.update(rows.tolist())
        e.reindex()

    def _rescore(self, fw: Framework, pod: Pod, snap: Snapshot, e: Entry) -> None:
        rows = np.fromiter(e.unscored, np.int64, len(e.unscored))
        e.unscored.clear()
        feas = rows[e.ok[rows]].astype(np.int32)
        if not feas.size:
            return
        e.static[feas] = 0
        for name, arr in e.raw.items():
            pl = fw.plugins[name]
            arr[feas] = np.asarray(pl.score(e.state, pod, snap, feas), np.int64)  # type: ignore[attr-defined]
            if not _normalizes(pl):
                e.static[feas] += arr[feas] * fw.score_weights.get(name, 1)

    def lookup(
        self,
        fw: Framework,
        pod: Pod,
        snap: Snapshot,
        start: int,
        num_to_find: Callable[[int], int],
        has_scoring: bool,
    ) -> Window | None:
        """The cycle's feasible window and scores, or None when this pod cannot use the cache."""
        sig = pod.signature()
        if sig is None:
            return None
        key = (fw.profile_name, sig)
        e = self._entries.get(key)
        if e is not None and e.structure != snap.structure:
            e = None
        if e is None:
            self.misses += 1
            e = self._build(fw, pod, snap)
            if e is None:
                return None
            self._entries[key] = e
            if len(self._entries) > MAX_ENTRIES:
                self._entries.popitem(last=False)
        else:
            self.hits += 1
            self._entries.move_to_end(key)
            log = snap.changed_rows
            if len(log) > e.log_pos:
                e.dirty.update(log[e.log_pos :])
            e.log_pos = len(log)
        n = len(e.order)
        if n == 0:
            return None
        k = num_to_find(n)
        s = start % n
        c = e.csum
        while True:
            after = int(c[n] - c[s])  # feasible nodes from the start index to the end
            if after >= k:
                cut = int(np.searchsorted(c, c[s] + k, side="left")) - s
            elif int(c[n]) >= k:
                cut = (n - s) + int(np.searchsorted(c, k - after, side="left"))
            else:
                cut = n
            if e.dirty:
                stale = np.fromiter(e.dirty, np.int64, len(e.dirty))
                p = e.pos[stale]
                if ((p >= 0) & (((p - s) % n) < cut)).any():
                    # Refresh every stale candidate at once: the others would be needed by later
                    # windows anyway, and one batched call costs about what one row costs.
                    e.dirty.clear()
                    self._refresh(fw, pod, snap, e, stale[p >= 0].astype(np.int32))
                    c = e.csum
                    continue
            break
        order = e.order
        if s + cut <= n:
            span = order[s : s + cut]
        else:
            span = np.concatenate((order[s:], order[: s + cut - n]))
        window = span[e.ok[span]]
        if window.size < 2 or not has_scoring:
            return Window(window, cut, None, {}, e.state)
        if e.unscored:
            self._rescore(fw, pod, snap, e)
        total = e.static[window]
        per: dict[str, tuple[np.ndarray, np.ndarray, int]] = {}
        for pl in fw.score:
            arr = e.raw.get(pl.name)
            if arr is None:
                continue
            raw = arr[window]
            w = fw.score_weights.get(pl.name, 1)
            if _normalizes(pl):
                norm = pl.normalize(e.state, pod, raw.copy())
                norm = raw if norm is None else np.asarray(norm, np.int64)
                total = total + norm * w
            else:
                norm = raw
            if self.keep_details:
                per[pl.name] = (raw, norm, w)
        return Window(window, cut, total, per, e.state)

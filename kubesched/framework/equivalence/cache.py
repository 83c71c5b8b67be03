"""The equivalence cache: ``find_feasible`` and ``score`` for pods the profile's plugins sign.

An entry is kept per (profile, ``Pod.signature()``, the Signatures of the signers whose answer
is not a constant, ``Framework.sign``): the local plugins' verdicts and raw scores per node
(``entry``). A cycle refreshes the rows whose pods changed when its window reaches them, runs the
plugins that do not sign the pod fresh (PreFilter on the whole snapshot, Filter on the candidates
the kept verdicts let through, PreScore/Score on the window), and returns what the regular cycle
would: the adaptive node count, the rotating start index, weights, the FitError of a pod that
fits nowhere (``records``). Anything the cache cannot answer the same way (a rejection, narrowing
by a fresh plugin, a plugin error) returns None, and the regular path runs. Every plugin call
goes through ``Framework.call`` (or, unobserved, its guard: ``Framework.sign``, ``passes_rows``).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from kubesched.framework.diagnosis import Diagnosis
from kubesched.framework.equivalence.entry import Entry, build, normalizes, refresh, rescore
from kubesched.framework.equivalence.records import NO_DETAIL, Disagreement, diagnose, refresh_records
from kubesched.framework.scoring import Scores, check_score_range
from kubesched.framework.status import Code, PreFilterResult

if TYPE_CHECKING:
    from kubesched.api.objects import Pod
    from kubesched.framework.cycle_state import CycleState
    from kubesched.framework.runtime import Framework
    from kubesched.state.snapshot import Snapshot

# Entries kept (least recently used dropped first): as many as fit in ENTRY_BUDGET bytes at about
# ENTRY_BYTES_PER_NODE per node, within [MIN_ENTRIES, MAX_ENTRIES]. Traces with a hundred or more
# distinct pod shapes (the openb trace has 151) thrash a small cache.
MIN_ENTRIES, MAX_ENTRIES = 32, 1024
ENTRY_BUDGET = 64 << 20
ENTRY_BYTES_PER_NODE = 96


def entry_limit(nodes: int) -> int:
    return max(MIN_ENTRIES, min(MAX_ENTRIES, ENTRY_BUDGET // (ENTRY_BYTES_PER_NODE * max(nodes, 1))))


class _Fallback(Exception):
    """This cycle needs the regular path (a rejection, narrowing, or an out-of-range score)."""


@dataclass
class Batch:
    """The window ``find_feasible`` found (the nodes examined, the feasible rows, why none fits),
    and what ``score`` needs to score it."""

    entry: Entry
    state: CycleState
    rows: np.ndarray  # feasible rows in evaluation order
    examined: int  # nodes a sequential scheduler would have examined (the start index's step)
    fresh: bool  # plugins that do not sign the pod take part this cycle
    in_order: bool  # rows ascend in node order (the window did not wrap around)
    diagnosis: Diagnosis | None = None  # set when no node fits


class EquivalenceCache:
    def __init__(self) -> None:
        self._entries: OrderedDict[tuple, Entry] = OrderedDict()
        self.hits = 0
        self.misses = 0
        self.diagnosed = 0  # pods that fit nowhere, their FitError built from the records
        self.each_cycle = 0  # cycles served by an entry with a plugin whose PreFilter runs each cycle
        self._last: Entry | None = None  # the most recently used entry
        self.keep_details = False  # per-plugin scores in the Scores (explain-style output)
        self._zero_norm: dict[tuple[Any, int], np.ndarray | int] = {}

    def clear(self) -> None:
        self._entries.clear()
        self._last = None

    # ---- find feasible nodes ----------------------------------------------------------------
    def find_feasible(
        self,
        fw: Framework,
        pod: Pod,
        snap: Snapshot,
        start: int,
        num_to_find: Callable[[int], int],
        detail: bool = True,
    ) -> Batch | None:
        """The cycle's feasible window, as the regular path finds it, or None when it must run.
        ``detail`` False: a pod no node fits gets a Diagnosis without per-node reasons."""
        try:
            return self._find_feasible(fw, pod, snap, start, num_to_find, detail)
        except Exception:  # noqa: BLE001 - a plugin failed (or a disagreement): the regular path reports it
            self.clear()
            return None

    def _find_feasible(
        self, fw: Framework, pod: Pod, snap: Snapshot, start: int, num_to_find: Callable[[int], int], detail: bool
    ) -> Batch | None:
        sig = pod.signature()
        if sig is None:
            return None
        signatures = fw.sign(pod, snap)
        key = (fw.profile_name, sig, signatures)
        e = self._entries.get(key)
        if e is not None and e.structure != snap.structure:
            e = None
        fresh_build = e is None
        failed_last = False
        if e is None:
            self.misses += 1
            e = build(fw, pod, snap, fw.signed(signatures))
            if e is None:
                return None
            self._entries[key] = e
            self._entries.move_to_end(key)  # a rebuilt entry keeps its old place otherwise
            if len(self._entries) > entry_limit(snap.n):
                self._entries.popitem(last=False)
        else:
            self.hits += 1
            if e is not self._last:  # already the most recent: skip hashing the key again
                self._entries.move_to_end(key)
            log = snap.changed_rows
            # The entry's last pod fit nowhere: this one likely will not either, so its stale rows
            # are judged with reasons right away (the records give the verdicts too) instead of
            # twice, once for the verdicts and once more for the FitError.
            failed_last = detail and e.records is not None and e.records.log_pos == e.log_pos
            if len(log) > e.log_pos:
                e.dirty.update(log[e.log_pos :])
            e.log_pos = len(log)
        self._last = e
        n = len(e.order)
        if n == 0:
            return None
        try:
            state, fresh = self._cycle_state(fw, pod, snap, e, rerun=not fresh_build)
        except _Fallback:
            return None
        if e.each_cycle:
            self.each_cycle += 1
        k = num_to_find(n)
        s = start % n
        filters = []
        if fresh:  # fresh filters that take part and may reject some node
            skip = state.skip_filter
            filters = [
                pl
                for pl in e.fresh_filter
                if pl.name not in skip and not fw.call(pl, "Sign", pl.passes_everywhere, state, pod, snap)
            ]
        if filters:
            window, cut = self._window_fresh(fw, pod, snap, e, state, filters, s, k)
            if window.size == 0 and n == snap.n and not detail:
                # no node fits and nobody reads why: the regular path would only filter again
                return Batch(e, state, window, cut, fresh, True, Diagnosis(absent_status=NO_DETAIL))
        else:
            if failed_last and e.dirty and n == snap.n:
                assert e.records is not None
                refresh_records(fw, pod, snap, e, state, np.asarray(sorted(e.dirty), np.int64))
                e.dirty.clear()
                e.records.log_pos = e.log_pos
            window, cut = self._window_cached(fw, pod, snap, e, state, s, k)
            if window.size == 0 and n == snap.n:
                self.diagnosed += detail
                diag = diagnose(fw, pod, snap, e, state) if detail else Diagnosis(absent_status=NO_DETAIL)
                return Batch(e, state, window, cut, fresh, True, diag)
        if window.size == 0:
            return None  # narrowed by PreFilter: the regular path words the FitError
        return Batch(e, state, window, cut, fresh, s + cut <= n)  # e.order ascends in node order

    def _refresh_in(
        self, fw: Framework, pod: Pod, snap: Snapshot, e: Entry, state: CycleState, s: int, lo: int, hi: int
    ) -> bool:
        """Refresh stale rows if any sits at rotated positions [lo, hi); True if it did."""
        if not e.dirty:
            return False
        n = len(e.order)
        stale = np.fromiter(e.dirty, np.intp, len(e.dirty))
        p = e.pos[stale]
        rel = (p - s) % n
        if not ((p >= 0) & (rel >= lo) & (rel < hi)).any():
            return False
        # Refresh every stale candidate at once: the others would be needed by later windows
        # anyway, and one batched call costs about what one row costs.
        e.dirty.clear()
        refresh(fw, pod, snap, e, state, stale[p >= 0])
        return True

    def _cycle_state(self, fw: Framework, pod: Pod, snap: Snapshot, e: Entry, rerun: bool) -> tuple[CycleState, bool]:
        """(state, fresh): the entry's state, or (plugins that do not sign the pod, or PreFilters
        signed to run each cycle) a fork of it with those PreFilters run now (``rerun``: not
        already run by the entry's build). Cached entries are shared read-only."""
        each_cycle = e.each_cycle if rerun else None
        if not e.fresh_plugins and not each_cycle:
            return e.state, False
        state = e.state.fork()
        state.skip_score = set(e.local_skip_score)
        if each_cycle:
            state.skip_filter.difference_update([pl.name for pl in each_cycle])
            self._pre_filter(fw, each_cycle, state, pod, snap)
        if not e.fresh_plugins:
            return state, False
        if rerun:
            state.skip_filter.difference_update([pl.name for pl in e.fresh_pre_filter])
            self._pre_filter(fw, e.fresh_pre_filter, state, pod, snap)
        return state, True

    @staticmethod
    def _pre_filter(fw: Framework, plugins: list[Any], state: CycleState, pod: Pod, snap: Snapshot) -> None:
        """PreFilter of ``plugins`` into ``state``; a Skip adds the plugin to its skip set.
        Narrowing or a rejection needs the regular path."""
        for pl in plugins:
            out = fw.call(pl, "PreFilter", pl.pre_filter, state, pod, snap)
            st = out.status if isinstance(out, PreFilterResult) else out
            if isinstance(out, PreFilterResult) and out.node_names is not None:
                raise _Fallback
            if st is None or st.ok:
                continue
            if st.code == Code.Skip:
                state.skip_filter.add(pl.name)
                continue
            raise _Fallback

    def _window_cached(
        self, fw: Framework, pod: Pod, snap: Snapshot, e: Entry, state: CycleState, s: int, k: int
    ) -> tuple[np.ndarray, int]:
        """First k rows passing the kept verdicts, by prefix sums (no plugin runs)."""
        n = len(e.order)
        order = e.order
        if k >= n:  # every feasible row (percentageOfNodesToScore 100, small clusters)
            if e.dirty:
                stale = np.fromiter(e.dirty, np.intp, len(e.dirty))
                e.dirty.clear()
                if n != snap.n:  # rows the entry does not cover (PreFilter narrowed it) are left out
                    stale = stale[e.pos[stale] >= 0]
                if stale.size:
                    refresh(fw, pod, snap, e, state, stale)
            if e.feasible is None or e.feasible_start != s:
                if s == 0 and e.identity:
                    e.feasible = e.ok.nonzero()[0]  # ok is 1-D: flatnonzero without its Python wrappers
                else:
                    span = order if s == 0 else np.concatenate((order[s:], order[:s]))
                    e.feasible = span[e.ok[span]]
                e.feasible_start = s
            return e.feasible, n
        while True:
            if e.csum_stale:
                e.reindex()
            c = e.csum
            after = int(c[n] - c[s])  # feasible nodes from the start index to the end
            if after >= k:
                cut = int(np.searchsorted(c, c[s] + k, side="left")) - s
            elif int(c[n]) >= k:
                cut = (n - s) + int(np.searchsorted(c, k - after, side="left"))
            else:
                cut = n
            if not self._refresh_in(fw, pod, snap, e, state, s, 0, cut):
                break
        span = order[s : s + cut] if s + cut <= n else np.concatenate((order[s:], order[: s + cut - n]))
        return span[e.ok[span]], cut

    def _window_fresh(
        self, fw: Framework, pod: Pod, snap: Snapshot, e: Entry, state: CycleState, filters: list[Any], s: int, k: int
    ) -> tuple[np.ndarray, int]:
        """First k rows passing the kept verdicts and, run now, the other filters."""
        n = len(e.order)
        found: list[np.ndarray] = []
        nfound, lo = 0, 0
        chunk = max(64, k + k // 4)
        while lo < n and nfound < k:
            hi = min(n, lo + chunk)
            self._refresh_in(fw, pod, snap, e, state, s, lo, hi)
            a, b = s + lo, s + hi  # rotated positions [lo, hi): one slice, or two when it wraps
            if b <= n:
                rows = e.order[a:b]
            else:
                rows = np.concatenate((e.order[min(a, n) : n], e.order[max(a - n, 0) : b - n]))
            at = np.flatnonzero(e.ok[rows])
            cand = rows[at]
            if cand.size:
                passed = fw.filter_rows(state, pod, snap, cand, None, nominated=False, only=filters)
            else:
                passed = cand.astype(bool)
            at, cand = at[passed], cand[passed]
            need = k - nfound
            if cand.size >= need:
                found.append(cand[:need])
                return np.concatenate(found), lo + int(at[need - 1]) + 1
            found.append(cand)
            nfound += int(cand.size)
            lo = hi
            chunk *= 2
        return (np.concatenate(found) if found else np.zeros(0, np.intp)), n

    # ---- score ------------------------------------------------------------------------------
    def score(self, fw: Framework, pod: Pod, snap: Snapshot, batch: Batch) -> Scores | None:
        """PreScore, Score, NormalizeScore and weights over the batch's rows, as the regular path
        computes them, or None when it must run (a plugin failed, a score out of range)."""
        try:
            return self._score(fw, pod, snap, batch)
        except Exception:  # noqa: BLE001 - the regular path reports it
            self.clear()
            return None

    def _score(self, fw: Framework, pod: Pod, snap: Snapshot, batch: Batch) -> Scores:
        e, state, window = batch.entry, batch.state, batch.rows
        if e.unscored:
            rescore(fw, pod, snap, e, state)
        skip: set[str] | frozenset[str] = e.skip_without_fresh
        if batch.fresh:
            skip = set(e.local_skip_score) | fw.run_pre_score(state, pod, snap, window, e.fresh_pre_score)
            state.skip_score = skip
        total: np.ndarray | int | None = e.static[window] if e.has_static else None
        per: dict[str, tuple[np.ndarray, np.ndarray, int]] = {}
        details = self.keep_details
        for pl, w in e.scorers:
            arr = e.raw.get(pl.name)
            if arr is not None:
                if pl.name in e.zero_raw:
                    norm = self._zero_normalized(fw, pl, state, pod, window.size)
                    total = norm * w if total is None else total + norm * w
                    if details:
                        per[pl.name] = (np.zeros(window.size, np.int64), np.broadcast_to(norm, window.shape), w)
                    continue
                raw = arr[window]
                if not normalizes(pl):
                    if details:
                        per[pl.name] = (raw, raw, w)
                    continue
            elif pl.name in skip:
                continue
            else:
                raw = np.asarray(fw.call(pl, "Score", pl.score, state, pod, snap, window), np.int64)
            norm = fw.normalize(pl, state, pod, raw)
            check_score_range(pl, norm)
            total = norm * w if total is None else total + norm * w
            if details:
                per[pl.name] = (raw, norm, w)
        if not isinstance(total, np.ndarray):  # no plugin scored, or only constant ones
            total = np.full(window.size, 0 if total is None else total, np.int64)
        return Scores(window, total, per, batch.in_order)

    def _zero_normalized(self, fw: Framework, pl: Any, state: CycleState, pod: Pod, size: int) -> np.ndarray | int:
        """``pl``'s normalised scores of ``size`` zero raw scores (an int when all equal)."""
        key = (pl, size)
        hit = self._zero_norm.get(key)
        if hit is None:
            norm = fw.normalize(pl, state, pod, np.zeros(size, np.int64))
            check_score_range(pl, norm)
            if len(self._zero_norm) >= 4096:
                self._zero_norm.clear()
            hit = int(norm[0]) if norm.size and (norm == norm[0]).all() else norm
            if isinstance(hit, np.ndarray):
                hit.flags.writeable = False
            self._zero_norm[key] = hit
        return hit


__all__ = ["Batch", "Disagreement", "EquivalenceCache", "NO_DETAIL"]

"""The equivalence cache: the feasible window, verdicts and raw scores for pods the profile's
plugins sign.

An entry is kept per (profile, ``Pod.signature()``, the Signatures of the signers whose answer
is not a constant, ``Framework.sign``): the local plugins' verdicts and raw scores per node
(``entry``). A cycle refreshes the rows whose pods changed when its window reaches them, runs the
plugins that do not sign the pod fresh (PreFilter on the whole snapshot, Filter on the candidates
the kept verdicts let through), and returns what the regular cycle would: the adaptive node
count, the rotating start index, the FitError of a pod that fits nowhere (``records``).
``Framework.run_score`` then scores the window with the kept raw scores (``KnownScores``), calling
only the plugins that do not sign the pod. On a miss the cycle's PreFilter runs once, into the
entry's state; when no entry can be made (a rejection, narrowing by a fresh plugin) the regular
path goes on from that PreFilter. A hit the cache cannot answer the same way (a fresh plugin
rejects or narrows, a plugin fails) returns None and the regular path runs. Every plugin call
goes through ``Framework.call`` (or, unobserved, its guard: ``Framework.sign``, ``passes_rows``).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from kubesched.framework.diagnosis import Diagnosis
from kubesched.framework.equivalence.entry import Entry, build, refresh, rescore
from kubesched.framework.equivalence.records import NO_DETAIL, Disagreement, diagnose, refresh_records
from kubesched.framework.scoring import KnownScores
from kubesched.framework.status import Code, PreFilterResult

if TYPE_CHECKING:
    from kubesched.api.objects import Pod
    from kubesched.framework.cycle_state import CycleState
    from kubesched.framework.runtime import Framework, PreFiltered
    from kubesched.state.snapshot import Snapshot

# Entries kept (least recently used dropped first): as many as fit in ENTRY_BUDGET bytes at about
# ENTRY_BYTES_PER_NODE per node, within [MIN_ENTRIES, MAX_ENTRIES]. Traces with a hundred or more
# distinct pod shapes (the openb trace has 151) thrash a small cache.
MIN_ENTRIES, MAX_ENTRIES = 32, 1024
ENTRY_BUDGET = 64 << 20
ENTRY_BYTES_PER_NODE = 96


def entry_limit(nodes: int) -> int:
    return max(MIN_ENTRIES, min(MAX_ENTRIES, ENTRY_BUDGET // (ENTRY_BYTES_PER_NODE * max(nodes, 1))))


_FEW_ROWS = 16  # stale rows checked one by one against a window (numpy for more)


class _Fallback(Exception):
    """This cycle needs the regular path (a rejection, narrowing, or an out-of-range score)."""


@dataclass
class Batch:
    """The window ``find_feasible`` found (the nodes examined, the feasible rows, why none fits),
    and the entry whose raw scores ``known_scores`` supplies for it."""

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

    def clear(self) -> None:
        self._entries.clear()
        self._last = None

    # ---- find feasible nodes ----------------------------------------------------------------
    def find_feasible(
        self,
        fw: Framework,
        state: CycleState,
        pod: Pod,
        snap: Snapshot,
        start: int,
        num_to_find: Callable[[int], int],
        detail: bool = True,
    ) -> Batch | PreFiltered | None:
        """The cycle's feasible window, as the regular path finds it; or, on a miss no entry can
        be made for, the PreFilter run into ``state`` (the regular path goes on from it); or
        None (a hit the cache cannot answer, an unsigned pod: the regular path runs, ``state``
        untouched). ``detail`` False: a pod no node fits gets a Diagnosis without per-node reasons."""
        sig = pod.signature()
        if sig is None:
            return None
        try:
            signatures = fw.sign(pod, snap)
        except Exception:  # noqa: BLE001 - a signer failed: the regular path does not sign
            self.clear()
            return None
        key = (fw.profile_name, sig, signatures)
        e = self._entries.get(key)
        if e is not None and e.structure != snap.structure:
            e = None
        pre: PreFiltered | None = None
        if e is None:
            self.misses += 1
            pre = fw.run_pre_filter(state, pod, snap)  # the cycle's one PreFilter (its errors are the cycle's)
            try:
                e = build(fw, pod, snap, state, pre, fw.signed(signatures))
            except Exception:  # noqa: BLE001 - a plugin failed on some node: the regular path says where
                self.clear()
                return pre
            if e is None:
                return pre
            self._keep(key, e, snap.n)
        else:
            self.hits += 1
            if e is not self._last:  # already the most recent: skip hashing the key again
                self._entries.move_to_end(key)
            self._last = e
        try:
            found = self._window(fw, pod, snap, e, start, num_to_find, detail, rerun=pre is None)
        except Exception:  # noqa: BLE001 - a plugin failed (or a disagreement): the regular path reports it
            self.clear()
            found = None
        if found is None and pre is not None:  # the regular path goes on in the cycle's state: no entry may share it
            self._entries.pop(key, None)
            self._last = None
            return pre
        return found

    def _keep(self, key: tuple, e: Entry, nodes: int) -> None:
        self._entries[key] = e
        self._entries.move_to_end(key)  # a rebuilt entry keeps its old place otherwise
        if len(self._entries) > entry_limit(nodes):
            self._entries.popitem(last=False)
        self._last = e

    def _window(
        self,
        fw: Framework,
        pod: Pod,
        snap: Snapshot,
        e: Entry,
        start: int,
        num_to_find: Callable[[int], int],
        detail: bool,
        rerun: bool,
    ) -> Batch | None:
        """The window from entry ``e`` (``rerun``: a hit, the entry's stale rows and fresh
        PreFilters are brought up to date), or None when the regular path must run."""
        v = e.verdicts
        failed_last = False
        if rerun:
            log = snap.changed_rows
            # The entry's last pod fit nowhere: this one likely will not either, so its stale rows
            # are judged with reasons right away (the records give the verdicts too) instead of
            # twice, once for the verdicts and once more for the FitError.
            failed_last = detail and e.records is not None and e.records.log_pos == e.log_pos
            if len(log) > e.log_pos:
                v.dirty.update(log[e.log_pos :])
            e.log_pos = len(log)
        n = len(v.order)
        if n == 0:
            return None
        try:
            state, fresh = self._cycle_state(fw, pod, snap, e, rerun)
        except _Fallback:
            return None
        if e.roles.each_cycle:
            self.each_cycle += 1
        k = num_to_find(n)
        s = start % n
        filters = []
        if fresh:  # fresh filters that take part and may reject some node
            skip = state.skip_filter
            filters = [
                pl
                for pl in e.roles.fresh_filter
                if pl.name not in skip and not fw.call(pl, "Sign", pl.passes_everywhere, state, pod, snap)
            ]
        if filters:
            window, cut = self._window_fresh(fw, pod, snap, e, state, filters, s, k)
            if window.size == 0 and n == snap.n and not detail:
                # no node fits and nobody reads why: the regular path would only filter again
                return Batch(e, state, window, cut, fresh, True, Diagnosis(absent_status=NO_DETAIL))
        else:
            if failed_last and v.dirty and n == snap.n:
                assert e.records is not None
                refresh_records(fw, pod, snap, e, state, np.asarray(sorted(v.dirty), np.int64))
                v.dirty.clear()
                e.records.log_pos = e.log_pos
            window, cut = self._window_cached(fw, pod, snap, e, state, s, k)
            if window.size == 0 and n == snap.n:
                self.diagnosed += detail
                diag = diagnose(fw, pod, snap, e, state) if detail else Diagnosis(absent_status=NO_DETAIL)
                return Batch(e, state, window, cut, fresh, True, diag)
        if window.size == 0:
            return None  # narrowed by PreFilter: the regular path words the FitError
        return Batch(e, state, window, cut, fresh, s + cut <= n)  # the order ascends in node order

    def _refresh_in(
        self, fw: Framework, pod: Pod, snap: Snapshot, e: Entry, state: CycleState, s: int, lo: int, hi: int
    ) -> bool:
        """Refresh stale rows if any sits at rotated positions [lo, hi); True if it did."""
        v = e.verdicts
        dirty = v.dirty
        if not dirty:
            return False
        n = len(v.order)
        if len(dirty) <= _FEW_ROWS:  # usually: the rows of the pods bound since; ints beat numpy's call costs
            pos = v.pos
            ident = v.identity
            for row in dirty:
                p = row if ident else pos.item(row)
                if p >= 0 and lo <= (p - s) % n < hi:
                    break
            else:
                return False
        stale = np.fromiter(dirty, np.intp, len(dirty))
        p = v.pos[stale]
        if len(dirty) > _FEW_ROWS:
            rel = (p - s) % n
            if not ((p >= 0) & (rel >= lo) & (rel < hi)).any():
                return False
        # Refresh every stale candidate at once: the others would be needed by later windows
        # anyway, and one batched call costs about what one row costs.
        v.dirty.clear()
        refresh(fw, pod, snap, e, state, stale[p >= 0])
        return True

    def _cycle_state(self, fw: Framework, pod: Pod, snap: Snapshot, e: Entry, rerun: bool) -> tuple[CycleState, bool]:
        """(state, fresh): the entry's state, or (plugins that do not sign the pod, or PreFilters
        signed to run each cycle) a fork of it with those PreFilters run now (``rerun``: not
        already run by the entry's build). Cached entries are shared read-only."""
        each_cycle = e.roles.each_cycle if rerun else None
        if not e.roles.fresh and not each_cycle:
            return e.state, False
        state = e.state.fork()
        state.skip_score = set(e.scores.skip)
        if each_cycle:
            state.skip_filter.difference_update([pl.name for pl in each_cycle])
            self._pre_filter(fw, each_cycle, state, pod, snap)
        if not e.roles.fresh:
            return state, False
        if rerun:
            state.skip_filter.difference_update([pl.name for pl in e.roles.fresh_pre_filter])
            self._pre_filter(fw, e.roles.fresh_pre_filter, state, pod, snap)
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
        v = e.verdicts
        n = len(v.order)
        order = v.order
        if k >= n:  # every feasible row (percentageOfNodesToScore 100, small clusters)
            if v.dirty:
                stale = np.fromiter(v.dirty, np.intp, len(v.dirty))
                v.dirty.clear()
                if n != snap.n:  # rows the entry does not cover (PreFilter narrowed it) are left out
                    stale = stale[v.pos[stale] >= 0]
                if stale.size:
                    refresh(fw, pod, snap, e, state, stale)
            if v.feasible is None or v.feasible_start != s:
                if s == 0 and v.identity:
                    v.feasible = v.ok.nonzero()[0]  # ok is 1-D: flatnonzero without its Python wrappers
                else:
                    span = order if s == 0 else np.concatenate((order[s:], order[:s]))
                    v.feasible = span[v.ok[span]]
                v.feasible_start = s
            return v.feasible, n
        while True:
            if v.csum_stale:
                v.reindex()
            c = v.csum
            after = int(c[n] - c[s])  # feasible nodes from the start index to the end
            if after >= k:
                cut = int(c.searchsorted(c[s] + k, side="left")) - s  # the method: no Python wrapper
            elif int(c[n]) >= k:
                cut = (n - s) + int(c.searchsorted(k - after, side="left"))
            else:
                cut = n
            if not self._refresh_in(fw, pod, snap, e, state, s, 0, cut):
                break
        span = order[s : s + cut] if s + cut <= n else np.concatenate((order[s:], order[: s + cut - n]))
        return span[v.ok[span]], cut

    def _window_fresh(
        self, fw: Framework, pod: Pod, snap: Snapshot, e: Entry, state: CycleState, filters: list[Any], s: int, k: int
    ) -> tuple[np.ndarray, int]:
        """First k rows passing the kept verdicts and, run now, the other filters."""
        v = e.verdicts
        n = len(v.order)
        found: list[np.ndarray] = []
        nfound, lo = 0, 0
        chunk = max(64, k + k // 4)
        while lo < n and nfound < k:
            hi = min(n, lo + chunk)
            self._refresh_in(fw, pod, snap, e, state, s, lo, hi)
            a, b = s + lo, s + hi  # rotated positions [lo, hi): one slice, or two when it wraps
            if b <= n:
                rows = v.order[a:b]
            else:
                rows = np.concatenate((v.order[min(a, n) : n], v.order[max(a - n, 0) : b - n]))
            at = np.flatnonzero(v.ok[rows])
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
    def known_scores(self, fw: Framework, pod: Pod, snap: Snapshot, batch: Batch) -> KnownScores | None:
        """The batch entry's raw scores for ``Framework.run_score``, brought up to date for the rows
        filtered again since they were scored; None when a plugin failed there (the regular path
        scores the window: the failing row may lie outside it)."""
        e = batch.entry
        if e.rescoring.unscored:
            try:
                rescore(fw, pod, snap, e, batch.state)
            except Exception:  # noqa: BLE001 - as above
                self.clear()
                return None
        return e.scores


__all__ = ["Batch", "Disagreement", "EquivalenceCache", "NO_DETAIL"]

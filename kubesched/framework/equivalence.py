"""Equivalence cache: pods with equal scheduling signatures reuse per-node verdicts.

Most pods of a workload are copies of one template. Plugins that judge a node from the pod
and that node's own row (``Plugin.row_local``: resources, taints, node affinity, ports...)
give the same verdicts and raw scores for every copy, so they are kept per signature for
all nodes, and only rows whose pods changed since (``Snapshot.changed_rows``) are judged
again, lazily, when they fall inside the window of nodes a cycle examines.

Plugins that look at other nodes' pods (PodTopologySpread, InterPodAffinity, user plugins)
run fresh every cycle — PreFilter on the whole snapshot, Filter on the candidates the cached
verdicts let through, PreScore/Score/NormalizeScore on the feasible window — exactly as in
the regular cycle. A plugin may say that it is row-local for one pod (``Plugin.row_local_for``:
InterPodAffinity when every term involved has a one-node-per-value topology key); the answers
are part of the key, and such an entry keeps that plugin's verdicts per row like a row-local
plugin's, runs its PreFilter every cycle and re-judges changed rows with that fresh state.
The adaptive node count, the rotating start index, weights and the seeded
tie-break are the regular cycle's, so placements are identical;
``tests/framework/test_equivalence.py`` runs workloads with the cache on and off and compares.
"""

from __future__ import annotations

from collections import Counter, OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from kubesched.framework.cycle_state import CycleState
from kubesched.framework.diagnosis import Diagnosis, NodeFailures
from kubesched.framework.interfaces import MAX_NODE_SCORE, MIN_NODE_SCORE, ScorePlugin
from kubesched.framework.status import Code, PreFilterResult, Status

if TYPE_CHECKING:
    from kubesched.api.objects import Pod
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


@dataclass
class Records:
    """Why each row fails the row-local filters, kept up to date lazily, so that a pod that fits
    nowhere gets its FitError without a pass of every filter over every node."""

    plugin: np.ndarray  # int16 per row: index into Entry.local_filters of the first rejecting plugin, -1 none
    code: np.ndarray  # int8: that plugin's code
    reason: np.ndarray  # int32: index into ``sets``, the plugin's reasons for the row
    sets: list[tuple[str, ...]]
    ids: dict[tuple[str, ...], int]
    log_pos: int  # Snapshot.changed_rows position the records are current with
    diagnosis: Diagnosis | None = None  # built from the records as they are (shared until a row changes)


def _reason_id(r: Records, reasons: tuple[str, ...], bits: int) -> int:
    """The id in ``r.sets`` of the reasons that ``bits`` selects (added when new)."""
    chosen = tuple(x for k, x in enumerate(reasons) if bits >> k & 1)
    rid = r.ids.get(chosen)
    if rid is None:
        rid = r.ids[chosen] = len(r.sets)
        r.sets.append(chosen)
    return rid


# The status of every node when failure details are off (EquivalenceCache.lookup's ``detail``)
NO_DETAIL = Status(Code.Unschedulable, ("node(s) didn't fit the pod (reasons not recorded)",))


class _Fallback(Exception):
    """This cycle needs the regular path (a rejection, narrowing, or an out-of-range score)."""


@dataclass
class Entry:
    structure: int
    log_pos: int
    state: CycleState  # PreFilter/PreScore state of the row-local plugins
    ok: np.ndarray  # bool per row: passes every row-local filter
    raw: dict[str, np.ndarray]  # row-local score plugin -> raw score per row (valid where ok)
    static: np.ndarray  # weighted sum of the row-local scores that need no normalisation
    order: np.ndarray  # candidate rows in evaluation order
    fresh_pre_filter: list[Any]  # non-row-local PreFilter plugins, run every cycle
    fresh_filter: list[Any]
    fresh_pre_score: list[Any]
    fresh_score: list[Any]
    local_skip_score: frozenset[str] = frozenset()
    skip_without_fresh: frozenset[str] = frozenset()  # score plugins not run when no fresh plugin takes part
    # Normalising row-local plugins whose raw score is 0 on every row: their normalised scores are
    # those of a zero vector (normalize reads the scores alone), computed once per window size.
    zero_raw: set[str] = field(default_factory=set)
    has_static: bool = True  # some row-local score plugin needs no normalisation (else ``static`` stays 0)
    # Node-only plugins (``Plugin.node_only``) judge a row from its node object, which cannot change
    # while the entry lives (node changes bump ``structure``): their verdicts and scores are kept
    # apart, and only the plugins that read the row's pods run again when its pods change.
    node_ok: np.ndarray = field(default_factory=lambda: np.zeros(0, bool))  # passes node-only filters
    node_all_ok: bool = False  # every row passes them
    pod_filters: list[Any] = field(default_factory=list)  # row-local filters that read the row's pods
    static_node: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))  # node-only part of static
    scored: np.ndarray = field(default_factory=lambda: np.zeros(0, bool))  # node-only scores known per row
    csum: np.ndarray = field(default_factory=lambda: np.zeros(1, np.int64))  # prefix sums of ok[order]
    csum_stale: bool = False  # some verdict changed since ``csum`` was built
    pos: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))  # row -> position, -1 if none
    dirty: set[int] = field(default_factory=set)  # rows whose pods changed since their verdicts
    unscored: set[int] = field(default_factory=set)  # rows filtered again but not scored again
    local_filters: list[Any] = field(default_factory=list)  # the row-local filters, in profile order
    first_pod_filter: int = 0  # index in local_filters of the first one that reads the row's pods
    fresh_plugins: list[Any] = field(default_factory=list)  # every plugin of the fresh_* lists, once
    records: Records | None = None  # per-row failure reasons, built at the first pod that fits nowhere
    # Every feasible row in evaluation order from ``feasible_start`` (percentageOfNodesToScore 100
    # evaluates them all, from a start that stays put), while no verdict changes; read-only.
    feasible: np.ndarray | None = None
    feasible_start: int = 0
    identity: bool = False  # ``order`` is every row, 0..n-1 (nodes added in their tie-break order)
    # PreFilter plugins treated as row-local for this entry's pods by their ``row_local_for``
    # hint: run again every cycle, since re-judged rows must read state as of now.
    hinted: list[Any] = field(default_factory=list)

    def set_ok(self, rows: np.ndarray, now: np.ndarray) -> None:
        """New verdicts for ``rows``; what was derived from the old ones is rebuilt when next needed."""
        if (self.ok[rows] != now).any():
            self.csum_stale = True
            self.feasible = None
        self.ok[rows] = now

    def reindex(self) -> None:
        c = np.zeros(len(self.order) + 1, np.int64)
        np.cumsum(self.ok[self.order], out=c[1:])
        self.csum = c
        self.csum_stale = False


@dataclass
class Window:
    rows: np.ndarray  # feasible rows in evaluation order
    processed: int
    total: np.ndarray | None  # weighted totals for rows (None when fewer than 2 rows)
    per_plugin: dict[str, tuple[np.ndarray, np.ndarray, int]]
    state: CycleState
    diagnosis: Diagnosis | None = None  # set when no node fits: the FitError's per-node statuses
    in_order: bool = False  # rows ascend in node order (the window did not wrap around)


def _normalizes(pl: object) -> bool:
    return type(pl).normalize is not ScorePlugin.normalize


class EquivalenceCache:
    def __init__(self) -> None:
        self._entries: OrderedDict[tuple, Entry] = OrderedDict()
        self.hits = 0
        self.misses = 0
        self.diagnosed = 0  # pods that fit nowhere, their FitError built from the records
        self.hinted = 0  # cycles served by an entry that keeps a ``row_local_for`` plugin's verdicts
        self._last: Entry | None = None  # the most recently used entry
        self.keep_details = False  # per-plugin scores in the Window (explain-style output)
        self._zero_norm: dict[tuple[Any, int], np.ndarray | int] = {}

    def clear(self) -> None:
        self._entries.clear()
        self._last = None

    # ---- building and refreshing the row-local verdicts ------------------------------------
    def _build(self, fw: Framework, pod: Pod, snap: Snapshot, hinted: tuple[str, ...]) -> Entry | None:
        """A new entry; ``hinted`` names the plugins treated as row-local for this pod."""

        def local(pl: Any) -> bool:
            return pl.row_local or pl.name in hinted

        state = CycleState()
        names, st, _with_nodes, _ = fw.run_pre_filter(state, pod, snap)
        if not st.ok:
            return None
        fresh_pf = [pl for pl in fw.pre_filter if not local(pl)]
        if names is not None and any(pl.name not in state.skip_filter for pl in fresh_pf):
            return None  # narrowing must come from row-local plugins (the pod's own terms)
        if names is None:
            order = np.asarray(snap.order, np.int64)
        else:
            chosen = snap.rows_of(names).astype(np.int64)
            order = chosen[np.argsort(snap.order_positions[chosen], kind="stable")]
        local_filters = [pl for pl in fw.filter if local(pl)]
        ok = np.zeros(snap.n, bool)
        ok[order] = fw.passes_rows(state, pod, snap, order, local_filters)
        node_filters = [pl for pl in local_filters if pl.node_only]
        node_ok = np.zeros(snap.n, bool)
        node_ok[order] = fw.passes_rows(state, pod, snap, order, node_filters) if node_filters else True
        feas = np.nonzero(ok)[0].astype(np.intp)
        skip: set[str] = set()
        for pl in fw.pre_score:
            if not local(pl):
                continue
            out = pl.pre_score(state, pod, snap, feas)
            if out is not None and out.code == Code.Skip:
                skip.add(pl.name)
            elif out is not None and not out.ok:
                return None
            elif pl.name in hinted:
                return None  # the hint promised a Skip: its scores are not known to be row-local
        state.skip_score = skip
        raw: dict[str, np.ndarray] = {}
        static = np.zeros(snap.n, np.int64)
        static_node = np.zeros(snap.n, np.int64)
        for pl in fw.score:
            if not local(pl) or pl.name in skip:
                continue
            arr = np.zeros(snap.n, np.int64)
            if feas.size:
                arr[feas] = np.asarray(pl.score(state, pod, snap, feas), np.int64)
            raw[pl.name] = arr
            if not _normalizes(pl):
                weighted = arr * fw.score_weights.get(pl.name, 1)
                static += weighted
                if pl.node_only:
                    static_node += weighted
        e = Entry(
            snap.structure,
            len(snap.changed_rows),
            state,
            ok,
            raw,
            static,
            order,
            fresh_pf,
            [pl for pl in fw.filter if not local(pl)],
            [pl for pl in fw.pre_score if not local(pl)],
            [pl for pl in fw.score if not local(pl)],
        )
        e.hinted = [pl for pl in fw.pre_filter if pl.name in hinted]
        e.local_skip_score = frozenset(skip)
        e.zero_raw = {name for name, arr in raw.items() if _normalizes(fw.plugins[name]) and not arr.any()}
        e.has_static = any(not _normalizes(fw.plugins[name]) for name in raw)
        e.skip_without_fresh = e.local_skip_score | {pl.name for pl in e.fresh_score}
        e.node_ok = node_ok
        e.node_all_ok = bool(node_ok[order].all()) and len(order) == snap.n
        e.local_filters = local_filters
        e.first_pod_filter = next((i for i, pl in enumerate(local_filters) if not pl.node_only), len(local_filters))
        e.fresh_plugins = list(dict.fromkeys((*e.fresh_pre_filter, *e.fresh_filter, *e.fresh_pre_score, *e.fresh_score)))
        e.pod_filters = [pl for pl in local_filters if not pl.node_only]
        e.static_node = static_node
        e.scored = np.zeros(snap.n, bool)
        e.scored[feas] = True
        e.identity = len(order) == snap.n and bool((order == np.arange(snap.n)).all())
        e.pos = np.full(snap.n, -1, np.int64)
        e.pos[order] = np.arange(len(order))
        e.reindex()
        return e

    def _refresh(
        self, fw: Framework, pod: Pod, snap: Snapshot, e: Entry, state: CycleState, rows: np.ndarray
    ) -> None:
        """Filter stale rows again now (pod-reading plugins only); their scores when a window needs them.
        ``state`` is the cycle's: the entry's, with hinted plugins' PreFilter state as of now."""
        if e.node_all_ok:  # no node-only filter rejects any row: skip the mask
            now = fw.passes_rows(state, pod, snap, rows, e.pod_filters)
        else:
            keep = e.node_ok[rows]
            if e.pod_filters and keep.any():
                now = keep.copy()
                now[keep] = fw.passes_rows(state, pod, snap, rows[keep], e.pod_filters)
            else:
                now = keep
        e.set_ok(rows, now)
        e.unscored.update(rows.tolist())

    def _rescore(self, fw: Framework, pod: Pod, snap: Snapshot, e: Entry, state: CycleState) -> None:
        rows = np.fromiter(e.unscored, np.int64, len(e.unscored))
        e.unscored.clear()
        feas = rows[e.ok[rows]].astype(np.intp)
        if not feas.size:
            return
        new = feas[~e.scored[feas]]
        if new.size:  # never scored in this entry: node-only scores too
            e.scored[new] = True
            e.static_node[new] = 0
            for name, arr in e.raw.items():
                pl = fw.plugins[name]
                if not pl.node_only:
                    continue
                arr[new] = np.asarray(pl.score(state, pod, snap, new), np.int64)  # type: ignore[attr-defined]
                if not _normalizes(pl):
                    e.static_node[new] += arr[new] * fw.score_weights.get(name, 1)
                elif name in e.zero_raw and arr[new].any():
                    e.zero_raw.discard(name)
        if e.has_static:
            e.static[feas] = e.static_node[feas]
        for name, arr in e.raw.items():
            pl = fw.plugins[name]
            if pl.node_only:
                continue
            arr[feas] = np.asarray(pl.score(state, pod, snap, feas), np.int64)  # type: ignore[attr-defined]
            if not _normalizes(pl):
                e.static[feas] += arr[feas] * fw.score_weights.get(name, 1)
            elif name in e.zero_raw and arr[feas].any():
                e.zero_raw.discard(name)

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
        self._refresh(fw, pod, snap, e, state, stale[p >= 0])
        return True

    # ---- one cycle ---------------------------------------------------------------------------
    def _cycle_state(self, pod: Pod, snap: Snapshot, e: Entry, rerun: bool) -> tuple[CycleState, set[Any] | None]:
        """(state, skipping): the cached state, plus (``rerun``) a fresh PreFilter of the plugins
        that look beyond one row. Cached entries are shared read-only; a cycle that runs fresh
        plugins writes to a copy. ``skipping`` holds the fresh plugins whose ``skips()`` holds
        this cycle; None when they all do (no non-row-local plugin takes part). ``rerun`` also
        runs the PreFilter of the plugins the entry treats as row-local by their hint."""
        hinted = e.hinted if rerun else None
        for pl in e.fresh_plugins:
            if not pl.skips(pod, snap):
                break
        else:  # every fresh plugin skips: the common case, without building the set
            if not hinted:
                return e.state, None
        skipping = {pl for pl in e.fresh_plugins if pl.skips(pod, snap)}
        quiet = len(skipping) == len(e.fresh_plugins)
        state = CycleState()
        state._data = dict(e.state._data)
        state.skip_score = set(e.local_skip_score)
        state.skip_filter = set(e.state.skip_filter)
        if hinted:
            state.skip_filter.difference_update([pl.name for pl in hinted])
            self._pre_filter(hinted, state, pod, snap)
        if quiet:
            return state, None
        if not rerun:
            return state, skipping
        active = [pl for pl in e.fresh_pre_filter if pl not in skipping]
        # A plugin whose skips() holds now would return Skip from PreFilter: its state from the
        # entry's build may be stale (pods came or went since), so it must not filter.
        state.skip_filter |= {pl.name for pl in e.fresh_pre_filter if pl not in active}
        state.skip_filter -= {pl.name for pl in active}
        self._pre_filter(active, state, pod, snap)
        return state, skipping

    @staticmethod
    def _pre_filter(plugins: list[Any], state: CycleState, pod: Pod, snap: Snapshot) -> None:
        """PreFilter of ``plugins`` (none in ``state.skip_filter``) into ``state``; a Skip adds the
        plugin there. Narrowing or a rejection needs the regular path."""
        for pl in plugins:
            out = pl.pre_filter(state, pod, snap)
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
        """First k rows passing the cached verdicts, by prefix sums (no plugin runs)."""
        n = len(e.order)
        order = e.order
        if k >= n:  # every feasible row (percentageOfNodesToScore 100, small clusters)
            if e.dirty:
                stale = np.fromiter(e.dirty, np.intp, len(e.dirty))
                e.dirty.clear()
                if n != snap.n:  # rows the entry does not cover (PreFilter narrowed it) are left out
                    stale = stale[e.pos[stale] >= 0]
                if stale.size:
                    self._refresh(fw, pod, snap, e, state, stale)
            if e.feasible is None or e.feasible_start != s:
                if s == 0 and e.identity:
                    e.feasible = np.flatnonzero(e.ok)
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
        """First k rows passing the cached verdicts and, run now, the other filters."""
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
            passed = fw.filter_rows_plain(state, pod, snap, cand, None, only=filters) if cand.size else cand.astype(bool)
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

    def lookup(
        self,
        fw: Framework,
        pod: Pod,
        snap: Snapshot,
        start: int,
        num_to_find: Callable[[int], int],
        has_scoring: bool,
        detail: bool = True,
    ) -> Window | None:
        """The cycle's feasible window and scores, or None when the regular path must run.
        ``detail`` False: a pod no node fits gets a Diagnosis without per-node reasons."""
        sig = pod.signature()
        if sig is None:
            return None
        key: tuple = (fw.profile_name, sig)
        if fw.signature_annotations:
            ann = pod.annotations
            key = (*key, tuple(map(ann.get, fw.signature_annotations)))
        hinted: tuple[str, ...] = ()
        if fw.row_local_hints:
            # Asked every cycle (existing pods decide too): an entry serves only cycles with its answers.
            for pl in fw.row_local_hints:
                if not pl.skips(pod, snap) and pl.row_local_for(pod, snap):
                    hinted += (pl.name,)
            key = (*key, hinted)
        e = self._entries.get(key)
        if e is not None and e.structure != snap.structure:
            e = None
        fresh_build = e is None
        failed_last = False
        if e is None:
            self.misses += 1
            e = self._build(fw, pod, snap, hinted)
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
            state, skipping = self._cycle_state(pod, snap, e, rerun=not fresh_build)
            if e.hinted:
                self.hinted += 1
            k = num_to_find(n)
            s = start % n
            filters = []
            if skipping is not None:  # fresh filters that take part and may reject some node
                skip = state.skip_filter
                filters = [
                    pl for pl in e.fresh_filter if pl.name not in skip and not pl.passes_everywhere(state, pod, snap)
                ]
            if filters:
                window, cut = self._window_fresh(fw, pod, snap, e, state, filters, s, k)
            else:
                if failed_last and e.dirty and n == snap.n:
                    assert e.records is not None
                    self._refresh_records(fw, pod, snap, e, state, np.asarray(sorted(e.dirty), np.int64))
                    e.dirty.clear()
                    e.records.log_pos = e.log_pos
                window, cut = self._window_cached(fw, pod, snap, e, state, s, k)
                if window.size == 0 and n == snap.n:
                    diag = self._diagnose(fw, pod, snap, e, state) if detail else Diagnosis(absent_status=NO_DETAIL)
                    return Window(window, cut, None, {}, state, diag)
            if window.size < 2 or not has_scoring:
                return Window(window, cut, None, {}, state)
            win = self._score(fw, pod, snap, e, state, window, cut, skipping)
            win.in_order = s + cut <= n  # e.order ascends in node order; a window from s wraps past n
            return win
        except _Fallback:
            return None

    def _diagnose(self, fw: Framework, pod: Pod, snap: Snapshot, e: Entry, state: CycleState) -> Diagnosis:
        """The Diagnosis the regular path would build for a pod no node fits (every node checked,
        each stopping at its first failing filter), from per-row records: only rows whose pods
        changed since the last such pod of this entry are filtered again."""
        self.diagnosed += 1
        log = snap.changed_rows
        r = e.records
        if r is None:
            n = snap.n
            r = e.records = Records(np.full(n, -1, np.int16), np.zeros(n, np.int8), np.zeros(n, np.int32), [], {}, 0)
            self._record(fw, pod, snap, e, state, r, e.order, 0)
        elif len(log) > r.log_pos:
            self._refresh_records(fw, pod, snap, e, state, np.asarray(sorted(set(log[r.log_pos :])), np.int64))
        r.log_pos = len(log)
        if r.diagnosis is not None:
            return r.diagnosis.copy()
        if (r.plugin < 0).any():
            raise _Fallback  # a row passes: the verdicts and the records disagree (never expected)
        # Rows grouped by (first rejecting plugin, its reasons): counts now, the rows on demand.
        nsets = len(r.sets)
        key = r.plugin.astype(np.int64) * nsets + r.reason
        counts = np.bincount(key)
        present = np.flatnonzero(counts).tolist()
        groups = [(e.local_filters[k // nsets].name, r.sets[k % nsets], k) for k in present]
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
        diag = Diagnosis(
            unschedulable_plugins=names, histogram=hist, pending=failures, failed=int(key.size), messages={}
        )
        r.diagnosis = diag
        return diag.copy()

    def _refresh_records(
        self, fw: Framework, pod: Pod, snap: Snapshot, e: Entry, state: CycleState, stale: np.ndarray
    ) -> None:
        """Filter ``stale`` rows again with reasons; their verdicts follow from the records."""
        r = e.records
        assert r is not None
        # Filters before the first one that reads a row's pods read the node alone: a row one of
        # them rejected keeps its record (and its verdict), and the others still pass them.
        first = e.first_pod_filter
        if first:
            was = r.plugin[stale]
            keep = (was < 0) | (was >= first)
            if not keep.all():
                stale = stale[keep]
        if not stale.size:
            return
        if self._record(fw, pod, snap, e, state, r, stale, first):  # some row's reasons changed
            r.diagnosis = None
        e.set_ok(stale, r.plugin[stale] < 0)
        e.unscored.update(stale.tolist())

    @staticmethod
    def _record(
        fw: Framework, pod: Pod, snap: Snapshot, e: Entry, state: CycleState, r: Records, rows: np.ndarray, first: int
    ) -> bool:
        """Filter ``rows`` (distinct) again from the ``first`` row-local filter on, with reasons,
        into their records (each row stops at its first failing filter); True when some row's
        record changed. Plugins are called directly: no per-node failure lists are built.
        ``state`` is the cycle's (hinted plugins' PreFilter state as of now)."""
        rows = rows.astype(np.intp)
        plugin = np.full(rows.size, -1, np.int16)
        code = np.zeros(rows.size, np.int8)
        reason = np.zeros(rows.size, np.int32)
        alive = np.arange(rows.size)  # positions of rows no filter rejected yet
        skip = state.skip_filter
        for pi in range(first, len(e.local_filters)):
            pl = e.local_filters[pi]
            if pl.name in skip:
                continue
            res, failed = fw._filter_once(pl, state, pod, snap, rows if alive.size == rows.size else rows[alive])
            if failed is None:
                continue
            at = alive[failed]
            plugin[at] = pi
            code[at] = res.code[failed]
            bits = res.reason_bits[failed]
            b0 = int(bits[0])
            if (bits == b0).all():  # the common case: one reason set for every failed row
                reason[at] = _reason_id(r, res.reasons, b0)
            else:
                values, inverse = np.unique(bits, return_inverse=True)
                ids = np.fromiter((_reason_id(r, res.reasons, int(b)) for b in values.tolist()), np.int32, values.size)
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

    def _score(
        self,
        fw: Framework,
        pod: Pod,
        snap: Snapshot,
        e: Entry,
        state: CycleState,
        window: np.ndarray,
        cut: int,
        skipping: set[Any] | None,
    ) -> Window:
        """Scores over ``window``; ``skipping`` as from ``_cycle_state`` (None: no fresh plugin)."""
        if e.unscored:
            self._rescore(fw, pod, snap, e, state)
        skip: set[str] | frozenset[str] = e.skip_without_fresh
        if skipping is not None:
            skip = set(e.local_skip_score)
            for pl in e.fresh_pre_score:
                if pl in skipping:  # its PreScore would return Skip
                    skip.add(pl.name)
                    continue
                out = pl.pre_score(state, pod, snap, window)
                if out is not None and out.code == Code.Skip:
                    skip.add(pl.name)
                elif out is not None and not out.ok:
                    raise _Fallback
            state.skip_score = skip
        total: np.ndarray | int | None = e.static[window] if e.has_static else None
        per: dict[str, tuple[np.ndarray, np.ndarray, int]] = {}
        for pl in fw.score:
            w = fw.score_weights.get(pl.name, 1)
            arr = e.raw.get(pl.name)
            if arr is not None:
                if pl.name in e.zero_raw:
                    norm = self._zero_normalized(pl, state, pod, window.size)
                    total = norm * w if total is None else total + norm * w
                    if self.keep_details:
                        per[pl.name] = (np.zeros(window.size, np.int64), np.broadcast_to(norm, window.shape), w)
                    continue
                raw = arr[window]
                if not _normalizes(pl):
                    if self.keep_details:
                        per[pl.name] = (raw, raw, w)
                    continue
            elif pl.row_local or pl.name in skip:
                continue
            else:
                raw = np.asarray(pl.score(state, pod, snap, window), np.int64)
            norm = pl.normalize(state, pod, raw.copy())
            norm = raw if norm is None else np.asarray(norm, np.int64)
            checked = not (pl.normalized_in_range and norm is not raw)
            if checked and norm.size and (norm.max() > MAX_NODE_SCORE or norm.min() < MIN_NODE_SCORE):
                raise _Fallback  # the regular path reports the invalid score
            total = norm * w if total is None else total + norm * w
            if self.keep_details:
                per[pl.name] = (raw, norm, w)
        if not isinstance(total, np.ndarray):  # no plugin scored, or only constant ones
            total = np.full(window.size, 0 if total is None else total, np.int64)
        return Window(window, cut, total, per, state)

    def _zero_normalized(self, pl: Any, state: CycleState, pod: Pod, size: int) -> np.ndarray | int:
        """``pl``'s normalised scores of ``size`` zero raw scores (an int when all equal)."""
        key = (pl, size)
        hit = self._zero_norm.get(key)
        if hit is None:
            raw = np.zeros(size, np.int64)
            out = pl.normalize(state, pod, raw.copy())
            norm = raw if out is None else np.asarray(out, np.int64)
            if norm.size and (norm.max() > MAX_NODE_SCORE or norm.min() < MIN_NODE_SCORE):
                raise _Fallback  # the regular path reports the invalid score
            if len(self._zero_norm) >= 4096:
                self._zero_norm.clear()
            hit = int(norm[0]) if norm.size and (norm == norm[0]).all() else norm
            if isinstance(hit, np.ndarray):
                hit.flags.writeable = False
            self._zero_norm[key] = hit
        return hit

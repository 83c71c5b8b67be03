"""One entry of the equivalence cache: a pod shape's verdicts and raw scores for every node.

The plugins that sign the pod NODE or ROW (``local``) judged every node once, when the entry was
built; their verdicts (``ok``) and raw scores (``raw``) are kept per row. A row whose pods changed
since is ``dirty`` and judged again (by the plugins that read pods, ROW) when a cycle's window
reaches it; its scores are taken again when a window scores it (``unscored``). Plugins that do not
sign the pod run fresh every cycle (``fresh_*``); those that sign it NOTHING take no part.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from kubesched.framework.cycle_state import CycleState
from kubesched.framework.interfaces import NODE, NOTHING, ScorePlugin, Signature
from kubesched.framework.status import Code

if TYPE_CHECKING:
    from kubesched.api.objects import Pod
    from kubesched.framework.equivalence.records import Records
    from kubesched.framework.runtime import Framework
    from kubesched.state.snapshot import Snapshot


def normalizes(pl: object) -> bool:
    return type(pl).normalize is not ScorePlugin.normalize


@dataclass
class Entry:
    structure: int  # Snapshot.structure the entry was built at (its rows and their order)
    log_pos: int  # Snapshot.changed_rows position the dirty set is current with
    state: CycleState  # PreFilter/PreScore state of the build (shared read-only)
    ok: np.ndarray  # bool per row: passes every local filter
    raw: dict[str, np.ndarray]  # local score plugin -> raw score per row (valid where ok)
    static: np.ndarray  # weighted sum of the local scores that need no normalisation
    order: np.ndarray  # candidate rows in evaluation order
    fresh_pre_filter: list[Any]  # plugins that do not sign the pod: run every cycle
    fresh_filter: list[Any]
    fresh_pre_score: list[Any]
    fresh_score: list[Any]
    # score plugins that never score this pod here: local ones whose PreScore skipped, and those
    # that take no part; with the fresh ones too when no fresh plugin runs
    local_skip_score: frozenset[str] = frozenset()
    skip_without_fresh: frozenset[str] = frozenset()
    # Normalising local plugins whose raw score is 0 on every row: their normalised scores are
    # those of a zero vector (normalize reads the scores alone), computed once per window size.
    zero_raw: set[str] = field(default_factory=set)
    has_static: bool = True  # some local score plugin needs no normalisation (else ``static`` stays 0)
    # Plugins signed NODE judge a row from its node object, which cannot change while the entry
    # lives (node changes rebuild it): their verdicts and scores are kept apart, and only the
    # plugins that read the row's pods run again when its pods change.
    node_ok: np.ndarray = field(default_factory=lambda: np.zeros(0, bool))  # passes the NODE filters
    node_all_ok: bool = False  # every row passes them
    node_scored: set[str] = field(default_factory=set)  # score plugins signed NODE
    pod_filters: list[Any] = field(default_factory=list)  # local filters that read the row's pods
    static_node: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))  # NODE part of static
    scored: np.ndarray = field(default_factory=lambda: np.zeros(0, bool))  # NODE scores known per row
    csum: np.ndarray = field(default_factory=lambda: np.zeros(1, np.int64))  # prefix sums of ok[order]
    csum_stale: bool = False  # some verdict changed since ``csum`` was built
    pos: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))  # row -> position, -1 if none
    dirty: set[int] = field(default_factory=set)  # rows whose pods changed since their verdicts
    unscored: set[int] = field(default_factory=set)  # rows filtered again but not scored again
    local_filters: list[Any] = field(default_factory=list)  # the local filters, in profile order
    first_pod_filter: int = 0  # index in local_filters of the first one that reads the row's pods
    fresh_plugins: list[Any] = field(default_factory=list)  # every plugin of the fresh_* lists, once
    records: Records | None = None  # per-row failure reasons, built at the first pod that fits nowhere
    # Every feasible row in evaluation order from ``feasible_start`` (percentageOfNodesToScore 100
    # evaluates them all, from a start that stays put), while no verdict changes; read-only.
    feasible: np.ndarray | None = None
    feasible_start: int = 0
    identity: bool = False  # ``order`` is every row, 0..n-1 (nodes added in their tie-break order)
    # PreFilter plugins signed ``pre_filter_each_cycle``: run again every cycle, since re-judged
    # rows must read state as of now.
    each_cycle: list[Any] = field(default_factory=list)
    # The score plugins that may score a window (with their weights): not those the entry's pod
    # skips whatever the cycle (signed NOTHING, or PreScore Skip), in profile order.
    scorers: list[tuple[Any, int]] = field(default_factory=list)
    # Some Reserve, Permit or PreBind plugin takes part for the pod (is not signed NOTHING) and may
    # write the cycle's state, which the entry shares: a placed pod's binding cycle gets a copy.
    # (The others are not called there: ``CycleState.binding``.)
    binding_writes: bool = True

    def set_ok(self, rows: np.ndarray, now: np.ndarray) -> None:
        """New verdicts for ``rows``; what was derived from the old ones is rebuilt when next needed."""
        if np.logical_or.reduce(self.ok[rows] != now):  # ndarray.any: a Python wrapper, every refresh
            self.csum_stale = True
            self.feasible = None
        self.ok[rows] = now

    def reindex(self) -> None:
        c = np.zeros(len(self.order) + 1, np.int64)
        np.cumsum(self.ok[self.order], out=c[1:])
        self.csum = c
        self.csum_stale = False


def build(fw: Framework, pod: Pod, snap: Snapshot, signed: dict[Any, Signature | None]) -> Entry | None:
    """A new entry for ``pod`` given its signatures, or None when the regular path must serve it
    (a PreFilter rejection or error, narrowing by a plugin that runs fresh, a PreScore that is
    not a Skip where the signature promised one)."""

    def local(pl: Any) -> bool:
        sig = signed.get(pl)
        return sig is not None and sig.reads != NOTHING

    def fresh(pl: Any) -> bool:
        sig = signed.get(pl)
        return sig is None

    state = CycleState()
    pre = fw.run_pre_filter(state, pod, snap)
    names, st = pre.names, pre.status
    if not st.ok:
        return None
    fresh_pf = [pl for pl in fw.pre_filter if fresh(pl)]
    if names is not None and any(pl.name not in state.skip_filter for pl in fresh_pf):
        return None  # narrowing must come from local plugins (the pod's own terms)
    if names is None:
        order = np.asarray(snap.order, np.int64)
    else:
        chosen = snap.rows_of(names).astype(np.int64)
        order = chosen[np.argsort(snap.order_positions[chosen], kind="stable")]
    local_filters = [pl for pl in fw.filter if local(pl)]
    ok = np.zeros(snap.n, bool)
    ok[order] = fw.passes_rows(state, pod, snap, order, local_filters)
    node_filters = [pl for pl in local_filters if signed[pl].reads == NODE]  # type: ignore[union-attr]
    node_ok = np.zeros(snap.n, bool)
    node_ok[order] = fw.passes_rows(state, pod, snap, order, node_filters) if node_filters else True
    feas = np.nonzero(ok)[0].astype(np.intp)
    skip = {pl.name for pl, sig in signed.items() if sig is not None and sig.reads == NOTHING}
    state.binding = fw.binding_plugins(frozenset(skip))
    binding_writes = any(pl.name not in skip for pl in (*fw.reserve, *fw.permit, *fw.pre_bind))
    for pl in fw.pre_score:
        if not local(pl):
            continue
        out = fw.call(pl, "PreScore", pl.pre_score, state, pod, snap, feas)
        if out is not None and out.code == Code.Skip:
            skip.add(pl.name)
        elif out is not None and not out.ok:
            return None
        elif signed[pl].pre_filter_each_cycle:  # type: ignore[union-attr]
            return None  # its signature promised a Skip: its scores are not known to be row-local
    state.skip_score = skip
    raw: dict[str, np.ndarray] = {}
    static = np.zeros(snap.n, np.int64)
    static_node = np.zeros(snap.n, np.int64)
    node_scored: set[str] = set()
    for pl in fw.score:
        if not local(pl) or pl.name in skip:
            continue
        arr = np.zeros(snap.n, np.int64)
        if feas.size:
            arr[feas] = np.asarray(fw.call(pl, "Score", pl.score, state, pod, snap, feas), np.int64)
        raw[pl.name] = arr
        if signed[pl].reads == NODE:  # type: ignore[union-attr]
            node_scored.add(pl.name)
        if not normalizes(pl):
            weighted = arr * fw.score_weights.get(pl.name, 1)
            static += weighted
            if pl.name in node_scored:
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
        [pl for pl in fw.filter if fresh(pl)],
        [pl for pl in fw.pre_score if fresh(pl)],
        [pl for pl in fw.score if fresh(pl)],
    )
    e.binding_writes = binding_writes
    e.each_cycle = [pl for pl in fw.pre_filter if local(pl) and signed[pl].pre_filter_each_cycle]  # type: ignore[union-attr]
    e.local_skip_score = frozenset(skip)
    e.scorers = [(pl, fw.score_weights.get(pl.name, 1)) for pl in fw.score if pl.name in raw or pl.name not in skip]
    e.zero_raw = {name for name, arr in raw.items() if normalizes(fw.plugins[name]) and not arr.any()}
    e.has_static = any(not normalizes(fw.plugins[name]) for name in raw)
    e.skip_without_fresh = e.local_skip_score | {pl.name for pl in e.fresh_score}
    e.node_ok = node_ok
    e.node_all_ok = bool(node_ok[order].all()) and len(order) == snap.n
    e.node_scored = node_scored
    e.local_filters = local_filters
    e.first_pod_filter = next(
        (i for i, pl in enumerate(local_filters) if signed[pl].reads != NODE),  # type: ignore[union-attr]
        len(local_filters),
    )
    e.fresh_plugins = list(dict.fromkeys((*e.fresh_pre_filter, *e.fresh_filter, *e.fresh_pre_score, *e.fresh_score)))
    e.pod_filters = [pl for pl in local_filters if signed[pl].reads != NODE]  # type: ignore[union-attr]
    e.static_node = static_node
    e.scored = np.zeros(snap.n, bool)
    e.scored[feas] = True
    e.identity = len(order) == snap.n and bool((order == np.arange(snap.n)).all())
    e.pos = np.full(snap.n, -1, np.int64)
    e.pos[order] = np.arange(len(order))
    e.reindex()
    return e


def refresh(fw: Framework, pod: Pod, snap: Snapshot, e: Entry, state: CycleState, rows: np.ndarray) -> None:
    """Filter stale rows again now (the plugins that read pods); their scores when a window needs
    them. ``state`` is the cycle's: the entry's, with each-cycle plugins' PreFilter state as of now."""
    if e.node_all_ok:  # no NODE filter rejects any row: skip the mask
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


def rescore(fw: Framework, pod: Pod, snap: Snapshot, e: Entry, state: CycleState) -> None:
    """Raw scores of the rows filtered again since they were scored (NODE scores only for rows
    never scored in this entry)."""
    rows = np.fromiter(e.unscored, np.int64, len(e.unscored))
    e.unscored.clear()
    feas = rows[e.ok[rows]].astype(np.intp)
    if not feas.size:
        return
    new = feas[~e.scored[feas]]
    if new.size:  # never scored in this entry: NODE scores too
        e.scored[new] = True
        e.static_node[new] = 0
        for name in e.raw:
            if name in e.node_scored:
                _score_rows(fw, pod, snap, e, state, name, new, e.static_node)
    if e.has_static:
        e.static[feas] = e.static_node[feas]
    for name in e.raw:
        if name not in e.node_scored:
            _score_rows(fw, pod, snap, e, state, name, feas, e.static)


def _score_rows(
    fw: Framework, pod: Pod, snap: Snapshot, e: Entry, state: CycleState, name: str, rows: np.ndarray, static: np.ndarray
) -> None:
    """Raw scores of ``name`` on ``rows`` into the entry; a plugin without normalisation adds its
    weighted scores to ``static``."""
    pl = fw.plugins[name]
    arr = e.raw[name]
    arr[rows] = np.asarray(fw.call(pl, "Score", pl.score, state, pod, snap, rows), np.int64)  # type: ignore[attr-defined]
    if not normalizes(pl):
        static[rows] += arr[rows] * fw.score_weights.get(name, 1)
    elif name in e.zero_raw and arr[rows].any():
        e.zero_raw.discard(name)

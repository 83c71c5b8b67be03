"""One entry of the equivalence cache: a pod shape's verdicts and raw scores for every node.

The plugins that sign the pod NODE or ROW (``local``) judged every node once, when the entry was
built; their verdicts (``Verdicts.ok``) and raw scores (``KnownScores.raw``) are kept per row. A
row whose pods changed since is ``dirty`` and judged again (by the plugins that read pods, ROW)
when a cycle's window reaches it; its scores are taken again when a window scores it
(``Rescoring.unscored``). Plugins that do not sign the pod run fresh every cycle (``Roles``);
those that sign it NOTHING take no part.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from kubesched.framework.interfaces import NODE, NOTHING, Signature
from kubesched.framework.scoring import KnownScores, normalizes
from kubesched.framework.status import Code

if TYPE_CHECKING:
    from kubesched.api.objects import Pod
    from kubesched.framework.cycle_state import CycleState
    from kubesched.framework.equivalence.records import Records
    from kubesched.framework.runtime import Framework, PreFiltered
    from kubesched.state.snapshot import Snapshot


@dataclass
class Roles:
    """The profile's plugins by what the entry keeps of them: the local filters (signed NODE or
    ROW; their verdicts are kept) and the plugins that do not sign the pod (run every cycle)."""

    local_filters: list[Any]  # in profile order
    pod_filters: list[Any]  # the local filters that read the row's pods (ROW)
    first_pod_filter: int  # index in local_filters of the first of those
    # local PreFilter plugins signed ``pre_filter_each_cycle``: run again every cycle, since
    # re-judged rows must read state as of now
    each_cycle: list[Any]
    fresh_pre_filter: list[Any]
    fresh_filter: list[Any]
    fresh: bool  # some plugin of the cycle's points does not sign the pod
    # Some Reserve, Permit or PreBind plugin takes part for the pod (is not signed NOTHING) and may
    # write the cycle's state, which the entry shares: a placed pod's binding cycle gets a copy.
    # (The others are not called there: ``CycleState.binding``.)
    binding_writes: bool

    @classmethod
    def of(cls, fw: Framework, signed: dict[Any, Signature | None]) -> Roles:
        def reads(pl: Any) -> str | None:  # None: does not sign the pod
            sig = signed.get(pl)
            return None if sig is None else sig.reads

        local = [pl for pl in fw.filter if reads(pl) not in (None, NOTHING)]
        pod = [pl for pl in local if reads(pl) != NODE]
        nothing = {pl.name for pl, sig in signed.items() if sig is not None and sig.reads == NOTHING}
        return cls(
            local,
            pod,
            local.index(pod[0]) if pod else len(local),
            [pl for pl in fw.pre_filter if reads(pl) not in (None, NOTHING) and signed[pl].pre_filter_each_cycle],  # type: ignore[union-attr]
            [pl for pl in fw.pre_filter if reads(pl) is None],
            [pl for pl in fw.filter if reads(pl) is None],
            any(reads(pl) is None for pl in (*fw.pre_filter, *fw.filter, *fw.pre_score, *fw.score)),
            any(pl.name not in nothing for pl in (*fw.reserve, *fw.permit, *fw.pre_bind)),
        )


@dataclass
class Verdicts:
    """Whether each row passes the local filters, and what is derived from that."""

    order: np.ndarray  # candidate rows in evaluation order
    ok: np.ndarray  # bool per row: passes every local filter
    # Plugins signed NODE judge a row from its node object, which cannot change while the entry
    # lives (node changes rebuild it): only the plugins that read the row's pods run again when
    # its pods change.
    node_ok: np.ndarray  # bool per row: passes the NODE filters
    node_all_ok: bool = False  # every row passes them
    pos: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))  # row -> position, -1 if none
    identity: bool = False  # ``order`` is every row, 0..n-1 (nodes added in their tie-break order)
    dirty: set[int] = field(default_factory=set)  # rows whose pods changed since their verdicts
    csum: np.ndarray = field(default_factory=lambda: np.zeros(1, np.int64))  # prefix sums of ok[order]
    csum_stale: bool = False  # some verdict changed since ``csum`` was built
    # Every feasible row in evaluation order from ``feasible_start`` (percentageOfNodesToScore 100
    # evaluates them all, from a start that stays put), while no verdict changes; read-only.
    feasible: np.ndarray | None = None
    feasible_start: int = 0

    def __post_init__(self) -> None:
        n = len(self.ok)
        self.node_all_ok = bool(self.node_ok[self.order].all()) and len(self.order) == n
        self.identity = len(self.order) == n and bool((self.order == np.arange(n)).all())
        self.pos = np.full(n, -1, np.int64)
        self.pos[self.order] = np.arange(len(self.order))
        self.reindex()

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


@dataclass
class Rescoring:
    """What keeps the raw scores current: rows filtered again are scored again when a window
    next scores; NODE scores (from the node object alone) only for rows never scored."""

    node_scored: set[str]  # score plugins signed NODE
    summed: set[str]  # score plugins whose weighted raw scores ``KnownScores.static`` sums
    static_node: np.ndarray  # the NODE part of ``static``
    scored: np.ndarray  # bool per row: NODE scores known
    unscored: set[int] = field(default_factory=set)  # rows filtered again but not scored again


@dataclass
class Entry:
    structure: int  # Snapshot.structure the entry was built at (its rows and their order)
    log_pos: int  # Snapshot.changed_rows position the dirty set is current with
    state: CycleState  # PreFilter/PreScore state of the build (shared read-only)
    roles: Roles
    verdicts: Verdicts
    scores: KnownScores  # what ``Framework.run_score`` reads instead of calling the local plugins
    rescoring: Rescoring
    records: Records | None = None  # per-row failure reasons, built at the first pod that fits nowhere


def build(
    fw: Framework, pod: Pod, snap: Snapshot, state: CycleState, pre: PreFiltered, signed: dict[Any, Signature | None]
) -> Entry | None:
    """A new entry for ``pod`` given its signatures and its PreFilter (``pre``, run into
    ``state``, which the entry keeps), or None when the regular path must serve it (a PreFilter
    rejection or error, narrowing by a plugin that runs fresh, a PreScore that is not a Skip
    where the signature promised one). Each local filter judges each row once at most."""
    if not pre.status.ok:
        return None
    roles = Roles.of(fw, signed)
    if pre.names is not None and any(pl.name not in state.skip_filter for pl in roles.fresh_pre_filter):
        return None  # narrowing must come from local plugins (the pod's own terms)
    if pre.names is None:
        order = np.asarray(snap.order, np.int64)
    else:
        chosen = snap.rows_of(pre.names).astype(np.int64)
        order = chosen[np.argsort(snap.order_positions[chosen], kind="stable")]
    node_filters = [pl for pl in roles.local_filters if pl not in roles.pod_filters]
    node_ok = np.zeros(snap.n, bool)
    node_ok[order] = fw.passes_rows(state, pod, snap, order, node_filters) if node_filters else True
    ok = np.zeros(snap.n, bool)
    ok[order] = judge(fw, pod, snap, state, order, node_ok[order], roles.pod_filters)
    feas = np.nonzero(ok)[0].astype(np.intp)
    nothing = frozenset(pl.name for pl, sig in signed.items() if sig is not None and sig.reads == NOTHING)
    scoring = _scores(fw, pod, snap, state, feas, signed, nothing, roles)
    if scoring is None:
        return None
    scores, rescoring = scoring
    state.skip_score = set(scores.skip)
    state.binding = fw.binding_plugins(nothing)
    verdicts = Verdicts(order, ok, node_ok)
    return Entry(snap.structure, len(snap.changed_rows), state, roles, verdicts, scores, rescoring)


def _local(signed: dict[Any, Signature | None], pl: Any) -> bool:
    sig = signed.get(pl)
    return sig is not None and sig.reads != NOTHING


def _scores(
    fw: Framework,
    pod: Pod,
    snap: Snapshot,
    state: CycleState,
    feas: np.ndarray,
    signed: dict[Any, Signature | None],
    nothing: frozenset[str],
    roles: Roles,
) -> tuple[KnownScores, Rescoring] | None:
    """The local PreScore plugins, then the local score plugins' raw scores, over every feasible
    row: what the framework's scoring loop reads, or None when a PreScore fails or does not skip
    where its signature promised it would."""
    skip = set(nothing)  # score plugins that take no part: signed NOTHING, or their PreScore skipped
    for pl in fw.pre_score:
        if not _local(signed, pl):
            continue
        out = fw.call(pl, "PreScore", pl.pre_score, state, pod, snap, feas)
        if out is not None and out.code == Code.Skip:
            skip.add(pl.name)
        elif out is not None and not out.ok:
            return None
        elif signed[pl].pre_filter_each_cycle:  # type: ignore[union-attr]
            return None  # its signature promised a Skip: its scores are not known to be row-local
    raw: dict[str, np.ndarray] = {}
    for pl in fw.score:
        if _local(signed, pl) and pl.name not in skip:
            arr = raw[pl.name] = np.zeros(snap.n, np.int64)
            if feas.size:
                arr[feas] = np.asarray(fw.call(pl, "Score", pl.score, state, pod, snap, feas), np.int64)
    summed = {name for name in raw if not normalizes(fw.plugins[name])}
    node_scored = {name for name in raw if signed[fw.plugins[name]].reads == NODE}  # type: ignore[union-attr]
    static = sum((raw[name] * fw.score_weights.get(name, 1) for name in summed), np.zeros(snap.n, np.int64))
    static_node = sum(
        (raw[name] * fw.score_weights.get(name, 1) for name in summed & node_scored), np.zeros(snap.n, np.int64)
    )
    scored = np.zeros(snap.n, bool)
    scored[feas] = True
    known = KnownScores(
        [pl for pl in fw.pre_score if signed.get(pl) is None],
        frozenset(skip),
        [(pl, w) for pl, w in fw.score_plan if pl.name not in summed and (pl.name in raw or pl.name not in skip)],
        raw,
        static if summed else None,
        {name for name, arr in raw.items() if name not in summed and not arr.any()},
        roles.fresh,
    )
    return known, Rescoring(node_scored, summed, static_node, scored)


def judge(
    fw: Framework, pod: Pod, snap: Snapshot, state: CycleState, rows: np.ndarray, node_ok: np.ndarray, pod_filters: list[Any]
) -> np.ndarray:
    """Verdicts of ``rows`` given their NODE verdicts (``node_ok``, read-only): the filters that
    read the row's pods run on the rows the NODE filters let through."""
    if not pod_filters or not node_ok.any():
        return node_ok
    now = node_ok.copy()
    now[node_ok] = fw.passes_rows(state, pod, snap, rows[node_ok], pod_filters)
    return now


def refresh(fw: Framework, pod: Pod, snap: Snapshot, e: Entry, state: CycleState, rows: np.ndarray) -> None:
    """Filter stale rows again now (the plugins that read pods); their scores when a window needs
    them. ``state`` is the cycle's: the entry's, with each-cycle plugins' PreFilter state as of now."""
    v = e.verdicts
    if v.node_all_ok:  # no NODE filter rejects any row: skip the mask
        now = fw.passes_rows(state, pod, snap, rows, e.roles.pod_filters)
    else:
        now = judge(fw, pod, snap, state, rows, v.node_ok[rows], e.roles.pod_filters)
    v.set_ok(rows, now)
    e.rescoring.unscored.update(rows.tolist())


def rescore(fw: Framework, pod: Pod, snap: Snapshot, e: Entry, state: CycleState) -> None:
    """Raw scores of the rows filtered again since they were scored (NODE scores only for rows
    never scored in this entry)."""
    r, known = e.rescoring, e.scores
    rows = np.fromiter(r.unscored, np.int64, len(r.unscored))
    r.unscored.clear()
    feas = rows[e.verdicts.ok[rows]].astype(np.intp)
    if not feas.size:
        return
    new = feas[~r.scored[feas]]
    if new.size:  # never scored in this entry: NODE scores too
        r.scored[new] = True
        r.static_node[new] = 0
        for name in known.raw:
            if name in r.node_scored:
                _score_rows(fw, pod, snap, e, state, name, new, r.static_node)
    if known.static is not None:
        known.static[feas] = r.static_node[feas]
    for name in known.raw:
        if name not in r.node_scored:
            _score_rows(fw, pod, snap, e, state, name, feas, known.static)


def _score_rows(
    fw: Framework,
    pod: Pod,
    snap: Snapshot,
    e: Entry,
    state: CycleState,
    name: str,
    rows: np.ndarray,
    static: np.ndarray | None,
) -> None:
    """Raw scores of ``name`` on ``rows`` into the entry; a plugin without normalisation adds its
    weighted scores to ``static``."""
    pl = fw.plugins[name]
    arr = e.scores.raw[name]
    arr[rows] = np.asarray(fw.call(pl, "Score", pl.score, state, pod, snap, rows), np.int64)  # type: ignore[attr-defined]
    if name in e.rescoring.summed:
        static[rows] += arr[rows] * fw.score_weights.get(name, 1)  # type: ignore[index]
    elif name in e.scores.zero and arr[rows].any():
        e.scores.zero.discard(name)

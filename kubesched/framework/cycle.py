"""The scheduling cycle: PreFilter → Filter → PostFilter → PreScore → Score → select a node.

This module is the one place that orders the extension points for a pod, as kube-scheduler's
schedule_one.go does (schedulePod, findNodesThatFitPod, findNodesThatPassFilters,
prioritizeNodes, selectHost); ``Framework`` runs each point. Its callers:

* the scheduler: ``propose`` (the nodes that fit, their scores) and ``commit`` (the selected
  host, or an outside decision maker's choice among the feasible nodes), then ``post_filter``
  when no node fits; ``schedule_pod`` is the two in a row;
* ``explain``: ``evaluate_every_plugin`` (every filter plugin on every node, no early exit);
* the extender and preemption's dry run: ``pre_filter`` and ``filter_nodes`` over the nodes they
  are given, and the extender's prioritize verb ``score_nodes``.

A pod whose profile's plugins sign it (``SignPlugin``) is served inside ``find_nodes_that_fit``
by the framework's equivalence cache, which returns what this path would (the same nodes
examined, verdicts and FitError); ``prioritize`` then scores them with ``Framework.run_score``
like any window, from the raw scores the cache keeps.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from kubesched.framework.cycle_state import CycleState
from kubesched.framework.diagnosis import NO_NODES, Diagnosis, NodeFailures
from kubesched.framework.equivalence import Batch
from kubesched.framework.failures import PluginFailure
from kubesched.framework.runtime import PreFiltered
from kubesched.framework.scoring import Scores
from kubesched.framework.status import Code, FilterResult, Status

if TYPE_CHECKING:
    from kubesched.api.objects import Pod
    from kubesched.framework.runtime import Framework
    from kubesched.state.snapshot import Snapshot

_MAX = np.maximum.reduce
MIN_FEASIBLE_NODES_TO_FIND = 100
MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND = 5


def num_feasible_nodes_to_find(num_all_nodes: int, percentage: int) -> int:
    """How many feasible nodes to look for before scoring (adaptive when percentage is 0)."""
    if num_all_nodes < MIN_FEASIBLE_NODES_TO_FIND:
        return num_all_nodes
    if percentage == 0:
        percentage = max(50 - num_all_nodes // 125, MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND)
    return max(num_all_nodes * percentage // 100, MIN_FEASIBLE_NODES_TO_FIND)


@dataclass
class CycleContext:
    """What a scheduler keeps across its cycles: the rotating start index the cycles advance,
    the tie-break and its generator, and how the equivalence cache may be used."""

    rng: np.random.Generator
    percentage_of_nodes_to_score: int = 0  # the configuration's; a profile's own value wins
    # "random" is kube-scheduler's reservoir sampling; "first" takes the tied node that comes
    # first in node-tree order (reproducible replays, e.g. the FGD paper's simulator)
    tie_break: str = "random"
    start: int = 0  # nextStartNodeIndex
    use_cache: bool = True
    # False: a pod the cache finds no node for gets a FitError without per-node reasons (its
    # message counts the nodes only, and no plugin is named for requeueing), which saves filtering
    # again with reasons; profiles with PostFilter keep them
    failure_detail: bool = True


@dataclass
class ScheduleResult:
    """Outcome of one scheduling attempt."""

    pod: Pod
    profile: str
    node: str | None = None
    message: str | None = None  # FailedScheduling message
    code: Code = Code.Success
    nominated_node: str | None = None
    evaluated: int = 0
    feasible: int = 0
    diagnosis: Diagnosis | None = None
    scores: Scores | None = None
    attempt: int = 0
    duration: float = 0.0
    state: CycleState | None = None  # the cycle's state when it differs from the caller's (cache)
    error: BaseException | None = None  # what a plugin raised, for an Error result (--debug)


@dataclass
class Feasible:
    """findNodesThatFitPod's outcome: the feasible rows in evaluation order, the nodes examined,
    why the others failed, and the cycle's state."""

    rows: np.ndarray
    examined: int
    diagnosis: Diagnosis | None
    state: CycleState
    error: Status | None = None  # a PreFilter or Filter Error: the cycle's result
    advance: int = 0  # how far the rotating start index moves
    batch: Batch | None = None  # set when the equivalence cache found the rows: it knows their raw scores


# ---- the scheduling cycle ---------------------------------------------------------------------
@dataclass(slots=True)
class Proposal:
    """The scheduling cycle up to host selection (``propose``): the rows that fit, in evaluation
    order (``rows``), with their scores when there are two or more; ``result`` holds what the
    cycle found (nodes examined, the diagnosis, the failure when no node fits). ``commit`` then
    takes the cycle's own selection or a caller's choice among ``rows``."""

    fw: Framework
    fit: Feasible
    result: ScheduleResult

    @property
    def pod(self) -> Pod:
        return self.result.pod

    @property
    def rows(self) -> np.ndarray:
        return self.fit.rows

    @property
    def scores(self) -> Scores | None:
        return self.result.scores


def schedule_pod(fw: Framework, state: CycleState, pod: Pod, snap: Snapshot, ctx: CycleContext) -> ScheduleResult:
    """schedulePod: the nodes that fit, their scores, the selected host."""
    return commit(propose(fw, state, pod, snap, ctx), snap, ctx)


def propose(fw: Framework, state: CycleState, pod: Pod, snap: Snapshot, ctx: CycleContext) -> Proposal:
    """schedulePod up to selectHost: the nodes that fit and their scores (the rotating start
    index moves on as the whole cycle's would)."""
    res = ScheduleResult(pod, fw.profile_name)
    if snap.n == 0:
        res.code, res.message = Code.UnschedulableAndUnresolvable, NO_NODES
        return Proposal(fw, Feasible(np.zeros(0, np.intp), 0, None, state), res)
    fit = find_nodes_that_fit(fw, state, pod, snap, ctx, use_cache=ctx.use_cache)
    ctx.start = (ctx.start + fit.advance) % snap.n
    res.evaluated, res.feasible, res.diagnosis = fit.examined, int(fit.rows.size), fit.diagnosis
    if fit.error is not None:
        res.code, res.message = Code.Error, fit.error.message
    elif fit.rows.size == 0:
        res.code = Code.Unschedulable
        res.message = fit.diagnosis.fit_error(snap.n) if fit.diagnosis else NO_NODES
    elif fit.rows.size > 1:
        res.scores = prioritize(fw, pod, snap, fit)
    return Proposal(fw, fit, res)


def commit(prop: Proposal, snap: Snapshot, ctx: CycleContext, row: int | None = None) -> ScheduleResult:
    """selectHost, or the caller's choice: the proposal's result with its node. ``row`` (a
    snapshot row) must be one of the proposal's feasible rows; any other is refused with a
    ValueError, nothing changed. None: the only feasible row, or the cycle's own selection."""
    res, fit = prop.result, prop.fit
    if row is not None:
        check_choice(prop, snap, row)
    elif fit.rows.size == 1:
        row = int(fit.rows[0])
    elif fit.rows.size > 1:
        assert res.scores is not None
        row = select_host(res.scores, snap, ctx)
    if row is not None:
        res.node = snap.nodes[row].name
    if fit.batch is not None:
        # the cache's state is shared read-only: a copy for the points that may write to it
        # (plugins signed NOTHING for the pod are not called at Reserve, Permit and PreBind)
        writers = prop.fw.post_filter if res.node is None else fit.batch.entry.roles.binding_writes
        res.state = fit.state.clone() if writers else fit.state
    return res


def check_choice(prop: Proposal, snap: Snapshot, row: int) -> None:
    """A ValueError unless ``row`` is one of the rows the proposal found feasible."""
    if prop.result.node is not None:
        raise ValueError(f"pod {prop.pod.key}: the proposal was already committed to node {prop.result.node}")
    if 0 <= row < snap.n and bool((prop.rows == row).any()):
        return
    if not 0 <= row < snap.n:
        raise ValueError(f"pod {prop.pod.key}: no node at row {row}")
    name, why = snap.nodes[row].name, ""
    diag = prop.fit.diagnosis
    st = diag.status_of(row) if diag is not None else None
    if st is None and not prop.fit.error:  # not examined (or the cache kept no reasons): why it would fail
        diag = Diagnosis()
        ok = prop.fw.filter_rows(prop.fit.state, prop.pod, snap, np.asarray([row], np.intp), diag)
        st = Status(Code.Success, ("it fits, but was not among the nodes examined",)) if ok.all() else diag.status_of(row)
    if st is not None and st.message:
        why = f" ({st.message})"
    raise ValueError(
        f"pod {prop.pod.key}: node {name} is not one of the {prop.rows.size} feasible nodes the "
        f"scheduling cycle found{why}"
    )


def find_nodes_that_fit(
    fw: Framework, state: CycleState, pod: Pod, snap: Snapshot, ctx: CycleContext, *, use_cache: bool = True
) -> Feasible:
    """findNodesThatFitPod: PreFilter, then Filter from the rotating start index until enough
    nodes fit (the adaptive percentageOfNodesToScore; one node when nothing scores). The
    equivalence cache answers when it may (not with nominated pods, which need the full path);
    on a miss it runs the PreFilter, and the regular path goes on from it when it cannot answer."""
    pct = fw.percentage_of_nodes_to_score
    if pct is None:
        pct = ctx.percentage_of_nodes_to_score
    nominator = fw.handle.nominator
    pre: PreFiltered | None = None
    if use_cache and not pod.nominated_node_name and not (nominator is not None and nominator.nominated):
        scoring = fw.has_scoring

        def num_to_find(m: int) -> int:
            return num_feasible_nodes_to_find(m, pct) if scoring else 1

        detail = ctx.failure_detail or bool(fw.post_filter)
        found = fw.cache.find_feasible(fw, state, pod, snap, ctx.start, num_to_find, detail)
        if isinstance(found, Batch):
            return Feasible(found.rows, found.examined, found.diagnosis, found.state, advance=found.examined, batch=found)
        pre = found
    diag = Diagnosis()
    if pre is None:
        pre = pre_filter(fw, state, pod, snap)
    diag.unschedulable_plugins.update(pre.narrowed_by)
    none = np.zeros(0, np.intp)
    if not pre.status.ok:
        if not pre.status.rejected:
            return Feasible(none, 0, diag, state, error=pre.status)
        diag.absent_status = pre.status
        diag.pre_filter_msg = pre.status.message
        if pre.status.plugin:
            diag.unschedulable_plugins.add(pre.status.plugin)
        return Feasible(none, 0, diag, state)
    nominated = pod.nominated_node_name
    if nominated and nominated in snap.row_of:
        # a node preemption made room on is tried first, alone
        row = np.asarray([snap.row_of[nominated]], np.intp)
        if fw.filter_rows(state, pod, snap, row, None).all():
            return Feasible(row, 1, diag, state)
    candidates = snap.order
    if pre.names is not None:
        chosen = snap.rows_of(pre.names)
        candidates = chosen[np.argsort(snap.order_positions[chosen], kind="stable")].astype(np.intp)
        diag.absent_status = pre.outside
    k = num_feasible_nodes_to_find(len(candidates), pct) if fw.has_scoring else 1
    rows, examined = find_nodes_that_pass_filters(fw, state, pod, snap, candidates, ctx.start, k, diag)
    return Feasible(rows, examined, diag, state, advance=examined)


def find_nodes_that_pass_filters(
    fw: Framework,
    state: CycleState,
    pod: Pod,
    snap: Snapshot,
    candidates: np.ndarray,
    start: int,
    num_to_find: int,
    diagnosis: Diagnosis,
) -> tuple[np.ndarray, int]:
    """findNodesThatPassFilters with sequential semantics, evaluated in vectorised chunks:
    (the first ``num_to_find`` feasible rows from ``start``, the nodes a sequential scheduler
    would have examined to find them). Failures of the examined nodes go into ``diagnosis``."""
    n = len(candidates)
    if n == 0:
        return np.zeros(0, np.intp), 0
    rotated = np.roll(candidates, -(start % n)) if start % n else candidates
    if all(pl.name in state.skip_filter for pl in fw.filter):
        take = rotated[: min(num_to_find, n)]
        return take, int(take.size)
    found: list[np.ndarray] = []
    nfound = 0
    pos = 0
    chunk = max(64, min(n, num_to_find + num_to_find // 4))
    while pos < n and nfound < num_to_find:
        rows = rotated[pos : pos + chunk]
        chunk_diag = Diagnosis()
        ok = fw.filter_rows(state, pod, snap, rows, chunk_diag)
        ok_idx = np.nonzero(ok)[0]
        need = num_to_find - nfound
        if ok_idx.size >= need:
            cut = int(ok_idx[need - 1]) + 1  # nodes after the last needed one were not examined
            found.append(rows[ok_idx[:need]])
            nfound += need
            for f in chunk_diag.failures:
                keep = np.isin(f.rows, rows[:cut])
                if keep.any():
                    diagnosis.failures.append(NodeFailures(f.plugin, f.rows[keep], f.code[keep], f.bits[keep], f.reasons))
            diagnosis.unschedulable_plugins |= chunk_diag.unschedulable_plugins
            break
        found.append(rows[ok_idx])
        nfound += int(ok_idx.size)
        diagnosis.failures.extend(chunk_diag.failures)
        diagnosis.unschedulable_plugins |= chunk_diag.unschedulable_plugins
        pos += len(rows)
        chunk = min(n, chunk * 2)
    feasible = np.concatenate(found) if found else np.zeros(0, np.intp)
    return feasible, int(feasible.size) + diagnosis.num_failed


def prioritize(fw: Framework, pod: Pod, snap: Snapshot, fit: Feasible) -> Scores:
    """prioritizeNodes: PreScore, Score, NormalizeScore and weights over the feasible rows, with
    the raw scores the equivalence cache keeps when it found the rows."""
    if fit.batch is None:
        return fw.run_score(fit.state, pod, snap, fit.rows)
    known = fw.cache.known_scores(fw, pod, snap, fit.batch)
    if known is None:  # the cache could not bring its scores up to date: every plugin scores
        fit.state = fit.state.clone()  # the entry's, shared read-only
        return fw.run_score(fit.state, pod, snap, fit.rows)
    scores = fw.run_score(fit.state, pod, snap, fit.rows, known)
    scores.in_order = fit.batch.in_order
    return scores


def select_host(scores: Scores, snap: Snapshot, ctx: CycleContext) -> int:
    """selectHost: the row with the highest total; ties broken uniformly at random (seeded) or,
    with tie-break "first", by node order."""
    if scores.in_order and ctx.tie_break == "first":
        return int(scores.rows[int(scores.total.argmax())])  # argmax: the first of the ties
    total = scores.total
    ties = (total == _MAX(total)).nonzero()[0]  # ufunc and method: no Python wrappers, every cycle
    if ties.size == 1:
        return int(scores.rows[ties[0]])
    if ctx.tie_break == "first":
        rows = scores.rows[ties]
        return int(rows[np.argmin(snap.order_positions[rows])])
    return int(scores.rows[ties[int(ctx.rng.integers(ties.size))]])


def post_filter(fw: Framework, state: CycleState, pod: Pod, snap: Snapshot, res: ScheduleResult) -> None:
    """RunPostFilterPlugins for a pod no node fits: ``res.nominated_node`` is the node to nominate
    ("" clears the nomination; None leaves it), and the FitError gains PostFilter's message."""
    assert res.diagnosis is not None
    try:
        node, st = fw.run_post_filter(state, pod, snap, res.diagnosis)
    except PluginFailure as e:
        node, st = None, e.status
        res.error = e.cause
    if st.message:  # an Error's message too: upstream only logs it, but puts it in the FitError
        res.diagnosis.post_filter_msg = st.message
        res.message = res.diagnosis.fit_error(snap.n)
    res.nominated_node = node


# ---- the same points over given nodes (extender, preemption) ---------------------------------
def pre_filter(fw: Framework, state: CycleState, pod: Pod, snap: Snapshot, *, run_all: bool = False) -> PreFiltered:
    """RunPreFilterPlugins into ``state``; ``run_all`` goes on after a rejection (explain)."""
    return fw.run_pre_filter(state, pod, snap, run_all=run_all)


def filter_nodes(
    fw: Framework,
    state: CycleState,
    pod: Pod,
    snap: Snapshot,
    rows: np.ndarray,
    pre: PreFiltered,
    *,
    nominated: bool = True,
) -> tuple[np.ndarray, Diagnosis]:
    """Filter ``rows`` after ``pre`` (the PreFilter of ``state``), each with the pods nominated to
    it unless not ``nominated``: (pass mask, why the others failed). A PreFilter rejection fails
    every row; rows a PreFilterResult left out fail with ``pre.outside``. A PreFilter Error
    raises PluginFailure."""
    diag = Diagnosis()
    ok = np.zeros(len(rows), bool)
    if not pre.status.ok:
        if not pre.status.rejected:
            raise PluginFailure(pre.status)
        diag.absent_status = pre.status
        return ok, diag
    inside = np.ones(len(rows), bool)
    if pre.names is not None:
        inside = np.fromiter((snap.nodes[int(r)].name in pre.names for r in rows), bool, len(rows))
        diag.absent_status = pre.outside
    idx = np.flatnonzero(inside)
    if idx.size:
        ok[idx] = fw.filter_rows(state, pod, snap, np.asarray(rows, np.intp)[idx], diag, nominated=nominated)
    return ok, diag


def score_nodes(fw: Framework, pod: Pod, snap: Snapshot, rows: np.ndarray) -> Scores:
    """PreScore and Score over ``rows`` (after a PreFilter whose state they may read)."""
    state = CycleState()
    fw.run_pre_filter(state, pod, snap, run_all=True)
    return fw.run_score(state, pod, snap, rows)


# ---- every plugin on every node (explain) ----------------------------------------------------
@dataclass
class EveryPlugin:
    """Every filter plugin's verdict on every node (``rows``, in node order), the feasible
    nodes, why the others fail (as the cycle would report it), their scores and the node the
    cycle would select. ``error``: the plugin failure that stopped it (scores or everything)."""

    rows: np.ndarray
    pre: PreFiltered | None = None
    rejected: dict[str, Status] = field(default_factory=dict)  # PreFilter rejections, per plugin
    verdicts: dict[str, FilterResult | None] = field(default_factory=dict)  # None: skipped
    inside: np.ndarray | None = None  # rows a PreFilterResult kept
    feasible: np.ndarray | None = None
    diagnosis: Diagnosis = field(default_factory=Diagnosis)
    scores: Scores | None = None
    selected: int | None = None  # row
    error: PluginFailure | None = None


def evaluate_every_plugin(fw: Framework, pod: Pod, snap: Snapshot, ctx: CycleContext) -> EveryPlugin:
    """Explain's cycle: PreFilter (all of it), every filter plugin on every node without stopping
    at the first failure, the scores of the feasible nodes and the host the cycle would select."""
    rows = np.asarray(snap.order, np.intp)
    out = EveryPlugin(rows)
    state = CycleState()
    try:
        out.pre, out.verdicts = filter_every_plugin(fw, state, pod, snap, rows)
    except PluginFailure as e:
        out.error = e
        return out
    out.rejected = {p: st for p, st in out.pre.per_plugin.items() if st.code not in (Code.Success, Code.Skip)}
    out.feasible = _first_failures(out, rows, snap)
    feasible_rows = rows[out.feasible]
    if feasible_rows.size:
        try:
            out.scores = fw.run_score(state, pod, snap, feasible_rows)
        except PluginFailure as e:
            out.error = e
            return out
        if feasible_rows.size == 1:
            out.selected = int(feasible_rows[0])
        else:
            out.selected = select_host(out.scores, snap, ctx)
    return out


def filter_every_plugin(
    fw: Framework, state: CycleState, pod: Pod, snap: Snapshot, rows: np.ndarray
) -> tuple[PreFiltered, dict[str, FilterResult | None]]:
    """Every PreFilter plugin (on after a rejection), then, unless one rejected, every filter
    plugin over every row of ``rows`` without stopping at the first failure: (PreFilter's outcome,
    plugin -> its verdicts, None when its PreFilter skipped it)."""
    pre = pre_filter(fw, state, pod, snap, run_all=True)
    verdicts: dict[str, FilterResult | None] = {}
    if all(st.code in (Code.Success, Code.Skip) for st in pre.per_plugin.values()):
        for pl in fw.filter:
            skipped = pl.name in state.skip_filter
            verdicts[pl.name] = None if skipped else fw.call(pl, "Filter", pl.filter, state, pod, snap, rows)
    return pre, verdicts


def _first_failures(out: EveryPlugin, rows: np.ndarray, snap: Snapshot) -> np.ndarray:
    """The feasible mask; the Diagnosis the cycle would build (each node's first failing
    plugin, PreFilter's rejection or narrowing for the rest)."""
    diag, pre = out.diagnosis, out.pre
    assert pre is not None
    feasible = np.ones(len(rows), bool)
    if out.rejected:  # a PreFilter rejection is that plugin's verdict on every node
        feasible[:] = False
        diag.absent_status = pre.status
        diag.pre_filter_msg = pre.status.message
        return feasible
    for name, res in out.verdicts.items():
        if res is None:
            continue
        failed = res.code != 0
        feasible &= ~failed
        first = failed & ~np.isin(rows, diag.rows_with_code(Code.Unschedulable)) & ~np.isin(
            rows, diag.rows_with_code(Code.UnschedulableAndUnresolvable)
        )
        if first.any():
            diag.failures.append(NodeFailures.from_result(name, rows, res, first))
    if pre.names is not None:
        out.inside = np.isin(rows, snap.rows_of(pre.names))
        feasible &= out.inside
        diag.absent_status = pre.outside
    return feasible


__all__: list[Any] = [
    "CycleContext",
    "EveryPlugin",
    "Feasible",
    "Proposal",
    "ScheduleResult",
    "check_choice",
    "commit",
    "evaluate_every_plugin",
    "filter_nodes",
    "filter_every_plugin",
    "find_nodes_that_fit",
    "num_feasible_nodes_to_find",
    "post_filter",
    "pre_filter",
    "prioritize",
    "propose",
    "schedule_pod",
    "score_nodes",
    "select_host",
]

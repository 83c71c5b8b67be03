"""Framework: one profile's plugins, run at each extension point over numpy rows.

Every plugin call goes through ``Framework.call``: an exception becomes an Error status naming
the plugin and the point (``failures``), and the observers (per-plugin metrics, the UI's
timings) hear the call's time and status. The order in which the points run for one pod is
``kubesched.framework.cycle``'s; the equivalence cache (``equivalence``) supplies verdicts and
raw scores to these loops for pods the plugins sign.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from kubesched.framework.cycle_state import CycleState
from kubesched.framework.diagnosis import Diagnosis, NodeFailures, unsatisfied_plugins
from kubesched.framework.equivalence import EquivalenceCache
from kubesched.framework.failures import PluginFailure, error_status, named_failure, plugin_error, raised
from kubesched.framework.interfaces import (
    NODE_LOCAL,
    NOT_INVOLVED,
    NOTHING,
    ROW_LOCAL,
    BindPlugin,
    FilterPlugin,
    NodeLocal,
    PermitPlugin,
    Plugin,
    PostBindPlugin,
    PostFilterPlugin,
    PreBindPlugin,
    PreEnqueuePlugin,
    PreFilterPlugin,
    PreScorePlugin,
    QueueSortPlugin,
    ReservePlugin,
    RowLocal,
    ScorePlugin,
    Signature,
    SignPlugin,
)
from kubesched.framework.nominated import recheck_with_nominated
from kubesched.framework.observers import PluginObserver, PluginRecorder, code_of, record, tell
from kubesched.framework.registry import ProfilePlugins
from kubesched.framework.scoring import KnownScores, Scores, check_score_range, normalizes
from kubesched.framework.status import Code, FilterResult, PreFilterResult, Status
from kubesched.framework.waiting import MAX_PERMIT_TIMEOUT

if TYPE_CHECKING:
    from kubesched.api.objects import Pod
    from kubesched.framework.handle import Handle
    from kubesched.framework.profile import ProfileSpec
    from kubesched.framework.registry import Registry
    from kubesched.state.snapshot import Snapshot

_NO_RAW: dict[str, np.ndarray] = {}  # run_score without known raw scores (never written to)
_ERROR = np.int8(Code.Error)  # compared with code arrays per filter call: an enum member converts slowly


@dataclass
class PreFiltered:
    """RunPreFilterPlugins' outcome: the status, the nodes a PreFilterResult narrowed the
    cycle to (None: every node) and the plugins that narrowed, each plugin's own status."""

    status: Status
    names: frozenset[str] | None = None
    narrowed_by: list[str] = field(default_factory=list)
    per_plugin: dict[str, Status] = field(default_factory=dict)

    @property
    def outside(self) -> Status:
        """The status of a node the PreFilterResult left out."""
        return Status(Code.UnschedulableAndUnresolvable, (unsatisfied_plugins(self.narrowed_by),))


class BindingPlugins(NamedTuple):
    """A profile's Reserve, Permit and PreBind plugins less those a pod's signatures leave out."""

    reserve: list[ReservePlugin]
    permit: list[PermitPlugin]
    pre_bind: list[PreBindPlugin]


#: SignPlugin mixins whose sign_pod answers a constant
_FIXED: dict[Callable[..., Any], Signature] = {NodeLocal.sign_pod: NODE_LOCAL, RowLocal.sign_pod: ROW_LOCAL}


class Framework:
    def __init__(self, profile: ProfileSpec, registry: Registry, handle: Handle) -> None:
        self.profile = profile
        self.profile_name = profile.scheduler_name
        self.handle = handle
        handle.framework = self
        self.percentage_of_nodes_to_score = profile.percentage_of_nodes_to_score
        made = ProfilePlugins(registry, profile, handle)
        instances = made.instances
        at = made.at
        self.pre_enqueue: list[PreEnqueuePlugin] = at("preEnqueue", PreEnqueuePlugin)
        self._pre_enqueue_plan = tuple((pl, getattr(type(pl), "needs_pod_field", "")) for pl in self.pre_enqueue)
        qs = at("queueSort", QueueSortPlugin)
        self.queue_sort: QueueSortPlugin | None = qs[0] if qs else None
        self.pre_filter: list[PreFilterPlugin] = at("preFilter", PreFilterPlugin)
        self.filter: list[FilterPlugin] = at("filter", FilterPlugin)
        self.post_filter: list[PostFilterPlugin] = at("postFilter", PostFilterPlugin)
        self.pre_score: list[PreScorePlugin] = at("preScore", PreScorePlugin)
        self.score: list[ScorePlugin] = at("score", ScorePlugin)
        self.score_weights: dict[str, int] = {
            ref.name: (ref.weight or 1) for ref in profile.plugins.get("score", [])
        }
        self.reserve: list[ReservePlugin] = at("reserve", ReservePlugin)
        self.permit: list[PermitPlugin] = at("permit", PermitPlugin)
        self.pre_bind: list[PreBindPlugin] = at("preBind", PreBindPlugin)
        self._binding: dict[frozenset[str], BindingPlugins] = {}  # by the plugins left out
        self._all = self.binding_plugins(frozenset())
        self.bind: list[BindPlugin] = at("bind", BindPlugin)
        self.post_bind: list[PostBindPlugin] = at("postBind", PostBindPlugin)
        self.plugins = instances
        # The plugins of the cycle's points that sign pods (SignPlugin), in a fixed order: their
        # signatures of a pod (``sign``) key the equivalence cache, which serves this profile.
        cycle = {*self.pre_filter, *self.filter, *self.pre_score, *self.score}
        self.signers: tuple[SignPlugin, ...] = tuple(
            pl for pl in instances.values() if pl in cycle and isinstance(pl, SignPlugin)
        )
        # a signer whose answer is its mixin's constant (NodeLocal, RowLocal) is not asked each cycle,
        # nor part of the cache's key (hashed twice a cycle)
        fixed = {pl: _FIXED.get(type(pl).sign_pod) for pl in self.signers}
        self._fixed: dict[SignPlugin, Signature] = {pl: sig for pl, sig in fixed.items() if sig is not None}
        self._asked: tuple[SignPlugin, ...] = tuple(pl for pl, sig in fixed.items() if sig is None)
        # each asked signer with the Pod attribute it needs ("": asked for every pod)
        self._ask_plan = tuple((pl, type(pl).needs_pod_field) for pl in self._asked)
        self.score_plan = [(pl, self.score_weights.get(pl.name, 1)) for pl in self.score]
        self._zero_norm: dict[tuple[ScorePlugin, int], np.ndarray | int] = {}
        self.cache = EquivalenceCache()
        self.observers: list[PluginObserver] = []  # ``add_observer``; empty: no clock reads
        #: hear each call's result while some observer is added (kubesched ui: every extension
        #: point's result per pod)
        self.recorders: list[PluginRecorder] = []

    def add_observer(self, observer: PluginObserver) -> None:
        """``observer`` hears every plugin call from now on (after those added before it)."""
        self.observers.append(observer)

    def remove_observer(self, observer: PluginObserver) -> None:
        """``observer`` hears no more calls (a no-op when it was not added)."""
        if observer in self.observers:
            self.observers.remove(observer)

    def add_recorder(self, recorder: PluginRecorder) -> None:
        """``recorder`` hears what each plugin call returns, while some observer is added."""
        self.recorders.append(recorder)

    def remove_recorder(self, recorder: PluginRecorder) -> None:
        if recorder in self.recorders:
            self.recorders.remove(recorder)

    # ---- calling plugins ----------------------------------------------------------------
    def call(self, plugin: Plugin, point: str, fn: Callable[..., Any], *args: Any) -> Any:
        """``fn(*args)``, one of ``plugin``'s methods at ``point``: an exception becomes an Error
        status naming the plugin (``PluginFailure``), and the observers hear the time and status."""
        observers = self.observers
        if not observers:  # the common case: no clock reads
            try:
                return fn(*args)
            except PluginFailure:
                raise
            except Exception as e:  # noqa: BLE001 - a plugin bug must not crash the scheduler
                raise raised(plugin, point, e) from e
        t0 = time.perf_counter()
        try:
            out = fn(*args)
        except PluginFailure as f:
            tell(observers, plugin.name, point, "Error", time.perf_counter() - t0)
            record(self.recorders, plugin.name, point, args, f.status)
            raise
        except Exception as e:  # noqa: BLE001 - as above
            tell(observers, plugin.name, point, "Error", time.perf_counter() - t0)
            failure = raised(plugin, point, e)
            record(self.recorders, plugin.name, point, args, failure.status)
            raise failure from e
        tell(observers, plugin.name, point, code_of(out), time.perf_counter() - t0)
        record(self.recorders, plugin.name, point, args, out)
        return out

    def sign(self, pod: Pod, snap: Snapshot) -> tuple[Signature | None, ...]:
        """The Signatures of ``pod`` now from the signers whose answer is not a constant, in
        ``signers`` order (None: not signable); ``signed`` gives every signer's."""
        if self.observers:
            return tuple([self.call(pl, "Sign", pl.sign_pod, pod, snap) for pl in self._asked])
        # unobserved, ``call``'s guard around the loop (asked every cycle: a frame less per signer);
        # a signer is not asked for a pod without the attribute it needs (its answer is known)
        out = []
        pl = None
        try:
            for pl, need in self._ask_plan:
                out.append(NOT_INVOLVED if need and not getattr(pod, need) else pl.sign_pod(pod, snap))
        except PluginFailure:
            raise
        except Exception as e:  # noqa: BLE001 - as in ``call``
            raise raised(pl, "Sign", e) from e
        return tuple(out)

    def signed(self, answers: tuple[Signature | None, ...]) -> dict[SignPlugin, Signature | None]:
        """Every signer's Signature (``signers`` order), given ``sign``'s ``answers``."""
        asked = dict(zip(self._asked, answers, strict=True))
        return {pl: asked[pl] if pl in asked else self._fixed[pl] for pl in self.signers}

    def row_local(self, pod: Pod, snap: Snapshot, plugins: Iterable[Plugin]) -> bool:
        """Whether every one of ``plugins`` judges a node by the pod and that node's row alone,
        with PreFilter state from the pod alone (signed NODE or ROW, not each cycle), or takes
        no part: then changing one node's pods cannot change another node's verdict."""
        for pl in plugins:
            if not isinstance(pl, SignPlugin):
                return False
            sig = _FIXED.get(type(pl).sign_pod) or self.call(pl, "Sign", pl.sign_pod, pod, snap)
            if sig is None or (sig.reads != NOTHING and sig.pre_filter_each_cycle):
                return False
        return True

    @property
    def has_scoring(self) -> bool:
        return bool(self.score)

    # ---- PreEnqueue ------------------------------------------------------------------
    def run_pre_enqueue(self, pod: Pod) -> Status:
        """RunPreEnqueuePlugins; a plugin that needs a pod attribute this pod lacks
        (``SignPlugin.needs_pod_field``) takes no part and is not called."""
        for pl, need in self._pre_enqueue_plan:
            if need and not getattr(pod, need):
                continue
            st = self.call(pl, "PreEnqueue", pl.pre_enqueue, pod)
            if st is not None and not st.ok:
                return named_failure("PreEnqueue", pl, st)
        return Status()

    # ---- PreFilter -------------------------------------------------------------------
    def run_pre_filter(self, state: CycleState, pod: Pod, snap: Snapshot, *, run_all: bool = False) -> PreFiltered:
        """RunPreFilterPlugins into ``state``; ``run_all`` keeps going after a rejection (explain
        shows every plugin)."""
        names: frozenset[str] | None = None
        ret = Status()
        with_nodes: list[str] = []
        per_plugin: dict[str, Status] = {}
        for pl in self.pre_filter:
            out = self.call(pl, "PreFilter", pl.pre_filter, state, pod, snap)
            if isinstance(out, PreFilterResult):
                res, st = out, out.status
            else:
                res, st = None, (out or Status())
            st.plugin = pl.name
            per_plugin[pl.name] = st
            if st.code == Code.Skip:
                state.skip_filter.add(pl.name)
                continue
            if not st.ok:
                if st.code == Code.UnschedulableAndUnresolvable:
                    if not run_all:
                        return PreFiltered(st, None, with_nodes, per_plugin)
                    if ret.ok or ret.code != Code.UnschedulableAndUnresolvable:
                        ret = st
                    continue
                if st.code == Code.Unschedulable:
                    if ret.ok:
                        ret = st
                    continue
                err = error_status("PreFilter", pl.name, st)
                if not run_all:
                    return PreFiltered(err, None, with_nodes, per_plugin)
                ret = err
                continue
            if res is not None and res.node_names is not None:
                with_nodes.append(pl.name)
                names = res.node_names if names is None else names & res.node_names
                if not names and ret.ok:
                    msg = unsatisfied_plugins(with_nodes, simultaneously=True)
                    st2 = Status(Code.UnschedulableAndUnresolvable, (msg,))
                    if not run_all:
                        return PreFiltered(st2, names, with_nodes, per_plugin)
                    ret = st2
        return PreFiltered(ret, names, with_nodes, per_plugin)

    # ---- Filter ----------------------------------------------------------------------
    def active_filters(self, state: CycleState) -> list[FilterPlugin]:
        return [pl for pl in self.filter if pl.name not in state.skip_filter]

    def filter_rows(
        self,
        state: CycleState,
        pod: Pod,
        snap: Snapshot,
        rows: np.ndarray,
        diagnosis: Diagnosis | None,
        *,
        nominated: bool = True,
        only: list[FilterPlugin] | None = None,
    ) -> np.ndarray:
        """RunFilterPlugins over ``rows``, in order; a node stops at its first failing plugin.
        Returns the pass mask over ``rows``; failures go into ``diagnosis`` (None: not kept).
        ``nominated``: a node must also fit with the pods nominated to it
        (RunFilterPluginsWithNominatedPods); ``only`` restricts the run to those plugins."""
        alive = np.ones(len(rows), bool)
        plugins = self.active_filters(state)
        if only is not None:
            plugins = [pl for pl in plugins if pl in only]
        cur: np.ndarray | None = None  # positions still alive; None while every row is
        for pl in plugins:
            if cur is not None and cur.size == 0:
                break
            sub = rows if cur is None else rows[cur]
            res, failed = self.filter_plugin(pl, state, pod, snap, sub)
            if failed is not None:
                if diagnosis is not None:
                    diagnosis.failures.append(NodeFailures.from_result(pl.name, sub, res, failed))
                    diagnosis.unschedulable_plugins.add(pl.name)
                alive[failed if cur is None else cur[failed]] = False
                cur = np.flatnonzero(alive)
        nominator = self.handle.nominator
        if nominated and nominator is not None and nominator.nominated and alive.any():
            recheck_with_nominated(self, state, pod, snap, rows, alive, diagnosis, only)
        return alive

    def passes_rows(
        self, state: CycleState, pod: Pod, snap: Snapshot, rows: np.ndarray, only: list[FilterPlugin]
    ) -> np.ndarray:
        """Pass mask of ``only`` (those not skipped) over ``rows``, without reasons: plugins'
        ``passes`` fast path where they have one, else ``filter`` on the rows still alive.
        The mask may be a plugin's own array: callers read it, never write to it."""
        alive: np.ndarray | None = None
        # unobserved, ``call``'s guard around the loop, as in ``sign`` (the equivalence cache
        # re-judges rows with it every cycle: a frame less per plugin)
        unobserved = not self.observers
        pl = None
        try:
            for pl in only:
                if pl.name in state.skip_filter:
                    continue
                if not isinstance(pl, SignPlugin):
                    ok = None
                elif unobserved:
                    ok = pl.passes(state, pod, snap, rows)
                else:
                    ok = self.call(pl, "Filter", pl.passes, state, pod, snap, rows)
                if ok is not None:
                    alive = ok if alive is None else alive & ok
                    continue
                # written to below: never a plugin's own array
                alive = np.ones(len(rows), bool) if alive is None else alive.copy()
                idx = np.flatnonzero(alive)
                if idx.size == 0:
                    break
                _, failed = self.filter_plugin(pl, state, pod, snap, rows[idx])
                if failed is not None:
                    alive[idx[failed]] = False
        except PluginFailure:
            raise
        except Exception as e:  # noqa: BLE001 - as in ``call``
            raise raised(pl, "Filter", e) from e
        return np.ones(len(rows), bool) if alive is None else alive

    def filter_plugin(
        self, pl: FilterPlugin, state: CycleState, pod: Pod, snap: Snapshot, rows: np.ndarray
    ) -> tuple[FilterResult, np.ndarray | None]:
        """One plugin's Filter over ``rows``: (result, mask of rejected rows or None when none is).
        An Error on any row fails the cycle, naming the plugin."""
        res: FilterResult = self.call(pl, "Filter", pl.filter, state, pod, snap, rows)
        failed = res.code != 0
        if not failed.any():
            return res, None
        if (res.code == _ERROR).any():
            i = int(np.nonzero(res.code == _ERROR)[0][0])
            raise plugin_error("Filter", pl.name, res.status_at(i).message)
        return res, failed

    # ---- PostFilter ------------------------------------------------------------------
    def run_post_filter(
        self, state: CycleState, pod: Pod, snap: Snapshot, diagnosis: Diagnosis
    ) -> tuple[str | None, Status]:
        """RunPostFilterPlugins: first success wins; rejections' reasons are joined."""
        nominated: str | None = None
        reasons: list[str] = []
        rejector = ""
        for pl in self.post_filter:
            node, st = self.call(pl, "PostFilter", pl.post_filter, state, pod, snap, diagnosis)
            if st.ok:
                return node, st
            if st.code == Code.UnschedulableAndUnresolvable:
                st.plugin = pl.name
                return node, st
            if not st.rejected:
                return None, Status(Code.Error, st.reasons, pl.name)
            if node is not None:
                nominated = node
            reasons.extend(st.reasons)
            rejector = rejector or pl.name
        return nominated, Status(Code.Unschedulable, tuple(reasons), rejector)

    # ---- Score -----------------------------------------------------------------------
    def run_score(
        self, state: CycleState, pod: Pod, snap: Snapshot, rows: np.ndarray, known: KnownScores | None = None
    ) -> Scores:
        """PreScore + Score + NormalizeScore + weights, vectorised per plugin. ``known``: what the
        equivalence cache holds for the pod (raw scores by row, its PreScore already run), so
        that only the plugins it does not know are called (and ``per_plugin`` stays empty)."""
        if not self.score:
            return Scores(rows, np.ones(len(rows), np.int64))
        if known is None:
            state.skip_score = skip = self.run_pre_score(state, pod, snap, rows, self.pre_score)
            plan, kept, zero, total = self.score_plan, _NO_RAW, _NO_RAW, None
        else:
            skip = known.skip
            if known.fresh:
                state.skip_score = skip = skip | self.run_pre_score(state, pod, snap, rows, known.pre_score)
            plan, kept, zero = known.scorers, known.raw, known.zero
            state.known_raw = kept
            total = None if known.static is None else known.static[rows]
        # As upstream: every plugin scores, then every plugin normalizes, then weights apply, so
        # a Score error is reported before another plugin's NormalizeScore error.
        raws: list[tuple[ScorePlugin, int, np.ndarray | None]] = []  # None: the known raw is all 0
        for pl, w in plan:
            arr = kept.get(pl.name)
            if arr is not None:
                raws.append((pl, w, None if pl.name in zero else arr[rows]))
            elif pl.name not in skip:
                raws.append((pl, w, np.asarray(self.call(pl, "Score", pl.score, state, pod, snap, rows), np.int64)))
        norms = [
            self.normalize(pl, state, pod, raw) if raw is not None else self._zeros_normalized(pl, state, pod, rows.size)
            for pl, _, raw in raws
        ]
        per: dict[str, tuple[np.ndarray, np.ndarray, int]] = {}
        for (pl, w, raw), norm in zip(raws, norms, strict=True):
            if raw is not None:  # the zeros' were checked when first normalized
                check_score_range(pl, norm)
                if known is None:
                    per[pl.name] = (raw, norm, w)
            if total is None:
                total = norm * w
            else:
                total += norm * w
        if not isinstance(total, np.ndarray):  # nothing scored, or only constants
            total = np.full(len(rows), 0 if total is None else total, np.int64)
        return Scores(rows, total, per)

    def _zeros_normalized(self, pl: ScorePlugin, state: CycleState, pod: Pod, size: int) -> np.ndarray | int:
        """``pl``'s normalised scores of ``size`` zero raw scores (an int when all equal), range
        checked, computed once per size: only for plugins whose NormalizeScore reads the scores
        alone (``KnownScores.zero``)."""
        key = (pl, size)
        hit = self._zero_norm.get(key)
        if hit is None:
            norm = self.normalize(pl, state, pod, np.zeros(size, np.int64))
            check_score_range(pl, norm)
            if len(self._zero_norm) >= 4096:
                self._zero_norm.clear()
            hit = int(norm[0]) if norm.size and (norm == norm[0]).all() else norm
            if isinstance(hit, np.ndarray):
                hit.flags.writeable = False
            self._zero_norm[key] = hit
        return hit

    def run_pre_score(
        self, state: CycleState, pod: Pod, snap: Snapshot, rows: np.ndarray, plugins: Iterable[PreScorePlugin]
    ) -> set[str]:
        """RunPreScorePlugins of ``plugins``: the names of those that return Skip."""
        skip: set[str] = set()
        for pl in plugins:
            st = self.call(pl, "PreScore", pl.pre_score, state, pod, snap, rows) or Status()
            if st.code == Code.Skip:
                skip.add(pl.name)
            elif not st.ok:
                raise plugin_error("PreScore", pl.name, st.message)
        return skip

    def normalize(self, pl: ScorePlugin, state: CycleState, pod: Pod, raw: np.ndarray) -> np.ndarray:
        """``pl``'s NormalizeScore of ``raw`` (``raw`` itself when it does not normalize: as upstream
        calls NormalizeScore only for plugins with ScoreExtensions, it is then not called)."""
        if not normalizes(pl):
            return raw
        norm = self.call(pl, "NormalizeScore", pl.normalize, state, pod, raw.copy())
        return raw if norm is None else np.asarray(norm, np.int64)

    # ---- Reserve / Permit / Bind ------------------------------------------------------
    def _until_failure(self, plugins: list[Any], point: str, method: str, *args: Any) -> Status:
        """Call ``method`` of each plugin in order; the first non-success status, naming its plugin."""
        if not plugins:
            return Status()
        for pl in plugins:
            st = self.call(pl, point, getattr(pl, method), *args)
            if st is not None and not st.ok:
                return named_failure(point, pl, st)
        return Status()

    def binding_plugins(self, uninvolved: frozenset[str]) -> BindingPlugins:
        """The Reserve, Permit and PreBind plugins but those named in ``uninvolved`` (signed
        NOTHING for a pod: they would do nothing for it there), one object per set."""
        out = self._binding.get(uninvolved)
        if out is None:
            out = self._binding[uninvolved] = BindingPlugins(
                [pl for pl in self.reserve if pl.name not in uninvolved],
                [pl for pl in self.permit if pl.name not in uninvolved],
                [pl for pl in self.pre_bind if pl.name not in uninvolved],
            )
        return out

    def run_reserve(self, state: CycleState, pod: Pod, node: str) -> Status:
        return self._until_failure((state.binding or self._all).reserve, "Reserve", "reserve", state, pod, node)

    def run_unreserve(self, state: CycleState, pod: Pod, node: str) -> None:
        for pl in reversed((state.binding or self._all).reserve):
            try:
                self.call(pl, "Unreserve", pl.unreserve, state, pod, node)
            except PluginFailure:  # unreserve must reach every plugin
                pass

    def run_permit(self, state: CycleState, pod: Pod, node: str) -> tuple[Status, dict[str, float]]:
        """RunPermitPlugins: the first rejection or error stops; otherwise Wait (with each waiting
        plugin's timeout, capped at 15 minutes) or Success."""
        permit = (state.binding or self._all).permit
        if not permit:
            return Status(), {}
        waits: dict[str, float] = {}
        for pl in permit:
            st, timeout = self.call(pl, "Permit", pl.permit, state, pod, node)
            st = st or Status()
            if st.ok:
                continue
            if st.code == Code.Wait:
                waits[pl.name] = min(max(float(timeout), 0.0), MAX_PERMIT_TIMEOUT)
                continue
            if st.rejected:
                st.plugin = pl.name
                return st, {}
            return error_status("Permit", pl.name, st), {}
        if waits:
            msg = f'one or more plugins asked to wait and no plugin rejected pod "{pod.name}"'
            return Status(Code.Wait, (msg,)), waits
        return Status(), {}

    def run_pre_bind_pre_flights(self, state: CycleState, pod: Pod, node: str) -> Status:
        """RunPreBindPreFlights: Success when some PreBind plugin has work, Skip when none has
        (or there is none), else the Error; plugins that skip are left out of PreBind."""
        ret = Status(Code.Skip)
        skip: set[str] = set()
        for pl in (state.binding or self._all).pre_bind:
            st = self.call(pl, "PreBindPreFlight", pl.pre_bind_pre_flight, state, pod, node) or Status()
            if st.ok:
                ret = Status()
            elif st.code == Code.Skip:
                skip.add(pl.name)
            elif st.code == Code.Error:
                return error_status("PreBindPreFlight", pl.name, st)
            else:
                return Status.error(
                    f'PreBindPreFlight {pl.name} returned "{st.code.name}", which is unsupported. '
                    "It is supposed to return Success, Skip, or Error status",
                    pl.name,
                )
        state.skip_pre_bind = skip
        return ret

    def run_pre_bind(self, state: CycleState, pod: Pod, node: str) -> Status:
        plugins = [pl for pl in (state.binding or self._all).pre_bind if pl.name not in state.skip_pre_bind]
        return self._until_failure(plugins, "PreBind", "pre_bind", state, pod, node)

    def run_bind(self, state: CycleState, pod: Pod, node: str) -> Status:
        for pl in self.bind:
            st = self.call(pl, "Bind", pl.bind, state, pod, node) or Status()
            if st.code == Code.Skip:
                continue
            if not st.ok and not st.rejected:
                return error_status("Bind", pl.name, st)
            st.plugin = pl.name
            return st
        return Status(Code.Skip)

    def run_post_bind(self, state: CycleState, pod: Pod, node: str) -> None:
        for pl in self.post_bind:
            try:
                self.call(pl, "PostBind", pl.post_bind, state, pod, node)
            except PluginFailure:  # post-bind is informational
                pass


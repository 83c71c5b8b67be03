"""The cluster at any step of a run: a start state and its changes in order, one Snapshot moved along.

A run (``kubesched schedule`` in memory, or a simulation read back from its folder) is a start
state plus ``steps``: pods bound and deleted, nodes added, removed, cordoned and uncordoned. The
UI shows the cluster after any number of steps (a slider over the run) and explains a pod against
the cluster as its attempt saw it. Moving forward applies steps; moving back undoes pod steps, and
rebuilds from the start when a node step is in the way (node steps are rare).

On nodes with GPUs, which GPUs a pod holds depends on what else was there when it came (the
default choice is the best fit, or the lowest free GPUs), so moving back and forth could seat a
re-added pod elsewhere. The first time a step is reached, it is reached one step at a time and
the GPUs its pod got are noted (``_plan``); every later visit gives each pod those GPUs back, so
the cluster at a step is the same whatever path led to it.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from kubesched.api.objects import Node, Pod
from kubesched.config import SchedulerConfig
from kubesched.errors import InputError
from kubesched.framework.registry import Registry
from kubesched.gpu.model import node_gpu_count
from kubesched.gpu.state import GpuState
from kubesched.scheduler import Scheduler
from kubesched.state.snapshot import Snapshot

BIND, DELETE = "bind", "delete"
NODE_ADD, NODE_REMOVE, CORDON, UNCORDON = "node_add", "node_remove", "cordon", "uncordon"
POD_STEPS = (BIND, DELETE)


@dataclass(frozen=True)
class Step:
    kind: str
    name: str  # pod key (bind, delete) or node name
    obj: Pod | Node | None = None  # the pod as bound (bind, delete); the node (node_add)


class Timeline:
    """``start()`` builds the Snapshot at step 0; ``steps`` follow. Thread-safe (one lock)."""

    def __init__(
        self,
        config: SchedulerConfig,
        registry: Registry,
        start: Callable[[], Snapshot],
        steps: list[Step],
        *,
        seed: int | None = 0,
        nodes: dict[str, Node] | None = None,
    ) -> None:
        self.config = config
        self.registry = registry
        self._start = start
        self.steps = steps
        self.seed = seed
        self.nodes = dict(nodes or {})  # every node ever seen, by name (node_remove is undone from it)
        self.lock = threading.RLock()
        self._snap: Snapshot | None = None
        self._sched: Scheduler | None = None
        self.pos = 0
        self._gpus = False  # does the run have nodes with GPUs (decided when first built)
        # per step reached so far: (node, GPUs) of the pod it binds or deletes, None for other
        # steps and pods without GPUs; and per pod uid, what its GpuState gives it (``fixed``)
        self._plan: list[tuple[str, tuple[int, ...]] | None] = []
        self._fixed: dict[str, tuple[str, tuple[int, ...]]] = {}

    def __len__(self) -> int:
        return len(self.steps)

    def copy(self) -> Timeline:
        """A timeline over the same run with a snapshot of its own (rebuilt from the start)."""
        return Timeline(self.config, self.registry, self._start, self.steps, seed=self.seed, nodes=self.nodes)

    def adopt(self, snap: Snapshot, step: int) -> None:
        """Start from a snapshot already at ``step`` (a finished run's own), instead of rebuilding
        from the start and replaying: opening a large cluster pays for one ``Snapshot.of``, not two.
        Not on GPU nodes: the run's GPUs of each pod are only known by replaying it step by step."""
        if any(node_gpu_count(n) for n in snap.nodes):
            return
        with self.lock:
            self._snap, self._sched, self.pos = snap, None, step
            for n in snap.nodes:
                self.nodes.setdefault(n.name, n)

    def _rebuild(self) -> None:
        self._snap = snap = self._start()
        for n in snap.nodes:
            self.nodes.setdefault(n.name, n)
        self._sched = None
        self.pos = 0
        self._gpus = any(node_gpu_count(n) for n in self.nodes.values())
        if self._gpus:  # the pods already on nodes take their GPUs in input order, as on every rebuild
            st = GpuState.of(snap)
            st.fixed = self._fixed
            for pod in snap.pod_by_uid.values():
                self._note_gpus(st, pod)

    @property
    def scheduler(self) -> Scheduler:
        """A scheduler over the moving snapshot (built once per rebuild: plugins may load data)."""
        with self.lock:
            if self._snap is None:
                self._rebuild()
            if self._sched is None:
                assert self._snap is not None
                self._sched = Scheduler(self.config, self._snap, None, self.registry, seed=self.seed)
            return self._sched

    def seek(self, step: int) -> Snapshot:
        """The snapshot after ``step`` steps (clamped to the run). Callers hold ``lock`` while
        they read it: another thread's seek moves the same snapshot."""
        step = max(0, min(step, len(self.steps)))
        if self._snap is None:
            self._rebuild()
        if step < self.pos and any(s.kind not in POD_STEPS for s in self.steps[step : self.pos]):
            self._rebuild()
        snap = self._snap
        assert snap is not None
        while self.pos < step:
            self._forward(snap)
        while self.pos > step:
            self.pos -= 1
            self._apply(snap, self.pos, forward=False)
        return snap

    def at(self, step: int | None) -> tuple[Snapshot, int]:
        """The snapshot after ``step`` steps (None: the end of the run) and that step; a step
        outside the run is the request's mistake. Callers hold ``lock``, as for ``seek``."""
        total = len(self.steps)
        step = total if step is None else step
        if not 0 <= step <= total:
            raise InputError(f"must be between 0 and {total}", path="step")
        return self.seek(step), step

    def _forward(self, snap: Snapshot) -> None:
        """Apply the next step. Reached for the first time on a GPU cluster, the step's pod is
        noted in the plan: as it leaves, the GPUs it had; as it comes, the GPUs it gets then (the
        state caught up right after it, so each pod's choice sees the pods of that step)."""
        i = self.pos
        s = self.steps[i]
        first = self._gpus and i == len(self._plan)
        if first and s.kind == DELETE:
            assert isinstance(s.obj, Pod)
            self._plan.append(self._fixed.get(s.obj.uid))
        self._apply(snap, i, forward=True)
        if first and s.kind != DELETE:
            self._plan.append(self._note_gpus(GpuState.of(snap), s.obj) if s.kind == BIND else None)
        self.pos += 1

    def _note_gpus(self, st: GpuState, pod: Pod | Node | None) -> tuple[str, tuple[int, ...]] | None:
        """The pod's node and GPUs in ``st`` (None without GPUs), kept as the ones it gets back."""
        assert isinstance(pod, Pod)
        idx = st.indices_of(pod.uid)
        if idx is None:
            return None
        self._fixed[pod.uid] = got = (pod.node_name, idx)
        return got

    def _apply(self, snap: Snapshot, i: int, *, forward: bool) -> None:
        s = self.steps[i]
        kind = s.kind
        if not forward:
            kind = {BIND: DELETE, DELETE: BIND}.get(kind, kind)
        if kind == BIND:
            assert isinstance(s.obj, Pod)
            if self._gpus:  # the GPUs noted for this step's pod; none yet: the usual choice
                got = self._plan[i] if i < len(self._plan) else None
                if got is None:
                    self._fixed.pop(s.obj.uid, None)
                else:
                    self._fixed[s.obj.uid] = got
            snap.add_pod(s.obj)
        elif kind == DELETE:
            assert isinstance(s.obj, Pod)
            snap.remove_pod(s.obj.uid)
        elif kind == NODE_ADD:
            node = s.obj if isinstance(s.obj, Node) else self.nodes[s.name]
            self.nodes[s.name] = node
            snap.add_node(node)
        elif kind == NODE_REMOVE:
            if s.name in snap.row_of:
                row = snap.row_of[s.name]
                for uid in list(snap.pods_on[row]):
                    snap.remove_pod(uid)
                snap.remove_node(s.name)
        elif kind in (CORDON, UNCORDON) and s.name in snap.row_of:
            node = snap.nodes[snap.row_of[s.name]]
            snap.update_node(replace(node, unschedulable=kind == CORDON))

    def explain(self, pod: Pod, step: int, columns: bool = False) -> tuple[dict[str, Any], dict[str, dict[str, float]], float]:
        """``explain -o json`` for ``pod`` against the cluster after ``step`` steps (``columns``: its
        nodes as columns, ``explain_columns``), the time each plugin took per extension point (ms),
        and the whole explain's milliseconds."""
        from kubesched.explain import explain_columns, explain_pod

        with self.lock:
            self.seek(step)
            sched = self.scheduler
            timing: dict[str, dict[str, float]] = {}

            def observe(plugin: str, point: str, _code: str, seconds: float) -> None:
                d = timing.setdefault(point, {})
                d[plugin] = d.get(plugin, 0.0) + seconds * 1000.0

            fws = list(sched.frameworks.values())
            for fw in fws:
                fw.add_observer(observe)
            t0 = time.perf_counter()
            # a what-if: every explain breaks ties with the draws `kubesched explain --seed` makes
            # (the scheduler's start index and random state as built), not with what earlier
            # explains left, and a pod already on a node is explained as if pending
            try:
                with sched.what_if() as snap:
                    snap.remove_pod(pod.uid)
                    out = (explain_columns if columns else explain_pod)(sched, pod.with_node("") if pod.node_name else pod)
            finally:
                for fw in fws:
                    fw.remove_observer(observe)
            return out, timing, (time.perf_counter() - t0) * 1000.0

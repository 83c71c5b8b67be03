"""``kubesched extender``: the kube-scheduler extender protocol served by a kubesched profile.

kube-scheduler calls ``POST <urlPrefix>/<verb>`` with ``ExtenderArgs`` and friends (see
``kubesched.extender.wire``). Each verb runs the same Framework as ``schedule``/``explain``:

- filter: the profile's PreFilter + Filter over the given nodes (a node stops at its first
  failing plugin, as in a scheduling cycle); failures are split by code into ``FailedNodes``
  and ``FailedAndUnresolvableNodes`` with kube-scheduler's status messages.
- prioritize: PreScore + Score + NormalizeScore + weights, rescaled to 0..10 as
  ``total * 10 // (100 * sum of the weights of the score plugins that ran)``.
- bind: the profile's Bind plugins against the cluster backend this server holds.
- preempt: the profile's victim selection restricted to the given candidates (docs/extender.md).

Two node modes: ``Nodes`` (full objects; a snapshot is built per request from them plus the
pods this server knows) and ``NodeNames`` (nodeCacheCapable; names resolved against the
cluster this server holds). The held cluster is either ``-f`` files (bind records in memory) or
its own watch of a live cluster (``kubesched.extender.watch``; bind POSTs
``pods/{name}/binding``).
"""

from __future__ import annotations

import argparse
import copy
import math
import sys
import threading
from collections.abc import Callable
from contextlib import nullcontext
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import numpy as np

from kubesched.api.objects import Node, Pod
from kubesched.cluster.memory import MemoryCluster
from kubesched.config import SchedulerConfig
from kubesched.dra.store import DraState
from kubesched.errors import InputError, join_path
from kubesched.extender import wire
from kubesched.framework import cycle
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.failures import PluginFailure
from kubesched.framework.interfaces import MAX_NODE_SCORE
from kubesched.framework.preemption.candidates import (
    PodDisruptionBudget,
    filter_pods_with_pdb_violation,
    more_important_pod,
)
from kubesched.framework.preemption.dry_run import DryRun
from kubesched.framework.registry import Registry
from kubesched.framework.runtime import Framework
from kubesched.framework.status import Code, Status
from kubesched.load import ClusterObjects, load_cluster, resolve_priorities
from kubesched.scheduler import Scheduler
from kubesched.server.httpd import HTTPServer, Limits, PostHandler, Response
from kubesched.server.metrics import RequestTimer, SchedulerMetrics
from kubesched.state.snapshot import Snapshot
from kubesched.state.storage import Storage

if TYPE_CHECKING:
    from kubesched.extender.watch import ClusterWatch
    from kubesched.server.security import Access, ServingTLS

VERBS = ("filter", "prioritize", "bind", "preempt")


class ExtenderError(Exception):
    """The request was valid but the profile could not answer it (a plugin failed): HTTP 500."""


class NotReady(Exception):
    """The watched cluster has not been listed yet: HTTP 503 (kube-scheduler retries the pod)."""


class _PlainEvaluator(DryRun):
    """Victim selection for profiles without a preemption plugin: upstream's defaults."""

    def __init__(self, fw: Framework) -> None:
        self.handle = fw.handle
        self.is_eligible_pod = lambda snap, row, victim, preemptor: True
        self.more_important_pod = more_important_pod

    def pod_disruption_budgets(self) -> list[PodDisruptionBudget]:
        return list(self.handle.snapshot.pdbs) if self.handle is not None else []


def normalize_prefix(prefix: str) -> str:
    """kube-scheduler's ``urlPrefix`` (a URL or a path) as a path without a trailing slash."""
    path = urlsplit(prefix).path if "://" in prefix else prefix
    path = path.strip()
    if not path or path == "/":
        return ""
    return "/" + path.strip("/")


class Extender:
    """The four verbs over one configuration and the cluster this server holds.

    Requests are served one at a time (the snapshot and plugins are not thread-safe); with a
    ``watch``, they share its lock with the informers that keep the snapshot current.
    """

    def __init__(
        self,
        config: SchedulerConfig,
        registry: Registry,
        objects: ClusterObjects | None = None,
        *,
        seed: int | None = None,
        metrics: SchedulerMetrics | None = None,
        watch: ClusterWatch | None = None,
    ) -> None:
        if watch is not None and objects is not None and (objects.nodes or objects.pods):
            raise ValueError("an extender holds either cluster objects or a watch, not both")
        self.config = config
        self.registry = registry
        self.objects = objects if objects is not None else ClusterObjects()
        self.seed = seed
        self.metrics = metrics
        self.watch = watch
        self.cluster = MemoryCluster()  # file mode's bind target (empty and unused with a watch)
        self.scheduler: Scheduler
        if watch is not None:
            self.scheduler = watch.sched
            self.snapshot = watch.snapshot
            self._lock: threading.Lock | threading.RLock = watch.lock
        else:
            self.snapshot = Snapshot.of(self.objects)
            # kube-scheduler's own volume plugins and DynamicResources judge volumes and claims
            self.snapshot.storage.tracked = self.snapshot.dra.tracked = False
            for pod in self.objects.pods:
                self.cluster.pods[pod.uid] = pod
            self.scheduler = Scheduler(config, self.snapshot, self.cluster, registry, seed=seed)
            self._lock = threading.Lock()
        if metrics is not None:
            metrics.attach(self.scheduler)

    def ready(self) -> bool:
        """``/readyz``: always with files; with a watch, once every resource has been listed."""
        return self.watch is None or self.watch.synced()

    # ---- helpers ---------------------------------------------------------------------
    def framework_for(self, sched: Scheduler, pod: Pod) -> Framework:
        """The profile named by the pod's schedulerName, else the first profile."""
        fw = sched.frameworks.get(pod.scheduler_name)
        return fw if fw is not None else next(iter(sched.frameworks.values()))

    def _resolve_priority(self, pod: Pod) -> None:
        """A pod without spec.priority gets its PriorityClass's value (admission's job)."""
        if self.watch is not None:
            self.watch.cache.resolve_priority(pod)
        elif self.objects.priority_classes:
            resolve_priorities(ClusterObjects(pods=[pod], priority_classes=self.objects.priority_classes))

    def _request_scheduler(self, nodes: list[Node]) -> Scheduler:
        """nodeCacheCapable: false: a snapshot of the request's nodes with the objects and assigned
        pods we hold (pods on nodes outside the request wait as orphans)."""
        snap = self.snapshot.copy(nodes)
        # stores of its own (the request's scheduler listens to its storage), untracked as the
        # held ones: kube-scheduler's own volume plugins and DynamicResources judge volumes and claims
        snap.storage, snap.dra = Storage(), DraState()
        snap.storage.tracked = snap.dra.tracked = False
        sched = Scheduler(self.config, snap, None, self.registry, seed=self.seed)
        if self.metrics is not None:
            for fw in sched.frameworks.values():
                self.metrics.observe_framework(fw)
        return sched

    def _scheduler_for(self, args: wire.ExtenderArgs) -> Scheduler:
        if args.nodes is not None:
            return self._request_scheduler(args.nodes)
        for i, name in enumerate(args.node_names or []):
            if name not in self.snapshot.row_of:
                raise InputError(
                    f'node "{name}" is not in the cluster this extender holds', path=join_path("NodeNames", i)
                )
        return self.scheduler

    def _end_cycle(self, profile: str, record: bool = True) -> None:
        if self.metrics is not None:
            self.metrics.end_cycle(profile, record=record)

    # ---- filter ----------------------------------------------------------------------
    def filter(self, doc: dict[str, Any]) -> dict[str, Any]:
        args = wire.parse_extender_args(doc)
        self._resolve_priority(args.pod)
        sched = self._scheduler_for(args)
        fw = self.framework_for(sched, args.pod)
        try:
            return self._filter(sched, fw, args)
        finally:
            self._end_cycle(fw.profile_name)

    def _filter(self, sched: Scheduler, fw: Framework, args: wire.ExtenderArgs) -> dict[str, Any]:
        pod, snap, names = args.pod, sched.snapshot, args.names
        failed: dict[str, str] = {}
        unresolvable: dict[str, str] = {}

        def reject(name: str, st: Status) -> None:
            (unresolvable if st.code == Code.UnschedulableAndUnresolvable else failed)[name] = st.message

        state = CycleState()
        rows = np.asarray([snap.row_of[n] for n in names], np.intp)
        try:
            pre = cycle.pre_filter(fw, state, pod, snap)
            ok, diag = cycle.filter_nodes(fw, state, pod, snap, rows, pre)
        except PluginFailure as e:
            return wire.filter_result(args, [], {}, {}, e.status.message)
        passed: list[str] = []
        for i, name in enumerate(names):
            if ok[i]:
                passed.append(name)
            else:
                reject(name, diag.status_of(int(rows[i])) or Status(Code.Unschedulable))
        return wire.filter_result(args, passed, failed, unresolvable)

    # ---- prioritize ------------------------------------------------------------------
    def prioritize(self, doc: dict[str, Any]) -> list[dict[str, Any]]:
        args = wire.parse_extender_args(doc)
        self._resolve_priority(args.pod)
        sched = self._scheduler_for(args)
        fw = self.framework_for(sched, args.pod)
        try:
            return wire.host_priority_list(self._prioritize(sched, fw, args))
        finally:
            self._end_cycle(fw.profile_name)

    def _prioritize(self, sched: Scheduler, fw: Framework, args: wire.ExtenderArgs) -> list[tuple[str, int]]:
        names, snap = args.names, sched.snapshot
        if not names:
            return []
        rows = np.asarray([snap.row_of[n] for n in names], np.intp)
        try:
            scores = cycle.score_nodes(fw, args.pod, snap, rows)
        except PluginFailure as e:
            raise ExtenderError(e.status.message) from None
        return [(n, s) for n, s in zip(names, extender_scores(scores.total, scores.per_plugin), strict=True)]

    # ---- bind ------------------------------------------------------------------------
    def bind(self, doc: dict[str, Any]) -> dict[str, Any]:
        b = wire.parse_binding_args(doc)
        if self.watch is not None:
            return self._bind_watched(b)
        key = f"{b.pod_namespace}/{b.pod_name}"
        pod = self.cluster.pods.get(b.pod_uid) if b.pod_uid else None
        if pod is None and not b.pod_uid:
            pod = next((p for p in self.cluster.pods.values() if p.key == key), None)
        if pod is None:
            uid = f" (uid {b.pod_uid})" if b.pod_uid else ""
            return wire.binding_result(f'pod "{key}"{uid} not found in the cluster this extender holds')
        if pod.key != key:
            return wire.binding_result(f'pod uid {b.pod_uid} is "{pod.key}", not "{key}"')
        if b.node not in self.snapshot.row_of:
            return wire.binding_result(f'node "{b.node}" not found in the cluster this extender holds')
        if pod.node_name:
            return wire.binding_result(f'pod "{key}" is already bound to node "{pod.node_name}"')
        bound = self._run_bind(pod, b.node)
        if isinstance(bound, str):
            return wire.binding_result(bound)
        self.cluster.pods[pod.uid] = bound
        self.snapshot.add_pod(bound)
        return wire.binding_result()

    def _run_bind(self, pod: Pod, node: str) -> Pod | str:
        """The profile's Bind plugins on ``pod``: the bound pod (on ``node``, no longer nominated)
        when one bound it, else the protocol's ``Error`` (a plugin that raised fails the bind like
        any other failure)."""
        fw = self.framework_for(self.scheduler, pod)
        try:
            st = fw.run_bind(CycleState(), pod, node)
        except PluginFailure as e:
            return e.status.message
        if st.code == Code.Skip:
            return f'no bind plugin of profile "{fw.profile_name}" bound the pod'
        if not st.ok:
            return st.message or f"bind failed ({st.code.name})"
        bound = pod.with_node(node)
        bound.nominated_node_name = ""
        return bound

    def _bind_watched(self, b: wire.BindingArgs) -> dict[str, Any]:
        """kube-scheduler's extender binder, through the profile's Bind plugins: the API server
        decides (an already-bound or recreated pod is its 409, returned in ``Error``).

        Runs without the request lock (filters and watch updates go on during the API call);
        the lock is taken to count the bound pod.
        """
        from kubesched.live.client import ApiError  # the kubernetes client loads only with a watch

        assert self.watch is not None
        key = f"{b.pod_namespace}/{b.pod_name}"
        seen = self.watch.sees(b.pod_namespace, b.pod_name)
        try:
            pod = self.watch.find_pod(b.pod_namespace, b.pod_name)
        except (ApiError, InputError) as e:
            return wire.binding_result(f'pod "{key}": {e}')
        if pod is None:
            return wire.binding_result(f'pods "{b.pod_name}" not found in namespace "{b.pod_namespace}"')
        if b.pod_uid and pod.uid != b.pod_uid:  # the API checks the UID too; this names both
            return wire.binding_result(f'pod "{key}" has uid {pod.uid}, not {b.pod_uid}')
        bound = self._run_bind(pod, b.node)
        if isinstance(bound, str):
            return wire.binding_result(bound)
        with self._lock:  # counted at once, unless the watch got there first; its copy replaces ours
            if self.watch.still_pending(pod, seen):
                self.snapshot.add_pod(bound)
        return wire.binding_result()

    # ---- preempt ---------------------------------------------------------------------
    def preempt(self, doc: dict[str, Any]) -> dict[str, Any]:
        a = wire.parse_preemption_args(doc)
        self._resolve_priority(a.pod)
        fw = self.framework_for(self.scheduler, a.pod)
        try:
            return wire.preemption_result(self._preempt(fw, a))
        finally:
            self._end_cycle(fw.profile_name, record=False)  # dry-run checks are no extension point

    def _evaluator(self, fw: Framework) -> DryRun:
        for pl in fw.post_filter:
            if isinstance(pl, DryRun):
                return pl
        return _PlainEvaluator(fw)

    def _preempt(self, fw: Framework, a: wire.PreemptionArgs) -> dict[str, tuple[list[str], int]]:
        snap = self.snapshot
        key = "NodeNameToMetaVictims" if a.meta else "NodeNameToVictims"
        base = self._evaluator(fw)
        pdbs_of: Callable[[], list[PodDisruptionBudget]] = getattr(
            base, "pod_disruption_budgets", lambda: list(snap.pdbs)
        )
        out: dict[str, tuple[list[str], int]] = {}
        for node in sorted(a.victims):
            v = a.victims[node]
            row = snap.row_of.get(node)
            missing = [i for i, uid in enumerate(v.uids) if row is None or uid not in snap.pods_on[row]]
            if row is None or missing:
                if a.meta:  # names only: the server must hold the node and its pods
                    if row is None:
                        raise InputError(f'node "{node}" is not in the cluster this extender holds', path=f"{key}.{node}")
                    i = missing[0]
                    raise InputError(
                        f'pod with UID "{v.uids[i]}" is not on node "{node}" in the cluster this extender holds',
                        path=f"{key}.{node}.Pods[{i}].UID",
                    )
                if v.uids:  # full pods on a node we do not hold: echo them in the meta form
                    out[node] = (list(v.uids), v.num_pdb_violations)
                continue
            assert row is not None
            allowed = set(v.uids)
            ev = copy.copy(base)
            eligible = base.is_eligible_pod
            ev.is_eligible_pod = lambda s, r, victim, p, eligible=eligible, allowed=allowed: (
                victim.uid in allowed and eligible(s, r, victim, p)
            )
            victims, num_pdb, st = ev.select_victims_on_node(a.pod, snap, row, pdbs_of())
            if not st.ok:
                continue  # the candidates cannot make room (or none may be evicted): not a candidate
            if victims:
                out[node] = ([p.uid for p in victims], num_pdb)
                continue
            # The profile needs no eviction here, but kube-scheduler's own dry run did and a node
            # must come back with victims: keep its (eligible) candidates.
            pods_on = snap.pods_on[row]
            keep = [u for u in v.uids if pods_on[u].priority < a.pod.priority and eligible(snap, row, pods_on[u], a.pod)]
            if len(keep) == len(v.uids):
                out[node] = (keep, v.num_pdb_violations)
            else:
                violating, _ = filter_pods_with_pdb_violation([pods_on[u] for u in keep], pdbs_of())
                out[node] = (keep, len(violating))
        return out

    # ---- HTTP ------------------------------------------------------------------------
    def handlers(self, prefix: str = "") -> dict[str, PostHandler]:
        """``/<verb>``, and ``<prefix>/<verb>`` when a URL prefix is configured."""
        verbs: dict[str, Callable[[dict[str, Any]], Any]] = {
            "filter": self.filter,
            "prioritize": self.prioritize,
            "bind": self.bind,
            "preempt": self.preempt,
        }
        routes: dict[str, PostHandler] = {}
        p = normalize_prefix(prefix)
        for verb, fn in verbs.items():
            h = self._handler(verb, fn)
            routes[f"/{verb}"] = h
            if p:
                routes[f"{p}/{verb}"] = h
        return routes

    def _handler(self, verb: str, fn: Callable[[dict[str, Any]], Any]) -> PostHandler:
        def handle(body: bytes) -> Response:
            with RequestTimer(self.metrics, verb) as t:
                try:
                    doc = wire.decode_body(body)
                    if not self.ready():
                        raise NotReady(f"{verb}: the extender's watch of the cluster has not synced yet")
                    # a watched bind waits on the API: it takes the lock itself, only around the snapshot
                    with nullcontext() if verb == "bind" and self.watch is not None else self._lock:
                        out = fn(doc)
                except NotReady as e:
                    t.code = 503
                    return Response.text(str(e), 503)
                except InputError as e:
                    t.code = 400
                    raise e.within(source=f"{verb} request") from None
                except RecursionError:  # a structure deep enough for json but not for the code after it
                    t.code = 400
                    raise InputError("nested too deeply", source=f"{verb} request") from None
                except ExtenderError as e:
                    t.code = 500
                    return Response.text(f"{verb}: {e}", 500)
                except Exception:
                    t.code = 500
                    raise
                return Response.json(out)

        return handle

    def server(
        self,
        listen: tuple[str, int],
        prefix: str = "",
        *,
        limits: Limits | None = None,
        tls: ServingTLS | None = None,
        access: Access | None = None,
    ) -> HTTPServer:
        """An HTTP(S) server for the verbs, the probes and this extender's ``/metrics``."""
        return HTTPServer(
            listen, self.handlers(prefix), metrics=self.metrics, ready=self.ready, limits=limits, tls=tls, access=access
        )


def extender_scores(total: np.ndarray, per_plugin: dict[str, tuple[Any, Any, int]]) -> list[int]:
    """Weighted totals rescaled to 0..10: ``total * 10 // (100 * sum of weights that ran)``."""
    max_total = MAX_NODE_SCORE * sum(int(w) for _, _, w in per_plugin.values())
    if max_total <= 0:
        return [wire.MIN_EXTENDER_PRIORITY] * len(total)
    out = []
    for t in np.asarray(total, np.int64).tolist():
        s = int(t) * wire.MAX_EXTENDER_PRIORITY // max_total
        out.append(min(max(s, wire.MIN_EXTENDER_PRIORITY), wire.MAX_EXTENDER_PRIORITY))
    return out


def _watch_from_args(args: argparse.Namespace, config: SchedulerConfig, registry: Registry) -> ClusterWatch | None:
    """``--kubeconfig``/``--in-cluster``: a (not yet started) watch of that cluster; None for files."""
    kubeconfig = getattr(args, "kubeconfig", None)
    in_cluster = getattr(args, "in_cluster", False)
    if kubeconfig is None and not in_cluster:
        return None
    if kubeconfig is not None and in_cluster:
        raise InputError("give --kubeconfig or --in-cluster, not both", path="--in-cluster")
    if args.file:
        flag = "--in-cluster" if in_cluster else "--kubeconfig"
        raise InputError(f"the extender holds -f files or a watched cluster ({flag}), not both", path="-f")
    for flag, value in (("--kube-api-qps", args.kube_api_qps), ("--kube-api-burst", args.kube_api_burst)):
        if not math.isfinite(value) or value <= 0:
            raise InputError(f"must be a positive number, got {value:g}", path=flag)
    from kubesched.extender.watch import ClusterWatch
    from kubesched.live.client import KubeClient, load_configuration

    if kubeconfig == "":
        raise InputError("empty path", path="--kubeconfig")
    client = KubeClient(load_configuration(kubeconfig, getattr(args, "context", None)))
    return ClusterWatch(config, registry, client, qps=args.kube_api_qps, burst=int(args.kube_api_burst), seed=args.seed)


def run(args: argparse.Namespace) -> int:
    """``kubesched extender``: load, validate, then serve until SIGINT/SIGTERM."""
    from kubesched.app import build_config, build_registry
    from kubesched.seeds import announce_seed
    from kubesched.server import security
    from kubesched.server.httpd import parse_listen, serve_until_signalled

    listen = parse_listen(args.listen)
    for flag, value in (("--max-request-bytes", args.max_request_bytes), ("--max-requests-in-flight", args.max_requests_in_flight)):
        if value <= 0:
            raise InputError(f"must be a positive integer, got {value}", path=flag)
    limits = Limits(max_body=args.max_request_bytes, max_in_flight=args.max_requests_in_flight)
    tls, access = security.from_args(args)
    registry = build_registry(args.plugin_path)
    config = build_config(args.config, registry)
    for w in config.warnings:
        sys.stderr.write(f"kubesched: warning: {w}\n")
    watch = _watch_from_args(args, config, registry)
    objects = load_cluster(args.file, args.validate) if args.file else ClusterObjects()
    for w in objects.warnings:
        sys.stderr.write(f"kubesched: warning: {w}\n")
    metrics = SchedulerMetrics(seed=args.seed)
    ext = Extender(config, registry, objects, seed=args.seed, metrics=metrics, watch=watch)
    server = ext.server(listen, args.url_prefix, limits=limits, tls=tls, access=access)
    prefix = normalize_prefix(args.url_prefix)

    def announce() -> None:
        verbs = ", ".join(f"/{v}" for v in VERBS) + (f" (also under {prefix})" if prefix else "")
        if watch is not None:
            watch.start()
            held = f"watching the cluster at {watch.host}; /readyz once synced"
        else:
            held = f"{len(objects.nodes)} nodes, {len(objects.pods)} pods held"
        sys.stderr.write(f"kubesched extender: serving {verbs} on {server.url} ({held}; /metrics, /healthz)\n")
        announce_seed(args)  # after the serving line: that one comes first, as before seeds were said
        sys.stderr.flush()

    try:
        serve_until_signalled(server, announce)
    finally:
        if watch is not None:
            watch.close()
    return 0

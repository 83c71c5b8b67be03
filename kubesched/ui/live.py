"""`kubesched ui --kubeconfig`: a live cluster, read-only.

The cluster is followed as ``kubesched run`` follows it: the same informers (list + watch of the
kinds the configuration's plugins read, ``runner.watched_resources``) feed the same
``ClusterCache``, which fills one Snapshot. Nothing here schedules or binds: the pending pods stay
in the cache's queue, and the decision view explains them against the cluster now (where a pod
would go, or why it fits nowhere). What the cluster's own scheduler does is heard through the
pods' watch: a pending pod that gets a node is a decision ("scheduled"), a new PodScheduled=False
condition is a failed attempt with the scheduler's message.

Read-only: the client refuses every method but GET (list and watch are GETs), so neither a bug
nor a plugin can bind, patch or post an event; RBAC of get/list/watch is enough.

Threads: each informer's thread applies its deltas under the timeline's lock, which every read of
the UI takes too, so a read sees one consistent cluster; each batch bumps ``generation``, which
the page polls (``/api/live``) to know when to fetch again. While a list or watch fails, the
status says so (the page shows "disconnected, retrying" and what it shows as stale).
"""

from __future__ import annotations

import logging
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

from kubesched.api.objects import Pod
from kubesched.config import SchedulerConfig
from kubesched.errors import InputError
from kubesched.framework.registry import Registry
from kubesched.live.binding import LiveScheduler
from kubesched.live.cache import ClusterCache
from kubesched.live.client import ApiError, KubeClient, Response, load_configuration
from kubesched.live.informer import Backoff, Delta, Informer
from kubesched.live.resources import PODS
from kubesched.live.runner import watched_resources
from kubesched.state.snapshot import Snapshot
from kubesched.ui.runs import SCHEDULED, UNSCHEDULABLE, Attempt
from kubesched.ui.sources import LIVE, Workspace
from kubesched.ui.timeline import Timeline

log = logging.getLogger("kubesched.ui.live")

#: pending pods explained per change of the cluster for the pending table (each is a full explain);
#: the others say to open their decision
EXPLAINED_PENDING = 50
RECENT_DECISIONS = 50
#: a first list answered so is not retried at the start: the kubeconfig's user may not list the
#: kind (401, 403) or the cluster does not serve it (404: a CRD not installed, an older API version)
REFUSED = (401, 403, 404)


@dataclass
class LiveOptions:
    watch_idle_timeout: float = 90.0  # a watch silent this long (no event, no bookmark) is broken
    watch_backoff: float = 0.2
    watch_backoff_max: float = 30.0
    sync_timeout: float = 30.0  # how long the start waits for the first lists


class ReadOnlyClient(KubeClient):
    """A KubeClient that sends GETs only (lists and watches); anything else is refused before it is sent."""

    def request(self, method: str, path: str, **kw: Any) -> Response:
        if method != "GET":
            raise ApiError(0, "ReadOnly", f"kubesched ui only reads the cluster: {method} {path} refused")
        return super().request(method, path, **kw)


def connect(kubeconfig: str, context: str | None) -> ReadOnlyClient:
    """A read-only client for the kubeconfig's context, after one request that shows the API
    server answers and lets us list nodes: else one line (exit 2) naming the kubeconfig."""
    client = ReadOnlyClient(load_configuration(kubeconfig, context))
    try:
        client.request("GET", "/api/v1/nodes", query=[("limit", 1)], timeout=(5.0, 10.0))
    except ApiError as e:
        what = "cannot reach the API server" if e.status == 0 else "the API server refused to list nodes"
        hint = " (kubesched ui needs get, list and watch: docs/ui.md#a-live-cluster)" if e.status in (401, 403) else ""
        raise InputError(f"{what} at {client.host}: {e}{hint}", source=kubeconfig) from None
    return client


class ClusterWatch:
    """The informers, the cache they fill, and what the UI reads of them."""

    def __init__(
        self, client: KubeClient, config: SchedulerConfig, registry: Registry, *, seed: int | None = 0,
        options: LiveOptions | None = None,
    ) -> None:
        self.options = opts = options or LiveOptions()
        self.sched = LiveScheduler(config, Snapshot(), None, registry, seed=seed)
        self.cache = ClusterCache(self.sched)
        snap = self.sched.snapshot
        # no steps: step 0 is the cluster now; explains run on a scheduler of its own over the snapshot
        self.timeline = Timeline(config, registry, lambda: snap, [], seed=seed)
        self.stop = threading.Event()
        self.informers = [
            Informer(
                client, r, self._sink, self.stop, idle_timeout=opts.watch_idle_timeout,
                backoff=Backoff(opts.watch_backoff, opts.watch_backoff_max),
            )
            for r in watched_resources(self.sched)
        ]
        self._pods = next(inf for inf in self.informers if inf.resource is PODS)
        self.host = client.host
        self.generation = 0  # bumped by every batch of changes
        self.changed_at: float | None = None  # wall time of the last change
        self.started = time.monotonic()
        self.attempts: dict[str, list[Attempt]] = {}  # what the cluster's scheduler was seen to do, by pod key
        # newest first; a new tuple each time, so /api/live reads it without the timeline's lock
        self.recent: tuple[dict[str, Any], ...] = ()
        self._verdicts: dict[str, dict[str, Any]] = {}  # pod uid -> kubesched's verdict at ``_verdict_gen``
        self._verdict_gen = -1
        self._down_since: float | None = None
        self.ws: Workspace | None = None

    # ---- start and stop -------------------------------------------------------------------
    def start(self, ws: Workspace) -> None:
        """Start the informers (their changes go to ``ws``) and wait, bounded, for the first lists.
        A kind the API server refuses to list (``REFUSED``) is one line (InputError): the views
        would lack it for good, not for a while."""
        self.ws = ws
        with self.timeline.lock:  # explains see the pods the cache nominated
            self.timeline.scheduler.nominated = self.sched.nominated
        for inf in self.informers:
            inf.start()
        deadline = time.monotonic() + self.options.sync_timeout
        while True:
            waiting = [inf for inf in self.informers if not inf.synced.is_set()]
            refused = [inf for inf in waiting if inf.error is not None and inf.error.status in REFUSED]
            if not waiting or refused and len(refused) == len(waiting) or time.monotonic() >= deadline:
                break
            time.sleep(0.02)
        if refused:
            self.close()
            kinds = ", ".join(f"{inf.kind} ({inf.error})" for inf in refused)
            raise InputError(
                f"the API server at {self.host} refused to list {kinds}; kubesched ui needs list and watch of "
                "what the configuration's plugins read (docs/ui.md#a-live-cluster)"
            )

    def close(self) -> None:
        self.stop.set()
        for inf in self.informers:
            inf.close()

    # ---- the informers' side ---------------------------------------------------------------
    def _sink(self, deltas: list[Delta]) -> None:
        with self.timeline.lock:
            for kind, old, new in deltas:
                try:
                    self.cache.apply(kind, old, new)
                except Exception:  # noqa: BLE001 - one bad object must not stop the view from following the cluster
                    log.exception("applying a %s change failed", kind)
                if kind == "Pod":
                    self._heard(old, new)
            self.generation += 1
            self.changed_at = time.time()
            self._publish(any(kind == "Pod" for kind, _, _ in deltas))

    def _heard(self, old: Pod | None, new: Pod | None) -> None:
        """A decision of the cluster's scheduler, seen through the pod's watch."""
        if new is None or (old is not None and old.uid != new.uid):
            if old is not None:
                self.attempts.pop(old.key, None)
            if new is None:
                return
            old = None
        now = time.monotonic() - self.started
        tries = self.attempts.get(new.key, [])
        if new.node_name and old is not None and not old.node_name:
            self._decided(new, Attempt(len(tries) + 1, 0, now, SCHEDULED, node=new.node_name), tries)
            return
        if not new.node_name:
            cond = _unscheduled(new)
            if cond is not None and cond != (_unscheduled(old) if old is not None else None):
                reason, message = cond
                self._decided(new, Attempt(len(tries) + 1, 0, now, UNSCHEDULABLE, message=f"{reason}: {message}"), tries)

    def _decided(self, pod: Pod, a: Attempt, tries: list[Attempt]) -> None:
        self.attempts[pod.key] = [*tries, a]  # a new list: readers may hold the old one
        if not self._pods.synced.is_set():
            return  # the first list: conditions written before we watched are not recent decisions
        heard = {"pod": pod.key, "time": time.time(), "outcome": a.outcome, "node": a.node, "message": a.message or ""}
        self.recent = (heard, *self.recent[: RECENT_DECISIONS - 1])

    def _publish(self, pods: bool) -> None:
        """The workspace follows the cache: new dicts (readers may iterate the old ones), and
        the decisions and pod columns computed for the cluster before are dropped. ``pods``: the
        batch came from the pods' informer, on whose thread alone its store may be read."""
        ws = self.ws
        if ws is None:
            return
        if pods:
            ws.pods = {p.key: p for p in self._pods.store.values() if not p.terminal}
            ws.attempts = dict(self.attempts)
        ws.decisions.clear()
        ws.pod_columns = None
        ws.gpu_milli = {}

    # ---- what the UI reads ---------------------------------------------------------------------
    def status(self) -> dict[str, Any]:
        errors = [f"{inf.kind}: {inf.error}" for inf in self.informers if inf.error]
        synced = all(inf.synced.is_set() for inf in self.informers)
        if errors and self._down_since is None:
            self._down_since = time.time()
        elif not errors:
            self._down_since = None
        return {
            "generation": self.generation,
            "connected": not errors,
            "synced": synced,
            "problem": errors[0] if errors else "",
            "down_since": self._down_since,
            "changed_at": self.changed_at,
            "server": self.host,
            "recent": list(self.recent),
            "unwatched": [f"{inf.kind}: {inf.unavailable}" for inf in self.informers if inf.unavailable],
        }

    def verdicts(self, keys: list[str]) -> dict[str, dict[str, Any]]:
        """kubesched's verdict on each pending pod (the first ``EXPLAINED_PENDING``) against the
        cluster now: the node it would go to, or explain's FailedScheduling message. Kept until
        the cluster changes. Callers hold the timeline's lock."""
        if self._verdict_gen != self.generation:
            self._verdicts, self._verdict_gen = {}, self.generation
        ws = self.ws
        assert ws is not None
        out: dict[str, dict[str, Any]] = {}
        profiles = self.timeline.scheduler.frameworks
        for key in keys:
            pod = ws.pods.get(key)
            if pod is None:
                continue
            if pod.scheduler_name not in profiles:
                out[key] = {"fits": None, "text": f'not ours to judge: spec.schedulerName "{pod.scheduler_name}" is no profile of the configuration'}
                continue
            v = self._verdicts.get(pod.uid)
            if v is None:
                if len(self._verdicts) >= EXPLAINED_PENDING:
                    out[key] = {"fits": None, "text": f"not explained here (over {EXPLAINED_PENDING} pending pods): open its decision"}
                    continue
                ex, _, _ = self.timeline.explain(pod, 0, columns=True)
                sel = ex["selected"]
                v = self._verdicts[pod.uid] = {
                    "fits": sel, "text": f"fits: kubesched would place it on {sel}" if sel else (ex["message"] or "no node fits"),
                }
            out[key] = v
        return out


def _unscheduled(pod: Pod) -> tuple[str, str] | None:
    """(reason, message) of the pod's PodScheduled=False condition, as the cluster's scheduler wrote it."""
    for c in (pod.raw.get("status") or {}).get("conditions") or []:
        if isinstance(c, dict) and c.get("type") == "PodScheduled" and c.get("status") == "False":
            return str(c.get("reason") or ""), str(c.get("message") or "")
    return None


def open_live(
    client: KubeClient, config: SchedulerConfig, config_text: str, registry: Registry, *, seed: int | None = 0,
    options: LiveOptions | None = None, title: str | None = None,
) -> Workspace:
    """A workspace that follows the cluster behind ``client`` (started; ``ws.live.close()`` stops it)."""
    live = ClusterWatch(client, config, registry, seed=seed, options=options)
    ws = Workspace(
        kind=LIVE, title=title or f"live cluster {client.host}", timeline=live.timeline, config=config,
        config_text=config_text, decisions=OrderedDict(), live=live, seed=seed,
    )
    live.start(ws)
    return ws

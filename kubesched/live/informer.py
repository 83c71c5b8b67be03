"""List+watch of one resource (client-go's Reflector), decoded into kubesched objects.

Each informer runs in its own thread: it lists (paged), then watches from the list's
resourceVersion with bookmarks, and hands ``(kind, old, new)`` deltas to a sink (the scheduler's
event queue). It re-watches from the last resourceVersion when a stream ends or breaks (with
exponential backoff), relists on 410 Gone, and reads with a timeout so a silent dead connection
is noticed. Decoding (orjson + ``Pod.parse``) happens here, off the scheduling thread.
"""

from __future__ import annotations

import logging
import random
import threading
from collections.abc import Callable
from dataclasses import KW_ONLY, dataclass, field
from typing import Any

from kubesched.errors import InputError
from kubesched.live.client import ApiError, KubeClient, WatchStream
from kubesched.live.failures import FailureLog
from kubesched.live.resources import Resource, decode

log = logging.getLogger("kubesched.live.informer")

#: (kind, old object or None, new object or None); ``None, None`` never happens.
Delta = tuple[str, Any, Any]
Sink = Callable[[list[Delta]], None]

LIST_PAGE = 500


class Backoff:
    """Exponential backoff with jitter, reset after a success (client-go's reflector backoff)."""

    def __init__(self, initial: float = 0.2, maximum: float = 30.0, rng: random.Random | None = None) -> None:
        self.initial = initial
        self.maximum = maximum
        self.rng = rng or random.Random()
        self._next = initial

    def next(self) -> float:
        d = self._next
        self._next = min(self._next * 2, self.maximum)
        return d * (1 + 0.5 * self.rng.random())

    def reset(self) -> None:
        self._next = self.initial


class Gone(Exception):
    """The resourceVersion is too old (410): relist."""


@dataclass(eq=False)
class Informer:
    client: KubeClient
    resource: Resource
    sink: Sink
    stop: threading.Event
    _: KW_ONLY
    idle_timeout: float = 90.0
    backoff: Backoff = field(default_factory=Backoff)
    rng: random.Random = field(default_factory=random.Random)
    #: the runner's informers share one: a failure is said once
    failures: FailureLog = field(default_factory=FailureLog)

    def __post_init__(self) -> None:
        self.store: dict[str, Any] = {}  # key -> decoded object (what the sink was last told)
        self.resource_version = ""
        self.synced = threading.Event()
        self.lists = 0  # how many full lists (1 + relists): for logs and tests
        self.unavailable = ""  # why an optional resource is not being watched
        # why the last list or watch failed, None once one succeeds: the store may be stale meanwhile
        self.error: ApiError | None = None
        self._stream: WatchStream | None = None
        self._thread: threading.Thread | None = None

    @property
    def kind(self) -> str:
        return self.resource.kind

    def start(self) -> Informer:
        self._thread = threading.Thread(target=self.run, name=f"informer-{self.kind}", daemon=True)
        self._thread.start()
        return self

    def close(self) -> None:
        """Stop after the current read (the stream is shut so a blocked read returns now)."""
        self.stop.set()
        stream = self._stream
        if stream is not None:
            stream.close()

    # ---- the loop --------------------------------------------------------------------
    def run(self) -> None:
        need_list = True
        while not self.stop.is_set():
            try:
                if need_list:
                    self._list()
                    need_list = False
                self._watch()
            except Gone:
                log.info("%s: resourceVersion %s expired (410 Gone), relisting", self.kind, self.resource_version)
                need_list = True
            except ApiError as e:
                if self.stop.is_set():
                    return
                if self.resource.optional and e.status in (403, 404):
                    if not self.unavailable:
                        log.warning(
                            "%s: not watched (%s); PodTopologySpread's default constraints will not see them",
                            self.kind,
                            e,
                        )
                    self.unavailable = str(e)
                    self.synced.set()  # nothing to wait for
                    self.stop.wait(60.0)
                    continue
                if e.status == 410:
                    need_list = True
                    continue
                self.error = e
                delay = self.backoff.next()
                self.failures.failed(self.kind, e, delay)
                self.stop.wait(delay)
            except Exception:  # noqa: BLE001 - a bug must not silently stop the cache from following the cluster
                log.exception("%s: informer failed; retrying", self.kind)
                self.error = ApiError(0, "InformerFailed", "the informer failed (see the log)")
                self.stop.wait(self.backoff.next())

    def _list(self) -> None:
        items: list[dict] = []
        cont = ""
        rv = ""
        while True:
            query: list[tuple[str, Any]] = [("limit", LIST_PAGE)]
            if cont:
                query.append(("continue", cont))
            if self.resource.field_selector:
                query.append(("fieldSelector", self.resource.field_selector))
            try:
                resp = self.client.request("GET", self.resource.path, query=query)
            except ApiError as e:
                if e.status == 410 and cont:  # the continue token expired: start over
                    items, cont = [], ""
                    continue
                raise
            body = resp.body
            items.extend(x for x in body.get("items") or [] if isinstance(x, dict))
            meta = body.get("metadata") or {}
            rv = str(meta.get("resourceVersion") or rv)
            cont = str(meta.get("continue") or "")
            if not cont:
                break
        self.lists += 1
        new_store: dict[str, Any] = {}
        deltas: list[Delta] = []
        for raw in items:
            key = self.resource.key(raw)
            obj = self._decode(raw)
            if obj is None:
                continue
            new_store[key] = obj
            deltas.append((self.kind, self.store.get(key), obj))
        for key, old in self.store.items():  # gone while we were not watching
            if key not in new_store:
                deltas.append((self.kind, old, None))
        self.store = new_store
        self.resource_version = rv
        self.unavailable = ""
        self.error = None
        if deltas:
            self.sink(deltas)
        self.synced.set()
        self.failures.recovered(self.kind)
        log.debug("%s: listed %d at resourceVersion %s", self.kind, len(new_store), rv)

    def _watch(self) -> None:
        query: list[tuple[str, Any]] = [
            ("watch", "true"),
            ("resourceVersion", self.resource_version),
            ("allowWatchBookmarks", "true"),
            # the server ends the stream after 5-10 minutes; spread reconnects (client-go's reflector)
            ("timeoutSeconds", int(300 * (1 + self.rng.random()))),
        ]
        if self.resource.field_selector:
            query.append(("fieldSelector", self.resource.field_selector))
        try:
            stream = self.client.watch(self.resource.path, query, self.idle_timeout)
        except ApiError as e:
            if e.status == 410:
                raise Gone from None
            raise
        self._stream = stream
        self.error = None
        if self.stop.is_set():
            stream.close()
            return
        try:
            for ev in stream.events():
                self.backoff.reset()
                self._handle(ev)
                if self.stop.is_set():
                    return
        finally:
            stream.close()
            self._stream = None

    def _handle(self, ev: dict) -> None:
        typ = ev.get("type")
        obj = ev.get("object")
        if not isinstance(obj, dict):
            return
        if typ == "ERROR":
            code = obj.get("code")
            if code == 410 or obj.get("reason") in ("Expired", "Gone"):
                raise Gone
            raise ApiError(int(code or 0), str(obj.get("reason") or "Error"), str(obj.get("message") or ""))
        rv = str((obj.get("metadata") or {}).get("resourceVersion") or "")
        if typ == "BOOKMARK":
            if rv:
                self.resource_version = rv
            return
        key = self.resource.key(obj)
        old = self.store.get(key)
        if typ in ("ADDED", "MODIFIED"):
            new = self._decode(obj)
            if new is None:
                return
            self.store[key] = new
            self.sink([(self.kind, old, new)])
        elif typ == "DELETED":
            if old is not None:
                del self.store[key]
                self.sink([(self.kind, old, None)])
        if rv:
            self.resource_version = rv

    def _decode(self, raw: dict) -> Any:
        try:
            return decode(self.resource, raw)
        except InputError as e:
            log.warning("skipping an object the scheduler cannot read: %s", e)
            return None

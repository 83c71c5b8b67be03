"""KubeAPIServer: a Kubernetes API server for tests, on loopback, plus the test-side controls."""

from __future__ import annotations

import re
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
import yaml

from . import errors
from .patches import json_patch, merge_patch, strategic_merge_patch
from .protocol import _Server
from .resources import Obj, Resource, resource_for
from .store import DROP, END, WAKE, Store

# What every real cluster has before anyone writes to it.
_PRELOAD: tuple[Obj, ...] = (
    *({"kind": "Namespace", "metadata": {"name": n}} for n in
      ("default", "kube-system", "kube-public", "kube-node-lease")),
    {"kind": "PriorityClass", "metadata": {"name": "system-node-critical"}, "value": 2000001000,
     "description": "Used for system critical pods that must not be moved from their current node."},
    {"kind": "PriorityClass", "metadata": {"name": "system-cluster-critical"}, "value": 2000000000,
     "description": "Used for system critical pods that must run in the cluster, but can be moved to "
                    "another node if necessary."},
)


@dataclass
class _Fault:
    method: str
    pattern: re.Pattern[str]
    status: int
    times: int
    body: Obj | None


def _copy(obj: Obj) -> Obj:
    return orjson.loads(orjson.dumps(obj))


class KubeAPIServer:
    """A ThreadingHTTPServer on 127.0.0.1 (ephemeral port) speaking the Kubernetes REST and watch
    protocol; serving starts on construction. Use as a context manager or call close()."""

    def __init__(self, bookmark_interval: float = 1.0, max_history: int | None = None,
                 preload: bool = True) -> None:
        self.bookmark_interval = bookmark_interval
        self.store = Store(max_history)
        self._lock = threading.Lock()
        self._requests: list[tuple[str, str]] = []
        self._faults: list[_Fault] = []
        self._closed = False
        for obj in _PRELOAD if preload else ():
            self.create(obj)
        self._httpd = _Server(("127.0.0.1", 0), self)
        self.url = f"http://127.0.0.1:{self._httpd.server_address[1]}"
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05},
                                        name="kubeapi", daemon=True)
        self._thread.start()

    def __enter__(self) -> KubeAPIServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Stop serving: open watches end cleanly, then every connection is cut."""
        if self._closed:
            return
        self._closed = True
        with self.store.lock:
            for w in self.store.watchers:
                w.q.put(END)
        self._httpd.shutdown()
        self._httpd.server_close()
        for sock in list(self._httpd.connections):
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    # -- clients -----------------------------------------------------------------------------
    def write_kubeconfig(self, path: str | Path) -> str:
        """A kubeconfig for this server: no auth, cluster/user/context all named "test"."""
        cfg = {
            "apiVersion": "v1", "kind": "Config", "preferences": {}, "current-context": "test",
            "clusters": [{"name": "test", "cluster": {"server": self.url}}],
            "users": [{"name": "test", "user": {}}],
            "contexts": [{"name": "test", "context": {"cluster": "test", "user": "test", "namespace": "default"}}],
        }
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        Path(path).write_text(yaml.safe_dump(cfg, sort_keys=False))
        return str(path)

    def client_configuration(self) -> Any:
        """A kubernetes.client.Configuration for this server, without touching the global default."""
        from kubernetes import client

        cfg = client.Configuration()
        cfg.host = self.url
        return cfg

    # -- objects, as the API would store them --------------------------------------------------
    @staticmethod
    def _res(obj: Obj) -> Resource:
        return resource_for(obj.get("kind", ""), obj.get("apiVersion"))

    @staticmethod
    def _ns(res: Resource, namespace: str | None) -> str | None:
        return (namespace or "default") if res.namespaced else None

    def create(self, obj: Obj) -> Obj:
        """Store obj (kind required; uid/creationTimestamp kept if given, status kept): ADDED."""
        res = self._res(obj)
        return _copy(res.to_wire(self.store.create(res, res.from_wire(obj), via_http=False)))

    def get(self, kind: str, name: str, namespace: str | None = None) -> Obj | None:
        res = resource_for(kind)
        obj = self.store.objects[res.storage].get((self._ns(res, namespace) or "", name))
        return None if obj is None else _copy(res.to_wire(obj))

    def list(self, kind: str, namespace: str | None = None) -> list[Obj]:
        """Objects of a kind in key order, in one namespace or (None) all of them."""
        res = resource_for(kind)
        with self.store.lock:
            objs = [o for k, o in sorted(self.store.objects[res.storage].items())
                    if namespace is None or k[0] == namespace]
        return [_copy(res.to_wire(o)) for o in objs]

    def update(self, obj: Obj) -> Obj:
        """Replace the whole object, status included (MODIFIED); a stale resourceVersion is a 409."""
        res = self._res(obj)
        meta = obj.get("metadata", {})
        stored = self.store.replace(res, self._ns(res, meta.get("namespace")), meta.get("name", ""),
                                    res.from_wire(obj), "all")
        return _copy(res.to_wire(stored))

    def patch(self, kind: str, name: str, patch: Any, namespace: str | None = None,
              patch_type: str = "merge") -> Obj:
        """Patch an object ("merge", "strategic" or "json"), status included."""
        res = resource_for(kind)
        ns = self._ns(res, namespace)
        apply = {"merge": merge_patch, "strategic": strategic_merge_patch, "json": json_patch}[patch_type]
        with self.store.lock:
            new = apply(res.to_wire(self.store.get(res, ns, name)), patch)
            return _copy(res.to_wire(self.store.replace(res, ns, name, res.from_wire(new), "all")))

    def delete(self, kind: str, name: str, namespace: str | None = None) -> None:
        """Delete at once (DELETED); APIError 404 when it does not exist."""
        res = resource_for(kind)
        self.store.delete(res, self._ns(res, namespace), name)

    @property
    def resource_version(self) -> int:
        return self.store.rv

    # -- faults and protocol events ------------------------------------------------------------
    def compact(self) -> None:
        """Forget history: watches (and exact lists, continue tokens) from any RV handed out so far
        get 410 Expired; open watches are not touched (drop them to force a re-watch)."""
        self.store.compact()

    def drop_watches(self) -> None:
        """Cut every open watch connection mid-stream."""
        with self.store.lock:
            for w in self.store.watchers:
                w.q.put(DROP)
                try:
                    if w.sock is not None:
                        w.sock.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

    def hang_watches(self, seconds: float) -> None:
        """Open watches go silent (no events, no bookmarks) for `seconds`, then are cut; watches
        opened afterwards work normally."""
        with self.store.lock:
            for w in self.store.watchers:
                w.hang_until = time.monotonic() + seconds
                w.q.put(WAKE)

    def send_bookmarks(self) -> None:
        """A BOOKMARK now on every watch that allowed them."""
        with self.store.lock:
            for w in self.store.watchers:
                if w.bookmarks:
                    self.store.bookmark(w)

    @property
    def watch_count(self) -> int:
        with self.store.lock:
            return len(self.store.watchers)

    def fail_next(self, method: str, path_regex: str, status: int, times: int = 1, body: Obj | None = None) -> None:
        """The next `times` requests whose method matches ("*" for any) and whose path+query
        matches path_regex (re.search) get `status` with body (default: a Status of that code)."""
        with self._lock:
            self._faults.append(_Fault(method.upper(), re.compile(path_regex), status, times, body))

    def _take_fault(self, method: str, path: str) -> tuple[int, Obj] | None:
        with self._lock:
            for f in self._faults:
                if f.method in (method, "*") and f.pattern.search(path):
                    f.times -= 1
                    if f.times <= 0:
                        self._faults.remove(f)
                    return f.status, f.body or errors.status(f.status, f"injected fault: {method} {path}")
        return None

    def _record(self, method: str, path: str) -> None:
        with self._lock:
            self._requests.append((method, path))

    @property
    def requests(self) -> list[tuple[str, str]]:
        """(method, path+query) of every request so far, in arrival order."""
        with self._lock:
            return list(self._requests)

    def record_bindings(self) -> list[tuple[str, str, float]]:
        """From now on, every binding the store accepts is appended to the returned list as
        (pod name, node name, time.monotonic() when the request reached the store)."""
        log: list[tuple[str, str, float]] = []
        real = self.store.bind

        def bind(res: Resource, namespace: str, name: str, node: str, *a: Any, **kw: Any) -> Obj:
            t = time.monotonic()
            out = real(res, namespace, name, node, *a, **kw)
            log.append((name, node, t))  # list.append is atomic: no lock for readers
            return out

        self.store.bind = bind  # type: ignore[method-assign]
        return log

    @staticmethod
    def wait_for(predicate: Callable[[], bool], timeout: float = 5.0, interval: float = 0.01) -> bool:
        """Poll predicate until it is true (True) or timeout passes (False)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if predicate():
                return True
            time.sleep(interval)
        return bool(predicate())

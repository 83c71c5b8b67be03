"""The REST and watch protocol over HTTP/1.1: routing, JSON bodies, chunked watch streams."""

from __future__ import annotations

import math
import queue
import socket
import sys
import time
import traceback
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, urlsplit

import orjson

from . import errors
from .errors import APIError, bad_request, method_not_allowed, not_served
from .patches import json_patch, merge_patch, strategic_merge_patch
from .resources import BY_PATH, RESOURCES, Obj, Resource
from .selectors import field_matcher, label_matcher
from .store import DROP, END, Watcher, event_line

if TYPE_CHECKING:
    from .server import KubeAPIServer

VERSION = {"major": "1", "minor": "31", "gitVersion": "v1.31.0-kubesched-test", "gitCommit": "0" * 40,
           "gitTreeState": "clean", "buildDate": "2024-08-13T00:00:00Z", "goVersion": "go1.22.5",
           "compiler": "gc", "platform": "linux/amd64"}
_VERBS = ["create", "delete", "get", "list", "patch", "update", "watch"]
_SUCCESS = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success"}


def _flag(q: dict[str, str], name: str) -> bool:
    return q.get(name, "").lower() in ("1", "t", "true")


def _json(raw: bytes) -> Any:
    try:
        return orjson.loads(raw or b"{}")
    except orjson.JSONDecodeError as e:
        raise bad_request(f"couldn't parse the request body as JSON: {e}") from None


def _object(raw: bytes, res: Resource) -> Obj:
    body = _json(raw)
    if not isinstance(body, dict):
        raise bad_request(f"the request body must be a JSON object (a {res.kind})")
    if body.get("kind") not in (None, res.kind):
        raise bad_request(f"the object provided is unrecognized (must be of type {res.kind}): kind "
                          f"{body.get('kind')!r}")
    return body


def _target(parts: list[str]) -> tuple[Resource, str | None, str | None, str | None, bool]:
    """(resource, namespace, name, subresource, legacy /watch/ prefix) for a resource path."""
    if parts[:1] == ["api"] and len(parts) >= 3:
        group, version, rest = "", parts[1], parts[2:]
    elif parts[:1] == ["apis"] and len(parts) >= 4:
        group, version, rest = parts[1], parts[2], parts[3:]
    else:
        raise not_served()
    legacy_watch = rest[0] == "watch"
    rest = rest[1:] if legacy_watch else rest
    namespace = None
    if len(rest) >= 3 and rest[0] == "namespaces" and rest[2] not in ("status", "finalize"):
        namespace, rest = rest[1], rest[2:]
    if rest == ["bindings"] and (group, version) == ("", "v1") and namespace:  # the older Binding endpoint
        return BY_PATH[("", "v1", "pods")], namespace, None, "binding", False
    res = BY_PATH.get((group, version, rest[0])) if 1 <= len(rest) <= 3 else None
    if res is None or (namespace is not None and not res.namespaced):
        raise not_served()
    name = rest[1] if len(rest) > 1 else None
    if name is not None and res.namespaced and namespace is None:
        raise not_served()
    return res, namespace, name, rest[2] if len(rest) > 2 else None, legacy_watch


def _discovery(parts: list[str], address: str) -> Any:
    """/version, /api, /apis and the per-group-version resource lists; None for anything else."""
    groups: dict[str, list[str]] = {}
    for r in RESOURCES:
        if r.group and r.version not in groups.setdefault(r.group, []):
            groups[r.group].append(r.version)

    def group_doc(name: str) -> Obj:
        versions = [{"groupVersion": f"{name}/{v}", "version": v} for v in groups[name]]
        return {"name": name, "versions": versions, "preferredVersion": versions[0]}

    if parts == ["version"]:
        return VERSION
    if parts == ["api"]:
        return {"kind": "APIVersions", "versions": ["v1"],
                "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": address}]}
    if parts == ["apis"]:
        return {"kind": "APIGroupList", "apiVersion": "v1", "groups": [group_doc(g) for g in groups]}
    if len(parts) == 2 and parts[0] == "apis" and parts[1] in groups:
        return {"kind": "APIGroup", "apiVersion": "v1", **group_doc(parts[1])}
    if len(parts) == 2 and parts[0] == "api" or len(parts) == 3 and parts[0] == "apis":
        group, version = ("", parts[1]) if parts[0] == "api" else (parts[1], parts[2])
        found = [r for r in RESOURCES if (r.group, r.version) == (group, version)]
        if not found:
            return None
        out: list[Obj] = []
        for r in found:
            base = {"singularName": r.kind.lower(), "namespaced": r.namespaced, "kind": r.kind}
            out.append({"name": r.plural, **base, "verbs": _VERBS})
            if r.status:
                out.append({"name": f"{r.plural}/status", **base, "singularName": "",
                            "verbs": ["get", "patch", "update"]})
            if r.kind == "Pod" and not r.group:
                out.append({"name": "pods/binding", "singularName": "", "namespaced": True, "kind": "Binding",
                            "verbs": ["create"]})
                out.append({"name": "pods/eviction", "singularName": "", "namespaced": True, "group": "policy",
                            "version": "v1", "kind": "Eviction", "verbs": ["create"]})
        return {"kind": "APIResourceList", "apiVersion": "v1",
                "groupVersion": f"{group}/{version}" if group else version, "resources": out}
    return None


class Handler(BaseHTTPRequestHandler):
    """One connection (HTTP/1.1 keep-alive); watches hold their connection until they end."""

    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # headers and body go out in separate writes: no 40 ms delayed-ACK stalls
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 (the base class's name)
        pass

    def do_GET(self) -> None:
        self._handle("GET")

    def do_POST(self) -> None:
        self._handle("POST")

    def do_PUT(self) -> None:
        self._handle("PUT")

    def do_PATCH(self) -> None:
        self._handle("PATCH")

    def do_DELETE(self) -> None:
        self._handle("DELETE")

    # -- plumbing ----------------------------------------------------------------------------
    def _send(self, code: int, body: Any, content_type: str = "application/json") -> None:
        data = body if isinstance(body, bytes) else orjson.dumps(body)
        self.send_response(code)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _handle(self, method: str) -> None:
        api = self.server.api
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""  # always drain: the connection is reused
        api._record(method, self.path)
        fault = api._take_fault(method, self.path)
        try:
            if fault is not None:
                self._send(*fault)
            else:
                self._route(method, raw)
        except APIError as e:
            self._send(e.code, e.body)
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True
        except Exception as e:  # a bug in this server must fail the client visibly, not hang it
            traceback.print_exc(file=sys.stderr)
            self._send(500, errors.status(500, f"Internal error occurred: {e!r}"))

    # -- REST --------------------------------------------------------------------------------
    def _route(self, method: str, raw: bytes) -> None:
        api = self.server.api
        url = urlsplit(self.path)
        q = {k: v[-1] for k, v in parse_qs(url.query, keep_blank_values=True).items()}
        parts = [p for p in url.path.split("/") if p]
        if method == "GET" and parts in (["healthz"], ["livez"], ["readyz"]):
            return self._send(200, b"ok", "text/plain; charset=utf-8")
        if method == "GET" and (doc := _discovery(parts, api.url.removeprefix("http://"))) is not None:
            return self._send(200, doc)
        res, ns, name, sub, legacy_watch = _target(parts)
        store = api.store
        if method == "GET" and name is None:
            return self._watch(res, ns, q) if legacy_watch or _flag(q, "watch") else self._list(res, ns, q)
        if method == "GET" and sub in (None, "status"):
            return self._send(200, res.to_wire(store.get(res, ns, name)))  # type: ignore[arg-type]
        if method == "POST" and sub == "binding" and ns:
            return self._bind(res, ns, name, raw)
        if method == "POST" and sub == "eviction" and res.kind == "Pod" and ns and name:
            store.delete(res, ns, name)
            return self._send(201, {**_SUCCESS, "code": 201})
        if method == "POST" and name is None and (ns or not res.namespaced):
            return self._send(201, res.to_wire(store.create(res, res.from_wire(_object(raw, res)), ns)))
        if name is None or sub not in (None, "status"):
            raise method_not_allowed() if sub is None else not_served()
        part = "status" if sub else ("main" if res.status else "all")
        if method == "PUT":
            body = res.from_wire(_object(raw, res))
            obj = store.replace(res, ns, name, body, part, require_rv=res.kind == "Lease")
            return self._send(200, res.to_wire(obj))
        if method == "PATCH":
            return self._send(200, res.to_wire(self._patch(res, ns, name, part, raw)))
        if method == "DELETE" and sub is None:
            opts = _json(raw) if raw else {}
            gone = store.delete(res, ns, name, opts.get("preconditions") if isinstance(opts, dict) else None)
            if res.kind == "Pod":  # pods return the deleted object, most kinds a Status
                return self._send(200, res.to_wire(gone))
            details = {"name": name, **({"group": res.group} if res.group else {}), "kind": res.plural,
                       "uid": gone["metadata"]["uid"]}
            return self._send(200, {**_SUCCESS, "details": details})
        raise method_not_allowed()

    def _list(self, res: Resource, ns: str | None, q: dict[str, str]) -> None:
        labels, fields = label_matcher(q.get("labelSelector")), field_matcher(q.get("fieldSelector"), res)
        try:
            limit = int(q.get("limit") or 0)
        except ValueError:
            raise bad_request(f"limit: Invalid value: {q['limit']!r}") from None
        items, rv, token, remaining = self.server.api.store.list(
            res, ns, lambda o: labels(o) and fields(o), q.get("resourceVersion"), q.get("resourceVersionMatch"),
            limit, q.get("continue"), counted=not (q.get("labelSelector") or q.get("fieldSelector")))
        meta: Obj = {"resourceVersion": str(rv)}
        if token:
            meta["continue"] = token
        if remaining is not None:
            meta["remainingItemCount"] = remaining
        if not (res.builtin and res.group != "events.k8s.io"):
            items = [res.to_wire(o) for o in items]
            if res.builtin:  # built-in list items carry no kind/apiVersion
                items = [{k: v for k, v in o.items() if k not in ("kind", "apiVersion")} for o in items]
        self._send(200, {"kind": f"{res.kind}List", "apiVersion": res.api_version, "metadata": meta,
                         "items": items})

    def _patch(self, res: Resource, ns: str | None, name: str, part: str, raw: bytes) -> Obj:
        ctype = (self.headers.get("Content-Type") or "").split(";")[0].strip()
        patch = _json(raw)
        store = self.server.api.store
        with store.lock:  # read-modify-write is atomic, like GuaranteedUpdate
            wire = res.to_wire(store.get(res, ns, name))
            if ctype == "application/merge-patch+json":
                new = merge_patch(wire, patch)
            elif ctype == "application/strategic-merge-patch+json" and res.builtin:
                new = strategic_merge_patch(wire, patch)
            elif ctype == "application/json-patch+json":
                new = json_patch(wire, patch)
            else:
                accepted = "application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml"
                if res.builtin:
                    accepted += ", application/strategic-merge-patch+json"
                raise APIError(errors.status(415, "the body of the request was in an unknown format - accepted "
                                                  f"media types include: {accepted}"))
            if not isinstance(new, dict):
                raise bad_request("the patched object is not a JSON object")
            return store.replace(res, ns, name, res.from_wire(new), part)

    def _bind(self, pods: Resource, ns: str, name: str | None, raw: bytes) -> None:
        body = _json(raw)
        if not isinstance(body, dict):
            raise bad_request("the request body must be a JSON object (a Binding)")
        meta = body.get("metadata") or {}
        if name is None:
            name = meta.get("name") or ""
        if meta.get("name") != name:
            raise bad_request("name in URL does not match name in body")
        target = body.get("target") or {}
        if target.get("kind") not in (None, "", "Node") or not target.get("name"):
            field = "target.kind" if target.get("name") else "target.name"
            raise APIError(errors.status(422, f'Binding "{name}" is invalid: {field}: Required value',
                                         details={"name": name, "kind": "Binding"}))
        self.server.api.store.bind(pods, ns, name, target["name"], meta.get("uid"), meta.get("annotations"))
        self._send(201, {**_SUCCESS, "code": 201})

    # -- watch -------------------------------------------------------------------------------
    def _watch(self, res: Resource, ns: str | None, q: dict[str, str]) -> None:
        labels, fields = label_matcher(q.get("labelSelector")), field_matcher(q.get("fieldSelector"), res)
        try:
            timeout = float(q["timeoutSeconds"]) if q.get("timeoutSeconds") else math.inf
        except ValueError:
            raise bad_request(f"timeoutSeconds: Invalid value: {q['timeoutSeconds']!r}") from None
        store = self.server.api.store
        try:
            w = store.watch(res, ns, labels, fields, q.get("resourceVersion"), _flag(q, "allowWatchBookmarks"),
                            _flag(q, "sendInitialEvents"))
        except APIError as e:
            if e.code != 410:
                raise
            # Past the RV check, the API server answers 200 and sends the error as one ERROR event.
            self._start_stream()
            self._chunk(event_line("ERROR", e.body))
            self.wfile.write(b"0\r\n\r\n")
            return
        w.sock = self.connection
        try:
            self._start_stream()
            self._stream(w, time.monotonic() + timeout)
        except OSError:  # the client went away
            self.close_connection = True
        finally:
            store.unwatch(w)

    def _start_stream(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()

    def _chunk(self, data: bytes) -> None:
        self.wfile.write(b"%x\r\n%b\r\n" % (len(data), data))

    def _abort(self) -> None:
        """Cut the connection mid-stream, with no terminating chunk: a dead connection to the client."""
        self.close_connection = True
        try:
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass

    def _stream(self, w: Watcher, deadline: float) -> None:
        api = self.server.api
        next_bookmark = time.monotonic() + api.bookmark_interval
        while True:
            now = time.monotonic()
            if w.hang_until > now:
                return self._hang(w)
            if now >= deadline:  # timeoutSeconds: a clean end, the client re-watches
                self.wfile.write(b"0\r\n\r\n")
                return
            if w.bookmarks and now >= next_bookmark:
                api.store.bookmark(w)
                next_bookmark = now + api.bookmark_interval
            wait = min(deadline, next_bookmark if w.bookmarks else math.inf, now + 30.0) - now
            try:
                batch = [w.q.get(timeout=max(wait, 0.0))]
            except queue.Empty:
                continue
            while len(batch) < 512:
                try:
                    batch.append(w.q.get_nowait())
                except queue.Empty:
                    break
            lines = [b for b in batch if isinstance(b, bytes)]
            if DROP in batch:
                return self._abort()
            if w.hang_until > time.monotonic():  # hung while this batch queued: it is never sent
                return self._hang(w)
            if lines:
                self._chunk(b"".join(lines))
            if END in batch:
                self.wfile.write(b"0\r\n\r\n")
                return

    def _hang(self, w: Watcher) -> None:
        """Stay connected and silent until the hang ends, then cut the connection (the client
        should have given up on it long before)."""
        while (left := w.hang_until - time.monotonic()) > 0:
            try:
                if w.q.get(timeout=left) in (DROP, END):
                    break
            except queue.Empty:
                break
        self._abort()


class _Server(ThreadingHTTPServer):
    """Tracks open connections so close() can cut keep-alive and watch connections too."""

    daemon_threads = True
    block_on_close = False
    request_queue_size = 256

    def __init__(self, address: tuple[str, int], api: KubeAPIServer) -> None:
        self.api = api
        self.connections: set[socket.socket] = set()
        super().__init__(address, Handler)

    def process_request(self, request: Any, client_address: Any) -> None:
        self.connections.add(request)
        super().process_request(request, client_address)

    def shutdown_request(self, request: Any) -> None:
        self.connections.discard(request)
        super().shutdown_request(request)

    def handle_error(self, request: Any, client_address: Any) -> None:
        if not isinstance(sys.exc_info()[1], ConnectionError):  # clients hang up; that is no server error
            super().handle_error(request, client_address)

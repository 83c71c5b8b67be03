"""The test API server's storage: etcd-like global resourceVersion, change history, watchers.

Objects are stored without kind/apiVersion and never mutated after they are stored (every write
stores a new dict), so readers may serialise them outside the lock.
"""

from __future__ import annotations

import base64
import bisect
import copy
import queue
import random
import threading
import uuid
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import orjson

from . import errors
from .errors import APIError, bad_request, conflict, expired, invalid, not_found
from .resources import BY_KIND, Obj, Resource
from .selectors import Matcher

Key = tuple[str, str]  # (namespace or "", name)
DROP, END, WAKE = "drop", "end", "wake"  # watcher queue signals besides event lines (bytes)
CONTINUE_EXPIRED = (
    "The provided continue parameter is too old to display a consistent list result. You can start a new "
    "list without the continue parameter, or use the continue token in this response to retrieve the "
    "remainder of the results. Continuing with the provided token results in an inconsistent list - objects "
    "that were created, modified, or deleted between the time the first chunk was returned and now may show "
    "up in the list."
)


def now_rfc3339() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _key(obj: Obj) -> Key:
    meta = obj["metadata"]
    return meta.get("namespace") or "", meta["name"]


@dataclass(eq=False)
class Change:
    """One write: the object after it (for DELETED, the last state at the deletion's RV) and before."""

    rv: int
    storage: str
    type: str
    obj: Obj
    prev: Obj | None
    _wire: dict[str, bytes] = field(default_factory=dict)

    def line(self, typ: str, res: Resource) -> bytes:
        data = self._wire.get(res.api_version)
        if data is None:
            data = self._wire[res.api_version] = orjson.dumps(res.to_wire(self.obj))
        return b'{"type":"' + typ.encode() + b'","object":' + data + b"}\n"


def event_line(typ: str, obj: Obj) -> bytes:
    return orjson.dumps({"type": typ, "object": obj}) + b"\n"


class Watcher:
    """One open watch: its filters and the queue its HTTP thread drains."""

    def __init__(self, res: Resource, namespace: str | None, labels: Matcher, fields: Matcher,
                 bookmarks: bool) -> None:
        self.res, self.namespace, self.bookmarks = res, namespace, bookmarks
        self._labels, self._fields = labels, fields
        self.q: queue.SimpleQueue[bytes | str] = queue.SimpleQueue()
        self.hang_until = 0.0
        self.sock: Any = None  # set by the HTTP handler, so drop_watches can cut it

    def matches(self, obj: Obj) -> bool:
        if self.namespace is not None and obj["metadata"].get("namespace") != self.namespace:
            return False
        return self._labels(obj) and self._fields(obj)

    def offer(self, ch: Change) -> None:
        """Queue what this watch sees of a change: the API server turns a MODIFIED that moves an
        object in or out of the selector into ADDED or DELETED."""
        new_ok = ch.type != "DELETED" and self.matches(ch.obj)
        old_ok = ch.prev is not None and self.matches(ch.prev)
        if ch.type == "DELETED" and old_ok or ch.type == "MODIFIED" and new_ok and old_ok:
            self.q.put(ch.line(ch.type, self.res))
        elif new_ok:
            self.q.put(ch.line("ADDED", self.res))
        elif old_ok and ch.prev is not None:
            gone = _with_meta(ch.prev, resourceVersion=str(ch.rv))
            self.q.put(event_line("DELETED", self.res.to_wire(gone)))


def _with_meta(obj: Obj, **meta: Any) -> Obj:
    return {**obj, "metadata": {**obj["metadata"], **meta}}


class Store:
    """Objects by storage and key, the change history since the last compaction, open watchers."""

    def __init__(self, max_history: int | None = None) -> None:
        self.lock = threading.RLock()
        self.rv = 1  # like etcd's first revision; "0" would mean "any" to a client
        self.compacted = 0  # a watch or exact list from an RV below this gets 410 Expired
        self.max_history = max_history
        self.objects: dict[str, dict[Key, Obj]] = defaultdict(dict)
        self.history: list[Change] = []
        self.watchers: set[Watcher] = set()

    # -- reads -------------------------------------------------------------------------------
    def get(self, res: Resource, namespace: str | None, name: str) -> Obj:
        obj = self.objects[res.storage].get((namespace or "", name))
        if obj is None:
            raise not_found(res, name)
        return obj

    def list(self, res: Resource, namespace: str | None, match: Matcher, rv: str | None = None,
             rv_match: str | None = None, limit: int = 0, cont: str | None = None,
             counted: bool = True) -> tuple[list[Obj], int, str, int | None]:
        """Matching objects in key order, the list's RV, the continue token, remainingItemCount."""
        with self.lock:
            start: Key | None = None
            if cont:
                snap, start = _decode_continue(cont)
                if snap < self.compacted:
                    raise expired(CONTINUE_EXPIRED)
            elif rv not in (None, "", "0"):
                snap = self._parse_rv(rv)
                if snap > self.rv:
                    raise _too_large(snap, self.rv)
                if rv_match == "Exact" and snap < self.compacted:
                    raise expired("The resourceVersion for the provided list is too old.")
                if rv_match != "Exact":
                    snap = self.rv  # NotOlderThan: the current state is not older
            else:
                snap = self.rv
            state = self._state_at(res.storage, snap)
        keys = sorted(k for k in state if namespace is None or k[0] == namespace)
        if start is not None:
            keys = keys[bisect.bisect_right(keys, start):]
        items: list[Obj] = []
        token, remaining = "", None
        for i, k in enumerate(keys):
            if not match(state[k]):
                continue
            if limit and len(items) == limit:
                token = _encode_continue(snap, _key(items[-1]))
                remaining = len(keys) - i if counted else None
                break
            items.append(state[k])
        return items, snap, token, remaining

    def _state_at(self, storage: str, rv: int) -> dict[Key, Obj]:
        """The storage as of an RV, by undoing the retained history after it."""
        state = self.objects[storage]
        if rv == self.rv:
            return dict(state)
        state = dict(state)
        for ch in reversed(self.history):
            if ch.rv <= rv:
                break
            if ch.storage != storage:
                continue
            if ch.type == "ADDED":
                state.pop(_key(ch.obj), None)
            elif ch.prev is not None:
                state[_key(ch.prev)] = ch.prev
        return state

    def _parse_rv(self, rv: str) -> int:
        try:
            return int(rv)
        except ValueError:
            raise bad_request(f'resourceVersion: Invalid value: "{rv}": must be a valid integer') from None

    # -- writes ------------------------------------------------------------------------------
    def create(self, res: Resource, obj: Obj, namespace: str | None = None, via_http: bool = True) -> Obj:
        """Store a new object as the API server would: name, namespace, system fields, admission."""
        obj = copy.deepcopy(obj)
        meta = obj.setdefault("metadata", {})
        if via_http and meta.get("resourceVersion"):
            raise bad_request("resourceVersion should not be set on objects to be created")
        if not meta.get("name") and meta.get("generateName"):
            meta["name"] = meta["generateName"] + "".join(random.choices("bcdfghjklmnpqrstvwxz2456789", k=5))
        if not meta.get("name"):
            raise invalid(res, "", "metadata.name", "Required value: name or generateName is required")
        if res.namespaced:
            if namespace and meta.get("namespace") not in (None, "", namespace):
                raise bad_request("the namespace of the provided object does not match the namespace sent "
                                  "on the request")
            meta["namespace"] = namespace or meta.get("namespace") or "default"
        else:
            meta.pop("namespace", None)
        if via_http or not meta.get("uid"):
            meta["uid"] = str(uuid.uuid4())
        if via_http or not meta.get("creationTimestamp"):
            meta["creationTimestamp"] = now_rfc3339()
        meta["generation"] = 1
        with self.lock:
            if _key(obj) in self.objects[res.storage]:
                raise errors.already_exists(res, meta["name"])
            self._admit(res, obj, via_http)
            self.rv += 1
            meta["resourceVersion"] = str(self.rv)
            self.objects[res.storage][_key(obj)] = obj
            self._emit(res.storage, "ADDED", obj, None)
        return obj

    def _admit(self, res: Resource, obj: Obj, via_http: bool) -> None:
        """Defaults and admission the scheduler depends on (schedulerName, priority, ns labels)."""
        if via_http and res.status and res.kind != "Node":
            obj.pop("status", None)  # create cannot set status where status is a subresource
        if res.kind == "Namespace" and not res.group:
            obj["metadata"].setdefault("labels", {})["kubernetes.io/metadata.name"] = obj["metadata"]["name"]
            obj.setdefault("status", {}).setdefault("phase", "Active")
        if res.kind != "Pod" or res.group:
            return
        spec = obj.setdefault("spec", {})
        spec.setdefault("schedulerName", "default-scheduler")
        if via_http:
            obj["status"] = {"phase": "Pending"}
        if "priority" in spec:
            return
        classes = self.objects[BY_KIND["PriorityClass"].storage]
        pc_name = spec.get("priorityClassName")
        pc = classes.get(("", pc_name)) if pc_name else next(
            (c for c in classes.values() if c.get("globalDefault")), None)
        if pc_name and pc is None:
            if via_http:
                raise APIError(errors.status(
                    403, f'pods "{obj["metadata"]["name"]}" is forbidden: no PriorityClass with name '
                         f'{pc_name} was found', details={"name": obj["metadata"]["name"], "kind": "pods"}))
            return
        if pc is not None and not pc_name:
            spec["priorityClassName"] = pc["metadata"]["name"]
        spec["priority"] = int(pc.get("value", 0)) if pc else 0
        spec.setdefault("preemptionPolicy", (pc or {}).get("preemptionPolicy", "PreemptLowerPriority"))

    def replace(self, res: Resource, namespace: str | None, name: str, new: Obj, part: str = "all",
                require_rv: bool = False) -> Obj:
        """PUT semantics. part: "all" (test-side update), "main" or "status" (the two endpoints of
        a resource with a status subresource: each keeps the other's half)."""
        with self.lock:
            cur = self.get(res, namespace, name)
            meta = new.get("metadata") or {}
            if meta.get("name") not in (None, name):
                raise bad_request(f"the name of the object ({meta.get('name')}) does not match the name on "
                                  f"the URL ({name})")
            want_rv = meta.get("resourceVersion")
            if want_rv and want_rv != cur["metadata"]["resourceVersion"]:
                raise conflict(res, name, errors.STALE)
            if not want_rv and require_rv:
                raise invalid(res, name, "metadata.resourceVersion",
                              "Invalid value: 0x0: must be specified for an update")
            if part == "status":
                merged = {k: v for k, v in cur.items() if k != "status"}
                if new.get("status") is not None:
                    merged["status"] = copy.deepcopy(new["status"])
            else:
                merged = {k: copy.deepcopy(v) for k, v in new.items() if not (part == "main" and k == "status")}
                if part == "main" and "status" in cur:
                    merged["status"] = cur["status"]
                merged["metadata"] = {**copy.deepcopy(meta), **{
                    k: cur["metadata"][k] for k in ("name", "namespace", "uid", "creationTimestamp", "generation")
                    if k in cur["metadata"]}}
            if (res.kind, res.group, part) == ("Pod", "", "main"):
                old_node, new_node = (o.get("spec", {}).get("nodeName") for o in (cur, merged))
                if old_node != new_node:
                    raise invalid(res, name, "spec", "Forbidden: pod updates may not change fields other than "
                                  "`spec.containers[*].image`, `spec.activeDeadlineSeconds`, `spec.tolerations` "
                                  "(only additions to existing tolerations), `spec.schedulingGates`")
            return self._commit(res, cur, merged)

    def _commit(self, res: Resource, cur: Obj, merged: Obj) -> Obj:
        """Store an update: no-ops write nothing (as the API server), spec changes bump generation."""
        merged["metadata"] = dict(merged["metadata"])  # may still be the stored object's: never mutate that
        merged["metadata"]["resourceVersion"] = cur["metadata"]["resourceVersion"]
        if merged == cur:
            return cur
        body = {k: v for k, v in merged.items() if k not in ("metadata", "status")}
        if body != {k: v for k, v in cur.items() if k not in ("metadata", "status")}:
            merged["metadata"]["generation"] = cur["metadata"].get("generation", 1) + 1
        self.rv += 1
        merged["metadata"]["resourceVersion"] = str(self.rv)
        self.objects[res.storage][_key(merged)] = merged
        self._emit(res.storage, "MODIFIED", merged, cur)
        return merged

    def delete(self, res: Resource, namespace: str | None, name: str,
               preconditions: dict[str, Any] | None = None) -> Obj:
        with self.lock:
            cur = self.get(res, namespace, name)
            for field_name in ("uid", "resourceVersion"):
                want = (preconditions or {}).get(field_name)
                if want and want != cur["metadata"].get(field_name):
                    label = "UID" if field_name == "uid" else "ResourceVersion"
                    raise conflict(res, name, f"Precondition failed: {label} in precondition: {want}, "
                                              f"{label} in object meta: {cur['metadata'].get(field_name)}")
            self.rv += 1
            gone = _with_meta(cur, resourceVersion=str(self.rv))
            del self.objects[res.storage][_key(cur)]
            self._emit(res.storage, "DELETED", gone, cur)
            return gone

    def bind(self, res: Resource, namespace: str, name: str, node: str, uid: str | None = None,
             annotations: dict[str, str] | None = None) -> Obj:
        """The pods/binding subresource (pkg/registry/core/pod/storage/storage.go)."""
        with self.lock:
            pod = self.get(res, namespace, name)
            if uid and uid != pod["metadata"]["uid"]:
                raise conflict(res, name, f"StorageError: invalid object, Code: 4, Key: /registry/pods/{namespace}/"
                               f"{name}, ResourceVersion: 0, AdditionalErrorMsg: Precondition failed: UID in "
                               f"precondition: {uid}, UID in object meta: {pod['metadata']['uid']}")
            spec = pod.get("spec", {})
            if pod["metadata"].get("deletionTimestamp"):
                why = f"pod {name} is being deleted, cannot be assigned to a host"
            elif spec.get("nodeName"):
                why = f'pod {name} is already assigned to node "{spec["nodeName"]}"'
            elif spec.get("schedulingGates"):
                why = f"pod {name} has non-empty .spec.schedulingGates"
            else:
                why = ""
            if why:
                raise conflict(res, name, why, subresource="binding")
            new = copy.deepcopy(pod)
            new["spec"] = {**spec, "nodeName": node}
            if annotations:
                new["metadata"]["annotations"] = {**new["metadata"].get("annotations", {}), **annotations}
            conds = new.setdefault("status", {}).setdefault("conditions", [])
            old = next((c for c in conds if c.get("type") == "PodScheduled"), None)
            cond = {"type": "PodScheduled", "status": "True", "lastProbeTime": (old or {}).get("lastProbeTime"),
                    "lastTransitionTime": now_rfc3339()}
            new["status"]["conditions"] = [cond if c is old else c for c in conds] if old else [*conds, cond]
            return self._commit(res, pod, new)

    # -- watch -------------------------------------------------------------------------------
    def _emit(self, storage: str, typ: str, obj: Obj, prev: Obj | None) -> None:
        ch = Change(self.rv, storage, typ, obj, prev)
        self.history.append(ch)
        if self.max_history and len(self.history) > self.max_history:
            del self.history[: len(self.history) // 2]
            self.compacted = self.history[0].rv - 1
        for w in self.watchers:
            if w.res.storage == storage:
                w.offer(ch)

    def watch(self, res: Resource, namespace: str | None, labels: Matcher, fields: Matcher, rv: str | None,
              bookmarks: bool, initial_events: bool = False) -> Watcher:
        """Open a watch; raises 410 Expired when rv is older than the retained history."""
        w = Watcher(res, namespace, labels, fields, bookmarks)
        with self.lock:
            if rv in (None, "", "0") or initial_events:
                # "Get state and start at most recent": synthetic ADDED for what exists now.
                for k in sorted(self.objects[res.storage]):
                    obj = self.objects[res.storage][k]
                    if w.matches(obj):
                        w.q.put(event_line("ADDED", res.to_wire(obj)))
                if initial_events and bookmarks:
                    self.bookmark(w, {"k8s.io/initial-events-end": "true"})
            else:
                since = self._parse_rv(rv)
                if since < self.compacted:
                    raise expired(f"too old resource version: {since} ({self.compacted})")
                start = bisect.bisect_right(self.history, since, key=lambda ch: ch.rv)
                for ch in self.history[start:]:
                    if ch.storage == res.storage:
                        w.offer(ch)
            self.watchers.add(w)
        return w

    def unwatch(self, w: Watcher) -> None:
        with self.lock:
            self.watchers.discard(w)

    def bookmark(self, w: Watcher, annotations: dict[str, str] | None = None) -> None:
        """Queue a BOOKMARK at the current RV; under the lock, so it follows every change it covers."""
        with self.lock:
            meta: dict[str, Any] = {"resourceVersion": str(self.rv), "creationTimestamp": None}
            if annotations:
                meta["annotations"] = annotations
            w.q.put(event_line("BOOKMARK", {"kind": w.res.kind, "apiVersion": w.res.api_version,
                                            "metadata": meta}))

    def compact(self) -> None:
        """Forget all history. The RV moves on by one (as if something else in etcd was written),
        so every RV handed out before is now too old for a watch or an exact list."""
        with self.lock:
            self.rv += 1
            self.compacted = self.rv
            self.history.clear()


def _too_large(want: int, current: int) -> APIError:
    return APIError(errors.status(
        504, f"Timeout: Too large resource version: {want}, current: {current}", "Timeout",
        {"causes": [{"reason": "ResourceVersionTooLarge", "message": "Too large resource version"}],
         "retryAfterSeconds": 1}))


def _encode_continue(rv: int, last: Key) -> str:
    raw = orjson.dumps({"v": "meta.k8s.io/v1", "rv": rv, "start": list(last)})
    return base64.urlsafe_b64encode(raw).decode()


def _decode_continue(token: str) -> tuple[int, Key]:
    try:
        data = orjson.loads(base64.urlsafe_b64decode(token.encode()))
        return int(data["rv"]), (str(data["start"][0]), str(data["start"][1]))
    except (ValueError, KeyError, IndexError, TypeError):
        raise bad_request(f"continue key is not valid: {token!r}") from None

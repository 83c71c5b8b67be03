"""`kubesched ui`'s web server: a Starlette app serving the built page and a JSON API.

Every request is bounded (body size, one what-if at a time) and every user mistake is an HTTP 400
with one line naming the field: ``{"error": "...", "field": "..."}``. The server only reads: it
never writes a file (exports are downloads), so it cannot write outside any folder.

Work that takes longer than a glance (scheduling, explaining, moving the timeline, reading a
folder, encoding a large answer) runs in Starlette's thread pool, never on the event loop, so a
small request (``/api/meta``, the page's files) is answered while a heavy one runs. Two kinds of
heavy request:

- *runs* (what-if, open, import) build new workspaces: one at a time, and another while one is in
  progress is refused with HTTP 409 (queuing a second what-if or a second open would answer for a
  state the user already left). A run stops at its next scheduling attempt when the client goes
  away or ``POST /api/cancel`` asks it to (answered HTTP 409 with ``"cancelled": true``);
- *reads* of the workspace (cluster at a step, decision, exports) share its one moving snapshot:
  they wait for each other on the timeline's lock and are all answered, in turn.

A handler reads ``st.ws`` once, so a read that began before an open finishes on the workspace it
started with.

Who may ask is decided in front of the app (``kubesched.ui.guard``: Host, Origin, a per-run
token). What the requests may make the server do is decided here: configurations and folders
from the page are data, so they never import code (the plugins are those the command line loaded,
``registry``), and the Open box reads only inside ``roots``.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable
from importlib import resources
from pathlib import Path
from typing import Any

import orjson
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import FileResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from kubesched.errors import InputError
from kubesched.framework.registry import Registry
from kubesched.ui import dashboards, interop, views, whatif
from kubesched.ui.guard import Access, Guard, Roots
from kubesched.ui.sources import CLUSTER, EXPERIMENT, SIMULATION, Workspace, open_cluster, open_source
from kubesched.ui.timeline import BIND, DELETE

DEFAULT_MAX_BODY = 8 << 20
EXPORT_PODS, MAX_EXPORT_PODS = 200, 5000  # pods with simulator annotations: asked by default, at most
EXPORT_BYTES, MIN_EXPORT_BYTES, MAX_EXPORT_BYTES = 16 << 20, 64 << 10, 256 << 20  # and the YAML's size bound
BUSY = 409  # a run (what-if, open, import) is already in progress, or was cancelled
POLL_S = 0.2  # how often a run's handler looks whether its client went away
DATA_REFUSAL = (
    "kubesched ui imports none named by a configuration it did not get on its command line (importing runs "
    "its code): load the plugin with --plugin-path, or name it in --config with --import-plugins"
)


class Cancelled(Exception):
    """Raised inside a run at its next attempt once the run was cancelled."""


def static_dir() -> Path:
    return Path(str(resources.files("kubesched.ui") / "static"))


def _json(data: Any, status: int = 200, headers: dict[str, str] | None = None) -> Response:
    return Response(
        orjson.dumps(data, option=orjson.OPT_SERIALIZE_NUMPY), status_code=status, media_type="application/json",
        headers=headers,
    )


def error(message: str, field: str | None = None, status: int = 400) -> Response:
    return _json({"error": message.replace("\n", " "), "field": field}, status)


class State:
    """The workspace being looked at; replaced when the page opens or imports something else."""

    def __init__(
        self, ws: Workspace, max_body: int, registry: Registry, roots: Roots,
        on_swap: Callable[[], None] | None = None,
    ) -> None:
        self._ws = ws
        self.max_body = max_body
        self.registry = registry  # sealed: what the command line loaded, nothing a request names
        self.roots = roots
        self.busy = threading.Lock()  # one run (what-if, open, import) at a time
        self.exporting = threading.Lock()  # one simulator-annotations export at a time
        self.cancel = threading.Event()  # set: the run in progress stops at its next attempt
        self.on_swap = on_swap  # called after each replacement (the CLI freezes the new heap)

    @property
    def ws(self) -> Workspace:
        return self._ws

    @ws.setter
    def ws(self, new: Workspace) -> None:
        self._ws = new
        if self.on_swap is not None:
            self.on_swap()

    def check(self) -> None:
        """Called by a run after each scheduling attempt."""
        if self.cancel.is_set():
            raise Cancelled

    async def run(self, request: Request, field: str, job: Callable[[], Response]) -> Response:
        """``job`` in the thread pool if no other run is in progress, else a 409 naming ``field``.
        While it runs, a client that goes away cancels it (nobody is left to read the answer)."""
        if not self.busy.acquire(blocking=False):
            return error("another run (what-if, open or import) is in progress; try again when it ends", field, BUSY)
        self.cancel.clear()
        try:
            task = asyncio.ensure_future(run_in_threadpool(job))
            while True:
                done, _ = await asyncio.wait({task}, timeout=POLL_S)
                if done:
                    break
                if not self.cancel.is_set() and await request.is_disconnected():
                    self.cancel.set()
            try:
                return task.result()
            except Cancelled:
                return _json({"error": "the run was cancelled", "field": field, "cancelled": True}, BUSY)
        finally:
            self.cancel.clear()
            self.busy.release()


async def off_loop(job: Callable[[], Any], status: int = 200) -> Response:
    """``job()``'s answer as JSON, computed and encoded in the thread pool (off the event loop)."""
    return await run_in_threadpool(lambda: _json(job(), status))


async def _body(request: Request, st: State) -> bytes:
    declared = request.headers.get("content-length")
    if declared is not None and (not declared.isdigit() or int(declared) > st.max_body):
        raise InputError(f"request body over {st.max_body} bytes", path="body")
    chunks = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > st.max_body:
            raise InputError(f"request body over {st.max_body} bytes", path="body")
        chunks.append(chunk)
    return b"".join(chunks)


async def _json_body(request: Request, st: State) -> Any:
    raw = await _body(request, st)
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError as e:
        raise InputError(f"not valid JSON: {e}", path="body") from None


def _int_param(request: Request, name: str) -> int | None:
    v = request.query_params.get(name)
    if v is None or v == "":
        return None
    try:
        return int(v)
    except ValueError:
        raise InputError(f"expected a whole number, got {v!r}", path=name) from None


def build_app(
    ws: Workspace,
    *,
    access: Access,
    registry: Registry | None = None,
    roots: Roots | None = None,
    max_body: int = DEFAULT_MAX_BODY,
    on_swap: Callable[[], None] | None = None,
) -> Guard:
    """The app over ``ws``, behind ``access``'s checks. ``registry``: the plugins the command line
    loaded (default: the built-ins); ``roots``: what the Open box may read (default: the working
    directory). ``on_swap`` runs after the page replaces the workspace."""
    from kubesched.app import build_registry

    sealed = (registry or build_registry()).sealed(DATA_REFUSAL)
    st = State(ws, max_body, sealed, roots or Roots.of([Path.cwd()]), on_swap)
    static = static_dir()

    routes = [
        Route("/", _index),
        Route("/api/meta", _meta),
        Route("/api/cluster", _cluster),
        Route("/api/decision", _decision),
        Route("/api/whatif", _run_whatif, methods=["POST"]),
        Route("/api/dashboard/simulation", _sim_dashboard),
        Route("/api/dashboard/experiment", _exp_dashboard),
        Route("/api/schedule", _schedule_json),
        Route("/api/export/snapshot", _export_snapshot),
        Route("/api/export/simulator-annotations", _export_annotations),
        Route("/api/import/snapshot", _import_snapshot, methods=["POST"]),
        Route("/api/open", _open_path, methods=["POST"]),
        Route("/api/cancel", _cancel, methods=["POST"]),
        Mount("/static", app=StaticFiles(directory=static), name="static"),
    ]

    app = Starlette(routes=routes, exception_handlers={InputError: _on_input_error, Exception: _on_crash})
    app.state.ui = st
    return Guard(app, access)


async def _index(request: Request) -> Response:
    return FileResponse(static_dir() / "index.html", headers={"Cache-Control": "no-cache"})


async def _meta(request: Request) -> Response:
    st: State = request.app.state.ui
    w = st.ws
    return _json(
        {
            "kind": w.kind,
            "title": w.title,
            "note": w.note,
            "steps": len(w.timeline) if w.timeline is not None else 0,
            "config_yaml": w.config_text,
            # from the configuration: the timeline's scheduler is busy while a read explains
            "profiles": [p.scheduler_name for p in w.timeline.config.profiles] if w.timeline is not None else [],
            "views": _views(w),
            "start_step": w.start_step,  # the step the page opens at (null: the end of the run)
            "start_note": w.start_note,
        }
    )


async def _cluster(request: Request) -> Response:
    st: State = request.app.state.ui
    w, step = st.ws, _int_param(request, "step")
    return await off_loop(lambda: views.cluster_view(w, step))


async def _decision(request: Request) -> Response:
    st: State = request.app.state.ui
    w, key, attempt = st.ws, request.query_params.get("pod", ""), _int_param(request, "attempt")

    tables = request.query_params.get("tables") == "1"  # the page's form: explain's nodes as columns

    def job() -> Response:
        t0 = time.perf_counter()
        d = (views.decision_tables if tables else views.decision_view)(w, key, attempt)
        t1 = time.perf_counter()
        out = _json(d)
        # where the time went, for the browser's Resource Timing (bench/ui_render.py reads it)
        out.headers["Server-Timing"] = (
            f"decision;dur={(t1 - t0) * 1000:.1f}, explain;dur={d['explain_ms']:.1f}, json;dur={(time.perf_counter() - t1) * 1000:.1f}"
        )
        return out

    return await run_in_threadpool(job)


async def _run_whatif(request: Request) -> Response:
    st: State = request.app.state.ui
    body = await _json_body(request, st)
    w = st.ws
    return await st.run(request, "body", lambda: _json(whatif.compare(w, body, st.registry, st.check)))


async def _cancel(request: Request) -> Response:
    st: State = request.app.state.ui
    running = st.busy.locked()
    if running:
        st.cancel.set()
    return _json({"cancelled": running})


async def _sim_dashboard(request: Request) -> Response:
    st: State = request.app.state.ui
    w = st.ws
    return await off_loop(lambda: dashboards.simulation_dashboard(w))


async def _exp_dashboard(request: Request) -> Response:
    st: State = request.app.state.ui
    w, baseline = st.ws, request.query_params.get("baseline") or None
    return await off_loop(lambda: dashboards.experiment_dashboard(w, baseline))


async def _schedule_json(request: Request) -> Response:
    st: State = request.app.state.ui
    run = st.ws.run
    if run is None:
        raise InputError("a schedule run exists for cluster sources only", path="source")
    return await off_loop(lambda: {"placements": run.placements, "skipped": run.skipped})


async def _export_snapshot(request: Request) -> Response:
    st: State = request.app.state.ui
    w, step = st.ws, _int_param(request, "step")
    if w.timeline is None:
        raise InputError("nothing to export: this source has no cluster", path="source")
    text, step = await run_in_threadpool(_snapshot_at, w, step)
    return Response(
        text, media_type="application/yaml",
        headers={"Content-Disposition": f'attachment; filename="snapshot-step-{step}.yaml"'},
    )


async def _export_annotations(request: Request) -> Response:
    """Pods with kube-scheduler-simulator's result annotations (explained as they were decided).
    One export at a time: another while one is computed is answered 409 at once."""
    st: State = request.app.state.ui
    w = st.ws
    if w.timeline is None:
        raise InputError("nothing to export: this source has no pods", path="source")
    limit = max(1, min(_int_param(request, "limit") or EXPORT_PODS, MAX_EXPORT_PODS))
    max_bytes = _int_param(request, "max_bytes") or EXPORT_BYTES
    if not MIN_EXPORT_BYTES <= max_bytes <= MAX_EXPORT_BYTES:
        raise InputError(f"must be between {MIN_EXPORT_BYTES} and {MAX_EXPORT_BYTES}", path="max_bytes")
    if not st.exporting.acquire(blocking=False):
        return error("another export is in progress; try again when it ends", "export", BUSY)
    try:
        text, done, asked = await run_in_threadpool(_annotated_pods, w, limit, max_bytes)
    finally:
        st.exporting.release()
    return Response(
        text, media_type="application/yaml",
        headers={
            "Content-Disposition": 'attachment; filename="pods-with-simulator-annotations.yaml"',
            "X-Kubesched-Pods": str(done),  # pods written, of
            "X-Kubesched-Pods-Asked": str(asked),  # the pods asked for (and tried)
        },
    )


async def _import_snapshot(request: Request) -> Response:
    st: State = request.app.state.ui
    raw = await _body(request, st)
    try:
        text = raw.decode()
    except UnicodeDecodeError:
        raise InputError("not UTF-8 text", path="body") from None
    w = st.ws

    def job() -> Response:
        objs = interop.parse_snapshot(text, "uploaded snapshot")
        st.ws = open_cluster(
            [], w.config_text if w.kind == CLUSTER else "", seed=w.seed, objects=objs, title="uploaded snapshot",
            registry=st.registry, check=st.check,
        )
        return _json({"ok": True, "title": st.ws.title, "pods": len(objs.pods), "nodes": len(objs.nodes)})

    return await st.run(request, "body", job)


async def _open_path(request: Request) -> Response:
    st: State = request.app.state.ui
    body = await _json_body(request, st)
    if not isinstance(body, dict) or not isinstance(body.get("path"), str) or not body["path"]:
        raise InputError("expected {\"path\": FILE or FOLDER}", path="path")

    path = str(st.roots.check(body["path"]))  # before anything looks at the path

    def job() -> Response:
        try:
            st.ws = open_source(path, registry=st.registry, check=st.check, may_read=st.roots.check)
        except InputError as e:
            return error(str(e), "path")  # the message names the file; the field is the request's
        return _json({"ok": True, "title": st.ws.title, "kind": st.ws.kind})

    return await st.run(request, "path", job)


async def _on_input_error(_: Request, exc: Exception) -> Response:
    assert isinstance(exc, InputError)
    return error(str(exc), exc.path or exc.source)

async def _on_crash(_: Request, exc: Exception) -> Response:
    # a bug, not a user mistake: one line, and the server keeps serving
    return error(f"internal error: {type(exc).__name__}: {exc}", None, 500)


def _snapshot_at(w: Workspace, step: int | None) -> tuple[str, int]:
    """The cluster after ``step`` steps (default: the end) as a YAML List, and the step."""
    tl = w.timeline
    assert tl is not None
    with tl.lock:
        snap, step = tl.at(step)
        on_nodes = {p.uid for pods in snap.pods_on[: snap.n] for p in pods.values()}
        gone = _deleted_by(w, step)
        pending = [
            p for p in w.pods.values() if p.uid not in on_nodes and p.key not in gone and _exists_at(w, p.key, step)
        ]
        items = interop.snapshot_objects(snap, w.objects, pending, {k: i for i, k in enumerate(w.pods)})
    return interop.dump_list(items), step


def _annotated_pods(w: Workspace, limit: int, max_bytes: int) -> tuple[str, int, int]:
    """The first ``limit`` pods tried, with the simulator's annotations of their decisions, as
    long as the YAML stays under ``max_bytes`` (each pod's annotations name every node: about
    half a megabyte a pod on 1,200 nodes); (the YAML, pods written, pods asked for). A cut list
    says so in a comment on its first line."""
    keys = [k for k in w.attempts if k in w.pods][:limit]
    items: list[dict[str, Any]] = []
    size = 0
    for key in keys:
        explain, selected = views.explained(w, key)
        ann = interop.simulator_annotations(explain, selected)
        size += sum(len(k) + len(v) + 8 for k, v in ann.items()) + 1024  # the annotations, then the rest
        if items and size > max_bytes:
            break
        raw = interop.as_object(w.pods[key], "v1", "Pod")
        md = raw.setdefault("metadata", {})
        md["annotations"] = {**(md.get("annotations") or {}), **ann}
        if selected:
            raw.setdefault("spec", {})["nodeName"] = selected
        items.append(raw)
    text = interop.dump_list(items)
    if len(items) < len(keys):
        text = (
            f"# {len(items)} of {len(keys)} pods: the export stops before {max_bytes} bytes (each pod's "
            "annotations name every node); ask for fewer pods (?limit=) or more bytes (?max_bytes=)\n"
        ) + text
    return text, len(items), len(keys)


def _deleted_by(w: Workspace, step: int) -> set[str]:
    """Pods deleted (preempted, completed) in the first ``step`` steps and not bound again."""
    assert w.timeline is not None
    gone: set[str] = set()
    for s in w.timeline.steps[:step]:
        if s.kind == DELETE:
            gone.add(s.name)
        elif s.kind == BIND:
            gone.discard(s.name)
    return gone


def _exists_at(w: Workspace, key: str, step: int) -> bool:
    """Cluster sources hold every pod from the start; a simulated pod exists once it was tried."""
    if w.kind != SIMULATION:
        return True
    tries = w.attempts.get(key)
    return bool(tries) and tries[0].step <= step


def _views(w: Workspace) -> list[str]:
    if w.kind == EXPERIMENT:
        return ["experiment"]
    out = ["cluster", "pods", "decision"] if w.timeline is not None else []
    if w.kind == CLUSTER or w.workload is not None:
        out.append("whatif")
    if w.kind == SIMULATION:
        out.append("simulation")
    return out

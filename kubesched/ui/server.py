"""`kubesched ui`'s web server: a Starlette app serving the built page and a JSON API.

Every request is bounded (body size, one what-if at a time) and every user mistake is an HTTP 400
with one line naming the field: ``{"error": "...", "field": "..."}``. The server only reads: it
never writes a file (exports are downloads), so it cannot write outside any folder.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from importlib import resources
from pathlib import Path
from typing import Any

import orjson
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import FileResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from kubesched.errors import InputError
from kubesched.ui import dashboards, interop, views, whatif
from kubesched.ui.sources import CLUSTER, EXPERIMENT, SIMULATION, Workspace, open_cluster, open_source
from kubesched.ui.timeline import BIND, DELETE

DEFAULT_MAX_BODY = 8 << 20


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

    def __init__(self, ws: Workspace, max_body: int, on_swap: Callable[[], None] | None = None) -> None:
        self._ws = ws
        self.max_body = max_body
        self.busy = threading.Lock()  # one heavy job (what-if, open, import) at a time
        self.on_swap = on_swap  # called after each replacement (the CLI freezes the new heap)

    @property
    def ws(self) -> Workspace:
        return self._ws

    @ws.setter
    def ws(self, new: Workspace) -> None:
        self._ws = new
        if self.on_swap is not None:
            self.on_swap()


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
    ws: Workspace, *, max_body: int = DEFAULT_MAX_BODY, on_swap: Callable[[], None] | None = None
) -> Starlette:
    """The app over ``ws``. ``on_swap`` runs after the page replaces the workspace."""
    st = State(ws, max_body, on_swap)
    static = static_dir()

    async def index(_: Request) -> Response:
        return FileResponse(static / "index.html", headers={"Cache-Control": "no-cache"})

    async def meta(_: Request) -> Response:
        w = st.ws
        return _json(
            {
                "kind": w.kind,
                "title": w.title,
                "note": w.note,
                "steps": len(w.timeline) if w.timeline is not None else 0,
                "config_yaml": w.config_text,
                "profiles": list(w.timeline.scheduler.frameworks) if w.timeline is not None else [],
                "views": _views(w),
            }
        )

    async def cluster(request: Request) -> Response:
        return _json(views.cluster_view(st.ws, _int_param(request, "step")))

    async def decision(request: Request) -> Response:
        key = request.query_params.get("pod", "")
        return _json(views.decision_view(st.ws, key, _int_param(request, "attempt")))

    async def run_whatif(request: Request) -> Response:
        body = await _json_body(request, st)
        if not st.busy.acquire(blocking=False):
            return error("another what-if run is in progress; try again when it ends", "body", 429)
        try:
            from starlette.concurrency import run_in_threadpool

            return _json(await run_in_threadpool(whatif.compare, st.ws, body))
        finally:
            st.busy.release()

    async def sim_dashboard(_: Request) -> Response:
        return _json(dashboards.simulation_dashboard(st.ws))

    async def exp_dashboard(request: Request) -> Response:
        return _json(dashboards.experiment_dashboard(st.ws, request.query_params.get("baseline") or None))

    async def schedule_json(_: Request) -> Response:
        if st.ws.run is None:
            raise InputError("a schedule run exists for cluster sources only", path="source")
        return _json({"placements": st.ws.run.placements, "skipped": st.ws.run.skipped})

    async def export_snapshot(request: Request) -> Response:
        w = st.ws
        if w.timeline is None:
            raise InputError("nothing to export: this source has no cluster", path="source")
        step = _int_param(request, "step")
        with w.timeline.lock:
            total = len(w.timeline)
            step = total if step is None else step
            if not 0 <= step <= total:
                raise InputError(f"must be between 0 and {total}", path="step")
            snap = w.timeline.seek(step)
            on_nodes = {p.uid for pods in snap.pods_on[: snap.n] for p in pods.values()}
            gone = _deleted_by(w, step)
            pending = [
                p for p in w.pods.values() if p.uid not in on_nodes and p.key not in gone and _exists_at(w, p.key, step)
            ]
            items = interop.snapshot_objects(snap, w.objects, pending)
        return Response(
            interop.dump_list(items), media_type="application/yaml",
            headers={"Content-Disposition": f'attachment; filename="snapshot-step-{step}.yaml"'},
        )

    async def export_annotations(request: Request) -> Response:
        """Pods with kube-scheduler-simulator's result annotations (explained as they were decided)."""
        w = st.ws
        if w.timeline is None:
            raise InputError("nothing to export: this source has no pods", path="source")
        limit = _int_param(request, "limit") or 200
        items = []
        for key in list(w.attempts)[: max(1, min(limit, 5000))]:
            d = views.decision_view(w, key)
            pod = w.pods[key]
            raw = interop.as_object(pod, "v1", "Pod")
            md = raw.setdefault("metadata", {})
            md["annotations"] = {**(md.get("annotations") or {}), **interop.simulator_annotations(d["explain"], d["selected"])}
            if d["selected"]:
                raw.setdefault("spec", {})["nodeName"] = d["selected"]
            items.append(raw)
        return Response(
            interop.dump_list(items), media_type="application/yaml",
            headers={"Content-Disposition": 'attachment; filename="pods-with-simulator-annotations.yaml"'},
        )

    async def import_snapshot(request: Request) -> Response:
        raw = await _body(request, st)
        try:
            text = raw.decode()
        except UnicodeDecodeError:
            raise InputError("not UTF-8 text", path="body") from None
        objs = interop.parse_snapshot(text, "uploaded snapshot")
        if not st.busy.acquire(blocking=False):
            return error("another run is in progress; try again when it ends", "body", 429)
        try:
            from starlette.concurrency import run_in_threadpool

            w = st.ws
            new = await run_in_threadpool(
                lambda: open_cluster(
                    [], w.config_text if w.kind == CLUSTER else "", seed=w.seed, objects=objs, title="uploaded snapshot"
                )
            )
            st.ws = new
        finally:
            st.busy.release()
        return _json({"ok": True, "title": st.ws.title, "pods": len(objs.pods), "nodes": len(objs.nodes)})

    async def open_path(request: Request) -> Response:
        body = await _json_body(request, st)
        if not isinstance(body, dict) or not isinstance(body.get("path"), str) or not body["path"]:
            raise InputError("expected {\"path\": FILE or FOLDER}", path="path")
        if not st.busy.acquire(blocking=False):
            return error("another run is in progress; try again when it ends", "path", 429)
        try:
            from starlette.concurrency import run_in_threadpool

            try:
                st.ws = await run_in_threadpool(lambda: open_source(body["path"]))
            except InputError as e:
                return error(str(e), "path")  # the message names the file; the field is the request's
        finally:
            st.busy.release()
        return _json({"ok": True, "title": st.ws.title, "kind": st.ws.kind})

    routes = [
        Route("/", index),
        Route("/api/meta", meta),
        Route("/api/cluster", cluster),
        Route("/api/decision", decision),
        Route("/api/whatif", run_whatif, methods=["POST"]),
        Route("/api/dashboard/simulation", sim_dashboard),
        Route("/api/dashboard/experiment", exp_dashboard),
        Route("/api/schedule", schedule_json),
        Route("/api/export/snapshot", export_snapshot),
        Route("/api/export/simulator-annotations", export_annotations),
        Route("/api/import/snapshot", import_snapshot, methods=["POST"]),
        Route("/api/open", open_path, methods=["POST"]),
        Mount("/static", app=StaticFiles(directory=static), name="static"),
    ]

    async def on_input_error(_: Request, exc: Exception) -> Response:
        assert isinstance(exc, InputError)
        return error(str(exc), exc.path or exc.source)

    async def on_crash(_: Request, exc: Exception) -> Response:
        # a bug, not a user mistake: one line, and the server keeps serving
        return error(f"internal error: {type(exc).__name__}: {exc}", None, 500)

    app = Starlette(routes=routes, exception_handlers={InputError: on_input_error, Exception: on_crash})
    app.state.ui = st
    return app


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

"""`kubesched ui`'s web server: a Starlette app serving the built page and a JSON API.

Every request is bounded (body size, one what-if at a time) and every user mistake is an HTTP 400
with one line naming the field: ``{"error": "...", "field": "..."}``. The server only reads: it
never writes a file (exports are downloads, edits stay in memory), so it cannot write outside any folder.

Work that takes longer than a glance (scheduling, explaining, moving the timeline, reading a
folder, encoding a large answer) runs in Starlette's thread pool, never on the event loop, so a
small request (``/api/meta``, the page's files) is answered while a heavy one runs. Two kinds of
heavy request:

- *runs* (what-if, open, import, re-run) build new workspaces: one at a time, and another while one is in
  progress is refused with HTTP 409 (queuing a second what-if or a second open would answer for a
  state the user already left). A run stops at its next scheduling attempt when the client goes
  away or ``POST /api/cancel`` asks it to (answered HTTP 409 with ``"cancelled": true``);
- *reads* of the workspace (cluster at a step, decision, exports) share its one moving snapshot:
  they wait for each other on the timeline's lock and are all answered, in turn.

A handler reads ``st.ws`` once, so a read that began before an open finishes on the workspace it
started with. The routes are grouped by what they do: ``read_routes`` (meta, cluster, decision,
dashboards, schedule), ``run_routes`` (what-if, open, import, cancel), ``export_routes``
(downloads) and ``edit_routes`` (the working copy of a cluster file: edit, re-run, download);
``handling`` holds what they share. Edits change the server's memory only, never a file.

Who may ask is decided in front of the app (``kubesched.ui.guard``: Host, Origin, a per-run
token). What the requests may make the server do is decided here: configurations and folders
from the page are data, so they never import code (the plugins are those the command line loaded,
``registry``), and the Open box reads only inside ``roots``.
"""

from __future__ import annotations

from collections.abc import Callable
from importlib import resources
from pathlib import Path

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import FileResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from kubesched.errors import InputError
from kubesched.framework.registry import Registry
from kubesched.ui import edit_routes, export_routes, read_routes, run_routes
from kubesched.ui.guard import Access, Guard, Roots
from kubesched.ui.handling import DEFAULT_MAX_BODY, State, error
from kubesched.ui.sources import Workspace

DATA_REFUSAL = (
    "kubesched ui imports none named by a configuration it did not get on its command line (importing runs "
    "its code): load the plugin with --plugin-path, or name it in --config with --import-plugins"
)


def static_dir() -> Path:
    return Path(str(resources.files("kubesched.ui") / "static"))


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

    async def index(_: Request) -> Response:
        return FileResponse(static / "index.html", headers={"Cache-Control": "no-cache"})

    routes = [
        Route("/", index),
        *read_routes.routes(st),
        *run_routes.routes(st),
        *export_routes.routes(st),
        *edit_routes.routes(st),
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
    return Guard(app, access)

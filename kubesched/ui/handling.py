"""What every route of `kubesched ui`'s server shares: the server's State (the workspace shown, one
run at a time, cancellation), JSON answers and one-line errors, bounded request bodies and query
parameters."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from typing import Any

import orjson
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response

from kubesched.errors import InputError
from kubesched.framework.registry import Registry
from kubesched.ui.guard import Roots
from kubesched.ui.sources import Workspace

DEFAULT_MAX_BODY = 8 << 20
BUSY = 409  # a run (what-if, open, import, re-run) is already in progress, or was cancelled
POLL_S = 0.2  # how often a run's handler looks whether its client went away


class Cancelled(Exception):
    """Raised inside a run at its next attempt once the run was cancelled."""


def json_answer(data: Any, status: int = 200, headers: dict[str, str] | None = None) -> Response:
    return Response(
        orjson.dumps(data, option=orjson.OPT_SERIALIZE_NUMPY), status_code=status, media_type="application/json",
        headers=headers,
    )


def error(message: str, field: str | None = None, status: int = 400) -> Response:
    return json_answer({"error": message.replace("\n", " "), "field": field}, status)


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
        self.busy = threading.Lock()  # one run (what-if, open, import, re-run) at a time
        self.exporting = threading.Lock()  # one simulator-annotations export at a time
        self.cancel = threading.Event()  # set: the run in progress stops at its next attempt
        self.on_swap = on_swap  # called after each replacement (the CLI freezes the new heap)

    @property
    def ws(self) -> Workspace:
        return self._ws

    @ws.setter
    def ws(self, new: Workspace) -> None:
        old, self._ws = self._ws, new
        if old.live is not None and old is not new:
            old.live.close()  # a live cluster left for a file: stop watching it
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
            return error("another run (what-if, open, import or re-run) is in progress; try again when it ends", field, BUSY)
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
                return json_answer({"error": "the run was cancelled", "field": field, "cancelled": True}, BUSY)
        finally:
            self.cancel.clear()
            self.busy.release()


async def off_loop(job: Callable[[], Any], status: int = 200) -> Response:
    """``job()``'s answer as JSON, computed and encoded in the thread pool (off the event loop)."""
    return await run_in_threadpool(lambda: json_answer(job(), status))


async def read_body(request: Request, st: State) -> bytes:
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


async def read_json(request: Request, st: State) -> Any:
    raw = await read_body(request, st)
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError as e:
        raise InputError(f"not valid JSON: {e}", path="body") from None


def int_param(request: Request, name: str) -> int | None:
    v = request.query_params.get(name)
    if v is None or v == "":
        return None
    try:
        return int(v)
    except ValueError:
        raise InputError(f"expected a whole number, got {v!r}", path=name) from None

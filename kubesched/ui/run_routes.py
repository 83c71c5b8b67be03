"""The routes that run the scheduler and replace or compare what is shown: what-if, open, import
(one at a time, each cancellable), and cancel."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from kubesched.errors import InputError
from kubesched.ui import interop, whatif
from kubesched.ui.edits import WorkingCopy
from kubesched.ui.handling import State, error, json_answer, read_body, read_json
from kubesched.ui.sources import CLUSTER, open_cluster, open_source


def routes(st: State) -> list[Route]:
    async def run_whatif(request: Request) -> Response:
        body = await read_json(request, st)
        w = st.ws
        return await st.run(request, "body", lambda: json_answer(whatif.compare(w, body, st.registry, st.check)))

    async def cancel(_: Request) -> Response:
        running = st.busy.locked()
        if running:
            st.cancel.set()
        return json_answer({"cancelled": running})

    async def import_snapshot(request: Request) -> Response:
        raw = await read_body(request, st)
        try:
            text = raw.decode()
        except UnicodeDecodeError:
            raise InputError("not UTF-8 text", path="body") from None
        w = st.ws

        def job() -> Response:
            docs = interop.snapshot_documents(text, "uploaded snapshot")
            objs = interop.snapshot_objects_of(docs, "uploaded snapshot")
            st.ws = open_cluster(
                [], w.config_text if w.kind == CLUSTER else "", seed=w.seed, objects=objs, title="uploaded snapshot",
                registry=st.registry, check=st.check, working=WorkingCopy.of([("uploaded snapshot", docs)]),
            )
            return json_answer({"ok": True, "title": st.ws.title, "pods": len(objs.pods), "nodes": len(objs.nodes)})

        return await st.run(request, "body", job)

    async def open_path(request: Request) -> Response:
        body = await read_json(request, st)
        if not isinstance(body, dict) or not isinstance(body.get("path"), str) or not body["path"]:
            raise InputError("expected {\"path\": FILE or FOLDER}", path="path")

        path = str(st.roots.check(body["path"]))  # before anything looks at the path

        def job() -> Response:
            try:
                st.ws = open_source(path, registry=st.registry, check=st.check, may_read=st.roots.check)
            except InputError as e:
                return error(str(e), "path")  # the message names the file; the field is the request's
            return json_answer({"ok": True, "title": st.ws.title, "kind": st.ws.kind})

        return await st.run(request, "path", job)

    return [
        Route("/api/whatif", run_whatif, methods=["POST"]),
        Route("/api/import/snapshot", import_snapshot, methods=["POST"]),
        Route("/api/open", open_path, methods=["POST"]),
        Route("/api/cancel", cancel, methods=["POST"]),
    ]

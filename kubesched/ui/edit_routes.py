"""The routes that edit an opened cluster's working copy (``kubesched.ui.edits``) and re-run its
scheduling: list, read, create, replace and delete objects (YAML or JSON, one object a request,
bounded as every body is), re-run (a run: one at a time, cancellable) and download the copy.

A re-run schedules the working copy as `kubesched schedule -f` would schedule its download, with
the configuration and seed shown, replaces the workspace shown and answers what changed: each
pod placed, moved, left without a node, added or deleted, against the run shown before. Sources
without a working copy (a live cluster, a simulation or experiment folder) refuse every change.
"""

from __future__ import annotations

from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from kubesched.errors import InputError
from kubesched.ui import views
from kubesched.ui.edits import NAMESPACED, Ref, WorkingCopy
from kubesched.ui.handling import State, json_answer, off_loop, read_body
from kubesched.ui.sources import LIVE, Workspace, open_cluster

PLACED, MOVED, UNPLACED, ADDED, DELETED = "placed", "moved", "unplaced", "added", "deleted"


def routes(st: State) -> list[Route]:
    async def list_objects(_: Request) -> Response:
        wc = working(st.ws)
        return await off_loop(lambda: {"objects": [r.to_json() for r in wc.refs()], **_counts(wc)})

    async def get_object(request: Request) -> Response:
        wc, ref = working(st.ws), ref_param(request)
        return await off_loop(lambda: {"ref": ref.to_json(), "yaml": wc.yaml_of(ref)})

    async def create(request: Request) -> Response:
        wc, text = working(st.ws), await _text(request, st)
        return await off_loop(lambda: {"ref": wc.create(text).to_json(), **_counts(wc)}, 201)

    async def replace(request: Request) -> Response:
        wc, ref, text = working(st.ws), ref_param(request), await _text(request, st)
        return await off_loop(lambda: {"ref": wc.replace(ref, text).to_json(), **_counts(wc)})

    async def delete(request: Request) -> Response:
        wc, ref = working(st.ws), ref_param(request)

        def job() -> dict[str, Any]:
            wc.delete(ref)
            return _counts(wc)

        return await off_loop(job)

    async def rerun(request: Request) -> Response:
        w = st.ws
        wc = working(w)

        def job() -> Response:
            objs, changes = wc.take()
            new = open_cluster(
                list(w.files), w.config_text, seed=w.seed, objects=objs, title=w.title, registry=st.registry,
                check=st.check, working=wc,
            )
            new.plugin_paths = w.plugin_paths
            diff = placement_changes(w, new)
            wc.ran = changes
            st.ws = new
            return json_answer({**diff, **_counts(wc)})

        return await st.run(request, "rerun", job)

    async def download(_: Request) -> Response:
        wc = working(st.ws)
        text = await run_in_threadpool(wc.dump)
        return Response(
            text, media_type="application/yaml", headers={"Content-Disposition": 'attachment; filename="cluster-edited.yaml"'}
        )

    return [
        Route("/api/objects", list_objects),
        Route("/api/objects", create, methods=["POST"]),
        Route("/api/object", get_object),
        Route("/api/object", replace, methods=["PUT"]),
        Route("/api/object", delete, methods=["DELETE"]),
        Route("/api/rerun", rerun, methods=["POST"]),
        Route("/api/export/working-copy", download),
    ]


def working(w: Workspace) -> WorkingCopy:
    """The workspace's working copy; sources that have none refuse to be edited."""
    if w.working is not None:
        return w.working
    if w.kind == LIVE:
        raise InputError(
            "a live cluster is read-only: kubesched ui never changes it (export its snapshot, open that file and edit it)",
            path="source",
        )
    raise InputError(f"only a cluster file can be edited, not a {w.kind} folder (a run's output)", path="source")


def ref_param(request: Request) -> Ref:
    """The object the query names: ?kind=&namespace=&name= (namespace: "default" when not given)."""
    q = request.query_params
    kind, name = q.get("kind", ""), q.get("name", "")
    if not kind:
        raise InputError("expected the object's kind", path="kind")
    if not name:
        raise InputError("expected the object's name", path="name")
    return Ref(kind, (q.get("namespace") or "default") if kind in NAMESPACED else "", name)


async def _text(request: Request, st: State) -> str:
    raw = await read_body(request, st)
    try:
        return raw.decode()
    except UnicodeDecodeError:
        raise InputError("not UTF-8 text", path="body") from None


def _counts(wc: WorkingCopy) -> dict[str, int]:
    return {"changes": wc.changes, "ran": wc.ran}


def _outcomes(w: Workspace) -> dict[str, tuple[str, str | None]]:
    """Each pod's (state, final node or None) over the run, as the pods table gives them."""
    cols = views.pods_table(w, {})
    return {k: (s, n or None) for k, s, n in zip(cols["pod"], cols["state"], cols["node"], strict=True)}


def placement_changes(before: Workspace, after: Workspace) -> dict[str, Any]:
    """What the run of ``after`` placed differently from the run of ``before``, pod by pod: placed
    (no node before), moved (another node), unplaced (a node before, none now: unschedulable,
    preempted, ...), added or deleted (in one working copy only); and how many kept their node."""
    was, now = _outcomes(before), _outcomes(after)
    rows: list[dict[str, Any]] = []
    same = 0
    for key in [*now, *(k for k in was if k not in now)]:
        b, a = was.get(key), now.get(key)
        if b is None:
            change = ADDED
        elif a is None:
            change = DELETED
        elif b[1] == a[1]:
            same += 1
            continue
        else:
            change = PLACED if b[1] is None else UNPLACED if a[1] is None else MOVED
        rows.append(
            {
                "pod": key, "change": change,
                "before": {"state": b[0], "node": b[1]} if b else None,
                "after": {"state": a[0], "node": a[1]} if a else None,
            }
        )
    return {"diff": rows, "unchanged": same}

"""The download routes: the cluster at a step as Kubernetes objects, and the pods with
kube-scheduler-simulator's result annotations (one export at a time, bounded in pods and bytes)."""

from __future__ import annotations

from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from kubesched.errors import InputError
from kubesched.ui import decisions, interop
from kubesched.ui.handling import BUSY, State, error, int_param
from kubesched.ui.sources import SIMULATION, Workspace
from kubesched.ui.timeline import BIND, DELETE

EXPORT_PODS, MAX_EXPORT_PODS = 200, 5000  # pods with simulator annotations: asked by default, at most
EXPORT_BYTES, MIN_EXPORT_BYTES, MAX_EXPORT_BYTES = 16 << 20, 64 << 10, 256 << 20  # and the YAML's size bound


def routes(st: State) -> list[Route]:
    async def export_snapshot(request: Request) -> Response:
        w, step = st.ws, int_param(request, "step")
        if w.timeline is None:
            raise InputError("nothing to export: this source has no cluster", path="source")
        text, step = await run_in_threadpool(_snapshot_at, w, step)
        return Response(
            text, media_type="application/yaml",
            headers={"Content-Disposition": f'attachment; filename="snapshot-step-{step}.yaml"'},
        )

    async def export_annotations(request: Request) -> Response:
        """Pods with kube-scheduler-simulator's result annotations (explained as they were decided).
        One export at a time: another while one is computed is answered 409 at once."""
        w = st.ws
        if w.timeline is None:
            raise InputError("nothing to export: this source has no pods", path="source")
        limit = max(1, min(int_param(request, "limit") or EXPORT_PODS, MAX_EXPORT_PODS))
        max_bytes = int_param(request, "max_bytes") or EXPORT_BYTES
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

    return [
        Route("/api/export/snapshot", export_snapshot),
        Route("/api/export/simulator-annotations", export_annotations),
    ]


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
        d = decisions.explained(w, key)
        selected = d.selected
        ann = interop.simulator_annotations(d.columns, selected, d.points, d.recorded)
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

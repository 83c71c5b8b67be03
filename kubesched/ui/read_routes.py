"""The routes that read what the workspace shows: meta, the cluster at a step, a pod's decision,
the dashboards, the schedule and a live cluster's state. The heavy ones are computed and encoded in the thread pool and
take turns on the timeline's lock."""

from __future__ import annotations

import time

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from kubesched.errors import InputError
from kubesched.ui import dashboards, decisions, views
from kubesched.ui.handling import State, int_param, json_answer, off_loop
from kubesched.ui.sources import CLUSTER, EXPERIMENT, SIMULATION, Workspace


def routes(st: State) -> list[Route]:
    async def meta(_: Request) -> Response:
        w = st.ws
        return json_answer(
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
                # a cluster file's working copy: changes kept, and how many of them the run shown saw
                "edits": {"changes": w.working.changes, "ran": w.working.ran} if w.working is not None else None,
            }
        )

    async def cluster(request: Request) -> Response:
        w, step = st.ws, int_param(request, "step")
        return await off_loop(lambda: views.cluster_view(w, step))

    async def decision(request: Request) -> Response:
        w, key, attempt = st.ws, request.query_params.get("pod", ""), int_param(request, "attempt")
        tables = request.query_params.get("tables") == "1"  # the page's form: explain's nodes as columns
        return await run_in_threadpool(_decision, w, key, attempt, tables)

    async def sim_dashboard(_: Request) -> Response:
        w = st.ws
        return await off_loop(lambda: dashboards.simulation_dashboard(w))

    async def exp_dashboard(request: Request) -> Response:
        w, baseline = st.ws, request.query_params.get("baseline") or None
        return await off_loop(lambda: dashboards.experiment_dashboard(w, baseline))

    async def live(_: Request) -> Response:
        w = st.ws
        if w.live is None:
            raise InputError("not a live cluster (kubesched ui --kubeconfig)", path="source")
        return json_answer(w.live.status())

    async def schedule_json(_: Request) -> Response:
        run = st.ws.run
        if run is None:
            raise InputError("a schedule run exists for cluster sources only", path="source")
        return await off_loop(lambda: {"placements": run.placements, "skipped": run.skipped})

    return [
        Route("/api/meta", meta),
        Route("/api/cluster", cluster),
        Route("/api/decision", decision),
        Route("/api/dashboard/simulation", sim_dashboard),
        Route("/api/dashboard/experiment", exp_dashboard),
        Route("/api/schedule", schedule_json),
        Route("/api/live", live),
    ]


def _decision(w: Workspace, key: str, attempt: int | None, tables: bool) -> Response:
    t0 = time.perf_counter()
    d = (decisions.decision_tables if tables else decisions.decision_view)(w, key, attempt)
    t1 = time.perf_counter()
    out = json_answer(d)
    # where the time went, for the browser's Resource Timing (bench/ui_render.py reads it)
    out.headers["Server-Timing"] = (
        f"decision;dur={(t1 - t0) * 1000:.1f}, explain;dur={d['explain_ms']:.1f}, json;dur={(time.perf_counter() - t1) * 1000:.1f}"
    )
    return out


def _views(w: Workspace) -> list[str]:
    if w.kind == EXPERIMENT:
        return ["experiment"]
    out = ["cluster", "pods", "decision"] if w.timeline is not None else []
    if w.kind == CLUSTER or w.workload is not None:
        out.append("whatif")
    if w.kind == SIMULATION:
        out.append("simulation")
    if w.working is not None:
        out.append("edit")
    return out

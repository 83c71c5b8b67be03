"""What `kubesched ui` is opened on: a cluster dump (with a configuration), a simulation's output
folder or an experiment's output folder, read through the same files and contracts the CLI writes.

Every reader validates before anything is shown: a folder that is not a kubesched output, a
corrupt CSV or JSON file, or a configuration that does not validate raises ``InputError`` naming
the file and the field (the server answers HTTP 400 with that line).
"""

from __future__ import annotations

import argparse
import csv
import json
import math
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kubesched.api.objects import Node, Pod
from kubesched.app import VirtualClock, build_config, build_registry, example_path
from kubesched.cluster.memory import MemoryCluster
from kubesched.config import SchedulerConfig
from kubesched.errors import InputError
from kubesched.framework.registry import Registry
from kubesched.heap import paused_gc
from kubesched.load import ClusterObjects, objects_of, read_documents
from kubesched.scheduler import Scheduler
from kubesched.state.snapshot import Snapshot
from kubesched.ui.edits import WorkingCopy
from kubesched.ui.runs import Attempt, Removal, Run, record_run, removals
from kubesched.ui.timeline import BIND, CORDON, DELETE, NODE_ADD, NODE_REMOVE, UNCORDON, Step, Timeline

CLUSTER, SIMULATION, EXPERIMENT = "cluster", "simulation", "experiment"
LIVE = "live"  # a cluster followed through its API (kubesched.ui.live)
SIM_FILES = ("summary.json", "pods.csv")
EXPERIMENT_FILES = ("runs.csv", "aggregate.csv")


@dataclass
class Workspace:
    """One opened source. ``timeline`` is None for experiments (dashboards only); a live cluster's
    timeline has no steps (step 0 is the cluster now) and its pods and attempts follow the cluster."""

    kind: str
    title: str
    timeline: Timeline | None = None
    config: SchedulerConfig | None = None
    config_text: str = ""  # the configuration as given (YAML), for the what-if editor
    objects: ClusterObjects | None = None  # cluster sources: the objects as loaded
    pods: dict[str, Pod] = field(default_factory=dict)  # every pod by key, as given (unbound if pending)
    attempts: dict[str, list[Attempt]] = field(default_factory=dict)
    skipped: dict[str, dict[str, Any]] = field(default_factory=dict)  # pods `schedule` did not try, by key
    run: Run | None = None  # cluster sources: the schedule run
    folder: Path | None = None  # simulation and experiment sources
    pod_table: dict[str, list[Any]] = field(default_factory=dict)  # simulations: pods.csv
    summary: dict[str, Any] = field(default_factory=dict)
    note: str = ""  # what could not be rebuilt (shown in the page)
    workload: Any = None  # simulations: the rebuilt Workload (what-if replays it)
    inputs: dict[str, Any] = field(default_factory=dict)  # simulations: inputs.json
    # recent decisions, by (pod, attempt) and (pod, attempt, "tables") (the page's columnar form)
    decisions: OrderedDict[tuple[Any, ...], dict[str, Any]] = field(default_factory=OrderedDict)
    pod_columns: dict[str, list[Any]] | None = None  # the pods table's columns that no step changes (cached)
    # pods taken off their node for good (preempted, evicted by a node's removal), by key: how, when, where, by whom
    removed: dict[str, Removal] = field(default_factory=dict)
    gpu_milli: dict[str, int] = field(default_factory=dict)  # each pod's GPU ask by key, as the cluster view met them
    start_step: int | None = None  # the step the page opens at (None: the end of the run)
    start_note: str = ""  # why it opens there
    files: list[str] = field(default_factory=list)
    plugin_paths: list[str] = field(default_factory=list)
    seed: int | None = 0
    live: Any = None  # a live cluster: the kubesched.ui.live.ClusterWatch that fills the workspace
    working: WorkingCopy | None = None  # cluster sources: the objects as the page edited them (kubesched.ui.edits)


# ---- small readers --------------------------------------------------------------------------
def read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text())
    except OSError as e:
        raise InputError(f"cannot read: {e.strerror}", source=str(path)) from None
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise InputError(f"not valid JSON: {e}", source=str(path)) from None


def _number(text: str) -> Any:
    if text == "":
        return None
    try:
        v = float(text)
    except ValueError:
        return text
    return int(v) if v.is_integer() and "." not in text and "e" not in text.lower() else v


def read_csv(path: Path, required: tuple[str, ...], numeric: tuple[str, ...] = ()) -> dict[str, list[Any]]:
    """Columns of a CSV the CLI wrote; a missing column or a bad number names file, line, field."""
    try:
        with path.open(newline="") as f:
            rows = list(csv.reader(f))
    except OSError as e:
        raise InputError(f"cannot read: {e.strerror}", source=str(path)) from None
    except (csv.Error, UnicodeDecodeError) as e:
        raise InputError(f"not a valid CSV file: {e}", source=str(path)) from None
    if not rows:
        raise InputError("empty file, expected a header row", source=str(path))
    head = rows[0]
    for col in required:
        if col not in head:
            raise InputError(f"missing column {col!r} (found: {', '.join(head) or 'none'})", source=str(path))
    cols: dict[str, list[Any]] = {c: [] for c in head}
    num = set(numeric)
    for lineno, row in enumerate(rows[1:], start=2):
        if len(row) != len(head):
            raise InputError(f"{len(row)} fields, expected {len(head)}", source=f"{path}:{lineno}")
        for c, v in zip(head, row, strict=True):
            if c in num:
                x = _number(v)
                if isinstance(x, str) or (isinstance(x, float) and math.isinf(x)):
                    raise InputError(f"invalid number {v!r}", source=f"{path}:{lineno}", path=c)
                cols[c].append(x)
            else:
                cols[c].append(v)
    return cols


def detect(path: str) -> str:
    """simulation or experiment for an output folder; cluster for a file; else InputError."""
    p = Path(path)
    if not p.exists():
        raise InputError("no such file or folder", source=path)
    if p.is_file():
        return CLUSTER
    if all((p / f).is_file() for f in SIM_FILES):
        return SIMULATION
    if all((p / f).is_file() for f in EXPERIMENT_FILES):
        return EXPERIMENT
    raise InputError(
        "not a kubesched output folder: expected summary.json and pods.csv (kubesched simulate) "
        "or runs.csv and aggregate.csv (kubesched experiment fgd)",
        source=path,
    )


def open_source(
    path: str | None = None,
    *,
    files: list[str] | None = None,
    config: str | None = None,
    config_text: str | None = None,
    seed: int | None = 0,
    plugin_paths: list[str] | None = None,
    registry: Registry | None = None,
    check: Callable[[], None] | None = None,
    may_read: Callable[[str], object] | None = None,
    validate: str = "strict",
) -> Workspace:
    """Open what `kubesched ui` was given: PATH (auto-detected) or cluster files and a configuration.
    ``registry`` (default: the built-ins and ``plugin_paths``) resolves the configuration's plugins;
    ``check`` is called after every scheduling attempt and may raise to stop the work; ``may_read``
    raises InputError for a file a simulation's inputs.json names that may not be read."""
    kind = detect(path) if path else CLUSTER
    if kind == SIMULATION:
        return open_simulation(Path(path), plugin_paths=plugin_paths, registry=registry, may_read=may_read)  # type: ignore[arg-type]
    if kind == EXPERIMENT:
        return open_experiment(Path(path))  # type: ignore[arg-type]
    all_files = list(files or []) + ([path] if path else [])
    text = config_text
    if text is None and config:
        try:
            text = Path(config).read_text()
        except OSError as e:
            raise InputError(f"cannot read: {e.strerror}", source=config) from None
    return open_cluster(
        all_files or [example_path()], text, seed=seed, plugin_paths=plugin_paths, config_source=config,
        registry=registry, check=check, validate=validate,
    )


# ---- cluster dumps: schedule in memory ------------------------------------------------------
def parse_config_text(text: str | None, registry: Registry, source: str = "configuration") -> SchedulerConfig:
    """A KubeSchedulerConfiguration from YAML text (the file or the browser's editor)."""
    from kubesched.config.load import parse_config, parse_document

    if not text or not text.strip():
        return build_config(None, registry)
    cfg = parse_config(parse_document(text, source), source, registry.points_of, plugin_names=registry.names())
    Scheduler(cfg, Snapshot(), None, registry)  # plugin args that only fail when plugins are built
    return cfg


def config_yaml(cfg: SchedulerConfig) -> str:
    """The configuration in full (every default spelled out), for the what-if editor."""
    import yaml

    from kubesched.config import effective_config

    return yaml.safe_dump(effective_config(cfg), sort_keys=False)


def start_snapshot(objs: ClusterObjects) -> tuple[Snapshot, list[Pod]]:
    return Snapshot.of(objs), objs.pending()


def open_cluster(
    files: list[str],
    config_text: str | None,
    *,
    seed: int | None = 0,
    plugin_paths: list[str] | None = None,
    config_source: str | None = None,
    objects: ClusterObjects | None = None,
    title: str | None = None,
    registry: Registry | None = None,
    check: Callable[[], None] | None = None,
    validate: str = "strict",
    working: WorkingCopy | None = None,
) -> Workspace:
    """Load the cluster (``validate``: kubectl's --validate mode), validate the configuration, run
    `schedule` keeping every attempt
    (``check`` after each one: it may raise to stop the run). The workspace's working copy is
    ``working``, else, for files, one made of the files' objects (``objects`` given: none)."""
    from kubesched.app import Session

    registry = registry or build_registry(plugin_paths)
    cfg = parse_config_text(config_text, registry, config_source or "configuration")
    if objects is None:
        with paused_gc():
            docs = [(p, read_documents(p)) for p in files]
        objs = objects_of(docs, validate)
        working = working or WorkingCopy.of(docs, validate)
    else:
        objs = objects
    snap, pending = start_snapshot(objs)
    cluster = MemoryCluster()
    for pod in objs.pods:
        cluster.pods[pod.uid] = pod
    clock = VirtualClock()
    sched = Scheduler(cfg, snap, cluster, registry, seed=seed, clock=clock)
    if check is not None:
        sched.hooks.on_scheduled.append(lambda _res: check())
        sched.hooks.on_failed.append(lambda _res: check())
    run = record_run(Session(sched, cluster, objs, pending, cfg, registry, clock))
    timeline = Timeline(cfg, registry, lambda: start_snapshot(objs)[0], run.ops, seed=seed)
    timeline.adopt(snap, len(run.ops))  # the run's snapshot is the cluster after its last step
    text = config_text or ""
    if not text.strip():
        text = config_yaml(cfg)
    return Workspace(
        kind=CLUSTER,
        title=title or ", ".join(files),
        timeline=timeline,
        config=cfg,
        config_text=text,
        objects=objs,
        pods={p.key: p for p in objs.pods},
        attempts=run.attempts,
        removed=removals(run.attempts),
        skipped={e["pod"]: e for e in run.skipped},
        run=run,
        files=list(files),
        plugin_paths=list(plugin_paths or []),
        seed=seed,
        working=working,
    )


# ---- simulation folders ---------------------------------------------------------------------
POD_NUMERIC = ("arrival", "bind_time", "end_time", "queue_delay", "attempts", "gpu_milli")
EVENT_NUMERIC = ("seq", "time", "cpu_alloc_pct", "gpu_alloc_pct")
ATTEMPT_NUMERIC = ("attempt", "time", "duration_ms", "event_seq")


def open_simulation(
    folder: Path,
    *,
    plugin_paths: list[str] | None = None,
    registry: Registry | None = None,
    may_read: Callable[[str], object] | None = None,
) -> Workspace:
    """A simulation's output folder. Plugin files its inputs.json names are not run (a folder is
    data): plugins come from ``registry`` or ``plugin_paths``, which the command line gives."""
    summary = read_json(folder / "summary.json")
    if not isinstance(summary, dict) or "mode" not in summary or "pods" not in summary:
        raise InputError("not a simulation summary: expected the fields mode and pods", source=str(folder / "summary.json"))
    pods = read_csv(folder / "pods.csv", ("pod", "state", "node"), POD_NUMERIC)
    ws = Workspace(kind=SIMULATION, title=f"simulation {folder}", folder=folder, pod_table=pods, summary=summary)
    inputs_path = folder / "inputs.json"
    if not (folder / "events.csv").is_file() or not inputs_path.is_file():
        ws.note = (
            "this folder has no inputs.json or events.csv: the dashboards and pods table are shown, "
            "the cluster view and decisions need a folder written by this version of kubesched simulate"
        )
        return ws
    inputs = read_json(inputs_path)
    if not isinstance(inputs, dict):
        raise InputError("expected a JSON object", source=str(inputs_path))
    events = read_csv(folder / "events.csv", ("seq", "time", "event", "pod", "node"), EVENT_NUMERIC)
    registry = registry or build_registry(plugin_paths)
    cfg, cfg_text = _sim_config(folder, inputs, registry)
    try:
        if may_read is not None:
            for f in _input_paths(inputs):
                may_read(f)
        wl = _workload(inputs)
    except InputError as e:
        ws.note = f"the workload could not be rebuilt ({e}): the dashboards and pods table are shown"
        return ws
    by_key = {p.key: p for p in wl.pods}
    gpu_index = dict(zip(pods["pod"], pods.get("gpu_index", [""] * len(pods["pod"])), strict=True))
    steps, step_of_row = _sim_steps(events, by_key, gpu_index, wl)
    attempts = _sim_attempts(folder, step_of_row)
    objs = wl.objects

    def start() -> Snapshot:
        return Snapshot.of(objs, nodes=wl.nodes, pods=())

    nodes = {n.name: n for n in wl.nodes}
    for ev in wl.node_events:
        if isinstance(ev.node, Node):
            nodes[ev.node.name] = ev.node
    ws.timeline = Timeline(cfg, registry, start, steps, seed=inputs.get("seed"), nodes=nodes)
    ws.config = cfg
    ws.config_text = cfg_text or ""
    ws.pods = by_key
    ws.attempts = attempts
    ws.removed = _sim_removals(events)
    ws.start_step, ws.start_note = _busiest_step(events, step_of_row, summary)
    ws.seed = inputs.get("seed")
    ws.workload = wl
    ws.inputs = inputs
    return ws


def _sim_config(folder: Path, inputs: dict[str, Any], registry: Registry) -> tuple[SchedulerConfig, str | None]:
    """The simulation's configuration (its config.yaml, named in inputs.json) and its text. A
    configuration that needs plugin files names the files the run used: the UI never runs them."""
    cfg_name = inputs.get("config")
    cfg_text = None
    if cfg_name:
        cfg_file = folder / Path(str(cfg_name)).name  # always inside the folder
        try:
            cfg_text = cfg_file.read_text()
        except OSError as e:
            raise InputError(f"cannot read: {e.strerror}", source=str(cfg_file)) from None
    try:
        return parse_config_text(cfg_text, registry, str(folder / "config.yaml")), cfg_text
    except InputError as e:
        named = inputs.get("plugin_path")
        if named:  # say which files the run used: the UI never runs them on its own
            raise InputError(
                f"{e}; the simulation was run with plugin files {named!r}, which kubesched ui loads only when "
                "its command line names them (--plugin-path)",
                source=str(folder / "inputs.json"), path="plugin_path",
            ) from None
        raise


def _input_paths(inputs: dict[str, Any]) -> list[str]:
    """The files (or shipped names) inputs.json says the workload came from."""
    out = [v for k in ("trace", "nodes", "synthetic") if isinstance(v := inputs.get(k), str) and v]
    files = inputs.get("files")
    return out + [f for f in files if isinstance(f, str)] if isinstance(files, list) else out


def _workload(inputs: dict[str, Any]):  # noqa: ANN202 - Workload, imported lazily
    from kubesched.sim.cli import load_workload

    ns = argparse.Namespace(
        trace=inputs.get("trace"),
        nodes=inputs.get("nodes"),
        file=inputs.get("files") or None,
        synthetic=inputs.get("synthetic"),
        synth=inputs.get("synth") or [],
        skip_invalid=bool(inputs.get("skip_invalid")),
        limit=inputs.get("limit"),
        seed=inputs.get("seed") or 0,
    )
    return load_workload(ns)


def _sim_steps(
    events: dict[str, list[Any]], by_key: dict[str, Pod], gpu_index: dict[str, str], wl: Any
) -> tuple[list[Step], list[int]]:
    """Steps from events.csv, and for each event row the number of steps before it."""
    from kubesched.gpu.model import GPU_INDEX

    steps: list[Step] = []
    bound: dict[str, Pod] = {}
    step_of_row: list[int] = []
    node_of_event = {ev.node_name: ev.node for ev in wl.node_events if isinstance(ev.node, Node)}
    for kind, key, node in zip(events["event"], events["pod"], events["node"], strict=True):
        step_of_row.append(len(steps))
        if kind == "scheduled" and key in by_key and node:
            b = by_key[key].with_node(node)
            idx = gpu_index.get(key) or ""
            if idx:  # the GPUs the run gave it (a new dict: the pod's own may be shared)
                b.annotations = {**b.annotations, GPU_INDEX: idx}
            bound[key] = b
            steps.append(Step(BIND, key, b))
        elif kind in ("complete", "preempted", "evicted") and key in bound:
            steps.append(Step(DELETE, key, bound.pop(key)))
        elif kind == "node_add":
            steps.append(Step(NODE_ADD, node, node_of_event.get(node)))
        elif kind == "node_remove":
            steps.append(Step(NODE_REMOVE, node))
        elif kind == "node_cordon":
            steps.append(Step(CORDON, node))
        elif kind == "node_uncordon":
            steps.append(Step(UNCORDON, node))
    step_of_row.append(len(steps))
    return steps, step_of_row


def _sim_removals(events: dict[str, list[Any]]) -> dict[str, Removal]:
    """Pods preempted or evicted (their node removed) and not bound again, from events.csv."""
    out: dict[str, Removal] = {}
    messages = events.get("message") or [""] * len(events["pod"])
    for kind, key, node, t, msg in zip(events["event"], events["pod"], events["node"], events["time"], messages, strict=True):
        if kind in ("preempted", "evicted"):
            out[key] = Removal(kind, float(t or 0.0), node, message=msg)
        elif kind == "scheduled":
            out.pop(key, None)
    return out


def _busiest_step(events: dict[str, list[Any]], step_of_row: list[int], summary: dict[str, Any]) -> tuple[int | None, str]:
    """A time-mode run ends with every pod finished: it opens at the step where the most GPU (on a
    cluster with GPUs, else CPU) was allocated, the first if several, with the figure
    events.csv recorded (the summary's peak). Arrival mode (nothing completes) opens at the end."""
    if summary.get("mode") != "time":
        return None, ""
    gpu = bool((summary.get("gpu") or {}).get("capacity_milli")) and "gpu_alloc_pct" in events
    col = "gpu_alloc_pct" if gpu else "cpu_alloc_pct"
    values = events.get(col)
    if not values:
        return None, ""
    best, best_row = -1.0, -1
    for row, x in enumerate(values):
        if x is not None and x > best:
            best, best_row = x, row
    if best_row < 0:
        return None, ""
    what = "GPU" if gpu else "CPU"
    return step_of_row[best_row + 1], f"the busiest step: the most {what} allocated over the run ({best:.2f} %)"


def _sim_attempts(folder: Path, step_of_row: list[int]) -> dict[str, list[Attempt]]:
    path = folder / "attempts.csv"
    out: dict[str, list[Attempt]] = {}
    if not path.is_file():
        return out
    t = read_csv(path, ("pod", "attempt", "time", "outcome", "event_seq"), ATTEMPT_NUMERIC)
    last = len(step_of_row) - 1
    for i, key in enumerate(t["pod"]):
        seq = int(t["event_seq"][i] or 0)
        out.setdefault(key, []).append(
            Attempt(
                attempt=int(t["attempt"][i]),
                step=step_of_row[min(max(seq, 0), last)],
                time=float(t["time"][i] or 0.0),
                outcome=t["outcome"][i],
                node=t["node"][i] or None if "node" in t else None,
                message=(t["message"][i] or None) if "message" in t else None,
                nominated_node=(t["nominated_node"][i] or None) if "nominated_node" in t else None,
                duration_ms=float(t["duration_ms"][i] or 0.0) if "duration_ms" in t else 0.0,
            )
        )
    return out


# ---- experiment folders ---------------------------------------------------------------------
RUN_NUMERIC = ("seed", "pods", "failed", "nodes", "gpus", "unallocated_100", "unallocated_130", "frag_amount_100", "frag_ratio_100")
AGG_NUMERIC = ("arrived_pct", "n", "mean", "sd", "median", "q25", "q75", "low", "high")


def open_experiment(folder: Path) -> Workspace:
    runs = read_csv(folder / "runs.csv", ("trace", "policy", "seed", "unallocated_100", "unallocated_130"), RUN_NUMERIC)
    agg = read_csv(folder / "aggregate.csv", ("trace", "policy", "metric", "arrived_pct", "mean", "sd"), AGG_NUMERIC)
    return Workspace(kind=EXPERIMENT, title=f"experiment {folder}", folder=folder, summary={"runs": runs, "aggregate": agg})

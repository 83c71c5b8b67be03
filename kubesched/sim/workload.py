"""What a simulation replays: nodes, pods with arrival times and run lengths, node events."""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from typing import Literal

from kubesched.api.objects import Node, Pod
from kubesched.dra.store import DraObjects
from kubesched.errors import InputError
from kubesched.gpu.frag import TypicalPods
from kubesched.load import (
    STRICT,
    ClusterObjects,
    admit_storage,
    check_node_totals,
    check_unique,
    parse_objects,
    read_documents,
    resolve_priorities,
)
from kubesched.sim.gpu import pod_gpu_milli

# Manifest annotations (seconds, decimal numbers) that place objects on the simulated timeline.
ARRIVAL_ANNOTATION = "kubesched.io/arrival-time"  # Pod: when it is created (default 0)
DURATION_ANNOTATION = "kubesched.io/duration"  # Pod: how long it runs once bound (default: forever)
NODE_ADD_ANNOTATION = "kubesched.io/add-time"  # Node: joins the cluster then (default: at the start)
NODE_REMOVE_ANNOTATION = "kubesched.io/remove-time"  # Node: leaves (its pods are terminated)
NODE_CORDON_ANNOTATION = "kubesched.io/cordon-time"  # Node: marked unschedulable
NODE_UNCORDON_ANNOTATION = "kubesched.io/uncordon-time"  # Node: schedulable again

NodeAction = Literal["add", "remove", "cordon", "uncordon"]
NODE_ACTIONS: tuple[str, ...] = ("add", "remove", "cordon", "uncordon")


@dataclass(frozen=True)
class NodeEvent:
    """A change to the cluster's nodes at ``time``; ``add`` carries the Node, others name it."""

    time: float
    action: NodeAction
    node: Node | str

    @property
    def node_name(self) -> str:
        return self.node if isinstance(self.node, str) else self.node.name


@dataclass
class Workload:
    """Nodes present at the start, pods in arrival order, and node events.

    ``arrival[i]`` and ``duration[i]`` (seconds; None = runs until the end) belong to ``pods[i]``.
    A pod with ``spec.nodeName`` set is bound at its arrival without a scheduling cycle.
    """

    nodes: list[Node]
    pods: list[Pod]
    arrival: list[float]
    duration: list[float | None]
    node_events: list[NodeEvent] = field(default_factory=list)
    objects: ClusterObjects = field(default_factory=ClusterObjects)  # namespaces, PDBs, selectors, storage
    skipped: list[str] = field(default_factory=list)  # input rows left out on request (with why)
    source: str = ""
    #: the target workload of fragmentation (default: the workload's own most popular asks)
    typical: TypicalPods | None = None

    def __post_init__(self) -> None:
        if not (len(self.pods) == len(self.arrival) == len(self.duration)):
            raise ValueError("pods, arrival and duration must have the same length")

    def head(self, n: int) -> Workload:
        """The first ``n`` pods by arrival (for quick looks and tests)."""
        order = sorted(range(len(self.pods)), key=lambda i: self.arrival[i])[:n]
        return Workload(
            self.nodes,
            [self.pods[i] for i in order],
            [self.arrival[i] for i in order],
            [self.duration[i] for i in order],
            self.node_events,
            self.objects,
            self.skipped,
            self.source,
            self.typical,
        )


def with_dra_gpus(wl: Workload) -> Workload:
    """The workload with its GPUs written the DRA way (``kubesched.gpu.dra_workload``): nodes
    (those added later too) with their GPUs in ResourceSlices, pods asking through
    ResourceClaimTemplates; fragmentation is measured against the typical pods of the
    annotations, as the annotation run measures it. ValueError on a malformed GPU annotation."""
    from kubesched.gpu.dra_workload import to_dra
    from kubesched.gpu.frag import typical_pods_of
    from kubesched.gpu.model import pod_gpu_ask

    later = [ev.node for ev in wl.node_events if ev.action == "add" and isinstance(ev.node, Node)]
    work = to_dra([*wl.nodes, *later], wl.pods)
    converted = dict(zip((n.name for n in [*wl.nodes, *later]), work.nodes, strict=True))
    events = [NodeEvent(ev.time, ev.action, converted[ev.node_name]) if ev.action == "add" else ev for ev in wl.node_events]
    objects = dataclasses.replace(wl.objects, dra=DraObjects())
    objects.dra.extend(wl.objects.dra)
    objects.dra.extend(work.objects)
    typical = wl.typical
    if typical is None and any(pod_gpu_ask(p) is not None for p in wl.pods):
        typical = typical_pods_of(wl.pods)
    return Workload(
        work.nodes[: len(wl.nodes)], work.pods, list(wl.arrival), list(wl.duration), events, objects, wl.skipped,
        f"{wl.source} (GPUs as DRA devices)", typical,
    )


def parse_seconds(value: str, what: str, *, source: str | None = None, positive: bool = False) -> float:
    """A non-negative (or positive) finite number of seconds from an annotation value."""
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise InputError(f'invalid value "{value}": expected seconds (a number)', source=source, path=what) from None
    if not math.isfinite(v) or v < 0 or (positive and v == 0):
        bound = "greater than 0" if positive else "0 or more"
        raise InputError(f'invalid value "{value}": must be {bound} seconds', source=source, path=what)
    return v


def _annotation_path(kind: str, name: str, key: str) -> str:
    return f"{kind} {name}: metadata.annotations.{key}"


def from_manifests(paths: list[str], validate: str = STRICT) -> Workload:
    """Nodes and pods from Kubernetes manifests, timed by the ``kubesched.io/*`` annotations
    (``validate``: kubectl's ``--validate``, see ``kubesched.load``)."""
    objs = ClusterObjects()
    pod_files: list[str] = []
    node_files: list[str] = []
    for p in paths:
        part = parse_objects(p, read_documents(p), validate)
        pod_files += [p] * len(part.pods)
        node_files += [p] * len(part.nodes)
        objs.extend(part)
    check_unique(objs)
    resolve_priorities(objs)
    admit_storage(objs)
    check_node_totals(objs)
    nodes: list[Node] = []
    events: list[NodeEvent] = []
    for node, src in zip(objs.nodes, node_files, strict=True):
        ann = node.raw.get("metadata", {}).get("annotations") or {}
        times: dict[str, float] = {}
        for action, key in (
            ("add", NODE_ADD_ANNOTATION),
            ("remove", NODE_REMOVE_ANNOTATION),
            ("cordon", NODE_CORDON_ANNOTATION),
            ("uncordon", NODE_UNCORDON_ANNOTATION),
        ):
            if key in ann:
                times[action] = parse_seconds(str(ann[key]), _annotation_path("node", node.name, key), source=src)
        if "add" in times:
            events.append(NodeEvent(times.pop("add"), "add", node))
        else:
            nodes.append(node)
        for action, t in times.items():
            events.append(NodeEvent(t, action, node.name))  # type: ignore[arg-type]
    arrival: list[float] = []
    duration: list[float | None] = []
    pods: list[Pod] = []
    for pod, src in zip(objs.pods, pod_files, strict=True):
        if pod.terminal:
            continue
        a = pod.annotations.get(ARRIVAL_ANNOTATION)
        d = pod.annotations.get(DURATION_ANNOTATION)
        try:
            pod_gpu_milli(pod)  # a malformed GPU ask is an error here, naming the file
        except InputError as e:
            raise InputError(e.reason, source=src, path=e.path) from None
        pods.append(pod)
        arrival.append(parse_seconds(a, _annotation_path("pod", pod.key, ARRIVAL_ANNOTATION), source=src) if a else 0.0)
        duration.append(
            parse_seconds(d, _annotation_path("pod", pod.key, DURATION_ANNOTATION), source=src, positive=True)
            if d
            else None
        )
    return Workload(nodes, pods, arrival, duration, events, objs, [], ", ".join(paths))

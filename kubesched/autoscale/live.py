"""``kubesched autoscale``: the autoscaler's loop against a live cluster.

Every ``scanInterval`` it lists Nodes and Pods through the Kubernetes API (the official client),
builds the scheduler's snapshot from them, reads the pods the scheduler marked unschedulable
(condition PodScheduled=False, reason Unschedulable, as ``kubesched run`` and kube-scheduler write
it) and runs the same ``ClusterAutoscaler`` / ``KarpenterLike`` loop as the simulator, with the
real filters of the scheduling configuration. Nodes come from a ``NodeProvider``; the one built
in, ``KwokProvider``, creates and deletes virtual Node objects in the KWOK style.

A cloud provider plugs in as a class with the three methods of ``kubesched.autoscale.interface.
NodeProvider`` (``create(group, node)``, ``delete(name)``, ``cancel(name)``), named with
``--provider module:Class``; it is built as ``Class(api_client, config)``.

What an operator sees, as from Cluster Autoscaler: the status ConfigMap
(``kubesched.autoscale.status``), events on pods, nodes and that ConfigMap
(``kubesched.autoscale.events``; in Karpenter-like mode Karpenter's own too,
``kubesched.autoscale.karpevents``) and CA's Prometheus metrics on ``--address``
(``kubesched.autoscale.metrics``), all from the ``LoopRecord`` each iteration fills.
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib
import logging
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from kubesched.api.objects import Node, Pod
from kubesched.autoscale.claims import node_marks
from kubesched.autoscale.config import GROUP_LABEL, AutoscalerConfig, NodeGroup
from kubesched.autoscale.core import ClusterAutoscaler
from kubesched.autoscale.eligibility import SCALE_DOWN_DISABLED, TO_BE_DELETED_TAINT
from kubesched.autoscale.events import EventRecorder, LoopEvents
from kubesched.autoscale.interface import LoopRecord
from kubesched.autoscale.karpenter import KarpenterLike
from kubesched.autoscale.karpevents import KarpenterEvents
from kubesched.autoscale.karprecord import KarpenterRecord
from kubesched.autoscale.metrics import AutoscalerMetrics
from kubesched.autoscale.status import StatusBuilder, StatusConfigMap
from kubesched.errors import InputError, one_line
from kubesched.framework.runtime import Framework
from kubesched.load import ClusterObjects
from kubesched.state.snapshot import Snapshot

log = logging.getLogger("kubesched.autoscale")

#: what marks a virtual node (label) and keeps pods off it unless they tolerate it (taint)
KWOK_LABEL = "type"
KWOK_LABEL_VALUE = "kwok"
KWOK_TAINT = {"key": "kwok.x-k8s.io/node", "value": "fake", "effect": "NoSchedule"}
MANAGED_LABEL = "autoscaling.kubesched.io/managed"


def kwok_template(group: NodeGroup) -> NodeGroup:
    """The group as KWOK nodes look: its label, ``type: kwok``, and the kwok taint."""
    t = group.template
    labels = {**t.labels, GROUP_LABEL: group.name, KWOK_LABEL: KWOK_LABEL_VALUE, MANAGED_LABEL: "true"}
    raw = dict(t.raw)
    raw["metadata"] = {**raw.get("metadata", {}), "labels": labels}
    raw["spec"] = {**raw.get("spec", {}), "taints": [*raw.get("spec", {}).get("taints", []), KWOK_TAINT]}
    node = Node.parse(raw)
    return dataclasses.replace(group, template=node)  # the group's other settings kept


class KwokProvider:
    """Creates Node objects (ready at once, or after the configured provisioning delay) and
    deletes them, evicting their pods first through the Eviction API."""

    def __init__(self, api: Any, config: AutoscalerConfig, rng: np.random.Generator | None = None) -> None:
        from kubernetes import client

        self.api = api
        self.core = client.CoreV1Api(api)
        self.cfg = config
        self.rng = rng or np.random.default_rng()
        self.due: dict[str, tuple[float, Node]] = {}  # name -> (when to create, node)
        self.declined: set[str] = set()  # nodes not deleted since the last flush: protected meanwhile

    def create(self, group: NodeGroup, node: Node) -> None:
        self.due[node.name] = (time.monotonic() + self.cfg.provisioning_delay.sample(self.rng), node)
        self.flush()

    def flush(self) -> None:
        """Create the nodes whose provisioning delay is over (called every iteration)."""
        self.declined.clear()
        now = time.monotonic()
        for name, (t, node) in list(self.due.items()):
            if t <= now:
                del self.due[name]
                self.core.create_node(node_body(node))
                log.info("node %s created", name)

    def delete(self, name: str) -> None:
        """As CA's actuator: read the node afresh and leave it if an operator protected it since
        the listing, else taint it ``ToBeDeletedByClusterAutoscaler`` (no new pods; the next
        iterations leave it to this deletion), evict its pods, delete it."""
        from kubesched.live.client import MERGE_PATCH

        node = self.api.sanitize_for_serialization(self.core.read_node(name))
        annotations = (node.get("metadata") or {}).get("annotations") or {}
        if annotations.get(SCALE_DOWN_DISABLED) == "true":
            log.info("node %s not deleted: annotated %s", name, SCALE_DOWN_DISABLED)
            self.declined.add(name)
            return
        taints = [t for t in (node.get("spec") or {}).get("taints") or [] if t.get("key") != TO_BE_DELETED_TAINT]
        taints.append({"key": TO_BE_DELETED_TAINT, "value": str(int(time.time())), "effect": "NoSchedule"})
        self.core.patch_node(name, {"spec": {"taints": taints}}, _content_type=MERGE_PATCH)
        pods = self.core.list_pod_for_all_namespaces(field_selector=f"spec.nodeName={name}").items
        for p in pods:
            body = {"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": p.metadata.name, "namespace": p.metadata.namespace}}
            self.core.create_namespaced_pod_eviction(p.metadata.name, p.metadata.namespace, body)
        self.core.delete_node(name)
        log.info("node %s deleted (%d pods evicted)", name, len(pods))

    def cancel(self, name: str) -> None:
        self.due.pop(name, None)


def node_body(node: Node) -> dict[str, Any]:
    alloc = {k: str(v) if k != "cpu" else f"{v}m" for k, v in node.allocatable.items()}
    if "memory" in alloc:
        alloc["memory"] = str(node.allocatable["memory"])
    spec = {"taints": [{"key": t.key, "value": t.value, "effect": t.effect} for t in node.taints]}
    labels, annotations = node_marks(node)  # a NodePool's node: Karpenter's labels and pool hash
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": node.name, "labels": {**node.labels, **labels}, "annotations": {**annotations, "kwok.x-k8s.io/node": "fake"}},
        "spec": spec,
        "status": {
            "allocatable": alloc,
            "capacity": dict(alloc),
            "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady"}],
        },
    }


def unschedulable(pod: dict[str, Any]) -> bool:
    for c in (pod.get("status") or {}).get("conditions") or []:
        if c.get("type") == "PodScheduled" and c.get("status") == "False" and c.get("reason") == "Unschedulable":
            return True
    return False


class LiveView:
    """ClusterView from one listing of Nodes and Pods."""

    def __init__(self, nodes: list[dict], pods: list[dict], frameworks: dict[str, Framework]) -> None:
        self.frameworks = frameworks
        self._pending: list[Pod] = []
        self._created: dict[str, float] = {}
        assigned = []
        for d in pods:
            phase = (d.get("status") or {}).get("phase")
            if phase in ("Succeeded", "Failed") or (d.get("metadata") or {}).get("deletionTimestamp"):
                continue
            pod = Pod.parse(d)
            if pod.node_name:
                assigned.append(pod)
            elif unschedulable(d):
                self._pending.append(pod)
                self._created[pod.uid] = pod.creation_time or time.time()
        self.snapshot = Snapshot.of(ClusterObjects(nodes=[Node.parse(n) for n in nodes], pods=assigned))
        # one listing of nodes and pods: no storage or DRA objects, so those plugins take no part
        self.snapshot.storage.tracked = self.snapshot.dra.tracked = False

    def now(self) -> float:
        return time.time()

    def unschedulable(self) -> list[Pod]:
        return self._pending

    def created(self, pod: Pod) -> float:
        return self._created.get(pod.uid, time.time())

    def framework_for(self, pod: Pod) -> Framework | None:
        return self.frameworks.get(pod.scheduler_name)


class Controller:
    """The loop against the cluster, and what an operator watches: the status ConfigMap
    (``status``: None when ``--write-status-configmap=false``), events and metrics."""

    def __init__(
        self,
        api: Any,
        config: AutoscalerConfig,
        frameworks: dict[str, Framework],
        provider: Any,
        seed: int = 0,
        status: tuple[str, str] | None = ("kube-system", "cluster-autoscaler-status"),
        metrics: AutoscalerMetrics | None = None,
    ) -> None:
        from kubernetes import client

        self.api = api
        self.core = client.CoreV1Api(api)
        self.cfg = config
        self.frameworks = frameworks
        self.provider = provider
        cls = KarpenterLike if config.mode == "karpenter" else ClusterAutoscaler
        self.loop = cls(config, provider, np.random.default_rng(seed))
        self.stop_event = threading.Event()
        self.iterations = 0
        self.builder = StatusBuilder()
        self.status = StatusConfigMap(self.core, *status) if status is not None else None
        events = KarpenterEvents if config.mode == "karpenter" else LoopEvents
        self.events = events(EventRecorder(self.core), lambda: self.status.ref if self.status is not None else None)
        self.metrics = metrics or AutoscalerMetrics()
        self.last_status: dict[str, Any] | None = None
        self.unremovable: dict[str, str] = {}  # node -> reason, as last logged

    def once(self) -> None:
        started, t0 = time.time(), time.perf_counter()
        flush = getattr(self.provider, "flush", None)
        if flush is not None:
            flush()
        nodes = self.api.sanitize_for_serialization(self.core.list_node().items)
        pods = self.api.sanitize_for_serialization(self.core.list_pod_for_all_namespaces().items)
        view = LiveView(nodes, pods, self.frameworks)
        record = self.loop.record = KarpenterRecord() if self.cfg.mode == "karpenter" else LoopRecord()
        self.loop.run_once(view)
        declined = getattr(self.provider, "declined", None)  # a provider that may leave a node after all
        if declined:
            record.scale_downs = [sd for sd in record.scale_downs if sd.node not in declined]
        self.iterations += 1
        status = self.last_status = self.builder.build(self.loop, view.snapshot, record, started)
        if self.status is not None:
            self.status.write(status, started)
        self.events.emit(self.loop, view, record, started)
        for name, reason in record.unremovable.items():
            if self.unremovable.get(name) != reason:
                log.info("node %s is not removable: %s", name, reason)
        self.unremovable = dict(record.unremovable)
        self.metrics.observe(self.loop, status, record, len(view.unschedulable()), started, time.perf_counter() - t0)

    def serve(self) -> None:
        period = 1.0 if self.cfg.mode == "karpenter" else self.cfg.scan_interval
        period = min(period, self.cfg.scan_interval)
        while not self.stop_event.is_set():
            try:
                self.once()
            except Exception as e:  # noqa: BLE001 - a failed iteration is logged, counted and retried
                log.warning("autoscaler iteration failed: %s", e)
                self.metrics.error("apiCallError" if type(e).__module__.startswith(("kubernetes", "urllib3")) else "internalError")
            self.stop_event.wait(period)

    def stop(self) -> None:
        self.stop_event.set()


def named_shapes(doc: Any) -> list[str]:
    """The node shapes the options name (``nodeGroups[].shape``), as far as the document is well
    formed (``load`` reports it when it is not)."""
    groups = doc.get("nodeGroups") if isinstance(doc, dict) else None
    if not isinstance(groups, list):
        return []
    return [g["shape"] for g in groups if isinstance(g, dict) and isinstance(g.get("shape"), str)]


def check_options(path: str) -> Any:
    """The options file checked whole before anything needs the cluster or the Kubernetes
    client: one line naming the file and the field (exit 2) for a bad one. Shape names are only
    resolved later, against the cluster's nodes (``resolve_options``). Returns the document."""
    from kubesched.autoscale.configfile import load, template_node
    from kubesched.documents import read_documents

    docs = read_documents(path)
    if len(docs) > 1:
        raise InputError(f"expected one document, found {len(docs)}", source=path)
    doc = docs[0] if docs else None
    stand_in = template_node("shape", {"cpu": "1", "memory": "1Gi"})
    load(doc, path, dict.fromkeys(named_shapes(doc), stand_in))
    return doc


def resolve_options(doc: Any, path: str, nodes: list[dict[str, Any]]) -> AutoscalerConfig:
    """The options with ``shape:`` groups resolved as the simulator resolves them: the shapes of
    the cluster's own nodes (``kubesched.autoscale.shapes``, named ``cpu-8c-32g`` or
    ``g2-8gpu-96c-384g``); an unknown shape is the file's error, naming the shapes there are."""
    from kubesched.autoscale.configfile import load
    from kubesched.autoscale.shapes import shapes_of

    shapes = {name: t for name, (t, _) in shapes_of([Node.parse(n) for n in nodes]).items()} if named_shapes(doc) else {}
    return load(doc, path, shapes)


def build_controller(args: argparse.Namespace, metrics: AutoscalerMetrics | None = None) -> Controller:
    from kubesched.app import build_registry
    from kubesched.live.cli import run_config
    from kubesched.scheduler import Scheduler

    doc = check_options(args.autoscaler)  # before the client is needed: a bad file is a bad file
    from kubesched.live.settings import parse_bool  # (kubesched.live.settings needs the client)

    write_status = parse_bool(args.write_status_configmap, "--write-status-configmap")
    registry = build_registry(args.plugin_path)
    sched_cfg = run_config(args.config, registry)  # the same profiles as kubesched run
    from kubesched.live.client import k8s_client, load_configuration  # without the client: one line, exit 2

    api = k8s_client.ApiClient(load_configuration(args.kubeconfig, args.context))
    nodes: list[dict[str, Any]] = []
    if named_shapes(doc):
        try:
            nodes = api.sanitize_for_serialization(k8s_client.CoreV1Api(api).list_node().items)
        except Exception as e:  # noqa: BLE001 - the API's or the connection's: one line, not a traceback
            raise InputError(f"cannot list the nodes whose shapes nodeGroups[].shape names: {one_line(str(e))}", source=args.autoscaler) from None
    cfg = resolve_options(doc, args.autoscaler, nodes)
    if args.provider == "kwok":
        cfg.node_groups = [kwok_template(g) for g in cfg.node_groups]
        provider: Any = KwokProvider(api, cfg, np.random.default_rng(args.seed))
    else:
        mod, _, cls = args.provider.partition(":")
        try:
            provider = getattr(importlib.import_module(mod), cls)(api, cfg)
        except (ImportError, AttributeError, ValueError) as e:
            raise InputError(f"cannot load node provider: {e}", source="--provider") from None
    sched = Scheduler(sched_cfg, Snapshot(), None, registry, seed=args.seed)
    status = (args.namespace, args.status_config_map_name) if write_status else None
    return Controller(api, cfg, sched.frameworks, provider, args.seed, status, metrics)


def metrics_server(args: argparse.Namespace, metrics: AutoscalerMetrics, ready: Callable[[], bool]) -> Any:
    """The HTTP server of ``kubesched run`` (probes, ``/metrics``, TLS and tokens) serving
    ``metrics`` on ``--address``, not started; None for ``off``. Its flags are checked here."""
    from kubesched.server import security
    from kubesched.server.httpd import HTTPServer, parse_listen

    if args.address == "off":
        return None
    try:
        listen = parse_listen(args.address)
    except InputError as e:
        raise InputError(e.reason, path="--address") from None
    tls, access = security.from_args(args)
    try:
        return HTTPServer(listen, metrics=metrics, ready=ready, tls=tls, access=access)
    except InputError as e:  # cannot listen there
        raise InputError(e.reason, path="--address") from None


def cmd_autoscale(args: argparse.Namespace) -> int:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s", stream=sys.stderr)
    if args.once:
        build_controller(args).once()
        return 0
    metrics = AutoscalerMetrics()
    ctl: Controller | None = None  # ready after its first iteration
    http = metrics_server(args, metrics, lambda: ctl is not None and ctl.iterations > 0)  # flags checked before the cluster is read
    try:
        ctl = build_controller(args, metrics)
        if http is not None:
            http.start()
            log.info("serving /metrics on %s", http.url)
        ctl.serve()
    except KeyboardInterrupt:
        pass
    finally:
        if http is not None:
            http.shutdown()
    return 0


"""Builders for the Coscheduling tests: PodGroups, labelled pods, a Scheduler on a virtual clock."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kubesched.app import VirtualClock
from kubesched.cluster.memory import MemoryCluster
from kubesched.config.load import parse_config
from kubesched.load import parse_objects, resolve_priorities
from kubesched.plugins import in_tree_registry
from kubesched.plugins.coscheduling import POD_GROUP_LABEL
from kubesched.scheduler import Scheduler, ScheduleResult
from kubesched.state.snapshot import Snapshot
from kubesched.testing import make_node, make_pod


def pod_group(
    name: str,
    *,
    ns: str = "ns",
    min_member: int | None = None,
    min_resources: dict[str, str] | None = None,
    timeout: int | None = None,
    created: str | None = None,
) -> dict:
    spec: dict[str, Any] = {}
    if min_member is not None:
        spec["minMember"] = min_member
    if min_resources is not None:
        spec["minResources"] = min_resources
    if timeout is not None:
        spec["scheduleTimeoutSeconds"] = timeout
    md: dict[str, Any] = {"name": name, "namespace": ns}
    if created:
        md["creationTimestamp"] = created
    return {"apiVersion": "scheduling.x-k8s.io/v1alpha1", "kind": "PodGroup", "metadata": md, "spec": spec}


def member(
    name: str,
    group: str | None = None,
    *,
    ns: str = "ns",
    node: str | None = None,
    cpu: str | None = None,
    priority: int | None = None,
    label: str = POD_GROUP_LABEL,
) -> dict:
    return make_pod(
        name,
        namespace=ns,
        uid=name,
        labels={label: group} if group else {},
        node=node,
        requests={"cpu": cpu} if cpu else None,
        priority=priority,
    )


def node(name: str, cpu: str = "4", pods: int = 110) -> dict:
    return make_node(name, cpu=cpu, memory="16Gi", pods=pods)


def gang_config(*, permit_wait: int = 10, backoff: int = 0, post_filter: bool = True) -> dict:
    """Coscheduling at all its points (multiPoint) and as queue sort; PostFilter optional."""
    plugins: dict[str, Any] = {
        "multiPoint": {"enabled": [{"name": "Coscheduling"}]},
        "queueSort": {"enabled": [{"name": "Coscheduling"}], "disabled": [{"name": "*"}]},
    }
    if not post_filter:
        plugins["postFilter"] = {"disabled": [{"name": "Coscheduling"}]}
    return {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "profiles": [
            {
                "schedulerName": "default-scheduler",
                "plugins": plugins,
                "pluginConfig": [
                    {
                        "name": "Coscheduling",
                        "args": {"permitWaitingTimeSeconds": permit_wait, "podGroupBackoffSeconds": backoff},
                    }
                ],
            }
        ],
    }


@dataclass
class Run:
    sched: Scheduler
    cluster: MemoryCluster
    clock: VirtualClock
    snap: Snapshot
    results: dict[str, ScheduleResult] = field(default_factory=dict)  # last outcome per pod name
    log: list[tuple[float, str, str | None, str | None]] = field(default_factory=list)  # time, pod, node, message

    def until_idle(self) -> None:
        self.sched.run_until_idle(advance=self.clock.advance, max_attempts=10_000)

    @property
    def bound(self) -> dict[str, str]:
        names = {p.uid: p.name for p in self.cluster.pods.values()}
        return {names.get(uid, uid): n for uid, n in self.cluster.bindings.items()}


def start(docs: list[dict], config: dict, *, seed: int = 1, add: bool = True) -> Run:
    """A Scheduler over ``docs`` (nodes, pods, PodGroups...) with every pending pod queued."""
    reg = in_tree_registry(entry_points=False)
    cfg = parse_config(config, "test-config.yaml", reg.points_of)
    objs = parse_objects("test.yaml", [(f"documents[{i}]", d) for i, d in enumerate(docs)])
    resolve_priorities(objs)
    snap = Snapshot.of(objs)
    pending = objs.pending()
    cluster = MemoryCluster(pods={p.uid: p for p in objs.pods})
    clock = VirtualClock()
    sched = Scheduler(cfg, snap, cluster, reg, seed=seed, clock=clock)
    run = Run(sched, cluster, clock, snap)

    def record(res: ScheduleResult) -> None:
        run.results[res.pod.name] = res
        run.log.append((clock.now, res.pod.name, res.node, res.message))

    sched.hooks.on_scheduled.append(record)
    sched.hooks.on_failed.append(record)
    if add:
        for p in pending:
            sched.add_pending(p)
    return run

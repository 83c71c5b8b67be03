"""The equivalence cache changes speed, never placements: same seed, same result, cache on or off."""

from __future__ import annotations

import random

import pytest

from kubesched.api.objects import Node, Pod
from kubesched.app import VirtualClock
from kubesched.cluster.memory import MemoryCluster
from kubesched.config import default_config, parse_config
from kubesched.plugins import in_tree_registry
from kubesched.scheduler import Scheduler
from kubesched.state.snapshot import Snapshot
from kubesched.testing import make_node, make_pod


def cluster(rng: random.Random, n_nodes: int) -> list[Node]:
    nodes = []
    for i in range(n_nodes):
        taints = [{"key": "dedicated", "value": "gpu", "effect": "PreferNoSchedule"}] if i % 7 == 0 else None
        if i % 11 == 0:
            taints = [{"key": "team", "value": "x", "effect": "NoSchedule"}]
        nodes.append(
            Node.parse(
                make_node(
                    f"n{i:03d}",
                    cpu=rng.choice(["2", "4", "8"]),
                    memory=rng.choice(["4Gi", "8Gi", "16Gi"]),
                    pods=rng.choice([5, 20, 110]),
                    labels={"topology.kubernetes.io/zone": f"z{i % 3}", "disk": rng.choice(["ssd", "hdd"])},
                    taints=taints,
                    images=[(["nginx:1"], 300 * 1024 * 1024)] if i % 4 == 0 else None,
                )
            )
        )
    return nodes


def workload(rng: random.Random, n_pods: int) -> list[Pod]:
    """A few templates, as real workloads are, with some pods the cache must not serve."""
    templates = [
        {"requests": {"cpu": "100m", "memory": "500Mi"}},
        {"requests": {"cpu": "500m", "memory": "1Gi"}, "spec": {"nodeSelector": {"disk": "ssd"}}},
        {
            "requests": {"cpu": "250m"},
            "spec": {
                "tolerations": [{"key": "team", "operator": "Exists"}],
                "affinity": {
                    "nodeAffinity": {
                        "preferredDuringSchedulingIgnoredDuringExecution": [
                            {"weight": 5, "preference": {"matchExpressions": [{"key": "disk", "operator": "In", "values": ["hdd"]}]}}
                        ]
                    }
                },
            },
        },
        {"requests": {"cpu": "1"}, "spec": {"containers": [
            {"name": "c", "image": "nginx:1", "ports": [{"containerPort": 80, "hostPort": 8080}],
             "resources": {"requests": {"cpu": "1"}}}]}},
        {"requests": {"cpu": "3", "memory": "6Gi"}},
        {  # PreFilter narrows the candidates to a few named nodes (DaemonSet style)
            "requests": {"cpu": "50m"},
            "spec": {
                "affinity": {
                    "nodeAffinity": {
                        "requiredDuringSchedulingIgnoredDuringExecution": {
                            "nodeSelectorTerms": [
                                {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [name]}]}
                                for name in ("n001", "n005", "n010", "n020", "n033")
                            ]
                        }
                    }
                }
            },
        },
        {  # hard spreading: PodTopologySpread runs fresh each cycle beside the cached verdicts
            "requests": {"cpu": "200m"},
            "labels": {"color": "blue"},
            "spec": {
                "topologySpreadConstraints": [
                    {"maxSkew": 2, "topologyKey": "topology.kubernetes.io/zone", "whenUnsatisfiable": "DoNotSchedule",
                     "labelSelector": {"matchLabels": {"color": "blue"}}}
                ]
            },
        },
        {  # soft spreading: fresh PreScore/Score on the feasible window
            "requests": {"cpu": "150m"},
            "labels": {"color": "red"},
            "spec": {
                "topologySpreadConstraints": [
                    {"maxSkew": 1, "topologyKey": "kubernetes.io/hostname", "whenUnsatisfiable": "ScheduleAnyway",
                     "labelSelector": {"matchLabels": {"color": "red"}}}
                ]
            },
        },
        {  # anti-affinity: never cached, and it makes InterPodAffinity relevant to everyone after it
            "requests": {"cpu": "100m"},
            "labels": {"app": "db"},
            "spec": {
                "affinity": {
                    "podAntiAffinity": {
                        "requiredDuringSchedulingIgnoredDuringExecution": [
                            {"labelSelector": {"matchLabels": {"app": "db"}}, "topologyKey": "kubernetes.io/hostname"}
                        ]
                    }
                }
            },
        },
    ]
    pods = []
    for i in range(n_pods):
        t = rng.choices(templates, weights=[40, 15, 15, 8, 10, 6, 10, 10, 2])[0]
        spec = dict(t.get("spec", {}))
        containers = spec.pop("containers", None)
        pods.append(
            Pod.parse(make_pod(f"p{i:04d}", requests=t["requests"], labels=t.get("labels"), spec=spec,
                               containers=containers))
        )
    return pods


def _statuses(diag) -> list[tuple]:
    return sorted((row, int(st.code), st.reasons, st.plugin) for row, st in diag.statuses().items())


def run(
    seed: int, n_nodes: int, n_pods: int, cache: bool, pct: int | None, preempt: bool = True, tie_break: str = "random"
) -> list[tuple]:
    rng = random.Random(seed)
    reg = in_tree_registry()
    if pct is None and preempt:
        cfg = default_config(reg.points_of)
    else:
        doc = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"}
        if pct is not None:
            doc["percentageOfNodesToScore"] = pct
        if not preempt:  # nothing reads a failure's per-node statuses before the hook below
            doc["profiles"] = [{"schedulerName": "default-scheduler",
                                "plugins": {"postFilter": {"disabled": [{"name": "*"}]}}}]
        cfg = parse_config(doc, "test", reg.points_of)
    snap = Snapshot()
    for n in cluster(rng, n_nodes):
        snap.add_node(n)
    clock = VirtualClock()
    sched = Scheduler(cfg, snap, MemoryCluster(), reg, seed=seed, clock=clock, tie_break=tie_break)
    sched.use_equivalence_cache = cache
    out: list[tuple] = []
    sched.hooks.on_scheduled.append(lambda r: out.append((r.pod.key, r.node)))
    # a failure keeps its FitError (with PostFilter's part), the plugins it names, and every
    # node's status, read at the end: the cache builds them on first read, as of the failure
    sched.hooks.on_failed.append(
        lambda r: out.append((r.pod.key, None, r.message, sorted(r.diagnosis.unschedulable_plugins), r.diagnosis))
    )
    for p in workload(rng, n_pods):
        sched.add_pending(p)
    sched.run_until_idle(advance=clock.advance, max_attempts=5 * n_pods)
    out = [rec[:-1] + (_statuses(rec[-1]),) if len(rec) == 5 else rec for rec in out]
    out.append(("next-start", str(sched.next_start_node_index)))
    if cache:
        assert sched.frameworks["default-scheduler"].cache.hits > 0
        out.append(("diagnosed", sched.frameworks["default-scheduler"].cache.diagnosed > 0))
    return out


@pytest.mark.parametrize(
    "seed, n_nodes, n_pods, pct, preempt, tie_break",
    [
        (1, 40, 300, None, True, "random"),
        (2, 250, 1500, None, True, "random"),
        (3, 320, 1800, 30, True, "random"),
        (4, 60, 500, None, False, "random"),
        (5, 300, 1500, 30, True, "first"),  # windows that wrap and windows that do not
    ],
)
def test_cache_gives_identical_placements(seed, n_nodes, n_pods, pct, preempt, tie_break):
    with_cache = run(seed, n_nodes, n_pods, True, pct, preempt, tie_break)
    without = run(seed, n_nodes, n_pods, False, pct, preempt, tie_break)
    assert with_cache[:-1] == without
    assert with_cache[-1] == ("diagnosed", True)  # failures served from the cache's records
    assert any(rec[1] is None for rec in without)  # the workload does exhaust some capacity

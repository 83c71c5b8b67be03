"""Small seeded workloads for the oracle equivalence test, as Kubernetes wire dicts.

Two families: random clusters that exercise every default plugin's corner (taints of every
effect, images, host ports, node and pod (anti-)affinity with namespaceSelector, topology
spread with minDomains / matchLabelKeys / inclusion policies, default spreading through
Services and ReplicaSets), and scheduler_perf's workloads at tiny scale, taken from
``kubesched.bench.workloads`` when it is importable.
"""

from __future__ import annotations

import copy
import random
from dataclasses import dataclass, field
from typing import Any

from oracle_plugins import HOSTNAME, ZONE, Config, Workload

from kubesched.testing import make_node, make_pod

Wire = dict[str, Any]

IMAGES = {  # name as nodes report it -> size in bytes
    "nginx:1.25": 180 * 1024 * 1024,
    "busybox@sha256:4be429a5fbb2e71ae7958bfa558bc637cf3a61baf40a708cb8fff532b39e52d0": 4 * 1024 * 1024,
    "redis:7": 120 * 1024 * 1024,
    "busybox:latest": 5 * 1024 * 1024,
    "registry.io:5000/ml/train:2.0": 3 * 1024 * 1024 * 1024,
    "registry.io:5000/app:latest": 600 * 1024 * 1024,
}
POD_IMAGES = [
    "nginx:1.25",
    "redis:7",
    "busybox",
    "busybox@sha256:4be429a5fbb2e71ae7958bfa558bc637cf3a61baf40a708cb8fff532b39e52d0",
    "registry.io:5000/ml/train:2.0",
    "registry.io:5000/app",
    "pause",
]
NAMESPACES = {
    "default": {"team": "a"},
    "prod": {"team": "b", "env": "prod"},
    "dev": {"team": "a", "env": "dev"},
}
APPS = ["web", "db", "cache", "batch"]
GPU = "example.com/gpu"


@dataclass
class Case:
    """One workload: the cluster, the pods to schedule in order, the config."""

    name: str
    nodes: list[Wire]
    namespaces: list[Wire]
    existing: list[Wire]  # bound pods (spec.nodeName set)
    incoming: list[Wire]
    workloads: list[Workload] = field(default_factory=list)
    config: Wire = field(default_factory=dict)  # extra KubeSchedulerConfiguration fields
    oracle: Config = field(default_factory=Config)


def namespace(name: str, labels: dict[str, str]) -> Wire:
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name, "labels": labels}}


# ---- random clusters -----------------------------------------------------------------------
class RandomCluster:
    """A seeded generator of nodes and pods that touch every default plugin's branches."""

    def __init__(self, seed: int, n_nodes: int) -> None:
        self.rng = random.Random(seed)
        self.n_nodes = n_nodes

    def node(self, i: int) -> Wire:
        r = self.rng
        labels: dict[str, str] = {
            "topology.kubernetes.io/region": "r1",
            "rack": r.choice(["rack0", "rack1", "rack2", "rack3", ""]),
        }
        roll = r.random()
        if roll > 0.1:
            labels[ZONE] = f"zone{i % 3}"
        elif roll > 0.07:
            labels[ZONE] = ""  # an empty value: the same domain as "no zone" for system spreading
        # (else: a few nodes without a zone)
        if r.random() < 0.6:
            labels["disktype"] = r.choice(["ssd", "hdd"])
        labels["tier"] = str(r.randrange(1, 6))
        taints = []
        roll = r.random()
        if roll < 0.1:
            taints.append({"key": "dedicated", "value": r.choice(["db", "ml"]), "effect": "NoSchedule"})
        elif roll < 0.25:
            taints.append({"key": "spot", "value": "true", "effect": "PreferNoSchedule"})
        elif roll < 0.3:
            taints.append({"key": "maintenance", "effect": "NoExecute"})
        if r.random() < 0.1:
            taints.append({"key": "noisy", "value": r.choice(["yes", "no"]), "effect": "PreferNoSchedule"})
        images = [([name], size) for name, size in IMAGES.items() if r.random() < 0.35]
        if r.random() < 0.15:  # one image under two names, its size reported differently by this node
            images.append((["redis:7", "redis:latest"], IMAGES["redis:7"] * 2))
        extra: dict[str, Any] = {}
        if r.random() < 0.3:
            extra["ephemeral-storage"] = r.choice(["10Gi", "50Gi"])
        if r.random() < 0.2:
            extra[GPU] = r.choice([1, 2, 4])
        bare = r.random() < 0.03  # no cpu / memory allocatable at all
        d = make_node(
            f"node-{i:02d}",
            cpu=None if bare else r.choice(["2", "4", "8", "16"]),
            memory=None if bare else r.choice(["4Gi", "8Gi", "16Gi", "32Gi"]),
            pods=r.choice([110, 110, 110, 3]),
            labels=labels,
            taints=taints or None,
            unschedulable=r.random() < 0.05,
            images=images or None,
            extra=extra,
        )
        if r.random() < 0.04:
            del d["metadata"]["labels"][HOSTNAME]  # legal, and spreading treats it as missing
        elif i % 17 == 16:
            d["metadata"]["labels"][HOSTNAME] = f"node-{i - 1:02d}"  # two nodes, one hostname value
        return d

    def _selector(self, app: str) -> Wire:
        r = self.rng
        if r.random() < 0.7:
            return {"matchLabels": {"app": app}}
        return {"matchExpressions": [{"key": "app", "operator": "In", "values": r.sample(APPS, 2)}]}

    def _pod_term(self, app: str, key: str) -> Wire:
        r = self.rng
        t: Wire = {"topologyKey": key}
        roll = r.random()
        if roll < 0.03:
            t["labelSelector"] = {}  # every pod (of the term's namespaces)
        elif roll > 0.07:  # else: a missing labelSelector matches no pod
            t["labelSelector"] = self._selector(app)
            if r.random() < 0.15:
                t[r.choice(["matchLabelKeys", "mismatchLabelKeys"])] = ["version"]
        roll = r.random()
        if roll < 0.15:
            t["namespaceSelector"] = {"matchLabels": {"team": "a"}}
        elif roll < 0.22:
            t["namespaceSelector"] = {
                "matchExpressions": [{"key": "env", "operator": "NotIn", "values": ["prod"]}]
            }
        elif roll < 0.3:
            t["namespaceSelector"] = {}
        elif roll < 0.4:
            t["namespaces"] = r.sample(list(NAMESPACES), 2)
        elif roll < 0.45:
            t["namespaces"] = ["prod"]
            t["namespaceSelector"] = {"matchLabels": {"env": "dev"}}
        return t

    def _affinity(self, app: str) -> Wire:
        r = self.rng
        aff: Wire = {}
        if r.random() < 0.3:
            na: Wire = {}
            if r.random() < 0.6:
                exprs = [
                    r.choice(
                        [
                            {
                                "key": ZONE,
                                "operator": "In",
                                "values": r.sample(["zone0", "zone1", "zone2"], 2),
                            },
                            {"key": "tier", "operator": "Gt", "values": [str(r.randrange(1, 4))]},
                            {"key": "disktype", "operator": "NotIn", "values": ["hdd"]},
                            {"key": "disktype", "operator": "Exists"},
                        ]
                    )
                ]
                terms = [{"matchExpressions": exprs}]
                if r.random() < 0.3:
                    terms.append({"matchExpressions": [{"key": "tier", "operator": "Lt", "values": ["3"]}]})
                if r.random() < 0.1:
                    field = {
                        "key": "metadata.name",
                        "operator": "NotIn",
                        "values": [f"node-{r.randrange(10):02d}"],
                    }
                    terms[0]["matchFields"] = [field]
                elif r.random() < 0.05:  # pinned to named nodes: PreFilterResult narrows the candidates
                    names = [f"node-{r.randrange(self.n_nodes):02d}" for _ in range(2)]
                    terms = [
                        {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [n]}]}
                        for n in names
                    ]
                na["requiredDuringSchedulingIgnoredDuringExecution"] = {"nodeSelectorTerms": terms}
            if r.random() < 0.7:
                na["preferredDuringSchedulingIgnoredDuringExecution"] = [
                    {
                        "weight": r.randrange(1, 101),
                        "preference": {
                            "matchExpressions": [
                                r.choice(
                                    [
                                        {"key": "disktype", "operator": "In", "values": ["ssd"]},
                                        {"key": "rack", "operator": "In", "values": ["rack0", "rack1"]},
                                        {"key": "tier", "operator": "Gt", "values": ["2"]},
                                        {"key": ZONE, "operator": "NotIn", "values": ["zone2"]},
                                    ]
                                )
                            ]
                        },
                    }
                    for _ in range(r.randrange(1, 3))
                ]
            if na:
                aff["nodeAffinity"] = na
        other = r.choice(APPS)
        if r.random() < 0.3:
            pa: Wire = {}
            if r.random() < 0.4:
                pa["requiredDuringSchedulingIgnoredDuringExecution"] = [
                    self._pod_term(other, k) for k in r.sample([ZONE, "rack", HOSTNAME], r.choice([1, 1, 2]))
                ]
            if r.random() < 0.7:
                pa["preferredDuringSchedulingIgnoredDuringExecution"] = [
                    {
                        "weight": r.randrange(1, 101),
                        "podAffinityTerm": self._pod_term(r.choice(APPS), r.choice([ZONE, HOSTNAME])),
                    }
                ]
            if pa:
                aff["podAffinity"] = pa
        if r.random() < 0.35:
            paa: Wire = {}
            if r.random() < 0.5:
                paa["requiredDuringSchedulingIgnoredDuringExecution"] = [
                    self._pod_term(app, k) for k in r.sample([HOSTNAME, "rack", ZONE], r.choice([1, 1, 2]))
                ]
            if r.random() < 0.7:
                paa["preferredDuringSchedulingIgnoredDuringExecution"] = [
                    {
                        "weight": r.randrange(1, 101),
                        "podAffinityTerm": self._pod_term(
                            r.choice(APPS), r.choice([ZONE, HOSTNAME, "rack", "disktype"])
                        ),
                    }
                ]
            if paa:
                aff["podAntiAffinity"] = paa
        return aff

    def _spread(self, app: str) -> list[Wire]:
        r = self.rng
        out = []
        for key in r.sample([ZONE, HOSTNAME, "rack"], r.randrange(1, 3)):
            hard = r.random() < 0.5
            c: Wire = {
                "maxSkew": r.randrange(1, 3),
                "topologyKey": key,
                "whenUnsatisfiable": "DoNotSchedule" if hard else "ScheduleAnyway",
                "labelSelector": self._selector(app),
            }
            if hard and r.random() < 0.3:
                c["minDomains"] = r.randrange(2, 5)
            if r.random() < 0.3:
                c["matchLabelKeys"] = ["version"]
            if r.random() < 0.2:
                c["nodeAffinityPolicy"] = "Ignore"
            if r.random() < 0.2:
                c["nodeTaintsPolicy"] = "Honor"
            out.append(c)
        return out

    def _tolerations(self) -> list[Wire]:
        r = self.rng
        tols = []
        if r.random() < 0.3:
            tols.append(
                {
                    "key": "dedicated",
                    "operator": "Equal",
                    "value": r.choice(["db", "ml"]),
                    "effect": "NoSchedule",
                }
            )
        if r.random() < 0.3:
            tols.append({"key": "spot", "operator": "Exists", "effect": r.choice(["PreferNoSchedule", ""])})
        if r.random() < 0.1:
            tols.append({"key": "noisy", "operator": "Equal", "value": "yes"})
        if r.random() < 0.05:
            tols.append({"operator": "Exists"})
        if r.random() < 0.05:
            tols.append(
                {"key": "node.kubernetes.io/unschedulable", "operator": "Exists", "effect": "NoSchedule"}
            )
        if r.random() < 0.05:
            tols.append({"key": "maintenance", "operator": "Exists", "effect": "NoExecute"})
        return tols

    def pod(
        self, name: str, *, node: str | None = None, features: bool = True, row_local: bool = False
    ) -> Wire:
        """A pod; ``features`` False leaves out every scheduling constraint (plain filler).

        ``row_local`` keeps only what a node's own row decides (requests, ports, node
        selector and affinity, tolerations, images) and a label no Service selects, so that
        replicas of it can be served by the equivalence cache.
        """
        r = self.rng
        app = r.choice(["cache", "batch"]) if row_local else r.choice(APPS)
        labels = {"app": app, "version": r.choice(["v1", "v2"])}
        ns = r.choice(list(NAMESPACES))
        containers = []
        for c in range(r.choice([1, 1, 1, 2])):
            req: dict[str, str] = {}
            if r.random() < 0.85:
                req["cpu"] = r.choice(["50m", "100m", "250m", "500m", "1", "1500m"])
            if r.random() < 0.85:
                req["memory"] = r.choice(["64Mi", "128Mi", "512Mi", "1Gi", "3Gi"])
            if r.random() < 0.1:
                req["ephemeral-storage"] = r.choice(["1Gi", "20Gi"])
            if r.random() < 0.08:
                req[GPU] = "1"
            cont: Wire = {"name": f"c{c}", "image": r.choice(POD_IMAGES)}
            if req:
                cont["resources"] = {"requests": req}
            if features and r.random() < 0.12:
                port: Wire = {"containerPort": 80, "hostPort": r.choice([8080, 9090, 53])}
                if port["hostPort"] == 53:
                    port["protocol"] = r.choice(["UDP", "TCP"])
                if r.random() < 0.3:
                    port["hostIP"] = r.choice(["10.0.0.1", "10.0.0.2"])
                cont["ports"] = [port]
            containers.append(cont)
        spec: Wire = {}
        md_extra: Wire = {}
        if r.random() < 0.1:  # an init container, or a sidecar (restartable) that may hold a port
            init: Wire = {"name": "init", "image": r.choice(POD_IMAGES)}
            init["resources"] = {
                "requests": {"cpu": r.choice(["200m", "2"]), "memory": r.choice(["32Mi", "2Gi"])}
            }
            if r.random() < 0.5:
                init["restartPolicy"] = "Always"
                if features and r.random() < 0.3:
                    init["ports"] = [{"containerPort": 81, "hostPort": 8080}]
            spec["initContainers"] = [init]
        if r.random() < 0.05:
            spec["overhead"] = {"cpu": "50m", "memory": "32Mi"}
        if r.random() < 0.05:
            spec["resources"] = {"requests": {"cpu": r.choice(["300m", "1"]), "memory": "256Mi"}}
        if features:
            if r.random() < 0.1:
                spec["nodeSelector"] = {"disktype": "ssd"}
            aff = self._affinity(app)
            if row_local:
                aff = {k: v for k, v in aff.items() if k == "nodeAffinity"}
            if aff:
                spec["affinity"] = aff
            tols = self._tolerations()
            if tols:
                spec["tolerations"] = tols
            if not row_local and r.random() < 0.35:
                spec["topologySpreadConstraints"] = self._spread(app)
            if not row_local and r.random() < 0.4:
                md_extra["ownerReferences"] = [
                    {
                        "apiVersion": "apps/v1",
                        "kind": "ReplicaSet",
                        "name": f"rs-{app}",
                        "uid": f"rs-{app}",
                        "controller": True,
                    }
                ]
        d = make_pod(name, namespace=ns, containers=containers, labels=labels, node=node, spec=spec)
        d["metadata"].update(md_extra)
        if node is not None and r.random() < 0.05:
            d["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
        return d

    def case(self, name: str, n_existing: int, n_incoming: int) -> Case:
        nodes = [self.node(i) for i in range(self.n_nodes)]
        existing = [
            self.pod(
                f"old-{i:03d}",
                node=self.rng.choice(nodes)["metadata"]["name"],
                features=self.rng.random() < 0.6,
            )
            for i in range(n_existing)
        ]
        incoming: list[Wire] = []
        for i in range(n_incoming):
            if incoming and self.rng.random() < 0.5:  # a replica: same spec and labels, new name
                pod = copy.deepcopy(self.rng.choice(incoming))
                md = pod["metadata"]
                md["name"] = f"new-{i:03d}"
                md["uid"] = f"{md['namespace']}-{md['name']}"
            else:
                pod = self.pod(f"new-{i:03d}")
            incoming.append(pod)
        workloads = []
        for ns in NAMESPACES:
            workloads.append(Workload("Service", ns, "svc-web", {"app": "web"}))
            workloads.append(Workload("Service", ns, "svc-db", {"app": "db", "version": "v1"}))
            for app in APPS:
                workloads.append(Workload("ReplicaSet", ns, f"rs-{app}", {"matchLabels": {"app": app}}))
        return Case(
            name,
            nodes,
            [namespace(n, labels) for n, labels in NAMESPACES.items()],
            existing,
            incoming,
            workloads,
        )


def random_case(seed: int, n_nodes: int, n_existing: int, n_incoming: int) -> Case:
    return RandomCluster(seed, n_nodes).case(f"random-{seed}", n_existing, n_incoming)


def replica_case(seed: int, n_nodes: int, n_existing: int, n_incoming: int, templates: int = 4) -> Case:
    """Replicas of a few row-local templates on a cluster without affinity terms (the equivalence cache's ground)."""
    gen = RandomCluster(seed, n_nodes)
    base = gen.case(f"replicas-{seed}", 0, 0)
    names = [n["metadata"]["name"] for n in base.nodes]
    base.existing = [
        gen.pod(f"old-{i:03d}", node=gen.rng.choice(names), features=False) for i in range(n_existing)
    ]
    tpls = [gen.pod(f"tpl-{k}", row_local=True) for k in range(templates)]
    for i in range(n_incoming):
        pod = copy.deepcopy(gen.rng.choice(tpls))
        md = pod["metadata"]
        md["name"] = f"new-{i:03d}"
        md["uid"] = f"{md['namespace']}-{md['name']}"
        base.incoming.append(pod)
    return base


def with_fit_strategy(case: Case, strategy: str) -> Case:
    """The same cluster under another NodeResourcesFit scoring strategy."""
    fit: Wire = {
        "type": strategy,
        "resources": [{"name": "cpu", "weight": 2}, {"name": "memory", "weight": 1}],
    }
    oracle = Config(fit_strategy=strategy, fit_resources=[("cpu", 2), ("memory", 1)])
    if strategy == "RequestedToCapacityRatio":
        shape = [(0, 0), (50, 8), (100, 3)]
        fit["requestedToCapacityRatio"] = {"shape": [{"utilization": u, "score": s} for u, s in shape]}
        oracle.fit_shape = shape
    case.name = f"{case.name}-{strategy}"
    case.config = {
        "profiles": [
            {
                "schedulerName": "default-scheduler",
                "pluginConfig": [{"name": "NodeResourcesFit", "args": {"scoringStrategy": fit}}],
            }
        ]
    }
    case.oracle = oracle
    return case


# ---- scheduler_perf workloads at tiny scale ----------------------------------------------------
def bench_case(full_name: str, nodes: int, pods: int, seed: int = 7) -> Case:
    """A ``kubesched.bench.workloads`` workload materialised at tiny scale (its ops, in order).

    Every created pod goes through the scheduler (init pods too, as in scheduler_perf); the
    oracle checks each of them.
    """
    from kubesched.bench import templates as T
    from kubesched.bench import workloads as W

    wl = W.get(full_name)[0]
    params = wl.resolve(nodes=nodes, pods=pods)
    names = T.NameGenerator(seed)
    node_list: list[Wire] = []
    namespaces: dict[str, Wire] = {}
    incoming: list[Wire] = []
    existing: list[Wire] = []
    services: list[Workload] = []
    for op_index, op in enumerate(wl.ops):
        if isinstance(op, W.CreateNodes):
            for i in range(wl.count(op.count, params)):
                tpl = T.NODE_TEMPLATES[op.template]() if op.template else T.base_node(op_index)
                label = (op.label_key, op.label_values[i % len(op.label_values)]) if op.label_key else None
                node_list.append(T.instantiate_node(tpl, names, label))
        elif isinstance(op, W.CreateNamespaces):
            for i in range(wl.count(op.count, params)):
                name = f"{op.prefix}-{i}"
                namespaces[name] = T.namespace(name, dict(op.labels) if op.labels else None)
        elif isinstance(op, W.CreateService):
            svc = T.service()
            services.append(Workload("Service", op.namespace, "service", svc["spec"]["selector"]))
        elif isinstance(op, W.CreatePods | W.CreatePodSets | W.BindPods):
            factory = T.PodFactory(T.POD_TEMPLATES[op.template](), names)
            if isinstance(op, W.CreatePodSets):
                for i in range(wl.count(op.count, params)):
                    ns = f"{op.namespace_prefix}-{i}"
                    incoming += [factory(ns) for _ in range(wl.count(op.per_namespace, params))]
            elif isinstance(op, W.BindPods):
                for i in range(wl.count(op.count, params)):
                    p = factory(op.namespace)
                    p["spec"] = {**p["spec"], "nodeName": node_list[i % len(node_list)]["metadata"]["name"]}
                    existing.append(p)
            else:
                ns = op.namespace or f"namespace-{op_index}"
                incoming += [factory(ns) for _ in range(wl.count(op.count, params))]
        else:
            raise ValueError(f"{full_name}: op {type(op).__name__} is not supported by the oracle test")
    return Case(f"bench-{full_name}", node_list, list(namespaces.values()), existing, incoming, services)


#: scheduler_perf workloads the oracle drives (no preemption: nominated pods are not modelled).
BENCH_WORKLOADS = (
    "SchedulingBasic/5000Nodes_10000Pods",
    "SchedulingPodAntiAffinity/5000Nodes_2000Pods",
    "SchedulingPodMatchingAntiAffinity/5000Nodes_5000Pods",
    "SchedulingPodAffinity/5000Nodes_5000Pods",
    "SchedulingPreferredPodAffinity/5000Nodes_5000Pods",
    "SchedulingPreferredPodAntiAffinity/5000Nodes_5000Pods",
    "SchedulingNodeAffinity/5000Nodes_10000Pods",
    "MixedSchedulingBasePod/5000Nodes_5000Pods",
    "SchedulingRequiredPodAntiAffinityWithNSSelector/5000Nodes_2000Pods",
    "SchedulingPreferredAntiAffinityWithNSSelector/5000Nodes_2000Pods",
    "SchedulingRequiredPodAffinityWithNSSelector/5000Nodes_2000Pods",
    "SchedulingPreferredAffinityWithNSSelector/5000Nodes_5000Pods",
    "TopologySpreading/5000Nodes_5000Pods",
    "PreferredTopologySpreading/5000Nodes_5000Pods",
    "DefaultTopologySpreading/5000Nodes_50000Pods",
    "SchedulingWithNodeInclusionPolicy/5000Nodes",
    "SchedulingDaemonset/15000Nodes",
)

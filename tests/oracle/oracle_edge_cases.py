"""Hand-built small workloads for corners the random clusters reach rarely or not at all.

Each function returns a :class:`Case`; ``EDGE_CASES`` maps its name to it. Config variants
(scoring resources, InterPodAffinity args, ``List`` default spreading) come with the matching
oracle :class:`Config`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from oracle_plugins import HOSTNAME, ZONE, Config, Workload
from oracle_workloads import Case, namespace

from kubesched.testing import make_node, make_pod

Wire = dict[str, Any]
GPU = "example.com/gpu"
HUGE = "hugepages-2Mi"


def _zones(n: int, cpu: str = "8", memory: str = "16Gi", **kw: Any) -> list[Wire]:
    return [
        make_node(f"n{i}", cpu=cpu, memory=memory, labels={ZONE: f"z{i % 3}", "rack": f"r{i % 2}"}, **kw)
        for i in range(n)
    ]


def _default_ns() -> list[Wire]:
    return [namespace("default", {"team": "a"}), namespace("other", {"team": "b"})]


def _plugin_config(name: str, args: Wire) -> Wire:
    return {
        "profiles": [{"schedulerName": "default-scheduler", "pluginConfig": [{"name": name, "args": args}]}]
    }


def spread_empty_selector() -> Case:
    """``labelSelector: {}`` (Everything): v1.36 countPodsMatchSelector counts 0 pods for it."""
    existing = [
        make_pod(f"old{i}", labels={"app": "web"}, node="n0", requests={"cpu": "100m"}) for i in range(3)
    ]

    def spread(when: str) -> Wire:
        return {
            "topologySpreadConstraints": [
                {"maxSkew": 1, "topologyKey": ZONE, "whenUnsatisfiable": when, "labelSelector": {}}
            ]
        }

    incoming = [
        make_pod("hard", labels={"app": "web"}, requests={"cpu": "100m"}, spec=spread("DoNotSchedule")),
        make_pod("soft", labels={"app": "web"}, requests={"cpu": "100m"}, spec=spread("ScheduleAnyway")),
    ]
    return Case("spread-empty-selector", _zones(6), _default_ns(), existing, incoming)


def spread_nil_selector() -> Case:
    """A constraint without labelSelector (labels.Nothing()): no pod counts, not even the pod itself."""
    existing = [make_pod(f"old{i}", labels={"app": "web"}, node=f"n{i % 2}") for i in range(4)]
    tsc = [
        {"maxSkew": 1, "topologyKey": ZONE, "whenUnsatisfiable": "DoNotSchedule"},
        {"maxSkew": 1, "topologyKey": HOSTNAME, "whenUnsatisfiable": "ScheduleAnyway"},
    ]
    incoming = [
        make_pod(f"new{i}", labels={"app": "web"}, spec={"topologySpreadConstraints": tsc}) for i in range(6)
    ]
    return Case("spread-nil-selector", _zones(6), _default_ns(), existing, incoming)


def default_spreading_controllers() -> Case:
    """System default spreading through Services, a ReplicationController and a StatefulSet.

    Some nodes have no zone label and one has an empty zone: with system defaults both are the
    ``""`` zone domain, and only the labelled one scores the zone term.
    """
    nodes = _zones(7)
    del nodes[5]["metadata"]["labels"][ZONE]
    nodes[6]["metadata"]["labels"][ZONE] = ""
    workloads = [
        Workload("Service", "default", "svc", {"app": "web"}),
        Workload("ReplicationController", "default", "rc-web", {"app": "web", "tier": "front"}),
        Workload(
            "StatefulSet",
            "default",
            "ss-db",
            {"matchExpressions": [{"key": "app", "operator": "In", "values": ["db"]}]},
        ),
        Workload("ReplicationController", "other", "rc-web", {"app": "nothing"}),  # other namespace: ignored
    ]

    def owned(name: str, kind: str, owner: str, labels: dict[str, str], node: str | None = None) -> Wire:
        d = make_pod(name, labels=labels, node=node, requests={"cpu": "200m", "memory": "256Mi"})
        d["metadata"]["ownerReferences"] = [
            {"apiVersion": "v1", "kind": kind, "name": owner, "uid": owner, "controller": True}
        ]
        return d

    existing = [
        owned(f"w{i}", "ReplicationController", "rc-web", {"app": "web", "tier": "front"}, f"n{i % 3 * 2}")
        for i in range(4)
    ]
    existing += [owned(f"d{i}", "StatefulSet", "ss-db", {"app": "db"}, f"n{5 + i % 2}") for i in range(3)]
    incoming = [
        owned(f"web{i}", "ReplicationController", "rc-web", {"app": "web", "tier": "front"}) for i in range(8)
    ]
    incoming += [owned(f"db{i}", "StatefulSet", "ss-db", {"app": "db"}) for i in range(6)]
    incoming += [make_pod(f"svc{i}", labels={"app": "web"}) for i in range(3)]  # Service only, no controller
    return Case("default-spreading-controllers", nodes, _default_ns(), existing, incoming, workloads)


def default_spreading_zoneless() -> Case:
    """No node has a zone: hostname spreading only (requireAllTopologies is false for system defaults)."""
    nodes = [make_node(f"n{i}", cpu="4", memory="8Gi") for i in range(5)]
    workloads = [Workload("Service", "default", "svc", {"app": "web"})]
    incoming = [make_pod(f"web{i}", labels={"app": "web"}, requests={"cpu": "100m"}) for i in range(8)]
    return Case("default-spreading-zoneless", nodes, _default_ns(), [], incoming, workloads)


def list_default_constraints() -> Case:
    """defaultingType List with a hard default constraint (requireAllTopologies is then true)."""
    nodes = _zones(6)
    del nodes[4]["metadata"]["labels"][ZONE]
    workloads = [Workload("Service", "default", "svc", {"app": "web"})]
    existing = [make_pod(f"old{i}", labels={"app": "web"}, node="n0") for i in range(2)]
    incoming = [make_pod(f"web{i}", labels={"app": "web"}, requests={"cpu": "100m"}) for i in range(7)]
    incoming += [make_pod("plain", labels={"app": "none"})]
    args = {
        "defaultingType": "List",
        "defaultConstraints": [
            {"maxSkew": 1, "topologyKey": ZONE, "whenUnsatisfiable": "DoNotSchedule"},
            {"maxSkew": 2, "topologyKey": HOSTNAME, "whenUnsatisfiable": "ScheduleAnyway"},
        ],
    }
    oracle = Config(
        system_defaulted=False,
        default_constraints=[(ZONE, 1, "DoNotSchedule"), (HOSTNAME, 2, "ScheduleAnyway")],
    )
    return Case(
        "list-default-constraints",
        nodes,
        _default_ns(),
        existing,
        incoming,
        workloads,
        _plugin_config("PodTopologySpread", args),
        oracle,
    )


def image_names() -> Case:
    """Images under several names, digests, untagged names, sizes that differ between nodes."""
    nginx = "registry.io:5000/nginx"
    digest = "busybox@sha256:4be429a5fbb2e71ae7958bfa558bc637cf3a61baf40a708cb8fff532b39e52d0"
    images = [
        [([f"{nginx}:latest", f"{nginx}:1.0"], 300 * 2**20), ([digest], 40 * 2**20)],
        [([f"{nginx}:1.0"], 900 * 2**20)],  # same name, another size: the first reported wins
        [([f"{nginx}:latest"], 500 * 2**20), (["big:1"], 5 * 2**30)],
        [],
        [([digest, "busybox:latest"], 40 * 2**20)],
    ]
    nodes = [make_node(f"n{i}", cpu="8", memory="16Gi", images=imgs or None) for i, imgs in enumerate(images)]

    def pod(name: str, imgs: list[str], init: list[str] = ()) -> Wire:  # type: ignore[assignment]
        spec = (
            {"initContainers": [{"name": f"i{k}", "image": im} for k, im in enumerate(init)]} if init else {}
        )
        return make_pod(
            name, containers=[{"name": f"c{k}", "image": im} for k, im in enumerate(imgs)], spec=spec
        )

    incoming = [
        pod("untagged", [nginx]),
        pod("tagged", [f"{nginx}:1.0"]),
        pod("twice", [f"{nginx}:1.0", f"{nginx}:1.0"], init=[digest]),
        pod("digest", [digest]),
        pod("big", ["big:1", "big"]),
        pod("busybox", ["busybox"]),
    ]
    return Case("image-names", nodes, _default_ns(), [], incoming)


def pod_count_and_best_effort() -> Case:
    """Nodes without a ``pods`` allocatable or nearly full; best-effort pods (BalancedAllocation skips)."""
    nodes = [
        make_node("nopods", cpu="4", memory="8Gi", pods=None),
        make_node("two", cpu="4", memory="8Gi", pods=2),
        make_node("nocpu", cpu=None, memory="8Gi"),
        make_node("big", cpu="64", memory="256Gi"),
    ]
    existing = [make_pod("old0", node="two", requests={"cpu": "3"})]
    incoming = [make_pod(f"be{i}") for i in range(3)]
    incoming += [make_pod(f"mem{i}", requests={"memory": "1Gi"}) for i in range(2)]
    incoming += [make_pod("huge", requests={"cpu": "100", "memory": "1Ti"})]
    return Case("pod-count-and-best-effort", nodes, _default_ns(), existing, incoming)


def scalar_resources_scoring() -> Case:
    """Fit scoring over cpu, memory, an extended resource and hugepages; Fit filter on both."""
    nodes = []
    for i in range(6):
        extra: dict[str, Any] = {}
        if i % 2 == 0:
            extra[GPU] = 4
        if i % 3 == 0:
            extra[HUGE] = "1Gi"
        nodes.append(make_node(f"n{i}", cpu=str(4 + 2 * i), memory="16Gi", extra=extra))
    existing = [make_pod("g0", node="n0", requests={GPU: 3, "cpu": "1"})]
    incoming = [make_pod(f"gpu{i}", requests={GPU: 1, "cpu": "500m"}) for i in range(4)]
    incoming += [make_pod(f"huge{i}", requests={HUGE: "512Mi", "memory": "1Gi"}) for i in range(3)]
    incoming += [make_pod(f"plain{i}", requests={"cpu": "1"}) for i in range(3)]
    resources = [("cpu", 1), ("memory", 2), (GPU, 5), (HUGE, 3)]
    args = {
        "scoringStrategy": {
            "type": "MostAllocated",
            "resources": [{"name": n, "weight": w} for n, w in resources],
        }
    }
    oracle = Config(fit_strategy="MostAllocated", fit_resources=resources)
    return Case(
        "scalar-resources-scoring",
        nodes,
        _default_ns(),
        existing,
        incoming,
        [],
        _plugin_config("NodeResourcesFit", args),
        oracle,
    )


def balanced_three_resources() -> Case:
    """BalancedAllocation over cpu, memory and ephemeral-storage (std of three fractions)."""
    nodes = [
        make_node(
            f"n{i}", cpu=str(2 + i), memory=f"{4 + 3 * i}Gi", extra={"ephemeral-storage": f"{10 + 7 * i}Gi"}
        )
        for i in range(5)
    ]
    nodes.append(make_node("noeph", cpu="4", memory="8Gi"))
    existing = [
        make_pod(f"old{i}", node=f"n{i}", requests={"cpu": f"{300 * i}m", "ephemeral-storage": f"{i}Gi"})
        for i in range(5)
    ]
    incoming = [
        make_pod(
            f"p{i}",
            requests={
                "cpu": f"{100 + 150 * i}m",
                "memory": f"{64 * (i + 1)}Mi",
                "ephemeral-storage": f"{i % 3}Gi",
            },
        )
        for i in range(8)
    ]
    incoming += [make_pod("ephonly", requests={"ephemeral-storage": "1Gi"})]
    args = {
        "resources": [
            {"name": "cpu", "weight": 1},
            {"name": "memory", "weight": 1},
            {"name": "ephemeral-storage", "weight": 1},
        ]
    }
    oracle = Config(balanced_resources=[("cpu", 1), ("memory", 1), ("ephemeral-storage", 1)])
    return Case(
        "balanced-three-resources",
        nodes,
        _default_ns(),
        existing,
        incoming,
        [],
        _plugin_config("NodeResourcesBalancedAllocation", args),
        oracle,
    )


def _affinity_cluster(name: str, args: Wire, oracle: Config) -> Case:
    nodes = _zones(6)
    aff_req = {
        "podAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": [
                {"labelSelector": {"matchLabels": {"app": "db"}}, "topologyKey": ZONE}
            ]
        }
    }
    aff_pref = {
        "podAffinity": {
            "preferredDuringSchedulingIgnoredDuringExecution": [
                {
                    "weight": 7,
                    "podAffinityTerm": {
                        "labelSelector": {"matchLabels": {"app": "web"}},
                        "topologyKey": "rack",
                    },
                }
            ]
        },
        "podAntiAffinity": {
            "preferredDuringSchedulingIgnoredDuringExecution": [
                {
                    "weight": 3,
                    "podAffinityTerm": {
                        "labelSelector": {"matchLabels": {"app": "web"}},
                        "topologyKey": HOSTNAME,
                    },
                }
            ]
        },
    }
    existing = [
        make_pod("db0", labels={"app": "db"}, node="n0"),
        make_pod("web0", labels={"app": "web"}, node="n1", spec={"affinity": aff_req}),
        make_pod("web1", labels={"app": "web"}, node="n3", spec={"affinity": aff_pref}),
    ]
    incoming = [make_pod(f"web{i + 2}", labels={"app": "web"}, requests={"cpu": "100m"}) for i in range(3)]
    incoming += [make_pod(f"db{i + 1}", labels={"app": "db"}) for i in range(2)]
    incoming += [make_pod(f"pref{i}", labels={"app": "web"}, spec={"affinity": aff_pref}) for i in range(3)]
    return Case(
        name, nodes, _default_ns(), existing, incoming, [], _plugin_config("InterPodAffinity", args), oracle
    )


def hard_pod_affinity_weight() -> Case:
    """InterPodAffinityArgs.hardPodAffinityWeight 5: existing pods' required affinity scores 5."""
    return _affinity_cluster(
        "hard-pod-affinity-weight", {"hardPodAffinityWeight": 5}, Config(hard_pod_affinity_weight=5)
    )


def ignore_preferred_terms() -> Case:
    """ignorePreferredTermsOfExistingPods with hardPodAffinityWeight 0."""
    args = {"hardPodAffinityWeight": 0, "ignorePreferredTermsOfExistingPods": True}
    return _affinity_cluster(
        "ignore-preferred-terms",
        args,
        Config(hard_pod_affinity_weight=0, ignore_preferred_terms_of_existing_pods=True),
    )


def host_ports() -> Case:
    """Host port conflicts: wildcard vs specific IPs, ``::`` (not a wildcard), protocols, sidecars."""
    nodes = [make_node(f"n{i}", cpu="4", memory="8Gi") for i in range(4)]

    def pod(
        name: str,
        port: int,
        ip: str | None = None,
        proto: str | None = None,
        node: str | None = None,
        sidecar: bool = False,
    ) -> Wire:
        p: Wire = {"containerPort": 80, "hostPort": port}
        if ip:
            p["hostIP"] = ip
        if proto:
            p["protocol"] = proto
        c = {"name": "c", "image": "pause", "ports": [p]}
        if sidecar:
            spec = {"initContainers": [{**c, "name": "side", "restartPolicy": "Always"}]}
            return make_pod(name, node=node, containers=[{"name": "c", "image": "pause"}], spec=spec)
        return make_pod(name, node=node, containers=[c])

    existing = [
        pod("a", 8080, "::", node="n0"),
        pod("b", 8080, "10.0.0.1", node="n1"),
        pod("c", 53, None, "UDP", node="n2"),
        pod("d", 9090, None, None, node="n3", sidecar=True),
    ]
    incoming = [
        pod("any8080", 8080),
        pod("ip8080", 8080, "10.0.0.1"),
        pod("v6", 8080, "::"),
        pod("tcp53", 53),
        pod("udp53", 53, "10.0.0.9", "UDP"),
        pod("side9090", 9090, sidecar=True),
    ]
    return Case("host-ports", nodes, _default_ns(), existing, incoming)


def pinned_by_name() -> Case:
    """Required node affinity by ``metadata.name``: PreFilterResult narrows the candidates (or empties them)."""
    nodes = _zones(5, cpu="2")

    def pinned(name: str, *targets: str, cpu: str = "500m") -> Wire:
        terms = [
            {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [t]}]} for t in targets
        ]
        aff = {
            "nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": terms}}
        }
        return make_pod(name, requests={"cpu": cpu}, spec={"affinity": aff})

    incoming = [
        pinned("one", "n1"),
        pinned("two", "n1", "n3"),
        pinned("full", "n1", cpu="1800m"),  # n1 now lacks cpu: fits nowhere
        pinned("ghost", "gone"),  # names no node at all
        pinned("again", "n3", "n4"),
    ]
    return Case("pinned-by-name", nodes, _default_ns(), [], incoming)


EDGE_CASES: dict[str, Callable[[], Case]] = {
    "spread-empty-selector": spread_empty_selector,
    "spread-nil-selector": spread_nil_selector,
    "default-spreading-controllers": default_spreading_controllers,
    "default-spreading-zoneless": default_spreading_zoneless,
    "list-default-constraints": list_default_constraints,
    "image-names": image_names,
    "pod-count-and-best-effort": pod_count_and_best_effort,
    "scalar-resources-scoring": scalar_resources_scoring,
    "balanced-three-resources": balanced_three_resources,
    "hard-pod-affinity-weight": hard_pod_affinity_weight,
    "ignore-preferred-terms": ignore_preferred_terms,
    "host-ports": host_ports,
    "pinned-by-name": pinned_by_name,
}

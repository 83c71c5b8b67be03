"""scheduler_perf's node, pod and namespace templates as Kubernetes wire dicts.

Each template is the YAML file upstream ships (test/integration/scheduler_perf/templates),
written as a dict so the benchmark needs no files. Objects are then "created" the way the
in-process API server would: ``generateName`` gets 5 random characters (from a seeded RNG, so
runs repeat), nodes get the ``kubernetes.io/hostname`` label, capacity is copied into
allocatable when unset (``SetDefaults_NodeStatus``), and pods get the two 300 s NoExecute
tolerations of the DefaultTolerationSeconds admission plugin (still enabled upstream).

Every created pod gets its own spec dicts, as the informer's decoded objects do, so the memory
figures count one manifest per pod (``Pod.raw`` keeps it).
"""

from __future__ import annotations

import copy
import random
from collections.abc import Callable
from typing import Any

from kubesched.api.affinity import SPREAD_CONSTRAINT_FIELDS

#: k8s.io/apimachinery/pkg/util/rand.String's alphabet (no vowels, no confusable digits).
NAME_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"
HOSTNAME_LABEL = "kubernetes.io/hostname"
ZONE_LABEL = "topology.kubernetes.io/zone"
PAUSE_IMAGE = "registry.k8s.io/pause:3.10.1"

WireDict = dict[str, Any]
#: the ResourceClaimTemplate the DRA workloads' pods name (``resource_templates``)
CLAIM_TEMPLATE_NAME = "test-claim-template"


class NameGenerator:
    """``generateName`` + 5 random characters, unique per (kind, namespace) as the API server keeps it."""

    def __init__(self, seed: int = 0) -> None:
        self.rng = random.Random(seed)
        self.used: dict[tuple[str, str], set[str]] = {}

    def __call__(self, prefix: str, kind: str = "Pod", namespace: str = "") -> str:
        used = self.used.setdefault((kind, namespace), set())
        choices = self.rng.choices
        while True:  # a clash is an AlreadyExists upstream; the client tries another name
            name = prefix + "".join(choices(NAME_ALPHABET, k=5))
            if name not in used:
                used.add(name)
                return name


# ---- nodes ---------------------------------------------------------------------------------
def _capacity(pods: str, cpu: str = "4", memory: str = "32Gi") -> dict[str, str]:
    return {"pods": pods, "cpu": cpu, "memory": memory}


def base_node(op_index: int) -> WireDict:
    """makeBaseNode: the node createNodes builds when it has no nodeTemplatePath."""
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"generateName": f"node-{op_index}-"},
        "spec": {},
        "status": {
            "capacity": _capacity("110"),
            "allocatable": _capacity("110"),
            "phase": "Running",
            "conditions": [{"type": "Ready", "status": "True"}],
        },
    }


def _template_node(metadata: WireDict, pods: str = "110", spec: WireDict | None = None) -> WireDict:
    """A node of scheduler_perf's node templates: Ready and Running, with capacity only
    (allocatable defaulted from it); the templates differ in metadata, spec and pod capacity."""
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": metadata,
        "spec": spec or {},
        "status": {
            "capacity": _capacity(pods),
            "conditions": [{"status": "True", "type": "Ready"}],
            "phase": "Running",
        },
    }


def node_default() -> WireDict:
    """templates/node-default.yaml: capacity only (allocatable defaulted from it)."""
    return _template_node({"generateName": "scheduler-perf-"})


def node_with_name() -> WireDict:
    """templates/node-with-name.yaml: the one node SchedulingDaemonset's pods all target."""
    return _template_node({"name": "scheduler-perf-node", "labels": {HOSTNAME_LABEL: "scheduler-perf-node"}}, pods="90000")


def node_with_taint() -> WireDict:
    """templates/node-with-taint.yaml: a NoSchedule taint the pods do not tolerate."""
    return _template_node({"generateName": "taint-node-"}, spec={"taints": [{"key": "foo", "effect": "NoSchedule"}]})


def node_with_dra_test_driver() -> WireDict:
    """dra/templates/node-with-dra-test-driver.yaml: named ``scheduler-perf-dra-<index>`` (the
    node's index in the workload), which createResourceDriver's ``nodes`` glob matches."""
    return _template_node({"name": "scheduler-perf-dra-{index}"})


NODE_TEMPLATES: dict[str, Callable[[], WireDict]] = {
    "node-default": node_default,
    "node-with-name": node_with_name,
    "node-with-taint": node_with_taint,
    "node-with-dra-test-driver": node_with_dra_test_driver,
}


def instantiate_node(
    template: WireDict,
    names: NameGenerator,
    label: tuple[str, str] | None = None,
    index: int = 0,
) -> WireDict:
    """One created node: a name, the hostname label, allocatable defaulted, one prepared label.

    ``template`` must be a fresh dict (a NODE_TEMPLATES factory's result): it is filled in
    place, which is cheaper than a deep copy per node. ``label`` is labelNodePrepareStrategy's
    (key, value) for this node, chosen round-robin by the caller. A fixed name may hold
    ``{index}`` (Go's ``{{ .Index }}``): the node's index among the workload's nodes.
    """
    node = template
    md = node["metadata"]
    if not md.get("name"):
        md["name"] = names(md.pop("generateName"), "Node")
    else:
        md.pop("generateName", None)
        md["name"] = md["name"].replace("{index}", str(index))
    labels = md.setdefault("labels", {})
    labels[HOSTNAME_LABEL] = md["name"]
    if label is not None:
        labels[label[0]] = label[1]
    status = node.setdefault("status", {})
    if status.get("allocatable") is None and status.get("capacity") is not None:
        status["allocatable"] = dict(status["capacity"])
    return node


def round_robin(key: str, values: list[str]) -> Callable[[int], tuple[str, str]]:
    """labelNodePrepareStrategy: the i-th created node gets values[i % len(values)]."""
    return lambda i: (key, values[i % len(values)])


# ---- pods ----------------------------------------------------------------------------------
def _std_container(
    cpu: str = "100m", memory: str = "500Mi", limits: bool = True, port: bool = True
) -> WireDict:
    """The pause container every scheduler_perf pod template uses (requests = limits)."""
    res: WireDict = {"requests": {"cpu": cpu, "memory": memory}}
    if limits:
        res["limits"] = {"cpu": cpu, "memory": memory}
    c: WireDict = {"image": PAUSE_IMAGE, "name": "pause", "resources": res}
    if port:
        c["ports"] = [{"containerPort": 80}]
    return c


def _bare_container() -> WireDict:
    return {"image": PAUSE_IMAGE, "name": "pause"}


def _term(color: str, key: str, namespaces: list[str] | None = None, ns_selector: bool = False) -> WireDict:
    t: WireDict = {"labelSelector": {"matchLabels": {"color": color}}, "topologyKey": key}
    if ns_selector:
        t["namespaceSelector"] = {"matchLabels": {"team": "devops"}}
    elif namespaces is not None:
        t["namespaces"] = namespaces
    return t


SCHED_NS = ["sched-1", "sched-0"]


def _pod(generate_name: str, spec: WireDict, labels: dict[str, str] | None = None) -> WireDict:
    md: WireDict = {"generateName": generate_name}
    if labels:
        md["labels"] = labels
    return {"apiVersion": "v1", "kind": "Pod", "metadata": md, "spec": spec}


def pod_default() -> WireDict:
    """templates/pod-default.yaml (also makeBasePod / MakePodSpec)."""
    return _pod("pod-", {"containers": [_std_container()]})


def _inter_pod_affinity(
    generate_name: str, kind: str, color: str, topology_key: str, *, preferred: bool = False
) -> WireDict:
    """A pod labelled ``color`` whose one ``kind`` (podAffinity, podAntiAffinity) term, required
    or preferred with weight 1, selects the pods of that color in SCHED_NS."""
    term = _term(color, topology_key, SCHED_NS)
    if preferred:
        rules = {"preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 1, "podAffinityTerm": term}]}
    else:
        rules = {"requiredDuringSchedulingIgnoredDuringExecution": [term]}
    return _pod(generate_name, {"affinity": {kind: rules}, "containers": [_std_container()]}, {"color": color})


def pod_with_pod_anti_affinity() -> WireDict:
    return _inter_pod_affinity("anti-affinity-pod-", "podAntiAffinity", "green", HOSTNAME_LABEL)


def pod_with_pod_anti_affinity_label() -> WireDict:
    return _pod("anti-affinity-matching-pod-", {"containers": [_std_container()]}, {"color": "green"})


def pod_with_pod_affinity() -> WireDict:
    return _inter_pod_affinity("affinity-pod-", "podAffinity", "blue", ZONE_LABEL)


def pod_with_preferred_pod_affinity() -> WireDict:
    return _inter_pod_affinity("preferred-affinity-pod-", "podAffinity", "red", HOSTNAME_LABEL, preferred=True)


def pod_with_preferred_pod_anti_affinity() -> WireDict:
    return _inter_pod_affinity(
        "preferred-anti-affinity-pod-", "podAntiAffinity", "yellow", HOSTNAME_LABEL, preferred=True
    )


def pod_with_node_affinity() -> WireDict:
    expr = {"key": ZONE_LABEL, "operator": "In", "values": ["zone1", "zone2"]}
    aff = {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [{"matchExpressions": [expr]}]
            }
        }
    }
    return _pod("node-affinity-", {"affinity": aff, "containers": [_std_container()]})


def _spreading(when: str) -> WireDict:
    tsc = {
        "maxSkew": 5,
        "topologyKey": ZONE_LABEL,
        "whenUnsatisfiable": when,
        "labelSelector": {"matchLabels": {"color": "blue"}},
    }
    return _pod(
        "spreading-pod-",
        {"topologySpreadConstraints": [tsc], "containers": [_std_container()]},
        {"color": "blue"},
    )


def pod_with_topology_spreading() -> WireDict:
    return _spreading("DoNotSchedule")


def pod_with_preferred_topology_spreading() -> WireDict:
    return _spreading("ScheduleAnyway")


def pod_affinity_ns_selector() -> WireDict:
    aff = {
        "podAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": [_term("blue", ZONE_LABEL, ns_selector=True)]
        }
    }
    return _pod("affinity-pod-", {"affinity": aff, "containers": [_std_container()]}, {"color": "blue"})


def pod_anti_affinity_ns_selector() -> WireDict:
    aff = {
        "podAntiAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": [
                _term("green", HOSTNAME_LABEL, ns_selector=True)
            ]
        }
    }
    return _pod("anti-affinity-pod-", {"affinity": aff, "containers": [_std_container()]}, {"color": "green"})


def pod_preferred_affinity_ns_selector() -> WireDict:
    pref = [{"weight": 1, "podAffinityTerm": _term("red", HOSTNAME_LABEL, ns_selector=True)}]
    aff = {"podAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": pref}}
    return _pod(
        "preferred-affinity-pod-", {"affinity": aff, "containers": [_std_container()]}, {"color": "red"}
    )


def pod_preferred_anti_affinity_ns_selector() -> WireDict:
    pref = [{"weight": 1, "podAffinityTerm": _term("green", HOSTNAME_LABEL, ns_selector=True)}]
    aff = {"podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": pref}}
    return _pod("anti-affinity-pod-", {"affinity": aff, "containers": [_std_container()]}, {"color": "green"})


def daemonset_pod() -> WireDict:
    """templates/daemonset-pod.yaml: pinned by matchFields to scheduler-perf-node; no requests, no ports."""
    field = {"key": "metadata.name", "operator": "In", "values": ["scheduler-perf-node"]}
    aff = {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [{"matchFields": [field]}]
            }
        }
    }
    return _pod("daemonset-", {"affinity": aff, "containers": [_bare_container()]})


def pod_low_priority() -> WireDict:
    spec = {"terminationGracePeriodSeconds": 0, "containers": [_std_container("900m")]}
    return _pod("pod-", spec)


def pod_high_priority() -> WireDict:
    return _pod("pod-", {"priority": 10, "containers": [_std_container("3000m")]})


def pod_high_priority_large_cpu() -> WireDict:
    """A 9-CPU request: it never fits a 4-CPU node, and preempting cannot help."""
    return _pod("pod-h-", {"priority": 10, "containers": [_std_container("9", limits=False)]})


def pod_with_label() -> WireDict:
    return _pod("pod-", {"containers": [_bare_container()]}, {"app": "scheduler-perf"})


def pod_with_node_inclusion_policy() -> WireDict:
    """The upstream file spells NodeAffinityPolicy/NodeTaintsPolicy capitalised; see normalise_keys."""
    tsc = {
        "maxSkew": 1,
        "topologyKey": HOSTNAME_LABEL,
        "whenUnsatisfiable": "DoNotSchedule",
        "NodeAffinityPolicy": "Honor",
        "NodeTaintsPolicy": "Honor",
        "labelSelector": {"matchLabels": {"foo": "bar"}},
    }
    spec = {"topologySpreadConstraints": [tsc], "containers": [_std_container()]}
    return _pod("spreading-pod-with-node-inclusion-policy-", spec, {"foo": "bar"})


def pod_with_secret_volume() -> WireDict:
    """templates/pod-with-secret-volume.yaml: pod-default's container and a secret volume
    (no volume plugin reads it)."""
    spec = {"containers": [_std_container()], "volumes": [{"name": "secret", "secret": {"secretName": "secret"}}]}
    return _pod("secret-volume-", spec)


def pod_with_claim_template() -> WireDict:
    """dra/templates/pod-with-claim-template.yaml: a pause container (no requests) using the
    claim the resourceclaim controller makes from ``test-claim-template``."""
    container = {**_bare_container(), "resources": {"claims": [{"name": "resource"}]}}
    spec = {
        "containers": [container],
        "resourceClaims": [{"name": "resource", "resourceClaimTemplateName": CLAIM_TEMPLATE_NAME}],
    }
    return _pod("test-dra", spec)


POD_TEMPLATES: dict[str, Callable[[], WireDict]] = {
    "pod-default": pod_default,
    "pod-with-pod-anti-affinity": pod_with_pod_anti_affinity,
    "pod-with-pod-anti-affinity-label": pod_with_pod_anti_affinity_label,
    "pod-with-pod-affinity": pod_with_pod_affinity,
    "pod-with-preferred-pod-affinity": pod_with_preferred_pod_affinity,
    "pod-with-preferred-pod-anti-affinity": pod_with_preferred_pod_anti_affinity,
    "pod-with-node-affinity": pod_with_node_affinity,
    "pod-with-topology-spreading": pod_with_topology_spreading,
    "pod-with-preferred-topology-spreading": pod_with_preferred_topology_spreading,
    "pod-affinity-ns-selector": pod_affinity_ns_selector,
    "pod-anti-affinity-ns-selector": pod_anti_affinity_ns_selector,
    "pod-preferred-affinity-ns-selector": pod_preferred_affinity_ns_selector,
    "pod-preferred-anti-affinity-ns-selector": pod_preferred_anti_affinity_ns_selector,
    "daemonset-pod": daemonset_pod,
    "pod-low-priority": pod_low_priority,
    "pod-high-priority": pod_high_priority,
    "pod-high-priority-large-cpu": pod_high_priority_large_cpu,
    "pod-with-label": pod_with_label,
    "pod-with-node-inclusion-policy": pod_with_node_inclusion_policy,
    "pod-with-secret-volume": pod_with_secret_volume,
    "pod-with-claim-template": pod_with_claim_template,
}

# ---- Go's case-insensitive JSON field matching ---------------------------------------------
#: Field names of the pod spec parts a template may spell in another case (encoding/json
#: matches struct fields case-insensitively; Python dict lookups do not).
_SPREAD_BY_LOWER = {f.lower(): f for f in SPREAD_CONSTRAINT_FIELDS}


def normalise_keys(pod: WireDict) -> WireDict:
    """Map mis-cased topologySpreadConstraints keys to their JSON names, as Go's decoder would."""
    spec = pod.get("spec") or {}
    tscs = spec.get("topologySpreadConstraints")
    if not tscs:
        return pod
    fixed = []
    for c in tscs:
        out: WireDict = {}
        for k, v in c.items():
            out[_SPREAD_BY_LOWER.get(k.lower(), k)] = v
        fixed.append(out)
    pod = {**pod, "spec": {**spec, "topologySpreadConstraints": fixed}}
    return pod


# ---- what the API server adds on create ----------------------------------------------------
DEFAULT_TOLERATIONS = (
    {
        "key": "node.kubernetes.io/not-ready",
        "operator": "Exists",
        "effect": "NoExecute",
        "tolerationSeconds": 300,
    },
    {
        "key": "node.kubernetes.io/unreachable",
        "operator": "Exists",
        "effect": "NoExecute",
        "tolerationSeconds": 300,
    },
)


def fresh(obj: Any) -> Any:
    """A structural copy of plain JSON data (much cheaper than copy.deepcopy)."""
    if isinstance(obj, dict):
        return {k: fresh(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [fresh(v) for v in obj]
    return obj


class PodFactory:
    """Creates pods from one template: a generated name, the namespace, a copy of the spec."""

    def __init__(self, template: WireDict, names: NameGenerator, *, default_tolerations: bool = True) -> None:
        tpl = normalise_keys(copy.deepcopy(template))
        spec = tpl["spec"]
        if default_tolerations:
            spec["tolerations"] = [*spec.get("tolerations", []), *DEFAULT_TOLERATIONS]
        self.spec = spec
        self.generate_name = tpl["metadata"]["generateName"]
        self.labels = tpl["metadata"].get("labels")
        self.names = names

    def __call__(self, namespace: str) -> WireDict:
        md: WireDict = {"name": self.names(self.generate_name, "Pod", namespace), "namespace": namespace}
        if self.labels:
            md["labels"] = dict(self.labels)
        return {"apiVersion": "v1", "kind": "Pod", "metadata": md, "spec": fresh(self.spec)}


# ---- namespaces and other objects ----------------------------------------------------------
def namespace(name: str, labels: dict[str, str] | None = None) -> WireDict:
    md: WireDict = {"name": name}
    if labels:
        md["labels"] = labels
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": md}


NAMESPACE_WITH_LABELS = {"team": "devops"}  # templates/namespace-with-labels.yaml


def service() -> WireDict:
    """templates/service.yaml: DefaultTopologySpreading derives its spread selector from it."""
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"generateName": "service-"},
        "spec": {"selector": {"app": "scheduler-perf"}, "ports": [{"port": 80, "targetPort": 8000}]},
    }

"""The benchmark's templates are scheduler_perf's, field for field, and created as the API server would."""

from __future__ import annotations

from kubesched.api.objects import Node, Pod
from kubesched.api.resources import CPU, MEMORY, PODS
from kubesched.bench import templates as T
from kubesched.bench.runner import WorkloadRun
from kubesched.bench.workloads import get

GI = 1024**3
MI = 1024**2


def make(template: str, ns: str = "ns", seed: int = 0) -> Pod:
    return Pod.parse(T.PodFactory(T.POD_TEMPLATES[template](), T.NameGenerator(seed))(ns))


def test_pod_default_is_upstream_pod_default():
    wire = T.pod_default()
    assert wire["metadata"] == {"generateName": "pod-"}
    (c,) = wire["spec"]["containers"]
    assert c["name"] == "pause" and c["image"].startswith("registry.k8s.io/pause:3.10")
    assert c["ports"] == [{"containerPort": 80}]
    assert c["resources"] == {
        "requests": {"cpu": "100m", "memory": "500Mi"},
        "limits": {"cpu": "100m", "memory": "500Mi"},
    }
    pod = make("pod-default")
    assert pod.requests[CPU] == 100 and pod.requests[MEMORY] == 500 * MI
    assert pod.host_ports == ()  # containerPort only: NodePorts has nothing to check
    assert pod.priority == 0 and pod.namespace == "ns"


def test_pod_names_generate_name_plus_five_seeded_chars():
    first = T.PodFactory(T.pod_default(), T.NameGenerator(7))("ns")["metadata"]["name"]
    gen1, gen2 = T.NameGenerator(7), T.NameGenerator(7)
    names1 = [gen1("pod-") for _ in range(50)]
    names2 = [gen2("pod-") for _ in range(50)]
    assert names1 == names2  # seeded: runs repeat
    assert first == names1[0]
    for n in names1:
        assert n.startswith("pod-") and len(n) == len("pod-") + 5
        assert set(n[4:]) <= set(T.NAME_ALPHABET)
    assert len(set(names1)) == 50


def test_name_clash_draws_again():
    gen = T.NameGenerator(0)
    gen.used[("Pod", "ns")] = set()
    first = gen("p-", "Pod", "ns")
    gen.rng.seed(0)  # the same draw again: must not repeat the name
    assert gen("p-", "Pod", "ns") != first


def test_node_templates_capacity_and_hostname():
    names = T.NameGenerator(0)
    for tpl, prefix in ((T.base_node(3), "node-3-"), (T.node_default(), "scheduler-perf-")):
        wire = T.instantiate_node(tpl, names)
        node = Node.parse(wire)
        assert node.name.startswith(prefix) and len(node.name) == len(prefix) + 5
        assert node.labels == {T.HOSTNAME_LABEL: node.name}
        assert (
            node.allocatable[CPU] == 4000
            and node.allocatable[MEMORY] == 32 * GI
            and node.allocatable[PODS] == 110
        )
    # node-default.yaml sets capacity only: allocatable is defaulted from it
    wire = T.instantiate_node(T.node_default(), names)
    assert wire["status"]["allocatable"] == {"pods": "110", "cpu": "4", "memory": "32Gi"}
    named = Node.parse(T.instantiate_node(T.node_with_name(), names))
    assert named.name == "scheduler-perf-node" and named.allocatable[PODS] == 90000
    tainted = Node.parse(T.instantiate_node(T.node_with_taint(), names))
    assert tainted.name.startswith("taint-node-")
    assert [(t.key, t.effect) for t in tainted.taints] == [("foo", "NoSchedule")]


def test_zone_labels_round_robin_in_creation_order():
    (w,) = get("TopologySpreading")
    run = WorkloadRun(w, w.resolve(0.002))
    run.create_nodes(w.ops[0], 0)
    zones = [n.labels[T.ZONE_LABEL] for n in run.snapshot.nodes]
    assert len(zones) == 10
    assert zones == [f"moon-{i % 3 + 1}" for i in range(10)]
    assert all(n.labels[T.HOSTNAME_LABEL] == n.name for n in run.snapshot.nodes)


def test_affinity_templates():
    anti = make("pod-with-pod-anti-affinity")
    assert anti.labels == {"color": "green"}
    (term,) = anti.pod_anti_affinity.required
    assert term.topology_key == T.HOSTNAME_LABEL
    assert set(term.namespaces) == {"sched-0", "sched-1"}
    aff = make("pod-with-pod-affinity")
    assert aff.pod_affinity.required[0].topology_key == T.ZONE_LABEL
    pref = make("pod-with-preferred-pod-affinity")
    assert pref.pod_affinity.preferred[0].weight == 1
    ns_sel = T.pod_anti_affinity_ns_selector()["spec"]["affinity"]["podAntiAffinity"]
    term_wire = ns_sel["requiredDuringSchedulingIgnoredDuringExecution"][0]
    assert term_wire["namespaceSelector"] == {"matchLabels": {"team": "devops"}}
    assert "namespaces" not in term_wire
    assert make("pod-with-pod-anti-affinity-label").pod_anti_affinity is None


def test_spreading_templates():
    hard = make("pod-with-topology-spreading")
    (c,) = hard.spread_constraints
    assert (c.max_skew, c.topology_key, c.when_unsatisfiable) == (5, T.ZONE_LABEL, "DoNotSchedule")
    soft = make("pod-with-preferred-topology-spreading")
    assert soft.spread_constraints[0].when_unsatisfiable == "ScheduleAnyway"


def test_node_inclusion_policy_capitalised_keys_are_honoured():
    wire = T.pod_with_node_inclusion_policy()
    raw = wire["spec"]["topologySpreadConstraints"][0]
    assert "NodeTaintsPolicy" in raw and "NodeAffinityPolicy" in raw  # as the upstream file spells them
    fixed = T.normalise_keys(wire)["spec"]["topologySpreadConstraints"][0]
    assert fixed["nodeTaintsPolicy"] == "Honor" and fixed["nodeAffinityPolicy"] == "Honor"
    assert "NodeTaintsPolicy" not in fixed
    assert raw is wire["spec"]["topologySpreadConstraints"][0]  # the template itself is untouched
    (c,) = make("pod-with-node-inclusion-policy").spread_constraints
    assert (c.max_skew, c.topology_key) == (1, T.HOSTNAME_LABEL)
    assert c.node_taints_policy == "Honor"  # the default is Ignore: the key was read
    assert c.node_affinity_policy == "Honor"


def test_priority_and_large_cpu_templates():
    high = make("pod-high-priority")
    assert high.priority == 10 and high.requests[CPU] == 3000
    low = make("pod-low-priority")
    assert low.priority == 0 and low.requests[CPU] == 900
    huge = make("pod-high-priority-large-cpu")
    assert huge.priority == 10 and huge.requests[CPU] == 9000 and huge.requests[MEMORY] == 500 * MI
    assert huge.name.startswith("pod-h-")


def test_daemonset_and_label_pods_have_no_requests():
    ds = make("daemonset-pod")
    assert ds.requests.get(CPU, 0) == 0 and ds.host_ports == ()
    terms = ds.node_affinity.required
    assert terms is not None
    labelled = make("pod-with-label")
    assert labelled.labels == {"app": "scheduler-perf"} and labelled.requests.get(CPU, 0) == 0


def test_default_tolerations_added_and_spec_per_pod():
    f = T.PodFactory(T.pod_default(), T.NameGenerator(0))
    a, b = f("ns"), f("ns")
    assert a["spec"] == b["spec"] and a["spec"] is not b["spec"]  # one manifest per pod, as decoded
    assert a["spec"]["containers"] is not b["spec"]["containers"]
    assert a["metadata"]["name"] != b["metadata"]["name"]
    pod = Pod.parse(a)
    keys = {(t.key, t.effect, t.toleration_seconds) for t in pod.tolerations}
    assert keys == {
        ("node.kubernetes.io/not-ready", "NoExecute", 300),
        ("node.kubernetes.io/unreachable", "NoExecute", 300),
    }
    bare = T.PodFactory(T.pod_default(), T.NameGenerator(0), default_tolerations=False)("ns")
    assert "tolerations" not in bare["spec"]

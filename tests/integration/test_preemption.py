"""kube-scheduler v1.36 test/integration/scheduler/preemption/preemption_test.go, through the whole
cycle (see integration_testlib): the existing pods are scheduled first, then the preemptor.

Upstream runs each table with SchedulerAsyncPreemption on and off; kubesched preempts
synchronously (both give these outcomes), so each case runs once. A victim counts as evicted when
it is deleted for the preemptor (upstream waits for its deletion and its DisruptionTarget
condition, which the live scheduler's tests check).

TestPreemption: 6 of 6, with upstream's tokenFilter (tests/integration/token_filter.py) at
PreFilter and Filter. TestNonPreemption: 2 of 2. TestDisablePreemption: 1 of 1.
TestPodPriorityResolution: 3 of 3; where the API server refuses a pod naming a PriorityClass that
does not exist, kubesched loads it with a warning naming the class (cluster dumps often leave
PriorityClasses out; documented in docs/cli.md). TestPreemptionStarvation: 1 of 1.
TestPDBInPreemption: 3 of 3; the PDBs carry the status the disruption controller would give them
(``disruptionsAllowed`` = healthy pods - minAvailable), which is what kube-scheduler reads.
TestPreferNominatedNode: 2 of 2; upstream sets the preemptor's status.nominatedNodeName when it
is popped, here the file gives it.
Left out: TestPreemptionRaces and TestAsyncPreemption (goroutine races and the asynchronous
preemption's API calls; kubesched preempts synchronously), TestNominatedNodeCleanUp (victims that
stay while their graceful termination runs; offline, a deleted pod is gone at once) and
TestReadWriteOncePodPreemption (volumes).
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from integration_testlib import container, node, placed, pod, profile_config, schedule, unschedulable_message

from kubesched.load import load_cluster

LOW, MEDIUM, HIGH = 100, 200, 300
TOKEN_FILTER = str(Path(__file__).with_name("token_filter.py"))
NODE1 = node("node1", {"node": "node1"}, capacity={"cpu": "500m", "memory": "500"})
NS = "preemption"


def pause(name: str, priority: int, cpu: str = "100m", memory: str = "100", **kw) -> dict:
    """initPausePod: requests only, in the test namespace."""
    return pod(name, NS, containers=[container(requests={"cpu": cpu, "memory": memory})], priority=priority, **kw)


def anti(key: str, value: str) -> dict:
    return {
        "podAntiAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": [
                {"labelSelector": {"matchExpressions": [{"key": key, "operator": "In", "values": [value]}]}, "topologyKey": "node"}
            ]
        }
    }


def token_config(tokens: int, enable_pre_filter: bool, unresolvable: bool) -> dict:
    """tokenFilter at PreFilter and Filter, after the default plugins."""
    args = {"tokens": tokens, "enablePreFilter": enable_pre_filter, "unresolvable": unresolvable}
    return profile_config(
        {"preFilter": {"enabled": [{"name": "filter-plugin"}]}, "filter": {"enabled": [{"name": "filter-plugin"}]}},
        [{"name": "filter-plugin", "args": args}],
    )


MAX_TOKENS = 1000
PREEMPTION = [
    # name, tokens, enablePreFilter, unresolvable, existing pods, preemptor, preempted indexes
    (
        "basic pod preemption",
        MAX_TOKENS, False, False,
        [pause("victim-pod", LOW, "400m", "200")],
        pause("preemptor-pod", HIGH, "300m", "200"),
        {0},
    ),
    (
        "basic pod preemption with filter",
        1, False, False,
        [pause("victim-pod", LOW, "200m", "200")],
        pause("preemptor-pod", HIGH, "200m", "200"),
        {0},
    ),
    (
        "basic pod preemption with preFilter",
        1, True, False,
        [pause("victim-pod", LOW, "200m", "200")],
        pause("preemptor-pod", HIGH, "200m", "200"),
        {0},
    ),
    (
        "basic pod preemption with unresolvable filter",
        1, False, True,
        [pause("victim-pod", LOW, "200m", "200")],
        pause("preemptor-pod", HIGH, "200m", "200"),
        set(),
    ),
    (
        "preemption is performed to satisfy anti-affinity",
        MAX_TOKENS, False, False,
        [
            pause("pod-0", MEDIUM, labels={"pod": "p0"}),
            pause("pod-1", LOW, labels={"pod": "p1"}, affinity=anti("pod", "preemptor")),
        ],
        pause("preemptor-pod", HIGH, labels={"pod": "preemptor"}, affinity=anti("pod", "p0")),
        {0, 1},
    ),
    (
        "preemption is not performed when anti-affinity is not satisfied",
        MAX_TOKENS, False, False,
        [
            pause("pod-0", MEDIUM, labels={"pod": "p0"}),
            pause("pod-1", HIGH, labels={"pod": "p1"}, affinity=anti("pod", "preemptor")),
        ],
        pause("preemptor-pod", HIGH, labels={"pod": "preemptor"}, affinity=anti("pod", "p0")),
        set(),
    ),
]


@pytest.mark.parametrize(
    ("tokens", "pre_filter", "unresolvable", "existing", "preemptor", "preempted"),
    [c[1:] for c in PREEMPTION],
    ids=[c[0] for c in PREEMPTION],
)
def test_preemption(
    tokens: int, pre_filter: bool, unresolvable: bool, existing: list[dict], preemptor: dict, preempted: set[int], tmp_path: Path
) -> None:
    result = schedule(
        tmp_path,
        [NODE1, *existing],
        then=[[preemptor]],
        config=token_config(tokens, pre_filter, unresolvable),
        plugin_paths=[TOKEN_FILTER],
    )
    for p in existing:
        assert placed(result, p) == "node1"  # every existing pod ran first
    entry = result.entry(f"{NS}/preemptor-pod")
    assert entry is not None
    victims = {v["pod"] for v in entry["victims"]}
    assert victims == {f"{NS}/{existing[i]['metadata']['name']}" for i in preempted}
    if preempted:
        assert entry["nominated_node"] == "node1"  # the preemptor got status.nominatedNodeName
    else:
        assert entry["nominated_node"] is None


@pytest.mark.parametrize(
    ("policy", "nominated"),
    [(None, True), ("Never", False)],
    ids=["pod preemption will happen", "pod preemption will not happen"],
)
def test_non_preemption(policy: str | None, nominated: bool, tmp_path: Path) -> None:
    """TestNonPreemption: preemptionPolicy Never keeps the preemptor from nominating a node."""
    victim = pause("victim-pod", LOW, "400m", "200")
    preemptor = pause("preemptor-pod", HIGH, "300m", "200", **({"preemptionPolicy": policy} if policy else {}))
    result = schedule(tmp_path, [NODE1, victim], then=[[preemptor]])
    entry = result.entry(f"{NS}/preemptor-pod")
    assert entry is not None
    assert (entry["nominated_node"] == "node1") is nominated
    assert bool(entry["victims"]) is nominated


def test_disable_preemption(tmp_path: Path) -> None:
    """TestDisablePreemption: DefaultPreemption disabled at PostFilter; the preemptor stays
    unschedulable and is not nominated."""
    config = profile_config({"postFilter": {"disabled": [{"name": "DefaultPreemption"}]}})
    victim = pause("victim-pod", LOW, "400m", "200")
    preemptor = pause("preemptor-pod", HIGH, "300m", "200")
    result = schedule(tmp_path, [NODE1, victim], then=[[preemptor]], config=config)
    assert unschedulable_message(result, preemptor) == "0/1 nodes are available: 1 Insufficient cpu."
    entry = result.entry(f"{NS}/preemptor-pod")
    assert entry is not None and entry["nominated_node"] is None and not entry["victims"]


@pytest.mark.parametrize(
    ("class_name", "expected"),
    [("system-node-critical", 2_000_001_000), ("system-cluster-critical", 2_000_000_000)],
    ids=["SystemNodeCritical priority class", "SystemClusterCritical priority class"],
)
def test_pod_priority_resolution(class_name: str, expected: int, tmp_path: Path) -> None:
    """TestPodPriorityResolution: the built-in system classes exist without being in the input;
    the pod gets their value and is scheduled."""
    p = pod(f"pod-{class_name}", "kube-system", priorityClassName=class_name)
    f = tmp_path / "c.yaml"
    f.write_text(yaml.safe_dump_all([NODE1, p]))
    (loaded,) = load_cluster([str(f)]).pods
    assert loaded.priority == expected
    assert placed(schedule(tmp_path / "run", [NODE1, p]), p) == "node1"


def test_pod_priority_resolution_unknown_class(tmp_path: Path) -> None:
    """"Invalid priority class should result in error": the API server refuses the pod (no
    PriorityClass with name foo was found); kubesched names the class in a warning."""
    p = pod("pod3-system-cluster-critical", "kube-system", priorityClassName="foo")
    f = tmp_path / "c.yaml"
    f.write_text(yaml.safe_dump_all([NODE1, p]))
    objs = load_cluster([str(f)])
    assert len(objs.warnings) == 1
    assert 'spec.priorityClassName "foo" names no PriorityClass in the input' in objs.warnings[0]


def test_preemption_starvation(tmp_path: Path) -> None:
    """TestPreemptionStarvation: 5 medium pods fill the node, 5 more stay pending; the high
    priority preemptor is nominated and scheduled before any of the pending ones takes the room
    its preemption made."""
    running = [pause(f"rpod-{i}", MEDIUM, terminationGracePeriodSeconds=0) for i in range(5)]
    pending = [pause(f"ppod-{i}", MEDIUM, terminationGracePeriodSeconds=0) for i in range(5)]
    preemptor = pause("preemptor-pod", HIGH, "300m", "200")
    result = schedule(tmp_path, [NODE1, *running], then=[pending, [preemptor]])
    assert all(placed(result, p) == "node1" or result.entry(f"{NS}/{p['metadata']['name']}")["victims"] == [] for p in running)
    entry = result.entry(f"{NS}/preemptor-pod")
    assert entry is not None and entry["nominated_node"] == "node1" and entry["node"] == "node1"
    assert len(entry["victims"]) == 3  # 300m cpu on a 500m node filled by five 100m pods
    for p in pending:
        assert placed(result, p) is None  # no pending pod took the room made for the preemptor


# -- TestPDBInPreemption --------------------------------------------------------------------------


def min_available_pdb(name: str, min_available: int, labels: dict[str, str], healthy: int) -> dict:
    """mkMinAvailablePDB, with the status the disruption controller sets for ``healthy`` pods."""
    return {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": name, "namespace": NS},
        "spec": {"minAvailable": min_available, "selector": {"matchLabels": labels}},
        "status": {
            "currentHealthy": healthy,
            "desiredHealthy": min_available,
            "expectedPods": healthy,
            "disruptionsAllowed": max(healthy - min_available, 0),
        },
    }


def pdb_node(i: int) -> dict:
    return node(f"node-{i}", capacity={"cpu": "500m", "memory": "500"})


def on_node(p: dict, node_name: str) -> dict:
    p["spec"]["nodeName"] = node_name
    return p


PDB_CASES = [
    (
        "A non-PDB violating pod is preempted despite its higher priority",
        1,
        [min_available_pdb("pdb-1", 2, {"foo": "bar"}, 2)],
        [
            pause("low-pod1", LOW, labels={"foo": "bar"}),
            pause("low-pod2", LOW, labels={"foo": "bar"}),
            pause("mid-pod3", MEDIUM),
        ],
        pause("preemptor-pod", HIGH, "300m", "200"),
        {2},
    ),
    (
        "A node without any PDB violating pods is preferred for preemption",
        2,
        [min_available_pdb("pdb-1", 2, {"foo": "bar"}, 1)],
        [
            on_node(pause("low-pod1", LOW, labels={"foo": "bar"}), "node-1"),
            on_node(pause("mid-pod2", MEDIUM), "node-2"),
        ],
        pause("preemptor-pod", HIGH, "500m", "200"),
        {1},
    ),
    (
        "A node with fewer PDB violating pods is preferred for preemption",
        3,
        [min_available_pdb("pdb-1", 2, {"foo1": "bar"}, 1), min_available_pdb("pdb-2", 2, {"foo2": "bar"}, 5)],
        [
            on_node(pause("low-pod1", LOW, labels={"foo1": "bar"}), "node-1"),
            on_node(pause("mid-pod1", MEDIUM), "node-1"),
            on_node(pause("low-pod2", LOW, labels={"foo2": "bar"}), "node-2"),
            on_node(pause("mid-pod2", MEDIUM, labels={"foo2": "bar"}), "node-2"),
            on_node(pause("low-pod4", LOW, labels={"foo2": "bar"}), "node-3"),
            on_node(pause("low-pod5", LOW, labels={"foo2": "bar"}), "node-3"),
            on_node(pause("low-pod6", LOW, labels={"foo2": "bar"}), "node-3"),
        ],
        pause("preemptor-pod", HIGH, "500m", "400"),
        # node-3: no PDB violated, and its victims have lower priority than node-2's
        {4, 5, 6},
    ),
]


@pytest.mark.parametrize(("nodes", "pdbs", "existing", "preemptor", "preempted"), [c[1:] for c in PDB_CASES], ids=[c[0] for c in PDB_CASES])
def test_pdb_in_preemption(
    nodes: int, pdbs: list[dict], existing: list[dict], preemptor: dict, preempted: set[int], tmp_path: Path
) -> None:
    result = schedule(tmp_path, [*(pdb_node(i) for i in range(1, nodes + 1)), *existing, *pdbs], then=[[preemptor]])
    entry = result.entry(f"{NS}/preemptor-pod")
    assert entry is not None
    assert {v["pod"] for v in entry["victims"]} == {f"{NS}/{existing[i]['metadata']['name']}" for i in preempted}
    assert entry["nominated_node"] is not None and entry["node"] == entry["nominated_node"]


# -- TestPreferNominatedNode ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("existing_on", "running_node"),
    [("node-2", "node-1"), ("node-1", "node-2")],
    ids=[
        "nominated node released all resource, preemptor is scheduled to the nominated node",
        "nominated node cannot pass all the filters, preemptor should find a different node",
    ],
)
def test_prefer_nominated_node(existing_on: str, running_node: str, tmp_path: Path) -> None:
    """The preemptor comes nominated to node-1: it lands there when node-1 passes every filter,
    else on another node that does."""
    low = on_node(pause("low-pod", LOW), existing_on)
    preemptor = pause("preemptor-pod", HIGH, "500m", "200")
    preemptor["status"] = {"nominatedNodeName": "node-1"}
    result = schedule(tmp_path, [pdb_node(1), pdb_node(2), low], then=[[preemptor]])
    assert placed(result, preemptor) == running_node
    entry = result.entry(f"{NS}/preemptor-pod")
    assert entry is not None and not entry["victims"]

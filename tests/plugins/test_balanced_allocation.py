"""NodeResourcesBalancedAllocation: upstream balanced_allocation_test.go (v1.36, scoring the change in
balance), the pre-1.36 table for the balance score itself, args, and a reference property check."""

from __future__ import annotations

import itertools
import math
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kubesched.errors import InputError
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.status import Code
from kubesched.plugins.noderesources.balanced_allocation import BalancedAllocation
from kubesched.plugins.noderesources.strategies import (
    ResourceSpec,
    allocation_matrices,
    balanced_resource_score,
    balanced_resource_scorer,
    pod_request_list,
)
from kubesched.testing import as_pod, build_snapshot, make_node, make_pod

GPU = "nvidia.com/gpu"
_uid = itertools.count()


def make_node_(name: str, milli_cpu: int, memory: int, extended: dict[str, int] | None = None) -> dict:
    """Upstream makeNode(name, milliCPU, memory, extendedResource)."""
    alloc = {
        "cpu": f"{milli_cpu}m",
        "memory": str(memory),
        **{k: str(v) for k, v in (extended or {}).items()},
    }
    return make_node(name, pods=None, extra=alloc)


def spec_pod(containers: list[dict[str, str]], node: str | None = None) -> dict:
    n = next(_uid)
    conts = [
        {"name": f"c{i}", "image": "pause", "resources": {"requests": r}} for i, r in enumerate(containers)
    ]
    return make_pod(f"p{n}", containers=conts, node=node, uid=f"uid-{n}")


def cpu_and_memory_and_gpu(node: str | None = "node1") -> dict:
    return spec_pod([{"cpu": "1000m", "memory": "2000"}, {"cpu": "2000m", "memory": "3000", GPU: "3"}], node)


def cpu_only(node: str | None = "node1") -> dict:
    return spec_pod([{"cpu": "1000m", "memory": "0"}, {"cpu": "2000m", "memory": "0"}], node)


def memory_only(node: str | None = "node1") -> dict:
    return spec_pod([{"cpu": "0", "memory": "2000"}, {"cpu": "0", "memory": "3000"}], node)


def cpu_and_memory(node: str | None = "node2") -> dict:
    return spec_pod([{"cpu": "1000m", "memory": "2000"}, {"cpu": "2000m", "memory": "3000"}], node)


DEFAULT = [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}]
WITH_GPU = [*DEFAULT, {"name": GPU, "weight": 1}]
SCALAR8 = {GPU: 8}


def score_nodes(
    args: dict[str, Any], p: dict, nodes: list[dict], pods: list[dict], *, run_pre_score: bool = True
) -> list[int] | str:
    snap = build_snapshot(nodes, pods)
    plugin = BalancedAllocation(args)
    state = CycleState()
    pp = as_pod(p)
    rows = np.arange(snap.n)
    if run_pre_score:
        status = plugin.pre_score(state, pp, snap, rows)
        if status is not None and status.code == Code.Skip:
            return "Skip"
    return plugin.score(state, pp, snap, rows).tolist()


BALANCED = [
    ("nothing scheduled, nothing requested, skip in PreScore",
     make_pod("be", containers=[]), [make_node_("node1", 4000, 10000), make_node_("node2", 4000, 10000)], [],
     DEFAULT, True, "Skip"),
    # node1: cpu 0 -> 75%, mem 0 -> 50%: 100 -> 87 => 68; node2: 50%/50%: 100 -> 100 => 75
    ("nothing scheduled, resources requested, differently sized nodes",
     cpu_and_memory(), [make_node_("node1", 4000, 10000), make_node_("node2", 6000, 10000)], [],
     DEFAULT, True, [68, 75]),
    # node1: cpu 30% -> 60%, mem 0 -> 25%: 85 -> 82 => 73; node2: cpu 30 -> 60, mem 25 -> 50: 97 -> 95 => 74
    ("resources requested, pods scheduled with resources",
     cpu_and_memory(), [make_node_("node1", 10000, 20000), make_node_("node2", 10000, 20000)],
     [cpu_only(), cpu_and_memory()], DEFAULT, True, [73, 74]),
    # node2: cpu 30 -> 60, mem 10 -> 20: 90 -> 80 => 70
    ("resources requested, pods scheduled with resources, differently sized nodes",
     cpu_and_memory(), [make_node_("node1", 10000, 20000), make_node_("node2", 10000, 50000)],
     [cpu_only(), cpu_and_memory()], DEFAULT, True, [73, 70]),
    # node1: cpu 100%, mem 0 -> 100%: 50 -> 100 => 100; node2: cpu 0, mem 0 -> 100%: 100 -> 50 => 50
    ("resources requested, pods scheduled with resources, nodes to reach min/max score",
     memory_only(), [make_node_("node1", 3000, 5000), make_node_("node2", 3000, 5000)], [cpu_only()],
     DEFAULT, True, [100, 50]),
    # node1: cpu 50 -> 100, mem 0: 75 -> 50 => 62; node2: cpu 50 -> 100, mem 50: 100 -> 75 => 62
    ("requested resources at node capacity",
     cpu_only(), [make_node_("node1", 6000, 10000), make_node_("node2", 6000, 10000)], [cpu_only(), cpu_and_memory()],
     DEFAULT, True, [62, 62]),
    # node1: gpu 3 -> 4 of 8: 69 -> 70 => 75; node2: gpu 0 -> 1 of 8: 62 -> 65 => 76
    ("include scalar resource on a node for balanced resource allocation",
     spec_pod([{"memory": "0", GPU: "1"}]),
     [make_node_("node1", 3500, 40000, SCALAR8), make_node_("node2", 3500, 40000, SCALAR8)],
     [cpu_and_memory(), cpu_and_memory_and_gpu()], WITH_GPU, True, [75, 76]),
    # gpu not requested by the pod: ignored; both nodes 100 -> 63 => 56
    ("node without the scalar resource should skip the scalar resource",
     cpu_and_memory(), [make_node_("node1", 3500, 40000, SCALAR8), make_node_("node2", 3500, 40000)], [],
     WITH_GPU, True, [56, 56]),
    ("resources requested, pods scheduled with resources if PreScore not called",
     cpu_and_memory(), [make_node_("node1", 10000, 20000), make_node_("node2", 10000, 20000)],
     [cpu_only(), cpu_and_memory()], DEFAULT, False, [73, 74]),
    ("best-effort pod without PreScore scores 0",
     make_pod("be2", containers=[{"name": "c", "image": "pause"}]),
     [make_node_("node1", 4000, 10000), make_node_("node2", 4000, 10000)], [cpu_only()], DEFAULT, False, [0, 0]),
    # Requests for resources outside the list do not count: still best effort.
    ("pod requesting only unlisted resources is skipped",
     spec_pod([{GPU: "1"}]), [make_node_("node1", 4000, 10000, SCALAR8)], [], DEFAULT, True, "Skip"),
]  # fmt: skip


@pytest.mark.parametrize(("name", "p", "nodes", "pods", "resources", "run_pre_score", "expected"), BALANCED)
def test_balanced_allocation(
    name: str, p: dict, nodes: list, pods: list, resources: list, run_pre_score: bool, expected: Any
) -> None:
    got = score_nodes({"resources": resources}, p, nodes, pods, run_pre_score=run_pre_score)
    assert got == expected


# The balance score itself, checked against the pre-1.36 table where it was the whole plugin score.
LEGACY_BALANCE = [
    ("nothing scheduled, resources requested, differently sized nodes",
     cpu_and_memory(), [make_node_("node1", 4000, 10000), make_node_("node2", 6000, 10000)], [], DEFAULT, [87, 100]),
    ("resources requested, pods scheduled with resources",
     cpu_and_memory(), [make_node_("node1", 10000, 20000), make_node_("node2", 10000, 20000)],
     [cpu_only(), cpu_and_memory()], DEFAULT, [82, 95]),
    ("resources requested, pods scheduled with resources, differently sized nodes",
     cpu_and_memory(), [make_node_("node1", 10000, 20000), make_node_("node2", 10000, 50000)],
     [cpu_only(), cpu_and_memory()], DEFAULT, [82, 80]),
    ("requested resources at node capacity",
     cpu_only(), [make_node_("node1", 6000, 10000), make_node_("node2", 6000, 10000)], [cpu_only(), cpu_and_memory()],
     DEFAULT, [50, 75]),
    ("include scalar resource on a node for balanced resource allocation",
     spec_pod([{"memory": "0", GPU: "1"}]),
     [make_node_("node1", 3500, 40000, SCALAR8), make_node_("node2", 3500, 40000, SCALAR8)],
     [cpu_and_memory(), cpu_and_memory_and_gpu()], WITH_GPU, [70, 65]),
    ("node without the scalar resource should skip the scalar resource",
     cpu_and_memory(), [make_node_("node1", 3500, 40000, SCALAR8), make_node_("node2", 3500, 40000)], [],
     WITH_GPU, [63, 63]),
]  # fmt: skip


@pytest.mark.parametrize(("name", "p", "nodes", "pods", "resources", "expected"), LEGACY_BALANCE)
def test_balance_score_with_pod(
    name: str, p: dict, nodes: list, pods: list, resources: list, expected: list
) -> None:
    snap = build_snapshot(nodes, pods)
    specs = [ResourceSpec(r["name"], r["weight"]) for r in resources]
    reqs = pod_request_list(as_pod(p), specs, non_zero=False)
    requested, _, allocatable = allocation_matrices(snap, np.arange(snap.n), specs, reqs, non_zero=False)
    assert balanced_resource_score(requested, allocatable).tolist() == expected


def test_uses_real_requests_not_scoring_defaults() -> None:
    """useRequested: containers without requests add nothing (Fit would count 100m/200Mi)."""
    nodes = [make_node_("node1", 1000, 1000 * 1024 * 1024), make_node_("node2", 1000, 1000 * 1024 * 1024)]
    no_requests = make_pod("x", node="node1", containers=[{"name": "c", "image": "pause"}])
    p = spec_pod([{"cpu": "500m", "memory": "100Mi"}])
    # Real requests: 0/0 (100) -> 50%/10% (80) => 65 on both nodes. With the scoring defaults node1
    # would go 10%/20% (95) -> 60%/30% (85) => 70.
    assert score_nodes({}, p, nodes, [no_requests]) == [65, 65]


def test_rows_subset() -> None:
    nodes = [make_node_("node1", 10000, 20000), make_node_("node2", 10000, 50000)]
    snap = build_snapshot(nodes, [cpu_only(), cpu_and_memory()])
    plugin = BalancedAllocation()
    state = CycleState()
    pp = as_pod(cpu_and_memory())
    plugin.pre_score(state, pp, snap, np.arange(2))
    assert plugin.score(state, pp, snap, np.asarray([1, 0])).tolist() == [70, 73]


@pytest.mark.parametrize(
    ("args", "path"),
    [
        ({"resources": [{"name": "cpu", "weight": 2}]}, "resources[0].weight"),
        ({"resources": [{"name": "cpu", "weight": 1}, {"name": "cpu", "weight": 1}]}, "resources[1].name"),
    ],
)
def test_invalid_args(args: dict, path: str) -> None:
    with pytest.raises(InputError) as e:
        BalancedAllocation(args)
    assert e.value.path == path


def test_default_args() -> None:
    assert BalancedAllocation(None).resources == (ResourceSpec("cpu", 1), ResourceSpec("memory", 1))
    assert BalancedAllocation({"resources": [{"name": GPU}]}).resources == (ResourceSpec(GPU, 1),)


# ---- vectorised scorer vs a straight per-node port of the Go code ---------------------------


def _go_balance(req: list[int], alloc: list[int]) -> int:
    fractions: list[float] = []
    total = 0.0
    for r, a in zip(req, alloc, strict=True):
        if a == 0:
            continue
        f = float(r) / float(a)
        f = min(f, 1.0)
        total += f
        fractions.append(f)
    std = 0.0
    if len(fractions) == 2:
        std = abs((fractions[0] - fractions[1]) / 2)
    elif len(fractions) > 2:
        mean = total / float(len(fractions))
        s = 0.0
        for f in fractions:
            s = s + (f - mean) * (f - mean)
        std = math.sqrt(s / float(len(fractions)))
    return int((1 - std) * 100.0)


rows_strategy = st.integers(1, 5).flatmap(
    lambda nres: st.lists(
        st.tuples(
            st.lists(st.integers(0, 10**6), min_size=nres, max_size=nres),
            st.lists(st.integers(0, 10**6), min_size=nres, max_size=nres),
            st.lists(st.integers(0, 10**6), min_size=nres, max_size=nres),
        ),
        min_size=1,
        max_size=8,
    )
)


@settings(max_examples=300, deadline=None)
@given(rows_strategy)
def test_balanced_scorer_matches_reference(rows: list) -> None:
    allocated = np.asarray([r[0] for r in rows], np.int64).T
    pod_req = np.asarray([r[1] for r in rows], np.int64).T
    allocatable = np.asarray([r[2] for r in rows], np.int64).T
    allocatable = np.where(
        np.asarray([r[2] for r in rows]).T % 3 == 0, 0, allocatable
    )  # some resources absent
    allocated = np.where(allocatable == 0, 0, allocated)
    requested = allocated + np.where(allocatable == 0, 0, pod_req)
    got = balanced_resource_scorer(requested, allocated, allocatable).tolist()
    want = []
    for j in range(requested.shape[1]):
        with_pod = _go_balance(requested[:, j].tolist(), allocatable[:, j].tolist())
        without = _go_balance(allocated[:, j].tolist(), allocatable[:, j].tolist())
        want.append(50 + (50 + with_pod - without) // 2)
    assert got == want

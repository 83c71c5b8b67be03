"""NodeResourcesFit: upstream fit_test.go, least/most_allocated_test.go and
requested_to_capacity_ratio_test.go tables, plus vectorised-vs-reference property checks."""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kubesched.errors import InputError
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.status import Code
from kubesched.plugins.noderesources import is_extended_resource_name, is_scalar_resource_name
from kubesched.plugins.noderesources.fit import NodeResourcesFit
from kubesched.plugins.noderesources.strategies import (
    ResourceSpec,
    broken_linear,
    least_allocated_scorer,
    most_allocated_scorer,
    requested_to_capacity_ratio_scorer,
)
from kubesched.testing import build_snapshot, make_node, make_pod, run_filter, run_score

EXT_A = "example.com/aaa"
EXT_B = "example.com/bbb"
K8S_IO_A = "kubernetes.io/something"
K8S_IO_B = "subdomain.kubernetes.io/something"
HUGE_A = "hugepages-2Mi"
DRA_EXT = "extended.resource.dra.io/something"
EXT_RES = "abc.com/xyz"

OK = None
U = Code.Unschedulable
UU = Code.UnschedulableAndUnresolvable

_uid = itertools.count()


# ---- builders ----------------------------------------------------------------------------------


def container(requests: dict[str, Any] | None = None, name: str = "c", **extra: Any) -> dict:
    c: dict[str, Any] = {"name": name, "image": "pause", **extra}
    if requests is not None:
        c["resources"] = {"requests": {k: str(v) for k, v in requests.items()}}
    return c


def res(cpu_m: int = 0, mem: int = 0, **scalars: int) -> dict[str, Any]:
    """framework.Resource{MilliCPU, Memory, ...} as a container request list (as newResourcePod)."""
    out: dict[str, Any] = {"cpu": f"{cpu_m}m", "memory": str(mem)}
    for k, v in scalars.items():
        out[_SCALAR_KEYS.get(k, k)] = str(v)
    return out


_SCALAR_KEYS = {"ext_a": EXT_A, "ext_b": EXT_B, "k8s_a": K8S_IO_A, "k8s_b": K8S_IO_B, "huge": HUGE_A,
                "dra": DRA_EXT, "eph": "ephemeral-storage"}  # fmt: skip


def pod(
    *containers: dict | None,
    init: tuple[dict, ...] = (),
    overhead: dict[str, Any] | None = None,
    pod_level: dict[str, Any] | None = None,
    node: str | None = None,
) -> dict:
    """A pod whose containers request the given lists (None = a container without requests)."""
    conts = [container(c, name=f"c{i}") for i, c in enumerate(containers)]
    spec: dict[str, Any] = {}
    if init:
        spec["initContainers"] = [
            container(c, name=f"i{i}") if "restartPolicy" not in c else c for i, c in enumerate(init)
        ]
    if overhead:
        spec["overhead"] = {k: str(v) for k, v in overhead.items()}
    if pod_level:
        spec["resources"] = {"requests": {k: str(v) for k, v in pod_level.items()}}
    n = next(_uid)
    return make_pod(f"p{n}", containers=conts, spec=spec, node=node, uid=f"uid-{n}")


def node(name: str, alloc: dict[str, Any], images: list | None = None) -> dict:
    return make_node(name, pods=None, extra=alloc, images=images)


def cap(cpu: str | None = None, memory: str | None = None, **other: str) -> dict[str, str]:
    """st.MakeNode().Capacity(...): cpu in cores as upstream writes it ("4000" = 4000 cores)."""
    out = {k: v for k, v in (("cpu", cpu), ("memory", memory)) if v is not None}
    out.update({_SCALAR_KEYS.get(k, k): v for k, v in other.items()})
    return out


def req(**r: str) -> dict[str, str]:
    """st.MakePod().Req(...)."""
    return {_SCALAR_KEYS.get(k, k): v for k, v in r.items()}


# Upstream makeAllocatableResources(10, 20, 32, 5, 20, 5).
NODE_ALLOC = {"cpu": "10m", "memory": "20", "pods": "32", EXT_A: "5", "ephemeral-storage": "20", HUGE_A: "5"}


def filter_one(
    plugin: NodeResourcesFit, p: dict, alloc: dict, existing: list[dict]
) -> tuple[Code | None, tuple]:
    snap = build_snapshot(
        [node("n1", alloc)], [{**e, "spec": {**e["spec"], "nodeName": "n1"}} for e in existing]
    )
    (st_,) = run_filter(plugin, p, snap)
    return (None if st_.ok else st_.code), st_.reasons


# ---- Filter: TestEnoughRequests -----------------------------------------------------------------

ENOUGH_REQUESTS = [
    # name, pod, existing pod on the node, args, expected code, reasons
    ("no resources requested always fits", pod(), [pod(res(10, 20))], {}, OK, ()),
    ("too many resources fails", pod(res(1, 1)), [pod(res(10, 20))], {}, U, ("Insufficient cpu", "Insufficient memory")),
    ("too many resources fails due to init container cpu",
     pod(res(1, 1), init=(res(3, 1),)), [pod(res(8, 19))], {}, U, ("Insufficient cpu",)),
    ("too many resources fails due to highest init container cpu",
     pod(res(1, 1), init=(res(3, 1), res(2, 1))), [pod(res(8, 19))], {}, U, ("Insufficient cpu",)),
    ("too many resources fails due to init container memory",
     pod(res(1, 1), init=(res(1, 3),)), [pod(res(9, 19))], {}, U, ("Insufficient memory",)),
    ("too many resources fails due to highest init container memory",
     pod(res(1, 1), init=(res(1, 3), res(1, 2))), [pod(res(9, 19))], {}, U, ("Insufficient memory",)),
    ("init container fits because it's the max, not sum, of containers and init containers",
     pod(res(1, 1), init=(res(1, 1),)), [pod(res(9, 19))], {}, OK, ()),
    ("multiple init containers fit because it's the max, not sum, of containers and init containers",
     pod(res(1, 1), init=(res(1, 1), res(1, 1))), [pod(res(9, 19))], {}, OK, ()),
    ("both resources fit", pod(res(1, 1)), [pod(res(5, 5))], {}, OK, ()),
    ("one resource memory fits", pod(res(2, 1)), [pod(res(9, 5))], {}, U, ("Insufficient cpu",)),
    ("one resource cpu fits", pod(res(1, 2)), [pod(res(5, 19))], {}, U, ("Insufficient memory",)),
    ("equal edge case", pod(res(5, 1)), [pod(res(5, 19))], {}, OK, ()),
    ("equal edge case for init container", pod(res(4, 1), init=(res(5, 1),)), [pod(res(5, 19))], {}, OK, ()),
    ("extended resource fits", pod(res(ext_a=1)), [pod(res())], {}, OK, ()),
    ("extended resource fits for init container", pod(res(), init=(res(ext_a=1),)), [pod(res())], {}, OK, ()),
    ("extended resource capacity enforced",
     pod(res(1, 1, ext_a=10)), [pod(res(0, 0, ext_a=0))], {}, UU, (f"Insufficient {EXT_A}",)),
    ("extended resource capacity enforced for init container",
     pod(res(), init=(res(1, 1, ext_a=10),)), [pod(res(0, 0, ext_a=0))], {}, UU, (f"Insufficient {EXT_A}",)),
    ("extended resource allocatable enforced",
     pod(res(1, 1, ext_a=1)), [pod(res(0, 0, ext_a=5))], {}, U, (f"Insufficient {EXT_A}",)),
    ("extended resource allocatable enforced for init container",
     pod(res(), init=(res(1, 1, ext_a=1),)), [pod(res(0, 0, ext_a=5))], {}, U, (f"Insufficient {EXT_A}",)),
    ("extended resource allocatable enforced for multiple containers",
     pod(res(1, 1, ext_a=3), res(1, 1, ext_a=3)), [pod(res(0, 0, ext_a=2))], {}, UU, (f"Insufficient {EXT_A}",)),
    ("extended resource allocatable admits multiple init containers",
     pod(res(), init=(res(1, 1, ext_a=3), res(1, 1, ext_a=3))), [pod(res(0, 0, ext_a=2))], {}, OK, ()),
    ("extended resource allocatable enforced for multiple init containers",
     pod(res(), init=(res(1, 1, ext_a=6), res(1, 1, ext_a=3))), [pod(res(0, 0, ext_a=2))], {}, UU,
     (f"Insufficient {EXT_A}",)),
    ("extended resource allocatable enforced for unknown resource",
     pod(res(1, 1, ext_b=1)), [pod(res())], {}, UU, (f"Insufficient {EXT_B}",)),
    ("extended resource allocatable enforced for unknown resource for init container",
     pod(res(), init=(res(1, 1, ext_b=1),)), [pod(res())], {}, UU, (f"Insufficient {EXT_B}",)),
    ("kubernetes.io resource capacity enforced",
     pod(res(1, 1, k8s_a=10)), [pod(res())], {}, UU, (f"Insufficient {K8S_IO_A}",)),
    ("kubernetes.io resource capacity enforced for init container",
     pod(res(), init=(res(1, 1, k8s_b=10),)), [pod(res())], {}, UU, (f"Insufficient {K8S_IO_B}",)),
    ("hugepages resource capacity enforced",
     pod(res(1, 1, huge=10)), [pod(res(0, 0, huge=0))], {}, UU, (f"Insufficient {HUGE_A}",)),
    ("hugepages resource capacity enforced for init container",
     pod(res(), init=(res(1, 1, huge=10),)), [pod(res(0, 0, huge=0))], {}, UU, (f"Insufficient {HUGE_A}",)),
    ("hugepages resource allocatable enforced for multiple containers",
     pod(res(1, 1, huge=3), res(1, 1, huge=3)), [pod(res(0, 0, huge=2))], {}, UU, (f"Insufficient {HUGE_A}",)),
    ("skip checking ignored extended resource",
     pod(res(1, 1, ext_b=1)), [pod(res())], {"ignoredResources": [EXT_B]}, OK, ()),
    ("resources + pod overhead fits",
     pod(res(1, 1), overhead={"cpu": "3m", "memory": "13"}), [pod(res(5, 5))], {}, OK, ()),
    ("requests + overhead does not fit for memory",
     pod(res(1, 1), overhead={"cpu": "1m", "memory": "15"}), [pod(res(5, 5))], {}, U, ("Insufficient memory",)),
    ("skip checking ignored extended resource via resource groups",
     pod(res(1, 1, ext_b=1, k8s_a=1)), [pod(res())], {"ignoredResourceGroups": ["example.com"]}, UU,
     (f"Insufficient {K8S_IO_A}",)),
    ("skip checking extended resource request with quantity zero via resource groups",
     pod(res(1, 1, ext_a=0)), [pod(res(0, 0, ext_a=6))], {}, OK, ()),
    ("skip checking resource request with quantity zero",
     pod({EXT_A: "1"}), [pod(res(20, 30, ext_a=1))], {}, OK, ()),
    ("both pod-level and container-level resources fit",
     pod(res(1, 1), pod_level={"cpu": "1m", "memory": "2"}), [pod(res(5, 5))], {}, OK, ()),
    ("pod-level cpu resource not fit",
     pod(res(1, 1), pod_level={"cpu": "7m", "memory": "2"}), [pod(res(5, 5))], {}, U, ("Insufficient cpu",)),
    ("pod-level memory resource not fit",
     pod(res(1, 1), pod_level={"cpu": "3m", "memory": "2"}), [pod(res(5, 19))], {}, U, ("Insufficient memory",)),
    ("pod-level hugepages resource fit", pod(pod_level={"cpu": "3m", "memory": "2", HUGE_A: "5"}), [], {}, OK, ()),
    ("both pod-level and container-level hugepages resource fit",
     pod(res(1, 1, huge=3), pod_level={"cpu": "3m", "memory": "2", HUGE_A: "5"}), [], {}, OK, ()),
    ("pod-level hugepages resource not fit",
     pod(pod_level={"cpu": "3m", "memory": "2", HUGE_A: "10"}), [], {}, UU, (f"Insufficient {HUGE_A}",)),
    ("one pod-level cpu resource fits and all init and non-init containers resources fit",
     pod(res(1, 1), init=(res(1, 1),), pod_level={"cpu": "3m", "memory": "2"}), [pod(res(5, 19))], {}, U,
     ("Insufficient memory",)),
    # DRAExtendedResource: with no DeviceClass naming the resource nothing is delegated to DRA.
    ("extended resource backed by DRA not enabled",
     pod(res(1, 1, dra=1)), [pod(res())], {}, UU, (f"Insufficient {DRA_EXT}",)),
]  # fmt: skip


@pytest.mark.parametrize(("name", "p", "existing", "args", "code", "reasons"), ENOUGH_REQUESTS)
def test_enough_requests(
    name: str, p: dict, existing: list, args: dict, code: Code | None, reasons: tuple
) -> None:
    got_code, got_reasons = filter_one(NodeResourcesFit(args), p, NODE_ALLOC, existing)
    assert (got_code, got_reasons) == (code, reasons)


# ---- Filter: TestNotEnoughRequests / TestStorageRequests / TestRestartableInitContainers --------

NOT_ENOUGH_PODS_ALLOC = {
    "cpu": "10m",
    "memory": "20",
    "pods": "1",
    EXT_A: "0",
    "ephemeral-storage": "0",
    HUGE_A: "0",
}

NOT_ENOUGH_REQUESTS = [
    ("even without specified resources, predicate fails when there's no space for additional pod",
     pod(), [pod(res(10, 20))]),
    ("even if both resources fit, predicate fails when there's no space for additional pod",
     pod(res(1, 1)), [pod(res(5, 5))]),
    ("even for equal edge case, predicate fails when there's no space for additional pod",
     pod(res(5, 1)), [pod(res(5, 19))]),
    ("even for equal edge case, predicate fails when there's no space for additional pod due to init container",
     pod(res(5, 1), init=(res(5, 1),)), [pod(res(5, 19))]),
]  # fmt: skip


@pytest.mark.parametrize(("name", "p", "existing"), NOT_ENOUGH_REQUESTS)
def test_not_enough_requests(name: str, p: dict, existing: list) -> None:
    got = filter_one(NodeResourcesFit(), p, NOT_ENOUGH_PODS_ALLOC, existing)
    assert got == (U, ("Too many pods",))


STORAGE_REQUESTS = [
    ("empty storage requested, and pod fits", pod(res(1, 1)), [pod(res(2, 10))], OK, ()),
    ("storage ephemeral local storage request exceeds allocatable",
     pod(res(eph=25)), [pod(res(2, 2))], UU, ("Insufficient ephemeral-storage",)),
    ("ephemeral local storage is sufficient", pod(res(eph=5)), [pod(res(2, 2, eph=10))], OK, ()),
    ("pod fits", pod(res(eph=10)), [pod(res(2, 2))], OK, ()),
]  # fmt: skip


@pytest.mark.parametrize(("name", "p", "existing", "code", "reasons"), STORAGE_REQUESTS)
def test_storage_requests(name: str, p: dict, existing: list, code: Code | None, reasons: tuple) -> None:
    assert filter_one(NodeResourcesFit(), p, NODE_ALLOC, existing) == (code, reasons)


def sidecar(requests: dict | None) -> dict:
    return container(requests, name="restartable-init", restartPolicy="Always")


# SidecarContainers is GA in 1.36: the "feature disabled" PreFilter rejections cannot happen.
RESTARTABLE_INIT = [
    ("allow pod without restartable init containers", pod(None), OK, ()),
    ("allow pod with restartable init containers", pod(None, init=(sidecar(None),)), OK, ()),
    ("allow pod if the total requested resources do not exceed the node's allocatable resources",
     pod({"cpu": "1m"}, init=(sidecar({"cpu": "1m"}),)), OK, ()),
    ("not allow pod if the total requested resources do exceed the node's allocatable resources",
     pod({"cpu": "1m"}, init=(sidecar({"cpu": "2m"}),)), UU, ("Insufficient cpu",)),
]  # fmt: skip


@pytest.mark.parametrize(("name", "p", "code", "reasons"), RESTARTABLE_INIT)
def test_restartable_init_containers(name: str, p: dict, code: Code | None, reasons: tuple) -> None:
    alloc = {"cpu": "2m", "memory": "0", "pods": "1", EXT_A: "0", "ephemeral-storage": "0", HUGE_A: "0"}
    assert filter_one(NodeResourcesFit(), p, alloc, []) == (code, reasons)


def test_filter_without_prefilter_is_an_error() -> None:
    snap = build_snapshot([node("n1", NODE_ALLOC)])
    from kubesched.testing import as_pod

    result = NodeResourcesFit().filter(CycleState(), as_pod(pod()), snap, np.arange(1))
    status = result.status_at(0)
    assert status.code == Code.Error
    assert status.reasons == ('error reading "PreFilterNodeResourcesFit" from cycleState: not found',)


def test_filter_vectorised_over_rows_and_reason_order() -> None:
    """All shortfalls of a row are reported, in fitsRequest order (pods, cpu, memory, storage, scalars)."""
    nodes = [
        node(
            "full",
            {
                "cpu": "1",
                "memory": "1Gi",
                "pods": "1",
                "ephemeral-storage": "1Gi",
                "b.io/x": "1",
                "a.io/x": "1",
            },
        ),
        node(
            "big",
            {
                "cpu": "8",
                "memory": "8Gi",
                "pods": "10",
                "ephemeral-storage": "8Gi",
                "b.io/x": "4",
                "a.io/x": "4",
            },
        ),
        node("small", {"cpu": "1", "memory": "1Gi", "pods": "10", "ephemeral-storage": "1Gi", "b.io/x": "4"}),
    ]
    existing = [pod(res(500, 0), node="full")]
    snap = build_snapshot(nodes, existing)
    p = pod({"cpu": "2", "memory": "2Gi", "ephemeral-storage": "2Gi", "b.io/x": "2", "a.io/x": "2"})
    got = run_filter(NodeResourcesFit(), p, snap)
    assert [(s.code, s.reasons) for s in got] == [
        (UU, ("Too many pods", "Insufficient cpu", "Insufficient memory", "Insufficient ephemeral-storage",
              "Insufficient a.io/x", "Insufficient b.io/x")),
        (Code.Success, ()),
        (UU, ("Insufficient cpu", "Insufficient memory", "Insufficient ephemeral-storage", "Insufficient a.io/x")),
    ]  # fmt: skip
    # A subset of rows, in any order, gets the same per-row verdicts.
    from kubesched.testing import as_pod

    state = CycleState()
    plugin = NodeResourcesFit()
    pp = as_pod(p)
    plugin.pre_filter(state, pp, snap)
    result = plugin.filter(state, pp, snap, np.asarray([2, 1]))
    assert [result.status_at(i).reasons for i in range(2)] == [got[2].reasons, ()]


def test_ignored_resources_apply_to_extended_resources_only() -> None:
    """ignoredResourceGroups "hugepages-2Mi" / ignoredResources on native names change nothing."""
    plugin = NodeResourcesFit(
        {"ignoredResources": [K8S_IO_A, HUGE_A], "ignoredResourceGroups": ["kubernetes.io"]}
    )
    got = filter_one(plugin, pod(res(1, 1, k8s_a=1, huge=9)), NODE_ALLOC, [])
    assert got == (UU, (f"Insufficient {HUGE_A}", f"Insufficient {K8S_IO_A}"))


def test_non_scalar_names_are_not_checked() -> None:
    """A request for a name that is neither native nor a valid extended resource is not tracked."""
    got = filter_one(NodeResourcesFit(), pod({"foo": "5", "cpu": "1m"}), NODE_ALLOC, [])
    assert got == (OK, ())


@pytest.mark.parametrize(
    ("name", "extended", "scalar"),
    [
        ("cpu", False, False), ("example.com/aaa", True, True), ("kubernetes.io/something", False, True),
        ("subdomain.kubernetes.io/something", False, True), ("hugepages-2Mi", False, True),
        ("attachable-volumes-csi-x", False, True), ("requests.example.com/x", False, False),
        ("Example.com/x", False, False), ("a/b/c", False, False), ("foo", False, False), ("nvidia.com/gpu", True, True),
    ],
)  # fmt: skip
def test_resource_name_predicates(name: str, extended: bool, scalar: bool) -> None:
    assert (is_extended_resource_name(name), is_scalar_resource_name(name)) == (extended, scalar)


# ---- args --------------------------------------------------------------------------------------


def test_default_args() -> None:
    a = NodeResourcesFit(None).fit_args
    assert a.strategy == "LeastAllocated"
    assert a.resources == (ResourceSpec("cpu", 1), ResourceSpec("memory", 1))
    assert NodeResourcesFit({"scoringStrategy": {"type": "MostAllocated"}}).fit_args.resources == a.resources


@pytest.mark.parametrize(
    ("args", "path"),
    [
        ({"scoringStrategy": {"type": "LeastAllocated", "resources": [{"name": "memory", "weight": -1}, {"name": "cpu", "weight": 1}]}},
         "scoringStrategy.resources[0].weight"),
        ({"scoringStrategy": {"type": "MostAllocated", "resources": [{"name": "memory", "weight": 1}, {"name": "cpu", "weight": 101}]}},
         "scoringStrategy.resources[1].weight"),
        ({"scoringStrategy": {"type": "Fastest"}}, "scoringStrategy.type"),
        ({"scoringStrategy": {"resources": [{"name": "cpu"}]}}, "scoringStrategy.type"),
        ({"scoringStrategy": {"type": "RequestedToCapacityRatio"}}, "scoringStrategy.requestedToCapacityRatio"),
        ({"scoringStrategy": {"type": "RequestedToCapacityRatio", "requestedToCapacityRatio": {"shape": [
            {"utilization": 50, "score": 1}, {"utilization": 10, "score": 2}]}}},
         "scoringStrategy.requestedToCapacityRatio.shape[1].utilization"),
        ({"scoringStrategy": {"type": "RequestedToCapacityRatio", "requestedToCapacityRatio": {"shape": [
            {"utilization": 50, "score": 11}]}}},
         "scoringStrategy.requestedToCapacityRatio.shape[0].score"),
        ({"ignoredResourceGroups": ["example.com/aaa"]}, "ignoredResourceGroups[0]"),
        ({"ignoredResources": ["a/b/c"]}, "ignoredResources[0]"),
    ],
)  # fmt: skip
def test_invalid_args(args: dict, path: str) -> None:
    with pytest.raises(InputError) as e:
        NodeResourcesFit(args)
    assert e.value.path == path


def test_zero_weight_defaults_to_one() -> None:
    """v1 defaulting turns weight 0 into 1 (upstream's unit test skips defaulting and expects an error)."""
    args = {
        "scoringStrategy": {
            "type": "LeastAllocated",
            "resources": [{"name": "memory", "weight": 1}, {"name": "cpu", "weight": 0}],
        }
    }
    assert NodeResourcesFit(args).fit_args.resources == (ResourceSpec("memory", 1), ResourceSpec("cpu", 1))


# ---- Score -------------------------------------------------------------------------------------

DEFAULT = [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}]
EXTENDED_SET = [*DEFAULT, {"name": EXT_RES, "weight": 1}]
SHAPE_DOWN = [{"utilization": 0, "score": 10}, {"utilization": 100, "score": 0}]
SHAPE_UP = [{"utilization": 0, "score": 0}, {"utilization": 100, "score": 10}]


def strategy(kind: str, resources: list | None = None, shape: list | None = None) -> dict:
    s: dict[str, Any] = {"type": kind, "resources": resources if resources is not None else DEFAULT}
    if shape is not None:
        s["requestedToCapacityRatio"] = {"shape": shape}
    return {"scoringStrategy": s}


def scores(
    args: dict, p: dict, nodes: list[dict], existing: list[dict], *, run_pre_score: bool = True
) -> list[int]:
    snap = build_snapshot(nodes, existing)
    plugin = NodeResourcesFit(args)
    if run_pre_score:
        raw, _ = run_score(plugin, p, snap)
        return raw
    from kubesched.testing import as_pod

    return plugin.score(CycleState(), as_pod(p), snap, np.arange(snap.n)).tolist()


def two_nodes(c1: str, m1: str, c2: str, m2: str, **extra2: str) -> list[dict]:
    return [node("node1", cap(c1, m1)), node("node2", cap(c2, m2, **extra2))]


FIT_SCORE = [
    ("RequestedToCapacityRatio case1", strategy("RequestedToCapacityRatio", shape=SHAPE_DOWN), req(cpu="3000", memory="5000"),
     [10, 32]),
    ("RequestedToCapacityRatio case2", strategy("RequestedToCapacityRatio", shape=SHAPE_UP), req(cpu="3000", memory="5000"),
     [95, 68]),
    ("MostAllocated", strategy("MostAllocated"), req(cpu="1000", memory="2000"), [67, 36]),
    ("LeastAllocated", strategy("LeastAllocated"), req(cpu="1000", memory="2000"), [32, 63]),
]  # fmt: skip


@pytest.mark.parametrize("run_pre_score", [True, False])
@pytest.mark.parametrize(("name", "args", "request_", "expected"), FIT_SCORE)
def test_fit_score(name: str, args: dict, request_: dict, expected: list[int], run_pre_score: bool) -> None:
    nodes = two_nodes("4000", "10000", "6000", "10000")
    existing = [
        pod(req(cpu="2000", memory="4000"), node="node1"),
        pod(req(cpu="1000", memory="2000"), node="node2"),
    ]
    assert scores(args, pod(request_), nodes, existing, run_pre_score=run_pre_score) == expected


@pytest.mark.parametrize(("kind", "expected"), [("MostAllocated", [67, 45]), ("LeastAllocated", [32, 55])])
def test_fit_score_with_sidecar(kind: str, expected: list[int]) -> None:
    nodes = two_nodes("4000", "10000", "4000", "10000")
    r = req(cpu="1000", memory="2000")
    existing = [
        pod(r, init=(container(r, name="sidecar", restartPolicy="Always"),), node="node1"),
        pod(r, node="node2"),
    ]
    assert scores(strategy(kind), pod(r), nodes, existing) == expected


R12 = (req(cpu="1000", memory="2000"), req(cpu="2000", memory="3000"))

LEAST_ALLOCATED = [
    ("nothing scheduled, nothing requested", pod(), two_nodes("4000", "10000", "4000", "10000"), [], DEFAULT, [100, 100]),
    ("nothing scheduled, resources requested, differently sized nodes",
     pod(*R12), two_nodes("4000", "10000", "6000", "10000"), [], DEFAULT, [37, 50]),
    ("no resources requested, pods scheduled", pod(), two_nodes("4000", "10000", "4000", "10000"),
     [pod(node="node1"), pod(node="node1"), pod(node="node2"), pod(node="node2")], DEFAULT, [100, 100]),
    ("no resources requested, pods scheduled with resources", pod(), two_nodes("10000", "20000", "10000", "20000"),
     [pod(req(cpu="3000", memory="0"), node="node1"), pod(req(cpu="3000", memory="0"), node="node1"),
      pod(req(cpu="3000", memory="0"), node="node2"), pod(req(cpu="3000", memory="5000"), node="node2")],
     DEFAULT, [70, 57]),
    ("resources requested, pods scheduled with resources", pod(*R12), two_nodes("10000", "20000", "10000", "20000"),
     [pod(req(cpu="3000", memory="0"), node="node1"), pod(req(cpu="3000", memory="5000"), node="node2")],
     DEFAULT, [57, 45]),
    ("resources requested, pods scheduled with resources, differently sized nodes",
     pod(*R12), two_nodes("10000", "20000", "10000", "50000"),
     [pod(req(cpu="3000", memory="0"), node="node1"), pod(req(cpu="3000", memory="5000"), node="node2")],
     DEFAULT, [57, 60]),
    ("requested resources exceed node capacity", pod(req(cpu="3000", memory="0")), two_nodes("4000", "10000", "4000", "10000"),
     [pod(req(cpu="3000", memory="0"), node="node1"), pod(req(cpu="3000", memory="5000"), node="node2")],
     DEFAULT, [50, 25]),
    ("zero node resources, pods scheduled with resources", pod(), [node("node1", {}), node("node2", {})],
     [pod(req(cpu="3000", memory="0"), node="node1"), pod(req(cpu="3000", memory="5000"), node="node2")],
     DEFAULT, [0, 0]),
    ("nothing scheduled, resources requested with different weight on CPU and memory, differently sized nodes",
     pod(*R12), two_nodes("4000", "10000", "6000", "10000"), [],
     [{"name": "memory", "weight": 2}, {"name": "cpu", "weight": 1}], [41, 50]),
    ("bypass extended resource if the pod does not request",
     pod(*R12), two_nodes("6000", "10000", "6000", "10000", **{EXT_RES: "4"}), [], EXTENDED_SET, [50, 50]),
    ("honor extended resource if the pod requests",
     pod(req(cpu="3000", memory="5000", **{EXT_RES: "2"})),
     [node("node1", cap("6000", "10000", **{EXT_RES: "4"})), node("node2", cap("6000", "10000", **{EXT_RES: "10"}))],
     [], EXTENDED_SET, [50, 60]),
    ("if the node doesn't have a resource", pod(req(cpu="3000", memory="4000")),
     two_nodes("6000", "10000", "6000", "10000", **{EXT_RES: "4"}), [],
     [{"name": EXT_RES, "weight": 2}, *DEFAULT], [55, 55]),
    # Upstream's "Resources not set" case expects an Error; v1 defaulting makes empty resources cpu+memory.
    ("empty resources default to cpu and memory", pod(*R12), two_nodes("4000", "10000", "6000", "10000"), [], [],
     [37, 50]),
]  # fmt: skip


@pytest.mark.parametrize(("name", "p", "nodes", "existing", "resources", "expected"), LEAST_ALLOCATED)
def test_least_allocated(
    name: str, p: dict, nodes: list, existing: list, resources: list, expected: list
) -> None:
    assert scores(strategy("LeastAllocated", resources), p, nodes, existing) == expected


MOST_ALLOCATED = [
    ("nothing scheduled, nothing requested", pod(), two_nodes("4000", "10000", "4000", "10000"), [], DEFAULT, [0, 0]),
    ("nothing scheduled, resources requested, differently sized nodes",
     pod(*R12), two_nodes("4000", "10000", "6000", "10000"), [], DEFAULT, [62, 50]),
    ("no resources requested, pods scheduled with resources", pod(), two_nodes("10000", "20000", "10000", "20000"),
     [pod(req(cpu="3000", memory="0"), node="node1"), pod(req(cpu="3000", memory="0"), node="node1"),
      pod(req(cpu="3000", memory="0"), node="node2"), pod(req(cpu="3000", memory="5000"), node="node2")],
     DEFAULT, [30, 42]),
    ("resources requested, pods scheduled with resources", pod(*R12), two_nodes("10000", "20000", "10000", "20000"),
     [pod(req(cpu="3000", memory="0"), node="node1"), pod(req(cpu="3000", memory="5000"), node="node2")],
     DEFAULT, [42, 55]),
    ("resources requested equal node capacity",
     pod(req(cpu="2000", memory="4000"), req(cpu="3000", memory="5000")), two_nodes("5000", "10000", "10000", "9000"),
     [], DEFAULT, [95, 75]),
    ("nothing scheduled, resources requested, differently sized nodes (weights)",
     pod(*R12), two_nodes("4000", "10000", "6000", "10000"), [],
     [{"name": "memory", "weight": 2}, {"name": "cpu", "weight": 1}], [58, 50]),
    ("no resources requested, pods scheduled, nonzero request for resource",
     pod(None), two_nodes("250m", "1000Mi", "250m", "1000Mi"), [pod(None, node="node1"), pod(None, node="node1")],
     DEFAULT, [80, 30]),
    ("bypass extended resource if the pod does not request",
     pod(*R12), two_nodes("6000", "10000", "6000", "10000", **{EXT_RES: "4"}), [], EXTENDED_SET, [50, 50]),
    ("honor extended resource if the pod request",
     pod(req(cpu="3000", memory="5000", **{EXT_RES: "2"})),
     [node("node1", cap("6000", "10000", **{EXT_RES: "4"})), node("node2", cap("6000", "10000", **{EXT_RES: "10"}))],
     [], EXTENDED_SET, [50, 40]),
    ("if the node doesn't have a resource", pod(req(cpu="3000", memory="4000")),
     two_nodes("6000", "10000", "6000", "10000", **{EXT_RES: "4"}), [],
     [{"name": EXT_RES, "weight": 2}, *DEFAULT], [45, 45]),
]  # fmt: skip


@pytest.mark.parametrize(("name", "p", "nodes", "existing", "resources", "expected"), MOST_ALLOCATED)
def test_most_allocated(
    name: str, p: dict, nodes: list, existing: list, resources: list, expected: list
) -> None:
    assert scores(strategy("MostAllocated", resources), p, nodes, existing) == expected


RTCR = [
    ("nothing scheduled, nothing requested (default - least requested nodes have priority)",
     pod(), two_nodes("4000", "10000", "4000", "10000"), [pod(node="node1"), pod(node="node1")], [100, 100]),
    ("nothing scheduled, resources requested, differently sized nodes (default - least requested nodes have priority)",
     pod(*R12), two_nodes("4000", "10000", "6000", "10000"), [pod(node="node1"), pod(node="node1")], [38, 50]),
    ("no resources requested, pods scheduled with resources (default - least requested nodes have priority)",
     pod(), two_nodes("4000", "10000", "6000", "10000"),
     [pod(req(cpu="3000", memory="5000"), node="node1"), pod(req(cpu="3000", memory="5000"), node="node2")], [38, 50]),
]  # fmt: skip


@pytest.mark.parametrize(("name", "p", "nodes", "existing", "expected"), RTCR)
def test_requested_to_capacity_ratio(name: str, p: dict, nodes: list, existing: list, expected: list) -> None:
    assert scores(strategy("RequestedToCapacityRatio", shape=SHAPE_DOWN), p, nodes, existing) == expected


@pytest.mark.parametrize(
    ("points", "assertions"),
    [
        ([(10, 1), (90, 9)], [(-10, 1), (0, 1), (9, 1), (10, 1), (15, 1), (19, 1), (20, 2), (89, 8), (90, 9), (99, 9),
                              (100, 9), (110, 9)]),
        ([(0, 2), (40, 10), (100, 0)], [(-10, 2), (0, 2), (20, 6), (30, 8), (40, 10), (70, 5), (100, 0), (110, 0)]),
        ([(0, 2), (40, 2), (100, 2)], [(-10, 2), (0, 2), (20, 2), (30, 2), (40, 2), (70, 2), (100, 2), (110, 2)]),
    ],
)  # fmt: skip
def test_broken_linear_function(points: list, assertions: list) -> None:
    ps = np.asarray([p for p, _ in assertions])
    assert broken_linear(ps, points).tolist() == [e for _, e in assertions]


def mi_node(name: str, milli_cpu: int, mem: int, ext: dict[str, int]) -> dict:
    """Upstream makeNode(name, milliCPU, memory, extended)."""
    return node(name, {"cpu": f"{milli_cpu}m", "memory": str(mem), **{k: str(v) for k, v in ext.items()}})


MIB = 1024 * 1024

BIN_PACKING_SINGLE = [
    ("nothing scheduled, nothing requested", pod(), [], [0, 0]),
    ("resources requested, pods scheduled with less resources", pod({"intel.com/foo": "2"}), [pod()], [2, 5]),
    ("resources requested, pods scheduled with resources, on node with existing pod running",
     pod({"intel.com/foo": "2"}), [pod({"intel.com/foo": "2"}, node="node2")], [2, 10]),
    ("resources requested, pods scheduled with more resources", pod({"intel.com/foo": "4"}), [pod()], [5, 10]),
]  # fmt: skip


@pytest.mark.parametrize(("name", "p", "existing", "expected"), BIN_PACKING_SINGLE)
def test_resource_bin_packing_single_extended(name: str, p: dict, existing: list, expected: list) -> None:
    nodes = [
        mi_node("node1", 4000, 10000 * MIB, {"intel.com/foo": 8}),
        mi_node("node2", 4000, 10000 * MIB, {"intel.com/foo": 4}),
    ]
    args = strategy(
        "RequestedToCapacityRatio",
        [{"name": "intel.com/foo", "weight": 1}],
        SHAPE_UP[:1] + [{"utilization": 100, "score": 1}],
    )
    assert scores(args, p, nodes, existing) == expected


POD1 = {"intel.com/foo": "2", "intel.com/bar": "2"}
POD2 = {"intel.com/foo": "4", "intel.com/bar": "2"}

BIN_PACKING_MULTIPLE = [
    ("nothing scheduled, nothing requested", pod(), [], [0, 0]),
    ("resources requested, pods scheduled with less resources", pod(POD1), [], [4, 3]),
    ("resources requested, pods scheduled with resources, on node with existing pod running",
     pod(POD1), [pod(POD2, node="node2")], [4, 7]),
    ("resources requested, pods scheduled with more resources", pod(POD2), [], [5, 5]),
]  # fmt: skip


@pytest.mark.parametrize(("name", "p", "existing", "expected"), BIN_PACKING_MULTIPLE)
def test_resource_bin_packing_multiple_extended(name: str, p: dict, existing: list, expected: list) -> None:
    nodes = [
        mi_node("node1", 4000, 10000 * MIB, {"intel.com/foo": 8, "intel.com/bar": 4}),
        mi_node("node2", 4000, 10000 * MIB, {"intel.com/foo": 4, "intel.com/bar": 8}),
    ]
    args = strategy(
        "RequestedToCapacityRatio",
        [{"name": "intel.com/foo", "weight": 3}, {"name": "intel.com/bar", "weight": 5}],
        [{"utilization": 0, "score": 0}, {"utilization": 100, "score": 1}],
    )
    assert scores(args, p, nodes, existing) == expected


def test_pod_level_resources_score_with_container_defaults() -> None:
    """resourceAllocationScorer fills 100m/200Mi into containers lacking requests, then applies pod-level ones."""
    nodes = [node("n1", {"cpu": "4", "memory": "4Gi"})]
    # Pod-level cpu only; one container sets memory, one does not: memory = 1Gi + 200Mi default.
    p = pod({"memory": "1Gi"}, None, pod_level={"cpu": "1"})
    got = scores(strategy("MostAllocated"), p, nodes, [])
    cpu = 1000 * 100 // 4000
    mem = (1024 + 200) * MIB * 100 // (4096 * MIB)
    assert got == [(cpu + mem) // 2]


# ---- scorers vs a straight per-node port of the Go code ----------------------------------------


def _go_least(req: list[int], alloc: list[int], w: list[int]) -> int:
    node = wsum = 0
    for r, a, wt in zip(req, alloc, w, strict=True):
        if a == 0:
            continue
        s = 0 if r > a else (a - r) * 100 // a
        node += s * wt
        wsum += wt
    return 0 if wsum == 0 else node // wsum


def _go_most(req: list[int], alloc: list[int], w: list[int]) -> int:
    node = wsum = 0
    for r, a, wt in zip(req, alloc, w, strict=True):
        if a == 0:
            continue
        node += min(r, a) * 100 // a * wt
        wsum += wt
    return 0 if wsum == 0 else node // wsum


def _go_trunc_div(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


def _go_shape(p: int, shape: list[tuple[int, int]]) -> int:
    for i, (u, s) in enumerate(shape):
        if p <= u:
            if i == 0:
                return s
            u0, s0 = shape[i - 1]
            return s0 + _go_trunc_div((s - s0) * (p - u0), u - u0)
    return shape[-1][1]


def _go_rtcr(req: list[int], alloc: list[int], w: list[int], shape: list[tuple[int, int]]) -> int:
    node = wsum = 0
    for r, a, wt in zip(req, alloc, w, strict=True):
        if a == 0:
            continue
        s = _go_shape(100 if r > a else r * 100 // a, shape)
        if s > 0:
            node += s * wt
            wsum += wt
    if wsum == 0:
        return 0
    return (2 * node + wsum) // (2 * wsum)  # math.Round(node / wsum), exact for these small integers


matrix = st.integers(1, 4).flatmap(
    lambda nres: st.tuples(
        st.lists(st.lists(st.integers(0, 2000), min_size=nres, max_size=nres), min_size=1, max_size=6),
        st.lists(st.lists(st.integers(0, 1000), min_size=nres, max_size=nres), min_size=1, max_size=6),
        st.lists(st.integers(1, 100), min_size=nres, max_size=nres),
    )
)


@settings(max_examples=200, deadline=None)
@given(
    matrix,
    st.lists(
        st.tuples(st.integers(0, 100), st.integers(0, 10)), min_size=1, max_size=4, unique_by=lambda t: t[0]
    ),
)
def test_scorers_match_reference(m: tuple, points: list) -> None:
    reqs, allocs, weights = m
    n = min(len(reqs), len(allocs))
    reqs, allocs = reqs[:n], allocs[:n]
    shape = sorted((u, s * 10) for u, s in points)
    specs = [ResourceSpec(f"r{i}", w) for i, w in enumerate(weights)]
    req_m = np.asarray(reqs, np.int64).T
    alloc_m = np.asarray(allocs, np.int64).T
    got_least = least_allocated_scorer(specs)(req_m, req_m, alloc_m).tolist()
    got_most = most_allocated_scorer(specs)(req_m, req_m, alloc_m).tolist()
    got_rtcr = requested_to_capacity_ratio_scorer(specs, shape)(req_m, req_m, alloc_m).tolist()
    assert got_least == [_go_least(r, a, weights) for r, a in zip(reqs, allocs, strict=True)]
    assert got_most == [_go_most(r, a, weights) for r, a in zip(reqs, allocs, strict=True)]
    assert got_rtcr == [_go_rtcr(r, a, weights, shape) for r, a in zip(reqs, allocs, strict=True)]

"""Metrics on small hand-built clusters with answers worked out by hand."""

from __future__ import annotations

import pytest
from sim_helpers import default_cfg, gpu_cfg, node, pod

from kubesched.sim.metrics import reason_kinds
from kubesched.sim.runner import simulate
from kubesched.sim.workload import Workload


def test_allocation_ratio_per_resource() -> None:
    # 8 CPU and 16Gi in all; the pods ask for 6 CPU and 3Gi; the last pod (5 CPU) fits nowhere
    wl = Workload(
        [node("n1", cpu="4", mem="8Gi"), node("n2", cpu="4", mem="8Gi")],
        [pod("a", "1", "1Gi"), pod("b", "2", "1Gi"), pod("c", "3", "1Gi"), pod("d", "5", "1Gi")],
        [0.0, 1.0, 2.0, 3.0],
        [None] * 4,
    )
    cfg, reg = default_cfg()
    res = simulate(cfg, wl, mode="arrival", seed=0, registry=reg)
    alloc = res.summary["allocation_pct"]
    assert alloc["cpu"]["final"] == pytest.approx(75.0)
    assert alloc["memory"]["final"] == pytest.approx(18.75)
    assert alloc["gpu"]["final"] == 0.0 and res.summary["gpu"]["unallocated_pct"] is None
    # arrival mode averages over attempts: after a, b, c, d the CPU allocation is 1/8, 3/8, 6/8, 6/8
    assert alloc["cpu"]["mean"] == pytest.approx(100 * (1 + 3 + 6 + 6) / 8 / 4)
    assert alloc["cpu"]["peak"] == pytest.approx(75.0)
    assert res.summary["pods"]["failed"] == 1 and res.summary["failed_by_reason"] == {"Insufficient cpu": 1}
    # without GPUs the arrived workload is counted in CPU: 11 of 8 CPUs arrived
    assert res.summary["workload_resource"] == "cpu"
    assert res.summary["arrived_workload_pct"] == pytest.approx(137.5)


def test_time_weighted_allocation_and_usage() -> None:
    # 2 of 4 CPUs for 10 s, then 4 of 4 for 10 s: mean 75 %; usage model uses exactly half
    from kubesched.sim.usage import UsageModel

    wl = Workload([node("n1", cpu="4")], [pod("a", "2"), pod("b", "2")], [0.0, 10.0], [20.0, 10.0])
    cfg, reg = default_cfg()
    res = simulate(cfg, wl, seed=0, registry=reg, usage=UsageModel(0.5, 0.5))
    assert res.summary["allocation_pct"]["cpu"]["mean"] == pytest.approx(75.0)
    assert res.summary["allocation_pct"]["cpu"]["peak"] == pytest.approx(100.0)
    assert res.summary["utilization_pct"]["cpu"]["mean"] == pytest.approx(37.5)
    assert res.summary["utilization_pct"]["cpu"]["peak"] == pytest.approx(50.0)


def test_gpu_allocation_and_fragmentation_known_answer() -> None:
    # One node, 2 GPUs, 8 CPUs. Two 600-milli sharing pods and one CPU-only pod.
    # Typical pods: (1 CPU, 600 milli) p=2/3 and (1 CPU, no GPU) p=1/3.
    # Best fit puts the sharing pods on GPU 0 then GPU 1: 400 milli left on each.
    #   allocation 1200 / 2000 = 60 %; unallocated 40 %
    #   fragmentation: a 600-milli pod fits no GPU -> F = R = 800; a CPU pod -> F = R = 800
    #   so F = 800 milli = 40 % of capacity and 100 % of the idle GPU.
    # Before any pod: the 600 pod fits (no GPU below 600) -> 0; the CPU pod sees R = 2000 -> F = 2000/3.
    wl = Workload(
        [node("g1", cpu="8", mem="32Gi", gpus=2)],
        [pod("s1", "1", gpus=1, milli=600), pod("s2", "1", gpus=1, milli=600), pod("cpu", "1")],
        [0.0, 1.0, 2.0],
        [None] * 3,
    )
    cfg, reg = gpu_cfg("BestFitScore")
    res = simulate(cfg, wl, mode="arrival", seed=0, registry=reg)
    g = res.summary["gpu"]
    assert g["capacity_milli"] == 2000 and g["allocated_milli"] == 1200
    assert g["unallocated_pct"] == pytest.approx(40.0)
    assert g["frag_milli"]["final"] == pytest.approx(800.0)
    assert g["frag_pct"]["final"] == pytest.approx(40.0)
    assert g["frag_ratio_pct"]["final"] == pytest.approx(100.0)
    assert g["gpus_in_use_pct"] == 100.0  # both GPUs hold a sharing pod
    bins = res.bins
    assert bins["level"][0] == 0.0 and bins["frag_milli"][0] == pytest.approx(2000 / 3)
    # levels follow the arrived GPU workload: 30 % after s1, 60 % after s2 (the CPU pod adds none)
    assert bins["level"][:31] == [float(x) for x in range(31)]
    assert max(bins["level"]) == 60.0
    at30 = bins["level"].index(30.0)
    assert bins["gpu_alloc_pct"][at30] == pytest.approx(30.0) and bins["attempted"][at30] == 1


def test_multi_gpu_pod_allocation_counts_every_gpu() -> None:
    wl = Workload(
        [node("g1", cpu="8", mem="32Gi", gpus=4), node("g2", cpu="8", mem="32Gi", gpus=4)],
        [pod("w", "1", gpus=4), pod("x", "1", gpus=2), pod("y", "1", gpus=4)],
        [0.0, 1.0, 2.0],
        [None] * 3,
    )
    cfg, reg = gpu_cfg("BestFitScore")
    res = simulate(cfg, wl, mode="arrival", seed=0, registry=reg)
    # w takes a whole node, x half of the other, y (4 GPUs) fits nowhere
    assert res.summary["gpu"]["allocated_milli"] == 6000
    assert res.summary["allocation_pct"]["gpu"]["final"] == pytest.approx(75.0)
    assert res.summary["gpu"]["gpus_in_use_pct"] == pytest.approx(75.0)
    assert res.summary["pods"]["failed"] == 1
    assert res.summary["failed_by_reason"] == {"Insufficient GPU": 1}


def test_reason_kinds_strip_counts_and_keep_braces() -> None:
    msg = (
        "0/5 nodes are available: 3 Insufficient cpu, 2 node(s) had untolerated taint {a: b, c: d}. "
        "preemption: 0/5 nodes are available: 5 No preemption victims found for incoming pod."
    )
    assert reason_kinds(msg) == ["Insufficient cpu", "node(s) had untolerated taint {a: b, c: d}"]
    assert reason_kinds("no nodes available to schedule pods") == ["no nodes available to schedule pods"]
    assert reason_kinds("") == []


def test_time_bins_count_arrivals_and_placements() -> None:
    wl = Workload([node("n1", cpu="64")], [pod(f"p{i}") for i in range(10)], [float(i) for i in range(10)], [5.0] * 10)
    cfg, reg = default_cfg()
    res = simulate(cfg, wl, seed=0, registry=reg, bins=7)
    b = res.bins
    assert sum(b["arrivals"]) == 10 and sum(b["scheduled"]) == 10 and sum(b["completed"]) == 10
    assert b["end"] == sorted(b["end"]) and b["start"][0] == 0.0 and b["end"][-1] == 14.0
    # the bins tile the run without gaps
    assert all(s == e for s, e in zip(b["start"][1:], b["end"][:-1], strict=True))

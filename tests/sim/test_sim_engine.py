"""The event engine: ordering, the virtual clock, queueing, node events, arrival mode."""

from __future__ import annotations

import json

import pytest
from sim_helpers import default_cfg, node, pod

from kubesched.sim.engine import Engine, SimOptions
from kubesched.sim.runner import simulate
from kubesched.sim.usage import UsageModel
from kubesched.sim.workload import NodeEvent, Workload


def run(wl: Workload, mode: str = "time", **kw):  # noqa: ANN201
    cfg, reg = default_cfg()
    return simulate(cfg, wl, mode=mode, seed=1, registry=reg, **kw)


def pod_row(res, name: str) -> dict:  # noqa: ANN001
    i = res.pods["pod"].index(f"default/{name}")
    return {k: v[i] for k, v in res.pods.items()}


def test_completion_frees_resources_and_waiting_pod_gets_them() -> None:
    # a: t=5 for 10 s; b does not fit until a completes at 15; c arrives at 15 and fits with b
    wl = Workload(
        [node("n1", cpu="4")],
        [pod("a", cpu="3"), pod("b", cpu="3"), pod("c", cpu="1")],
        [5.0, 6.0, 15.0],
        [10.0, 10.0, 1.0],
    )
    res = run(wl)
    a, b, c = pod_row(res, "a"), pod_row(res, "b"), pod_row(res, "c")
    assert (a["bind_time"], a["end_time"], a["queue_delay"]) == (5.0, 15.0, 0.0)
    assert (b["bind_time"], b["queue_delay"], b["end_time"]) == (15.0, 9.0, 25.0)
    assert c["bind_time"] == 15.0 and c["queue_delay"] == 0.0
    assert b["attempts"] == 2 and a["attempts"] == 1
    ev = list(zip(res.events["time"], res.events["event"], res.events["pod"], strict=True))
    assert ev[:6] == [
        (5.0, "arrive", "default/a"),
        (5.0, "scheduled", "default/a"),
        (6.0, "arrive", "default/b"),
        (6.0, "unschedulable", "default/b"),
        (15.0, "complete", "default/a"),  # completions apply before arrivals at the same instant
        (15.0, "arrive", "default/c"),
    ]
    assert ev[6:8] == [(15.0, "scheduled", "default/b"), (15.0, "scheduled", "default/c")]
    times = res.events["time"]
    assert times == sorted(times)
    q = res.summary["queueing_delay_s"]
    assert q["count"] == 3 and q["max"] == 9.0 and q["p50"] == 0.0
    assert res.summary["pods"]["completed"] == 3 and res.summary["pods"]["failed"] == 0
    assert res.summary["run"]["sim_end_s"] == 25.0


def test_queueing_delay_percentiles_on_a_one_slot_cluster() -> None:
    # one slot, three 10 s pods at t=0: they run back to back, delays 0, 10, 20
    wl = Workload([node("n1", cpu="1")], [pod(f"p{i}", cpu="1") for i in range(3)], [0.0] * 3, [10.0] * 3)
    res = run(wl)
    assert sorted(res.pods["queue_delay"]) == [0.0, 10.0, 20.0]
    q = res.summary["queueing_delay_s"]
    assert q["p50"] == 10.0 and q["p99"] == pytest.approx(19.8) and q["mean"] == 10.0
    # the slot is always full over the 30 s the run lasts
    assert res.summary["allocation_pct"]["cpu"]["mean"] == pytest.approx(100.0)


def test_pod_that_never_fits_is_failed_with_its_reason() -> None:
    wl = Workload([node("n1", cpu="2")], [pod("big", cpu="3")], [0.0], [5.0])
    res = run(wl)
    assert pod_row(res, "big")["state"] == "failed"
    assert res.summary["pods"]["failed"] == 1
    assert res.summary["failed_by_reason"] == {"Insufficient cpu": 1}
    assert next(iter(res.summary["failed_messages"])).startswith("0/1 nodes are available: 1 Insufficient cpu.")


def test_node_add_event_places_a_waiting_pod() -> None:
    wl = Workload(
        [node("n1", cpu="1")],
        [pod("a", cpu="1"), pod("b", cpu="1")],
        [0.0, 0.0],
        [None, None],
        node_events=[NodeEvent(50.0, "add", node("n2", cpu="1"))],
    )
    res = run(wl)
    b = pod_row(res, "b")
    assert (b["node"], b["bind_time"], b["queue_delay"]) == ("n2", 50.0, 50.0)
    assert res.summary["nodes"] == {"initial": 1, "final": 2, "events": 1}
    assert "node_add" in res.events["event"]


def test_cordon_steers_pods_and_uncordon_readmits() -> None:
    wl = Workload(
        [node("n1", cpu="8"), node("n2", cpu="1")],
        [pod("a", cpu="1"), pod("b", cpu="1"), pod("c", cpu="1")],
        [2.0, 3.0, 6.0],
        [None, None, None],
        node_events=[NodeEvent(1.0, "cordon", "n1"), NodeEvent(5.0, "uncordon", "n1")],
    )
    res = run(wl)
    a, b, c = pod_row(res, "a"), pod_row(res, "b"), pod_row(res, "c")
    assert a["node"] == "n2"  # n1 is cordoned
    # b waits: n2 is full and n1 cordoned, until the uncordon at t=5
    assert (b["node"], b["bind_time"]) == ("n1", 5.0)
    assert c["node"] == "n1"


def test_node_remove_terminates_its_pods_and_shrinks_capacity() -> None:
    wl = Workload(
        [node("n1", cpu="2"), node("n2", cpu="2")],
        [pod("a", cpu="2"), pod("b", cpu="2")],
        [0.0, 0.0],
        [None, None],
        node_events=[NodeEvent(10.0, "remove", "n1")],
    )
    res = run(wl)
    gone = [pod_row(res, p) for p in ("a", "b") if pod_row(res, p)["node"] == "n1"]
    assert len(gone) == 1 and gone[0]["state"] == "evicted" and gone[0]["end_time"] == 10.0
    assert res.summary["pods"]["evicted"] == 1
    # one 2-CPU pod on the one remaining 2-CPU node
    assert res.summary["allocation_pct"]["cpu"]["final"] == 100.0
    assert res.summary["nodes"]["final"] == 1


def test_preemption_ends_the_victim_and_binds_the_preemptor() -> None:
    wl = Workload(
        [node("n1", cpu="2")],
        [pod("low", cpu="2", priority=0), pod("high", cpu="2", priority=100)],
        [0.0, 10.0],
        [100.0, 5.0],
    )
    res = run(wl)
    low, high = pod_row(res, "low"), pod_row(res, "high")
    assert low["state"] == "preempted" and low["end_time"] == 10.0
    assert high["node"] == "n1" and 10.0 <= high["bind_time"] <= 12.0
    assert res.summary["pods"]["preempted"] == 1
    # the victim's original completion (t=100) is ignored: it never frees resources twice
    assert res.events["event"].count("complete") == 1


def test_max_wait_withdraws_a_pod() -> None:
    wl = Workload([node("n1", cpu="1")], [pod("a", cpu="1"), pod("b", cpu="1")], [0.0, 0.0], [100.0, 1.0])
    res = run(wl, max_wait=30.0)
    b = pod_row(res, "b")
    assert b["state"] == "withdrawn" and b["end_time"] == 30.0
    assert res.summary["pods"]["withdrawn"] == 1 and res.summary["pods"]["failed"] == 1


def test_arrival_mode_tries_each_pod_once_and_never_completes() -> None:
    wl = Workload(
        [node("n1", cpu="4")],
        [pod("a", cpu="3"), pod("b", cpu="3"), pod("c", cpu="1")],
        [0.0, 1.0, 2.0],
        [1.0, 1.0, 1.0],  # durations are ignored: nothing departs
        node_events=[NodeEvent(1.5, "add", node("n2", cpu="4"))],
    )
    res = run(wl, mode="arrival")
    b = pod_row(res, "b")
    assert b["state"] == "failed" and b["attempts"] == 1  # the node added later does not retry it
    assert pod_row(res, "c")["state"] == "running"
    assert res.summary["run"]["scheduling_attempts"] == 3
    assert res.summary["pods"]["completed"] == 0
    assert "arrive" not in res.events["event"] and "complete" not in res.events["event"]
    assert res.bins["failed"][-1] == 1


def test_utilization_source_is_on_every_handle_and_follows_pods() -> None:
    cfg, reg = default_cfg()
    wl = Workload([node("n1", cpu="4", mem="8Gi")], [pod("a", cpu="2", mem="2Gi")], [0.0], [None])
    eng = Engine(cfg, wl, reg, SimOptions(seed=3, usage=UsageModel(0.5, 0.5)))
    assert all(fw.handle.utilization is eng.util for fw in eng.sched.frameworks.values())
    assert eng.util.usage()["n1"].cpu_avg == 0.0
    eng.run()
    u = eng.util.usage()["n1"]
    assert u.cpu_avg == pytest.approx(25.0) and u.mem_avg == pytest.approx(12.5)


def test_workload_is_not_modified_and_runs_repeat() -> None:
    pods = [pod("low", cpu="2", priority=0), pod("hi", cpu="2", priority=9)]
    wl = Workload([node("n1", cpu="2")], pods, [0.0, 1.0], [None, None])
    first = run(wl)
    assert all(p.nominated_node_name == "" and not p.node_name for p in wl.pods)
    second = run(wl)
    assert json.dumps(first.pods) == json.dumps(second.pods)  # NaN-safe equality
    assert first.summary["pods"] == second.summary["pods"]


def test_progress_reports_every_pod() -> None:
    seen: list[tuple[int, int]] = []
    wl = Workload([node("n1", cpu="64")], [pod(f"p{i}") for i in range(70)], [float(i) for i in range(70)], [None] * 70)
    cfg, reg = default_cfg()
    simulate(cfg, wl, registry=reg, progress=lambda d, t: seen.append((d, t)))
    assert seen[-1] == (70, 70) and (64, 70) in seen


def test_prebound_pods_start_running_without_a_cycle() -> None:
    bound = pod("bound", cpu="3").with_node("n1")
    stray = pod("stray", cpu="1").with_node("gone")
    wl = Workload([node("n1", cpu="4")], [bound, stray, pod("new", cpu="3")], [0.0, 0.0, 1.0], [10.0, None, None])
    res = run(wl)
    b, s, n = pod_row(res, "bound"), pod_row(res, "stray"), pod_row(res, "new")
    assert (b["node"], b["bind_time"], b["end_time"], b["attempts"]) == ("n1", 0.0, 10.0, 0)
    assert s["state"] == "failed" and "not in the cluster" in s["message"]
    assert n["bind_time"] == 10.0  # waits for the pre-bound pod to finish


@pytest.mark.parametrize("mode", ["time", "arrival"])
def test_preemption_evicts_a_pod_bound_in_the_input(mode: str) -> None:
    """A cluster dump's running pod is a victim like any other: its run ends and its CPU is freed
    (it used to stay counted, leaving the node at 137.5 % with ``preempted: 0``)."""
    low = pod("low", cpu="2500m", priority=0).with_node("n1")
    wl = Workload([node("n1", cpu="4")], [low, pod("hi", cpu="3", priority=1000)], [0.0, 0.0], [None, None])
    res = run(wl, mode=mode)
    assert pod_row(res, "low")["state"] == "preempted"
    assert res.summary["pods"]["preempted"] == 1
    assert res.summary["allocation_pct"]["cpu"]["peak"] <= 100.0
    if mode == "time":  # the preemptor is retried and lands (arrival mode tries each pod once)
        assert pod_row(res, "hi")["node"] == "n1"
        assert res.summary["allocation_pct"]["cpu"]["final"] == 75.0
    else:
        assert res.summary["allocation_pct"]["cpu"]["final"] == 0.0

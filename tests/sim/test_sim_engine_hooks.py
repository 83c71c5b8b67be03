"""The engine's hooks for components that change the cluster during a run (an autoscaler):
``Engine.call_at``, ``add_node``, ``remove_node(requeue=...)`` and ``SimOptions.end_time``."""

from __future__ import annotations

import math

from sim_helpers import default_cfg, node, pod

from kubesched.sim.engine import Engine, SimOptions
from kubesched.sim.workload import Workload


def engine(wl: Workload, **kw) -> Engine:  # noqa: ANN003
    cfg, reg = default_cfg()
    return Engine(cfg, wl, reg, SimOptions(mode="time", seed=1, **kw))


def at(eng: Engine, name: str) -> int:
    return eng.index[name]


def test_a_timer_sees_the_instants_other_events_and_a_node_it_adds_takes_waiting_pods() -> None:
    # a fills n1 for 100 s; b (t=0) and c (t=20) wait; a timer at t=20 adds n2
    wl = Workload([node("n1", cpu="1")], [pod("a"), pod("b"), pod("c")], [0.0, 0.0, 20.0], [100.0, 50.0, 50.0])
    eng = engine(wl)
    seen: list[tuple[float, int]] = []

    def grow() -> None:
        seen.append((eng.clock.now, eng.n_queued))  # c, arriving at this instant, is already queued
        eng.add_node(node("n2", cpu="2"))

    eng.call_at(20.0, grow)
    eng.run()
    assert seen == [(20.0, 2)]
    b, c = at(eng, "b"), at(eng, "c")
    assert (eng.node_of[b], eng.bind_time[b]) == ("n2", 20.0)
    assert (eng.node_of[c], eng.bind_time[c]) == ("n2", 20.0)
    assert eng.totals.capacity.cpu == 3000  # both nodes' CPUs


def test_remove_node_with_requeue_creates_the_pods_again_and_they_run_their_whole_duration() -> None:
    wl = Workload([node("n1", cpu="1")], [pod("a")], [0.0], [30.0])
    eng = engine(wl)
    victims: list[int] = []

    def replace() -> None:
        eng.add_node(node("n2", cpu="1"))
        victims.extend(eng.remove_node("n1", requeue=True))

    eng.call_at(10.0, replace)
    eng.run()
    a = at(eng, "a")
    assert victims == [a]
    # bound again on n2 at once, and runs 30 s from there (the first run's completion is stale)
    assert (eng.node_of[a], eng.bind_time[a], eng.end_time[a]) == ("n2", 10.0, 40.0)
    assert eng.arrival[a] == 0.0  # still counted from its first arrival
    assert "n1" not in eng.snap.row_of


def test_remove_node_without_requeue_terminates_its_pods() -> None:
    wl = Workload([node("n1", cpu="1"), node("n2", cpu="1")], [pod("a")], [0.0], [30.0])
    eng = engine(wl)
    victims: list[int] = []
    eng.call_at(10.0, lambda: victims.extend(eng.remove_node(eng.node_of[0])))
    eng.run()
    assert victims == [0]
    assert (eng.bind_time[0], eng.end_time[0]) == (0.0, 10.0)
    assert eng.n_running == 0 and eng.n_queued == 0  # not created again


def test_end_time_stops_the_replay_there() -> None:
    # a runs past the end; b arrives after it and is never seen; a timer after the end never runs
    wl = Workload([node("n1", cpu="2")], [pod("a"), pod("b")], [0.0, 80.0], [1000.0, 10.0])
    eng = engine(wl, end_time=50.0)
    late: list[float] = []
    eng.call_at(60.0, lambda: late.append(eng.clock.now))
    eng.run()
    assert eng.clock.now == 50.0
    assert late == []
    assert eng.n_running == 1 and math.isnan(eng.end_time[0])
    assert math.isnan(eng.bind_time[1])  # never arrived

"""``Engine.decisions()``: the replay stopped at each pod with a choice to make, before its host
is chosen; an outside decision maker may commit the pod to another feasible node."""

from __future__ import annotations

import pytest
from sim_helpers import default_cfg, node, pod

from kubesched.sim.engine import Engine, SimOptions
from kubesched.sim.runner import result_of
from kubesched.sim.workload import NodeEvent, Workload


def _workload() -> Workload:
    nodes = [node("n1", cpu="2"), node("n2", cpu="4"), node("n3", cpu="8")]
    pods = [pod(f"p{i}", cpu=str(1 + i % 3)) for i in range(16)]
    arrival = [float(i // 2) for i in range(16)]
    duration = [5.0 + (i % 4) for i in range(16)]
    return Workload(nodes, pods, arrival, duration, node_events=[NodeEvent(6.0, "cordon", "n3")])


def _engine(mode: str) -> Engine:
    cfg, reg = default_cfg()
    return Engine(cfg, _workload(), reg, SimOptions(mode=mode, seed=4))


def _tables(eng: Engine) -> str:
    """The run's result as text (NaN, the bind time of a pod that never ran, equals itself)."""
    res = result_of(eng)
    summary = {k: v for k, v in res.summary.items() if k != "run"}  # "run": wall and CPU time
    attempts = {k: v for k, v in res.attempts.items() if k != "duration_ms"}
    return repr((summary, res.events, res.pods, res.bins, attempts))


@pytest.mark.parametrize("mode", ["time", "arrival"])
def test_stepping_to_the_end_is_run(mode: str) -> None:
    ran = _engine(mode)
    ran.run()
    stepped = _engine(mode)
    points = 0
    for attempt in stepped.decisions():
        assert attempt.result is None and attempt.rows.size >= 2 and attempt.scores is not None
        points += 1
    assert points >= 3
    assert _tables(stepped) == _tables(ran)


@pytest.mark.parametrize("mode", ["time", "arrival"])
def test_an_outside_choice_places_the_pod_there(mode: str) -> None:
    eng = _engine(mode)
    chosen: dict[str, str] = {}
    for attempt in eng.decisions():
        scores = attempt.scores
        assert scores is not None
        worst = int(scores.rows[int(scores.total.argmin())])  # the lowest score: never the scheduler's pick
        chosen[attempt.pod.uid] = eng.snap.nodes[worst].name
        res = eng.sched.commit(attempt, chosen[attempt.pod.uid])
        assert res.node == chosen[attempt.pod.uid]
    assert chosen
    for uid, name in chosen.items():
        assert eng.node_of[eng.index[uid]] == name
    ran = _engine(mode)
    ran.run()
    assert ran.node_of != eng.node_of


def test_an_infeasible_choice_is_refused_and_the_replay_goes_on() -> None:
    eng = _engine("time")
    refused = 0
    for attempt in eng.decisions():  # uncommitted attempts get the scheduler's own choice
        feasible = {eng.snap.nodes[int(r)].name for r in attempt.rows}
        for name in sorted({n.name for n in eng.snap.nodes} - feasible):  # too small, or cordoned
            with pytest.raises(ValueError, match=f"node {name} is not one of the {len(feasible)} feasible nodes"):
                eng.sched.commit(attempt, name)
            refused += 1
        with pytest.raises(ValueError, match="no node n9 in the cluster"):
            eng.sched.commit(attempt, "n9")
        assert attempt.result is None
    assert refused > 0
    ran = _engine("time")
    ran.run()
    assert _tables(eng) == _tables(ran)

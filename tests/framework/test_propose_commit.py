"""The scheduling cycle's two public steps: ``propose`` (the feasible nodes and their scores) and
``commit`` (the selected host, or an outside decision maker's choice among the feasible nodes)."""

from __future__ import annotations

import pytest

from kubesched.api.objects import Node, Pod
from kubesched.config import default_config
from kubesched.plugins import in_tree_registry
from kubesched.scheduler import Scheduler
from kubesched.state.snapshot import Snapshot


def _node(name: str, cpu: str) -> Node:
    alloc = {"cpu": cpu, "memory": "8Gi", "pods": "110"}
    return Node.parse({"kind": "Node", "metadata": {"name": name}, "status": {"allocatable": alloc}})


def _pod(name: str, cpu: str = "1") -> Pod:
    spec = {"containers": [{"name": "c", "resources": {"requests": {"cpu": cpu, "memory": "1Gi"}}}]}
    return Pod.parse({"kind": "Pod", "metadata": {"name": name, "uid": name}, "spec": spec})


def _scheduler(*pods: Pod, cache: bool = True) -> Scheduler:
    reg = in_tree_registry()
    snap = Snapshot()
    for n in (_node("small", "1"), _node("mid", "4"), _node("big", "8")):
        snap.add_node(n)
    sched = Scheduler(default_config(reg.points_of), snap, None, reg, seed=3)
    sched.use_equivalence_cache = cache
    for p in pods:
        sched.add_pending(p)
    return sched


def test_propose_then_commit_is_schedule_one() -> None:
    a, b = _scheduler(_pod("p", "2")), _scheduler(_pod("p", "2"))
    res_a = a.schedule_one()
    attempt = b.propose()
    assert attempt is not None and attempt.result is None
    assert sorted(b.snapshot.nodes[int(r)].name for r in attempt.rows) == ["big", "mid"]  # small: 1 CPU
    assert attempt.scores is not None and list(attempt.scores.rows) == list(attempt.rows)
    assert not b.snapshot.pod_by_uid  # nothing placed before the commit
    res_b = b.commit(attempt)
    assert res_a is not None and res_a.node == res_b.node == b.snapshot.pod_by_uid["p"].node_name
    assert b.propose() is None  # the queue is empty


def test_commit_of_another_feasible_node_places_the_pod_there() -> None:
    sched = _scheduler(_pod("p", "2"))
    attempt = sched.propose()
    assert attempt is not None
    own = _scheduler(_pod("p", "2")).schedule_one()
    assert own is not None
    other = next(sched.snapshot.nodes[int(r)].name for r in attempt.rows if sched.snapshot.nodes[int(r)].name != own.node)
    res = sched.commit(attempt, other)
    assert res.node == other and sched.snapshot.pod_by_uid["p"].node_name == other
    assert sched.queue.counts()["active"] == 0


@pytest.mark.parametrize("cache", [True, False], ids=["cache", "no-cache"])
def test_commit_of_an_infeasible_node_is_refused_and_changes_nothing(cache: bool) -> None:
    sched = _scheduler(_pod("p", "2"), cache=cache)
    attempt = sched.propose()
    assert attempt is not None
    with pytest.raises(ValueError, match=r"pod default/p: node small is not one of the 2 feasible nodes .*Insufficient cpu"):
        sched.commit(attempt, "small")
    with pytest.raises(ValueError, match="no node nowhere in the cluster"):
        sched.commit(attempt, "nowhere")
    assert attempt.result is None and not sched.snapshot.pod_by_uid
    res = sched.commit(attempt, "mid")  # the refused choices left the attempt as it was
    assert res.node == "mid"
    with pytest.raises(ValueError, match="already committed"):
        sched.commit(attempt, "big")
    assert sched.snapshot.pod_by_uid["p"].node_name == "mid"


def test_an_unschedulable_proposal_commits_to_the_queue() -> None:
    sched = _scheduler(_pod("huge", "64"))
    attempt = sched.propose()
    assert attempt is not None and attempt.rows.size == 0 and attempt.scores is None
    res = sched.commit(attempt)
    assert res.node is None and res.message is not None and "Insufficient cpu" in res.message
    assert sched.queue.counts()["unschedulable"] + sched.queue.counts()["backoff"] == 1

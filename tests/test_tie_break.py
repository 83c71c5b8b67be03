"""Scheduler tie-break modes: seeded random (kube-scheduler) and first-in-node-order (replays)."""

import pytest

from kubesched.api.objects import Pod
from kubesched.config import default_config
from kubesched.plugins import in_tree_registry
from kubesched.scheduler import Scheduler
from kubesched.testing import build_snapshot, make_node, make_pod


def _place(tie_break: str, seed: int, order: list[str]) -> list[str]:
    reg = in_tree_registry()
    snap = build_snapshot([make_node(n, cpu="4", memory="8Gi") for n in order])
    sched = Scheduler(default_config(reg.points_of), snap, None, reg, seed=seed, tie_break=tie_break)
    sched.use_equivalence_cache = False
    out = []
    for i in range(3):
        sched.add_pending(Pod.parse(make_pod(f"p{i}", requests={"cpu": "10m"})))
        res = sched.schedule_one()
        assert res is not None and res.node
        out.append(res.node)
        sched.snapshot.remove_pod(res.pod.uid)  # keep every node tied for the next pod
    return out


def test_first_takes_the_tied_node_that_comes_first_in_node_order():
    assert _place("first", 1, ["c", "a", "b"]) == ["c", "c", "c"]
    assert _place("first", 7, ["b", "c", "a"]) == ["b", "b", "b"]


def test_random_spreads_ties_and_depends_on_the_seed():
    picks = {tuple(_place("random", s, ["a", "b", "c", "d"])) for s in range(8)}
    assert len(picks) > 1


def test_unknown_tie_break_is_rejected():
    reg = in_tree_registry()
    with pytest.raises(ValueError, match="tie_break"):
        Scheduler(default_config(reg.points_of), build_snapshot([]), None, reg, tie_break="lowest")

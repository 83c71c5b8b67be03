"""The batched preemption dry run gives exactly the node-by-node results.

When every Filter plugin judges a node by its own row, DefaultPreemption dry-runs a chunk of
nodes together (one vectorised Filter pass per reprieve round). Random clusters, with PDBs,
several priorities, nominated pods and node taints, are scheduled twice, batched and forced
node by node: every attempt's outcome, nomination, victim and message must agree.
"""

from __future__ import annotations

import random

import pytest

from kubesched.api.objects import Pod, PodDisruptionBudget
from kubesched.cluster.memory import MemoryCluster
from kubesched.config import default_config
from kubesched.framework.interfaces import SignPlugin
from kubesched.framework.preemption.evaluator import Evaluator
from kubesched.plugins import in_tree_registry
from kubesched.scheduler import Scheduler
from kubesched.testing import build_snapshot, make_node, make_pod


def _world(seed: int):
    rnd = random.Random(seed)
    nodes = []
    for i in range(rnd.randint(3, 12)):
        taints = [{"key": "t", "value": "x", "effect": "NoSchedule"}] if rnd.random() < 0.15 else None
        nodes.append(make_node(f"n{i}", cpu=rnd.choice(["2", "4"]), memory="8Gi", pods=rnd.choice([4, 110]), taints=taints))
    bound = []
    for i in range(rnd.randint(5, 30)):
        node = f"n{rnd.randrange(len(nodes))}"
        d = make_pod(
            f"b{i}",
            requests={"cpu": rnd.choice(["200m", "500m", "1"])},
            labels={"app": rnd.choice(["a", "b"])},
            node=node,
            priority=rnd.choice([0, 10, 100]),
        )
        d["status"] = {"startTime": f"2026-01-01T00:{rnd.randrange(60):02d}:00Z"}
        bound.append(d)
    pending = [
        Pod.parse(make_pod(f"p{i}", requests={"cpu": rnd.choice(["500m", "1", "2"])}, priority=rnd.choice([50, 200])))
        for i in range(rnd.randint(2, 8))
    ]
    pdbs = []
    if rnd.random() < 0.6:
        pdbs.append(
            PodDisruptionBudget.parse(
                {
                    "apiVersion": "policy/v1",
                    "kind": "PodDisruptionBudget",
                    "metadata": {"name": "pdb", "namespace": "default"},
                    "spec": {"selector": {"matchLabels": {"app": "a"}}},
                    "status": {"disruptionsAllowed": rnd.choice([0, 1, 2])},
                }
            )
        )
    return nodes, bound, pending, pdbs


def _run(seed: int, batched: bool, monkeypatch: pytest.MonkeyPatch, row_local: bool = True) -> list[tuple]:
    nodes, bound, pending, pdbs = _world(seed)
    with monkeypatch.context() as m:
        if not batched:
            m.setattr(Evaluator, "_batchable", lambda self, pod, snap: False)
        if not row_local:  # every shortcut off: node-by-node nominated-pod checks, no cache reuse
            for name in reg_names():
                cls = in_tree_registry(entry_points=False).resolve(name)
                if issubclass(cls, SignPlugin):
                    m.setattr(cls, "sign_pod", lambda self, pod, snap: None)
        reg = in_tree_registry(entry_points=False)
        snap = build_snapshot(nodes, bound)
        snap.pdbs.extend(pdbs)
        pods = [Pod.parse(b) for b in bound]
        cluster = MemoryCluster(pods={p.uid: p for p in pods})
        now = [0.0]
        sched = Scheduler(default_config(reg.points_of), snap, cluster, reg, seed=seed, clock=lambda: now[0])
        for p in pending:
            sched.add_pending(p)
        out = []
        for _ in range(40):
            res = sched.schedule_one()
            if res is None:
                nxt = sched.queue.next_backoff_expiry()
                if nxt is None:
                    break
                now[0] = nxt
                continue
            out.append((res.pod.name, res.node, res.nominated_node, res.message))
        out.append(tuple(sorted(p.name for p in cluster.deleted)))
        return out


def reg_names() -> list[str]:
    """The default profile's plugins that declare themselves row-local."""
    return [
        "NodeUnschedulable", "NodeName", "TaintToleration", "NodeAffinity", "NodePorts",
        "NodeResourcesFit", "NodeResourcesBalancedAllocation", "ImageLocality",
    ]  # fmt: skip


@pytest.mark.parametrize("seed", range(40))
def test_batched_dry_run_matches_node_by_node(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    batched = _run(seed, True, monkeypatch)
    assert batched == _run(seed, False, monkeypatch)
    assert batched == _run(seed, False, monkeypatch, row_local=False)


def test_worlds_exercise_preemption(monkeypatch: pytest.MonkeyPatch) -> None:
    """The random worlds above do preempt, through the batched path (else the comparison
    would prove nothing)."""
    calls = []
    real = Evaluator._victims_batched

    def spy(self, pod, snap, rows, pdbs):
        out = real(self, pod, snap, rows, pdbs)
        calls.append(out is not None)
        return out

    monkeypatch.setattr(Evaluator, "_victims_batched", spy)
    victims = sum(len(_run(s, True, monkeypatch)[-1]) for s in range(40))
    nominated = sum(1 for s in range(40) for r in _run(s, True, monkeypatch)[:-1] if r[2])
    assert victims >= 20 and nominated >= 20
    assert len(calls) >= 20 and all(calls)

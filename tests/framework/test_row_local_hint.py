"""The equivalence cache's per-pod row-locality hint (``Plugin.row_local_for``) changes speed,
never placements: InterPodAffinity's verdicts are kept per row while every term involved has a
one-node-per-value topology key, and the hint flips as pods with other terms come and go."""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

import pytest

from kubesched.api.objects import Node, Pod
from kubesched.app import VirtualClock
from kubesched.cluster.memory import MemoryCluster
from kubesched.config import default_config, parse_config
from kubesched.plugins import in_tree_registry
from kubesched.scheduler import Scheduler
from kubesched.state.snapshot import Snapshot
from kubesched.testing import make_node, make_pod

HOST, ZONE = "kubernetes.io/hostname", "topology.kubernetes.io/zone"
WEB = {"matchLabels": {"app": "web"}}


def _term(key: str, selector: dict = WEB) -> dict:
    return {"labelSelector": selector, "topologyKey": key}


def _pod(name: str, labels: dict[str, str], affinity: dict | None = None, cpu: str = "100m", ns: str = "default") -> Pod:
    spec = {"affinity": affinity} if affinity else None
    return Pod.parse(make_pod(name, namespace=ns, requests={"cpu": cpu, "memory": "128Mi"}, labels=labels, spec=spec))


def web(name: str, rng: random.Random) -> Pod:
    """No terms of its own: the hint holds while the matching existing terms are hostname-keyed."""
    return _pod(name, {"app": "web"}, cpu=rng.choice(["100m", "300m", "700m"]))


def web_anti(name: str) -> Pod:
    """One per node: hostname anti-affinity against its own label (hint holds)."""
    return _pod(name, {"app": "web"}, {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [_term(HOST)]}})


def guard(name: str, ns: str = "default") -> Pod:
    """An existing pod whose hostname anti-affinity rejects web pods on its node."""
    return _pod(name, {"role": "guard"}, {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        {**_term(HOST), "namespaces": ["default", "other"]}]}}, ns=ns)


def zone_guard(name: str) -> Pod:
    """Zone anti-affinity against web pods: their verdicts now read the whole zone (hint off)."""
    return _pod(name, {"role": "zone-guard"}, {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [_term(ZONE)]}})


def attractor(name: str) -> Pod:
    """Preferred affinity to web pods: PreScore scores them (hint off)."""
    return _pod(name, {"role": "attractor"}, {"podAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
        {"weight": 50, "podAffinityTerm": _term(HOST)}]}})


def preferring(name: str) -> Pod:
    """A web pod with a preferred term of its own (hint off)."""
    return _pod(name, {"app": "web"}, {"podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
        {"weight": 10, "podAffinityTerm": _term(HOST)}]}})


def follower(name: str) -> Pod:
    """Required hostname affinity to web pods: its own terms read the whole cluster (the first
    pod of a group), and as an existing pod it scores web pods at hardPodAffinityWeight."""
    return _pod(name, {"role": "follower"}, {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [_term(HOST)]}})


def nodes(rng: random.Random, n: int) -> list[Node]:
    return [
        Node.parse(make_node(f"n{i:03d}", cpu=rng.choice(["2", "4", "8"]), memory="16Gi", pods=rng.choice([6, 20, 110]),
                             labels={ZONE: f"z{i % 3}"}))
        for i in range(n)
    ]


def _twin(name: str) -> Node:
    return Node.parse(make_node(name, cpu="64", memory="64Gi", labels={HOST: "twin", ZONE: "z1"}))


Step = tuple[str, Any]


def scenario(rng: random.Random, n_nodes: int) -> list[Step]:
    """Phases of pods and cluster changes; the hint holds, flips off and back on for web pods."""
    c = iter(range(100_000))

    def webs(k: int) -> list[Pod]:
        return [web(f"web-{next(c)}", rng) for _ in range(k)]

    return [
        ("pods", [guard(f"guard-{i}", "other" if i % 2 else "default") for i in range(n_nodes // 4)] + webs(n_nodes)),
        ("pods", [web_anti(f"anti-{next(c)}") for _ in range(n_nodes // 3)] + webs(n_nodes // 2)),
        # bound by someone else (its own term would keep it out of zones with web pods): hint off,
        # and no web pod may go to its zone now
        ("bind", (zone_guard("zone-guard"), "n000")),
        ("pods", webs(n_nodes // 2)),
        ("delete", "zone-guard"),
        ("pods", webs(n_nodes // 2)),  # back on: the entry from before, its changed rows judged again
        ("pods", [attractor("attractor")] + webs(n_nodes // 3)),
        ("delete", "attractor"),
        ("pods", webs(n_nodes // 4)),  # hint back on
        ("pods", [preferring(f"pref-{next(c)}") for _ in range(4)] + webs(n_nodes // 3)),
        ("delete", "pref-"),  # their preferred terms score web pods while they exist
        ("pods", webs(n_nodes // 4)),  # hint back on
        ("pods", [follower("follower")] + webs(n_nodes // 3)),
        ("delete", "follower"),
        ("pods", webs(n_nodes // 4)),  # hint back on
        # two big nodes share a hostname: that domain is two nodes (hint off), and a guard bound to
        # one of them keeps web pods off both
        ("node", _twin("twin-a")),
        ("node", _twin("twin-b")),
        ("pods", webs(2)),
        ("bind", (guard("guard-twin"), "twin-a")),
        ("pods", webs(n_nodes // 3)),
        ("remove-node", "twin-a"),
        ("remove-node", "twin-b"),
        ("pods", webs(n_nodes // 4)),  # hint back on
        # more one-per-node pods than nodes: FitErrors from the cache's records, IPA among the reasons
        ("pods", webs(n_nodes // 3) + [web_anti(f"anti-{next(c)}") for _ in range(n_nodes // 4)]),
    ]


def _statuses(diag) -> list[tuple]:
    return sorted((row, int(st.code), st.reasons, st.plugin) for row, st in diag.statuses().items())


def run(seed: int, n_nodes: int, cache: bool, pct: int | None,
        spy: Callable[[Pod, bool], None] | None = None) -> tuple[list[tuple], Scheduler]:
    rng = random.Random(seed)
    reg = in_tree_registry()
    if pct is None:
        cfg = default_config(reg.points_of)
    else:
        doc = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
               "percentageOfNodesToScore": pct}
        cfg = parse_config(doc, "test", reg.points_of)
    snap = Snapshot()
    snap.set_namespace("default", {})
    snap.set_namespace("other", {"team": "b"})
    for n in nodes(rng, n_nodes):
        snap.add_node(n)
    clock = VirtualClock()
    sched = Scheduler(cfg, snap, MemoryCluster(), reg, seed=seed, clock=clock)
    sched.use_equivalence_cache = cache
    if spy is not None:
        ipa = next(iter(sched.frameworks.values())).plugins["InterPodAffinity"]
        ask = ipa.row_local_for

        def spying(pod: Pod, s: Snapshot) -> bool:
            answer = ask(pod, s)
            spy(pod, answer)
            return answer

        ipa.row_local_for = spying
    out: list[tuple] = []
    sched.hooks.on_scheduled.append(lambda r: out.append((r.pod.key, r.node)))
    sched.hooks.on_failed.append(
        lambda r: out.append((r.pod.key, None, r.message, sorted(r.diagnosis.unschedulable_plugins), r.diagnosis))
    )
    for kind, arg in scenario(rng, n_nodes):
        if kind == "pods":
            for p in arg:
                sched.add_pending(p)
            sched.run_until_idle(advance=clock.advance, max_attempts=sched.attempts + 10 * len(arg))
        elif kind == "delete":
            for p in [p for p in snap.pod_by_uid.values() if p.name.startswith(arg)]:
                sched.delete_pod(p)
        elif kind == "bind":
            snap.add_pod(arg[0].with_node(arg[1]))
            sched.queue.move_for_event("AssignedPodAdd")
        elif kind == "node":
            snap.add_node(arg)
        else:
            snap.remove_node(arg)
        out.append(("after", kind, sched.next_start_node_index))
    # failures keep their per-node statuses, read at the end as the regular path's
    out = [rec[:-1] + (_statuses(rec[-1]),) if len(rec) == 5 else rec for rec in out]
    return out, sched


@pytest.mark.parametrize("seed, n_nodes, pct", [(1, 24, None), (2, 40, None), (3, 150, 30), (4, 200, None)])
def test_hint_gives_identical_placements(seed: int, n_nodes: int, pct: int | None) -> None:
    answers: list[tuple[str, bool]] = []
    with_cache, sched = run(seed, n_nodes, True, pct, spy=lambda p, a: answers.append((p.name, a)))
    without, _ = run(seed, n_nodes, False, pct)
    assert with_cache == without
    eq = sched.frameworks["default-scheduler"].cache
    assert eq.each_cycle > n_nodes  # the hint path served many cycles: the comparison is not vacuous
    assert any(rec[1] is None and "InterPodAffinity" in rec[3] for rec in without)  # IPA rejects some pods
    assert eq.diagnosed > 0  # ... and FitErrors came from the records of a hinted entry or another
    web_answers = [a for name, a in answers if name.startswith("web-")]
    # on, off (zone guard), on, off (attractor), on, off (follower), on, off (twin), on
    flips = sum(1 for a, b in zip(web_answers, web_answers[1:], strict=False) if a != b)
    assert web_answers[0] and web_answers[-1] and flips >= 8
    assert not any(a for name, a in answers if name.startswith(("pref-", "follower")))


def test_unique_topology_key() -> None:
    snap = Snapshot()
    for i in range(3):
        snap.add_node(Node.parse(make_node(f"n{i}", labels={ZONE: "z0"})))
    assert snap.labels.unique(HOST) and not snap.labels.unique(ZONE)
    assert snap.labels.unique("absent")  # no node has it: no domain holds two nodes
    snap.add_node(Node.parse(make_node("twin", labels={HOST: "n0"})))
    assert not snap.labels.unique(HOST)
    snap.remove_node("n0")
    assert snap.labels.unique(HOST)
    snap.update_node(Node.parse(make_node("n1", labels={HOST: "n2"})))
    assert not snap.labels.unique(HOST)


def test_hint_answers() -> None:
    """row_local_for against the cases its docstring names, in one snapshot."""
    reg = in_tree_registry()
    cfg = default_config(reg.points_of)
    snap = Snapshot()
    for i in range(6):
        snap.add_node(Node.parse(make_node(f"n{i}", cpu="8", memory="16Gi", labels={ZONE: f"z{i % 2}"})))
    sched = Scheduler(cfg, snap, MemoryCluster(), reg, seed=1, clock=VirtualClock())
    ipa = next(iter(sched.frameworks.values())).plugins["InterPodAffinity"]
    rng = random.Random(0)

    def place(p: Pod, node: str) -> None:
        snap.add_pod(p.with_node(node))

    assert ipa.row_local_for(web("w", rng), snap)
    assert ipa.row_local_for(web_anti("a"), snap)
    assert not ipa.row_local_for(preferring("p"), snap)
    seeker = _pod("s", {"app": "web"}, {"podAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
        {"weight": 5, "podAffinityTerm": _term(HOST)}]}})
    assert not ipa.row_local_for(seeker, snap)
    assert not ipa.row_local_for(follower("f"), snap)
    zone_anti = _pod("za", {"app": "web"}, {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [_term(ZONE)]}})
    assert not ipa.row_local_for(zone_anti, snap)
    place(guard("g"), "n0")
    assert ipa.row_local_for(web("w", rng), snap)
    place(zone_guard("zg"), "n1")
    assert not ipa.row_local_for(web("w", rng), snap)
    other = _pod("o", {"app": "db"})  # the zone guard's term does not match it
    assert ipa.row_local_for(other, snap)
    snap.remove_pod("default-zg")
    assert ipa.row_local_for(web("w", rng), snap)
    place(follower("f"), "n2")  # its required affinity scores web pods (hardPodAffinityWeight 1)
    assert not ipa.row_local_for(web("w", rng), snap)
    ipa.hard_pod_affinity_weight = 0
    assert ipa.row_local_for(web("w", rng), snap)

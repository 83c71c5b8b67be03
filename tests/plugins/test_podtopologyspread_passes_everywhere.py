"""PodTopologySpread.passes_everywhere: True only when Filter passes every node.

The equivalence cache leaves the plugin's Filter out of a cycle when it says so; a wrong True would
place pods where upstream rejects them. Random clusters (some nodes without the zone label), random
bound pods and random incoming pods: whenever the hint holds, Filter must pass every row; and both
answers must occur, so the test cannot pass vacuously.
"""

from __future__ import annotations

import random

import numpy as np

from kubesched.api.objects import Node, Pod
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.status import Code
from kubesched.plugins.podtopologyspread import PodTopologySpread
from kubesched.plugins.podtopologyspread.common import PRE_FILTER_STATE_KEY
from kubesched.state.snapshot import Snapshot
from kubesched.testing import make_node, make_pod

ZONE = "zone"
HOST = "kubernetes.io/hostname"


def _node(name: str, zone: str | None) -> Node:
    d = make_node(name)
    d["metadata"]["labels"] = {HOST: name} | ({ZONE: zone} if zone else {})
    return Node.parse(d)


def _incoming(rng: random.Random, i: int) -> Pod:
    constraints = [
        {
            "maxSkew": rng.randint(1, 3),
            "topologyKey": rng.choice([ZONE, ZONE, HOST]),
            "whenUnsatisfiable": "DoNotSchedule",
            "labelSelector": {"matchLabels": {"color": "blue"}},
        }
        for _ in range(rng.randint(1, 2))
    ]
    labels = {"color": rng.choice(["blue", "red"])}
    return Pod.parse(make_pod(f"in{i}", labels=labels, spec={"topologySpreadConstraints": constraints}))


def _run(seed: int, answers: dict[bool, int]) -> None:
    rng = random.Random(seed)
    snap = Snapshot()
    zones = [f"z{k}" for k in range(rng.randint(2, 4))]
    missing = seed % 2 == 0  # half the clusters have a node without the zone label
    names = [f"n{k}" for k in range(12)]
    for k, name in enumerate(names):
        snap.add_node(_node(name, None if missing and k == 0 else zones[k % len(zones)]))
    plugin = PodTopologySpread({}, None)
    rows = np.arange(snap.n, dtype=np.intp)
    skewed = rng.random() < 0.5  # then the first zone gets most pods, so some domains exceed the skew
    for i in range(60):
        if skewed and rng.random() < 0.5:
            node = names[len(zones) * rng.randrange(3)]
        else:
            node = names[i % len(names)]
        color = rng.choice(["blue", "blue", "red"])
        snap.add_pod(Pod.parse(make_pod(f"b{i}", labels={"color": color}, node=node)))
        pod = _incoming(rng, i)
        state = CycleState()
        out = plugin.pre_filter(state, pod, snap)
        if out is not None and getattr(out, "code", None) == Code.Skip:
            continue
        hint = plugin.passes_everywhere(state, pod, snap)
        answers[hint] += 1
        st = state.read(PRE_FILTER_STATE_KEY)  # the Filter's own per-domain verdict tables agree
        tables_pass = bool(st.all_keys.all()) and not any(t[:-1].any() for t in st.verdict_tables(pod, snap))
        assert hint == tables_pass, (seed, i)
        if hint:
            assert (plugin.filter(state, pod, snap, rows).code == 0).all(), (seed, i)


def test_hint_holds_only_when_filter_passes_every_node() -> None:
    answers = {True: 0, False: 0}
    for seed in range(16):
        _run(seed, answers)
    assert answers[True] > 20 and answers[False] > 20, answers


def test_without_pre_filter_state_the_hint_never_holds() -> None:
    snap = Snapshot()
    snap.add_node(_node("n0", "z0"))
    pod = _incoming(random.Random(1), 0)
    assert not PodTopologySpread({}, None).passes_everywhere(CycleState(), pod, snap)

"""Incremental state kept beside the snapshot must follow pod adds/removes and node changes."""

from __future__ import annotations

import numpy as np

from kubesched.api.objects import Node, Pod
from kubesched.api.selectors import LabelSelector
from kubesched.config import default_config
from kubesched.plugins import in_tree_registry
from kubesched.plugins.interpodaffinity.filtering import ANTI_AFFINITY_TAG
from kubesched.plugins.interpodaffinity.plugin import ExistingTerms
from kubesched.plugins.interpodaffinity.terms import counts_by_value
from kubesched.scheduler import Scheduler
from kubesched.state.snapshot import Snapshot
from kubesched.testing import make_node, make_pod

ZONE = "topology.kubernetes.io/zone"
SEL = LabelSelector.parse({"matchLabels": {"app": "web"}}, "")
QUERY = (((SEL, frozenset({"default"})),), True)


def _snap(n: int = 6) -> Snapshot:
    snap = Snapshot()
    for i in range(n):
        snap.add_node(Node.parse(make_node(f"n{i}", labels={ZONE: f"z{i % 2}"})))
    return snap


def _pod(name: str, node: str, affinity: dict | None = None) -> Pod:
    spec = {"affinity": affinity} if affinity else None
    return Pod.parse(make_pod(name, node=node, labels={"app": "web"}, spec=spec))


def _fresh(snap: Snapshot) -> np.ndarray:
    pods = snap.pods
    mask = SEL.mask(pods.labels) & pods.namespace_mask({"default"}) & ~pods.deleting
    return np.bincount(pods.node_row[mask], minlength=snap.n)[: snap.n]


def test_match_counts_follow_pod_delete_and_node_changes():
    snap = _snap()
    snap.add_pod(_pod("a", "n0"))
    assert snap.match_counts.per_node(QUERY, snap.n).tolist() == _fresh(snap).tolist()
    zone = snap.match_counts.per_value(QUERY, snap.n, ZONE)
    assert zone.tolist() == [1, 0]
    snap.add_pod(_pod("b", "n3"))
    snap.add_pod(_pod("c", "n3"))
    snap.remove_pod(snap.pods.items[0].uid)  # a pod deleted between two cycles
    assert snap.match_counts.per_node(QUERY, snap.n).tolist() == _fresh(snap).tolist()
    assert snap.match_counts.per_value(QUERY, snap.n, ZONE).tolist() == [0, 2]
    snap.remove_node("n1")  # rows move: counts are rebuilt
    assert len(snap.match_counts) == 0
    assert snap.match_counts.per_node(QUERY, snap.n).tolist() == _fresh(snap).tolist()


def test_existing_term_index_drops_deleted_pods():
    snap = _snap()
    anti = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"labelSelector": {"matchLabels": {"app": "web"}}, "topologyKey": ZONE}]}}
    pods = [_pod(f"p{i}", f"n{i}", affinity=anti) for i in range(3)]
    for p in pods:
        snap.add_pod(p)
    index = ExistingTerms.of(snap).index
    (group,) = index.groups[ANTI_AFFINITY_TAG].values()
    assert group.counts(snap, ZONE).tolist() == [2, 1]
    snap.remove_pod(pods[0].uid)
    assert ExistingTerms.of(snap).index is index  # followed, not rebuilt
    (group,) = index.groups[ANTI_AFFINITY_TAG].values()
    rows, mults = group.arrays()
    assert group.counts(snap, ZONE).tolist() == counts_by_value(snap, ZONE, rows, mults).tolist() == [1, 1]
    snap.remove_pod(pods[1].uid)
    snap.remove_pod(pods[2].uid)
    assert not ExistingTerms.of(snap).index.groups[ANTI_AFFINITY_TAG]


def test_cached_cycle_ignores_stale_anti_affinity_state():
    """An entry built while an anti-affinity pod existed must not filter after it is deleted."""
    reg = in_tree_registry()
    placements = []
    for cache in (True, False):
        snap = Snapshot()
        for i in range(4):
            snap.add_node(Node.parse(make_node(f"n{i}", labels={ZONE: f"z{i % 2}"})))
        sched = Scheduler(default_config(reg.points_of), snap, None, reg, seed=1)
        sched.use_equivalence_cache = cache
        anti = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
            {"labelSelector": {"matchLabels": {"app": "web"}}, "topologyKey": ZONE}]}}
        guard = Pod.parse(make_pod("guard", node="n0", spec={"affinity": anti}))
        snap.add_pod(guard)
        spread = {"topologySpreadConstraints": [{"maxSkew": 1, "topologyKey": ZONE,
                  "whenUnsatisfiable": "DoNotSchedule", "labelSelector": {"matchLabels": {"app": "web"}}}]}
        out = []
        for i in range(6):
            if i == 2:
                sched.delete_pod(guard)
            pod = Pod.parse(make_pod(f"w{i}", labels={"app": "web"}, spec=spread))
            sched.add_pending(pod)
            res = sched.schedule_one()
            out.append(res.node if res else None)
        placements.append(out)
    assert placements[0] == placements[1]
    assert any(node in ("n0", "n2") for node in placements[0][2:])  # z0 is open again

"""The shipped storage example (kubesched/examples/storage-cluster.yaml): a StatefulSet pod whose
claim is bound to a zonal PV, one whose claim the WaitForFirstConsumer class provisions, and a
pod that wants a ReadWriteOncePod claim another pod holds. `schedule` places them and completes
the bindings offline; `explain` shows the volume plugins' per-node reasons."""

from __future__ import annotations

import json
from pathlib import Path

from cli_testlib import render

from kubesched.api.objects import Pod
from kubesched.app import build_session
from kubesched.batch import schedule_all
from kubesched.cli import main
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.equivalence import Batch
from kubesched.render import explain_table
from kubesched.testing import make_pod

EXAMPLE = str(Path(__file__).resolve().parents[2] / "kubesched" / "examples" / "storage-cluster.yaml")
RWOP = "node has pod using PersistentVolumeClaim with the same name and ReadWriteOncePod access mode"


def run_json(capsys, *argv: str) -> dict:
    code = main([*argv, "-f", EXAMPLE, "--seed", "1", "-o", "json"])
    out = capsys.readouterr()
    assert code == 0, out.err
    assert out.err == ""  # the dump loads without warnings
    return json.loads(out.out)


def test_schedule_places_the_statefulset_on_its_volumes_zones(capsys) -> None:
    data = run_json(capsys, "schedule")
    got = {p["pod"]: (p["node"], p["message"]) for p in data["placements"]}
    assert got["shop/db-0"] == ("node-a2", None)  # zone-a, and node-a1 has no attach slot left
    assert got["shop/db-1"][0] is not None
    assert got["shop/report-0"] == (
        None,
        f"0/4 nodes are available: 4 {RWOP}. preemption: 0/4 nodes are available: 4 No preemption victims found for incoming pod.",
    )


def test_explain_shows_the_volume_plugins_reasons_per_node(capsys) -> None:
    data = run_json(capsys, "explain", "shop/db-0")
    assert data["selected"] == "node-a2"
    failed = {
        n["name"]: {f["plugin"]: (f["code"], f["reasons"]) for f in n["filter"] if f["code"] != "Success"} for n in data["nodes"]
    }
    assert failed["node-a1"] == {"NodeVolumeLimits": ("Unschedulable", ["node(s) exceed max volume count"])}
    assert failed["node-a2"] == {}
    for node in ("node-b1", "node-b2"):
        assert failed[node] == {
            "VolumeBinding": ("UnschedulableAndUnresolvable", ["node(s) had volume node affinity conflict"]),
            "VolumeZone": ("UnschedulableAndUnresolvable", ["node(s) had no available volume zone"]),
        }
    text = " ".join(render(lambda c: explain_table(data, console=c), 120).split())
    assert "NodeVolumeLimits node(s) exceed max volume count" in text
    assert "VolumeZone node(s) had no available volume zone" in text


def test_explain_of_the_rwop_pod(capsys) -> None:
    data = run_json(capsys, "explain", "shop/report-0")
    assert data["selected"] is None
    for n in data["nodes"]:
        restrictions = next(f for f in n["filter"] if f["plugin"] == "VolumeRestrictions")
        assert (restrictions["code"], restrictions["reasons"]) == ("Unschedulable", [RWOP])


def test_schedule_completes_the_bindings_offline() -> None:
    """PreBind binds db-0's claim where it already is, and provisions db-1's: the claim gets the
    selected-node annotation and a PV on that node's zone (kubesched plays the external provisioner)."""
    s = build_session([EXAMPLE], None, 1, None)
    placed = {p["pod"]: p["node"] for p in schedule_all(s).to_json()["placements"]}
    storage = s.scheduler.snapshot.storage
    claim = storage.pvc("shop", "data-db-1")
    node = placed["shop/db-1"]
    assert claim.annotations["volume.kubernetes.io/selected-node"] == node
    assert claim.annotations["volume.kubernetes.io/storage-provisioner"] == "disk.csi.example.com"
    assert claim.volume_name == "pvc-uid-data-db-1" and claim.phase == "Bound"
    pv = storage.pvs["pvc-uid-data-db-1"]
    zone = {"node-a1": "zone-a", "node-a2": "zone-a", "node-b1": "zone-b", "node-b2": "zone-b"}[node]
    assert pv.claim_ref.name == "data-db-1" and pv.capacity == 20 * 2**30
    assert pv.node_affinity.matches({"topology.kubernetes.io/zone": zone}, "")
    assert storage.pvc("shop", "data-db-0").volume_name == "pv-db-0"



def test_simulate_reads_and_binds_the_storage_objects() -> None:
    """simulate loads the storage objects as schedule does: the same placements and message."""
    from kubesched.app import build_registry
    from kubesched.config.load import default_config
    from kubesched.sim.runner import simulate
    from kubesched.sim.workload import from_manifests

    reg = build_registry([])
    res = simulate(default_config(reg.points_of), from_manifests([EXAMPLE]), mode="arrival", seed=1, registry=reg)
    t = res.pods
    got = {k: (state, node) for k, state, node in zip(t["pod"], t["state"], t["node"], strict=True)}
    assert got["shop/db-0"] == ("running", "node-a2")
    assert got["shop/db-1"][0] == "running" and got["shop/report-0"][0] == "failed"
    assert res.summary["pods"]["failed"] == 1


def test_equivalence_cache_changes_nothing_with_volumes() -> None:
    """Cache on or off, the same placements and the same bindings; a pod without volumes has
    the volume plugins signed NOTHING, so its binding cycle shares the cache's state (no copy)."""

    def run(cache: bool) -> tuple[dict, dict]:
        s = build_session([EXAMPLE], None, 1, None)
        s.scheduler.use_equivalence_cache = cache
        placed = {p["pod"]: p["node"] for p in schedule_all(s).to_json()["placements"]}
        storage = s.scheduler.snapshot.storage
        return placed, {k: (c.volume_name, dict(c.annotations)) for k, c in storage.pvcs.items()}

    assert run(True) == run(False)

    s = build_session([EXAMPLE], None, 1, None)
    fw = s.scheduler.frameworks["default-scheduler"]
    plain = Pod.parse(make_pod("plain", namespace="shop", requests={"cpu": "100m"}))
    for _ in range(2):  # a miss, then a hit
        found = fw.cache.find_feasible(fw, CycleState(), plain, s.scheduler.snapshot, 0, lambda n: n)
        assert isinstance(found, Batch)
        assert found.entry.roles.binding_writes is False

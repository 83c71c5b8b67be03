"""VolumeRestrictions: upstream volume_restrictions_test.go (v1.36), ported table by table.

- TestGCEDiskConflicts: 5 of 5 cases.
- TestAWSDiskConflicts, TestRBDDiskConflicts, TestISCSIDiskConflicts: 4 of 4 cases each.
- TestAccessModeConflicts: 5 of 5 cases.
- Test_isSchedulableAfterPodDeleted, Test_isSchedulableAfterPersistentVolumeClaimChange: 0 of
  10 and 0 of 5 cases. kubesched's queue moves a rejected pod on the events its plugins
  register (checked below), not through per-event hint functions.

As upstream's tests, Filter runs only where PreFilter succeeded; the node holds the pods of the
table's nodeInfo (and, for the access-mode table, the snapshot its existing pods).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from kubesched.api.objects import Pod
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.status import Code, Status
from kubesched.plugins.volumerestrictions import (
    ERR_REASON_DISK_CONFLICT,
    ERR_REASON_READ_WRITE_ONCE_POD_CONFLICT,
    NAME,
    VolumeRestrictions,
)
from kubesched.testing import build_snapshot, make_node, make_pod
from kubesched.testing_storage import make_pvc, pvc_volume, with_storage

SKIP = Status(Code.Skip, plugin=NAME)
OK = Status(plugin=NAME)
DISK = Status(Code.Unschedulable, (ERR_REASON_DISK_CONFLICT,), NAME)
RWOP = Status(Code.Unschedulable, (ERR_REASON_READ_WRITE_ONCE_POD_CONFLICT,), NAME)

_seq = iter(range(1_000_000))


def pod(*volumes: dict[str, Any], name: str | None = None, node: str | None = None) -> Pod:
    name = name or f"p{next(_seq)}"
    return Pod.parse(make_pod(name, node=node, spec={"volumes": list(volumes)} if volumes else {}))


def run(incoming: Pod, on_node: list[Pod], storage: list[dict[str, Any]] = ()) -> tuple[Status, Status | None]:
    """(PreFilter, Filter or None when PreFilter did not succeed)."""
    assigned = [p.with_node("node-1") for p in on_node]
    snap = with_storage(build_snapshot([make_node("node-1")], assigned), *storage)
    state = CycleState()
    plugin = VolumeRestrictions()
    pre = plugin.pre_filter(state, incoming, snap)
    pre_status = pre if isinstance(pre, Status) else OK
    if not pre_status.ok:
        return pre_status, None
    return pre_status, plugin.filter(state, incoming, snap, np.arange(1, dtype=np.int32)).status_at(0, NAME)


def vol(source: str, **fields: Any) -> dict[str, Any]:
    return {"name": "v", source: fields}


GCE, GCE2 = vol("gcePersistentDisk", pdName="foo"), vol("gcePersistentDisk", pdName="bar")
AWS, AWS2 = vol("awsElasticBlockStore", volumeID="foo"), vol("awsElasticBlockStore", volumeID="bar")
RBD = vol("rbd", monitors=["a", "b"], pool="foo", image="bar", fsType="ext4")
RBD2 = vol("rbd", monitors=["c", "d"], pool="foo", image="bar", fsType="ext4")
ISCSI = vol("iscsi", targetPortal="127.0.0.1:3260", iqn="iqn.2016-12.server:storage.target01", fsType="ext4", lun=0)
ISCSI2 = vol("iscsi", targetPortal="127.0.0.1:3260", iqn="iqn.2017-12.server:storage.target01", fsType="ext4", lun=0)
NO_RESTRICTION = {"name": "volume-with-no-restriction", "emptyDir": {}}


def disk_cases(same: dict[str, Any], other: dict[str, Any]) -> list[tuple[str, Pod, list[Pod], Status, Status | None]]:
    """The four cases each disk table shares."""
    return [
        ("nothing", pod(), [], SKIP, None),
        ("one state", pod(), [pod(same)], SKIP, None),
        ("same state", pod(same), [pod(same)], OK, DISK),
        ("different state", pod(other), [pod(same)], OK, OK),
    ]


GCE_CASES = [
    *disk_cases(GCE, GCE2),
    ("pod with a volume that doesn't have restrictions", pod(NO_RESTRICTION), [], SKIP, None),
]


@pytest.mark.parametrize(
    ("table", "name", "incoming", "on_node", "want_pre", "want"),
    [
        ("TestGCEDiskConflicts", *c) for c in GCE_CASES
    ] + [("TestAWSDiskConflicts", *c) for c in disk_cases(AWS, AWS2)]
    + [("TestRBDDiskConflicts", *c) for c in disk_cases(RBD, RBD2)]
    + [("TestISCSIDiskConflicts", *c) for c in disk_cases(ISCSI, ISCSI2)],
    ids=lambda v: v if isinstance(v, str) else "",
)
def test_disk_conflicts(
    table: str, name: str, incoming: Pod, on_node: list[Pod], want_pre: Status, want: Status | None
) -> None:
    assert run(incoming, on_node) == (want_pre, want)


# TestAccessModeConflicts
POD_WITH_ONE_PVC = pod(pvc_volume("claim-with-rwop-1"), name="pod-with-one-pvc")
POD_WITH_TWO_PVCS = pod(pvc_volume("claim-with-rwop-1"), pvc_volume("claim-with-rwop-2"), name="pod-with-two-pvcs")
POD_WITH_ONE_CONFLICT = pod(pvc_volume("claim-with-rwop-1"), name="pod-with-one-conflict")
POD_WITH_TWO_CONFLICTS = pod(pvc_volume("claim-with-rwop-1"), pvc_volume("claim-with-rwop-2"), name="pod-with-two-conflicts")
POD_WITH_RWX = pod(pvc_volume("claim-with-rwx"), name="pod-with-rwx")
RWOP_1 = make_pvc("claim-with-rwop-1", access_modes=["ReadWriteOncePod"])
RWOP_2 = make_pvc("claim-with-rwop-2", access_modes=["ReadWriteOncePod"])
RWX = make_pvc("claim-with-rwx", access_modes=["ReadWriteMany"])

ACCESS_MODE = [
    ("nothing", pod(), [], [], SKIP, None),
    (
        "failed to get PVC",
        POD_WITH_ONE_PVC,
        [],
        [],
        Status(Code.UnschedulableAndUnresolvable, ('persistentvolumeclaim "claim-with-rwop-1" not found',), NAME),
        None,
    ),
    ("no access mode conflict", POD_WITH_ONE_PVC, [POD_WITH_RWX], [RWOP_1, RWX], SKIP, None),
    ("access mode conflict, unschedulable", POD_WITH_ONE_CONFLICT, [POD_WITH_ONE_PVC, POD_WITH_RWX], [RWOP_1, RWX], OK, RWOP),
    (
        "two conflicts, unschedulable",
        POD_WITH_TWO_CONFLICTS,
        [POD_WITH_TWO_PVCS, POD_WITH_RWX],
        [RWOP_1, RWOP_2, RWX],
        OK,
        RWOP,
    ),
]


@pytest.mark.parametrize(
    ("name", "incoming", "on_node", "claims", "want_pre", "want"), ACCESS_MODE, ids=[c[0] for c in ACCESS_MODE]
)
def test_access_mode_conflicts(
    name: str, incoming: Pod, on_node: list[Pod], claims: list[dict], want_pre: Status, want: Status | None
) -> None:
    assert run(incoming, on_node, claims) == (want_pre, want)


# -- beyond the upstream tables ----------------------------------------------------------------


def test_read_only_mounts_share_a_gce_disk_but_not_an_ebs_volume() -> None:
    ro_gce = vol("gcePersistentDisk", pdName="foo", readOnly=True)
    assert run(pod(ro_gce), [pod(ro_gce)]) == (OK, OK)
    assert run(pod(ro_gce), [pod(GCE)]) == (OK, DISK)  # unless all pods mount it read-only
    ro_ebs = vol("awsElasticBlockStore", volumeID="foo", readOnly=True)
    assert run(pod(ro_ebs), [pod(ro_ebs)]) == (OK, DISK)


def test_rbd_images_conflict_through_one_shared_monitor() -> None:
    overlapping = vol("rbd", monitors=["b", "z"], pool="foo", image="bar")
    assert run(pod(overlapping), [pod(RBD)]) == (OK, DISK)
    other_image = vol("rbd", monitors=["a"], pool="foo", image="baz")
    assert run(pod(other_image), [pod(RBD)]) == (OK, OK)


def test_preemption_dry_run_counts_removed_claim_users() -> None:
    """AddPod/RemovePod: removing the pod that holds the ReadWriteOncePod claim (a preemption
    victim) clears the conflict; adding it back restores it."""
    holder = POD_WITH_ONE_PVC.with_node("node-1")
    snap = with_storage(build_snapshot([make_node("node-1")], [holder]), RWOP_1)
    state, plugin = CycleState(), VolumeRestrictions()
    assert plugin.pre_filter(state, POD_WITH_ONE_CONFLICT, snap) is None
    rows = np.arange(1, dtype=np.int32)
    assert plugin.filter(state, POD_WITH_ONE_CONFLICT, snap, rows).status_at(0, NAME) == RWOP
    assert plugin.remove_pod(state, POD_WITH_ONE_CONFLICT, holder, 0, snap) is None
    assert plugin.filter(state, POD_WITH_ONE_CONFLICT, snap, rows).status_at(0, NAME) == OK
    plugin.add_pod(state, POD_WITH_ONE_CONFLICT, holder, 0, snap)
    assert plugin.filter(state, POD_WITH_ONE_CONFLICT, snap, rows).status_at(0, NAME) == RWOP


def test_claims_in_use_follow_pods_coming_and_going() -> None:
    snap = with_storage(build_snapshot([make_node("node-1")]), RWOP_1)
    plugin = VolumeRestrictions()
    assert plugin.pre_filter(CycleState(), POD_WITH_ONE_CONFLICT, snap) == SKIP
    snap.add_pod(POD_WITH_ONE_PVC.with_node("node-1"))
    assert plugin.pre_filter(CycleState(), POD_WITH_ONE_CONFLICT, snap) is None
    snap.remove_pod(POD_WITH_ONE_PVC.uid)
    assert plugin.pre_filter(CycleState(), POD_WITH_ONE_CONFLICT, snap) == SKIP


def test_filter_without_pre_filter_is_an_error() -> None:
    snap = build_snapshot([make_node("node-1")])
    st = VolumeRestrictions().filter(CycleState(), pod(GCE2), snap, np.arange(1, dtype=np.int32)).status_at(0, NAME)
    assert st == Status(Code.Error, ('cannot read "PreFilterVolumeRestrictions" from cycleState',), NAME)


def test_events_to_register() -> None:
    """EventsToRegister with queueing hints on (v1.36): Pod Delete, Node Add, PVC Add."""
    assert VolumeRestrictions.events_to_register == {"AssignedPodDelete", "NodeAdd", "PersistentVolumeClaimAdd"}

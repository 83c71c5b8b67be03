"""VolumeZone: upstream volume_zone_test.go (v1.36), ported table by table.

- TestSingleZone: 14 of 14 cases.
- TestMultiZone: 5 of 5 cases.
- TestWithBinding: 5 of 5 cases. Upstream's fake StorageClass lister words a missing class
  ``storageclasses.storage.k8s.io "Class_0" not found``; the informer listers kube-scheduler runs
  with (and kubesched) use the singular resource, ``storageclass.storage.k8s.io``.
- TestIsSchedulableAfterPersistentVolumeClaimAdded, TestIsSchedulableAfterStorageClassAdded,
  TestIsSchedulableAfterPersistentVolumeChange: 0 of 7, 3, 6 cases. kubesched's queue moves a
  rejected pod on the events its plugins register (checked below), not through per-event
  hint functions.
- BenchmarkVolumeZone: a benchmark, not a table.

As upstream's tests, each case runs PreFilter and then Filter on one node, Filter with whatever
state PreFilter left (a failed or skipped PreFilter leaves none: Filter computes its own).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from kubesched.api.objects import Pod
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.status import Code, Status
from kubesched.plugins.volumezone import ERR_REASON_CONFLICT, NAME, VolumeZone
from kubesched.testing import build_snapshot, make_node, make_pod
from kubesched.testing_storage import make_pv, make_pvc, make_storage_class, pvc_volume, with_storage

BETA_ZONE = "failure-domain.beta.kubernetes.io/zone"
BETA_REGION = "failure-domain.beta.kubernetes.io/region"
ZONE = "topology.kubernetes.io/zone"
REGION = "topology.kubernetes.io/region"

SKIP = Status(Code.Skip, plugin=NAME)
CONFLICT = Status(Code.UnschedulableAndUnresolvable, (ERR_REASON_CONFLICT,), NAME)


def unresolvable(message: str) -> Status:
    return Status(Code.UnschedulableAndUnresolvable, (message,), NAME)


def pod_with_volume(claim: str | None) -> Pod:
    """createPodWithVolume (no claim: st.MakePod().Name("pod_1"))."""
    spec = {"volumes": [pvc_volume(claim, "vol")]} if claim else {}
    return Pod.parse(make_pod("pod-1", spec=spec))


def node(labels: dict[str, str]) -> dict[str, Any]:
    n = make_node("host1", labels=labels)
    n["metadata"]["labels"].pop("kubernetes.io/hostname")  # upstream's nodes carry only the table's labels
    return n


def run(pod: Pod, node_labels: dict[str, str], storage: list[dict[str, Any]]) -> tuple[Status, Status]:
    snap = with_storage(build_snapshot([node(node_labels)]), *storage)
    state = CycleState()
    plugin = VolumeZone()
    pre = plugin.pre_filter(state, pod, snap)
    pre_status = pre if isinstance(pre, Status) else Status(plugin=NAME)
    res = plugin.filter(state, pod, snap, np.arange(1, dtype=np.int32))
    return pre_status, res.status_at(0, NAME)


OK = Status(plugin=NAME)

SINGLE_ZONE_STORAGE = [
    make_pv("vol-1", labels={BETA_ZONE: "us-west1-a"}),
    make_pv("vol-2", labels={BETA_REGION: "us-west1", "uselessLabel": "none"}),
    make_pv("vol-3", labels={BETA_REGION: "us-west1"}),
    make_pv("vol-stable-1", labels={ZONE: "us-west1-a"}),
    make_pv("vol-stable-2", labels={REGION: "us-west1", "uselessLabel": "none"}),
    make_pv("vol-stable-3", labels={ZONE: "us-west1-a", REGION: "us-west1-a"}),
    make_pvc("pvc-1", volume_name="vol-1"),
    make_pvc("pvc-2", volume_name="vol-2"),
    make_pvc("pvc-3", volume_name="vol-3"),
    make_pvc("pvc-4", volume_name="vol-not-exist"),
    make_pvc("pvc-stable-1", volume_name="vol-stable-1"),
    make_pvc("pvc-stable-2", volume_name="vol-stable-2"),
    make_pvc("pvc-stable-3", volume_name="vol-stable-3"),
]

# TestSingleZone: (name, claim, node labels, PreFilter, Filter)
SINGLE_ZONE = [
    ("pod without volume", None, {BETA_ZONE: "us-west1-a"}, SKIP, OK),
    ("node without labels", "pvc-1", {}, OK, OK),
    ("beta zone label matched", "pvc-1", {BETA_ZONE: "us-west1-a", "uselessLabel": "none"}, OK, OK),
    ("beta region label matched", "pvc-2", {BETA_REGION: "us-west1", "uselessLabel": "none"}, OK, OK),
    ("beta region label doesn't match", "pvc-2", {BETA_REGION: "no_us-west1", "uselessLabel": "none"}, OK, CONFLICT),
    ("beta zone label doesn't match", "pvc-1", {BETA_ZONE: "no_us-west1-a", "uselessLabel": "none"}, OK, CONFLICT),
    ("zone label matched", "pvc-stable-1", {ZONE: "us-west1-a", "uselessLabel": "none"}, OK, OK),
    ("region label matched", "pvc-stable-2", {REGION: "us-west1", "uselessLabel": "none"}, OK, OK),
    ("region label doesn't match", "pvc-stable-2", {REGION: "no_us-west1", "uselessLabel": "none"}, OK, CONFLICT),
    ("zone label doesn't match", "pvc-stable-1", {ZONE: "no_us-west1-a", "uselessLabel": "none"}, OK, CONFLICT),
    ("pv with zone and region, node with only zone", "pvc-stable-3", {ZONE: "us-west1-a"}, OK, CONFLICT),
    ("pv with zone,node with beta zone", "pvc-stable-1", {BETA_ZONE: "us-west1-a"}, OK, CONFLICT),
    ("pv with beta label,node with ga label, matched", "pvc-1", {ZONE: "us-west1-a"}, OK, OK),
    ("pv with beta label,node with ga label, don't match", "pvc-1", {ZONE: "us-west1-b"}, OK, CONFLICT),
]


@pytest.mark.parametrize(("name", "claim", "labels", "want_pre", "want"), SINGLE_ZONE, ids=[c[0] for c in SINGLE_ZONE])
def test_single_zone(name: str, claim: str | None, labels: dict[str, str], want_pre: Status, want: Status) -> None:
    assert run(pod_with_volume(claim), labels, SINGLE_ZONE_STORAGE) == (want_pre, want)


MULTI_ZONE_STORAGE = [
    make_pv("vol-1", labels={BETA_ZONE: "us-west1-a"}),
    make_pv("vol-2", labels={BETA_ZONE: "us-west1-b", "uselessLabel": "none"}),
    make_pv("vol-3", labels={BETA_ZONE: "us-west1-c__us-west1-a"}),
    make_pv("vol-stable-1", labels={ZONE: "us-west1-a"}),
    make_pv("vol-stable-2", labels={ZONE: "us-west1-c__us-west1-a"}),
    make_pvc("pvc-1", volume_name="vol-1"),
    make_pvc("pvc-2", volume_name="vol-2"),
    make_pvc("pvc-3", volume_name="vol-3"),
    make_pvc("pvc-4", volume_name="vol-not-exist"),
    make_pvc("pvc-stable-1", volume_name="vol-stable-1"),
    make_pvc("pvc-stable-2", volume_name="vol-stable-2"),
]

MULTI_ZONE = [
    ("node without labels", "pvc-3", {}, OK),
    ("beta zone label matched", "pvc-3", {BETA_ZONE: "us-west1-a", "uselessLabel": "none"}, OK),
    ("beta zone label doesn't match", "pvc-1", {BETA_ZONE: "us-west1-b", "uselessLabel": "none"}, CONFLICT),
    ("zone label matched", "pvc-stable-2", {ZONE: "us-west1-a", "uselessLabel": "none"}, OK),
    ("zone label doesn't match", "pvc-stable-1", {ZONE: "us-west1-b", "uselessLabel": "none"}, CONFLICT),
]


@pytest.mark.parametrize(("name", "claim", "labels", "want"), MULTI_ZONE, ids=[c[0] for c in MULTI_ZONE])
def test_multi_zone(name: str, claim: str, labels: dict[str, str], want: Status) -> None:
    assert run(pod_with_volume(claim), labels, MULTI_ZONE_STORAGE) == (OK, want)


WITH_BINDING_STORAGE = [
    make_storage_class("class-immediate", mode=None),  # volumeBindingMode not set (no API defaulting here)
    make_storage_class("class-wait", mode="WaitForFirstConsumer"),
    make_pv("vol-1", labels={BETA_ZONE: "us-west1-a"}),
    make_pvc("pvc-1", volume_name="vol-1"),
    make_pvc("pvc-nosc", storage_class="class-0"),
    make_pvc("pvc-emptysc"),
    make_pvc("pvc-waitsc", storage_class="class-wait"),
    make_pvc("pvc-immediatesc", storage_class="class-immediate"),
]
NO_NAMES = unresolvable("PersistentVolumeClaim had no pv name and storageClass name")
NO_CLASS = unresolvable('storageclass.storage.k8s.io "class-0" not found')
NO_MODE = unresolvable('VolumeBindingMode not set for StorageClass "class-immediate"')

WITH_BINDING = [
    ("label zone failure domain matched", "pvc-1", OK, OK),
    ("unbound volume empty storage class", "pvc-emptysc", NO_NAMES, NO_NAMES),
    ("unbound volume no storage class", "pvc-nosc", NO_CLASS, NO_CLASS),
    ("unbound volume immediate binding mode", "pvc-immediatesc", NO_MODE, NO_MODE),
    ("unbound volume wait binding mode", "pvc-waitsc", SKIP, OK),
]


@pytest.mark.parametrize(("name", "claim", "want_pre", "want"), WITH_BINDING, ids=[c[0] for c in WITH_BINDING])
def test_with_binding(name: str, claim: str, want_pre: Status, want: Status) -> None:
    labels = {BETA_ZONE: "us-west1-a", "uselessLabel": "none"}
    assert run(pod_with_volume(claim), labels, WITH_BINDING_STORAGE) == (want_pre, want)


# -- beyond the upstream tables ----------------------------------------------------------------


def test_missing_claim_and_volume_are_unresolvable() -> None:
    """getErrorAsStatus: a lister's NotFound is UnschedulableAndUnresolvable with its message."""
    assert run(pod_with_volume("pvc-none"), {}, SINGLE_ZONE_STORAGE)[0] == unresolvable(
        'persistentvolumeclaim "pvc-none" not found'
    )
    assert run(pod_with_volume("pvc-4"), {}, SINGLE_ZONE_STORAGE)[0] == unresolvable(
        'persistentvolume "vol-not-exist" not found'
    )


def test_unbound_immediate_claim_has_no_volume_name() -> None:
    storage = [make_storage_class("fast", mode="Immediate"), make_pvc("c", storage_class="fast")]
    assert run(pod_with_volume("c"), {}, storage)[0] == unresolvable("PersistentVolume had no name")


def test_a_malformed_zone_label_is_ignored() -> None:
    """LabelZonesToSet fails on an empty zone (``a__``): the label is ignored, so the PV does not
    constrain the node and PreFilter, with nothing left, skips."""
    storage = [make_pv("v", labels={ZONE: "us-west1-a__"}), make_pvc("c", volume_name="v")]
    assert run(pod_with_volume("c"), {ZONE: "elsewhere"}, storage) == (SKIP, OK)


def test_many_nodes_in_one_call() -> None:
    snap = with_storage(
        build_snapshot([make_node(f"n{i}", labels={ZONE: z}) for i, z in enumerate("abcab")]),
        make_pv("v", labels={ZONE: "a__c"}),
        make_pvc("c", volume_name="v"),
    )
    state, pod = CycleState(), pod_with_volume("c")
    assert VolumeZone().pre_filter(state, pod, snap) is None
    res = VolumeZone().filter(state, pod, snap, np.array([4, 3, 2, 1, 0], np.int32))
    assert res.failed.tolist() == [True, False, False, True, False]


def test_events_to_register() -> None:
    """EventsToRegister with queueing hints on (v1.36): Node Add|UpdateNodeLabel, StorageClass
    Add, PersistentVolumeClaim and PersistentVolume Add|Update."""
    assert VolumeZone.events_to_register == {
        "NodeAdd",
        "NodeUpdate",
        "StorageClassAdd",
        "PersistentVolumeClaimAdd",
        "PersistentVolumeClaimUpdate",
        "PersistentVolumeAdd",
        "PersistentVolumeUpdate",
    }

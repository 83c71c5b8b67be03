"""VolumeBinding: upstream volume_binding_test.go (v1.36), ported, and the offline binding.

- TestVolumeBinding: 15 of 15 cases. Each runs PreFilter (status; the claims it sorted), Filter
  on every node, PreScore and, when it does not skip, Score. Adapted: "all bound with local
  volumes" expects no PreFilterResult, as v1.36's binder has no GetEligibleNodes (the copy of
  the table this port follows predates its removal); the five scoring cases ran under the
  VolumeCapacityPriority gate, whose scorer v1.36 builds only under StorageCapacityScoring
  (alpha, off): they run with that gate on and the table's shape (utilization 0 -> 0, 100 ->
  10), and expect the table's scores.
- TestIsSchedulableAfterPersistentVolumeChange (and the other hint tables of later versions): 0
  of 5 cases. kubesched's queue moves a rejected pod on the events its plugins register (checked
  below), not through per-event hint functions.

Beyond the table: Reserve/PreBind against the in-memory cluster (static binding writes the PV's
claimRef and the claim's volumeName; WaitForFirstConsumer provisioning annotates the claim with
the selected node and creates the PV there), Unreserve, PreBindPreFlight, and the scheduler
placing a pod on the only node where a volume can follow it.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from kubesched import features
from kubesched.api.objects import Pod
from kubesched.api.storage import ANN_BIND_COMPLETED, ANN_SELECTED_NODE
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.status import Code, Status
from kubesched.plugins.volumebinding import (
    ERR_REASON_BIND_CONFLICT,
    ERR_REASON_NODE_CONFLICT,
    ERR_REASON_PV_NOT_EXIST,
    ERR_REASON_UNBOUND_IMMEDIATE,
    NAME,
    VolumeBinding,
)
from kubesched.testing import build_snapshot, make_node, make_pod, run_filter
from kubesched.testing_storage import (
    make_csi_node,
    make_pv,
    make_pvc,
    make_storage_class,
    pvc_volume,
    with_storage,
)

HOSTNAME = "kubernetes.io/hostname"
ZONE, REGION = "topology.kubernetes.io/zone", "topology.kubernetes.io/region"
OK = Status(plugin=NAME)
SKIP = Status(Code.Skip, plugin=NAME)
# the table's classes name no provisioner: they cannot provision
CLASSES = [
    make_storage_class("immediate-sc", provisioner="", mode="Immediate"),
    make_storage_class("wait-sc", provisioner="", mode="WaitForFirstConsumer"),
    make_storage_class("wait-hdd-sc", provisioner="", mode="WaitForFirstConsumer"),
]
DEFAULT_SHAPE = [{"utilization": 0, "score": 0}, {"utilization": 100, "score": 10}]


def unresolvable(*reasons: str) -> Status:
    return Status(Code.UnschedulableAndUnresolvable, reasons, NAME)


def pod(*claims: str) -> Pod:
    """makePod("pod-a").withPVCVolume(claim, "")..."""
    return Pod.parse(make_pod("pod-a", spec={"volumes": [pvc_volume(c, f"v{i}") for i, c in enumerate(claims)]}))


def pvc(name: str, sc: str, *, bound: str | None = None, request: str | None = None, phase: str | None = None) -> dict:
    """makePVC(name, class).withBoundPV(pv).withRequestStorage(q).withPhase(p)."""
    d = make_pvc(name, storage_class=sc, volume_name=bound, request=request, access_modes=(), phase=phase)
    if bound:
        d["metadata"]["annotations"][ANN_BIND_COMPLETED] = "true"
    return d


def pv(name: str, sc: str, *, phase: str = "Available", capacity: str | None = None, affinity: dict | None = None) -> dict:
    """makePV(name, class).withPhase(p).withCapacity(q).withNodeAffinity(keys -> values)."""
    terms = None
    if affinity is not None:
        terms = [{"matchExpressions": [{"key": k, "operator": "In", "values": v} for k, v in affinity.items()]}]
    return make_pv(name, storage_class=sc, phase=phase, capacity=capacity, access_modes=(), node_affinity=terms)


def zonal_nodes() -> list[dict]:
    return [
        make_node(f"zone-{z}-node-{n}", labels={REGION: f"region-{z}", ZONE: f"zone-{z}"}) for z in "abc" for n in "ab"
    ]


def zonal_pvs() -> list[dict]:
    return [
        pv(f"pv-{z}-{i}", "wait-sc", capacity=cap, affinity={REGION: [f"region-{z}"], ZONE: [f"zone-{z}"]})
        for z, cap in (("a", "200Gi"), ("b", "100Gi"))
        for i in range(2)
    ]


def local_pvs(specs: list[tuple[str, str, str, str]]) -> list[dict]:
    """(name, class, capacity, node) of local PVs."""
    return [pv(n, sc, capacity=cap, affinity={HOSTNAME: [node]}) for n, sc, cap, node in specs]


# (name, pod, nodes, claims, PVs, scoring gate, args, PreFilter, claims sorted (bound, delayed),
#  Filter per node, PreScore, scores)
LOCAL_A_B = [("pv-a-0", "wait-sc", "200Gi", "node-a"), ("pv-a-1", "wait-sc", "200Gi", "node-a"),
             ("pv-b-0", "wait-sc", "100Gi", "node-b"), ("pv-b-1", "wait-sc", "100Gi", "node-b")]  # fmt: skip
LOCAL_HDD = [("pv-a-2", "wait-hdd-sc", "200Gi", "node-a"), ("pv-a-3", "wait-hdd-sc", "200Gi", "node-a"),
             ("pv-b-2", "wait-hdd-sc", "100Gi", "node-b"), ("pv-b-3", "wait-hdd-sc", "100Gi", "node-b")]  # fmt: skip
THREE_NODES = [make_node("node-a"), make_node("node-b"), make_node("node-c")]
NOT_FOUND_A = unresolvable('persistentvolumeclaim "pvc-a" not found')
BIND_CONFLICT = unresolvable(ERR_REASON_BIND_CONFLICT)

CASES: list[tuple[Any, ...]] = [
    ("pod has not pvcs", pod(), [make_node("node-a")], [], [], False, None, SKIP, None, None, SKIP, None),
    ("all bound", pod("pvc-a"), [make_node("node-a")], [pvc("pvc-a", "wait-sc", bound="pv-a")], [pv("pv-a", "wait-sc")],
     False, None, OK, (["pvc-a"], []), [OK], SKIP, None),
    ("all bound with local volumes", pod("pvc-a", "pvc-b"), [make_node("node-a")],
     [pvc("pvc-a", "wait-sc", bound="pv-a"), pvc("pvc-b", "wait-sc", bound="pv-b")],
     [pv("pv-a", "wait-sc", phase="Bound", affinity={HOSTNAME: ["node-a"]}),
      pv("pv-b", "wait-sc", phase="Bound", affinity={HOSTNAME: ["node-a"]})],
     False, None, OK, (["pvc-a", "pvc-b"], []), [OK], SKIP, None),
    ("PVC does not exist", pod("pvc-a"), [make_node("node-a")], [], [], False, None, NOT_FOUND_A, None, None, None, None),
    ("Part of PVCs do not exist", pod("pvc-a", "pvc-b"), [make_node("node-a")], [pvc("pvc-a", "wait-sc", bound="pv-a")], [],
     False, None, unresolvable('persistentvolumeclaim "pvc-b" not found'), None, None, None, None),
    ("immediate claims not bound", pod("pvc-a"), [make_node("node-a")], [pvc("pvc-a", "immediate-sc")], [],
     False, None, unresolvable(ERR_REASON_UNBOUND_IMMEDIATE), None, None, None, None),
    ("unbound claims no matches", pod("pvc-a"), [make_node("node-a")], [pvc("pvc-a", "wait-sc")], [],
     False, None, OK, ([], ["pvc-a"]), [BIND_CONFLICT], SKIP, None),
    ("bound and unbound unsatisfied", pod("pvc-a", "pvc-b"), [make_node("node-a", labels={"foo": "barbar"})],
     [pvc("pvc-a", "wait-sc", bound="pv-a"), pvc("pvc-b", "wait-sc")], [pv("pv-a", "wait-sc", affinity={"foo": ["bar"]})],
     False, None, OK, (["pvc-a"], ["pvc-b"]), [unresolvable(ERR_REASON_NODE_CONFLICT, ERR_REASON_BIND_CONFLICT)], SKIP, None),
    ("pvc not found", pod("pvc-a"), [make_node("node-a")], [], [], False, None, NOT_FOUND_A, None, None, None, None),
    ("pv not found", pod("pvc-a"), [make_node("node-a")], [pvc("pvc-a", "wait-sc", bound="pv-a")], [],
     False, None, OK, (["pvc-a"], []), [unresolvable(ERR_REASON_PV_NOT_EXIST)], SKIP, None),
    ("pv not found claim lost", pod("pvc-a"), [make_node("node-a")], [pvc("pvc-a", "wait-sc", bound="pv-a", phase="Lost")], [],
     False, None, unresolvable('persistentvolumeclaim "pvc-a" bound to non-existent persistentvolume "pv-a"'),
     None, None, None, None),
    ("local volumes with close capacity are preferred", pod("pvc-a"), THREE_NODES,
     [pvc("pvc-a", "wait-sc", request="50Gi")], local_pvs(LOCAL_A_B),
     True, None, OK, ([], ["pvc-a"]), [OK, OK, BIND_CONFLICT], OK, [25, 50, 0]),
    ("local volumes with close capacity are preferred (multiple pvcs)", pod("pvc-0", "pvc-1"), THREE_NODES,
     [pvc("pvc-0", "wait-sc", request="50Gi"), pvc("pvc-1", "wait-hdd-sc", request="100Gi")], local_pvs(LOCAL_A_B + LOCAL_HDD),
     True, None, OK, ([], ["pvc-0", "pvc-1"]), [OK, OK, BIND_CONFLICT], OK, [38, 75, 0]),
    ("zonal volumes with close capacity are preferred", pod("pvc-a"), zonal_nodes(),
     [pvc("pvc-a", "wait-sc", request="50Gi")], zonal_pvs(),
     True, None, OK, ([], ["pvc-a"]), [OK, OK, OK, OK, BIND_CONFLICT, BIND_CONFLICT], OK, [25, 25, 50, 50, 0, 0]),
    ("zonal volumes with close capacity are preferred (custom shape)", pod("pvc-a"), zonal_nodes(),
     [pvc("pvc-a", "wait-sc", request="50Gi")], zonal_pvs(),
     True, {"bindTimeoutSeconds": 300, "shape": [{"utilization": 0, "score": 0}, {"utilization": 50, "score": 3},
                                                 {"utilization": 100, "score": 5}]},
     OK, ([], ["pvc-a"]), [OK, OK, OK, OK, BIND_CONFLICT, BIND_CONFLICT], OK, [15, 15, 30, 30, 0, 0]),
]  # fmt: skip


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_volume_binding(case: tuple[Any, ...]) -> None:
    name, p, nodes, claims, pvs, scoring, args, want_pre, want_claims, want_filter, want_pre_score, want_scores = case
    snap = with_storage(build_snapshot(nodes), *CLASSES, *claims, *pvs)
    if args is None:  # the table's default args
        args = {"bindTimeoutSeconds": 300, **({"shape": DEFAULT_SHAPE} if scoring else {})}
    with features.override("StorageCapacityScoring", scoring):
        plugin = VolumeBinding(args)
    state = CycleState()
    got = plugin.pre_filter(state, p, snap)
    assert (got if isinstance(got, Status) else OK) == want_pre
    if want_pre.code not in (Code.Success, Code.Skip):
        return  # the framework runs no Filter after a failed PreFilter
    s = state.read(NAME)
    if want_claims is not None:
        assert ([c.name for c in s.claims.bound], [c.name for c in s.claims.unbound_delay_binding]) == want_claims
        assert s.claims.unbound_immediate == []
    rows = np.arange(snap.n, dtype=np.int32)
    if want_pre.code != Code.Skip:
        res = plugin.filter(state, p, snap, rows)
        assert [res.status_at(i, NAME) for i in range(snap.n)] == want_filter
    assert (plugin.pre_score(state, p, snap, rows) or OK) == want_pre_score
    if want_scores is not None:
        assert plugin.score(state, p, snap, rows).tolist() == want_scores


def test_shape_is_refused_while_storage_capacity_scoring_is_off() -> None:
    """ValidateVolumeBindingArgs with the gate off, as v1.36 ships."""
    with pytest.raises(Exception, match="unexpected field `shape`, remove it or turn on the feature gate StorageCapacityScoring"):
        VolumeBinding({"shape": DEFAULT_SHAPE})
    assert VolumeBinding().bind_timeout_seconds == 600


# -- Reserve and PreBind offline -----------------------------------------------------------------


def _cycle(snap: Any, p: Pod, node: str) -> tuple[VolumeBinding, CycleState]:
    plugin, state = VolumeBinding(), CycleState()
    assert plugin.pre_filter(state, p, snap) is None
    row = snap.row_of[node]
    assert plugin.filter(state, p, snap, np.array([row], np.int32)).status_at(0, NAME) == OK
    assert plugin.reserve(state, p, node) is None
    return plugin, state


def test_static_binding_writes_claim_ref_and_volume_name() -> None:
    snap = with_storage(
        build_snapshot([make_node("node-a")]),
        *CLASSES,
        make_pvc("data", storage_class="wait-sc", request="10Gi"),
        make_pv("pv-small", storage_class="wait-sc", capacity="5Gi"),
        make_pv("pv-big", storage_class="wait-sc", capacity="50Gi"),
        make_pv("pv-fit", storage_class="wait-sc", capacity="20Gi"),
    )
    p = pod("data")
    plugin, state = _cycle(snap, p, "node-a")
    # Reserve assumed the smallest fitting PV; the store (the API) is untouched until PreBind
    assert plugin.binder.assumed_pvs["pv-fit"].claim_ref.name == "data"
    assert snap.storage.pvs["pv-fit"].claim_ref is None
    assert plugin.pre_bind_pre_flight(state, p, "node-a") is None
    assert plugin.pre_bind(state, p, "node-a") is None
    bound_pv, claim = snap.storage.pvs["pv-fit"], snap.storage.pvc("default", "data")
    assert (bound_pv.claim_ref.namespace, bound_pv.claim_ref.name, bound_pv.claim_ref.uid) == ("default", "data", claim.uid)
    assert bound_pv.phase == "Bound" and bound_pv.annotations["pv.kubernetes.io/bound-by-controller"] == "yes"
    assert claim.volume_name == "pv-fit" and claim.fully_bound and claim.phase == "Bound"
    assert not plugin.binder.assumed_pvs


def test_wait_for_first_consumer_provisioning_selects_the_node() -> None:
    """No PV to bind: the claim is annotated with the chosen node and the offline provisioner
    creates a PV there, with the driver's topology on that node."""
    snap = with_storage(
        build_snapshot([make_node("node-a", labels={ZONE: "a"}), make_node("node-b", labels={ZONE: "b"})]),
        make_storage_class("fast", provisioner="csi.example.com", mode="WaitForFirstConsumer"),
        make_csi_node("node-b", {"csi.example.com": None}, topology_keys={"csi.example.com": [ZONE]}),
        make_pvc("data", storage_class="fast", request="10Gi", uid="uid-1"),
    )
    events: list[str] = []
    snap.storage.listeners.append(events.append)
    p = pod("data")
    plugin, state = _cycle(snap, p, "node-b")
    assert plugin.binder.assumed_pvcs[("default", "data")].annotations[ANN_SELECTED_NODE] == "node-b"
    assert plugin.pre_bind(state, p, "node-b") is None
    claim = snap.storage.pvc("default", "data")
    assert claim.annotations[ANN_SELECTED_NODE] == "node-b" and claim.volume_name == "pvc-uid-1" and claim.fully_bound
    provisioned = snap.storage.pvs["pvc-uid-1"]
    assert provisioned.capacity == 10 * 2**30 and provisioned.csi == ("csi.example.com", "pvc-uid-1")
    assert provisioned.node_affinity is not None
    assert provisioned.node_affinity.matches({ZONE: "b"}, "") and not provisioned.node_affinity.matches({ZONE: "a"}, "")
    assert events == ["PersistentVolumeClaimUpdate", "PersistentVolumeAdd", "PersistentVolumeClaimUpdate"]


def test_an_assumed_selected_node_binds_the_claims_other_users_to_that_node() -> None:
    """Another pod's cycle sees the claim assumed for node-a (the assume cache): on node-b its
    delayed claim cannot be satisfied."""
    snap = with_storage(
        build_snapshot([make_node("node-a"), make_node("node-b")]),
        make_storage_class("fast", mode="WaitForFirstConsumer"),
        make_pvc("shared", storage_class="fast", access_modes=["ReadWriteMany"]),
    )
    plugin, _ = _cycle(snap, pod("shared"), "node-a")
    state = CycleState()
    assert plugin.pre_filter(state, pod("shared"), snap) is None
    res = plugin.filter(state, pod("shared"), snap, np.arange(2, dtype=np.int32))
    assert [res.status_at(i, NAME) for i in range(2)] == [OK, BIND_CONFLICT]


def test_unreserve_reverts_the_assumed_binding() -> None:
    snap = with_storage(
        build_snapshot([make_node("node-a")]),
        *CLASSES,
        make_pvc("data", storage_class="wait-sc"),
        make_pv("pv-a", storage_class="wait-sc"),
    )
    p = pod("data")
    plugin, state = _cycle(snap, p, "node-a")
    assert "pv-a" in plugin.binder.assumed_pvs
    plugin.unreserve(state, p, "node-a")
    assert not plugin.binder.assumed_pvs


def test_pre_bind_pre_flight_skips_when_every_claim_is_bound() -> None:
    snap = with_storage(
        build_snapshot([make_node("node-a")]), *CLASSES, pvc("pvc-a", "wait-sc", bound="pv-a"), pv("pv-a", "wait-sc")
    )
    p = pod("pvc-a")
    plugin, state = _cycle(snap, p, "node-a")
    assert plugin.pre_bind_pre_flight(state, p, "node-a") == SKIP


def test_ephemeral_claim_must_belong_to_the_pod() -> None:
    p = Pod.parse(make_pod("web", uid="uid-web", spec={"volumes": [{"name": "tmp", "ephemeral": {"volumeClaimTemplate": {"spec": {}}}}]}))
    snap = with_storage(build_snapshot([make_node("node-a")]), *CLASSES)
    st = VolumeBinding().pre_filter(CycleState(), p, snap)
    assert st == unresolvable('waiting for ephemeral volume controller to create the persistentvolumeclaim "web-tmp"')
    foreign = make_pvc("web-tmp", storage_class="wait-sc")
    with_storage(snap, foreign)
    assert VolumeBinding().pre_filter(CycleState(), p, snap) == unresolvable(
        "PVC default/web-tmp was not created for pod default/web (pod is not owner)"
    )


def test_events_to_register() -> None:
    """EventsToRegister with queueing hints on (v1.36)."""
    assert VolumeBinding.events_to_register == {
        "StorageClassAdd", "StorageClassUpdate", "PersistentVolumeClaimAdd", "PersistentVolumeClaimUpdate",
        "PersistentVolumeAdd", "PersistentVolumeUpdate", "NodeAdd", "NodeUpdate", "CSINodeAdd", "CSINodeUpdate",
        "CSIDriverUpdate", "CSIStorageCapacityAdd", "CSIStorageCapacityUpdate",
    }  # fmt: skip


@pytest.mark.parametrize("plugin", ["VolumeBinding", "VolumeZone", "VolumeRestrictions", "NodeVolumeLimits"])
def test_volume_plugins_take_no_part_where_storage_is_not_tracked(plugin: str) -> None:
    """``run`` and the extender do not watch the storage kinds yet: a claim missing from an
    untracked store does not make the pod unschedulable, the plugins skip."""
    from kubesched.plugins import in_tree_registry

    cls = in_tree_registry().resolve(plugin)
    snap = build_snapshot([make_node("node-a")])
    p = pod("not-watched")
    assert [st.code for st in run_filter(cls(), p, snap)] == [Code.UnschedulableAndUnresolvable]
    snap.storage.tracked = False
    assert cls().pre_filter(CycleState(), p, snap) == Status(Code.Skip, plugin=plugin)
    assert run_filter(cls(), p, snap) == [Status(plugin=plugin)]
    assert cls().sign_pod(p, snap).reads == "nothing"

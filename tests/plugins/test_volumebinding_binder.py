"""VolumeBinding's binder: upstream volumebinding/binder_test.go (v1.36), the tables kubesched can run.

- TestFindPodVolumesWithoutProvisioning: 21 of 21 scenarios, each under the table's three
  CSIDriver setups (none, with capacity tracking, without).
- TestFindPodVolumesWithProvisioning: 8 of 8 scenarios under the same three setups (with
  capacity tracking and no CSIStorageCapacity, provisioning is blocked: NotEnoughSpace).
- TestFindPodVolumesWithCSIMigration: 4 of 4 scenarios.
- TestAssumePodVolumes: 5 of 7 scenarios. "tmpupdate-failed" and "one-binding,
  one-provision-tmpupdate-failed" hinge on the assume cache refusing an object older than the
  one it holds (resource versions), which the offline store does not keep.
- TestRevertAssumedPodVolumes: 1 of 1.
- TestCheckBindings: 17 of 20 scenarios, against an in-test ObjectAPI holding "the API's"
  objects. "nothing-to-bind-nil", "nothing-to-bind-bindings-nil" and
  "nothing-to-bind-provisionings-nil" pass nil slices, which kubesched's lists cannot be.
- TestBindAPIUpdate, TestBindPodVolumes, TestCheckBindingsWithCSIMigration, TestFindAssumeVolumes,
  TestCapacity, the assume-cache tables: left out. BindPodVolumes' writes and its wait are
  covered against the test API server and a PV controller in tests/live/test_run_storage.py, and
  offline (writes completed at once) in tests/plugins/test_volumebinding.py.
"""

from __future__ import annotations

from typing import Any

import pytest

from kubesched.api.objects import Node, Pod
from kubesched.api.storage import (
    ANN_BIND_COMPLETED,
    ANN_BOUND_BY_CONTROLLER,
    ANN_SELECTED_NODE,
    STORAGE_KINDS,
    PersistentVolume,
    PersistentVolumeClaim,
)
from kubesched.framework.status import PluginError
from kubesched.plugins.volumebinding import (
    ERR_REASON_BIND_CONFLICT,
    ERR_REASON_NODE_CONFLICT,
    ERR_REASON_NOT_ENOUGH_SPACE,
    ERR_REASON_PV_NOT_EXIST,
)
from kubesched.plugins.volumebinding.binder import (
    BindingInfo,
    DynamicProvision,
    PodVolumes,
    VolumeBinder,
    check_bindings,
)
from kubesched.state.storage import Storage
from kubesched.testing import make_node, make_pod
from kubesched.testing_storage import make_csi_node, make_pv, make_pvc, make_storage_class

NS = "testns"
NODE_KEY = "nodeKey"
PROVISIONER = "test-provisioner"
WAIT, IMMEDIATE, WAIT_PROV, TOPO_MISMATCH = "waitClass", "immediateClass", "waitClassWithProvisioner", "topoMismatchClass"

CLASSES = [
    make_storage_class(WAIT_PROV, provisioner=PROVISIONER, mode="WaitForFirstConsumer",
                       allowed_topologies=[{NODE_KEY: ["node1", "reference-value"]}]),
    make_storage_class(IMMEDIATE, provisioner="", mode="Immediate"),
    make_storage_class(WAIT, provisioner="kubernetes.io/no-provisioner", mode="WaitForFirstConsumer"),
    make_storage_class(TOPO_MISMATCH, provisioner=PROVISIONER, mode="WaitForFirstConsumer",
                       allowed_topologies=[{NODE_KEY: ["reference-value"]}]),
]  # fmt: skip


def test_pvc(name: str, size: str, state: str, pv: str = "", cls: str = WAIT, node: str = "") -> dict[str, Any]:
    """makeTestPVC: unbound, prebound (volumeName only), bound (and bind-completed) or
    selected-node (annotated, not bound)."""
    d = make_pvc(name, namespace=NS, request=size, storage_class=cls, access_modes=(), uid="pvc-uid")
    if state == "selected-node":
        d["metadata"]["annotations"][ANN_SELECTED_NODE] = node
    if state == "bound":
        d["metadata"]["annotations"][ANN_BIND_COMPLETED] = "yes"
    if state in ("bound", "prebound"):
        d["spec"]["volumeName"] = pv
    return d


def test_pv(name: str, node: str, capacity: str, bound_to: dict | None, cls: str) -> dict[str, Any]:
    """makeTestPV: node affinity on nodeKey, Available, optionally bound to a claim."""
    terms = [{"matchExpressions": [{"key": NODE_KEY, "operator": "In", "values": [node]}]}] if node else None
    claim = (NS, bound_to["metadata"]["name"], "pvc-uid") if bound_to else None
    d = make_pv(name, capacity=capacity, storage_class=cls, access_modes=(), node_affinity=terms, claim=claim)
    if bound_to:
        d["metadata"]["annotations"][ANN_BOUND_BY_CONTROLLER] = "yes"
    return d


test_pvc.__test__ = test_pv.__test__ = False  # type: ignore[attr-defined]  # builders, not tests

UNBOUND_PVC = test_pvc("unbound-pvc", "1G", "unbound")
UNBOUND_PVC2 = test_pvc("unbound-pvc2", "5G", "unbound")
PREBOUND_PVC = test_pvc("prebound-pvc", "1G", "prebound", "pv-node1a")
BOUND_PVC = test_pvc("bound-pvc", "1G", "bound", "pv-bound")
IMMEDIATE_UNBOUND_PVC = test_pvc("immediate-unbound-pvc", "1G", "unbound", cls=IMMEDIATE)
IMMEDIATE_BOUND_PVC = test_pvc("immediate-bound-pvc", "1G", "bound", "pv-bound-immediate", cls=IMMEDIATE)
PROVISIONED_PVC = test_pvc("provisioned-pvc", "1Gi", "unbound", cls=WAIT_PROV)
PROVISIONED_PVC2 = test_pvc("provisioned-pvc2", "1Gi", "unbound", cls=WAIT_PROV)
NO_PROVISIONER_PVC = test_pvc("no-provisioner-pvc", "1Gi", "unbound")
TOPO_MISMATCH_PVC = test_pvc("topo-mismatch-pvc", "1Gi", "unbound", cls=TOPO_MISMATCH)
SELECTED_NODE_PVC = test_pvc("provisioned-pvc", "1Gi", "selected-node", cls=WAIT_PROV, node="node1")
BOUND_MIGRATION_PVC = test_pvc("pvc-migration-bound", "1G", "bound", "pv-migration-bound")

PV_NODE1A = test_pv("pv-node1a", "node1", "5G", None, WAIT)
PV_NODE1B = test_pv("pv-node1b", "node1", "10G", None, WAIT)
PV_NODE2 = test_pv("pv-node2", "node2", "1G", None, WAIT)
PV_BOUND = test_pv("pv-bound", "node1", "1G", BOUND_PVC, WAIT)
PV_NODE1A_BOUND = test_pv("pv-node1a", "node1", "5G", UNBOUND_PVC, WAIT)
PV_NODE1B_BOUND = test_pv("pv-node1b", "node1", "10G", UNBOUND_PVC2, WAIT)
PV_BOUND_IMMEDIATE = test_pv("pv-bound-immediate", "node1", "1G", IMMEDIATE_BOUND_PVC, IMMEDIATE)
PV_BOUND_IMMEDIATE_NODE2 = test_pv("pv-bound-immediate", "node2", "1G", IMMEDIATE_BOUND_PVC, IMMEDIATE)

TEST_NODE = Node.parse(make_node("node1", labels={NODE_KEY: "node1"}))


def generic_pvc(owned: bool) -> dict[str, Any]:
    """makeGenericEphemeralPVC("test-volume", owned)."""
    d = test_pvc("test-pod-test-volume", "1G", "bound", "pv-bound", cls=IMMEDIATE)
    if owned:
        d["metadata"]["ownerReferences"] = [{"kind": "Pod", "name": "test-pod", "uid": "test-pod-uid", "controller": True}]
    return d


CORRECT_GENERIC_PVC, CONFLICTING_GENERIC_PVC = generic_pvc(True), generic_pvc(False)
PV_BOUND_GENERIC = test_pv("pv-bound", "node1", "1G", CORRECT_GENERIC_PVC, WAIT)


def pod_with(claims: list[dict] | None = None, volumes: list[dict] | None = None) -> Pod:
    """makePod("test-pod").withNamespace("testns").withNodeName("node1").withPVCSVolume(claims)."""
    vols = volumes if volumes is not None else [
        {"name": f"v{i}", "persistentVolumeClaim": {"claimName": c["metadata"]["name"]}} for i, c in enumerate(claims or [])
    ]
    return Pod.parse(make_pod("test-pod", namespace=NS, uid="test-pod-uid", node="node1", spec={"volumes": vols}))


def ephemeral_pod(volume: str) -> Pod:
    return pod_with(volumes=[{"name": volume, "ephemeral": {"volumeClaimTemplate": {"spec": {}}}}])


def storage(*objects: dict[str, Any]) -> Storage:
    s = Storage()
    s.load(STORAGE_KINDS[o["kind"]](o) for o in [*CLASSES, *objects])
    return s


def find(binder: VolumeBinder, pod: Pod, node: Node, st: Storage) -> tuple[PodVolumes | None, list[str]]:
    """findPodVolumes of the upstream test: GetPodVolumeClaims, refuse unbound immediate claims,
    FindPodVolumes. Raises PluginError where upstream returns an error."""
    claims = binder.get_pod_volume_claims(pod, st)
    if claims.unbound_immediate:
        raise PluginError("pod has unbound immediate PersistentVolumeClaims")
    found = binder.find_pod_volumes(pod, claims, node, st)
    return found.volumes, found.reasons


def bindings_of(volumes: PodVolumes | None) -> list[tuple[str, str]]:
    return [(b.pvc.name, b.pv.name) for b in (volumes.static_bindings if volumes else [])]


def provisions_of(volumes: PodVolumes | None) -> list[str]:
    return [p.pvc.name for p in (volumes.dynamic_provisions if volumes else [])]


CSI_DRIVERS = {
    "no CSIDriver": None,
    "CSIDriver with capacity tracking": {"kind": "CSIDriver", "metadata": {"name": PROVISIONER}, "spec": {"storageCapacity": True}},
    "CSIDriver without capacity tracking": {"kind": "CSIDriver", "metadata": {"name": PROVISIONER}, "spec": {"storageCapacity": False}},
}

# name -> (pvs, pod claims, cached claims (None: the pod's), pod, bindings, reasons, should fail)
WITHOUT_PROVISIONING: dict[str, tuple[Any, ...]] = {
    "no-volumes": ([], [], None, pod_with([]), [], [], False),
    "no-pvcs": ([], [], None, pod_with(volumes=[{"name": "e", "emptyDir": {}}]), [], [], False),
    "pvc-not-found": ([], [BOUND_PVC], [], None, [], [], True),
    "bound-pvc": ([PV_BOUND], [BOUND_PVC], None, None, [], [], False),
    "bound-pvc,pv-not-exists": ([], [BOUND_PVC], None, None, [], [ERR_REASON_PV_NOT_EXIST], False),
    "prebound-pvc": ([PV_NODE1A_BOUND], [PREBOUND_PVC], None, None, [], [], True),
    "unbound-pvc,pv-same-node": ([PV_NODE2, PV_NODE1A, PV_NODE1B], [UNBOUND_PVC], None, None,
                                 [("unbound-pvc", "pv-node1a")], [], False),
    "unbound-pvc,pv-different-node": ([PV_NODE2], [UNBOUND_PVC], None, None, [], [ERR_REASON_BIND_CONFLICT], False),
    "two-unbound-pvcs": ([PV_NODE1A, PV_NODE1B], [UNBOUND_PVC, UNBOUND_PVC2], None, None,
                         [("unbound-pvc", "pv-node1a"), ("unbound-pvc2", "pv-node1b")], [], False),
    "two-unbound-pvcs,order-by-size": ([PV_NODE1A, PV_NODE1B], [UNBOUND_PVC2, UNBOUND_PVC], None, None,
                                       [("unbound-pvc", "pv-node1a"), ("unbound-pvc2", "pv-node1b")], [], False),
    "two-unbound-pvcs,partial-match": ([PV_NODE1A], [UNBOUND_PVC, UNBOUND_PVC2], None, None,
                                       [("unbound-pvc", "pv-node1a")], [ERR_REASON_BIND_CONFLICT], False),
    "one-bound,one-unbound": ([PV_BOUND, PV_NODE1A], [UNBOUND_PVC, BOUND_PVC], None, None,
                              [("unbound-pvc", "pv-node1a")], [], False),
    "one-bound,one-unbound,no-match": ([PV_BOUND, PV_NODE2], [UNBOUND_PVC, BOUND_PVC], None, None,
                                       [], [ERR_REASON_BIND_CONFLICT], False),
    "one-prebound,one-unbound": ([PV_NODE1A, PV_NODE1B], [UNBOUND_PVC, PREBOUND_PVC], None, None, [], [], True),
    "immediate-bound-pvc": ([PV_BOUND_IMMEDIATE], [IMMEDIATE_BOUND_PVC], None, None, [], [], False),
    "immediate-bound-pvc-wrong-node": ([PV_BOUND_IMMEDIATE_NODE2], [IMMEDIATE_BOUND_PVC], None, None,
                                       [], [ERR_REASON_NODE_CONFLICT], False),
    "immediate-unbound-pvc": ([], [IMMEDIATE_UNBOUND_PVC], None, None, [], [], True),
    "immediate-unbound-pvc,delayed-mode-bound": ([PV_BOUND], [IMMEDIATE_UNBOUND_PVC, BOUND_PVC], None, None, [], [], True),
    "immediate-unbound-pvc,delayed-mode-unbound": ([], [IMMEDIATE_UNBOUND_PVC, UNBOUND_PVC], None, None, [], [], True),
    "generic-ephemeral,no-pvc": ([], [], None, ephemeral_pod("no-such-pvc"), [], [], True),
    "generic-ephemeral,with-pvc": ([PV_BOUND_GENERIC], [], [CORRECT_GENERIC_PVC], ephemeral_pod("test-volume"), [], [], False),
    "generic-ephemeral,wrong-pvc": ([PV_BOUND_GENERIC], [], [CONFLICTING_GENERIC_PVC], ephemeral_pod("test-volume"), [], [], True),
}  # fmt: skip


def _run_find(scenario: tuple[Any, ...], driver: dict | None) -> tuple[PodVolumes | None, list[str], bool]:
    pvs, pod_claims, cached, pod, *_ = scenario
    st = storage(*pvs, *(pod_claims if cached is None else cached), *([driver] if driver else []))
    pod = pod if pod is not None else pod_with(pod_claims)
    try:
        volumes, reasons = find(VolumeBinder(), pod, TEST_NODE, st)
    except PluginError:
        return None, [], True
    return volumes, reasons, False


@pytest.mark.parametrize("driver", list(CSI_DRIVERS), ids=list(CSI_DRIVERS))
@pytest.mark.parametrize("name", list(WITHOUT_PROVISIONING), ids=list(WITHOUT_PROVISIONING))
def test_find_pod_volumes_without_provisioning(name: str, driver: str) -> None:
    scenario = WITHOUT_PROVISIONING[name]
    bindings, reasons, should_fail = scenario[4:]
    volumes, got_reasons, failed = _run_find(scenario, CSI_DRIVERS[driver])
    assert failed == should_fail
    assert sorted(got_reasons) == sorted(reasons)
    assert bindings_of(volumes) == bindings


# name -> (pvs, pod claims, bindings, provisions, reasons, should fail, needs capacity)
WITH_PROVISIONING: dict[str, tuple[Any, ...]] = {
    "one-provisioned": ([], [PROVISIONED_PVC], [], ["provisioned-pvc"], [], False, True),
    "two-unbound-pvcs,one-matched,one-provisioned": ([PV_NODE1A], [UNBOUND_PVC, PROVISIONED_PVC],
                                                     [("unbound-pvc", "pv-node1a")], ["provisioned-pvc"], [], False, True),
    "one-bound,one-provisioned": ([PV_BOUND], [BOUND_PVC, PROVISIONED_PVC], [], ["provisioned-pvc"], [], False, True),
    "one-binding,one-selected-node": ([PV_BOUND], [BOUND_PVC, SELECTED_NODE_PVC], [], ["provisioned-pvc"], [], False, True),
    "immediate-unbound-pvc": ([], [IMMEDIATE_UNBOUND_PVC], [], [], [], True, False),
    "one-immediate-bound,one-provisioned": ([PV_BOUND_IMMEDIATE], [IMMEDIATE_BOUND_PVC, PROVISIONED_PVC],
                                            [], ["provisioned-pvc"], [], False, True),
    "invalid-provisioner": ([], [NO_PROVISIONER_PVC], [], [], [ERR_REASON_BIND_CONFLICT], False, False),
    "volume-topology-unsatisfied": ([], [TOPO_MISMATCH_PVC], [], [], [ERR_REASON_BIND_CONFLICT], False, False),
}  # fmt: skip


@pytest.mark.parametrize("driver", list(CSI_DRIVERS), ids=list(CSI_DRIVERS))
@pytest.mark.parametrize("name", list(WITH_PROVISIONING), ids=list(WITH_PROVISIONING))
def test_find_pod_volumes_with_provisioning(name: str, driver: str) -> None:
    pvs, claims, bindings, provisions, reasons, should_fail, needs_capacity = WITH_PROVISIONING[name]
    d = CSI_DRIVERS[driver]
    volumes, got_reasons, failed = _run_find((pvs, claims, None, None), d)
    if needs_capacity and d is not None and d["spec"]["storageCapacity"]:
        reasons, provisions = [*reasons, ERR_REASON_NOT_ENOUGH_SPACE], []  # no CSIStorageCapacity: blocked
    assert failed == should_fail
    assert sorted(got_reasons) == sorted(reasons)
    assert bindings_of(volumes) == bindings
    assert provisions_of(volumes) == provisions


def _migration_pv() -> dict[str, Any]:
    """makeTestPVForCSIMigration(zone1Labels, boundMigrationPVC, true): a GCE PD PV, zone labels,
    no node affinity (the translation writes it)."""
    d = test_pv("pv-migration-bound", "", "1G", BOUND_MIGRATION_PVC, WAIT)
    d["metadata"]["labels"] = {"failure-domain.beta.kubernetes.io/zone": "us-east-1",
                               "failure-domain.beta.kubernetes.io/region": "us-east-1a"}  # fmt: skip
    d["spec"].pop("csi")
    d["spec"]["gcePersistentDisk"] = {"pdName": "test-disk", "fsType": "ext4"}
    return d


GKE_ZONE = "topology.gke.io/zone"
CSI_NODE1_MIGRATED = make_csi_node("node1", {}, migrated_plugins=["kubernetes.io/gce-pd"])
CSI_NODE1_NOT_MIGRATED = make_csi_node("node1", {})
# name -> (node's zone, CSINode or None, reasons)
CSI_MIGRATION = {
    "pvc-bound": ("us-east-1", CSI_NODE1_MIGRATED, []),
    "pvc-bound,csinode-not-migrated": ("us-east-1", CSI_NODE1_NOT_MIGRATED, []),
    "pvc-bound,missing-csinode": ("us-east-1", None, []),
    "pvc-bound,node-different-zone": ("us-east-2", CSI_NODE1_MIGRATED, [ERR_REASON_NODE_CONFLICT]),
}


@pytest.mark.parametrize("name", list(CSI_MIGRATION), ids=list(CSI_MIGRATION))
def test_find_pod_volumes_with_csi_migration(name: str) -> None:
    zone, csi_node, reasons = CSI_MIGRATION[name]
    st = storage(_migration_pv(), BOUND_MIGRATION_PVC, *([csi_node] if csi_node else []))
    node = Node.parse(make_node("node1", labels={GKE_ZONE: zone}))
    _, got = find(VolumeBinder(), pod_with([BOUND_MIGRATION_PVC]), node, st)
    assert got == reasons


def _parsed(d: dict[str, Any]) -> Any:
    return STORAGE_KINDS[d["kind"]](d)


# name -> (pod claims, PVs, bindings, provisions, all bound, bindings after, provisions after)
ASSUME: dict[str, tuple[Any, ...]] = {
    "all-bound": ([BOUND_PVC], [PV_BOUND], [], [], True, [], []),
    "one-binding": ([UNBOUND_PVC], [PV_NODE1A], [(UNBOUND_PVC, PV_NODE1A)], [], False, [(UNBOUND_PVC, PV_NODE1A_BOUND)], []),
    "two-bindings": ([UNBOUND_PVC, UNBOUND_PVC2], [PV_NODE1A, PV_NODE1B],
                     [(UNBOUND_PVC, PV_NODE1A), (UNBOUND_PVC2, PV_NODE1B)], [], False,
                     [(UNBOUND_PVC, PV_NODE1A_BOUND), (UNBOUND_PVC2, PV_NODE1B_BOUND)], []),
    "pv-already-bound": ([UNBOUND_PVC], [PV_NODE1A_BOUND], [(UNBOUND_PVC, PV_NODE1A_BOUND)], [], False,
                         [(UNBOUND_PVC, PV_NODE1A_BOUND)], []),
    "one-binding, one-pvc-provisioned": ([UNBOUND_PVC, PROVISIONED_PVC], [PV_NODE1A], [(UNBOUND_PVC, PV_NODE1A)],
                                         [PROVISIONED_PVC], False, [(UNBOUND_PVC, PV_NODE1A_BOUND)], [SELECTED_NODE_PVC]),
}  # fmt: skip


def _claim_view(pv: Any) -> tuple[Any, Any]:
    ref = pv.claim_ref
    return (None if ref is None else (ref.namespace, ref.name, ref.uid)), pv.annotations.get(ANN_BOUND_BY_CONTROLLER)


@pytest.mark.parametrize("name", list(ASSUME), ids=list(ASSUME))
def test_assume_pod_volumes(name: str) -> None:
    claims, pvs, bindings, provisions, all_bound, want_bindings, want_provisions = ASSUME[name]
    st = storage(*claims, *pvs)
    volumes = PodVolumes(
        [BindingInfo(_parsed(c), _parsed(p)) for c, p in bindings], [DynamicProvision(_parsed(c)) for c in provisions]
    )
    binder = VolumeBinder()
    assert binder.assume_pod_volumes(pod_with(claims), "node1", volumes, st) is all_bound
    if all_bound:
        return
    got = [(b.pvc.name, b.pv.name, *_claim_view(b.pv)) for b in volumes.static_bindings]
    assert got == [(c["metadata"]["name"], p["metadata"]["name"], *_claim_view(_parsed(p))) for c, p in want_bindings]
    for b in volumes.static_bindings:  # validateAssume: the cache holds the pre-bound PVs
        assert binder.get_pv(st, b.pv.name).claim_ref.name == b.pvc.name
    got_provisions = [(p.pvc.name, p.pvc.annotations.get(ANN_SELECTED_NODE)) for p in volumes.dynamic_provisions]
    assert got_provisions == [(c["metadata"]["name"], c["metadata"]["annotations"].get(ANN_SELECTED_NODE)) for c in want_provisions]
    for p in volumes.dynamic_provisions:
        assert binder.get_pvc(st, NS, p.pvc.name).annotations[ANN_SELECTED_NODE] == "node1"


def test_revert_assumed_pod_volumes() -> None:
    claims = [UNBOUND_PVC, PROVISIONED_PVC]
    st = storage(*claims, PV_NODE1A)
    volumes = PodVolumes([BindingInfo(_parsed(UNBOUND_PVC), _parsed(PV_NODE1A))], [DynamicProvision(_parsed(PROVISIONED_PVC))])
    binder = VolumeBinder()
    assert binder.assume_pod_volumes(pod_with(claims), "node1", volumes, st) is False
    assert binder.get_pv(st, "pv-node1a").claim_ref is not None
    binder.revert_assumed_pod_volumes(volumes)
    # validateCacheRestored: the PVs are the API's again and the claims carry no selected node
    assert binder.get_pv(st, "pv-node1a") is st.pvs["pv-node1a"]
    assert ANN_SELECTED_NODE not in binder.get_pvc(st, NS, "provisioned-pvc").annotations


# ---- TestCheckBindings ---------------------------------------------------------------------
PROVISIONED_PVC_BOUND = test_pvc("provisioned-pvc", "1Gi", "bound", "pv-bound", cls=WAIT_PROV)
PV_PROVISIONED_BOUND = test_pv("pv-bound", "node1", "1G", PROVISIONED_PVC_BOUND, WAIT)


def versioned(d: dict[str, Any], rv: str) -> dict[str, Any]:
    """The object as the API holds it at resourceVersion ``rv``."""
    return {**d, "metadata": {**d["metadata"], "resourceVersion": rv}}


def with_selected_node(d: dict[str, Any], node: str = "node1") -> dict[str, Any]:
    """addProvisionAnn / pvcSetSelectedNode."""
    return {**d, "metadata": {**d["metadata"], "annotations": {**d["metadata"]["annotations"], ANN_SELECTED_NODE: node}}}


def without_claim_uid(d: dict[str, Any]) -> dict[str, Any]:
    """pvRemoveClaimUID."""
    return {**d, "spec": {**d["spec"], "claimRef": {**d["spec"]["claimRef"], "uid": ""}}}


def without_annotations(d: dict[str, Any]) -> dict[str, Any]:
    """The claim with no annotations at all (a nil map in Go)."""
    return {**d, "metadata": {k: v for k, v in d["metadata"].items() if k != "annotations"}}


def empty_annotations(d: dict[str, Any]) -> dict[str, Any]:
    """pvcSetEmptyAnnotations."""
    return {**d, "metadata": {**d["metadata"], "annotations": {}}}


class FakeAPI:
    """The API's objects as checkBindings reads them (upstream's GetAPIPV/GetAPIPVC and listers)."""

    def __init__(self, pvs: list[dict[str, Any]], pvcs: list[dict[str, Any]]) -> None:
        self.pvs = {d["metadata"]["name"]: PersistentVolume.parse(d) for d in pvs}
        self.pvcs = {(d["metadata"]["namespace"], d["metadata"]["name"]): PersistentVolumeClaim.parse(d) for d in pvcs}

    def pv(self, name: str) -> Any:
        return self.pvs.get(name)

    def pvc(self, namespace: str, name: str) -> Any:
        return self.pvcs.get((namespace, name))

    def node(self, name: str) -> Node | None:
        return TEST_NODE if name == "node1" else None

    def csi_node(self, name: str) -> None:
        return None

    def pod_exists(self, pod: Pod) -> bool:
        return True


def binding(pvc: dict[str, Any], pv: dict[str, Any]) -> BindingInfo:
    return BindingInfo(PersistentVolumeClaim.parse(versioned(pvc, "1")), PersistentVolume.parse(versioned(pv, "1")))


def provision(pvc: dict[str, Any]) -> Any:
    return PersistentVolumeClaim.parse(versioned(pvc, "1"))


# name: (bindings, claims to provision, the API's PVs, the API's PVCs (versions after the
# scenario's updates), should fail, expected bound)
CHECK_BINDINGS: dict[str, tuple[list, list, list, list, bool, bool]] = {
    "nothing-to-bind": ([], [], [], [], False, True),
    "binding-bound": ([(UNBOUND_PVC, PV_NODE1A_BOUND)], [], [PV_NODE1A_BOUND], [test_pvc("unbound-pvc", "1G", "bound", "pv-node1a")], False, True),
    "binding-prebound": ([(UNBOUND_PVC, PV_NODE1A_BOUND)], [], [PV_NODE1A_BOUND], [test_pvc("unbound-pvc", "1G", "prebound", "pv-node1a")], False, False),
    "binding-unbound": ([(UNBOUND_PVC, PV_NODE1A_BOUND)], [], [PV_NODE1A_BOUND], [UNBOUND_PVC], False, False),
    "binding-pvc-not-exists": ([(UNBOUND_PVC, PV_NODE1A_BOUND)], [], [PV_NODE1A_BOUND], [], True, False),
    "binding-pv-not-exists": ([(UNBOUND_PVC, PV_NODE1A_BOUND)], [], [], [test_pvc("unbound-pvc", "1G", "bound", "pv-node1a")], True, False),
    "binding-claimref-nil": ([(UNBOUND_PVC, PV_NODE1A_BOUND)], [], [versioned(PV_NODE1A, "2")], [test_pvc("unbound-pvc", "1G", "bound", "pv-node1a")], True, False),
    "binding-claimref-uid-empty": ([(UNBOUND_PVC, PV_NODE1A_BOUND)], [], [versioned(without_claim_uid(PV_NODE1A_BOUND), "2")], [test_pvc("unbound-pvc", "1G", "bound", "pv-node1a")], True, False),
    "binding-one-bound,one-unbound": ([(UNBOUND_PVC, PV_NODE1A_BOUND), (UNBOUND_PVC2, PV_NODE1B_BOUND)], [], [PV_NODE1A_BOUND, PV_NODE1B_BOUND], [test_pvc("unbound-pvc", "1G", "bound", "pv-node1a"), UNBOUND_PVC2], False, False),
    "provisioning-pvc-bound": ([], [with_selected_node(PROVISIONED_PVC)], [PV_PROVISIONED_BOUND], [versioned(with_selected_node(PROVISIONED_PVC_BOUND), "2")], False, True),
    "provisioning-pvc-unbound": ([], [with_selected_node(PROVISIONED_PVC)], [], [with_selected_node(PROVISIONED_PVC)], False, False),
    "provisioning-pvc-not-exists": ([], [with_selected_node(PROVISIONED_PVC)], [], [], True, False),
    "provisioning-pvc-annotations-nil": ([], [with_selected_node(PROVISIONED_PVC)], [], [versioned(without_annotations(PROVISIONED_PVC), "2")], True, False),
    "provisioning-pvc-selected-node-dropped": ([], [with_selected_node(PROVISIONED_PVC)], [], [versioned(empty_annotations(PROVISIONED_PVC), "2")], True, False),
    "provisioning-pvc-selected-node-wrong-node": ([], [with_selected_node(PROVISIONED_PVC)], [], [versioned(with_selected_node(PROVISIONED_PVC, "wrong-node"), "2")], True, False),
    "binding-bound-provisioning-unbound": ([(UNBOUND_PVC, PV_NODE1A_BOUND)], [with_selected_node(PROVISIONED_PVC)], [PV_NODE1A_BOUND], [test_pvc("unbound-pvc", "1G", "bound", "pv-node1a"), with_selected_node(PROVISIONED_PVC)], False, False),
    "tolerate-provisioning-pvc-bound-pv-not-found": ([], [with_selected_node(PROVISIONED_PVC)], [], [versioned(with_selected_node(PROVISIONED_PVC_BOUND), "2")], False, False),
}  # fmt: skip


@pytest.mark.parametrize("name", list(CHECK_BINDINGS))
def test_check_bindings(name: str) -> None:
    bindings, provisions, pvs, pvcs, should_fail, expected_bound = CHECK_BINDINGS[name]
    api = FakeAPI([d if "resourceVersion" in d["metadata"] else versioned(d, "1") for d in pvs],
                  [d if "resourceVersion" in d["metadata"] else versioned(d, "1") for d in pvcs])
    pod = Pod.parse(make_pod("test-pod", namespace=NS, uid="test-pod-uid"))
    try:
        bound = check_bindings(pod, "node1", [binding(*b) for b in bindings], [provision(p) for p in provisions], api,
                               VolumeBinder())
    except PluginError:
        assert should_fail, name
        return
    assert not should_fail, name
    assert bound == expected_bound

"""NodeVolumeLimits (CSI): upstream nodevolumelimits/csi_test.go (v1.36), ported table by table.

- TestCSILimits: 33 of 33 cases. Upstream's fake PVC lister words a missing claim
  ``persistentvolumeclaims "abc-xyz" not found``; kube-scheduler's informer listers (and
  kubesched) use the singular resource, ``persistentvolumeclaim "abc-xyz" not found``. The
  "ephemeral disabled" case keeps its name: generic ephemeral volumes are GA, so it expects what
  its "enabled" twin expects.
- TestCSILimitsQHint, TestCSILimitsAddedPVCQHint, TestCSILimitsDeletedVolumeAttachmentQHint: 0 of
  4, 5 and 6 cases. kubesched's queue moves a rejected pod on the events its plugins register
  (checked below), not through per-event hint functions.

As upstream's harness: one node ``node-for-max-pd-test-1`` holding the existing pods; per driver,
four bound claims ``csi-<driver>-<j>`` with PVs of that name (an in-tree EBS or hostPath source
for those drivers), the claims ``csi-4`` (unbound, class ``csi-sc``), ``csi-5`` (no class) and
``csi-6`` (bound to a missing PV); the class's provisioner is the first driver; the CSINode
lists every driver (with the limit, or without one) and names the in-tree EBS plugin migrated.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from kubesched.api.objects import Pod
from kubesched.api.storage import VolumeAttachment
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.status import Code, Status
from kubesched.plugins.nodevolumelimits import ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED, NAME, CSILimits
from kubesched.testing import build_snapshot, make_node, make_pod
from kubesched.testing_storage import (
    make_csi_node,
    make_pv,
    make_pvc,
    make_storage_class,
    pvc_volume,
    with_storage,
)

EBS = "ebs.csi.aws.com"
GCE = "pd.csi.storage.gke.io"
EBS_IN_TREE = "kubernetes.io/aws-ebs"
HOSTPATH_IN_TREE = "kubernetes.io/hostpath"
SC_NAME = "csi-sc"
NODE = "node-for-max-pd-test-1"

OK = Status(plugin=NAME)
SKIP = Status(Code.Skip, plugin=NAME)
EXCEEDED = Status(Code.Unschedulable, (ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED,), NAME)

_seq = iter(range(1_000_000))


def pod(*volumes: dict[str, Any], name: str | None = None, namespace: str = "default", uid: str | None = None) -> Pod:
    name = name or f"p{next(_seq)}"
    return Pod.parse(make_pod(name, namespace=namespace, uid=uid, spec={"volumes": list(volumes)}))


def claims(*names: str) -> list[dict[str, Any]]:
    return [pvc_volume(n, f"v{i}") for i, n in enumerate(names)]


def ephemeral(name: str) -> dict[str, Any]:
    return {"name": name, "ephemeral": {"volumeClaimTemplate": {"spec": {}}}}


RUNNING = pod(*claims("csi-ebs.csi.aws.com-3"))
PENDING_VOLUME = pod(*claims("csi-4"))
UNBOUND_PVC_2 = pod(*claims("csi-4"))
MISSING_PV = pod(*claims("csi-6"))
NO_SC_PVC = pod(*claims("csi-5"))
GCE_TWO_VOL = pod(*claims("csi-pd.csi.storage.gke.io-1", "csi-pd.csi.storage.gke.io-2"))
IN_TREE_ONE_VOL = pod(*claims("csi-kubernetes.io/aws-ebs-0"))
IN_TREE_TWO_VOL = pod(*claims("csi-kubernetes.io/aws-ebs-1", "csi-kubernetes.io/aws-ebs-2"))
CSI_EBS_ONE_VOL = pod(*claims("csi-ebs.csi.aws.com-0"))
CSI_EBS_TWO_VOL = pod(*claims("csi-ebs.csi.aws.com-1", "csi-ebs.csi.aws.com-2"))
IN_TREE_NON_MIGRATABLE = pod(*claims("csi-kubernetes.io/hostpath-0"))
EPHEMERAL_VOLUME = pod(ephemeral("xyz"), name="abc", namespace="test", uid="12345")
EPHEMERAL_TWO_VOLUME = pod(ephemeral("x"), ephemeral("y"), name="abc", namespace="test", uid="12345II")


def _claim(name: str, owner_uid: str | None) -> dict[str, Any]:
    d = make_pvc(name, namespace="test", storage_class=SC_NAME, request=None, access_modes=())
    if owner_uid is not None:
        d["metadata"]["ownerReferences"] = [{"kind": "Pod", "name": "abc", "uid": owner_uid, "controller": True}]
    return d


EPHEMERAL_CLAIM = _claim("abc-xyz", "12345")
CONFLICTING_CLAIM = _claim("abc-xyz", None)
EPHEMERAL_CLAIM_X = _claim("abc-x", "12345II")
EPHEMERAL_CLAIM_Y = _claim("abc-y", "12345II")
AWS_INLINE = {"name": "inline", "awsElasticBlockStore": {"volumeID": "aws-inline1"}}
IN_TREE_INLINE = pod(AWS_INLINE)
IN_TREE_INLINE_SAME_ID = pod({"name": "inline", "awsElasticBlockStore": {"volumeID": "csi-ebs.csi.aws.com-1"}})
CONFIG_AND_SECRET = [{"name": "cm", "configMap": {"name": "c"}}, {"name": "s", "secret": {"secretName": "s"}}]
ONLY_CONFIGMAP_AND_SECRET = pod(*CONFIG_AND_SECRET)
PVC_WITH_CONFIGMAP_AND_SECRET = pod(*CONFIG_AND_SECRET, pvc_volume("csi-ebs.csi.aws.com-0", "pvc"))
EPHEMERAL_WITH_CONFIGMAP_AND_SECRET = pod(*CONFIG_AND_SECRET, ephemeral("xyz"), name="abc", namespace="test", uid="")
INLINE_MIGRATABLE_WITH_CONFIGMAP_AND_SECRET = pod(*CONFIG_AND_SECRET, AWS_INLINE)


def storage_objects(drivers: list[str], max_vols: int, limit_source: str, va_count: int) -> list[dict[str, Any]]:
    """getFakeCSIPVLister, getFakeCSIPVCLister, getFakeCSIStorageClassLister,
    getFakeVolumeAttachmentLister and getNodeWithPodAndVolumeLimits's CSINode."""
    out: list[dict[str, Any]] = []
    for driver in drivers:
        for j in range(4):
            handle = f"csi-{driver}-{j}"
            if driver == EBS_IN_TREE:
                source = {"awsElasticBlockStore": {"volumeID": handle}}
            elif driver == HOSTPATH_IN_TREE:
                source = {"hostPath": {"path": "/tmp"}}
            else:
                source = {"csi": {"driver": driver, "volumeHandle": handle}}
            out.append(make_pv(handle, source=source))
            out.append(make_pvc(handle, volume_name=handle))
    out.append(make_pvc("csi-4", storage_class=SC_NAME))
    out.append(make_pvc("csi-5"))
    out.append(make_pvc("csi-6", storage_class=SC_NAME, volume_name="missing-in-action"))
    out.append(make_storage_class(SC_NAME, provisioner=drivers[0]))
    for driver in drivers:
        for j in range(va_count):
            out.append(
                {
                    "kind": "VolumeAttachment",
                    "metadata": {"name": f"va-{driver}-{j}"},
                    "spec": {"attacher": driver, "nodeName": NODE, "source": {"persistentVolumeName": f"csi-{driver}-{j}"}},
                }
            )
    if limit_source in ("csinode", "csinode-with-no-limit"):
        limit = max_vols if limit_source == "csinode" else None
        out.append(make_csi_node(NODE, dict.fromkeys(drivers, limit), migrated_plugins=[EBS_IN_TREE]))
    return out


# (test, new pod, existing pods, extra claims, max vols, VolumeAttachments per driver, drivers,
#  limit source, PreFilter, Filter)
CASES: list[tuple[str, Pod, list[Pod], list[dict], int, int, list[str], str, Status, Status | None]] = [
    ("should count VolumeAttachments towards volume limit when no pods exist", CSI_EBS_ONE_VOL, [], [], 2, 2, [EBS], "csinode", OK, EXCEEDED),
    ("should schedule pod when VolumeAttachments count does not exceed limit", CSI_EBS_ONE_VOL, [], [], 2, 1, [EBS], "csinode", OK, OK),
    ("fits when node volume limit >= new pods CSI volume", CSI_EBS_ONE_VOL, [RUNNING, CSI_EBS_TWO_VOL], [], 4, 0, [EBS], "csinode", OK, OK),
    ("doesn't when node volume limit <= pods CSI volume", CSI_EBS_ONE_VOL, [RUNNING, CSI_EBS_TWO_VOL], [], 2, 0, [EBS], "csinode", OK, EXCEEDED),
    ("should when driver does not support volume limits", CSI_EBS_ONE_VOL, [RUNNING, CSI_EBS_TWO_VOL], [], 2, 0, [EBS], "csinode-with-no-limit", OK, OK),
    ("count pending PVCs towards volume limit <= pods CSI volume", CSI_EBS_ONE_VOL, [PENDING_VOLUME, CSI_EBS_TWO_VOL], [], 2, 0, [EBS], "csinode", OK, EXCEEDED),
    ("count multiple pending pvcs towards volume limit >= pods CSI volume", CSI_EBS_ONE_VOL, [PENDING_VOLUME, UNBOUND_PVC_2, CSI_EBS_TWO_VOL], [], 4, 0, [EBS], "csinode", OK, OK),
    ("should count PVCs with invalid PV name but valid SC", CSI_EBS_ONE_VOL, [MISSING_PV, CSI_EBS_TWO_VOL], [], 2, 0, [EBS], "csinode", OK, EXCEEDED),
    ("don't count pvcs with missing SC towards volume limit", CSI_EBS_ONE_VOL, [RUNNING, NO_SC_PVC], [], 2, 0, [EBS], "csinode", OK, OK),
    ("count pvcs with the same type towards volume limit", CSI_EBS_ONE_VOL, [GCE_TWO_VOL, CSI_EBS_TWO_VOL], [], 2, 0, [EBS, GCE], "csinode", OK, EXCEEDED),
    ("don't count pvcs with different type towards volume limit", GCE_TWO_VOL, [CSI_EBS_TWO_VOL, RUNNING], [], 2, 0, [EBS, GCE], "csinode", OK, OK),
    ("should count in-tree volumes if migration is enabled", IN_TREE_ONE_VOL, [IN_TREE_TWO_VOL], [], 2, 0, [EBS_IN_TREE, EBS], "csinode", OK, EXCEEDED),
    ("nil csi node", IN_TREE_INLINE, [IN_TREE_TWO_VOL], [], 0, 0, [EBS_IN_TREE, EBS], "", OK, OK),
    ("should count unbound in-tree volumes if migration is enabled", PENDING_VOLUME, [IN_TREE_TWO_VOL], [], 2, 0, [EBS_IN_TREE, EBS], "csinode", OK, EXCEEDED),
    ("should not limit pod if volume used does not report limits", IN_TREE_ONE_VOL, [IN_TREE_TWO_VOL], [], 2, 0, [EBS_IN_TREE, EBS], "csinode-with-no-limit", OK, OK),
    ("should not count non-migratable in-tree volumes", IN_TREE_NON_MIGRATABLE, [CSI_EBS_TWO_VOL], [], 2, 0, [HOSTPATH_IN_TREE, EBS], "csinode", OK, OK),
    ("should count in-tree inline volumes if migration is enabled", IN_TREE_INLINE, [IN_TREE_TWO_VOL], [], 2, 0, [EBS_IN_TREE, EBS], "csinode", OK, EXCEEDED),
    ("should count in-tree and csi volumes if migration is enabled (when scheduling in-tree volumes)", IN_TREE_ONE_VOL, [CSI_EBS_TWO_VOL], [], 2, 0, [EBS_IN_TREE, EBS], "csinode", OK, EXCEEDED),
    ("should count in-tree, inline and csi volumes if migration is enabled (when scheduling in-tree volumes)", IN_TREE_INLINE, [CSI_EBS_TWO_VOL, IN_TREE_ONE_VOL], [], 3, 0, [EBS_IN_TREE, EBS], "csinode", OK, EXCEEDED),
    ("should not count in-tree, inline and csi volumes if migration is enabled (when scheduling in-tree volumes)", IN_TREE_INLINE_SAME_ID, [CSI_EBS_TWO_VOL, IN_TREE_ONE_VOL], [], 3, 0, [EBS_IN_TREE, EBS], "csinode", OK, OK),
    ("should count in-tree and csi volumes if migration is enabled (when scheduling csi volumes)", CSI_EBS_ONE_VOL, [IN_TREE_TWO_VOL], [], 2, 0, [EBS_IN_TREE, EBS], "csinode", OK, EXCEEDED),
    ("ephemeral volume missing", EPHEMERAL_VOLUME, [], [], 0, 0, [EBS], "csinode-with-no-limit", OK,
     Status(Code.UnschedulableAndUnresolvable, ('looking up PVC test/abc-xyz: persistentvolumeclaim "abc-xyz" not found',), NAME)),
    ("ephemeral volume not owned", EPHEMERAL_VOLUME, [], [CONFLICTING_CLAIM], 0, 0, [EBS], "csinode-with-no-limit", OK,
     Status(Code.Error, ("PVC test/abc-xyz was not created for pod test/abc (pod is not owner)",), NAME)),
    ("ephemeral volume unbound", EPHEMERAL_VOLUME, [], [EPHEMERAL_CLAIM], 0, 0, [EBS], "csinode-with-no-limit", OK, OK),
    ("ephemeral doesn't when node volume limit <= pods CSI volume", EPHEMERAL_VOLUME, [RUNNING, CSI_EBS_TWO_VOL], [EPHEMERAL_CLAIM], 2, 0, [EBS], "csinode", OK, EXCEEDED),
    ("ephemeral doesn't when node volume limit <= pods ephemeral CSI volume", CSI_EBS_ONE_VOL, [RUNNING, EPHEMERAL_TWO_VOLUME], [EPHEMERAL_CLAIM_X, EPHEMERAL_CLAIM_Y], 2, 0, [EBS], "csinode", OK, EXCEEDED),
    ("persistent doesn't when node volume limit <= pods ephemeral CSI volume + persistent volume, ephemeral disabled", CSI_EBS_ONE_VOL, [RUNNING, EPHEMERAL_VOLUME, CSI_EBS_TWO_VOL], [EPHEMERAL_CLAIM], 3, 0, [EBS], "csinode", OK, EXCEEDED),
    ("persistent doesn't when node volume limit <= pods ephemeral CSI volume + persistent volume", CSI_EBS_ONE_VOL, [RUNNING, EPHEMERAL_VOLUME, CSI_EBS_TWO_VOL], [EPHEMERAL_CLAIM], 3, 0, [EBS], "csinode", OK, EXCEEDED),
    ("persistent okay when node volume limit > pods ephemeral CSI volume + persistent volume", CSI_EBS_ONE_VOL, [RUNNING, EPHEMERAL_VOLUME, CSI_EBS_TWO_VOL], [EPHEMERAL_CLAIM], 5, 0, [EBS], "csinode", OK, OK),
    ("skip Filter when the pod only uses secrets and configmaps", ONLY_CONFIGMAP_AND_SECRET, [], [], 2, 0, [EBS], "csinode", SKIP, None),
    ("don't skip Filter when the pod has pvcs", PVC_WITH_CONFIGMAP_AND_SECRET, [], [], 2, 0, [EBS], "csinode", OK, OK),
    ("don't skip Filter when the pod has ephemeral volumes", EPHEMERAL_WITH_CONFIGMAP_AND_SECRET, [], [], 0, 0, [EBS], "csinode-with-no-limit", OK,
     Status(Code.UnschedulableAndUnresolvable, ('looking up PVC test/abc-xyz: persistentvolumeclaim "abc-xyz" not found',), NAME)),
    ("don't skip Filter when the pod has inline migratable volumes", INLINE_MIGRATABLE_WITH_CONFIGMAP_AND_SECRET, [IN_TREE_TWO_VOL], [], 2, 0, [EBS_IN_TREE, EBS], "csinode", OK, EXCEEDED),
]  # fmt: skip


def run(
    new: Pod, existing: list[Pod], extra: list[dict], max_vols: int, va_count: int, drivers: list[str], limit_source: str
) -> tuple[Status, Status | None]:
    snap = build_snapshot([make_node(NODE)], [p.with_node(NODE) for p in existing])
    with_storage(snap, *storage_objects(drivers, max_vols, limit_source, va_count), *extra)
    state, plugin = CycleState(), CSILimits()
    pre = plugin.pre_filter(state, new, snap)
    pre_status = pre if isinstance(pre, Status) else OK
    if pre_status.code == Code.Skip:
        return pre_status, None
    return pre_status, plugin.filter(state, new, snap, np.arange(1, dtype=np.int32)).status_at(0, NAME)


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_csi_limits(case: tuple) -> None:
    name, new, existing, extra, max_vols, va_count, drivers, limit_source, want_pre, want = case
    assert run(new, existing, extra, max_vols, va_count, drivers, limit_source) == (want_pre, want)


# -- beyond the upstream table -----------------------------------------------------------------


def test_the_volume_attachment_parser_reads_what_the_table_builds() -> None:
    """The table's VolumeAttachments (without apiVersion, as the fake lister's) parse."""
    va = VolumeAttachment.parse(storage_objects([EBS], 1, "csinode", 1)[-2])
    assert (va.attacher, va.node_name, va.pv_name) == (EBS, NODE, "csi-ebs.csi.aws.com-0")


def test_a_shared_claim_costs_nothing_more() -> None:
    """Deduplication: the node already attaches the new pod's volume (another pod uses it)."""
    assert run(CSI_EBS_ONE_VOL, [pod(*claims("csi-ebs.csi.aws.com-0")), CSI_EBS_TWO_VOL], [], 3, 0, [EBS], "csinode") == (OK, OK)


def test_the_limit_is_per_node() -> None:
    """Two nodes, one full: Filter fails that one only."""
    full, empty = "full", "empty"
    snap = build_snapshot([make_node(full), make_node(empty)], [CSI_EBS_TWO_VOL.with_node(full)])
    objs = storage_objects([EBS], 2, "", 0)
    with_storage(snap, *objs, make_csi_node(full, {EBS: 2}), make_csi_node(empty, {EBS: 2}))
    state = CycleState()
    assert CSILimits().pre_filter(state, CSI_EBS_ONE_VOL, snap) is None
    assert CSILimits().filter(state, CSI_EBS_ONE_VOL, snap, np.arange(2, dtype=np.int32)).failed.tolist() == [True, False]


def test_claim_of_a_bound_pod_that_is_gone_is_not_counted() -> None:
    """An existing pod's missing claim is skipped (nothing says it is the pod's)."""
    gone = pod(*claims("no-such-claim"))
    assert run(CSI_EBS_ONE_VOL, [gone, CSI_EBS_TWO_VOL], [], 3, 0, [EBS], "csinode") == (OK, OK)


def test_events_to_register() -> None:
    """EventsToRegister (v1.36): CSINode Add|Update, Pod Delete, PVC Add, VolumeAttachment Delete."""
    assert CSILimits.events_to_register == {
        "CSINodeAdd",
        "CSINodeUpdate",
        "AssignedPodDelete",
        "PersistentVolumeClaimAdd",
        "VolumeAttachmentDelete",
    }


def test_one_filter_call_judges_each_node_by_its_own_csinode() -> None:
    """The pod's own volumes are found once per set of migrated plugins, not once per call: an
    inline Portworx volume counts (and meets the limit) only on the node whose CSINode says
    Portworx is migrated, whichever node Filter reads first."""
    px = Pod.parse(make_pod("px", spec={"volumes": [{"name": "v", "portworxVolume": {"volumeID": "px-1"}}]}))
    nodes = ["plain", "migrated", "plain-2"]
    snap = build_snapshot([make_node(n) for n in nodes], [])
    with_storage(
        snap,
        make_csi_node("plain", {"pxd.portworx.com": 0}),
        make_csi_node("migrated", {"pxd.portworx.com": 0}, migrated_plugins=["kubernetes.io/portworx-volume"]),
        make_csi_node("plain-2", {"pxd.portworx.com": 0}),
    )
    state = CycleState()
    assert CSILimits().pre_filter(state, px, snap) is None
    for order in ([0, 1, 2], [1, 0, 2], [2, 1, 0]):
        rows = np.array(order, dtype=np.int32)
        failed = CSILimits().filter(state, px, snap, rows).failed.tolist()
        assert failed == [nodes[r] == "migrated" for r in order]


def test_attachments_on_follows_changes() -> None:
    """The per-node index of VolumeAttachments is rebuilt after an add or a remove."""
    snap = build_snapshot([make_node("a"), make_node("b")], [])
    storage = with_storage(snap).storage
    va = VolumeAttachment.parse(storage_objects([EBS], 1, "csinode", 1)[-2])
    assert storage.attachments_on(NODE) == []
    storage.add(va)
    assert [v.name for v in storage.attachments_on(NODE)] == [va.name]
    assert storage.attachments_on("a") == []
    storage.remove(va)
    assert storage.attachments_on(NODE) == []

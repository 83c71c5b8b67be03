"""The storage objects and pods' volumes read from cluster dumps: parsed, admitted and judged as
the API server judges them (bad input: one line naming file and field, exit 2)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from kubesched.api.objects import Pod
from kubesched.api.storage import (
    CSIDriver,
    CSINode,
    CSIStorageCapacity,
    PersistentVolume,
    PersistentVolumeClaim,
    StorageClass,
    VolumeAttachment,
)
from kubesched.cli import main
from kubesched.load import load_cluster
from kubesched.state.snapshot import Snapshot
from kubesched.testing import make_node, make_pod
from kubesched.testing_storage import (
    ephemeral_volume,
    make_csi_node,
    make_pv,
    make_pvc,
    make_storage_class,
    pvc_volume,
)

ZONE = "topology.kubernetes.io/zone"


def _write(tmp_path: Path, docs: list[dict[str, Any]], *, as_list: bool = False) -> str:
    f = tmp_path / "cluster.yaml"
    if as_list:
        f.write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": docs}))
    else:
        f.write_text(yaml.safe_dump_all(docs))
    return str(f)


def _pod(name: str, *volumes: dict[str, Any], node: str | None = None) -> dict[str, Any]:
    return make_pod(name, node=node, spec={"volumes": list(volumes)})


CAPACITY = {
    "apiVersion": "storage.k8s.io/v1",
    "kind": "CSIStorageCapacity",
    "metadata": {"name": "cap-a", "namespace": "kube-system"},
    "storageClassName": "fast",
    "nodeTopology": {"matchLabels": {ZONE: "a"}},
    "capacity": "100Gi",
}
ATTACHMENT = {
    "apiVersion": "storage.k8s.io/v1",
    "kind": "VolumeAttachment",
    "metadata": {"name": "csi-123"},
    "spec": {"attacher": "csi.example.com", "nodeName": "n1", "source": {"persistentVolumeName": "pv-a"}},
}
DRIVER = {"apiVersion": "storage.k8s.io/v1", "kind": "CSIDriver", "metadata": {"name": "csi.example.com"}, "spec": {}}


def test_a_kubectl_list_with_every_storage_kind_loads(tmp_path: Path) -> None:
    docs = [
        make_node("n1", labels={ZONE: "a"}),
        make_pv("pv-a", labels={ZONE: "a"}, storage_class="fast", claim=("default", "data-web-0")),
        make_pvc("data-web-0", volume_name="pv-a", storage_class="fast"),
        make_storage_class("fast", mode="WaitForFirstConsumer", allowed_topologies=[{ZONE: ["a", "b"]}]),
        make_csi_node("n1", {"csi.example.com": 16}, topology_keys={"csi.example.com": [ZONE]}),
        DRIVER,
        CAPACITY,
        ATTACHMENT,
        _pod(
            "web-0",
            pvc_volume("data-web-0", "data"),
            ephemeral_volume("scratch"),
            {"name": "inline", "csi": {"driver": "csi.example.com"}},
            {"name": "disk", "gcePersistentDisk": {"pdName": "pd-1", "readOnly": True}},
            {"name": "cfg", "configMap": {"name": "c"}},
        ),
    ]
    objs = load_cluster([_write(tmp_path, docs, as_list=True)])
    kinds = {type(o) for o in objs.storage}
    assert kinds == {PersistentVolume, PersistentVolumeClaim, StorageClass, CSINode, CSIDriver, CSIStorageCapacity, VolumeAttachment}
    pod = objs.pods[0]
    assert [(v.name, v.source, v.claim_name, v.read_only) for v in pod.volumes] == [
        ("data", "persistentVolumeClaim", "data-web-0", False),
        ("scratch", "ephemeral", "web-0-scratch", False),  # ephemeral.VolumeClaimName
        ("inline", "csi", "", False),
        ("disk", "gcePersistentDisk", "", True),
        ("cfg", "configMap", "", False),
    ]
    assert pod.volumes[3].fields["pdName"] == "pd-1"
    snap = Snapshot.of(objs)
    st = snap.storage
    assert st.pvs["pv-a"].claim_ref is not None and st.pvs["pv-a"].claim_ref.name == "data-web-0"
    assert st.pvs["pv-a"].node_affinity is None and st.pvs["pv-a"].csi == ("csi.example.com", "pv-a")
    assert st.pvc("default", "data-web-0").volume_name == "pv-a"
    assert st.classes["fast"].wait_for_first_consumer
    assert st.csi_nodes["n1"].drivers["csi.example.com"].count == 16
    assert st.csi_drivers["csi.example.com"].attach_required  # the API server's default
    assert st.capacities[("kube-system", "cap-a")].volume_limit == 100 * 2**30
    assert [va.pv_name for va in st.attachments_on("n1")] == ["pv-a"]
    # the pending pod's ephemeral claim, as the ephemeral volume controller creates it
    scratch = st.pvc("default", "web-0-scratch")
    assert scratch is not None and scratch.controller_uid == pod.uid


def test_claims_without_a_class_get_the_default_one(tmp_path: Path) -> None:
    docs = [
        make_storage_class("old", default=True),
        {**make_storage_class("standard", default=True), "metadata": {
            "name": "standard",
            "creationTimestamp": "2030-01-01T00:00:00Z",
            "annotations": {"storageclass.kubernetes.io/is-default-class": "true"},
        }},
        make_pvc("no-class"),
        make_pvc("empty-class", storage_class=""),
        make_pvc("beta", annotations={"volume.beta.kubernetes.io/storage-class": "old"}),
        _pod("p", ephemeral_volume("tmp")),
    ]
    objs = load_cluster([_write(tmp_path, docs)])
    classes = {o.name: o.storage_class for o in objs.storage if isinstance(o, PersistentVolumeClaim)}
    # the newest default class; "" asks for no class; the beta annotation is a class
    assert classes == {"no-class": "standard", "empty-class": "", "beta": "old", "p-tmp": "standard"}


def test_a_pending_pods_missing_claim_is_a_warning(tmp_path: Path) -> None:
    objs = load_cluster([_write(tmp_path, [make_node("n1"), _pod("p", pvc_volume("gone"))])])
    assert any('uses PersistentVolumeClaim "gone", which the input does not define' in w for w in objs.warnings)


def test_pods_without_volumes_parse_no_volumes() -> None:
    assert Pod.parse(make_pod("p")).volumes == ()


def _two_sources() -> dict[str, Any]:
    return {"name": "v", "emptyDir": {}, "persistentVolumeClaim": {"claimName": "c"}}


# (case, documents, the line after the file name)
CASES: list[tuple[str, list[dict[str, Any]], str]] = [
    (
        "pod volume with two sources",
        [_pod("p", _two_sources())],
        "spec.volumes[0].persistentVolumeClaim: Forbidden: may not specify more than 1 volume type",
    ),
    ("pod volume without source", [_pod("p", {"name": "v"})], "spec.volumes[0]: Required value: must specify a volume type"),
    (
        "claim without a name",
        [_pod("p", {"name": "v", "persistentVolumeClaim": {"claimName": ""}})],
        "spec.volumes[0].persistentVolumeClaim.claimName: Required value",
    ),
    (
        "duplicate volume names",
        [_pod("p", pvc_volume("a", "v"), pvc_volume("b", "v"))],
        'spec.volumes[1].name: Duplicate value: "v"',
    ),
    (
        "ephemeral volume without a template",
        [_pod("p", {"name": "v", "ephemeral": {}})],
        "spec.volumes[0].ephemeral.volumeClaimTemplate: Required value",
    ),
    (
        "claim naming an ephemeral volume's claim",
        [_pod("p", ephemeral_volume("scratch"), pvc_volume("p-scratch", "other"))],
        'spec.volumes[1].persistentVolumeClaim.claimName: Invalid value: "p-scratch": must not reference a PVC that gets created for an ephemeral volume',
    ),
    (
        "unknown access mode",
        [make_pvc("c", access_modes=["ReadWriteSometimes"])],
        'spec.accessModes: Unsupported value: "ReadWriteSometimes": supported values: "ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod"',
    ),
    (
        "ReadWriteOncePod with another mode",
        [make_pvc("c", access_modes=["ReadWriteOncePod", "ReadWriteOnce"])],
        "spec.accessModes: Forbidden: may not use ReadWriteOncePod with other access modes",
    ),
    ("claim without a storage request", [make_pvc("c", request=None)], "spec.resources[storage]: Required value"),
    ("claim of zero bytes", [make_pvc("c", request="0")], 'spec.resources[storage]: Invalid value: "0": must be greater than zero'),
    (
        "volume of two sources",
        [make_pv("v", source={"csi": {"driver": "d.example.com", "volumeHandle": "h"}, "hostPath": {"path": "/x"}})],
        "spec.csi: Forbidden: may not specify more than 1 volume type",
    ),
    ("volume without capacity", [make_pv("v", capacity=None)], "spec.capacity: Required value"),
    (
        "local volume without node affinity",
        [make_pv("v", source={"local": {"path": "/mnt"}})],
        "spec.nodeAffinity: Required value: Local volume requires node affinity",
    ),
    (
        "volume node affinity without terms",
        [make_pv("v", node_affinity=[])],
        "spec.nodeAffinity.required.nodeSelectorTerms: Required value: must have at least one node selector term",
    ),
    (
        "binding mode",
        [make_storage_class("s", mode="Later")],
        'volumeBindingMode: Unsupported value: "Later": supported values: "Immediate", "WaitForFirstConsumer"',
    ),
    ("class without provisioner", [make_storage_class("s", provisioner="")], "provisioner: Required value"),
    (
        "allowed topology without values",
        [make_storage_class("s", allowed_topologies=[{ZONE: []}])],
        "allowedTopologies[0].matchLabelExpressions[0].values: Required value",
    ),
    (
        "negative attach limit",
        [make_csi_node("n1", {"csi.example.com": -1})],
        "spec.drivers[0].allocatable.count: Invalid value: -1: must be greater than or equal to 0",
    ),
    (
        "a driver twice on a CSINode",
        [{**make_csi_node("n1", {"d.example.com": 1}), "spec": {"drivers": [{"name": "d.example.com", "nodeID": "x"}] * 2}}],
        'spec.drivers[1].name: Duplicate value: "d.example.com"',
    ),
    ("unknown field", [{**make_pvc("c"), "spec": {"volumeNme": "x"}}], 'spec.volumeNme: unknown field "volumeNme" (PersistentVolumeClaimSpec has no such field); did you mean "volumeName"?'),
    ("wrong apiVersion", [{**make_storage_class("s"), "apiVersion": "storage.k8s.io/v1beta1"}], 'StorageClass is served as apiVersion "storage.k8s.io/v1"'),
    ("duplicate claim", [make_pvc("c"), make_pvc("c")], 'documents[1]: duplicate PersistentVolumeClaim "default/c" (first at '),
    (
        "attachment without source",
        [{**ATTACHMENT, "spec": {"attacher": "csi.example.com", "nodeName": "n1", "source": {}}}],
        "spec.source: Required value: must specify exactly one of inlineVolumeSpec and persistentVolumeName",
    ),
]


@pytest.mark.parametrize(("name", "docs", "expected"), CASES, ids=[c[0] for c in CASES])
def test_bad_storage_input_is_one_line_exit_2(
    name: str, docs: list[dict[str, Any]], expected: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    f = _write(tmp_path, docs)
    assert main(["schedule", "-f", f]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "Traceback" not in err
    assert f"{f}: " in err and expected in err


def test_pod_signature_reads_the_volumes_the_plugins_read() -> None:
    """Pods that differ in their claims or disks are not equivalent; the names of projected,
    configMap or secret volumes (a Deployment's replicas differ there) do not matter."""

    def sig(name: str, *volumes: dict[str, Any]) -> Any:
        return Pod.parse(make_pod(name, spec={"volumes": list(volumes)})).signature()

    token_a = {"name": "kube-api-access-x2x4q", "projected": {"sources": []}}
    token_b = {"name": "kube-api-access-k8s7p", "projected": {"sources": []}}
    assert sig("a", token_a) == sig("b", token_b) == Pod.parse(make_pod("c")).signature()
    assert sig("a", pvc_volume("data-0")) != sig("b", pvc_volume("data-1"))
    disk = {"name": "d", "gcePersistentDisk": {"pdName": "disk-1"}}
    assert sig("a", disk) != sig("b", {"name": "d", "gcePersistentDisk": {"pdName": "disk-2"}})
    assert sig("a", disk, token_a) == sig("b", disk, token_b)


def test_autoscaler_scratch_snapshots_share_the_storage() -> None:
    """Cluster Autoscaler's simulations (copies of the live snapshot, with or without its nodes)
    run the volume plugins against the cluster's claims."""
    live = Snapshot()
    live.storage.load([PersistentVolumeClaim.parse(make_pvc("data"))])
    assert live.copy(nodes=(), pods=False).storage is live.storage
    assert live.copy().storage is live.storage
    assert Snapshot().storage.pvc("default", "data") is None


def test_validate_warn_and_ignore_load_invalid_storage(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """--validate=warn: a storage object or pod volume the API server would refuse is loaded with
    one warning line per problem; ignore loads it silently; strict refuses it."""
    bad_claim = make_pvc("data", access_modes=["ReadWriteSometimes"])
    pod = make_pod("p", spec={"volumes": [pvc_volume("data", "d"), {"name": "d", "emptyDir": {}}]})
    f = _write(tmp_path, [make_node("n1"), bad_claim, pod])
    assert main(["schedule", "-f", f]) == 2
    assert 'Unsupported value: "ReadWriteSometimes"' in capsys.readouterr().err
    assert main(["schedule", "-f", f, "--validate=warn", "-o", "json", "--seed", "0"]) == 0
    err = capsys.readouterr().err.splitlines()
    assert [line.removeprefix(f"kubesched: warning: {f}: ").split(": ")[0] for line in err] == [
        "documents[1].spec.accessModes",
        "documents[2].spec.volumes[1].name",
    ]
    assert main(["schedule", "-f", f, "--validate=ignore", "-o", "json", "--seed", "0"]) == 0
    assert capsys.readouterr().err == ""


def test_storage_keeps_each_pvs_csi_translation_until_the_pv_changes() -> None:
    """VolumeBinding and NodeVolumeLimits translate an in-tree PV on every node they judge:
    the storage keeps the translation per PV object, and a new object (an update) is translated
    again."""
    from kubesched.api.csi_migration import pv_migration, translate_pv
    from kubesched.api.storage import PersistentVolume
    from kubesched.state.storage import Storage

    def ebs(volume_id: str) -> PersistentVolume:
        return PersistentVolume.parse(
            {
                "kind": "PersistentVolume",
                "metadata": {"name": "pv-a", "labels": {"topology.kubernetes.io/zone": "z1"}},
                "spec": {"capacity": {"storage": "1Gi"}, "awsElasticBlockStore": {"volumeID": volume_id}},
            }
        )

    storage = Storage()
    pv = ebs("vol-1")
    migration = pv_migration(pv)
    first = storage.translated(pv, migration)
    assert first == translate_pv(pv, migration) and first.csi == ("ebs.csi.aws.com", "vol-1")
    assert storage.translated(pv, migration) is first
    updated = ebs("vol-2")
    assert storage.translated(updated, migration).csi == ("ebs.csi.aws.com", "vol-2")


def test_storage_volumes_are_the_ones_the_volume_plugins_read() -> None:
    pod = Pod.parse(
        _pod(
            "p",
            {"name": "data", "persistentVolumeClaim": {"claimName": "c"}},
            {"name": "cfg", "configMap": {"name": "x"}},
            {"name": "disk", "gcePersistentDisk": {"pdName": "d"}},
            {"name": "tmp", "emptyDir": {}},
        )
    )
    assert [v.name for v in pod.volumes] == ["data", "cfg", "disk", "tmp"]
    assert [v.name for v in pod.storage_volumes] == ["data", "disk"]
    assert pod.copy().storage_volumes == pod.storage_volumes

"""simulate counts a node's CSI attachments as pods come and go (NodeVolumeLimits' view): a node
at its attach limit refuses one more volume until a pod using one completes; the dump's
VolumeAttachments are detached when the last pod using their volume leaves."""

from __future__ import annotations

from pathlib import Path

import yaml
from sim_helpers import default_cfg

from kubesched.sim.runner import simulate
from kubesched.sim.workload import ARRIVAL_ANNOTATION, DURATION_ANNOTATION, from_manifests

DRIVER = "ebs.csi.aws.com"
LIMIT_MESSAGE = "1 node(s) exceed max volume count"


def node_with_limit(limit: int) -> list[dict]:
    return [
        {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {"name": "node-a", "labels": {"kubernetes.io/hostname": "node-a"}},
            "status": {"capacity": {"cpu": "4", "memory": "8Gi", "pods": "110"}},
        },
        {
            "apiVersion": "storage.k8s.io/v1",
            "kind": "CSINode",
            "metadata": {"name": "node-a"},
            "spec": {"drivers": [{"name": DRIVER, "nodeID": "node-a", "allocatable": {"count": limit}}]},
        },
    ]


def volume(i: int) -> list[dict]:
    """A CSI PV and the claim bound to it."""
    return [
        {
            "apiVersion": "v1",
            "kind": "PersistentVolume",
            "metadata": {"name": f"pv-{i}"},
            "spec": {
                "accessModes": ["ReadOnlyMany"],
                "capacity": {"storage": "1Gi"},
                "csi": {"driver": DRIVER, "volumeHandle": f"vol-{i}"},
                "claimRef": {"namespace": "default", "name": f"data-{i}"},
            },
            "status": {"phase": "Bound"},
        },
        {
            "apiVersion": "v1",
            "kind": "PersistentVolumeClaim",
            "metadata": {
                "name": f"data-{i}",
                "namespace": "default",
                "annotations": {"pv.kubernetes.io/bind-completed": "yes"},
            },
            "spec": {
                "accessModes": ["ReadOnlyMany"],
                "resources": {"requests": {"storage": "1Gi"}},
                "volumeName": f"pv-{i}",
                "storageClassName": "",
            },
            "status": {"phase": "Bound"},
        },
    ]


def pod(name: str, claim: int, arrival: float = 0, duration: float | None = None, node: str = "") -> dict:
    ann = {ARRIVAL_ANNOTATION: str(arrival)}
    if duration is not None:
        ann[DURATION_ANNOTATION] = str(duration)
    spec: dict = {
        "containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": "100m"}}}],
        "volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": f"data-{claim}"}}],
    }
    out = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default", "annotations": ann}, "spec": spec}
    if node:
        spec["nodeName"] = node
        out["status"] = {"phase": "Running"}
    return out


def attachment(pv: int) -> dict:
    return {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "VolumeAttachment",
        "metadata": {"name": f"csi-{pv}"},
        "spec": {"attacher": DRIVER, "nodeName": "node-a", "source": {"persistentVolumeName": f"pv-{pv}"}},
        "status": {"attached": True},
    }


def run(tmp_path: Path, docs: list[dict]):  # noqa: ANN201
    path = tmp_path / "cluster.yaml"
    path.write_text(yaml.safe_dump_all(docs))
    cfg, reg = default_cfg()
    res = simulate(cfg, from_manifests([str(path)]), mode="time", seed=1, registry=reg)
    events = list(zip(res.events["time"], res.events["event"], res.events["pod"], res.events["message"], strict=True))
    return res, events


def scheduled_at(events: list[tuple], pod_key: str) -> float | None:
    return next((t for t, ev, p, _ in events if ev == "scheduled" and p == pod_key), None)


def test_node_at_its_attach_limit_takes_another_volume_once_a_pod_completes(tmp_path: Path) -> None:
    docs = node_with_limit(2) + volume(0) + volume(1) + volume(2)
    docs += [pod("a", 0, duration=100), pod("b", 1, duration=200), pod("c", 2, arrival=10, duration=50)]
    res, events = run(tmp_path, docs)
    assert scheduled_at(events, "default/a") == 0 and scheduled_at(events, "default/b") == 0
    refused = [m for t, ev, p, m in events if p == "default/c" and ev == "unschedulable"]
    assert refused and LIMIT_MESSAGE in refused[0]
    assert scheduled_at(events, "default/c") == 100  # a completed: its volume no longer counts
    assert res.summary["pods"]["scheduled"] == 3


def test_attachment_in_the_dump_is_detached_when_its_pod_completes(tmp_path: Path) -> None:
    """The running pod's volume is attached (a VolumeAttachment in the dump): counted once while
    the pod runs, detached when it completes, so the waiting pod's volume fits then."""
    docs = node_with_limit(1) + volume(0) + volume(1) + [attachment(0)]
    docs += [pod("running", 0, duration=50, node="node-a"), pod("waiting", 1, arrival=10, duration=100)]
    res, events = run(tmp_path, docs)
    refused = [m for t, ev, p, m in events if p == "default/waiting" and ev == "unschedulable"]
    assert refused and LIMIT_MESSAGE in refused[0]
    assert scheduled_at(events, "default/waiting") == 50
    assert res.summary["pods"]["failed"] == 0


def test_volume_another_pod_still_uses_stays_attached(tmp_path: Path) -> None:
    """Two pods share the attached volume: the first to complete leaves it attached, the node
    stays at its limit until the second completes too."""
    docs = node_with_limit(1) + volume(0) + volume(1) + [attachment(0)]
    docs += [
        pod("first", 0, duration=50, node="node-a"),
        pod("second", 0, duration=120, node="node-a"),
        pod("waiting", 1, arrival=10, duration=100),
    ]
    res, events = run(tmp_path, docs)
    completed = {p: t for t, ev, p, _ in events if ev == "complete"}
    assert completed["default/first"] == 50 and completed["default/second"] == 120
    assert scheduled_at(events, "default/waiting") == 120

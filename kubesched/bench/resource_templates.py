"""scheduler_perf's storage and DRA object templates as wire dicts: PersistentVolumes and their
pre-bound claims, CSINodes (volumes/), DeviceClasses, ResourceClaim(Template)s and
ResourceSlices (dra/). The pod and node templates are ``kubesched.bench.templates``."""

from __future__ import annotations

from collections.abc import Callable

from kubesched.bench.templates import CLAIM_TEMPLATE_NAME, WireDict

# ---- volumes (volumes/): a PV and a pre-bound PVC per pod --------------------------------------
EBS_CSI_DRIVER = "ebs.csi.aws.com"
AWS_EBS_PLUGIN = "kubernetes.io/aws-ebs"


def _template_pv(source: WireDict) -> WireDict:
    """A PV of scheduler_perf's PV templates: 1Gi, ReadOnlyMany, retained; they differ in the source."""
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolume",
        "spec": {
            "accessModes": ["ReadOnlyMany"],
            "capacity": {"storage": "1Gi"},
            "persistentVolumeReclaimPolicy": "Retain",
            **source,
        },
    }


def pv_aws() -> WireDict:
    """templates/pv-aws.yaml: an in-tree AWS EBS volume (its volumeID set per pod)."""
    return _template_pv({"awsElasticBlockStore": {"volumeID": "<volume-id>"}})


def pv_csi() -> WireDict:
    """templates/pv-csi.yaml: a CSI volume of the EBS driver (its volumeHandle set per pod)."""
    return _template_pv({"csi": {"driver": EBS_CSI_DRIVER}})


def pvc() -> WireDict:
    """templates/pvc.yaml: bind-completed, so VolumeBinding finds it fully bound."""
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {"annotations": {"pv.kubernetes.io/bind-completed": "true"}},
        "spec": {"accessModes": ["ReadOnlyMany"], "resources": {"requests": {"storage": "1Gi"}}},
    }


PV_TEMPLATES: dict[str, Callable[[], WireDict]] = {"pv-aws": pv_aws, "pv-csi": pv_csi}


def bound_volume(pv_template: str, namespace: str, index: int) -> tuple[WireDict, WireDict]:
    """The PV and PVC createPods makes for its ``index``-th pod, bound to each other before the
    pod exists (test/utils' CreatePodWithPersistentVolume with bindVolume, and
    getCustomVolumeFactory): claim ``pvc-<index>``, volume ``<namespace>-vol-<index>``; an EBS
    volume's ID is ``vol-<index>``, a CSI volume's handle the PV's name."""
    claim_name = f"pvc-{index}"
    pv = PV_TEMPLATES[pv_template]()
    spec = pv["spec"]
    pv["metadata"] = {"name": f"{namespace}-vol-{index}"}
    if "csi" in spec:
        spec["csi"]["volumeHandle"] = pv["metadata"]["name"]
    elif "awsElasticBlockStore" in spec:
        spec["awsElasticBlockStore"]["volumeID"] = f"vol-{index}"
    spec["claimRef"] = {"kind": "PersistentVolumeClaim", "namespace": namespace, "name": claim_name, "apiVersion": "v1"}
    pv["status"] = {"phase": "Bound"}
    claim = pvc()
    claim["metadata"].update(name=claim_name, namespace=namespace)
    claim["spec"]["volumeName"] = pv["metadata"]["name"]
    claim["status"] = {"phase": "Bound"}
    return pv, claim


def pod_volume(claim_name: str) -> WireDict:
    """The volume CreatePodWithPersistentVolume puts in the pod (its only one)."""
    return {"name": "vol", "persistentVolumeClaim": {"claimName": claim_name}}


def csi_node(node_name: str, drivers: dict[str, int], migrated_plugins: tuple[str, ...]) -> WireDict:
    """NodeAllocatableStrategy's CSINode: each driver's attach limit, the migrated plugins."""
    return {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "CSINode",
        "metadata": {
            "name": node_name,
            "annotations": {"storage.alpha.kubernetes.io/migrated-plugins": ",".join(migrated_plugins)},
        },
        "spec": {
            "drivers": [
                {"name": d, "nodeID": node_name, "allocatable": {"count": count}} for d, count in drivers.items()
            ]
        },
    }


# ---- Dynamic Resource Allocation (dra/) ----------------------------------------------------------
DRA_TEST_DRIVER = "test-driver.cdi.k8s.io"
DEVICE_CLASS_NAME = "test-class"
DRA_API_VERSION = "resource.k8s.io/v1"


def device_class() -> WireDict:
    """dra/templates/deviceclass.yaml: every device of the test driver."""
    return {
        "apiVersion": DRA_API_VERSION,
        "kind": "DeviceClass",
        "metadata": {"name": DEVICE_CLASS_NAME},
        "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{DRA_TEST_DRIVER}"'}}]},
    }


def _one_device_request() -> WireDict:
    return {"requests": [{"name": "req-0", "exactly": {"deviceClassName": DEVICE_CLASS_NAME}}]}


def resource_claim_template(namespace: str) -> WireDict:
    """dra/templates/resourceclaimtemplate.yaml with its defaults: one request of one device."""
    return {
        "apiVersion": DRA_API_VERSION,
        "kind": "ResourceClaimTemplate",
        "metadata": {"name": CLAIM_TEMPLATE_NAME, "namespace": namespace},
        "spec": {"spec": {"devices": _one_device_request()}},
    }


def resource_claim(namespace: str, index: int) -> WireDict:
    """dra/templates/resourceclaim.yaml: ``test-claim-<index>``, one device of the class."""
    return {
        "apiVersion": DRA_API_VERSION,
        "kind": "ResourceClaim",
        "metadata": {"name": f"test-claim-{index}", "namespace": namespace},
        "spec": {"devices": _one_device_request()},
    }


def resource_slice(driver: str, node_name: str, devices: int) -> WireDict:
    """createResourceDriver's slice for one node (scheduler_perf's resourceSlice): a pool of the
    node's name, ``devices`` devices ``instance-<i>`` with the model, family, driverVersion and
    NUMA attributes and 1Gi of memory each. The binding conditions newer scheduler_perf versions
    also give the devices are left out: kubesched does not wait for binding conditions (see
    docs/plugins/DynamicResources.md), so they would change nothing."""
    return {
        "apiVersion": DRA_API_VERSION,
        "kind": "ResourceSlice",
        "metadata": {"name": node_name},
        "spec": {
            "driver": driver,
            "nodeName": node_name,
            "pool": {"name": node_name, "resourceSliceCount": 1, "generation": 0},
            "devices": [
                {
                    "name": f"instance-{i}",
                    "attributes": {
                        "model": {"string": "A100"},
                        "family": {"string": "GPU"},
                        "driverVersion": {"version": "1.2.3"},
                        "dra.example.com/numa": {"int": i},
                    },
                    "capacity": {"memory": {"value": "1Gi"}},
                }
                for i in range(devices)
            ],
        },
    }

"""The storage objects the volume plugins read: pods' volumes, PersistentVolume,
PersistentVolumeClaim, StorageClass, CSINode, CSIDriver, CSIStorageCapacity and VolumeAttachment.

Parsed once, at the edge, like ``kubesched.api.objects``; only what kube-scheduler's
VolumeBinding, VolumeZone, VolumeRestrictions and NodeVolumeLimits read is kept. The objects
are frozen: binding a claim (VolumeBinding's PreBind) replaces them in the cluster's store
(``kubesched.state.storage``), as an API update replaces an object.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from types import MappingProxyType
from typing import Any

from kubesched.api.fields import as_bool, as_int, as_list, as_map, as_str, child, maps, str_map
from kubesched.api.quantity import parse_quantity
from kubesched.api.selectors import LabelSelector, NodeSelector
from kubesched.errors import InputError, join_path

STORAGE_API_VERSION = "storage.k8s.io/v1"

# -- annotations and well-known values (k8s.io/component-helpers/storage/volume, core/v1) --------
ANN_SELECTED_NODE = "volume.kubernetes.io/selected-node"
ANN_BIND_COMPLETED = "pv.kubernetes.io/bind-completed"
ANN_BOUND_BY_CONTROLLER = "pv.kubernetes.io/bound-by-controller"
ANN_STORAGE_PROVISIONER = "volume.kubernetes.io/storage-provisioner"
ANN_BETA_STORAGE_PROVISIONER = "volume.beta.kubernetes.io/storage-provisioner"
ANN_DYNAMICALLY_PROVISIONED = "pv.kubernetes.io/provisioned-by"
BETA_STORAGE_CLASS_ANNOTATION = "volume.beta.kubernetes.io/storage-class"
IS_DEFAULT_CLASS_ANNOTATION = "storageclass.kubernetes.io/is-default-class"
BETA_IS_DEFAULT_CLASS_ANNOTATION = "storageclass.beta.kubernetes.io/is-default-class"
MIGRATED_PLUGINS_ANNOTATION = "storage.alpha.kubernetes.io/migrated-plugins"
NOT_SUPPORTED_PROVISIONER = "kubernetes.io/no-provisioner"

READ_WRITE_ONCE, READ_ONLY_MANY, READ_WRITE_MANY, READ_WRITE_ONCE_POD = (
    "ReadWriteOnce", "ReadOnlyMany", "ReadWriteMany", "ReadWriteOncePod",
)  # fmt: skip
ACCESS_MODES = (READ_ONLY_MANY, READ_WRITE_MANY, READ_WRITE_ONCE, READ_WRITE_ONCE_POD)
VOLUME_MODES = ("Block", "Filesystem")
IMMEDIATE, WAIT_FOR_FIRST_CONSUMER = "Immediate", "WaitForFirstConsumer"
BINDING_MODES = (IMMEDIATE, WAIT_FOR_FIRST_CONSUMER)
VOLUME_AVAILABLE, VOLUME_BOUND = "Available", "Bound"
CLAIM_PENDING, CLAIM_BOUND, CLAIM_LOST = "Pending", "Bound", "Lost"
STORAGE = "storage"

#: The members of core/v1 VolumeSource, in the order the API server's validation visits them
#: (a second one is "may not specify more than 1 volume type" at that member).
POD_VOLUME_SOURCES = (
    "emptyDir", "hostPath", "gitRepo", "gcePersistentDisk", "awsElasticBlockStore", "secret", "nfs",
    "iscsi", "glusterfs", "flocker", "persistentVolumeClaim", "rbd", "cinder", "cephfs", "quobyte",
    "downwardAPI", "fc", "flexVolume", "configMap", "azureFile", "vsphereVolume", "photonPersistentDisk",
    "portworxVolume", "azureDisk", "storageos", "projected", "scaleIO", "csi", "ephemeral", "image",
)  # fmt: skip
#: The members of core/v1 PersistentVolumeSource, in the validation's order.
PV_SOURCES = (
    "hostPath", "gcePersistentDisk", "awsElasticBlockStore", "glusterfs", "flocker", "nfs", "rbd",
    "quobyte", "cephfs", "iscsi", "cinder", "fc", "flexVolume", "azureFile", "vsphereVolume",
    "photonPersistentDisk", "portworxVolume", "azureDisk", "scaleIO", "local", "storageos", "csi",
)  # fmt: skip
PVC, EPHEMERAL, CSI = "persistentVolumeClaim", "ephemeral", "csi"
GCE_PD, AWS_EBS, ISCSI, RBD = "gcePersistentDisk", "awsElasticBlockStore", "iscsi", "rbd"

_EMPTY: Mapping[str, Any] = MappingProxyType({})


def _frozen(m: dict) -> Mapping[str, Any]:
    return MappingProxyType(m) if m else _EMPTY


def _meta(m: Mapping[str, Any], path: str, *, namespaced: bool) -> tuple[str, str, dict]:
    """(namespace, name, metadata) of an object; a name is required."""
    md, mp = child(m, path, "metadata")
    name = as_str(md.get("name"), join_path(mp, "name"))
    if not name:
        raise InputError("metadata.name is required", path=join_path(mp, "name"))
    namespace = (as_str(md.get("namespace"), join_path(mp, "namespace")) or "default") if namespaced else ""
    return namespace, name, md


def _storage(q: Any, path: str) -> Fraction | None:
    return None if q is None else parse_quantity(q, path)


def _access_modes(value: Any, path: str) -> tuple[str, ...]:
    return tuple(as_str(v, join_path(path, i)) for i, v in enumerate(as_list(value, path)))


def _source(m: Mapping[str, Any], members: tuple[str, ...]) -> str:
    """The first member set (not null) of a VolumeSource-like mapping, "" when none is."""
    for k in members:
        if m.get(k) is not None:
            return k
    return ""


# -- pods' volumes ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class PodVolume:
    """One entry of a pod's ``spec.volumes``.

    ``source``: the VolumeSource member set ("persistentVolumeClaim", "ephemeral", "csi",
    "gcePersistentDisk", ...; "" when none is, which validation refuses). ``claim_name``: the
    PVC it uses, ``claimName`` or, for a generic ephemeral volume, ``<pod name>-<volume name>``
    (the claim the ephemeral volume controller creates). ``fields``: the source's own fields
    (pdName, volumeID, iqn, monitors, driver, ...), read by VolumeRestrictions and the CSI
    migration of in-tree volumes.
    """

    name: str
    source: str
    claim_name: str = ""
    read_only: bool = False
    fields: Mapping[str, Any] = field(default_factory=lambda: _EMPTY, compare=False)

    @property
    def uses_claim(self) -> bool:
        return self.source == PVC or self.source == EPHEMERAL


#: The volume sources the volume plugins read (claims; in-tree disks VolumeRestrictions checks or
#: NodeVolumeLimits counts once migrated to CSI; inline CSI).
SCHEDULED_SOURCES = frozenset(
    {PVC, EPHEMERAL, CSI, GCE_PD, AWS_EBS, ISCSI, RBD, "cinder", "azureDisk", "portworxVolume", "vsphereVolume"}
)


def volume_key(volumes: tuple[PodVolume, ...]) -> tuple:
    """What the scheduler reads of a pod's volumes, for ``Pod.signature``: the claims and the
    in-tree and CSI sources with their fields; configMap, secret, projected, emptyDir, ... are
    left out (their names differ between a workload's replicas and no plugin reads them)."""
    return tuple(
        (v.source, v.claim_name, v.read_only, repr(sorted(v.fields.items())) if v.fields else "")
        for v in volumes
        if v.source in SCHEDULED_SOURCES
    )


def parse_pod_volumes(value: Any, path: str, pod_name: str) -> tuple[PodVolume, ...]:
    """``spec.volumes`` of a pod named ``pod_name``."""
    if not value:
        return ()
    out = []
    for m, vp in maps(value, path):
        name = as_str(m.get("name"), join_path(vp, "name"))
        source = _source(m, POD_VOLUME_SOURCES)
        fields = as_map(m.get(source), join_path(vp, source)) if source else {}
        claim = ""
        if source == PVC:
            claim = as_str(fields.get("claimName"), join_path(vp, "persistentVolumeClaim.claimName"))
        elif source == EPHEMERAL:
            claim = f"{pod_name}-{name}"  # ephemeral.VolumeClaimName
        read_only = as_bool(fields.get("readOnly"), join_path(join_path(vp, source), "readOnly")) if source else False
        out.append(PodVolume(name, source, claim, read_only, _frozen(fields)))
    return tuple(out)


# -- PersistentVolume ------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ClaimRef:
    """A PV's ``spec.claimRef``: the claim it is bound (or pre-bound) to."""

    namespace: str
    name: str
    uid: str = ""


@dataclass(frozen=True, slots=True)
class PersistentVolume:
    name: str
    labels: Mapping[str, str]
    annotations: Mapping[str, str]
    capacity: Fraction | None  # spec.capacity.storage
    access_modes: tuple[str, ...]
    volume_mode: str  # Filesystem when unset
    spec_class: str  # spec.storageClassName
    claim_ref: ClaimRef | None
    node_affinity: NodeSelector | None  # spec.nodeAffinity.required
    phase: str
    source: str  # the PersistentVolumeSource member set
    source_fields: Mapping[str, Any] = field(compare=False)
    volume_attributes_class: str = ""
    deleting: bool = False
    raw: Mapping[str, Any] = field(default_factory=lambda: _EMPTY, repr=False, compare=False)

    @property
    def storage_class(self) -> str:
        """GetPersistentVolumeClass: the beta annotation first, then spec.storageClassName."""
        return self.annotations.get(BETA_STORAGE_CLASS_ANNOTATION, self.spec_class)

    @property
    def csi(self) -> tuple[str, str] | None:
        """(driver, volumeHandle) of a CSI volume."""
        if self.source != CSI:
            return None
        return str(self.source_fields.get("driver") or ""), str(self.source_fields.get("volumeHandle") or "")

    def bound_to(self, claim: PersistentVolumeClaim) -> bool:
        """IsVolumeBoundToClaim: pre-bound or bound to this claim (name and namespace; the uid
        too when the reference carries one)."""
        ref = self.claim_ref
        if ref is None or ref.name != claim.name or ref.namespace != claim.namespace:
            return False
        return not ref.uid or ref.uid == claim.uid

    @classmethod
    def parse(cls, d: Any, path: str = "") -> PersistentVolume:
        m = as_map(d, path)
        _, name, md = _meta(m, path, namespaced=False)
        mp, sp = join_path(path, "metadata"), join_path(path, "spec")
        spec = as_map(m.get("spec"), sp)
        status = as_map(m.get("status"), join_path(path, "status"))
        cap = as_map(spec.get("capacity"), join_path(sp, "capacity"))
        ref_raw = spec.get("claimRef")
        ref = None
        if ref_raw is not None:
            rp = join_path(sp, "claimRef")
            rm = as_map(ref_raw, rp)
            ref = ClaimRef(
                as_str(rm.get("namespace"), join_path(rp, "namespace")),
                as_str(rm.get("name"), join_path(rp, "name")),
                as_str(rm.get("uid"), join_path(rp, "uid")),
            )
        affinity, ap = child(spec, sp, "nodeAffinity")
        source = _source(spec, PV_SOURCES)
        return cls(
            name=name,
            labels=_frozen(str_map(md.get("labels"), join_path(mp, "labels"))),
            annotations=_frozen(str_map(md.get("annotations"), join_path(mp, "annotations"))),
            capacity=_storage(cap.get(STORAGE), join_path(sp, "capacity.storage")),
            access_modes=_access_modes(spec.get("accessModes"), join_path(sp, "accessModes")),
            volume_mode=as_str(spec.get("volumeMode"), join_path(sp, "volumeMode")) or "Filesystem",
            spec_class=as_str(spec.get("storageClassName"), join_path(sp, "storageClassName")),
            claim_ref=ref,
            # kube-scheduler's CheckNodeAffinity fails on a term it cannot parse: it matches no node
            node_affinity=NodeSelector.parse(affinity.get("required"), join_path(ap, "required"), lazy=True),
            phase=as_str(status.get("phase"), join_path(path, "status.phase")),
            source=source,
            source_fields=_frozen(as_map(spec.get(source), join_path(sp, source)) if source else {}),
            volume_attributes_class=as_str(
                spec.get("volumeAttributesClassName"), join_path(sp, "volumeAttributesClassName")
            ),
            deleting=md.get("deletionTimestamp") is not None,
            raw=m,
        )


# -- PersistentVolumeClaim -------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class PersistentVolumeClaim:
    namespace: str
    name: str
    uid: str
    labels: Mapping[str, str]
    annotations: Mapping[str, str]
    controller_uid: str  # the uid of the controlling owner (a pod, for an ephemeral volume's claim)
    access_modes: tuple[str, ...]
    selector: LabelSelector | None
    request: Fraction | None  # spec.resources.requests.storage
    volume_name: str
    spec_class: str | None  # spec.storageClassName (None when unset)
    volume_mode: str  # Filesystem when unset
    phase: str
    volume_attributes_class: str = ""
    deleting: bool = False
    raw: Mapping[str, Any] = field(default_factory=lambda: _EMPTY, repr=False, compare=False)

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"

    @property
    def storage_class(self) -> str:
        """GetPersistentVolumeClaimClass: the beta annotation first, then spec.storageClassName;
        "" when the claim names no class."""
        ann = self.annotations.get(BETA_STORAGE_CLASS_ANNOTATION)
        if ann is not None:
            return ann
        return self.spec_class or ""

    @property
    def fully_bound(self) -> bool:
        """isPVCFullyBound: a volume name and the bind-completed annotation."""
        return bool(self.volume_name) and ANN_BIND_COMPLETED in self.annotations

    def with_annotations(self, changes: Mapping[str, str]) -> PersistentVolumeClaim:
        """A copy with ``changes`` added to its annotations."""
        return dataclasses.replace(self, annotations=_frozen({**self.annotations, **changes}))

    @classmethod
    def parse(cls, d: Any, path: str = "") -> PersistentVolumeClaim:
        m = as_map(d, path)
        namespace, name, md = _meta(m, path, namespaced=True)
        mp, sp = join_path(path, "metadata"), join_path(path, "spec")
        spec = as_map(m.get("spec"), sp)
        status = as_map(m.get("status"), join_path(path, "status"))
        res = as_map(spec.get("resources"), join_path(sp, "resources"))
        requests = as_map(res.get("requests"), join_path(sp, "resources.requests"))
        controller = ""
        op = join_path(mp, "ownerReferences")
        for i, o in enumerate(as_list(md.get("ownerReferences"), op)):
            om = as_map(o, join_path(op, i))
            if om.get("controller") is True:
                controller = as_str(om.get("uid"), join_path(join_path(op, i), "uid"))
        spec_class = spec.get("storageClassName")
        return cls(
            namespace=namespace,
            name=name,
            uid=as_str(md.get("uid"), join_path(mp, "uid")) or f"pvc-uid-{namespace}-{name}",
            labels=_frozen(str_map(md.get("labels"), join_path(mp, "labels"))),
            annotations=_frozen(str_map(md.get("annotations"), join_path(mp, "annotations"))),
            controller_uid=controller,
            access_modes=_access_modes(spec.get("accessModes"), join_path(sp, "accessModes")),
            selector=LabelSelector.parse(spec.get("selector"), join_path(sp, "selector")),
            request=_storage(requests.get(STORAGE), join_path(sp, "resources.requests.storage")),
            volume_name=as_str(spec.get("volumeName"), join_path(sp, "volumeName")),
            spec_class=None if spec_class is None else as_str(spec_class, join_path(sp, "storageClassName")),
            volume_mode=as_str(spec.get("volumeMode"), join_path(sp, "volumeMode")) or "Filesystem",
            phase=as_str(status.get("phase"), join_path(path, "status.phase")),
            volume_attributes_class=as_str(
                spec.get("volumeAttributesClassName"), join_path(sp, "volumeAttributesClassName")
            ),
            deleting=md.get("deletionTimestamp") is not None,
            raw=m,
        )


# -- StorageClass ----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class TopologyTerm:
    """A TopologySelectorTerm: every key's node label must be one of its values."""

    requirements: tuple[tuple[str, frozenset[str]], ...]

    def matches(self, labels: Mapping[str, str]) -> bool:
        """TopologySelectorRequirementsAsSelector: an empty term, or a requirement without
        values, selects nothing."""
        if not self.requirements:
            return False
        for key, values in self.requirements:
            if not values or labels.get(key) not in values:
                return False
        return True


def match_topology_terms(terms: tuple[TopologyTerm, ...], labels: Mapping[str, str]) -> bool:
    """v1helper.MatchTopologySelectorTerms: no terms match every node; else any term."""
    return not terms or any(t.matches(labels) for t in terms)


def parse_topology_terms(value: Any, path: str) -> tuple[TopologyTerm, ...]:
    out = []
    for i, t in enumerate(as_list(value, path)):
        tp = join_path(path, i)
        ep = join_path(tp, "matchLabelExpressions")
        reqs = []
        for em, rp in maps(as_map(t, tp).get("matchLabelExpressions"), ep):
            values = frozenset(as_str(v, join_path(rp, "values")) for v in as_list(em.get("values"), join_path(rp, "values")))
            reqs.append((as_str(em.get("key"), join_path(rp, "key")), values))
        out.append(TopologyTerm(tuple(reqs)))
    return tuple(out)


@dataclass(frozen=True, slots=True)
class StorageClass:
    name: str
    provisioner: str
    binding_mode: str | None  # volumeBindingMode; the API server defaults it to Immediate
    allowed_topologies: tuple[TopologyTerm, ...]
    is_default: bool  # the (beta) is-default-class annotation is "true"
    creation_time: str = ""
    raw: Mapping[str, Any] = field(default_factory=lambda: _EMPTY, repr=False, compare=False)

    @property
    def wait_for_first_consumer(self) -> bool:
        return self.binding_mode == WAIT_FOR_FIRST_CONSUMER

    @classmethod
    def parse(cls, d: Any, path: str = "") -> StorageClass:
        m = as_map(d, path)
        _, name, md = _meta(m, path, namespaced=False)
        ann = str_map(md.get("annotations"), join_path(path, "metadata.annotations"))
        mode = m.get("volumeBindingMode")
        return cls(
            name=name,
            provisioner=as_str(m.get("provisioner"), join_path(path, "provisioner")),
            binding_mode=None if mode is None else as_str(mode, join_path(path, "volumeBindingMode")),
            allowed_topologies=parse_topology_terms(m.get("allowedTopologies"), join_path(path, "allowedTopologies")),
            is_default=ann.get(IS_DEFAULT_CLASS_ANNOTATION) == "true"
            or ann.get(BETA_IS_DEFAULT_CLASS_ANNOTATION) == "true",
            creation_time=str(md.get("creationTimestamp") or ""),
            raw=m,
        )


# -- CSINode, CSIDriver ----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class CSINodeDriver:
    name: str
    node_id: str
    topology_keys: tuple[str, ...]
    count: int | None  # allocatable.count: the driver's attach limit on the node (None: no limit)


@dataclass(frozen=True, slots=True)
class CSINode:
    """The CSI drivers installed on the node of the same name, their limits and topology keys."""

    name: str
    drivers: Mapping[str, CSINodeDriver]
    migrated_plugins: frozenset[str]  # the in-tree plugins migrated to CSI on the node (annotation)

    @classmethod
    def parse(cls, d: Any, path: str = "") -> CSINode:
        m = as_map(d, path)
        _, name, md = _meta(m, path, namespaced=False)
        ann = str_map(md.get("annotations"), join_path(path, "metadata.annotations"))
        dp = join_path(path, "spec.drivers")
        drivers = {}
        for dm, ip in maps(as_map(m.get("spec"), join_path(path, "spec")).get("drivers"), dp):
            alloc = as_map(dm.get("allocatable"), join_path(ip, "allocatable"))
            driver = CSINodeDriver(
                as_str(dm.get("name"), join_path(ip, "name")),
                as_str(dm.get("nodeID"), join_path(ip, "nodeID")),
                tuple(as_str(k, join_path(ip, "topologyKeys")) for k in as_list(dm.get("topologyKeys"), ip)),
                as_int(alloc.get("count"), join_path(ip, "allocatable.count"), None),
            )
            drivers[driver.name] = driver
        migrated = ann.get(MIGRATED_PLUGINS_ANNOTATION, "")
        return cls(name, _frozen(drivers), frozenset(migrated.split(",")) if migrated else frozenset())


@dataclass(frozen=True, slots=True)
class CSIDriver:
    name: str
    attach_required: bool  # the API server defaults it to true
    storage_capacity: bool  # the driver publishes CSIStorageCapacity objects (default false)

    @classmethod
    def parse(cls, d: Any, path: str = "") -> CSIDriver:
        m = as_map(d, path)
        _, name, _ = _meta(m, path, namespaced=False)
        spec, sp = child(m, path, "spec")
        return cls(
            name,
            as_bool(spec.get("attachRequired"), join_path(sp, "attachRequired"), True),
            as_bool(spec.get("storageCapacity"), join_path(sp, "storageCapacity"), False),
        )


@dataclass(frozen=True, slots=True)
class CSIStorageCapacity:
    namespace: str
    name: str
    storage_class: str
    node_topology: LabelSelector | None  # None: no node has access
    capacity: Fraction | None
    maximum_volume_size: Fraction | None

    @property
    def volume_limit(self) -> Fraction | None:
        """volumeLimit: maximumVolumeSize when set (more precise), else capacity."""
        return self.maximum_volume_size if self.maximum_volume_size is not None else self.capacity

    @classmethod
    def parse(cls, d: Any, path: str = "") -> CSIStorageCapacity:
        m = as_map(d, path)
        namespace, name, _ = _meta(m, path, namespaced=True)
        return cls(
            namespace,
            name,
            as_str(m.get("storageClassName"), join_path(path, "storageClassName")),
            LabelSelector.parse(m.get("nodeTopology"), join_path(path, "nodeTopology")),
            _storage(m.get("capacity"), join_path(path, "capacity")),
            _storage(m.get("maximumVolumeSize"), join_path(path, "maximumVolumeSize")),
        )


@dataclass(frozen=True, slots=True)
class VolumeAttachment:
    """A volume attached (or being attached) to a node by the attach/detach controller."""

    name: str
    attacher: str
    node_name: str
    pv_name: str | None  # spec.source.persistentVolumeName
    inline_csi: tuple[str, str] | None  # (driver, volumeHandle) of spec.source.inlineVolumeSpec.csi

    @classmethod
    def parse(cls, d: Any, path: str = "") -> VolumeAttachment:
        m = as_map(d, path)
        _, name, _ = _meta(m, path, namespaced=False)
        spec, sp = child(m, path, "spec")
        src = as_map(spec.get("source"), join_path(sp, "source"))
        pv = src.get("persistentVolumeName")
        inline = None
        ip = join_path(sp, "source.inlineVolumeSpec")
        csi = as_map(as_map(src.get("inlineVolumeSpec"), ip).get("csi"), join_path(ip, "csi"))
        if csi:
            inline = (as_str(csi.get("driver"), join_path(ip, "csi.driver")), as_str(csi.get("volumeHandle"), ip))
        return cls(
            name,
            as_str(spec.get("attacher"), join_path(sp, "attacher")),
            as_str(spec.get("nodeName"), join_path(sp, "nodeName")),
            None if pv is None else as_str(pv, join_path(sp, "source.persistentVolumeName")),
            inline,
        )


#: kind -> parser of the storage kinds a cluster dump may hold.
STORAGE_KINDS: dict[str, Any] = {
    "PersistentVolume": PersistentVolume.parse,
    "PersistentVolumeClaim": PersistentVolumeClaim.parse,
    "StorageClass": StorageClass.parse,
    "CSINode": CSINode.parse,
    "CSIDriver": CSIDriver.parse,
    "CSIStorageCapacity": CSIStorageCapacity.parse,
    "VolumeAttachment": VolumeAttachment.parse,
}

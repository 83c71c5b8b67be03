"""The API server's validation of the storage objects and of pods' ``spec.volumes``, for the
fields the volume plugins read, with its messages.

Ported from kube-apiserver v1.36 (``pkg/apis/core/validation``: ValidateVolumes,
ValidatePersistentVolume, ValidatePersistentVolumeClaim; ``pkg/apis/storage/validation``:
StorageClass, CSINode, CSIDriver, CSIStorageCapacity, VolumeAttachment). Each function takes a
wire dict that passed the strict schema check and raises the first problem as an
``InputError`` anchored at the field, as ``kubesched.api.validation`` does; fields the API
server defaults (a StorageClass's volumeBindingMode, a CSIDriver's attachRequired) are not
required here, since the API server fills them before it validates.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from kubesched.api.field_validation import (
    Report,
    annotations,
    check_name,
    dns_subdomain,
    duplicate,
    forbidden,
    invalid,
    label_selector,
    labels,
    node_selector_term,
    not_supported,
    qualified_name,
    raise_first,
    required,
)
from kubesched.api.names import is_dns1123_label, is_dns1123_subdomain
from kubesched.api.quantity import parse_quantity
from kubesched.api.storage import (
    ACCESS_MODES,
    BINDING_MODES,
    EPHEMERAL,
    POD_VOLUME_SOURCES,
    PV_SOURCES,
    PVC,
    READ_WRITE_ONCE_POD,
    STORAGE,
    VOLUME_MODES,
)
from kubesched.errors import InputError, join_path

MORE_THAN_ONE = "may not specify more than 1 volume type"
RECLAIM_POLICIES = ("Delete", "Recycle", "Retain")
CLASS_RECLAIM_POLICIES = ("Delete", "Retain")
CSI_NODE_ID_MAX_LENGTH = 192


def _one_source(m: Mapping[str, Any], sources: tuple[str, ...], path: str) -> str:
    """The one volume source set in ``m`` (a pod's volume, a PV's spec); none or two is refused."""
    present = [s for s in sources if m.get(s) is not None]
    if len(present) > 1:
        raise forbidden(join_path(path, present[1]), MORE_THAN_ONE)
    if not present:
        raise required(path, "must specify a volume type")
    return present[0]


def _meta(m: Mapping[str, Any], path: str, *, namespaced: bool) -> Mapping[str, Any]:
    """ValidateObjectMeta for names that must be DNS subdomains (the storage kinds' names)."""
    mp = join_path(path, "metadata")
    md = m.get("metadata") or {}
    name = md.get("name") or ""
    if not name:
        raise required(join_path(mp, "name"), "name or generateName is required")
    dns_subdomain(name, join_path(mp, "name"))
    if not namespaced and md.get("namespace"):
        raise forbidden(join_path(mp, "namespace"), "not allowed on this type")
    labels(md.get("labels"), join_path(mp, "labels"))
    annotations(md.get("annotations"), join_path(mp, "annotations"))
    return md


def _positive_storage(raw: Any, path: str) -> None:
    """ValidatePositiveQuantityValue."""
    if parse_quantity(raw, path) <= 0:
        raise invalid(path, str(raw), "must be greater than zero")


def _access_modes(modes: list | None, path: str, *, required_detail: str) -> None:
    modes = modes or []
    if not modes:
        raise required(path, required_detail)
    rwop = other = False
    for mode in modes:
        if mode not in ACCESS_MODES:
            raise not_supported(path, mode, ACCESS_MODES)
        if mode == READ_WRITE_ONCE_POD:
            rwop = True
        else:
            other = True
    if rwop and other:
        raise forbidden(path, "may not use ReadWriteOncePod with other access modes")


def _class_name(value: str | None, path: str) -> None:
    if value:
        dns_subdomain(value, path)


def _volume_mode(value: str | None, path: str) -> None:
    if value is not None and value not in VOLUME_MODES:
        raise not_supported(path, value, VOLUME_MODES)


# -- pods' spec.volumes ----------------------------------------------------------------------

#: Required fields of the in-tree and CSI sources the volume plugins read (validate<Kind>VolumeSource).
_REQUIRED_SOURCE_FIELDS: dict[str, tuple[str, ...]] = {
    "gcePersistentDisk": ("pdName",),
    "awsElasticBlockStore": ("volumeID",),
    "rbd": ("monitors", "image"),
    "iscsi": ("targetPortal", "iqn"),
    "cinder": ("volumeID",),
    "azureDisk": ("diskName", "diskURI"),
    "portworxVolume": ("volumeID",),
    "vsphereVolume": ("volumePath",),
    "csi": ("driver",),
}
#: Where upstream's validation reports a source's fields (it names GCE PD's "persistentDisk").
_SOURCE_PATH = {"gcePersistentDisk": "persistentDisk"}


def _source_fields(source: str, fields: Mapping[str, Any], path: str) -> None:
    sp = join_path(path, _SOURCE_PATH.get(source, source))
    for name in _REQUIRED_SOURCE_FIELDS.get(source, ()):
        if not fields.get(name):
            raise required(join_path(sp, name))
    if source == "csi":
        _csi_driver_name(fields["driver"], join_path(sp, "driver"))
    if source == "iscsi":
        iqn = fields["iqn"]
        if not iqn.startswith(("iqn", "eui", "naa")):
            raise invalid(join_path(sp, "iqn"), iqn, "must be valid format starting with iqn, eui, or naa")


def pod_volumes(m: Mapping[str, Any], path: str) -> None:
    """ValidateVolumes: names (DNS labels, unique), exactly one source each, and the fields
    of the sources the volume plugins read."""
    spec = m.get("spec") or {}
    volumes = spec.get("volumes") or []
    if not volumes:
        return
    pod_name = (m.get("metadata") or {}).get("name") or ""
    vp = join_path(join_path(path, "spec"), "volumes")
    created = {f"{pod_name}-{(v or {}).get('name') or ''}" for v in volumes if (v or {}).get(EPHEMERAL) is not None}
    seen: set[str] = set()
    for i, vol in enumerate(volumes):
        ip = join_path(vp, i)
        vol = vol or {}
        name = vol.get("name") or ""
        source = _one_source(vol, POD_VOLUME_SOURCES, ip)
        fields = vol[source]
        _source_fields(source, fields, ip)
        if source == PVC and not fields.get("claimName"):
            raise required(join_path(ip, "persistentVolumeClaim.claimName"))
        if source == EPHEMERAL:
            _ephemeral(fields, join_path(ip, EPHEMERAL))
            if pod_name and name:
                problems = is_dns1123_subdomain(f"{pod_name}-{name}")
                if problems:
                    raise invalid(join_path(ip, "name"), name, f'PVC name "{pod_name}-{name}": {problems[0]}')
        if not name:
            raise required(join_path(ip, "name"))
        check_name(name, join_path(ip, "name"), is_dns1123_label)
        if name in seen:
            raise duplicate(join_path(ip, "name"), name)
        seen.add(name)
        if source == PVC and fields["claimName"] in created:
            raise invalid(
                join_path(ip, "persistentVolumeClaim.claimName"),
                fields["claimName"],
                "must not reference a PVC that gets created for an ephemeral volume",
            )


def _ephemeral(fields: Mapping[str, Any], path: str) -> None:
    """validateEphemeralVolumeSource: the claim template is required and validated as a claim."""
    template = fields.get("volumeClaimTemplate")
    tp = join_path(path, "volumeClaimTemplate")
    if template is None:
        raise required(tp)
    md = template.get("metadata") or {}
    labels(md.get("labels"), join_path(tp, "metadata.labels"))
    annotations(md.get("annotations"), join_path(tp, "metadata.annotations"))
    claim_spec(template.get("spec") or {}, join_path(tp, "spec"))


# -- PersistentVolumeClaim -------------------------------------------------------------------


def claim_spec(spec: Mapping[str, Any], sp: str) -> None:
    """ValidatePersistentVolumeClaimSpec."""
    _access_modes(spec.get("accessModes"), join_path(sp, "accessModes"), required_detail="at least 1 access mode is required")
    label_selector(spec.get("selector"), join_path(sp, "selector"))
    requests = (spec.get("resources") or {}).get("requests") or {}
    rp = f"{join_path(sp, 'resources')}[{STORAGE}]"
    if requests.get(STORAGE) is None:
        raise required(rp)
    try:
        _positive_storage(requests[STORAGE], rp)
    except InputError as e:
        raise InputError(e.reason, path=rp) from None
    _class_name(spec.get("storageClassName"), join_path(sp, "storageClassName"))
    _volume_mode(spec.get("volumeMode"), join_path(sp, "volumeMode"))
    _class_name(spec.get("volumeAttributesClassName"), join_path(sp, "volumeAttributesClassName"))


def persistent_volume_claim(m: Mapping[str, Any], path: str) -> None:
    """ValidatePersistentVolumeClaim."""
    _meta(m, path, namespaced=True)
    claim_spec(m.get("spec") or {}, join_path(path, "spec"))


# -- PersistentVolume ------------------------------------------------------------------------


def persistent_volume(m: Mapping[str, Any], path: str) -> None:
    """ValidatePersistentVolume (not an inline volume spec)."""
    _meta(m, path, namespaced=False)
    sp = join_path(path, "spec")
    spec = m.get("spec") or {}
    _access_modes(spec.get("accessModes"), join_path(sp, "accessModes"), required_detail="")
    cp = join_path(sp, "capacity")
    capacity = spec.get("capacity") or {}
    if not capacity:
        raise required(cp)
    if STORAGE not in capacity or len(capacity) > 1:
        raise InputError(f'Unsupported value: {_go_map(capacity)}: supported values: "{STORAGE}"', path=cp)
    _positive_storage(capacity[STORAGE], f"{cp}[{STORAGE}]")
    policy = spec.get("persistentVolumeReclaimPolicy")
    if policy and policy not in RECLAIM_POLICIES:
        raise not_supported(join_path(sp, "persistentVolumeReclaimPolicy"), policy, RECLAIM_POLICIES)
    affinity = spec.get("nodeAffinity")
    if affinity is not None:
        _volume_node_affinity(affinity, join_path(sp, "nodeAffinity"))
    source = _one_source(spec, PV_SOURCES, sp)
    if source == "local" and affinity is None:
        raise required(join_path(sp, "nodeAffinity"), "Local volume requires node affinity")
    fields = spec[source]
    if source == "csi":
        _source_fields(source, fields, sp)
        if not fields.get("volumeHandle"):
            raise required(join_path(sp, "csi.volumeHandle"))
    elif source in _REQUIRED_SOURCE_FIELDS:
        _source_fields(source, fields, sp)
    _class_name(spec.get("storageClassName"), join_path(sp, "storageClassName"))
    _volume_mode(spec.get("volumeMode"), join_path(sp, "volumeMode"))
    vac = spec.get("volumeAttributesClassName")
    if vac is not None:
        if not vac:
            raise required(join_path(sp, "volumeAttributesClassName"), "an empty string is disallowed")
        dns_subdomain(vac, join_path(sp, "volumeAttributesClassName"))
        if source != "csi":
            raise required(join_path(sp, "csi"), "has to be specified when using volumeAttributesClassName")
    ref = spec.get("claimRef")
    if ref is not None and not ref.get("name"):
        # the PV controller can do nothing with a reference to no claim (kubesched cannot bind it)
        raise required(join_path(sp, "claimRef.name"))


def _go_map(m: Mapping[str, Any]) -> str:
    """A ResourceList as Go's %v prints it in NotSupported: map[name:quantity ...]."""
    return "map[" + " ".join(f"{k}:{v}" for k, v in sorted(m.items())) + "]"


def _volume_node_affinity(affinity: Mapping[str, Any], path: str) -> None:
    """validateVolumeNodeAffinity: ``required`` with at least one valid term."""
    req = affinity.get("required")
    rp = join_path(path, "required")
    if req is None:
        raise required(rp, "must specify required node constraints")
    terms = req.get("nodeSelectorTerms") or []
    tp = join_path(rp, "nodeSelectorTerms")
    if not terms:
        raise required(tp, "must have at least one node selector term")
    for i, t in enumerate(terms):
        node_selector_term(t, join_path(tp, i), check_values=True)


# -- storage.k8s.io/v1 -----------------------------------------------------------------------


def storage_class(m: Mapping[str, Any], path: str) -> None:
    """ValidateStorageClass."""
    _meta(m, path, namespaced=False)
    provisioner = m.get("provisioner") or ""
    pp = join_path(path, "provisioner")
    if not provisioner:
        raise required(pp)
    qualified_name(provisioner.lower(), pp)
    policy = m.get("reclaimPolicy")
    if policy and policy not in CLASS_RECLAIM_POLICIES:
        raise not_supported(join_path(path, "reclaimPolicy"), policy, CLASS_RECLAIM_POLICIES)
    mode = m.get("volumeBindingMode")
    if mode is not None and mode not in BINDING_MODES:
        raise not_supported(join_path(path, "volumeBindingMode"), mode, BINDING_MODES)
    ap = join_path(path, "allowedTopologies")
    seen: list[dict[str, frozenset[str]]] = []
    for i, term in enumerate(m.get("allowedTopologies") or ()):
        tp = join_path(ap, i)
        exprs = (term or {}).get("matchLabelExpressions") or []
        ep = join_path(tp, "matchLabelExpressions")
        keys: dict[str, frozenset[str]] = {}
        for j, expr in enumerate(exprs):  # ValidateTopologySelectorTerm
            rp = join_path(ep, j)
            values = (expr or {}).get("values") or []
            if not values:
                raise required(join_path(rp, "values"))
            for k, v in enumerate(values):
                if v in values[:k]:
                    raise duplicate(join_path(join_path(rp, "values"), k), v)
            key = (expr or {}).get("key") or ""
            qualified_name(key, join_path(rp, "key"))
            if key in keys:
                raise duplicate(join_path(rp, "key"), key)
            keys[key] = frozenset(values)
        if keys in seen:
            raise duplicate(ep, "")
        seen.append(keys)


def csi_node(m: Mapping[str, Any], path: str) -> None:
    """ValidateCSINode: driver names, node ids, limits, topology keys."""
    _meta(m, path, namespaced=False)
    dp = join_path(path, "spec.drivers")
    names: set[str] = set()
    for i, d in enumerate(((m.get("spec") or {}).get("drivers")) or ()):
        ip = join_path(dp, i)
        d = d or {}
        name = d.get("name") or ""
        np_ = join_path(ip, "name")
        if not name:
            raise required(np_)
        _csi_driver_name(name, np_)
        node_id = d.get("nodeID") or ""
        if not node_id:
            raise required(join_path(ip, "nodeID"))
        if len(node_id) > CSI_NODE_ID_MAX_LENGTH:
            raise invalid(join_path(ip, "nodeID"), node_id, f"must be {CSI_NODE_ID_MAX_LENGTH} characters or less")
        count = (d.get("allocatable") or {}).get("count")
        if count is not None and count < 0:
            raise invalid(join_path(ip, "allocatable.count"), count, "must be greater than or equal to 0")
        if name in names:
            raise duplicate(np_, name)
        names.add(name)
        keys: set[str] = set()
        for key in d.get("topologyKeys") or ():
            if not key:
                raise required(ip)
            if key in keys:
                raise duplicate(ip, key)
            keys.add(key)
            qualified_name(key, ip)


def _csi_driver_name(name: str, path: str) -> None:
    """ValidateCSIDriverName (core): at most 63 characters, a DNS subdomain-like name."""
    if len(name) > 63:
        raise InputError("Too long: may not be more than 63 bytes", path=path)
    problems = is_dns1123_subdomain(name.lower())
    if problems:
        raise invalid(path, name, problems[0])


def csi_driver(m: Mapping[str, Any], path: str) -> None:
    """ValidateCSIDriver: the name, and the lifecycle modes and policies the API server checks."""
    _meta(m, path, namespaced=False)
    sp = join_path(path, "spec")
    spec = m.get("spec") or {}
    policy = spec.get("fsGroupPolicy")
    policies = ("File", "None", "ReadWriteOnceWithFSType")
    if policy is not None and policy not in policies:
        raise not_supported(join_path(sp, "fsGroupPolicy"), policy, policies)
    modes = ("Ephemeral", "Persistent")
    for mode in spec.get("volumeLifecycleModes") or ():
        if mode not in modes:
            raise not_supported(join_path(sp, "volumeLifecycleModes"), mode, ("Persistent", "Ephemeral"))


def csi_storage_capacity(m: Mapping[str, Any], path: str) -> None:
    """ValidateCSIStorageCapacity."""
    _meta(m, path, namespaced=True)
    label_selector(m.get("nodeTopology"), join_path(path, "nodeTopology"))
    name = m.get("storageClassName") or ""
    dns_subdomain(name, join_path(path, "storageClassName"))
    cap = m.get("capacity")
    if cap is not None and parse_quantity(cap, join_path(path, "capacity")) < 0:
        raise invalid(join_path(path, "capacity"), str(cap), "must be greater than or equal to 0")


def volume_attachment(m: Mapping[str, Any], path: str) -> None:
    """ValidateVolumeAttachment (and its v1 checks)."""
    _meta(m, path, namespaced=False)
    sp = join_path(path, "spec")
    spec = m.get("spec") or {}
    attacher = spec.get("attacher") or ""
    if not attacher:
        raise required(join_path(sp, "attacher"))
    _csi_driver_name(attacher, join_path(sp, "attacher"))
    src = spec.get("source") or {}
    srcp = join_path(sp, "source")
    pv, inline = src.get("persistentVolumeName"), src.get("inlineVolumeSpec")
    if pv is None and inline is None:
        raise required(srcp, "must specify exactly one of inlineVolumeSpec and persistentVolumeName")
    if pv is not None and inline is not None:
        raise forbidden(srcp, "must specify exactly one of inlineVolumeSpec and persistentVolumeName")
    if pv is not None:
        if not pv:
            raise required(join_path(srcp, "persistentVolumeName"), "must specify non empty persistentVolumeName")
        dns_subdomain(pv, join_path(sp, "source.persistentVolumeName"))
    elif not (inline or {}).get("csi"):
        raise required(join_path(srcp, "inlineVolumeSpec.csi"), "has to be specified in the context of inline volumes")
    node = spec.get("nodeName") or ""
    dns_subdomain(node, join_path(sp, "nodeName"))


#: kind -> API-server validation of the storage kinds (after the schema check).
def checked(fn: Callable[[Mapping[str, Any], str], None]) -> Callable[..., None]:
    """``fn`` as ``kubesched.load.VALIDATE`` calls a kind's validation: its first problem
    goes to ``report`` (raised by default, a warning under ``--validate=warn``)."""

    def check(m: Mapping[str, Any], path: str, report: Report = raise_first) -> None:
        try:
            fn(m, path)
        except InputError as e:
            report(e)

    return check


pod_volumes_checked = checked(pod_volumes)
VALIDATE_STORAGE = {
    "PersistentVolume": checked(persistent_volume),
    "PersistentVolumeClaim": checked(persistent_volume_claim),
    "StorageClass": checked(storage_class),
    "CSINode": checked(csi_node),
    "CSIDriver": checked(csi_driver),
    "CSIStorageCapacity": checked(csi_storage_capacity),
    "VolumeAttachment": checked(volume_attachment),
}

"""In-tree volume plugins migrated to CSI drivers, as k8s.io/csi-translation-lib translates them
for the scheduler: which volumes are migratable, the CSI driver and volume handle of an in-tree
volume (NodeVolumeLimits counts them against the driver's limit), and a PV's zone topology
rewritten to the driver's topology key (VolumeBinding checks the translated node affinity).

Translated here: AWS EBS, GCE PD, Azure Disk, OpenStack Cinder and Portworx, the plugins
kube-scheduler v1.36 translates (``isCSIMigrationOn`` / ``isCSIMigrationOnForPlugin``). Azure
File, vSphere and RBD volumes are migratable (so NodeVolumeLimits' PreFilter does not skip a pod
using them inline) but the scheduler never counts or translates them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from types import MappingProxyType
from typing import Any

from kubesched.api.selectors import NodeSelector, NodeSelectorRequirement, NodeSelectorTerm
from kubesched.api.storage import PersistentVolume, PodVolume

ZONE_GA, REGION_GA = "topology.kubernetes.io/zone", "topology.kubernetes.io/region"
ZONE_BETA, REGION_BETA = "failure-domain.beta.kubernetes.io/zone", "failure-domain.beta.kubernetes.io/region"
MULTI_ZONE_DELIMITER = "__"
UNSPECIFIED = "UNSPECIFIED"
_AWS_VOLUME = re.compile(r"^vol-[^/]*$")


@dataclass(frozen=True, slots=True)
class Migration:
    """One in-tree plugin and the CSI driver that replaces it."""

    source: str  # the volume source member (awsElasticBlockStore, ...)
    plugin: str  # the in-tree plugin name (kubernetes.io/aws-ebs, ...)
    driver: str  # the CSI driver name
    topology_key: str = ""  # the driver's zone topology key ("" when it has none)
    translated: bool = True  # whether kube-scheduler counts and translates its volumes

    def volume_handle(self, fields: Any, pv: PersistentVolume | None = None) -> str | None:
        """The CSI volume handle of an in-tree source (None when it cannot be translated)."""
        if self.source == "awsElasticBlockStore":
            return _ebs_volume_id(str(fields.get("volumeID") or ""))
        if self.source == "gcePersistentDisk":
            zone = UNSPECIFIED
            if pv is not None:
                zones = pv_zones(pv)
                if len(zones) == 1:
                    zone = zones[0]
            return f"projects/{UNSPECIFIED}/zones/{zone}/disks/{fields.get('pdName') or ''}"
        if self.source == "azureDisk":
            return str(fields.get("diskURI") or "")
        if self.source in ("cinder", "portworxVolume"):
            return str(fields.get("volumeID") or "")
        return None


MIGRATIONS: tuple[Migration, ...] = (
    Migration("awsElasticBlockStore", "kubernetes.io/aws-ebs", "ebs.csi.aws.com", "topology.ebs.csi.aws.com/zone"),
    Migration("gcePersistentDisk", "kubernetes.io/gce-pd", "pd.csi.storage.gke.io", "topology.gke.io/zone"),
    Migration("azureDisk", "kubernetes.io/azure-disk", "disk.csi.azure.com", "topology.disk.csi.azure.com/zone"),
    Migration("cinder", "kubernetes.io/cinder", "cinder.csi.openstack.org", "topology.cinder.csi.openstack.org/zone"),
    Migration("portworxVolume", "kubernetes.io/portworx-volume", "pxd.portworx.com"),
    Migration("azureFile", "kubernetes.io/azure-file", "file.csi.azure.com", translated=False),
    Migration("vsphereVolume", "kubernetes.io/vsphere-volume", "csi.vsphere.vmware.com", translated=False),
    Migration("rbd", "kubernetes.io/rbd", "rbd.csi.ceph.com", translated=False),
)
BY_SOURCE = {m.source: m for m in MIGRATIONS}
BY_PLUGIN = {m.plugin: m for m in MIGRATIONS}


def _ebs_volume_id(kubernetes_id: str) -> str | None:
    """KubernetesVolumeIDToEBSVolumeID: ``aws://<zone>/<vol-id>`` -> ``<vol-id>``."""
    if not kubernetes_id.startswith("aws://"):
        return kubernetes_id
    vol = kubernetes_id[len("aws://") :].split("/", 1)[-1].strip("/")
    return vol if _AWS_VOLUME.match(vol) else None


def inline_migration(volume: PodVolume) -> Migration | None:
    """IsInlineMigratable: the migration of an inline in-tree volume."""
    return BY_SOURCE.get(volume.source)


def pv_migration(pv: PersistentVolume) -> Migration | None:
    """IsPVMigratable: the migration of an in-tree PV."""
    return BY_SOURCE.get(pv.source)


def migrated_on_node(migration: Migration, migrated_plugins: frozenset[str] | None, *, annotation: bool) -> bool:
    """Whether kube-scheduler treats the plugin as migrated on a node whose CSINode lists
    ``migrated_plugins`` (None: the node has no CSINode). NodeVolumeLimits' isCSIMigrationOn
    trusts the migration of AWS EBS, GCE PD, Azure Disk and Cinder without the CSINode
    annotation (``annotation=False``) and reads it for Portworx; VolumeBinding reads it for all."""
    if migrated_plugins is None or not migration.translated:
        return False
    if not annotation and migration.source != "portworxVolume":
        return True
    return migration.plugin in migrated_plugins


def pv_zones(pv: PersistentVolume) -> list[str]:
    """The zones a PV's node affinity or zone label names (GA labels first, as getTopologyLabel)."""
    zone_label = _topology_labels(pv)[0]
    zones = _affinity_values(pv, zone_label)
    if zones:
        return zones
    label = pv.labels.get(zone_label)
    return sorted({z.strip() for z in label.split(MULTI_ZONE_DELIMITER) if z.strip()}) if label else []


def _topology_labels(pv: PersistentVolume) -> tuple[str, str]:
    """getTopologyLabel: the GA zone/region labels unless the PV uses the beta ones."""
    for key in (ZONE_GA, ZONE_BETA):
        if any(r.key == key for t in _terms(pv) for r in t.match_expressions):
            return (ZONE_GA, REGION_GA) if key == ZONE_GA else (ZONE_BETA, REGION_BETA)
    if ZONE_GA in pv.labels or ZONE_BETA not in pv.labels:
        return ZONE_GA, REGION_GA
    return ZONE_BETA, REGION_BETA


def _terms(pv: PersistentVolume) -> tuple[NodeSelectorTerm, ...]:
    return pv.node_affinity.terms if pv.node_affinity is not None else ()


def _affinity_values(pv: PersistentVolume, key: str) -> list[str]:
    return sorted({v for t in _terms(pv) for r in t.match_expressions if r.key == key for v in r.values})


def _rekey(pv: PersistentVolume, old: str, new: str) -> tuple[NodeSelectorTerm, ...]:
    """replaceTopology: requirements on ``old`` now read ``new``."""
    return tuple(
        replace(
            t,
            match_expressions=tuple(NodeSelectorRequirement(new, r.operator, r.values) if r.key == old else r for r in t.match_expressions),
        )
        for t in _terms(pv)
    )


def translate_pv(pv: PersistentVolume, migration: Migration) -> PersistentVolume | None:
    """TranslateInTreePVToCSI for the fields the scheduler reads: a CSI source (driver and
    handle) and the zone topology on the driver's key (translateTopologyFromInTreeToCSI). None
    when the volume cannot be translated (an EBS volume id that is no volume id)."""
    handle = migration.volume_handle(pv.source_fields, pv)
    if handle is None:
        return None
    terms = _terms(pv)
    if migration.topology_key:
        zone_label, region_label = _topology_labels(pv)
        if _affinity_values(pv, zone_label):
            terms = _rekey(pv, zone_label, migration.topology_key)
        elif pv.labels.get(zone_label):
            zones = sorted({z.strip() for z in pv.labels[zone_label].split(MULTI_ZONE_DELIMITER) if z.strip()})
            if zones:
                req = NodeSelectorRequirement(migration.topology_key, "In", frozenset(zones))
                terms = tuple(replace(t, match_expressions=(*t.match_expressions, req)) for t in terms) or (
                    NodeSelectorTerm((req,)),
                )
        if region_label == REGION_BETA and _affinity_values(pv, region_label):
            pv = replace(pv, node_affinity=NodeSelector(terms))
            terms = _rekey(pv, REGION_BETA, REGION_GA)
    return replace(
        pv,
        source="csi",
        source_fields=MappingProxyType({"driver": migration.driver, "volumeHandle": handle}),
        node_affinity=NodeSelector(terms) if terms else None,
    )

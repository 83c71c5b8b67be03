"""util.ClusterMatches: does a cluster match a ClusterAffinity (names, exclusions, labels, fields)."""

from __future__ import annotations

from kubesched.api.selectors import NodeSelectorRequirement
from kubesched.multicluster.api import Cluster, ClusterAffinity


def _match_zones(req: NodeSelectorRequirement, zones: tuple[str, ...]) -> bool:
    """matchZones: a cluster's zones against one ``zone`` requirement."""
    if req.operator == "In":
        return any(z in req.values for z in zones)
    if req.operator == "NotIn":
        return not any(z in req.values for z in zones)
    if req.operator == "Exists":
        return bool(zones)
    if req.operator == "DoesNotExist":
        return not zones
    return False


def cluster_fields(cluster: Cluster) -> dict[str, str]:
    """extractClusterFields: provider and region, as labels for the field selector."""
    out = {}
    if cluster.provider:
        out["provider"] = cluster.provider
    if cluster.region:
        out["region"] = cluster.region
    return out


def cluster_matches(cluster: Cluster, affinity: ClusterAffinity) -> bool:
    if cluster.name in affinity.exclude:
        return False
    if affinity.label_selector is not None and not affinity.label_selector.matches(cluster.labels):
        return False
    if affinity.field_selector is not None:
        fields = None
        for req in affinity.field_selector:
            if req.key == "zone":
                if not _match_zones(req, cluster.zones):
                    return False
                continue
            fields = cluster_fields(cluster) if fields is None else fields
            if not req.matches(fields):
                return False
    return not affinity.cluster_names or cluster.name in affinity.cluster_names

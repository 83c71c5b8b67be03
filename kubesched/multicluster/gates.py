"""Karmada's feature gates that change what kubesched's multicluster layer does, with Karmada
v1.18's defaults (pkg/features/features.go). The multicluster commands' ``--feature-gates`` takes
them in Karmada's syntax (``CustomizedClusterResourceModeling=false``) beside the members'
kube-scheduler gates (``kubesched.features``): each component reads its own names."""

from __future__ import annotations

from kubesched.errors import InputError
from kubesched.features import FeatureGates, parse_flag

CUSTOMIZED_CLUSTER_RESOURCE_MODELING = "CustomizedClusterResourceModeling"

#: name -> (v1.18 default, locked): Beta, on by default since v1.4
KARMADA_GATES: dict[str, tuple[bool, bool]] = {
    CUSTOMIZED_CLUSTER_RESOURCE_MODELING: (True, False),
}

KARMADA_DEFAULT = FeatureGates(known=KARMADA_GATES)
#: the names of ``--feature-gates`` the multicluster layer reads (Failover: to say where it is set)
KARMADA_FLAG_GATES = frozenset({*KARMADA_GATES, "Failover"})


def parse_karmada_gates(text: str | None) -> FeatureGates:
    """The Karmada gates of a multicluster command's ``--feature-gates`` (the kube-scheduler's
    names are read by ``kubesched.features``, which refuses any other; Failover is set in the
    --events file)."""
    values = {k: v for k, v in parse_flag(text or "").items() if k in KARMADA_FLAG_GATES}
    if "Failover" in values:
        raise InputError("the Failover gate is the --events file's failover field (FailoverTimeline)", path="--feature-gates")
    return KARMADA_DEFAULT.with_values(values)

"""Coscheduling: gang scheduling with scheduler-plugins' PodGroup (scheduling.x-k8s.io/v1alpha1)."""

from kubesched.plugins.coscheduling.args import NAME, CoschedulingArgs, parse_args
from kubesched.plugins.coscheduling.groups import (
    LEGACY_POD_GROUP_LABEL,
    POD_GROUP_LABEL,
    PodGroupManager,
    check_cluster_resource,
    pod_group_full_name,
    pod_group_label,
)
from kubesched.plugins.coscheduling.plugin import Coscheduling

__all__ = [
    "LEGACY_POD_GROUP_LABEL",
    "NAME",
    "POD_GROUP_LABEL",
    "Coscheduling",
    "CoschedulingArgs",
    "PodGroupManager",
    "check_cluster_resource",
    "parse_args",
    "pod_group_full_name",
    "pod_group_label",
]

"""Which nodes scale-down may consider (Cluster Autoscaler's ``core/scaledown/eligibility``):
not a node being deleted (CA's ``ToBeDeletedByClusterAutoscaler`` taint, set less than 5 minutes
ago) and not one an operator protected with the ``scale-down-disabled`` annotation; and the
reasons a node is not removed, named as CA's ``simulator.UnremovableReason`` values (the status
ConfigMap and ``cluster_autoscaler_unremovable_nodes_count{reason}`` show them)."""

from __future__ import annotations

from kubesched.api.objects import Node

TO_BE_DELETED_TAINT = "ToBeDeletedByClusterAutoscaler"  # value: when, in Unix seconds
SCALE_DOWN_DISABLED = "cluster-autoscaler.kubernetes.io/scale-down-disabled"
# IsNodeBeingDeleted: a deletion is under way this long after the taint (the longer of CA's
# MaxCloudProviderNodeDeletionTime, 5 min, and MaxKubernetesEmptyNodeDeletionTime, 3 min)
MAX_NODE_DELETION_TIME = 300.0

# CA's UnremovableReason values that the loop can give
BEING_DELETED = "CurrentlyBeingDeleted"
ANNOTATED = "ScaleDownDisabledAnnotation"
NOT_AUTOSCALED = "NotAutoscaled"  # of no node group
NOT_UNDERUTILIZED = "NotUnderutilized"  # utilisation at or above the threshold
UNEXPECTED_ERROR = "UnexpectedError"  # utilisation cannot be computed (CPU or memory allocatable missing)
NOT_UNNEEDED_LONG_ENOUGH = "NotUnneededLongEnough"  # unneeded for less than unneededTime
MIN_SIZE_REACHED = "NodeGroupMinSizeReached"
BLOCKED_BY_POD = "BlockedByPod"  # a pod may not move (PodDisruptionBudget, safe-to-evict: "false")
NO_PLACE_TO_MOVE_PODS = "NoPlaceToMovePods"  # no other node takes all its pods
SCALE_DOWN_UNREADY_DISABLED = "ScaleDownUnreadyDisabled"  # unready, and scaleDown.unreadyEnabled is false
NOT_UNREADY_LONG_ENOUGH = "NotUnreadyLongEnough"  # unready and unneeded for less than scaleDown.unreadyTime
MINIMAL_RESOURCE_LIMIT_EXCEEDED = "MinimalResourceLimitExceeded"  # its removal would take the cluster under a min


def to_be_deleted_since(node: Node) -> float | None:
    """GetToBeDeletedTime: the taint's time, None without the taint or with a value that is not
    a whole number of seconds."""
    for t in node.taints:
        if t.key == TO_BE_DELETED_TAINT:
            try:
                return float(int(t.value))
            except ValueError:
                return None
    return None


def being_deleted(node: Node, now: float) -> bool:
    since = to_be_deleted_since(node)
    return since is not None and now - since < MAX_NODE_DELETION_TIME


def scale_down_disabled(node: Node) -> bool:
    annotations = (node.raw.get("metadata") or {}).get("annotations") or {}
    return annotations.get(SCALE_DOWN_DISABLED) == "true"


def unremovable_reason(node: Node, now: float) -> str | None:
    """Why scale-down may not consider ``node`` (CA's UnremovableReason), None when it may."""
    if being_deleted(node, now):
        return BEING_DELETED
    if scale_down_disabled(node):
        return ANNOTATED
    return None

"""DefaultPreemption (PostFilter), as in pkg/scheduler/framework/plugins/defaultpreemption."""

from kubesched.framework.preemption.candidates import (
    Candidate,
    PodDisruptionBudget,
    more_important_pod,
    pick_one_node_for_preemption,
)
from kubesched.framework.preemption.dry_run import NO_VICTIMS, NOT_HELPFUL
from kubesched.plugins.defaultpreemption.plugin import (
    NAME,
    NOT_ELIGIBLE_NEVER,
    NOT_ELIGIBLE_TERMINATING,
    DefaultPreemption,
)

__all__ = [
    "NAME",
    "NOT_ELIGIBLE_NEVER",
    "NOT_ELIGIBLE_TERMINATING",
    "NOT_HELPFUL",
    "NO_VICTIMS",
    "Candidate",
    "DefaultPreemption",
    "PodDisruptionBudget",
    "more_important_pod",
    "pick_one_node_for_preemption",
]

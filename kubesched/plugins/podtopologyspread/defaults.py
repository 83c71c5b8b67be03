"""PodTopologySpreadArgs: defaulting type, default constraints, and their per-pod selector.

Pods without their own topologySpreadConstraints get the profile's default constraints, with
a selector derived (as upstream helper.DefaultSelector) from the Services that select the pod
and the ReplicationController / ReplicaSet / StatefulSet that controls it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from kubesched.api.affinity import TopologySpreadConstraint
from kubesched.api.selectors import LabelSelector, Requirement
from kubesched.config.args import plugin_args
from kubesched.config.defaults import system_default_constraints
from kubesched.plugins.podtopologyspread.common import NAME

if TYPE_CHECKING:
    from kubesched.api.objects import Pod
    from kubesched.state.snapshot import Snapshot

SYSTEM_DEFAULTING = "System"
LIST_DEFAULTING = "List"
DO_NOT_SCHEDULE = "DoNotSchedule"
SCHEDULE_ANYWAY = "ScheduleAnyway"

LABEL_HOSTNAME = "kubernetes.io/hostname"


# helper.DefaultSelector: kinds whose controller reference contributes its selector.
_SERVICE = "Service"
_CONTROLLER_KINDS = ("ReplicationController", "ReplicaSet", "StatefulSet")


@dataclasses.dataclass(frozen=True, slots=True)
class SpreadArgs:
    """Parsed PodTopologySpreadArgs (defaults applied, validated like New() does)."""

    default_constraints: tuple[TopologySpreadConstraint, ...]
    system_defaulted: bool


def parse_args(args: Mapping[str, Any] | None) -> SpreadArgs:
    """PodTopologySpreadArgs decoded, defaulted (defaultingType System) and validated as a
    configuration's are (``plugin_args``), with the constraints they give pods."""
    a = plugin_args(NAME, args)
    system = a["defaultingType"] == SYSTEM_DEFAULTING
    raw = system_default_constraints() if system else a["defaultConstraints"]
    return SpreadArgs(tuple(TopologySpreadConstraint.parse_default(d, "") for d in raw), system)


def _controller_ref(pod: Pod) -> tuple[str, str] | None:
    """metav1.GetControllerOf: the first owner reference marked controller."""
    for ref in pod.owners:
        if ref.controller:
            return ref.kind, ref.name
    return None


def default_selector(pod: Pod, workloads: Sequence[tuple]) -> LabelSelector:
    """helper.DefaultSelector over the snapshot's (kind, namespace[, name], selector) workloads.

    Services in the pod's namespace whose selector matches the pod contribute their labels;
    the pod's controller (RC, RS or StatefulSet) contributes its selector. Entries without a
    name stand for any controller of that kind in the namespace whose selector matches the pod.
    """
    reqs: set[Requirement] = set()
    owner = _controller_ref(pod)
    for entry in workloads:
        kind, namespace, sel = entry[0], entry[1], entry[-1]
        if namespace != pod.namespace or sel is None:
            continue
        if kind == _SERVICE:
            # GetPodServices: a service selects the pod when its (map) selector matches.
            if sel.matches(pod.labels):
                reqs.update(sel.requirements)
            continue
        if owner is None or kind not in _CONTROLLER_KINDS or kind != owner[0]:
            continue
        if len(entry) >= 4:
            if entry[2] != owner[1]:
                continue
        elif not sel.matches(pod.labels):
            continue
        reqs.update(sel.requirements)
    return LabelSelector(tuple(sorted(reqs, key=lambda r: (r.key, r.op, tuple(sorted(r.values))))))


def constraints_for(
    pod: Pod,
    action: str,
    defaults: tuple[TopologySpreadConstraint, ...],
    snap: Snapshot,
) -> tuple[TopologySpreadConstraint, ...]:
    """The pod's constraints with ``action``; defaults (with a derived selector) when it has none."""
    if pod.spread_constraints:
        return tuple(c for c in pod.spread_constraints if c.when_unsatisfiable == action)
    chosen = [c for c in defaults if c.when_unsatisfiable == action]
    if not chosen:
        return ()
    selector = default_selector(pod, snap.workload_selectors)
    if selector.is_empty:
        return ()
    return tuple(dataclasses.replace(c, selector=selector) for c in chosen)

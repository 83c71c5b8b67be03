"""CapacityScheduling (elastic quota), as scheduler-plugins' pkg/capacityscheduling ships it.

Each namespace may have one ElasticQuota: ``min`` is guaranteed, ``max`` is a ceiling. A
namespace may use more than its min (borrow) only while all quotas together stay within the sum
of their mins. When a namespace wants back what others borrowed, PostFilter preempts: pods of
namespaces above their min (cross-quota), or lower-priority pods of its own namespace when it is
itself above min (within-quota). Preemption reuses DefaultPreemption's machinery (candidates,
PodDisruptionBudgets, picking the node, evicting); only the victims on a node differ.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from kubesched.errors import InputError
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.interfaces import NOT_INVOLVED, PreFilterPlugin, ReservePlugin, Signature, SignPlugin
from kubesched.framework.plugin_args import args_body
from kubesched.framework.preemption.candidates import (
    filter_pods_with_pdb_violation,
    reprieve_in_turn,
    sort_by_importance,
)
from kubesched.framework.status import Code, Status
from kubesched.plugins.capacityscheduling.quota import ElasticQuotaInfos, add, as_resource, pod_request
from kubesched.plugins.capacityscheduling.usage import QuotaTracker
from kubesched.plugins.defaultpreemption import DefaultPreemption
from kubesched.plugins.defaultpreemption.plugin import (
    NOT_ELIGIBLE_NEVER,
    NOT_ELIGIBLE_TERMINATING,
    PREEMPT_NEVER,
)

if TYPE_CHECKING:
    from kubesched.api.objects import Pod, PodDisruptionBudget
    from kubesched.api.resources import Resources
    from kubesched.framework.diagnosis import Diagnosis
    from kubesched.framework.handle import Handle
    from kubesched.state.snapshot import Snapshot

NAME = "CapacityScheduling"
PRE_FILTER_STATE_KEY = "PreFilter" + NAME
GLOBAL_QUOTA_EXCEEDED = "global quota max exceeded"


@dataclass(frozen=True)
class PreFilterState:
    """The pod's request, alone and with the nominated pods that count against the same quotas."""

    pod_req: Resources
    # plus nominated pods of the same namespace at least as important as the pod
    nominated_in_eq_with_pod_req: Resources
    # plus those, and nominated pods of other namespaces that are within their min
    nominated_with_pod_req: Resources

    def clone(self) -> PreFilterState:
        return self


class CapacityScheduling(DefaultPreemption, PreFilterPlugin, ReservePlugin, SignPlugin):
    """PreFilter: quota checks; PostFilter: quota-aware preemption; Reserve/Unreserve: usage."""

    name = NAME
    # upstream: Pod Delete and any ElasticQuota change; quotas are static here, so no event stands for them
    events_to_register: ClassVar[frozenset[str] | None] = frozenset({"AssignedPodDelete"})

    def __init__(self, args: dict[str, Any] | None = None, handle: Handle | None = None) -> None:
        _no_args(args)
        super().__init__(None, handle)
        self._dry_run = False  # inside our own victim search: quotas are checked by hand there
        self._pf_state: PreFilterState | None = None

    def sign_pod(self, pod: Pod, snap: Snapshot) -> Signature | None:
        """Not involved with pods of namespaces without an ElasticQuota; the others read the
        quota use of the whole cluster."""
        return None if pod.namespace in snap.elastic_quotas else NOT_INVOLVED

    def infos(self, snap: Snapshot) -> ElasticQuotaInfos:
        return QuotaTracker.of(snap).infos

    # ---- PreFilter -------------------------------------------------------------------
    def pre_filter_state(self, pod: Pod, snap: Snapshot, infos: ElasticQuotaInfos) -> PreFilterState:
        req = pod_request(pod.requests)
        in_eq, total = as_resource(None), as_resource(None)
        nominator = self.handle.nominator if self.handle is not None else None
        nominated = nominator.nominated if nominator is not None else {}
        for p in nominated.values():
            if p.uid == pod.uid or p.nominated_node_name not in snap.row_of:
                continue
            info = infos.get(p.namespace)
            if info is None:
                continue
            p_req = pod_request(p.requests)
            if p.namespace == pod.namespace and p.priority >= pod.priority:
                add(in_eq, p_req)
                add(total, p_req)
            elif p.namespace != pod.namespace and not info.used_over_min():
                add(total, p_req)
        add(in_eq, req)
        add(total, req)
        return PreFilterState(req, in_eq, total)

    def pre_filter(self, state: CycleState, pod: Pod, snap: Snapshot) -> Status:
        """Reject when the namespace would exceed its max, or all quotas together their mins.
        A pod of a namespace without an ElasticQuota Skips (no quota applies)."""
        infos = self.infos(snap)
        eq = infos.get(pod.namespace)
        if eq is None:
            state.write(PRE_FILTER_STATE_KEY, PreFilterState(pod_request(pod.requests), {}, {}))
            return Status(Code.Skip)
        pf = self.pre_filter_state(pod, snap, infos)
        state.write(PRE_FILTER_STATE_KEY, pf)
        if self._dry_run:
            return Status()
        if eq.used_over_max_with(pf.nominated_in_eq_with_pod_req):
            return Status.unschedulable(
                f"Pod {pod.namespace}/{pod.name} is rejected in PreFilter because ElasticQuota "
                f"{eq.namespace} is more than Max"
            )
        if infos.aggregated_used_over_min_with(pf.nominated_with_pod_req):
            return Status.unschedulable(
                f"Pod {pod.namespace}/{pod.name} is rejected in PreFilter because total ElasticQuota "
                "used is more than min"
            )
        return Status()

    def add_pod(self, state: CycleState, pod: Pod, added: Pod, row: int, snap: Snapshot) -> None:
        return None  # usage follows the snapshot: nothing in the cycle state to adjust

    def remove_pod(self, state: CycleState, pod: Pod, removed: Pod, row: int, snap: Snapshot) -> None:
        return None

    # ---- Reserve / Unreserve ---------------------------------------------------------
    def reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        if self.handle is not None:
            QuotaTracker.of(self.handle.snapshot).reserve(pod)
        return None

    def unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        if self.handle is not None:
            QuotaTracker.of(self.handle.snapshot).unreserve(pod)

    # ---- PostFilter: preemption with quota rules ---------------------------------------
    def post_filter(
        self, state: CycleState, pod: Pod, snap: Snapshot, diagnosis: Diagnosis
    ) -> tuple[str | None, Status]:
        """Evaluator.Preempt with CapacityScheduling's preemptor (no "preemption: " prefix)."""
        pf = state.read(PRE_FILTER_STATE_KEY)
        self._pf_state = pf if isinstance(pf, PreFilterState) else self.pre_filter_state(pod, snap, self.infos(snap))
        try:
            return self.preempt(pod, snap, diagnosis)
        finally:
            self._pf_state = None

    def get_offset_and_num_candidates(self, num_nodes: int) -> tuple[int, int]:
        return 0, num_nodes  # every potential node, from the first

    def _batchable(self, pod: Pod, snap: Snapshot) -> bool:
        return False  # DefaultPreemption's batched dry run picks victims its own way

    def _state(self, pod: Pod, snap: Snapshot) -> PreFilterState:
        if self._pf_state is None:
            self._pf_state = self.pre_filter_state(pod, snap, self.infos(snap))
        return self._pf_state

    def pod_eligible_to_preempt_others(self, pod: Pod, snap: Snapshot, nominated_code: Code | None) -> tuple[bool, str]:
        """Not with preemptionPolicy Never; not while pods this one may have evicted on its
        nominated node are still terminating (judged with the quota rules)."""
        if pod.preemption_policy == PREEMPT_NEVER:
            return False, NOT_ELIGIBLE_NEVER
        nom = pod.nominated_node_name
        if not nom:
            return True, ""
        if nominated_code == Code.UnschedulableAndUnresolvable:
            return True, ""
        row = snap.row_of.get(nom)
        if row is None:
            return True, ""
        infos = self.infos(snap)
        mine = infos.get(pod.namespace)
        node_pods = list(snap.pods_on[row].values())
        if mine is not None:
            more_than_min = mine.used_over_min_with(self._state(pod, snap).nominated_in_eq_with_pod_req)
            for p in node_pods:
                if not p.deleting:
                    continue
                other = infos.get(p.namespace)
                if other is None:
                    continue
                if p.namespace == pod.namespace and p.priority < pod.priority:
                    return False, NOT_ELIGIBLE_TERMINATING
                if p.namespace != pod.namespace and not more_than_min and other.used_over_min():
                    return False, NOT_ELIGIBLE_TERMINATING
        else:
            for p in node_pods:
                if p.namespace in infos:
                    continue
                if p.deleting and p.priority < pod.priority:
                    return False, NOT_ELIGIBLE_TERMINATING
        return True, ""

    def select_victims_on_node(
        self, pod: Pod, snap: Snapshot, row: int, pdbs: list[PodDisruptionBudget], state: CycleState | None = None
    ) -> tuple[list[Pod], int, Status]:
        """The quota-aware SelectVictimsOnNode; the snapshot is left as it was. Its checks re-run
        the profile's PreFilter (``state`` is not read: its PostFilter passes none)."""
        pf = self._state(pod, snap)
        node_pods = list(snap.pods_on[row].values())
        infos = self.infos(snap)
        mine = infos.get(pod.namespace)
        # least important first, as upstream walks the node's pods
        walk = list(reversed(sort_by_importance(node_pods, self.more_important_pod)))
        potential: list[Pod] = []
        self._dry_run = True
        try:
            with snap.trial():  # the node gets its pods back, in their order
                if mine is not None:
                    more_than_min = mine.used_over_min_with(pf.nominated_in_eq_with_pod_req)
                    for p in walk:
                        other = self.infos(snap).get(p.namespace)
                        if other is None:
                            continue
                        if more_than_min:
                            # Its own min is used up by itself: only its own less important pods may go.
                            take = p.namespace == pod.namespace and p.priority < pod.priority
                        else:
                            # Within its min, which others borrow: take from namespaces above their min.
                            take = p.namespace != pod.namespace and other.used_over_min()
                        if take:
                            potential.append(p)
                            snap.remove_pod(p.uid)
                else:
                    for p in walk:
                        if p.namespace not in infos and p.priority < pod.priority:
                            potential.append(p)
                            snap.remove_pod(p.uid)
                if not potential:
                    msg = f"No victims found on node {snap.nodes[row].name} for preemptor pod {pod.name}"
                    return [], 0, Status(Code.UnschedulableAndUnresolvable, (msg,))
                st = self.fits(pod, snap, row)
                if not st.ok:
                    return [], 0, st
                if mine is not None and self._quota_exceeded(snap, pod, pf.pod_req, pf.pod_req):
                    return [], 0, Status(Code.Unschedulable, (GLOBAL_QUOTA_EXCEEDED,))
                ordered = sort_by_importance(potential, self.more_important_pod)
                violating, non_violating = filter_pods_with_pdb_violation(ordered, pdbs)
                victims: list[Pod] = []

                def reprieve(p: Pod) -> bool:
                    snap.add_pod(p)
                    fits = self.fits(pod, snap, row, "AddPod").ok
                    over = mine is not None and self._quota_exceeded(
                        snap, pod, pf.nominated_in_eq_with_pod_req, pf.nominated_with_pod_req
                    )
                    if not fits or over:
                        # Upstream removes (and lists) the pod twice when both hold; once is meant.
                        snap.remove_pod(p.uid)
                        victims.append(p)
                    return fits

                num_violating = reprieve_in_turn(violating, non_violating, reprieve)
                return victims, num_violating, Status()
        finally:
            self._dry_run = False

    def _quota_exceeded(self, snap: Snapshot, pod: Pod, in_eq: Resources, total: Resources) -> bool:
        infos = self.infos(snap)
        mine = infos.get(pod.namespace)
        return mine is not None and (mine.used_over_max_with(in_eq) or infos.aggregated_used_over_min_with(total))


def _no_args(args: Mapping[str, Any] | None) -> None:
    """CapacityScheduling takes no args: an envelope alone is fine, any field is an error."""
    body = dict(args) if isinstance(args, Mapping) else args
    if isinstance(body, dict):
        envelope = {k: body.pop(k) for k in ("apiVersion", "kind") if k in body}
        args_body(NAME, envelope, ())
        for key in body:
            raise InputError(f'unknown field "{key}": CapacityScheduling takes no args', path=f"{NAME}Args.{key}")
    else:
        args_body(NAME, body, ())  # not an object: args_body says so

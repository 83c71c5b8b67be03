"""Preemption candidates: victim importance, PodDisruptionBudget grouping, picking one node.

Ports of kube-scheduler's util.MoreImportantPod / GetEarliestPodStartTime,
defaultpreemption.filterPodsWithPDBViolation and preemption.pickOneNodeForPreemption.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from kubesched.api.objects import PodDisruptionBudget

if TYPE_CHECKING:
    from kubesched.api.objects import Pod

__all__ = ["PodDisruptionBudget"]
MAX_INT32 = 2**31 - 1
MIN_INT64 = -(2**63)

#: ``(pod1, pod2) -> True`` when pod1 is more important (reprieved first, preempted last).
MoreImportantPodFunc = Callable[["Pod", "Pod"], bool]


@dataclass
class Candidate:
    """A node the preemptor could run on once ``victims`` are gone (extenderv1.Victims + name)."""

    name: str
    victims: list[Pod]
    num_pdb_violations: int = 0


def pod_start_time(pod: Pod) -> float:
    """util.GetPodStartTime: a pod that has not started counts as starting now (the latest)."""
    return pod.start_time if pod.start_time is not None else math.inf


def more_important_pod(pod1: Pod, pod2: Pod) -> bool:
    """util.MoreImportantPod: higher priority first, then the one that started earlier."""
    if pod1.priority != pod2.priority:
        return pod1.priority > pod2.priority
    return pod_start_time(pod1) < pod_start_time(pod2)


def sort_by_importance(pods: Iterable[Pod], more_important: MoreImportantPodFunc) -> list[Pod]:
    """Most important first; a stable sort, so equally important pods keep node order."""

    def cmp(a: Pod, b: Pod) -> int:
        if more_important(a, b):
            return -1
        if more_important(b, a):
            return 1
        return 0

    return sorted(pods, key=functools.cmp_to_key(cmp))


def earliest_start_time_of_highest(victims: Sequence[Pod]) -> float | None:
    """util.GetEarliestPodStartTime: earliest start among the highest-priority victims."""
    if not victims:
        return None
    earliest = pod_start_time(victims[0])
    max_priority = victims[0].priority
    for p in victims:
        if p.priority == max_priority:
            earliest = min(earliest, pod_start_time(p))
        elif p.priority > max_priority:
            max_priority = p.priority
            earliest = pod_start_time(p)
    return earliest


def filter_pods_with_pdb_violation(
    pods: Sequence[Pod], pdbs: Sequence[PodDisruptionBudget]
) -> tuple[list[Pod], list[Pod]]:
    """(violating, non-violating), order preserved: a pod violates when a matching budget runs out."""
    allowed = [pdb.disruptions_allowed for pdb in pdbs]
    violating: list[Pod] = []
    non_violating: list[Pod] = []
    for pod in pods:
        violated = False
        if pod.labels:  # a pod without labels matches no budget
            for i, pdb in enumerate(pdbs):
                if pdb.namespace != pod.namespace:
                    continue
                if pdb.selector is None or pdb.selector.is_empty or not pdb.selector.matches(pod.labels):
                    continue  # a nil or empty PDB selector matches nothing
                if pod.name in pdb.disrupted_pods:
                    continue  # eviction already processed by the API server
                allowed[i] -= 1
                if allowed[i] < 0:
                    violated = True
        (violating if violated else non_violating).append(pod)
    return violating, non_violating


def reprieve_in_turn(violating: Sequence[Pod], non_violating: Sequence[Pod], reprieve: Callable[[Pod], bool]) -> int:
    """SelectVictimsOnNode's reprieve pass: each pod (PDB-violating ones first, most important
    first within each list) is given back while the preemptor still fits; returns how many
    violating pods stay victims."""
    num_violating = 0
    for p in violating:
        if not reprieve(p):
            num_violating += 1
    for p in non_violating:
        reprieve(p)
    return num_violating


def _score_funcs(c: dict[str, Candidate]) -> list[Callable[[str], float]]:
    def min_pdb_violations(node: str) -> float:
        return -c[node].num_pdb_violations

    def min_highest_priority(node: str) -> float:
        return -c[node].victims[0].priority

    def min_sum_priorities(node: str) -> float:
        # MaxInt32+1 makes every term >= 0, so more negative-priority victims never look cheaper.
        return -sum(p.priority + MAX_INT32 + 1 for p in c[node].victims)

    def min_num_pods(node: str) -> float:
        return -len(c[node].victims)

    def latest_start_time(node: str) -> float:
        t = earliest_start_time_of_highest(c[node].victims)
        return MIN_INT64 if t is None else t

    return [min_pdb_violations, min_highest_priority, min_sum_priorities, min_num_pods, latest_start_time]


def pick_one_node_for_preemption(candidates: Sequence[Candidate]) -> str:
    """pickOneNodeForPreemption: lexicographic criteria, then the first remaining node.

    Victims of each candidate must be ordered most important first.
    """
    by_name: dict[str, Candidate] = {}
    for cand in candidates:
        by_name[cand.name] = cand  # a later candidate on the same node wins, as in the Go map
    if not by_name:
        return ""
    remaining = list(by_name)
    for f in _score_funcs(by_name):
        scores = [f(node) for node in remaining]
        best = max(scores)
        remaining = [node for node, s in zip(remaining, scores, strict=True) if s == best]
        if len(remaining) == 1:
            return remaining[0]
    return remaining[0]


def select_candidate(candidates: Sequence[Candidate]) -> Candidate | None:
    """Evaluator.SelectCandidate: the best candidate, or None when there is none."""
    if not candidates:
        return None
    if len(candidates) == 1:
        return candidates[0]
    chosen = pick_one_node_for_preemption(candidates)
    for cand in reversed(candidates):
        if cand.name == chosen:
            return cand
    return candidates[0]


def aggregate_errors(messages: Sequence[str]) -> str:
    """utilerrors.NewAggregate(...).Error(): one message as is, several deduplicated in brackets."""
    if len(messages) == 1:
        return messages[0]
    seen: list[str] = []
    for m in messages:
        if m not in seen:
            seen.append(m)
    if len(seen) == 1:
        return seen[0]
    return "[" + ", ".join(seen) + "]"

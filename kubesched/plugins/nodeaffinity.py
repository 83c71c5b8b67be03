"""NodeAffinity: nodeSelector, required/preferred node affinity, and the profile's addedAffinity.

Selectors run as numpy masks over the snapshot's label columns (``NodeSelector.mask``), so a
filter or score is a handful of vector operations per pod term, not a loop over nodes.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from kubesched.api.fields import as_int, as_list, as_map
from kubesched.api.selectors import (
    LabelSelector,
    NodeSelector,
    NodeSelectorTerm,
    PreferredSchedulingTerm,
    Requirement,
)
from kubesched.config.args import plugin_args
from kubesched.errors import join_path
from kubesched.framework.interfaces import (
    FilterPlugin,
    NodeLocal,
    PreFilterPlugin,
    PreScorePlugin,
    ScorePlugin,
    default_normalize,
)
from kubesched.framework.status import Code, FilterResult, PreFilterResult, Status
from kubesched.state.memo import NODES

if TYPE_CHECKING:
    from kubesched.api.objects import Pod
    from kubesched.framework.cycle_state import CycleState
    from kubesched.framework.handle import Handle
    from kubesched.state.labels import LabelIndex
    from kubesched.state.snapshot import Snapshot

NAME = "NodeAffinity"
PRE_FILTER_STATE_KEY = "PreFilter" + NAME
PRE_SCORE_STATE_KEY = "PreScore" + NAME
ERR_REASON_POD = "node(s) didn't match Pod's node affinity/selector"
ERR_REASON_ENFORCED = "node(s) didn't match scheduler-enforced node affinity"
ERR_REASON_CONFLICT = "pod affinity terms conflict"


def node_selector_as_label_selector(node_selector: Mapping[str, str]) -> LabelSelector | None:
    """labels.SelectorFromSet: no validation (the API server already validated nodeSelector)."""
    if not node_selector:
        return None
    return LabelSelector(
        tuple(Requirement(k, "In", frozenset((v,))) for k, v in sorted(node_selector.items()))
    )


@dataclass(frozen=True, slots=True)
class RequiredNodeAffinity:
    """nodeaffinity.RequiredNodeAffinity: the pod's nodeSelector AND its required node affinity."""

    node_selector: LabelSelector | None
    affinity: NodeSelector | None

    @classmethod
    def of(cls, pod: Pod) -> RequiredNodeAffinity:
        affinity = pod.node_affinity.required if pod.node_affinity is not None else None
        return cls(node_selector_as_label_selector(pod.node_selector), affinity)

    def mask(self, labels: LabelIndex) -> np.ndarray:
        """Match for every node of ``labels``."""
        if self.node_selector is not None:
            out = self.node_selector.mask(labels)
            if self.affinity is not None:
                out &= self.affinity.mask(labels)
            return out
        if self.affinity is not None:
            return self.affinity.mask(labels)
        return np.ones(len(labels), bool)

    def matches_rows(self, snap: Snapshot, rows: np.ndarray) -> np.ndarray:
        """``mask`` restricted to ``rows``, from the all-nodes mask kept while nodes are unchanged
        (preemption filters one node at a time)."""
        return snap.memo.get((NAME, self), lambda: self.mask(snap.labels), on=NODES)[rows]


def parse_added_affinity(
    raw: Any, path: str
) -> tuple[NodeSelector | None, tuple[PreferredSchedulingTerm, ...]]:
    """NodeAffinityArgs.addedAffinity (as ``plugin_args`` validated it) as selectors.

    Terms are parsed like the pod's, but unlike a pod spec an empty ``nodeSelectorTerms`` list
    (matches no node) and any preferred weight are allowed; weight-0 and empty terms are
    dropped, as NewPreferredSchedulingTerms does.
    """
    if raw is None:
        return None, ()
    m = as_map(raw, path)
    required: NodeSelector | None = None
    rpath = join_path(path, "requiredDuringSchedulingIgnoredDuringExecution")
    if m.get("requiredDuringSchedulingIgnoredDuringExecution") is not None:
        tpath = join_path(rpath, "nodeSelectorTerms")
        terms = as_list(
            as_map(m["requiredDuringSchedulingIgnoredDuringExecution"], rpath).get("nodeSelectorTerms"), tpath
        )
        required = NodeSelector(
            tuple(NodeSelectorTerm.parse(t, join_path(tpath, i)) for i, t in enumerate(terms))
        )
    preferred = []
    ppath = join_path(path, "preferredDuringSchedulingIgnoredDuringExecution")
    for i, item in enumerate(as_list(m.get("preferredDuringSchedulingIgnoredDuringExecution"), ppath)):
        ipath = join_path(ppath, i)
        im = as_map(item, ipath)
        weight = as_int(im.get("weight"), join_path(ipath, "weight"), 0) or 0
        term = NodeSelectorTerm.parse(im.get("preference"), join_path(ipath, "preference"))
        if weight != 0 and not term.is_empty:
            preferred.append(PreferredSchedulingTerm(weight, term))
    return required, tuple(preferred)


def pre_filter_node_names(required: NodeSelector) -> frozenset[str] | None:
    """Nodes named by ``metadata.name In`` matchFields, when every term names some (else None).

    Requirements within a term are ANDed (intersection), terms are ORed (union); an empty
    result means the terms conflict and no node can match.
    """
    names: set[str] = set()
    for term in required.terms:
        term_names: set[str] | None = None
        for f in term.match_fields:
            if f.operator == "In":
                term_names = {f.value} if term_names is None else term_names & {f.value}
        if term_names is None:  # this term accepts nodes by labels: every node stays eligible
            return None
        names |= term_names
    return frozenset(names)


def preferred_score(
    terms: tuple[PreferredSchedulingTerm, ...], labels: LabelIndex, rows: np.ndarray
) -> np.ndarray:
    """PreferredSchedulingTerms.Score: sum of weights of the terms each node matches."""
    out = np.zeros(len(rows), np.int64)
    for t in terms:
        if t.weight == 0 or t.term.is_empty:  # skipped when parsed upstream: matches nothing
            continue
        out += np.int64(t.weight) * t.term.mask(labels)[rows]
    return out


class NodeAffinity(PreFilterPlugin, FilterPlugin, PreScorePlugin, ScorePlugin, NodeLocal):
    """Filter by nodeSelector, required affinity and addedAffinity; score preferred terms."""

    name = NAME
    events_to_register = frozenset({"NodeAdd", "NodeUpdate"})

    def __init__(self, args: dict[str, Any] | None = None, handle: Handle | None = None) -> None:
        super().__init__(args, handle)
        added = plugin_args(NAME, self.args).get("addedAffinity")  # decoded and validated as configured
        required, preferred = parse_added_affinity(added, "addedAffinity")
        #: Scheduler-enforced required selector (None: nothing enforced).
        self.added_node_selector: NodeSelector | None = required
        #: Scheduler-added preferred terms, scored for every pod.
        self.added_preferred: tuple[PreferredSchedulingTerm, ...] = preferred

    # -- filter -----------------------------------------------------------------------------

    def pre_filter(self, state: CycleState, pod: Pod, snap: Snapshot) -> PreFilterResult | Status | None:
        """Parse the pod's requirements once; narrow to nodes named by matchFields when possible."""
        required = pod.node_affinity.required if pod.node_affinity is not None else None
        if required is None and self.added_node_selector is None and not pod.node_selector:
            return Status(Code.Skip, plugin=NAME)
        state.write(PRE_FILTER_STATE_KEY, RequiredNodeAffinity.of(pod))
        if required is None or not required.terms:
            return None
        names = pre_filter_node_names(required)
        if names is None:
            return None
        if not names:
            return Status(Code.UnschedulableAndUnresolvable, (ERR_REASON_CONFLICT,), NAME)
        return PreFilterResult(node_names=names)

    def add_pod(self, state: CycleState, pod: Pod, added: Pod, row: int, snap: Snapshot) -> None:
        """No PreFilterExtensions upstream: the state does not depend on other pods."""

    def remove_pod(self, state: CycleState, pod: Pod, removed: Pod, row: int, snap: Snapshot) -> None:
        """No PreFilterExtensions upstream: the state does not depend on other pods."""

    def filter(self, state: CycleState, pod: Pod, snap: Snapshot, rows: np.ndarray) -> FilterResult:
        """Enforced affinity is checked first; a node fails with exactly one of the two reasons."""
        n = len(rows)
        masks: list[tuple[np.ndarray, str, Code]] = []
        enforced_fail = None
        if self.added_node_selector is not None:
            added = self.added_node_selector
            enforced_fail = ~snap.memo.get((NAME, added), lambda: added.mask(snap.labels), on=NODES)[rows]
            masks.append((enforced_fail, ERR_REASON_ENFORCED, Code.UnschedulableAndUnresolvable))
        required: RequiredNodeAffinity | None = state.read(PRE_FILTER_STATE_KEY)
        if required is None:  # PreFilter disabled: compute here, as upstream falls back
            required = RequiredNodeAffinity.of(pod)
        if required.node_selector is not None or required.affinity is not None:
            pod_fail = ~required.matches_rows(snap, rows)
            if enforced_fail is not None:
                pod_fail &= ~enforced_fail
            masks.append((pod_fail, ERR_REASON_POD, Code.UnschedulableAndUnresolvable))
        return FilterResult.from_masks(masks, n)

    # -- score ------------------------------------------------------------------------------

    def pre_score(self, state: CycleState, pod: Pod, snap: Snapshot, rows: np.ndarray) -> Status | None:
        """Skip scoring when neither the pod nor the profile has preferred terms."""
        preferred = pod.node_affinity.preferred if pod.node_affinity is not None else ()
        for t in preferred:  # NewPreferredSchedulingTerms fails on a term it cannot parse
            if t.weight != 0 and not t.term.is_empty and t.term.error is not None:
                return Status.error(t.term.error, NAME)
        if not preferred and not self.added_preferred:
            return Status(Code.Skip, plugin=NAME)
        state.write(PRE_SCORE_STATE_KEY, preferred)
        return None

    def score(self, state: CycleState, pod: Pod, snap: Snapshot, rows: np.ndarray) -> np.ndarray:
        """Raw score: weights of matching addedAffinity terms plus the pod's own preferred terms."""
        rows = np.asarray(rows)
        out = preferred_score(self.added_preferred, snap.labels, rows)
        preferred = state.read(PRE_SCORE_STATE_KEY)
        if preferred is None:  # PreScore disabled: compute here, as upstream falls back
            preferred = pod.node_affinity.preferred if pod.node_affinity is not None else ()
        if preferred:
            out += preferred_score(preferred, snap.labels, rows)
        return out

    def normalize(self, state: CycleState, pod: Pod, scores: np.ndarray) -> np.ndarray:
        """Scale to [0, 100] by the best node (DefaultNormalizeScore, not reversed)."""
        return default_normalize(scores, reverse=False)

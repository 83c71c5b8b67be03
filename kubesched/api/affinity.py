"""Node affinity, inter-pod (anti-)affinity terms and topology spread constraints (core/v1)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from kubesched.api.fields import as_int, as_list, as_map, as_str, maps, one_of
from kubesched.api.selectors import (
    LabelSelector,
    NodeSelector,
    PreferredSchedulingTerm,
    Requirement,
    parse_preferred_terms,
)
from kubesched.errors import InputError, join_path


def merge_label_keys(
    selector: LabelSelector | None,
    labels: Mapping[str, str],
    match_keys: tuple[str, ...],
    mismatch_keys: tuple[str, ...] = (),
) -> LabelSelector | None:
    """Fold matchLabelKeys / mismatchLabelKeys into the selector, as the API server does."""
    if selector is None or not (match_keys or mismatch_keys):
        return selector
    extra = []
    for k in match_keys:
        if k in labels:
            extra.append(Requirement(k, "In", frozenset([labels[k]])))
    for k in mismatch_keys:
        if k in labels:
            extra.append(Requirement(k, "NotIn", frozenset([labels[k]])))
    return selector.with_requirements(tuple(extra)) if extra else selector


@dataclass(frozen=True, slots=True)
class NodeAffinity:
    required: NodeSelector | None
    preferred: tuple[PreferredSchedulingTerm, ...]

    @classmethod
    def parse(cls, d: object, path: str) -> NodeAffinity | None:
        if d is None:
            return None
        m = as_map(d, path)
        req = m.get("requiredDuringSchedulingIgnoredDuringExecution")
        # Terms kube-scheduler cannot parse are kept with their error (matching no node), as
        # the API server admits some (invalid values in preferred terms, Gt/Lt non-integers).
        required = NodeSelector.parse(req, join_path(path, "requiredDuringSchedulingIgnoredDuringExecution"), lazy=True)
        preferred = parse_preferred_terms(
            m.get("preferredDuringSchedulingIgnoredDuringExecution"),
            join_path(path, "preferredDuringSchedulingIgnoredDuringExecution"),
            lazy=True,
        )
        return cls(required, tuple(preferred))


@dataclass(frozen=True, slots=True)
class PodAffinityTerm:
    """One term, with matchLabelKeys already merged into ``selector``."""

    selector: LabelSelector | None  # None matches no pod
    namespaces: frozenset[str]
    namespace_selector: LabelSelector | None  # None: only ``namespaces``; empty: every namespace
    topology_key: str

    @classmethod
    def parse(cls, d: object, path: str, pod_labels: Mapping[str, str]) -> PodAffinityTerm:
        m = as_map(d, path)
        sel = LabelSelector.parse(m.get("labelSelector"), join_path(path, "labelSelector"))
        ns = as_list(m.get("namespaces"), join_path(path, "namespaces"))
        nss = LabelSelector.parse(m.get("namespaceSelector"), join_path(path, "namespaceSelector"))
        key = as_str(m.get("topologyKey"), join_path(path, "topologyKey"))
        if not key:
            raise InputError("topologyKey is required", path=join_path(path, "topologyKey"))
        mk = tuple(as_list(m.get("matchLabelKeys"), join_path(path, "matchLabelKeys")))
        mmk = tuple(as_list(m.get("mismatchLabelKeys"), join_path(path, "mismatchLabelKeys")))
        if set(mk) & set(mmk):
            raise InputError("a key may not be in both matchLabelKeys and mismatchLabelKeys", path=path)
        sel = merge_label_keys(sel, pod_labels, mk, mmk)
        return cls(sel, frozenset(as_str(x, join_path(path, "namespaces")) for x in ns), nss, key)

    def resolved_namespaces(self, own_namespace: str) -> frozenset[str]:
        """Namespaces a term without namespaceSelector applies to (defaults to the pod's own)."""
        if not self.namespaces and self.namespace_selector is None:
            return frozenset([own_namespace])
        return self.namespaces


@dataclass(frozen=True, slots=True)
class WeightedPodAffinityTerm:
    weight: int
    term: PodAffinityTerm


@dataclass(frozen=True, slots=True)
class PodAffinity:
    required: tuple[PodAffinityTerm, ...]
    preferred: tuple[WeightedPodAffinityTerm, ...]

    @classmethod
    def parse(cls, d: object, path: str, pod_labels: Mapping[str, str]) -> PodAffinity | None:
        if d is None:
            return None
        m = as_map(d, path)
        rp = join_path(path, "requiredDuringSchedulingIgnoredDuringExecution")
        required = tuple(
            PodAffinityTerm.parse(t, join_path(rp, i), pod_labels)
            for i, t in enumerate(as_list(m.get("requiredDuringSchedulingIgnoredDuringExecution"), rp))
        )
        pp = join_path(path, "preferredDuringSchedulingIgnoredDuringExecution")
        preferred = []
        for tm, tp in maps(m.get("preferredDuringSchedulingIgnoredDuringExecution"), pp):
            w = as_int(tm.get("weight"), join_path(tp, "weight"))
            if not 1 <= w <= 100:
                raise InputError("weight must be in the range 1-100", path=join_path(tp, "weight"))
            term = PodAffinityTerm.parse(tm.get("podAffinityTerm"), join_path(tp, "podAffinityTerm"), pod_labels)
            preferred.append(WeightedPodAffinityTerm(w, term))
        if not required and not preferred:
            return None
        return cls(required, tuple(preferred))


#: Wire fields of a core/v1 TopologySpreadConstraint.
SPREAD_CONSTRAINT_FIELDS: tuple[str, ...] = (
    "maxSkew",
    "topologyKey",
    "whenUnsatisfiable",
    "labelSelector",
    "minDomains",
    "nodeAffinityPolicy",
    "nodeTaintsPolicy",
    "matchLabelKeys",
)


@dataclass(frozen=True, slots=True)
class TopologySpreadConstraint:
    max_skew: int
    topology_key: str
    when_unsatisfiable: str  # DoNotSchedule | ScheduleAnyway
    selector: LabelSelector | None  # matchLabelKeys merged
    min_domains: int | None
    node_affinity_policy: str  # Honor (default) | Ignore
    node_taints_policy: str  # Ignore (default) | Honor

    @classmethod
    def parse(cls, d: object, path: str, pod_labels: Mapping[str, str]) -> TopologySpreadConstraint:
        m = as_map(d, path)
        skew = as_int(m.get("maxSkew"), join_path(path, "maxSkew"), None)
        if skew is None or skew <= 0:
            raise InputError("must be greater than zero", path=join_path(path, "maxSkew"))
        key = as_str(m.get("topologyKey"), join_path(path, "topologyKey"))
        if not key:
            raise InputError("topologyKey is required", path=join_path(path, "topologyKey"))
        when = as_str(m.get("whenUnsatisfiable"), join_path(path, "whenUnsatisfiable"))
        if when not in ("DoNotSchedule", "ScheduleAnyway"):
            raise InputError(f'unknown value "{when}"', path=join_path(path, "whenUnsatisfiable"))
        min_domains = as_int(m.get("minDomains"), join_path(path, "minDomains"), None)
        if min_domains is not None:
            if min_domains <= 0:
                raise InputError("must be greater than zero", path=join_path(path, "minDomains"))
            if when != "DoNotSchedule":
                raise InputError(
                    "can only be used when whenUnsatisfiable is DoNotSchedule", path=join_path(path, "minDomains")
                )
        sel = LabelSelector.parse(m.get("labelSelector"), join_path(path, "labelSelector"))
        mk = tuple(as_list(m.get("matchLabelKeys"), join_path(path, "matchLabelKeys")))
        sel = merge_label_keys(sel, pod_labels, mk)
        return cls(
            skew,
            key,
            when,
            sel,
            min_domains,
            one_of(m.get("nodeAffinityPolicy"), join_path(path, "nodeAffinityPolicy"), ("Honor", "Ignore"), "Honor"),
            one_of(m.get("nodeTaintsPolicy"), join_path(path, "nodeTaintsPolicy"), ("Honor", "Ignore"), "Ignore"),
        )

    @classmethod
    def parse_default(cls, d: object, path: str) -> TopologySpreadConstraint:
        """PodTopologySpreadArgs.defaultConstraints entries: no selector (derived per pod)."""
        return cls.parse(d, path, {})


__all__ = [
    "NodeAffinity",
    "PodAffinity",
    "PodAffinityTerm",
    "SPREAD_CONSTRAINT_FIELDS",
    "TopologySpreadConstraint",
    "WeightedPodAffinityTerm",
    "merge_label_keys",
]

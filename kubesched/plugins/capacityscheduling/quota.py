"""ElasticQuotaInfo: a namespace's min, max and used, compared as scheduler-plugins compares them.

Amounts are ``framework.Resource`` fields: cpu (millicores), memory, ephemeral-storage and pods
always exist (0 when not listed); other (scalar) resources exist only where listed. A quota
without ``min`` guarantees 0 of cpu, memory and ephemeral-storage; one without ``max`` caps none
of them. A scalar missing from ``min`` counts as 0, from ``max`` as unlimited — but cpu, memory
or ephemeral-storage missing from a ``max`` that lists other resources caps them at 0, as upstream.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from kubesched.api.resources import CPU, EPHEMERAL_STORAGE, MEMORY, PODS, Resources

UPPER_BOUND_OF_MAX = 2**63 - 1  # math.MaxInt64
LOWER_BOUND_OF_MIN = 0
BASE = (CPU, MEMORY, EPHEMERAL_STORAGE, PODS)
BOUNDED = (CPU, MEMORY, EPHEMERAL_STORAGE)  # makeResourceListForBound


def is_scalar(name: str) -> bool:
    """schedutil.IsScalarResourceName: extended, hugepages, prefixed-native, attachable-volumes."""
    if name.startswith(("hugepages-", "attachable-volumes-")):
        return True
    return "/" in name and not name.startswith("requests.")


def as_resource(rl: Mapping[str, int] | None) -> Resources:
    """framework.NewResource: the base fields plus the scalar resources of a ResourceList."""
    out: Resources = dict.fromkeys(BASE, 0)
    for name, amount in (rl or {}).items():
        if name in out:
            out[name] = amount
        elif is_scalar(name):
            out[name] = amount
    return out


def add(acc: Resources, other: Mapping[str, int]) -> None:
    for name, amount in other.items():
        acc[name] = acc.get(name, 0) + amount


def over(x1: Mapping[str, int], x2: Mapping[str, int], y: Mapping[str, int], bound: int) -> bool:
    """cmp2: is x1 + x2 above y in any base resource, or in any scalar that x1 has (a scalar
    missing from y counts as ``bound``)?"""
    for name in BASE:
        if x1.get(name, 0) + x2.get(name, 0) > y.get(name, 0):
            return True
    for name, amount in x1.items():
        if name not in BASE and amount + x2.get(name, 0) > y.get(name, bound):
            return True
    return False


@dataclass
class ElasticQuotaInfo:
    namespace: str
    min: Resources | None
    max: Resources | None
    used: Resources = field(default_factory=lambda: as_resource(None))
    pods: set[str] = field(default_factory=set)  # uids counted in ``used``

    @classmethod
    def new(
        cls,
        namespace: str,
        min_rl: Mapping[str, int] | None,
        max_rl: Mapping[str, int] | None,
        used_rl: Mapping[str, int] | None = None,
    ) -> ElasticQuotaInfo:
        """newElasticQuotaInfo: a missing min is 0 and a missing max unlimited (cpu, memory, storage)."""
        if min_rl is None:
            min_rl = dict.fromkeys(BOUNDED, LOWER_BOUND_OF_MIN)
        if max_rl is None:
            max_rl = dict.fromkeys(BOUNDED, UPPER_BOUND_OF_MAX)
        return cls(namespace, as_resource(min_rl), as_resource(max_rl), as_resource(used_rl))

    def used_over_min_with(self, request: Mapping[str, int]) -> bool:
        """used + request above min (no min at all: always)."""
        return True if self.min is None else over(request, self.used, self.min, LOWER_BOUND_OF_MIN)

    def used_over_max_with(self, request: Mapping[str, int]) -> bool:
        """used + request above max (no max at all: never)."""
        return False if self.max is None else over(request, self.used, self.max, UPPER_BOUND_OF_MAX)

    def used_over_min(self) -> bool:
        """The namespace borrows: it uses more than its min."""
        return True if self.min is None else over(self.used, {}, self.min, LOWER_BOUND_OF_MIN)

    def add_pod_if_not_present(self, uid: str, request: Mapping[str, int]) -> None:
        if uid not in self.pods:
            self.pods.add(uid)
            add(self.used, request)

    def delete_pod_if_present(self, uid: str, request: Mapping[str, int]) -> None:
        if uid in self.pods:
            self.pods.discard(uid)
            add(self.used, {k: -v for k, v in request.items()})


class ElasticQuotaInfos(dict[str, ElasticQuotaInfo]):
    """namespace -> ElasticQuotaInfo."""

    def aggregated_used_over_min_with(self, request: Mapping[str, int]) -> bool:
        """Would the quotas together use more than their mins together with ``request`` added?"""
        used: Resources = as_resource(None)
        mins: Resources = as_resource(None)
        for info in self.values():
            add(used, info.used)
            add(mins, info.min or {})
        add(used, request)
        return over(used, {}, mins, LOWER_BOUND_OF_MIN)


def pod_request(requests: Mapping[str, int]) -> Resources:
    """computePodResourceRequest as a framework.Resource (the pod's effective requests)."""
    return as_resource(requests)


def total(requests: Iterable[Mapping[str, int]]) -> Resources:
    out: Resources = as_resource(None)
    for r in requests:
        add(out, r)
    return out

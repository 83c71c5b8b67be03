"""Resource lists and a pod's effective requests (component-helpers/resource PodRequests)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from kubesched.api.fields import as_map
from kubesched.api.quantity import INT64_MAX, INT64_MIN, format_quantity, resource_value
from kubesched.errors import InputError, join_path

CPU = "cpu"
MEMORY = "memory"
EPHEMERAL_STORAGE = "ephemeral-storage"
PODS = "pods"

# Scoring counts a container without a request as asking for this much (pkg/scheduler/util).
DEFAULT_MILLI_CPU_REQUEST = 100
DEFAULT_MEMORY_REQUEST = 200 * 1024 * 1024

# Pod-level resources (spec.resources) may set these (IsSupportedPodLevelResource).
POD_LEVEL_RESOURCES = (CPU, MEMORY)
HUGEPAGES_PREFIX = "hugepages-"


def supported_pod_level(resources: Mapping[str, int]) -> Resources:
    """The pod-level entries kube-scheduler honours: cpu, memory and hugepages-*."""
    return {k: v for k, v in resources.items() if k in POD_LEVEL_RESOURCES or k.startswith(HUGEPAGES_PREFIX)}

Resources = dict[str, int]


def parse_resource_list(value: object, path: str) -> Resources:
    """A ResourceList: name -> integer amount (millicores for cpu, value() otherwise)."""
    out: Resources = {}
    for name, q in as_map(value, path).items():
        if not isinstance(name, str) or not name:
            raise InputError("resource name must be a non-empty string", path=path)
        try:
            out[name] = resource_value(name, q) if q is not None else 0  # null: a zero quantity
        except InputError as e:
            raise e.within(prefix=join_path(path, name)) from None
    return out


def check_int64(amounts: Mapping[str, int], path: str, what: str) -> None:
    """kube-scheduler adds resource amounts in int64: a total past that range is an error here,
    where Go would wrap around silently."""
    for name, v in amounts.items():
        if not INT64_MIN <= v <= INT64_MAX:
            shown = format_quantity(name.split(" ")[0], v)
            raise InputError(f"{what} add up to {shown} {name}, past the int64 range of resource amounts", path=path)


def add_into(acc: Resources, other: Mapping[str, int]) -> None:
    for k, v in other.items():
        acc[k] = acc.get(k, 0) + v


def max_into(acc: Resources, other: Mapping[str, int]) -> None:
    for k, v in other.items():
        if v > acc.get(k, 0):
            acc[k] = v


def pod_requests(
    containers: Iterable[Mapping[str, int]],
    init_containers: Iterable[tuple[Mapping[str, int], bool]],
    overhead: Mapping[str, int],
    pod_level: Mapping[str, int],
) -> Resources:
    """Effective requests: max(sum(containers)+sidecars, init peaks) + overhead.

    ``init_containers`` yields (requests, restartable) in spec order; restartable init
    containers (sidecars) run beside the app containers and beside later init containers.
    """
    reqs: Resources = {}
    for c in containers:
        add_into(reqs, c)
    sidecars: Resources = {}
    init_peak: Resources = {}
    for c, restartable in init_containers:
        if restartable:
            add_into(reqs, c)
            add_into(sidecars, c)
            current = dict(sidecars)
        else:
            current = dict(c)
            add_into(current, sidecars)
        max_into(init_peak, current)
    max_into(reqs, init_peak)
    reqs.update(pod_level)
    add_into(reqs, overhead)
    return reqs


def non_zero_requests(
    containers: list[Mapping[str, int]],
    init_containers: list[tuple[Mapping[str, int], bool]],
    overhead: Mapping[str, int],
    pod_level: Mapping[str, int],
    requests: Mapping[str, int],
) -> tuple[int, int]:
    """(milli-CPU, memory) for scoring (framework.calculateResource).

    Without pod-level resources every container missing a cpu/memory request counts the
    default; with them, only a resource missing from the pod's requests altogether does.
    """
    defaults = {CPU: DEFAULT_MILLI_CPU_REQUEST, MEMORY: DEFAULT_MEMORY_REQUEST}
    if pod_level:
        defaults = {k: v for k, v in defaults.items() if k not in requests}
    if not defaults:
        return requests.get(CPU, 0), requests.get(MEMORY, 0)

    def fill(c: Mapping[str, int]) -> Mapping[str, int]:
        missing = {k: v for k, v in defaults.items() if k not in c}
        return {**c, **missing} if missing else c

    reqs = pod_requests(
        [fill(c) for c in containers],
        [(fill(c), r) for c, r in init_containers],
        overhead,
        pod_level,
    )
    return reqs.get(CPU, 0), reqs.get(MEMORY, 0)

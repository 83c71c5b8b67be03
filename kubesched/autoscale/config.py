"""Autoscaler configuration: node groups, Cluster Autoscaler's options and the Karpenter-like mode.

Read from YAML by ``kubesched.autoscale.configfile`` (``kubesched autoscale --autoscaler FILE``,
``kubesched experiment elastic``) or built in Python. Every value is checked when loaded, and by
``AutoscalerConfig.validate`` when built in Python: a bad one is an ``InputError`` naming the
file and the field (``autoscaler.yaml: scaleDown.unneededTime: must be 0 or more seconds``).
Defaults are Cluster Autoscaler's (``--scan-interval=10s``, ``--expander=least-waste``,
``--scale-down-utilization-threshold=0.5``, ``--scale-down-unneeded-time=10m`` ...).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from kubesched.api.objects import Node
from kubesched.autoscale.limits import CORES, MEMORY, ResourceLimits
from kubesched.autoscale.nodepool import NodePool
from kubesched.autoscale.spot import SpotOptions
from kubesched.errors import InputError, join_path

EXPANDERS = ("random", "most-pods", "least-waste", "least-nodes", "priority", "price")
MODES = ("cluster-autoscaler", "karpenter")
CONSOLIDATION = ("WhenEmpty", "WhenEmptyOrUnderutilized")
DELAY_DISTS = {"constant": ("value",), "uniform": ("min", "max"), "exponential": ("mean",), "lognormal": ("median", "sigma")}

#: The simulator runs the loop every scanInterval over the whole replay: a shorter one would spin
#: (the live loop's tests use 0.2 s).
MIN_SCAN_INTERVAL = 0.1
MAX_SIGMA = 10.0  # a lognormal delay's sigma (as the synthetic workload's): exp(sigma * z) stays finite
MAX_GROUP_SIZE = 100_000  # nodes in one group (the synthetic workload's node bound)
INT32 = (-(2**31), 2**31 - 1)  # a pod priority's range (expendablePodsPriorityCutoff)

#: the label and taint every node the autoscaler creates carries (its group's name as value)
GROUP_LABEL = "autoscaling.kubesched.io/node-group"


@dataclass(frozen=True)
class Delay:
    """A provisioning delay distribution, in seconds."""

    dist: str = "uniform"
    a: float = 60.0  # value, min, mean or median
    b: float = 120.0  # max or sigma

    def sample(self, rng: np.random.Generator) -> float:
        if self.dist == "constant":
            return self.a
        if self.dist == "uniform":
            return float(rng.uniform(self.a, self.b))
        if self.dist == "exponential":
            return float(rng.exponential(self.a))
        return float(self.a * math.exp(self.b * rng.standard_normal()))

    @property
    def mean(self) -> float:
        if self.dist == "uniform":
            return (self.a + self.b) / 2
        if self.dist == "lognormal":
            return self.a * math.exp(self.b * self.b / 2)
        return self.a  # constant, exponential

    @property
    def high(self) -> float:
        """The delay's upper end (uniform: max; others: the 99th percentile)."""
        if self.dist == "constant":
            return self.a
        if self.dist == "uniform":
            return self.b
        if self.dist == "exponential":
            return self.a * math.log(100)
        return self.a * math.exp(2.326 * self.b)

    def describe(self) -> str:
        if self.dist == "constant":
            return f"{self.a:g} s"
        if self.dist == "uniform":
            return f"uniform {self.a:g}-{self.b:g} s"
        if self.dist == "exponential":
            return f"exponential, mean {self.a:g} s"
        return f"lognormal, median {self.a:g} s, sigma {self.b:g}"


@dataclass
class NodeGroup:
    """A group of identical nodes (a cloud provider's instance group / Karpenter instance type)."""

    name: str
    template: Node  # what a new node of the group looks like (its name is replaced)
    min_size: int = 0
    max_size: int = 1000
    price: float | None = None  # per node-hour; None = from the prices' unit rates
    zero_or_max_node_scaling: bool = False  # atomic: grows from its size straight to max, or not at all

    @property
    def gpus(self) -> int:
        """Whole GPUs of a node: the GPU-sharing count, else ``nvidia.com/gpu``."""
        from kubesched.gpu.model import MILLI
        from kubesched.sim.gpu import node_gpu_milli

        return node_gpu_milli(self.template) // MILLI


@dataclass
class ScaleDown:
    enabled: bool = True
    utilization_threshold: float = 0.5
    gpu_utilization_threshold: float = 0.5
    unneeded_time: float = 600.0
    delay_after_add: float = 600.0
    delay_after_delete: float = 0.0  # CA: defaults to the scan interval, i.e. no extra wait
    delay_after_failure: float = 180.0
    max_empty_bulk_delete: int = 10
    max_drain_parallelism: int = 1
    ignore_daemonsets_utilization: bool = False  # CA's --ignore-daemonsets-utilization
    ignore_mirror_pods_utilization: bool = False  # CA's --ignore-mirror-pods-utilization
    unready_time: float = 1200.0  # CA's --scale-down-unready-time: how long an unready node is unneeded first
    unready_enabled: bool = True  # CA's --scale-down-unready-enabled


@dataclass
class Karpenter:
    batch_idle: float = 1.0
    batch_max: float = 10.0
    consolidation: str = "WhenEmptyOrUnderutilized"
    consolidate_after: float = 30.0
    budget_nodes: str = "10%"  # nodes disrupted at once: a count or a percentage

    def budget(self, n_nodes: int) -> int:
        b = self.budget_nodes
        if b.endswith("%"):
            return math.ceil(n_nodes * float(b[:-1]) / 100.0)
        return int(b)


@dataclass
class Prices:
    """Unit prices per hour; a node costs gpus*gpu + cores*cpu + GiB*memory unless its group sets a price."""

    gpu: float = 1.0
    cpu: float = 0.0
    memory: float = 0.0

    def node(self, group: NodeGroup) -> float:
        if group.price is not None:
            return group.price
        return self.of(group.template.allocatable, group.gpus * 1000)

    def of(self, resources: dict[str, int], gpu_milli: int) -> float:
        cores = resources.get("cpu", 0) / 1000.0
        gib = resources.get("memory", 0) / 2**30
        return self.gpu * gpu_milli / 1000.0 + self.cpu * cores + self.memory * gib


@dataclass
class Balancing:
    """--balancing-ignore-label, --balancing-label and the similarity tolerances of
    ``--balance-similar-node-groups`` (CA's defaults)."""

    ignore_labels: list[str] = field(default_factory=list)
    labels: list[str] = field(default_factory=list)  # set: only these labels decide similarity
    memory_difference_ratio: float = 0.015
    max_allocatable_difference_ratio: float = 0.05
    max_free_difference_ratio: float = 0.05


@dataclass
class AutoscalerConfig:
    node_groups: list[NodeGroup] = field(default_factory=list)
    mode: str = "cluster-autoscaler"
    expander: str = "least-waste"
    priorities: dict[int, list[str]] = field(default_factory=dict)  # priority expander: priority -> regexes
    scan_interval: float = 10.0
    provisioning_delay: Delay = field(default_factory=Delay)
    max_node_provision_time: float = 900.0
    max_nodes_total: int = 0  # 0: no limit
    expendable_pods_priority_cutoff: int = -10
    new_pod_scale_up_delay: float = 0.0
    scale_down: ScaleDown = field(default_factory=ScaleDown)
    karpenter: Karpenter = field(default_factory=Karpenter)
    prices: Prices = field(default_factory=Prices)
    resource_limits: ResourceLimits = field(default_factory=ResourceLimits)  # --cores/memory/gpu-total
    enforce_node_group_min_size: bool = False
    balance_similar_node_groups: bool = False
    balancing: Balancing = field(default_factory=Balancing)
    max_nodes_per_scale_up: int = 1000  # --max-nodes-per-scaleup: the estimator's node budget per group
    node_pools: list[NodePool] = field(default_factory=list)  # Karpenter-like: none, one implicit pool
    spot: SpotOptions = field(default_factory=SpotOptions)
    # node readiness and health (kubesched.autoscale.health): CA's --ok-total-unready-count,
    # --max-total-unready-percentage and --max-node-startup-time
    ok_total_unready_count: int = 3
    max_total_unready_percentage: float = 45.0
    max_node_startup_time: float = 900.0
    never_ready_fraction: float = 0.0  # simulator: the share of new nodes that never become Ready

    @property
    def expanders(self) -> list[str]:
        """``expander`` as CA's chain: each filters the options for the next (``priority,least-waste``)."""
        return [e.strip() for e in self.expander.split(",")]

    def group(self, name: str) -> NodeGroup:
        return next(g for g in self.node_groups if g.name == name)

    def validate(self, source: str | None = None, *, groups_required: bool = True) -> AutoscalerConfig:
        """Check values set in Python the way ``load`` checks a file's (part by part, in this order)."""

        def err(path: str, msg: str) -> InputError:
            return InputError(msg, source=source, path=path)

        _check_scale_up(self, err)
        _check_durations(self, err)
        _check_readiness(self, err)
        _check_provisioning_delay(self.provisioning_delay, err)
        _check_karpenter(self.karpenter, err)
        _check_prices(self.prices, err)
        _check_node_groups(self.node_groups, groups_required, err)
        _check_priorities(self.priorities, err)
        return self


#: ``validate``'s error maker: (field path, message) -> the InputError naming the source
Err = Callable[[str, str], InputError]


def _check_scale_up(cfg: AutoscalerConfig, err: Err) -> None:
    """The mode, the expander chain, the loop's intervals and the scale-up limits."""
    if cfg.mode not in MODES:
        raise err("mode", f'unknown mode "{cfg.mode}" (known: {", ".join(MODES)})')
    _check_expander_chain(cfg.expanders, err)
    for name, v in (
        ("scanInterval", cfg.scan_interval),
        ("maxNodeProvisionTime", cfg.max_node_provision_time),
    ):
        if not v > 0:
            raise err(name, f"must be greater than 0 seconds, got {v:g}")
    if cfg.scan_interval < MIN_SCAN_INTERVAL:
        raise err("scanInterval", f"must be at least {MIN_SCAN_INTERVAL:g} seconds, got {cfg.scan_interval:g}")
    if cfg.max_nodes_total < 0:
        raise err("maxNodesTotal", f"must be 0 (no limit) or more, got {cfg.max_nodes_total}")
    if cfg.max_nodes_per_scale_up < 1:
        raise err("maxNodesPerScaleUp", f"must be at least 1, got {cfg.max_nodes_per_scale_up}")
    _check_limits(cfg.resource_limits, err)
    b = cfg.balancing
    for name, v in (
        ("memoryDifferenceRatio", b.memory_difference_ratio),
        ("maxAllocatableDifferenceRatio", b.max_allocatable_difference_ratio),
        ("maxFreeDifferenceRatio", b.max_free_difference_ratio),
    ):
        if not (math.isfinite(v) and 0 <= v <= 1):
            raise err(name, f"must be between 0 and 1, got {v:g}")
    if not INT32[0] <= cfg.expendable_pods_priority_cutoff <= INT32[1]:
        raise err("expendablePodsPriorityCutoff", f"must be a pod priority, in [{INT32[0]}, {INT32[1]}]")


def _check_durations(cfg: AutoscalerConfig, err: Err) -> None:
    """The delays and waits (0 or more seconds) and the scale-down utilisation thresholds."""
    sd = cfg.scale_down
    for name, v in (
        ("newPodScaleUpDelay", cfg.new_pod_scale_up_delay),
        ("scaleDown.unneededTime", sd.unneeded_time),
        ("scaleDown.delayAfterAdd", sd.delay_after_add),
        ("scaleDown.delayAfterDelete", sd.delay_after_delete),
        ("scaleDown.delayAfterFailure", sd.delay_after_failure),
        ("scaleDown.unreadyTime", sd.unready_time),
        ("maxNodeStartupTime", cfg.max_node_startup_time),
        ("karpenter.batchIdleDuration", cfg.karpenter.batch_idle),
        ("karpenter.batchMaxDuration", cfg.karpenter.batch_max),
        ("karpenter.consolidateAfter", cfg.karpenter.consolidate_after),
    ):
        if not (math.isfinite(v) and v >= 0):
            raise err(name, f"must be 0 or more seconds, got {v:g}")
    for name, v in (("scaleDown.utilizationThreshold", sd.utilization_threshold), ("scaleDown.gpuUtilizationThreshold", sd.gpu_utilization_threshold)):
        if not 0 <= v <= 1:
            raise err(name, f"must be between 0 and 1, got {v:g}")


def _check_readiness(cfg: AutoscalerConfig, err: Err) -> None:
    """The health rule's thresholds and the simulator's share of nodes that never become Ready."""
    if cfg.ok_total_unready_count < 0:
        raise err("okTotalUnreadyCount", f"must be 0 or more, got {cfg.ok_total_unready_count}")
    if not (math.isfinite(cfg.max_total_unready_percentage) and 0 <= cfg.max_total_unready_percentage <= 100):
        raise err("maxTotalUnreadyPercentage", f"must be a percentage from 0 to 100, got {cfg.max_total_unready_percentage:g}")
    if not (math.isfinite(cfg.never_ready_fraction) and 0 <= cfg.never_ready_fraction <= 1):
        raise err("neverReadyFraction", f"must be between 0 and 1, got {cfg.never_ready_fraction:g}")


def _check_provisioning_delay(d: Delay, err: Err) -> None:
    if d.dist not in DELAY_DISTS:
        raise err("provisioningDelay.dist", f'unknown value "{d.dist}" (known: {", ".join(DELAY_DISTS)})')
    if not (d.a >= 0 and d.b >= 0 and math.isfinite(d.a) and math.isfinite(d.b)):
        raise err("provisioningDelay", "must be 0 or more seconds")
    if d.dist == "uniform" and d.a > d.b:
        raise err("provisioningDelay.min", f"min ({d.a:g}) is greater than max ({d.b:g})")
    if d.dist == "lognormal" and d.b > MAX_SIGMA:
        raise err("provisioningDelay.sigma", f"must be at most {MAX_SIGMA:g}, got {d.b:g}")


def _check_karpenter(k: Karpenter, err: Err) -> None:
    if k.consolidation not in CONSOLIDATION:
        raise err("karpenter.consolidationPolicy", f'unknown value "{k.consolidation}" (known: {", ".join(CONSOLIDATION)})')
    if not re.fullmatch(r"\d+%?", k.budget_nodes):
        raise err("karpenter.budgets.nodes", f'invalid value "{k.budget_nodes}": a count or a percentage ("10%")')


def _check_prices(p: Prices, err: Err) -> None:
    for name, v in (("prices.gpu", p.gpu), ("prices.cpu", p.cpu), ("prices.memory", p.memory)):
        if not (math.isfinite(v) and v >= 0):
            raise err(name, f"must be 0 or more, got {v:g}")


def _check_node_groups(groups: list[NodeGroup], required: bool, err: Err) -> None:
    if not groups and required:
        raise err("nodeGroups", "at least one node group is required")
    seen: set[str] = set()
    for i, g in enumerate(groups):
        p = join_path("nodeGroups", i)
        if g.name in seen:
            raise err(join_path(p, "name"), f'duplicate node group "{g.name}"')
        seen.add(g.name)
        if g.min_size < 0:
            raise err(join_path(p, "min"), f"must be 0 or more, got {g.min_size}")
        if g.min_size > g.max_size:
            raise err(join_path(p, "min"), f"min ({g.min_size}) is greater than max ({g.max_size})")
        if g.max_size > MAX_GROUP_SIZE:
            raise err(join_path(p, "max"), f"must be at most {MAX_GROUP_SIZE:,}, got {g.max_size}")
        if g.price is not None and not (math.isfinite(g.price) and g.price >= 0):
            raise err(join_path(p, "price"), f"must be 0 or more, got {g.price:g}")


def _check_priorities(priorities: dict[int, list[str]], err: Err) -> None:
    for prio, patterns in priorities.items():
        for j, pat in enumerate(patterns):
            try:
                re.compile(pat)
            except re.error as e:
                raise err(join_path(join_path("priorities", str(prio)), j), f"invalid regular expression: {e}") from None


def _check_expander_chain(names: list[str], err: Err) -> None:
    """expander_factory.go's checks: known names, none twice, none after ``random`` (which always
    returns one option, so a later one would never be used)."""
    seen: set[str] = set()
    for i, name in enumerate(names):
        if name not in EXPANDERS:
            raise err("expander", f'unknown expander "{name}" (known: {", ".join(EXPANDERS)})')
        if name in seen:
            raise err("expander", f'expander "{name}" is given twice; each may appear once')
        if i and names[i - 1] == "random":
            raise err("expander", f'expander "{name}" comes after "random", which always returns one option, so it would never be used')
        seen.add(name)


def _check_limits(limits: ResourceLimits, err: Err) -> None:
    for r, mx in limits.max.items():
        key = {CORES: "coresTotal", MEMORY: "memoryTotal"}.get(r, f"gpuTotal.{r}")
        lo = limits.min.get(r, 0)
        if lo < 0 or mx < 0:
            raise err(key, f"min and max must be 0 or more, got {lo}:{mx}")
        if lo > mx:
            raise err(key, f"min ({lo}) is greater than max ({mx})")

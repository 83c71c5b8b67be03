"""Cluster Autoscaler's expanders: which node group to grow when several could help.

Each filter narrows the options as ``cluster-autoscaler/expander/<name>`` does; ties left after
it are broken at random (CA's fallback). ``price`` picks one option itself, as upstream. A chain
(``priority,least-waste``) runs the filters in turn, as ``expander/factory/chain.go``.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from kubesched.api.objects import Node, Pod
from kubesched.autoscale.config import Prices
from kubesched.gpu.model import node_gpu_count
from kubesched.sim.gpu import pod_gpu_milli


@dataclass
class Option:
    """Growing ``group`` by ``node_count`` nodes would place ``pods``."""

    group: str
    node_count: int
    pods: list[Pod] = field(default_factory=list)
    template: Node | None = None  # the group's node (CA passes nodeInfos by group id)
    node_price: float = 0.0  # per node-hour (price expander)


def least_waste(options: list[Option]) -> list[Option]:
    """waste.go: the options wasting the least fraction of CPU plus memory of the new nodes."""
    best: list[Option] = []
    best_score = 0.0
    for o in options:
        if o.template is None:
            continue
        cpu = sum(p.requests.get("cpu", 0) for p in o.pods)
        mem = sum(p.requests.get("memory", 0) for p in o.pods)
        avail_cpu = o.template.allocatable.get("cpu", 0) * o.node_count
        avail_mem = o.template.allocatable.get("memory", 0) * o.node_count
        wasted_cpu = (avail_cpu - cpu) / avail_cpu if avail_cpu else 0.0
        wasted_mem = (avail_mem - mem) / avail_mem if avail_mem else 0.0
        score = wasted_cpu + wasted_mem
        if best and score == best_score:
            best.append(o)
        if not best or score < best_score:
            best_score, best = score, [o]
    return best


def most_pods(options: list[Option]) -> list[Option]:
    """mostpods.go: the options that place the most pods."""
    top = max((len(o.pods) for o in options), default=0)
    return [o for o in options if len(o.pods) == top]


def least_nodes(options: list[Option]) -> list[Option]:
    """leastnodes.go: the options that need the fewest nodes; an option adding no node is not
    valid (none left: no option)."""
    valid = [o for o in options if o.node_count > 0]
    low = min((o.node_count for o in valid), default=0)
    return [o for o in valid if o.node_count == low]


def priority(options: list[Option], priorities: dict[int, list[str]]) -> list[Option]:
    """priority.go: the options whose group name matches a regular expression of the highest
    priority that matches any; all options when none matches."""
    compiled = {p: [re.compile(r) for r in rs] for p, rs in priorities.items()}
    best: list[Option] = []
    best_prio = 0
    for o in options:
        for prio, regs in compiled.items():
            if not any(r.search(o.group) for r in regs):
                continue
            if not best or prio > best_prio:
                best, best_prio = [o], prio
            elif prio == best_prio and o not in best:
                best.append(o)
    return best or list(options)


def _preferred_cpu(cluster_nodes: int) -> int:
    """SimplePreferredNodeProvider: the preferred node size grows with the cluster (milli-CPU)."""
    for limit, cores in ((2, 1), (6, 2), (20, 4), (60, 8), (200, 16)):
        if cluster_nodes <= limit:
            return cores * 1000
    return 32 * 1000


def price(options: list[Option], prices: Prices, cluster_nodes: int) -> list[Option]:
    """price.go: (node price + stabilisation) / (pod price + stabilisation), times the node's
    unfitness against the preferred node (1000 for GPU nodes); the lowest score wins."""
    stab = prices.of({"cpu": 500, "memory": 500 * 2**20}, 0)
    preferred = _preferred_cpu(cluster_nodes)
    best: Option | None = None
    best_score = 0.0
    for o in options:
        if o.template is None:
            continue
        node_total = o.node_price * o.node_count
        pod_total = sum(prices.of(p.requests, pod_gpu_milli(p)) for p in o.pods)
        den = pod_total + stab
        ratio = (node_total + stab) / den if den > 0 else (math.inf if node_total + stab > 0 else 1.0)
        if node_gpu_count(o.template) > 0:
            unfit = 1000.0
        else:
            cpu = max(o.template.allocatable.get("cpu", 0), 1)
            u = max(preferred / cpu, cpu / preferred)
            unfit = (u - 1.0) * (1.0 - math.tanh((o.node_count - 1) / 15.0)) + 1.0
        score = unfit * ratio
        if best is None or best_score > score:
            best, best_score = o, score
    return [best] if best is not None else []


Filter = Callable[[list[Option]], list[Option]]
Strategy = Callable[[list[Option]], "Option | None"]


def chain(filters: list[Filter], fallback: Strategy, options: list[Option]) -> Option | None:
    """chain.go: each filter narrows the options for the next; one option left ends the chain;
    the fallback (random) chooses among what is left."""
    left = list(options)
    for f in filters:
        left = f(left)
        if len(left) == 1:
            return left[0]
    return fallback(left)


class Expander:
    """``best(options)``: the chosen option (None when there is none). ``name`` is one expander or
    a chain, as CA's ``--expander=priority,least-waste``."""

    def __init__(self, name: str, rng: np.random.Generator, *, priorities: dict[int, list[str]] | None = None, prices: Prices | None = None) -> None:
        self.names = [n.strip() for n in name.split(",")]
        self.rng = rng
        self.priorities = priorities or {}
        self.prices = prices or Prices()

    def _filter(self, name: str, cluster_nodes: int) -> Filter:
        if name == "least-waste":
            return least_waste
        if name == "most-pods":
            return most_pods
        if name == "least-nodes":
            return least_nodes
        if name == "priority":
            return lambda opts: priority(opts, self.priorities)
        if name == "price":
            return lambda opts: price(opts, self.prices, cluster_nodes)
        return lambda opts: [o] if (o := self.random(opts)) is not None else []

    def random(self, options: list[Option]) -> Option | None:
        """random.go: any option (no draw when there is one or none)."""
        if len(options) <= 1:
            return options[0] if options else None
        return options[int(self.rng.integers(len(options)))]

    def best(self, options: list[Option], cluster_nodes: int = 0) -> Option | None:
        return chain([self._filter(n, cluster_nodes) for n in self.names], self.random, options)

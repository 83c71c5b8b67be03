"""The NodePools of the Karpenter-like provisioner (``NodePoolsMixin``, a part of
``kubesched.autoscale.karpenter.KarpenterLike``): the pools heaviest first, each pool's offerings
(instance type by capacity type, cheapest first), which pool a node belongs to, what its nodes
count against its limits, and the NodeClaims of its nodes.
"""

from __future__ import annotations

from kubesched.api.objects import Node
from kubesched.autoscale.claims import pool_node
from kubesched.autoscale.config import AutoscalerConfig
from kubesched.autoscale.core import Upcoming
from kubesched.autoscale.disruption import Offering, capacity_type_of
from kubesched.autoscale.nodepool import (
    CAPACITY_TYPE,
    INSTANCE_TYPE,
    NODEPOOL_LABEL,
    NodePool,
    node_claim,
    node_resources,
)
from kubesched.state.snapshot import Snapshot


def add_to(total: dict[str, int], extra: dict[str, int]) -> None:
    for k, v in extra.items():
        total[k] = total.get(k, 0) + v


class NodePoolsMixin:
    """A mixin: ``cfg`` and ``upcoming`` are the loop's (kubesched.autoscale.core); ``set_pools``
    sets the rest."""

    cfg: AutoscalerConfig
    upcoming: dict[str, Upcoming]
    pools: list[NodePool]
    pool_by_name: dict[str, NodePool]
    offers_by_pool: dict[str, list[Offering]]

    def set_pools(self, pools: list[NodePool]) -> None:
        self.pools = sorted(pools, key=lambda p: -p.weight)  # none: the legacy model
        self.pool_by_name = {p.name: p for p in self.pools}
        self.offers_by_pool = {}

    def offerings(self, pool: NodePool) -> list[Offering]:
        """The pool's instance types (node groups) in each capacity type its requirements
        admit, cheapest first (spot at the spot price)."""
        hit = self.offers_by_pool.get(pool.name)
        if hit is not None:
            return hit
        out = []
        for g in self.cfg.node_groups:
            for ct in pool.capacity_types():
                labels = {**g.template.labels, **pool.labels, INSTANCE_TYPE: g.name, CAPACITY_TYPE: ct, NODEPOOL_LABEL: pool.name}
                if pool.admits(labels):
                    price = self.cfg.spot.price(self.cfg.prices.node(g), ct)
                    out.append(Offering(pool, g.name, ct, price, pool_node(g.template, f"claim-{g.name}-{ct}", pool, g.name, ct)))
        self.offers_by_pool[pool.name] = sorted(out, key=lambda o: o.price)
        return self.offers_by_pool[pool.name]

    def pool_of(self, node: Node) -> NodePool | None:
        return self.pool_by_name.get(node.labels.get(NODEPOOL_LABEL, ""))

    def node_claims(self, snap: Snapshot) -> list[dict[str, object]]:
        """The NodeClaims of the nodes launched from NodePools, registered or still coming, as
        Karpenter writes them (kubesched.autoscale.nodepool.node_claim)."""
        out = []
        for node, registered in [*((n, True) for n in snap.nodes), *((u.node, False) for u in self.upcoming.values())]:
            pool = self.pool_of(node)
            if pool is not None:
                out.append(node_claim(pool, node, node.labels[INSTANCE_TYPE], capacity_type_of(node), registered))
        return out

    def pool_usage(self, snap: Snapshot) -> dict[str, dict[str, int]]:
        """What each pool's nodes (registered and upcoming) count against its limits."""
        used: dict[str, dict[str, int]] = {p.name: {} for p in self.pools}
        nodes = [*snap.nodes, *(up.node for up in self.upcoming.values())]
        for node in nodes:
            pool = self.pool_of(node)
            if pool is not None:
                add_to(used[pool.name], node_resources(node))
        return used

    def pool_nodes(self, snap: Snapshot) -> dict[str, int]:
        """Each pool's registered nodes: what a budget's percentage is of."""
        out = {p.name: 0 for p in self.pools}
        for node in snap.nodes:
            pool = self.pool_of(node)
            if pool is not None:
                out[pool.name] += 1
        return out

"""Expiration of the nodes the provisioner launched, ported from kubernetes-sigs/karpenter
pkg/controllers/nodeclaim/expiration/suite_test.go: 4 of 10 cases (the "Expiration" table's two
entries, "should not remove the NodeClaims when expiration is disabled", "should not remove
non-expired NodeClaims"; the others read metrics, requeue intervals or a NodeClaim apart from its
node, which this model does not have). A claim keeps the expireAfter its pool had when it was made."""

from __future__ import annotations

import numpy as np

from kubesched.autoscale.config import AutoscalerConfig, NodeGroup
from kubesched.autoscale.configfile import template_node
from kubesched.autoscale.karpenter import KarpenterLike
from kubesched.autoscale.nodepool import read_node_pools
from kubesched.testing import make_node, make_pod
from tests.autoscale.karpenter_helpers import View
from tests.autoscale.loop_helpers import Recorder

GROUP = NodeGroup("it", template_node("it", {"cpu": "4", "memory": "16Gi"}))


def pool(expire_after: str) -> dict:
    spec = {"requirements": [], "expireAfter": expire_after}
    return {"apiVersion": "karpenter.sh/v1", "kind": "NodePool", "metadata": {"name": "np"}, "spec": {"template": {"spec": spec}}}


def launched(expire_after: str) -> tuple[KarpenterLike, Recorder, dict]:
    """A loop that made one claim at t = 0; the node it registered as."""
    cfg = AutoscalerConfig([GROUP], mode="karpenter", node_pools=read_node_pools([pool(expire_after)])).validate()
    rec = Recorder()
    loop = KarpenterLike(cfg, rec, np.random.default_rng(0))
    (offer,) = loop.offerings(loop.pools[0])
    name = loop.launch(offer, 0.0)
    node = loop.upcoming[name].node
    return loop, rec, node.raw


def test_should_remove_nodeclaims_that_are_expired():
    loop, rec, node = launched("30s")
    loop.disrupt(View([node], [], now=60.0), 60.0)
    assert rec.deleted == [node["metadata"]["name"]]


def test_should_ignore_expired_nodeclaims_that_are_not_managed_by_this_karpenter_instance():
    loop, rec, _ = launched("30s")
    other = make_node("other", cpu="4", memory="16Gi", labels={"karpenter.sh/nodepool": "np", "autoscaling.kubesched.io/node-group": "it"})
    loop.disrupt(View([other], [pod_on(other)], now=60.0), 60.0)  # of the pool, not launched by this loop
    assert rec.deleted == []


def pod_on(node: dict) -> dict:
    """A pod bound to ``node``: it is not empty, so emptiness leaves it alone."""
    return make_pod("p", requests={"cpu": "1"}, node=node["metadata"]["name"])


def test_should_not_remove_the_nodeclaims_when_expiration_is_disabled():
    loop, rec, node = launched("Never")
    ten_years = 10 * 365 * 86400.0
    loop.disrupt(View([node], [pod_on(node)], now=ten_years), ten_years)
    assert rec.deleted == []


def test_should_not_remove_non_expired_nodeclaims():
    loop, rec, node = launched("200s")
    loop.disrupt(View([node], [pod_on(node)], now=100.0), 100.0)
    assert rec.deleted == []
    loop.disrupt(View([node], [pod_on(node)], now=200.0), 200.0)  # and at 200 s it goes
    assert rec.deleted == [node["metadata"]["name"]]


def test_a_claim_keeps_the_expire_after_it_was_made_with():
    loop, rec, node = launched("1h")
    loop.update_pools(read_node_pools([pool("30s")]))
    loop.disrupt(View([node], [pod_on(node)], now=60.0), 60.0)
    assert rec.deleted == []  # not expired: its claim says 1h
    assert rec.created == ["it", "it"]  # but the template changed: drift launches its replacement

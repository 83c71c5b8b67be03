"""A node group whose nodes do not register within ``maxNodeProvisionTime`` backs off: no
scale-up goes to it (its pods are routed to no node of it) until the backoff runs out. Ported from
kubernetes/autoscaler clusterstate/clusterstate_test.go: TestScaleUpBackoff (3 of its 4 checks:
a failed scale-up backs the group off for 5 minutes; it expires; a second failure backs it off
longer. The fourth, a scale-up succeeding while the group backs off, cannot occur here: a group
backing off gets no scale-up). The other tests are kubesched's, on the rules of
utils/backoff/exponential_backoff.go. Unhealthy node groups (too many unready nodes) are in
test_ca_clusterstate.py."""

from __future__ import annotations

from kubesched.autoscale.config import AutoscalerConfig
from tests.autoscale.scaleup_cases import ViewAt, group, loop, node, pod

NODES = [node(f"n{i}", 1000, 1000, "ng1") for i in (1, 2, 3)]  # not named as new nodes are


def case(n_pods: int = 1, **cfg: object):
    c = AutoscalerConfig(node_groups=[group("ng1", 1000, 1000, 1, 10)], max_node_provision_time=120.0, **cfg)
    c.scale_down.enabled = False
    ca, prov = loop(c)
    pending = [pod(f"p{i}", 900) for i in range(n_pods)]

    def at(t: float) -> int:
        """One iteration at time t; the nodes asked for so far (none ever registers)."""
        ca.run_once(ViewAt(t, NODES, pending))
        return len(prov.created)

    return ca, at


def test_scale_up_backoff():
    ca, at = case()
    assert at(0) == 1
    assert at(180) == 1  # the node did not register in 120 s: given up, the group backs off ...
    assert at(479) == 1  # ... for 5 minutes
    assert at(481) == 2  # the backoff expired: asked again
    assert at(602) == 2  # failed again after 121 s: a longer backoff
    assert at(602 + 301) == 2  # still backing off 5 minutes later (10 in all)
    assert at(602 + 601) == 3
    assert ca.stats.failed_nodes == 2


def test_nodes_of_one_scale_up_failing_together_back_off_once():
    """Three nodes given up at once: one 5-minute backoff, not three doublings."""
    _, at = case(n_pods=3)
    assert at(0) == 3
    assert at(120) == 3
    assert at(421) == 6


def test_backoff_grows_to_30_minutes_at_most():
    ca, at = case()
    t = 0.0
    for _ in range(7):
        at(t)
        at(t + 120)  # given up: backs off
        t = ca.groups["ng1"].backoff_until + 1
    assert ca.groups["ng1"].backoff_step == 1800.0


def test_backoff_is_forgotten_three_hours_after_the_last_failure():
    ca, at = case()
    at(0)
    at(120)
    at(421)
    at(541)  # second failure: 10 minutes
    assert ca.groups["ng1"].backoff_step == 600.0
    at(541 + 3 * 3600 + 1)  # long after: asked again ...
    at(541 + 3 * 3600 + 121)  # ... and failed: 5 minutes again
    assert ca.groups["ng1"].backoff_step == 300.0

"""Node readiness end to end in the simulator: ``neverReadyFraction`` of the new nodes register
but never become Ready (condition Ready=False, tainted not-ready, so no pod goes there). Such a
node is NotStarted for ``maxNodeStartupTime`` (its pods wait for it, as for an upcoming node),
then Unready: its pods ask for another node, and scale-down removes it once it has been unneeded
for ``scaleDown.unreadyTime``."""

from __future__ import annotations

from kubesched.autoscale.config import AutoscalerConfig, Delay, NodeGroup, ScaleDown
from kubesched.sim.workload import Workload
from tests.autoscale.test_elastic_sim import SMALL, pods, run


def sim_cfg(fraction: float, **kw: object) -> AutoscalerConfig:
    sd = ScaleDown(unneeded_time=600.0, delay_after_add=0.0, unready_time=1200.0)
    c = AutoscalerConfig(node_groups=[NodeGroup("a", SMALL, 0, 10)], provisioning_delay=Delay("constant", 60.0, 0.0), scale_down=sd,
                         never_ready_fraction=fraction, **kw)  # fmt: skip
    return c.validate()


def test_nodes_that_never_become_ready_hold_no_pod_and_are_replaced_then_removed():
    """All new nodes stay unready: the pod never binds. The first node (registered at 60 s) is
    NotStarted until 960 s, so no second node is asked for before; after it, one every 960 s
    (60 s to register, 900 s not started); each is removed 1200 s after it turned Unready."""
    ps, arr, dur = pods(1, duration=None)
    res = run(Workload([], ps, arr, dur), sim_cfg(1.0), end=3000.0)
    s = res.summary
    assert s["bound"] == 0 and s["failed_nodes"] == 0
    assert s["nodes_added"] == 4  # at 0, 960, 1920, 2880
    assert s["scale_downs"] == 1  # the first, at 960 + 1200 = 2160 (the second's turn comes at 3120)
    t, nodes = res.series["t"], res.series["nodes"]
    assert max(n for tt, n in zip(t, nodes, strict=True) if tt < 960) == 1


def test_without_never_ready_nodes_every_pod_binds_and_draws_are_unchanged():
    ps, arr, dur = pods(4, duration=None)
    ready = run(Workload([], ps, arr, dur), sim_cfg(0.0), end=1800.0).summary
    assert ready["bound"] == 4 and ready["nodes_added"] == 4
    some = run(Workload([], ps, arr, dur), sim_cfg(0.5), end=1800.0).summary
    again = run(Workload([], ps, arr, dur), sim_cfg(0.5), end=1800.0).summary
    assert some["nodes_added"] > ready["nodes_added"]  # the unready ones are replaced
    assert {k: some[k] for k in ("bound", "nodes_added", "scale_downs")} == {k: again[k] for k in ("bound", "nodes_added", "scale_downs")}

"""The Karpenter-like provisioner with NodePools: limits, capacity types and spot prices, spot
interruptions, do-not-disrupt, and consolidation (delete, replace by a cheaper node, multi-node)."""

from __future__ import annotations

import pytest

from kubesched.api.objects import Pod
from kubesched.app import build_registry
from kubesched.autoscale.config import AutoscalerConfig, Delay, NodeGroup
from kubesched.autoscale.configfile import load, template_node
from kubesched.autoscale.disruption import Candidate, Command, multi_node
from kubesched.autoscale.nodepool import NodePool, node_claim, read_node_pools
from kubesched.autoscale.scenario import profile_config
from kubesched.autoscale.sim import simulate_elastic
from kubesched.autoscale.spot import SpotOptions
from kubesched.errors import InputError
from kubesched.gpu.model import GPU_COUNT, GPU_MILLI
from kubesched.sim.workload import Workload
from kubesched.testing import make_pod

REG = build_registry()
CONFIG = profile_config("pack", REG)
GPU4 = template_node("gpu4", {"cpu": "16", "memory": "64Gi", "gpus": 4})
GPU1 = template_node("gpu1", {"cpu": "16", "memory": "64Gi", "gpus": 1})


def gpu_pods(durations: list[float], at: float = 0.0, prefix: str = "g", annotations: dict | None = None):
    out = []
    for i in range(len(durations)):
        doc = make_pod(f"{prefix}{i}", requests={"cpu": "1", "memory": "1Gi"})
        doc["metadata"]["annotations"] = {GPU_COUNT: "1", GPU_MILLI: "1000", **(annotations or {})}
        out.append(Pod.parse(doc))
    return out, [at] * len(durations), list(durations)


def pool_doc(name: str = "default", *, capacity=("on-demand",), limits=None, after="30s", weight=None, types=None) -> dict:
    reqs = [{"key": "karpenter.sh/capacity-type", "operator": "In", "values": list(capacity)}]
    if types:
        reqs.append({"key": "node.kubernetes.io/instance-type", "operator": "In", "values": list(types)})
    spec = {"template": {"spec": {"requirements": reqs}}, "disruption": {"consolidateAfter": after}}
    if limits:
        spec["limits"] = limits
    if weight:
        spec["weight"] = weight
    return {"apiVersion": "karpenter.sh/v1", "kind": "NodePool", "metadata": {"name": name}, "spec": spec}


def run(wl_pods, pools: list[dict], groups=None, end: float = 3600.0, seed: int = 0, spot: SpotOptions | None = None):
    ps, arr, dur = wl_pods
    cfg = AutoscalerConfig(
        groups or [NodeGroup("gpu4", GPU4, 0, 10)],
        mode="karpenter",
        provisioning_delay=Delay("constant", 60.0, 0.0),
        node_pools=read_node_pools(pools),
        spot=spot or SpotOptions(),
    ).validate()
    return simulate_elastic(CONFIG, Workload([], ps, arr, dur), cfg, end_time=end, seed=seed, registry=REG)


def test_limits_cap_what_a_pool_launches():
    res = run(gpu_pods([1200.0] * 16), [pool_doc(limits={"nvidia.com/gpu": "8"})])
    assert res.summary["nodes_added"] == 2  # 16 GPUs asked, 8 allowed: two 4-GPU nodes
    assert max(res.series["gpu_provisioned"]) == 8
    unlimited = run(gpu_pods([1200.0] * 16), [pool_doc()])
    assert unlimited.summary["nodes_added"] == 4


def test_limits_on_cpu_and_a_second_pool_by_weight():
    # the heavier pool launches first; once its 32 CPUs are used, the other takes over
    pools = [pool_doc("small", limits={"cpu": "32"}, weight=50), pool_doc("rest")]
    res = run(gpu_pods([1200.0] * 16), pools)
    assert res.summary["nodes_added"] == 4 and res.summary["bound"] == 16


def test_spot_nodes_cost_the_spot_price():
    od = run(gpu_pods([1200.0] * 4), [pool_doc()]).summary
    spot = run(gpu_pods([1200.0] * 4), [pool_doc(capacity=("spot", "on-demand"))], spot=SpotOptions(0.3)).summary
    assert od["cost_spot"] == 0 and od["cost_on_demand"] == pytest.approx(od["gpu_hours"])
    assert spot["gpu_hours"] == pytest.approx(od["gpu_hours"])
    assert spot["cost"] == pytest.approx(0.3 * od["cost"]) and spot["cost_spot"] == pytest.approx(spot["cost"])


def test_spot_interruptions_are_seeded_and_reschedule_pods():
    pools = [pool_doc(capacity=("spot",))]
    wl = gpu_pods([5000.0] * 8)
    a = run(wl, pools, spot=SpotOptions(0.4, 2.0), end=3600.0, seed=1).summary
    b = run(wl, pools, spot=SpotOptions(0.4, 2.0), end=3600.0, seed=1).summary
    none = run(wl, pools, spot=SpotOptions(0.4, 0.0), end=3600.0, seed=1).summary
    assert a["spot_interruptions"] > 0 and a == {**b, "run": a["run"]}  # same seed, same run
    assert a["evictions"] > 0 and a["nodes_added"] > none["nodes_added"]  # new capacity for the evicted pods
    assert none["spot_interruptions"] == 0 and none["evictions"] == 0


def test_consolidation_deletes_a_node_whose_pods_fit_elsewhere():
    # five pods: a 4-GPU node and a second one; three of the first node's pods finish at 300 s,
    # then both nodes hold one pod each and one of them can go
    res = run(gpu_pods([300.0, 300.0, 300.0, 5000.0, 5000.0]), [pool_doc()])
    assert res.summary["nodes_added"] == 2 and res.summary["scale_downs"] == 1
    assert res.summary["evictions"] == 1


def test_do_not_disrupt_on_a_pod_blocks_consolidation():
    ps, arr, dur = gpu_pods([300.0, 300.0, 300.0], prefix="short")
    qs, qarr, qdur = gpu_pods([5000.0, 5000.0], prefix="long", annotations={"karpenter.sh/do-not-disrupt": "true"})
    res = run((ps + qs, arr + qarr, dur + qdur), [pool_doc()])
    assert res.summary["nodes_added"] == 2 and res.summary["scale_downs"] == 0


def test_replace_with_a_cheaper_node():
    # four pods on one 4-GPU node (price 4); three finish; the last fits a 1-GPU node (price 1)
    groups = [NodeGroup("gpu4", GPU4, 0, 10), NodeGroup("gpu1", GPU1, 0, 10)]
    res = run(gpu_pods([300.0, 300.0, 300.0, 5000.0]), [pool_doc()], groups=groups)
    s = res.summary
    assert s["nodes_added"] == 2 and s["scale_downs"] == 1 and s["evictions"] == 1
    assert res.series["gpu_provisioned"][-1] == 1  # the 1-GPU replacement, the 4-GPU node gone
    assert s["bound"] == 4


def test_no_replacement_when_the_pool_admits_no_cheaper_type():
    groups = [NodeGroup("gpu4", GPU4, 0, 10), NodeGroup("gpu1", GPU1, 0, 10)]
    res = run(gpu_pods([300.0, 300.0, 300.0, 5000.0]), [pool_doc(types=["gpu4"])], groups=groups)
    assert res.summary["nodes_added"] == 1 and res.summary["scale_downs"] == 0


def test_spot_nodes_are_not_replaced_by_spot():
    groups = [NodeGroup("gpu4", GPU4, 0, 10), NodeGroup("gpu1", GPU1, 0, 10)]
    res = run(gpu_pods([300.0, 300.0, 300.0, 5000.0]), [pool_doc(capacity=("spot",))], groups=groups)
    assert res.summary["nodes_added"] == 1 and res.summary["scale_downs"] == 0  # SpotToSpotConsolidation is off


def cand(name: str, pool: NodePool) -> Candidate:
    return Candidate(name, pool, "gpu4", "on-demand", 4.0, [])


def test_multi_node_takes_the_longest_prefix_that_consolidates():
    pool = NodePool("p")
    cands = [cand(f"n{i}", pool) for i in range(6)]
    tried = []

    def attempt(group):
        tried.append(len(group))
        return Command(group) if len(group) <= 4 else None

    cmd = multi_node(cands, {"p": 10}, attempt)
    assert [c.name for c in cmd.candidates] == ["n0", "n1", "n2", "n3"]
    assert tried == [4, 5]  # binary search: mid+1 of [1, 5], then of [4, 5]
    # the budget cuts the candidates first; then every one of them may go at once
    cmd = multi_node(cands, {"p": 3}, lambda g: Command(g))
    assert len(cmd.candidates) == 3
    assert multi_node(cands, {"p": 1}, lambda g: Command(g)) is None  # one node: single-node's job


def test_autoscaler_file_takes_node_pools_and_spot():
    doc = {
        "mode": "karpenter",
        "nodeGroups": [{"name": "gpu4", "template": {"cpu": "16", "memory": "64Gi", "gpus": 4}}],
        "nodePools": [pool_doc(limits={"cpu": "1000", "memory": "1000Gi", "nvidia.com/gpu": "64"})],
        "spot": {"priceFactor": 0.25, "interruptionRate": 0.1},
    }
    doc["nodePools"][0]["spec"]["template"]["spec"]["expireAfter"] = "24h"
    cfg = load(doc, "as.yaml")
    (p,) = cfg.node_pools
    assert p.limits == {"cpu": 1_000_000, "memory": 1000 * 2**30, "nvidia.com/gpu": 64}
    assert p.expire_after == 24 * 3600 and p.consolidate_after == 30
    assert cfg.spot == SpotOptions(0.25, 0.1)


@pytest.mark.parametrize(
    ("change", "path", "text"),
    [
        ({"apiVersion": "karpenter.sh/v1beta1"}, "nodePools[0].apiVersion", "expected karpenter.sh/v1"),
        ({"kind": "NodeClaim"}, "nodePools[0].kind", "expected NodePool"),
        ({"metadata": {}}, "nodePools[0].metadata.name", "required"),
    ],
)
def test_bad_node_pool_names_the_field(change, path, text):
    with pytest.raises(InputError) as e:
        load({"nodePools": [{**pool_doc(), **change}]}, "as.yaml", groups_required=False)
    assert (e.value.source, e.value.path) == ("as.yaml", path) and text in str(e.value)


def test_bad_spot_and_limits():
    with pytest.raises(InputError, match="must be from 0 to 1"):
        load({"spot": {"priceFactor": 1.5}}, "as.yaml", groups_required=False)
    with pytest.raises(InputError) as e:
        load({"nodePools": [pool_doc(limits={"cpu": "lots"})]}, "as.yaml", groups_required=False)
    assert e.value.path == "nodePools[0].spec.limits.cpu"
    with pytest.raises(InputError) as e:
        load({"nodePools": [pool_doc(after="5 minutes")]}, "as.yaml", groups_required=False)
    assert e.value.path == "nodePools[0].spec.disruption.consolidateAfter"


def test_node_claim_as_karpenter_writes_it():
    (p,) = read_node_pools([pool_doc(capacity=("spot",))])
    from kubesched.autoscale.karpenter import pool_node

    node = pool_node(GPU4, "gpu4-1", p, "gpu4", "spot")
    claim = node_claim(p, node, "gpu4", "spot")
    assert (claim["apiVersion"], claim["kind"]) == ("karpenter.sh/v1", "NodeClaim")
    assert claim["metadata"]["labels"]["karpenter.sh/nodepool"] == "default"
    assert claim["metadata"]["labels"]["karpenter.sh/capacity-type"] == "spot"
    assert {"key": "node.kubernetes.io/instance-type", "operator": "In", "values": ["gpu4"]} in claim["spec"]["requirements"]
    assert claim["spec"]["expireAfter"] == "720h" and claim["status"]["nodeName"] == "gpu4-1"


def test_expire_after_replaces_old_nodes_whatever_the_budget():
    pools = [pool_doc()]
    pools[0]["spec"]["template"]["spec"]["expireAfter"] = "10m"
    pools[0]["spec"]["disruption"]["budgets"] = [{"nodes": "0"}]  # expiration is forceful
    res = run(gpu_pods([5000.0] * 4), pools, end=3600.0)
    s = res.summary
    # the node launched at ~0 s expires at 600 s, its replacement (registered 60 s later) at ~1270 s ...
    assert s["scale_downs"] >= 4 and s["evictions"] >= 16 and s["nodes_added"] == s["scale_downs"] + 1
    never = run(gpu_pods([5000.0] * 4), [pool_doc()], end=3600.0).summary
    assert never["scale_downs"] == 0 and never["nodes_added"] == 1


class Redeploy:
    """Swaps the simulator's provisioner for one whose NodePools change at 600 s (the file edited)."""

    def __init__(self, monkeypatch, new_pools: list[dict]) -> None:
        import kubesched.autoscale.sim as sim
        from kubesched.autoscale.karpenter import KarpenterLike

        pools = read_node_pools(new_pools)

        class Edited(KarpenterLike):
            def run_once(self, view):
                if view.now() >= 600.0 and self.pools[0] is not pools[0]:
                    self.update_pools(pools)
                super().run_once(view)

        monkeypatch.setattr(sim, "KarpenterLike", Edited)


def labelled(team: str, **kw) -> dict:
    doc = pool_doc(**kw)
    doc["spec"]["template"]["metadata"] = {"labels": {"team": team}}
    return doc


def test_drifted_node_is_replaced_before_it_goes(monkeypatch):
    Redeploy(monkeypatch, [labelled("b")])
    res = run(gpu_pods([5000.0] * 4), [labelled("a")], end=1800.0)
    s = res.summary
    assert s["nodes_added"] == 2 and s["scale_downs"] == 1 and s["evictions"] == 4
    t = res.series["t"]
    # the replacement is paid for from the drift (~600 s) on, the old node until it registers
    both = [res.series["gpu_provisioned"][i] for i in range(len(t)) if 630.0 <= t[i] <= 665.0]
    assert both and all(g == 8 for g in both)
    assert res.series["gpu_provisioned"][-1] == 4 and s["bound"] == 4


def test_drift_respects_a_drifted_budget(monkeypatch):
    edited = labelled("b")
    edited["spec"]["disruption"]["budgets"] = [{"nodes": "0", "reasons": ["Drifted"]}]
    Redeploy(monkeypatch, [edited])
    res = run(gpu_pods([5000.0] * 4), [labelled("a")], end=1800.0)
    assert res.summary["nodes_added"] == 1 and res.summary["scale_downs"] == 0


def test_do_not_disrupt_on_the_node_blocks_drift(monkeypatch):
    import kubesched.autoscale.karpenter as karpenter

    real = karpenter.pool_node

    def protected(*args):
        node = real(*args)
        node.raw["metadata"]["annotations"]["karpenter.sh/do-not-disrupt"] = "true"
        return node

    monkeypatch.setattr(karpenter, "pool_node", protected)
    Redeploy(monkeypatch, [labelled("b")])
    res = run(gpu_pods([5000.0] * 4), [labelled("a")], end=1800.0)
    assert res.summary["nodes_added"] == 1 and res.summary["scale_downs"] == 0


def test_loop_lists_its_node_claims():
    from kubesched.autoscale.karpenter import KarpenterLike, pool_node
    from kubesched.autoscale.predicate import node_named
    from kubesched.state.snapshot import Snapshot
    from tests.autoscale.loop_helpers import Recorder

    cfg = AutoscalerConfig([NodeGroup("gpu4", GPU4, 0, 10)], mode="karpenter", node_pools=read_node_pools([pool_doc()]))
    loop = KarpenterLike(cfg.validate(), Recorder(), None)
    (offer,) = loop.offerings(loop.pools[0])
    coming = loop.launch(offer, 0.0)
    snap = Snapshot()
    snap.add_node(pool_node(GPU4, "gpu4-0", loop.pools[0], "gpu4", "on-demand"))
    snap.add_node(node_named(GPU4, "unmanaged"))  # no NodePool: no NodeClaim
    claims = {c["metadata"]["name"]: c for c in loop.node_claims(snap)}
    assert set(claims) == {"gpu4-0", coming}
    assert claims["gpu4-0"]["status"]["nodeName"] == "gpu4-0" and "nodeName" not in claims[coming]["status"]


def test_bad_taints_name_the_field():
    doc = pool_doc()
    doc["spec"]["template"]["spec"]["taints"] = True
    with pytest.raises(InputError) as e:
        load({"nodePools": [doc]}, "as.yaml", groups_required=False)
    assert (e.value.source, e.value.path) == ("as.yaml", "nodePools[0].spec.template.spec.taints")

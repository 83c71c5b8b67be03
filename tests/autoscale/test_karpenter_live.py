"""``kubesched autoscale`` in Karpenter-like mode with NodePools, against the test API server
through the unmodified official client: what an operator sees (Cluster Autoscaler's events and
Karpenter's own, the metrics), the labels and annotations of the nodes it launches, and expiry and
drift read back from the nodes after a restart (a new controller, as after a new options file).
The controller runs iteration by iteration (``Controller.once``); pods are made unschedulable as a
scheduler marks them, and bound as a scheduler binds them."""

from __future__ import annotations

import time

from kubesched.api.objects import Node
from kubesched.autoscale.claims import created_at, pool_node
from kubesched.autoscale.live import KWOK_TAINT, build_controller, node_body
from kubesched.autoscale.nodepool import POOL_HASH, POOL_HASH_VERSION, POOL_HASH_VERSION_KEY
from kubesched.cli import build_parser
from kubesched.live.bodies import rfc3339
from tests.live.live_harness import events, node, pod

TOLERATE = {"tolerations": [{"key": KWOK_TAINT["key"], "operator": "Exists", "effect": "NoSchedule"}]}
UNSCHEDULABLE = {"phase": "Pending", "conditions": [
    {"type": "PodScheduled", "status": "False", "reason": "Unschedulable", "message": "0/1 nodes are available"}]}
READY = {"conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady"}]}


def autoscaler(team: str = "a", expire_after: str = "720h", consolidate_after: str = "0s") -> str:
    return f"""
mode: karpenter
provisioningDelay: 0
karpenter: {{batchIdleDuration: 0, batchMaxDuration: 0}}
nodeGroups:
- {{name: small, template: {{cpu: "2", memory: 4Gi}}, max: 3}}
- {{name: big, template: {{cpu: "8", memory: 16Gi}}, max: 2}}
nodePools:
- apiVersion: karpenter.sh/v1
  kind: NodePool
  metadata: {{name: default}}
  spec:
    template:
      metadata: {{labels: {{team: {team}}}}}
      spec:
        requirements: [{{key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}}]
        expireAfter: {expire_after}
    disruption: {{consolidationPolicy: WhenEmpty, consolidateAfter: {consolidate_after}}}
"""


def controller(kubeconfig: str, tmp_path, text: str):  # noqa: ANN001, ANN201
    cfg = tmp_path / "as.yaml"
    cfg.write_text(text)
    args = build_parser().parse_args(["autoscale", "--kubeconfig", kubeconfig, "--autoscaler", str(cfg), "--address", "off"])
    return build_controller(args)


def once(ctl, n: int = 1) -> None:  # noqa: ANN001
    """``n`` iterations, each with a disruption pass (they run every 10 s of wall time)."""
    for _ in range(n):
        ctl.loop.last_consolidation = -float("inf")
        ctl.once()


def pending(name: str, cpu: str) -> dict:
    return {**pod(name, cpu=cpu, spec=TOLERATE), "status": UNSCHEDULABLE}


def sample(ctl, name: str, **labels: str) -> float | None:  # noqa: ANN001
    return ctl.metrics.registry.get_sample_value(name, labels)


def pool_nodes(kube_api) -> list[dict]:  # noqa: ANN001
    return [n for n in kube_api.list("Node") if "karpenter.sh/nodepool" in n["metadata"]["labels"]]


def test_a_launch_and_an_empty_node_as_an_operator_sees_them(kube_api, kubeconfig, tmp_path):
    ctl = controller(kubeconfig, tmp_path, autoscaler())
    kube_api.create(pending("web", "3"))
    kube_api.create(pending("huge", "100"))
    once(ctl)
    (made,) = pool_nodes(kube_api)
    name = made["metadata"]["name"]
    assert name.startswith("big-")  # the cheapest instance type that holds 3 CPUs
    labels, ann = made["metadata"]["labels"], made["metadata"]["annotations"]
    assert labels["karpenter.sh/nodepool"] == "default" and labels["karpenter.sh/capacity-type"] == "on-demand"
    assert labels["node.kubernetes.io/instance-type"] == "big" and labels["team"] == "a"
    assert labels["karpenter.sh/registered"] == "true" and labels["karpenter.sh/initialized"] == "true"
    (pool,) = ctl.cfg.node_pools
    assert ann[POOL_HASH] == pool.template_hash and ann[POOL_HASH_VERSION_KEY] == POOL_HASH_VERSION
    # Cluster Autoscaler's events, and Karpenter's nomination of the pod to the claim
    (tr,) = events(kube_api, "TriggeredScaleUp", "web")
    assert tr["message"] == "pod triggered scale-up: [{big 0->1 (max: 2)}]" and tr["source"]["component"] == "cluster-autoscaler"
    (nom,) = events(kube_api, "Nominated", "web")
    assert nom["message"] == f"Pod should schedule on: nodeclaim/{name}" and nom["source"]["component"] == "karpenter"
    (nt,) = events(kube_api, "NotTriggerScaleUp", "huge")  # in the same batch as the launch
    assert nt["message"] == "pod didn't trigger scale-up: 1 Insufficient cpu"
    assert sample(ctl, "cluster_autoscaler_scaled_up_nodes_total") == 1
    assert sample(ctl, "karpenter_nodeclaims_created_total", reason="provisioned", nodepool="default", min_values_relaxed="false") == 1

    # the pods go: the node is empty, and emptiness deletes it (consolidateAfter 0s)
    kube_api.delete("Pod", "web", "default")
    kube_api.delete("Pod", "huge", "default")
    once(ctl)
    assert kube_api.get("Node", name) is None
    (sd,) = [e for e in events(kube_api, "ScaleDown") if e["involvedObject"]["kind"] == "Node"]
    assert sd["involvedObject"]["name"] == name and sd["message"] == "marked the node as toBeDeleted/unschedulable"
    term = {e["involvedObject"]["kind"]: e for e in events(kube_api, "DisruptionTerminating")}
    assert term["Node"]["message"] == "Disrupting Node: Empty" and term["Node"]["involvedObject"]["name"] == name
    assert term["NodeClaim"]["message"] == "Disrupting NodeClaim: Empty" and term["NodeClaim"]["involvedObject"]["apiVersion"] == "karpenter.sh/v1"
    assert sample(ctl, "cluster_autoscaler_scaled_down_nodes_total", reason="empty") == 1
    assert sample(ctl, "karpenter_nodeclaims_disrupted_total", reason="empty", nodepool="default", capacity_type="on-demand") == 1


def launched_earlier(kube_api, ctl, name: str, age: float) -> None:  # noqa: ANN001
    """A node of the controller's pool as a controller before a restart launched it ``age``
    seconds ago (its labels, pool hash and creation time), with a pod on it."""
    (p,) = ctl.cfg.node_pools
    g = ctl.cfg.group("big")
    body = node_body(pool_node(g.template, name, p, "big", "on-demand"))
    body["metadata"]["creationTimestamp"] = rfc3339(time.time() - age)
    kube_api.create(body)
    kube_api.create(pod(f"{name}-pod", cpu="1", spec={**TOLERATE, "nodeName": name}))


def test_expiry_survives_a_restart(kube_api, kubeconfig, tmp_path):
    ctl = controller(kubeconfig, tmp_path, autoscaler(expire_after="1h"))
    launched_earlier(kube_api, ctl, "big-old", 2 * 3600.0)
    launched_earlier(kube_api, ctl, "big-new", 600.0)
    assert created_at(Node.parse(kube_api.get("Node", "big-old"))) < time.time() - 3600  # the server kept it
    once(ctl)
    assert kube_api.get("Node", "big-old") is None  # launched 2 h ago, expireAfter 1h
    assert kube_api.get("Node", "big-new") is not None
    assert sample(ctl, "karpenter_nodeclaims_disrupted_total", reason="expired", nodepool="default", capacity_type="on-demand") == 1
    assert sample(ctl, "cluster_autoscaler_scaled_down_nodes_total", reason="underutilized") == 0  # no CA reason
    assert sample(ctl, "cluster_autoscaler_evicted_pods_total") == 1
    (ev,) = events(kube_api, "Evicted", "big-old-pod")
    assert ev["message"] == "Evicted pod" and ev["source"]["component"] == "karpenter"
    assert events(kube_api, "DisruptionTerminating") == []  # expiration writes none upstream


def test_a_changed_nodepool_drifts_nodes_after_a_restart(kube_api, kubeconfig, tmp_path):
    before = controller(kubeconfig, tmp_path, autoscaler(team="a", consolidate_after="Never"))
    launched_earlier(kube_api, before, "big-v1", 60.0)
    same = controller(kubeconfig, tmp_path, autoscaler(team="a", consolidate_after="Never"))
    once(same, 2)
    assert [n["metadata"]["name"] for n in pool_nodes(kube_api)] == ["big-v1"]  # the same pool: no drift
    after = controller(kubeconfig, tmp_path, autoscaler(team="b", consolidate_after="Never"))  # the file edited
    once(after)
    names = sorted(n["metadata"]["name"] for n in pool_nodes(kube_api))
    assert len(names) == 2 and "big-v1" in names  # the replacement launches first
    (new,) = [n for n in names if n != "big-v1"]
    assert kube_api.get("Node", new)["metadata"]["labels"]["team"] == "b"
    (la,) = events(kube_api, "DisruptionLaunching")
    assert la["involvedObject"] == {"kind": "NodeClaim", "name": new, "apiVersion": "karpenter.sh/v1"}
    assert la["message"] == "Launching NodeClaim: Drifted"
    once(after)  # it has registered: the drifted node goes
    assert kube_api.get("Node", "big-v1") is None and kube_api.get("Node", new) is not None
    term = {e["involvedObject"]["kind"]: e["message"] for e in events(kube_api, "DisruptionTerminating")}
    assert term == {"Node": "Disrupting Node: Drifted", "NodeClaim": "Disrupting NodeClaim: Drifted"}
    assert sample(after, "karpenter_nodeclaims_created_total", reason="drifted", nodepool="default", min_values_relaxed="false") == 1
    assert sample(after, "karpenter_nodeclaims_disrupted_total", reason="drifted", nodepool="default", capacity_type="on-demand") == 1


def test_with_kubesched_run_a_pod_gets_a_node_of_its_pool_and_is_bound_there(kube_api, kubeconfig, tmp_path):
    """End to end: ``kubesched run`` marks the pod unschedulable, the controller (serving, as the
    command runs it) launches a node from the NodePool, the scheduler binds the pod to it."""
    import threading

    from tests.live.live_harness import running
    from tests.live.test_autoscale_live import wait

    kube_api.create(node("base", cpu="1"))
    ctl = controller(kubeconfig, tmp_path, autoscaler(consolidate_after="Never"))
    with running(kubeconfig):
        kube_api.create(pod("web", cpu="3", spec=TOLERATE))
        t = threading.Thread(target=ctl.serve, daemon=True)
        t.start()
        try:
            assert wait(lambda: len(pool_nodes(kube_api)) == 1)
            name = pool_nodes(kube_api)[0]["metadata"]["name"]
            assert wait(lambda: (kube_api.get("Pod", "web", "default") or {}).get("spec", {}).get("nodeName") == name)
            assert wait(lambda: len(events(kube_api, "Nominated", "web")) == 1)
        finally:
            ctl.stop()
            t.join(10)
    assert len(pool_nodes(kube_api)) == 1 and ctl.loop.stats.nodes_added == 1


# ---- DisruptionBlocked, ported from pkg/controllers/disruption/suite_test.go "Candidate Filtering"


def test_should_not_consider_candidates_that_are_nominated(kube_api, kubeconfig, tmp_path):
    ctl = controller(kubeconfig, tmp_path, autoscaler())
    kube_api.create(pending("web", "1"))
    once(ctl)  # a node launched for the pod
    (made,) = pool_nodes(kube_api)
    name = made["metadata"]["name"]
    once(ctl, 3)  # the pod, still pending, is about to land there: the empty node stays
    assert kube_api.get("Node", name) is not None
    blocked = {e["involvedObject"]["kind"]: e for e in events(kube_api, "DisruptionBlocked")}
    assert blocked["Node"]["message"] == "Node is nominated for a pending pod" and blocked["Node"]["involvedObject"]["name"] == name
    assert blocked["NodeClaim"]["message"] == "Node is nominated for a pending pod"
    assert blocked["Node"]["count"] == 1  # deduplicated for 2 minutes, as Karpenter's recorder


def test_should_not_consider_candidates_that_are_deleting(kube_api, kubeconfig, tmp_path):
    ctl = controller(kubeconfig, tmp_path, autoscaler())
    (p,) = ctl.cfg.node_pools
    body = node_body(pool_node(ctl.cfg.group("big").template, "big-going", p, "big", "on-demand"))
    body["spec"]["taints"].append({"key": "ToBeDeletedByClusterAutoscaler", "value": str(int(time.time())), "effect": "NoSchedule"})
    kube_api.create(body)
    once(ctl)
    assert kube_api.get("Node", "big-going") is not None  # empty, but being deleted already: not a candidate
    (ev,) = [e for e in events(kube_api, "DisruptionBlocked") if e["involvedObject"]["kind"] == "Node"]
    assert ev["message"] == "Node is deleting or marked for deletion" and ev["source"]["component"] == "karpenter"

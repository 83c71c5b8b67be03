"""``kubesched autoscale`` end to end against the test API server, with ``kubesched run``: a pod
that fits no node gets a KWOK-style virtual node (label and taint), is bound there, and the node
is deleted once it is unneeded."""

from __future__ import annotations

import threading
import time

from kubesched.autoscale.eligibility import SCALE_DOWN_DISABLED
from kubesched.autoscale.live import KWOK_LABEL, KWOK_TAINT, build_controller
from kubesched.cli import build_parser
from tests.live.live_harness import node, pod, running

AUTOSCALER = """
scanInterval: 0.2
provisioningDelay: 0
scaleDown: {unneededTime: 0.5, delayAfterAdd: 0, delayAfterDelete: 0}
nodeGroups:
- {name: small, template: {cpu: "2", memory: 4Gi}, max: 3}
- {name: big, template: {cpu: "8", memory: 16Gi}, max: 2}
"""

TOLERATE = {"tolerations": [{"key": KWOK_TAINT["key"], "operator": "Exists", "effect": "NoSchedule"}]}


def wait(cond, timeout: float = 60.0) -> bool:  # noqa: ANN001 - generous: the suite shares a loaded machine
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if cond():
            return True
        time.sleep(0.05)
    return False


def test_scale_up_binds_then_scale_down_deletes(kube_api, kubeconfig, tmp_path):
    kube_api.create(node("base", cpu="1"))
    cfg = tmp_path / "as.yaml"
    cfg.write_text(AUTOSCALER)
    args = build_parser().parse_args(["autoscale", "--kubeconfig", kubeconfig, "--autoscaler", str(cfg)])
    ctl = build_controller(args)
    with running(kubeconfig):
        kube_api.create(pod("big-one", cpu="3", spec=TOLERATE))
        t = threading.Thread(target=ctl.serve, daemon=True)
        t.start()
        try:
            # least-waste: 3 of 8 CPUs on a "big" node (2-CPU nodes cannot hold it)
            assert wait(lambda: any(n["metadata"]["name"].startswith("big-") for n in kube_api.list("Node")))
            made = next(n for n in kube_api.list("Node") if n["metadata"]["name"].startswith("big-"))
            assert made["metadata"]["labels"][KWOK_LABEL] == "kwok"
            assert made["metadata"]["labels"]["autoscaling.kubesched.io/node-group"] == "big"
            assert {"key": KWOK_TAINT["key"], "value": "fake", "effect": "NoSchedule"} in made["spec"]["taints"]
            name = made["metadata"]["name"]
            assert wait(lambda: (kube_api.get("Pod", "big-one", "default") or {}).get("spec", {}).get("nodeName") == name)
            assert len([n for n in kube_api.list("Node") if n["metadata"]["name"] != "base"]) == 1  # one node was enough
            # the pod goes: the node is empty, unneeded for 0.5 s, then deleted
            kube_api.delete("Pod", "big-one", "default")
            assert wait(lambda: kube_api.get("Node", name) is None)
            assert kube_api.get("Node", "base") is not None  # not a node group's: never touched
        finally:
            ctl.stop()
            t.join(10)
    assert ctl.loop.stats.scale_ups == 1 and ctl.loop.stats.scale_downs == 1


def drain_one_of_two(kube_api, kubeconfig, tmp_path, annotations: dict | None = None):  # noqa: ANN001, ANN201
    """Two virtual nodes of the big group, one small pod on each (one node can take both; the
    first, big-v0, gets ``annotations``); the controller runs until it removes a node."""
    cfg = tmp_path / "as.yaml"
    cfg.write_text(AUTOSCALER)
    args = build_parser().parse_args(["autoscale", "--kubeconfig", kubeconfig, "--autoscaler", str(cfg)])
    ctl = build_controller(args)
    for i in range(2):
        body = {**node(f"big-v{i}", cpu="8", memory="16Gi")}
        body["metadata"]["labels"]["autoscaling.kubesched.io/node-group"] = "big"
        if i == 0 and annotations:
            body["metadata"]["annotations"] = annotations
        kube_api.create(body)
        kube_api.create(pod(f"p{i}", cpu="1", spec={**TOLERATE, "nodeName": f"big-v{i}"}))
    for _ in range(10):
        ctl.once()
        time.sleep(0.1)
        if ctl.loop.stats.scale_downs:
            break
    return ctl


def test_busy_node_is_drained_through_the_eviction_api(kube_api, kubeconfig, tmp_path):
    ctl = drain_one_of_two(kube_api, kubeconfig, tmp_path)
    assert ctl.loop.stats.scale_downs == 1
    left = [n["metadata"]["name"] for n in kube_api.list("Node")]
    assert len(left) == 1
    gone = {"big-v0", "big-v1"} - set(left)
    evictions = [p for m, p in kube_api.requests if m == "POST" and p.endswith("/eviction")]
    assert len(evictions) == 1 and (gone == {"big-v0"}) == evictions[0].endswith("/pods/p0/eviction")


def test_protected_node_stays_and_the_drained_one_is_tainted_first(kube_api, kubeconfig, tmp_path):
    """The operator's scale-down-disabled node is neither drained nor deleted (it may take the
    other node's pod); the node that goes gets CA's ToBeDeletedByClusterAutoscaler taint before
    its pods are evicted. big-v0 is the node the loop would drain first."""
    ctl = drain_one_of_two(kube_api, kubeconfig, tmp_path, {SCALE_DOWN_DISABLED: "true"})
    assert [n["metadata"]["name"] for n in kube_api.list("Node")] == ["big-v0"]
    calls = [(m, p) for m, p in kube_api.requests if m in ("PATCH", "POST") and ("/nodes/" in p or p.endswith("/eviction"))]
    assert calls[0] == ("PATCH", "/api/v1/nodes/big-v1") and calls[1][1].endswith("/pods/p1/eviction")
    # protected after the listing: the provider reads the node afresh and leaves it
    ctl.provider.delete("big-v0")
    assert kube_api.get("Node", "big-v0") is not None
    assert not [p for m, p in kube_api.requests if m == "POST" and p.endswith("/pods/p0/eviction")]

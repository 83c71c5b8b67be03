"""``kubesched run`` with Coscheduling: PodGroups come from the API (scheduling.x-k8s.io) and a gang
binds all together or not at all."""

from __future__ import annotations

from pathlib import Path

import yaml
from live_harness import all_bound, binding_posts, node, node_of, pod, running

from tests.kubeapi import KubeAPIServer

CONFIG = {
    "apiVersion": "kubescheduler.config.k8s.io/v1",
    "kind": "KubeSchedulerConfiguration",
    "profiles": [
        {
            "schedulerName": "kubesched",
            "plugins": {
                "multiPoint": {"enabled": [{"name": "Coscheduling"}]},
                "queueSort": {"enabled": [{"name": "Coscheduling"}], "disabled": [{"name": "*"}]},
            },
            "pluginConfig": [{"name": "Coscheduling", "args": {"permitWaitingTimeSeconds": 3}}],
        }
    ],
}


def pod_group(name: str, min_member: int) -> dict:
    return {
        "apiVersion": "scheduling.x-k8s.io/v1alpha1",
        "kind": "PodGroup",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"minMember": min_member},
    }


def member(name: str, group: str, cpu: str) -> dict:
    return pod(name, cpu=cpu, labels={"scheduling.x-k8s.io/pod-group": group})


def test_gangs_from_the_api_bind_all_or_nothing(kube_api: KubeAPIServer, kubeconfig: str, tmp_path: Path) -> None:
    config = tmp_path / "sched.yaml"
    config.write_text(yaml.safe_dump(CONFIG))
    kube_api.create(node("n1", cpu="4"))
    kube_api.create(node("n2", cpu="4"))
    kube_api.create(pod_group("fits", 3))
    kube_api.create(pod_group("toobig", 3))
    fits = [f"fits-{i}" for i in range(3)]
    big = [f"big-{i}" for i in range(3)]
    with running(kubeconfig, "--config", str(config)):
        for name in fits:
            kube_api.create(member(name, "fits", "1"))
        assert kube_api.wait_for(lambda: all_bound(kube_api, fits), 15)
        for name in big:  # 3 x 3 CPUs: two fit on the 5 CPUs left, the third never does
            kube_api.create(member(name, "toobig", "3"))
        # the waiting members time out (3 s) and are released; nothing of the gang is bound
        assert kube_api.wait_for(
            lambda: all(
                any(
                    c.get("type") == "PodScheduled" and c.get("status") == "False"
                    for c in (kube_api.get("Pod", n, "default") or {}).get("status", {}).get("conditions", [])
                )
                for n in big
            ),
            20,
        )
    assert all(node_of(kube_api, n) is None for n in big)
    assert not any(binding_posts(kube_api, n) for n in big)
    assert len(binding_posts(kube_api)) == 3

"""Binding that checks before it writes: nodes deleted (or recreated) while bindings wait.

The test API server, like kube-apiserver, accepts a binding to a node that does not exist, so
only the scheduler can keep pods off deleted nodes: it bounds how far scheduling runs ahead of
binding, and checks the node in its informer cache right before each binding is sent.
"""

from __future__ import annotations

import time
from collections import Counter

from live_harness import binding_posts, events, node, node_of, pod, running

from kubesched.live.runner import Runner
from tests.kubeapi import KubeAPIServer


def node_informer_store(r: Runner) -> dict:
    return next(inf for inf in r.informers if inf.kind == "Node").store


def test_no_binding_is_sent_to_a_node_deleted_mid_burst(kube_api: KubeAPIServer, kubeconfig: str) -> None:
    nodes = [f"n{i:03d}" for i in range(100)]
    for n in nodes:
        kube_api.create(node(n))
    names = [f"p{i:03d}" for i in range(100)]
    accepted = kube_api.record_bindings()
    # Bindings trickle out at 25/s while up to 64 wait: without the check before sending, about
    # 13 of them would go to the deleted nodes, up to 2.5 s after the deletion.
    flags = ("--kube-api-qps", "25", "--kube-api-burst", "1", "--max-in-flight-bindings", "64")
    with running(kubeconfig, *flags) as r:
        for n in names:
            kube_api.create(pod(n, cpu="100m"))
        assert kube_api.wait_for(lambda: len(accepted) >= 15, 10)
        doomed = set(nodes[::5])
        deleted_at = {}
        for n in sorted(doomed):
            kube_api.delete("Node", n)
            deleted_at[n] = time.monotonic()
        store = node_informer_store(r)
        assert kube_api.wait_for(lambda: not doomed & store.keys(), 5, interval=0.001)
        seen_at = time.monotonic()  # kubesched's node informer no longer has any of them
        assert kube_api.wait_for(lambda: all(node_of(kube_api, n) for n in names), 30)
        requeued = [e for e in events(kube_api, "FailedScheduling") if "was deleted after the pod was assumed" in e["message"]]
    # every pod bound exactly once
    assert sorted(Counter(p for p, _, _ in accepted).items()) == [(n, 1) for n in names]
    # a binding to a deleted node reached the server only before kubesched could know of the
    # deletion (its check and the request are a few ms apart, hence the margin)
    late = [(p, n, t - deleted_at[n]) for p, n, t in accepted if n in deleted_at and t > deleted_at[n]]
    assert all(t <= seen_at + 0.2 for p, n, t in accepted if n in deleted_at), late
    # so every pod bound after that is on a node that exists
    after = {p for p, _, t in accepted if t > seen_at + 0.2}
    assert after and all(node_of(kube_api, p) not in doomed for p in after)
    # the bindings called off were requeued as kube-scheduler requeues a failed binding: a
    # FailedScheduling event and the PodScheduled condition with reason SchedulerError
    assert requeued, "no binding waited for a deleted node: the test did not exercise the check"
    for e in requeued:
        p = e["involvedObject"]["name"]
        # called off before PreBind, or by DefaultBinder's own check just before the POST (worded
        # as kube-scheduler words a bind plugin's error)
        assert e["type"] == "Warning"
        assert e["message"].startswith(("binding rejected: node ", 'running Bind plugin "DefaultBinder": node '))
        assert len(binding_posts(kube_api, p)) == 1  # the called-off binding was never sent
        conds = [c for c in kube_api.get("Pod", p, "default")["status"]["conditions"] if c["type"] == "PodScheduled"]
        assert [c["status"] for c in conds] == ["True"]  # bound since; the server replaced the False one


def test_a_node_recreated_by_the_same_name_is_not_the_node_assumed(kube_api: KubeAPIServer, kubeconfig: str) -> None:
    kube_api.create(node("n0"))
    old_uid = kube_api.get("Node", "n0")["metadata"]["uid"]
    with running(kubeconfig, "--kube-api-qps", "0.5", "--kube-api-burst", "1") as r:
        kube_api.create(pod("first"))  # takes the one token
        assert kube_api.wait_for(lambda: node_of(kube_api, "first") == "n0", 5)
        kube_api.create(pod("second"))  # its binding waits ~2 s for the next token
        assert kube_api.wait_for(lambda: any(b.pod.name == "second" for b in list(r.sched.in_flight.values())), 5)
        (b,) = list(r.sched.in_flight.values())
        assert b.node_uid == old_uid
        kube_api.delete("Node", "n0")
        kube_api.create(node("n0"))
        new_uid = kube_api.get("Node", "n0")["metadata"]["uid"]
        store = node_informer_store(r)
        assert kube_api.wait_for(lambda: getattr(store.get("n0"), "uid", None) == new_uid, 5, interval=0.001)
        assert kube_api.wait_for(lambda: node_of(kube_api, "second") == "n0", 15)
        (failed,) = events(kube_api, "FailedScheduling", "second")
        why = f'node "n0" was deleted and recreated (uid {new_uid}) after the pod was assumed on it'
        # before PreBind, or by DefaultBinder's check just before the POST
        assert failed["message"] in (f"binding rejected: {why}", f'running Bind plugin "DefaultBinder": {why}')
        # one binding POST: the one for the new node, after the backoff
        assert len(binding_posts(kube_api, "second")) == 1
        assert kube_api.wait_for(lambda: r.outcomes == {"bound": 2, "dropped": 0, "requeued": 1}, 5), r.outcomes


def test_scheduling_runs_at_most_the_bound_ahead_of_binding(kube_api: KubeAPIServer, kubeconfig: str) -> None:
    kube_api.create(node("n0", cpu="64"))
    names = [f"p{i:02d}" for i in range(30)]
    for n in names:
        kube_api.create(pod(n, cpu="100m"))
    with running(kubeconfig, "--kube-api-qps", "10", "--kube-api-burst", "1", "--max-in-flight-bindings", "3") as r:
        most = 0
        end = time.monotonic() + 1.0
        while time.monotonic() < end:  # 1 s: about 10 bindings' worth of tokens
            most = max(most, len(r.sched.in_flight))
            time.sleep(0.002)
        # the scheduling loop alone touches in_flight; reading its size here is a sample
        assert most == 3
        attempts = r.sched.attempts
        assert 3 <= attempts <= 3 + 12, attempts  # not the 30 pods an unbounded loop schedules at once
        assert kube_api.wait_for(lambda: all(node_of(kube_api, n) for n in names), 10)

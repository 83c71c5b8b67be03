"""The extender verbs over real HTTP, in both node modes, checked against ``kubesched explain``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from extender_testlib import (
    cluster_docs,
    explain,
    explain_verdicts,
    http,
    node_list,
    post,
    preemptor_pod,
    running_extender,
    web_pod,
    write,
)

from kubesched.extender.service import extender_scores, normalize_prefix

ALL = ["n1", "n2", "n3", "n4", "n5", "n6", "n7"]
FILTER_KEYS = {"Nodes", "NodeNames", "FailedNodes", "FailedAndUnresolvableNodes", "Error"}


@pytest.fixture
def cluster(tmp_path: Path) -> str:
    return write(tmp_path, "cluster.yaml", cluster_docs())


@pytest.fixture
def server(cluster: str):
    with running_extender([cluster]) as (ext, url):
        yield ext, url


def names_of(node_list_doc: dict[str, Any]) -> list[str]:
    return [it["metadata"]["name"] for it in node_list_doc["items"]]


# ---- filter ------------------------------------------------------------------------------
@pytest.mark.parametrize("mode", ["NodeNames", "Nodes"])
def test_filter_matches_explain(capsys, tmp_path, cluster, server, mode):
    _, url = server
    pod = web_pod()
    passed, failed, unresolvable = explain_verdicts(explain(capsys, cluster, write(tmp_path, "pod.yaml", pod)))
    assert passed == ["n5", "n6", "n7"]  # the fixture exercises every outcome
    assert failed and unresolvable
    nodes: Any = ALL if mode == "NodeNames" else node_list(cluster_docs())
    status, res = post(f"{url}/filter", {"Pod": pod, mode: nodes})
    assert status == 200
    assert set(res) == FILTER_KEYS
    assert res["FailedNodes"] == failed
    assert res["FailedAndUnresolvableNodes"] == unresolvable
    assert res["Error"] == ""
    if mode == "NodeNames":
        assert res["NodeNames"] == passed and res["Nodes"] is None
    else:
        assert res["NodeNames"] is None
        assert names_of(res["Nodes"]) == passed
        # passing nodes come back as the objects that were sent, camelCase intact
        sent = {d["metadata"]["name"]: d for d in nodes["items"]}
        assert res["Nodes"]["items"] == [sent[n] for n in passed]
        assert res["Nodes"]["kind"] == "NodeList"


def test_filter_exact_reasons(server):
    """The reasons are kube-scheduler's status messages, split by code."""
    _, url = server
    _, res = post(f"{url}/filter", {"Pod": web_pod(), "NodeNames": ALL})
    assert res == {
        "Nodes": None,
        "NodeNames": ["n5", "n6", "n7"],
        "FailedNodes": {"n1": "Insufficient cpu"},
        "FailedAndUnresolvableNodes": {
            "n2": "node(s) had untolerated taint(s)",
            "n3": "node(s) were unschedulable",
            "n4": "Insufficient cpu",  # asks more than the node's allocatable: preemption cannot help
        },
        "Error": "",
    }


@pytest.mark.parametrize("mode", ["NodeNames", "Nodes"])
def test_filter_prefilter_narrowing_matches_explain(capsys, tmp_path, cluster, server, mode):
    """NodeAffinity's PreFilter narrows the nodes: the others fail with its message, as in a cycle."""
    _, url = server
    affinity = {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [
                    {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [name]}]}
                    for name in ("n1", "n5")
                ]
            }
        }
    }
    pod = web_pod(affinity=affinity)
    passed, failed, unresolvable = explain_verdicts(explain(capsys, cluster, write(tmp_path, "pod.yaml", pod)))
    nodes: Any = ALL if mode == "NodeNames" else node_list(cluster_docs())
    _, res = post(f"{url}/filter", {"Pod": pod, mode: nodes})
    assert res["FailedNodes"] == failed == {"n1": "Insufficient cpu"}
    assert res["FailedAndUnresolvableNodes"] == unresolvable
    assert unresolvable["n7"] == "node(s) didn't satisfy plugin(s) [NodeAffinity]"
    got = res["NodeNames"] if mode == "NodeNames" else names_of(res["Nodes"])
    assert got == passed == ["n5"]


def test_filter_subset_keeps_request_order(server):
    _, url = server
    _, res = post(f"{url}/filter", {"Pod": web_pod(), "NodeNames": ["n7", "n1", "n5"]})
    assert res["NodeNames"] == ["n7", "n5"]
    assert res["FailedNodes"] == {"n1": "Insufficient cpu"}
    assert res["FailedAndUnresolvableNodes"] == {}
    _, res = post(f"{url}/filter", {"Pod": web_pod(), "NodeNames": []})
    assert res["NodeNames"] == [] and res["FailedNodes"] == {}


def test_full_mode_counts_the_pods_the_server_knows(server):
    """Nodes mode: a node sent in the request carries the server's pods bound to it (n1 is busy)."""
    _, url = server
    _, res = post(f"{url}/filter", {"Pod": web_pod(), "Nodes": node_list(cluster_docs(), ["n1"])})
    assert res["FailedNodes"] == {"n1": "Insufficient cpu"}
    fresh = node_list(cluster_docs(), ["n1"])
    fresh["items"][0] = json.loads(json.dumps(fresh["items"][0]))
    fresh["items"][0]["metadata"]["name"] = "n1-empty"  # same shape, no pods on it
    _, res = post(f"{url}/filter", {"Pod": web_pod(), "Nodes": fresh})
    assert names_of(res["Nodes"]) == ["n1-empty"]


def test_keys_are_case_insensitive_on_input(server):
    _, url = server
    _, res = post(f"{url}/filter", {"pod": web_pod(), "nodenames": ["n1", "n5"]})
    assert set(res) == FILTER_KEYS
    assert res["NodeNames"] == ["n5"]
    _, res = post(f"{url}/filter", {"POD": web_pod(), "nodes": node_list(cluster_docs(), ["n5"])})
    assert names_of(res["Nodes"]) == ["n5"]


def test_profile_by_scheduler_name_else_first(tmp_path, cluster):
    """A pod naming an unknown scheduler is served by the first profile."""
    with running_extender([cluster]) as (_, url):
        pod = web_pod(schedulerName="someone-else")
        _, res = post(f"{url}/filter", {"Pod": pod, "NodeNames": ALL})
        assert res["NodeNames"] == ["n5", "n6", "n7"]


# ---- prioritize --------------------------------------------------------------------------
@pytest.mark.parametrize("mode", ["NodeNames", "Nodes"])
def test_prioritize_rescales_explain_totals(capsys, tmp_path, cluster, server, mode):
    """Score = total * 10 // (100 * sum of the weights of the score plugins that ran)."""
    _, url = server
    pod = web_pod()
    ex = explain(capsys, cluster, write(tmp_path, "pod.yaml", pod))
    feasible = [n for n in ex["nodes"] if n["feasible"]]
    names = [n["name"] for n in feasible]
    nodes: Any = names if mode == "NodeNames" else node_list(cluster_docs(), names)
    status, res = post(f"{url}/prioritize", {"Pod": pod, mode: nodes})
    assert status == 200
    expected = []
    for n in feasible:
        max_total = 100 * sum(e["weight"] for e in n["score"])
        expected.append({"Host": n["name"], "Score": n["total"] * 10 // max_total})
    assert res == expected
    assert all(set(h) == {"Host", "Score"} and 0 <= h["Score"] <= 10 for h in res)
    assert len({h["Score"] for h in res}) > 1  # the fixture gives distinct scores


def test_prioritize_empty_and_scale_edges(server):
    _, url = server
    assert post(f"{url}/prioritize", {"Pod": web_pod(), "NodeNames": []}) == (200, [])
    import numpy as np

    assert extender_scores(np.asarray([600, 599, 0]), {"A": (None, None, 6)}) == [10, 9, 0]
    assert extender_scores(np.asarray([1, 1]), {}) == [0, 0]  # no score plugin ran


# ---- bind --------------------------------------------------------------------------------
def test_bind_through_the_cluster_backend(server):
    ext, url = server
    args = {"PodName": "pending-1", "PodNamespace": "default", "PodUID": "default-pending-1", "Node": "n5"}
    assert post(f"{url}/bind", args) == (200, {"Error": ""})
    assert ext.cluster.bindings == {"default-pending-1": "n5"}
    assert ext.cluster.events[-1].message == "Successfully assigned default/pending-1 to n5"
    assert "default-pending-1" in ext.snapshot.pods_on[ext.snapshot.row_of["n5"]]
    status, res = post(f"{url}/bind", args)
    assert status == 200 and res == {"Error": 'pod "default/pending-1" is already bound to node "n5"'}
    # by namespace/name when no UID is given; keys in any case
    status, res = post(f"{url}/bind", {"podname": "pending-2", "podnamespace": "default", "node": "n6"})
    assert res == {"Error": ""} and ext.cluster.bindings["default-pending-2"] == "n6"


def test_bind_errors_are_results(server):
    _, url = server
    _, res = post(f"{url}/bind", {"PodName": "ghost", "PodNamespace": "default", "Node": "n5"})
    assert res == {"Error": 'pod "default/ghost" not found in the cluster this extender holds'}
    _, res = post(f"{url}/bind", {"PodName": "pending-1", "PodNamespace": "default", "Node": "n9"})
    assert res == {"Error": 'node "n9" not found in the cluster this extender holds'}
    _, res = post(
        f"{url}/bind", {"PodName": "other", "PodNamespace": "default", "PodUID": "default-pending-1", "Node": "n5"}
    )
    assert res == {"Error": 'pod uid default-pending-1 is "default/pending-1", not "default/other"'}


def test_a_bound_pod_counts_in_later_filters(server):
    ext, url = server
    big = web_pod()
    big["spec"]["containers"][0]["resources"]["requests"]["cpu"] = "7900m"  # n5 has 8 CPUs
    _, res = post(f"{url}/filter", {"Pod": big, "NodeNames": ["n5"]})
    assert res["NodeNames"] == ["n5"]
    post(f"{url}/bind", {"PodName": "pending-1", "PodNamespace": "default", "Node": "n5"})
    post(f"{url}/bind", {"PodName": "pending-2", "PodNamespace": "default", "Node": "n5"})
    for mode, nodes in (("NodeNames", ["n5"]), ("Nodes", node_list(cluster_docs(), ["n5"]))):
        _, res = post(f"{url}/filter", {"Pod": big, mode: nodes})
        assert res["FailedNodes"] == {"n5": "Insufficient cpu"}, mode


# ---- preempt -----------------------------------------------------------------------------
def meta(*uids: str, pdb: int = 0) -> dict[str, Any]:
    return {"Pods": [{"UID": u} for u in uids], "NumPDBViolations": pdb}


def test_preempt_meta_selects_victims_among_candidates(server):
    """All of n1's pods offered: mid (higher priority) is reprieved; the PDB-guarded low-b counts."""
    _, url = server
    args = {"Pod": preemptor_pod(), "NodeNameToMetaVictims": {"n1": meta("default-low-a", "default-low-b", "default-mid")}}
    status, res = post(f"{url}/preempt", args)
    assert status == 200
    assert res == {"NodeNameToMetaVictims": {"n1": meta("default-low-a", "default-low-b", pdb=1)}}


def test_preempt_drops_nodes_where_the_candidates_do_not_make_room(server):
    _, url = server
    pod = preemptor_pod()
    pod["spec"]["containers"][0]["resources"]["requests"]["cpu"] = "3800m"
    args = {
        "Pod": pod,
        "NodeNameToMetaVictims": {
            "n1": meta("default-low-b"),  # a 2-CPU node never takes 3.8 CPUs
            "n7": meta("default-busy7"),  # 3.5 of 4 CPUs free: busy7 must go, and that is enough
        },
    }
    _, res = post(f"{url}/preempt", args)
    assert res == {"NodeNameToMetaVictims": {"n7": meta("default-busy7")}}


def test_preempt_keeps_kube_schedulers_victims_when_the_profile_needs_none(server):
    """n6 has room by this profile; kube-scheduler's candidates come back as sent (a node needs victims)."""
    _, url = server
    args = {"Pod": preemptor_pod(), "NodeNameToMetaVictims": {"n6": meta("default-busy6", pdb=3)}}
    _, res = post(f"{url}/preempt", args)
    assert res == {"NodeNameToMetaVictims": {"n6": meta("default-busy6", pdb=3)}}


def test_preempt_never_returns_higher_priority_pods(server):
    _, url = server
    low = preemptor_pod()
    low["spec"].pop("priorityClassName")
    low["spec"]["priority"] = 500  # below mid (1000): mid cannot be a victim
    _, res = post(f"{url}/preempt", {"Pod": low, "NodeNameToMetaVictims": {"n1": meta("default-mid")}})
    assert res == {"NodeNameToMetaVictims": {}}


def test_preempt_full_victims(server):
    """NodeNameToVictims: nodes the server holds are evaluated; others are echoed by UID."""
    _, url = server
    pods = {d["metadata"]["name"]: d for d in cluster_docs() if d.get("kind") == "Pod"}
    stranger = json.loads(json.dumps(pods["low-a"]))
    stranger["metadata"].update(name="elsewhere", uid="uid-elsewhere")
    stranger["spec"]["nodeName"] = "n-remote"
    args = {
        "Pod": preemptor_pod(),
        "NodeNameToVictims": {
            "n1": {"Pods": [pods["low-a"], pods["low-b"], pods["mid"]], "NumPDBViolations": 0},
            "n-remote": {"Pods": [stranger], "NumPDBViolations": 2},
        },
    }
    _, res = post(f"{url}/preempt", args)
    assert res == {
        "NodeNameToMetaVictims": {
            "n-remote": meta("uid-elsewhere", pdb=2),
            "n1": meta("default-low-a", "default-low-b", pdb=1),
        }
    }


# ---- routes ------------------------------------------------------------------------------
def test_url_prefix_and_probes(cluster):
    with running_extender([cluster], prefix="http://localhost:8888/scheduler/") as (_, url):
        for path in ("/scheduler/filter", "/filter"):
            status, res = post(url + path, {"Pod": web_pod(), "NodeNames": ["n5"]})
            assert status == 200 and res["NodeNames"] == ["n5"]
        for path in ("/healthz", "/livez", "/readyz"):
            assert http(url + path) == (200, "text/plain; charset=utf-8", b"ok\n")
        assert http(url + "/nope")[0] == 404
        assert http(url + "/filter")[0] == 405  # GET on a verb
        assert http(url + "/healthz", b"{}", "POST")[0] == 405


def test_normalize_prefix():
    assert normalize_prefix("") == normalize_prefix("/") == ""
    assert normalize_prefix("/scheduler/") == normalize_prefix("scheduler") == "/scheduler"
    assert normalize_prefix("https://ext.svc:8888/a/b") == "/a/b"


def test_filter_leaves_claims_to_kube_scheduler(server):
    """DynamicResources takes no part in the extender, as the volume plugins: kube-scheduler's own
    judged the claims before calling it, so a pod with a claim the extender has never seen passes
    the same nodes as without it (not 'resourceclaim ... not found' on every node)."""
    _, url = server
    plain = post(f"{url}/filter", {"Pod": web_pod(), "NodeNames": ALL})[1]
    with_claim = web_pod(resourceClaims=[{"name": "gpu", "resourceClaimName": "elsewhere"}])
    status, res = post(f"{url}/filter", {"Pod": with_claim, "NodeNames": ALL})
    assert status == 200 and res["Error"] == ""
    assert res["NodeNames"] == plain["NodeNames"] == ["n5", "n6", "n7"]
    assert res["FailedAndUnresolvableNodes"] == plain["FailedAndUnresolvableNodes"]

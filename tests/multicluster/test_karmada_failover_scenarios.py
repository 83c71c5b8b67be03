"""Failover over time: replicas leave a failed member within the binding's tolerations and come
back only as Karmada brings them back (FailoverController with the real scheduler)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from kubesched.api.taints import NO_EXECUTE, NO_SCHEDULE, Taint
from kubesched.app import example_path
from kubesched.cli import main
from kubesched.multicluster.api import Binding, Cluster, ResourceSummary, TargetCluster, parse_policy
from kubesched.multicluster.failover import FailoverController, FailoverOptions
from kubesched.multicluster.federation import Federation
from kubesched.multicluster.member import MemberCluster
from kubesched.multicluster.taints import NOT_READY_NO_EXECUTE, TAINT_NOT_READY, TAINT_UNREACHABLE

ON = FailoverOptions(failover=True, no_execute_eviction=True, taint_policies=(NOT_READY_NO_EXECUTE,))
WEIGHTED = {"replicaSchedulingType": "Divided", "replicaDivisionPreference": "Weighted"}
TOLERATE_60 = [{"key": TAINT_NOT_READY, "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 60}]


def federation(*names: str) -> Federation:
    members = []
    for n in names:
        c = Cluster(n, api_enablements={"apps/v1": frozenset({"Deployment"})}, complete_api_enablements=True,
                    resource_summary=ResourceSummary({"pods": 100}, {}, {}))
        members.append(MemberCluster(c))
    return Federation(members, estimator="general")


def make_binding(replicas: int, placement: dict, failover: dict | None = None, propagate_deps: bool = False) -> Binding:
    spec = {"resourceSelectors": [{"apiVersion": "apps/v1", "kind": "Deployment"}], "placement": placement,
            "propagateDeps": propagate_deps}
    if failover is not None:
        spec["failover"] = failover
    p = parse_policy({"kind": "PropagationPolicy", "metadata": {"name": "web"}, "spec": spec}, "policy")
    return Binding("apps/v1", "Deployment", "default", "web", "uid-web", replicas, None, p.placement,
                   failover=p.failover, propagate_deps=p.propagate_deps)


def start(fed: Federation, b: Binding, options: FailoverOptions = ON, health=None) -> FailoverController:  # noqa: ANN001
    """Schedule ``b`` once, as Karmada does when it is created, and follow it."""
    d = fed.decide(b)
    assert d.scheduled, d.message
    ctl = FailoverController([m.cluster for m in fed.members], fed.decide, options, health)
    ctl.track(b, d)
    return ctl


def placed(ctl: FailoverController) -> dict[str, int]:
    return {t.name: t.replicas for t in ctl.binding("Deployment default/web").clusters}


def kinds(events) -> list[tuple[str, str]]:  # noqa: ANN001
    return [(e.kind, e.cluster) for e in events]


def test_unreachable_member_is_tainted_noschedule_and_untainted_when_ready():
    """The cluster controller: Unknown gives the unreachable NoSchedule taint, False swaps it for
    not-ready, True removes it; with the policy, not-ready NoExecute comes and goes with them."""
    fed = federation("member1", "member2")
    ctl = start(fed, make_binding(2, {"replicaScheduling": WEIGHTED}))
    m1 = fed.by_name["member1"].cluster
    ctl.set_condition("member1", "Unknown", now=0)
    assert m1.taints == (Taint(TAINT_UNREACHABLE, "", NO_SCHEDULE), Taint(TAINT_NOT_READY, "", NO_EXECUTE))
    ctl.set_condition("member1", "False", now=5)
    assert m1.taints == (Taint(TAINT_NOT_READY, "", NO_EXECUTE), Taint(TAINT_NOT_READY, "", NO_SCHEDULE))
    assert ctl.taints["member1"][0].time_added == 0  # the NoExecute taint kept its time
    ctl.set_condition("member1", "True", now=9)
    assert m1.taints == ()


def test_replicas_move_off_after_toleration_and_stay_away_when_member_returns():
    """Divided 4 replicas over member1..3 (static 1:1:1 gives 2:1:1). member1 goes unreachable at
    t=0; the binding tolerates not-ready NoExecute for 60 s: at 30 s nothing moves, at 60 s member1
    is evicted gracefully, the scheduler places all 4 on member2 and member3, and member1's
    replicas are purged once the new ones are healthy. When member1 is Ready again its taints go but
    the replicas stay where they went: Karmada does not move a Divided binding back by itself."""
    fed = federation("member1", "member2", "member3")
    healthy = {"member1": True, "member2": True, "member3": True}
    ready_at = {"t": math.inf}
    now = {"t": 0.0}

    def health(b, c):  # noqa: ANN001, ANN202 - the new replicas on member3 start by t=90
        if c == "member3" and now["t"] < ready_at["t"]:
            return "Unhealthy"
        return "Healthy" if healthy[c] else "Unknown"

    ctl = start(fed, make_binding(4, {"replicaScheduling": WEIGHTED, "clusterTolerations": TOLERATE_60}), health=health)
    assert placed(ctl) == {"member1": 2, "member2": 1, "member3": 1}
    healthy["member1"] = False
    ctl.set_condition("member1", "Unknown", now=0)
    assert ctl.step(now=30) == []
    assert placed(ctl)["member1"] == 2 and ctl.next_time() == 60
    now["t"], ready_at["t"] = 60, 90
    events = ctl.step(now=60)
    assert kinds(events)[:2] == [("evict", "member1"), ("schedule", "")]
    assert placed(ctl) == {"member2": 2, "member3": 2}
    (task,) = ctl.tasks("Deployment default/web")
    assert (task.from_cluster, task.purge_mode, task.replicas, task.creation_timestamp) == ("member1", "Gracefully", 2, 60)
    assert ctl.binding("Deployment default/web").eviction_clusters == {"member1"}
    assert all(e.kind != "purge" for e in events)  # member3's new replicas are not healthy yet
    now["t"] = 90
    assert kinds(ctl.step(now=90)) == [("purge", "member1")]
    assert ctl.tasks("Deployment default/web") == []
    healthy["member1"] = True
    ctl.set_condition("member1", "True", now=200)
    assert fed.by_name["member1"].cluster.taints == ()
    assert ctl.step(now=201) == []  # Divided and all replicas assigned: not rescheduled
    assert placed(ctl) == {"member2": 2, "member3": 2}


def test_edge_site_offline_moves_a_pod_to_the_next_affinity_term():
    """The experiment's shape: one replica, Aggregated, terms home edge → other edges. The home
    edge goes offline, the pod is evicted after its 30 s toleration and scheduled by the next
    term (status.schedulerObservedAffinityName follows); when the home edge is back the pod stays."""
    fed = federation("edge-a", "edge-b")
    for m in fed.members:
        m.cluster.labels = {"tier": "edge"}
    pl = {"clusterAffinities": [{"affinityName": "home-edge", "clusterNames": ["edge-a"]},
                                {"affinityName": "other-edges", "labelSelector": {"matchLabels": {"tier": "edge"}}, "exclude": ["edge-a"]}],
          "spreadConstraints": [{"spreadByField": "cluster", "maxGroups": 1, "minGroups": 1}],
          "replicaScheduling": {"replicaSchedulingType": "Divided", "replicaDivisionPreference": "Aggregated"},
          "clusterTolerations": [{"key": TAINT_NOT_READY, "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 30}]}
    ctl = start(fed, make_binding(1, pl))
    assert placed(ctl) == {"edge-a": 1}
    ctl.set_condition("edge-a", "Unknown", now=100)
    assert kinds(ctl.step(now=100)) == []
    assert ctl.next_time() == 130
    events = ctl.step(now=130)
    assert kinds(events) == [("evict", "edge-a"), ("schedule", ""), ("purge", "edge-a")]
    assert placed(ctl) == {"edge-b": 1}
    assert ctl.binding("Deployment default/web").observed_affinity_name == "other-edges"
    ctl.set_condition("edge-a", "True", now=400)
    assert kinds(ctl.step(now=400)) == [] and placed(ctl) == {"edge-b": 1}
    ctl.untrack("Deployment default/web")
    assert ctl.next_time() is None


def test_untolerated_noexecute_evicts_at_once_and_duplicated_comes_back():
    """No toleration: evicted on the first step. A Duplicated binding is scheduled every time
    Karmada looks at it, so once member1 is Ready and its eviction task has ended it is back."""
    fed = federation("member1", "member2")
    ctl = start(fed, make_binding(3, {"replicaScheduling": {"replicaSchedulingType": "Duplicated"}}))
    assert placed(ctl) == {"member1": 3, "member2": 3}
    ctl.set_condition("member1", "False", now=0)
    events = ctl.step(now=0)
    assert ("evict", "member1") in kinds(events)
    assert placed(ctl) == {"member2": 3}
    ctl.set_condition("member1", "True", now=100)
    ctl.step(now=100)
    assert placed(ctl) == {"member1": 3, "member2": 3}


def test_duplicated_stays_off_a_member_still_not_ready():
    """The eviction task ends (the rest is healthy) but member1 still carries not-ready
    NoSchedule: the scheduler keeps it out until it is Ready."""
    fed = federation("member1", "member2")
    ctl = start(fed, make_binding(3, {"replicaScheduling": {"replicaSchedulingType": "Duplicated"}}))
    ctl.set_condition("member1", "False", now=0)
    ctl.step(now=0)
    ctl.step(now=10)
    assert ctl.tasks("Deployment default/web") == [] and placed(ctl) == {"member2": 3}


def test_failover_gate_off_keeps_replicas_on_a_failed_member():
    """Failover is off by default (v1.12+): the member is tainted, nothing is evicted."""
    fed = federation("member1", "member2")
    options = FailoverOptions(taint_policies=(NOT_READY_NO_EXECUTE,))
    ctl = start(fed, make_binding(4, {"replicaScheduling": WEIGHTED}), options)
    before = placed(ctl)
    ctl.set_condition("member1", "Unknown", now=0)
    assert [e.kind for e in ctl.step(now=1000)] == []
    assert placed(ctl) == before and ctl.next_time() is None


def test_noexecute_eviction_flag_off_keeps_replicas():
    """--enable-no-execute-taint-eviction defaults to false: the taint manager runs but evicts nothing."""
    fed = federation("member1", "member2")
    ctl = start(fed, make_binding(4, {"replicaScheduling": WEIGHTED}), FailoverOptions(failover=True, taint_policies=(NOT_READY_NO_EXECUTE,)))
    ctl.set_condition("member1", "Unknown", now=0)
    assert all(e.kind != "evict" for e in ctl.step(now=1000))


def test_directly_purge_mode_purges_at_eviction():
    """failover.cluster.purgeMode Directly: the old replicas go with the eviction."""
    fed = federation("member1", "member2")
    ctl = start(fed, make_binding(4, {"replicaScheduling": WEIGHTED}, {"cluster": {"purgeMode": "Directly"}}),
                health=lambda b, c: "Unhealthy")
    ctl.set_condition("member1", "False", now=0)
    assert kinds(ctl.step(now=0))[:2] == [("evict", "member1"), ("purge", "member1")]
    assert placed(ctl) == {"member2": 4}


def test_graceful_eviction_times_out():
    """The new replicas never get healthy: the task ends after --graceful-eviction-timeout."""
    fed = federation("member1", "member2")
    ctl = start(fed, make_binding(2, {"replicaScheduling": WEIGHTED}), FailoverOptions(
        failover=True, no_execute_eviction=True, taint_policies=(NOT_READY_NO_EXECUTE,), graceful_eviction_timeout=120),
        health=lambda b, c: "Unhealthy")
    ctl.set_condition("member1", "False", now=0)
    ctl.step(now=0)
    assert ctl.next_time() == math.nextafter(120, math.inf)
    assert kinds(ctl.step(now=120)) == []
    assert kinds(ctl.step(now=ctl.next_time())) == [("purge", "member1")]


def test_application_failover_after_toleration():
    """spec.failover.application: the application Unhealthy on member1 for more than
    tolerationSeconds (30) is evicted from it; Never keeps the task (and the old replicas) for good."""
    fed = federation("member1", "member2")
    status = {"member1": "Unhealthy", "member2": "Healthy"}
    app = {"application": {"decisionConditions": {"tolerationSeconds": 30}, "purgeMode": "Never"}}
    ctl = start(fed, make_binding(4, {"replicaScheduling": WEIGHTED}, app, propagate_deps=True), health=lambda b, c: status[c])
    assert kinds(ctl.step(now=0)) == []
    assert ctl.next_time() == math.nextafter(30, math.inf)
    assert kinds(ctl.step(now=30)) == []
    events = ctl.step(now=31)
    assert kinds(events)[:2] == [("evict", "member1"), ("schedule", "")]
    assert placed(ctl) == {"member2": 4}
    (task,) = ctl.tasks("Deployment default/web")
    assert task.suppress_deletion is True and task.reason == "ApplicationFailure"
    assert all(e.kind != "purge" for e in ctl.step(now=10_000))


def test_application_failover_needs_propagate_deps():
    """Upstream's binding filter skips a binding without propagateDeps."""
    fed = federation("member1", "member2")
    app = {"application": {"decisionConditions": {"tolerationSeconds": 0}}}
    ctl = start(fed, make_binding(4, {"replicaScheduling": WEIGHTED}, app), health=lambda b, c: "Unhealthy")
    ctl.step(now=0)
    assert kinds(ctl.step(now=100)) == []


def test_recovered_application_is_forgotten():
    """Healthy again before the toleration ran out: the clock restarts."""
    fed = federation("member1", "member2")
    status = {"member1": "Unhealthy", "member2": "Healthy"}
    app = {"application": {"decisionConditions": {"tolerationSeconds": 30}}}
    ctl = start(fed, make_binding(4, {"replicaScheduling": WEIGHTED}, app, propagate_deps=True), health=lambda b, c: status[c])
    ctl.step(now=0)
    status["member1"] = "Healthy"
    ctl.step(now=20)
    status["member1"] = "Unhealthy"
    ctl.step(now=25)
    assert kinds(ctl.step(now=40)) == []
    assert ("evict", "member1") in kinds(ctl.step(now=56))


def test_new_binding_avoids_unreachable_member():
    """The unreachable NoSchedule taint keeps a new binding off the member (TaintToleration)."""
    fed = federation("member1", "member2")
    ctl = FailoverController([m.cluster for m in fed.members], fed.decide, ON)
    ctl.set_condition("member2", "Unknown", now=0)
    d = fed.decide(make_binding(2, {"replicaScheduling": WEIGHTED}))
    assert d.clusters == [TargetCluster("member1", 2)]


# ---- the schedule path: a federation file's conditions and ClusterTaintPolicies ----------------
EX = Path(example_path("multicluster/federation.yaml")).parent
MEMBERS = [a for m in ("edge-tokyo", "edge-seoul", "cloud-westus2") for a in ("-f", f"{m}={EX / m}.yaml")]
TOKYO = "  name: edge-tokyo\n  labels: {tier: edge}\n"
# the general estimator from the resource summary, blind to edge-tokyo's fragments: it sends web's
# 2-CPU replicas there (with Karmada's default grades it sees that no node has 2 CPUs free)
SUMMARY = ("--estimator", "general", "--feature-gates", "CustomizedClusterResourceModeling=false")


def federation_file(tmp_path: Path, ready: str, extra: str = "") -> str:
    text = (EX / "federation.yaml").read_text()
    status = f"status:\n  conditions:\n  - {{type: Ready, status: \"{ready}\", reason: Probe}}\n"
    text = text.replace(TOKYO + "spec:\n  provider: onprem\n  region: Japan East\n  zones: [japaneast-1]\n",
                        TOKYO + "spec:\n  provider: onprem\n  region: Japan East\n  zones: [japaneast-1]\n" + status)
    assert status in text
    f = tmp_path / "federation.yaml"
    f.write_text(text + extra)
    return str(f)


def schedule(capsys, path: str, *args: str) -> dict:  # noqa: ANN001
    rc = main(["multicluster", "schedule", "-f", path, *MEMBERS, *SUMMARY, "-o", "json", *args])
    out, _ = capsys.readouterr()
    assert rc == 0
    return {d["workload"]: d for d in json.loads(out)["decisions"]}


def test_schedule_keeps_new_workloads_off_a_not_ready_member(tmp_path, capsys):
    """With the general estimator from the summary web's home-edge term places it on edge-tokyo;
    edge-tokyo Ready False gives it not-ready:NoSchedule, so that term fails and the next one
    places web."""
    ready = schedule(capsys, federation_file(tmp_path, "True"))
    assert ready["Deployment default/web"]["clusters"] == [{"name": "edge-tokyo", "replicas": 3}]
    down = schedule(capsys, federation_file(tmp_path, "False"))
    web = down["Deployment default/web"]
    assert web["affinityName"] == "other-edges" and web["clusters"] == [{"name": "edge-seoul", "replicas": 3}]
    assert "edge-tokyo" not in {c["name"] for c in down["Deployment default/reports"]["clusters"]}
    rc = main(["multicluster", "explain", "default/web", "-f", federation_file(tmp_path, "Unknown"), *MEMBERS, *SUMMARY,
               "-o", "json"])
    doc = json.loads(capsys.readouterr()[0])
    assert rc == 0
    tokyo = next(c for c in doc["attempts"][0]["clusters"] if c["name"] == "edge-tokyo")
    taint = next(f for f in tokyo["filter"] if f["plugin"] == "TaintToleration")
    assert taint["reasons"] == ["cluster(s) had untolerated taint {cluster.karmada.io/unreachable:NoSchedule}"]


TAINT_POLICY = """---
apiVersion: policy.karmada.io/v1alpha1
kind: ClusterTaintPolicy
metadata: {name: edge-down}
spec:
  targetClusters: {labelSelector: {matchLabels: {tier: edge}}}
  addOnConditions: [{conditionType: Ready, operator: NotIn, statusValues: ["True"]}]
  removeOnConditions: [{conditionType: Ready, operator: In, statusValues: ["True"]}]
  taints: [{key: site-down, effect: NoExecute}]
"""


def test_cluster_taint_policy_taints_by_conditions(tmp_path, capsys):
    """A ClusterTaintPolicy in the file adds its taint to the matching cluster whose conditions
    match; web tolerates not-ready but not site-down, so edge-tokyo stays out."""
    text = federation_file(tmp_path, "False", TAINT_POLICY)
    p = Path(text)
    p.write_text(p.read_text().replace("    - {key: cost, operator: Equal, value: high, effect: NoSchedule}\n",
                                       "    - {key: cost, operator: Equal, value: high, effect: NoSchedule}\n"
                                       "    - {key: cluster.karmada.io/not-ready, operator: Exists}\n", 1))
    rc = main(["multicluster", "explain", "default/web", "-f", text, *MEMBERS, "--estimator", "general", "-o", "json"])
    doc = json.loads(capsys.readouterr()[0])
    assert rc == 0
    tokyo = next(c for c in doc["attempts"][0]["clusters"] if c["name"] == "edge-tokyo")
    taint = next(f for f in tokyo["filter"] if f["plugin"] == "TaintToleration")
    assert taint["reasons"] == ["cluster(s) had untolerated taint {site-down:NoExecute}"]


@pytest.mark.parametrize(
    ("extra", "ready", "message"),
    [
        (TAINT_POLICY.replace("operator: NotIn", "operator: Exists"), "True",
         'addOnConditions[0].operator: Unsupported value: "Exists"'),
        (TAINT_POLICY.replace("taints: [{key: site-down, effect: NoExecute}]",
                              "taints: [{key: a, effect: NoSchedule}, {key: a, effect: NoSchedule}]"), "True",
         "spec.taints[0]: Duplicate taint with the same key(a) and effect(NoSchedule) is not allowed"),
        ("", "Maybe", 'status.conditions[0].status: unknown value "Maybe"'),
    ],
)
def test_bad_conditions_and_taint_policies_are_one_line(tmp_path, capsys, extra, ready, message):
    rc = main(["multicluster", "schedule", "-f", federation_file(tmp_path, ready, extra), *MEMBERS])
    _, err = capsys.readouterr()
    assert rc == 2 and err.count("\n") == 1 and message in err


# ---- schedule --events: failover over time on the command line ---------------------------------
NOT_READY_POLICY = """---
apiVersion: policy.karmada.io/v1alpha1
kind: ClusterTaintPolicy
metadata: {name: detect-cluster-notready}
spec:
  addOnConditions: [{conditionType: Ready, operator: NotIn, statusValues: ["True"]}]
  removeOnConditions: [{conditionType: Ready, operator: In, statusValues: ["True"]}]
  taints: [{key: cluster.karmada.io/not-ready, effect: NoExecute}]
"""
TIMELINE = """kind: FailoverTimeline
failover: true
enableNoExecuteTaintEviction: true
until: 900
events:
- {at: 100, cluster: edge-tokyo, status: Unknown}
- {at: 400, cluster: edge-tokyo, status: "True"}
"""


def events_run(tmp_path: Path, capsys, timeline: str, *args: str) -> tuple[int, str, str]:  # noqa: ANN001
    fed = federation_file(tmp_path, "True", NOT_READY_POLICY)
    ev = tmp_path / "events.yaml"
    ev.write_text(timeline)
    rc = main(["multicluster", "schedule", "-f", fed, *MEMBERS, *SUMMARY, "--events", str(ev), *args])
    out, err = capsys.readouterr()
    return rc, out, err


def test_events_move_web_off_an_unreachable_edge_and_leave_it_there(tmp_path, capsys, monkeypatch):
    """edge-tokyo goes unreachable at 100 s: web (home-edge term, no toleration) and reports'
    replica there are evicted at once and rescheduled, the old replicas purged; at 400 s edge-tokyo
    is Ready and untainted, and nothing moves back (both are Divided)."""
    rc, out, _ = events_run(tmp_path, capsys, TIMELINE, "-o", "json")
    assert rc == 0
    doc = json.loads(out)
    assert doc["decisions"][0]["clusters"] == [{"name": "edge-tokyo", "replicas": 3}]
    ev = [(e["time"], e["event"], e["workload"], e["cluster"]) for e in doc["failover"]["events"]]
    assert ev == [
        (100, "taint", None, "edge-tokyo"),
        (100, "evict", "Deployment default/web", "edge-tokyo"),
        (100, "evict", "Deployment default/reports", "edge-tokyo"),
        (100, "schedule", "Deployment default/web", None),
        (100, "schedule", "Deployment default/reports", None),
        (100, "purge", "Deployment default/web", "edge-tokyo"),
        (100, "purge", "Deployment default/reports", "edge-tokyo"),
        (400, "taint", None, "edge-tokyo"),
    ]
    first = doc["failover"]["events"][0]
    assert first["taints"] == [{"key": "cluster.karmada.io/unreachable", "value": "", "effect": "NoSchedule"},
                               {"key": "cluster.karmada.io/not-ready", "value": "", "effect": "NoExecute"}]
    assert doc["failover"]["events"][-1]["taints"] == []
    final = {f["workload"]: f for f in doc["failover"]["final"]}
    assert final["Deployment default/web"]["clusters"] == [{"name": "edge-seoul", "replicas": 3}]
    assert final["Deployment default/web"]["affinityName"] == "other-edges"
    # static weights edge 1 : cloud 2 over edge-seoul and the cloud
    assert final["Deployment default/reports"]["clusters"] == [{"name": "cloud-westus2", "replicas": 4},
                                                               {"name": "edge-seoul", "replicas": 2}]
    monkeypatch.setenv("COLUMNS", "160")
    rc, out, _ = events_run(tmp_path, capsys, TIMELINE)
    assert rc == 0 and "Deployment default/web evicted from edge-tokyo (TaintUntolerated, purgeMode Gracefully)" in out
    assert "Deployment default/web → edge-seoul:3\n" in out


def test_events_with_failover_off_only_taint(tmp_path, capsys):
    """The Failover gate off (Karmada's default): the member is tainted, nothing is evicted."""
    rc, out, _ = events_run(tmp_path, capsys, TIMELINE.replace("failover: true", "failover: false"), "-o", "json")
    doc = json.loads(out)
    assert rc == 0 and [e["event"] for e in doc["failover"]["events"]] == ["taint", "taint"]
    assert {f["workload"]: f["clusters"] for f in doc["failover"]["final"]}["Deployment default/web"] == [
        {"name": "edge-tokyo", "replicas": 3}]


@pytest.mark.parametrize(
    ("timeline", "message"),
    [
        (TIMELINE.replace("cluster: edge-tokyo, status: Unknown", "cluster: edge-kyoto, status: Unknown"),
         'events[0].cluster: no member cluster "edge-kyoto"'),
        (TIMELINE.replace("status: Unknown", "status: Down"), 'events[0].status: unknown value "Down"'),
        (TIMELINE.replace("{at: 100, cluster: edge-tokyo, status: Unknown}",
                          "{at: 100, cluster: edge-tokyo, workload: Deployment/default/nope, health: Unhealthy}"),
         'events[0].workload: no scheduled workload "Deployment/default/nope"'),
        (TIMELINE.replace("at: 100,", "at: -1,"), "events[0].at: must be a number of seconds, 0 or more"),
        (TIMELINE.replace("kind: FailoverTimeline", "kind: Timeline"), 'kind: kind must be "FailoverTimeline"'),
        (TIMELINE + "noExecuteTaintEvictionPurgeMode: Never\n", 'noExecuteTaintEvictionPurgeMode: unknown value "Never"'),
    ],
)
def test_bad_events_file_is_one_line(tmp_path, capsys, timeline, message):
    rc, out, err = events_run(tmp_path, capsys, timeline)
    assert rc == 2 and out == "" and err.count("\n") == 1 and message in err and "events.yaml" in err


def test_events_application_health(tmp_path, capsys):
    """A health event drives application failover (spec.failover.application, propagateDeps):
    web, on edge-seoul by its other-edges term (both estimators), is reported Unhealthy there at
    10 s; just after 70 s it is evicted (Directly: purged at once) and scheduled again from its
    observed term on: edge-tokyo cannot hold it, so the cloud term places it."""
    fed = federation_file(tmp_path, "True")
    p = Path(fed)
    p.write_text(p.read_text().replace("      replicaDivisionPreference: Aggregated\n",
                                       "      replicaDivisionPreference: Aggregated\n  propagateDeps: true\n  failover:\n"
                                       "    application:\n      decisionConditions: {tolerationSeconds: 60}\n      purgeMode: Directly\n", 1))
    ev = tmp_path / "events.yaml"
    ev.write_text("kind: FailoverTimeline\nuntil: 1000\nevents:\n"
                  "- {at: 10, cluster: edge-seoul, workload: Deployment/default/web, health: Unhealthy}\n")
    rc = main(["multicluster", "schedule", "-f", fed, *MEMBERS, "--events", str(ev), "-o", "json"])
    doc = json.loads(capsys.readouterr()[0])
    assert rc == 0
    assert doc["decisions"][0]["clusters"] == [{"name": "edge-seoul", "replicas": 3}]
    t = math.nextafter(70, math.inf)
    assert [(e["time"], e["event"], e["cluster"]) for e in doc["failover"]["events"]][:3] == [
        (t, "evict", "edge-seoul"), (t, "purge", "edge-seoul"), (t, "schedule", None)]
    final = doc["failover"]["final"][0]
    assert final["clusters"] == [{"name": "cloud-westus2", "replicas": 3}] and final["affinityName"] == "cloud"


def test_shipped_failover_example(capsys):
    """docs/multicluster.md's command on the shipped files: web is on edge-seoul from the start (no
    edge-tokyo node has 2 CPUs free), so edge-tokyo going unreachable moves reports' replica only."""
    rc = main(["multicluster", "schedule", "-f", str(EX / "federation.yaml"), "-f", str(EX / "cluster-taint-policy.yaml"), *MEMBERS,
               "--events", str(EX / "failover-events.yaml"), "-o", "json"])
    doc = json.loads(capsys.readouterr()[0])
    assert rc == 0
    assert [(e["event"], e["workload"]) for e in doc["failover"]["events"]] == [
        ("taint", None), ("evict", "Deployment default/reports"), ("schedule", "Deployment default/reports"),
        ("purge", "Deployment default/reports"), ("taint", None)]
    final = {f["workload"]: f["clusters"] for f in doc["failover"]["final"]}
    assert final == {"Deployment default/web": [{"name": "edge-seoul", "replicas": 3}],
                     "Deployment default/reports": [{"name": "cloud-westus2", "replicas": 4}, {"name": "edge-seoul", "replicas": 2}]}


def test_rescheduled_replicas_are_created_in_their_members():
    """A failover rescheduling creates the replicas it adds in the members (Federation.apply_changes),
    so the next decision sees them: web's 3 moved replicas are bound in edge-seoul."""
    from kubesched.multicluster.load import load_members, match_policy, read_setup, to_binding
    from kubesched.multicluster.timeline import TimedChange, Timeline, run_timeline

    setup = read_setup([str(EX / "federation.yaml"), str(EX / "cluster-taint-policy.yaml"),
                        *(f"{m}={EX / m}.yaml" for m in ("edge-tokyo", "edge-seoul", "cloud-westus2"))], modeling=False)
    fed = Federation(load_members(setup, None, None, seed=1), estimator="general")
    decisions = []
    for t in setup.templates:
        d = fed.decide(to_binding(t, match_policy(t, setup.policies)))
        fed.apply(d)
        decisions.append(d)
    seoul = fed.by_name["edge-seoul"]
    before = seoul.bound + len(seoul.pending)
    tl = Timeline(failover=True, no_execute_eviction=True, changes=[TimedChange(100, "edge-tokyo", "events[0]", status="Unknown")])
    events, _ = run_timeline(tl, "events.yaml", fed, decisions, setup.conditions, tuple(setup.taint_policies))
    added = {e.binding: e.clusters for e in events if e.kind == "schedule"}
    assert added["Deployment default/web"] == (TargetCluster("edge-seoul", 3),)
    # web's 3 and none of reports' (it keeps 2 on edge-seoul) are new there
    assert seoul.bound + len(seoul.pending) - before == 3


def test_pending_replicas_are_unhealthy_and_drive_application_failover(tmp_path, capsys):
    """With the general estimator from the summary web's 3 replicas (2 CPU each) go to edge-tokyo,
    where no node has 2 CPU free: they stay pending, so web is Unhealthy there. With application failover
    (60 s) it is evicted just after 60 s, placed on edge-seoul where the replicas bind (Healthy),
    and the pending ones on edge-tokyo are purged at once."""
    fed = federation_file(tmp_path, "True")
    p = Path(fed)
    p.write_text(p.read_text().replace("      replicaDivisionPreference: Aggregated\n",
                                       "      replicaDivisionPreference: Aggregated\n  propagateDeps: true\n  failover:\n"
                                       "    application:\n      decisionConditions: {tolerationSeconds: 60}\n", 1))
    ev = tmp_path / "events.yaml"
    ev.write_text("kind: FailoverTimeline\nuntil: 1000\n")
    rc = main(["multicluster", "schedule", "-f", fed, *MEMBERS, *SUMMARY, "--events", str(ev), "-o", "json"])
    doc = json.loads(capsys.readouterr()[0])
    assert rc == 0
    t = math.nextafter(60, math.inf)
    assert [(e["time"], e["event"], e["cluster"]) for e in doc["failover"]["events"]] == [
        (t, "evict", "edge-tokyo"), (t, "schedule", None), (t, "purge", "edge-tokyo")]
    assert doc["failover"]["events"][0]["detail"] == "ApplicationFailure, purgeMode Gracefully"
    assert doc["failover"]["final"][0]["clusters"] == [{"name": "edge-seoul", "replicas": 3}]

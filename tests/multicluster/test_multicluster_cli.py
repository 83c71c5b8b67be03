"""`kubesched multicluster schedule|explain` on the shipped example: the JSON contract, the
estimators' difference on fragmented capacity, the affinity-term failover, bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kubesched.app import example_path
from kubesched.cli import main

EX = Path(example_path("multicluster/federation.yaml")).parent
FILES = ["-f", str(EX / "federation.yaml")] + [a for m in ("edge-tokyo", "edge-seoul", "cloud-westus2") for a in ("-f", f"{m}={EX / m}.yaml")]


def run(capsys, *args: str) -> tuple[int, str, str]:  # noqa: ANN001
    rc = main(list(args))
    out, err = capsys.readouterr()
    return rc, out, err


def test_schedule_json_contract(capsys):
    rc, out, _ = run(capsys, "multicluster", "schedule", *FILES, "-o", "json")
    assert rc == 0
    doc = json.loads(out)
    assert set(doc) == {"decisions", "skipped"}
    web, reports = doc["decisions"]
    assert set(web) == {"workload", "policy", "replicas", "result", "message", "affinityName", "clusters"}
    # edge-tokyo has 6 CPU free but only 1.5 per node: no 2-CPU replica fits there, so the first
    # affinity term fails and the second (every edge) places all three on edge-seoul
    assert web["workload"] == "Deployment default/web" and web["policy"] == "PropagationPolicy default/web"
    assert web["result"] == "Success" and web["affinityName"] == "other-edges"
    assert web["clusters"] == [{"name": "edge-seoul", "replicas": 3}]
    assert reports["policy"] == "ClusterPropagationPolicy batch"
    # static weights 1:1:2 over 6 replicas, Webster; names ascending for equal weights
    assert {c["name"]: c["replicas"] for c in reports["clusters"]} == {"cloud-westus2": 3, "edge-seoul": 2, "edge-tokyo": 1}


def test_general_estimator_sees_fragmentation_only_through_grades(capsys):
    """With Karmada's default resource models (CustomizedClusterResourceModeling, on by default)
    edge-tokyo's nodes are grade 1 (1.5 CPUs free each) and hold no 2-CPU replica of web; with the
    gate off the general estimator divides the summary's 6 free CPUs and sends web there."""
    rc, out, _ = run(capsys, "multicluster", "schedule", *FILES, "--estimator", "general", "-o", "json")
    assert rc == 0
    web = json.loads(out)["decisions"][0]
    assert web["affinityName"] == "other-edges" and web["clusters"] == [{"name": "edge-seoul", "replicas": 3}]
    rc, out, _ = run(capsys, "multicluster", "schedule", *FILES, "--estimator", "general",
                     "--feature-gates", "CustomizedClusterResourceModeling=false", "-o", "json")
    assert rc == 0
    web = json.loads(out)["decisions"][0]
    assert web["affinityName"] == "home-edge" and web["clusters"] == [{"name": "edge-tokyo", "replicas": 3}]


@pytest.mark.parametrize(
    ("gates", "message"),
    [
        ("Failover=true", "--feature-gates: the Failover gate is the --events file's failover field (FailoverTimeline)"),
        ("PolicyPreemption=true", "--feature-gates: unrecognized feature gate: PolicyPreemption"),
        ("CustomizedClusterResourceModeling=maybe", "--feature-gates: invalid value of CustomizedClusterResourceModeling=maybe"),
        ("CustomizedClusterResourceModeling", "--feature-gates: missing bool value for CustomizedClusterResourceModeling"),
    ],
)
def test_bad_karmada_feature_gates_are_one_line(capsys, gates, message):
    rc, out, err = run(capsys, "multicluster", "schedule", *FILES, "--feature-gates", gates)
    assert rc == 2 and out == "" and err.startswith(f"kubesched: error: {message}") and err.count("\n") == 1


def test_explain_shows_both_estimates_and_every_attempt(capsys):
    rc, out, _ = run(capsys, "multicluster", "explain", "Deployment/default/web", *FILES, "-o", "json")
    assert rc == 0
    doc = json.loads(out)
    first, second = doc["attempts"]
    assert first["affinityName"] == "home-edge" and first["result"] == "Unschedulable"
    assert first["message"] == "failed to assign replicas: failed to scale up: Clusters available replicas 0 are not enough to schedule."
    tokyo = next(c for c in first["clusters"] if c["name"] == "edge-tokyo")
    assert tokyo["estimates"] == {"general": 0, "simulated": 0} and tokyo["availableReplicas"] == 0
    cloud = next(c for c in first["clusters"] if c["name"] == "cloud-westus2")
    assert not cloud["feasible"]
    assert cloud["filter"][2] == {
        "plugin": "ClusterAffinity", "code": "Unschedulable",
        "reasons": ["cluster(s) did not match the placement cluster affinity constraint"],
    }
    seoul = next(c for c in second["clusters"] if c["name"] == "edge-seoul")
    # from grades: a node counts as the lowest grade any of its resources reaches, at that grade's minimums
    assert seoul["selected"] and seoul["replicas"] == 3 and seoul["estimates"] == {"general": 5, "simulated": 10}


def test_latency_budget_filters_the_cloud(capsys):
    rc, out, _ = run(capsys, "multicluster", "explain", "default/web", *FILES, "--latency", str(EX / "latency.yaml"), "-o", "json")
    assert rc == 0
    cloud = next(c for c in json.loads(out)["attempts"][0]["clusters"] if c["name"] == "cloud-westus2")
    reasons = {f["plugin"]: f["reasons"] for f in cloud["filter"]}
    # Japan East -> West US 2 is 102 ms (P95) + 5 ms access: over the class's 60 ms
    assert reasons["LatencyBudget"] == ["cluster(s) exceeded the latency budget of the workload's class"]
    assert reasons["NetworkOverhead"] == [
        "Cluster cloud-westus2 does not meet several network requirements from Workload dependencies: Satisfied: 0 Violated: 1"
    ]


def test_no_cluster_fits_prints_karmadas_fit_error(tmp_path, capsys):
    f = tmp_path / "only.yaml"
    f.write_text((EX / "federation.yaml").read_text().replace("clusterNames: [cloud-westus2]\n    clusterTolerations", "clusterNames: [nowhere]\n    clusterTolerations"))
    rc, out, _ = run(capsys, "multicluster", "schedule", "-f", str(f), "-f", f"edge-tokyo={EX / 'edge-tokyo.yaml'}", "-o", "json")
    assert rc == 0
    web = json.loads(out)["decisions"][0]
    assert web["result"] == "Unschedulable"  # the first term's error is the result when every term fails


@pytest.mark.parametrize(
    "snippet,replacement,message",
    [
        ("replicaDivisionPreference: Aggregated", "replicaDivisionPreference: Aggregated\n      replicaWeight: 3",
         'documents[3].spec.placement.replicaScheduling.replicaWeight: unknown field "replicaWeight"'),
        ("labelSelector: {matchLabels: {tier: edge}}\n    - affinityName: cloud",
         "labelSelector: {matchExpressions: [{key: tier, operator: Among, values: [edge]}]}\n    - affinityName: cloud",
         "documents[3].spec.placement.clusterAffinities[1].labelSelector.matchExpressions[0].operator"),
        ("  region: Japan East", "  region: Japan East\n  regions: [x]", 'documents[0].spec.regions: unknown field "regions"'),
        ("- affinityName: cloud\n", "- affinityName: home-edge\n", "each affinity term in a policy must have a unique name"),
        # a metadata that is no mapping: an AttributeError traceback before (fuzz campaign of issue 22)
        ("metadata:\n  name: edge-tokyo\n  labels: {tier: edge}\n", "metadata: edge-tokyo\n",
         "documents[0].metadata: expected an object, got str"),
        ("metadata:\n  name: batch\n", "metadata: [batch]\n", "documents[4].metadata: expected an object, got list"),
        ("  name: edge-seoul\n", "  name: edge-seoul\n  deletionTimestamp: [now]\n",
         "documents[1].metadata.deletionTimestamp: expected a string, got list"),
        # Deployment replicas are *int32 (the API server refuses more); before, the members were
        # asked to create 2^31 pods and the run never ended
        ("replicas: 6", "replicas: 2147483648", "documents[6].spec.replicas: invalid value 2147483648: must be in"),
        ("replicas: 6", "replicas: -1", "documents[6].spec.replicas: must be greater than or equal to 0"),
        ("replicas: 6", "replicas: 100000", "documents[6].spec: the resource templates ask for more than 100,000 replicas"),
    ],
)
def test_bad_input_is_one_line_naming_file_and_field(tmp_path, capsys, snippet, replacement, message):
    text = (EX / "federation.yaml").read_text()
    assert snippet in text
    f = tmp_path / "bad.yaml"
    f.write_text(text.replace(snippet, replacement, 1))
    rc, out, err = run(capsys, "multicluster", "schedule", "-f", str(f), "-f", f"edge-tokyo={EX / 'edge-tokyo.yaml'}")
    assert rc == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith(f"kubesched: error: {f}: ") and message in err


def test_job_counts_are_int32_and_name_their_field(tmp_path, capsys):
    job = (
        "apiVersion: batch/v1\nkind: Job\nmetadata: {name: j}\nspec:\n  parallelism: 2\n  completions: -3\n"
        "  template: {spec: {containers: [{name: c, image: i}]}}\n"
    )
    f = tmp_path / "job.yaml"
    f.write_text(job)
    rc, _, err = run(capsys, "multicluster", "schedule", "-f", str(f), "-f", f"edge-tokyo={EX / 'edge-tokyo.yaml'}")
    # the field that is wrong (the old message named spec.replicas, which a Job does not have)
    assert rc == 2 and f"{f}: document.spec.completions: must be greater than or equal to 0" in err
    f.write_text(job.replace("completions: -3", "completions: 3").replace("parallelism: 2", "parallelism: 1e3"))
    rc, _, err = run(capsys, "multicluster", "schedule", "-f", str(f), "-f", f"edge-tokyo={EX / 'edge-tokyo.yaml'}")
    assert rc == 2 and f"{f}: document.spec.parallelism: expected an integer" in err


def test_member_objects_in_a_karmada_file_are_refused(tmp_path, capsys):
    rc, _, err = run(capsys, "multicluster", "schedule", "-f", str(EX / "edge-tokyo.yaml"))
    assert rc == 2 and "give member dumps as NAME=FILE" in err and "items[0].kind" in err


def test_a_policy_for_another_scheduler_is_skipped(tmp_path, capsys):
    f = tmp_path / "other.yaml"
    f.write_text((EX / "federation.yaml").read_text().replace(
        "  resourceSelectors:\n  - {apiVersion: apps/v1, kind: Deployment, name: web}",
        "  schedulerName: my-scheduler\n  resourceSelectors:\n  - {apiVersion: apps/v1, kind: Deployment, name: web}"))
    rc, out, _ = run(capsys, "multicluster", "schedule", "-f", str(f), "-f", f"edge-seoul={EX / 'edge-seoul.yaml'}", "-o", "json")
    doc = json.loads(out)
    assert rc == 0 and [d["workload"] for d in doc["decisions"]] == ["Deployment default/reports"]
    assert doc["skipped"] == [{"workload": "Deployment default/web",
                               "reason": 'PropagationPolicy default/web names schedulerName "my-scheduler"'}]


def test_a_federation_without_its_member_dumps_says_so(capsys):
    """Karmada's reason stays in the result; a warning names the members whose dumps are missing
    and how to give them (issue 28: every cluster "did not have the API resource", no hint)."""
    fed = str(EX / "federation.yaml")
    rc, out, err = run(capsys, "multicluster", "schedule", "-f", fed, "-o", "json")
    assert rc == 0
    web = json.loads(out)["decisions"][0]
    assert web["message"] == "0/3 clusters are available: 3 cluster(s) did not have the API resource."
    assert "give each member's dump as -f NAME=FILE" in err
    rc, out, err = run(capsys, "multicluster", "schedule", "-f", fed, "-f", f"edge-tokyo={EX / 'edge-tokyo.yaml'}", "-o", "json")
    assert rc == 0
    warning = next(line for line in err.splitlines() if "warning" in line)
    assert warning == (
        "kubesched: warning: no member dump for cloud-westus2, edge-seoul and no status.apiEnablements in their Cluster "
        "objects: every template is rejected there as not having the API resource; give each member's dump as "
        "-f NAME=FILE (e.g. -f cloud-westus2=cloud-westus2.yaml)"
    )
    rc, _, err = run(capsys, "multicluster", "explain", "default/web", "-f", fed, "-o", "json")
    assert rc == 0 and "kubesched: warning: no member dump for cloud-westus2, edge-seoul, edge-tokyo and" in err
    # every dump given: no warning
    rc, _, err = run(capsys, "multicluster", "schedule", *FILES, "-o", "json")
    assert rc == 0 and "warning" not in err

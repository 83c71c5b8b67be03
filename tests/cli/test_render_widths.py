"""Tables read whole at 80, 120 and 200 columns: every name and number on one line, nothing cut.

Each table is drawn as the CLI draws it, on a rich Console of the given width; a token is
readable when it appears unbroken on one line of the output, and nothing may be cut ("…").
"""

from __future__ import annotations

import json

import pytest
from cli_testlib import NODES, WEB, WIDTHS, max_line, render, whole, write_cluster

from kubesched.app import build_session
from kubesched.batch import schedule_all
from kubesched.bench import workloads as W
from kubesched.bench.measure import Throughput
from kubesched.bench.report import _f, print_results
from kubesched.bench.runner import BenchResult
from kubesched.cli import main
from kubesched.render import explain_table, plugins_table, schedule_table


@pytest.fixture(scope="module")
def cluster(tmp_path_factory) -> str:
    return write_cluster(tmp_path_factory.mktemp("readable"))


def _readable(text: str, tokens: set[str], width: int) -> None:
    assert not whole(text, tokens), f"cut or wrapped at {width} columns: {whole(text, tokens)}\n{text}"
    assert "…" not in text, text
    assert max_line(text) <= width


def _explain_json(capsys, *argv: str) -> dict:
    assert main(["explain", *argv, "--seed", "1", "-o", "json"]) == 0
    return json.loads(capsys.readouterr().out)


def _explain_tokens(result: dict) -> set[str]:
    tokens = {n["name"] for n in result["nodes"]}
    for n in result["nodes"]:
        tokens |= {f["plugin"] for f in n["filter"] if f["code"] != "Success"}
        tokens |= {s["plugin"] for s in n["score"]}
        tokens |= {f"{s['normalized']}×{s['weight']}={s['weighted']}" for s in n["score"]}
        if n["total"] is not None:
            tokens.add(str(n["total"]))
    return tokens


@pytest.mark.parametrize("width", WIDTHS)
def test_schedule_table_names_whole(cluster, width):
    result = schedule_all(build_session([cluster], seed=1))
    text = render(lambda c: schedule_table(result, console=c), width)
    tokens = {p["pod"] for p in result.placements} | {e["pod"] for e in result.skipped}
    tokens |= {p["node"] for p in result.placements if p["node"]} | set(WEB)
    tokens |= {v["pod"] for p in result.placements for v in p["victims"]}
    assert {p["node"] for p in result.placements if p["node"]} <= set(NODES)
    _readable(text, tokens, width)
    # the three replicas that looked the same when cut are told apart
    assert sum(text.count(w) for w in WEB) == len(WEB)


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("pod", ["web/web-frontend-7d9f8b6c5-x2x4q", "ml/train-llm-huge", "critical/ingest-priority-0"])
def test_explain_table_names_and_scores_whole(capsys, cluster, width, pod):
    result = _explain_json(capsys, "-f", cluster, pod)
    text = render(lambda c: explain_table(result, console=c), width)
    _readable(text, _explain_tokens(result), width)
    failing = {r for n in result["nodes"] for f in n["filter"] for r in f["reasons"]}
    for reason in failing:  # reasons may wrap, but every word of them is there
        assert all(word in text for word in reason.split())


@pytest.mark.parametrize("width", WIDTHS)
def test_explain_shipped_example(capsys, width):
    result = _explain_json(capsys, "ml/openb-pod-0003")
    text = render(lambda c: explain_table(result, console=c), width)
    _readable(text, _explain_tokens(result), width)


def test_explain_layout_follows_the_width(capsys, cluster):
    result = _explain_json(capsys, "-f", cluster, "web/web-frontend-7d9f8b6c5-x2x4q")
    wide = render(lambda c: explain_table(result, console=c), 200)
    narrow = render(lambda c: explain_table(result, console=c), 80)
    header = next(line for line in wide.splitlines() if "node" in line and "total" in line)
    assert "NodeResourcesBalancedAllocation" in header  # a column per score plugin
    # narrow: one block per node, the node on its own line, a line per score plugin
    lines = narrow.splitlines()
    for node in NODES[:7]:
        (i,) = [k for k, line in enumerate(lines) if line.startswith(node)]
        assert lines[i + 1].strip().startswith("filters")
        assert lines[i + 2].split() == ["TaintToleration", "100×3=300"]


def _bench_result(name: str, nodes: int, pods: int, avg: float | None) -> BenchResult:
    w = next(w for w in W.WORKLOADS if w.full_name == name)
    samples = [avg, avg * 0.9, avg * 1.1] if avg else []
    tp = Throughput(avg, avg and avg * 0.95, avg and avg * 1.2, avg and avg * 1.3, avg and avg * 1.4, samples, 9876.5)
    return BenchResult(
        workload=name, test_case=w.test_case, name=w.name, scale=1.0, seed=0, params={}, nodes=nodes,
        init_pods=5000, measured_pods=pods, threshold=w.threshold, target=w.target, throughput=tp,
        wall_s=123.45, cpu_s=118.9, setup_s=40.0, scheduled=pods, unschedulable=0, init_scheduled=5000,
        init_unschedulable=0, bound_pods=0, churn_created=0, churn_scheduled=0, preempted=0, attempts=pods,
        idle_skipped_s=0.0, peak_rss_mib=1234.5, rss_start_mib=100.0,
    )  # fmt: skip


BENCH = [
    ("SchedulingBasic/5000Nodes_10000Pods", 5000, 10000, 12345.6),
    ("SchedulingRequiredPodAntiAffinityWithNSSelector/5000Nodes_2000Pods", 6000, 2000, 876.5),
    ("PreemptionBasic/1000Nodes", 1000, 1000, None),
]


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("wide", [False, True])
def test_bench_table_numbers_whole(width, wide):
    results = [_bench_result(*b) for b in BENCH]
    text = render(lambda c: print_results(c, results, wide), width)
    tokens = set()
    for r in results:
        tp = r.throughput
        tokens |= {r.workload, f"{r.nodes}", f"{r.measured_pods}", _f(tp.headline), _f(r.wall_s, 2)}
        if wide:
            tokens |= {_f(x) for x in (tp.average, tp.perc50, tp.perc90, tp.perc95, tp.perc99, tp.overall)}
            tokens |= {_f(r.cpu_s, 2), _f(r.peak_rss_mib), _f(r.threshold), _f(r.target)}
    _readable(text, tokens, width)
    assert "12,346" in text and ("14,815" in text) == wide  # p90 only with --wide


def test_bench_key_columns_fit_120():
    """The default table keeps one row per workload at 120 columns; --wide needs more."""
    results = [_bench_result(*b) for b in BENCH]
    text = render(lambda c: print_results(c, results), 120)
    row = next(line for line in text.splitlines() if "SchedulingBasic/5000Nodes_10000Pods" in line)
    assert "12,346" in row and "123.45" in row
    text = render(lambda c: print_results(c, results, True), 120)
    row = next(line for line in text.splitlines() if "SchedulingBasic/5000Nodes_10000Pods" in line)
    assert "12,346" not in row  # the figures go under the name instead


@pytest.mark.parametrize("width", WIDTHS)
def test_plugins_table_with_a_long_plugin_path(tmp_path, width):
    rows = [
        {"name": "NodeResourcesBalancedAllocation", "origin": "built-in", "target": "", "points": ["preScore", "score"], "error": ""},
        {"name": "MyPlugin", "origin": str(tmp_path / "a" / "deeply" / "nested" / "plugins_file.py"), "target": "", "points": ["filter"], "error": ""},
    ]  # fmt: skip
    text = render(lambda c: plugins_table(rows, console=c), width)
    tokens = {"NodeResourcesBalancedAllocation", "MyPlugin", "preScore, score"}
    if width >= len(rows[1]["origin"]) + 10:
        tokens.add(rows[1]["origin"])
    _readable(text, tokens, width)


# ---- kubesched multicluster (issue 28: at 80 columns, cells of ~7 characters, reasons a word a line)
def _multicluster_json(capsys, command: str, *argv: str) -> dict:
    from kubesched.app import example_path

    ex = example_path("multicluster/federation.yaml").rsplit("/", 1)[0]
    files = ["-f", f"{ex}/federation.yaml"]
    files += [a for m in ("edge-tokyo", "edge-seoul", "cloud-westus2") for a in ("-f", f"{m}={ex}/{m}.yaml")]
    assert main(["multicluster", command, *argv, *files, "--latency", f"{ex}/latency.yaml", "--seed", "1", "-o", "json"]) == 0
    return json.loads(capsys.readouterr().out)


@pytest.mark.parametrize("width", WIDTHS)
def test_multicluster_explain_names_and_numbers_whole(capsys, width):
    from kubesched.multicluster.render import explain_table as mc_explain

    doc = _multicluster_json(capsys, "explain", "default/web")
    text = render(lambda c: mc_explain(doc, console=c), width)
    tokens = {"Deployment default/web", "PropagationPolicy default/web", "(general 5, simulated 10)"}
    for at in doc["attempts"]:
        for cl in at["clusters"]:
            tokens.add(cl["name"])
            tokens |= {f["plugin"] for f in cl["filter"] if f["code"] != "Success"}
            tokens |= {s["plugin"] for s in cl["score"]}
    _readable(text, tokens, width)
    reasons = {r for at in doc["attempts"] for cl in at["clusters"] for f in cl["filter"] for r in f["reasons"]}
    assert "cluster(s) exceeded the latency budget of the workload's class" in reasons
    for reason in reasons:  # reasons wrap, at word breaks, never a word a line
        assert all(word in text for word in reason.split())
    if width == 80:  # one block per cluster: the name on its own line, then its details
        lines = text.splitlines()
        (i,) = [k for k, line in enumerate(lines) if line.startswith("edge-seoul ★")]
        assert lines[i].split()[-2:] == ["total", "0"]
        assert [line.split()[0] for line in lines[i + 1 : i + 7]] == [
            "filters", "ClusterAffinity", "ClusterLocality", "NetworkOverhead", "available", "replicas",
        ]
        # edge-seoul from Karmada's default grades: 5 where its scheduler fits 10
        assert lines[i + 5].split()[1:] == ["5", "(general", "5,", "simulated", "10)"]
        assert lines[i + 6].split() == ["replicas", "3"]
    if width == 200:  # a column per score plugin
        assert any("NetworkOverhead" in line and "available" in line for line in text.splitlines())


@pytest.mark.parametrize("width", WIDTHS)
def test_multicluster_schedule_names_whole(capsys, width):
    from kubesched.multicluster.render import schedule_table as mc_schedule

    doc = _multicluster_json(capsys, "schedule")
    text = render(lambda c: mc_schedule(doc, ["edge-tokyo", "edge-seoul", "cloud-westus2"], console=c), width)
    tokens = {d["workload"] for d in doc["decisions"]} | {d["policy"] for d in doc["decisions"]}
    tokens |= {"edge-seoul:3", "cloud-westus2:3", "edge-seoul:2", "edge-tokyo:1"}  # a list may wrap between targets
    _readable(text, tokens, width)


@pytest.mark.parametrize("width", WIDTHS)
def test_multicluster_failover_timeline_names_whole(capsys, tmp_path, width):
    """``schedule --events``: workloads, clusters and taints read whole in the failover table."""
    from kubesched.multicluster.render import failover_table

    events = tmp_path / "events.yaml"
    events.write_text("kind: FailoverTimeline\nfailover: true\nenableNoExecuteTaintEviction: true\nuntil: 900\nevents:\n"
                      "- {at: 100, cluster: edge-tokyo, status: Unknown}\n- {at: 400, cluster: edge-tokyo, status: \"True\"}\n")
    policy = tmp_path / "taint-policy.yaml"  # Karmada's NoExecute taints come from a ClusterTaintPolicy
    policy.write_text("apiVersion: policy.karmada.io/v1alpha1\nkind: ClusterTaintPolicy\nmetadata: {name: down}\nspec:\n"
                      "  addOnConditions: [{conditionType: Ready, operator: NotIn, statusValues: ['True']}]\n"
                      "  taints: [{key: cluster.karmada.io/not-ready, effect: NoExecute}]\n")
    doc = _multicluster_json(capsys, "schedule", "--events", str(events), "-f", str(policy))["failover"]
    text = render(lambda c: failover_table(doc, console=c), width)
    assert [e["event"] for e in doc["events"]][:2] == ["taint", "evict"]
    tokens = {"Deployment default/web", "Deployment default/reports", "edge-tokyo", "cluster.karmada.io/unreachable:NoSchedule",
              "TaintUntolerated"}
    _readable(text, tokens, width)

"""kubesched ui's JSON API, through Starlette's test client: the numbers each view shows and the
one-line 400s for bad input."""

from __future__ import annotations

import json
import shutil
import urllib.request
from pathlib import Path
from typing import Any

import pytest
import yaml

from kubesched.cli import main
from kubesched.errors import InputError
from kubesched.ui import interop
from kubesched.ui.guard import Roots
from kubesched.ui.sources import open_source
from tests.ui.conftest import PAYMENTS, PREEMPT, ui_client


@pytest.fixture(scope="module")
def cluster_ws():
    return open_source(None, files=[PREEMPT], seed=0)


@pytest.fixture
def client(cluster_ws):
    return ui_client(cluster_ws)


def test_meta_names_the_views(client) -> None:
    m = client.get("/api/meta").json()
    assert m["kind"] == "cluster"
    assert m["views"] == ["cluster", "pods", "decision", "whatif", "edit"]
    assert m["steps"] == 3  # batch-b deleted, small bound, urgent bound
    assert "KubeSchedulerConfiguration" in m["config_yaml"]


def test_cluster_view_allocation_and_pending(client) -> None:
    d = client.get("/api/cluster").json()
    nodes = d["nodes"]
    assert nodes["name"] == ["node-a", "node-b"]
    # end of the run: batch-a (3) on node-a; small (0.5) and urgent (2) on node-b
    assert nodes["req:cpu"] == [3000, 2500]
    assert nodes["pct:cpu"] == [75.0, 62.5]
    assert d["cluster"]["cpu"] == {"requested": 5500, "allocatable": 8000, "pct": 68.75}
    assert [p["pod"] for p in d["pending"]["pods"]] == ["default/huge"]
    assert d["pending"]["reasons"] == [{"reason": "Insufficient cpu", "pods": 1}]
    pods = dict(zip(d["pods"]["pod"], d["pods"]["state"], strict=True))
    assert pods == {
        "default/batch-a": "bound in input", "default/batch-b": "preempted", "default/urgent": "scheduled",
        "default/huge": "unschedulable", "default/small": "scheduled",
    }
    # the victim has no final node, and its message says by whom, when and from where
    row = d["pods"]["pod"].index("default/batch-b")
    assert d["pods"]["node"][row] == ""
    assert d["pods"]["message"][row] == "preempted by default/urgent (its attempt 1) at t = 0 s, from node-b"


def test_cluster_view_at_the_start_shows_the_input(client) -> None:
    d = client.get("/api/cluster?step=0").json()
    assert d["nodes"]["req:cpu"] == [3000, 3000]
    assert dict(zip(d["pods"]["pod"], d["pods"]["node_now"], strict=True))["default/batch-b"] == "node-b"


@pytest.mark.parametrize(
    ("query", "field"), [("step=99", "step"), ("step=-1", "step"), ("step=x", "step")]
)
def test_bad_step_is_a_400_naming_the_field(client, query: str, field: str) -> None:
    r = client.get(f"/api/cluster?{query}")
    assert r.status_code == 400
    assert r.json()["field"] == field
    assert "\n" not in r.json()["error"]


def test_decision_view_of_the_preemptor(client) -> None:
    d = client.get("/api/decision?pod=default/urgent").json()
    assert [a["outcome"] for a in d["attempts"]] == ["unschedulable", "scheduled"]
    first, second = d["attempts"]
    assert first["nominated_node"] == "node-b"
    assert first["victims"] == [{"pod": "default/batch-b", "node": "node-b"}]
    assert first["time"] == 0.0 and second["time"] >= 1.0  # retried after its backoff
    assert "Filter" in first["plugin_ms"] and "PostFilter" in first["plugin_ms"]
    assert d["selected"] == "node-b" and d["nominated_node"] == "node-b"
    assert d["victims"] == [{"pod": "default/batch-b", "node": "node-b"}]
    # judged as attempt 2 saw the cluster: batch-b gone, small on node-b
    assert d["basis"]["step"] == 2
    assert d["explain"]["selected"] == "node-b"
    by_node = {n["name"]: n for n in d["explain"]["nodes"]}
    assert by_node["node-a"]["feasible"] is False
    fit = next(f for f in by_node["node-a"]["filter"] if f["plugin"] == "NodeResourcesFit")
    assert fit["reasons"] == ["Insufficient cpu"]
    assert by_node["node-b"]["total"] is not None
    assert "Filter" in d["explain_plugin_ms"] and "Score" in d["explain_plugin_ms"]


def test_decision_of_an_earlier_attempt_sees_the_victim(client) -> None:
    d = client.get("/api/decision?pod=default/urgent&attempt=1").json()
    assert d["basis"]["step"] == 0
    assert d["explain"]["selected"] is None  # both nodes full before the preemption
    assert "Insufficient cpu" in d["explain"]["message"]


@pytest.mark.parametrize(
    ("query", "field"),
    [("pod=default/nope", "pod"), ("pod=default/urgent&attempt=7", "attempt"), ("pod=default/urgent&attempt=x", "attempt")],
)
def test_bad_decision_requests(client, query: str, field: str) -> None:
    r = client.get(f"/api/decision?{query}")
    assert r.status_code == 400 and r.json()["field"] == field


DISABLE_FIT_SCORE = """
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  plugins:
    postFilter:
      disabled: [{name: DefaultPreemption}]
"""


def test_whatif_compares_configurations(client) -> None:
    meta = client.get("/api/meta").json()
    r = client.post(
        "/api/whatif",
        json={"configs": [{"name": "as loaded", "yaml": meta["config_yaml"]}, {"name": "no preemption", "yaml": DISABLE_FIT_SCORE}]},
    )
    assert r.status_code == 200, r.text
    d = r.json()
    a, b = d["runs"]
    assert (a["name"], b["name"]) == ("as loaded", "no preemption")
    assert a["preempted"] == 1 and b["preempted"] == 0
    assert a["unschedulable"] == 1 and b["unschedulable"] == 2  # urgent stays pending without preemption
    assert {x["pod"]: x["nodes"] for x in d["diff"]}["default/urgent"] == {"as loaded": "node-b", "no preemption": None}
    # balance: cpu % per node, min / max / sd over the two nodes
    assert a["balance"]["cpu"]["min"] == 62.5 and a["balance"]["cpu"]["max"] == 75.0
    assert a["balance"]["cpu"]["sd"] == 6.25


def test_whatif_move_pins_a_pod(client) -> None:
    meta = client.get("/api/meta").json()
    body = {"configs": [{"name": "a", "yaml": meta["config_yaml"]}], "moves": [{"pod": "default/small", "node": "node-a"}]}
    d = client.post("/api/whatif", json=body).json()
    placements = {p["pod"]: p["node"] for p in d["runs"][0]["placements"]}
    assert "default/small" not in placements  # bound by hand, not scheduled
    assert d["runs"][0]["balance"]["cpu"]["max"] == 87.5  # node-a: 3 + 0.5 of 4 CPUs


@pytest.mark.parametrize(
    ("body", "field_part"),
    [
        ({"configs": [{"name": "x", "yaml": "kind: KubeSchedulerConfiguration\napiVersion: kubescheduler.config.k8s.io/v1\nprofiles: 3\n"}]}, "profiles"),
        ({"configs": [{"name": "x", "yaml": "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles:\n- plugins: {score: {enabled: [{name: NoSuchPlugin}]}}\n"}]}, "configs[0]"),
        ({"configs": []}, "configs"),
        ({"configs": [{"name": "x", "yaml": ""}], "moves": [{"pod": "default/small", "node": "nowhere"}]}, "moves[0].node"),
        ({"configs": [{"name": "x", "yaml": ": : :"}]}, "configs[0]"),
    ],
)
def test_whatif_bad_input_is_a_400(client, body, field_part: str) -> None:
    r = client.post("/api/whatif", json=body)
    assert r.status_code == 400, r.text
    err = r.json()
    assert field_part in (err["field"] or "") + err["error"]


def test_body_limits_and_bad_json(cluster_ws) -> None:
    c = ui_client(cluster_ws, max_body=1000)
    r = c.post("/api/whatif", content=b"x" * 2000, headers={"content-type": "application/json"})
    assert r.status_code == 400 and r.json()["field"] == "body"
    r = c.post("/api/whatif", content=b"{not json", headers={"content-type": "application/json"})
    assert r.status_code == 400 and "not valid JSON" in r.json()["error"]


def test_snapshot_export_import_round_trip(client) -> None:
    r = client.get("/api/export/snapshot?step=3")
    assert r.status_code == 200
    doc = yaml.safe_load(r.text)
    kinds = [i["kind"] for i in doc["items"]]
    assert kinds.count("Node") == 2
    placed = {i["metadata"]["name"]: i["spec"].get("nodeName") for i in doc["items"] if i["kind"] == "Pod"}
    assert placed == {"batch-a": "node-a", "small": "node-b", "urgent": "node-b", "huge": None}
    r = client.post("/api/import/snapshot", content=r.text.encode())
    assert r.status_code == 200 and r.json()["nodes"] == 2
    d = client.get("/api/cluster").json()
    assert d["nodes"]["req:cpu"] == [3000, 2500]  # the imported cluster, huge still pending
    assert [p["pod"] for p in d["pending"]["pods"]] == ["default/huge"]


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("items: [", "not valid YAML"),
        ("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {containers: []}\n", "no Node objects"),
        ("apiVersion: v1\nkind: Gizmo\n", "unknown kind"),
    ],
)
def test_bad_snapshot_upload(client, text: str, needle: str) -> None:
    r = client.post("/api/import/snapshot", content=text.encode())
    assert r.status_code == 400 and needle in r.json()["error"]


def test_simulator_annotations(client) -> None:
    r = client.get("/api/export/simulator-annotations")
    pods = {i["metadata"]["name"]: i for i in yaml.safe_load(r.text)["items"]}
    ann = pods["urgent"]["metadata"]["annotations"]
    assert ann[interop.SELECTED_NODE] == "node-b"
    filt = json.loads(ann[interop.FILTER_RESULT])
    assert filt["node-b"]["NodeResourcesFit"] == "passed"
    assert filt["node-a"]["NodeResourcesFit"] == "Insufficient cpu"
    score = json.loads(ann[interop.SCORE_RESULT])
    final = json.loads(ann[interop.FINALSCORE_RESULT])
    assert all(isinstance(v, str) for v in score["node-b"].values())
    # the final score is the normalized score times the weight: TaintToleration's weight is 3
    assert int(final["node-b"]["TaintToleration"]) % 3 == 0
    assert pods["huge"]["metadata"]["annotations"][interop.SELECTED_NODE] == ""  # reserved no node, as the simulator writes it


def test_open_rejects_a_folder_that_is_no_output(cluster_ws, tmp_path: Path) -> None:
    client = ui_client(cluster_ws, roots=Roots.of([tmp_path]))
    (tmp_path / "notes.txt").write_text("hello")
    r = client.post("/api/open", json={"path": str(tmp_path)})
    assert r.status_code == 400
    assert r.json()["field"] == "path" and "not a kubesched output folder" in r.json()["error"]
    r = client.post("/api/open", json={"path": str(tmp_path / "missing")})
    assert r.status_code == 400 and "no such file" in r.json()["error"]


def test_simulation_folder(sim_dir: Path) -> None:
    ws = open_source(str(sim_dir))
    c = ui_client(ws)
    m = c.get("/api/meta").json()
    assert m["kind"] == "simulation" and "simulation" in m["views"] and m["note"] == ""
    pods = _csv(sim_dir / "pods.csv")
    d = c.get("/api/cluster").json()
    assert d["pods"]["pod"] == [r["pod"] for r in pods]
    # mid-run: the pods the events say are running are the pods on nodes
    mid = m["steps"] // 2
    d = c.get(f"/api/cluster?step={mid}").json()
    running = sum(1 for x in d["pods"]["node_now"] if x)
    assert running == sum(d["nodes"]["pods"]) > 0
    dash = c.get("/api/dashboard/simulation").json()
    assert dash["x"] == "end" and len(dash["bins"]["cpu_alloc_pct"]) == len(_csv(sim_dir / "bins.csv"))
    assert dash["nodes_over_time"]["nodes"][0] == 6
    # a failed pod's decision: explained against the cluster its last attempt saw
    failed = [r["pod"] for r in pods if r["state"] in ("failed", "withdrawn")]
    assert failed
    d = c.get(f"/api/decision?pod={failed[0]}").json()
    assert d["attempts"] and d["attempts"][-1]["outcome"] == "unschedulable"
    assert d["explain"]["selected"] is None


def test_corrupt_simulation_files(sim_dir: Path, tmp_path: Path) -> None:
    bad = tmp_path / "sim"
    shutil.copytree(sim_dir, bad)
    (bad / "pods.csv").write_text("pod,state,node,arrival\nx,failed,,soon\n")
    with pytest.raises(Exception, match=r"pods.csv:2: arrival: invalid number 'soon'"):
        open_source(str(bad))
    (bad / "pods.csv").write_text("nothing,here\n")
    with pytest.raises(Exception, match="missing column 'pod'"):
        open_source(str(bad))
    (bad / "summary.json").write_text("{")
    with pytest.raises(Exception, match="summary.json: not valid JSON"):
        open_source(str(bad))


def test_experiment_folder_paired_deltas(exp_dir: Path) -> None:
    c = ui_client(open_source(str(exp_dir)))
    d = c.get("/api/dashboard/experiment").json()
    assert d["baseline"] == "Random" and d["policies"] == ["BestFit", "Random"] or set(d["policies"]) == {"Random", "BestFit"}
    runs = _csv(exp_dir / "runs.csv")
    val = {(r["policy"], int(r["seed"])): float(r["unallocated_130"]) for r in runs}
    diffs = [val[("BestFit", s)] - val[("Random", s)] for s in (1, 2)]
    delta = next(x for x in d["deltas"] if x["policy"] == "BestFit")
    assert delta["seeds"] == [1, 2]
    assert delta["unallocated_130"]["mean"] == pytest.approx(sum(diffs) / 2, abs=1e-4)
    bar = next(b for b in d["bars"] if b["policy"] == "Random")
    assert bar["unallocated_130"]["mean"] == pytest.approx((val[("Random", 1)] + val[("Random", 2)]) / 2, abs=1e-4)
    assert "unallocated" in d["curves"]
    r = c.get("/api/dashboard/experiment?baseline=Nope")
    assert r.status_code == 400 and r.json()["field"] == "baseline"
    assert c.get("/api/cluster").status_code == 400


def test_cli_refuses_bad_sources(tmp_path: Path, capsys) -> None:
    assert main(["ui", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("kubesched: error: ") and "not a kubesched output folder" in err and err.count("\n") == 1
    assert main(["ui", "--listen", "nonsense"]) == 2
    assert "--listen" in capsys.readouterr().err


def _csv(path: Path) -> list[dict[str, str]]:
    import csv

    with path.open() as f:
        return list(csv.DictReader(f))


def test_simulation_whatif_replays_the_workload(sim_dir: Path) -> None:
    c = ui_client(open_source(str(sim_dir)))
    assert "whatif" in c.get("/api/meta").json()["views"]
    most = (
        "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles:\n"
        "- schedulerName: default-scheduler\n  pluginConfig:\n  - name: NodeResourcesFit\n    args:\n"
        "      scoringStrategy: {type: MostAllocated}\n"
    )
    d = c.post("/api/whatif", json={"configs": [{"name": "default", "yaml": ""}, {"name": "most", "yaml": most}]}).json()
    first, second = d["runs"]
    summary = json.loads((sim_dir / "summary.json").read_text())
    # the default configuration replays the folder's own run: same counts as its summary
    assert first["placed"] == summary["pods"]["scheduled"] and first["unschedulable"] == summary["pods"]["failed"]
    assert len(first["placements"]) == summary["pods"]["total"]
    assert second["name"] == "most" and "cpu" in second["balance"]
    r = c.post("/api/whatif", json={"configs": [{"yaml": ""}], "moves": [{"pod": "a", "node": "b"}]})
    assert r.status_code == 400 and r.json()["field"] == "moves"


def test_server_writes_nothing(sim_dir: Path, tmp_path: Path, monkeypatch) -> None:
    """Every endpoint of a session leaves the opened folder and the working directory as they were."""
    monkeypatch.chdir(tmp_path)
    before = sorted((p.name, p.stat().st_mtime_ns, p.stat().st_size) for p in sim_dir.iterdir())
    c = ui_client(open_source(str(sim_dir)))
    key = c.get("/api/cluster").json()["pods"]["pod"][0]
    for path in ("/api/meta", "/api/cluster?step=3", f"/api/decision?pod={key}", "/api/dashboard/simulation",
                 "/api/export/snapshot", "/api/export/simulator-annotations?limit=5"):
        assert c.get(path).status_code == 200, path
    assert sorted((p.name, p.stat().st_mtime_ns, p.stat().st_size) for p in sim_dir.iterdir()) == before
    assert list(tmp_path.iterdir()) == []


def test_cli_serves_on_loopback_to_the_printed_url_only(tmp_path: Path) -> None:
    """The real command: it prints a URL with a token; without the token, or under another Host
    name, it answers nothing but a 403; the printed URL sets the cookie the page then uses."""
    import socket
    import subprocess
    import sys
    import time
    import urllib.error

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen(
        [sys.executable, "-m", "kubesched.cli", "ui", "-f", PREEMPT, "--listen", f"127.0.0.1:{port}"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )

    def get(url: str, **headers: str) -> tuple[int, bytes, Any]:
        req = urllib.request.Request(url, headers=headers)
        opener = urllib.request.build_opener(NoRedirect)
        try:
            with opener.open(req, timeout=5) as r:
                return r.status, r.read(), r.headers
        except urllib.error.HTTPError as e:
            return e.code, e.read(), e.headers

    try:
        line = ""
        while "kubesched ui:" not in line:
            line = proc.stderr.readline()
            assert line or proc.poll() is None, "kubesched ui exited before printing its URL"
        printed = line.split(" on ", 1)[1].strip()
        assert printed.startswith(f"http://127.0.0.1:{port}/?token=")
        token = printed.split("token=", 1)[1]
        assert len(token) >= 40  # secrets.token_urlsafe(32)
        deadline = time.monotonic() + 60
        while True:
            try:
                status, body, _ = get(f"http://127.0.0.1:{port}/api/meta", Authorization=f"Bearer {token}")
                break
            except OSError:
                assert proc.poll() is None, proc.stderr.read()
                assert time.monotonic() < deadline, "kubesched ui did not answer"
                time.sleep(0.2)
        assert status == 200 and json.loads(body)["title"] == PREEMPT
        status, body, _ = get(f"http://127.0.0.1:{port}/api/meta")
        assert status == 403 and json.loads(body)["field"] == "token"
        status, body, _ = get(f"http://127.0.0.1:{port}/api/meta", Host="evil.example", Authorization=f"Bearer {token}")
        assert status == 403 and json.loads(body)["field"] == "Host"
        status, _, headers = get(printed)
        assert status == 303 and headers["Location"] == "/"
        cookie = headers["Set-Cookie"]
        assert f"kubesched-ui-token-{port}={token}" in cookie and "HttpOnly" in cookie and "SameSite=Strict" in cookie
        status, body, _ = get(f"http://127.0.0.1:{port}/", Cookie=cookie.split(";")[0])
        assert status == 200 and b'<script type="module" src="/static/app.js">' in body
        assert get(f"http://127.0.0.1:{port}/")[0] == 403
    finally:
        proc.terminate()
        proc.wait(10)


class NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):  # noqa: ANN002, ANN003, ANN201
        return None


def test_default_listen_is_loopback() -> None:
    from kubesched.cli import build_parser

    assert build_parser().parse_args(["ui"]).listen == "127.0.0.1:8765"


def test_a_cluster_with_nothing_to_schedule_still_has_its_views(tmp_path: Path) -> None:
    f = tmp_path / "bound.yaml"
    f.write_text(
        "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\nstatus: {allocatable: {cpu: '2', memory: 4Gi, pods: '10'}}\n"
        "---\napiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: default}\n"
        "spec: {nodeName: n1, containers: [{name: c, resources: {requests: {cpu: '1'}}}]}\n"
    )
    c = ui_client(open_source(None, files=[str(f)]))
    m = c.get("/api/meta").json()
    assert m["steps"] == 0 and m["views"][:3] == ["cluster", "pods", "decision"]
    d = c.get("/api/cluster").json()
    assert d["nodes"]["pct:cpu"] == [50.0] and d["pods"]["state"] == ["bound in input"]


def test_pods_schedule_skipped_show_why(tmp_path: Path) -> None:
    f = tmp_path / "gated.yaml"
    f.write_text(
        "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\nstatus: {allocatable: {cpu: '2', memory: 4Gi, pods: '10'}}\n"
        "---\napiVersion: v1\nkind: Pod\nmetadata: {name: held, namespace: default}\n"
        "spec: {schedulingGates: [{name: example.com/quota}], containers: [{name: c}]}\n"
        "---\napiVersion: v1\nkind: Pod\nmetadata: {name: other, namespace: default}\n"
        "spec: {schedulerName: volcano, containers: [{name: c}]}\n"
    )
    c = ui_client(open_source(None, files=[str(f)]))
    d = c.get("/api/cluster").json()
    states = dict(zip(d["pods"]["pod"], d["pods"]["state"], strict=True))
    assert states == {"default/held": "SchedulingGated", "default/other": "OtherScheduler"}
    msgs = dict(zip(d["pods"]["pod"], d["pods"]["message"], strict=True))
    assert "example.com/quota" in msgs["default/held"]
    sched = c.get("/api/schedule").json()
    assert [e["reason"] for e in sched["skipped"]] == ["SchedulingGated", "OtherScheduler"]
    assert sched["placements"] == []


def test_cluster_files_follow_validate(tmp_path: Path) -> None:
    """`kubesched ui -f` takes kubectl's --validate as schedule does: a hand-written fixture the API
    server would refuse (namespace Team_A) opens under warn, with the warning, and not under strict."""
    text = Path(PREEMPT).read_text().replace("namespace: default", "namespace: Team_A")
    f = tmp_path / "odd.yaml"
    f.write_text(text)
    with pytest.raises(InputError, match="Team_A"):
        open_source(None, files=[str(f)])
    ws = open_source(None, files=[str(f)], validate="warn")
    assert ws.objects is not None and any("Team_A" in w for w in ws.objects.warnings)
    assert any(k.startswith("Team_A/") for k in ws.pods)


# ---- preemption victims, the GPU figure, the step a run opens at, why the run's node ---------------
def test_victims_of_a_preemption_over_the_run(tmp_path: Path) -> None:
    """A victim is preempted for good; a pod preempted, then placed again, is not."""
    from kubesched.ui.runs import Attempt, removals

    victim = {"pod": "ns/v", "node": "n1"}
    tries = {
        "ns/p": [Attempt(1, 0, 0.0, "unschedulable", nominated_node="n1", victims=[victim]), Attempt(2, 1, 1.0, "scheduled", "n1")],
        "ns/v": [Attempt(1, 0, 0.0, "scheduled", "n1")],
    }
    gone = removals(tries)
    assert gone["ns/v"].describe() == "preempted by ns/p (its attempt 1) at t = 0 s, from n1"
    tries["ns/v"].append(Attempt(2, 3, 4.0, "scheduled", "n2"))  # placed again after the preemption
    assert removals(tries) == {}


def _events(sim: Path) -> list[dict[str, str]]:
    return _csv(sim / "events.csv")


def test_gpu_figure_is_the_simulations_at_every_step(sim_dir: Path) -> None:
    """The cluster view's GPU allocation is what simulate recorded at that step (every bound pod's
    ask over the GPUs), also where the default configuration put more on a node than it has."""
    ws = open_source(str(sim_dir))
    c = ui_client(ws)
    events = _events(sim_dir)
    rows = [r for r, e in enumerate(events) if e["event"] in ("scheduled", "complete")]
    step_after = {}
    steps = 0
    for r, e in enumerate(events):  # a step is a bind or a delete: one per scheduled or complete row
        steps += e["event"] in ("scheduled", "complete")
        step_after[r] = steps
    seen_over = 0
    for r in rows[:: max(1, len(rows) // 40)] + [max(rows, key=lambda r: float(events[r]["gpu_alloc_pct"]))]:
        d = c.get(f"/api/cluster?step={step_after[r]}").json()
        gpu = d["cluster"]["gpu"]
        assert gpu["pct"] == round(float(events[r]["gpu_alloc_pct"]), 2), r
        assert gpu["allocatable"] == 48_000 and gpu["requested"] == sum(d["nodes"]["req:gpu"])
        # what sits on GPUs plus what could not be seated is everything asked: nothing dropped
        on_gpus = sum(u for row in d["nodes"]["gpu_used"] for u in row if u > 0)
        assert on_gpus + gpu["unseated"] == gpu["requested"]
        seen_over += gpu["unseated"] > 0
    assert seen_over  # the run over-committed some node's GPUs: shown, not dropped
    assert "gpu" in d["resources"] and "alibabacloud.com/gpu-milli" not in d["resources"]


def test_time_mode_simulation_opens_at_its_busiest_step(sim_dir: Path, trace_sim_dir: Path) -> None:
    ws = open_source(str(sim_dir))
    c = ui_client(ws)
    m = c.get("/api/meta").json()
    summary = json.loads((sim_dir / "summary.json").read_text())
    assert 0 < m["start_step"] < m["steps"]
    assert m["start_note"] == (
        f"the busiest step: the most GPU allocated over the run ({summary['allocation_pct']['gpu']['peak']:.2f} %)"
    )
    d = c.get(f"/api/cluster?step={m['start_step']}").json()
    assert d["cluster"]["gpu"]["pct"] == round(summary["allocation_pct"]["gpu"]["peak"], 2)
    before = c.get(f"/api/cluster?step={m['start_step'] - 1}").json()
    assert before["cluster"]["gpu"]["pct"] < d["cluster"]["gpu"]["pct"]  # the first step at the peak
    assert c.get("/api/dashboard/simulation").json()["busiest"] == {"step": m["start_step"], "note": m["start_note"]}
    # arrival mode (nothing completes) and cluster dumps open at the end, as before
    assert ui_client(open_source(str(trace_sim_dir))).get("/api/meta").json()["start_step"] is None
    assert ui_client(open_source(None, files=[PREEMPT])).get("/api/meta").json()["start_step"] is None


def test_why_the_runs_node_is_where_it_is() -> None:
    c = ui_client(open_source(None, files=[PAYMENTS], seed=0))
    settle = c.get("/api/decision?pod=payments-production/settlement-batch-processor-eu-west-1").json()
    why = settle["selected_why"]
    assert why["kind"] == "nominated" and why["node"] == settle["selected"] == "payments-production-pool-general-node-a-7f9c2"
    totals = {n["name"]: n["total"] for n in settle["explain"]["nodes"] if n["total"] is not None}
    assert why["score"] == totals[why["node"]] < why["top_score"] == max(totals.values())
    canary = c.get("/api/decision?pod=payments-production/fraud-score-sidecar-canary").json()["selected_why"]
    assert canary["kind"] == "tie" and canary["top_nodes"] == 2 and canary["score"] == canary["top_score"]
    # an attempt that placed nothing has no ★ to explain
    first = c.get("/api/decision?pod=payments-production/settlement-batch-processor-eu-west-1&attempt=1").json()
    assert first["selected"] is None and first["selected_why"] is None
    small = ui_client(open_source(None, files=[PREEMPT])).get("/api/decision?pod=default/small").json()["selected_why"]
    assert small["kind"] == "top" and small["top_nodes"] == 1


def test_why_a_lower_node_when_the_cycle_scored_a_subset(tmp_path: Path) -> None:
    """Over 100 nodes the cycle stops filtering once it found numFeasibleNodesToFind nodes and
    scores only those: here the first 100 of 120, while the 20 it never looked at are emptier."""
    items = [
        {"apiVersion": "v1", "kind": "Node", "metadata": {"name": f"node-{i:03d}", "labels": {"kubernetes.io/hostname": f"node-{i:03d}"}},
         "status": {"allocatable": {"cpu": "64" if i >= 100 else "8", "memory": "64Gi", "pods": "110"}}}
        for i in range(120)
    ]
    items.append({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web", "namespace": "default", "uid": "web"},
                  "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "4", "memory": "1Gi"}}}]}})
    dump = tmp_path / "wide.yaml"
    dump.write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": items}))
    d = ui_client(open_source(None, files=[str(dump)])).get("/api/decision?pod=default/web").json()
    assert int(d["selected"].split("-")[1]) < 100 and int(d["explain"]["selected"].split("-")[1]) >= 100
    why = d["selected_why"]
    assert why["kind"] == "subset" and why["score"] < why["top_score"] and why["top_nodes"] == 20
    assert "stops filtering once it has found 100 feasible nodes of 120" in why["text"]


def test_simulator_annotations_stop_at_their_size_bound(sim_dir: Path) -> None:
    c = ui_client(open_source(str(sim_dir)))
    whole = c.get("/api/export/simulator-annotations?limit=60")
    assert whole.status_code == 200 and whole.headers["x-kubesched-pods"] == whole.headers["x-kubesched-pods-asked"] == "60"
    assert len(yaml.safe_load(whole.text)["items"]) == 60 and not whole.text.startswith("#")
    cut = c.get(f"/api/export/simulator-annotations?limit=60&max_bytes={64 << 10}")
    done = int(cut.headers["x-kubesched-pods"])
    assert 0 < done < 60 and cut.headers["x-kubesched-pods-asked"] == "60"
    assert len(cut.text.encode()) <= 64 << 10
    assert cut.text.startswith(f"# {done} of 60 pods: the export stops before {64 << 10} bytes")
    items = yaml.safe_load(cut.text)["items"]
    assert [i["metadata"]["name"] for i in items] == [i["metadata"]["name"] for i in yaml.safe_load(whole.text)["items"][:done]]
    for q in ("max_bytes=10", f"max_bytes={1 << 40}", "max_bytes=x", "limit=x"):
        r = c.get(f"/api/export/simulator-annotations?{q}")
        assert r.status_code == 400 and r.json()["field"] == q.split("=")[0], q


def test_decision_tables_are_the_explain_as_columns() -> None:
    """The page's form of a decision (?tables=1) holds every verdict and score of the contract."""
    c = ui_client(open_source(None, files=[PAYMENTS], seed=0))
    q = "/api/decision?pod=payments-production/settlement-batch-processor-eu-west-1"
    full, cols = c.get(q).json(), c.get(q + "&tables=1").json()
    assert "nodes" not in cols["explain"] and cols["explain"]["selected"] == full["explain"]["selected"]
    assert cols["selected_why"] == full["selected_why"] and cols["attempts"] == full["attempts"]
    t = cols["tables"]
    nodes = full["explain"]["nodes"]
    assert t["name"] == [n["name"] for n in nodes] and t["total"] == [n["total"] for n in nodes]
    assert t["feasible"] == [n["feasible"] for n in nodes] == [True, True, True, False, False]
    for i, n in enumerate(nodes):
        for f in n["filter"]:
            v = t["filter"]["verdicts"][t["filter"]["at"][t["filter"]["plugins"].index(f["plugin"])][i]]
            assert v == {"code": f["code"], "reasons": f["reasons"]}
        for k, s in enumerate(n["score"]):
            assert t["score"]["plugins"][k] == s["plugin"] and t["score"]["weight"][k] == s["weight"]
            assert (t["score"]["raw"][k][i], t["score"]["weighted"][k][i]) == (s["raw"], s["weighted"])
    assert len(t["filter"]["verdicts"]) == 2  # passed, and Insufficient cpu: each once
    assert len(json.dumps(t)) < len(json.dumps(nodes)) / 2  # each plugin's name once, not once per node

"""Every extension point's result per pod (kubesched.ui.points) and the pod's volumes and claims
(kubesched.ui.volumes) in /api/decision, and kube-scheduler-simulator's annotations of them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from kubesched.ui import interop
from kubesched.ui.sources import open_cluster, open_source
from tests.ui.conftest import PREEMPT, ui_client

HERE = Path(__file__).parent
STORAGE = str(HERE / "storage.yaml")
EXAMPLES = Path(__file__).parents[2] / "kubesched" / "examples"


@pytest.fixture(scope="module")
def preempt():
    return ui_client(open_source(None, files=[PREEMPT], seed=0))


@pytest.fixture(scope="module")
def gang():
    ws = open_cluster(
        [str(EXAMPLES / "coscheduling-cluster.yaml")], (EXAMPLES / "coscheduling.yaml").read_text(), seed=0
    )
    return ui_client(ws)


def _rows(d: dict, point: str) -> dict[str, dict]:
    return {r["plugin"]: r for r in d["points"] if r["point"] == point}


def test_prefilter_and_prescore_come_from_the_explain(preempt) -> None:
    d = preempt.get("/api/decision", params={"pod": "default/urgent", "tables": "1"}).json()
    pre = _rows(d, "PreFilter")
    assert pre["NodeResourcesFit"]["result"] == "success" and pre["NodeResourcesFit"]["source"] == "explain"
    assert pre["NodeAffinity"]["code"] == "Skip" and pre["NodeAffinity"]["result"] == ""  # Skip says nothing
    score = _rows(d, "PreScore")
    assert score["NodeResourcesFit"]["result"] == "success" and score["InterPodAffinity"]["code"] == "Skip"
    order = [r["point"] for r in d["points"]]
    assert order == sorted(order, key=["PreFilter", "PostFilter", "PreScore", "Reserve", "Permit", "PreBind", "Bind"].index)


def test_postfilter_nomination_and_victims_of_the_attempt_that_preempted(preempt) -> None:
    first = preempt.get("/api/decision", params={"pod": "default/urgent", "attempt": "1", "tables": "1"}).json()
    post = _rows(first, "PostFilter")["DefaultPreemption"]
    assert post["code"] == "Success" and post["nominated"] == "node-b" and post["source"] == "run"
    assert post["victims"] == [{"pod": "default/batch-b", "node": "node-b"}]
    assert "Reserve" not in {r["point"] for r in first["points"]}  # the attempt reserved nothing
    last = preempt.get("/api/decision", params={"pod": "default/urgent", "tables": "1"}).json()
    assert "PostFilter" not in {r["point"] for r in last["points"]}
    assert _rows(last, "Reserve")["VolumeBinding"]["result"] == "success"
    assert _rows(last, "Bind")["DefaultBinder"] == {
        "point": "Bind", "plugin": "DefaultBinder", "code": "Success", "result": "success", "source": "run"
    }
    assert last["points_recorded"] is True


def test_permit_waits_with_its_timeout_and_uncalled_reserve_plugins(gang) -> None:
    d = gang.get("/api/decision", params={"pod": "ml/train-0", "tables": "1"}).json()
    permit = _rows(d, "Permit")["Coscheduling"]
    assert permit["code"] == "Wait" and permit["result"] == "wait" and permit["timeout"] == 30.0
    reserve = _rows(d, "Reserve")
    assert reserve["Coscheduling"]["result"] == "success" and "called" not in reserve["Coscheduling"]
    # the equivalence cache served the cycle: VolumeBinding signed nothing for a pod without
    # volumes and was left out; it is listed as the success it would have answered
    assert reserve["VolumeBinding"]["called"] is False and reserve["VolumeBinding"]["result"] == "success"
    rejected = gang.get("/api/decision", params={"pod": "ml/sweep-1", "attempt": "1", "tables": "1"}).json()
    assert "is unschedulable even after PostFilter" in _rows(rejected, "PostFilter")["Coscheduling"]["result"]


def _annotations(client) -> dict[str, dict[str, str]]:  # noqa: ANN001
    r = client.get("/api/export/simulator-annotations")
    assert r.status_code == 200
    return {f'{i["metadata"]["namespace"]}/{i["metadata"]["name"]}': i["metadata"]["annotations"] for i in yaml.safe_load(r.text)["items"]}


KEYS = {
    "prefilter-result-status", "prefilter-result", "filter-result", "postfilter-result", "prescore-result", "score-result",
    "finalscore-result", "reserve-result", "permit-result", "permit-result-timeout", "prebind-result", "bind-result",
    "selected-node",
}


def test_annotations_have_every_key_the_simulator_writes(preempt) -> None:
    ann = _annotations(preempt)
    for pod in ("default/urgent", "default/huge"):
        assert {k.removeprefix(interop.PREFIX) for k in ann[pod] if k.startswith(interop.PREFIX)} == KEYS
    urgent = ann["default/urgent"]
    assert json.loads(urgent[interop.PREFILTER_STATUS])["NodeResourcesFit"] == "success"
    assert json.loads(urgent[interop.PREFILTER_STATUS])["NodeAffinity"] == ""
    assert json.loads(urgent[interop.PRESCORE_RESULT])["InterPodAffinity"] == ""
    assert json.loads(urgent[interop.RESERVE_RESULT]) == {"VolumeBinding": "success", "DynamicResources": "success"}
    assert json.loads(urgent[interop.BIND_RESULT]) == {"DefaultBinder": "success"}
    assert json.loads(urgent[interop.POSTFILTER_RESULT]) == {}  # its last attempt did not preempt
    assert urgent[interop.SELECTED_NODE] == "node-b"
    huge = ann["default/huge"]  # fits nowhere: PostFilter ran and found no victims
    assert json.loads(huge[interop.POSTFILTER_RESULT]) == {"node-a": {}, "node-b": {}}
    assert json.loads(huge[interop.RESERVE_RESULT]) == {} and json.loads(huge[interop.BIND_RESULT]) == {}
    assert huge[interop.SELECTED_NODE] == ""


def test_annotations_of_a_nomination_and_of_permit(gang) -> None:
    ws = open_source(None, files=[PREEMPT], seed=0)
    d = interop.simulator_annotations(*_explained(ws, "default/urgent", 1))  # the attempt that preempted
    assert json.loads(d[interop.POSTFILTER_RESULT]) == {"node-a": {}, "node-b": {"DefaultPreemption": "preemption victim"}}
    gang_ann = _annotations(gang)["ml/train-0"]
    assert json.loads(gang_ann[interop.PERMIT_RESULT]) == {"Coscheduling": "wait"}
    assert json.loads(gang_ann[interop.PERMIT_TIMEOUT]) == {"Coscheduling": "30s"}


def _explained(ws, key: str, attempt: int):  # noqa: ANN001, ANN202
    from kubesched.ui import decisions

    d = decisions.decision_tables(ws, key, attempt)
    return d["tables"], d["selected"], d["points"], d["points_recorded"]


def test_prefilter_result_names_the_nodes_a_plugin_kept(tmp_path: Path) -> None:
    f = tmp_path / "c.yaml"
    f.write_text(Path(PREEMPT).read_text() + (
        "- apiVersion: v1\n  kind: Pod\n  metadata: {name: pinned, namespace: default, uid: pinned}\n  spec:\n"
        "    affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms:"
        " [{matchFields: [{key: metadata.name, operator: In, values: [node-a]}]}]}}}\n"
        "    containers: [{name: c, resources: {requests: {cpu: 100m, memory: 64Mi}}}]\n"
    ))
    client = ui_client(open_source(None, files=[str(f)], seed=0))
    d = client.get("/api/decision", params={"pod": "default/pinned", "tables": "1"}).json()
    assert _rows(d, "PreFilter")["NodeAffinity"]["nodes"] == ["node-a"]
    ann = _annotations(client)["default/pinned"]
    assert json.loads(ann[interop.PREFILTER_RESULT]) == {"NodeAffinity": ["node-a"]}


def test_a_simulation_records_no_binding_points(sim_dir: Path) -> None:
    ws = open_source(str(sim_dir))
    client = ui_client(ws)
    key = next(k for k, tries in ws.attempts.items() if tries and tries[-1].outcome == "scheduled")
    d = client.get("/api/decision", params={"pod": key, "tables": "1"}).json()
    assert d["points_recorded"] is False
    assert {r["point"] for r in d["points"]} <= {"PreFilter", "PreScore"}
    assert d["volumes"] is None


# ---- volumes and claims -----------------------------------------------------------------------
@pytest.fixture(scope="module")
def storage():
    return ui_client(open_source(None, files=[STORAGE], seed=0))


def _by(d: dict) -> dict[tuple[str, str], list[str]]:
    return {(r["node"], r["plugin"]): r["by"] for r in d["volumes"]["rejections"]}


def test_which_volume_decides_each_rejection(storage) -> None:
    d = storage.get("/api/decision", params={"pod": "shop/apart", "tables": "1"}).json()
    left, right = 'volume "left" (claim shop/data-a1)', 'volume "right" (claim shop/data-b1)'
    by = _by(d)
    assert by["node-a", "VolumeBinding"] == [right] and by["node-c", "VolumeZone"] == [right]
    assert by["node-b", "VolumeBinding"] == [left] and by["node-b", "VolumeZone"] == [left]
    vols = {v["name"]: v for v in d["volumes"]["volumes"]}
    assert vols["left"]["pvc"] == {
        "phase": "Bound", "class": "zonal", "binding_mode": "WaitForFirstConsumer", "request": "10Gi",
        "access_modes": ["ReadWriteOnce"], "volume": "pv-a1",
    }
    assert vols["right"]["pv"]["node_affinity"] == "topology.kubernetes.io/zone in (zone-b)"


def test_a_limit_is_reached_by_the_volumes_together(storage) -> None:
    d = storage.get("/api/decision", params={"pod": "shop/pair", "tables": "1"}).json()
    rej = {(r["node"], r["plugin"]): r for r in d["volumes"]["rejections"]}
    limit = rej["node-c", "NodeVolumeLimits"]
    assert limit["by"] == [] and limit["together"] is True and limit["reason"] == "node(s) exceed max volume count"
    assert len(rej["node-b", "VolumeBinding"]["by"]) == 2  # both volumes are in zone-a
    assert storage.get("/api/decision", params={"pod": "shop/plain", "tables": "1"}).json()["volumes"] is None


def test_claims_and_their_allocation() -> None:
    client = ui_client(open_source(None, files=[str(EXAMPLES / "dra-cluster.yaml")], seed=0))
    d = client.get("/api/decision", params={"pod": "ml/pair-job", "tables": "1"}).json()
    (claim,) = d["volumes"]["claims"]
    assert claim["claim"] == "ml/pair" and claim["allocated"] is True
    assert claim["devices"] == ["gpu-0 (gpu.example.com, pool gpu-a; request gpus)", "gpu-1 (gpu.example.com, pool gpu-a; request gpus)"]
    assert claim["available_on"] == "metadata.name in (gpu-a)" and claim["reserved_for"] == ["pods ml/pair-job"]
    by = _by(d)
    assert by["gpu-b", "DynamicResources"] == ['claim "gpus" (resourceclaim ml/pair)']

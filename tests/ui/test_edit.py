"""Editing an opened cluster file in `kubesched ui` and re-running it: each kind the scheduler
reads created, edited and deleted through the API, bad changes refused whole with one line naming
the object and field, the re-run's placement diff, and the download `kubesched schedule -f` reads.
The file on disk is never written."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from kubesched.cli import main
from kubesched.ui.sources import open_source
from tests.ui.conftest import PREEMPT, ui_client

V1, STORAGE, DRA, SCHED = "v1", "storage.k8s.io/v1", "resource.k8s.io/v1", "scheduling.k8s.io/v1"
# kind -> (a valid object, a dotted field and a value its edit sets there)
OBJECTS: dict[str, tuple[dict, str, object]] = {
    "Node": (
        {"apiVersion": V1, "kind": "Node", "metadata": {"name": "node-new"},
         "status": {"allocatable": {"cpu": "2", "memory": "4Gi", "pods": "110"}}},
        "status.allocatable.cpu", "6",
    ),
    "Pod": (
        {"apiVersion": V1, "kind": "Pod", "metadata": {"name": "pod-new", "namespace": "default"},
         "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}]}},
        "metadata.labels", {"app": "web"},
    ),
    "Namespace": ({"apiVersion": V1, "kind": "Namespace", "metadata": {"name": "team"}}, "metadata.labels", {"tier": "a"}),
    "PriorityClass": (
        {"apiVersion": SCHED, "kind": "PriorityClass", "metadata": {"name": "batch"}, "value": 10}, "value", 20,
    ),
    "StorageClass": (
        {"apiVersion": STORAGE, "kind": "StorageClass", "metadata": {"name": "fast"}, "provisioner": "disk.csi.example.com"},
        "volumeBindingMode", "WaitForFirstConsumer",
    ),
    "PersistentVolume": (
        {"apiVersion": V1, "kind": "PersistentVolume", "metadata": {"name": "pv-1"},
         "spec": {"capacity": {"storage": "10Gi"}, "accessModes": ["ReadWriteOnce"],
                  "csi": {"driver": "disk.csi.example.com", "volumeHandle": "vol-1"}}},
        "spec.capacity", {"storage": "20Gi"},
    ),
    "PersistentVolumeClaim": (
        {"apiVersion": V1, "kind": "PersistentVolumeClaim", "metadata": {"name": "data", "namespace": "default"},
         "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}},
        "spec.resources", {"requests": {"storage": "2Gi"}},
    ),
    "DeviceClass": (
        {"apiVersion": DRA, "kind": "DeviceClass", "metadata": {"name": "gpu"},
         "spec": {"selectors": [{"cel": {"expression": 'device.driver == "gpu.example.com"'}}]}},
        "metadata.labels", {"vendor": "example"},
    ),
    "ResourceSlice": (
        {"apiVersion": DRA, "kind": "ResourceSlice", "metadata": {"name": "node-a-gpus"},
         "spec": {"driver": "gpu.example.com", "nodeName": "node-a",
                  "pool": {"name": "node-a", "generation": 1, "resourceSliceCount": 1}, "devices": [{"name": "gpu-0"}]}},
        "spec.pool.generation", 2,
    ),
    "ResourceClaim": (
        {"apiVersion": DRA, "kind": "ResourceClaim", "metadata": {"name": "one-gpu", "namespace": "default"},
         "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu"}}]}}},
        "metadata.labels", {"team": "ml"},
    ),
}


@pytest.fixture
def cluster_file(tmp_path: Path) -> Path:
    path = tmp_path / "cluster.yaml"
    path.write_bytes(Path(PREEMPT).read_bytes())
    return path


@pytest.fixture
def client(cluster_file: Path):  # noqa: ANN201
    return ui_client(open_source(None, files=[str(cluster_file)], seed=0))


def query(kind: str, name: str, namespace: str = "") -> str:
    return f"kind={kind}&name={name}" + (f"&namespace={namespace}" if namespace else "")


def node_yaml(client, name: str) -> str:  # noqa: ANN001
    r = client.get(f"/api/object?{query('Node', name)}")
    assert r.status_code == 200, r.text
    return r.json()["yaml"]


def with_cpu(text: str, cpu: str) -> str:
    d = yaml.safe_load(text)
    d["status"]["allocatable"]["cpu"] = cpu
    return yaml.safe_dump(d)


def setting(obj: dict, dotted: str, value: object) -> dict:
    out = json.loads(json.dumps(obj))
    *parents, last = dotted.split(".")
    at = out
    for p in parents:
        at = at.setdefault(p, {})
    at[last] = value
    return out


def refs(client) -> list[tuple[str, str, str]]:  # noqa: ANN001
    return [(o["kind"], o["namespace"], o["name"]) for o in client.get("/api/objects").json()["objects"]]


@pytest.mark.parametrize("kind", list(OBJECTS))
def test_each_kind_is_created_edited_and_deleted(client, cluster_file: Path, kind: str) -> None:
    obj, dotted, value = OBJECTS[kind]
    before = cluster_file.read_bytes()
    ns = obj["metadata"].get("namespace", "")
    ref = (kind, ns, obj["metadata"]["name"])
    q = query(kind, ref[2], ns)
    created = client.post("/api/objects", content=yaml.safe_dump(obj))
    assert created.status_code == 201, created.text
    assert created.json()["changes"] == 1
    assert ref in refs(client)
    assert yaml.safe_load(client.get(f"/api/object?{q}").json()["yaml"]) == obj
    edited = setting(obj, dotted, value)
    r = client.put(f"/api/object?{q}", content=json.dumps(edited))  # JSON is YAML too
    assert r.status_code == 200, r.text
    assert yaml.safe_load(client.get(f"/api/object?{q}").json()["yaml"]) == edited
    assert client.delete(f"/api/object?{q}").json() == {"changes": 3, "ran": 0}
    assert ref not in refs(client)
    assert client.get(f"/api/object?{q}").status_code == 400
    assert cluster_file.read_bytes() == before  # edits live in the server's memory


def test_a_bad_field_is_a_400_naming_the_object_and_field_and_nothing_changes(client) -> None:
    text = node_yaml(client, "node-a")
    r = client.put(f"/api/object?{query('Node', 'node-a')}", content=with_cpu(text, "lots"))
    assert r.status_code == 400
    assert r.json() == {"error": 'Node node-a: status.allocatable.cpu: invalid quantity "lots"', "field": "status.allocatable.cpu"}
    assert node_yaml(client, "node-a") == text
    assert client.get("/api/meta").json()["edits"] == {"changes": 0, "ran": 0}


@pytest.mark.parametrize(
    ("body", "field", "words"),
    [
        ("kind: Node\nmetadata: {name: [", "body", "invalid YAML at line"),
        ("kind: Node\nmetadata: {name: x}\n---\nkind: Node\nmetadata: {name: y}\n", "body", "one object, got 2"),
        ("kind: List\nitems: [{kind: Node, metadata: {name: x}}]\n", "kind", "not a List"),
        ("kind: Gadget\nmetadata: {name: x}\n", "kind", 'unknown kind "Gadget"'),
        ("kind: Node\nmetadata: {labels: {a: b}}\n", "metadata.name", "metadata.name is required"),
        ("apiVersion: v1\nkind: Node\nmetadata: {name: node-b}\n", "metadata.name", "Node node-b already exists"),
        ("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {containers: [{name: c}], nodeName: 7}\n", "spec.nodeName", "Pod default/p"),
    ],
)
def test_a_refused_object_is_one_line_naming_the_field(client, body: str, field: str, words: str) -> None:
    r = client.post("/api/objects", content=body)
    assert r.status_code == 400
    assert r.json()["field"] == field
    assert words in r.json()["error"] and "\n" not in r.json()["error"]
    assert client.get("/api/meta").json()["edits"]["changes"] == 0


def test_checks_across_objects_refuse_the_change_whole(client) -> None:
    # a second global default PriorityClass: each object is valid alone, the two together are not
    one = "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: %s}\nvalue: 5\nglobalDefault: true\n"
    assert client.post("/api/objects", content=one % "first").status_code == 201
    r = client.post("/api/objects", content=one % "second")
    assert r.status_code == 400
    assert r.json()["error"].startswith("PriorityClass second: PriorityClass first is already marked as default")
    # renaming a node onto another's name
    r = client.put(f"/api/object?{query('Node', 'node-b')}", content=node_yaml(client, "node-a"))
    assert r.status_code == 400 and r.json()["field"] == "metadata.name"
    assert ("Node", "", "node-b") in refs(client) and ("PriorityClass", "", "second") not in refs(client)


def test_requests_are_bounded_by_the_request_size_limit(cluster_file: Path) -> None:
    client = ui_client(open_source(None, files=[str(cluster_file)], seed=0), max_body=512)
    r = client.put(f"/api/object?{query('Node', 'node-a')}", content="# padding\n" * 100)
    assert r.status_code == 400 and r.json()["field"] == "body"


def test_naming_no_object_is_a_400(client) -> None:
    assert client.get("/api/object?name=node-a").json()["field"] == "kind"
    assert client.delete("/api/object?kind=Node").json()["field"] == "name"
    r = client.delete(f"/api/object?{query('Pod', 'ghost')}")
    assert r.status_code == 400 and r.json() == {"error": "name: no Pod default/ghost in the working copy", "field": "name"}


def test_rerun_answers_what_changed_and_shows_the_new_run(client) -> None:
    # the first run: urgent preempts batch-b on node-b, small goes to node-b, huge (16 CPUs) fits nowhere
    text = node_yaml(client, "node-a")
    assert client.put(f"/api/object?{query('Node', 'node-a')}", content=with_cpu(text, "32")).status_code == 200
    assert client.get("/api/meta").json()["edits"] == {"changes": 1, "ran": 0}
    r = client.post("/api/rerun")
    assert r.status_code == 200, r.text
    d = r.json()
    by_pod = {x["pod"]: x for x in d["diff"]}
    assert {k: x["change"] for k, x in by_pod.items()} == {
        "default/huge": "placed", "default/urgent": "moved", "default/small": "moved", "default/batch-b": "placed",
    }
    assert by_pod["default/huge"]["before"] == {"state": "unschedulable", "node": None}
    assert by_pod["default/huge"]["after"] == {"state": "scheduled", "node": "node-a"}
    assert by_pod["default/batch-b"]["before"] == {"state": "preempted", "node": None}  # no preemption now
    assert d["unchanged"] == 1 and (d["changes"], d["ran"]) == (1, 1)
    # the workspace shown is the new run: the cluster view, the decision and the meta follow it
    cluster = client.get("/api/cluster").json()
    assert cluster["nodes"]["name"] == ["node-a", "node-b"] and cluster["pending"]["pods"] == []
    assert client.get("/api/decision?pod=default/huge").json()["selected"] == "node-a"
    assert client.get("/api/meta").json()["edits"] == {"changes": 1, "ran": 1}
    # then a pod deleted and one added that fits nowhere
    assert client.delete(f"/api/object?{query('Pod', 'small', 'default')}").status_code == 200
    giant = {"apiVersion": V1, "kind": "Pod", "metadata": {"name": "giant", "namespace": "default"},
             "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "64"}}}]}}
    assert client.post("/api/objects", content=yaml.safe_dump(giant)).status_code == 201
    d = client.post("/api/rerun").json()
    assert [(x["pod"], x["change"], x["after"]) for x in d["diff"]] == [
        ("default/giant", "added", {"state": "unschedulable", "node": None}),
        ("default/small", "deleted", None),
    ]
    assert d["unchanged"] == 4


def test_the_download_is_what_schedule_reads(client, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = node_yaml(client, "node-a")
    client.put(f"/api/object?{query('Node', 'node-a')}", content=with_cpu(text, "32"))
    client.post("/api/rerun")
    r = client.get("/api/export/working-copy")
    assert r.status_code == 200 and "attachment" in r.headers["content-disposition"]
    path = tmp_path / "edited.yaml"
    path.write_text(r.text)
    capsys.readouterr()
    assert main(["schedule", "-f", str(path), "-o", "json", "--seed", "0"]) == 0
    placed = json.loads(capsys.readouterr().out)["placements"]
    assert placed == client.get("/api/schedule").json()["placements"]
    assert {p["pod"]: p["node"] for p in placed}["default/huge"] == "node-a"


def test_an_imported_snapshot_is_editable(client) -> None:
    snap = client.get("/api/export/snapshot?step=0").text
    assert client.post("/api/import/snapshot", content=snap).status_code == 200
    assert ("Node", "", "node-a") in refs(client)
    r = client.put(f"/api/object?{query('Node', 'node-a')}", content=with_cpu(node_yaml(client, "node-a"), "32"))
    assert r.status_code == 200
    assert {x["pod"]: x["change"] for x in client.post("/api/rerun").json()["diff"]}["default/huge"] == "placed"


def test_output_folders_refuse_edits(sim_dir: Path) -> None:
    client = ui_client(open_source(str(sim_dir)))
    assert "edit" not in client.get("/api/meta").json()["views"]
    for r in (client.get("/api/objects"), client.post("/api/objects", content="kind: Node"), client.post("/api/rerun")):
        assert r.status_code == 400 and r.json()["field"] == "source"
        assert "only a cluster file can be edited" in r.json()["error"]


def test_edits_need_the_token_and_the_same_origin(cluster_file: Path) -> None:
    from starlette.testclient import TestClient

    from tests.ui.conftest import TOKEN, ui_app

    c = TestClient(ui_app(open_source(None, files=[str(cluster_file)], seed=0)))
    cookie = {"Cookie": f"kubesched-ui-token-80={TOKEN}"}
    node = "apiVersion: v1\nkind: Node\nmetadata: {name: planted}\n"
    for headers, field in (({}, "token"), ({**cookie, "Origin": "http://evil.example"}, "Origin"),
                           ({**cookie, "Sec-Fetch-Site": "same-site"}, "Sec-Fetch-Site")):
        for r in (
            c.post("/api/objects", content=node, headers={**headers, "Content-Type": "text/plain"}),
            c.delete(f"/api/object?{query('Node', 'node-a')}", headers=headers),
            c.put(f"/api/object?{query('Node', 'node-a')}", content=node, headers=headers),
            c.post("/api/rerun", headers=headers),
            c.get("/api/export/working-copy", headers=headers),
        ):
            assert r.status_code == 403 and r.json()["field"] == field
    assert c.get("/api/meta", headers=cookie).json()["edits"] == {"changes": 0, "ran": 0}


def post(client, obj: dict) -> None:  # noqa: ANN001
    r = client.post("/api/objects", content=yaml.safe_dump(obj))
    assert r.status_code == 201, r.text


def changes(client) -> list[tuple[str, str, str | None]]:  # noqa: ANN001
    d = client.post("/api/rerun").json()
    return [(x["pod"], x["change"], x["after"] and x["after"]["node"]) for x in d["diff"]]


def test_the_rerun_reads_the_claim_kinds(client) -> None:
    """A pod whose ResourceClaim no device satisfies stays pending; a ResourceSlice created on
    node-a places it there."""
    post(client, OBJECTS["DeviceClass"][0])
    post(client, OBJECTS["ResourceClaim"][0])
    post(client, {"apiVersion": V1, "kind": "Pod", "metadata": {"name": "trainer", "namespace": "default"},
                  "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "100m"}, "claims": [{"name": "gpu"}]}}],
                           "resourceClaims": [{"name": "gpu", "resourceClaimName": "one-gpu"}]}})
    assert changes(client) == [("default/trainer", "added", None)]
    post(client, OBJECTS["ResourceSlice"][0])
    assert changes(client) == [("default/trainer", "placed", "node-a")]


def test_the_rerun_reads_the_storage_kinds(client) -> None:
    """A pod whose PersistentVolumeClaim is missing stays pending; the claim and a volume bound to it
    (bind-completed, as the PV controller leaves them) created, it is placed on the one node the
    volume's affinity allows."""
    post(client, {"apiVersion": V1, "kind": "Pod", "metadata": {"name": "db", "namespace": "default"},
                  "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "100m"}}}],
                           "volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": "data"}}]}})
    assert changes(client) == [("default/db", "added", None)]
    claim = setting(OBJECTS["PersistentVolumeClaim"][0], "spec.volumeName", "pv-1")
    claim["metadata"] |= {"uid": "uid-data", "annotations": {"pv.kubernetes.io/bind-completed": "yes"}}
    post(client, claim | {"status": {"phase": "Bound"}})
    pv = setting(OBJECTS["PersistentVolume"][0], "spec.claimRef",
                 {"kind": "PersistentVolumeClaim", "namespace": "default", "name": "data", "uid": "uid-data"})
    pv["spec"]["nodeAffinity"] = {"required": {"nodeSelectorTerms": [{"matchExpressions": [
        {"key": "kubernetes.io/hostname", "operator": "In", "values": ["node-a"]}]}]}}
    post(client, pv | {"status": {"phase": "Bound"}})
    assert changes(client) == [("default/db", "placed", "node-a")]

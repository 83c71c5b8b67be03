"""`kubesched ui --kubeconfig`: a live cluster, read-only, against the test API server
(tests/kubeapi, the real Kubernetes protocol, driven by the unmodified official client): pending
pods explained as they come, a node added makes one fit, the cluster's own decisions heard
through the watch, a lost watch reported, and nothing ever written."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from kubesched.app import build_registry
from kubesched.cli import main
from kubesched.live.client import ApiError
from kubesched.testing import make_node, make_pod
from kubesched.ui.live import LiveOptions, connect, open_live
from kubesched.ui.sources import Workspace, parse_config_text
from tests.kubeapi import KubeAPIServer
from tests.kubeapi.fixtures import kube_api, kubeconfig  # noqa: F401
from tests.ui.conftest import ui_client
from tests.ui.test_browser import browser, page, shot  # noqa: F401 - Chromium and its page (console errors fail)

FAST = LiveOptions(watch_idle_timeout=5.0, watch_backoff=0.02, watch_backoff_max=0.1, sync_timeout=10.0)


def pending_pod(name: str, cpu: str) -> dict:
    d = make_pod(name, requests={"cpu": cpu}, spec={"schedulerName": "default-scheduler"})
    del d["metadata"]["uid"]  # the API server assigns it
    return d


def informer_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name.startswith("informer-")]


def writes(api: KubeAPIServer) -> list[tuple[str, str]]:
    return [(m, p) for m, p in api.requests if m != "GET"]


def start_live(path: str) -> Workspace:
    registry = build_registry()
    return open_live(connect(path, None), parse_config_text("", registry), "", registry, options=FAST)


@pytest.fixture
def live_ws(kube_api: KubeAPIServer, kubeconfig: str) -> Iterator[Workspace]:  # noqa: F811
    kube_api.create(make_node("small", cpu="2", memory="4Gi"))
    ws = start_live(kubeconfig)
    yield ws
    ws.live.close()


def wait(predicate, timeout: float = 10.0) -> bool:  # noqa: ANN001
    return KubeAPIServer.wait_for(predicate, timeout, 0.02)


def pending_row(client, key: str) -> dict | None:  # noqa: ANN001
    rows = client.get("/api/cluster").json()["pending"]["pods"]
    return next((r for r in rows if r["pod"] == key), None)


def test_a_new_pod_is_pending_with_its_explanation_and_a_node_added_makes_it_fit(
    kube_api: KubeAPIServer, live_ws: Workspace  # noqa: F811
) -> None:
    c = ui_client(live_ws)
    meta = c.get("/api/meta").json()
    assert meta["kind"] == "live" and meta["views"] == ["cluster", "pods", "decision"] and meta["steps"] == 0
    gen = c.get("/api/live").json()["generation"]
    kube_api.create(pending_pod("web", cpu="3"))
    assert wait(lambda: c.get("/api/live").json()["generation"] > gen)
    row = pending_row(c, "default/web")
    assert row == {
        "pod": "default/web", "state": "pending", "cluster_message": "",
        "message": "0/1 nodes are available: 1 Insufficient cpu.",
        "fits": None,
    }
    d = c.get("/api/decision?pod=default/web&tables=1").json()
    assert d["selected"] is None and d["basis"]["what"] == "the cluster now (live)" and d["tables"]["name"] == ["small"]
    assert d["attempts"] == []  # the cluster's scheduler has not tried it
    pods = c.get("/api/cluster").json()["pods"]
    assert pods["state"][pods["pod"].index("default/web")] == "pending"

    kube_api.create(make_node("big", cpu="8", memory="16Gi"))
    assert wait(lambda: (pending_row(c, "default/web") or {}).get("fits") == "big")
    assert pending_row(c, "default/web")["message"] == "fits: kubesched would place it on big"
    d = c.get("/api/decision?pod=default/web&tables=1").json()  # not the decision kept from before the node came
    assert sorted(d["tables"]["name"]) == ["big", "small"] and d["explain"]["selected"] == "big"
    cluster = c.get("/api/cluster").json()
    assert cluster["nodes"]["name"] == ["small", "big"] and cluster["cluster"]["cpu"]["allocatable"] == 10_000
    snapshot = yaml.safe_load(c.get("/api/export/snapshot").text)["items"]  # the cluster now, as objects
    assert [(o["kind"], o["metadata"]["name"]) for o in snapshot if o["kind"] in ("Node", "Pod")] == [
        ("Node", "small"), ("Node", "big"), ("Pod", "web")
    ]
    assert writes(kube_api) == []  # read-only: lists and watches, nothing else


def test_the_cluster_schedulers_decisions_are_heard(kube_api: KubeAPIServer, live_ws: Workspace) -> None:  # noqa: F811
    c = ui_client(live_ws)
    kube_api.create(pending_pod("db", cpu="1"))
    assert wait(lambda: pending_row(c, "default/db") is not None)
    msg = "0/1 nodes are available: 1 node(s) had untolerated taint {dedicated: db}."
    cond = {"type": "PodScheduled", "status": "False", "reason": "Unschedulable", "message": msg}
    kube_api.patch("Pod", "db", {"status": {"conditions": [cond]}}, "default")
    assert wait(lambda: (pending_row(c, "default/db") or {}).get("cluster_message") == f"Unschedulable: {msg}")
    kube_api.patch("Pod", "db", {"spec": {"nodeName": "small"}, "status": {"conditions": []}}, "default")
    assert wait(lambda: pending_row(c, "default/db") is None)
    d = c.get("/api/decision?pod=default/db&tables=1").json()
    assert [(a["outcome"], a["node"], a["message"]) for a in d["attempts"]] == [
        ("unschedulable", None, f"Unschedulable: {msg}"), ("scheduled", "small", None)
    ]
    pods = c.get("/api/cluster").json()["pods"]
    i = pods["pod"].index("default/db")
    assert (pods["state"][i], pods["node"][i], pods["node_now"][i]) == ("scheduled", "small", "small")
    recent = c.get("/api/live").json()["recent"]
    assert [(r["pod"], r["outcome"], r["node"]) for r in recent[:2]] == [
        ("default/db", "scheduled", "small"), ("default/db", "unschedulable", None)
    ]
    assert [m for m, _ in writes(kube_api)] == []


def test_a_lost_watch_is_reported_until_it_is_back(kube_api: KubeAPIServer, live_ws: Workspace) -> None:  # noqa: F811
    c = ui_client(live_ws)
    assert c.get("/api/live").json()["connected"] is True
    kube_api.fail_next("GET", "watch=true", 503, times=60)
    kube_api.drop_watches()
    assert wait(lambda: not c.get("/api/live").json()["connected"], 5)
    st = c.get("/api/live").json()
    assert st["problem"].split(":")[0] in {inf.kind for inf in live_ws.live.informers} and st["down_since"] is not None
    assert wait(lambda: c.get("/api/live").json()["connected"], 20)  # the informers re-watch once the faults run out
    kube_api.create(pending_pod("after", cpu="1"))
    assert wait(lambda: pending_row(c, "default/after") is not None)


def test_a_condition_written_before_the_ui_watched_is_an_attempt_not_a_recent_decision(
    kube_api: KubeAPIServer, kubeconfig: str  # noqa: F811
) -> None:
    d = pending_pod("old", cpu="1")
    d["status"] = {"conditions": [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable", "message": "0/0 nodes are available."}]}
    kube_api.create(d)
    ws = start_live(kubeconfig)
    try:
        c = ui_client(ws)
        tries = c.get("/api/decision?pod=default/old&tables=1").json()["attempts"]
        assert [(a["outcome"], a["message"]) for a in tries] == [("unschedulable", "Unschedulable: 0/0 nodes are available.")]
        assert c.get("/api/live").json()["recent"] == []
    finally:
        ws.live.close()


def test_the_client_refuses_to_write(kube_api: KubeAPIServer, kubeconfig: str) -> None:  # noqa: F811
    client = connect(kubeconfig, None)
    with pytest.raises(ApiError, match="only reads the cluster: POST"):
        client.request("POST", "/api/v1/namespaces/default/pods/x/binding", body={})
    assert writes(kube_api) == []


def test_other_sources_have_no_live_state(kube_api: KubeAPIServer) -> None:  # noqa: F811
    from kubesched.ui.sources import open_source

    r = ui_client(open_source(None)).get("/api/live")
    assert r.status_code == 400 and r.json()["field"] == "source"


def test_unreachable_api_server_is_one_line_and_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with KubeAPIServer() as api:
        cfg = api.write_kubeconfig(tmp_path / "kubeconfig")
    # the server is closed: nothing answers on its port
    assert main(["ui", "--kubeconfig", cfg, "--listen", "127.0.0.1:0"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "cannot reach the API server at http://127.0.0.1:" in err[0] and cfg in err[0]


def test_kubeconfig_with_files_or_context_alone_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["ui", "--kubeconfig", "k", "-f", "x.yaml"]) == 2
    assert "--kubeconfig" in capsys.readouterr().err
    assert main(["ui", "--context", "c"]) == 2
    assert "--context" in capsys.readouterr().err


# ---- in Chromium ---------------------------------------------------------------------------------
def test_live_cluster_in_the_browser(
    kube_api: KubeAPIServer, live_ws: Workspace, page, serve, tmp_path: Path  # noqa: ANN001, F811
) -> None:
    from playwright.sync_api import expect

    srv = serve(live_ws)
    page.goto(srv.page("cluster"))
    expect(page.get_by_test_id("live-status")).to_contain_text("live: http://127.0.0.1:")
    expect(page.get_by_test_id("pending")).to_contain_text("none: every pod has a node.")
    # a pod created in the cluster appears, pending, with kubesched's explanation
    kube_api.create(pending_pod("web", cpu="3"))
    row = page.locator('[data-testid="live-pending"] tr[data-pod="default/web"]')
    expect(row).to_contain_text("0/1 nodes are available: 1 Insufficient cpu.")
    expect(page.get_by_test_id("reasons")).to_contain_text("Insufficient cpu")
    # a node added makes it fit, without reloading the page; a bigger pod fits nowhere still
    kube_api.create(make_node("big", cpu="8", memory="16Gi"))
    kube_api.create(pending_pod("batch", cpu="12"))
    expect(row).to_contain_text("fits: kubesched would place it on big")
    expect(page.locator("#nodes-table").get_by_test_id("row-count")).to_have_text("2 of 2")
    expect(page.locator('[data-testid="live-pending"] tr[data-pod="default/batch"]')).to_contain_text(
        "0/2 nodes are available: 2 Insufficient cpu."
    )
    # the decision view explains it against the cluster now, and follows the cluster too
    row.get_by_role("link", name="default/web").click()
    page.get_by_test_id("decision").wait_for()
    expect(page.locator(".basis")).to_contain_text("Judged against the cluster now (live);")
    expect(page.get_by_test_id("explain-selected")).to_have_text("big")
    expect(page.get_by_test_id("points-note")).to_contain_text("run in the cluster's scheduler, which kubesched only watches")
    kube_api.patch("Pod", "web", {"spec": {"nodeName": "big"}}, "default")  # the cluster's scheduler places it
    expect(page.get_by_test_id("attempts").locator("tbody tr")).to_contain_text("scheduled")
    # a lost watch: the page says so instead of showing the cluster as current
    kube_api.fail_next("GET", "watch=true", 503, times=400)
    kube_api.drop_watches()
    expect(page.get_by_test_id("live-status")).to_contain_text("disconnected, retrying", timeout=5000)
    expect(page.locator("main.stale")).to_have_count(1)
    expect(page.get_by_test_id("live-status")).to_contain_text("live: ", timeout=30000)  # back once the faults run out
    expect(page.locator("main.stale")).to_have_count(0)
    page.locator('nav a[data-view="cluster"]').click()
    expect(page.get_by_test_id("recent-decisions").locator("tbody tr").first).to_contain_text("default/webscheduledbig")
    expect(page.locator('[data-testid="live-pending"] tr[data-pod="default/web"]')).to_have_count(0)
    shot(page, tmp_path, "live")
    assert writes(kube_api) == []  # nothing written: no bind, no patch, no event


def test_opening_a_file_stops_watching(kube_api: KubeAPIServer, live_ws: Workspace) -> None:  # noqa: F811
    from tests.ui.conftest import PREEMPT

    c = ui_client(live_ws)
    assert c.post("/api/open", json={"path": PREEMPT}).json()["kind"] == "cluster"
    assert live_ws.live.stop.is_set()
    assert wait(lambda: not informer_threads(), 5)


def test_a_kind_the_api_server_refuses_to_list_is_one_line_at_the_start(kube_api: KubeAPIServer, kubeconfig: str) -> None:  # noqa: F811
    from kubesched.errors import InputError

    kube_api.fail_next("GET", r"/apis/resource\.k8s\.io/v1/resourceclaims\?", 403, times=10_000)
    with pytest.raises(InputError, match=r"refused to list ResourceClaim \(403 Forbidden: .*\); kubesched ui needs list"):
        start_live(kubeconfig)
    assert wait(lambda: not informer_threads(), 5)  # the informers that did list were stopped


def test_a_live_cluster_refuses_edits(kube_api: KubeAPIServer, live_ws: Workspace) -> None:  # noqa: F811
    client = ui_client(live_ws)
    assert "edit" not in client.get("/api/meta").json()["views"]
    node = yaml.safe_dump(make_node("extra", cpu="8", memory="8Gi"))
    for r in (
        client.get("/api/objects"),
        client.post("/api/objects", content=node),
        client.put("/api/object?kind=Node&name=small", content=node),
        client.delete("/api/object?kind=Node&name=small"),
        client.post("/api/rerun"),
        client.get("/api/export/working-copy"),
    ):
        assert r.status_code == 400 and r.json()["field"] == "source"
        assert r.json()["error"].startswith("source: a live cluster is read-only")
    assert writes(kube_api) == []
    assert client.get("/api/cluster").json()["nodes"]["name"] == ["small"]

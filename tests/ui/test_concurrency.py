"""kubesched ui under concurrent requests, over real HTTP (uvicorn on loopback): a heavy request
(an explain, a what-if run) does not hold up small ones, a second run while one is in progress is
refused with a 409 and changes nothing, and reads racing over the one moving snapshot answer
exactly what they answer one at a time."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx2
import pytest
import yaml

from kubesched.gpu.model import GPU_COUNT, GPU_MILLI
from kubesched.ui.guard import Roots
from kubesched.ui.sources import open_source
from tests.ui.conftest import AUTH, PREEMPT, ui_client
from tests.ui.gate import CONFIG, Gate, trusted_registry

SMALL = 5.0  # seconds a small request may take while a heavy one runs (generous: a shared machine)


@pytest.fixture
def gate() -> Iterator[type[Gate]]:
    yield Gate
    Gate.open()  # never leave a server thread waiting


class Heavy:
    """A request sent from a thread; ``answer`` once it is back."""

    def __init__(self, method: str, url: str, **kw: Any) -> None:
        self.answer: httpx2.Response | None = None
        self.thread = threading.Thread(target=self._send, args=(method, url), kwargs=kw, daemon=True)
        self.thread.start()

    def _send(self, method: str, url: str, **kw: Any) -> None:
        self.answer = httpx2.request(method, url, timeout=60, headers=AUTH, **kw)

    def wait(self) -> httpx2.Response:
        self.thread.join(60)
        assert self.answer is not None, "the heavy request did not come back"
        return self.answer


def test_one_simulator_export_at_a_time(serve, gate) -> None:
    srv = serve(open_source(None, files=[PREEMPT], config_text=CONFIG, seed=0))
    url = f"{srv.url}/api/export/simulator-annotations"
    gate.arm()
    first = Heavy("GET", url)
    assert gate.entered.wait(30), "the export never reached the gated filter"
    second = httpx2.get(url, headers=AUTH, timeout=SMALL)  # answered at once, not queued
    assert second.status_code == 409
    assert second.json() == {"error": "another export is in progress; try again when it ends", "field": "export"}
    assert httpx2.get(f"{srv.url}/api/meta", headers=AUTH, timeout=SMALL).status_code == 200
    gate.open()
    done = first.wait()
    assert done.status_code == 200 and done.headers["x-kubesched-pods"] == "3"  # the pods tried
    assert httpx2.get(url, headers=AUTH, timeout=30).status_code == 200  # and the next one may run


def test_small_requests_are_answered_while_a_decision_is_explained(serve, gate) -> None:
    srv = serve(open_source(None, files=[PREEMPT], config_text=CONFIG, seed=0))
    gate.arm()
    heavy = Heavy("GET", f"{srv.url}/api/decision?pod=default/small")
    assert gate.entered.wait(30), "the explain never reached the gated filter"
    meta = httpx2.get(f"{srv.url}/api/meta", headers=AUTH, timeout=SMALL)
    page = httpx2.get(f"{srv.url}/", headers=AUTH, timeout=SMALL)
    assert meta.status_code == 200 and meta.json()["kind"] == "cluster"
    assert page.status_code == 200 and "<html" in page.text.lower()
    assert heavy.thread.is_alive() and heavy.answer is None  # still inside the explain
    gate.open()
    d = heavy.wait()
    assert d.status_code == 200
    assert d.json()["selected"] == "node-b"
    assert "Gate" in {f["plugin"] for row in d.json()["explain"]["nodes"] for f in row["filter"]}


def test_a_second_run_while_a_whatif_runs_is_a_409_and_changes_nothing(serve, gate, sim_dir: Path) -> None:
    srv = serve(open_source(None, files=[PREEMPT], seed=0), registry=trusted_registry(), roots=Roots.of([sim_dir]))
    title = httpx2.get(f"{srv.url}/api/meta", headers=AUTH).json()["title"]
    gate.arm()
    run = Heavy("POST", f"{srv.url}/api/whatif", json={"configs": [{"name": "gated", "yaml": CONFIG}]})
    assert gate.entered.wait(30), "the what-if never reached the gated filter"
    # reads of the workspace go on: it is not the one the what-if builds
    assert httpx2.get(f"{srv.url}/api/meta", headers=AUTH, timeout=SMALL).status_code == 200
    c = httpx2.get(f"{srv.url}/api/cluster", headers=AUTH, timeout=SMALL)
    assert c.status_code == 200 and c.json()["nodes"]["name"] == ["node-a", "node-b"]
    assert httpx2.get(f"{srv.url}/api/decision?pod=default/urgent", headers=AUTH, timeout=SMALL).json()["selected"] == "node-b"
    # another run is refused, with one line naming the field, and opens nothing
    again = httpx2.post(f"{srv.url}/api/whatif", headers=AUTH, json={"configs": [{"yaml": ""}]}, timeout=SMALL)
    assert again.status_code == 409
    assert again.json() == {
        "error": "another run (what-if, open, import or re-run) is in progress; try again when it ends", "field": "body",
    }
    rerun = httpx2.post(f"{srv.url}/api/rerun", headers=AUTH, timeout=SMALL)  # the working copy's re-run too
    assert rerun.status_code == 409 and rerun.json()["field"] == "rerun"
    other = httpx2.post(f"{srv.url}/api/open", headers=AUTH, json={"path": str(sim_dir)}, timeout=SMALL)
    assert other.status_code == 409 and other.json()["field"] == "path"
    upload = httpx2.post(f"{srv.url}/api/import/snapshot", headers=AUTH, content=Path(PREEMPT).read_bytes(), timeout=SMALL)
    assert upload.status_code == 409 and upload.json()["field"] == "body"
    assert run.answer is None
    gate.open()
    r = run.wait()
    assert r.status_code == 200
    assert [x["name"] for x in r.json()["runs"]] == ["gated"] and r.json()["runs"][0]["placed"] == 2
    assert httpx2.get(f"{srv.url}/api/meta", headers=AUTH).json()["title"] == title  # nothing was opened
    # and the next run, now that none is in progress, is accepted
    opened = httpx2.post(f"{srv.url}/api/open", headers=AUTH, json={"path": str(sim_dir)}, timeout=60)
    assert opened.status_code == 200 and httpx2.get(f"{srv.url}/api/meta", headers=AUTH).json()["kind"] == "simulation"


def _stable(d: dict[str, Any]) -> dict[str, Any]:
    """A decision without its timings (they differ from one run, and one explain, to the next)."""
    out = {k: v for k, v in d.items() if k not in ("explain_plugin_ms", "explain_ms")}
    out["attempts"] = [{k: v for k, v in a.items() if k not in ("duration_ms", "plugin_ms")} for a in d["attempts"]]
    return out


def _cluster_with_preemptions(path: Path) -> Path:
    """10 nodes of 4 GPUs, 30 pods bound, 60 pending (half of them high priority): a run of about
    fifty steps, with preemptions (deletes) among the binds and pods tried twice. Two pods in three
    share a GPU, with no GPU indices: which GPU each one holds is the UI's own choice."""
    items: list[dict[str, Any]] = [
        {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "high"}, "value": 1000}
    ]
    for n in range(10):
        items.append({
            "apiVersion": "v1", "kind": "Node",
            "metadata": {"name": f"node-{n}", "labels": {"kubernetes.io/hostname": f"node-{n}"}},
            "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110", GPU_COUNT: "4", GPU_MILLI: "4000"}},
        })
    for p in range(90):
        spec: dict[str, Any] = {
            "containers": [{"name": "c", "resources": {"requests": {"cpu": f"{500 + 250 * (p % 5)}m", "memory": "512Mi"}}}]
        }
        if p < 30:
            spec["nodeName"] = f"node-{p % 10}"
        elif p % 2 == 0:
            spec["priorityClassName"] = "high"
        meta: dict[str, Any] = {"name": f"pod-{p:02d}", "namespace": "default", "uid": f"u{p}"}
        if p % 3:
            meta["annotations"] = {GPU_MILLI: str(150 + 100 * (p % 8))}
        items.append({"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec})
    path.write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": items}))
    return path


def test_concurrent_reads_answer_as_they_do_one_at_a_time(serve, tmp_path: Path) -> None:
    dump = str(_cluster_with_preemptions(tmp_path / "cluster.yaml"))
    alone = ui_client(open_source(None, files=[dump]))
    steps = alone.get("/api/meta").json()["steps"]
    run = alone.get("/api/schedule").json()["placements"]
    assert steps > 40 and sum(len(p["victims"]) for p in run) > 10  # deletes to undo when seeking back
    assert any(u > 0 for row in alone.get("/api/cluster").json()["nodes"]["gpu_used"] for u in row)
    table = alone.get("/api/cluster").json()["pods"]
    tried = [k for k, n in zip(table["pod"], table["attempts"], strict=True) if n]
    twice = [k for k, n in zip(table["pod"], table["attempts"], strict=True) if n == 2]
    reads = [f"/api/cluster?step={s}" for s in range(0, steps + 1, 5)]
    reads += [f"/api/decision?pod={k}&attempt=1" for k in twice[:8]] + [f"/api/decision?pod={k}" for k in tried[::6]]
    reads += [f"/api/export/snapshot?step={s}" for s in (steps // 4, steps // 2, steps)]

    def body(r: httpx2.Response) -> Any:
        assert r.status_code == 200, r.text
        if "decision" in str(r.url):
            return _stable(r.json())
        return r.json() if r.headers["content-type"] == "application/json" else r.text

    expected = {u: body(alone.get(u)) for u in reads}
    srv = serve(open_source(None, files=[dump]))
    order = reads[::-1] + reads[::2] + reads[1::2]  # each read twice, the snapshot moved back and forth
    with httpx2.Client(base_url=srv.url, headers=AUTH, timeout=120) as c, ThreadPoolExecutor(8) as pool:
        got = list(pool.map(lambda u: (u, body(c.get(u))), order))
    for u, answer in got:
        assert answer == expected[u], f"{u} answered differently under concurrency"


def test_a_decision_does_not_depend_on_the_decisions_opened_before(tmp_path: Path) -> None:
    # explain breaks ties among equal scores with the seeded random draw; each explain starts
    # from the scheduler's seeded state, so the order pods are opened in changes nothing
    dump = str(_cluster_with_preemptions(tmp_path / "cluster.yaml"))
    forward, backward = (ui_client(open_source(None, files=[dump])) for _ in range(2))
    pods = forward.get("/api/cluster").json()["pods"]["pod"]
    picks = {k: forward.get(f"/api/decision?pod={k}").json()["explain"]["selected"] for k in pods}
    assert len(set(picks.values())) > 3  # picks spread over the nodes
    for k in reversed(pods):
        assert backward.get(f"/api/decision?pod={k}").json()["explain"]["selected"] == picks[k], k

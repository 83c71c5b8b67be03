"""kubesched ui's trust model, over HTTP: only the browser tab that opened the printed URL may use
the server (Host, Origin, token), and nothing a request carries makes the server run code or read
outside the folders it was given (docs/ui.md, "Who can use it")."""

from __future__ import annotations

import json
import shutil
import sys
import threading
import time
from pathlib import Path

import httpx2
import pytest
from starlette.testclient import TestClient

from kubesched.cli import main
from kubesched.ui.guard import Access, Roots
from kubesched.ui.sources import open_source
from tests.ui.conftest import AUTH, PREEMPT, TOKEN, ui_app, ui_client
from tests.ui.gate import CONFIG, Gate, trusted_registry


@pytest.fixture(scope="module")
def cluster_ws():
    return open_source(None, files=[PREEMPT], seed=0)


# ---- Host: DNS rebinding -----------------------------------------------------------------------
@pytest.mark.parametrize("path", ["/", "/api/meta", "/api/cluster", "/api/export/snapshot", "/static/app.js"])
@pytest.mark.parametrize("host", ["evil.example", "evil.example:80", "127.0.0.1.nip.io", "localhost:1", ""])
def test_a_rebinding_name_gets_nothing(cluster_ws, path: str, host: str) -> None:
    """A page whose name was rebound to 127.0.0.1 sends its own name as Host: even with the token
    (it cannot have it, but the check comes first) every path, static files included, is a 403."""
    c = TestClient(ui_app(cluster_ws), headers=AUTH)
    r = c.get(path, headers={"Host": host})
    assert r.status_code == 403 and r.json()["field"] == "Host"
    assert "title" not in r.text and "kind" not in r.text


def test_post_under_a_rebinding_name_changes_nothing(cluster_ws, sim_dir: Path) -> None:
    c = TestClient(ui_app(cluster_ws, roots=Roots.of([sim_dir])), headers=AUTH)
    r = c.post("/api/open", json={"path": str(sim_dir)}, headers={"Host": "evil.example:8765"})
    assert r.status_code == 403
    assert c.get("/api/meta").json()["kind"] == "cluster"


@pytest.mark.parametrize("host", ["localhost:8765", "127.0.0.1:8765", "[::1]:8765", "LOCALHOST:8765"])
def test_loopback_names_are_answered(cluster_ws, host: str) -> None:
    app = ui_app(cluster_ws, port=8765)
    assert TestClient(app, headers=AUTH).get("/api/meta", headers={"Host": host}).status_code == 200


def test_access_for_listen_names() -> None:
    a = Access.for_listen("0.0.0.0", 9000, "t", ["build-box", "build-box.lan:443"])
    assert {"localhost:9000", "127.0.0.1:9000", "[::1]:9000", "build-box:9000", "build-box.lan:443"} == set(a.hosts)
    assert "0.0.0.0:9000" not in a.hosts  # a wildcard is no name a browser uses
    b = Access.for_listen("10.1.2.3", 80, "t")
    assert "10.1.2.3" in b.hosts and "localhost" in b.hosts  # port 80: browsers send no port
    assert a.cookie == "kubesched-ui-token-9000"


# ---- Origin: pages of other origins, same site included -----------------------------------------
@pytest.mark.parametrize(
    "headers, field",
    [
        ({"Origin": "http://evil.example"}, "Origin"),
        ({"Origin": "http://localhost:3000"}, "Origin"),  # another local server: same site, other origin
        ({"Origin": "null"}, "Origin"),  # sandboxed iframes, file:// pages
        ({"Sec-Fetch-Site": "cross-site"}, "Sec-Fetch-Site"),
        ({"Sec-Fetch-Site": "same-site"}, "Sec-Fetch-Site"),
    ],
)
def test_cross_origin_requests_are_refused(cluster_ws, tmp_path: Path, headers: dict[str, str], field: str) -> None:
    """The attack of the review: a cross-site text/plain POST (no preflight) to /api/open, with the
    cookie the browser would attach. Reads are refused the same way."""
    c = TestClient(ui_app(cluster_ws, roots=Roots.of([tmp_path])))
    cookie = {"Cookie": f"kubesched-ui-token-80={TOKEN}"}
    r = c.post(
        "/api/open", content=json.dumps({"path": str(tmp_path)}), headers={**cookie, **headers, "Content-Type": "text/plain"}
    )
    assert r.status_code == 403 and r.json()["field"] == field
    assert c.get("/api/meta", headers={**cookie, **headers}).status_code == 403
    assert c.get("/api/meta", headers=cookie).json()["kind"] == "cluster"


def test_same_origin_requests_pass(cluster_ws) -> None:
    c = ui_client(cluster_ws)
    same = {"Origin": "http://testserver", "Sec-Fetch-Site": "same-origin"}
    assert c.get("/api/meta", headers=same).status_code == 200
    r = c.post("/api/whatif", json={"configs": [{"name": "a", "yaml": ""}]}, headers=same)
    assert r.status_code == 200 and r.json()["runs"][0]["name"] == "a"


# ---- the token ----------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "headers",
    [{}, {"Authorization": "Bearer wrong"}, {"Authorization": TOKEN}, {"Cookie": f"kubesched-ui-token-81={TOKEN}"},
     {"Cookie": "kubesched-ui-token-80=wrong"}],
)
def test_without_the_token_nothing_but_static_files(cluster_ws, headers: dict[str, str]) -> None:
    c = TestClient(ui_app(cluster_ws))
    for path in ("/", "/api/meta", "/api/cluster", "/api/schedule", "/api/export/snapshot"):
        r = c.get(path, headers=headers)
        assert r.status_code == 403 and r.json()["field"] == "token", path
    assert c.post("/api/whatif", json={"configs": [{"yaml": ""}]}, headers=headers).status_code == 403
    assert c.get("/static/app.js", headers=headers).status_code == 200  # public code, no data


def test_the_printed_url_sets_the_cookie_and_leaves_the_address_bar(cluster_ws) -> None:
    c = TestClient(ui_app(cluster_ws), follow_redirects=False)
    r = c.get(f"/?token={TOKEN}")
    assert r.status_code == 303 and r.headers["location"] == "/"
    assert r.headers["set-cookie"] == f"kubesched-ui-token-80={TOKEN}; Path=/; HttpOnly; SameSite=Strict"
    c.cookies.set("kubesched-ui-token-80", TOKEN)
    assert c.get("/").status_code == 200 and c.get("/api/meta").status_code == 200
    assert TestClient(ui_app(cluster_ws), follow_redirects=False).get("/?token=nope").status_code == 403


# ---- the command line ---------------------------------------------------------------------------
def test_listen_beyond_loopback_needs_allow_remote(capsys) -> None:
    assert main(["ui", "-f", PREEMPT, "--listen", "0.0.0.0:8765"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "--listen" in err and "--allow-remote" in err


def test_allow_open_must_be_a_folder(capsys, tmp_path: Path) -> None:
    assert main(["ui", "-f", PREEMPT, "--allow-open", str(tmp_path / "nope")]) == 2
    assert "--allow-open" in capsys.readouterr().err


# ---- data is never code -------------------------------------------------------------------------
def _planted_simulation(sim_dir: Path, where: Path) -> tuple[Path, Path]:
    """A copy of a real simulation folder whose inputs.json names a plugin file that, if run,
    writes a marker: the folder an attacker would need to get onto the disk."""
    folder = where / "planted"
    shutil.copytree(sim_dir, folder)
    marker = where / "PWNED"
    plugin = where / "evil_plugin.py"
    plugin.write_text(
        f"from pathlib import Path\nPath({str(marker)!r}).write_text('ran')\n"
        "from kubesched.framework.simple import NodeFilterPlugin\n"
        "class Evil(NodeFilterPlugin):\n    name = 'Evil'\n    def filter_node(self, pod, node):\n        return True\n"
    )
    inputs = json.loads((folder / "inputs.json").read_text())
    inputs["plugin_path"] = [str(plugin)]
    inputs["config"] = "config.yaml"
    (folder / "inputs.json").write_text(json.dumps(inputs))
    (folder / "config.yaml").write_text(CONFIG.replace("tests.ui.gate:Gate", "Evil"))
    return folder, marker


def test_opening_a_planted_folder_runs_no_code(cluster_ws, sim_dir: Path, tmp_path: Path) -> None:
    folder, marker = _planted_simulation(sim_dir, tmp_path)
    c = ui_client(cluster_ws, roots=Roots.of([tmp_path]))
    r = c.post("/api/open", json={"path": str(folder)})
    assert r.status_code == 400 and r.json()["field"] == "path"
    assert "plugin_path" in r.json()["error"] and "--plugin-path" in r.json()["error"]
    assert not marker.exists()
    assert c.get("/api/meta").json()["kind"] == "cluster"  # nothing was half-opened


def test_the_command_line_never_runs_a_folders_plugin_files(sim_dir: Path, tmp_path: Path) -> None:
    folder, marker = _planted_simulation(sim_dir, tmp_path)
    with pytest.raises(Exception, match="--plugin-path"):
        open_source(str(folder))
    assert not marker.exists()


def test_a_whatif_configuration_imports_no_module(cluster_ws, tmp_path: Path, monkeypatch) -> None:
    """`module:Class` in a configuration from the page would import any installed module (running
    its top level): refused, with the way to allow it on the command line."""
    marker = tmp_path / "IMPORTED"
    (tmp_path / "planted_mod.py").write_text(f"from pathlib import Path\nPath({str(marker)!r}).write_text('ran')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    c = ui_client(cluster_ws)
    r = c.post("/api/whatif", json={"configs": [{"name": "x", "yaml": CONFIG.replace("tests.ui.gate:Gate", "planted_mod:Evil")}]})
    assert r.status_code == 400 and "planted_mod:Evil" in r.json()["error"] and "--import-plugins" in r.json()["error"]
    assert not marker.exists() and "planted_mod" not in sys.modules


def test_a_whatif_may_use_what_the_command_line_loaded(cluster_ws) -> None:
    c = ui_client(cluster_ws, registry=trusted_registry())
    r = c.post("/api/whatif", json={"configs": [{"name": "gated", "yaml": CONFIG}]})
    assert r.status_code == 200 and r.json()["runs"][0]["placed"] > 0


@pytest.mark.parametrize("name", ["missing", "exists.yaml", "../../etc/passwd"])
def test_the_open_box_reads_only_inside_its_folders(cluster_ws, tmp_path: Path, name: str) -> None:
    """Outside the roots the answer is the same whether the path exists or not: no oracle."""
    root, outside = tmp_path / "root", tmp_path / "outside"
    root.mkdir()
    outside.mkdir()
    (outside / "exists.yaml").write_text(Path(PREEMPT).read_text())
    c = ui_client(cluster_ws, roots=Roots.of([root]))
    target = str(outside / name) if not name.startswith("..") else str(root / name)
    r = c.post("/api/open", json={"path": target})
    assert r.status_code == 400 and r.json()["field"] == "path"
    assert "outside the folders this UI may open" in r.json()["error"] and "--allow-open" in r.json()["error"]
    assert c.get("/api/meta").json()["title"] == cluster_ws.title


def test_a_symlink_out_of_the_roots_is_outside(cluster_ws, tmp_path: Path) -> None:
    root = tmp_path / "root"
    root.mkdir()
    (tmp_path / "secret.yaml").write_text(Path(PREEMPT).read_text())
    (root / "link.yaml").symlink_to(tmp_path / "secret.yaml")
    r = ui_client(cluster_ws, roots=Roots.of([root])).post("/api/open", json={"path": str(root / "link.yaml")})
    assert r.status_code == 400 and "outside the folders" in r.json()["error"]


def test_inside_the_roots_a_cluster_file_opens(cluster_ws, tmp_path: Path) -> None:
    shutil.copy(PREEMPT, tmp_path / "c.yaml")
    c = ui_client(cluster_ws, roots=Roots.of([tmp_path]))
    assert c.post("/api/open", json={"path": str(tmp_path / "c.yaml")}).status_code == 200


def test_a_folder_naming_workload_files_outside_opens_without_them(sim_dir: Path, tmp_path: Path) -> None:
    """inputs.json may name any file: the page gets the dashboards, not the contents of files
    outside the folders it may read."""
    folder = tmp_path / "sim"
    shutil.copytree(sim_dir, folder)
    inputs = json.loads((folder / "inputs.json").read_text())
    inputs.update(synthetic=None, synth=[], files=["/etc/hostname"])
    (folder / "inputs.json").write_text(json.dumps(inputs))
    roots = Roots.of([tmp_path])
    ws = open_source(str(folder), may_read=roots.check)
    assert ws.kind == "simulation" and ws.timeline is None and "outside the folders" in ws.note


# ---- cancelling runs ----------------------------------------------------------------------------
@pytest.fixture
def gate() -> object:
    yield Gate
    Gate.open()


def test_cancel_stops_a_whatif_at_its_next_attempt(serve, gate) -> None:
    srv = serve(open_source(None, files=[PREEMPT], seed=0), registry=trusted_registry())
    Gate.arm()
    box: dict[str, httpx2.Response] = {}
    t = threading.Thread(
        target=lambda: box.setdefault(
            "r", httpx2.post(f"{srv.url}/api/whatif", json={"configs": [{"yaml": CONFIG}] * 3}, headers=AUTH, timeout=60)
        )
    )
    t.start()
    assert Gate.entered.wait(30)
    Gate.calls = 0
    assert httpx2.post(f"{srv.url}/api/cancel", headers=AUTH, timeout=10).json() == {"cancelled": True}
    Gate.open()
    t.join(60)
    r = box["r"]
    assert r.status_code == 409 and r.json()["cancelled"] is True
    # the run stopped after the attempt in progress: 3 configurations x 5 pods x 2 nodes were not run
    assert Gate.calls <= 3
    again = httpx2.post(f"{srv.url}/api/whatif", json={"configs": [{"yaml": ""}]}, headers=AUTH, timeout=60)
    assert again.status_code == 200
    assert httpx2.post(f"{srv.url}/api/cancel", headers=AUTH, timeout=10).json() == {"cancelled": False}


def test_a_client_that_goes_away_cancels_its_run(serve, gate) -> None:
    srv = serve(open_source(None, files=[PREEMPT], seed=0), registry=trusted_registry())
    Gate.arm()

    def leave() -> None:
        with pytest.raises(httpx2.TimeoutException):
            httpx2.post(f"{srv.url}/api/whatif", json={"configs": [{"yaml": CONFIG}] * 3}, headers=AUTH, timeout=1.5)

    t = threading.Thread(target=leave)
    t.start()
    assert Gate.entered.wait(30)
    t.join(30)  # the client timed out and closed its connection
    time.sleep(0.6)  # the server looks every 0.2 s
    Gate.calls = 0
    Gate.open()
    deadline = time.monotonic() + 30
    while True:  # the run ends at its next attempt, then another is accepted
        r = httpx2.post(f"{srv.url}/api/whatif", json={"configs": [{"yaml": ""}]}, headers=AUTH, timeout=60)
        if r.status_code == 200:
            break
        assert r.status_code == 409 and time.monotonic() < deadline
        time.sleep(0.1)
    assert Gate.calls <= 3

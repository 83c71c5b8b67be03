"""The trust model in a real browser (Debian's Chromium): a hostile page on another loopback port,
in the browser that holds the UI's cookie, and a page under a name rebound to 127.0.0.1, get
nothing from `kubesched ui` and make it do nothing."""

from __future__ import annotations

import http.server
import json
import threading
from collections.abc import Iterator
from pathlib import Path

import httpx2
import pytest

from kubesched.ui.guard import Roots
from kubesched.ui.sources import open_source
from tests.ui.conftest import AUTH, PREEMPT, TOKEN
from tests.ui.test_browser import CHROMIUM, FLAGS
from tests.ui.test_security import _planted_simulation


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator:
    from playwright.sync_api import sync_playwright

    assert Path(CHROMIUM).exists(), f"{CHROMIUM} is missing: run scripts/install-test-deps.sh"
    # rebind.test resolves to 127.0.0.1 in this browser: what a DNS-rebinding attacker arranges
    flags = [*FLAGS, "--host-resolver-rules=MAP rebind.test 127.0.0.1"]
    with sync_playwright() as p:
        ctx = p.chromium.launch_persistent_context(
            str(tmp_path_factory.mktemp("chromium-security")), executable_path=CHROMIUM, headless=True, args=flags
        )
        yield ctx
        ctx.close()


class Recorder:
    """ASGI wrapper noting (method, path, status) of every answer: proves the attacks arrived."""

    def __init__(self, app) -> None:  # noqa: ANN001
        self.app = app
        self.seen: list[tuple[str, str, int]] = []

    async def __call__(self, scope, receive, send) -> None:  # noqa: ANN001
        async def note(message) -> None:  # noqa: ANN001
            if message["type"] == "http.response.start":
                self.seen.append((scope["method"], scope["path"], message["status"]))
            await send(message)

        await self.app(scope, receive, note if scope["type"] == "http" else send)


def _hostile_site(html: str) -> tuple[http.server.HTTPServer, int]:
    class Page(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802
            body = html.encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args) -> None:  # noqa: ANN002
            pass

    srv = http.server.HTTPServer(("127.0.0.1", 0), Page)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    return srv, srv.server_address[1]


def test_a_page_on_another_port_gets_nothing_and_opens_nothing(browser, serve, sim_dir: Path, tmp_path: Path) -> None:
    folder, marker = _planted_simulation(sim_dir, tmp_path)
    rec: list[Recorder] = []
    srv = serve(open_source(None, files=[PREEMPT], seed=0), roots=Roots.of([tmp_path]),
                wrap=lambda app: rec.append(Recorder(app)) or rec[0])
    page = browser.new_page()
    page.goto(srv.page("cluster"))  # the user opened the UI: the browser holds its cookie
    page.get_by_test_id("cluster-allocation").wait_for()
    ui = srv.url
    hostile, port = _hostile_site(
        "<script>window.out = []; (async () => {"
        f"const ui = {json.dumps(ui)};"
        f"const open = JSON.stringify({{path: {json.dumps(str(folder))}}});"
        "const tries = [['POST', '/api/open', open], ['POST', '/api/whatif', '{\"configs\":[{\"yaml\":\"\"}]}'],"
        " ['POST', '/api/import/snapshot', 'apiVersion: v1\\nkind: List\\nitems: []\\n'], ['GET', '/api/meta', null]];"
        "for (const [m, p, b] of tries) {"
        "  try { const r = await fetch(ui + p, {method: m, mode: 'no-cors', credentials: 'include',"
        "        headers: {'Content-Type': 'text/plain'}, body: b}); out.push(r.type); } catch (e) { out.push('error'); }"
        "  try { const r = await fetch(ui + p, {method: m, credentials: 'include', body: b}); out.push(await r.text()); }"
        "  catch (e) { out.push('blocked'); }"
        "}"
        "window.done = true; })();</script>"
    )
    try:
        evil = browser.new_page()
        evil.goto(f"http://127.0.0.1:{port}/")  # same site as the UI (cookies ignore ports)
        evil.wait_for_function("() => window.done === true", timeout=30_000)
        out = evil.evaluate("window.out")
    finally:
        hostile.shutdown()
    assert "blocked" in out and not any("kind" in str(x) or "runs" in str(x) for x in out)  # nothing read back
    refused = [(m, p) for m, p, status in rec[0].seen if status == 403]
    for m, p in [("POST", "/api/open"), ("POST", "/api/whatif"), ("POST", "/api/import/snapshot"), ("GET", "/api/meta")]:
        assert (m, p) in refused, (m, p, rec[0].seen)  # it arrived, and was refused
    assert not [x for x in rec[0].seen if x[1] != "/" and x[0] == "POST" and x[2] != 403]
    assert not marker.exists()
    assert httpx2.get(f"{ui}/api/meta", headers=AUTH).json()["title"] == PREEMPT  # nothing opened or imported


def test_a_rebinding_name_gets_nothing_in_the_browser(browser, serve) -> None:
    srv = serve(open_source(None, files=[PREEMPT], seed=0))
    page = browser.new_page()
    # even knowing the token, a page under another name is refused before anything is read
    r = page.goto(f"http://rebind.test:{srv.port}/?token={TOKEN}")
    assert r is not None and r.status == 403
    answers = page.evaluate(
        "async () => Promise.all(['/api/meta', '/api/cluster', '/api/export/snapshot', '/'].map("
        "async p => { const r = await fetch(p, {headers: {Authorization: 'Bearer ' + " + json.dumps(TOKEN) + "}});"
        " return [r.status, await r.text()]; }))"
    )
    assert [s for s, _ in answers] == [403, 403, 403, 403]
    assert all('"field":"Host"' in text and PREEMPT not in text for _, text in answers)

"""kubesched ui in a real browser: Debian's Chromium (headless) driven by Playwright. Each view is
opened, screenshotted, and checked for what it shows: numbers, table rows, the selected node.

Chromium comes from scripts/install-test-deps.sh (`apt-get install chromium`); nothing is
downloaded at test time. Screenshots go to the test's temporary folder, and also to
$KUBESCHED_UI_SCREENSHOTS when set (how docs/img/ui-*.png are made).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import expect

from kubesched.ui.guard import Roots
from kubesched.ui.sources import open_source
from tests.ui.conftest import PREEMPT

CHROMIUM = "/usr/bin/chromium"
FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
    "--disable-sync", "--no-first-run",
]


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator:
    from playwright.sync_api import sync_playwright

    assert Path(CHROMIUM).exists(), f"{CHROMIUM} is missing: run scripts/install-test-deps.sh (installs Debian's chromium)"
    with sync_playwright() as p:
        ctx = p.chromium.launch_persistent_context(
            str(tmp_path_factory.mktemp("chromium-profile")), executable_path=CHROMIUM, headless=True, args=FLAGS,
            viewport={"width": 1400, "height": 1000}, accept_downloads=True,
        )
        yield ctx
        ctx.close()


@pytest.fixture
def page(browser) -> Iterator:
    pg = browser.new_page()
    errors: list[str] = []
    pg.on("pageerror", lambda e: errors.append(str(e)))
    yield pg
    pg.close()
    assert not errors, errors  # no script error in any view


def shot(page, tmp_path: Path, name: str) -> None:
    path = tmp_path / f"ui-{name}.png"
    page.screenshot(path=str(path), full_page=True)
    assert path.stat().st_size > 5000
    out = os.environ.get("KUBESCHED_UI_SCREENSHOTS")
    if out:
        shutil.copy(path, Path(out) / path.name)


@pytest.fixture(scope="module")
def cluster_ws():
    return open_source(None, files=[PREEMPT], seed=0)


def test_cluster_view(page, serve, cluster_ws, tmp_path: Path) -> None:
    srv = serve(cluster_ws)
    page.goto(srv.page("cluster"))
    cards = page.get_by_test_id("cluster-allocation")
    cards.wait_for()
    assert "68.8 %" in cards.locator('[data-resource="cpu"]').inner_text()  # 5.5 of 8 CPUs
    nodes = page.locator("#nodes-table")
    assert nodes.get_by_test_id("row-count").inner_text() == "2 of 2"
    assert nodes.locator('.vrow[data-row="0"] .cell').nth(1).inner_text() == "75.0 %"
    nodes.locator(".search").fill("node-b")
    expect(nodes.get_by_test_id("row-count")).to_have_text("1 of 2")
    pending = page.get_by_test_id("pending")
    assert "default/huge" in pending.inner_text()
    assert "Insufficient cpu" in page.get_by_test_id("reasons").inner_text()
    box = page.get_by_test_id("heatmap").bounding_box()
    assert box and box["width"] > 0 and box["height"] > 0
    shot(page, tmp_path, "cluster")
    # the slider's start: the cluster as loaded (both batch pods, 6 of 8 CPUs)
    page.get_by_role("button", name="start").click()
    page.get_by_test_id("step").filter(has_text="0").wait_for()
    assert "75.0 %" in cards.locator('[data-resource="cpu"]').inner_text()


def test_pods_view_filter_and_sort(page, serve, cluster_ws, tmp_path: Path) -> None:
    srv = serve(cluster_ws)
    page.goto(srv.page("pods"))
    table = page.locator("#pods-table")
    table.get_by_test_id("row-count").wait_for()
    assert table.get_by_test_id("row-count").inner_text() == "5 of 5"
    page.get_by_test_id("state-filter").select_option("unschedulable")
    expect(table.get_by_test_id("row-count")).to_have_text("1 of 5")
    assert "default/huge" in table.locator(".vbody .vrow").first.inner_text()
    page.get_by_test_id("state-filter").select_option("")
    expect(table.get_by_test_id("row-count")).to_have_text("5 of 5")
    table.locator('.vhead [data-col="cpu"]').click()  # numbers sort largest first
    expect(table.locator('.vbody .vrow[data-row="3"]')).to_have_css("transform", "matrix(1, 0, 0, 1, 0, 0)")  # huge: row 0
    shot(page, tmp_path, "pods")


def test_decision_view_of_a_preemption(page, serve, cluster_ws, tmp_path: Path) -> None:
    srv = serve(cluster_ws)
    page.goto(srv.page("decision?pod=default/urgent"))
    page.get_by_test_id("decision").wait_for()
    assert page.get_by_test_id("selected-node").inner_text() == "node-b"
    assert page.get_by_test_id("nominated-node").inner_text() == "node-b"
    assert page.get_by_test_id("victims").inner_text() == "1"
    rows = page.get_by_test_id("attempts").locator("tbody tr")
    assert rows.count() == 2
    assert "default/batch-b" in rows.nth(0).inner_text() and "scheduled" in rows.nth(1).inner_text()
    filt = page.locator("#filter-table")
    assert "Insufficient cpu" in filt.locator('.vrow[data-row="0"]').inner_text()  # node-a
    assert "★ node-b" in page.locator("#final-table .vbody .vrow").first.inner_text()
    assert page.locator("#timing-attempt").get_by_text("PostFilter").count() == 0  # attempt 2 did not preempt
    assert page.locator("#timing-explain").get_by_text("Score", exact=True).count() >= 1
    shot(page, tmp_path, "decision")
    rows.nth(0).click()  # attempt 1: before the preemption, no node fits
    page.wait_for_url("**attempt=1")
    page.get_by_test_id("fit-message").wait_for()
    assert page.get_by_test_id("explain-selected").inner_text() == "none"
    assert "PostFilter" in page.locator("#timing-attempt").inner_text()


def test_whatif_reports_bad_config_then_compares(page, serve, cluster_ws, tmp_path: Path) -> None:
    srv = serve(cluster_ws)
    page.goto(srv.page("whatif"))
    editor = page.get_by_test_id("config-1")
    editor.wait_for()
    editor.fill("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles: 3\n")
    page.get_by_test_id("run-whatif").click()
    err = page.get_by_test_id("whatif-error")
    err.wait_for()
    assert "profiles" in err.inner_text() and "configs[1]" in err.inner_text()
    editor.fill(
        "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles:\n"
        "- schedulerName: default-scheduler\n  plugins:\n    postFilter:\n      disabled: [{name: DefaultPreemption}]\n"
    )
    page.get_by_test_id("run-whatif").click()
    page.get_by_test_id("whatif-result").wait_for()
    balance = page.get_by_test_id("balance").inner_text()
    assert "62.50" in balance and "75.00" in balance  # cpu min / max with preemption
    diff = page.get_by_test_id("diff").inner_text()
    assert "default/urgent" in diff and "pending" in diff
    shot(page, tmp_path, "whatif")


def test_whatif_drag_a_pod_onto_a_node(page, serve, cluster_ws) -> None:
    srv = serve(cluster_ws)
    page.goto(srv.page("whatif"))
    page.locator('.dnd-pod[data-pod="default/small"]').drag_to(page.locator('.dnd-node[data-node="node-a"]'))
    expect(page.get_by_test_id("moves")).to_contain_text("default/small → node-a")
    page.get_by_test_id("run-whatif").click()
    page.get_by_test_id("whatif-result").wait_for()
    assert "87.50" in page.get_by_test_id("balance").inner_text()  # node-a: 3.5 of 4 CPUs


def test_simulation_dashboard_and_exports(page, serve, sim_dir: Path, tmp_path: Path) -> None:
    srv = serve(open_source(str(sim_dir)))
    page.goto(srv.page("simulation"))
    page.get_by_test_id("simulation").wait_for()
    summary = (sim_dir / "summary.json").read_text()
    import json

    page.wait_for_function("() => document.querySelectorAll('.chart canvas').length >= 5")  # drawn after paint
    assert page.get_by_test_id("sim-scheduled").inner_text() == str(json.loads(summary)["pods"]["scheduled"])
    with page.expect_download() as dl:
        page.locator("#allocation").get_by_role("button", name="CSV").click()
    csv_text = Path(dl.value.path()).read_text()
    assert csv_text.startswith("time (s),cpu_alloc_pct,mem_alloc_pct")
    with page.expect_download() as dl:
        page.locator("#allocation").get_by_role("button", name="PNG").click()
    assert Path(dl.value.path()).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    shot(page, tmp_path, "simulation")
    # the pods table is virtualised: fewer rows in the page than pods
    page.goto(srv.page("pods"))
    table = page.locator("#pods-table")
    table.get_by_test_id("row-count").wait_for()
    assert table.get_by_test_id("row-count").inner_text() == "120 of 120"
    table.locator(".vbody .vrow").first.wait_for()  # rows appear once the virtualiser measured the box
    assert 0 < table.locator(".vbody .vrow").count() < 120


def test_experiment_dashboard(page, serve, exp_dir: Path, tmp_path: Path) -> None:
    srv = serve(open_source(str(exp_dir)))
    page.goto(srv.page("experiment"))
    page.get_by_test_id("experiment").wait_for()
    deltas = page.get_by_test_id("deltas")
    assert "BestFit" in deltas.inner_text() and "Random" not in deltas.locator("tbody").inner_text()
    page.wait_for_function("() => document.querySelectorAll('.chart canvas').length >= 2")
    shot(page, tmp_path, "experiment")
    page.get_by_test_id("baseline").select_option("BestFit")
    page.wait_for_function("() => document.querySelector('[data-testid=deltas] tbody').innerText.includes('Random')")
    assert "BestFit" not in deltas.locator("tbody").inner_text()


def test_bad_folder_shows_a_message(page, serve, cluster_ws, tmp_path: Path) -> None:
    srv = serve(cluster_ws, roots=Roots.of([tmp_path]))
    (tmp_path / "junk").mkdir()
    page.goto(srv.page("share"))
    page.get_by_test_id("open-path").fill(str(tmp_path / "junk"))
    page.get_by_test_id("open-button").click()
    err = page.get_by_test_id("error")
    err.wait_for()
    assert "not a kubesched output folder" in err.inner_text() and "path" in err.inner_text()
    shot(page, tmp_path, "error")

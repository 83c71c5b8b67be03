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
from tests.ui.conftest import PAYMENTS, PREEMPT

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
            viewport={"width": 1280, "height": 800}, accept_downloads=True,  # a laptop's
        )
        yield ctx
        ctx.close()


EXPECTED: dict[int, list[str]] = {}  # per page: console errors a test provokes on purpose


def expect_console_error(page, text: str) -> None:  # noqa: ANN001
    """The test makes the page log an error containing ``text`` (an HTTP 400 it asked for)."""
    EXPECTED.setdefault(id(page), []).append(text)


@pytest.fixture
def page(browser, serve) -> Iterator:  # noqa: ANN001
    # ``serve`` first: its servers stop after the page is closed (a page still polling or
    # loading when its server went away logged a refused connection: a console error)
    pg = browser.new_page()
    errors: list[str] = []
    pg.on("pageerror", lambda e: errors.append(str(e)))
    # any console error counts (a failed load logs one: the favicon's 404 did on every load)
    pg.on("console", lambda m: errors.append(f"console: {m.text} ({m.location.get('url', '')})") if m.type == "error" else None)
    yield pg
    pg.close()
    allowed = EXPECTED.pop(id(pg), [])
    unexpected = [e for e in errors if not any(a in e for a in allowed)]
    assert not unexpected, unexpected  # no script error and no console error in any view


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
    expect_console_error(page, "status of 400")  # the browser logs the refused request
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
    assert csv_text.startswith("time (hours),cpu_alloc_pct,mem_alloc_pct")  # the run's unit: it spans 4 hours
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
    expect_console_error(page, "status of 400")  # the browser logs the refused request
    page.get_by_test_id("open-button").click()
    err = page.get_by_test_id("error")
    err.wait_for()
    assert "not a kubesched output folder" in err.inner_text() and "path" in err.inner_text()
    shot(page, tmp_path, "error")


# ---- what a platform engineer checks: every pod told right, nothing cut, one figure per thing ----
VICTIMS = [f"payments-production/nightly-reconcile-ledger-export-29071400-{x}" for x in "abc"]
NODE_A, NODE_C = "payments-production-pool-general-node-a-7f9c2", "payments-production-pool-general-node-c-0b3a6"
SETTLE_1 = "payments-production/settlement-batch-processor-eu-west-1"
CANARY = "payments-production/fraud-score-sidecar-canary"
# cells whose text does not fit their box (cut by an ellipsis, hidden overflow or a fixed height)
CUT = """() => [...document.querySelectorAll('.vtable .cell, table.plain td, table.plain th, .card')]
  .filter((el) => el.getClientRects().length && (el.scrollWidth > el.clientWidth + 1 || el.scrollHeight > el.clientHeight + 1))
  .map((el) => el.innerText)"""


SIDEWAYS = """() => [...document.querySelectorAll('.vtable:not(#filter-table) .vscroll')]
  .filter((el) => el.scrollWidth > el.clientWidth + 1).map((el) => el.parentElement.id)"""


@pytest.fixture(scope="module")
def payments_ws():
    return open_source(None, files=[PAYMENTS], seed=0)


def test_no_console_error_on_load_and_a_favicon(page, serve, cluster_ws) -> None:
    srv = serve(cluster_ws)
    refused: list[str] = []
    page.on("response", lambda r: refused.append(f"{r.status} {r.url}") if r.status >= 400 else None)
    page.goto(srv.page("cluster"))
    page.get_by_test_id("cluster-allocation").wait_for()
    href = page.locator('link[rel="icon"]').get_attribute("href")
    icon = page.request.get(srv.url + href)
    assert icon.status == 200 and icon.headers["content-type"].startswith("image/svg+xml")
    assert icon.body().startswith(b"<svg")
    assert not refused  # nothing the page asked for was refused (the fixture fails on console errors)


def test_pods_view_says_who_preempted_whom(page, serve, payments_ws, tmp_path: Path) -> None:
    srv = serve(payments_ws)
    page.goto(srv.page("pods"))
    table = page.locator("#pods-table")
    table.get_by_test_id("row-count").wait_for()
    page.get_by_test_id("state-filter").select_option("preempted")
    expect(table.get_by_test_id("row-count")).to_have_text("3 of 8")
    rows = table.locator(".vbody .vrow")
    expect(rows).to_have_count(3)
    for k in range(3):
        cells = rows.nth(k).locator(".cell")
        assert cells.nth(0).inner_text() in VICTIMS
        assert cells.nth(1).inner_text() == "preempted"
        assert cells.nth(2).inner_text() == ""  # no final node: the pod is gone
        msg = cells.nth(9).inner_text()
        assert msg.startswith("preempted by payments-production/settlement-batch-processor-eu-west-")
        assert "(its attempt 1) at t = 0 s, from payments-production-pool-general-node-" in msg
    shot(page, tmp_path, "pods")


@pytest.mark.parametrize("width", [1280, 800])
def test_names_are_never_cut_and_the_page_fits(page, serve, payments_ws, tmp_path: Path, width: int) -> None:
    page.set_viewport_size({"width": width, "height": 800})
    srv = serve(payments_ws)
    views = {
        "cluster": "#nodes-table .vbody .vrow",
        "pods": "#pods-table .vbody .vrow",
        f"decision?pod={SETTLE_1}": "#final-table .vbody .vrow",
    }
    for view, ready in views.items():
        page.goto(srv.page(view))
        page.locator(ready).first.wait_for()
        assert page.evaluate(CUT) == [], f"{view} at {width} px"
        # and the tables fit the page (the filter table, a node x plugin matrix, may scroll sideways)
        wide = page.evaluate(SIDEWAYS)
        assert wide == [], f"{view} at {width} px: {wide}"
        assert page.evaluate("document.documentElement.scrollWidth") <= width, f"{view} scrolls sideways at {width} px"
        if view == "cluster":
            box = page.get_by_test_id("heatmap").bounding_box()
            assert box and box["x"] + box["width"] <= width
            assert NODE_A in page.locator("#nodes-table .vbody").inner_text()
        if view == "pods":
            body = page.locator("#pods-table .vbody").inner_text()
            assert all(v in body for v in VICTIMS)
        if width == 800:
            shot(page, tmp_path, f"{view.split('?')[0]}-800")


def test_the_star_says_why_it_sits_where_it_does(page, serve, payments_ws, tmp_path: Path) -> None:
    srv = serve(payments_ws)
    page.goto(srv.page(f"decision?pod={SETTLE_1}"))
    why = page.get_by_test_id("selected-why")
    why.wait_for()
    # the run took the nominated node, which explain scores below another: the page says so
    top = page.locator("#final-table .vbody .vrow").first.inner_text()  # highest total first
    assert NODE_C in top and "★" not in top
    assert "★" in page.locator("#final-table .vbody").get_by_text(NODE_A).first.inner_text()
    assert why.get_attribute("data-kind") == "nominated"
    assert f"★ {NODE_A}: the node attempt 1's preemption nominated" in why.inner_text()
    assert f"gives {NODE_C} 415 against 405" in why.inner_text()
    shot(page, tmp_path, "decision")
    page.goto(srv.page(f"decision?pod={CANARY}"))
    why = page.get_by_test_id("selected-why")
    why.wait_for()
    assert why.get_attribute("data-kind") == "tie"
    assert "tie: 2 nodes share the top total score" in why.inner_text() and "seeded random draw (seed 0)" in why.inner_text()


def test_time_mode_simulation_opens_at_its_busiest_step_with_one_gpu_figure(page, serve, sim_dir: Path, tmp_path: Path) -> None:
    import csv
    import json

    summary = json.loads((sim_dir / "summary.json").read_text())
    peak = summary["allocation_pct"]["gpu"]["peak"]
    assert peak > 100  # the default configuration filters on no GPU: some nodes hold more than they have
    with (sim_dir / "events.csv").open() as f:
        assert max(float(r["gpu_alloc_pct"]) for r in csv.DictReader(f)) == peak
    ws = open_source(str(sim_dir))
    srv = serve(ws)
    page.goto(srv.page("cluster"))
    card = page.get_by_test_id("cluster-allocation").locator('[data-resource="gpu"]')
    card.wait_for()
    step = page.get_by_test_id("step")
    assert int(step.inner_text()) == ws.start_step and 0 < ws.start_step < len(ws.timeline)
    assert "the most GPU allocated over the run" in page.get_by_test_id("start-note").inner_text()
    assert f"{peak:.1f} %" in card.inner_text()
    assert "/ 48 GPUs" in card.inner_text()  # milli-GPU shown as GPUs, with the unit
    over = page.get_by_test_id("gpu-unseated").inner_text()
    assert "on no GPU: 2 nodes hold pods asking more than their GPUs have free" in over
    expect(page.get_by_test_id("heat-over")).to_contain_text("over 100 %")
    shot(page, tmp_path, "cluster-gpu")
    slider = page.get_by_test_id("step-slider")
    assert slider.get_attribute("min") == "0" and slider.get_attribute("max") == str(len(ws.timeline))
    page.get_by_role("button", name="end").click()
    expect(step).to_have_text(str(len(ws.timeline)))
    expect(card).to_contain_text("0.0 %")  # every pod has finished
    page.get_by_role("button", name="busiest").click()
    expect(step).to_have_text(str(ws.start_step))
    # the simulation dashboard shows the same figure, said to be the peak, at that step
    page.goto(srv.page("simulation"))
    gpu = page.get_by_test_id("sim-gpu")
    expect(gpu).to_contain_text(f"{peak:.1f} %")
    assert f"at step {ws.start_step}, where the Cluster view opens" in gpu.inner_text()


# for each chart's x axis: neighbouring tick labels whose boxes overlap (drawn on the canvas; the
# labels are uPlot's, measured in the axis font)
OVERLAPS = """(id) => {
  const u = window.__kubesched.charts[id];
  const ax = u.axes[0];
  const ctx = document.createElement("canvas").getContext("2d");
  ctx.font = ax.font[0];
  const boxes = ax._splits.map((v, k) => [u.valToPos(v, "x"), ctx.measureText(ax._values[k]).width / devicePixelRatio, ax._values[k]])
    .filter((b) => b[2] !== "");
  const hits = [];
  for (let k = 1; k < boxes.length; k++)
    if (boxes[k][0] - boxes[k][1] / 2 < boxes[k - 1][0] + boxes[k - 1][1] / 2) hits.push([boxes[k - 1][2], boxes[k][2]]);
  return {labels: boxes.map((b) => b[2]), hits};
}"""


def test_chart_tick_labels_do_not_overlap(page, serve, trace_sim_dir: Path) -> None:
    srv = serve(open_source(str(trace_sim_dir)))
    page.goto(srv.page("simulation"))
    page.locator("#failures canvas").first.wait_for()
    page.wait_for_function("() => window.__kubesched.charts && window.__kubesched.charts.failures")
    for chart in ("failures", "nodes", "allocation"):
        got = page.evaluate(OVERLAPS, chart)
        assert len(got["labels"]) >= 3 and got["hits"] == [], (chart, got)


def test_experiment_bars_are_labelled_with_the_policies(page, serve, exp_dir: Path) -> None:
    import csv

    with (exp_dir / "runs.csv").open() as f:
        policies = list(dict.fromkeys(r["policy"] for r in csv.DictReader(f)))
    assert sorted(policies) == ["BestFit", "Random"]
    srv = serve(open_source(str(exp_dir)))
    page.goto(srv.page("experiment"))
    page.wait_for_function("() => window.__kubesched.charts && Object.keys(window.__kubesched.charts).some((k) => k.startsWith('bars-'))")
    bars = page.evaluate("() => Object.keys(window.__kubesched.charts).find((k) => k.startsWith('bars-'))")
    axis = page.evaluate("(id) => { const a = window.__kubesched.charts[id].axes[0]; return {label: a.label, values: a._values}; }", bars)
    assert axis == {"label": "policy", "values": policies}
    assert page.evaluate(OVERLAPS, bars)["hits"] == []


def test_the_other_views_fit_800_px(page, serve, payments_ws, sim_dir: Path, exp_dir: Path) -> None:
    page.set_viewport_size({"width": 800, "height": 800})
    for ws, view, ready in (
        (payments_ws, "whatif", "[data-testid=config-1]"),
        (open_source(str(sim_dir)), "simulation", "#allocation canvas"),
        (open_source(str(exp_dir)), "experiment", "[data-testid=deltas]"),
    ):
        page.goto(serve(ws).page(view))
        page.locator(ready).first.wait_for()
        assert page.evaluate("document.documentElement.scrollWidth") <= 800, view
        assert page.evaluate(CUT) == [], view


# ---- every extension point, and the volumes and claims behind a rejection ----------------------
EXAMPLES = Path(__file__).parents[2] / "kubesched" / "examples"


def _point(page, point: str, plugin: str) -> str:  # noqa: ANN001
    return page.get_by_test_id("points").locator(f'tr[data-point="{point}"][data-plugin="{plugin}"]').inner_text()


def test_decision_view_shows_every_extension_point(page, serve, cluster_ws, tmp_path: Path) -> None:
    srv = serve(cluster_ws)
    page.goto(srv.page("decision?pod=default/urgent&attempt=1"))  # the attempt that preempted
    page.get_by_test_id("points").wait_for()
    post = _point(page, "PostFilter", "DefaultPreemption")
    assert "success" in post and "nominated node-b" in post and "victims: default/batch-b on node-b" in post
    assert "attempt 1" in post  # the run's own result, not explain's
    assert "success" in _point(page, "PreFilter", "NodeResourcesFit")
    page.goto(srv.page("decision?pod=default/urgent"))  # the attempt that bound it
    page.get_by_test_id("points").locator('tr[data-point="Bind"]').wait_for()
    assert "skip" in _point(page, "PreScore", "InterPodAffinity")
    assert "success" in _point(page, "Reserve", "VolumeBinding")
    assert "success" in _point(page, "Bind", "DefaultBinder")
    assert page.get_by_test_id("points").locator('tr[data-point="PostFilter"]').count() == 0
    shot(page, tmp_path, "decision-points")
    gang = open_source(None, files=[str(EXAMPLES / "coscheduling-cluster.yaml")], config=str(EXAMPLES / "coscheduling.yaml"), seed=0)
    srv = serve(gang)
    page.goto(srv.page("decision?pod=ml/train-0"))
    page.get_by_test_id("points").wait_for()
    permit = _point(page, "Permit", "Coscheduling")
    assert "wait" in permit and "timeout 30 s" in permit
    assert "not called: nothing to do for this pod" in _point(page, "Reserve", "VolumeBinding")


@pytest.mark.parametrize("width", [1280, 800])
def test_decision_view_names_the_volume_or_claim_behind_a_rejection(page, serve, tmp_path: Path, width: int) -> None:
    page.set_viewport_size({"width": width, "height": 800})
    srv = serve(open_source(None, files=[str(Path(__file__).parent / "storage.yaml")], seed=0))
    page.goto(srv.page("decision?pod=shop/apart"))
    page.get_by_test_id("volumes").wait_for()
    filt = page.locator("#filter-table")
    filt.locator(".search").fill("node-b")
    row = filt.locator(".vbody .vrow").first
    expect(row).to_contain_text('node(s) had volume node affinity conflict (volume "left" (claim shop/data-a1))')
    vols = page.get_by_test_id("pod-volumes").inner_text()
    assert "shop/data-b1" in vols and "pv-b1 (10Gi)" in vols and "topology.kubernetes.io/zone in (zone-b)" in vols
    rej = page.get_by_test_id("storage-rejections").inner_text()
    assert 'volume "right" (claim shop/data-b1)' in rej
    assert "the pod's volumes together (none alone)" in rej  # node-c's limit of one volume
    assert page.evaluate(CUT) == [] and page.evaluate("document.documentElement.scrollWidth") <= width
    if width == 1280:
        shot(page, tmp_path, "decision-storage")
    dra = open_source(None, files=[str(EXAMPLES / "dra-cluster.yaml")], seed=0)
    srv = serve(dra)
    page.goto(srv.page("decision?pod=ml/pair-job"))
    claims = page.get_by_test_id("pod-claims")
    claims.wait_for()
    assert "gpu-0 (gpu.example.com, pool gpu-a; request gpus)" in claims.inner_text()
    assert "metadata.name in (gpu-a)" in claims.inner_text()
    assert 'claim "gpus" (resourceclaim ml/pair)' in page.get_by_test_id("storage-rejections").inner_text()

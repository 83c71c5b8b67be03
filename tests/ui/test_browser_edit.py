"""Edit and re-run in Chromium: a node's capacity edited in the page (a bad value first, refused
with its field), the scheduling re-run, the pending pod now placed and the diff saying so, its
link opening its decision; the working copy downloaded, the file on disk untouched."""

from __future__ import annotations

import re
from pathlib import Path

import yaml
from playwright.sync_api import expect

from kubesched.ui.sources import open_source
from tests.ui.conftest import PREEMPT
from tests.ui.test_browser import browser, expect_console_error, page, shot  # noqa: F401 - Chromium and its page


def test_edit_a_node_rerun_and_the_pending_pod_is_placed(page, serve, tmp_path: Path) -> None:  # noqa: F811
    cluster = tmp_path / "cluster.yaml"
    cluster.write_bytes(Path(PREEMPT).read_bytes())
    srv = serve(open_source(None, files=[str(cluster)], seed=0))
    page.goto(srv.page("edit"))
    page.locator('[data-testid="edit-object"][data-ref="Node node-a"]').click()
    expect(page.get_by_test_id("edit-title")).to_have_text("Node node-a")
    editor = page.get_by_test_id("edit-yaml")
    expect(editor).to_have_value(re.compile(r"allocatable:\n    cpu: '4'"))
    text = editor.input_value()
    # a value no quantity parses: refused, one line naming the object and the field
    editor.fill(text.replace("cpu: '4'", "cpu: lots"))
    expect_console_error(page, "status of 400")
    page.get_by_test_id("edit-save").click()
    expect(page.get_by_test_id("edit-error")).to_contain_text("Node node-a: status.allocatable.cpu: invalid quantity")
    expect(page.get_by_test_id("edit-status")).to_have_text("0 changes kept, all run")
    editor.fill(text.replace("cpu: '4'", "cpu: '32'"))
    page.get_by_test_id("edit-save").click()
    expect(page.get_by_test_id("edit-message")).to_contain_text("saved Node node-a")
    expect(page.get_by_test_id("edit-status")).to_have_text("1 change kept, 1 not run yet")
    page.get_by_test_id("rerun").click()
    huge = page.locator('[data-testid="rerun-diff"] tr[data-pod="default/huge"]')
    expect(huge).to_contain_text("placed")
    cells = huge.locator("td")
    assert [cells.nth(i).inner_text() for i in range(4)] == ["default/huge", "placed", "unschedulable", "node-a (scheduled)"]
    expect(page.get_by_test_id("rerun-summary")).to_have_text("2 placed, 2 moved, 1 kept their placement")
    expect(page.get_by_test_id("edit-status")).to_have_text("1 change kept, all run")
    shot(page, tmp_path, "edit")
    with page.expect_download() as dl:
        page.get_by_test_id("edit-download").click()
    items = yaml.safe_load(Path(dl.value.path()).read_text())["items"]
    node_a = next(i for i in items if i["kind"] == "Node" and i["metadata"]["name"] == "node-a")
    assert node_a["status"]["allocatable"]["cpu"] == "32"
    assert cluster.read_bytes() == Path(PREEMPT).read_bytes()  # the file is never written
    huge.get_by_role("link").click()
    expect(page.get_by_test_id("selected-node")).to_have_text("node-a")
    # the cluster view shows the new run: nothing pending
    page.locator('nav a[data-view="cluster"]').click()
    expect(page.get_by_test_id("pending")).to_contain_text("none: every pod that was tried got a node.")


def test_create_and_delete_pods_in_the_page(page, serve, tmp_path: Path) -> None:  # noqa: F811
    srv = serve(open_source(None, files=[PREEMPT], seed=0))
    page.goto(srv.page("edit"))
    expect(page.get_by_test_id("edit-object")).to_have_count(8)
    page.get_by_test_id("edit-new-kind").select_option("Pod")
    page.get_by_test_id("edit-new").click()
    editor = page.get_by_test_id("edit-yaml")
    template = editor.input_value()
    assert "kind: Pod" in template and "name: pod-new" in template
    editor.fill("kind: Pod\nmetadata: {name: [")  # no YAML: refused, the field is the body
    expect_console_error(page, "status of 400")
    page.get_by_test_id("edit-create").click()
    expect(page.get_by_test_id("edit-error")).to_contain_text("body: invalid YAML at line")
    editor.fill(template.replace("pod-new", "giant").replace("cpu: 500m", "cpu: '64'"))
    page.get_by_test_id("edit-create").click()
    expect(page.get_by_test_id("edit-message")).to_contain_text("created Pod default/giant")
    expect(page.get_by_test_id("edit-object")).to_have_count(9)
    page.locator('[data-testid="edit-object"][data-ref="Pod default/small"]').click()
    expect(page.get_by_test_id("edit-title")).to_have_text("Pod default/small")
    page.get_by_test_id("edit-delete").click()
    expect(page.get_by_test_id("edit-message")).to_have_text("deleted Pod default/small")
    expect(page.locator('[data-testid="edit-object"][data-ref="Pod default/small"]')).to_have_count(0)
    expect(page.get_by_test_id("edit-status")).to_have_text("2 changes kept, 2 not run yet")
    page.get_by_test_id("rerun").click()
    diff = page.get_by_test_id("rerun-diff")
    expect(diff.locator('tr[data-pod="default/giant"]')).to_contain_text("added")
    expect(diff.locator('tr[data-pod="default/giant"] td').nth(3)).to_have_text("unschedulable")
    expect(diff.locator('tr[data-pod="default/small"]')).to_contain_text("deleted")
    expect(page.get_by_test_id("rerun-summary")).to_have_text("1 added, 1 deleted, 4 kept their placement")


def test_the_edit_view_fits_800_px(page, serve, tmp_path: Path) -> None:  # noqa: F811
    """At a narrow laptop's width the Edit view (list, editor, the re-run's diff) scrolls no
    wider than the window and cuts no name."""
    from tests.ui.test_browser import CUT

    page.set_viewport_size({"width": 800, "height": 800})
    page.goto(serve(open_source(None, files=[PREEMPT], seed=0)).page("edit"))
    page.locator('[data-testid="edit-object"][data-ref="Node node-a"]').click()
    editor = page.get_by_test_id("edit-yaml")
    expect(editor).to_have_value(re.compile(r"cpu: '4'"))
    editor.fill(editor.input_value().replace("cpu: '4'", "cpu: '32'"))
    page.get_by_test_id("edit-save").click()
    page.get_by_test_id("rerun").click()
    expect(page.get_by_test_id("rerun-summary")).to_contain_text("placed")
    assert page.evaluate("document.documentElement.scrollWidth") <= 800
    assert page.evaluate(CUT) == []

"""kubesched ui in headless Chromium: first render, a pod's decision view, page memory, and the
tables at 5,000 nodes x 150,000 pods. Measures and prints; asserts nothing about time.

    python bench/ui_render.py                 # 1,213 GPU nodes x 10,000 pods (a simulation)
    python bench/ui_render.py --big           # also 5,000 nodes x 150,000 pods (a cluster dump)
    python bench/ui_render.py --json out.json

The simulation is `kubesched simulate --synthetic` with 1,213 nodes of 8 GPUs and 10,000 pods in
arrival mode (every pod tried once, nothing completes: the cluster fills up). Timings come from
the page itself (``window.__kubesched.timings``, performance.now()): ``cluster_at`` is the first
render of the cluster view after the page started loading, ``decision`` is from asking for a pod's
decision to its tables painted (server explain included).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from kubesched.cli import main as kubesched  # noqa: E402
from kubesched.heap import freeze_long_lived  # noqa: E402
from kubesched.ui.sources import open_source  # noqa: E402
from tests.ui.conftest import TOKEN, Server  # noqa: E402
from tests.ui.test_browser import CHROMIUM, FLAGS  # noqa: E402


def renderer_memory_mb() -> tuple[float, float]:
    """(PSS, RSS) of the largest Chromium renderer process (the page's), MiB. PSS shares the
    pages mapped by several processes (the binary, fonts) among them; RSS counts them whole."""
    best = (0, 0)
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            cmd = (proc / "cmdline").read_bytes()
            if b"chromium" not in cmd or b"--type=renderer" not in cmd:
                continue
            fields = dict(line.split(":", 1) for line in (proc / "smaps_rollup").read_text().splitlines()[1:])
            pss, rss = int(fields["Pss"].split()[0]), int(fields["Rss"].split()[0])
        except (OSError, KeyError, ValueError):
            continue
        best = max(best, (pss, rss))
    return best[0] / 1024, best[1] / 1024


def measure(page, url: str, pods: list[str], label: str) -> dict:
    cdp = page.context.new_cdp_session(page)
    cdp.send("Performance.enable")
    t0 = time.perf_counter()
    page.goto(f"{url}/?token={TOKEN}#/cluster")  # the printed URL: sets the cookie the rest use
    page.wait_for_function("() => window.__kubesched && window.__kubesched.timings.cluster_at", timeout=120_000)
    wall = (time.perf_counter() - t0) * 1000
    t = page.evaluate("() => window.__kubesched.timings")
    out = {"scenario": label, "first_render_ms": round(t["cluster_at"], 1), "cluster_fetch_to_paint_ms": round(t["cluster"], 1), "goto_to_paint_wall_ms": round(wall, 1)}
    # the pods table: search and sort, timed in the page
    page.goto(f"{url}/#/pods")
    page.locator("#pods-table .search").wait_for()
    q = pods[len(pods) // 2].split("/")[1]
    out["search_ms"] = round(page.evaluate(
        """async (q) => { const el = document.querySelector('#pods-table .search');
        const t0 = performance.now(); el.value = q; el.dispatchEvent(new Event('input', {bubbles: true}));
        await new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r))); return performance.now() - t0; }""", q), 1)
    out["sort_ms"] = round(page.evaluate(
        """async () => { const el = document.querySelector('#pods-table .search'); el.value = '';
        el.dispatchEvent(new Event('input', {bubbles: true}));
        await new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)));
        const t0 = performance.now(); document.querySelector('#pods-table [data-col="cpu"]').click();
        await new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r))); return performance.now() - t0; }"""), 1)
    out["pods_rows_in_dom"] = page.locator("#pods-table .vbody .vrow").count()
    decisions, fetches = [], []
    for key in pods:
        page.evaluate("() => { delete window.__kubesched.timings.decision }")
        page.evaluate(f"() => {{ location.hash = '#/decision?pod={key}' }}")
        page.wait_for_function("() => window.__kubesched.timings.decision !== undefined", timeout=120_000)
        decisions.append(page.evaluate("() => window.__kubesched.timings.decision"))
        fetches.append(page.evaluate("() => window.__kubesched.timings.decision_fetch"))
    out["decision_first_ms"] = round(decisions[0], 1)
    rest = decisions[1:] or decisions
    out["decision_median_ms"] = round(statistics.median(rest), 1)
    out["decision_max_ms"] = round(max(rest), 1)
    out["decision_fetch_median_ms"] = round(statistics.median(fetches[1:] or fetches), 1)  # JSON in hand
    metrics = {m["name"]: m["value"] for m in cdp.send("Performance.getMetrics")["metrics"]}
    out["js_heap_used_mb"] = round(metrics["JSHeapUsedSize"] / 2**20, 1)
    out["js_heap_total_mb"] = round(metrics["JSHeapTotalSize"] / 2**20, 1)
    pss, rss = renderer_memory_mb()
    out["renderer_pss_mb"] = round(pss, 1)
    out["renderer_rss_mb"] = round(rss, 1)
    return out


def simulation(tmp: Path) -> Path:
    out = tmp / "sim"
    spec = tmp / "spec.yaml"
    spec.write_text(
        "nodes: [{count: 1213, cpu: '64', memory: 256Gi, gpus: 8, gpuModel: V100}]\n"
        "pods:\n  count: 10000\n  arrivalRate: 1\n  duration: {dist: none}\n"
    )
    cfg = tmp / "gpu.yaml"
    cfg.write_text(
        "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
        "profiles:\n- schedulerName: default-scheduler\n  plugins:\n    multiPoint:\n      enabled: [{name: Open-Gpu-Share}]\n"
    )
    t0 = time.perf_counter()
    rc = kubesched(["simulate", "--synthetic", str(spec), "--mode", "arrival", "--config", str(cfg), "--no-plots",
                    "--no-progress", "--out-dir", str(out)])
    assert rc == 0
    print(f"simulation written in {time.perf_counter() - t0:.1f} s", file=sys.stderr)
    return out


def big_cluster(tmp: Path) -> Path:
    """5,000 nodes and 150,000 pods, every pod bound (nothing to schedule: a dump of a full cluster)."""
    path = tmp / "big.json"
    items = []
    for n in range(5000):
        items.append({"apiVersion": "v1", "kind": "Node", "metadata": {"name": f"node-{n:05d}", "labels": {"kubernetes.io/hostname": f"node-{n:05d}"}},
                      "status": {"allocatable": {"cpu": "64", "memory": "256Gi", "pods": "110"}}})
    for p in range(150_000):
        items.append({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"pod-{p:06d}", "namespace": f"ns-{p % 50}", "uid": f"u{p}"},
                      "spec": {"nodeName": f"node-{p % 5000:05d}", "containers": [{"name": "c", "resources": {"requests": {"cpu": f"{100 + p % 7 * 100}m", "memory": f"{256 + p % 5 * 128}Mi"}}}]}})
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": items}))
    return path


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--big", action="store_true", help="also 5,000 nodes x 150,000 pods")
    ap.add_argument("--json", help="write the results here")
    args = ap.parse_args()
    from playwright.sync_api import sync_playwright

    results = []
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        scenarios = [("1,213 nodes x 10,000 pods (simulation)", lambda: str(simulation(tmp)), None)]
        if args.big:
            scenarios.append(("5,000 nodes x 150,000 pods (cluster dump)", None, lambda: str(big_cluster(tmp))))
        with sync_playwright() as p:
            for label, sim, dump in scenarios:
                t0 = time.perf_counter()
                ws = open_source(sim()) if sim else open_source(None, files=[dump()])
                open_s = time.perf_counter() - t0
                freeze_long_lived()  # as `kubesched ui` does
                keys = list(ws.attempts)[:: max(1, len(ws.attempts) // 10)][:10] or list(ws.pods)[:10]
                srv = Server(ws)
                ctx = p.chromium.launch_persistent_context(tempfile.mkdtemp(), executable_path=CHROMIUM, headless=True,
                                                           args=FLAGS, viewport={"width": 1400, "height": 1000})
                try:
                    r = measure(ctx.new_page(), srv.url, keys, label)
                finally:
                    ctx.close()
                    srv.stop()
                r["server_open_s"] = round(open_s, 1)
                results.append(r)
                print(json.dumps(r, indent=2))
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())

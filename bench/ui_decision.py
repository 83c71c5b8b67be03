"""kubesched ui's decision view on a 1,000-node run: how long a pod's decision takes to answer, on
one core. Measures and prints; asserts nothing about time.

    python bench/ui_decision.py                 # 1,000 GPU nodes x 8,000 pods, the default configuration
    python bench/ui_decision.py --folder sim-out/   # a simulation folder of your own instead
    python bench/ui_decision.py --no-browser    # the server's answer only
    python bench/ui_decision.py --json out.json

The run is `kubesched simulate --synthetic` in arrival mode (every pod tried once: the cluster
fills up), the default configuration (every default plugin, the storage and DRA ones included).
The process is pinned to one core (``--core``; Chromium too, when it runs). Twenty pods spread
over the run, each at its own step, are asked for in turn, first over HTTP as the page asks
(``/api/decision?pod=...&tables=1``, the whole answer received; ``answer_cpu_ms``: the CPU time
this process, server and client, spent on it: what the answer takes on an idle core), then in
headless Chromium (from asking for the decision to its tables painted, the page's own
``timings.decision``; ``page_cpu_ms``: the CPU time of Chromium's processes and this one meanwhile,
in the kernel's 10 ms ticks). The first pod also builds the run's plugins and is reported apart; the
others give the median, the 90th percentile and the slowest. The server's part is broken down by
its Server-Timing header (moving the snapshot and explaining; explain alone; encoding the JSON).
The load average is printed with the figures: on a busy machine the wall times include waiting
for the core.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import statistics
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from kubesched.cli import main as kubesched  # noqa: E402
from kubesched.heap import freeze_long_lived  # noqa: E402
from kubesched.ui.sources import open_source  # noqa: E402
from tests.ui.conftest import AUTH, TOKEN, Server  # noqa: E402

SPEC = "nodes: [{count: 1000, cpu: '64', memory: 256Gi, gpus: 8, gpuModel: V100}]\npods:\n  count: 8000\n  arrivalRate: 1\n  duration: {dist: none}\n"
PODS = 20


def simulation(tmp: Path) -> Path:
    spec, out = tmp / "spec.yaml", tmp / "sim"
    spec.write_text(SPEC)
    with contextlib.redirect_stdout(sys.stderr):  # its summary: stdout is the figures' JSON
        rc = kubesched(["simulate", "--synthetic", str(spec), "--mode", "arrival", "--no-plots", "--no-progress", "--out-dir", str(out)])
    assert rc == 0
    return out


def summary(values: list[float]) -> dict[str, float]:
    first, rest = values[0], values[1:] or values
    q = statistics.quantiles(rest, n=10)[-1] if len(rest) > 1 else rest[0]
    return {"first": round(first, 1), "median": round(statistics.median(rest), 1), "p90": round(q, 1), "max": round(max(rest), 1)}


def over_http(url: str, keys: list[str]) -> dict:
    """Each decision as the page asks for it: the whole answer received, and the server's parts."""
    total, cpu, parts = [], [], {"decision": [], "explain": [], "json": []}
    for key in keys:
        req = urllib.request.Request(f"{url}/api/decision?pod={urllib.request.quote(key)}&tables=1", headers=AUTH)
        t0, c0 = time.perf_counter(), time.process_time()
        with urllib.request.urlopen(req) as r:
            r.read()
            timing = r.headers["Server-Timing"]
        total.append((time.perf_counter() - t0) * 1000)
        cpu.append((time.process_time() - c0) * 1000)
        for item in timing.split(","):
            name, dur = item.strip().split(";dur=")
            parts[name].append(float(dur))
    return {"answer_ms": summary(total), "answer_cpu_ms": summary(cpu), **{f"server_{k}_ms": summary(v) for k, v in parts.items()}}


def chromium_cpu_ms() -> float:
    """CPU time of every Chromium process so far (user and system; the kernel counts it in ticks
    of 10 ms), ms."""
    tick = os.sysconf("SC_CLK_TCK")
    total = 0
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            if b"chromium" not in (proc / "cmdline").read_bytes():
                continue
            fields = (proc / "stat").read_text().rsplit(")", 1)[1].split()
            total += int(fields[11]) + int(fields[12])  # utime, stime
        except (OSError, IndexError, ValueError):
            continue
    return total * 1000 / tick


def in_browser(url: str, keys: list[str]) -> dict:
    """Each decision from the page's request to its tables painted (the page's own timing)."""
    from playwright.sync_api import sync_playwright

    from tests.ui.test_browser import CHROMIUM, FLAGS

    page_ms, cpu = [], []
    with sync_playwright() as p:
        ctx = p.chromium.launch_persistent_context(
            tempfile.mkdtemp(), executable_path=CHROMIUM, headless=True, args=FLAGS, viewport={"width": 1280, "height": 800}
        )
        try:
            page = ctx.new_page()
            page.goto(f"{url}/?token={TOKEN}#/pods")
            page.locator("#pods-table .search").wait_for()
            for key in keys:
                page.evaluate("() => { delete window.__kubesched.timings.decision; }")
                c0 = chromium_cpu_ms() + time.process_time() * 1000
                page.evaluate(f"() => {{ location.hash = '#/decision?pod={key}' }}")
                page.wait_for_function("() => window.__kubesched.timings.decision !== undefined", timeout=120_000)
                cpu.append(chromium_cpu_ms() + time.process_time() * 1000 - c0)
                page_ms.append(page.evaluate("() => window.__kubesched.timings.decision"))
        finally:
            ctx.close()
    return {"page_ms": summary(page_ms), "page_cpu_ms": summary(cpu)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--folder", help="instead of the synthetic run: this `kubesched simulate` output folder")
    ap.add_argument("--core", type=int, default=0, help="the core to run on (default 0)")
    ap.add_argument("--no-browser", action="store_true", help="measure the server's answer only")
    ap.add_argument("--json", help="write the results here")
    args = ap.parse_args()
    os.sched_setaffinity(0, {args.core})  # this process, the server's threads and (inherited) Chromium
    with tempfile.TemporaryDirectory() as d:
        folder = Path(args.folder) if args.folder else simulation(Path(d))
        t0 = time.perf_counter()
        ws = open_source(str(folder))
        opened = time.perf_counter() - t0
        freeze_long_lived()  # as `kubesched ui` does
        keys = list(ws.attempts)[:: max(1, len(ws.attempts) // PODS)][:PODS]
        out = {
            "run": str(args.folder or f"synthetic: {SPEC.splitlines()[0]} 8,000 pods, arrival mode"),
            "nodes": len(ws.workload.nodes) if ws.workload is not None else None,
            "pods_asked": len(keys), "core": args.core, "load_average_1m": round(os.getloadavg()[0], 2),
            "server_open_s": round(opened, 1),
        }
        srv = Server(ws)
        try:
            out.update(over_http(srv.url, keys))
            ws.decisions.clear()  # the page asks again: explained again, not answered from the kept ones
            if not args.no_browser:
                out.update(in_browser(srv.url, keys))
        finally:
            srv.stop()
    out["load_average_1m_after"] = round(os.getloadavg()[0], 2)
    print(json.dumps(out, indent=2))
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())

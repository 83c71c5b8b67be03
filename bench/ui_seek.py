"""kubesched ui's timeline slider on a GPU simulation: what moving the cluster to a step costs.
Measures and prints; asserts nothing about time.

    python bench/ui_seek.py                # 1,213 GPU nodes x 10,000 pods, default configuration
    python bench/ui_seek.py --json out.json

Two simulation folders of `kubesched simulate --synthetic` (the nodes and pods of
bench/ui_render.py, without Open-Gpu-Share, so no GPU indices are recorded and the UI places
each pod on its GPUs itself): *arrival* (every pod tried once, nothing completes) and *time*
(pods arrive at 3 a second and run 3,000 s on average: half the steps are completions). For
each: opening the folder, the first move to the end of the run (the first visit of every step),
then moves back from the end and forth again by 1, 100, 1,000 steps and the whole run; each move
is timed for the timeline alone (``Timeline.seek`` and the GPUs caught up: the least of five) and
for the whole ``/api/cluster?step=N`` answer (the median of three).
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
from kubesched.ui.sources import open_source  # noqa: E402

NODES = "nodes: [{count: 1213, cpu: '64', memory: 256Gi, gpus: 8, gpuModel: V100}]\n"
SPECS = {
    "arrival": (NODES + "pods:\n  count: 10000\n  arrivalRate: 1\n  duration: {dist: none}\n", ["--mode", "arrival"]),
    "time": (NODES + "pods:\n  count: 10000\n  arrivalRate: 3\n  duration: {dist: exponential, mean: 3000}\n", []),
}


def simulation(tmp: Path, name: str) -> Path:
    text, mode = SPECS[name]
    spec, out = tmp / f"{name}.yaml", tmp / name
    spec.write_text(text)
    rc = kubesched(["simulate", "--synthetic", str(spec), *mode, "--seed", "1", "--no-plots", "--no-progress",
                    "--out-dir", str(out)])
    assert rc == 0
    return out


def timed(fn) -> float:  # noqa: ANN001
    t0 = time.perf_counter()
    fn()
    return (time.perf_counter() - t0) * 1000.0


def measure(folder: Path, name: str) -> dict:
    from kubesched.ui.views import gpu_columns
    from tests.ui.conftest import ui_client

    t0 = time.perf_counter()
    ws = open_source(str(folder))
    out: dict = {"scenario": name, "open_s": round(time.perf_counter() - t0, 2)}
    tl = ws.timeline
    assert tl is not None
    n = len(tl)
    out["steps"] = n
    out["deletes"] = sum(s.kind == "delete" for s in tl.steps)
    client = ui_client(ws)

    def seek(step: int) -> None:
        with tl.lock:
            gpu_columns(tl.seek(step))  # the GPUs caught up, as the cluster view needs them

    def cluster(step: int) -> None:
        r = client.get(f"/api/cluster?step={step}")
        assert r.status_code == 200, r.text

    out["first_to_end_ms"] = round(timed(lambda: seek(n)), 1)  # every step visited once
    for dist in (1, 100, 1000, n):
        back, fwd, back_http = [], [], []
        to = n - dist
        for _ in range(5):  # the least of five: this machine is shared
            back.append(timed(lambda to=to: seek(to)))
            fwd.append(timed(lambda: seek(n)))
        for _ in range(3):
            back_http.append(timed(lambda to=to: cluster(to)))
            seek(n)
        label = "all" if dist == n else str(dist)
        out[f"back_{label}_ms"] = round(min(back), 1)
        out[f"forward_{label}_ms"] = round(min(fwd), 1)
        out[f"back_{label}_cluster_ms"] = round(statistics.median(back_http), 1)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--json", help="write the results here")
    args = ap.parse_args()
    results = []
    with tempfile.TemporaryDirectory() as d:
        for name in SPECS:
            r = measure(simulation(Path(d), name), name)
            results.append(r)
            print(json.dumps(r, indent=2))
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Turn `kubesched bench --json` output into the markdown table used in docs/performance.md."""

from __future__ import annotations

import json
import sys


def fmt(v: float | None) -> str:
    return "–" if v is None else f"{v:,.0f}"


def main(path: str) -> None:
    data = json.load(open(path))
    m = data["machine"]
    print(f"Machine: {m['nproc']} CPUs ({m['cpu']}), Python {m['python']}, numpy {m['numpy']}, {m['platform']}.")
    print()
    print("| workload | nodes | init | measured | Average | Perc50 | Perc90 | Perc99 | whole | floor | target | ×target | wall s | peak RSS MiB |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for r in data["results"]:
        t = r["throughput"]
        few = len(t.get("samples") or []) < 3
        avg = None if few else t.get("Average")
        headline = t.get("headline") or t.get("overall") or 0
        target = r.get("target")
        ratio = f"{headline / target:.2f}" if target else "–"
        print(
            f"| {r['workload']} | {r['nodes']} | {r['init_pods']} | {r['measured_pods']} | {fmt(avg)} | "
            f"{fmt(None if few else t.get('Perc50'))} | {fmt(None if few else t.get('Perc90'))} | "
            f"{fmt(None if few else t.get('Perc99'))} | {fmt(t.get('overall'))} | {fmt(r.get('threshold'))} | "
            f"{fmt(target)} | {ratio} | {r['wall_s']:.1f} | {r['peak_rss_mib']:.0f} |"
        )


if __name__ == "__main__":
    main(sys.argv[1])

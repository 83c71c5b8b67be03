"""Micro-benchmark: the bare numpy fit-and-score kernel over 5000 nodes, in pods/s.

The kernel lives in kubesched/bench/kernel.py (so `kubesched bench` prints the same figure
beside SchedulingBasic); this script runs it alone:

    python bench/kernel.py [--nodes 5000] [--pods 10000]
"""

from __future__ import annotations

import argparse

from kubesched.bench.kernel import run_kernel


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nodes", type=int, default=5000)
    ap.add_argument("--pods", type=int, default=10000)
    args = ap.parse_args()
    for adaptive in (False, True):
        r = run_kernel(args.nodes, args.pods, adaptive=adaptive)
        scope = f"first {r.scored_nodes} feasible" if adaptive else "all"
        print(
            f"kernel ({scope} of {r.nodes} nodes scored): {r.scheduled} pods in {r.seconds:.2f} s"
            f" = {r.pods_per_s:,.0f} pods/s"
        )


if __name__ == "__main__":
    main()

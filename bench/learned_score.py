"""LearnedScore's cost: whole-scheduler throughput with it, as a ratio to FGD alone.

Each round runs ``kubesched.learn.evaluate.plugin_latency``: the first P pods (default 1,500) of
``default`` seed 42, once under FGD alone and once under LearnedScore + FGDScore, one after the
other in this process; the ratio of the two throughputs is taken within the round, so that the
load of a shared machine, which drifts over minutes, cancels out as far as it can. The model is a
64-64 network whose weights make candidate 0 (FGDScore's best node) win every decision: the
placements are then FGD's, and only the cost differs (``--model`` runs another ``.npz``).

    python bench/learned_score.py [--rounds 3] [--pods 1500] [--model M.npz] [--json out.json]

Run from the repository root. A benchmark measures; nothing asserts.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
from pathlib import Path

import numpy as np

from kubesched.learn.data import Instance
from kubesched.learn.evaluate import plugin_latency
from kubesched.plugins.learned.features import DEFAULT_K, obs_size
from kubesched.plugins.learned.model import PolicyModel


def fgd_clone(path: Path, k: int = DEFAULT_K, hidden: int = 64) -> Path:
    """A 64-64 tanh network with random hidden layers and a last layer that ignores them: its
    logits are its bias, highest for candidate 0 (the network still runs in full every decision)."""
    rng = np.random.default_rng(0)
    widths = [obs_size(k), hidden, hidden]
    ws = [rng.normal(0, 0.1, (a, b)) for a, b in zip(widths[:-1], widths[1:], strict=True)]
    bs = [rng.normal(0, 0.1, b) for b in widths[1:]]
    ws.append(np.zeros((hidden, k)))
    bs.append(np.where(np.arange(k) == 0, 1.0, 0.0))
    PolicyModel(k, ws, bs, "FGD", meta={"made_by": "bench/learned_score.py"}).save(path)
    return path


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--pods", type=int, default=1500)
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--model", help="a .npz model (default: the FGD clone made here)")
    ap.add_argument("--json", help="write the rounds and the summary here")
    a = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        model = a.model or str(fgd_clone(Path(tmp) / "clone.npz"))
        rounds = []
        for i in range(a.rounds):
            r = plugin_latency(Instance("default"), model, a.seed, pods=a.pods)
            r["ratio"] = r["learned_pods_per_s"] / r["FGD_pods_per_s"]
            rounds.append(r)
            print(f"round {i + 1}: FGD {1000 / r['FGD_pods_per_s']:.2f} ms/pod, with LearnedScore "
                  f"{1000 / r['learned_pods_per_s']:.2f} ms/pod, plugin {r['plugin_ms_per_decision']:.3f} "
                  f"ms/decision ({r['decisions']} decisions), ratio {r['ratio']:.3f}", flush=True)
    ratios = [r["ratio"] for r in rounds]
    summary = {"rounds": len(rounds), "ratio_median": statistics.median(ratios), "ratio_min": min(ratios),
               "ratio_max": max(ratios),
               "plugin_ms_median": statistics.median(r["plugin_ms_per_decision"] for r in rounds)}
    print(f"ratio median {summary['ratio_median']:.3f} (min {summary['ratio_min']:.3f}, max "
          f"{summary['ratio_max']:.3f}); plugin {summary['plugin_ms_median']:.3f} ms/decision")
    if a.json:
        Path(a.json).write_text(json.dumps({"summary": summary, "rounds": rounds}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())

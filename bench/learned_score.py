"""LearnedScore's cost: whole-scheduler throughput with it, as a ratio to FGD alone.

Each round schedules the first P pods (default 1,500) of ``default`` seed 42 once under FGD alone
and once under LearnedScore + FGDScore, as ``kubesched.learn.evaluate.plugin_latency`` does (with
the protocol's loop, ``learn.cost.schedule_all``, and its frozen heap), in this process,
alternating which goes first; it times both wall and CPU time (this process's), and
takes the ratio of the two throughputs within the round. On a shared, loaded machine the CPU-time
ratio is the steadier one: time spent waiting for a core is not counted. The model is a
64-64 network whose weights make candidate 0 (FGDScore's best node) win every decision: the
placements are then FGD's, and only the cost differs (``--model`` runs another ``.npz``).

    python bench/learned_score.py [--rounds 3] [--pods 1500] [--model M.npz] [--json out.json]

``--only FGD|learned`` runs one policy once instead, its scheduling loop inside
``sys.call_tracing`` so that callgrind counts that loop alone, and prints the decisions and a hash
of the placements (pod -> node), to compare two checkouts:

    python -m compileall -q kubesched bench
    valgrind --tool=callgrind --collect-atstart=no --toggle-collect='sys_call_tracing*' \\
        --callgrind-out-file=/dev/null python bench/learned_score.py --only learned --pods 800

Instructions per pod: the count over ``--pods``; LearnedScore's per decision: the difference of
the two policies' counts over the decisions. Run from the repository root. A benchmark measures;
nothing asserts.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from kubesched.experiment.protocol import build_scheduler, policy_config
from kubesched.heap import frozen_heap
from kubesched.learn.cost import schedule_all
from kubesched.learn.data import Instance
from kubesched.learn.policies import learned_config
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


def nodes_of(sched: Any, pods: list, placed: np.ndarray) -> list[str | None]:
    """The node each pod was placed on (None: dropped)."""
    snap = sched.snapshot
    return [snap.pod_by_uid[p.uid].node_name if ok else None for p, ok in zip(pods, placed, strict=True)]


def run_once(inst: Instance, policy: str, model: str, seed: int, pods: int, traced: bool = False) -> dict[str, Any]:
    """Wall and CPU seconds per pod of one policy ("FGD" or "learned"), the plugin's own seconds
    per decision and a hash of the placements; ``traced``: the loop inside ``sys.call_tracing``."""
    prep = inst.prepare(seed)
    config = policy_config("FGD", prep.typical) if policy == "FGD" else learned_config(model, prep.typical)
    sched = build_scheduler(prep.nodes, policy, seed, prep.typical, config=config)
    run_pods = prep.pods[:pods]
    w0, c0 = time.perf_counter(), time.process_time()
    with frozen_heap():  # as the protocol's loop runs: the trace and the cluster out of full GC passes
        placed = sys.call_tracing(schedule_all, (sched, run_pods)) if traced else schedule_all(sched, run_pods)
    out = {"wall_ms": 1000 * (time.perf_counter() - w0) / len(run_pods),
           "cpu_ms": 1000 * (time.process_time() - c0) / len(run_pods),
           "placements": hashlib.sha256(repr(nodes_of(sched, run_pods, placed)).encode()).hexdigest()[:16]}
    if policy == "learned":
        plugin = next(fw.plugins["LearnedScore"] for fw in sched.frameworks.values())
        out["plugin_ms"] = 1000 * plugin.seconds / max(plugin.decisions, 1)
        out["decisions"] = plugin.decisions
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--pods", type=int, default=1500)
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--model", help="a .npz model (default: the FGD clone made here)")
    ap.add_argument("--json", help="write the rounds and the summary here")
    ap.add_argument("--only", choices=("FGD", "learned"), help="one run of one policy, for callgrind")
    a = ap.parse_args(argv)
    inst = Instance("default")
    rounds = []
    with tempfile.TemporaryDirectory() as tmp:
        model = a.model or str(fgd_clone(Path(tmp) / "clone.npz"))
        if a.only:
            print(json.dumps(run_once(inst, a.only, model, a.seed, a.pods, traced=True)))
            return 0
        for i in range(a.rounds):
            order = ("FGD", "learned") if i % 2 == 0 else ("learned", "FGD")
            got = {p: run_once(inst, p, model, a.seed, a.pods) for p in order}
            r = {"FGD": got["FGD"], "learned": got["learned"],
                 "wall_ratio": got["FGD"]["wall_ms"] / got["learned"]["wall_ms"],
                 "cpu_ratio": got["FGD"]["cpu_ms"] / got["learned"]["cpu_ms"]}
            rounds.append(r)
            print(f"round {i + 1}: FGD {got['FGD']['cpu_ms']:.3f} ms/pod CPU, with LearnedScore "
                  f"{got['learned']['cpu_ms']:.3f} (plugin {got['learned']['plugin_ms']:.3f} wall ms/decision); "
                  f"ratio CPU {r['cpu_ratio']:.3f}, wall {r['wall_ratio']:.3f}", flush=True)
    summary = {"rounds": len(rounds), "pods": a.pods, "seed": a.seed}
    for key in ("cpu_ratio", "wall_ratio"):
        vals = [r[key] for r in rounds]
        summary[key] = {"median": statistics.median(vals), "min": min(vals), "max": max(vals)}
    summary["FGD_cpu_ms"] = statistics.median(r["FGD"]["cpu_ms"] for r in rounds)
    summary["learned_cpu_ms"] = statistics.median(r["learned"]["cpu_ms"] for r in rounds)
    summary["plugin_ms"] = statistics.median(r["learned"]["plugin_ms"] for r in rounds)
    c, w = summary["cpu_ratio"], summary["wall_ratio"]
    print(f"throughput ratio to FGD alone: CPU median {c['median']:.3f} ({c['min']:.3f}-{c['max']:.3f}), "
          f"wall median {w['median']:.3f} ({w['min']:.3f}-{w['max']:.3f}); FGD {summary['FGD_cpu_ms']:.3f}, "
          f"with LearnedScore {summary['learned_cpu_ms']:.3f} CPU ms/pod")
    if a.json:
        Path(a.json).write_text(json.dumps({"summary": summary, "rounds": rounds}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""What each policy costs in `kubesched learn eval`: CPU seconds per run and per pod from the
evaluation's own runs, and for the look-ahead plugins that count their decisions (RolloutScore),
one run of the first seed in this process with the plugin's counters, next to FGD's run of the
same pods, so the CPU of a plugin decision is the difference over the decisions."""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

import numpy as np

from kubesched.learn.data import Instance
from kubesched.learn.metric import metric_pods

COUNTING = ("RolloutScore",)  # plugins with decisions / changed / seconds counters


def run_pods(inst: Instance, seeds: Sequence[int]) -> list[int]:
    """The pods each seed's run schedules: those arrived by the last event the metric averages."""
    return [metric_pods(inst.prepare(seed), source=f"trace {inst.trace}") for seed in seeds]


def run_costs(cpu: np.ndarray, pods: Sequence[int]) -> dict[str, Any]:
    """One policy's CPU seconds per run (per seed), their mean, and CPU ms per pod scheduled."""
    return {
        "cpu_seconds": [float(c) for c in cpu],
        "cpu_seconds_mean": float(np.mean(cpu)),
        "cpu_ms_per_pod": 1000 * float(np.sum(cpu)) / max(int(np.sum(pods)), 1),
    }


def counting_plugin(config: dict) -> str | None:
    """The plugin of ``config``'s first profile that counts its decisions, if any."""
    enabled = config["profiles"][0]["plugins"].get("score", {}).get("enabled", [])
    return next((p["name"] for p in enabled if p["name"] in COUNTING), None)


def schedule_all(sched: Any, pods: Sequence[Any]) -> np.ndarray:
    """Each pod in turn, one scheduling cycle each; a pod that fits nowhere is dropped (the
    protocol). Which pods were placed."""
    placed = np.zeros(len(pods), bool)
    for i, pod in enumerate(pods):
        sched.add_pending(pod)
        res = sched.schedule_one()
        placed[i] = res is not None and res.node is not None
        if not placed[i]:
            sched.delete_pod(pod)
    return placed


def timed_run(inst: Instance, seed: int, policy: str, config: dict, plugin: str | None) -> dict[str, Any]:
    """One seed's metric pods under ``config`` in this process: CPU seconds, and ``plugin``'s
    counters (rollout decisions, those that changed FGD's choice, their wall seconds)."""
    from kubesched.experiment.protocol import build_scheduler

    prep = inst.prepare(seed)
    pods = prep.pods[: metric_pods(prep, source=f"trace {inst.trace}")]
    sched = build_scheduler(prep.nodes, policy, seed, prep.typical, config=config)
    c0 = time.process_time()
    schedule_all(sched, pods)
    out: dict[str, Any] = {"pods": len(pods), "cpu_seconds": time.process_time() - c0}
    if plugin is not None:
        p = next(fw.plugins[plugin] for fw in sched.frameworks.values())
        out.update(decisions=p.decisions, changed=p.changed, plugin_wall_seconds=p.seconds)
    return out


def decision_cost(inst: Instance, seed: int, name: str, config: dict, fgd_config: dict) -> dict[str, Any] | None:
    """``name``'s cost per plugin decision on one seed (None when its plugin does not count them):
    its run's CPU less FGD's on the same pods, over the decisions."""
    plugin = counting_plugin(config)
    if plugin is None:
        return None
    fgd = timed_run(inst, seed, "FGD", fgd_config, None)
    own = timed_run(inst, seed, name, config, plugin)
    extra = own["cpu_seconds"] - fgd["cpu_seconds"]
    return {
        "trace": inst.trace, "seed": seed, "plugin": plugin, **own, "FGD_cpu_seconds": fgd["cpu_seconds"],
        "cpu_ratio_to_FGD": own["cpu_seconds"] / max(fgd["cpu_seconds"], 1e-9),
        "extra_cpu_ms_per_decision": 1000 * extra / max(own["decisions"], 1),
    }


def decision_line(name: str, dec: dict[str, Any]) -> str:
    """One summary line: a candidate's plugin decisions on one seed and their CPU."""
    return (f"{name}: {dec['plugin']} decided {dec['decisions']} of {dec['pods']} pods on {dec['trace']} seed "
            f"{dec['seed']} ({dec['changed']} against FGD's choice), {dec['extra_cpu_ms_per_decision']:.1f} ms CPU "
            f"per decision more than FGD; the run {dec['cpu_ratio_to_FGD']:.1f}x FGD's CPU")

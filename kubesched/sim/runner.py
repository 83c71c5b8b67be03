"""The simulator's Python API: ``simulate(config, workload, ...) -> SimResult``."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kubesched.config import SchedulerConfig
from kubesched.framework.registry import Registry
from kubesched.plugins import in_tree_registry
from kubesched.sim.engine import Engine, Progress, SimOptions
from kubesched.sim.states import STATE_NAMES, WAITING
from kubesched.sim.usage import UsageModel
from kubesched.sim.workload import Workload


@dataclass
class SimResult:
    """A finished run: ``summary`` (JSON-ready metrics) and the tables behind it (columns)."""

    summary: dict[str, Any]
    events: dict[str, list[Any]] = field(default_factory=dict)  # one row per simulation event
    bins: dict[str, list[Any]] = field(default_factory=dict)  # time bins or arrived-workload levels
    pods: dict[str, list[Any]] = field(default_factory=dict)  # one row per pod
    config: SchedulerConfig | None = None  # the configuration the run used (for the report)
    attempts: dict[str, list[Any]] = field(default_factory=dict)  # one row per scheduling attempt

    @property
    def mode(self) -> str:
        return str(self.summary["mode"])


def simulate(
    config: SchedulerConfig,
    workload: Workload,
    *,
    mode: str = "time",
    seed: int | None = None,
    registry: Registry | None = None,
    usage: UsageModel | None = None,
    bins: int = 100,
    max_wait: float | None = None,
    tie_break: str = "random",
    record_events: bool = True,
    progress: Progress | None = None,
    debug: bool = False,
    max_attempts: int | None = None,
) -> SimResult:
    """Replay ``workload`` through a Scheduler built from ``config``; the workload is not modified.

    ``registry`` must be the one ``config`` was resolved with when it names out-of-tree plugins.
    """
    opts = SimOptions(
        mode=mode,
        seed=seed,
        usage=usage or UsageModel(),
        bins=bins,
        max_wait=max_wait,
        tie_break=tie_break,
        record_events=record_events,
        debug=debug,
        max_attempts=max_attempts,
    )
    eng = Engine(config, workload, registry or in_tree_registry(), opts, progress)
    eng.run()
    return result_of(eng)


def result_of(eng: Engine) -> SimResult:
    """A finished engine's SimResult; the pods table lists the pods that arrived."""
    summary = eng.rec.summary(eng)
    a = eng.arrays()
    keep = [i for i, st in enumerate(eng.state) if st != WAITING]
    pods = {
        "pod": [eng.pods[i].key for i in keep],
        "arrival": [eng.arrival[i] for i in keep],
        "state": [STATE_NAMES[eng.state[i]] for i in keep],
        "node": [eng.node_of[i] for i in keep],
        "bind_time": [eng.bind_time[i] for i in keep],
        "end_time": [eng.end_time[i] for i in keep],
        "queue_delay": (a["bind_time"] - a["arrival"])[keep].tolist(),
        "attempts": [eng.attempts[i] for i in keep],
        "gpu_milli": [int(eng.gpu_req[i]) for i in keep],
        "message": [eng.message[i].split("\n", 1)[0] for i in keep],
        "gpu_index": [eng.gpu_index[i] for i in keep],
    }
    attempts = {c: [r[k] for r in eng.attempt_rows] for k, c in enumerate(ATTEMPT_COLUMNS)}
    return SimResult(summary, eng.rec.event_table(), eng.rec.bin_table(eng), pods, eng.sched.config, attempts)


#: attempts.csv: one row per scheduling attempt; ``event_seq`` counts the event rows before it
ATTEMPT_COLUMNS = ("pod", "attempt", "time", "outcome", "node", "nominated_node", "message", "duration_ms", "event_seq")

"""The simulator's Python API: ``simulate(config, workload, ...) -> SimResult``."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kubesched.config import SchedulerConfig
from kubesched.framework.registry import Registry
from kubesched.sim.engine import Engine, Progress, SimOptions
from kubesched.sim.states import STATE_NAMES
from kubesched.sim.usage import UsageModel
from kubesched.sim.workload import Workload


@dataclass
class SimResult:
    """A finished run: ``summary`` (JSON-ready metrics) and the tables behind it (columns)."""

    summary: dict[str, Any]
    events: dict[str, list[Any]] = field(default_factory=dict)  # one row per simulation event
    bins: dict[str, list[Any]] = field(default_factory=dict)  # time bins or arrived-workload levels
    pods: dict[str, list[Any]] = field(default_factory=dict)  # one row per pod

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
    )
    eng = Engine(config, workload, registry or Registry(), opts, progress)
    eng.run()
    summary = eng.rec.summary(eng)
    a = eng.arrays()
    pods = {
        "pod": [p.key for p in eng.pods],
        "arrival": list(eng.arrival),
        "state": [STATE_NAMES[s] for s in eng.state],
        "node": eng.node_of,
        "bind_time": list(eng.bind_time),
        "end_time": list(eng.end_time),
        "queue_delay": (a["bind_time"] - a["arrival"]).tolist(),
        "attempts": list(eng.attempts),
        "gpu_milli": [int(x) for x in eng.gpu_req],
        "message": [m.split("\n", 1)[0] for m in eng.message],
    }
    return SimResult(summary, eng.rec.event_table(), eng.rec.bin_table(eng), pods)

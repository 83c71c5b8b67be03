"""The simulator: a discrete-event engine that replays workloads through the real Scheduler.

``from kubesched.sim import simulate, Workload`` (loaded lazily: the CLI imports this package
to add its subcommand and must stay cheap).
"""

from __future__ import annotations

from typing import Any

_EXPORTS = {
    "simulate": "kubesched.sim.runner",
    "SimResult": "kubesched.sim.runner",
    "Workload": "kubesched.sim.workload",
    "NodeEvent": "kubesched.sim.workload",
    "UsageModel": "kubesched.sim.usage",
}


def __getattr__(name: str) -> Any:
    mod = _EXPORTS.get(name)
    if mod is None:
        raise AttributeError(f"module 'kubesched.sim' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(mod), name)


__all__ = list(_EXPORTS)

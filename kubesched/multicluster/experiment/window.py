"""A window of the trace: the pods arriving in ``[start, start + length)`` of trace time.

The openb trace spreads its 8,152 pods over 149 days but 90 % of them arrive in the last 30, so a
replay of the whole trace leaves the clusters idle for most of its run. A window, compressed like
the whole trace, keeps them busy: ``busiest_start`` finds the window that asks for the most GPUs.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from kubesched.errors import InputError
from kubesched.sim.workload import Workload

DAY = 86400.0


def busiest_start(arrival: Sequence[float], weight: Sequence[float], length: float) -> float:
    """The start of the window of ``length`` (trace seconds) whose arrivals weigh the most (the
    earliest such window). A best window can always start at an arrival, so only those are tried."""
    a = np.asarray(arrival, float)
    if a.size == 0:
        return 0.0
    order = np.argsort(a, kind="stable")
    a, w = a[order], np.asarray(weight, float)[order]
    cum = np.concatenate(([0.0], np.cumsum(w)))
    # window k holds the arrivals a[k] .. a[end[k] - 1], those before a[k] + length
    end = np.searchsorted(a, a + length, side="left")
    total = cum[end] - cum[np.arange(a.size)]
    return float(a[int(np.argmax(total))])


def window_indices(arrival: Sequence[float], start: float, length: float) -> list[int]:
    """The pods arriving in ``[start, start + length)``, in their order."""
    return [i for i, t in enumerate(arrival) if start <= t < start + length]


def select(wl: Workload, days: float, start_days: float | None, source: str = "--window-start",
           path: str | None = None) -> tuple[Workload, float]:
    """The workload's pods arriving in a window of ``days`` from ``start_days`` after its first pod
    (the busiest window by GPUs asked when None), and the window's start (trace seconds)."""
    from kubesched.sim.gpu import pod_gpu_milli

    t0 = min(wl.arrival) if wl.arrival else 0.0
    length = days * DAY
    if start_days is None:
        start = busiest_start(wl.arrival, [pod_gpu_milli(p) for p in wl.pods], length)
    else:
        start = t0 + start_days * DAY
    keep = window_indices(wl.arrival, start, length)
    if not keep:
        first = (start - t0) / DAY
        raise InputError(f"no pod of the trace arrives in days {first:g} to {first + days:g} (it spans "
                         f"{(max(wl.arrival) - t0) / DAY:.1f} days)", source=source, path=path)
    sub = Workload(wl.nodes, [wl.pods[i] for i in keep], [wl.arrival[i] for i in keep], [wl.duration[i] for i in keep],
                   source=f"{wl.source}, days {(start - t0) / DAY:.2f}+{days:g}")
    return sub, start


def locate(scenario, source: str, path: str | None = None) -> tuple[float, int]:  # noqa: ANN001
    """Where the scenario's window starts (days after the trace's first pod) and how many pods
    arrive in it; a window with none is an error of ``source`` (the flag, or the file's field)."""
    from kubesched.sim.openb import load_openb

    wl = load_openb(scenario.trace, scenario.nodes)
    sub, start = select(wl, scenario.window_days, scenario.window_start_days, source, path)
    return (start - min(wl.arrival)) / DAY, len(sub.pods)

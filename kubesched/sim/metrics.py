"""What a simulation records: one row per event, state samples per bin, and the summary."""

from __future__ import annotations

import math
import re
import time
from collections import Counter
from typing import TYPE_CHECKING, Any

import numpy as np

from kubesched.sim.gpu import gpu_resources
from kubesched.sim.states import DONE, EVICTED, FAILED, GATED, PREEMPTED, QUEUED, RUNNING, WAITING, WITHDRAWN

if TYPE_CHECKING:
    from kubesched.sim.engine import Engine

EVENT_COLUMNS = (
    "seq",
    "time",
    "event",
    "pod",
    "node",
    "queue_delay",
    "message",
    "cpu_alloc_pct",
    "mem_alloc_pct",
    "gpu_alloc_pct",
    "cpu_used_pct",
    "mem_used_pct",
    "pending",
    "running",
    "arrived_pct",
)

# State at a bin's end (time mode: the bin's upper edge; arrival mode: the pod that brought the
# arrived workload to ``level``), then counts over the bin (time mode).
SAMPLE_COLUMNS = (
    "cpu_alloc_pct",
    "mem_alloc_pct",
    "gpu_alloc_pct",
    "unallocated_gpu_pct",
    "cpu_used_pct",
    "mem_used_pct",
    "pending",
    "running",
    "arrived_pct",
    "frag_milli",
    "frag_pct",
    "frag_ratio_pct",
)
TIME_BIN_COLUMNS = ("bin", "start", "end", *SAMPLE_COLUMNS, "arrivals", "scheduled", "completed", "delay_p50")
ARRIVAL_BIN_COLUMNS = ("level", "attempted", *SAMPLE_COLUMNS, "failed")

_COUNT = re.compile(r"^\s*\d+\s+")


def percentile(values: np.ndarray, q: float) -> float | None:
    return float(np.percentile(values, q)) if values.size else None


def reason_kinds(message: str) -> list[str]:
    """The reasons of a FailedScheduling message without their node counts.

    ``0/5 nodes are available: 3 Insufficient cpu, 2 node(s) had untolerated taint {a: b}.``
    gives ``["Insufficient cpu", "node(s) had untolerated taint {a: b}"]``.
    """
    head = message.split("\n", 1)[0]
    if "nodes are available:" not in head:
        return [head] if head else []
    body = head.split("nodes are available:", 1)[1]
    body = body.split(" preemption:", 1)[0].strip().rstrip(".")
    out = []
    depth = 0
    cur = ""
    for ch in body:  # split on commas outside braces (taints print as {key: value})
        depth += ch == "{"
        depth -= ch == "}"
        if ch == "," and depth == 0:
            out.append(cur)
            cur = ""
        else:
            cur += ch
    out.append(cur)
    return [_COUNT.sub("", r).strip() for r in out if r.strip()]


class Recorder:
    def __init__(self, keep_events: bool = True) -> None:
        self.keep_events = keep_events
        self.events: list[tuple] = []
        self.samples: list[tuple] = []  # (edge or level, attempted, *SAMPLE_COLUMNS)
        self.width = 1.0
        self.start = 0.0
        self.next_edge = math.inf
        self.next_level = 0
        self.attempted = 0
        self.sample_wall = 0.0  # wall time measuring fragmentation at bin edges

    # ---- sampling ------------------------------------------------------------------------
    def _sample(self, eng: Engine, key: float) -> None:
        cpu, mem, gpu = eng.totals.allocated_pct()
        used_cpu, used_mem = eng.totals.used_pct()
        cap = eng.totals.capacity
        t0 = time.perf_counter()
        frag = eng.frag.measure()
        self.sample_wall += time.perf_counter() - t0
        if frag is None:
            fm = fp = fr = math.nan
        else:
            fm, idle = frag
            fp = 100.0 * fm / cap.gpu if cap.gpu else math.nan
            fr = 100.0 * fm / idle if idle else math.nan
        self.samples.append(
            (
                key,
                self.attempted,
                cpu,
                mem,
                gpu,
                100.0 - gpu if cap.gpu else math.nan,
                used_cpu,
                used_mem,
                eng.n_queued,
                eng.n_running,
                100.0 * eng.arrived_work / eng.work_total,
                fm,
                fp,
                fr,
            )
        )

    def start_time_bins(self, start: float, end: float, bins: int) -> None:
        self.start = start
        self.width = (end - start) / bins if end > start else 1.0
        self.next_edge = start + self.width

    def sample_until(self, t: float, eng: Engine, final: bool = False) -> None:
        """Record the state at every bin edge before ``t`` (the state is unchanged since)."""
        while self.next_edge < t:
            self._sample(eng, self.next_edge)
            self.next_edge += self.width
        if final and (not self.samples or self.samples[-1][0] < t):
            self._sample(eng, max(t, self.start + self.width) if not self.samples else t)

    def start_arrival_bins(self) -> None:
        self.next_level = 0

    def sample_arrival(self, eng: Engine, final: bool = False) -> None:
        """Record the state when the arrived workload first reaches each whole percent."""
        level = 100.0 * eng.arrived_work / eng.work_total
        while self.next_level <= level + 1e-9:
            self._sample(eng, float(self.next_level))
            self.next_level += 1
        if final and (not self.samples or self.samples[-1][0] < level):
            self._sample(eng, level)

    # ---- tables --------------------------------------------------------------------------
    def event_table(self) -> dict[str, list[Any]]:
        cols: dict[str, list[Any]] = {c: [] for c in EVENT_COLUMNS}
        for row in self.events:
            for c, v in zip(EVENT_COLUMNS, row, strict=True):
                cols[c].append(v)
        return cols

    def bin_table(self, eng: Engine) -> dict[str, list[Any]]:
        if eng.opts.mode == "arrival":
            cols: dict[str, list[Any]] = {c: [] for c in ARRIVAL_BIN_COLUMNS}
            for s in self.samples:
                cols["level"].append(s[0])
                cols["attempted"].append(s[1])
                for c, v in zip(SAMPLE_COLUMNS, s[2:], strict=True):
                    cols[c].append(v)
            # failures up to each sample, from the order pods were attempted
            fails = np.cumsum(eng.attempt_failed) if eng.attempt_failed else np.zeros(0, int)
            cols["failed"] = [int(fails[a - 1]) if a > 0 else 0 for a in cols["attempted"]]
            return cols
        cols = {c: [] for c in TIME_BIN_COLUMNS}
        edges = np.asarray([s[0] for s in self.samples], float)
        starts = np.concatenate([[self.start], edges[:-1]]) if edges.size else edges
        a = eng.arrays()
        arr = a["arrival"]
        bt = a["bind_time"][np.isfinite(a["bind_time"])]
        delays = (a["bind_time"] - arr)[np.isfinite(a["bind_time"])]
        ends = a["end_time"][a["state"] == DONE]
        for k, s in enumerate(self.samples):
            lo, hi = starts[k], edges[k]
            first = k == 0
            in_bin = (bt >= lo if first else bt > lo) & (bt <= hi)
            cols["bin"].append(k)
            cols["start"].append(float(lo))
            cols["end"].append(float(hi))
            for c, v in zip(SAMPLE_COLUMNS, s[2:], strict=True):
                cols[c].append(v)
            cols["arrivals"].append(int((((arr >= lo) if first else (arr > lo)) & (arr <= hi)).sum()))
            cols["scheduled"].append(int(in_bin.sum()))
            cols["completed"].append(int(((ends > lo) & (ends <= hi)).sum()))
            cols["delay_p50"].append(percentile(delays[in_bin], 50))
        return cols

    # ---- summary -------------------------------------------------------------------------
    def summary(self, eng: Engine) -> dict[str, Any]:
        a = eng.arrays()
        st = a["state"]
        n = int((st != WAITING).sum())  # pods that arrived (an externally driven run sends some only)
        bound = np.isfinite(a["bind_time"])
        delays = (a["bind_time"] - a["arrival"])[bound]
        failed_idx = np.nonzero((st == FAILED) | (st == WITHDRAWN))[0]
        by_message, by_reason = _failures(eng.message, failed_idx)
        cpu, mem, gpu = eng.totals.allocated_pct()
        mean = eng.totals.mean()
        peak = eng.totals.peak
        out: dict[str, Any] = {
            "mode": eng.opts.mode,
            "seed": eng.opts.seed,
            "source": eng.wl.source,
            "profiles": list(eng.sched.frameworks),
            "config": eng.sched.config.source or "<defaults>",
            "nodes": {"initial": len(eng.wl.nodes), "final": eng.snap.n, "events": len(eng.wl.node_events)},
            "pods": {
                "total": n,
                "scheduled": int(bound.sum()),
                "completed": int((st == DONE).sum()),
                "running_at_end": int((st == RUNNING).sum()),
                "failed": int(len(failed_idx)),
                "pending_at_end": int((st == QUEUED).sum()),
                "withdrawn": int((st == WITHDRAWN).sum()),
                "gated": int((st == GATED).sum()),
                "preempted": int((st == PREEMPTED).sum()),
                "evicted": int((st == EVICTED).sum()),
                "skipped_input_rows": len(eng.wl.skipped),
            },
            "skipped_rows": eng.wl.skipped[:20],  # the first input rows left out, with why
            "failed_by_reason": dict(by_reason.most_common()),
            "failed_messages": dict(by_message.most_common(20)),
            "gated_messages": dict(Counter(eng.message[i] for i in np.nonzero(st == GATED)[0]).most_common(20)),
            "allocation_pct": {
                name: {"final": final, "peak": float(getattr(peak, name)), "mean": float(getattr(mean, name))}
                for name, final in (("cpu", cpu), ("memory", mem), ("gpu", gpu))
            },
            "gpu": self._gpu_summary(eng, gpu),
            "queueing_delay_s": {
                "count": int(delays.size),
                "p50": percentile(delays, 50),
                "p90": percentile(delays, 90),
                "p99": percentile(delays, 99),
                "mean": float(delays.mean()) if delays.size else None,
                "max": float(delays.max()) if delays.size else None,
            },
            "utilization_pct": {
                "cpu": {"mean": float(mean.used_cpu), "peak": float(peak.used_cpu)},
                "memory": {"mean": float(mean.used_memory), "peak": float(peak.used_memory)},
                "model": {"low": eng.opts.usage.low, "high": eng.opts.usage.high},
            },
            "arrived_workload_pct": 100.0 * eng.arrived_work / eng.work_total,
            "workload_resource": eng.work_resource,
            "run": self._run_summary(eng),
        }
        return out

    def _frag_stats(self, col: int) -> dict[str, float | None]:
        vals = np.asarray([s[col] for s in self.samples], float)
        vals = vals[np.isfinite(vals)]
        if not vals.size:
            return {"final": None, "mean": None, "max": None}
        return {"final": float(vals[-1]), "mean": float(vals.mean()), "max": float(vals.max())}

    def _gpu_summary(self, eng: Engine, gpu: float) -> dict[str, Any]:
        frag_idx = 2 + SAMPLE_COLUMNS.index("frag_milli")
        last = eng.frag.last
        return {
            # the node resources the GPU figures count (nvidia.com/gpu, alibabacloud.com/gpu-count,
            # or gpu.nvidia.com: GPUs in ResourceSlices)
            "resources": gpu_resources(
                [*eng.wl.nodes, *(e.node for e in eng.wl.node_events if not isinstance(e.node, str))], eng.snap.dra
            ),
            "capacity_milli": int(eng.totals.capacity.gpu),
            "allocated_milli": int(eng.totals.allocated.gpu),
            "unallocated_pct": (100.0 - gpu) if eng.totals.capacity.gpu else None,
            "frag_milli": self._frag_stats(frag_idx),
            "frag_pct": self._frag_stats(frag_idx + 1),
            "frag_ratio_pct": self._frag_stats(frag_idx + 2),
            "fragmentation_available": eng.frag.available,
            # the paper's "Gpu" allocation ratio: GPUs with any allocation, at the last sample
            "gpus_in_use_pct": 100.0 * last.used_gpus / last.gpus if last is not None and last.gpus else None,
        }

    def _run_summary(self, eng: Engine) -> dict[str, Any]:
        return {
            "wall_s": eng.wall,
            "cpu_s": eng.cpu,
            "events": eng.n_events,
            "events_per_s": eng.n_events / eng.wall if eng.wall > 0 else None,
            "scheduler_s": eng.sched_wall,
            "sampling_s": self.sample_wall,
            # what the engine itself costs per event: wall time outside scheduling cycles
            # and fragmentation samples
            "engine_us_per_event": 1e6 * (eng.wall - eng.sched_wall - self.sample_wall) / eng.n_events
            if eng.n_events
            else None,
            "scheduling_attempts": eng.sched.attempts,
            "attempts_per_s": eng.sched.attempts / eng.wall if eng.wall > 0 else None,
            "sim_start_s": eng.t_start,
            "sim_end_s": eng.clock.now,
        }


def _failures(messages: list[str], failed: np.ndarray) -> tuple[Counter[str], Counter[str]]:
    """Failed pods by their message's first line, and by the kinds of reason in it."""
    by_message: Counter[str] = Counter()
    by_reason: Counter[str] = Counter()
    for i in failed:
        msg = messages[i]
        by_message[msg.split("\n", 1)[0]] += 1
        for r in set(reason_kinds(msg)):
            by_reason[r] += 1
    return by_message, by_reason

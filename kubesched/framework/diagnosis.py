"""Why a pod fits nowhere: per-node statuses kept as arrays, and the FitError message."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from kubesched.framework.status import Code, FilterResult, Status

NO_NODE_AVAILABLE = "0/{n} nodes are available:"
NO_NODES = "no nodes available to schedule pods"
MAX_MESSAGE_LEN = 1024


def unsatisfied_plugins(plugins: Sequence[str], *, simultaneously: bool = False) -> str:
    """The reason of nodes that PreFilterResults ruled out: findNodesThatFitPod's for the nodes
    outside them, or (``simultaneously``) RunPreFilterPlugins' when their node sets do not meet."""
    if simultaneously and len(plugins) == 1:
        return f"node(s) didn't satisfy plugin {plugins[0]}"
    return f"node(s) didn't satisfy plugin(s) [{' '.join(sorted(plugins))}]" + (" simultaneously" if simultaneously else "")


@dataclass
class NodeFailures:
    """Failed rows of one filter plugin: row ids with their codes and reason bits."""

    plugin: str
    rows: np.ndarray
    code: np.ndarray
    bits: np.ndarray
    reasons: tuple[str, ...]

    @classmethod
    def from_result(cls, plugin: str, rows: np.ndarray, res: FilterResult, mask: np.ndarray) -> NodeFailures:
        return cls(plugin, rows[mask], res.code[mask], res.reason_bits[mask], res.reasons)

    def status_at(self, i: int) -> Status:
        bits = int(self.bits[i])
        return Status(Code(int(self.code[i])), tuple(r for k, r in enumerate(self.reasons) if bits >> k & 1), self.plugin)


@dataclass
class Diagnosis:
    _failures: list[NodeFailures] = field(default_factory=list)
    absent_status: Status | None = None  # status of nodes not evaluated (PreFilter rejection/narrowing)
    pre_filter_msg: str = ""
    post_filter_msg: str = ""
    unschedulable_plugins: set[str] = field(default_factory=set)
    # reason -> failed nodes, when whoever built ``failures`` counted them already
    histogram: Counter[str] | None = field(default=None, repr=False)
    # Per-node failures built on first read (with ``failed``, their node count, known before):
    # the FitError message needs only the histogram, and most failures are never looked into.
    pending: Callable[[], list[NodeFailures]] | None = field(default=None, repr=False)
    failed: int = 0  # nodes in the pending failures
    # FitError messages already built, shared with copies; only with a ``histogram`` (its builder
    # never changes it), keyed on everything else the message reads
    messages: dict[tuple, str] | None = field(default=None, repr=False)

    @property
    def failures(self) -> list[NodeFailures]:
        if self.pending is not None:
            self._failures.extend(self.pending())
            self.pending, self.failed = None, 0
        return self._failures

    def copy(self) -> Diagnosis:
        """A copy whose lists, sets and messages can change without touching this one (the
        per-node arrays are shared: nobody writes to them)."""
        return Diagnosis(
            list(self._failures),
            self.absent_status,
            self.pre_filter_msg,
            self.post_filter_msg,
            set(self.unschedulable_plugins),
            self.histogram,
            self.pending,
            self.failed,
            self.messages,
        )

    @property
    def num_failed(self) -> int:
        return sum(len(f.rows) for f in self._failures) + (self.failed if self.pending is not None else 0)

    def status_of(self, row: int) -> Status | None:
        for f in self.failures:
            hit = np.nonzero(f.rows == row)[0]
            if hit.size:
                return f.status_at(int(hit[0]))
        return self.absent_status

    def statuses(self) -> dict[int, Status]:
        """Explicit per-row statuses (rows that were filtered and failed; the first failure wins,
        as in status_of)."""
        out: dict[int, Status] = {}
        for f in self.failures:
            for i, row in enumerate(f.rows.tolist()):
                if row not in out:
                    out[row] = f.status_at(i)
        return out

    def rows_with_code(self, code: Code) -> np.ndarray:
        parts = [f.rows[f.code == code] for f in self.failures]
        return np.concatenate(parts) if parts else np.zeros(0, np.int32)

    def reason_histogram(self, num_all_nodes: int) -> Counter[str]:
        if self.histogram is not None:
            counts = Counter(self.histogram)
        else:
            counts = self._count_failures()
        absent = num_all_nodes - self.num_failed
        if absent > 0 and self.absent_status is not None:
            for reason in self.absent_status.reasons:
                counts[reason] += absent
        return counts

    def _count_failures(self) -> Counter[str]:
        counts: Counter[str] = Counter()
        for f in self.failures:
            for k, reason in enumerate(f.reasons):
                c = int(((f.bits >> k) & 1).sum())
                if c:
                    counts[reason] += c
        return counts

    def fit_error(self, num_all_nodes: int) -> str:
        """framework.FitError.Error(), byte for byte."""
        memo = self.messages if self.histogram is not None else None
        if memo is not None:
            absent = self.absent_status
            key = (
                num_all_nodes,
                self.num_failed,
                self.pre_filter_msg,
                self.post_filter_msg,
                None if absent is None else tuple(absent.reasons),
            )
            hit = memo.get(key)
            if hit is None:
                hit = memo[key] = self._fit_error(num_all_nodes)
            return hit
        return self._fit_error(num_all_nodes)

    def _fit_error(self, num_all_nodes: int) -> str:
        msg = NO_NODE_AVAILABLE.format(n=num_all_nodes)
        if self.pre_filter_msg:
            msg += f" {self.pre_filter_msg}."
        else:
            hist = self.reason_histogram(num_all_nodes)
            parts = sorted(f"{v} {k}" for k, v in hist.items())
            if parts:
                msg += f" {', '.join(parts)}."
        if self.post_filter_msg:
            msg += f" {self.post_filter_msg}"  # " %v": the PostFilter message ends as it ends
        return msg


def truncate_message(msg: str) -> str:
    """Events and conditions cap the note at 1024 characters, ending in ' ...'."""
    if len(msg) <= MAX_MESSAGE_LEN:
        return msg
    return msg[: MAX_MESSAGE_LEN - 4] + " ..."

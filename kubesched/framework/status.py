"""Status codes, Status, and the vectorised results filter plugins return."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import IntEnum

import numpy as np


class Code(IntEnum):
    """framework.Code, same order and names as kube-scheduler."""

    Success = 0
    Error = 1
    Unschedulable = 2
    UnschedulableAndUnresolvable = 3
    Wait = 4
    Skip = 5
    Pending = 6


@dataclass(slots=True)
class Status:
    code: Code = Code.Success
    reasons: tuple[str, ...] = ()
    plugin: str = ""

    @property
    def ok(self) -> bool:
        return self.code == Code.Success

    @property
    def rejected(self) -> bool:
        return self.code in (Code.Unschedulable, Code.UnschedulableAndUnresolvable)

    @property
    def message(self) -> str:
        return ", ".join(self.reasons)

    @classmethod
    def error(cls, msg: str, plugin: str = "") -> Status:
        return cls(Code.Error, (msg,), plugin)

    @classmethod
    def unschedulable(cls, *reasons: str, plugin: str = "", unresolvable: bool = False) -> Status:
        code = Code.UnschedulableAndUnresolvable if unresolvable else Code.Unschedulable
        return cls(code, tuple(reasons), plugin)


SUCCESS = Status()


class PluginError(Exception):
    """Raised inside a plugin to return an Error status for the pod."""


@dataclass(slots=True)
class FilterResult:
    """Per-node verdicts of one filter plugin over ``rows``.

    ``code[i]`` is the Code for rows[i]; ``reason_bits[i]`` selects entries of ``reasons``
    (bit k -> reasons[k]) so several reasons per node stay vectorised.
    """

    code: np.ndarray  # int8
    reason_bits: np.ndarray  # int64
    reasons: tuple[str, ...] = ()

    @classmethod
    def all_pass(cls, n: int) -> FilterResult:
        return cls(np.zeros(n, np.int8), np.zeros(n, np.int64))

    @classmethod
    def from_mask(cls, fail: np.ndarray, reason: str, code: Code = Code.Unschedulable) -> FilterResult:
        """Rows where ``fail`` is true are rejected with one reason."""
        fail = np.asarray(fail, dtype=bool)
        return cls(fail.view(np.int8) * np.int8(code), fail.astype(np.int64), (reason,))

    @classmethod
    def from_masks(cls, masks: list[tuple[np.ndarray, str, Code]], n: int) -> FilterResult:
        """Several (fail mask, reason, code) pairs; a row's code is the worst of its failures."""
        code = np.zeros(n, np.int8)
        bits = np.zeros(n, np.int64)
        reasons = []
        for mask, reason, c in masks:
            if mask is None or not mask.any():
                continue
            code = np.maximum(code, np.asarray(mask, dtype=bool).view(np.int8) * np.int8(c))
            bits |= mask.astype(np.int64) << len(reasons)
            reasons.append(reason)
        return cls(code, bits, tuple(reasons))

    @property
    def failed(self) -> np.ndarray:
        return self.code != 0

    def status_at(self, i: int, plugin: str = "") -> Status:
        code = Code(int(self.code[i]))
        if code == Code.Success:
            return Status(plugin=plugin)
        bits = int(self.reason_bits[i])
        reasons = tuple(r for k, r in enumerate(self.reasons) if bits >> k & 1)
        return Status(code, reasons, plugin)


@dataclass(slots=True)
class PreFilterResult:
    """PreFilter may narrow the candidate nodes (None = all nodes)."""

    node_names: frozenset[str] | None = None
    status: Status = field(default_factory=Status)

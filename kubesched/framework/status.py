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
    """Raised inside a plugin to return an Error status for the pod (its text is the status'
    message, as a Go plugin's ``fwk.AsStatus(err)``)."""


def go_quote(text: str) -> str:
    """Go's ``%q`` of a string: double quotes, backslash escapes (plugin names in messages)."""
    out = []
    for ch in text:
        if ch in '"\\':
            out.append("\\" + ch)
        elif ch.isprintable():
            out.append(ch)
        elif ch in "\a\b\f\n\r\t\v":
            out.append(repr(ch)[1:-1])
        elif ord(ch) < 0x80:
            out.append(f"\\x{ord(ch):02x}")
        elif ord(ch) < 0x10000:
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(f"\\U{ord(ch):08x}")
    return '"' + "".join(out) + '"'


_NODE_ATTR = "kubesched_node"


def at_node(exc: BaseException, node: str) -> BaseException:
    """Remember on ``exc`` the node a per-node plugin call was judging when it raised."""
    if not hasattr(exc, _NODE_ATTR):
        try:
            setattr(exc, _NODE_ATTR, node)
        except AttributeError:  # an exception type without attribute storage: no node then
            pass
    return exc


def exception_text(exc: BaseException) -> str:
    """What a plugin's exception says in an Error status: a PluginError's own text (a deliberate
    Error status); anything else is a crash, shown as ``Type: message``; ``(node N)`` follows
    when a per-node call raised it."""
    text = str(exc) if isinstance(exc, PluginError) else f"{type(exc).__name__}: {exc}".rstrip(": ")
    node = getattr(exc, _NODE_ATTR, None)
    return f"{text} (node {node})" if node else text


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

    @classmethod
    def from_statuses(cls, statuses: list[Status]) -> FilterResult:
        """One Status per row (per-node plugins); the reasons are shared between rows."""
        reasons: list[str] = []
        code = np.zeros(len(statuses), np.int8)
        bits = np.zeros(len(statuses), np.int64)
        for i, st in enumerate(statuses):
            if st.ok:
                continue
            code[i] = int(st.code)
            for r in st.reasons:
                if r not in reasons:
                    reasons.append(r)
                bits[i] |= 1 << reasons.index(r)
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

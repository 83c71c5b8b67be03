"""``--debug``: the traceback of a plugin's exception, written to stderr once per distinct one.

A plugin that raises becomes an Error status for the pod (``running Score plugins: plugin
"X" failed with: KeyError: 'zone' (node n1)``) and the scheduler goes on; the traceback is only
shown when asked for, since a pod retried after backoff raises the same exception again.
"""

from __future__ import annotations

import sys
import traceback
from typing import TYPE_CHECKING, TextIO

if TYPE_CHECKING:
    from kubesched.scheduler import Scheduler, ScheduleResult


class PluginTracebacks:
    """Writes the traceback of each distinct plugin exception, naming the pod it failed."""

    def __init__(self, stream: TextIO | None = None) -> None:
        self.stream = stream
        self._seen: set[str] = set()

    def report(self, pod: str, exc: BaseException) -> None:
        text = "".join(traceback.format_exception(exc))
        if text in self._seen:
            return
        self._seen.add(text)
        out = self.stream or sys.stderr
        out.write(f"kubesched: debug: pod {pod}: a plugin raised:\n{text}")

    def __call__(self, res: ScheduleResult) -> None:
        if res.error is not None:
            self.report(res.pod.key, res.error)

    def attach(self, sched: Scheduler) -> PluginTracebacks:
        """Report the exceptions of every failed attempt of ``sched``."""
        sched.hooks.on_failed.append(self)
        return self


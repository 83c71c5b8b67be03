"""The progress bar of long commands (experiment fgd|elastic, tune, learn search|eval, multicluster
simulate): a rich bar
with elapsed time and ETA on stderr when stderr is a terminal and ``--no-progress`` is not given;
otherwise one line per finished step (``[3/20] ...``), or nothing for a command whose steps are not
worth a line each. stdout stays the command's result (a table, or its ``-o json|yaml`` document)."""

from __future__ import annotations

import sys
from types import TracebackType
from typing import Any


class Steps:
    """``with Steps("fgd grid", 20, show) as step: ... step("what finished")`` advances by one."""

    def __init__(self, label: str, total: int, show: bool, *, lines: bool = True) -> None:
        self.label, self.total, self.done = label, total, 0
        self.lines = lines
        self._progress: Any = None
        self._task: Any = None
        if show:
            from rich.console import Console

            err = Console(stderr=True)
            if err.is_terminal:
                self._progress = _bar(label, err)

    def __enter__(self) -> Steps:
        if self._progress is not None:
            self._progress.__enter__()
            self._task = self._progress.add_task("", total=self.total)
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self._progress is not None:
            self._progress.__exit__(kind, exc, tb)

    def __call__(self, line: str, advance: int = 1) -> None:
        self.done += advance
        if self._progress is not None:
            self._progress.update(self._task, advance=advance, description=line)
        elif self.lines:
            sys.stderr.write(f"[{self.done}/{self.total}] {line}\n")
            sys.stderr.flush()


def _bar(label: str, console: Any) -> Any:
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )
    from rich.table import Column

    cols = (
        TextColumn(label), BarColumn(bar_width=24), MofNCompleteColumn(), TimeElapsedColumn(), TimeRemainingColumn(),
        # the last step's description takes what is left of the line, cut short, so that the bar
        # and the ETA always show (a long one pushed them off an 80-column line)
        TextColumn("[dim]{task.description}", table_column=Column(ratio=1, no_wrap=True, overflow="ellipsis")),
    )
    return Progress(*cols, console=console, expand=True)

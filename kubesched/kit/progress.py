"""The progress of an experiment's runs on stderr: on a terminal a rich bar with the runs done,
the elapsed time, the ETA and what the last run gave; otherwise (or with ``--no-progress``) one
line per finished run, ``[3/30] ...``, so a log still shows how far a run got."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.console import Console


@contextmanager
def run_progress(label: str, total: int, *, show: bool, console: Console | None = None) -> Iterator[Callable[[str], None]]:
    """A callable to call once per finished run with a description of it. ``show``: draw the bar
    when ``console`` (default: stderr) is a terminal."""
    from rich.console import Console

    err = console if console is not None else Console(stderr=True)
    if not (show and err.is_terminal):
        done = 0

        def line(description: str) -> None:
            nonlocal done
            done += 1
            sys.stderr.write(f"[{done}/{total}] {description}\n")
            sys.stderr.flush()

        yield line
        return
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
        # the description takes what is left of the line, cut short, so the bar and ETA always show
        TextColumn("[dim]{task.description}", table_column=Column(ratio=1, no_wrap=True, overflow="ellipsis")),
    )
    with Progress(*cols, console=err, expand=True) as prog:
        task = prog.add_task("", total=total)

        def advance(description: str) -> None:
            prog.update(task, advance=1, description=description)

        yield advance

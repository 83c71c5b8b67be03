"""The report writer: an experiment's JSON and CSV files, its Markdown tables and the table it
prints, each written the one way every experiment command writes them."""

from __future__ import annotations

import csv
import json
import math
import sys
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rich.console import Console, RenderableType


def write_json(
    path: Path,
    doc: Any,
    *,
    indent: int | None = None,
    newline: bool = False,
    default: Callable[[Any], Any] | None = None,
    atomic: bool = False,
) -> Path:
    """``doc`` as JSON; ``atomic``: through a temporary file, so a killed run never leaves half a
    record for a later ``--resume`` to read."""
    text = json.dumps(doc, indent=indent, default=default) + ("\n" if newline else "")
    if atomic:
        tmp = path.with_suffix(path.suffix + ".tmp")
        tmp.write_text(text)
        tmp.replace(path)
    else:
        path.write_text(text)
    return path


def print_json(doc: Any, indent: int = 2, default: Callable[[Any], Any] | None = None) -> None:
    sys.stdout.write(json.dumps(doc, indent=indent, default=default) + "\n")


def print_document(doc: Any, output: str, default: Callable[[Any], Any] | None = None) -> None:
    """A command's result document on stdout as ``-o json`` or ``-o yaml`` (docs/cli.md describes
    each); ``default`` turns what JSON cannot hold (numpy numbers) into what it can."""
    if output == "json":
        print_json(doc, default=default)
        return
    import yaml

    plain = json.loads(json.dumps(doc, default=default))  # the same values as the JSON, as plain types
    sys.stdout.write(yaml.safe_dump(plain, sort_keys=False))


def write_rows(path: Path, header: Sequence[str], rows: Iterable[Sequence[Any]]) -> Path:
    """A CSV file: the header, then one line per row."""
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(header)
        w.writerows(rows)
    return path


def pm(mean: float | None, sd: float | None, digits: int = 2) -> str:
    """``mean ± sd``; the mean alone without an sd, ``–`` without a mean."""
    if mean is None:
        return "–"
    if sd is None or not math.isfinite(sd):
        return f"{mean:.{digits}f}"
    return f"{mean:.{digits}f} ± {sd:.{digits}f}"


def markdown_table(header: Sequence[str], rows: Iterable[Sequence[Any]]) -> list[str]:
    """The lines of a Markdown table (an empty cell is one space)."""

    def line(cells: Sequence[Any]) -> str:
        return "|" + "|".join(f" {c} " if str(c) else " " for c in cells) + "|"

    return [line(header), "|" + "---|" * len(header), *(line(row) for row in rows)]


def print_table(
    title: str,
    header: Sequence[str],
    rows: Iterable[Sequence[str]],
    right: Sequence[str] = (),
    *,
    keys: int = 1,
    console: Console | None = None,
) -> None:
    """A table on the terminal (rich); the columns named in ``right`` are right-aligned. No cell
    is cut: when the table is wider than the terminal, a block per row is printed instead, its
    first ``keys`` cells on the head line and a ``column  value`` line per other cell."""
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    from kubesched.render import fitting, name_blocks

    console = console if console is not None else Console()
    rows = [list(r) for r in rows]
    table = Table(title=title)
    for col in header:
        table.add_column(col, justify="right" if col in right else "left", no_wrap=True)
    for row in rows:
        table.add_row(*row)

    def narrow() -> RenderableType:
        blocks = []
        for r in rows:
            head = Text.from_markup("  ".join(r[:keys]), style="bold")
            blocks.append((head, list(zip(header[keys:], map(Text.from_markup, r[keys:]), strict=True))))
        return name_blocks(title, blocks)

    console.print(fitting(console, table, narrow))

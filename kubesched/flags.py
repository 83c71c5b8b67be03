"""Flags that several commands share, spelled the same everywhere.

``-o/--output FORMAT`` is what is printed (kubectl's habit); ``-d/--out-dir DIR`` is the folder a
command writes files to. ``--out`` was the folder's first name: it still works, with a warning,
because it reads like ``--output``. ``--no-plots`` and ``--no-plot`` are the same flag.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import Any

from kubesched.argtypes import validate_mode


class DeprecatedAlias(argparse.Action):
    """An old spelling of a flag: does what the new one does, and says to use the new one."""

    def __init__(self, option_strings: Sequence[str], dest: str, *, new: str, **kwargs: Any) -> None:
        self.new = new
        super().__init__(option_strings, dest, **kwargs)

    def __call__(
        self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any, option_string: str | None = None
    ) -> None:
        sys.stderr.write(f"kubesched: warning: {option_string} is deprecated: use {self.new}\n")
        setattr(namespace, self.dest, values)


def add_out_dir(p: argparse.ArgumentParser | Any, default: str, what: str) -> None:
    """``-d/--out-dir DIR`` (and the deprecated ``--out DIR``)."""
    p.add_argument(
        "-d", "--out-dir", dest="out_dir", default=default, metavar="DIR",
        help=f"folder for {what} (created; default {default})",
    )
    p.add_argument("--out", dest="out_dir", metavar="DIR", action=DeprecatedAlias, new="-d/--out-dir", help=argparse.SUPPRESS)


def output_format(choices: Sequence[str], hint: str = "") -> Any:
    """An argparse ``type`` for ``-o/--output`` whose error says what the flag is (and what it is not)."""

    def check(value: str) -> str:
        if value in choices:
            return value
        raise argparse.ArgumentTypeError(f"'{value}' is not an output format ({', '.join(choices)}){hint}")

    check.__name__ = "output format"
    return check


def add_output(p: argparse.ArgumentParser | Any, choices: Sequence[str], help: str, folder_flag: bool = False) -> None:
    """``-o/--output FORMAT``; with ``folder_flag`` its error points to ``--out-dir`` for a folder."""
    hint = "; the output folder is -d/--out-dir DIR" if folder_flag else ""
    p.add_argument(
        "-o", "--output", type=output_format(choices, hint), default=choices[0],
        metavar="{" + ",".join(choices) + "}", help=help,
    )


def add_no_plots(p: argparse.ArgumentParser | Any, help: str) -> None:
    p.add_argument("--no-plots", "--no-plot", dest="no_plots", action="store_true", help=help)


def add_validate(p: argparse.ArgumentParser | Any) -> None:
    """``--validate[=MODE]`` for the commands that read ``-f`` cluster files (kubectl's flag)."""
    p.add_argument(
        "--validate", nargs="?", const="strict", default="strict", type=validate_mode, metavar="MODE",
        help="what to do with -f objects the API server would refuse (unknown fields, invalid names, "
        "...): strict (or true; the default) refuses them, warn loads them with a warning per "
        "problem, ignore (or false) loads them silently; see docs/cli.md#input-files",
    )


def add_workload_source(p: argparse.ArgumentParser, title: str) -> argparse._ArgumentGroup:
    """The workload flags of ``simulate`` and ``tune`` (exactly one of ``--trace``, ``-f``,
    ``--synthetic``), in a group titled ``title`` that the caller may extend."""
    src = p.add_argument_group(title)
    src.add_argument(
        "--trace", metavar="NAME|FILE", help="openb pod list: a CSV, or a shipped trace by name (default, gpushare40, ...)"
    )
    src.add_argument(
        "--nodes", metavar="NAME|FILE", help="openb node list for --trace: a CSV, or shipped 'all' (default) or 'gpu'"
    )
    src.add_argument(
        "-f", "--file", action="append", metavar="FILE", help="Kubernetes manifests: nodes and pods (repeatable)"
    )
    add_validate(src)
    src.add_argument(
        "--synthetic",
        nargs="?",
        const="default",
        metavar="SPEC",
        help="generate a seeded workload from a YAML spec (no SPEC: the built-in default)",
    )
    src.add_argument(
        "--synth", action="append", default=[], metavar="KEY=VALUE", help="override a synthetic spec field (pods.count=500)"
    )
    src.add_argument("--skip-invalid", action="store_true", help="skip bad trace rows (counted and reported)")
    src.add_argument("--limit", type=int, metavar="N", help="replay only the first N pods by arrival")
    return src

"""Every command has a description in --help and every argument a help line; no user-facing text
(help, docs, examples) refers to the project's internal issue numbers."""

from __future__ import annotations

import argparse
import re
from pathlib import Path

from kubesched.cli import build_parser

ROOT = Path(__file__).resolve().parents[2]


def _commands(parser: argparse.ArgumentParser, path: str = "kubesched"):  # noqa: ANN202
    yield path, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _commands(sub, f"{path} {name}")


def test_every_command_and_argument_has_help():
    missing = []
    for path, parser in _commands(build_parser()):
        if not parser.description:
            missing.append(f"{path}: no description")
        for action in parser._actions:
            if isinstance(action, argparse._HelpAction) or action.help == argparse.SUPPRESS:
                continue
            if not action.help:
                missing.append(f"{path} {'/'.join(action.option_strings) or action.dest}: no help")
    assert not missing, "\n".join(missing)


def test_help_mentions_each_subcommand():
    top = build_parser().format_help()
    for name in ("schedule", "explain", "bench", "extender", "simulate", "tune", "run", "experiment"):
        assert re.search(rf"^\s+{name}\s+\S", top, re.M), name


# "(issue 3)", "issue 6:", "issue-3 experiments": the project's tracker, meaningless to users
INTERNAL = re.compile(r"\bissue[- ]#?\d+\b|\bissues? \d+(, ?\d+)*\b", re.I)


def test_no_internal_issue_references_in_user_facing_text():
    files = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md")), *sorted(p for p in (ROOT / "kubesched" / "examples").rglob("*") if p.is_file())]
    hits = []
    for f in files:
        for n, line in enumerate(f.read_text(errors="replace").splitlines(), 1):
            if INTERNAL.search(line) and "github.com" not in line:
                hits.append(f"{f.relative_to(ROOT)}:{n}: {line.strip()}")
    for path, parser in _commands(build_parser()):
        text = parser.format_help() + (parser.epilog or "")
        hits += [f"{path} --help: {m.group(0)}" for m in INTERNAL.finditer(text)]
    from kubesched.bench import workloads as W

    hits += [f"bench --list note of {w.full_name}: {w.note}" for w in W.WORKLOADS if INTERNAL.search(w.note)]
    assert not hits, "\n".join(hits)

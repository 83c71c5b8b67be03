"""A clone with nothing beside it is complete: nothing in the tree reads or points at a folder
outside the repository (the team's reference shelf lives beside the checkout, users never have it)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SKIP_DIRS = {".git", "__pycache__", ".venv", "venv", "build", "dist", ".pytest_cache", ".ruff_cache", ".hypothesis"}
TEXT = {".py", ".md", ".yaml", ".yml", ".toml", ".sh", ".txt", ".cfg", ".json", ".html", ".js", ".css", ".tpl", ""}
# spelled in pieces so that this file does not match itself
OUTSIDE = re.compile(
    r"\.\./" + "shared" + r"\b|\b" + "shared" + r"/(data|reference|hooks)\b|\"" + "shared" + r"\"\s*/\s*\"(data|reference)\""
)


def _files() -> list[Path]:
    out = []
    for p in ROOT.rglob("*"):
        rel = p.relative_to(ROOT)
        if any(part in SKIP_DIRS or part.endswith(".egg-info") for part in rel.parts):
            continue
        if p.is_file() and p.suffix in TEXT:
            out.append(p)
    return out


def test_nothing_refers_to_a_folder_outside_the_repository() -> None:
    files = _files()
    assert len(files) > 300  # the walk sees the tree (code, tests, docs, scripts, deploy)
    hits = []
    for p in files:
        for n, line in enumerate(p.read_text(errors="replace").splitlines(), 1):
            if OUTSIDE.search(line):
                hits.append(f"{p.relative_to(ROOT)}:{n}: {line.strip()}")
    assert not hits, "\n".join(hits)

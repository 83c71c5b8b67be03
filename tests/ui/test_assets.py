"""The page ships built: app.js must come from the committed sources (ui/), and must load nothing
from the network."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
STATIC = ROOT / "kubesched" / "ui" / "static"


def source_hash() -> str:
    """What ui/build.mjs writes on app.js's first line."""
    ui = ROOT / "ui"
    files = ["package.json", "package-lock.json", "build.mjs", *(f"src/{p.name}" for p in sorted((ui / "src").iterdir()))]
    h = hashlib.sha256()
    for f in files:
        h.update(f.encode() + b"\0")
        h.update((ui / f).read_bytes())
    return h.hexdigest()


def test_bundle_was_built_from_the_committed_sources() -> None:
    first = (STATIC / "app.js").read_text().split("\n", 1)[0]
    m = re.fullmatch(r"/\* kubesched-ui sources sha256 ([0-9a-f]{64}) \*/", first)
    assert m, first
    assert m.group(1) == source_hash(), "ui/ changed: run `cd ui && npm ci && npm run build` and commit the result"


def test_page_loads_nothing_from_elsewhere() -> None:
    for name in ("index.html", "app.js", "app.css"):
        text = (STATIC / name).read_text()
        # no script, style or font from another origin (licence texts may name URLs)
        assert not re.search(r"""(src|href)\s*=\s*["']https?://""", text), name
        assert not re.search(r"""import\s*\(?\s*["']https?://""", text), name
        assert "@import url(http" not in text, name

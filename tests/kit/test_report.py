"""The kit's report writer: the bytes the experiment commands have always written."""

from __future__ import annotations

import json
from pathlib import Path

from kubesched.kit.report import markdown_table, pm, write_json, write_rows


def test_markdown_table_and_mean_sd() -> None:
    rows = [("FGD", pm(2.5166, 0.7131, 3), "", ""), ("x", pm(1.0, None), pm(None, None), pm(3.0, float("nan")))]
    assert markdown_table(("policy", "mean ± sd", "a", "b"), rows) == [
        "| policy | mean ± sd | a | b |",
        "|---|---|---|---|",
        "| FGD | 2.517 ± 0.713 | | |",
        "| x | 1.00 | – | 3.00 |",
    ]


def test_json_and_csv(tmp_path: Path) -> None:
    p = write_json(tmp_path / "r.json", {"a": [1, 2]}, atomic=True)
    assert p.read_text() == '{"a": [1, 2]}' and not (tmp_path / "r.json.tmp").exists()
    write_json(p, {"a": 1}, indent=2, newline=True)
    assert p.read_text() == '{\n  "a": 1\n}\n' and json.loads(p.read_text()) == {"a": 1}
    c = write_rows(tmp_path / "r.csv", ["x", "y"], [[1, ""], [2, "a,b"]])
    assert c.read_bytes() == b'x,y\r\n1,\r\n2,"a,b"\r\n'

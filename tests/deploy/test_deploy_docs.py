"""docs/deploy.md documents every value of the chart, with its default."""

from __future__ import annotations

import re

import yaml
from deploy_testlib import CHART, ROOT

#: Values whose content is free-form Kubernetes or config YAML: documented as one row.
FREE_FORM = {
    "extraConfig", "resources", "podSecurityContext", "securityContext", "livenessProbe", "readinessProbe",
    "nodeSelector", "affinity", "podAnnotations", "podLabels", "profiles", "imagePullSecrets", "tolerations",
}  # fmt: skip


def value_paths(values: dict, prefix: str = "") -> dict[str, object]:
    out: dict[str, object] = {}
    for key, val in values.items():
        path = prefix + key
        if isinstance(val, dict) and val and key not in FREE_FORM:
            out.update(value_paths(val, path + "."))
        else:
            out[path] = val
    return out


def documented() -> dict[str, str]:
    """value path -> its table row's default cell (rows may name several values: `a`, `b`)."""
    text = (ROOT / "docs" / "deploy.md").read_text()
    table = text.split("## Values", 1)[1].split("\n## ", 1)[0]
    rows: dict[str, str] = {}
    for line in table.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) >= 3 and cells[0].startswith("`"):
            for name in re.findall(r"`([^`]+)`", cells[0]):
                rows[name] = cells[1]
    return rows


def test_every_value_is_in_the_docs_table() -> None:
    values = yaml.safe_load((CHART / "values.yaml").read_text())
    paths = value_paths(values)
    rows = documented()
    assert set(paths) == set(rows), (set(paths) - set(rows), set(rows) - set(paths))
    for path, default in paths.items():
        if isinstance(default, (bool, int, str)) and path not in FREE_FORM:
            shown = str(default).lower() if isinstance(default, bool) else str(default)
            assert f"`{shown}`" in rows[path] or (shown == "" and '`""`' in rows[path]), (path, rows[path])

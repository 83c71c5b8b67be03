"""Write a run to a folder: events.csv, bins.csv, pods.csv, summary.json, PNG plots, report.html."""

from __future__ import annotations

import base64
import csv
import html
import json
import math
from pathlib import Path
from typing import Any

from kubesched.errors import InputError
from kubesched.sim.runner import SimResult

PLOTS = ("allocation", "gpu", "queue", "utilization")


def prepare_out_dir(path: str, source: str | None = None) -> Path:
    """Create the folder (and parents) and check it is writable, before any simulation runs.

    An error names ``source`` (e.g. the flag) or, by default, the path."""
    p = Path(path)
    try:
        p.mkdir(parents=True, exist_ok=True)
        probe = p / ".kubesched-write-test"
        probe.write_text("")
        probe.unlink()
    except OSError as e:
        raise InputError(f"cannot write to the output folder: {e.strerror}", source=source or path) from None
    return p


def _clean(v: Any) -> Any:
    """Plain JSON/CSV values: numpy scalars to Python, NaN to None."""
    if hasattr(v, "item"):
        v = v.item()
    if isinstance(v, float) and not math.isfinite(v):
        return None
    return v


def json_ready(d: Any) -> Any:
    if isinstance(d, dict):
        return {str(k): json_ready(v) for k, v in d.items()}
    if isinstance(d, (list, tuple)):
        return [json_ready(v) for v in d]
    return _clean(d)


def write_csv(path: Path, table: dict[str, list[Any]]) -> None:
    cols = list(table)
    n = len(table[cols[0]]) if cols else 0
    with path.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(cols)
        columns = [table[c] for c in cols]
        for i in range(n):
            w.writerow(["" if (x := _clean(col[i])) is None else x for col in columns])


def write_outputs(result: SimResult, out: Path, *, plots: bool = True) -> list[Path]:
    """Every output file of a run; returns the paths written."""
    written = []
    tables = [("events.csv", result.events), ("bins.csv", result.bins), ("pods.csv", result.pods)]
    if result.attempts:
        tables.append(("attempts.csv", result.attempts))
    for name, table in tables:
        write_csv(out / name, table)
        written.append(out / name)
    (out / "summary.json").write_text(json.dumps(json_ready(result.summary), indent=2) + "\n")
    written.append(out / "summary.json")
    images: dict[str, Path] = {}
    if plots:
        from kubesched.sim.plots import draw_all

        images = draw_all(result, out)
        written += list(images.values())
    (out / "report.html").write_text(render_html(result, images))
    written.append(out / "report.html")
    return written


# ---- the HTML report ---------------------------------------------------------------------------
def _fmt(v: Any) -> str:
    v = _clean(v)
    if v is None:
        return "–"
    if isinstance(v, float):
        return f"{v:,.2f}"
    if isinstance(v, int):
        return f"{v:,}"
    return str(v)


def summary_rows(s: dict[str, Any]) -> list[tuple[str, str]]:
    """The report's summary table: (label, value) pairs."""
    pods = s["pods"]
    alloc = s["allocation_pct"]
    gpu = s["gpu"]
    q = s["queueing_delay_s"]
    u = s["utilization_pct"]
    run = s["run"]
    rows = [
        ("mode", _fmt(s["mode"])),
        ("seed", _fmt(s["seed"])),
        ("workload", _fmt(s["source"])),
        ("profiles", _fmt(", ".join(s["profiles"]))),
        ("configuration", "default configuration" if s.get("config") in (None, "<defaults>") else s["config"]),
        ("nodes (start / end)", f'{_fmt(s["nodes"]["initial"])} / {_fmt(s["nodes"]["final"])}'),
        ("pods", _fmt(pods["total"])),
        ("scheduled", _fmt(pods["scheduled"])),
        ("failed (never placed)", _fmt(pods["failed"])),
        ("gated (never tried: scheduling gates)", _fmt(pods.get("gated", 0))),
        ("preempted / evicted", f'{_fmt(pods["preempted"])} / {_fmt(pods["evicted"])}'),
        ("input rows skipped", _fmt(pods["skipped_input_rows"])),
    ]
    for res in ("cpu", "memory", "gpu"):
        a = alloc[res]
        rows.append(
            (f"{res} allocated % (final / mean / peak)", f'{_fmt(a["final"])} / {_fmt(a["mean"])} / {_fmt(a["peak"])}')
        )
    rows += [
        ("GPUs counted from", _fmt(", ".join(gpu.get("resources") or []) or None)),
        ("unallocated GPU % (final)", _fmt(gpu["unallocated_pct"])),
        ("GPU fragmentation % of capacity (final / mean)", f'{_fmt(gpu["frag_pct"]["final"])} / {_fmt(gpu["frag_pct"]["mean"])}'),
        ("GPU fragmentation ratio % (final / mean)", f'{_fmt(gpu["frag_ratio_pct"]["final"])} / {_fmt(gpu["frag_ratio_pct"]["mean"])}'),
        ("queueing delay s (p50 / p99 / max)", f'{_fmt(q["p50"])} / {_fmt(q["p99"])} / {_fmt(q["max"])}'),
        ("CPU / memory used % (mean)", f'{_fmt(u["cpu"]["mean"])} / {_fmt(u["memory"]["mean"])}'),
        ("arrived workload %", f'{_fmt(s["arrived_workload_pct"])} (of {s["workload_resource"]} capacity)'),
        ("wall time s", _fmt(run["wall_s"])),
        ("events / s", _fmt(run["events_per_s"])),
        ("scheduling attempts / s", _fmt(run["attempts_per_s"])),
    ]
    return rows


def html_page(title: str, body: list[str]) -> str:
    """A self-contained report page (inline style, no network) around ``body``'s HTML parts."""
    return "".join(
        [
            f"<!doctype html><html><head><meta charset='utf-8'><title>{html.escape(title)}</title>",
            "<style>body{font-family:system-ui,sans-serif;margin:2em;max-width:1100px}"
            "table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ccc;padding:4px 10px;text-align:left}"
            "th{background:#f3f3f3}img{max-width:100%;border:1px solid #eee;margin:.5em 0}"
            "pre{background:#f7f7f7;padding:1em;overflow-x:auto}.sub{color:#555}</style></head><body>",
            f"<h1>{html.escape(title)}</h1>",
            *body,
            "</body></html>\n",
        ]
    )


def html_table(rows: list[list[Any]], header: list[str] | None = None) -> str:
    parts = ["<table>"]
    if header:
        parts.append("<tr>" + "".join(f"<th>{html.escape(str(h))}</th>" for h in header) + "</tr>")
    for row in rows:
        parts.append("<tr>" + "".join(f"<td>{html.escape(v if isinstance(v, str) else _fmt(v))}</td>" for v in row) + "</tr>")
    parts.append("</table>")
    return "".join(parts)


def html_images(images: dict[str, Path]) -> list[str]:
    """Each PNG embedded (base64) under its title."""
    out = []
    for name, path in images.items():
        data = base64.b64encode(path.read_bytes()).decode("ascii")
        out.append(f"<h3>{html.escape(name)}</h3><img alt='{html.escape(name)}' src='data:image/png;base64,{data}'>")
    return out


def describe(summary: dict[str, Any]) -> str:
    """Workload, profile (and the configuration file it comes from) and mode: the subtitle of
    every plot and of the report."""
    source = str(summary.get("source") or "workload")
    workload = Path(source).name if "/" in source and not source.startswith("synthetic") else source
    config = str(summary.get("config") or "<defaults>")
    config = "default configuration" if config == "<defaults>" else Path(config).name
    profiles = ", ".join(summary.get("profiles") or [])
    return f"{workload} · profile {profiles} ({config}) · {summary['mode']} mode"


#: pods listed one by one in the report (all of them are in pods.csv)
REPORT_POD_ROWS = 500


def _pods_section(result: SimResult, title: str, states: tuple[str, ...]) -> list[str]:
    """A table of the pods in ``states`` (pod, state, attempts, message): the first REPORT_POD_ROWS."""
    p = result.pods
    idx = [i for i, st in enumerate(p.get("state", [])) if st in states]
    if not idx:
        return []
    out = [f"<h2>{html.escape(title)} ({len(idx):,})</h2>"]
    if len(idx) > REPORT_POD_ROWS:
        out.append(f"<p>The first {REPORT_POD_ROWS:,}; every pod is in pods.csv.</p>")
    rows = [[p["pod"][i], p["state"][i], str(p["attempts"][i]), p["message"][i]] for i in idx[:REPORT_POD_ROWS]]
    out.append(html_table(rows, ["pod", "state", "attempts", "message"]))
    return out


def render_html(result: SimResult, images: dict[str, Path]) -> str:
    """One self-contained page: what ran (workload, profile, resolved configuration), the summary,
    why pods failed and which, the plots (embedded as base64 PNG)."""
    import yaml

    from kubesched.config import effective_config

    s = result.summary
    parts = [f"<p class='sub'>{html.escape(describe(s))}</p>", "<h2>Summary</h2><table>"]
    parts += [f"<tr><th>{html.escape(k)}</th><td>{html.escape(v)}</td></tr>" for k, v in summary_rows(s)]
    parts.append("</table>")
    reasons = s.get("failed_by_reason") or {}
    if reasons:
        parts.append("<h2>Why pods failed</h2><table><tr><th>reason</th><th>pods</th></tr>")
        parts += [f"<tr><td>{html.escape(r)}</td><td>{_fmt(c)}</td></tr>" for r, c in list(reasons.items())[:20]]
        parts.append("</table>")
    parts += _pods_section(result, "Pods that never got a node", ("failed", "withdrawn"))
    parts += _pods_section(result, "Pods held by scheduling gates (never tried)", ("gated",))
    if images:
        parts.append("<h2>Plots</h2>")
    parts += html_images(images)
    if result.config is not None:
        doc = yaml.safe_dump(effective_config(result.config), sort_keys=False)
        parts.append(
            f"<h2>Configuration</h2><p>{html.escape(str(s.get('config') or '<defaults>'))}, resolved (defaults "
            "merged, versions converted; as <code>kubesched config view</code> prints it):</p>"
            f"<pre>{html.escape(doc)}</pre>"
        )
    parts.append(
        "<p>Files next to this report: events.csv (one row per event), bins.csv (per bin), pods.csv "
        "(one row per pod), summary.json.</p>"
    )
    return html_page(f"kubesched simulate: {s['mode']} mode", parts)

"""Readable, coloured tables (rich) for the CLI's ``-o table``."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.table import Table

_console = Console()


def schedule_table(placements: list[dict[str, Any]], session: Any) -> None:
    t = Table(title=f"kubesched schedule — {len(placements)} pending pod(s)", show_lines=False)
    t.add_column("#", justify="right", style="dim")
    t.add_column("pod")
    t.add_column("profile", style="dim")
    t.add_column("node / reason")
    placed = 0
    for i, p in enumerate(placements, 1):
        if p["node"]:
            placed += 1
            t.add_row(str(i), p["pod"], p["profile"], f"[green]{p['node']}[/green]")
        else:
            t.add_row(str(i), p["pod"], p["profile"], f"[red]{p['message']}[/red]")
    _console.print(t)
    _console.print(
        f"[bold]{placed}[/bold] placed, [bold]{len(placements) - placed}[/bold] unschedulable "
        f"on {session.scheduler.snapshot.n} node(s)"
    )


def explain_table(result: dict[str, Any]) -> None:
    nodes = result["nodes"]
    filter_names = [f["plugin"] for f in nodes[0]["filter"]] if nodes else []
    score_names: list[str] = []
    for n in nodes:
        for s in n["score"]:
            if s["plugin"] not in score_names:
                score_names.append(s["plugin"])
    t = Table(title=f"explain {result['pod']} (profile {result['profile']})")
    t.add_column("node")
    t.add_column("filter")
    for name in score_names:
        t.add_column(name, justify="right")
    t.add_column("total", justify="right", style="bold")
    for n in nodes:
        fails = [f for f in n["filter"] if f["code"] not in ("Success", "Skip")]
        if fails:
            verdict = "\n".join(f"[red]{f['plugin']}: {', '.join(f['reasons']) or f['code']}[/red]" for f in fails)
        else:
            verdict = f"[green]passes {len(filter_names)} filter(s)[/green]"
        by = {s["plugin"]: s for s in n["score"]}
        cells = []
        for name in score_names:
            s = by.get(name)
            cells.append(f"{s['normalized']}×{s['weight']}={s['weighted']}" if s else "")
        name = f"[bold green]{n['name']} ★[/bold green]" if n["name"] == result["selected"] else n["name"]
        t.add_row(name, verdict, *cells, "" if n["total"] is None else str(n["total"]))
    _console.print(t)
    if result["selected"]:
        _console.print(f"selected: [bold green]{result['selected']}[/bold green]")
    if result["message"]:
        _console.print(f"[red]{result['message']}[/red]")


def plugins_table(rows: list[dict[str, Any]]) -> None:
    t = Table(title="kubesched plugins")
    t.add_column("name", style="bold")
    t.add_column("origin")
    t.add_column("extension points")
    for r in rows:
        t.add_row(r["name"], r["origin"], ", ".join(r["points"]) or f"[red]{r['error']}[/red]")
    _console.print(t)


def config_table(rows: list[dict[str, Any]]) -> None:
    t = Table(title="resolved profiles")
    for col in ("profile", "point", "order", "plugin", "weight"):
        t.add_column(col, justify="right" if col in ("order", "weight") else "left")
    for r in rows:
        t.add_row(r["profile"], r["point"], str(r["order"]), r["plugin"], "" if r["weight"] is None else str(r["weight"]))
    _console.print(t)

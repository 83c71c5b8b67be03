"""Tables (rich) for ``kubesched multicluster schedule|explain -o table``."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.table import Table

_console = Console()


def _targets(clusters: list[dict[str, Any]]) -> str:
    return ", ".join(f"{c['name']}:{c['replicas']}" for c in clusters)


def schedule_table(doc: dict[str, Any], members: list[str]) -> None:
    decisions = doc["decisions"]
    t = Table(title=f"kubesched multicluster schedule — {len(decisions)} workload(s) over {len(members)} cluster(s)")
    t.add_column("#", justify="right", style="dim")
    t.add_column("workload")
    t.add_column("replicas", justify="right")
    t.add_column("policy", style="dim")
    t.add_column("clusters / reason")
    ok = 0
    for i, d in enumerate(decisions, 1):
        if d["result"] == "Success":
            ok += 1
            where = f"[green]{_targets(d['clusters'])}[/green]"
            if d["affinityName"]:
                where += f" [dim](affinity {d['affinityName']})[/dim]"
        else:
            where = f"[red]{d['result']}: {d['message']}[/red]"
        t.add_row(str(i), d["workload"], str(d["replicas"]), d["policy"], where)
    _console.print(t)
    for s in doc["skipped"]:
        _console.print(f"[yellow]skipped[/yellow] {s['workload']}: {s['reason']}")
    _console.print(f"[bold]{ok}[/bold] scheduled, [bold]{len(decisions) - ok}[/bold] not")


def explain_table(doc: dict[str, Any]) -> None:
    for at in doc["attempts"]:
        title = f"explain {doc['workload']} ({doc['policy']})"
        if at["affinityName"]:
            title += f" — affinity term {at['affinityName']}"
        t = Table(title=title)
        t.add_column("cluster")
        t.add_column("filter")
        score_names: list[str] = []
        for c in at["clusters"]:
            for s in c["score"]:
                if s["plugin"] not in score_names:
                    score_names.append(s["plugin"])
        for name in score_names:
            t.add_column(name, justify="right")
        t.add_column("total", justify="right", style="bold")
        t.add_column("available", justify="right")
        t.add_column("replicas", justify="right")
        for c in at["clusters"]:
            fails = [f for f in c["filter"] if f["code"] != "Success"]
            verdict = (
                "\n".join(f"[red]{f['plugin']}: {', '.join(f['reasons'])}[/red]" for f in fails)
                if fails
                else f"[green]passes {len(c['filter'])} filter(s)[/green]"
            )
            by = {s["plugin"]: s for s in c["score"]}
            cells = [str(by[n]["normalized"]) if n in by else "" for n in score_names]
            est = c["estimates"]
            avail = "" if c["availableReplicas"] is None else str(c["availableReplicas"])
            if len(est) > 1:
                avail += " (" + ", ".join(f"{k} {v}" for k, v in est.items()) + ")"
            name = f"[bold green]{c['name']} ★[/bold green]" if c["selected"] else c["name"]
            t.add_row(name, verdict, *cells, "" if c["total"] is None else str(c["total"]), avail,
                      "" if not c["replicas"] else str(c["replicas"]))
        _console.print(t)
        color = "green" if at["result"] == "Success" else "red"
        _console.print(f"[{color}]{at['result']}[/{color}]: {at['message'] or 'scheduled'}")
    if doc["result"] == "Success":
        _console.print(f"[bold]result[/bold]: {_targets(doc['clusters'])}")
    else:
        _console.print(f"[bold]result[/bold]: [red]{doc['result']}: {doc['message']}[/red]")

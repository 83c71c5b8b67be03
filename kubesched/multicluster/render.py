"""Tables (rich) for ``kubesched multicluster schedule|explain -o table``, at any terminal width.

As ``kubesched.render`` draws ``kubesched schedule|explain``: names (workloads, policies,
clusters, plugins) are never cut, only reasons and messages wrap, and when the wide layout needs
more columns than the terminal has, one block per workload or cluster is drawn instead. Text is
passed as ``rich.text.Text``, never as markup, so names and messages print as they are.
"""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from kubesched.render import MIN_REASON_WIDTH, fitting, name_blocks


def _targets(clusters: list[dict[str, Any]]) -> str:
    return ", ".join(f"{c['name']}:{c['replicas']}" for c in clusters)


def _outcome(d: dict[str, Any]) -> Text:
    if d["result"] != "Success":
        return Text(f"{d['result']}: {d['message']}", style="red")
    where = Text(_targets(d["clusters"]), style="green")
    if d["affinityName"]:
        where.append(f" (affinity {d['affinityName']})", style="dim")
    return where


def schedule_table(doc: dict[str, Any], members: list[str], console: Console | None = None) -> None:
    console = console if console is not None else Console()
    decisions = doc["decisions"]
    title = f"kubesched multicluster schedule — {len(decisions)} workload(s) over {len(members)} cluster(s)"
    wide = Table(title=title)
    wide.add_column("#", justify="right", style="dim", no_wrap=True)
    wide.add_column("workload", no_wrap=True)
    wide.add_column("replicas", justify="right", no_wrap=True)
    wide.add_column("policy", style="dim", no_wrap=True)
    wide.add_column("clusters / reason", min_width=MIN_REASON_WIDTH, overflow="fold")
    for i, d in enumerate(decisions, 1):
        wide.add_row(str(i), d["workload"], str(d["replicas"]), d["policy"], _outcome(d))

    def narrow() -> Table:
        t = Table(title=title)
        t.add_column("#", justify="right", style="dim", no_wrap=True)
        t.add_column("workload (replicas, policy) → clusters / reason", overflow="fold")
        for i, d in enumerate(decisions, 1):
            head = Text(d["workload"], style="bold")
            head.append(f"  {d['replicas']} replica(s), {d['policy']}", style="dim")
            t.add_row(str(i), Text("\n").join([head, _outcome(d)]))
        return t

    console.print(fitting(console, wide, narrow))
    for s in doc["skipped"]:
        console.print(Text.assemble(("skipped", "yellow"), f" {s['workload']}: {s['reason']}"))
    ok = sum(1 for d in decisions if d["result"] == "Success")
    console.print(Text.assemble((str(ok), "bold"), " scheduled, ", (str(len(decisions) - ok), "bold"), " not"))


def _available(c: dict[str, Any]) -> str:
    avail = "" if c["availableReplicas"] is None else str(c["availableReplicas"])
    est = c["estimates"]
    if len(est) > 1:
        avail += " (" + ", ".join(f"{k} {v}" for k, v in est.items()) + ")"
    return avail


def _attempt(doc: dict[str, Any], at: dict[str, Any], console: Console) -> None:
    title = f"explain {doc['workload']} ({doc['policy']})"
    if at["affinityName"]:
        title += f" — affinity term {at['affinityName']}"
    clusters = at["clusters"]
    score_names: list[str] = []
    for c in clusters:
        for s in c["score"]:
            if s["plugin"] not in score_names:
                score_names.append(s["plugin"])

    def verdict(c: dict[str, Any]) -> Text:
        fails = [f for f in c["filter"] if f["code"] != "Success"]
        if not fails:
            return Text(f"passes {len(c['filter'])} filter(s)", style="green")
        return Text("\n").join(Text(f"{f['plugin']}: {', '.join(f['reasons'])}", style="red") for f in fails)

    def name(c: dict[str, Any], style: str = "") -> Text:
        return Text(f"{c['name']} ★", style="bold green") if c["selected"] else Text(c["name"], style=style)

    wide = Table(title=title)
    wide.add_column("cluster", no_wrap=True)
    wide.add_column("filter", min_width=MIN_REASON_WIDTH, overflow="fold")
    for plugin in score_names:
        wide.add_column(plugin, justify="right", no_wrap=True)
    for col in ("total", "available", "replicas"):
        wide.add_column(col, justify="right", no_wrap=True, style="bold" if col == "total" else "")
    for c in clusters:
        by = {s["plugin"]: s for s in c["score"]}
        cells = [str(by[n]["normalized"]) if n in by else "" for n in score_names]
        wide.add_row(name(c), verdict(c), *cells, "" if c["total"] is None else str(c["total"]), _available(c),
                     "" if not c["replicas"] else str(c["replicas"]))

    def narrow():  # noqa: ANN202 - a rich Group
        """One block per cluster: its name and total, then its failing filters (or that all pass),
        its scores, available replicas and the replicas it gets."""
        blocks = []
        for c in clusters:
            head = name(c, "bold")
            head.append(f"  total {c['total']}" if c["total"] is not None else "  infeasible", style="dim")
            fails = [f for f in c["filter"] if f["code"] != "Success"]
            rows: list[tuple[Text | str, Text | str]] = [
                (Text(f["plugin"], style="red"), Text(", ".join(f["reasons"]) or f["code"], style="red")) for f in fails
            ]
            if not fails:
                rows.append((Text("filters", style="green"), Text(f"passes {len(c['filter'])} filter(s)", style="green")))
            rows += [(s["plugin"], str(s["normalized"])) for s in c["score"]]
            if c["availableReplicas"] is not None:
                rows.append(("available", _available(c)))
            if c["replicas"]:
                rows.append(("replicas", str(c["replicas"])))
            blocks.append((head, rows))
        return name_blocks(title, blocks)

    console.print(fitting(console, wide, narrow))
    color = "green" if at["result"] == "Success" else "red"
    console.print(Text.assemble((at["result"], color), f": {at['message'] or 'scheduled'}"))


def explain_table(doc: dict[str, Any], console: Console | None = None) -> None:
    console = console if console is not None else Console()
    for at in doc["attempts"]:
        _attempt(doc, at, console)
    if doc["result"] == "Success":
        console.print(Text.assemble(("result", "bold"), f": {_targets(doc['clusters'])}"))
    else:
        console.print(Text.assemble(("result", "bold"), ": ", (f"{doc['result']}: {doc['message']}", "red")))


def _event_text(e: dict[str, Any]) -> Text:
    if e["event"] == "taint":
        taints = ", ".join(f"{t['key']}{'=' + t['value'] if t['value'] else ''}:{t['effect']}" for t in e["taints"]) or "none"
        return Text(f"{e['cluster']} taints: {taints}", style="yellow")
    if e["event"] == "evict":
        return Text(f"{e['workload']} evicted from {e['cluster']} ({e['detail']})", style="red")
    if e["event"] == "purge":
        return Text(f"{e['workload']}: replicas on {e['cluster']} purged", style="dim")
    if e["event"] == "schedule":
        return Text(f"{e['workload']} → {_targets(e['clusters'])}", style="green")
    return Text(f"{e['workload']} unschedulable: {e['detail']}", style="red")


def failover_table(doc: dict[str, Any], console: Console | None = None) -> None:
    """``schedule --events``: what the failover controllers did, in time order, then where each
    workload is at the end."""
    console = console if console is not None else Console()
    t = Table(title="failover")
    t.add_column("time (s)", justify="right", no_wrap=True)
    t.add_column("event", no_wrap=True)
    t.add_column("what", min_width=MIN_REASON_WIDTH, overflow="fold")
    for e in doc["events"]:
        t.add_row(f"{e['time']:g}", e["event"], _event_text(e))
    console.print(t)
    for f in doc["final"]:
        line = Text.assemble((f["workload"], "bold"), " → ", (_targets(f["clusters"]) or "nowhere", "green"))
        if f["evicting"]:
            line.append(f" (evicting: {', '.join(f['evicting'])})", style="dim")
        console.print(line)

"""Readable, coloured tables (rich) for the CLI's ``-o table``, at any terminal width.

Names (pods, nodes, plugins) are never cut: their columns do not wrap, and only reasons and
messages wrap. When a table's wide layout needs more columns than the terminal has, a narrow
layout is drawn instead (a name on its own line, its details under it), so an 80-column pipe
or CI log reads as well as a wide terminal. Text is passed as ``rich.text.Text``, never as
markup: messages such as ``waiting for scheduling gates: [a]`` print as they are.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from rich.console import Console, Group, RenderableType
from rich.measure import Measurement
from rich.padding import Padding
from rich.table import Table
from rich.text import Text

if TYPE_CHECKING:
    from kubesched.batch import BatchResult

#: the narrowest a wrapping column (reasons, messages) may get in a wide layout
MIN_REASON_WIDTH = 28


def required_width(console: Console, table: Table) -> int:
    """The width ``table`` needs to show its no-wrap columns whole and its other columns at
    their minimum (rich would otherwise squeeze no-wrap columns and cut them with "…")."""
    wide = console.options.update_width(100_000)
    for col in table.columns:
        if col.no_wrap:
            cells = [col.header, *col.cells]
            col.min_width = max(Measurement.get(console, wide, c).maximum for c in cells)
    return Measurement.get(console, wide, table).minimum


def fitting(console: Console, wide: Table, narrow: Callable[[], RenderableType]) -> RenderableType:
    """``wide`` when it fits the console, else what ``narrow()`` builds."""
    return wide if required_width(console, wide) <= console.width else narrow()


Details = Iterable[tuple[Text | str, Text | str]]


def name_blocks(title: str, blocks: Iterable[tuple[Text, Details]]) -> Group:
    """The narrow layout of a table with a row per object (node, cluster): the title, then per
    object its head line and, indented, a line per detail: a label never cut, a value that wraps."""
    out: list[RenderableType] = [Text(title, style="italic", justify="center")]
    for head, details in blocks:
        grid = Table.grid(padding=(0, 2))
        grid.add_column(no_wrap=True)
        grid.add_column(overflow="fold")
        for label, value in details:
            grid.add_row(label, value)
        out += [head, Padding(grid, (0, 0, 0, 2), expand=False)]
    return Group(*out)


def _console(console: Console | None) -> Console:
    return console if console is not None else Console()


def _lines(*parts: Text | None) -> Text:
    """Non-empty parts, one per line."""
    return Text("\n").join(p for p in parts if p is not None and p.plain)


def _pods(entries: Iterable[dict[str, str]]) -> str:
    return ", ".join(e["pod"] for e in entries)


# ---- schedule ------------------------------------------------------------------------------
def _outcome(p: dict[str, Any]) -> Text:
    """What became of one pod: its node or FailedScheduling message, then its preemption."""
    main = Text(p["node"], style="green") if p["node"] else Text(p["message"] or "", style="red")
    victims = p.get("victims") or []
    nominated = p.get("nominated_node")
    if not victims and not nominated:
        return main
    preemption = Text(style="yellow")
    if nominated:
        preemption.append(f"nominated to {nominated}")
    if victims:
        preemption.append(" after preempting " if nominated else "preempted ")
        preemption.append(f"{len(victims)} pod(s): {_pods(victims)}")
        elsewhere = sorted({v["node"] for v in victims} - {nominated})
        if elsewhere:
            preemption.append(f" (on {', '.join(elsewhere)})")
    return _lines(main, preemption)


def _skipped_outcome(e: dict[str, Any]) -> Text:
    return Text(f"not scheduled ({e['reason']}): {e['message']}", style="yellow")


def schedule_table(result: BatchResult, console: Console | None = None) -> None:
    """Every pending pod: where it went (and whom it preempted), why it fits nowhere, or why it was
    not tried."""
    console = _console(console)
    multi = len(result.profiles) > 1
    profile = "" if multi or not result.profiles else f", profile {result.profiles[0]}"
    n = len(result.placements) + len(result.skipped)
    where = f" in namespace {result.namespace} (of {result.pending_all})" if result.namespace is not None else ""
    title = f"kubesched schedule — {n} pending pod(s){where}{profile}"
    numbers = result.numbers or range(1, len(result.placements) + 1)
    rows: list[tuple[str, str, str, Text]] = [
        (str(i), p["pod"], p["profile"], _outcome(p)) for i, p in zip(numbers, result.placements, strict=True)
    ]
    rows += [("–", e["pod"], "", _skipped_outcome(e)) for e in result.skipped]

    wide = Table(title=title)
    wide.add_column("#", justify="right", style="dim", no_wrap=True)
    wide.add_column("pod", no_wrap=True)
    if multi:
        wide.add_column("profile", style="dim", no_wrap=True)
    wide.add_column("node / reason", min_width=MIN_REASON_WIDTH, overflow="fold")
    for num, pod, prof, outcome in rows:
        wide.add_row(num, pod, *((prof,) if multi else ()), outcome)

    def narrow() -> Table:
        t = Table(title=title)
        t.add_column("#", justify="right", style="dim", no_wrap=True)
        t.add_column("pod → node / reason", overflow="fold")
        for num, pod, prof, outcome in rows:
            head = Text(pod, style="bold")
            if multi and prof:
                head.append(f"  ({prof})", style="dim")
            t.add_row(num, _lines(head, outcome))
        return t

    console.print(fitting(console, wide, narrow))
    console.print(_schedule_footer(result), highlight=False)


def schedule_wide(result: BatchResult, console: Console | None = None) -> None:
    """``-o wide``: one line per pod, every field in a column of its own, as kubectl's ``-o wide``:
    lines as long as they need (wider than the terminal if need be), nothing wrapped or cut."""
    console = _console(console)
    t = Table(box=None, pad_edge=False, header_style="")  # plain text: no style to pad around
    for name in ("#", "POD", "PROFILE", "NODE", "NOMINATED NODE", "PREEMPTED", "MESSAGE"):
        t.add_column(name, no_wrap=True, justify="right" if name == "#" else "left")
    numbers = result.numbers or range(1, len(result.placements) + 1)
    for i, p in zip(numbers, result.placements, strict=True):
        victims = _pods(p.get("victims") or [])
        t.add_row(
            str(i), p["pod"], p["profile"], p["node"] or "<none>", p.get("nominated_node") or "<none>",
            victims or "<none>", p["message"] or "",
        )
    for e in result.skipped:
        t.add_row("–", e["pod"], "", "<none>", "<none>", "<none>", f"not scheduled ({e['reason']}): {e['message']}")
    width = console.width
    console.width = max(width, required_width(console, t))
    try:
        with console.capture() as table:
            console.print(t, highlight=False)
    finally:
        console.width = width
    for line in table.get().splitlines():  # no padding after the last column, as kubectl's tabwriter
        console.out(line.rstrip(), highlight=False)
    console.print(_schedule_footer(result), highlight=False)


def _schedule_footer(result: BatchResult) -> Text:
    placed = sum(1 for p in result.placements if p["node"])
    failed = len(result.placements) - placed
    victims = sum(len(p.get("victims") or []) for p in result.placements)
    text = Text()
    text.append(str(placed), style="bold")
    text.append(" placed, ")
    text.append(str(failed), style="bold")
    text.append(" unschedulable")
    if result.skipped:
        why = Counter(e["reason"] for e in result.skipped)
        text.append(", ")
        text.append(str(len(result.skipped)), style="bold")
        text.append(" not scheduled (" + ", ".join(f"{c} {r}" for r, c in why.items()) + ")")
    if victims:
        text.append(f", {victims} pod(s) preempted")
    text.append(f" on {result.nodes} node(s)")
    if result.preempted_by_others:
        text.append(f"; {len(result.preempted_by_others)} pod(s) of {result.namespace} preempted for pods of other namespaces: ")
        text.append(", ".join(f"{v['pod']} (by {v['by']})" for v in result.preempted_by_others))
    return text


# ---- explain -------------------------------------------------------------------------------
def _score_cell(s: dict[str, Any]) -> str:
    return f"{s['normalized']}×{s['weight']}={s['weighted']}"


def _failures(node: dict[str, Any]) -> list[dict[str, Any]]:
    return [f for f in node["filter"] if f["code"] not in ("Success", "Skip")]


def explain_header(result: dict[str, Any]) -> Text:
    """The basis of the verdict, and the pod's gates, above the table."""
    parts = []
    if result.get("basis") == "after-schedule":
        sched = result.get("schedule") or {}
        parts.append(
            Text(
                "Basis: the cluster after the other pending pods were placed as `kubesched schedule` "
                "places them (preemptions included)"
                + (f"; schedule placed this pod on {sched['node']}" if sched.get("node") else "")
                + ".",
                style="dim",
            )
        )
    elif result.get("basis") == "input":
        parts.append(
            Text(
                "Basis: the input cluster as given; the other pending pods are not placed first "
                "(`kubesched schedule` places them, so its verdict can differ: see --after-schedule).",
                style="dim",
            )
        )
    gated = result.get("gated")
    if gated:
        parts.append(
            Text(
                f"Gated: {gated['message']} ({gated['plugin']}). kube-scheduler does not try this pod until "
                "the gate is lifted; below is the verdict it would get then.",
                style="yellow",
            )
        )
    return _lines(*parts)


def explain_table(result: dict[str, Any], console: Console | None = None) -> None:
    """Every node's filter verdicts and score plugins' numbers for one pod."""
    console = _console(console)
    nodes = result["nodes"]
    n_filters = len(nodes[0]["filter"]) if nodes else 0
    score_names: list[str] = []
    for n in nodes:
        for s in n["score"]:
            if s["plugin"] not in score_names:
                score_names.append(s["plugin"])
    title = f"explain {result['pod']} (profile {result['profile']})"

    def verdict(n: dict[str, Any]) -> Text:
        fails = _failures(n)
        if not fails:
            return Text(f"passes {n_filters} filter(s)", style="green")
        return _lines(*(Text(f"{f['plugin']}: {', '.join(f['reasons']) or f['code']}", style="red") for f in fails))

    def name(n: dict[str, Any], style: str = "") -> Text:
        if n["name"] == result["selected"]:
            return Text(f"{n['name']} ★", style="bold green")
        return Text(n["name"], style=style)

    wide = Table(title=title)
    wide.add_column("node", no_wrap=True)
    wide.add_column("filter", min_width=MIN_REASON_WIDTH, overflow="fold")
    for plugin in score_names:
        wide.add_column(plugin, justify="right", no_wrap=True)
    wide.add_column("total", justify="right", style="bold", no_wrap=True)
    for n in nodes:
        by = {s["plugin"]: s for s in n["score"]}
        cells = [_score_cell(by[p]) if p in by else "" for p in score_names]
        wide.add_row(name(n), verdict(n), *cells, "" if n["total"] is None else str(n["total"]))

    def narrow() -> Group:
        """One block per node: its name and total, then a row per failing filter or score plugin."""
        blocks = []
        for n in nodes:
            head = name(n, "bold")
            head.append("  total " + str(n["total"]) if n["total"] is not None else "  infeasible", style="dim")
            rows: list[tuple[Text | str, Text | str]] = []
            fails = _failures(n)
            for f in fails:
                rows.append((Text(f["plugin"], style="red"), Text(", ".join(f["reasons"]) or f["code"], style="red")))
            if not fails:
                rows.append((Text("filters", style="green"), Text(f"passes {n_filters} filter(s)", style="green")))
            rows += [(s["plugin"], _score_cell(s)) for s in n["score"]]
            blocks.append((head, rows))
        return name_blocks(title, blocks)

    header = explain_header(result)
    if header.plain:
        console.print(header)
    console.print(fitting(console, wide, narrow))
    if result["selected"]:
        console.print(Text.assemble("selected: ", (result["selected"], "bold green")))
    if result["message"]:
        console.print(Text(result["message"], style="red"))


# ---- plugins, config -------------------------------------------------------------------------
def plugins_table(rows: list[dict[str, Any]], console: Console | None = None) -> None:
    console = _console(console)

    def points(r: dict[str, Any]) -> Text:
        return Text(", ".join(r["points"])) if r["points"] else Text(r["error"], style="red")

    wide = Table(title="kubesched plugins")
    wide.add_column("name", style="bold", no_wrap=True)
    wide.add_column("origin", no_wrap=True)
    wide.add_column("extension points", min_width=MIN_REASON_WIDTH, overflow="fold")
    for r in rows:
        wide.add_row(r["name"], r["origin"], points(r))

    def narrow() -> Table:
        t = Table(title="kubesched plugins")
        t.add_column("name (origin) → extension points", overflow="fold")
        for r in rows:
            head = Text.assemble((r["name"], "bold"), " (", r["origin"], ")")
            t.add_row(_lines(head, points(r)))
        return t

    console.print(fitting(console, wide, narrow))


def config_table(rows: list[dict[str, Any]], console: Console | None = None) -> None:
    """Every (profile, extension point, plugin) in execution order; when the profile column does
    not fit (80 columns: ``default-scheduler`` beside ``NodeResourcesBalancedAllocation``), a
    table per profile, titled with its name."""
    console = _console(console)

    def table(title: str, with_profile: bool, subset: list[dict[str, Any]]) -> Table:
        t = Table(title=title)
        for col in ("profile", "point", "order", "plugin", "weight")[0 if with_profile else 1:]:
            right = col in ("order", "weight")
            # the plugin column folds in the per-profile tables: a name longer than the terminal
            t.add_column(col, justify="right" if right else "left", no_wrap=with_profile or col != "plugin",
                         overflow="fold")
        for r in subset:
            cells = (r["point"], str(r["order"]), r["plugin"], "" if r["weight"] is None else str(r["weight"]))
            t.add_row(*((r["profile"],) if with_profile else ()), *cells)
        return t

    def narrow() -> Group:
        profiles = list(dict.fromkeys(r["profile"] for r in rows))
        return Group(*(
            table(f"resolved profile {p}", False, [r for r in rows if r["profile"] == p]) for p in profiles
        ))

    console.print(fitting(console, table("resolved profiles", True, rows), narrow))

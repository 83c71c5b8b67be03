"""No import cycle between kubesched's top-level packages (docs/architecture.md, "Layers").

Every module is parsed, not imported, and every import counts: at module level, inside a
function (a lazy import is still a dependency) and under ``if TYPE_CHECKING:`` (a type is one
too). A top-level module (``kubesched/app.py``) is a package of its own. The graph of packages
must have no cycle; a failure names each cycle and the files whose imports close it.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent / "kubesched"

Edges = dict[tuple[str, str], list[str]]


def _imported(node: ast.AST, package: tuple[str, ...]) -> list[str]:
    """Dotted names an import statement reaches (``from a import b`` reaches ``a`` and, when
    ``a`` is the root package, ``a.b``)."""
    if isinstance(node, ast.Import):
        return [a.name for a in node.names]
    if not isinstance(node, ast.ImportFrom):
        return []
    if node.level:
        base = package[: len(package) - (node.level - 1)]
        module = ".".join(base + ((node.module,) if node.module else ()))
    else:
        module = node.module or ""
    if module == "kubesched":
        return [f"{module}.{a.name}" for a in node.names]
    return [module]


def package_edges(root: Path = ROOT) -> Edges:
    """(importing package, imported package) -> ["file:line", ...] over every module under root."""
    edges: Edges = defaultdict(list)
    for path in sorted(root.rglob("*.py")):
        parts = path.relative_to(root.parent).with_suffix("").parts
        if len(parts) < 2 or parts[1] == "__init__":
            continue
        package = parts[:-1]
        source = parts[1]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            for name in _imported(node, package):
                target = name.split(".")
                if target[0] != "kubesched" or len(target) < 2 or target[1] == source:
                    continue
                if (root / target[1]).is_dir() or (root / f"{target[1]}.py").is_file():  # not a name in __init__
                    edges[(source, target[1])].append(f"{path.relative_to(root.parent)}:{node.lineno}")
    return edges


def cycles(edges: Edges) -> list[list[str]]:
    """The strongly connected components of more than one package (Tarjan), each sorted."""
    graph: dict[str, set[str]] = defaultdict(set)
    for a, b in edges:
        graph[a].add(b)
        graph.setdefault(b, set())
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(out)


def describe(edges: Edges, found: list[list[str]]) -> str:
    lines = []
    for component in found:
        lines.append("cycle: " + " <-> ".join(component))
        for (a, b), where in sorted(edges.items()):
            if a in component and b in component:
                lines.append(f"  {a} -> {b}: " + ", ".join(where))
    return "\n".join(lines)


def test_cycles_finds_a_cycle_and_names_its_files() -> None:
    edges = {("a", "b"): ["a/x.py:3"], ("b", "c"): ["b/y.py:9"], ("c", "a"): ["c/z.py:1"], ("c", "d"): ["c/w.py:2"]}
    found = cycles(edges)
    assert found == [["a", "b", "c"]]
    text = describe(edges, found)
    assert "c -> a: c/z.py:1" in text and "c -> d" not in text


def test_lazy_and_type_checking_imports_count(tmp_path: Path) -> None:
    pkg = tmp_path / "kubesched"
    (pkg / "low").mkdir(parents=True)
    (pkg / "high").mkdir()
    (pkg / "low" / "a.py").write_text("def f():\n    from kubesched.high import b\n")
    (pkg / "high" / "b.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from ..low import a\n")
    edges = package_edges(pkg)
    assert edges == {("low", "high"): ["kubesched/low/a.py:2"], ("high", "low"): ["kubesched/high/b.py:3"]}
    assert cycles(edges) == [["high", "low"]]


def test_no_cycle_between_packages() -> None:
    edges = package_edges()
    assert ("app", "plugins") in edges  # the walk sees the tree (a guard against an empty graph)
    found = cycles(edges)
    assert not found, "import cycles between kubesched's packages:\n" + describe(edges, found)

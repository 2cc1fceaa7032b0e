"""No import circle inside ``core``: a package's parts import downwards (data types at the bottom, the CLI on top).

Every ``import`` / ``from ... import`` of every ``core`` module counts, at module level and inside functions (an
import moved into a function to dodge a circle is still a circle), ``if TYPE_CHECKING:`` ones too; relative
imports are resolved. ``from pkg import name`` is an edge to the submodule ``pkg.name`` when there is one, else to
the package (its ``__init__``). A package ``__init__`` that re-exports its children is part of a circle only when
a child imports the package back. Reads the source with :mod:`ast`; imports nothing of ``core``.
"""

from __future__ import annotations

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def module_files(root: Path, package: str) -> dict[str, tuple[Path, bool]]:
    """``{dotted module name: (file, is_package)}`` of every ``.py`` file under ``root / package``."""
    mods = {}
    for path in sorted((root / package).rglob("*.py")):
        parts = list(path.relative_to(root).with_suffix("").parts)
        is_pkg = parts[-1] == "__init__"
        if is_pkg:
            parts = parts[:-1]
        mods[".".join(parts)] = (path, is_pkg)
    return mods


def _targets(node: ast.Import | ast.ImportFrom, module: str, is_pkg: bool, mods: dict) -> list[str]:
    """The dotted names one import statement of ``module`` loads (before mapping onto known modules)."""
    if isinstance(node, ast.Import):
        return [a.name for a in node.names]
    base = node.module or ""
    if node.level:
        pkg = module.split(".") if is_pkg else module.split(".")[:-1]
        pkg = pkg[:len(pkg) - (node.level - 1)]
        base = ".".join([*pkg, base] if base else pkg)
    out = []
    for alias in node.names:
        sub = f"{base}.{alias.name}"
        out.append(sub if sub in mods else base)
    return out


def import_graph(root: Path, package: str) -> dict[str, dict[str, int]]:
    """``{module: {imported module: first line}}`` over the modules of ``package`` (imports of other packages
    are left out; ``a.b.c`` that is not a module maps onto its nearest enclosing module)."""
    mods = module_files(root, package)
    graph: dict[str, dict[str, int]] = {}
    for name, (path, is_pkg) in mods.items():
        edges: dict[str, int] = {}
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
            if not isinstance(node, ast.Import | ast.ImportFrom):
                continue
            for target in _targets(node, name, is_pkg, mods):
                while target and target not in mods:
                    target = target.rpartition(".")[0]
                if target and target != name:
                    edges.setdefault(target, node.lineno)
        graph[name] = edges
    return graph


def cycles(graph: dict[str, dict[str, int]]) -> list[list[str]]:
    """One shortest circle ``[a, b, ..., a]`` per strongly connected component of more than one module (see
    :func:`components` for all the modules of each)."""
    return [c for c, _ in _circles(graph)]


def components(graph: dict[str, dict[str, int]]) -> list[list[str]]:
    """The modules of each strongly connected component of more than one module, sorted."""
    return [comp for _, comp in _circles(graph)]


def _circles(graph: dict[str, dict[str, int]]) -> list[tuple[list[str], list[str]]]:
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []

    def visit(v: str) -> None:  # Tarjan; core is shallow enough for recursion
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                components.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    out = []
    for comp in components:
        start, members = comp[0], set(comp)
        paths = {start: [start]}
        frontier = [start]
        found = None
        while frontier and found is None:  # breadth first: the shortest way back to start
            nxt = []
            for v in frontier:
                for w in sorted(graph[v]):
                    if w == start:
                        found = [*paths[v], start]
                        break
                    if w in members and w not in paths:
                        paths[w] = [*paths[v], w]
                        nxt.append(w)
                if found:
                    break
            frontier = nxt
        out.append((found, comp))
    return out


def describe(cycle: list[str], graph: dict[str, dict[str, int]], root: Path, package: str) -> str:
    mods = module_files(root, package)
    hops = [f"{a} -> {b} ({mods[a][0].relative_to(root)}:{graph[a][b]})" for a, b in zip(cycle, cycle[1:], strict=False)]
    return "; ".join(hops)


def test_core_has_no_import_circle():
    graph = import_graph(REPO, "core")
    assert len(graph) > 50  # the walk found core
    found = [f"{describe(c, graph, REPO, 'core')} (in a circle of {len(comp)}: {', '.join(comp)})"
             for c, comp in _circles(graph)]
    assert not found, "import circles in core (make the lower module not import the upper one):\n" + "\n".join(found)


def _write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def test_the_check_sees_function_level_relative_and_package_circles(tmp_path):
    _write(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/a.py": "from pkg import b\n",
        "pkg/b.py": "def f():\n    from . import a\n",  # function level, relative
        "pkg/sub/__init__.py": "from pkg.sub.child import X\n",  # re-export from a child ...
        "pkg/sub/child.py": "X = 1\n",  # ... that does not import the package back: no circle
        "pkg/sub/other.py": "from ..sub import child\nfrom typing import TYPE_CHECKING\n"
                            "if TYPE_CHECKING:\n    from pkg.sub.leaf import Y\n",
        "pkg/sub/leaf.py": "import pkg.sub.other\nY = 2\n",  # TYPE_CHECKING imports count too
        "pkg/back/__init__.py": "from pkg.back.kid import Z\n",
        "pkg/back/kid.py": "from pkg.back import helper\nZ = 3\n",  # a sibling module: no circle
        "pkg/back/helper.py": "",
        "pkg/loop/__init__.py": "from pkg.loop.kid import W\nNAME = 'x'\n",
        "pkg/loop/kid.py": "from pkg.loop import NAME\nW = NAME\n",  # imports the package back: a circle
    })
    graph = import_graph(tmp_path, "pkg")
    assert graph["pkg.b"] == {"pkg.a": 2}
    found = {tuple(c) for c in cycles(graph)}
    assert found == {("pkg.a", "pkg.b", "pkg.a"), ("pkg.sub.leaf", "pkg.sub.other", "pkg.sub.leaf"),
                     ("pkg.loop", "pkg.loop.kid", "pkg.loop")}
    assert "pkg/b.py:2" in describe(["pkg.a", "pkg.b", "pkg.a"], graph, tmp_path, "pkg")

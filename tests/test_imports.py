"""Imports go down the floors: no module of `python/iwlab` imports, directly or through others,
a module that imports it back. Read with `ast`, so that imports inside functions and under
`TYPE_CHECKING` count as much as those at the top: a circle hidden in a function still ties two
rooms together.

An edge runs from a module to every iwlab module one of its import statements names:
`import a.b` → `a.b`; `from a import b` → `a.b` when that is a module, and `a` itself, whose
`__init__` Python runs first and which may hand out names of its own (so a package `__init__`
that imports its modules, whose modules import through the package, is a circle too).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "python" / "iwlab"



def modules(root: Path) -> dict[str, tuple[Path, bool]]:
    """Dotted name → (file, is a package) for every .py file under `root` (a package folder)."""
    out = {}
    for path in sorted(root.rglob("*.py")):
        parts = list(path.relative_to(root.parent).with_suffix("").parts)
        is_package = parts[-1] == "__init__"
        out[".".join(parts[:-1] if is_package else parts)] = (path, is_package)
    return out


def import_graph(root: Path) -> dict[str, set[str]]:
    """Module → the modules of the same tree that its import statements name (rules above)."""
    mods = modules(root)
    graph: dict[str, set[str]] = {name: set() for name in mods}
    for name, (path, is_package) in mods.items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if isinstance(node, ast.Import):
                graph[name] |= {alias.name for alias in node.names if alias.name in mods}
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:  # relative: from the module's own package, one level up per extra dot
                    package = name.split(".") if is_package else name.split(".")[:-1]
                    package = package[:len(package) - node.level + 1]
                    base = ".".join(package + ([node.module] if node.module else []))
                if base in mods:
                    graph[name].add(base)
                graph[name] |= {f"{base}.{alias.name}" for alias in node.names if f"{base}.{alias.name}" in mods}
        graph[name].discard(name)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[frozenset[str]]:
    """The strongly connected components of more than one module (Tarjan, iteratively)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.add(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(frozenset(component))
    return found


def test_no_import_cycle_in_iwlab() -> None:
    found = [sorted(c) for c in cycles(import_graph(PACKAGE))]
    assert found == [], f"import circles in python/iwlab: {found}"



def _tree(tmp_path: Path, files: dict[str, str]) -> Path:
    root = tmp_path / "pkg"
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


@pytest.mark.parametrize(("files", "expected"), [
    # two modules, one importing the other inside a function
    ({"__init__.py": "", "a.py": "from pkg import b\n", "b.py": "def f():\n    import pkg.a\n"},
     [{"pkg.a", "pkg.b"}]),
    # under TYPE_CHECKING, and through a third module
    ({"__init__.py": "", "a.py": "from pkg.b import X\n", "b.py": "from pkg import c\nX = 1\n",
      "c.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg.a import Y\n"},
     [{"pkg.a", "pkg.b", "pkg.c"}]),
    # a package that imports its module, which imports a sibling through the package
    ({"__init__.py": "", "r/__init__.py": "def g():\n    from pkg.r import m\n", "r/m.py": "from pkg.r import n\n",
      "r/n.py": ""},
     [{"pkg.r", "pkg.r.m"}]),
    # relative imports
    ({"__init__.py": "", "s/__init__.py": "", "s/a.py": "from . import b\n", "s/b.py": "from .a import f\n"},
     [{"pkg.s.a", "pkg.s.b"}]),
    # imports going down only
    ({"__init__.py": "", "a.py": "from pkg import b\nimport pkg.c\n", "b.py": "import pkg.c\n", "c.py": "import json\n"},
     []),
])
def test_the_detector_finds_circles_and_only_circles(tmp_path: Path, files: dict[str, str],
                                                     expected: list[set[str]]) -> None:
    found = cycles(import_graph(_tree(tmp_path, files)))
    assert sorted(map(sorted, found)) == sorted(map(sorted, expected))

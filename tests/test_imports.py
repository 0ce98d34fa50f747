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


# ---- private names stay in their room ----------------------------------------------------------
# A room is what stands right under the package: a sub-package (`iwlab/advise/`), or a module
# with the modules named after it (`iwlab/sweep.py`; `scenario.py` with `scenario_io.py`,
# `scenario_model.py`, `scenario_error.py`). A name with one leading underscore is its room's own: another room that takes
# it (`from iwlab.sweep import _execute`, `sweep._execute(...)` on an imported module, also a module
# found with `importlib.import_module("iwlab.sweep")`) ties itself to code the owner may change.
# `iwlab._core` is the extension itself (pyproject's `module-name`), every room's public floor.
PUBLIC_PRIVATE = {"_core"}


def _room(name: str) -> str:
    parts = name.split(".")
    return parts[1].split("_")[0] if len(parts) > 1 else ""


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__") and name not in PUBLIC_PRIVATE


def _absolute(name: str, is_package: bool, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    package = name.split(".") if is_package else name.split(".")[:-1]
    package = package[:len(package) - node.level + 1]
    return ".".join(package + ([node.module] if node.module else []))


def _loaded(value: ast.expr | None, mods: dict[str, tuple[Path, bool]], getters: dict[str, str]) -> str:
    """The module a call hands out: `import_module("pkg.x")`, or a call of a getter of one."""
    if not isinstance(value, ast.Call):
        return ""
    func = getattr(value.func, "attr", getattr(value.func, "id", ""))
    if func == "import_module" and value.args and isinstance(value.args[0], ast.Constant):
        return value.args[0].value if value.args[0].value in mods else ""
    return getters.get(func, "")


def private_imports(root: Path) -> list[str]:
    """`file:line: what` for every private name one room takes from another (rules above)."""
    mods = modules(root)
    trees = {name: ast.parse(path.read_text(encoding="utf-8"), str(path)) for name, (path, _) in mods.items()}
    # functions that hand out a module: `def m(): return importlib.import_module("pkg.x")`
    getters = {f.name: _loaded(ret.value, mods, {}) for tree in trees.values() for f in ast.walk(tree)
               if isinstance(f, ast.FunctionDef) for ret in ast.walk(f)
               if isinstance(ret, ast.Return) and _loaded(ret.value, mods, {})}
    found = []
    for name, (path, is_package) in mods.items():
        tree = trees[name]
        bound: dict[str, str] = {}  # local name → the iwlab module it holds
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name in mods and alias.asname:
                        bound[alias.asname] = alias.name
            elif isinstance(node, ast.ImportFrom):
                base = _absolute(name, is_package, node)
                for alias in node.names:
                    target = f"{base}.{alias.name}"
                    if target in mods:
                        bound[alias.asname or alias.name] = target
                    owner = target if target in mods else base
                    if (_private(alias.name) and owner.split(".")[0] == root.name
                            and _room(owner) != _room(name)):
                        found.append(f"{path.name}:{node.lineno}: from {base} import {alias.name}")
            elif (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)
                  and _loaded(node.value, mods, getters)):
                bound[node.targets[0].id] = _loaded(node.value, mods, getters)
        for node in ast.walk(tree):
            if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and _private(node.attr)
                    and node.value.id in bound and _room(bound[node.value.id]) != _room(name)):
                found.append(f"{path.name}:{node.lineno}: {bound[node.value.id]}.{node.attr}")
    return sorted(found)


def test_no_room_takes_another_rooms_private_names() -> None:
    found = private_imports(PACKAGE)
    assert found == [], f"private names taken across rooms of python/iwlab: {found}"


@pytest.mark.parametrize(("files", "expected"), [
    # from another room: a private function, a private module
    ({"__init__.py": "", "a.py": "def _f(): pass\n", "b/__init__.py": "", "b/c.py": "from pkg.a import _f\n"},
     ["c.py:1: from pkg.a import _f"]),
    ({"__init__.py": "", "a/__init__.py": "", "a/_m.py": "", "b.py": "from pkg.a import _m\n"},
     ["b.py:1: from pkg.a import _m"]),
    # through a module bound by import, or by importlib
    ({"__init__.py": "", "a.py": "", "b.py": "import pkg.a as a\na._x\n"}, ["b.py:2: pkg.a._x"]),
    ({"__init__.py": "", "a.py": "", "ab.py": "from pkg import a\na._x\n"}, ["ab.py:2: pkg.a._x"]),
    ({"__init__.py": "", "a.py": "", "b.py": "import importlib\nm = importlib.import_module('pkg.a')\nm._run()\n"},
     ["b.py:3: pkg.a._run"]),
    ({"__init__.py": "", "a.py": "", "b.py": "import importlib\ndef a_module():\n    return importlib.import_module('pkg.a')\n",
      "c.py": "from pkg.b import a_module\ndef f():\n    a = a_module()\n    return a._T\n"},
     ["c.py:4: pkg.a._T"]),
    # allowed: inside one room (relative too), dunders, the extension, other packages' names
    ({"__init__.py": "from pkg import _core\n", "_core.py": "", "r/__init__.py": "", "r/a.py": "_t = 1\n",
      "r/b.py": "from pkg.r.a import _t\nfrom .a import _t as t\nfrom pkg import __doc__\nfrom os import _exit\n",
      "s.py": "_u = 1\n", "s_io.py": "from pkg.s import _u\n"},
     []),
])
def test_the_private_name_detector(tmp_path: Path, files: dict[str, str], expected: list[str]) -> None:
    assert private_imports(_tree(tmp_path, files)) == expected

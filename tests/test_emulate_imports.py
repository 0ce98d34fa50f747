"""The emulator's modules import down the floors only: no import cycle inside iwlab.emulate,
counting imports placed inside functions and imports of the package itself (`from
iwlab.emulate import x` runs iwlab/emulate/__init__.py, which imports the plan and the runner)."""

from __future__ import annotations

import ast
from pathlib import Path

import iwlab

PKG = Path(iwlab.__file__).parent / "emulate"


def _module(path: Path) -> str:
    return "iwlab.emulate" if path.name == "__init__.py" else f"iwlab.emulate.{path.stem}"


def _edges() -> dict[str, set[str]]:
    mods = {_module(p) for p in PKG.glob("*.py")}
    out: dict[str, set[str]] = {}
    for p in PKG.glob("*.py"):
        deps = set()
        for node in ast.walk(ast.parse(p.read_text())):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                # `from iwlab.emulate import dists` imports the package first, then the submodule.
                names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
            else:
                continue
            deps |= {n for n in names if n in mods}
        me = _module(p)
        # Importing a submodule runs its package's __init__ first: only an edge when the code
        # names the package itself (counted above), not for every submodule.
        out[me] = deps - {me}
    return out


def _cycle(edges: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(m: str) -> list[str] | None:
        state[m] = 1
        stack.append(m)
        for d in sorted(edges.get(m, ())):
            if state.get(d) == 1:
                return stack[stack.index(d):] + [d]
            if d not in state and (c := visit(d)):
                return c
        state[m] = 2
        stack.pop()
        return None

    for m in sorted(edges):
        if m not in state and (c := visit(m)):
            return c
    return None


def test_the_emulator_has_no_import_cycle():
    assert _cycle(_edges()) is None, " -> ".join(_cycle(_edges()) or [])


def test_the_cycle_finder_finds_a_cycle():
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set()}) is None

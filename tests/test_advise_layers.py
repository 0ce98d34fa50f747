"""iwlab.advise and iwlab.adaptive import downwards only: no module imports, even inside a
function, a module that imports it back (types.py is the floor the others share)."""

from __future__ import annotations

import ast
from pathlib import Path

PKG = Path(__file__).resolve().parents[1] / "python" / "iwlab"


def _graph() -> dict[str, set[str]]:
    mods = {f"iwlab.{p.relative_to(PKG).with_suffix('').as_posix().replace('/', '.')}".removesuffix(".__init__"): p
            for d in ("advise", "adaptive") for p in (PKG / d).glob("*.py")}
    g: dict[str, set[str]] = {m: set() for m in mods}
    for m, p in mods.items():
        for node in ast.walk(ast.parse(p.read_text())):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module or ""] if isinstance(node, ast.ImportFrom) else []
            for n in names:
                if n in mods and n != m and not n.endswith((".advise", ".adaptive")):
                    g[m].add(n)
    return g


def test_the_advise_and_adaptive_modules_import_without_circles():
    g = _graph()
    assert "iwlab.advise.types" in g and "iwlab.adaptive.candidates" in g
    state: dict[str, int] = {}

    def visit(m: str, path: list[str]) -> None:
        state[m] = 1
        for n in sorted(g[m]):
            assert state.get(n) != 1, " -> ".join([*path, m, n])
            if n not in state:
                visit(n, [*path, m])
        state[m] = 2

    for m in sorted(g):
        if m not in state:
            visit(m, [])
    # The floor imports nothing above it.
    assert not (g["iwlab.advise.types"] - {"iwlab.advise.profile"}), g["iwlab.advise.types"]


def test_the_adaptive_comparisons_keep_their_public_names():
    import iwlab.adaptive as adaptive

    assert {"POLICIES", "policy_sets", "compare", "markdown"} <= set(dir(adaptive))
    assert sorted(adaptive.POLICIES) == ["ai", "fb", "le"]

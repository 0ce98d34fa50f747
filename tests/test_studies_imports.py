"""The studies package has no import circle: `model` (shared types) is the floor, `claims` and
`report` build on it, `base` writes results, the study modules sit on top. Every import counts,
also one inside a function (a lazy import hides a circle, it does not cut it)."""

import ast
from pathlib import Path

import iwlab.studies

ROOT = Path(iwlab.studies.__file__).parent


def _graph() -> dict[str, set[str]]:
    """Module → the studies modules it imports (a package's `__init__` is the package's name)."""
    mods = {}
    for path in ROOT.rglob("*.py"):
        parts = path.relative_to(ROOT).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        if name:
            mods[name] = path
    graph: dict[str, set[str]] = {m: set() for m in mods}
    for m, path in mods.items():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("iwlab.studies."):
                target = node.module.removeprefix("iwlab.studies.")
                if target in mods and target != m:
                    graph[m].add(target)
    return graph


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(m: str) -> list[str] | None:
        state[m] = 1
        stack.append(m)
        for n in sorted(graph[m]):
            if state.get(n) == 1:
                return stack[stack.index(n):] + [n]
            if n not in state and (found := visit(n)):
                return found
        state[m] = 2
        stack.pop()
        return None

    for m in sorted(graph):
        if m not in state and (found := visit(m)):
            return found
    return None


def test_the_studies_package_has_no_import_circle():
    graph = _graph()
    assert {"model", "claims", "report", "base", "rfc2415", "rfc2415.ledger"} <= set(graph)
    assert graph["model"] == set(), "model is the floor: it imports no other studies module"
    assert _cycle(graph) is None, " → ".join(_cycle(graph))


def test_the_cycle_finder_finds_a_circle():
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set()}) is None

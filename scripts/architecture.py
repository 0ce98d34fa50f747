"""The rooms of docs/architecture.md, measured from the code: the Rust crates (each
Cargo.toml's description and its path dependencies), the Python rooms (each package or
top-level module of python/iwlab, the first sentence of its docstring, and the rooms it
imports, read with `ast`), and the import graph of both, written between the
`<!-- rooms:begin -->` / `<!-- rooms:end -->` markers; the prose around them is written by hand.

    python3 scripts/architecture.py           # rewrite the section
    python3 scripts/architecture.py --check   # exit 1 if it is out of date

tests/test_architecture.py runs the check. It reads files only (the standard library, and tomli
before Python 3.11): it runs without the extension.
"""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "architecture.md"
PKG = ROOT / "python" / "iwlab"
BEGIN, END = "<!-- rooms:begin -->", "<!-- rooms:end -->"
# The extension module is the iwlab-py crate (maturin's `module-name = "iwlab._core"`).
EXTENSION = ("_core", "iwlab-py")


def _sentence(text: str | None) -> str:
    """The first sentence of a docstring's first paragraph, on one line."""
    para = " ".join((text or "").split("\n\n")[0].split())
    m = re.match(r"(.+?\.)(\s|$)", para)
    return (m.group(1) if m else para).rstrip(":").replace("|", "\\|")


def crates() -> list[tuple[str, str, list[str]]]:
    """(name, description, workspace crates it depends on) of each crate, by name."""
    out = []
    for toml in sorted(ROOT.glob("crates/*/Cargo.toml")):
        c = tomllib.loads(toml.read_text())
        deps = [name for name, d in c.get("dependencies", {}).items() if isinstance(d, dict) and "path" in d]
        out.append((c["package"]["name"], c["package"].get("description", ""), sorted(deps)))
    return out


def _rooms() -> dict[str, Path]:
    """Room name -> the file whose docstring describes it (a package's __init__.py)."""
    rooms = {}
    for p in sorted(PKG.iterdir()):
        if p.is_dir() and (p / "__init__.py").exists():
            rooms[p.name] = p / "__init__.py"
        elif p.suffix == ".py" and p.stem != "__init__":
            rooms[p.stem] = p
    return rooms


def _imports(f: Path, rooms: dict[str, Path]) -> set[str]:
    """The rooms (and `_core`) that file `f` imports, at its top or inside functions."""
    package = ["iwlab", *f.relative_to(PKG).parts[:-1]]
    out = set()
    for n in ast.walk(ast.parse(f.read_text())):
        if isinstance(n, ast.Import):
            names = [a.name for a in n.names]
        elif isinstance(n, ast.ImportFrom):
            base = ".".join(package[:len(package) - n.level + 1] + [n.module or ""]) if n.level else n.module or ""
            base = base.rstrip(".")
            names = [base, *(f"{base}.{a.name}" for a in n.names)]
        else:
            continue
        for name in names:
            parts = name.split(".")
            if len(parts) > 1 and parts[0] == "iwlab" and (parts[1] in rooms or parts[1] == EXTENSION[0]):
                out.add(parts[1])
    return out


def python_rooms() -> list[tuple[str, str, list[str]]]:
    """(room, what it is, rooms it imports) of each package and top-level module of python/iwlab."""
    rooms = _rooms()
    out = []
    for name, doc in rooms.items():
        files = sorted(doc.parent.rglob("*.py")) if doc.name == "__init__.py" else [doc]
        imported = set().union(*(_imports(f, rooms) for f in files)) - {name}
        out.append((name, _sentence(ast.get_docstring(ast.parse(doc.read_text()))), sorted(imported)))
    return out


def _node(name: str) -> str:
    return re.sub(r"\W", "_", name)


def section() -> str:
    cs, ps = crates(), python_rooms()
    lines = [BEGIN, "", "### Rust crates (crates/)", "", "| crate | what it is | depends on |", "|---|---|---|"]
    lines += [f"| `{n}` | {d} | {', '.join(f'`{x}`' for x in deps) or '—'} |" for n, d, deps in cs]
    lines += ["", "### Python rooms (python/iwlab/)", "",
              f"`{EXTENSION[0]}` is the extension module, the `{EXTENSION[1]}` crate.", "",
              "| room | what it is | imports |", "|---|---|---|"]
    lines += [f"| `{n}` | {d} | {', '.join(f'`{x}`' for x in deps) or '—'} |" for n, d, deps in ps]
    imports = {n: set(deps) for n, _, deps in ps}
    both = [f"`{a}` ↔ `{b}`" for a in sorted(imports) for b in sorted(imports[a]) if a < b and a in imports.get(b, ())]
    lines += ["", "Rooms that import each other (different modules of each: no module imports, directly or "
              "through others, one that imports it back, tests/test_imports.py): " + (", ".join(both) or "none") + "."]
    lines += ["", "### The import graph", "", "An arrow A → B: A imports B (Python, also inside functions) or "
              "depends on B (Cargo).", "", "```mermaid", "flowchart LR", "  subgraph rust [crates]"]
    lines += [f"    {_node(n)}[{n}]" for n, _, _ in cs]
    lines += ["  end", "  subgraph python [python/iwlab]"]
    lines += [f"    py_{_node(n)}[{n}]" for n, _, _ in ps]
    lines += ["  end"]
    lines += [f"  {_node(n)} --> {_node(d)}" for n, _, deps in cs for d in deps]
    for n, _, deps in ps:
        for d in deps:
            target = _node(EXTENSION[1]) if d == EXTENSION[0] else f"py_{_node(d)}"
            lines.append(f"  py_{_node(n)} --> {target}")
    lines += ["```", "", END]
    return "\n".join(lines)


def doc_text() -> str:
    text = DOC.read_text()
    a, b = text.index(BEGIN), text.index(END) + len(END)
    return text[:a] + section() + text[b:]


def main(argv: list[str]) -> int:
    want = doc_text()
    if want == DOC.read_text():
        return 0
    if "--check" in argv:
        print(f"{DOC.relative_to(ROOT)} is out of date: run scripts/architecture.py", file=sys.stderr)
        return 1
    DOC.write_text(want)
    print(f"wrote {DOC.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

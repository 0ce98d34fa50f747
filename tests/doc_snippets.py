"""The commands and Python snippets the documents show, extracted from their fenced code blocks.

A command is a line of a fenced block (any language but `python`) that starts with `iwlab`,
`.venv/bin/iwlab`, `make`, `python` or `.venv/bin/python`; a trailing `\\` joins the next line, a
`# comment` is dropped, and the block's shell assignments (`P='…'`) go with it. Output lines
(`iwlab: …`) are not commands. A ```python block is one snippet, run as a script.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOCUMENTS = ("README.md", "docs/*.md")

_FENCE = re.compile(r"^```(\w*)[^\n]*\n(.*?)^```", re.M | re.S)
_COMMAND = re.compile(r"^(?:sudo\s+)?(?:\.venv/bin/)?(?:iwlab|make|python)(?:\s|$)")
_ASSIGN = re.compile(r"^[A-Z_][A-Z0-9_]*=")


@dataclass(frozen=True)
class Snippet:
    doc: str  # the document, relative to the repository
    line: int  # where the snippet starts in it
    kind: str  # "command" or "python"
    text: str  # the command (one line, comment dropped) or the Python source
    setup: str = ""  # the block's shell assignments a command uses

    @property
    def where(self) -> str:
        return f"{self.doc}:{self.line}"


def documents() -> list[Path]:
    return sorted({p for pat in DOCUMENTS for p in ROOT.glob(pat)})


def _drop_comment(line: str) -> str:
    """The line without a trailing shell comment (a `#` that starts a word outside quotes)."""
    out, quote = [], None
    for i, ch in enumerate(line):
        if quote:
            quote = None if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch == "#" and (i == 0 or line[i - 1].isspace()):
            break
        out.append(ch)
    return "".join(out).rstrip()


def _unprompt(line: str) -> str:
    """A transcript's `$ command` is the command."""
    line = line.strip()
    return line[2:] if line.startswith("$ ") else line


def _open_quote(line: str) -> bool:
    """Whether the line ends inside a quoted string (the command goes on on the next line)."""
    quote = None
    for ch in line:
        if quote:
            quote = None if ch == quote else quote
        elif ch in "'\"":
            quote = ch
    return quote is not None


def snippets(doc: Path) -> list[Snippet]:
    text = doc.read_text()
    rel = str(doc.relative_to(ROOT))
    out = []
    for m in _FENCE.finditer(text):
        lang, body = m.group(1), m.group(2)
        first = text.count("\n", 0, m.start(2)) + 1
        if lang == "python":
            out.append(Snippet(rel, first, "python", body))
            continue
        lines = body.splitlines()
        assigns = []
        i = 0
        while i < len(lines):
            start, line = i, _drop_comment(_unprompt(lines[i]))
            while i + 1 < len(lines) and (line.endswith("\\") or _open_quote(line)):
                i += 1
                if _open_quote(line):  # a quoted argument over several lines keeps its newlines
                    line += "\n" + lines[i]
                else:
                    line = line[:-1].rstrip() + " " + _drop_comment(lines[i].strip())
            i += 1
            line = line if _open_quote(line) or "\n" in line else " ".join(line.split()) if "'" not in line else line
            if _ASSIGN.match(line):
                assigns.append(line)
            elif _COMMAND.match(line):
                setup = "\n".join(a for a in assigns if "$" + a.split("=", 1)[0] in line)
                out.append(Snippet(rel, first + start, "command", line, setup))
    return out


def all_snippets() -> list[Snippet]:
    return [s for d in documents() for s in snippets(d)]

"""Linux conformance: packetdrill scripts run against one engine endpoint with the linux profile.

The interpreter is Rust (crates/iwlab-conform); this module is its Python face. `run(paths)`
returns a `ConformReport`: the exit code (0 all passed, 1 the engine differs in one, 3 the rest
need something not modelled, 2 one cannot be parsed or run), the text report and the JSON one
as a dict. `render_report(data, "md" | "html")` writes the per-script verdicts and the table of
engine rules the failures touch. docs/conformance.md describes the language, the tcp_info
fields and the sysctls modelled.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from html import escape
from os import PathLike

__all__ = ["ConformReport", "render_report", "run"]


@dataclass(frozen=True)
class ConformReport:
    exit_code: int
    text: str
    data: dict


def run(paths: list[str | PathLike[str]], tolerance_usecs: int | None = None) -> ConformReport:
    """Runs each script; `tolerance_usecs` overrides the scripts' own (default 4000 µs)."""
    from iwlab import _core

    code, text, js = _core.conform([str(p) for p in paths], tolerance_usecs)
    return ConformReport(code, text, json.loads(js))


def _rows(data: dict) -> tuple[list[list[str]], list[list[str]]]:
    """(per-script rows, per-rule rows) of the report's two tables, as plain text cells."""
    scripts = []
    rules: dict[str, dict] = {}
    for s in data["scripts"]:
        line = str(s.get("line", ""))
        if s["status"] == "PASS":
            scripts.append([s["path"], "PASS", "", "", "", ""])
            continue
        expected = s.get("expected") or s.get("error", "")
        actual = s.get("actual", "")
        if "needs" in s:
            actual = f"{actual} — needs line {s['needs']['line']}: {s['needs']['what']}" if actual else s["needs"]["what"]
        rule = s.get("rule", {}).get("label", "")
        scripts.append([s["path"], s["status"], line, expected, actual, rule])
        if "rule" in s:
            r = rules.setdefault(s["rule"]["id"], {"label": s["rule"]["label"], "kernel": s["rule"]["kernel"], "at": []})
            r["at"].append(f"{s['path']}:{line}")
    rule_rows = [[r["label"], str(len(r["at"])), ", ".join(r["at"]), r["kernel"]] for r in rules.values()]
    return scripts, rule_rows


def render_report(data: dict, fmt: str = "md") -> str:
    """The report as markdown (`fmt="md"`) or a standalone HTML page (`fmt="html"`): a count per
    status, each script's verdict with its first differing line (expected vs the engine), and
    which engine rule each failure touches."""
    scripts, rules = _rows(data)
    summary = data["summary"]
    heads = (["script", "status", "line", "expected", "engine", "rule"], ["engine rule", "scripts", "where", "kernel"])
    title = "packetdrill scripts on the engine"
    counts = ", ".join(f"{k} {v}" for k, v in summary.items())
    if fmt == "html":
        def table(head, rows):
            th = "".join(f"<th>{escape(h)}</th>" for h in head)
            body = "".join("<tr>" + "".join(f"<td>{escape(c)}</td>" for c in r) + "</tr>" for r in rows)
            return f"<table><tr>{th}</tr>{body}</table>"

        style = "table{border-collapse:collapse}td,th{border:1px solid #999;padding:2px 6px;vertical-align:top}"
        return (f"<!doctype html><html><head><meta charset='utf-8'><title>{title}</title><style>{style}</style>"
                f"</head><body><h1>{title}</h1><p>{escape(counts)}</p><h2>Scripts</h2>{table(heads[0], scripts)}"
                f"<h2>Engine rules the failures touch</h2>{table(heads[1], rules)}</body></html>\n")
    if fmt != "md":
        raise ValueError(f"report format {fmt!r}: expected 'md' or 'html'")

    def md(head, rows):
        cell = lambda c: c.replace("|", "\\|").replace("\n", " ")  # noqa: E731
        lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        return "\n".join(lines + ["| " + " | ".join(cell(c) for c in r) + " |" for r in rows])

    return (f"# {title}\n\n{counts}\n\n## Scripts\n\n{md(heads[0], scripts)}\n\n"
            f"## Engine rules the failures touch\n\n{md(heads[1], rules)}\n")

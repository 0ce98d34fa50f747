"""Builds the HTML report of a sweep or run directory: picks the kind, renders, writes."""

from __future__ import annotations

from pathlib import Path

from iwlab.report import html, run_report, sweep_report

__all__ = ["build_report", "render"]


def render(path: str | Path) -> str:
    """The HTML report of `path`: a sweep directory (has manifest.json) or a run directory
    (flows/pages/links/queues .parquet, summary.json, scenario.toml)."""
    path = Path(path)
    if (path / "manifest.json").exists():
        title, subtitle, blocks = sweep_report.build(path)
    elif (path / "summary.json").exists():
        title, subtitle, blocks = run_report.build(path)
    elif path.is_dir():
        raise FileNotFoundError(f"{path}: neither a sweep directory (manifest.json) nor a run directory "
                                "(summary.json, flows.parquet, …)")
    else:
        raise FileNotFoundError(f"{path}: no such directory")
    return html.document(title, blocks, subtitle)


def build_report(path: str | Path, out: str | Path | None = None) -> Path:
    """Writes the report of `path` to `out` (default `path/report.html`) and returns its path."""
    text = render(path)
    out = Path(out) if out is not None else Path(path) / "report.html"
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(f".{out.name}.tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(out)
    return out

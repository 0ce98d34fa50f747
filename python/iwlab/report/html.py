"""A self-contained HTML page: inline CSS, figures as base64 PNG, no scripts, no external URLs."""

from __future__ import annotations

import base64
import html
from collections.abc import Mapping
from typing import Any

import pandas as pd

_CSS = """
body { font-family: sans-serif; margin: 2em auto; max-width: 72em; color: #222; line-height: 1.4; }
h1 { font-size: 1.6em; border-bottom: 2px solid #345; padding-bottom: .2em; }
h2 { font-size: 1.25em; margin-top: 2em; color: #234; }
figure { margin: 1em 0; }
figure img { max-width: 100%; height: auto; border: 1px solid #ddd; }
figcaption { font-size: .9em; color: #555; }
table { border-collapse: collapse; font-size: .85em; margin: .5em 0; }
th, td { border: 1px solid #ccc; padding: .2em .5em; text-align: right; }
th { background: #eef2f6; }
td:first-child, th:first-child { text-align: left; }
pre { background: #f6f8fa; border: 1px solid #ddd; padding: .8em; overflow: auto; max-height: 32em; font-size: .8em; }
.scroll { overflow-x: auto; }
summary { cursor: pointer; margin: .5em 0; }
.note { background: #fff8e1; border-left: 4px solid #f0b400; padding: .4em .8em; }
.meta { color: #555; }
"""


def esc(text: Any, quote: bool = False) -> str:
    """Escapes text content (and quotes too, for attribute values)."""
    return html.escape(str(text), quote=quote)


def document(title: str, blocks: list[str], subtitle: str = "") -> str:
    sub = f'<p class="meta">{esc(subtitle)}</p>' if subtitle else ""
    body = "\n".join(blocks)
    return (f'<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n<title>{esc(title)}</title>\n'
            f"<style>{_CSS}</style>\n</head>\n<body>\n<h1>{esc(title)}</h1>\n{sub}\n{body}\n</body>\n</html>\n")


def section(title: str, *blocks: str) -> str:
    return f"<section>\n<h2>{esc(title)}</h2>\n" + "\n".join(blocks) + "\n</section>"


def figure(png: bytes, caption: str, alt: str) -> str:
    data = base64.b64encode(png).decode("ascii")
    return (f'<figure><img src="data:image/png;base64,{data}" alt="{esc(alt, quote=True)}">'
            f"<figcaption>{esc(caption)}</figcaption></figure>")


def note(text: str) -> str:
    return f'<p class="note">{esc(text)}</p>'


def para(text: str) -> str:
    return f"<p>{esc(text)}</p>"


def pre(text: str) -> str:
    return f"<pre>{esc(text)}</pre>"


def details(summary: str, *blocks: str) -> str:
    return f"<details><summary>{esc(summary)}</summary>\n" + "\n".join(blocks) + "\n</details>"


def fmt(v: Any) -> str:
    if isinstance(v, float):
        return "–" if v != v else f"{v:.4g}"
    return str(v)


def table(df: pd.DataFrame) -> str:
    """A plain table: every cell formatted with `fmt` and escaped."""
    head = "".join(f"<th>{esc(c)}</th>" for c in df.columns)
    rows = "".join("<tr>" + "".join(f"<td>{esc(fmt(v))}</td>" for v in row) + "</tr>"
                   for row in df.itertuples(index=False, name=None))
    return f'<div class="scroll"><table><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table></div>'


def kv_table(items: Mapping[str, Any]) -> str:
    return table(pd.DataFrame({"": list(items), "value": [fmt(v) for v in items.values()]}))

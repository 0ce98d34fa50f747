"""HTML of a study and of the `reproduce all` summary page (self-contained: images embedded)."""

from __future__ import annotations

import base64
import html
from typing import Sequence

from iwlab.studies.claims import claims_html, errata_html, summary_line
from iwlab.studies.inventory import not_checked_html
from iwlab.studies.model import StudyResult, Table


def _esc(s: object) -> str:
    return html.escape(str(s))


def _table(t: Table) -> str:
    cols = list(t.frame.columns)
    head = "".join(f"<th>{_esc(c)}</th>" for c in [t.frame.index.name or "", *cols])
    rows = []
    for r in t.frame.index:
        cells = []
        for c in cols:
            v = t.frame.loc[r, c]
            if v != v:  # NaN
                cells.append("<td>—</td>")
                continue
            s = t.fmt.format(v)
            if t.low is not None and t.high is not None and t.low.loc[r, c] == t.low.loc[r, c]:
                lo, hi = t.low.loc[r, c], t.high.loc[r, c]
                if lo != hi:
                    s += f"<br><small>[{t.fmt.format(lo)}, {t.fmt.format(hi)}]</small>"
            cells.append(f"<td>{s}</td>")
        rows.append(f"<tr><th>{_esc(r)}</th>{''.join(cells)}</tr>")
    note = f"<p class=note>{_esc(t.note)}</p>" if t.note else ""
    return (f"<h3 id='{_esc(t.name)}'>{_esc(t.name)}: {_esc(t.title)}</h3>"
            f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>{note}")


STYLE = """body{font-family:system-ui,sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;color:#222}
table{border-collapse:collapse;margin:.5em 0}td,th{border:1px solid #ccc;padding:.25em .6em;text-align:right}
th{background:#f4f4f4}small{color:#666}img{max-width:100%;border:1px solid #eee}.note{color:#555;font-size:.9em}
pre{background:#f8f8f8;padding:.6em;overflow:auto;font-size:.85em}
.banner{background:#fff3cd;border:1px solid #e0c36a;padding:.5em .8em}
.pair{display:flex;gap:2em}.pair>div{flex:1}table.claims td,table.claims th{vertical-align:top}"""


def page(title: str, body: Sequence[str]) -> str:
    return (f"<!doctype html><html lang=en><meta charset=utf-8><title>{_esc(title)}</title>"
            f"<style>{STYLE}</style><body><h1>{_esc(title)}</h1>{''.join(body)}</body></html>")


def study_html(res: StudyResult) -> str:
    body = []
    mode = res.setup.get("mode")
    if mode not in (None, "full"):
        body.append(f"<p class=banner><b>{_esc(mode.capitalize())} mode</b>: {_esc(res.setup.get('seeds'))} seeds, "
                    "shorter runs. Intervals are wider than in full mode, so verdicts lean to inconclusive; the "
                    "verdicts of record are full mode's.</p>")
    if res.claims:
        body.append(claims_html(res.claims, [f.name for f in res.figures], res.claims_ja))
        body.append(not_checked_html(res.study))
    if res.errata:
        body.append(errata_html(res.errata))
    if res.conclusions:
        body.append("<h2>What our data shows</h2><ul>" + "".join(f"<li>{_esc(c)}</li>" for c in res.conclusions) + "</ul>")
    if res.conclusions_ja:
        body.append("<h2 lang=ja>結果の要約</h2><ul lang=ja>" + "".join(f"<li>{_esc(c)}</li>" for c in res.conclusions_ja) + "</ul>")
    body.append("<h2>Tables</h2>" + "".join(_table(t) for t in res.tables))
    if res.figures:
        body.append("<h2>Figures</h2>")
        for f in res.figures:
            b64 = base64.b64encode(f.png).decode()
            body.append(f"<figure id='{_esc(f.name)}'><img alt='{_esc(f.caption)}' src='data:image/png;base64,{b64}'>"
                        f"<figcaption>{_esc(f.caption)}</figcaption></figure>")
    if res.notes:
        body.append("<h2>Model and parameters</h2><ul>" + "".join(f"<li>{_esc(n)}</li>" for n in res.notes) + "</ul>")
    body.append("<h2>Setup</h2><pre>" + _esc("\n".join(f"{k}: {v}" for k, v in res.setup.items())) + "</pre>")
    return page(res.title, body)


def summary_html(results: Sequence[tuple[StudyResult, str]]) -> str:
    """One page: each study's conclusions and a link to its report (`href`)."""
    body = ["<p>Conclusions as iwlab's simulations show them. Each study's report has the tables "
            "(every cell with a 95 % bootstrap interval across seeds) and figures.</p>"]
    every = [j for res, _ in results for j in res.claims]
    if every:
        body.append(f"<p><b>{_esc(summary_line(every, 'All studies'))}</b></p>")
    for res, href in results:
        if res.claims:
            body.append(f"<p>{_esc(summary_line(res.claims, res.study))} — <a href='{_esc(href)}#claims'>ledger</a></p>")
        items = "".join(f"<li>{_esc(c)}</li>" for c in res.conclusions) or "<li>(no conclusions)</li>"
        body.append(f"<h2><a href='{_esc(href)}'>{_esc(res.title)}</a></h2><ul>{items}</ul>")
        if res.conclusions_ja:
            body.append("<ul lang=ja>" + "".join(f"<li>{_esc(c)}</li>" for c in res.conclusions_ja) + "</ul>")
    return page("iwlab: the founding IW studies reproduced", body)

"""Claims ledgers: what each founding document claims, the number it publishes, our number with its
95 % interval, and a verdict computed by a rule written next to the claim (issue 14).

A study module declares its ledger as data — `ledger(...) -> list[Claim]` — and computes its
`Evidence` (its tables plus named cells such as paired per-seed differences). `judge` applies every
claim's rule to the evidence; nothing here is hand-written per claim except the rule and its
parameters, which are printed with the verdict. `where_it_holds` re-judges the claims that were *not
reproduced* against the same study run under other model choices (variants) and reports the region
where each would hold.

Verdicts: `reproduced`, `partly` (some conditions, or the direction without significance — the
detail says which), `not reproduced`, `not testable` (the reason is given).
"""

from __future__ import annotations

import html
import math
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

import pandas as pd

from iwlab.studies.base import Cell, Table

__all__ = ["VERDICTS", "Between", "Check", "Claim", "Direction", "Evidence", "Exact", "Judged", "Near",
           "NotTestable", "Ref", "Row", "Where", "claims_frame", "claims_html", "claims_text", "counts",
           "judge", "summary_line", "where_it_holds", "where_text"]

VERDICTS = ("reproduced", "partly", "not reproduced", "not testable")
VERDICTS_JA = {"reproduced": "再現された", "partly": "一部再現された", "not reproduced": "再現されなかった",
               "not testable": "検証できない"}
CSV_COLUMNS = ["study", "claim_id", "source", "claim", "condition", "published", "ours", "ci_lo", "ci_hi", "verdict",
               "diff", "unit", "claim_verdict", "rule", "why", "where", "link"]


def _fmt(x: float | None, digits: int = 3) -> str:
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return "—"
    return f"{x:.{digits}g}"


# ---------------------------------------------------------------------------------------------
# Rules: each has a sentence (printed beside the claim) and a judgement of one cell.


@dataclass(frozen=True)
class Near:
    """A published number against ours: *reproduced* when the published value lies in our 95 % CI
    widened by max(`tol`, `rel` × |published|); *partly* when it lies within the looser band
    max(`partly_tol`, `partly_rel` × |published|) or — with `sign_ref` — ours and the published value
    sit on the same side of `sign_ref` with our CI excluding it; otherwise *not reproduced*."""

    tol: float = 0.0
    rel: float = 0.0
    partly_tol: float = 0.0
    partly_rel: float = 0.0
    sign_ref: float | None = None
    unit: str = ""

    def _band(self, published: float, a: float, r: float) -> float:
        return max(a, r * abs(published))

    def text(self) -> str:
        u = f" {self.unit}" if self.unit else ""
        tight = " or ".join(x for x in (f"±{self.tol:g}{u}" if self.tol else "",
                                        f"±{100 * self.rel:g} % of it" if self.rel else "") if x) or "±0"
        loose = " or ".join(x for x in (f"±{self.partly_tol:g}{u}" if self.partly_tol else "",
                                        f"±{100 * self.partly_rel:g} %" if self.partly_rel else "") if x)
        s = f"reproduced when the published value lies within our 95 % CI widened by {tight}"
        parts = []
        if loose:
            parts.append(f"within {loose}")
        if self.sign_ref is not None:
            parts.append(f"on the same side of {self.sign_ref:g} as ours with our CI excluding {self.sign_ref:g}")
        if parts:
            s += "; partly when " + " or ".join(parts)
        return s + "; otherwise not reproduced"

    def judge(self, ours: Cell | None, published: float | None) -> tuple[str, str]:
        if published is None:
            return "not testable", "no published number"
        if ours is None or not math.isfinite(ours.value):
            return "not testable", "no data for this condition in this run"
        lo, hi = (ours.lo, ours.hi) if math.isfinite(ours.lo) else (ours.value, ours.value)
        w = self._band(published, self.tol, self.rel)
        if lo - w <= published <= hi + w:
            return "reproduced", f"published {_fmt(published)} within [{_fmt(lo - w)}, {_fmt(hi + w)}]"
        w2 = self._band(published, self.partly_tol, self.partly_rel)
        if w2 > w and lo - w2 <= published <= hi + w2:
            return "partly", f"published {_fmt(published)} within the looser band [{_fmt(lo - w2)}, {_fmt(hi + w2)}]"
        if self.sign_ref is not None:
            r = self.sign_ref
            same = (published > r and lo > r) or (published < r and hi < r)
            if same:
                return "partly", f"same side of {r:g} as published, value off by {_fmt(ours.value - published)}"
        return "not reproduced", f"ours {_fmt(ours.value)} [{_fmt(lo)}, {_fmt(hi)}] vs published {_fmt(published)}"


@dataclass(frozen=True)
class Direction:
    """A direction: *reproduced* when our whole 95 % CI lies on the claimed side of `ref`; *partly*
    when only the mean does; *not reproduced* when the mean is on the other side (or on `ref`)."""

    side: str  # ">" or "<"
    ref: float

    def text(self) -> str:
        word = "above" if self.side == ">" else "below"
        return (f"reproduced when our whole 95 % CI lies {word} {self.ref:g}; partly when only the mean does; "
                "otherwise not reproduced")

    def judge(self, ours: Cell | None, published: float | None = None) -> tuple[str, str]:
        if ours is None or not math.isfinite(ours.value):
            return "not testable", "no data for this condition in this run"
        lo, hi = (ours.lo, ours.hi) if math.isfinite(ours.lo) else (ours.value, ours.value)
        up = self.side == ">"
        if (lo > self.ref) if up else (hi < self.ref):
            return "reproduced", f"CI [{_fmt(lo)}, {_fmt(hi)}] {'above' if up else 'below'} {self.ref:g}"
        if (ours.value > self.ref) if up else (ours.value < self.ref):
            return "partly", f"mean {_fmt(ours.value)} on the claimed side, CI [{_fmt(lo)}, {_fmt(hi)}] includes {self.ref:g}"
        return "not reproduced", f"mean {_fmt(ours.value)} [{_fmt(lo)}, {_fmt(hi)}] not {'above' if up else 'below'} {self.ref:g}"


@dataclass(frozen=True)
class Between:
    """*reproduced* when our whole 95 % CI lies in [lo, hi]; *partly* when the mean does; otherwise
    *not reproduced*."""

    lo: float
    hi: float

    def text(self) -> str:
        return (f"reproduced when our whole 95 % CI lies in [{self.lo:g}, {self.hi:g}]; partly when only the mean "
                "does; otherwise not reproduced")

    def judge(self, ours: Cell | None, published: float | None = None) -> tuple[str, str]:
        if ours is None or not math.isfinite(ours.value):
            return "not testable", "no data for this condition in this run"
        lo, hi = (ours.lo, ours.hi) if math.isfinite(ours.lo) else (ours.value, ours.value)
        if self.lo <= lo and hi <= self.hi:
            return "reproduced", f"CI [{_fmt(lo)}, {_fmt(hi)}] inside [{self.lo:g}, {self.hi:g}]"
        if self.lo <= ours.value <= self.hi:
            return "partly", f"mean {_fmt(ours.value)} inside, CI [{_fmt(lo)}, {_fmt(hi)}] not"
        return "not reproduced", f"mean {_fmt(ours.value)} outside [{self.lo:g}, {self.hi:g}]"


@dataclass(frozen=True)
class Exact:
    """*reproduced* when our (deterministic) value equals the published one; otherwise *not reproduced*."""

    def text(self) -> str:
        return "reproduced when our value equals the published one exactly; otherwise not reproduced"

    def judge(self, ours: Cell | None, published: float | None) -> tuple[str, str]:
        if ours is None or published is None or not math.isfinite(ours.value):
            return "not testable", "no data for this condition in this run"
        if ours.value == published:
            return "reproduced", "equal"
        return "not reproduced", f"{_fmt(ours.value)} ≠ {_fmt(published)}"


@dataclass(frozen=True)
class NotTestable:
    """The claim cannot be tested with this study's model; `reason` says why."""

    reason: str

    def text(self) -> str:
        return f"not testable here: {self.reason}"

    def judge(self, ours: Cell | None, published: float | None) -> tuple[str, str]:
        return "not testable", self.reason


Rule = Near | Direction | Between | Exact | NotTestable


# ---------------------------------------------------------------------------------------------
# Ledger entries


@dataclass(frozen=True)
class Ref:
    """A cell of one of the study's tables."""

    table: str
    row: Any
    col: Any


@dataclass(frozen=True)
class Check:
    """One condition of a claim: where our number is (a table cell or a named evidence cell) and
    the published number for it, if the source prints one."""

    condition: str
    ours: Ref | str | None
    published: float | None = None


@dataclass(frozen=True)
class Claim:
    """One claim of an original document, as data.

    `source` names the place ("RFC 2415 Table 1", "Nathan & Rai Fig. 2(a)"), `at` the exact spot
    (section, page); `claim` is our own one-sentence paraphrase; `quantity` what is compared (with its
    unit and direction); `rule` decides each check; `links` are the anchors (tables, figures) of the
    report where the evidence stands."""

    id: str
    source: str
    at: str
    claim: str
    quantity: str
    rule: Rule
    checks: tuple[Check, ...]
    links: tuple[str, ...] = ()
    unit: str = ""
    published_text: str = ""
    claim_ja: str = ""


@dataclass
class Evidence:
    """What the claims read: the study's tables by name and named cells (paired differences, ratios…)."""

    tables: Mapping[str, Table]
    cells: Mapping[str, Cell] = field(default_factory=dict)

    def get(self, ref: Ref | str | None) -> Cell | None:
        if ref is None:
            return None
        if isinstance(ref, str):
            return self.cells.get(ref)
        t = self.tables.get(ref.table)
        if t is None or ref.row not in t.frame.index or ref.col not in t.frame.columns:
            return None
        v = t.frame.loc[ref.row, ref.col]
        if pd.isna(v):
            return None
        lo = t.low.loc[ref.row, ref.col] if t.low is not None else v
        hi = t.high.loc[ref.row, ref.col] if t.high is not None else v
        lo, hi = (float(v) if pd.isna(lo) else float(lo)), (float(v) if pd.isna(hi) else float(hi))
        return Cell(float(v), lo, hi, 0)


@dataclass
class Row:
    check: Check
    ours: Cell | None
    verdict: str
    why: str


@dataclass
class Judged:
    claim: Claim
    rows: list[Row]
    verdict: str
    detail: str
    where: str = ""

    @property
    def ours(self) -> Cell | None:
        return self.rows[0].ours if len(self.rows) == 1 else None


def _aggregate(rows: Sequence[Row]) -> tuple[str, str]:
    tested = [r for r in rows if r.verdict != "not testable"]
    if not tested:
        return "not testable", rows[0].why if rows else "no conditions"
    n = {v: sum(r.verdict == v for r in tested) for v in VERDICTS}
    skipped = f"; {len(rows) - len(tested)} not testable" if len(tested) < len(rows) else ""
    if len(tested) == 1:
        return tested[0].verdict, tested[0].why + skipped
    tally = f"{n['reproduced']} of {len(tested)} conditions reproduced, {n['partly']} partly, {n['not reproduced']} not"
    if n["reproduced"] == len(tested):
        return "reproduced", tally + skipped
    if n["reproduced"] == 0 and n["partly"] < len(tested):
        return "not reproduced", tally + skipped
    holds = [r.check.condition for r in tested if r.verdict == "reproduced"]
    shown = "; ".join(holds[:6]) + (" …" if len(holds) > 6 else "")
    return "partly", tally + (f" (holds at: {shown})" if holds else "") + skipped


def judge(ledger: Sequence[Claim], ev: Evidence) -> list[Judged]:
    """Applies every claim's rule to each of its checks; the claim's verdict aggregates them:
    all tested conditions reproduced → reproduced; none reproduced and at least one not reproduced →
    not reproduced; otherwise (some reproduced, or every one partly) → partly, with the conditions
    where it holds listed; nothing tested → not testable."""
    out = []
    for c in ledger:
        rows = []
        for ch in c.checks:
            ours = ev.get(ch.ours)
            verdict, why = c.rule.judge(ours, ch.published)
            assert verdict in VERDICTS, verdict
            rows.append(Row(ch, ours, verdict, why))
        v, detail = _aggregate(rows)
        out.append(Judged(c, rows, v, detail))
    return out


# ---------------------------------------------------------------------------------------------
# Where a claim would hold: the same ledger judged on variants of the model


@dataclass
class Where:
    """A claim not reproduced by the main run, judged on each variant (label → verdict, detail)."""

    claim_id: str
    varied: str
    results: list[tuple[str, str, str]]

    def region(self) -> str:
        holds = [lab for lab, v, _ in self.results if v == "reproduced"]
        partly = [f"{lab} [{d.split(' (')[0].split(';')[0]}]" for lab, v, d in self.results if v == "partly"]
        tested = [lab for lab, v, _ in self.results if v != "not testable"]
        if not tested:
            return f"not testable on the variants ({self.varied})"
        s = f"holds with {', '.join(holds)}" if holds else "holds in none of the variants"
        if partly:
            s += f"; partly with {', '.join(partly)}"
        return s + f" (varied: {self.varied}; tried: {', '.join(tested)})"


def where_it_holds(judged: Sequence[Judged], ledger: Sequence[Claim], variants: Mapping[str, Evidence],
                   varied: str, only: Sequence[str] | None = None) -> list[Where]:
    """Re-judges each claim whose verdict is *not reproduced* or *partly* (or only those listed in
    `only`) on every variant's evidence; sets `Judged.where` and returns the per-variant verdicts."""
    by_id = {c.id: c for c in ledger}
    out = []
    for j in judged:
        if j.verdict not in ("not reproduced", "partly") or (only is not None and j.claim.id not in only):
            continue
        res = []
        for label, ev in variants.items():
            (vj,) = judge([by_id[j.claim.id]], ev)
            res.append((label, vj.verdict, vj.detail))
        w = Where(j.claim.id, varied, res)
        if j.verdict == "partly" and all(v == "not testable" for _, v, _ in res):
            continue  # the variants do not cover this claim's conditions: nothing to say
        j.where = (j.where + " | " if j.where else "") + w.region()
        out.append(w)
    return out


# ---------------------------------------------------------------------------------------------
# Output


def counts(judged: Sequence[Judged]) -> dict[str, int]:
    out = {v: 0 for v in VERDICTS}
    for j in judged:
        out[j.verdict] += 1
    return out


def summary_line(judged: Sequence[Judged], label: str = "") -> str:
    n = counts(judged)
    cells = sum(len(j.rows) for j in judged)
    head = f"{label}: " if label else ""
    return (f"{head}{len(judged)} claims ({cells} checked cells/conditions): {n['reproduced']} reproduced, "
            f"{n['partly']} partly, {n['not reproduced']} not reproduced, {n['not testable']} not testable")


def _published_str(j: Judged) -> str:
    c = j.claim
    pubs = [r.check.published for r in j.rows if r.check.published is not None]
    if c.published_text:
        return c.published_text
    if len(j.rows) == 1 and pubs:
        return f"{_fmt(pubs[0])}{(' ' + c.unit) if c.unit else ''}"
    if pubs:
        return f"{len(pubs)} printed numbers"
    return "—"


def _ours_str(j: Judged) -> str:
    if len(j.rows) == 1:
        o = j.rows[0].ours
        if o is None:
            return "—"
        ci = f" [{_fmt(o.lo)}, {_fmt(o.hi)}]" if o.lo != o.hi else ""
        return f"{_fmt(o.value)}{ci}"
    vals = [r.ours.value for r in j.rows if r.ours is not None and math.isfinite(r.ours.value)]
    if not vals:
        return "—"
    return f"{len(vals)} cells, {_fmt(min(vals))}…{_fmt(max(vals))}"


def claims_text(judged: Sequence[Judged], width: int = 60) -> str:
    """The claims table as text: id · source · claim · published · ours [CI] · verdict (then the
    tally detail and, for claims not reproduced, where they would hold)."""
    if not judged:
        return ""
    lines = ["Claims of the original, and what our runs say (rule per claim in claims.csv / the report):"]
    rows = [(j.claim.id, j.claim.source, j.claim.claim, _published_str(j), _ours_str(j), j.verdict) for j in judged]
    w_id = max(len(r[0]) for r in rows)
    w_src = max(len(r[1]) for r in rows)
    for j, (cid, src, text, pub, ours, verdict) in zip(judged, rows):
        short = text if len(text) <= width else text[: width - 1] + "…"
        lines.append(f"  {cid:<{w_id}}  {src:<{w_src}}  {short:<{width}}  published {pub} · ours {ours} · {verdict.upper()}")
        if len(j.rows) > 1 or j.verdict != "reproduced":
            lines.append(f"  {'':<{w_id}}  {'':<{w_src}}  ↳ {j.detail}")
        if j.where:
            lines.append(f"  {'':<{w_id}}  {'':<{w_src}}  ↳ where it would hold: {j.where}")
    lines.append(summary_line(judged))
    return "\n".join(lines)


def where_text(wheres: Sequence[Where]) -> str:
    return "\n".join(f"{w.claim_id}: " + "; ".join(f"{lab}: {v}" for lab, v, _ in w.results) for w in wheres)


def claims_frame(study: str, judged: Sequence[Judged]) -> pd.DataFrame:
    """Tidy: one row per (claim, condition) — one per printed cell of a published table."""
    rows = []
    for j in judged:
        c = j.claim
        for r in j.rows:
            o = r.ours
            pub = r.check.published
            rows.append({
                "study": study, "claim_id": c.id, "source": f"{c.source}" + (f" ({c.at})" if c.at else ""),
                "claim": c.claim, "condition": r.check.condition, "published": pub,
                "ours": o.value if o else None, "ci_lo": o.lo if o else None, "ci_hi": o.hi if o else None,
                "verdict": r.verdict,
                "diff": (o.value - pub) if (o is not None and pub is not None) else None,
                "unit": c.unit, "claim_verdict": j.verdict, "rule": c.rule.text(), "why": r.why,
                "where": j.where, "link": " ".join(c.links),
            })
    return pd.DataFrame(rows, columns=CSV_COLUMNS)


_COLOURS = {"reproduced": "#dff0d8", "partly": "#fcf8e3", "not reproduced": "#f2dede", "not testable": "#eee"}


def claims_html(judged: Sequence[Judged], figures: Sequence[str] = (), ja: Sequence[str] = ()) -> str:
    """The ledger at the top of a report: one row per claim with links to the tables/figures behind
    it, the rule, and (folded) the per-condition comparison — published, ours [CI], difference."""
    if not judged:
        return ""
    e = html.escape
    figs = set(figures)

    def links(c: Claim) -> str:
        return " ".join(f"<a href='#{e(x)}'>{'fig. ' if x in figs else ''}{e(x)}</a>" for x in c.links)

    head = ("<tr><th>claim</th><th>source</th><th>what it says (our words)</th><th>published</th><th>ours [95 % CI]"
            "</th><th>verdict</th><th>evidence</th></tr>")
    body = []
    for j in judged:
        c = j.claim
        colour = _COLOURS[j.verdict]
        detail_rows = "".join(
            f"<tr><td>{e(r.check.condition)}</td><td>{e(_fmt(r.check.published))}</td>"
            f"<td>{e(_fmt(r.ours.value) if r.ours else '—')}"
            f"{'<br><small>[' + e(_fmt(r.ours.lo)) + ', ' + e(_fmt(r.ours.hi)) + ']</small>' if r.ours and r.ours.lo != r.ours.hi else ''}"
            f"</td><td>{e(_fmt(r.ours.value - r.check.published) if r.ours and r.check.published is not None else '—')}"
            f"</td><td style='background:{_COLOURS[r.verdict]}'>{e(r.verdict)}</td><td class=note>{e(r.why)}</td></tr>"
            for r in j.rows)
        more = (f"<details><summary>{e(j.detail)}</summary><table><tr><th>condition</th><th>published</th><th>ours</th>"
                f"<th>ours − published</th><th>verdict</th><th>why</th></tr>{detail_rows}</table></details>")
        where = f"<p class=note><b>Where it would hold:</b> {e(j.where)}</p>" if j.where else ""
        body.append(
            f"<tr id='claim-{e(c.id)}'><th>{e(c.id)}</th><td style='text-align:left'>{e(c.source)}<br><small>{e(c.at)}"
            f"</small></td><td style='text-align:left'>{e(c.claim)}<br><small>{e(c.quantity)}. Rule: {e(c.rule.text())}"
            f"</small>{more}{where}</td><td>{e(_published_str(j))}</td><td>{e(_ours_str(j))}</td>"
            f"<td style='background:{colour}'><b>{e(j.verdict)}</b></td><td>{links(c)}</td></tr>")
    n = summary_line(judged)
    en_html = ("<h3>Summary of the verdicts</h3><ul>" + "".join(f"<li>{e(s)}</li>" for s in english_summary(judged))
               + "</ul>")
    ja_html = ("<h3 lang=ja>検証結果の要約（日本語）</h3><ul lang=ja>" + "".join(f"<li>{e(s)}</li>" for s in ja) + "</ul>"
               if ja else "")
    if ja:
        ja_html = f"<div class=pair><div>{en_html}</div><div lang=ja>{ja_html}</div></div>"
        en_html = ""
    return (f"<h2 id=claims>Claims of the original and our verdicts</h2><p>{e(n)}. Each verdict is computed from our "
            "runs by the rule printed under the claim (never written by hand); the per-condition numbers are folded "
            f"under each claim.</p>{en_html}{ja_html}<table class=claims><thead>{head}</thead><tbody>{''.join(body)}"
            "</tbody></table>")


def english_summary(judged: Sequence[Judged]) -> list[str]:
    """One sentence per claim: source, our paraphrase, verdict (and where it would hold)."""
    out = []
    for j in judged:
        tested = [r for r in j.rows if r.verdict != "not testable"]
        k = sum(r.verdict == "reproduced" for r in tested)
        tail = f" ({k} of {len(tested)} conditions)" if len(tested) > 1 else ""
        where = f"; where it would hold: {j.where}" if j.where else ""
        out.append(f"{j.claim.source}: {j.claim.claim} — {j.verdict}{tail}{where}")
    return out


def japanese_summary(judged: Sequence[Judged], title: str) -> list[str]:
    """One Japanese sentence per claim that has a Japanese paraphrase (`Claim.claim_ja`)."""
    out = []
    for j in judged:
        if not j.claim.claim_ja:
            continue
        tested = [r for r in j.rows if r.verdict != "not testable"]
        k = sum(r.verdict == "reproduced" for r in tested)
        tail = f"（{len(tested)} 条件中 {k} 条件で再現）" if len(tested) > 1 else ""
        out.append(f"{j.claim.source}：{j.claim.claim_ja} — {VERDICTS_JA[j.verdict]}{tail}。")
    if out:
        n = counts(judged)
        out.insert(0, f"{title}：主張 {len(judged)} 件のうち、再現 {n['reproduced']} 件、一部再現 {n['partly']} 件、"
                      f"再現せず {n['not reproduced']} 件、検証不可 {n['not testable']} 件。")
    return out

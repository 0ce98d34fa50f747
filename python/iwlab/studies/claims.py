"""Claims ledgers: what each founding document claims, the number it publishes, our number with its
95 % interval, and a verdict computed by a rule written next to the claim.

A study module declares its ledger as data — `ledger(...) -> list[Claim]` — and computes its
`Evidence` (its tables plus named cells such as paired per-seed differences). `judge` applies every
claim's rule to the evidence; nothing here is hand-written per claim except the rule and its
parameters, which are printed with the verdict. `where_it_holds` re-judges the claims that were *not
reproduced* against the same study run under other model choices (variants) and reports the region
where each would hold.

Verdicts: `reproduced`, `partly` (a stated subset of the conditions holds, none with the wrong
sign), `not reproduced`, `inconclusive` (our interval spans the band's edge or has too few seeds;
the seeds needed are printed), `not testable` (the reason is given). The rules are stated once, in
the block above `MIN_SEEDS`; docs/claims.md gives them with examples. `rejudge` applies them to a
stored `claims.csv`.
"""

from __future__ import annotations

import html
import math
import re
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

import pandas as pd

from iwlab.studies.model import Cell, Table

__all__ = ["VERDICTS", "Between", "Check", "Claim", "Direction", "Erratum", "Evidence", "Exact", "Judged", "Near",
           "NotTestable", "Ref", "Row", "Where", "badge", "claims_frame", "claims_html", "claims_text", "counts",
           "errata_frame", "errata_html", "errata_text", "judge", "rejudge", "seeds_to_decide", "summary_line", "where_it_holds",
           "where_text"]

VERDICTS = ("reproduced", "partly", "not reproduced", "inconclusive", "not testable")
VERDICTS_JA = {"reproduced": "再現された", "partly": "一部再現された", "not reproduced": "再現されなかった",
               "inconclusive": "判定できない（シード不足）", "not testable": "検証できない"}
CSV_COLUMNS = ["study", "claim_id", "source", "claim", "condition", "published", "ours", "ci_lo", "ci_hi", "verdict",
               "diff", "unit", "claim_verdict", "claim_share", "seeds", "rule", "why", "where", "source_conflict",
               "link", "mode"]
ERRATA_COLUMNS = ["study", "source", "at", "what", "evidence"]


def _fmt(x: float | None, digits: int = 3) -> str:
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return "—"
    return f"{x:.{digits}g}"


# ---------------------------------------------------------------------------------------------
# The verdict rules, stated once (docs/claims.md repeats them with examples). Each rule class has a
# sentence (printed beside the claim), the outcomes it can return (`OUTCOMES`, a test makes each
# rule return each of them) and a judgement of one condition; `_aggregate` turns the conditions
# into the claim's verdict.
#
# * A condition's interval counts only with at least MIN_SEEDS seeds; below that no interval is
#   printed and a statistical rule (Near, Between, Direction) says *inconclusive*.
# * Magnitude (Near, Between): the claim keeps its size. The band is the original's own
#   variability where the ledger states it, else ±MAGNITUDE_BAND of the published effect (Near),
#   or the published range (Between). *reproduced* when our whole 95 % CI lies inside the band,
#   *not reproduced* when it lies wholly outside, *inconclusive* only when it spans an edge.
# * Direction: *reproduced* when our CI excludes the reference on the claimed side, *not
#   reproduced* when it lies on the other side, *inconclusive* when it contains the reference.
# * Exact: equal, or not.
# * A claim over several conditions: *reproduced* when every tested condition is; *partly* when a
#   stated subset is (listed) and no condition has the wrong sign; *inconclusive* when more than
#   half of its conditions are; else *not reproduced*.

#: Fewest seeds behind any interval that is printed or judged.
MIN_SEEDS = 5
#: A magnitude claim's band where the original states no variability: ± this share of the effect.
MAGNITUDE_BAND = 0.25


def _ci(ours: Cell) -> tuple[float, float]:
    return (ours.lo, ours.hi) if math.isfinite(ours.lo) else (ours.value, ours.value)


def has_interval(ours: Cell) -> bool:
    """Whether the cell's interval may be printed and judged: deterministic (no spread), seeds
    unknown (0), or at least MIN_SEEDS seeds. One seed shows no spread without being
    deterministic: a condition only one seed had flows for is judged like any other below
    MIN_SEEDS."""
    lo, hi = _ci(ours)
    deterministic = lo == hi and math.isfinite(ours.lo) and ours.n != 1  # a stored row without its interval is not
    return deterministic or ours.n == 0 or ours.n >= MIN_SEEDS


def _seeds_needed(n: int, half: float, target: float) -> str:
    """Seeds for a CI half-width of `target` (the half-width shrinks as 1/√n), never below MIN_SEEDS."""
    if n <= 0 or target <= 0:
        return "more seeds needed"
    return f"about {max(n + 1, MIN_SEEDS, math.ceil(n * (half / target) ** 2))} seeds needed (this run: {n})"


def _too_few(ours: Cell, target: float) -> tuple[str, str]:
    lo, hi = _ci(ours)
    return "inconclusive", (f"{ours.n} seeds: no interval below {MIN_SEEDS} seeds; "
                            + _seeds_needed(ours.n, (hi - lo) / 2, target))


def _against_band(ours: Cell, b_lo: float, b_hi: float, band: str) -> tuple[str, str]:
    """Our CI against a band [b_lo, b_hi]: inside, wholly outside, or spanning an edge."""
    lo, hi = _ci(ours)
    edge = min(abs(ours.value - b_lo), abs(ours.value - b_hi))
    if not has_interval(ours):
        return _too_few(ours, edge)
    if b_lo <= lo and hi <= b_hi:
        return "reproduced", f"CI [{_fmt(lo)}, {_fmt(hi)}] inside {band} [{_fmt(b_lo)}, {_fmt(b_hi)}]"
    if hi < b_lo or lo > b_hi:
        return "not reproduced", f"ours {_fmt(ours.value)} [{_fmt(lo)}, {_fmt(hi)}] outside {band} [{_fmt(b_lo)}, {_fmt(b_hi)}]"
    return "inconclusive", (f"CI [{_fmt(lo)}, {_fmt(hi)}] spans an edge of {band} [{_fmt(b_lo)}, {_fmt(b_hi)}]: "
                            + _seeds_needed(ours.n, (hi - lo) / 2, edge))


def _opposite_sign(ours: Cell | None, sign: float) -> bool:
    """Whether our whole interval lies on the other side of 0 than a published effect of sign `sign`."""
    if ours is None or not math.isfinite(ours.value) or sign == 0 or not has_interval(ours):
        return False
    lo, hi = _ci(ours)
    return hi < 0 if sign > 0 else lo > 0


#: Reads the count `_seeds_needed` wrote into an inconclusive condition's reason.
_NEEDED = re.compile(r"about (\d+) seeds needed")


@dataclass(frozen=True)
class Near:
    """A published number (a magnitude) against ours. The band is published ± w, w = max(`tol`,
    `rel` × |published|) — the original's own variability as the ledger states it — or, when the
    ledger gives neither, ±MAGNITUDE_BAND (25 %) of |published|. *reproduced* when our whole 95 %
    CI lies inside the band, *not reproduced* when wholly outside, *inconclusive* when it spans
    an edge (with the seeds needed)."""

    tol: float = 0.0
    rel: float = 0.0
    unit: str = ""

    OUTCOMES = ("reproduced", "not reproduced", "inconclusive", "not testable")

    def width(self, published: float) -> float:
        if not self.tol and not self.rel:
            return MAGNITUDE_BAND * abs(published)
        return max(self.tol, self.rel * abs(published))

    def text(self) -> str:
        u = f" {self.unit}" if self.unit else ""
        band = " or ".join(x for x in (f"±{self.tol:g}{u}" if self.tol else "",
                                       f"±{100 * self.rel:g} % of it" if self.rel else "") if x)
        band = band or f"±{100 * MAGNITUDE_BAND:g} % of it (the original states no variability)"
        return (f"reproduced when our whole 95 % CI lies within the published value {band}; not reproduced "
                f"when it lies wholly outside; inconclusive when it spans an edge")

    def judge(self, ours: Cell | None, published: float | None) -> tuple[str, str]:
        if published is None:
            return "not testable", "no published number"
        if ours is None or not math.isfinite(ours.value):
            return "not testable", "no data for this condition in this run"
        w = self.width(published)
        return _against_band(ours, published - w, published + w, "the band")

    def wrong_sign(self, ours: Cell | None, published: float | None) -> bool:
        return published is not None and _opposite_sign(ours, published)


@dataclass(frozen=True)
class Direction:
    """A direction (the source gives no size): *reproduced* when our whole 95 % CI lies on the
    claimed side of `ref`; *not reproduced* when it lies wholly on the other side (or on `ref`);
    *inconclusive* when it contains `ref` — a mean on the right side is a coin flip at a few
    seeds, so it earns nothing, and the seeds needed are printed."""

    side: str  # ">" or "<"
    ref: float

    OUTCOMES = ("reproduced", "not reproduced", "inconclusive", "not testable")

    def text(self) -> str:
        word = "above" if self.side == ">" else "below"
        return (f"reproduced when our whole 95 % CI lies {word} {self.ref:g}; not reproduced when it lies on the "
                f"other side; inconclusive when it contains {self.ref:g}")

    def judge(self, ours: Cell | None, published: float | None = None) -> tuple[str, str]:
        if ours is None or not math.isfinite(ours.value):
            return "not testable", "no data for this condition in this run"
        lo, hi = _ci(ours)
        gap = abs(ours.value - self.ref)
        if not has_interval(ours):
            return _too_few(ours, gap)
        up = self.side == ">"
        word = "above" if up else "below"
        if (lo > self.ref) if up else (hi < self.ref):
            return "reproduced", f"CI [{_fmt(lo)}, {_fmt(hi)}] {word} {self.ref:g}"
        if (hi <= self.ref) if up else (lo >= self.ref):
            return "not reproduced", f"CI [{_fmt(lo)}, {_fmt(hi)}] not {word} {self.ref:g}"
        return "inconclusive", (f"CI [{_fmt(lo)}, {_fmt(hi)}] contains {self.ref:g}: "
                                + _seeds_needed(ours.n, (hi - lo) / 2, gap))

    def wrong_sign(self, ours: Cell | None, published: float | None = None) -> bool:
        """Our whole interval strictly on the other side of `ref` (no effect is not a wrong sign)."""
        if ours is None or not math.isfinite(ours.value) or not has_interval(ours):
            return False
        lo, hi = _ci(ours)
        return hi < self.ref if self.side == ">" else lo > self.ref


@dataclass(frozen=True)
class Between:
    """A published range or magnitude ("≈ 2×", "5–10 %"), the band [lo, hi]: *reproduced* when our
    whole 95 % CI lies in it, *not reproduced* when wholly outside, *inconclusive* when it spans an
    edge."""

    lo: float
    hi: float

    OUTCOMES = ("reproduced", "not reproduced", "inconclusive", "not testable")

    def text(self) -> str:
        return (f"reproduced when our whole 95 % CI lies in [{self.lo:g}, {self.hi:g}]; not reproduced when it lies "
                "wholly outside; inconclusive when it spans an edge")

    def judge(self, ours: Cell | None, published: float | None = None) -> tuple[str, str]:
        if ours is None or not math.isfinite(ours.value):
            return "not testable", "no data for this condition in this run"
        return _against_band(ours, self.lo, self.hi, "the range")

    def wrong_sign(self, ours: Cell | None, published: float | None = None) -> bool:
        mid = (self.lo + self.hi) / 2
        return self.lo * self.hi > 0 and _opposite_sign(ours, mid)


@dataclass(frozen=True)
class Exact:
    """*reproduced* when our (deterministic) value equals the published one; otherwise *not reproduced*."""

    OUTCOMES = ("reproduced", "not reproduced", "not testable")

    def text(self) -> str:
        return "reproduced when our value equals the published one exactly; otherwise not reproduced"

    def judge(self, ours: Cell | None, published: float | None) -> tuple[str, str]:
        if ours is None or published is None or not math.isfinite(ours.value):
            return "not testable", "no data for this condition in this run"
        if ours.value == published:
            return "reproduced", "equal"
        return "not reproduced", f"{_fmt(ours.value)} ≠ {_fmt(published)}"

    def wrong_sign(self, ours: Cell | None, published: float | None) -> bool:
        return False


@dataclass(frozen=True)
class NotTestable:
    """The claim cannot be tested with this study's model, or is out of scope; `reason` says why."""

    reason: str

    OUTCOMES = ("not testable",)

    def text(self) -> str:
        return f"not testable here: {self.reason}"

    def judge(self, ours: Cell | None, published: float | None) -> tuple[str, str]:
        return "not testable", self.reason

    def wrong_sign(self, ours: Cell | None, published: float | None) -> bool:
        return False


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
    #: Where the source contradicts itself on this claim (and which reading the checks use).
    conflict: str = ""


@dataclass(frozen=True)
class Erratum:
    """A suspected error in an original document: where, what, and the evidence for it."""

    source: str
    at: str
    what: str
    evidence: str


@dataclass
class Evidence:
    """What the claims read: the study's tables by name and named cells (paired differences, ratios…)."""

    tables: Mapping[str, Table]
    cells: Mapping[str, Cell] = field(default_factory=dict)
    #: Seeds behind every cell of this run (the tables keep no per-cell count).
    seeds: int = 0

    def get(self, ref: Ref | str | None) -> Cell | None:
        if ref is None:
            return None
        if isinstance(ref, str):
            c = self.cells.get(ref)
            return c if c is None or c.n or not self.seeds else Cell(c.value, c.lo, c.hi, self.seeds)
        t = self.tables.get(ref.table)
        if t is None or ref.row not in t.frame.index or ref.col not in t.frame.columns:
            return None
        v = t.frame.loc[ref.row, ref.col]
        if pd.isna(v):
            return None
        lo = t.low.loc[ref.row, ref.col] if t.low is not None else v
        hi = t.high.loc[ref.row, ref.col] if t.high is not None else v
        lo, hi = (float(v) if pd.isna(lo) else float(lo)), (float(v) if pd.isna(hi) else float(hi))
        return Cell(float(v), lo, hi, self.seeds)


@dataclass
class Row:
    check: Check
    ours: Cell | None
    verdict: str
    why: str
    #: Our interval lies wholly on the other side of the claimed effect (a claim with such a
    #: condition cannot be *partly* reproduced).
    wrong_sign: bool = False

    @property
    def seeds_needed(self) -> int | None:
        """For an inconclusive condition, the seeds its interval needs to decide (None: unknown)."""
        m = _NEEDED.search(self.why) if self.verdict == "inconclusive" else None
        return int(m.group(1)) if m else None


@dataclass
class Judged:
    claim: Claim
    rows: list[Row]
    verdict: str
    detail: str
    where: str = ""
    #: Share of the decided conditions that are reproduced; None when none decided.
    share: float | None = None
    seeds: int = 0

    @property
    def ours(self) -> Cell | None:
        return self.rows[0].ours if len(self.rows) == 1 else None


def _aggregate(rows: Sequence[Row]) -> tuple[str, str, float | None]:
    """A claim's verdict from its conditions (the last rule of the block above `MIN_SEEDS`).
    Not-testable conditions are left out; when more than half of the rest are inconclusive the
    claim is *inconclusive*; *reproduced* when every tested condition is (an undecided one leaves
    it *partly* at most); *partly* when some are (they are listed: the stated subset) and no
    condition has the wrong sign; otherwise *not reproduced*. The share printed is that of the decided conditions that are reproduced."""
    tested = [r for r in rows if r.verdict != "not testable"]
    if not tested:
        return "not testable", rows[0].why if rows else "no conditions", None
    n = {v: sum(r.verdict == v for r in tested) for v in VERDICTS}
    skipped = f"; {len(rows) - len(tested)} not testable" if len(tested) < len(rows) else ""
    decided = len(tested) - n["inconclusive"]
    wrong = [r for r in tested if r.wrong_sign]
    if len(tested) == 1:
        r = tested[0]
        share = None if r.verdict == "inconclusive" else float(r.verdict == "reproduced")
        return r.verdict, r.why + skipped, share
    unsure = f", {n['inconclusive']} inconclusive" if n["inconclusive"] else ""
    tally = f"{n['reproduced']} of {len(tested)} conditions reproduced, {n['not reproduced']} not{unsure}"
    if n["inconclusive"] * 2 > len(tested):
        why = next(r.why for r in tested if r.verdict == "inconclusive")
        return "inconclusive", f"{tally} (e.g. {why}){skipped}", None
    share = n["reproduced"] / decided
    head = f"{100 * share:.0f} % hold: {tally}"
    if n["reproduced"] == len(tested):
        return "reproduced", head + skipped, share
    holds = [r.check.condition for r in tested if r.verdict == "reproduced"]
    shown = "; ".join(holds[:6]) + (" …" if len(holds) > 6 else "")
    if holds and not wrong:
        return "partly", f"{head} (holds at: {shown}){skipped}", share
    signs = f"; wrong sign at {len(wrong)}: {'; '.join(r.check.condition for r in wrong[:3])}" if wrong else ""
    where = f" (holds at: {shown})" if holds else ""
    return "not reproduced", head + signs + where + skipped, share


def seeds_to_decide(judged: Sequence[Judged], limit: int) -> dict[str, int]:
    """Magnitude claims (Near, Between) left inconclusive that a run with more seeds (at most
    `limit`) would likely decide: claim id → the seeds it needs. A claim is inconclusive while more
    than half of its tested conditions are; it needs enough seeds for the k-th easiest of those to
    decide, k being how many must. Conditions whose need is unknown, or a claim needing more than
    `limit`, are left out. Direction claims are too: their intervals straddle the reference because
    the effect is ≈ 0, and "no clear effect" is already their honest answer."""
    out = {}
    for j in judged:
        if j.verdict != "inconclusive" or not isinstance(j.claim.rule, (Near, Between)):
            continue
        tested = [r for r in j.rows if r.verdict != "not testable"]
        needs = sorted(r.seeds_needed for r in tested if r.verdict == "inconclusive" and r.seeds_needed)
        unsure = sum(r.verdict == "inconclusive" for r in tested)
        k = unsure - len(tested) // 2
        if 0 < k <= len(needs) and needs[k - 1] <= limit:
            out[j.claim.id] = needs[k - 1]
    return out


def judge(ledger: Sequence[Claim], ev: Evidence) -> list[Judged]:
    """Applies every claim's rule to each of its checks; the claim's verdict aggregates them by the
    share of decided conditions that hold (see `_aggregate`)."""
    out = []
    for c in ledger:
        rows = []
        for ch in c.checks:
            ours = ev.get(ch.ours)
            verdict, why = c.rule.judge(ours, ch.published)
            assert verdict in VERDICTS, verdict
            rows.append(Row(ch, ours, verdict, why, c.rule.wrong_sign(ours, ch.published)))
        v, detail, share = _aggregate(rows)
        out.append(Judged(c, rows, v, detail, share=share, seeds=ev.seeds))
    return out


def rejudge(ledger: Sequence[Claim], frame: pd.DataFrame) -> list[Judged]:
    """Judges a stored `claims.csv` (one study's rows) again with today's rules: each condition's
    cell is the row's `ours` [`ci_lo`, `ci_hi`] at its `seeds`, each claim's rule comes from
    `ledger`. Claims of the ledger that the file lacks are left out, and so are rows whose condition
    the claim no longer checks (a claim restated on other evidence is judged by a new run only)."""
    out = []
    for c in ledger:
        rows = []
        conditions = {k.condition for k in c.checks}
        for r in frame[frame["claim_id"] == c.id].itertuples(index=False):
            if conditions and str(r.condition) not in conditions:
                continue
            pub = None if pd.isna(r.published) else float(r.published)
            ours = None
            if not pd.isna(r.ours):
                v = float(r.ours)
                # no interval stored: fewer seeds than an interval needs (judged so), else none
                lo, hi = (float("nan"),) * 2 if pd.isna(r.ci_lo) else (float(r.ci_lo), float(r.ci_hi))
                ours = Cell(v, lo, hi, int(r.seeds))
            check = Check(str(r.condition), None, pub)
            verdict, why = c.rule.judge(ours, pub)
            rows.append(Row(check, ours, verdict, why, c.rule.wrong_sign(ours, pub)))
        if rows:
            v, detail, share = _aggregate(rows)
            out.append(Judged(c, rows, v, detail, share=share, seeds=int(frame["seeds"].max())))
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
    seeds = sorted({j.seeds for j in judged if j.seeds})
    at = f" at {'/'.join(map(str, seeds))} seeds" if seeds else ""
    return (f"{head}{len(judged)} claims ({cells} checked cells/conditions{at}): {n['reproduced']} reproduced, "
            f"{n['partly']} partly, {n['not reproduced']} not reproduced, {n['inconclusive']} inconclusive, "
            f"{n['not testable']} not testable")


def _share_str(j: Judged) -> str:
    decided = [r for r in j.rows if r.verdict not in ("not testable", "inconclusive")]
    if j.share is None:
        return "—"
    if len(decided) == 1:
        return "1 of 1" if j.share == 1 else ("½ of 1" if j.share == 0.5 else "0 of 1")
    return f"{100 * j.share:.0f} % of {len(decided)}"


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
        ci = f" [{_fmt(o.lo)}, {_fmt(o.hi)}]" if o.lo != o.hi and has_interval(o) else ""
        return f"{_fmt(o.value)}{ci}"
    vals = [r.ours.value for r in j.rows if r.ours is not None and math.isfinite(r.ours.value)]
    if not vals:
        return "—"
    return f"{len(vals)} cells, {_fmt(min(vals))}…{_fmt(max(vals))}"


def claims_text(judged: Sequence[Judged], width: int = 56) -> str:
    """The ledger as text, one line per claim: id · source · our words · published · ours [CI] ·
    share of conditions that hold · VERDICT (per-condition detail in claims.csv and the report)."""
    if not judged:
        return ""
    lines = ["Claims of the original, and what our runs say (per-condition detail and rules: claims.csv, report):"]
    rows = [(j.claim.id, j.claim.source, j.claim.claim, _published_str(j), _ours_str(j), _share_str(j),
             j.verdict.upper()) for j in judged]
    heads = ("id", "source", "claim (our words)", "published", "ours [95 % CI]", "holds", "verdict")
    cut = lambda t, n: t if len(t) <= n else t[: n - 1] + "…"  # noqa: E731
    rows = [(a, cut(b, 28), cut(c, width), cut(d, 22), cut(e, 26), f, g) for a, b, c, d, e, f, g in rows]
    widths = [max(len(r[i]) for r in [heads, *rows]) for i in range(len(heads))]
    fmt = lambda r: "  " + "  ".join(x.ljust(w) for x, w in zip(r, widths)).rstrip()  # noqa: E731
    lines += [fmt(heads), *map(fmt, rows)]
    for j in judged:
        if j.claim.conflict:
            lines.append(f"  source conflict, {j.claim.id}: {j.claim.conflict}")
    lines.append(summary_line(judged))
    return "\n".join(lines)


def where_text(wheres: Sequence[Where]) -> str:
    return "\n".join(f"{w.claim_id}: " + "; ".join(f"{lab}: {v}" for lab, v, _ in w.results) for w in wheres)


def claims_frame(study: str, judged: Sequence[Judged], mode: str = "") -> pd.DataFrame:
    """Tidy: one row per (claim, condition) — one per printed cell of a published table."""
    rows = []
    for j in judged:
        c = j.claim
        for r in j.rows:
            o = r.ours
            pub = r.check.published
            ci = o is not None and has_interval(o)
            rows.append({
                "study": study, "mode": mode, "claim_id": c.id, "source": f"{c.source}" + (f" ({c.at})" if c.at else ""),
                "claim": c.claim, "condition": r.check.condition, "published": pub,
                "ours": o.value if o else None, "ci_lo": o.lo if ci else None, "ci_hi": o.hi if ci else None,
                "verdict": r.verdict,
                "diff": (o.value - pub) if (o is not None and pub is not None) else None,
                "unit": c.unit, "claim_verdict": j.verdict, "claim_share": j.share,
                "seeds": o.n if o is not None and o.n else j.seeds,
                "rule": c.rule.text(), "why": r.why, "where": j.where, "source_conflict": c.conflict,
                "link": " ".join(c.links),
            })
    return pd.DataFrame(rows, columns=CSV_COLUMNS)


def errata_frame(study: str, errata: Sequence[Erratum]) -> pd.DataFrame:
    return pd.DataFrame([{"study": study, "source": x.source, "at": x.at, "what": x.what, "evidence": x.evidence}
                         for x in errata], columns=ERRATA_COLUMNS)


def errata_text(errata: Sequence[Erratum]) -> str:
    if not errata:
        return ""
    return "\n".join(["Suspected errors in the original:"]
                     + [f"  {x.source} ({x.at}): {x.what} — {x.evidence}" for x in errata])


def errata_html(errata: Sequence[Erratum]) -> str:
    if not errata:
        return ""
    e = html.escape
    rows = "".join(f"<tr><td>{e(x.source)}<br><small>{e(x.at)}</small></td><td>{e(x.what)}</td>"
                   f"<td class=note>{e(x.evidence)}</td></tr>" for x in errata)
    return ("<h2 id=errata>Suspected errors in the original</h2><p>Where the source contradicts itself or "
            "misprints; the ledger's checks say which reading they use.</p><table class=ledger><thead><tr><th>where"
            f"</th><th>what</th><th>evidence</th></tr></thead><tbody>{rows}</tbody></table>")


#: Badge colours: green, amber, red, blue-grey, grey — with the word on it, never colour alone.
_BADGE = {"reproduced": ("#1e7b34", "#ffffff"), "partly": ("#f0ad00", "#222222"),
          "not reproduced": ("#c62828", "#ffffff"), "inconclusive": ("#5c6f8a", "#ffffff"),
          "not testable": ("#bbbbbb", "#222222")}
_COLOURS = {"reproduced": "#dff0d8", "partly": "#fcf8e3", "not reproduced": "#f2dede", "inconclusive": "#e3e8f0",
            "not testable": "#eee"}
LEDGER_STYLE = """table.ledger{width:100%;font-size:.88em}table.ledger td,table.ledger th{text-align:left;
vertical-align:top}table.ledger td.num{text-align:right;white-space:nowrap}
.badge{display:inline-block;padding:.1em .5em;border-radius:.8em;font-weight:600;white-space:nowrap;font-size:.9em}
table.ledger details{margin-top:.2em}table.ledger summary{cursor:pointer;color:#555}
table.ledger details table{font-size:.95em}"""


def badge(verdict: str) -> str:
    bg, fg = _BADGE[verdict]
    return f"<span class='badge v-{verdict.replace(' ', '-')}' style='background:{bg};color:{fg}'>{verdict}</span>"


def claims_html(judged: Sequence[Judged], figures: Sequence[str] = (), ja: Sequence[str] = ()) -> str:
    """The ledger at the top of a report, one row per claim: source, our words, published, ours
    [95 % CI], share of conditions that hold, a coloured verdict badge; the rule, the per-condition
    comparison and the "where it would hold" variants are folded under the claim."""
    if not judged:
        return ""
    e = html.escape
    figs = set(figures)

    def links(c: Claim) -> str:
        return " ".join(f"<a href='#{e(x)}'>{'fig. ' if x in figs else ''}{e(x)}</a>" for x in c.links)

    head = ("<tr><th>claim</th><th>source</th><th>what it says (our words)</th><th>published</th>"
            "<th>ours [95 % CI]</th><th>holds</th><th>verdict</th><th>source conflict</th></tr>")
    body = []
    for j in judged:
        c = j.claim
        detail_rows = "".join(
            f"<tr><td>{e(r.check.condition)}</td><td class=num>{e(_fmt(r.check.published))}</td>"
            f"<td class=num>{e(_fmt(r.ours.value) if r.ours else '—')}"
            f"{' [' + e(_fmt(r.ours.lo)) + ', ' + e(_fmt(r.ours.hi)) + ']' if r.ours and r.ours.lo != r.ours.hi and has_interval(r.ours) else ''}"
            f"</td><td style='background:{_COLOURS[r.verdict]}'>{e(r.verdict)}</td><td class=note>{e(r.why)}</td></tr>"
            for r in j.rows)
        where = f"<p class=note><b>Where it would hold:</b> {e(j.where)}</p>" if j.where else ""
        ev = f"<p class=note>Evidence: {links(c)}</p>" if c.links else ""
        short = j.detail.split(" (holds at")[0].split(" (e.g. ")[0]
        full = f"<p class=note>{e(j.detail)}</p>" if short != j.detail else ""
        more = (f"<details><summary>{e(short)}</summary>{full}<p class=note>{e(c.quantity)}. Rule: {e(c.rule.text())}. "
                f"Seeds: {j.seeds or '—'}.</p>{where}{ev}<table><tr><th>condition</th><th>published</th><th>ours</th>"
                f"<th>verdict</th><th>why</th></tr>{detail_rows}</table></details>")
        body.append(
            f"<tr id='claim-{e(c.id)}'><th>{e(c.id)}</th><td>{e(c.source)}<br><small>{e(c.at)}</small></td>"
            f"<td>{e(c.claim)}{more}</td><td>{e(_published_str(j))}</td><td class=num>{e(_ours_str(j))}</td>"
            f"<td class=num>{e(_share_str(j))}</td><td>{badge(j.verdict)}</td><td class=note>{e(c.conflict)}</td></tr>")
    n = summary_line(judged)
    en_html = ("<details><summary>Summary of the verdicts in sentences</summary><ul>"
               + "".join(f"<li>{e(s)}</li>" for s in english_summary(judged)) + "</ul></details>")
    ja_html = ("<details lang=ja><summary>検証結果の要約（日本語）</summary><ul lang=ja>"
               + "".join(f"<li>{e(s)}</li>" for s in ja) + "</ul></details>" if ja else "")
    return (f"<style>{LEDGER_STYLE}</style><h2 id=claims>Claims of the original and our verdicts</h2>"
            f"<p><b>{e(n)}.</b> Each verdict is computed from our runs by the rule folded under the claim "
            "(never written by hand); click a claim's tally for its conditions.</p>"
            f"<table class=ledger><thead>{head}</thead><tbody>{''.join(body)}</tbody></table>{en_html}{ja_html}")


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

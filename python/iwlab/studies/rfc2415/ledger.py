"""RFC 2415 study: the claims ledger — the RFC's published numbers (with the RFC's page numbers), the
evidence cells the claims read, the claims and the suspected errata."""

from __future__ import annotations

import copy
from typing import Any

import numpy as np
import pandas as pd

from iwlab.studies.base import Cell, Table, cell, quantity
from iwlab.studies.rfc2415.scenarios import Plan
from iwlab.studies.rfc2415.tables import _label, _per_seed, _ratio


# ---------------------------------------------------------------------------------------------
# Claims ledger. Published numbers transcribed from RFC 2415; the claims'
# sentences are ours. Page numbers are the RFC's.

#: (webs, ftps) rows of Tables 1, 2 and 4, in the RFC's order.
RFC_ROWS = [(w, f) for w in (8, 16, 32) for f in (0, 1, 2, 3)]
#: Table 1 (p. 4): median page delay at IW=1 (s), then % decrease at IW=2, 3, 4. HTTP/1.0.
RFC_T1 = dict(zip(RFC_ROWS, [
    (0.56, 14.3, 17.9, 16.1), (1.06, 18.9, 25.5, 32.1), (1.18, 16.1, 17.1, 28.9), (1.26, 11.9, 19.0, 27.0),
    (0.64, 11.0, 15.6, 18.8), (1.04, 17.3, 24.0, 35.6), (1.22, 17.2, 20.5, 25.4), (1.31, 10.7, 21.4, 22.1),
    (0.92, 17.6, 28.6, 21.0), (1.19, 19.6, 25.0, 26.1), (1.43, 23.8, 35.0, 33.6), (1.56, 19.2, 29.5, 33.3)]))
#: Table 2 (p. 5): link utilisation % at IW=1…4, then packet drop rate % at IW=1…4.
RFC_T2 = dict(zip(RFC_ROWS, [
    ((34, 37, 38, 39), (0.0, 0.0, 0.0, 0.0)), ((95, 92, 93, 92), (0.6, 1.2, 1.4, 1.3)),
    ((98, 97, 97, 96), (1.8, 2.3, 2.3, 2.7)), ((98, 98, 98, 98), (2.6, 3.0, 3.5, 3.5)),
    ((67, 69, 69, 67), (0.1, 0.5, 0.8, 1.0)), ((96, 95, 93, 92), (2.1, 2.6, 2.9, 2.9)),
    ((98, 98, 97, 96), (3.5, 3.6, 4.2, 4.5)), ((99, 99, 98, 98), (4.5, 4.7, 5.2, 4.9)),
    ((92, 87, 85, 84), (0.1, 0.5, 0.8, 1.0)), ((98, 97, 96, 96), (2.1, 2.6, 2.9, 2.9)),
    ((99, 99, 98, 98), (3.5, 3.6, 4.2, 4.5)), ((100, 99, 99, 98), (9.3, 8.4, 7.7, 7.6))]))
FTP_ROWS = [(w, f) for w in (8, 16, 32) for f in (1, 2, 3)]
#: Table 3 (p. 6): FTP network power at IW=1…4, HTTP/1.0, in Mbytes/ms (p. 5: goodput ÷ median delay).
RFC_T3 = dict(zip(FTP_ROWS, [(4.7, 4.2, 4.2, 4.2), (3.0, 2.8, 3.0, 2.8), (2.2, 2.2, 2.2, 2.2),
                             (2.3, 2.4, 2.4, 2.5), (1.8, 2.0, 1.8, 1.9), (1.4, 1.6, 1.5, 1.7),
                             (0.7, 0.9, 1.3, 0.9), (0.8, 1.0, 1.3, 1.1), (0.7, 1.0, 1.2, 1.0)]))
#: Table 4 (p. 7): as Table 1, HTTP/1.1.
RFC_T4 = dict(zip(RFC_ROWS, [
    (0.47, 14.9, 19.1, 21.3), (0.84, 17.9, 19.0, 25.0), (0.99, 11.5, 17.3, 23.0), (1.04, 12.1, 20.2, 28.3),
    (0.54, 7.4, 14.8, 20.4), (0.89, 14.6, 21.3, 27.0), (1.02, 14.7, 19.6, 25.5), (1.11, 9.0, 17.0, 18.9),
    (0.94, 16.0, 29.8, 36.2), (1.23, 12.2, 28.5, 21.1), (1.39, 6.5, 13.7, 12.2), (1.46, 4.0, 11.0, 15.0)]))
#: Table 5 (p. 7): as Table 3, HTTP/1.1.
RFC_T5 = dict(zip(FTP_ROWS, [(4.2, 4.2, 4.2, 3.7), (2.7, 2.5, 2.6, 2.3), (2.1, 1.9, 2.0, 2.0),
                             (1.8, 1.8, 1.5, 1.4), (1.5, 1.2, 1.1, 1.5), (1.0, 1.0, 1.0, 1.0),
                             (0.3, 0.3, 0.5, 0.3), (0.4, 0.3, 0.4, 0.4), (0.4, 0.3, 0.4, 0.5)]))
#: Table 6 (p. 8): half-and-half. Goodput (MB over the 360 s run), median page delay (s), link
#: utilisation % and drops %; split rows print the link columns once (under IW=1).
RFC_T6 = {
    "16": {"IW=1 goodput (MB)": 35.5, "IW=1 delay (s)": 0.64, "IW=3 goodput (MB)": 36.4, "IW=3 delay (s)": 0.54,
           "IW=1 util (%)": 67, "IW=1 drops (%)": 0.1, "IW=3 util (%)": 69, "IW=3 drops (%)": 0.7},
    "8/8": {"IW=1 goodput (MB)": 16.9, "IW=1 delay (s)": 0.67, "IW=3 goodput (MB)": 18.9, "IW=3 delay (s)": 0.52,
            "IW=1 util (%)": 68, "IW=1 drops (%)": 0.5},
    "32": {"IW=1 goodput (MB)": 48.9, "IW=1 delay (s)": 0.91, "IW=3 goodput (MB)": 44.7, "IW=3 delay (s)": 0.68,
           "IW=1 util (%)": 92, "IW=1 drops (%)": 3.5, "IW=3 util (%)": 85, "IW=3 drops (%)": 4.3},
    "16/16": {"IW=1 goodput (MB)": 22.8, "IW=1 delay (s)": 0.94, "IW=3 goodput (MB)": 22.9, "IW=3 delay (s)": 0.71,
              "IW=1 util (%)": 89, "IW=1 drops (%)": 4.6},
    "64": {"IW=1 goodput (MB)": 51.9, "IW=1 delay (s)": 1.50, "IW=3 goodput (MB)": 47.6, "IW=3 delay (s)": 0.86,
           "IW=1 util (%)": 98, "IW=1 drops (%)": 13.0, "IW=3 util (%)": 91, "IW=3 drops (%)": 8.6},
    "32/32": {"IW=1 goodput (MB)": 29.0, "IW=1 delay (s)": 1.40, "IW=3 goodput (MB)": 22.0, "IW=3 delay (s)": 1.20,
              "IW=1 util (%)": 98, "IW=1 drops (%)": 12.0},
}
RFC_SECONDS = 360.0


def _cond(w: int, f: int, k: int | None = None) -> str:
    return f"webs={w}, ftps={f}" + (f", IW={k}" if k is not None else "")


def evidence(runs: pd.DataFrame, halves: dict[int, pd.DataFrame], p: Plan) -> dict[str, Any]:
    """Named cells the claims read besides the tables, each computed seed by seed (paired: the same
    seed gives the same arrivals and sizes at every IW) and then averaged with its 95 % interval."""
    ev: dict[str, Cell] = {}
    k0, kmax = p.iws[0], p.iws[-1]
    web_only: dict[int, pd.Series] = {}
    for http, tname in (("1.0", "T3"), ("1.1", "T5")):
        for w, f in p.rows(min_ftps=1):
            base = _per_seed(runs, "ftp_power", http=http, webs=w, ftps=f, iw=k0)
            for k in p.iws[1:]:
                ev[f"{tname} {w}/{f} IW={k}/IW={k0}"] = cell(_ratio(base, _per_seed(runs, "ftp_power", http=http,
                                                                                     webs=w, ftps=f, iw=k)))
    for w, f in p.rows():
        d = {k: _per_seed(runs, "delay", http="1.0", webs=w, ftps=f, iw=k) for k in p.iws}
        if 2 in d and 3 in d:
            a, b = d[k0].align(d[2], join="inner")
            step1 = (a - b) / a
            b2, c = d[2].align(d[3], join="inner")
            step2 = (b2 - c) / a.reindex(b2.index)
            ev[f"step {w}/{f}"] = cell((step1 - step2.reindex(step1.index)) * 100)
        dr = {k: _per_seed(runs, "drop", http="1.0", webs=w, ftps=f, iw=k) for k in (k0, kmax)}
        x, y = dr[k0].align(dr[kmax], join="inner")
        ev[f"drop rise {w}/{f}"] = cell(y - x)
        gp = {k: _per_seed(runs, "web_goodput", http="1.0", webs=w, ftps=f, iw=k) for k in (k0, kmax)}
        ev[f"web goodput {w}/{f}"] = cell(_ratio(gp[k0], gp[kmax]))
        if f >= 1:
            fd = {k: _per_seed(runs, "ftp_delay", http="1.0", webs=w, ftps=f, iw=k) for k in (k0, kmax)}
            ev[f"ftp delay {w}/{f}"] = cell(_ratio(fd[k0], fd[kmax]))
        pw = {k: _per_seed(runs, "web_power", http="1.0", webs=w, ftps=f, iw=k) for k in (k0, kmax)}
        ev[f"web power {w}/{f}"] = cell(_ratio(pw[k0], pw[kmax]))
        if f == 0:
            web_only[w] = _ratio(pw[k0], pw[kmax])
        if 3 in p.iws and 4 in p.iws:
            p11 = {k: _per_seed(runs, "web_power", http="1.1", webs=w, ftps=f, iw=k) for k in (3, 4)}
            ev[f"web power 1.1 {w}/{f} IW=4/IW=3"] = cell(_ratio(p11[3], p11[4]))
    if web_only:
        # §3's "up to 60 %" where web traffic dominates: the largest gain of the runs without FTP, seed by seed.
        ev["web power max no FTP"] = cell(pd.concat(web_only.values(), axis=1).max(axis=1, skipna=False))
    scale = RFC_SECONDS / quantity(p.duration)
    for n, g in halves.items():
        for k in (1, 3):
            same = g[(g["ga"] == k) & (g["gb"] == k) & (g["who"] == "all")].set_index("seed")
            split = g[(g["ga"] != g["gb"]) & (g["who"] != "all")]
            split = split.assign(iw=np.where(split["who"] == "A", split["ga"], split["gb"]))
            mine = split[split["iw"] == k].groupby("seed")[["goodput", "delay"]].mean()
            ev[f"half {n} IW={k}"] = cell(_ratio(same["delay"], mine["delay"]))
            ev[f"T6 {n} IW={k} goodput"] = cell(same["goodput"] * scale)
            ev[f"T6 {n // 2}/{n // 2} IW={k} goodput"] = cell(mine["goodput"] * scale)
    return ev


def ledger() -> list[Any]:
    """RFC 2415's claims as data: every printed cell of Tables 1–6 and the stated conclusions."""
    from iwlab.studies.claims import Between, Check, Claim, Direction, Near, NotTestable, Ref

    out = []
    delay_base = Near(rel=0.2, unit="s")
    decrease = Near(tol=5.0, unit="%")
    util = Near(tol=3.0, unit="%")
    drops = Near(tol=0.3, rel=0.2, unit="%")
    for tname, page, pub, http in (("T1", "p. 4", RFC_T1, "1.0"), ("T4", "p. 7", RFC_T4, "1.1")):
        n = tname[1]
        out.append(Claim(
            f"{tname}-base", f"RFC 2415 Table {n}", f"§3, {page}, column IW=1",
            f"Median web page delay with IW=1 (HTTP/{http}) for each webs/ftps scenario.",
            "median page delay at IW=1, s", delay_base,
            tuple(Check(_cond(w, f, 1), Ref(tname, _label(w, f), "IW=1 (s)"), v[0]) for (w, f), v in pub.items()),
            (tname,), "s", claim_ja=f"IW=1 のときの Web ページ遅延の中央値（HTTP/{http}、表 {n} の IW=1 列）"))
        out.append(Claim(
            f"{tname}-decrease", f"RFC 2415 Table {n}", f"§3, {page}, columns IW=2…4",
            f"Percent decrease of the median page delay at IW=2, 3, 4 against IW=1 (HTTP/{http}).",
            "% decrease of the median page delay vs IW=1 (positive = faster)", decrease,
            tuple(Check(_cond(w, f, k), Ref(tname, _label(w, f), f"IW={k} (% decrease)"), v[k - 1])
                  for (w, f), v in pub.items() for k in (2, 3, 4)),
            (tname, "web_power_normalised"), "%",
            claim_ja=f"IW=2〜4 でのページ遅延中央値の IW=1 に対する減少率（HTTP/{http}、表 {n}）"))
    for i, (key, what, rule, ja) in enumerate((("util", "Bottleneck utilisation", util, "ボトルネックリンク利用率"),
                                               ("drops", "Packet drop rate", drops, "パケット廃棄率"))):
        out.append(Claim(
            f"T2-{key}", "RFC 2415 Table 2", f"§3, p. 5, {'utilisation' if i == 0 else 'drop-rate'} columns",
            f"{what} at each IW, per webs/ftps scenario (HTTP/1.0).", f"{what.lower()}, %", rule,
            tuple(Check(_cond(w, f, k), Ref("T2", _label(w, f), f"{key} IW={k} (%)"), float(v[i][k - 1]))
                  for (w, f), v in RFC_T2.items() for k in (1, 2, 3, 4)), ("T2",), "%",
            claim_ja=f"各 IW での{ja}（表 2）"))
    unit_unknown = NotTestable("the RFC states the unit (Mbytes/ms, p. 5: goodput ÷ median delay) but not which "
                               "goodput (bytes per run or a rate) and which delay an FTP transfer has, so our power "
                               "(kB/s per s) cannot be converted; the IW=2…4 cells are compared as ratios to IW=1")
    for tname, page, pub, http in (("T3", "p. 6", RFC_T3, "1.0"), ("T5", "p. 7", RFC_T5, "1.1")):
        n = tname[1]
        out.append(Claim(
            f"{tname}-base", f"RFC 2415 Table {n}", f"§3, {page}, column IW=1",
            f"FTP network power with IW=1 (HTTP/{http} web traffic alongside).", "FTP network power at IW=1",
            unit_unknown,
            tuple(Check(_cond(w, f, 1), Ref(tname, _label(w, f), "IW=1"), v[0]) for (w, f), v in pub.items()),
            (tname,), claim_ja=f"IW=1 での FTP ネットワークパワー（表 {n}）"))
        out.append(Claim(
            f"{tname}-ratio", f"RFC 2415 Table {n}", f"§3, {page}, columns IW=2…4 ÷ IW=1",
            f"FTP network power at IW=2, 3, 4 relative to IW=1 (unit-free; HTTP/{http}).",
            "FTP power at IW=k ÷ FTP power at IW=1 (the published ratio is computed from the printed cells)",
            Near(rel=0.1),
            tuple(Check(_cond(w, f, k), f"{tname} {w}/{f} IW={k}/IW=1", round(v[k - 1] / v[0], 4))
                  for (w, f), v in pub.items() for k in (2, 3, 4)),
            (tname, "ftp_power_normalised"), claim_ja=f"IW=2〜4 の FTP ネットワークパワーの IW=1 に対する比（表 {n}）"))
    t6 = []
    for row, vals in RFC_T6.items():
        for col, v in vals.items():
            t6.append((row, col, v))
    out.append(Claim(
        "T6-goodput", "RFC 2415 Table 6", "§3, p. 8, G.put columns",
        "Web goodput of all-IW=1, all-IW=3 and each half of a split population.",
        "web goodput, MB per 360 s (ours scaled to 360 s when the run is shorter)",
        Near(rel=0.2, unit="MB"),
        tuple(Check(f"#webs {r}, {c.split()[0]}", f"T6 {r} {c.split()[0]} goodput", v) for r, c, v in t6
              if "goodput" in c), ("T6",), "MB", claim_ja="半数ずつの実験のグッドプット（表 6）"))
    out.append(Claim(
        "T6-delay", "RFC 2415 Table 6", "§3, p. 8, dly columns",
        "Median page delay of all-IW=1, all-IW=3 and each half of a split population.",
        "median page delay, s (the RFC's text, p. 7, says milli seconds for values printed in seconds)",
        delay_base, tuple(Check(f"#webs {r}, {c.split()[0]}", Ref("T6", r, c), v) for r, c, v in t6 if "delay" in c),
        ("T6",), "s", claim_ja="半数ずつの実験のページ遅延の中央値（表 6）"))
    out.append(Claim(
        "T6-link", "RFC 2415 Table 6", "§3, p. 8, L.util and Drops columns",
        "Utilisation and drop rate of the half-and-half runs.", "link utilisation / drop rate, %",
        Near(tol=3.0, rel=0.2, unit="%"),
        tuple(Check(f"#webs {r}, {c.replace(' (%)', '')}", Ref("T6", r, c), float(v)) for r, c, v in t6
              if "util" in c or "drops" in c), ("T6",), "%", claim_ja="半数ずつの実験のリンク利用率と廃棄率（表 6）"))
    # Stated conclusions
    out.append(Claim(
        "C-faster", "RFC 2415 §3 (Table 1 text)", "§3, p. 3",
        "A larger initial window shortens the median page delay in every webs/ftps scenario.",
        "% decrease of the median page delay at IW=3 and IW=4 vs IW=1", Direction(">", 0.0),
        tuple(Check(_cond(w, f, k), Ref("T1", _label(w, f), f"IW={k} (% decrease)")) for w, f in RFC_ROWS
              for k in (3, 4)), ("T1",), "%", "> 0 in every scenario (often ≈ 30 %)",
        claim_ja="IW を大きくすると、すべてのシナリオでページ遅延の中央値が短くなる"))
    out.append(Claim(
        "C-steep", "RFC 2415 §3 (Table 1 text)", "§3, p. 3",
        "Most of the gain comes from going from IW=1 to IW=2, because the median object fits in two segments.",
        "(gain IW1→2) − (gain IW2→3), in % of the IW=1 delay", Direction(">", 0.0),
        tuple(Check(_cond(w, f), f"step {w}/{f}") for w, f in RFC_ROWS), ("T1",), "pp", "> 0 (steep first step)",
        claim_ja="IW=1 から 2 への増加で最も大きく改善する（中央値のオブジェクトが 2 セグメントに収まるため）"))
    out.append(Claim(
        "C-drops", "RFC 2415 §3 (Table 2 text)", "§3, p. 4",
        "Drop rates grow with the IW, but by less than one point except in the most overloaded scenario.",
        "drop rate at IW=4 − drop rate at IW=1, percentage points (all rows but 32/3)", Between(0.0, 1.0),
        tuple(Check(_cond(w, f), f"drop rise {w}/{f}") for w, f in RFC_ROWS if (w, f) != (32, 3)), ("T2",), "pp",
        "0 … 1 pp", claim_ja="IW とともに廃棄率は上がるが、最も過負荷なシナリオを除き上昇は 1 ポイント未満",
        conflict="the text says 'less than 1%', Table 2 gives +1.0 at 16/2 and 32/2; checked as 0 … 1 inclusive"))
    out.append(Claim(
        "C-drops-overload", "RFC 2415 §3 (Table 2 text)", "§3, p. 4",
        "In the most overloaded scenario (32 webs, 3 FTPs) the drop rate falls as the IW grows.",
        "drop rate at IW=4 − drop rate at IW=1, pp, at 32/3", Direction("<", 0.0),
        (Check(_cond(32, 3), "drop rise 32/3", round(7.6 - 9.3, 2)),), ("T2",), "pp",
        claim_ja="最も過負荷なシナリオ（Web 32、FTP 3）では IW の増加とともに廃棄率が下がる"))
    out.append(Claim(
        "C-power", "RFC 2415 §3 (Fig. 2 text)", "§3, p. 5",
        "From IW=1 to IW=4 the web network power grows by at least 15 % in every non-pathological scenario.",
        "web power at IW=4 ÷ web power at IW=1", Direction(">", 1.15),
        tuple(Check(_cond(w, f), f"web power {w}/{f}") for w, f in RFC_ROWS if f < 2 or w < 32),
        ("web_power_normalised",), "", "≥ 1.15 (up to 1.6)",
        claim_ja="IW=1 から 4 にすると、Web のネットワークパワーは病的でないすべてのシナリオで 15 % 以上増える"))
    out.append(Claim(
        "C-power-web", "RFC 2415 §3 (Fig. 2 text)", "§3, p. 5",
        "Where web traffic dominates the link (no FTP), raising IW from 1 to 4 raises the web network power by up to "
        "60 %.",
        "web power at IW=4 ÷ at IW=1, the largest of the runs without FTP (8, 16, 32 webs), seed by seed; the RFC "
        "states no variability, so the band is ±25 % of its 60 % effect (±0.15)",
        Near(tol=0.15), (Check("largest of webs=8, 16, 32, no FTP", "web power max no FTP", 1.60),),
        ("web_power_normalised",), "", "up to 1.60 (60 %)",
        claim_ja="Web トラフィックが支配的なとき（FTP なし）、IW を 1 から 4 にすると Web のネットワークパワーは最大 60 % 増える"))
    out.append(Claim(
        "C-ftp", "RFC 2415 §3 (Table 3 text)", "§3, p. 6",
        "The IW of the web traffic leaves the FTP network power essentially unchanged (at most a slight fall).",
        "FTP power at IW=4 ÷ IW=1", Between(0.85, 1.15),
        tuple(Check(_cond(w, f), f"T3 {w}/{f} IW=4/IW=1") for w, f in FTP_ROWS), ("T3", "ftp_power_normalised"), "",
        "≈ 1 (no trend)", claim_ja="Web の IW を大きくしても FTP のネットワークパワーはほぼ変わらない"))
    out.append(Claim(
        "C-http11", "RFC 2415 §3 (Tables 4, 5 text)", "§3, p. 6",
        "With HTTP/1.1 a larger IW still shortens the page delay, more smoothly across IWs.",
        "% decrease of the median page delay at IW=4 vs IW=1, HTTP/1.1", Direction(">", 0.0),
        tuple(Check(_cond(w, f, 4), Ref("T4", _label(w, f), "IW=4 (% decrease)")) for w, f in RFC_ROWS), ("T4",),
        "%", "> 0", claim_ja="HTTP/1.1 でも IW を大きくするとページ遅延が短くなる"))
    out.append(Claim(
        "C-half-iw1", "RFC 2415 §3 (Table 6 text)", "§3, p. 8",
        "In the 8/8 and 16/16 splits the IW=1 half is not hurt by sharing the link with IW=3 clients.",
        "median page delay of the IW=1 half ÷ that of an all-IW=1 population (≤ 1.1 = not penalised)",
        Between(0.0, 1.1), tuple(Check(f"{n // 2}/{n // 2}", f"half {n} IW=1", round(RFC_T6[f"{n // 2}/{n // 2}"]
                                                                                   ["IW=1 delay (s)"] / RFC_T6[str(n)]["IW=1 delay (s)"], 3))
                                 for n in (16, 32)), ("T6",), "", claim_ja="8/8 と 16/16 の分割では、IW=1 のグループは IW=3 のグループと混在しても不利にならない"))
    out.append(Claim(
        "C-half-iw3", "RFC 2415 §3 (Table 6 text)", "§3, p. 8",
        "In the 8/8 and 16/16 splits the IW=3 half keeps the performance of an all-IW=3 population.",
        "median page delay of the IW=3 half ÷ that of an all-IW=3 population", Between(0.0, 1.1),
        tuple(Check(f"{n // 2}/{n // 2}", f"half {n} IW=3", round(RFC_T6[f"{n // 2}/{n // 2}"]["IW=3 delay (s)"]
                                                                  / RFC_T6[str(n)]["IW=3 delay (s)"], 3))
              for n in (16, 32)), ("T6",), "", claim_ja="8/8 と 16/16 の分割では、IW=3 のグループは全台 IW=3 のときの性能を保つ"))
    out.append(Claim(
        "C-half-64", "RFC 2415 §3 (Table 6 text)", "§3, p. 8",
        "In the heavily congested 32/32 split the IW=3 half is slowed down against an all-IW=3 population.",
        "median page delay of the IW=3 half ÷ that of an all-IW=3 population, 64 clients; Table 6 is one run per "
        "cell (no variability stated), so the band is ±25 % of the effect 1.395 − 1 (±0.099)",
        Near(tol=round(0.25 * (1.20 / 0.86 - 1), 3)),
        (Check("32/32", "half 64 IW=3", round(1.20 / 0.86, 3)),), ("T6",), "",
        "1.40 (derived: 1.20 ÷ 0.86 s, Table 6)", claim_ja="非常に混雑した 32/32 の分割では、IW=3 のグループが不利になる"))
    out.append(Claim(
        "C-red", "RFC 2415 §4", "§4, p. 8",
        "RED on the bottleneck with IW=1 brings page-delay gains like those of a larger IW on drop-tail.",
        "% decrease of the median page delay, RED IW=1 vs drop-tail IW=1; 'like a larger IW' read as the range "
        "of Table 1's decreases at IW=2…4 (10.7–35.6 %)", Between(10.7, 35.6),
        (Check("RED, IW=1", Ref("RED", "RED, IW=1", "% decrease vs drop-tail IW=1")),), ("RED",), "%",
        "like IW=2…4: 10.7–35.6 % (derived, Table 1)",
        claim_ja="ボトルネックに RED を用いると、IW=1 でも IW を大きくした場合と同程度の改善が得られる"))
    out.append(Claim(
        "C-http11-power", "RFC 2415 §3 (HTTP/1.1 text)", "§3, p. 6 (and Fig. 4)",
        "With HTTP/1.1, raising IW from 3 to 4 lowers the web network power in the two most congested cases.",
        "web network power at IW=4 ÷ at IW=3, HTTP/1.1", Direction("<", 1.0),
        tuple(Check(_cond(32, f), f"web power 1.1 32/{f} IW=4/IW=3") for f in (2, 3)), ("T4", "T5"), "",
        "< 1 (no number)", claim_ja="HTTP/1.1 では、最も混雑した 2 つの場合に IW を 3 から 4 にするとネットワークパワーが下がる"))
    out.append(Claim(
        "C-ftp-share", "RFC 2415 §3 (Table 3 text)", "§3, p. 6",
        "A larger IW lets web transfers take slightly more bandwidth, so FTP's network power may drop slightly.",
        "FTP network power at IW=4 ÷ at IW=1, HTTP/1.0; 'slight decrease' read as 0.85–1.0",
        Between(0.85, 1.0),
        tuple(Check(_cond(w, f), f"T3 {w}/{f} IW=4/IW=1") for w, f in FTP_ROWS), ("T3",), "",
        "slight decrease (no number)", claim_ja="IW を大きくすると Web が帯域をわずかに多く使い、FTP のパワーがわずかに下がりうる"))
    out.append(Claim(
        "C-util-ftp", "RFC 2415 §3 (Results, first paragraph)", "§3, p. 3",
        "With even one FTP client the bottleneck is more than 90 % utilised, whatever the IW.",
        "bottleneck utilisation, %, every scenario with at least one FTP client", Direction(">", 90.0),
        tuple(Check(_cond(w, f, k), Ref("T2", _label(w, f), f"util IW={k} (%)")) for w, f in RFC_ROWS if f >= 1
              for k in (1, 2, 3, 4)), ("T2",), "%", "> 90",
        claim_ja="FTP クライアントが 1 台でもあればボトルネックの利用率は 90 % を超える"))
    out.append(Claim(
        "C-ftp-delay", "RFC 2415 §3 (Results, first paragraph)", "§3, p. 3",
        "The IW has no detectable effect on the time of a 1 MB file transfer.",
        "median 1 MB transfer delay at IW=4 ÷ at IW=1; 'not detectable' read as within ±5 %",
        Between(0.95, 1.05),
        tuple(Check(_cond(w, f), f"ftp delay {w}/{f}") for w, f in RFC_ROWS if f >= 1), ("T3",), "", "≈ 1",
        claim_ja="IW は 1 MB のファイル転送時間に検出できるほどの影響を与えない"))
    out.append(Claim(
        "C-power-goodput", "RFC 2415 §3 (Fig. 2 text)", "§3, p. 5",
        "Part of the power gain of a larger IW is a higher web goodput (the other part the shorter delay).",
        "web goodput at IW=4 ÷ at IW=1, non-pathological scenarios", Direction(">", 1.0),
        tuple(Check(_cond(w, f), f"web goodput {w}/{f}") for w, f in RFC_ROWS if f < 2 or w < 32),
        ("web_power_normalised",), "", "> 1 (no number)",
        claim_ja="IW を大きくしたときのパワー向上の一部は Web のグッドプットの増加による"))
    return out


def errata() -> list[Any]:
    """Suspected errors in RFC 2415, with the evidence."""
    from iwlab.studies.claims import Erratum

    return [
        Erratum("RFC 2415 Table 2", "§3, p. 5, rows 32/0–32/2",
                "the drop-rate columns of rows 32/0, 32/1, 32/2 repeat those of rows 16/0, 16/1, 16/2 digit for digit "
                "(0.1 0.5 0.8 1.0 / 2.1 2.6 2.9 2.9 / 3.5 3.6 4.2 4.5) while their utilisation columns differ",
                "twelve identical numbers in a row is unlikely for separate simulations; the 32-web drop rates are "
                "probably a copy error. The T2-drops checks use the printed numbers; expect misses on those rows"),
        Erratum("RFC 2415 Table 6", "§3, p. 7 (text) and p. 8 (table)",
                "the text says page delays are reported 'in milli seconds', the table prints 0.52–1.50",
                "page delays of 0.5–1.5 ms are impossible with the RFC's 50 ms bottleneck (p. 2, RTT ≥ 100 ms); "
                "they are seconds, as in Tables 1 and 4 (0.47–1.56 s). The ledger reads them as seconds"),
        Erratum("RFC 2415 §3 (Table 2 text)", "§3, p. 4",
                "the text says the drop rate rose by 'less than 1%' from IW=1 to IW=4 in every case but the most "
                "overloaded one",
                "Table 2 on p. 5 gives +1.0 point at 16/2 (3.5 → 4.5) and 32/2 (3.5 → 4.5): equal to, not less "
                "than, 1. C-drops checks 0 … 1 point inclusive, the reading that fits both text and table"),
        Erratum("RFC 2415 §4", "§4, pp. 8–9",
                "the paragraph on RED ('We also used the RED queue management…') is printed twice, before and after "
                "the paragraph on scaling to faster links",
                "the two copies are word for word the same; one claim (C-red) is drawn from it"),
        Erratum("RFC 2415 Table 5", "§3, p. 7, title",
                "Table 5's title repeats Table 3's ('Network power of file transfers with an increase in the TCP IW "
                "size') without saying it is the HTTP/1.1 run",
                "the text before Tables 4 and 5 (p. 6) says both are the HTTP/1.1 results, and Table 4's title says "
                "http1.1; the ledger reads Table 5 as HTTP/1.1 (T5-ratio)"),
    ]

"""Congested-links study: the claims ledger — Nathan & Rai's claims with the evidence cells
they read (paired per seed)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np
import pandas as pd

from iwlab.studies.base import Cell, cell
from iwlab.studies.congested_links.scenarios import IWS, LEVELS, READINGS, levels_of
from iwlab.studies.congested_links.tables import _row, ratios


# ---------------------------------------------------------------------------------------------
# Claims ledger: Nathan & Rai's directional claims (the figures did not
# survive, so the claims are the directions their text states). Sentences are ours.

HIGH = (80, 90)
#: How each reading of the TCP background is named in the ledger (scenarios.READINGS).
READING_TEXT = {"iperf": "the iperf reading — one long-lived flow (§3)",
                "load": "the offered-load reading — Poisson transfers at the level (Fig. 3's ≈ 60 %)"}


def paired(runs: pd.DataFrame, metric: str, a: dict[str, Any], b: dict[str, Any], per_seed: bool = False):
    """Per seed: `metric` at selection `b` − at selection `a` (same seed ⇒ same background), then
    the mean and its 95 % interval (or, with `per_seed`, the per-seed differences themselves)."""
    def sel(d: dict[str, Any]) -> pd.Series:
        m = runs
        for k, v in d.items():
            m = m[m[k] == v]
        return m.groupby("seed")[metric].mean()

    x, y = sel(a).align(sel(b), join="inner")
    d = y - x
    return d if per_seed else cell(d.replace([np.inf, -np.inf], np.nan))


def evidence(runs: pd.DataFrame) -> dict[str, Cell]:
    """Named paired cells for the claims: size and IW differences, changes of the ratios with level."""
    ev: dict[str, Cell] = {}
    patterns, levels, sizes = runs["pattern"].unique(), sorted(runs["level"].unique()), set(runs["size"].unique())
    rc, rt = ratios(runs, "completion"), ratios(runs, "throughput")
    present = set(zip(runs["pattern"], runs["level"]))
    for pt in patterns:
        for lv in levels:
            if (pt, lv) not in present:
                continue
            row = {"pattern": pt, "level": lv}
            if {9, 10} <= sizes:
                r = rc[(rc["pattern"] == pt) & (rc["level"] == lv)].pivot_table(index="seed", columns="size",
                                                                                  values="ratio", aggfunc="first")
                if {9, 10} <= set(r.columns):
                    ev[f"ratio 10-9 {pt} {lv:g}"] = cell((r[10] - r[9]).replace([np.inf, -np.inf], np.nan))
            for name, rat in (("ratio", rc), ("thr ratio", rt)):
                # Fig. 2(b) / 5(b): 21 against 22 packets, ratio by ratio, paired by seed.
                r = rat[(rat["pattern"] == pt) & (rat["level"] == lv)].pivot_table(index="seed", columns="size",
                                                                                    values="ratio", aggfunc="first")
                if {21, 22} <= set(r.columns):
                    ev[f"{name} 22-21 {pt} {lv:g}"] = cell((r[22] - r[21]).replace([np.inf, -np.inf], np.nan))
            for size in sizes:
                for metric in ("lost", "retransmits", "timeouts", "fast_retransmits"):
                    ev[f"{metric} IW10-IW3 {pt} {lv:g} {size}"] = paired(
                        runs, metric, {**row, "size": size, "iw": "iw3"}, {**row, "size": size, "iw": "iw10"})
                # Magnitudes the paper states: timeouts "about twice" with IW10 (Fig. 8), fast
                # retransmits of ≈ 10 % (IW3) and ≈ 5 % (IW10) of flows (Fig. 9).
                per = {iw: runs[(runs["pattern"] == pt) & (runs["level"] == lv) & (runs["size"] == size)
                                & (runs["iw"] == iw)].set_index("seed") for iw in IWS}
                a, b = per["iw3"]["timeouts"].align(per["iw10"]["timeouts"], join="inner")
                ev[f"timeouts IW10/IW3 {pt} {lv:g} {size}"] = cell(b / a.where(a > 0))
                for iw in IWS:
                    ev[f"fast_retransmits {iw} {pt} {lv:g} {size}"] = cell(per[iw]["fast_retransmits"])
            for iw in IWS:
                for a, b in ((9, 10), (21, 22)):
                    if {a, b} <= sizes:
                        for metric in ("completion", "throughput", "lost"):
                            ev[f"{metric} {b}-{a} {pt} {lv:g} {iw}"] = paired(
                                runs, metric, {**row, "size": a, "iw": iw}, {**row, "size": b, "iw": iw})
            # §5: sizes 10 and 22 are "biased against IW3": slow start from 3 segments fills exactly
            # 3 + 6 = 9 and 3 + 6 + 12 = 21 packets, so one more packet costs IW3 an extra window (a
            # round trip) that IW10 does not pay. Per seed: IW3's step b − a minus IW10's.
            for a, b in ((9, 10), (21, 22)):
                if {a, b} <= sizes:
                    step = {iw: paired(runs, "completion", {**row, "size": a, "iw": iw},
                                       {**row, "size": b, "iw": iw}, per_seed=True) for iw in IWS}
                    d3, d10 = step["iw3"].align(step["iw10"], join="inner")
                    ev[f"bias {b}-{a} {pt} {lv:g}"] = cell((d3 - d10).replace([np.inf, -np.inf], np.nan))
        mine = sorted(lv for p_, lv in present if p_ == pt)
        if len(mine) > 1:
            for size in sizes:
                w = rt[(rt["pattern"] == pt) & (rt["size"] == size)].pivot_table(index="seed", columns="level",
                                                                                   values="ratio", aggfunc="first")
                if not {mine[0], mine[-1]} <= set(w.columns):
                    continue
                ev[f"thr ratio change {pt} {size}"] = cell((w[mine[-1]] - w[mine[0]]).replace([np.inf, -np.inf],
                                                                                               np.nan))
                for iw in IWS:
                    # Fig. 4: the throughput itself from the lowest to the highest level, paired by seed.
                    ev[f"thr change {pt} {size} {iw}"] = paired(runs, "throughput",
                                                                {"pattern": pt, "level": mine[0], "size": size,
                                                                 "iw": iw},
                                                                {"pattern": pt, "level": mine[-1], "size": size,
                                                                 "iw": iw})
    return ev


def ledger() -> list[Any]:
    from iwlab.studies.claims import Between, Check, Claim, Direction, Near, Ref

    def rows(pattern: str, levels=LEVELS) -> list[tuple[str, float]]:
        return [(pattern, lv) for lv in levels if lv in levels_of(pattern)]

    def ratio_checks(table: str, pats: list[tuple[str, float]], sizes) -> tuple:
        return tuple(Check(f"{pt} {lv:g} %, {s} seg", Ref(table, _row(pt, lv), f"{s} seg")) for pt, lv in pats
                     for s in sizes)

    def ev_checks(fmt: str, pats: list[tuple[str, float]], sizes=(None,), iws=(None,)) -> tuple:
        out = []
        for pt, lv in pats:
            for s in sizes:
                for iw in iws:
                    cond = f"{pt} {lv:g} %" + (f", {s} seg" if s else "") + (f", {iw.upper()}" if iw else "")
                    out.append(Check(cond, fmt.format(pt=pt, lv=f"{lv:g}", s=s, iw=iw)))
        return tuple(out)

    src = "Nathan & Rai"
    C, R = ("ratio_completion", "fig_ratio_completion"), ("ratio_throughput", "fig_ratio_throughput")

    def claims(V: str, M: str) -> list[Any]:
        """Every claim, with V and M the varying and mixed rows of one reading of the TCP background."""
        return [
            Claim("NR-2a", f"{src} Fig. 2(a)", "§4, text on Fig. 2(a)",
                  "Under constant (UDP) congestion IW10 takes longer than IW3 to complete 9- and 10-packet flows.",
                  "IW10/IW3 ratio of the mean completion time (> 1: IW3 faster)", Direction(">", 1.0),
                  ratio_checks("ratio_completion", rows("constant"), (9, 10)), C, "", "> 1 (figure, no numbers)"),
            Claim("NR-2a-10", f"{src} Fig. 2(a)", "§4, text on Fig. 2(a)",
                  "Under constant congestion 10-packet flows suffer from IW10 more than 9-packet flows.",
                  "completion-time ratio of 10-packet − 9-packet flows", Direction(">", 0.0),
                  ev_checks("ratio 10-9 {pt} {lv}", rows("constant")), C, "", "> 0"),
            Claim("NR-2b-21", f"{src} Fig. 2(b)", "§4, text on Fig. 2 (second panel)",
                  "Under constant congestion 21-packet flows complete about as fast with IW10 as with IW3.",
                  "IW10/IW3 completion-time ratio, 21 packets", Between(0.9, 1.05),
                  ratio_checks("ratio_completion", rows("constant"), (21,)), C, "", "≈ 1"),
            Claim("NR-2b-22", f"{src} Fig. 2(b)", "§4, text on Fig. 2 (second panel)",
                  "Under constant congestion IW10 completes 22-packet flows sooner than IW3.",
                  "IW10/IW3 completion-time ratio, 22 packets", Direction("<", 1.0),
                  ratio_checks("ratio_completion", rows("constant"), (22,)), C, "", "< 1"),
            Claim("NR-3-9", f"{src} Fig. 3(a)", "§4, text on Fig. 3",
                  "Under varying (TCP-only, ≈ 60 %) congestion IW10 completes 9-packet flows sooner than IW3.",
                  "IW10/IW3 completion-time ratio, 9 packets", Direction("<", 1.0),
                  ratio_checks("ratio_completion", [(V, 60)], (9,)), C, "", "< 1"),
            Claim("NR-3-large", f"{src} Fig. 3(a)", "§4, text on Fig. 3",
                  "Under varying congestion IW3 completes 21- and 22-packet flows slightly sooner than IW10.",
                  "IW10/IW3 completion-time ratio, 21 and 22 packets", Direction(">", 1.0),
                  ratio_checks("ratio_completion", [(V, 60)], (21, 22)), C, "", "> 1"),
            Claim("NR-3b-9", f"{src} Fig. 3(b)", "§4, text on Fig. 3",
                  "Under varying congestion IW10 gives 9-packet flows much more throughput than IW3.",
                  "IW10/IW3 throughput ratio, 9 packets", Direction(">", 1.0),
                  ratio_checks("ratio_throughput", [(V, 60)], (9,)), R, "", "> 1"),
            Claim("NR-3b-large", f"{src} Fig. 3(b)", "§4, text on Fig. 3",
                  "Under varying congestion IW3 gives 21- and 22-packet flows more throughput than IW10.",
                  "IW10/IW3 throughput ratio, 21 and 22 packets", Direction("<", 1.0),
                  ratio_checks("ratio_throughput", [(V, 60)], (21, 22)), R, "", "< 1"),
            Claim("NR-4", f"{src} Fig. 4", "§4.1, text on Fig. 4",
                  "Under mixed congestion the throughput of 9/10-packet flows falls faster with IW10 than with IW3 as "
                  "congestion rises.", "change of the IW10/IW3 throughput ratio from the lowest to the highest level",
                  Direction("<", 0.0), tuple(Check(f"{M}, {s} seg, lowest → highest level", f"thr ratio change {M} {s}")
                                             for s in (9, 10)), R, "", "< 0"),
            Claim("NR-4-10", f"{src} Fig. 4", "§4.1, text on Fig. 4",
                  "Under mixed congestion 10-packet flows get less throughput than 9-packet flows, whatever the IW.",
                  "throughput of 10-packet − 9-packet flows, kb/s", Direction("<", 0.0),
                  ev_checks("throughput 10-9 {pt} {lv} {iw}", rows(M), iws=IWS), ("throughput",), "kb/s", "< 0"),
            Claim("NR-5a", f"{src} Fig. 5(a)", "§4.1, text on Fig. 5(a)",
                  "Under constant congestion IW3 gives 9/10-packet flows more throughput than IW10 at every level.",
                  "IW10/IW3 throughput ratio (< 1: IW3 better)", Direction("<", 1.0),
                  ratio_checks("ratio_throughput", rows("constant"), (9, 10)), R, "", "< 1"),
            Claim("NR-5b", f"{src} Fig. 5(b)", "§4.1, text on Fig. 5(b)",
                  "Under constant congestion the throughput ratio of 21/22-packet flows stays close to 1.",
                  "IW10/IW3 throughput ratio, 21 and 22 packets", Between(0.9, 1.1),
                  ratio_checks("ratio_throughput", rows("constant"), (21, 22)), R, "", "≈ 1"),
            Claim("NR-6-size", f"{src} Fig. 6", "§4.2, text on Fig. 6",
                  "Under mixed congestion 10-packet flows lose more packets than 9-packet flows.",
                  "packets lost per flow, 10-packet − 9-packet", Direction(">", 0.0),
                  ev_checks("lost 10-9 {pt} {lv} {iw}", rows(M), iws=IWS), ("losses", "fig_losses"), "", "> 0"),
            Claim("NR-6b", f"{src} Fig. 6(b)", "§4.2, text on Fig. 6",
                  "Under mixed congestion IW10 loses more packets than IW3 in 10-packet flows.",
                  "packets lost per flow, IW10 − IW3", Direction(">", 0.0),
                  ev_checks("lost IW10-IW3 {pt} {lv} {s}", rows(M), (10,)), ("losses", "fig_losses"), "", "> 0"),
            Claim("NR-6a", f"{src} Fig. 6(a)", "§4.2, text on Fig. 6",
                  "Under heavy mixed congestion IW10 loses fewer packets than IW3 in 9-packet flows.",
                  "packets lost per flow, IW10 − IW3, levels ≥ 80 %", Direction("<", 0.0),
                  ev_checks("lost IW10-IW3 {pt} {lv} {s}", rows(M, HIGH), (9,)), ("losses", "fig_losses"), "", "< 0"),
            Claim("NR-6c", f"{src} Fig. 6", "§4.2, text on Fig. 6",
                  "Under mixed congestion IW10 retransmits more than IW3 for flows of at most 10 packets.",
                  "retransmitted segments per flow, IW10 − IW3", Direction(">", 0.0),
                  ev_checks("retransmits IW10-IW3 {pt} {lv} {s}", rows(M), (9, 10)), ("retransmissions",), "", "> 0"),
            Claim("NR-7a", f"{src} Fig. 7", "§4.2, text on Fig. 7",
                  "Under mixed congestion IW10 loses more packets than IW3 in 21/22-packet flows as congestion grows.",
                  "packets lost per flow, IW10 − IW3", Direction(">", 0.0),
                  ev_checks("lost IW10-IW3 {pt} {lv} {s}", rows(M), (21, 22)), ("losses", "fig_losses"), "", "> 0"),
            Claim("NR-7b", f"{src} Fig. 7", "§4.2, text on Fig. 7",
                  "Under mixed congestion IW10 retransmits far more than IW3 in 21/22-packet flows.",
                  "retransmitted segments per flow, IW10 − IW3", Direction(">", 0.0),
                  ev_checks("retransmits IW10-IW3 {pt} {lv} {s}", rows(M), (21, 22)), ("retransmissions",), "",
                  "> 0"),
            Claim("NR-8", f"{src} Fig. 8", "§4.2, text on Fig. 8",
                  "Under mixed congestion IW10 takes about twice as many timeouts as IW3 in flows of at most 10 packets.",
                  "retransmission timeouts per flow, IW10 ÷ IW3 (seed by seed); 'about twice' read as 1.5–2.5",
                  Between(1.5, 2.5),
                  ev_checks("timeouts IW10/IW3 {pt} {lv} {s}", rows(M), (9, 10)), ("timeouts", "fig_timeouts"), "",
                  "≈ 2× IW3"),
            Claim("NR-9", f"{src} Fig. 9", "§4.2, text on Fig. 9",
                  "Under mixed congestion 21/22-packet flows enter fast retransmit more often with IW3 (≈ 10 %) than "
                  "with IW10 (≈ 5 %).", "fast retransmits per flow (≈ share of flows with one), IW3 and IW10",
                  Near(tol=0.03),
                  tuple(Check(f"{M} {lv:g} %, {sz} seg, {iw.upper()}", f"fast_retransmits {iw} {M} {lv:g} {sz}", pub)
                        for lv in LEVELS for sz in (21, 22) for iw, pub in (("iw3", 0.10), ("iw10", 0.05))),
                  ("fast_retransmits",), "", "≈ 0.10 (IW3), ≈ 0.05 (IW10)"),
            Claim("NR-C80", f"{src} §5", "§5 (conclusion)",
                  "On a link congested at 80 % and more, IW10 serves flows under 10 packets worse than IW3.",
                  "IW10/IW3 completion-time ratio, 9 and 10 packets, 80 and 90 % (the paper's range ends at 90 %, §4.1), "
                  "constant and mixed patterns", Direction(">", 1.0),
                  ratio_checks("ratio_completion", [(pt, lv) for pt in ("constant", M) for lv in (80, 90)], (9, 10)),
                  C, "", "> 1"),
            Claim("NR-C60", f"{src} §5", "§5 (conclusion)",
                  "At about 60 % congestion and below, IW10 serves flows under 10 packets well (better than IW3).",
                  "IW10/IW3 completion-time ratio, 9 and 10 packets, varying pattern (≈ 60 % on average, the paper's "
                  "evidence for this, Fig. 3)", Direction("<", 1.0),
                  ratio_checks("ratio_completion", [(V, 60)], (9, 10)), C, "", "< 1",
                  conflict="NR-2a and NR-5a say IW3 beats IW10 under constant congestion at every level, 60 % included; "
                           "this conclusion rests on the varying pattern (Fig. 3), which is what it is checked on"),
            Claim("NR-C-size", f"{src} §5", "§5 (conclusion), abstract",
                  "Flows of 9 and 21 packets complete sooner than flows of 10 and 22 packets, whatever the IW.",
                  "mean completion time, 10 − 9 and 22 − 21 packets, s", Direction(">", 0.0),
                  tuple(Check(f"{pt} {lv:g} %, {iw.upper()}, {b} vs {a}", f"completion {b}-{a} {pt} {lv:g} {iw}")
                        for pt in ("constant", V, M) for lv in levels_of(pt) for iw in IWS for a, b in ((9, 10), (21, 22))),
                  ("completion", "fig_completion"), "s", "> 0"),
            Claim("NR-C-bias", f"{src} §5", "§5 (conclusion), §4.1 text on Fig. 5(b)",
                  "Flow sizes of 10 and 22 packets are biased against IW3: one packet more than 9 or 21 costs IW3 an "
                  "extra window, so it lengthens IW3's completion time more than IW10's.",
                  "(IW3's completion time 10 − 9 packets) − (IW10's), and the same for 22 − 21, s, paired by seed",
                  Direction(">", 0.0),
                  tuple(Check(f"{pt} {lv:g} %, {b} vs {a}", f"bias {b}-{a} {pt} {lv:g}")
                        for pt in ("constant", V, M) for lv in levels_of(pt) for a, b in ((9, 10), (21, 22))),
                  ("completion", "fig_completion"), "s", "> 0"),
            Claim("NR-2b-same", f"{src} Fig. 2(b)", "§4, text on Fig. 2 (second panel)",
                  "Under constant congestion the IW10/IW3 completion-time ratios of 21- and 22-packet flows differ "
                  "very little.", "IW10/IW3 completion-time ratio, 22 − 21 packets, paired by seed; 'very minimal' "
                  "read as within ±0.1", Between(-0.1, 0.1),
                  ev_checks("ratio 22-21 {pt} {lv}", rows("constant")), C, "", "≈ 0"),
            Claim("NR-3-size", f"{src} Fig. 3(a)", "§4, text on Fig. 3",
                  "Under varying congestion IW10 favours 9-packet flows more than 10-packet flows.",
                  "IW10/IW3 completion-time ratio, 10 − 9 packets, paired by seed", Direction(">", 0.0),
                  ev_checks("ratio 10-9 {pt} {lv}", [(V, 60)]), C, "", "> 0"),
            Claim("NR-4-fall", f"{src} Fig. 4", "§4.1, text on Fig. 4",
                  "Under mixed congestion the throughput of 9/10-packet flows falls with either IW as congestion rises "
                  "toward 100 %.", "throughput at the highest level − at the lowest, kb/s, paired by seed "
                  "(the paper's 'to zero' at 100 % is beyond the levels run)", Direction("<", 0.0),
                  tuple(Check(f"{M}, {s} seg, {iw.upper()}, lowest → highest level", f"thr change {M} {s} {iw}")
                        for s in (9, 10) for iw in IWS), ("throughput",), "kb/s", "< 0"),
            Claim("NR-4-90", f"{src} Fig. 4", "§4.1, text on Fig. 4",
                  "At 90 % mixed congestion the throughput of 9/10-packet flows hardly depends on the IW.",
                  "IW10/IW3 throughput ratio at mixed 90 %; 'very negligible' read as within ±10 %", Between(0.9, 1.1),
                  ratio_checks("ratio_throughput", [(M, 90)], (9, 10)), R, "", "≈ 1"),
            Claim("NR-5a-size", f"{src} Fig. 5(a)", "§4.1, text on Fig. 5(a)",
                  "Under constant congestion 9-packet flows get more throughput than 10-packet flows.",
                  "throughput of 10-packet − 9-packet flows, kb/s", Direction("<", 0.0),
                  ev_checks("throughput 10-9 {pt} {lv} {iw}", rows("constant"), iws=IWS), ("throughput",), "kb/s", "< 0"),
            Claim("NR-5b-size", f"{src} Fig. 5(b)", "§4.1, text on Fig. 5(b)",
                  "Under constant congestion IW3 favours 21-packet flows more than 22-packet flows.",
                  "IW10/IW3 throughput ratio, 22 − 21 packets, paired by seed (> 0: IW3's edge larger at 21)",
                  Direction(">", 0.0), ev_checks("thr ratio 22-21 {pt} {lv}", rows("constant")), R, "", "> 0"),
            Claim("NR-9-timeouts", f"{src} Fig. 9", "§4.2, text on Fig. 9 ('a similar pattern as in Figure 9 above')",
                  "Under mixed congestion IW10 also takes more timeouts than IW3 in 21/22-packet flows.",
                  "retransmission timeouts per flow, IW10 − IW3", Direction(">", 0.0),
                  ev_checks("timeouts IW10-IW3 {pt} {lv} {s}", rows(M), (21, 22)), ("timeouts", "fig_timeouts"),
                  "", "> 0"),
            Claim("NR-9-small", f"{src} Fig. 9", "§4.2, text on Fig. 9",
                  "Under mixed congestion flows of at most 10 packets almost never enter fast retransmit.",
                  "fast retransmits per flow (≈ share of flows with one), 9 and 10 packets, IW3 and IW10",
                  Near(tol=0.03),
                  tuple(Check(f"{M} {lv:g} %, {sz} seg, {iw.upper()}", f"fast_retransmits {iw} {M} {lv:g} {sz}", 0.0)
                        for lv in LEVELS for sz in (9, 10) for iw in IWS),
                  ("fast_retransmits",), "", "≈ 0"),
        ]

    # Claims on the varying or mixed pattern are judged once per reading of the TCP background
    # (scenarios.READINGS), each row labelled with its reading; the others once.
    by_reading = {r: claims(f"varying/{r}", f"mixed/{r}") for r in READINGS}
    out = []
    for i, c in enumerate(by_reading["iperf"]):
        if not any("/" in k.condition for k in c.checks):
            out.append(c)
            continue
        for r in READINGS:
            cr = by_reading[r][i]
            out.append(replace(cr, id=f"{c.id}/{r}", quantity=f"{cr.quantity}; TCP background: {READING_TEXT[r]}"))
    return out


def errata() -> list[Any]:
    """Suspected errors in Nathan & Rai's text (figure references and a caption), with the evidence."""
    from iwlab.studies.claims import Erratum

    return [
        Erratum("Nathan & Rai §4", "§4, text on Fig. 2",
                "the sentences on 21- and 22-packet flows refer to 'figure 2(a)', the panel of 9 and 10 packets",
                "Fig. 2 has two panels and the first sentence gives 2(a) to 9/10 packets; the 21/22 sentences can only "
                "be about 2(b). The ledger cites them as Fig. 2(b) (NR-2b-21, NR-2b-22, NR-2b-same)"),
        Erratum("Nathan & Rai Fig. 8", "§4.2, caption of Fig. 8",
                "the caption reads 'Average throughput for shorter flows under mixed congestion' (Fig. 4's caption) "
                "while the text on it is about timeouts",
                "the paragraph on Fig. 8 speaks only of IW10's timeouts being twice IW3's, and Fig. 9's panels are "
                "'Timeouts and fast retransmits'; the ledger reads Fig. 8 as timeouts (NR-8)"),
        Erratum("Nathan & Rai §4.2", "§4.2, text on Fig. 9",
                "Fig. 9's paragraph says its flows show 'a similar pattern as in Figure 9 above'",
                "a figure cannot be compared with itself; the preceding figure on timeouts is Fig. 8, so the "
                "ledger reads 'Figure 8' (NR-9-timeouts)"),
    ]

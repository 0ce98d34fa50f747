"""RFC 2415 study: Tables 1–6 and the RED table in the RFC's layout (every cell a mean across seeds
with its 95 % interval), the figures, the sentences computed from them and the model notes."""

from __future__ import annotations

import copy
import time
from typing import Any

import numpy as np
import pandas as pd

from iwlab.scenario import Scenario
from iwlab.studies.base import Cell, Figure, Table, cell, iw_col_keys, metric_name
from iwlab.studies.rfc2415.scenarios import (FULL_DURATION, FULL_SEEDS, NAME, RFC2415_VARIANTS, TINY_ENV, TITLE, Plan,
                                             _metrics, _Runner, _without_ftp, plan)


# ---------------------------------------------------------------------------------------------
# Per-seed values and cells


def _per_seed(df: pd.DataFrame, col: str, **where: Any) -> pd.Series:
    sel = df
    for k, v in where.items():
        sel = sel[sel[k] == v]
    return sel.set_index("seed")[col].astype(float).sort_index()


def _decrease(base: pd.Series, other: pd.Series) -> pd.Series:
    """% decrease of `other` against `base`, seed by seed (paired)."""
    b, o = base.align(other, join="inner")
    with np.errstate(divide="ignore", invalid="ignore"):
        return 100 * (1 - o / b.where(b > 0))


def _ratio(base: pd.Series, other: pd.Series) -> pd.Series:
    b, o = base.align(other, join="inner")
    with np.errstate(divide="ignore", invalid="ignore"):
        return o / b.where(b > 0)


def _label(w: int, f: int) -> str:
    return f"{w}/{f}"


def _delay_table(name: str, runs: pd.DataFrame, p: Plan, http: str) -> Table:
    cells: dict[str, dict[str, Cell]] = {}
    for w, f in p.rows():
        base = _per_seed(runs, "delay", http=http, webs=w, ftps=f, iw=p.iws[0])
        row = {f"IW={p.iws[0]} (s)": cell(base)}
        for k in p.iws[1:]:
            row[f"IW={k} (% decrease)"] = cell(_decrease(base, _per_seed(runs, "delay", http=http, webs=w, ftps=f, iw=k)))
        cells[_label(w, f)] = row
    return Table.from_cells(name, f"Median web page delay, HTTP/{http}", cells, index_name="webs/ftps",
                            note=f"IW={p.iws[0]}: median page delay in seconds; other IWs: % decrease of the median "
                                 f"page delay against IW={p.iws[0]} (same seed, then averaged). Positive = faster.")


def _link_table(name: str, runs: pd.DataFrame, p: Plan, http: str) -> Table:
    cells: dict[str, dict[str, Cell]] = {}
    for w, f in p.rows():
        row = {f"util IW={k} (%)": cell(_per_seed(runs, "util", http=http, webs=w, ftps=f, iw=k)) for k in p.iws}
        row.update({f"drops IW={k} (%)": cell(_per_seed(runs, "drop", http=http, webs=w, ftps=f, iw=k))
                    for k in p.iws})
        cells[_label(w, f)] = row
    return Table.from_cells(name, f"Link utilisation and packet drop rates, HTTP/{http}", cells, index_name="webs/ftps",
                            note="The bottleneck in the data direction (servers → clients, router-right → "
                                 "router-left): busy time % and packets dropped / packets arrived %.")


def _ftp_power_table(name: str, runs: pd.DataFrame, p: Plan, http: str) -> Table:
    cells = {_label(w, f): {f"IW={k}": cell(_per_seed(runs, "ftp_power", http=http, webs=w, ftps=f, iw=k))
                            for k in p.iws} for w, f in p.rows(min_ftps=1)}
    return Table.from_cells(name, f"Network power of file transfers, HTTP/{http}", cells, index_name="webs/ftps",
                            note="FTP goodput (kB/s, all FTP clients) / median 1 MB transfer delay (s), "
                                 "in kB/s per s.")




def _half_table(halves: dict[int, pd.DataFrame]) -> Table:
    cells: dict[str, dict[str, Cell]] = {}
    for n, g in halves.items():
        same = {k: g[(g["ga"] == k) & (g["gb"] == k) & (g["who"] == "all")] for k in (1, 3)}
        row: dict[str, Cell] = {}
        for k in (1, 3):
            row[f"IW={k} goodput (MB)"] = cell(same[k].set_index("seed")["goodput"])
            row[f"IW={k} delay (s)"] = cell(same[k].set_index("seed")["delay"])
        for k in (1, 3):
            row[f"IW={k} util (%)"] = cell(same[k].set_index("seed")["util"])
            row[f"IW={k} drops (%)"] = cell(same[k].set_index("seed")["drop"])
        cells[str(n)] = row
        # Split: both assignments (A=IW1/B=IW3 and A=IW3/B=IW1), averaged per seed.
        split = g[g["ga"] != g["gb"]]
        groups = split[split["who"] != "all"].assign(iw=lambda d: np.where(d["who"] == "A", d["ga"], d["gb"]))
        whole = split[split["who"] == "all"].groupby("seed")[["util", "drop"]].mean()
        row = {}
        for k in (1, 3):
            mine = groups[groups["iw"] == k].groupby("seed")[["goodput", "delay"]].mean()
            row[f"IW={k} goodput (MB)"] = cell(mine["goodput"])
            row[f"IW={k} delay (s)"] = cell(mine["delay"])
        row["IW=1 util (%)"] = cell(whole["util"])
        row["IW=1 drops (%)"] = cell(whole["drop"])
        cells[f"{n // 2}/{n // 2}"] = row
    return Table.from_cells(
        "T6", "Results for the half-and-half scenario (HTTP/1.0, no FTP)", cells, index_name="#webs",
        note="Rows 'n': all n clients on IW=1 (IW=1 columns) or all on IW=3 (IW=3 columns). Rows 'n/2/n/2': "
             "the IW=1 half and the IW=3 half of one population (goodput and median page delay per group); as "
             "in the RFC, the link columns of a split row sit under IW=1 and describe the whole mixed run. "
             "Goodput: MB of web payload delivered over the run.")


# ---------------------------------------------------------------------------------------------
# RED


def _red_table(run: _Runner, base: Scenario, direction: str, p: Plan) -> tuple[Table, dict[str, Any]]:
    w, f = p.red_at
    if f:
        sc = base.with_overrides({"apps[0].count": w, "apps[1].count": f})
    else:
        sc = _without_ftp(base).with_overrides({"apps[0].count": w})
    tail = copy.deepcopy(sc.data["topology"]["bottleneck"]["queue"])
    red = {"kind": "red", "limit": tail.get("limit", "25pkt")}
    df = run("red", sc, {"topology.bottleneck.queue": [tail, red], "iw.default": [f"iw{k}" for k in p.iws]})
    runs = _metrics(df, direction).assign(queue=df["topology.bottleneck.queue"].map(lambda q: q["kind"]),
                                          iw=df["iw.default"].str.removeprefix("iw").astype(int))
    ref = _per_seed(runs, "delay", queue=tail["kind"], iw=p.iws[0])
    cells: dict[str, dict[str, Cell]] = {}
    for q, label in ((tail["kind"], "drop-tail"), ("red", "RED")):
        for k in p.iws:
            d = _per_seed(runs, "delay", queue=q, iw=k)
            cells[f"{label}, IW={k}"] = {
                "median page delay (s)": cell(d),
                f"% decrease vs drop-tail IW={p.iws[0]}": cell(_decrease(ref, d)),
                "util (%)": cell(_per_seed(runs, "util", queue=q, iw=k)),
                "drops (%)": cell(_per_seed(runs, "drop", queue=q, iw=k)),
                "web power (kB/s per s)": cell(_per_seed(runs, "web_power", queue=q, iw=k)),
            }
    table = Table.from_cells("RED", f"RED on the bottleneck vs drop-tail, {w} webs / {f} FTP, HTTP/1.0", cells,
                             index_name="queue, IW",
                             note="The comparison RFC 2415 §4 mentions without a table: RED (engine defaults "
                                  "below) with the drop-tail buffer as its hard limit, against drop-tail, at each IW.")
    return table, red


# ---------------------------------------------------------------------------------------------
# Figures


def _power_figures(runs: pd.DataFrame, p: Plan) -> list[Figure]:
    from iwlab.report.figures import versus

    xl = [str(k) for k in p.iws]

    def panels(col: str, normalised: bool, min_ftps: int) -> list:
        out = []
        for http in p.https:
            for w in p.webs:
                series = {}
                for f in [f for f in p.ftps if f >= min_ftps]:
                    base = _per_seed(runs, col, http=http, webs=w, ftps=f, iw=p.iws[0])
                    cs = [cell(_ratio(base, _per_seed(runs, col, http=http, webs=w, ftps=f, iw=k)) if normalised
                               else _per_seed(runs, col, http=http, webs=w, ftps=f, iw=k)) for k in p.iws]
                    series[f"{f} FTP"] = ([c.value for c in cs], [c.lo for c in cs], [c.hi for c in cs])
                ylabel = f"power ÷ power at IW={p.iws[0]}" if normalised else "power (kB/s per s)"
                out.append((f"HTTP/{http}, {w} webs", ylabel, series))
        return out

    figs = []
    for col, who, min_ftps in (("web_power", "Web", 0), ("ftp_power", "FTP", 1)):
        if not any(f >= min_ftps for f in p.ftps):
            continue
        for normalised in (False, True):
            name = f"{col}{'_normalised' if normalised else ''}"
            what = (f"{who} network power normalised by its IW={p.iws[0]} value (per seed)" if normalised
                    else f"{who} network power (goodput / median {'page' if who == 'Web' else 'transfer'} delay)")
            figs.append(Figure(name, versus(panels(col, normalised, min_ftps), xl, "IW (segments)", ncols=len(p.webs),
                                            legend_title="FTP clients"),
                               f"{what} vs IW, one panel per HTTP version and number of web clients; "
                               "mean across seeds with 95 % bootstrap intervals."))
    return figs


# ---------------------------------------------------------------------------------------------
# Conclusions (English and Japanese, from the tables' numbers)


def _num(v: float) -> str:
    return "{:.3g}".format(v)


def _get(t: Table, row: str, col: str) -> tuple[str, str, str] | None:
    if row not in t.frame.index or col not in t.frame.columns or pd.isna(t.frame.loc[row, col]):
        return None
    v = float(t.frame.loc[row, col])
    lo = float(t.low.loc[row, col]) if t.low is not None else v
    hi = float(t.high.loc[row, col]) if t.high is not None else v
    return _num(v), _num(lo), _num(hi)


def _ci(c: tuple[str, str, str]) -> str:
    return f"{c[0]} % [{c[1]}, {c[2]}]" if c[1] != c[2] else f"{c[0]} %"


def _delay_sentences(t: Table, p: Plan, http: str) -> tuple[str, str] | None:
    first, last = t.frame.index[0], t.frame.index[-1]
    k0, k = p.iws[0], p.iws[-1]
    c0, cl = f"IW={k0} (s)", f"IW={k} (% decrease)"
    a, b, da, db = _get(t, first, cl), _get(t, last, cl), _get(t, first, c0), _get(t, last, c0)
    if None in (a, b, da, db):
        return None
    col = t.frame[cl].dropna()
    lo_row, hi_row = col.idxmin(), col.idxmax()
    verb = "lowered" if float(a[0]) >= 0 and float(b[0]) >= 0 else "changed"
    en = (f"With HTTP/{http}, raising IW from {k0} to {k} {verb} the median page delay by {_ci(a)} at "
          f"{first} webs/FTPs ({da[0]} s at IW={k0}) and by {_ci(b)} at {last} ({db[0]} s at IW={k0}); across "
          f"the scenarios of {t.name} the change ranged from {_num(col[lo_row])} % ({lo_row}) to "
          f"{_num(col[hi_row])} % ({hi_row}) (positive = faster).")
    ja_verb = "減少した" if float(a[0]) >= 0 and float(b[0]) >= 0 else "変化した（負の値は増加）"
    ja = (f"HTTP/{http} では、IW を {k0} から {k} に増やすと、ページ遅延の中央値は {first}（Web/FTP クライアント数、"
          f"IW={k0} で {da[0]} 秒）で {_ci(a)}、{last}（IW={k0} で {db[0]} 秒）で {_ci(b)} {ja_verb}。"
          f"{t.name} の全シナリオでの減少率は {_num(col[lo_row])} %（{lo_row}）から "
          f"{_num(col[hi_row])} %（{hi_row}）であった（正の値は高速化を表す）。")
    return en, ja


def _link_sentences(t: Table, p: Plan) -> tuple[str, str] | None:
    k0, k = p.iws[0], p.iws[-1]
    first, last = t.frame.index[0], t.frame.index[-1]
    u = {(r, i): _get(t, r, f"util IW={i} (%)") for r in (first, last) for i in (k0, k)}
    d = {(r, i): _get(t, r, f"drops IW={i} (%)") for r in (first, last) for i in (k0, k)}
    if None in u.values() or None in d.values():
        return None
    rise = (t.frame[f"drops IW={k} (%)"] - t.frame[f"drops IW={k0} (%)"]).dropna()
    top = rise.idxmax()
    x, y = _num(t.frame.loc[top, f"drops IW={k0} (%)"]), _num(t.frame.loc[top, f"drops IW={k} (%)"])
    en = (f"From IW={k0} to IW={k}, bottleneck utilisation (servers → clients) went from {u[first, k0][0]} % to "
          f"{u[first, k][0]} % at {first} and from {u[last, k0][0]} % to {u[last, k][0]} % at {last}, and the "
          f"drop rate from {d[first, k0][0]} % to {d[first, k][0]} % and from {d[last, k0][0]} % to "
          f"{d[last, k][0]} %; the drop rate rose most at {top} ({x} % → {y} %).")
    ja = (f"IW={k0} から IW={k} にすると、ボトルネックリンク（サーバ→クライアント方向）の利用率は {first} で "
          f"{u[first, k0][0]} % から {u[first, k][0]} % に、{last} で {u[last, k0][0]} % から {u[last, k][0]} % に"
          f"なり、パケット廃棄率は {d[first, k0][0]} % から {d[first, k][0]} % に、{d[last, k0][0]} % から "
          f"{d[last, k][0]} % になった。廃棄率の上昇が最も大きかったのは {top}（{x} % → {y} %）である。")
    return en, ja


def _ftp_sentences(t: Table, p: Plan, http: str) -> tuple[str, str] | None:
    if t.frame.empty:
        return None
    k0, k = p.iws[0], p.iws[-1]
    first, last = t.frame.index[0], t.frame.index[-1]
    v = {(r, i): _get(t, r, f"IW={i}") for r in (first, last) for i in (k0, k)}
    if None in v.values():
        return None
    en = (f"FTP network power (HTTP/{http}) went from {v[first, k0][0]} at IW={k0} to {v[first, k][0]} kB/s per s "
          f"at IW={k} at {first} webs/FTPs, and from {v[last, k0][0]} to {v[last, k][0]} at {last}.")
    ja = (f"FTP のネットワークパワー（HTTP/{http}）は、{first}（Web/FTP）で IW={k0} の {v[first, k0][0]} から "
          f"IW={k} の {v[first, k][0]} kB/s/s に、{last} で {v[last, k0][0]} から {v[last, k][0]} になった。")
    return en, ja


def _half_sentences(t: Table) -> tuple[str, str] | None:
    rows = [r for r in t.frame.index if "/" in str(r)]
    if not rows:
        return None
    en, ja = [], []
    for split in dict.fromkeys([rows[0], rows[-1]]):
        n = str(2 * int(split.split("/")[0]))
        a, b = _get(t, split, "IW=1 delay (s)"), _get(t, n, "IW=1 delay (s)")
        c, d = _get(t, split, "IW=3 delay (s)"), _get(t, n, "IW=3 delay (s)")
        if None in (a, b, c, d):
            continue
        en.append(f"with {split} clients the IW=1 half waited {a[0]} s (median page delay; {b[0]} s when all {n} "
                  f"used IW=1) and the IW=3 half {c[0]} s ({d[0]} s when all used IW=3)")
        ja.append(f"Web クライアントを {split} に分けた場合、IW=1 のグループのページ遅延の中央値は {a[0]} 秒（全 {n} 台が "
                  f"IW=1 のとき {b[0]} 秒）、IW=3 のグループは {c[0]} 秒（全台が IW=3 のとき {d[0]} 秒）であった。")
    if not en:
        return None
    return "In the half-and-half runs, " + "; ".join(en) + ".", "半数ずつ異なる IW を用いた実験では、" + "".join(ja)


def _red_sentences(t: Table, p: Plan) -> tuple[str, str] | None:
    k0, k = p.iws[0], p.iws[-1]
    w, f = p.red_at
    red, dt0, dtk = f"RED, IW={k0}", f"drop-tail, IW={k0}", f"drop-tail, IW={k}"
    dec = f"% decrease vs drop-tail IW={k0}"
    vals = {(r, c): _get(t, r, c) for r in (red, dt0, dtk) for c in ("median page delay (s)", dec, "util (%)", "drops (%)")}
    if any(vals[r, c] is None for r in (red, dt0, dtk) for c in ("median page delay (s)", "util (%)", "drops (%)")) \
            or vals[red, dec] is None or vals[dtk, dec] is None:
        return None
    g = lambda r, c: vals[r, c][0]  # noqa: E731
    en = (f"With RED on the bottleneck ({w} webs, {f} FTP, HTTP/1.0), IW={k0} gave a median page delay of "
          f"{g(red, 'median page delay (s)')} s, a decrease of {_ci(vals[red, dec])} against drop-tail at IW={k0} "
          f"({g(dt0, 'median page delay (s)')} s), where drop-tail with IW={k} decreased it by {_ci(vals[dtk, dec])}; "
          f"utilisation was {g(red, 'util (%)')} % with RED vs {g(dt0, 'util (%)')} % (drop-tail IW={k0}) and "
          f"{g(dtk, 'util (%)')} % (drop-tail IW={k}), drops {g(red, 'drops (%)')} % vs {g(dt0, 'drops (%)')} % "
          f"and {g(dtk, 'drops (%)')} %.")
    ja = (f"ボトルネックに RED を用いると（Web {w} 台、FTP {f} 台、HTTP/1.0）、IW={k0} でのページ遅延の中央値は "
          f"{g(red, 'median page delay (s)')} 秒で、ドロップテール IW={k0}（{g(dt0, 'median page delay (s)')} 秒）より "
          f"{_ci(vals[red, dec])} 減少した{'（負の値は増加）' if float(vals[red, dec][0]) < 0 else ''}。"
          f"ドロップテールで IW={k} にした場合の減少は {_ci(vals[dtk, dec])} である。"
          f"利用率は RED で {g(red, 'util (%)')} %、ドロップテール IW={k0} で {g(dt0, 'util (%)')} %、IW={k} で "
          f"{g(dtk, 'util (%)')} %、廃棄率はそれぞれ {g(red, 'drops (%)')} %、{g(dt0, 'drops (%)')} %、"
          f"{g(dtk, 'drops (%)')} % であった。")
    return en, ja


def _conclusions(tables: dict[str, Table], p: Plan) -> tuple[list[str], list[str]]:
    pairs = [
        _delay_sentences(tables["T1"], p, "1.0"),
        _link_sentences(tables["T2"], p),
        _ftp_sentences(tables["T3"], p, "1.0"),
        _delay_sentences(tables["T4"], p, "1.1") if "T4" in tables else None,
        _half_sentences(tables["T6"]),
        _red_sentences(tables["RED"], p),
    ]
    pairs = [x for x in pairs if x is not None]
    return [en for en, _ in pairs], [ja for _, ja in pairs]


# ---------------------------------------------------------------------------------------------
# Notes: the model as run (read from the scenario, not restated by hand)


def _dist(d: Any, unit: str) -> str:
    if not isinstance(d, dict):
        return f"{d}"
    k = d.get("kind")
    cap = f", capped at {d['cap']:,.0f} {unit}" if d.get("cap") is not None else ""
    if k == "pareto":
        a, xm = float(d["shape"]), float(d["scale"])
        median = xm * 2 ** (1 / a)
        c = float(d.get("cap") or np.inf)
        mean = xm + xm / (a - 1) * (1 - (xm / c) ** (a - 1)) if a > 1 else np.inf
        return (f"Pareto type I, shape {a:g}, scale {xm:g} {unit} (median {median:.0f} {unit}; mean "
                f"{mean:.0f} {unit}{' with the cap' if cap else ''}){cap}")
    if k == "uniform":
        return f"uniform in [{d['lo']:g}, {d['hi']:g}] {unit}{cap}"
    if k == "constant":
        return f"{d['value']} {unit}"
    return ", ".join(f"{key} = {v}" for key, v in d.items())


def _onoff(v: Any) -> str:
    return {True: "on", False: "off"}.get(v, str(v)) if isinstance(v, bool) else str(v)


def _notes(base: Scenario, p: Plan, red: dict[str, Any], direction: str) -> list[str]:
    d = base.data
    bn, tcp = d["topology"]["bottleneck"], d["tcp"]
    left, right = d["topology"]["left"][0], d["topology"]["right"][0]
    web = next(a for a in d["apps"] if a["kind"] == "web")
    ftp = next((a for a in d["apps"] if a["kind"] == "ftp"), None)
    q = bn["queue"]
    mode = {"full": f"Full run: {p.seeds} seeds of {p.duration} (the RFC's run time).",
            "quick": f"Quick mode (--quick): {p.seeds} seeds of {p.duration} per scenario instead of "
                     f"{FULL_SEEDS} seeds of {FULL_DURATION} (the RFC's run time): the same grid, wider intervals; "
                     "absolute goodputs (T6, MB) scale with the run length.",
            "tiny": f"TINY TEST CONFIGURATION ({TINY_ENV}): {p.seeds} seeds of {p.duration}, reduced grid — not a "
                    "result."}[p.mode]
    policies = ", ".join(f"{n} = {v.get('segments', v.get('kind'))} segment(s)" for n, v in d["iw"]["policies"].items())
    notes = [
        mode,
        f"Topology (dumbbell): {left['count']} client hosts on {left['access']['rate']} / {left['access']['delay']} "
        f"access links — router — bottleneck {bn['rate']}, {bn['delay']} one way, {q['kind']} queue of "
        f"{q.get('limit')} (both directions) — router — {right['count']} server hosts on {right['access']['rate']} / "
        f"{right['access']['delay']} links; access queues {left['access']['queue']['kind']} "
        f"{left['access']['queue'].get('limit')}. The RFC gives no access delay: {left['access']['delay']} is "
        "the project's choice. Data flows servers → clients, so utilisation and drops are those of the "
        f"router-right → router-left port ('{direction}' in the link records).",
        f"TCP (ns-2.35 FullTcp-like): congestion control {tcp['cc']}, {tcp['recovery']} fast recovery, SACK "
        f"{_onoff(tcp['sack'])}, delayed ACK {_onoff(tcp['delayed_ack'])}"
        f"{' (an ACK for every segment)' if tcp['delayed_ack'] is False else ''}, MSS {tcp['mss']}, maximum window "
        f"{tcp['rcv_wnd']}, initial RTO {tcp['initial_rto']}, min RTO {tcp['min_rto']}, max RTO {tcp['max_rto']}, "
        f"timer granularity {tcp['granularity']}, timestamps {_onoff(tcp['timestamps'])}, after a lost SYN/SYN-ACK: "
        f"{tcp['syn_loss']}; "
        f"after a timeout the loss window is 1 segment. IW policies: {policies}.",
        f"Web clients: HTTP/1.0 — a page is one primary object, then {web['embedded_count']} embedded objects, each "
        "on its own new connection, opened together once the primary is complete; HTTP/1.1 — one connection per "
        f"page carries the primary and the embedded objects. Request {web['request']}.",
        f"Object sizes: primary {_dist(web['primary'], 'B')}; embedded {_dist(web['embedded'], 'B')}; each drawn "
        "independently (B. Mah's empirical HTTP model as the RFC cites it, fitted so that the median object fits in "
        "two segments).",
        f"Think time before the next page: {_dist(web['think'], 's')}. Each client starts at "
        f"{_dist(web['start'], 's')}. Web client i sits on client node i mod {left['count']} and uses server "
        f"node i mod {right['count']} (mapping '{web['mapping']}'); the same for FTP.",
    ]
    if ftp is not None:
        notes.append(f"FTP clients: transfers of {ftp['size']} back to back, each on a new connection "
                     f"(request {ftp['request']}); 0 FTPs = the entry removed.")
    notes += [
        "Page delay: from the request of the primary object until the last embedded object is received; the "
        "median over the pages completed in a run. Goodput: payload delivered over the run. Network power = "
        "goodput / median delay, in kB/s per s (web: web goodput / median page delay; FTP: FTP goodput / median "
        "completion time of the 1 MB transfers completed in the run — transfers still open at the end are not "
        "counted, which favours short runs).",
        "Intervals: every cell is the mean across seeds with a 95 % percentile bootstrap interval "
        "(9 999 resamples). Seeds are common random numbers: a seed gives the same start times, object sizes and "
        "think times at every IW, so % decreases and normalised powers are taken seed by seed against that seed's "
        "IW=1 run, then averaged.",
        "T6: two web entries of n/2 clients each (app ids 0…n/2−1 and n/2…n−1) with IW policies set per entry; the "
        "split rows average both assignments (first half IW=1 / second half IW=3, and the reverse) per seed.",
        "RED: " + ", ".join(f"{k} = {v}" for k, v in red.items()) + "; other parameters at the engine defaults "
        "(min_th 5, max_th 15 packets, max_p 0.1, w_q 0.002, gentle, mean packet size 1000 B), on both directions "
        f"of the bottleneck; compared at {p.red_at[0]} webs / {p.red_at[1]} FTP.",
        "Results are what the simulator produces; they are not adjusted toward the RFC's numbers.",
        "Claims: the verdicts use the preset as described above. Claims not reproduced are judged again on the "
        "HTTP/1.0 grid webs {8, 16, 32} × ftps {0, 1, 3} × IW 1…4 with " + " and with ".join(RFC2415_VARIANTS) +
        " (the RFC states neither); the report lists where each would hold. Table 3/5 cells: the RFC gives the unit "
        "(Mbytes/ms) but not which goodput and delay make an FTP transfer's power, so its IW=1 cells are not "
        "judged and the others are compared as ratios to IW=1; Table 6 "
        "goodputs are scaled to the RFC's 360 s when a run is shorter.",
    ]
    return notes




def _tidy_keys(tables: dict[str, Table]) -> None:
    """Key columns of the long-form tables: webs, ftps (T1–T5), webs + split (T6), queue + iw (RED)."""
    def webs_ftps(r: Any) -> dict[str, Any]:
        w, f = str(r).split("/")
        return {"webs": int(w), "ftps": int(f)}

    def half(r: Any) -> dict[str, Any]:
        parts = str(r).split("/")
        return {"webs": sum(int(x) for x in parts), "split": len(parts) == 2}

    def red(r: Any) -> dict[str, Any]:
        q, k = str(r).split(", IW=")
        return {"queue": q, "iw": int(k)}

    def named(metric: str | None = None, **rename: str):
        def keys(c: Any) -> dict[str, Any]:
            k = iw_col_keys(c)
            k["metric"] = metric or rename.get(k["metric"], k["metric"])
            return k
        return keys

    for name, t in tables.items():
        if name in ("T1", "T4"):
            t.row_keys, t.col_keys = webs_ftps, named(s="median_page_delay_s", pct_decrease="delay_decrease_pct")
        elif name in ("T3", "T5"):
            t.row_keys, t.col_keys = webs_ftps, named("ftp_power_kB_s_per_s")
        elif name == "T2":
            t.row_keys, t.col_keys = webs_ftps, iw_col_keys
        elif name == "T6":
            t.row_keys, t.col_keys = half, iw_col_keys
        elif name == "RED":
            t.row_keys, t.col_keys = red, (lambda c: {"metric": metric_name(str(c))})


__all__ = ["NAME", "TITLE", "TINY_ENV", "Plan", "plan", "run"]

"""RFC 2415 (Poduri & Nichols, 1998): "Simulation Studies of Increased Initial TCP Window Size".

Re-runs the RFC's grid on the packaged `rfc2415` preset (SPEC S1.1) and lays the results out as
the RFC's tables:

* T1 / T4 — median web page delay (s at IW=1, % decrease at IW 2, 3, 4), HTTP/1.0 / HTTP/1.1;
* T2 — bottleneck utilisation % and packet drop rate % (servers → clients) per IW, HTTP/1.0;
* T3 / T5 — FTP network power (FTP goodput / median 1 MB transfer delay) per IW;
* T6 — half-and-half: 16, 32, 64 HTTP/1.0 clients all IW=1, all IW=3, and split IW=1 / IW=3;
* RED — RED on the bottleneck against drop-tail, IW 1…4 (the comparison the RFC only mentions).

Scenarios: webs {8, 16, 32} × FTPs {0, 1, 2, 3} × IW {1, 2, 3, 4} × HTTP {1.0, 1.1}, 360 s,
10 seeds (`--quick`: `QUICK_SEEDS` seeds of `QUICK_DURATION`). Every cell is the mean across
seeds with a 95 % bootstrap interval; % decreases and normalised powers are computed per seed
against the same seed's IW=1 run (the same seed gives the same arrivals, object sizes and think
times at every IW — common random numbers) and then averaged. Raw runs are kept (resumably) under
`opts.out/raw/<part>/`.

Test hook: `run(opts, _tiny=True)`, or the environment variable `IWLAB_STUDY_TINY=1` (what the
CLI tests set), runs a tiny configuration — 2 seeds (or `opts.seeds`), 20 s runs, webs {8, 16},
FTPs {0, 1}, half-and-half with 16 clients — so the whole pipeline runs in seconds. It is not a
result.
"""

from __future__ import annotations

import copy
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from iwlab import stats
from iwlab.scenario import Scenario, load
from iwlab.studies.base import Cell, Figure, Options, StudyResult, Table, cell, iw_col_keys, metric_name, quantity
from iwlab.sweep import sweep, sweep_records

NAME = "rfc2415"
TITLE = "RFC 2415 — Simulation Studies of Increased Initial TCP Window Size (Poduri & Nichols, 1998)"
TINY_ENV = "IWLAB_STUDY_TINY"

FULL_SEEDS, FULL_DURATION = 10, "360s"
QUICK_SEEDS, QUICK_DURATION = 3, "240s"
TINY_SEEDS, TINY_DURATION = 2, "20s"

KB = 8_000.0  # bits per kB: powers are reported in kB/s per s


@dataclass(frozen=True)
class Plan:
    """What is run: the grid, the seeds and the run length."""

    mode: str
    seeds: int
    duration: str
    webs: tuple[int, ...] = (8, 16, 32)
    ftps: tuple[int, ...] = (0, 1, 2, 3)
    iws: tuple[int, ...] = (1, 2, 3, 4)
    https: tuple[str, ...] = ("1.0", "1.1")
    half: tuple[int, ...] = (16, 32, 64)
    red_at: tuple[int, int] = (16, 1)

    def rows(self, min_ftps: int = 0) -> list[tuple[int, int]]:
        return [(w, f) for w in self.webs for f in self.ftps if f >= min_ftps]


def plan(opts: Options, tiny: bool = False) -> Plan:
    if tiny:
        return Plan("tiny", opts.seeds or TINY_SEEDS, TINY_DURATION, webs=(8, 16), ftps=(0, 1), half=(16,))
    if opts.quick:
        return Plan("quick", opts.n_seeds(FULL_SEEDS, QUICK_SEEDS), QUICK_DURATION)
    return Plan("full", opts.n_seeds(FULL_SEEDS, QUICK_SEEDS), FULL_DURATION)


# ---------------------------------------------------------------------------------------------
# Scenarios


def _without_ftp(base: Scenario) -> Scenario:
    """The preset with its FTP entry removed (the RFC's "0 ftps": an app count must be >= 1)."""
    data = copy.deepcopy(base.data)
    data["apps"] = [a for a in data["apps"] if a["kind"] != "ftp"]
    return Scenario.from_data(data, f"{base.source} (no FTP)")


def _half_and_half(base: Scenario, n: int) -> Scenario:
    """n HTTP/1.0 clients in two entries of n/2 (app ids 0…n/2−1 = group A, the rest = group B),
    served with IW policies `ga` and `gb` (both fixed; the sweep sets their segments). No FTP."""
    data = copy.deepcopy(_without_ftp(base).data)
    web = data["apps"][0]
    a = dict(web, name="web-a", count=n // 2, offset=0, server_iw="ga")
    b = dict(web, name="web-b", count=n // 2, offset=n // 2, server_iw="gb")
    data["apps"] = [a, b]
    data["iw"]["policies"].update(ga={"kind": "fixed", "segments": 1}, gb={"kind": "fixed", "segments": 1})
    return Scenario.from_data(data, f"{base.source} (half-and-half, {n} web clients)")


def _data_direction(sc: Scenario) -> str:
    """`forward` (left → right) or `reverse`: the direction data flows, servers → clients."""
    servers = sc.data["apps"][0]["servers"]
    right = {g["name"] for g in sc.data["topology"]["right"]}
    return "reverse" if servers in right else "forward"


# ---------------------------------------------------------------------------------------------
# Running


def _show(v: Any) -> str:
    """A grid value for the setup table: `{kind = "red", limit = "25pkt"}` → `red 25pkt`."""
    return " ".join(str(x) for x in v.values()) if isinstance(v, dict) else str(v)


class _Runner:
    def __init__(self, opts: Options, p: Plan, prefix: str = ""):
        self.opts, self.plan, self.prefix = opts, p, prefix
        self.parts: dict[str, dict[str, Any]] = {}

    def __call__(self, part: str, sc: Scenario, grid: dict[str, list[Any]]) -> pd.DataFrame:
        part = self.prefix + part
        out = self.opts.out / "raw" / part
        t0 = time.perf_counter()
        df = sweep(sc.with_overrides({"duration": self.plan.duration}), grid=grid, seeds=self.plan.seeds,
                   jobs=self.opts.jobs, dask=self.opts.dask, out=out, progress=self.opts.progress)
        self.parts[part] = {"runs": len(df), "wall_s": round(time.perf_counter() - t0, 1),
                            "grid": {k: [_show(v) for v in vs] for k, vs in grid.items()}}
        return df


def _metrics(df: pd.DataFrame, direction: str) -> pd.DataFrame:
    """Per-run figures of merit in report units (%, s, kB/s per s)."""
    out = pd.DataFrame({"seed": df["seed"].astype(int)}, index=df.index)
    out["delay"] = df["median_page_delay"].astype(float)
    out["util"] = 100 * df[f"util_{direction}"].astype(float)
    out["drop"] = 100 * df[f"drop_rate_{direction}"].astype(float)
    out["web_power"] = df["web_power"].astype(float) / KB
    out["ftp_power"] = df["ftp_power"].astype(float) / KB
    return out


def _grid(run: _Runner, base: Scenario, direction: str) -> pd.DataFrame:
    """The RFC's grid: one row per run with http, webs, ftps, iw, seed and the metrics."""
    p = run.plan
    common = {"apps[0].http": list(p.https), "apps[0].count": list(p.webs), "iw.default": [f"iw{k}" for k in p.iws]}
    frames = []
    if 0 in p.ftps:
        df = run("grid-ftp0", _without_ftp(base), common)
        frames.append(pd.concat([df[list(common)], _metrics(df, direction)], axis=1).assign(ftps=0))
    with_ftp = [f for f in p.ftps if f > 0]
    if with_ftp:
        grid = {**common, "apps[1].count": with_ftp}
        df = run("grid-ftp", base, grid)
        frames.append(pd.concat([df[list(grid)], _metrics(df, direction)], axis=1).rename(
            columns={"apps[1].count": "ftps"}))
    runs = pd.concat(frames, ignore_index=True).rename(
        columns={"apps[0].http": "http", "apps[0].count": "webs", "iw.default": "iw"})
    runs["iw"] = runs["iw"].str.removeprefix("iw").astype(int)
    return runs.astype({"webs": int, "ftps": int})


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


# ---------------------------------------------------------------------------------------------
# T6: half-and-half


def _half_runs(run: _Runner, base: Scenario, direction: str, n: int) -> pd.DataFrame:
    """One row per (run, who): who ∈ {all, A, B}; goodput (MB), delay (s), util, drop, ga, gb."""
    part = f"half-{n}"
    keys = {"iw.policies.ga.segments": [1, 3], "iw.policies.gb.segments": [1, 3]}
    df = run(part, _half_and_half(base, n), keys)
    m = _metrics(df, direction)
    runs = pd.DataFrame({"ga": df[list(keys)[0]].astype(int), "gb": df[list(keys)[1]].astype(int),
                         "seed": m["seed"], "util": m["util"], "drop": m["drop"]})
    out = run.opts.out / "raw" / part
    pages = sweep_records(out, "pages", columns=["app", "delay", "completed", "in_warmup"])
    flows = sweep_records(out, "flows", columns=["app", "delivered_bytes", "in_warmup"])
    rows = []
    for (ga, gb, seed), pg in pages.groupby([*keys, "seed"]):
        fl = flows[(flows[list(keys)[0]] == ga) & (flows[list(keys)[1]] == gb) & (flows["seed"] == seed)]
        fl = fl[~fl["in_warmup"].astype(bool)]
        pg = pg[~pg["in_warmup"].astype(bool)]
        done = pg[pg["completed"].astype(bool)]
        assert pg["app"].max() < n, "app ids of the two web entries are 0…n−1"
        for who, in_group in (("all", lambda a: a >= 0), ("A", lambda a: a < n // 2), ("B", lambda a: a >= n // 2)):
            rows.append({"ga": int(ga), "gb": int(gb), "seed": int(seed), "who": who,
                         "goodput": float(fl.loc[in_group(fl["app"]), "delivered_bytes"].astype(float).sum()) / 1e6,
                         "delay": stats.median(done.loc[in_group(done["app"]), "delay"])})
    groups = pd.DataFrame(rows)
    return groups.merge(runs, on=["ga", "gb", "seed"], how="left")


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
        " (the RFC states neither); the report lists where each would hold. Table 3/5 cells: the RFC gives no unit "
        "for the FTP power, so its IW=1 cells are not judged and the others are compared as ratios to IW=1; Table 6 "
        "goodputs are scaled to the RFC's 360 s when a run is shorter.",
    ]
    return notes


# ---------------------------------------------------------------------------------------------


def run(opts: Options, _tiny: bool | None = None) -> StudyResult:
    """Runs the study (resumable under `opts.out/raw/`) and returns its tables, figures and conclusions."""
    tiny = _tiny if _tiny is not None else os.environ.get(TINY_ENV, "") not in ("", "0")
    p = plan(opts, tiny)
    t0 = time.perf_counter()
    base = load("rfc2415")
    direction = _data_direction(base)
    runner = _Runner(opts, p)

    runs = _grid(runner, base, direction)
    tables: dict[str, Table] = {}
    tables["T1"] = _delay_table("T1", runs, p, "1.0")
    tables["T2"] = _link_table("T2", runs, p, "1.0")
    tables["T3"] = _ftp_power_table("T3", runs, p, "1.0")
    if "1.1" in p.https:
        tables["T4"] = _delay_table("T4", runs, p, "1.1")
        tables["T5"] = _ftp_power_table("T5", runs, p, "1.1")
    halves = {n: _half_runs(runner, base, direction, n) for n in p.half}
    tables["T6"] = _half_table(halves)
    tables["RED"], red = _red_table(runner, base, direction, p)
    figures = _power_figures(runs, p)
    en, ja = _conclusions(tables, p)
    _tidy_keys(tables)
    from iwlab.studies.claims import Evidence, japanese_summary, judge, where_it_holds

    book = ledger()
    judged = judge(book, Evidence(tables, evidence(runs, halves, p), seeds=p.seeds))
    if p.mode != "tiny" and opts.where:
        where_it_holds(judged, book, _variants(opts, p, base, direction, runner),
                       "delayed ACKs and access-link delay (both left open by the RFC)")
    claims_ja = japanese_summary(judged, "RFC 2415 の主張の検証結果")

    setup: dict[str, Any] = {
        "mode": p.mode,
        "seeds": f"1…{p.seeds}",
        "duration": p.duration,
        "webs × ftps × IW × HTTP": f"{list(p.webs)} × {list(p.ftps)} × {list(p.iws)} × {list(p.https)}",
        "half-and-half web clients": list(p.half),
        "RED at webs/ftps": _label(*p.red_at),
        "preset": f"rfc2415 ({base.source}, hash {base.hash()})",
        "data direction": f"{direction} (router-right → router-left)" if direction == "reverse" else direction,
        "runs": sum(x["runs"] for x in runner.parts.values()),
    }
    for part, x in runner.parts.items():
        setup[f"raw/{part}"] = f"{x['runs']} runs in {x['wall_s']} s; grid " + \
            "; ".join(f"{k} = {', '.join(v)}" for k, v in x["grid"].items())
    setup["raw runs"] = str(Path(opts.out) / "raw")
    setup["wall seconds"] = round(time.perf_counter() - t0, 1)
    return StudyResult(NAME, TITLE, tables=list(tables.values()), figures=figures, conclusions=en,
                       conclusions_ja=ja, setup=setup, notes=_notes(base, p, red, direction), claims=judged,
                       claims_ja=claims_ja, errata=errata())


#: "Where it holds" variants: model choices RFC 2415 leaves open, each run on the HTTP/1.0 grid
#: webs {8, 16, 32} × ftps {0, 1, 3} × IW 1…4 (the plan's seeds and run length). The verdicts use the
#: preset (no delayed ACK, 1 ms access links).
RFC2415_VARIANTS: dict[str, dict[str, Any]] = {
    "delayed ACK (2 segments, 100 ms)": {"tcp.delayed_ack": {"segments": 2, "timeout": "100ms"}},
    "access delay 20 ms": {"topology.left[0].access.delay": "20ms", "topology.right[0].access.delay": "20ms"},
}


def _variants(opts: Options, p: Plan, base: Scenario, direction: str, main: _Runner) -> dict[str, Any]:
    """Each variant's tables and claims evidence (T1–T3 and the claims reading them)."""
    from dataclasses import replace

    from iwlab.studies.claims import Evidence

    vp = replace(p, ftps=tuple(f for f in p.ftps if f in (0, 1, 3)), https=("1.0",))
    out = {}
    for i, (label, overrides) in enumerate(RFC2415_VARIANTS.items()):
        run = _Runner(opts, vp, prefix=f"where{i}-")
        runs = _grid(run, base.with_overrides(overrides), direction)
        tabs = {"T1": _delay_table("T1", runs, vp, "1.0"), "T2": _link_table("T2", runs, vp, "1.0"),
                "T3": _ftp_power_table("T3", runs, vp, "1.0")}
        out[label] = Evidence(tabs, evidence(runs, {}, vp), seeds=vp.seeds)
        for part, x in run.parts.items():
            main.parts[part] = x
    return out


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


# ---------------------------------------------------------------------------------------------
# Claims ledger. Published numbers transcribed from RFC 2415 (seeds/000); the claims'
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
#: Table 3 (p. 6): FTP network power at IW=1…4, HTTP/1.0 (unit not stated by the RFC).
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
        pw = {k: _per_seed(runs, "web_power", http="1.0", webs=w, ftps=f, iw=k) for k in (k0, kmax)}
        ev[f"web power {w}/{f}"] = cell(_ratio(pw[k0], pw[kmax]))
        if 3 in p.iws and 4 in p.iws:
            p11 = {k: _per_seed(runs, "web_power", http="1.1", webs=w, ftps=f, iw=k) for k in (3, 4)}
            ev[f"web power 1.1 {w}/{f} IW=4/IW=3"] = cell(_ratio(p11[3], p11[4]))
    for w in p.webs:
        if 0 in p.ftps and 1 in p.ftps:
            r = {f: _ratio(_per_seed(runs, "web_power", http="1.0", webs=w, ftps=f, iw=k0),
                           _per_seed(runs, "web_power", http="1.0", webs=w, ftps=f, iw=kmax)) for f in (0, 1)}
            a, b = r[0].align(r[1], join="inner")
            ev[f"web power gap {w}"] = cell(a - b)
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
    delay_base = Near(rel=0.2, partly_rel=0.5, unit="s")
    decrease = Near(tol=5.0, partly_tol=10.0, unit="%")
    util = Near(tol=3.0, partly_tol=8.0, unit="%")
    drops = Near(tol=0.3, rel=0.2, partly_tol=1.0, partly_rel=0.5, unit="%")
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
    unit_unknown = NotTestable("the RFC does not state the unit of the FTP network power (ours: kB/s per s); "
                               "the IW=2…4 cells are compared as ratios to IW=1 instead")
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
            Near(rel=0.1, partly_rel=0.25),
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
        Near(rel=0.2, partly_rel=0.5, unit="MB"),
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
        Near(tol=3.0, rel=0.2, partly_tol=8.0, partly_rel=0.5, unit="%"),
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
        "0 … 1 pp", claim_ja="IW とともに廃棄率は上がるが、最も過負荷なシナリオを除き上昇は 1 ポイント未満"))
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
        "The power gain is largest where web traffic dominates the link (no FTP) rather than with a bulk transfer.",
        "(power ratio IW4/IW1 without FTP) − (with 1 FTP)", Direction(">", 0.0),
        tuple(Check(f"webs={w}", f"web power gap {w}") for w in (8, 16, 32)), ("web_power_normalised",), "",
        "> 0 (up to 60 % vs ≥ 15 %)", claim_ja="ネットワークパワーの増加は Web トラフィックが支配的なとき（FTP なし）に最大"))
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
        "median page delay of the IW=3 half ÷ that of an all-IW=3 population, 64 clients", Direction(">", 1.0),
        (Check("32/32", "half 64 IW=3", round(1.20 / 0.86, 3)),), ("T6",), "",
        "1.40 (derived: 1.20 ÷ 0.86 s, Table 6)", claim_ja="非常に混雑した 32/32 の分割では、IW=3 のグループが不利になる"))
    out.append(Claim(
        "C-red", "RFC 2415 §4", "§4, p. 8",
        "RED on the bottleneck with IW=1 brings page-delay gains like those of a larger IW on drop-tail.",
        "% decrease of the median page delay, RED IW=1 vs drop-tail IW=1; 'like a larger IW' read as the range "
        "of Table 1's decreases at IW=2…4 (10.7–35.6 %)", Between(10.7, 35.6, partly_lo=5.0, partly_hi=45.0),
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
        Between(0.85, 1.0, partly_lo=0.7, partly_hi=1.05),
        tuple(Check(_cond(w, f), f"T3 {w}/{f} IW=4/IW=1") for w, f in FTP_ROWS), ("T3",), "",
        "slight decrease (no number)", claim_ja="IW を大きくすると Web が帯域をわずかに多く使い、FTP のパワーがわずかに下がりうる"))
    return out


def errata() -> list[Any]:
    """Suspected errors in RFC 2415, with the evidence (seeds/000)."""
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
    ]

"""RFC 2415 study: the plan (grid, seeds, run length), the scenarios built from the `rfc2415` preset
(without FTP, half-and-half, RED) and the resumable runner that sweeps them."""

from __future__ import annotations

import copy
import time
from dataclasses import dataclass
from typing import Any

import pandas as pd

from iwlab import stats
from iwlab.scenario import Scenario
from iwlab.studies.base import Options
from iwlab.studies.model import QUICK_SEEDS as QUICK
from iwlab.sweep import sweep, sweep_records



NAME = "rfc2415"
TITLE = "RFC 2415 — Simulation Studies of Increased Initial TCP Window Size (Poduri & Nichols, 1998)"
TINY_ENV = "IWLAB_STUDY_TINY"

FULL_SEEDS, FULL_DURATION = 10, "360s"
QUICK_SEEDS, QUICK_DURATION = QUICK, "240s"
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
                   jobs=self.opts.jobs, dask=self.opts.dask, out=out,
                   progress=self.opts.progress and f"{NAME} · {part}")
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
    out["ftp_delay"] = df["ftp_median_delay"].astype(float)
    out["web_goodput"] = df["web_goodput_bps"].astype(float)
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


#: "Where it holds" variants: model choices RFC 2415 leaves open, each run on the HTTP/1.0 grid
#: webs {8, 16, 32} × ftps {0, 1, 3} × IW 1…4 (the plan's seeds and run length). The verdicts use the
#: preset (no delayed ACK, 1 ms access links).
RFC2415_VARIANTS: dict[str, dict[str, Any]] = {
    "delayed ACK (2 segments, 100 ms)": {"tcp.delayed_ack": {"segments": 2, "timeout": "100ms"}},
    "access delay 20 ms": {"topology.left[0].access.delay": "20ms", "topology.right[0].access.delay": "20ms"},
}

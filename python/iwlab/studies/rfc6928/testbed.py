"""RFC 6928's testbed claims — §6 (five simultaneous connections), §9 (spurious RTOs) and the
[CW10] findings of Appendix A (drops against load, IW3 flows beside IW10 flows, long-lived bulk
flows beside short ones) — checked on a dumbbell built from what the RFC says of that testbed:
"a 300 ms RTT, bottleneck link bandwidth as low as 64 Kbps, and route queue size as low as 40
packets" (Appendix A, p. 22), and from §6's "130 ms or longer" of access buffer at 1 Mb/s.

Four experiments, each a sweep over seeds (one seed = the same arrivals and response sizes for
every IW: the arrival and mix streams do not depend on the IW):

* **load**: short request/response flows (Poisson arrivals over 4 client/server pairs, responses
  of 2, 4, 8, 16, 32 segments in permuted blocks) at 30 / 60 / 90 / 120 % of the bottleneck, on
  64 kb/s and 1 Mb/s bottlenecks with 40-packet drop-tail queues. The mix alternates two IW slots,
  `first` and `second` (`fixed` policies); the grid sets each to 3 or 10 segments: (3, 3) is all
  IW3, (10, 10) all IW10, (3, 10) and its mirror (10, 3) the half-and-half population.
* **bulk**: the same with one long-lived bulk connection on a fifth pair (all IW3 or all IW10
  short flows, loads 30 / 60 / 90 %).
* **five**: one client opening 5 connections at once (bursts of 5, exponential gaps, response
  sizes drawn per flow from the same five), on 64 kb/s with 40 packets and 1 Mb/s with 11
  packets (130 ms, §6); total latency = burst start → last byte of its last response.
* **spurious**: one client, Poisson flows at 30 % of a 64 kb/s or 256 kb/s path whose queues
  (1000 packets) drop nothing — so every RTO is spurious; share of responses with an RTO.

Modes: full 10 seeds, quick 5, tiny (tests) 2 seeds with one rate per experiment and short runs.

This module holds the plan, the scenarios, the runs and their per-run rows; `testbed_tables` the
tables, `testbed_ledger` the claims.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from iwlab.studies.base import metric_name

#: Appendix A, p. 22: the [CW10] testbed.
RTT = 0.3
QUEUE = 40
LOAD_RATES = {"64 kb/s": 64e3, "1 Mb/s": 1e6}
#: Offered load of the short flows, share of the bottleneck (the RFC names the levels only).
LOADS = {"light": 0.3, "medium": 0.6, "high": 0.9, "extreme": 1.2}
BULK_LOADS = ("light", "medium", "high")
#: §6: five simultaneous connections; "130 ms or longer" of buffer at 1 Mb/s = 11 packets of 1500 B.
FIVE = {"64 kb/s, 40 pkt": (64e3, 40), "1 Mb/s, 11 pkt (130 ms)": (1e6, 11)}
FIVE_LOAD = 0.25
#: §9: low-bandwidth paths that drop nothing.
SPURIOUS = {"64 kb/s": 64e3, "256 kb/s": 256e3}
SPURIOUS_QUEUE = 1000
SPURIOUS_LOAD = 0.3
SIZES = (2, 4, 8, 16, 32)  # response sizes, segments
MSS = 1448
PAIRS = 4
SLOTS = ("first", "second")
#: Flows starting in the last TAIL_SHARE of a run are not counted (they may not finish).
TAIL_SHARE = 0.1
FIRST, SECOND = (f"iw.policies.{s}.segments" for s in SLOTS)
RATE_PATH = "apps[0].arrivals.rate"


@dataclass(frozen=True)
class Plan:
    seeds: int
    mode: str
    load_rates: dict[str, float]
    loads: dict[str, float]
    five: dict[str, tuple[float, int]]
    spurious: dict[str, float]

    def duration(self, rate: float) -> float:
        """Long enough for a few hundred responses at light load on the slowest path."""
        full = 1800.0 if rate < 100e3 else 900.0 if rate < 500e3 else 600.0
        return {"full": full, "quick": full / 2, "tiny": 60.0 if rate >= 500e3 else 240.0}[self.mode]

    def warmup(self, rate: float) -> float:
        return 10.0 if self.mode == "tiny" else 30.0


def plan(seeds: int, mode: str) -> Plan:
    if mode == "tiny":
        return Plan(seeds, mode, {"1 Mb/s": 1e6}, {k: LOADS[k] for k in ("medium", "high", "extreme")},
                    {"1 Mb/s, 11 pkt (130 ms)": FIVE["1 Mb/s, 11 pkt (130 ms)"]}, {"256 kb/s": 256e3})
    return Plan(seeds, mode, LOAD_RATES, LOADS, FIVE, SPURIOUS)


def mean_bytes() -> float:
    return float(np.mean(SIZES)) * MSS


def flows_per_second(load: float, rate: float, sources: int) -> float:
    """Poisson arrivals per source for an offered load (share of `rate`, payload bytes)."""
    return load * rate / (8 * mean_bytes()) / sources


# ---------------------------------------------------------------------------------------------
# Scenarios


def scenario(name: str, rate: float, queue: int, duration: float, warmup: float, apps: list[dict[str, Any]],
             bulk: bool = False) -> Any:
    """A dumbbell with RTT 300 ms (2 × (1 + 148 + 1) ms), `rate` bottleneck and a `queue`-packet
    drop-tail queue both ways; PAIRS client/server pairs (+ one bulk pair); Linux TCP."""
    from iwlab.scenario import Scenario

    access = {"rate": "100Mbps", "delay": "1ms"}
    left = [{"name": "clients", "count": PAIRS, "access": access}]
    right = [{"name": "servers", "count": PAIRS, "access": access}]
    if bulk:
        left.append({"name": "bulk-clients", "count": 1, "access": access})
        right.append({"name": "bulk-servers", "count": 1, "access": access})
    policies = {s: {"kind": "fixed", "segments": 3} for s in SLOTS} | {"bulk": {"kind": "fixed", "segments": 10}}
    return Scenario.from_data({
        "name": f"rfc6928-{name}", "duration": f"{duration:g}s", "warmup": f"{warmup:g}s",
        "description": f"RFC 6928 testbed ({name}): {rate / 1e3:g} kb/s, {queue}-packet queue, RTT 300 ms",
        "topology": {"kind": "dumbbell",
                     "bottleneck": {"rate": f"{rate / 1e3:g}kbps", "delay": f"{round(RTT * 500) - 2}ms",
                                    "queue": {"kind": "drop-tail", "limit": f"{queue}pkt"}},
                     "left": left, "right": right},
        "tcp": {"profile": "linux"},
        "iw": {"default": "first", "policies": policies},
        "apps": apps,
    }, f"rfc6928 testbed {name} (study)")


def short_flows(arrivals: dict[str, Any], slots: tuple[str, ...], count: int, order: str = "permuted-blocks") -> dict:
    return {"kind": "short-flows", "name": "short", "clients": "clients", "servers": "servers", "count": count,
            "mapping": "distinct", "request": "100B", "arrivals": arrivals, "mix_order": order,
            "mix": [{"response": f"{s}seg", "server_iw": slot} for s in SIZES for slot in slots]}


BULK_APP = {"kind": "bulk", "name": "bulk", "clients": "bulk-clients", "servers": "bulk-servers", "count": 1,
            "server_iw": "bulk"}


def load_scenario(p: Plan, rate: float, bulk: bool) -> Any:
    d = p.duration(rate)
    apps = [short_flows({"kind": "poisson", "rate": 1.0}, SLOTS if not bulk else ("first",), PAIRS)]
    return scenario("bulk" if bulk else "load", rate, QUEUE, d, p.warmup(rate), apps + ([BULK_APP] if bulk else []),
                    bulk=bulk)


def burst_gap(rate: float) -> float:
    """Mean gap (s) between bursts of 5 responses that offers FIVE_LOAD of `rate`."""
    return round(5 * mean_bytes() * 8 / (FIVE_LOAD * rate), 3)


def five_scenario(p: Plan, rate: float, queue: int) -> Any:
    gap = {"kind": "exponential", "mean": burst_gap(rate)}
    apps = [short_flows({"kind": "bursts", "flows": 5, "gap": gap}, ("first",), 1, order="random")]
    return scenario("five", rate, queue, p.duration(rate), p.warmup(rate), apps)


def spurious_scenario(p: Plan, rate: float) -> Any:
    apps = [short_flows({"kind": "poisson", "rate": round(flows_per_second(SPURIOUS_LOAD, rate, 1), 6)}, ("first",), 1)]
    return scenario("spurious", rate, SPURIOUS_QUEUE, p.duration(rate), p.warmup(rate), apps)


# ---------------------------------------------------------------------------------------------
# Runs


def _slug(label: str) -> str:
    return metric_name(label)


def run(p: Plan, out: Path, jobs: int | None, dask: Any, progress: bool) -> dict[str, pd.DataFrame]:
    """Runs the four experiments (resumable under `out`); returns per-run rows (see `per_run`)."""
    import iwlab

    def go(sc: Any, rate: float, grid: dict[str, list[Any]], raw: Path, label: str) -> pd.DataFrame:
        iwlab.sweep(sc, grid=grid, seeds=p.seeds, jobs=jobs, dask=dask, out=raw,
                    progress=progress and f"rfc6928 · testbed: {label}")
        return per_run(raw, p.duration(rate), p.warmup(rate))

    frames: dict[str, list[pd.DataFrame]] = {"load": [], "bulk": [], "five": [], "spurious": []}
    iws = [3, 10]
    for label, rate in p.load_rates.items():
        rates = [round(flows_per_second(x, rate, PAIRS), 6) for x in p.loads.values()]
        df = go(load_scenario(p, rate, False), rate, {FIRST: iws, SECOND: iws, RATE_PATH: rates},
                out / f"load-{_slug(label)}", f"{label} loads")
        frames["load"].append(df.assign(path=label, load=df[RATE_PATH].map(dict(zip(rates, p.loads)))))
        names = [x for x in BULK_LOADS if x in p.loads]
        rates = [round(flows_per_second(p.loads[x], rate, PAIRS), 6) for x in names]
        df = go(load_scenario(p, rate, True), rate, {FIRST: iws, RATE_PATH: rates}, out / f"bulk-{_slug(label)}",
                f"{label} with a bulk flow")
        frames["bulk"].append(df.assign(path=label, load=df[RATE_PATH].map(dict(zip(rates, names)))))
    for label, (rate, queue) in p.five.items():
        df = go(five_scenario(p, rate, queue), rate, {FIRST: iws}, out / f"five-{_slug(label)}", f"5 connections, {label}")
        frames["five"].append(df.assign(path=label))
    for label, rate in p.spurious.items():
        df = go(spurious_scenario(p, rate), rate, {FIRST: iws}, out / f"spurious-{_slug(label)}", f"spurious RTOs, {label}")
        frames["spurious"].append(df.assign(path=label))
    return {k: pd.concat(v, ignore_index=True) if v else pd.DataFrame() for k, v in frames.items()}


def per_run(raw: Path, duration: float, warmup: float) -> pd.DataFrame:
    """One row per (run, IW class of the short flows): the grid values, seed, `iw` (3 or 10),
    `population` (IW3 / IW10 / mixed), mean completion time and count of the class's completed
    short flows, share of its flows with an RTO, the bottleneck's drop rate (servers → clients),
    drops on any link, the bulk flow's goodput (b/s), and the bursts' mean total latency."""
    import iwlab

    flows = iwlab.sweep_records(raw, "flows")
    links = iwlab.sweep_records(raw, "links")
    keys = [c for c in (FIRST, SECOND, RATE_PATH) if c in flows.columns] + ["seed"]
    return summarise(flows, links, keys, duration, warmup)


def summarise(flows: pd.DataFrame, links: pd.DataFrame, keys: list[str], duration: float,
              warmup: float) -> pd.DataFrame:
    """`per_run` from the flow and link records (tests give synthetic ones)."""
    def plain(df: pd.DataFrame, cols: list[str]) -> pd.DataFrame:
        """Plain numpy columns (the records come Arrow-backed), numbers as numbers."""
        out = pd.DataFrame({c: df[c].to_numpy(dtype=object) for c in cols})
        for c in cols:
            if c not in ("app_kind", "completed", "in_warmup", "from", "to"):
                out[c] = pd.to_numeric(out[c], errors="coerce")
        return out

    f = plain(flows, [*keys, "app_kind", "start", "last_byte", "completed", "in_warmup", "timeouts", "iw_segments",
                      "delivered_bytes"])
    f[["completed", "in_warmup"]] = f[["completed", "in_warmup"]].astype(bool)
    bulk = f[f["app_kind"] == "bulk"].groupby(keys)["delivered_bytes"].sum() * 8 / duration
    s = f[(f["app_kind"] == "short") & ~f["in_warmup"] & (f["start"] <= duration * (1 - TAIL_SHARE))].copy()
    s["iw"] = s["iw_segments"].round().astype(int)
    s["latency"] = np.where(s["completed"], s["last_byte"] - s["start"], np.nan)
    s["rto"] = (s["timeouts"] > 0).astype(float)
    g = s.groupby([*keys, "iw"])
    out = g.agg(latency=("latency", "mean"), completed=("latency", "count"), flows=("latency", "size"),
                rto_pct=("rto", "mean")).reset_index()
    out["rto_pct"] *= 100
    # Bursts (§6): the flows a source opened at one instant; total latency when all 5 completed.
    b = s.groupby([*keys, "start"]).agg(n=("latency", "size"), done=("latency", "count"), end=("last_byte", "max"))
    b = b[b["done"] == b["n"]]
    burst = (b["end"] - b.index.get_level_values("start")).groupby(level=keys).mean()
    l = plain(links, [*keys, "from", "to", "drop_rate", "queue_drops", "loss_drops"])
    neck = l[(l["from"] == "router-right") & (l["to"] == "router-left")].set_index(keys)["drop_rate"].astype(float)
    anydrop = (l["queue_drops"].astype(float) + l["loss_drops"].astype(float)).groupby(
        [l[k] for k in keys]).sum()
    per = out.set_index(keys)
    per["drop_pct"] = neck.reindex(per.index).to_numpy() * 100
    per["drops_any"] = anydrop.reindex(per.index).to_numpy()
    per["bulk_bps"] = bulk.reindex(per.index).to_numpy() if len(bulk) else np.nan
    per["burst_latency"] = burst.reindex(per.index).to_numpy() if len(burst) else np.nan
    per = per.reset_index()
    slots = [per[k] for k in (FIRST, SECOND) if k in per.columns]
    both = slots[0] if len(slots) == 1 else slots[0].where(slots[0] == slots[1], 0)
    per["population"] = np.where(both == 3, "IW3", np.where(both == 10, "IW10", "mixed"))
    return per

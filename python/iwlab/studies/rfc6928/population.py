"""The client populations (AvgDC-like, SlowDC-like): the study's plan, the population scenario,
and the web responses of a sweep with their client's access rate, base RTT and BDP buckets."""

from __future__ import annotations

import copy
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from iwlab.studies.base import Options, tiny

# (b) Populations: piecewise-linear CDFs of the access rate (Mb/s) over the RFC's buckets.
POPULATIONS: dict[str, list[list[float]]] = {
    # The preset's (AvgDC-like): 3 % / 10 % / 29 % / 43 % / 15 % in the five buckets, median ≈ 1.74 Mb/s.
    "AvgDC": [[0.02, 0.0], [0.056, 0.03], [0.256, 0.13], [1.0, 0.42], [5.0, 0.85], [20.0, 1.0]],
    # SlowDC-like: 20 % of the clients below 100 kb/s, median ≈ 0.7 Mb/s.
    "SlowDC": [[0.02, 0.0], [0.056, 0.08], [0.1, 0.20], [0.256, 0.33], [1.0, 0.60], [5.0, 0.90], [20.0, 1.0]],
}
IWS = {"iw3": "IW3 (RFC 3390)", "iw10": "IW10 (RFC 6928)", "iw10-fallback": "IW10 + fallback cache"}
BW_EDGES = (0, 56e3, 256e3, 1e6, 5e6, np.inf)
BW_LABELS = ("0–56 kb/s", "56–256 kb/s", "256 kb/s–1 Mb/s", "1–5 Mb/s", "> 5 Mb/s")
RTT_EDGES = (0, 0.05, 0.1, 0.2, 0.5, np.inf)
RTT_LABELS = ("< 50 ms", "50–100 ms", "100–200 ms", "200–500 ms", "≥ 500 ms")
BDP_EDGES = (0, 1e3, 5e3, 1e4, 5e4, np.inf)
BDP_LABELS = ("< 1 kB", "1–5 kB", "5–10 kB", "10–50 kB", "≥ 50 kB")
ALL = "all"
#: Flows starting in the last TAIL seconds are not counted (they may not finish).
TAIL = 20.0


@dataclass(frozen=True)
class Plan:
    seeds: int
    clients: int
    duration: float
    warmup: float
    mode: str


def plan(opts: Options) -> Plan:
    if tiny():
        return Plan(opts.seeds or 2, 60, 40.0, 5.0, "tiny")
    if opts.quick:
        return Plan(opts.n_seeds(), 200, 120.0, 10.0, "quick")
    return Plan(opts.n_seeds(), 200, 300.0, 10.0, "full")


def population_scenario(population: str, p: Plan) -> Any:
    from iwlab.scenario import Scenario, load

    if population not in POPULATIONS:
        raise ValueError(f"population = {population!r} is not allowed; expected one of {list(POPULATIONS)}")
    data = copy.deepcopy(load("rfc6928").data)
    data["duration"], data["warmup"] = f"{p.duration:g}s", f"{p.warmup:g}s"
    group = data["topology"]["left"][0]
    group["count"] = p.clients
    group["access"]["rate"] = {"kind": "empirical", "unit": "Mbps", "points": POPULATIONS[population]}
    data["apps"][0]["count"] = p.clients
    data["description"] = f"{population}-like population of {p.clients} web clients (study rfc6928)"
    return Scenario.from_data(data, f"rfc6928 {population} (study)")


def hosts(links: pd.DataFrame) -> pd.DataFrame:
    """Per client host (node id): access rate (b/s), base RTT (s) and BDP (bytes) from one run's
    links table. Node ids of a dumbbell: 0, 1 = routers, then the left hosts `left-i` = 2 + i;
    base RTT = 2 × (access delay + backbone delay + first server's access delay)."""
    backbone = float(links[(links["from"] == "router-right") & (links["to"] == "router-left")]["delay"].iloc[0])
    server_delay = float(links[(links["from"] == "right-0") & (links["to"] == "router-right")]["delay"].iloc[0])
    down = links[(links["from"] == "router-left") & links["to"].str.startswith("left-")]
    node = down["to"].str.slice(5).astype(int) + 2
    rate = down["rate_bps"].to_numpy(dtype=float)
    rtt = 2 * (down["delay"].to_numpy(dtype=float) + backbone + server_delay)
    return pd.DataFrame({"client": node.to_numpy(dtype=int), "rate": rate, "rtt": rtt, "bdp": rate * rtt / 8})


def _bucket(x: pd.Series, edges: Sequence[float], labels: Sequence[str]) -> pd.Series:
    return pd.cut(x, bins=list(edges), labels=list(labels), right=False).astype(str)


def web_flows(raw: Path, p: Plan) -> pd.DataFrame:
    """The web flows of every run of one population's sweep, with their client's buckets."""
    import iwlab

    f = web_responses(raw, p)
    links = iwlab.sweep_records(raw, "links")
    per_seed = []
    for seed, g in links[links["iw.default"] == "iw3"].groupby("seed"):
        h = hosts(g)
        h["seed"] = seed
        per_seed.append(h)
    h = pd.concat(per_seed, ignore_index=True)
    f = f.merge(h, on=["seed", "client"], how="left", validate="many_to_one")
    f["bw_bucket"] = _bucket(f["rate"], BW_EDGES, BW_LABELS)
    f["rtt_bucket"] = _bucket(f["rtt"], RTT_EDGES, RTT_LABELS)
    f["bdp_bucket"] = _bucket(f["bdp"], BDP_EDGES, BDP_LABELS)
    return f


def web_responses(raw: Path, p: Plan) -> pd.DataFrame:
    """The web flows counted (past the warm-up, not in the last TAIL seconds) of one sweep, with
    their latency; `iw` = the run's `iw.default`."""
    import iwlab

    flows = iwlab.sweep_records(raw, "flows")
    f = flows[(flows["app_kind"] == "web") & ~flows["in_warmup"].astype(bool)
              & (flows["start"].astype(float) <= p.duration - TAIL)]
    cols = ["iw.default", "seed", "client", "role", "response_bytes", "syn_ack", "last_byte", "completed",
            "data_segments", "retransmits", "timeouts", "fast_retransmits", "iw_segments"]
    f = pd.DataFrame({c: f[c].to_numpy(dtype=float if c not in ("iw.default", "role", "completed") else object,
                                       na_value=np.nan if c not in ("iw.default", "role", "completed") else None)
                      for c in cols})
    f["completed"] = f["completed"].astype(bool)
    f["latency"] = np.where(f["completed"], f["last_byte"] - f["syn_ack"], np.nan)
    f["client"] = f["client"].astype(int)
    f["seed"] = f["seed"].astype(int)
    return f.rename(columns={"iw.default": "iw"})

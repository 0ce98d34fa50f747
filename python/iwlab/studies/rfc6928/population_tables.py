"""The population's tables: latency IW3 vs IW10 per bucket, retransmission rates, and the fallback
cache against plain RFC 6928 — per seed first (a seed fixes the hosts), then across seeds."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from iwlab.studies.base import Cell, Table, cell
from iwlab.studies.rfc6928.population import ALL, BW_LABELS


def per_seed(f: pd.DataFrame, bucket: str | None) -> pd.DataFrame:
    """Per (bucket, iw, seed): mean latency, retransmission rate, share of flows, flows with a
    reduced IW; bucket None = all flows."""
    f = f.assign(_b=ALL if bucket is None else f[bucket])
    g = f.groupby(["_b", "iw", "seed"])
    out = g.agg(latency=("latency", "mean"), retx=("retransmits", "sum"), segs=("data_segments", "sum"),
                flows=("latency", "size"), reduced=("iw_segments", lambda s: float((s[s > 0] < 9.5).mean())))
    out["retx_rate"] = out["retx"] / out["segs"]
    total = f.groupby(["iw", "seed"]).size()
    out["share"] = out["flows"] / total.reindex(out.index.droplevel(0)).to_numpy()
    return out.reset_index().rename(columns={"_b": "bucket"})


def _pivot(ps: pd.DataFrame, metric: str) -> pd.DataFrame:
    return ps.pivot_table(index=["bucket", "seed"], columns="iw", values=metric, aggfunc="first")


def latency_table(name: str, dim: str, labels: Sequence[str], data: dict[str, pd.DataFrame]) -> Table:
    cells: dict[str, dict[str, Cell]] = {}
    pivots = {}
    for pop, f in data.items():
        ps = pd.concat([per_seed(f, None), per_seed(f, dim)])
        pivots[pop] = _pivot(ps, "latency"), _pivot(ps, "share")
    for label in (ALL, *labels):
        row = cells.setdefault(label, {})
        for pop, (lat, share) in pivots.items():
            if label not in lat.index.get_level_values(0):
                continue
            lat, share = lat.loc[label], share.loc[label]
            row[f"{pop} flows %"] = cell(share["iw3"] * 100)
            row[f"{pop} IW3 (ms)"] = cell(lat["iw3"] * 1000)
            row[f"{pop} IW10 (ms)"] = cell(lat["iw10"] * 1000)
            row[f"{pop} improvement %"] = cell((1 - lat["iw10"] / lat["iw3"]) * 100)
    what = {"bw_bucket": "access bandwidth", "rtt_bucket": "base RTT", "bdp_bucket": "bandwidth-delay product"}[dim]
    return Table.from_cells(name, f"Response latency IW3 vs IW10 by {what}", cells, fmt="{:.1f}", index_name=what,
                            note="Latency = SYN-ACK at the client (the request leaves) to the last response byte, "
                                 "mean over the bucket's web responses; improvement = 1 − IW10/IW3 per seed "
                                 "(same seed, same population), then mean and 95 % interval across seeds.")


def retransmission_table(data: dict[str, pd.DataFrame]) -> Table:
    cells: dict[str, dict[str, Cell]] = {}
    for pop, f in data.items():
        ps = pd.concat([per_seed(f, None), per_seed(f, "bw_bucket")])
        rate = _pivot(ps, "retx_rate") * 100
        for label in (ALL, *BW_LABELS):
            if label not in rate.index.get_level_values(0):
                continue
            r = rate.loc[label]
            cells[f"{pop} {label}"] = {
                "IW3 %": cell(r["iw3"]), "IW10 %": cell(r["iw10"]), "IW10 − IW3 (pp)": cell(r["iw10"] - r["iw3"]),
            }
    return Table.from_cells("retransmissions", "Retransmission rate (retransmitted / data segments), IW3 vs IW10",
                            cells, fmt="{:.2f}", index_name="population, bandwidth",
                            note="Per run over the web flows of the bucket; pp = percentage points.")


def fallback_table(data: dict[str, pd.DataFrame]) -> Table:
    cells: dict[str, dict[str, Cell]] = {}
    for pop, f in data.items():
        ps = pd.concat([per_seed(f, None), per_seed(f, "bw_bucket")])
        lat, rate, red = _pivot(ps, "latency") * 1000, _pivot(ps, "retx_rate") * 100, _pivot(ps, "reduced") * 100
        for label in (ALL, *BW_LABELS):
            if label not in lat.index.get_level_values(0):
                continue
            l, r, d = lat.loc[label], rate.loc[label], red.loc[label]
            cells[f"{pop} {label}"] = {
                "IW10 latency (ms)": cell(l["iw10"]), "fallback latency (ms)": cell(l["iw10-fallback"]),
                "latency change %": cell((l["iw10-fallback"] / l["iw10"] - 1) * 100),
                "IW10 retx %": cell(r["iw10"]), "fallback retx %": cell(r["iw10-fallback"]),
                "retx change (pp)": cell(r["iw10-fallback"] - r["iw10"]),
                "responses with a reduced IW %": cell(d["iw10-fallback"]),
            }
    return Table.from_cells("fallback", "RFC 6928 fallback cache (rfc6928-fallback) vs plain RFC 6928", cells,
                            fmt="{:.2f}", index_name="population, bandwidth",
                            note="The fallback policy caches, per destination on each server, loss detected in an "
                                 "initial window of more than 4 kB and then starts new connections to that "
                                 "destination with the RFC 3390 IW until the entry expires (3600 s). Reduced IW = below 10 "
                                 "segments (the cache, or a SYN retransmitted twice).")

"""The contested-IW cells: simulator with `tcp.profile = "linux"` against the kernel replica.

Cells (each a scenario whose short flows come with IW 3 and IW 10 in the same run):

* `lossy-tcp`, `lossy-mixed`: congested-links (2 Mb/s, 25-packet pfifo, CUBIC), 10-segment
  responses under its lossy backgrounds at 80 % of the bottleneck — Poisson bulk TCP only, and
  half UDP / half TCP (`profile_effect.variants`, the `linux` side);
* `adv9-tcpN` (N = 1…4): the advisor's testbed profile (2 Mb/s, RTT 100 ms, 25 packets), 9-segment
  responses at 10 % load, half of them IW 10 and half IW 3 (the advisor's harm layout), N
  long-lived TCP flows as background.

Per cell: mean completion of the short flows per IW, IW10/IW3 of the means (with a 95 % CI of the
kernel's ratio from a bootstrap over flows), RTO expiries per flow over all flows (with a 95 % CI
from a bootstrap over seeds). The kernel's
records are cached in OUT/kernel/ (the kernel does not change when the engine does), so after an
engine change `--sim-only` re-measures the simulator against the same kernel runs:

    python -m iwlab.emulate.kernel_cells --seeds 3 --out DIR            # kernel + simulator
    python -m iwlab.emulate.kernel_cells --seeds 3 --out DIR --sim-only  # simulator, cached kernel

Needs what `iwlab emulate` needs (root, the relay) unless `--sim-only`.
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

LOSSY_DURATION = 30.0
ADV_DURATION = 20.0


def cells() -> dict[str, tuple[Any, int, float]]:
    """name → (Scenario, response segments, run seconds)."""
    from iwlab.advise.build import scenario_data
    from iwlab.advise.candidates import Candidate
    from iwlab.advise.profile import Background, Constraints, Profile
    from iwlab.emulate.profile_effect import variants
    from iwlab.scenario import Scenario

    out: dict[str, tuple[Any, int, float]] = {}
    for (pattern, prof), sc in variants(80.0).items():
        if prof == "linux":
            out[f"lossy-{'tcp' if pattern == 'varying' else 'mixed'}"] = (sc, 10, LOSSY_DURATION)
    iw10 = Candidate("iw10", "fixed", {"kind": "fixed", "segments": 10}, 10)
    for n in (1, 2, 3, 4):
        p = Profile(sizes="9seg", background=Background("tcp", 0.0, n), constraints=Constraints(harm_pct=100.0),
                    duration_s=ADV_DURATION, warmup_s=2.0)
        data = scenario_data(p, iw10, name=f"adv9-tcp{n}")
        data["seed"] = 1
        out[f"adv9-tcp{n}"] = (Scenario.from_data(data, data["name"]), 9, ADV_DURATION)
    return out


def flows_of(result, mode: str) -> pd.DataFrame:
    f = result.flows
    f = f[~f["in_warmup"]]
    return pd.DataFrame({"mode": mode, "seed": result.seed, "size": f["response_bytes"].astype("int64").to_numpy(),
                         "iw": f["iw_segments"].astype("float64").to_numpy(),
                         "completed": f["completed"].astype(bool).to_numpy(),
                         "completion": f["completion"].astype("float64").to_numpy(),
                         "timeouts": f["timeouts"].astype("float64").to_numpy()})


def ratio_ci(iw3: np.ndarray, iw10: np.ndarray, seed: int = 0, n: int = 2000) -> tuple[float, float]:
    """95 % bootstrap interval of mean(iw10)/mean(iw3), resampling flows."""
    rng = np.random.default_rng(seed)
    if len(iw3) == 0 or len(iw10) == 0:
        return float("nan"), float("nan")
    r = [rng.choice(iw10, len(iw10)).mean() / rng.choice(iw3, len(iw3)).mean() for _ in range(n)]
    return float(np.quantile(r, 0.025)), float(np.quantile(r, 0.975))


def per_flow_ci(f: pd.DataFrame, column: str, seed: int = 0, n: int = 2000) -> tuple[float, float]:
    """95 % bootstrap interval of `column`'s mean per flow, resampling whole seeds: the flows of one
    run share its queue, so they are not independent draws (one kernel seed's RTOs per flow spread
    0.16–0.56 in adv9-tcp4)."""
    g = f.groupby("seed")[column].agg(["sum", "size"])
    if len(g) == 0:
        return float("nan"), float("nan")
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, len(g), size=(n, len(g)))
    sums, sizes = g["sum"].to_numpy(dtype=float)[idx].sum(axis=1), g["size"].to_numpy(dtype=float)[idx].sum(axis=1)
    r = sums / sizes
    return float(np.quantile(r, 0.025)), float(np.quantile(r, 0.975))


def summarize(f: pd.DataFrame, segments: int, mss: int) -> dict[str, float]:
    short = f[f["completed"] & (f["size"] == segments * mss)]
    row: dict[str, float] = {}
    for iw in (3, 10):
        c = short[short["iw"] == iw]["completion"].to_numpy()
        row[f"iw{iw}_mean"] = float(c.mean()) if len(c) else float("nan")
        row[f"iw{iw}_n"] = int(len(c))
    row["ratio"] = row["iw10_mean"] / row["iw3_mean"]
    lo, hi = ratio_ci(short[short["iw"] == 3]["completion"].to_numpy(), short[short["iw"] == 10]["completion"].to_numpy())
    row["ratio_lo"], row["ratio_hi"] = lo, hi
    row["timeouts_per_flow"] = float(f["timeouts"].mean()) if len(f) else float("nan")
    row["timeouts_lo"], row["timeouts_hi"] = per_flow_ci(f, "timeouts")
    return row


def main(argv: list[str] | None = None) -> None:
    import iwlab
    from iwlab.emulate.plan import shortened
    from iwlab.emulate.tcp_options import merged_tcp
    from iwlab.emulate.units import size_bytes

    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--seeds", type=int, default=3)
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--sim-only", action="store_true", help="reuse OUT/kernel/ (the kernel's cached flows)")
    p.add_argument("--only", default="", help="comma-separated cell names")
    p.add_argument("--sim-seeds", type=int, default=None,
                   help="seeds 1..N for the simulator (default: --seeds); the simulator is cheap, and one cell's "
                        "ratio over 2 seeds moves by ±0.3 from seed to seed")
    p.add_argument("--sim-tcp", action="append", default=[], metavar="FIELD=VALUE",
                   help="a [tcp] field set on the simulated side only (repeatable), to tell which profile rule "
                        "moves a cell, e.g. cwnd_growth=every-ack")
    p.add_argument("--sim-jitter", default=None, metavar="DURATION",
                   help="topology.jitter on the simulated side only (e.g. 200us): per-packet timing noise, which "
                        "the kernel testbed has and the deterministic engine has not")
    a = p.parse_args(argv)
    sim_tcp = {}
    for kv in a.sim_tcp:
        k, sep, v = kv.partition("=")
        if not sep or not k:
            p.error(f"--sim-tcp {kv!r}: expected FIELD=VALUE")
        sim_tcp[k] = _scalar(v)
    (a.out / "kernel").mkdir(parents=True, exist_ok=True)
    rows = []
    for name, (sc, segs, dur) in cells().items():
        if a.only and name not in a.only.split(","):
            continue
        mss = size_bytes(merged_tcp(sc.data)["mss"])
        sims, emus, loads = [], [], []
        sim_sc = with_tcp(sc, sim_tcp) if sim_tcp else sc
        if a.sim_jitter:
            sim_sc = with_jitter(sim_sc, a.sim_jitter)
        for s in range(1, (a.sim_seeds or a.seeds) + 1):
            sims.append(flows_of(iwlab.run(shortened(sim_sc, dur), seed=s), "simulated"))
        for s in range(1, a.seeds + 1):
            cache = a.out / "kernel" / f"{name}-seed{s}.csv"
            if not cache.exists():
                if a.sim_only:
                    raise SystemExit(f"--sim-only: {cache} is missing; run without --sim-only first")
                from iwlab.emulate.run import emulate

                loads.append(os.getloadavg()[0])
                print(f"{name} seed {s}: emulating {dur:g} s (load {loads[-1]:.1f})", flush=True)
                flows_of(emulate(sc, seed=s, duration=dur), "emulated").assign(load=loads[-1]).to_csv(cache, index=False)
            emus.append(pd.read_csv(cache))
        sim, emu = summarize(pd.concat(sims), segs, mss), summarize(pd.concat(emus), segs, mss)
        load = pd.concat(emus)["load"]
        row = {"cell": name, "seeds": a.seeds, "sim_seeds": a.sim_seeds or a.seeds, "kernel_load": f"{load.min():.1f}-{load.max():.1f}",
               **{f"sim_{k}": v for k, v in sim.items()}, **{f"kern_{k}": v for k, v in emu.items()}}
        print(json.dumps(row), flush=True)
        rows.append(row)
    t = pd.DataFrame(rows)
    t.to_csv(a.out / "cells.csv", index=False)
    print(table(t))
    (a.out / "cells.md").write_text(table(t) + "\n")


def _scalar(v: str) -> Any:
    """A `--sim-tcp` value as TOML reads it (`false`, `3`), else the string itself."""
    import tomllib

    try:
        return tomllib.loads(f"v = {v}")["v"]
    except tomllib.TOMLDecodeError:
        return v


def with_tcp(sc: Any, fields: dict[str, Any]) -> Any:
    """`sc` with these `[tcp]` fields set (over its profile); a bad value fails as in a scenario file."""
    import copy

    from iwlab.scenario import Scenario

    data = copy.deepcopy(sc.data)
    data.setdefault("tcp", {}).update(fields)
    return Scenario.from_data(data, data.get("name", "cell"))


def with_jitter(sc: Any, jitter: str) -> Any:
    """`sc` with `topology.jitter` set; a bad value fails as in a scenario file."""
    import copy

    from iwlab.scenario import Scenario

    data = copy.deepcopy(sc.data)
    data["topology"]["jitter"] = jitter
    return Scenario.from_data(data, data.get("name", "cell"))


def table(t: pd.DataFrame) -> str:
    lines = ["| cell | sim IW3 / IW10 (s) | kernel IW3 / IW10 (s) | sim ratio | kernel ratio [95 % CI] | Δratio "
             "| RTO/flow sim | kernel [95 % CI] | kernel load |", "|---|---|---|---|---|---|---|---|---|"]
    for r in t.itertuples():
        lines.append(f"| {r.cell} | {r.sim_iw3_mean:.3f} / {r.sim_iw10_mean:.3f} | {r.kern_iw3_mean:.3f} / "
                     f"{r.kern_iw10_mean:.3f} | {r.sim_ratio:.2f} | {r.kern_ratio:.2f} [{r.kern_ratio_lo:.2f}, "
                     f"{r.kern_ratio_hi:.2f}] | {r.sim_ratio - r.kern_ratio:+.2f} | {r.sim_timeouts_per_flow:.3f} | "
                     f"{r.kern_timeouts_per_flow:.3f} [{r.kern_timeouts_lo:.3f}, {r.kern_timeouts_hi:.3f}] | {r.kernel_load} |")
    return "\n".join(lines)


if __name__ == "__main__":
    main()

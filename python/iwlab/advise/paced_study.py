"""Study: paced vs bursty IW 20 on a small-buffer congested link.

Short flows of 20 segments from 8 servers arrive as a Poisson process over a 2 Mb/s, 100 ms RTT
bottleneck already carrying UDP at 50 %; the drop-tail buffer is varied from 5 to 40 packets.
Each flow's server starts with IW 20, sent back to back (bursty) or paced as `iwlab flow-iw`
deploys it (the advisor's `paced` candidate): Linux sends the first 10 data segments at line
rate whatever the pacing (`tcp.pacer = "linux"`), so only segments 11–20 leave RTT/IW apart — a
paced IW 10 on Linux is no paced IW at all, hence IW 20. TCP is `tcp.profile = "linux"`. Figures:
mean completion time and retransmission rate per buffer, 95 % CI over seeds.

    python -m iwlab.advise.paced_study out/paced 10  # writes paced-iw.png and paced-iw.csv (10 seeds)
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd

from iwlab.advise.build import scenario_data
from iwlab.advise.candidates import expand
from iwlab.advise.evaluate import EvalSpec, reduce
from iwlab.advise.profile import Profile
from iwlab.advise.search import t_interval

BUFFERS = (5, 10, 20, 40)
IW = 20


def profile(buffer: int, duration: str = "60s") -> Profile:
    return Profile.from_flags(rate="2Mbps", rtt="100ms", buffer=f"{buffer}pkt", background="udp:50%",
                              sizes="20seg", load="25%", duration=duration)


def run(seeds: int = 5, buffers: tuple[int, ...] = BUFFERS, duration: str = "60s") -> pd.DataFrame:
    """One row per (buffer, variant, seed): mean completion time, retransmission rate, timeouts."""
    import iwlab
    from iwlab.scenario import Scenario

    rows = []
    for b in buffers:
        p = profile(b, duration)
        for cand in expand([f"fixed:{IW}", f"paced:{IW}"], p.mss):
            data = scenario_data(p, cand, "paced-study")
            sc, spec = Scenario.from_data(data), EvalSpec.of(data)
            for s in range(1, seeds + 1):
                r = iwlab.run(sc, seed=s)
                m = reduce(r.flows, r.links, r.queues, spec)
                rows.append({"buffer": b, "variant": f"paced IW{IW}" if cand.tcp else f"bursty IW{IW}", "seed": s,
                             "fct_mean": m["fct_mean"], "retransmit_rate": m["retransmit_rate"],
                             "timeouts": m["timeouts"], "flows": m["flows"]})
    return pd.DataFrame(rows)


def summary(df: pd.DataFrame) -> pd.DataFrame:
    out = []
    for (b, v), g in df.groupby(["buffer", "variant"], sort=True):
        m, lo, hi = t_interval(g["fct_mean"].to_numpy(dtype=float))
        r, rlo, rhi = t_interval(g["retransmit_rate"].to_numpy(dtype=float))
        out.append({"buffer": b, "variant": v, "fct_mean": m, "fct_ci_low": lo, "fct_ci_high": hi,
                    "retransmit_rate": r, "rtx_ci_low": rlo, "rtx_ci_high": rhi,
                    "timeouts_per_run": float(g["timeouts"].mean()), "seeds": len(g)})
    return pd.DataFrame(out)


def figure(s: pd.DataFrame) -> bytes:
    from iwlab.report.figures import versus

    buffers = sorted(s["buffer"].unique())
    series_fct, series_rtx = {}, {}
    for v, g in s.groupby("variant"):
        g = g.set_index("buffer").loc[buffers]
        series_fct[v] = (g["fct_mean"] * 1e3, g["fct_ci_low"] * 1e3, g["fct_ci_high"] * 1e3)
        series_rtx[v] = (g["retransmit_rate"] * 100, g["rtx_ci_low"] * 100, g["rtx_ci_high"] * 100)
    return versus([("Mean completion time, 20-segment flows", "ms", series_fct),
                   ("Retransmission rate", "%", series_rtx)], [f"{b} pkt" for b in buffers],
                  "bottleneck buffer (2 Mb/s, RTT 100 ms, UDP 50 %)", ncols=2)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    out = Path(argv[0] if argv else "out/paced-study")
    out.mkdir(parents=True, exist_ok=True)
    s = summary(run(seeds=int(argv[1]) if len(argv) > 1 else 5))
    s.to_csv(out / "paced-iw.csv", index=False)
    (out / "paced-iw.png").write_bytes(figure(s))
    with np.printoptions(precision=4):
        print(s.to_string(index=False))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

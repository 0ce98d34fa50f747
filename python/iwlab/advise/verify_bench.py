"""Wall time of `--verify` per paired seed in the 9-segment case: 2 Mb/s, RTT 100 ms, a
25-packet buffer, one long-lived CUBIC flow, 9-segment responses at 10 % load (Poisson), IW 10
recommended with IW 3 and IW 4 behind it. Root and network namespaces.

    python -m iwlab.advise.verify_bench 3                      # this verification, 3 paired seeds
    python -m iwlab.advise.verify_bench 2 --before VERIFY.py   # another implementation's
                                                               # verify(a, seeds=, say=) module

Prints the verification's table and one JSON line: seeds, wall seconds, seconds per seed and
the load average before and after (the machine's load changes the figure; say it).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import time

import pandas as pd

from iwlab.advise.advisor import Advice, _recommended
from iwlab.advise.candidates import expand
from iwlab.advise.profile import Profile

__all__ = ["nine_segment_advice"]


def nine_segment_advice() -> Advice:
    """An advice for the 9-segment profile ranking IW 10, IW 3, IW 4 (what to verify, not a race)."""
    p = Profile.from_flags(rate="2Mbps", rtt="100ms", buffer="25pkt", background="tcp:1", sizes="9seg")
    names, values = ["iw10", "iw3", "iw4"], [0.60, 0.62, 0.63]
    pool = expand(["fixed:10,3,4"], p.mss)
    t = pd.DataFrame({"candidate": names, "kind": ["fixed"] * 3, "deploy": ["route"] * 3,
                      "iw_segments": [10, 3, 4], "iw_got": [10.0, 3.0, 4.0], "seeds": [4] * 3, "value": values,
                      "ci_low": [v - 0.01 for v in values], "ci_high": [v + 0.01 for v in values],
                      "vs_recommended": [0.0, 0.02, 0.03], "vs_recommended_pm": [0.0, 0.01, 0.01],
                      "retransmit_rate": [0.0] * 3, "completed": [1.0] * 3,
                      "status": ["recommended", "worse", "worse"], "pareto": [True, False, False]})
    recd, _ = _recommended(pool[0], t, pool)
    return Advice(profile=p, objective="mean", recommended=recd, candidates=t, runs=pd.DataFrame(),
                  rounds=pd.DataFrame(), sensitivity=pd.DataFrame(), stop_reason="separated", stop_detail="",
                  policy_file="", ip_route="", budget="-", seconds=0.0, pool=pool, margin_s=0.0001)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("seeds", type=int)
    ap.add_argument("--before", help="a verify.py of another implementation: verify(a, seeds=, say=)")
    ap.add_argument("--parallel", type=int, default=6)
    args = ap.parse_args()
    a = nine_segment_advice()
    t0 = time.monotonic()

    def say(s: str) -> None:
        print(f"{time.monotonic() - t0:7.1f} {s}", flush=True)

    load0 = os.getloadavg()
    if args.before:
        spec = importlib.util.spec_from_file_location("verify_before", args.before)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        df, _ = mod.verify(a, seeds=args.seeds, say=say)
    else:
        from iwlab.advise.verify import verify

        # margin 0.1 ms: no verdict stops it early; exactly `seeds` paired seeds.
        df, _ = verify(a, arrivals=["poisson"], min_seeds=args.seeds, max_seeds=args.seeds, time_limit=1e9,
                       say=say, parallel=args.parallel)
    wall = time.monotonic() - t0
    print(df.to_string())
    print(json.dumps({"verification": "before" if args.before else "this", "seeds": args.seeds,
                      "wall_s": round(wall, 1), "per_seed_s": round(wall / args.seeds, 1),
                      "load_before": [round(x, 2) for x in load0],
                      "load_after": [round(x, 2) for x in os.getloadavg()]}))


if __name__ == "__main__":
    main()

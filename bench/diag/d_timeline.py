#!/usr/bin/env python3
"""Case D flow by flow and over time, iwlab beside ns-3 (bench/README.md, section D).

    .venv/bin/python bench/diag/d_timeline.py NS3_RUNS [--step 0.25] [--duration 5]

NS3_RUNS: a file with ns-3 D runs (a results.json of `bench/run.py --only D`, or one run object
per line as bench/run.py writes them); the first run whose command has `--duration` equal to
--duration is used. It carries the per-flow counters and the sinks' bytes every 0.25 s
(`bulk --senderStats 1`). The iwlab side runs `bench/scenarios/bulk-bdp.toml` once per
sampling time, for that duration: the engine is deterministic, so a run to t is the prefix of
a run to any later time.

Prints the bytes each flow's receiver has been given in order, every --step seconds, on both
sides, then each flow's retransmissions, recoveries, RTO episodes and largest cwnd.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(BENCH))
import run  # noqa: E402  (bench/run.py: the iwlab side of the answers)


def ns3_run(path: str, duration: float) -> dict:
    text = Path(path).read_text()
    try:
        docs = [json.loads(text)]
    except json.JSONDecodeError:
        docs = [json.loads(ln) for ln in text.splitlines() if ln.strip()]
    for d in docs:
        runs = [d] if "command" in d else d.get("cases", {}).get("D", {}).get("runs", {}).get("ns3", [])
        for r in runs:
            if r.get("duration_s") == duration and "timeline_rx_bytes" in r:
                return r
    raise SystemExit(f"{path}: no ns-3 D run of {duration:g} s with a timeline (bulk --senderStats 1)")


def iwlab_at(duration: float):
    import iwlab

    sc = iwlab.load(str(BENCH / "scenarios" / "bulk-bdp.toml"))
    sc = iwlab.Scenario.from_data(dict(sc.data, duration=f"{duration:g}s"), sc.source)
    # Flow i of iwlab runs from right host i to left host i; order by the data receiver.
    return iwlab.run(sc, seed=1).flows.sort_values("client")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("ns3_runs")
    ap.add_argument("--step", type=float, default=0.25)
    ap.add_argument("--duration", type=float, default=5.0)
    a = ap.parse_args()
    ns3 = ns3_run(a.ns3_runs, a.duration)
    rows = {round(r[0], 6): r[1:] for r in ns3["timeline_rx_bytes"]}
    n = len(ns3["flow_rx_bytes"])
    print(f"# bytes delivered in order per flow, MB (ns-3 | iwlab); ns-3: {ns3['command']}")
    print("t s  | " + " ".join(f"ns3 f{i:<3}" for i in range(n)) + " | " + " ".join(f"iw f{i:<4}" for i in range(n)))
    t = a.step
    while t <= a.duration + 1e-9:
        f = iwlab_at(t)
        ns = rows.get(round(t, 6), ns3["flow_rx_bytes"] if abs(t - a.duration) < 1e-9 else [None] * n)
        cells = [f"{x / 1e6:8.1f}" if x is not None else "       -" for x in ns]
        iw = [f"{x / 1e6:8.1f}" for x in f["delivered_bytes"].astype("int64")]
        print(f"{t:4.2f} | " + " ".join(cells) + " | " + " ".join(iw))
        t += a.step
    f = iwlab_at(a.duration)
    mss = 1448
    print("\n# per flow at the end: retransmissions, recoveries (ns-3 CA_RECOVERY entries | iwlab fast "
          "retransmits), RTO episodes (ns-3 CA_LOSS entries | iwlab timeouts), largest cwnd (segments)")
    for i in range(n):
        r = f.iloc[i]
        print(
            f"flow {i}: retx {ns3['flow_retransmissions'][i]:6d} | {int(r['retransmits']):6d}   "
            f"recoveries {ns3['flow_recoveries'][i]:3d} | {int(r['fast_retransmits']):3d}   "
            f"RTO {ns3['flow_loss_states'][i]:3d} | {int(r['timeouts']):3d}   "
            f"max cwnd {ns3['flow_max_cwnd_bytes'][i] / mss:7.0f} | {int(r['max_cwnd']) / mss:7.0f}"
        )


if __name__ == "__main__":
    main()

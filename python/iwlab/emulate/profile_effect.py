"""What `tcp.profile = "linux"` changes in `iwlab compare congested-links` under loss.

Four scenarios: the congested-links preset's two short-flow pairs (10-segment responses, IW3
on pair 0, IW10 on pair 1) under the study's lossy backgrounds — **varying** (TCP only:
Poisson bulk transfers at `level` % of the bottleneck) and **mixed** (half UDP, half TCP) —
each once with the preset's TCP as it was before the profile (explicit `[tcp]` fields, an ACK
per segment for the short flows) and once with `profile = "linux"` (PRR, HyStart, quick-ACK
mode then delayed ACKs, max RTO 120 s). Each is compared (simulator vs kernel, same draws) and
the table gives, per (pattern, profile, IW), the mean completion time of the short flows in
both, and the IW10/IW3 ratio of those means.

    python -m iwlab.emulate.profile_effect --seeds 2 --duration 40s --level 80 --out DIR
    python -m iwlab.emulate.profile_effect --patterns long-lived --profiles linux --segments 9 \
        --bulk-flows 2 --seeds 3 --duration 40s --out DIR

Needs what `iwlab compare` needs (root, the relay); the pure part (`variants`) is tested.
"""

from __future__ import annotations

import argparse
import copy
import json
import os
from pathlib import Path
from typing import Any

PATTERNS = ("varying", "mixed")
# `long-lived`: N bulk TCP flows for the whole run (the advisor's testbed: 2 Mb/s, 100 ms,
# 25 packets, 2 long-lived flows) — the pattern where a short flow's IW meets a queue that TCP
# keeps full all the time.
ALL_PATTERNS = PATTERNS + ("long-lived",)

# The preset's [tcp] before the `linux` profile existed, and its short flows'
# `tcp = { delayed_ack = false }`.
EXPLICIT_TCP: dict[str, Any] = {
    "mss": "1448B", "timestamps": True, "cc": "cubic", "sack": True, "recovery": "sack", "limited_transmit": True,
    "delayed_ack": {"segments": 2, "timeout": "40ms"}, "initial_rto": "1s", "min_rto": "200ms",
    "syn_loss": "rfc6928",
}


def variants(level: float = 80.0, patterns: tuple[str, ...] = PATTERNS, profiles: tuple[str, ...] = ("explicit", "linux"),
             segments: int = 10, bulk_flows: int = 2) -> dict[tuple[str, str], Any]:
    """(pattern, "explicit" | "linux") → Scenario."""
    from iwlab.scenario import Scenario, load
    from iwlab.studies.congested_links import BG_IW, BG_PAIRS, BG_SIZE

    base = load("congested-links").data
    out = {}
    for pattern in patterns:
        for prof in profiles:
            data = copy.deepcopy(base)
            topo = data["topology"]
            access = copy.deepcopy(topo["left"][0]["access"])
            topo["left"].append({"name": "bg-clients", "count": BG_PAIRS, "access": access})
            topo["right"].append({"name": "bg-servers", "count": BG_PAIRS, "access": copy.deepcopy(access)})
            shorts = [a for a in data["apps"] if a["kind"] == "short-flows"]
            udp = next(a for a in data["apps"] if a["kind"] == "udp")
            if prof == "explicit":
                data["tcp"] = dict(EXPLICIT_TCP)
                shorts = [dict(a, tcp={"delayed_ack": False}) for a in shorts]
            shorts = [dict(a, response=f"{segments}seg") for a in shorts]
            tcp_share = level if pattern == "varying" else level / 2
            apps = list(shorts)
            if pattern == "mixed":
                apps.append(dict(udp, rate=f"{level / 2:g}%", poisson=True, start="0s"))
            if pattern == "long-lived":
                apps.append({"kind": "bulk", "name": "tcp-background", "clients": "bg-clients", "servers": "bg-servers",
                             "count": bulk_flows, "mapping": "distinct", "server_iw": BG_IW, "client_iw": BG_IW})
            else:
                apps.append({"kind": "poisson-flows", "name": "tcp-background", "clients": "bg-clients",
                             "servers": "bg-servers", "count": BG_PAIRS, "mapping": "distinct", "size": BG_SIZE,
                             "load": tcp_share / 100, "request": "100B", "server_iw": BG_IW, "client_iw": BG_IW})
            data["apps"] = apps
            data["name"] = f"congested-links-{pattern}-{prof}"
            what = f"{bulk_flows} long-lived TCP flows" if pattern == "long-lived" else f"{pattern} background at {level:g} %"
            data["description"] = f"congested-links, {segments}-segment responses, {what}, TCP {prof}"
            out[(pattern, prof)] = Scenario.from_data(data, data["name"])
    return out


def summarize(cmp: Any, mss: int = 1448, segments: int = 10) -> dict[str, float]:
    """Mean completion (s) of the short flows per mode and IW, and IW10/IW3 of the means."""
    # compare labels sizes exactly ("14480 B") or, with many sizes, in bins of segments; the
    # background's flows are >= 35 segments, so the bin of 10 segments holds only short flows.
    f = cmp.flows
    f = f[f["size"].astype(str).isin({f"{segments * mss} B", "4-10 seg"})]
    row: dict[str, float] = {}
    for mode in ("simulated", "emulated"):
        for iw in (3, 10):
            g = f[(f["mode"] == mode) & (f["iw"] == iw)]["completion"]
            row[f"{mode[:3]}_iw{iw}_mean"] = float(g.mean()) if len(g) else float("nan")
            row[f"{mode[:3]}_iw{iw}_n"] = int(len(g))
        row[f"{mode[:3]}_ratio"] = row[f"{mode[:3]}_iw10_mean"] / row[f"{mode[:3]}_iw3_mean"]
    return row


def main(argv: list[str] | None = None) -> None:
    from iwlab.emulate.compare import compare

    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--seeds", type=int, default=2)
    p.add_argument("--first-seed", type=int, default=None, help="default: the scenario's")
    p.add_argument("--duration", default="40s")
    p.add_argument("--level", type=float, default=80.0)
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--patterns", default=",".join(PATTERNS), help=f"some of {','.join(ALL_PATTERNS)}")
    p.add_argument("--profiles", default="explicit,linux")
    p.add_argument("--segments", type=int, default=10, help="response size of the short flows")
    p.add_argument("--bulk-flows", type=int, default=2, help="long-lived flows of the long-lived pattern")
    a = p.parse_args(argv)
    patterns = tuple(x for x in a.patterns.split(",") if x)
    bad = [x for x in patterns if x not in ALL_PATTERNS]
    if bad:
        p.error(f"--patterns {','.join(bad)}: expected some of {','.join(ALL_PATTERNS)}")
    dur = float(a.duration.rstrip("s"))
    a.out.mkdir(parents=True, exist_ok=True)
    rows = []
    for (pattern, prof), sc in variants(a.level, patterns, tuple(a.profiles.split(",")), a.segments,
                                        a.bulk_flows).items():
        load_before = os.getloadavg()
        cmp = compare(sc, seeds=a.seeds, duration=dur, out=a.out / f"{pattern}-{prof}", first_seed=a.first_seed,
                      say=print)
        row = dict(pattern=pattern, tcp=prof, load=load_before[0], seeds=cmp.seeds, **summarize(cmp, segments=a.segments),
                   **{f"{m.metric} {k}": getattr(m, k) for m in cmp.metrics.itertuples() for k in ("sim", "emu")})
        print(json.dumps(row))
        (a.out / f"{pattern}-{prof}.txt").write_text(cmp.text())
        rows.append(row)
    (a.out / "profile_effect.json").write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()

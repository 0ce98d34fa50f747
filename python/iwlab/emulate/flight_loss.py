"""What the short flows' first flights lose, and how often each loss ends in an RTO, simulator
against kernel — to tell a recovery rule from the queue the flight meets.

A first flight's fate is read from packets that crossed the bottleneck: the kernel testbed's
client-side captures, the simulator's bottleneck trace. The flight is the data (and lone FIN)
the server sent with its first TSval, if that came within 0.27 s of the SYN-ACK's (base RTT plus
a full queue; a resend of a wholly lost flight comes a handshake RTT plus a PTO, ≥ 0.3 s, later).
Its pattern: `no loss`, `tail k` (the last k segments lost — a drop-tail queue that filled during
the burst), `whole flight`, or `holes`. Per IW, the table gives each pattern's share of the flows
and its RTOs per flow in both worlds, and the simulator's RTOs per flow applied to the kernel's
shares: when that equals the kernel's own figure, the simulator recovers from each loss as the
kernel does and a remaining gap is in which losses happen.

    python -m iwlab.emulate.flight_loss --cell adv9-tcp4 --seeds 10 --sim-seeds 30 --out DIR

Kernel runs are cached in DIR/kernel-CELL-SEED/ (flows and captures); needs what
`iwlab emulate` needs unless they are all there.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import pandas as pd

from iwlab.emulate import pcap

# The flight leaves when the request arrives: at most a base RTT plus a full queue after the
# SYN-ACK on the kernel cells' paths (100 ms + 25 packets at 2 Mb/s).
FIRST_FLIGHT_WITHIN_S = 0.27
# Kernel TSvals tick in ms and the FIN may leave a tick after the data; the engine's in µs.
SLACK_TICKS = {"kernel": 2, "sim": 0}
TS_HZ = {"kernel": 1000, "sim": 1_000_000}


def by_client(segments: list[pcap.Segment]) -> dict[tuple[str, int], dict[str, Any]]:
    """client (address, port) → {"syn": time of its SYN, "server": the server's segments}."""
    server_of: dict[tuple[str, int], tuple[str, int]] = {}
    out: dict[tuple[str, int], dict[str, Any]] = {}
    for s in segments:
        if s.syn and not s.has_ack:
            server_of.setdefault(s.src, s.dst)
            out.setdefault(s.src, {"syn": s.time, "server": []})
        elif server_of.get(s.dst) == s.src:
            out[s.dst]["server"].append(s)
    return out


def expected(segments: int, iw: int) -> set:
    """The first flight: min(IW, response) segments, and the lone FIN when the IW has room for it."""
    return set(range(min(iw, segments))) | ({"F"} if iw > segments else set())


def first_flight(server: list[pcap.Segment], mss: int, segments: int, iw: int, world: str,
                 within: float = FIRST_FLIGHT_WITHIN_S) -> set | None:
    """Which of `expected(segments, iw)` crossed the bottleneck in the first flight; None without data.
    `within`: the latest a first flight leaves after the SYN-ACK (base RTT plus a full queue)."""
    synack = [s for s in server if s.syn and s.has_ack]
    data = [s for s in server if (s.payload > 0 or s.flags & 0x01) and not s.syn and s.tsval is not None]
    if not synack or synack[0].tsval is None or not data:
        return None
    t0 = min(s.tsval for s in data)
    if t0 - synack[0].tsval > within * TS_HZ[world]:
        return set()
    isn = synack[0].seq
    got: set = set()
    for s in data:
        if s.tsval - t0 > SLACK_TICKS[world]:
            continue
        if s.payload:
            first = ((s.seq - isn - 1) % (1 << 32)) // mss
            got.update(range(first, first + max(1, s.payload // mss)))
        if s.flags & 0x01:
            got.add("F")
    return got & expected(segments, iw)


def pattern(got: set, flight: set) -> str:
    lost = flight - got
    if not lost:
        return "no loss"
    if lost == flight:
        return "whole flight"
    order = sorted(x for x in flight if x != "F") + (["F"] if "F" in flight else [])
    if set(order[-len(lost):]) == lost:
        return "tail 1" if len(lost) == 1 else f"tail {len(lost)}"
    return "holes"


def coarse(p: str) -> str:
    """Tails grouped so that each class has flows enough: 1, 2–5, 6 or more."""
    if not p.startswith("tail "):
        return p
    k = int(p[5:])
    return "tail 1" if k == 1 else ("tail 2-5" if k <= 5 else "tail 6+")


def classify(flows: pd.DataFrame, conns: list[dict[str, Any]], world: str, segments: int, mss: int) -> pd.DataFrame:
    """`flows` (the run's short flows, in start order, warm-up included) matched one to one with
    `conns` (by_client values, in SYN order): one row per measured short flow with its pattern."""
    if len(conns) != len(flows):
        raise ValueError(f"{len(conns)} connections in the captures for {len(flows)} flows")
    rows = []
    for f, c in zip(flows.itertuples(), conns):
        iw = float(f.iw_segments) if pd.notna(f.iw_segments) else 0.0
        if f.in_warmup or iw not in (3.0, 10.0):
            continue
        got = first_flight(c["server"], mss, segments, int(iw), world)
        if got is None:
            continue
        rows.append({"world": world, "iw": int(iw), "pattern": coarse(pattern(got, expected(segments, int(iw)))),
                     "timeouts": int(f.timeouts)})
    return pd.DataFrame(rows, columns=["world", "iw", "pattern", "timeouts"])


def decompose(sim: pd.DataFrame, kern: pd.DataFrame) -> tuple[pd.DataFrame, dict[int, dict[str, float]]]:
    """Per (IW, pattern): flows, share and RTOs per flow in each world; per IW: both worlds' RTOs
    per flow and the simulator's per-pattern RTOs weighted by the kernel's shares."""
    parts, totals = [], {}
    for iw in sorted(set(sim["iw"]) | set(kern["iw"])):
        t = {}
        for name, d in (("sim", sim), ("kernel", kern)):
            g = d[d["iw"] == iw].groupby("pattern")["timeouts"].agg(["size", "mean"])
            t[name] = g.rename(columns={"size": f"n_{name}", "mean": f"rto_{name}"})
            t[name][f"share_{name}"] = t[name][f"n_{name}"] / t[name][f"n_{name}"].sum()
        j = t["sim"].join(t["kernel"], how="outer").fillna(0.0)
        totals[int(iw)] = {"sim": float((j.share_sim * j.rto_sim).sum()), "kernel": float((j.share_kernel * j.rto_kernel).sum()),
                           "sim_on_kernel_shares": float((j.share_kernel * j.rto_sim).sum())}
        parts.append(j.assign(iw=int(iw)).reset_index())
    return pd.concat(parts, ignore_index=True), totals


def sim_rows(sc, seeds: range, out: Path, segments: int, mss: int) -> pd.DataFrame:
    import iwlab

    rows = []
    for s in seeds:
        flows = iwlab.run(sc, seed=s).flows
        short = flows[flows["app_kind"] != "bulk"].sort_values("start", kind="stable")
        trace = out / f"sim-{sc.data['name']}-{s}.pcap"
        iwlab.run(sc, seed=s, pcap=trace, flows=[int(x) for x in short["flow"]])
        conns = sorted(by_client(pcap.read(trace)).values(), key=lambda c: c["syn"])
        trace.unlink()
        rows.append(classify(short, conns, "sim", segments, mss))
    return pd.concat(rows, ignore_index=True)


def kernel_rows(sc, seeds: range, out: Path, duration: float, segments: int, mss: int) -> pd.DataFrame:
    rows = []
    for s in seeds:
        d = out / f"kernel-{sc.data['name']}-{s}"
        if not (d / "flows.parquet").exists():
            import iwlab
            from iwlab.emulate.plan import build_plan, shortened
            from iwlab.emulate.run import emulate

            # Capture the short flows' clients (their nodes are the simulator's, workload replayed).
            sim = iwlab.run(shortened(sc, duration), seed=s).flows
            nodes = set(sim.loc[sim["app_kind"] != "bulk", "client"].astype(int))
            hosts = [h.name for h in build_plan(sc, seed=s, duration=duration, pid=1).hosts if h.node in nodes]
            emulate(sc, seed=s, duration=duration, capture=hosts, out=d)
        flows = pd.read_parquet(d / "flows.parquet")
        short = flows[flows["app_kind"] != "bulk"].sort_values("start", kind="stable")
        conns = [c for p in sorted(d.glob("capture-*.pcap")) for c in by_client(pcap.read(p)).values()]
        rows.append(classify(short, sorted(conns, key=lambda c: c["syn"]), "kernel", segments, mss))
    return pd.concat(rows, ignore_index=True)


def main(argv: list[str] | None = None) -> None:
    from iwlab.emulate.kernel_cells import cells, with_jitter
    from iwlab.emulate.plan import shortened

    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--cell", required=True, help="a kernel_cells cell, e.g. adv9-tcp4")
    p.add_argument("--seeds", type=int, default=10, help="kernel runs, seeds 1..N")
    p.add_argument("--sim-seeds", type=int, default=30)
    p.add_argument("--sim-jitter", default=None, metavar="DURATION", help="topology.jitter on the simulated side")
    p.add_argument("--out", type=Path, required=True)
    a = p.parse_args(argv)
    table = cells()
    if a.cell not in table:
        p.error(f"--cell {a.cell!r}: allowed {', '.join(table)}")
    sc, segments, duration = table[a.cell]
    mss = 1448
    a.out.mkdir(parents=True, exist_ok=True)
    sim_sc = with_jitter(sc, a.sim_jitter) if a.sim_jitter else sc
    sim = sim_rows(shortened(sim_sc, duration), range(1, a.sim_seeds + 1), a.out, segments, mss)
    kern = kernel_rows(sc, range(1, a.seeds + 1), a.out, duration, segments, mss)
    parts, totals = decompose(sim, kern)
    parts.to_csv(a.out / f"flight-loss-{a.cell}.csv", index=False)
    for iw, t in totals.items():
        print(f"{a.cell} IW {iw}: RTOs per flow sim {t['sim']:.3f}, kernel {t['kernel']:.3f}; "
              f"sim's per-pattern RTOs on the kernel's shares {t['sim_on_kernel_shares']:.3f}")
        print(parts[parts["iw"] == iw].drop(columns="iw").round(3).to_string(index=False))


if __name__ == "__main__":
    main()

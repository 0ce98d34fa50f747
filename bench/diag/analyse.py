#!/usr/bin/env python3
"""Diagnostics behind bench/README.md "Where the answers differ, and why".

    analyse.py pcap FILE...     per-connection TCP counts from a bottleneck capture (ns-3's
                                `--pcap PREFIX` of the diagnostic build, or iwlab.run(pcap=...))
    analyse.py ns3dump FILE     ns-3 diagnostic output (DUMP=1, stderr): page delays, pages per
                                client, and the RTO each server socket starts its data with
    analyse.py rto CSV...       RTO episodes of bulk flows, by cause, from a data-direction log
                                (ns-3 PLOG=FILE, or bench/diag/iwdrops SCENARIO FILE)

Plain Python (numpy only); the pcap reader takes classic libpcap with Ethernet (iwlab) or PPP
(ns-3 point-to-point) framing.
"""

from __future__ import annotations

import collections
import struct
import sys

import numpy as np

SYN, ACK, FIN = 0x02, 0x10, 0x01
SERVER_PORTS = {80, 21, 8080}


def packets(path: str):
    """(time, src, sport, dst, dport, seq, ack, flags, payload) of every TCP packet."""
    with open(path, "rb") as f:
        hdr = f.read(24)
        magic = struct.unpack("<I", hdr[:4])[0]
        e = "<" if magic in (0xA1B2C3D4, 0xA1B23C4D) else ">"
        magic = struct.unpack(e + "I", hdr[:4])[0]
        scale = 1e-9 if magic == 0xA1B23C4D else 1e-6
        off = {1: 14, 9: 2}[struct.unpack(e + "I", hdr[20:24])[0]]  # Ethernet, PPP
        while len(rh := f.read(16)) == 16:
            sec, frac, incl, _ = struct.unpack(e + "IIII", rh)
            ip = f.read(incl)[off:]
            if ip[9] != 6:
                continue
            ihl = (ip[0] & 15) * 4
            t = ip[ihl:]
            sp, dp, seq, ack = struct.unpack(">HHII", t[:12])
            plen = struct.unpack(">H", ip[2:4])[0] - ihl - (t[12] >> 4) * 4
            yield sec + frac * scale, ip[12:16], sp, ip[16:20], dp, seq, ack, t[13], plen


def cmd_pcap(paths: list[str]) -> None:
    for path in paths:
        conns: dict = collections.OrderedDict()
        fins = collections.Counter()
        cfins = collections.Counter()
        for ts, src, sp, dst, dp, seq, ack, fl, plen in packets(path):
            srv = sp in SERVER_PORTS
            if not srv and dp not in SERVER_PORTS:
                continue
            key = (dst, dp, src, sp) if srv else (src, sp, dst, dp)
            c = conns.setdefault(key, {"syn": 0, "synack": 0, "data": 0, "dup": 0, "seen": {}, "gaps": []})
            if fl & FIN and not fl & SYN:
                fins[("server " if srv else "client ") + ("FIN alone" if plen == 0 else "FIN on data")] += 1
                if not srv:
                    cfins[key] += 1
            if srv and fl & SYN:
                c["synack"] += 1
            elif srv and plen > 0:
                c["data"] += 1
                if seq in c["seen"]:
                    c["dup"] += 1
                    c["gaps"].append(ts - c["seen"][seq])
                c["seen"][seq] = ts
            elif not srv and fl & SYN and not fl & ACK:
                c["syn"] += 1
        n = len(conns)
        tot = {k: sum(c[k] for c in conns.values()) for k in ("syn", "synack", "data", "dup")}
        gaps = np.array([g for c in conns.values() for g in c["gaps"]])
        print(f"== {path}: {n} connections")
        print(f"   SYNs {tot['syn']} ({tot['syn'] - n} retransmitted), SYN-ACKs passing {tot['synack']}")
        print(f"   data segments passing {tot['data']}, of which a sequence number seen before {tot['dup']}")
        if len(gaps):
            q = np.quantile(gaps, [0.5, 0.9, 0.99])
            print(f"   resend − previous copy: median {q[0]:.3f} s, p90 {q[1]:.3f} s, p99 {q[2]:.3f} s, "
                  f"> 3.2 s: {(gaps > 3.2).sum()}")
        print(f"   FIN segments: {dict(fins)}")
        if cfins:
            print(f"   client FINs per connection: max {max(cfins.values())}, connections sending > 5: "
                  f"{sum(v > 5 for v in cfins.values())}")


def cmd_ns3dump(path: str) -> None:
    pages = collections.defaultdict(list)
    open_at: dict[str, bool] = {}
    first_rto = []
    for line in open(path):
        p = line.split()
        if not p:
            continue
        if p[0] == "PAGE":
            pages[p[1]].append((float(p[2]), float(p[3])))
        elif p[0] == "SRVACC":
            open_at[p[1]] = True  # a new connection on this socket address
        elif p[0] == "SRVRTO" and open_at.get(p[1]):
            first_rto.append(float(p[3]))  # the RTO in force when the data started
            open_at[p[1]] = False
    d = np.array([e - s for v in pages.values() for s, e in v])
    if len(d):
        print(f"pages {len(d)}: delay mean {d.mean():.3f} median {np.median(d):.3f} p99 "
              f"{np.quantile(d, 0.99):.3f} max {d.max():.3f} s")
        print("pages per client:", sorted(len(v) for v in pages.values()))
    if first_rto:
        r = np.array(first_rto)
        print(f"server sockets: RTO at the first change after accept, {len(r)} connections:")
        for lo, hi in [(0, 1), (1, 9), (9, 10), (10, 27), (27, 28.5), (28.5, 45), (45, 47), (47, 63), (63, 100)]:
            print(f"   [{lo:5.1f}, {hi:5.1f}) s: {((r >= lo) & (r < hi)).sum()}")


def cmd_rto(paths: list[str], gap: float = 0.8) -> None:
    for path in paths:
        flows = collections.defaultdict(list)
        for line in open(path):
            t, ev, f, seq, ln, _ = line.strip().split(",")
            flows[f].append((float(t), ev, int(seq), int(ln)))
        cause: collections.Counter = collections.Counter()
        drops = tx = 0
        for ev in flows.values():
            ev.sort()
            base = min(s for _, _, s, _ in ev)
            sent: collections.Counter = collections.Counter()
            hist: list = []
            last = None
            for t, e, s, _ in ev:
                s -= base
                drops += e == "DROP"
                tx += e == "TX"
                if last is not None and t - last >= gap and sent[s] > 0:
                    above = len({s2 for (_, e2, s2) in hist if s2 > s and e2 == "TX"})
                    if sent[s] >= 2:
                        cause["a retransmission was lost too"] += 1
                    elif above < 3:
                        cause[f"original lost, {above} later segment(s) got through (< 3 dup ACKs)"] += 1
                    else:
                        cause["original lost, >= 3 later segments got through"] += 1
                sent[s] += 1
                hist.append((t, e, s))
                last = t
        print(f"== {path}: data sent through {tx}, dropped {drops}; RTO episodes (>= {gap} s silence, "
              f"then a resend) {sum(cause.values())}")
        for c, n in cause.most_common():
            print(f"   {n:5d}  {c}")


def main() -> None:
    if len(sys.argv) < 3 or sys.argv[1] not in ("pcap", "ns3dump", "rto"):
        raise SystemExit(__doc__)
    {"pcap": lambda a: cmd_pcap(a), "ns3dump": lambda a: cmd_ns3dump(a[0]), "rto": lambda a: cmd_rto(a)}[sys.argv[1]](sys.argv[2:])


if __name__ == "__main__":
    main()

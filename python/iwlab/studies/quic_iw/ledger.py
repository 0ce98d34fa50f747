"""The quic-iw ledger: sentences of RFC 9000 §7/§8.1 and RFC 9002 §7.2/§7.7 as checkable rows, and
the named evidence cells they read (per-seed values, each a mean over the run's flows, with a
bootstrap CI over seeds)."""

from __future__ import annotations

from typing import Any

import pandas as pd

from iwlab.studies.claims import Between, Check, Claim, Direction, NotTestable
from iwlab.studies.model import Cell, cell

SMALL_CHAIN, LARGE_CHAIN = 1500, 16000
SMALL_IW, LARGE_IW = "10×1200", "32×1460"
#: RFC 9000 §8.1: 3 × the client's Initial, which quinn pads to 1 200 B (RFC 9000 §14.1).
AMP_LIMIT = 3 * 1200
PACING_OFF = ("quinn-proto 0.11 paces every connection: its public API (TransportConfig, the congestion "
              "controllers' Controller trait) has no setting that turns the pacer off, and the engine refuses "
              "pacing = false rather than fake it; an unpaced first flight needs another stack")


def per_seed(flows: pd.DataFrame) -> pd.DataFrame:
    """One row per (run point, response size, seed): the means over the run's flows. TCP rows get
    `ttfb` from their setting's 1-byte-response run (the page time of a 1-byte response)."""
    keys = ["setting", "rtt_ms", "rate_mbps", "buffer", "background", "iw", "iw_bytes", "chain", "transport",
            "size", "seed"]
    f = flows[flows["completed"]]
    g = f.groupby(keys, dropna=False)[["completion", "ttfb", "handshake", "retransmits", "pto", "amp_blocked",
                                        "first_flight_bytes", "bg_goodput_mbps", "bg_retransmits"]].mean()
    g = g.reset_index()
    tcp_ttfb = g[(g["transport"] == "tcp") & (g["size"] == 1)].set_index(["setting", "iw", "chain", "seed"])["completion"]
    is_tcp = g["transport"] == "tcp"
    idx = pd.MultiIndex.from_frame(g.loc[is_tcp, ["setting", "iw", "chain", "seed"]])
    g.loc[is_tcp, "ttfb"] = tcp_ttfb.reindex(idx).to_numpy()
    return g[g["size"] != 1].reset_index(drop=True)


def _extra_rtts(delta_s: pd.Series, g: pd.DataFrame) -> pd.Series:
    """A time difference between the large and the small chain in RTTs, after taking off the time the
    bottleneck needs to serialise the larger chain's extra bytes (what is left is round trips)."""
    row = g.iloc[0]
    serialise = (LARGE_CHAIN - SMALL_CHAIN) * 8 / (row["rate_mbps"] * 1e6)
    return (delta_s - serialise) / (row["rtt_ms"] / 1e3)


def evidence(ps: pd.DataFrame) -> dict[str, Cell]:
    """Named cells: `<claim>|<condition>` → a Cell over seeds."""
    out: dict[str, Cell] = {}
    q = ps[ps["transport"] == "quic"]
    t = ps[ps["transport"] == "tcp"]
    quiet = q[q["background"] == "none"]
    for (setting, iw, chain), g in quiet.groupby(["setting", "iw", "chain"]):
        by_seed = g.groupby("seed")["amp_blocked"].mean()
        out[f"amp|{setting} · {iw} · chain {chain}"] = cell(by_seed)
    # Extra handshake round trips of the large chain over the small one, per seed (QUIC), and the
    # same for TCP + TLS's time to first byte.
    for name, frame, col in (("hs", quiet, "handshake"), ("tcpchain", t[t["background"] == "none"], "ttfb"),
                             ("quicchain", quiet, "ttfb")):
        for (setting, iw), g in frame.groupby(["setting", "iw"]):
            v = g[g["size"] == g["size"].min()].pivot_table(index="seed", columns="chain", values=col)
            if SMALL_CHAIN in v and LARGE_CHAIN in v:
                out[f"{name}|{setting} · {iw}"] = cell(_extra_rtts(v[LARGE_CHAIN] - v[SMALL_CHAIN], g))
    # First flight of the 1 MB response against the IW, in datagrams short of it.
    for (setting, iw), g in quiet[(quiet["size"] == quiet["size"].max()) & (quiet["chain"] == SMALL_CHAIN)].groupby(
            ["setting", "iw"]):
        dgram = int(iw.split("×")[1])
        out[f"ff|{setting} · {iw}"] = cell((g["iw_bytes"] - g["first_flight_bytes"]) / dgram)
    # TTFB saved by QUIC against TCP + TLS 1.3 at the same IW, in RTTs (small chain, no background).
    both = ps[(ps["background"] == "none") & (ps["chain"] == SMALL_CHAIN)]
    for (setting, iw), g in both.groupby(["setting", "iw"]):
        g = g[g["size"] == g["size"].min()]
        v = g.pivot_table(index="seed", columns="transport", values="ttfb")
        if {"quic", "tcp"} <= set(v.columns):
            out[f"ttfb|{setting} · {iw}"] = cell((v["tcp"] - v["quic"]) / (g["rtt_ms"].iloc[0] / 1e3))
    # The large IW against the small one: completion of 100 kB (QUIC, small chain), every setting.
    mid = q[(q["size"] == 100_000) & (q["chain"] == SMALL_CHAIN)]
    for setting, g in mid.groupby("setting"):
        v = g.pivot_table(index="seed", columns="iw", values="completion")
        if {SMALL_IW, LARGE_IW} <= set(v.columns):
            out[f"faster|{setting}"] = cell(v[LARGE_IW] / v[SMALL_IW])
    # Harm: the background's goodput with the large IW over the small, paired by seed (QUIC runs).
    loud = q[q["background"] == "tcp"]
    for (setting, chain), g in loud.groupby(["setting", "chain"]):
        v = g.groupby(["seed", "iw"])["bg_goodput_mbps"].first().unstack()
        if {SMALL_IW, LARGE_IW} <= set(v.columns):
            out[f"harm|{setting} · chain {chain}"] = cell(v[LARGE_IW] / v[SMALL_IW])
    return out


def _checks(cells: dict[str, Cell] | None, prefix: str, keep: Any = lambda cond: True) -> tuple[Check, ...]:
    """The conditions of `prefix` the evidence holds. Without evidence (None: the ledger's names only,
    as `stored.judged` asks for it) none: a stored ledger's rows are then its conditions."""
    if cells is None:
        return ()
    found = tuple(Check(k.split("|", 1)[1], k) for k in sorted(cells) if k.startswith(prefix + "|")
                  and keep(k.split("|", 1)[1]))
    return found or (Check(f"no {prefix} cell in this run", None),)


def ledger(cells: dict[str, Cell] | None = None) -> list[Claim]:
    """The claims, their conditions taken from the evidence present (`cells`; None: the names only)."""
    c = cells
    small = lambda cond: cond.endswith(f"chain {SMALL_CHAIN}")  # noqa: E731
    large = lambda cond: not cond.endswith(f"chain {SMALL_CHAIN}")  # noqa: E731
    return [
        Claim("Q-amp-small", "RFC 9000", "§8.1",
              f"A server flight under 3× the client's 1 200-byte Initial ({AMP_LIMIT} B) — a {SMALL_CHAIN / 1000:g} kB "
              "chain — is never held by the anti-amplification limit.",
              "share of QUIC flows whose server stopped on the 3× limit (quinn-proto's trace)", Between(0, 0),
              _checks(c, "amp", small), links=("handshake",)),
        Claim("Q-amp-large", "RFC 9000", "§8.1",
              "Prior to validating the client's address, a server sends no more than 3× the bytes received: with a "
              "chain above that, every handshake is amplification-limited.",
              "share of QUIC flows whose server stopped on the 3× limit", Between(1, 1), _checks(c, "amp", large),
              links=("handshake",)),
        Claim("Q-amp-rtt", "RFC 9000 / RFC 9002", "§8.1 / §7.2",
              "With a chain above 3× the client's Initial the server's first flight is amplification-limited and IW "
              f"above that is unused in the first round trip: a {LARGE_CHAIN / 1000:g} kB chain costs one more round "
              f"trip than a {SMALL_CHAIN / 1000:g} kB one even with an IW ({LARGE_IW} B) that holds it whole.",
              "extra handshake time of the large chain over the small, less the serialisation of its extra bytes on "
              "the bottleneck, in RTTs (no background)", Between(0.9, 1.2),
              _checks(c, "hs", lambda cond: cond.endswith(LARGE_IW)), unit="RTT", links=("handshake",)),
        Claim("Q-amp-rtt-small-iw", "RFC 9000 / RFC 9002", "§8.1 / §7.2",
              f"An IW smaller than the chain adds its own round trip to the amplification limit's: with {SMALL_IW} B "
              f"the {LARGE_CHAIN / 1000:g} kB chain costs two more round trips.",
              "extra handshake time of the large chain over the small, less the serialisation of its extra bytes, in "
              "RTTs", Between(1.8, 2.3),
              _checks(c, "hs", lambda cond: cond.endswith(SMALL_IW)), unit="RTT", links=("handshake",)),
        Claim("Q-tcp-chain", "RFC 9000", "§8.1",
              "TCP's handshake has validated the address before TLS starts, so over TCP + TLS 1.3 a chain that fits "
              "the IW costs no round trip: the 3× limit is QUIC's price for its shorter handshake.",
              "extra time to first byte of the large chain over the small over TCP + TLS 1.3, IW 32×1460, less the "
              "serialisation of its extra bytes, in RTTs",
              Between(-0.2, 0.2), _checks(c, "tcpchain", lambda cond: cond.endswith(LARGE_IW)), unit="RTT",
              links=("ttfb",)),
        Claim("Q-first-flight", "RFC 9002", "§7.2",
              "The initial window is in bytes: a server's first flight of a large response is its IW, to one "
              "datagram.",
              "IW minus the bytes of the server's first flight of a 1 MB response, in datagrams (small chain, no "
              "background)", Between(0, 1), _checks(c, "ff"), unit="datagrams", links=("first_flight",)),
        Claim("Q-ttfb", "RFC 9000", "§7",
              "QUIC combines the cryptographic and transport handshakes to minimise connection-establishment "
              "latency: its time to first byte is one round trip shorter than TCP + TLS 1.3's at the same IW.",
              "TCP + TLS 1.3's time to first byte minus QUIC's, in RTTs (small chain, no background)",
              Between(0.8, 1.2), _checks(c, "ttfb"), unit="RTT", links=("ttfb",)),
        Claim("Q-faster", "RFC 9002", "§7.2 (after RFC 6928)",
              f"A larger IW shortens short transfers: {LARGE_IW} B completes a 100 kB response sooner than {SMALL_IW} B.",
              f"completion time with {LARGE_IW} B over that with {SMALL_IW} B, 100 kB, small chain",
              Direction("<", 1.0), _checks(c, "faster"), links=("completion",)),
        Claim("Q-harm", "RFC 9002", "§7.7",
              "Pacing avoids the short-term congestion and losses of bursts: a paced 32×1460 B IW costs a competing "
              "long-lived TCP flow less than 5 % of its goodput against 10×1200 B.",
              "the TCP background's goodput over the run with the large IW over that with the small, paired by seed",
              Direction(">", 0.95), _checks(c, "harm"), links=("harm",)),
        Claim("Q-pacing-off", "RFC 9002", "§7.7",
              "Senders MUST either pace or limit bursts: an unpaced first flight of a large IW overflows a shallow "
              "buffer where a paced one does not.",
              "retransmissions with pacing off against on", NotTestable(PACING_OFF),
              (Check("pacing off", None),)),
    ]


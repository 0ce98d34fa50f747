"""Profile + candidate → a scenario (the data of docs/scenario-format.md).

The network is a dumbbell: `clients` client hosts (one group per population bucket) and as many
servers, 1 ms access links each way, the bottleneck carrying the rest of the base RTT
(RTT = 2 × (1 ms + bottleneck delay + 1 ms)); with an RTT range the client access delay is drawn
per host. The profile's flows arrive as the profile's `arrivals` say, through the engine's one
arrival model (the `short-flows` app's `arrivals`, docs/scenario-format.md): every client host is
one source, the load (a share of the bottleneck, or flows/s) split evenly between them. Sizes
from a distribution use the `poisson-flows` app with Poisson arrivals (the distribution itself);
with any other arrival process they are the short-flows app's `mix` drawn i.i.d.
(`mix_order = "random"`) over `STRATA` equally likely sizes, each the mean of its stratum of the
distribution (`size_strata`: the mean, hence the load, is kept). Their servers use the
candidate's policy (`cand`). Background traffic runs between its own hosts: UDP at a share, N
long-lived TCP flows (`bulk`, as the studies' long-lived background; rate-limited by their
sender's link when the profile says so), or Poisson TCP flows with web-search sizes, all with IW
10 (`bg`). With the harm constraint, half the load is flows of IW 3 (`others`, RFC 2415's
half-and-half); with the real-time constraint the bottleneck queue is sampled every 10 ms.
"""

from __future__ import annotations

from typing import Any

from iwlab.advise.types import Candidate
from iwlab.advise.profile import Profile, sizes_cdf

__all__ = ["scenario_data", "arrivals_table", "size_strata", "mean_response_bytes", "FOREGROUND", "OTHERS",
           "SAMPLE_INTERVAL", "BURST", "STRATA"]

#: Flows per burst of `--arrivals bursts` (a page's objects fetched at once).
BURST = 4
#: Equally likely sizes that stand for a size distribution under non-Poisson arrivals.
STRATA = 100

FOREGROUND = "cand"
OTHERS = "others"
SAMPLE_INTERVAL = 0.01
ACCESS_DELAY = 0.001

# Linux 6.x defaults (MSS 1448 with timestamps, CUBIC + HyStart, SACK + RACK-TLP + PRR, quick-ACK, min RTO 200 ms):
# the engine's `tcp.profile = "linux"` (docs/scenario-format.md lists every value).
_LINUX = {"profile": "linux"}
_RENO = {"mss": 1460, "cc": "reno", "recovery": "newreno", "sack": False,
         "delayed_ack": {"segments": 2, "timeout": "200ms"}, "initial_rto": "1s", "min_rto": "1s"}


def _ms(s: float) -> str:
    return f"{max(s, 0) * 1e6:.0f}us"


def _size(p: Profile) -> Any:
    if p.sizes.endswith("seg"):
        return int(p.sizes[:-3]) * p.mss
    if p.sizes in ("websearch", "datamining"):
        return {"kind": "empirical", "builtin": p.sizes, "min": p.mss}
    return {"kind": "empirical", "points": sizes_cdf(p.sizes)}


def _cdf_points(p: Profile) -> list[list[float]]:
    """The size distribution's CDF points (bytes, P), as the engine interpolates them."""
    from iwlab.emulate.dists import BUILTIN

    if p.sizes in BUILTIN:
        return [list(x) for x in BUILTIN[p.sizes]]
    return sizes_cdf(p.sizes)


def size_strata(p: Profile, n: int = STRATA) -> list[int]:
    """`n` equally likely sizes (bytes) standing for the profile's size distribution: the
    distribution's quantile function (piecewise linear between the CDF points, as the engine
    draws it; at least one MSS for the built-in ones, as `_size` says) split into `n` strata of
    equal probability, each represented by its mean — so the mean size, and with it the load,
    stays the distribution's. A fixed size `Nseg` is one stratum."""
    from iwlab.emulate.dists import empirical

    if p.sizes.endswith("seg"):
        return [int(p.sizes[:-3]) * p.mss]
    pts, least = _cdf_points(p), (p.mss if p.sizes in ("websearch", "datamining") else 1)
    fine = 64  # midpoint rule inside a stratum: the quantile is linear between breakpoints
    return [max(1, round(sum(max(empirical(pts, (k + (j + 0.5) / fine) / n), least) for j in range(fine)) / fine))
            for k in range(n)]


def mean_response_bytes(p: Profile) -> float:
    """The mean response of the profile's flows (bytes): what a load share is divided by."""
    xs = size_strata(p)
    return sum(xs) / len(xs)


def arrivals_table(p: Profile, share: float, instances: int) -> tuple[dict[str, Any], Any]:
    """The `arrivals` table of one source (one of `instances`) carrying `share` of the profile's
    flows, and its `start` (periodic sources start at a uniform offset within their period, so
    that sources are not in phase)."""
    mean_bytes = mean_response_bytes(p)
    per_s = (p.flow_rate if p.flow_rate is not None else p.load * p.rate_bps / (8 * mean_bytes)) * share / instances
    if p.arrivals == "poisson":
        if p.flow_rate is not None:
            return {"kind": "poisson", "rate": round(per_s, 12)}, "0s"
        return {"kind": "poisson", "load": f"{p.load * share / instances * 100:.9g}%"}, "0s"
    if p.arrivals == "periodic":
        period = 1 / per_s
        return {"kind": "periodic", "period": _ms(period)}, {"kind": "uniform", "lo": 0.0, "hi": period}
    if p.arrivals == "closed-loop":
        # The think time's mean is the period: the offered rate, less the flows' own durations.
        return {"kind": "closed-loop", "think": {"kind": "exponential", "mean": 1 / per_s}}, "0s"
    if p.arrivals == "bursts":
        return {"kind": "bursts", "flows": BURST, "gap": {"kind": "exponential", "mean": BURST / per_s}}, "0s"
    raise ValueError(f"arrivals = {p.arrivals!r} is not allowed")


def tcp_table(p: Profile) -> dict[str, Any]:
    """The `[tcp]` table of the profile's flavour (Linux-like CUBIC + SACK, or RFC Reno)."""
    return dict(_LINUX if p.tcp == "linux" else _RENO)


def scenario_data(p: Profile, cand: Candidate, name: str = "advise") -> dict[str, Any]:
    one_way = p.rtt_s / 2
    bn_delay = one_way - 2 * ACCESS_DELAY
    bn: dict[str, Any] = {"rate": f"{p.rate_bps}bps", "delay": _ms(bn_delay),
                          "queue": {"kind": "drop-tail", "limit": f"{p.buffer_packets()}pkt"}}
    if p.loss > 0:
        bn["loss"] = {"kind": "random", "p": p.loss, "direction": "reverse"}
    access = {"rate": "1Gbps", "delay": _ms(ACCESS_DELAY)}
    left: list[dict[str, Any]] = []
    buckets = p.buckets or ()
    if buckets:
        for i, b in enumerate(buckets):
            acc: dict[str, Any] = {"rate": f"{b.rate_bps}bps", "delay": _ms(ACCESS_DELAY)}
            if b.rtt_s is not None:
                acc["delay"] = _ms(b.rtt_s / 2 - bn_delay - ACCESS_DELAY)
            left.append({"name": f"clients{i}", "count": max(1, round(p.clients * b.share)), "access": acc})
    else:
        acc = dict(access)
        if p.rtt_hi_s is not None:
            # The clients' RTT uniform in [rtt, rtt_hi]: the extra one-way delay on their access link.
            acc["delay"] = {"kind": "uniform", "lo": ACCESS_DELAY * 1e3,
                            "hi": (ACCESS_DELAY + (p.rtt_hi_s - p.rtt_s) / 2) * 1e3, "unit": "ms"}
        left.append({"name": "clients", "count": p.clients, "access": acc})
    right = [{"name": "servers", "count": p.clients, "access": access}]
    policies: dict[str, Any] = {FOREGROUND: dict(cand.policy), "iw3": {"kind": "fixed", "segments": 3},
                                "bg": {"kind": "fixed", "segments": 10}}
    apps: list[dict[str, Any]] = []
    app_tcp: dict[str, Any] = dict(cand.tcp)
    harm = p.constraints.harm_pct is not None
    share = 0.5 if harm else 1.0
    for g in left:
        frac = g["count"] / sum(x["count"] for x in left)
        for who, policy in ((FOREGROUND, FOREGROUND), (OTHERS, "iw3")) if harm else ((FOREGROUND, FOREGROUND),):
            app = {"name": f"{who}-{g['name']}", "clients": g["name"], "servers": "servers",
                   "count": g["count"], "mapping": "modulo", "request": "100B", "server_iw": policy, "client_iw": policy}
            if p.sizes.endswith("seg") or p.arrivals != "poisson":
                arr, start = arrivals_table(p, share * frac, g["count"])
                app.update(kind="short-flows", arrivals=arr, start=start)
                if p.sizes.endswith("seg"):
                    app["response"] = p.sizes
                else:
                    app.update(mix=[{"response": f"{b}B"} for b in size_strata(p)],
                               mix_order="random")
            elif p.flow_rate is not None:
                app.update(kind="poisson-flows", size=_size(p), rate=round(p.flow_rate * share * frac, 12))
            else:
                app.update(kind="poisson-flows", size=_size(p), load=round(p.load * share * frac, 9))
            tcp = dict(app_tcp) if who == FOREGROUND else {}
            if tcp:
                app["tcp"] = tcp
            apps.append(app)
    bg = p.background
    if bg.kind != "none":
        n = bg.flows if bg.kind in ("tcp", "tcp-share") else 1
        limit = bg.limit_bps if bg.kind == "tcp" else round(bg.share * p.rate_bps) if bg.kind == "tcp-share" else None
        left.append({"name": "bg-sinks", "count": n, "access": access})
        # A rate-limited long-lived flow: its sender's own link is the limit (bulk never runs dry).
        right.append({"name": "bg-sources", "count": n,
                      "access": {**access, "rate": f"{limit}bps"} if limit else access})
        common = {"clients": "bg-sinks", "servers": "bg-sources", "count": n, "server_iw": "bg", "client_iw": "bg"}
        if bg.kind == "udp":
            apps.append({"kind": "udp", "name": "background", "clients": "bg-sinks", "servers": "bg-sources",
                         "count": 1, "rate": f"{bg.share * 100:g}%", "payload": "1472B"})
        elif bg.kind in ("tcp", "tcp-share"):
            apps.append({"kind": "bulk", "name": "background", **common, "mapping": "distinct"})
        else:
            apps.append({"kind": "poisson-flows", "name": "background", **common,
                         "size": {"kind": "empirical", "builtin": "websearch", "min": p.mss}, "load": bg.share})
    data: dict[str, Any] = {
        "name": name,
        "description": f"iwlab advise: candidate {cand.name}",
        "duration": f"{p.duration_s:g}s",
        "warmup": f"{p.warmup_s:g}s",
        "topology": {"kind": "dumbbell", "bottleneck": bn, "left": left, "right": right},
        "tcp": tcp_table(p),
        "iw": {"default": FOREGROUND, "policies": policies},
        "apps": apps,
    }
    if p.constraints.voip_ms is not None:
        data["sample_interval"] = f"{SAMPLE_INTERVAL * 1e3:g}ms"
    return data

"""A network profile: what the advisor knows about a path and its workload, from a small TOML
file or command-line flags, checked field by field.

>>> p = Profile.from_flags(rate="2Mbps", rtt="100ms", buffer="25pkt", background="udp:60%", sizes="9seg")
>>> p.rate_bps, p.rtt_s, p.buffer_packets(), p.background.kind, p.background.share
(2000000, 0.1, 25, 'udp', 0.6)
>>> Profile.from_flags(buffer="12pkts")
Traceback (most recent call last):
...
iwlab.advise.profile.ProfileError: buffer = '12pkts' is not allowed; expected packets ('25pkt') or a time ('50ms') > 0

Errors (`ProfileError`) name the field, the value and what is allowed (with the file and line
for files); the CLI prints them and exits with status 2.
"""

from __future__ import annotations

import csv
import math
import re
import tomllib
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from iwlab.emulate.units import rate_bps, seconds, size_bytes

__all__ = ["ARRIVALS", "Profile", "ProfileError", "Background", "Bucket", "Objective", "Constraints", "SIZE_BUILTINS",
           "OBJECTIVES"]

OBJECTIVES = ("mean", "median", "p95", "p99")
SIZE_BUILTINS = ("websearch", "datamining")
TCP_FLAVOURS = ("linux", "reno")
#: How the profile's flows arrive (the engine's one arrival model, docs/scenario-format.md):
#: Poisson, one per period, one at a time after a think time, or page-like bursts.
ARRIVALS = ("poisson", "periodic", "closed-loop", "bursts")


class ProfileError(ValueError):
    """Bad profile input: `field`, `value`, what is `allowed`, and where (file:line) if known."""

    def __init__(self, field: str, value: Any, allowed: str, source: str | None = None, line: int | None = None):
        self.field, self.value, self.allowed, self.source, self.line = field, value, allowed, source, line
        where = f"{source}:{line}: " if source and line else f"{source}: " if source else ""
        super().__init__(f"{where}{field} = {value!r} is not allowed; expected {allowed}")

    def __reduce__(self) -> tuple[Any, ...]:
        return type(self), (self.field, self.value, self.allowed, self.source, self.line)


@dataclass(frozen=True)
class Background:
    """Other traffic on the bottleneck: none, UDP at a share, N long-lived TCP flows (bulk, never
    running dry: `tcp:N`; each limited to a rate by its sender's link: `tcp:N@500kbps`; or one
    taking a measured share of the bottleneck: `tcp-share:40%`), or Poisson TCP flows (web-search
    sizes) at a share of the bottleneck."""

    kind: str = "none"  # none | udp | tcp | tcp-share | poisson-tcp
    share: float = 0.0
    flows: int = 0
    limit_bps: int | None = None

    @classmethod
    def parse(cls, text: str, field: str = "background") -> Background:
        t = str(text).strip().lower()
        allowed = ("none, udp:P%, tcp:N (bulk), tcp:N@RATE (rate-limited), tcp-share:P% (one long-lived flow at a "
                   "measured share) or poisson-tcp:P% (0 < P <= 100, N >= 1)")
        if t in ("", "none"):
            return cls()
        kind, _, arg = t.partition(":")
        if kind in ("udp", "poisson-tcp", "tcp-share"):
            m = re.fullmatch(r"([0-9]*\.?[0-9]+)%", arg)
            if not m or not 0 < float(m.group(1)) <= 100:
                raise ProfileError(field, text, allowed)
            return cls(kind, float(m.group(1)) / 100, 1 if kind == "tcp-share" else 0)
        if kind == "tcp":
            n, _, limit = arg.partition("@")
            if not n.isdigit() or not 1 <= int(n) <= 1000:
                raise ProfileError(field, text, allowed)
            bps = None
            if limit:
                try:
                    bps = rate_bps(limit, field)
                except (ValueError, TypeError):
                    raise ProfileError(field, text, allowed) from None
                if bps <= 0:
                    raise ProfileError(field, text, allowed)
            return cls("tcp", 0.0, int(n), bps)
        raise ProfileError(field, text, allowed)

    def label(self) -> str:
        lim = f"@{self.limit_bps / 1e3:g}kbps" if self.limit_bps else ""
        return {"none": "none", "udp": f"udp:{self.share:.0%}", "tcp": f"tcp:{self.flows}{lim}",
                "tcp-share": f"tcp-share:{self.share:.0%}", "poisson-tcp": f"poisson-tcp:{self.share:.0%}"}[self.kind]

    def describe(self) -> str:
        """In words, for the advice's workload line."""
        if self.kind == "tcp":
            each = f" each limited to {self.limit_bps / 1e3:g} kb/s" if self.limit_bps else " (bulk, never running dry)"
            return f"{self.flows} long-lived TCP flow{'s' if self.flows > 1 else ''}{each}"
        if self.kind == "tcp-share":
            return f"one long-lived TCP flow at a measured {self.share * 100:g} % of the bottleneck"
        if self.kind == "udp":
            return f"UDP at {self.share * 100:g} %"
        if self.kind == "poisson-tcp":
            return f"Poisson TCP flows (web-search sizes) at {self.share * 100:g} %"
        return "none"


@dataclass(frozen=True)
class Bucket:
    """A share of the clients with their own access rate (and RTT), RFC 6928's buckets."""

    share: float
    rate_bps: int
    rtt_s: float | None = None


@dataclass(frozen=True)
class Objective:
    """Minimise `metric` of the completion time of the profile's flows (sizes in [min_size, max_size])."""

    metric: str = "mean"
    min_size: int | None = None
    max_size: int | None = None

    def label(self) -> str:
        rng = ""
        if self.min_size is not None or self.max_size is not None:
            rng = f", sizes {self.min_size or 0}…{self.max_size if self.max_size is not None else '∞'} B"
        return f"{self.metric} flow completion time{rng}"


@dataclass(frozen=True)
class Constraints:
    """Limits relative to the baseline (IW 3): retransmission rate increase (percentage points),
    slow-down of IW-3 flows sharing the link (%), growth of a real-time flow's p99 one-way delay (ms)."""

    retransmit_pp: float | None = None
    harm_pct: float | None = None
    voip_ms: float | None = None

    def any(self) -> bool:
        return any(v is not None for v in (self.retransmit_pp, self.harm_pct, self.voip_ms))


@dataclass(frozen=True)
class Profile:
    """A path and its workload. Quantities are in base units (bits/s, seconds, bytes)."""

    rate_bps: int = 2_000_000
    rtt_s: float = 0.1
    rtt_hi_s: float | None = None  # set: the clients' RTT is uniform in [rtt_s, rtt_hi_s]
    buffer: tuple[float, str] = (25, "pkt")  # (value, "pkt" | "s")
    background: Background = Background()
    loss: float = 0.0
    sizes: str = "10seg"  # "Nseg", a builtin, or a CSV file (sizes, or value,cdf lines)
    load: float = 0.1  # the flows' share of the bottleneck (when `flow_rate` is None)
    flow_rate: float | None = None  # or the flows' arrival rate, flows/s over all clients
    arrivals: str = "poisson"
    tcp: str = "linux"
    clients: int = 8
    duration_s: float = 30.0
    warmup_s: float = 2.0
    buckets: tuple[Bucket, ...] = ()
    objective: Objective = Objective()
    constraints: Constraints = Constraints()
    source: str | None = None

    @property
    def mss(self) -> int:
        return 1448 if self.tcp == "linux" else 1460

    def buffer_packets(self) -> int:
        """The bottleneck buffer in packets (a time is converted at the bottleneck rate, 1500-byte packets)."""
        v, unit = self.buffer
        if unit == "pkt":
            return int(v)
        return max(1, int(round(v * self.rate_bps / (8 * 1500))))

    def scaled(self, rtt: float = 1.0, buffer: float = 1.0, load: float = 1.0, arrivals: str | None = None) -> Profile:
        """The same profile with the RTT, the buffer and the load multiplied, or another arrival
        process (the sensitivity check). A scaled share of the bottleneck stays at most 95 %."""
        v, unit = self.buffer
        nb = (max(1, int(round(v * buffer))), unit) if unit == "pkt" else (v * buffer, unit)
        return replace(self, rtt_s=self.rtt_s * rtt, rtt_hi_s=None if self.rtt_hi_s is None else self.rtt_hi_s * rtt,
                       buffer=nb, load=min(0.95, self.load * load),
                       flow_rate=None if self.flow_rate is None else self.flow_rate * load,
                       arrivals=arrivals or self.arrivals)

    def load_label(self) -> str:
        return f"{self.flow_rate:g} flows/s" if self.flow_rate is not None else f"{self.load * 100:g} % load"

    def workload_label(self) -> str:
        """The path and workload in one line, as the advice's region names them."""
        d = self.describe()
        return (f"{self.rate_bps / 1e6:g} Mb/s, RTT {d['rtt']}, buffer {self.buffer_packets()} pkt, "
                f"{self.sizes} responses, {self.arrivals} arrivals at {self.load_label()}, background "
                f"{self.background.describe()}")

    def describe(self) -> dict[str, Any]:
        v, unit = self.buffer
        return {
            "rate": f"{self.rate_bps / 1e6:g}Mbps",
            "rtt": f"{self.rtt_s * 1e3:g}ms" + (f"-{self.rtt_hi_s * 1e3:g}ms" if self.rtt_hi_s else ""),
            "buffer": f"{v:g}pkt" if unit == "pkt" else f"{v * 1e3:g}ms",
            "buffer_packets": self.buffer_packets(),
            "background": self.background.label(),
            "loss": self.loss,
            "sizes": self.sizes,
            "load": self.load if self.flow_rate is None else f"{self.flow_rate:g}/s",
            "arrivals": self.arrivals,
            "tcp": self.tcp,
            "clients": self.clients,
            "duration": self.duration_s,
            "buckets": [{"share": b.share, "rate_bps": b.rate_bps, "rtt_s": b.rtt_s} for b in self.buckets],
            "objective": self.objective.label(),
            "constraints": {k: v for k, v in vars(self.constraints).items() if v is not None},
        }

    # ---- construction ----------------------------------------------------------------------

    @classmethod
    def from_flags(cls, base: Profile | None = None, **flags: Any) -> Profile:
        """`base` (default: the defaults) with the given flags (None = keep): rate, rtt, buffer,
        background, loss, sizes, load, tcp, clients, duration, warmup, objective, min_size,
        max_size, max_retransmit_pp, max_harm_pct, max_voip_ms."""
        p = base or cls()
        return _apply(p, {k: v for k, v in flags.items() if v is not None}, None, None)

    @classmethod
    def from_toml(cls, path: str | Path) -> Profile:
        """A profile file: the same keys as the flags, plus `[objective]`, `[constraints]` and
        `[[population]]` tables (see docs/advise.md)."""
        path = Path(path)
        text = path.read_text()
        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError as e:
            raise ProfileError("(file)", path.name, f"TOML ({e})", str(path)) from None
        flat: dict[str, Any] = {}
        paths: dict[str, str] = {}  # flag name -> the key's path in the file, for messages
        for key, value in data.items():
            if key == "objective" and isinstance(value, dict):
                for k, v in value.items():
                    name = {"metric": "objective"}.get(k, k) if k in ("metric", "min_size", "max_size") \
                        else f"objective.{k}"
                    flat[name], paths[name] = v, f"objective.{k}"
            elif key == "constraints" and isinstance(value, dict):
                for k, v in value.items():
                    name = f"max_{k}" if k in ("retransmit_pp", "harm_pct", "voip_ms") else f"constraints.{k}"
                    flat[name], paths[name] = v, f"constraints.{k}"
            else:
                flat[key] = value
        return _apply(cls(source=str(path)), flat, str(path), text, paths)


_KEYS = ("rate", "rtt", "buffer", "background", "loss", "sizes", "load", "arrivals", "tcp", "clients", "duration", "warmup",
         "objective", "min_size", "max_size", "max_retransmit_pp", "max_harm_pct", "max_voip_ms", "population")


def _line_of(text: str | None, key: str) -> int | None:
    if text is None:
        return None
    lines = text.splitlines()
    if "." in key:  # a key of a [table]: its line after the table's header
        table, name = key.split(".", 1)
        head = next((i for i, ln in enumerate(lines) if re.match(rf"\s*\[{re.escape(table)}\]\s*$", ln)), None)
        if head is not None:
            for i in range(head + 1, len(lines)):
                if re.match(r"\s*\[", lines[i]):
                    break
                if re.match(rf"\s*{re.escape(name)}\s*=", lines[i]):
                    return i + 1
            return head + 1
    name = key.split(".")[-1]
    for i, line in enumerate(lines, 1):
        if re.match(rf"\s*{re.escape(name)}\s*=", line) or re.match(rf"\s*\[\[?{re.escape(name)}\]?\]", line):
            return i
    return None


def _apply(p: Profile, flags: dict[str, Any], source: str | None, text: str | None,
           paths: dict[str, str] | None = None) -> Profile:
    paths = paths or {}

    def err(key: str, value: Any, allowed: str) -> ProfileError:
        field = paths.get(key, key)
        return ProfileError(field, value, allowed, source, _line_of(text, field))

    ch: dict[str, Any] = {}
    obj = dict(vars(p.objective))
    con = dict(vars(p.constraints))
    for key, value in flags.items():
        if key not in _KEYS:
            raise err(key, value, f"one of the keys {list(_KEYS)} (and [objective], [constraints] tables)")
        try:
            if key == "rate":
                bps = rate_bps(value, key)
                if bps <= 0:
                    raise ValueError
                ch["rate_bps"] = bps
            elif key == "rtt":
                lo, hi = _rtt(value)
                ch["rtt_s"], ch["rtt_hi_s"] = lo, hi
            elif key == "buffer":
                ch["buffer"] = _buffer(value)
            elif key == "background":
                ch["background"] = Background.parse(value)
            elif key == "loss":
                v = _share(value)
                if not 0 <= v < 1:
                    raise ValueError
                ch["loss"] = v
            elif key == "sizes":
                ch["sizes"] = _sizes(value, source)
            elif key == "load":
                m = re.fullmatch(r"\s*([0-9]*\.?[0-9]+(?:e[+-]?[0-9]+)?)\s*(?:flows)?\s*/\s*s\s*", str(value))
                if m:
                    v = float(m.group(1))
                    if not 0 < v <= 1e6:
                        raise ValueError
                    ch["flow_rate"] = v
                else:
                    v = _share(value)
                    if not 0 < v <= 1:
                        raise ValueError
                    ch["load"], ch["flow_rate"] = v, None
            elif key == "arrivals":
                if value not in ARRIVALS:
                    raise ValueError
                ch["arrivals"] = value
            elif key == "tcp":
                if value not in TCP_FLAVOURS:
                    raise ValueError
                ch["tcp"] = value
            elif key == "clients":
                if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 1000:
                    raise ValueError
                ch["clients"] = value
            elif key in ("duration", "warmup"):
                v = seconds(value, key)
                if not 0 <= v <= 3600 or (key == "duration" and v <= 0):
                    raise ValueError
                ch[f"{key}_s"] = v
            elif key == "objective":
                if value not in OBJECTIVES:
                    raise ValueError
                obj["metric"] = value
            elif key in ("min_size", "max_size"):
                obj[key] = size_bytes(value, p.mss, key)
            elif key.startswith("max_"):
                v = float(value)
                if isinstance(value, bool) or not math.isfinite(v) or v < 0:
                    raise ValueError
                con[key.removeprefix("max_")] = v
            elif key == "population":
                ch["buckets"] = _buckets(value, err)
        except ProfileError as e:
            if e.source is None and source is not None:
                raise err(e.field, e.value, e.allowed) from None
            raise
        except (ValueError, TypeError):
            raise err(key, value, _ALLOWED[key]) from None
    out = replace(p, **ch, objective=Objective(**obj), constraints=Constraints(**con))
    if out.warmup_s >= out.duration_s:
        raise err("warmup", out.warmup_s, f"< duration ({out.duration_s:g} s)")
    o = out.objective
    if o.min_size is not None and o.max_size is not None and o.min_size > o.max_size:
        raise err("min_size", o.min_size, f"<= max_size ({o.max_size})")
    return out


_ALLOWED = {
    "rate": "a rate > 0 ('2Mbps', '500kbps')",
    "rtt": "a time > 4 ms (the access links take 4 ms) ('100ms'), or a range LO-HI ('50ms-300ms') or "
           "{ kind = \"uniform\", lo, hi }",
    "buffer": "packets ('25pkt') or a time ('50ms') > 0",
    "background": "none, udp:P%, tcp:N, tcp:N@RATE, tcp-share:P% or poisson-tcp:P%",
    "loss": "a probability 0 <= p < 1 (0.01 or '1%')",
    "sizes": f"'Nseg' (N >= 1), one of {list(SIZE_BUILTINS)}, or a CSV file of sizes or of value,cdf lines",
    "load": "a share of the bottleneck 0 < load <= 1 ('10%' or 0.1) or flows per second ('2/s', '0.5flows/s')",
    "arrivals": f"one of {list(ARRIVALS)}",
    "tcp": f"one of {list(TCP_FLAVOURS)}",
    "clients": "an integer 1…1000",
    "duration": "a time > 0 ('30s'), at most 1 h",
    "warmup": "a time >= 0 below the duration",
    "objective": f"one of {list(OBJECTIVES)}",
    "min_size": "a size ('10kB', '9seg')",
    "max_size": "a size ('200kB', '50seg')",
    "max_retransmit_pp": "percentage points >= 0 (0.5)",
    "max_harm_pct": "a percentage >= 0 (10)",
    "max_voip_ms": "milliseconds >= 0 (20)",
    "population": "a list of { share, rate, rtt? } tables whose shares sum to 1",
}


def _share(v: Any) -> float:
    if isinstance(v, str) and v.strip().endswith("%"):
        return float(v.strip()[:-1]) / 100
    if isinstance(v, bool):
        raise ValueError
    return float(v)


def _rtt(v: Any) -> tuple[float, float | None]:
    if isinstance(v, dict):
        if set(v) - {"kind", "lo", "hi"} or v.get("kind", "uniform") != "uniform":
            raise ValueError
        lo, hi = seconds(v["lo"], "rtt.lo"), seconds(v["hi"], "rtt.hi")
    elif isinstance(v, str) and "-" in v.strip()[1:]:
        a, b = v.split("-", 1)
        lo, hi = seconds(a, "rtt"), seconds(b, "rtt")
    else:
        lo, hi = seconds(v, "rtt"), None
    if not lo > 0.004 or (hi is not None and not hi > lo):
        raise ValueError  # the access links take 4 ms of it (2 × 1 ms each way)
    return lo, hi


def _buffer(v: Any) -> tuple[float, str]:
    if isinstance(v, int) and not isinstance(v, bool) and v >= 1:
        return (v, "pkt")
    m = re.fullmatch(r"\s*([0-9]+)\s*pkt\s*", str(v))
    if m and int(m.group(1)) >= 1:
        return (int(m.group(1)), "pkt")
    s = seconds(v, "buffer")
    if not s > 0 or not re.search(r"(ms|us|s)\s*$", str(v)):
        raise ValueError
    return (s, "s")


def _sizes(v: Any, source: str | None) -> str:
    t = str(v).strip()
    m = re.fullmatch(r"([0-9]+)\s*seg", t)
    if m and 1 <= int(m.group(1)) <= 100_000:
        return f"{int(m.group(1))}seg"
    if t in SIZE_BUILTINS:
        return t
    path = Path(t)
    if source and not path.is_absolute():
        path = Path(source).parent / path
    if path.suffix.lower() == ".csv" and path.is_file():
        sizes_cdf(str(path))  # checks it
        return str(path.resolve())
    raise ValueError


def sizes_cdf(path: str) -> list[list[float]]:
    """CDF points [[size, P(X <= size)], …] of a CSV file: `value,cdf` lines (non-decreasing,
    ending at 1), or one size per line (its empirical CDF). A header line is skipped."""
    rows = []
    with open(path, newline="") as fh:
        for row in csv.reader(fh):
            cells = [c.strip() for c in row if c.strip()]
            if not cells:
                continue
            try:
                rows.append([float(c) for c in cells])
            except ValueError:
                if rows:
                    raise ProfileError("sizes", path, f"numbers on every line after the header (line {len(rows) + 2})") \
                        from None
    if not rows:
        raise ProfileError("sizes", path, "a CSV with at least one size")
    if all(len(r) == 2 for r in rows) and all(0 <= r[1] <= 1 for r in rows) and rows[-1][1] == 1:
        pts = rows
    elif all(len(r) == 1 for r in rows):
        xs = sorted(r[0] for r in rows)
        if xs[0] <= 0:
            raise ProfileError("sizes", path, "sizes > 0 bytes")
        pts = []
        for i, x in enumerate(xs):
            f = (i + 1) / len(xs)
            if pts and pts[-1][0] == x:
                pts[-1][1] = f
            else:
                pts.append([x, f])
        pts.insert(0, [pts[0][0] * 0.999 if len(pts) > 0 else 1, 0.0])
    else:
        raise ProfileError("sizes", path, "one size per line, or value,cdf lines with cdf ending at 1")
    return pts


def _buckets(v: Any, err) -> tuple[Bucket, ...]:
    if not isinstance(v, list) or not v:
        raise ValueError
    out = []
    for i, b in enumerate(v):
        if not isinstance(b, dict) or set(b) - {"share", "rate", "rtt"} or "share" not in b or "rate" not in b:
            raise err(f"population[{i}]", b, "a table { share, rate, rtt? }")
        share = _share(b["share"])
        if not 0 < share <= 1:
            raise err(f"population[{i}].share", b["share"], "0 < share <= 1")
        rtt = None if "rtt" not in b else _rtt(b["rtt"])[0]
        out.append(Bucket(share, rate_bps(b["rate"], f"population[{i}].rate"), rtt))
    total = sum(b.share for b in out)
    if abs(total - 1) > 1e-6:
        raise err("population", total, "shares summing to 1")
    return tuple(out)


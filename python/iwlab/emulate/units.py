"""Quantities as a canonical scenario writes them (docs/scenario-format.md), read back into
numbers: rates in bits/s, durations in seconds, sizes in bytes.

The Rust core has already validated and canonicalised the scenario (`iwlab.load`), so these
parsers only need to accept what a valid scenario can hold; anything else is a `ValueError`
naming the field.

>>> rate_bps("1.5Mbps"), seconds("98ms"), size_bytes("10seg", mss=1448), size_bytes("1MB")
(1500000, 0.098, 14480, 1000000)
"""

from __future__ import annotations

import math
import re
from typing import Any

_NUM = re.compile(r"^\s*([0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?)\s*([A-Za-zµ/%]*)\s*$")

_RATE = {"": 1, "bps": 1, "b/s": 1, "kbps": 10**3, "kb/s": 10**3, "kbit": 10**3, "mbps": 10**6, "mb/s": 10**6,
         "mbit": 10**6, "gbps": 10**9, "gb/s": 10**9, "gbit": 10**9}
_TIME = {"": 1.0, "ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "min": 60.0}
_BYTES = {"": 1, "B": 1, "byte": 1, "bytes": 1, "kB": 10**3, "KB": 10**3, "MB": 10**6, "GB": 10**9,
          "KiB": 2**10, "MiB": 2**20, "GiB": 2**30}
_SEG = {"seg", "segs", "segment", "segments"}
_PKT = {"pkt", "pkts", "packet", "packets", "p"}


def _split(field: str, value: Any) -> tuple[float, str]:
    if isinstance(value, bool):
        raise ValueError(f"{field} = {value!r} is not a quantity")
    if isinstance(value, (int, float)):
        if not math.isfinite(value):
            raise ValueError(f"{field} = {value!r} is not allowed; expected a finite number")
        return float(value), ""
    m = _NUM.match(str(value))
    if not m:
        raise ValueError(f"{field} = {value!r} is not a quantity")
    v = float(m.group(1))
    if not math.isfinite(v):  # "1e400Mbps": a float overflows to inf, which no int conversion takes
        raise ValueError(f"{field} = {value!r} is not allowed; expected a finite number with a unit")
    return v, m.group(2)


def rate_bps(value: Any, field: str = "rate") -> int:
    """`"1.5Mbps"` → 1 500 000 (bits/s)."""
    v, unit = _split(field, value)
    k = _RATE.get(unit.lower())
    if k is None:
        raise ValueError(f"{field} = {value!r}: unknown rate unit {unit!r}")
    return int(round(v * k))


def seconds(value: Any, field: str = "duration") -> float:
    """`"98ms"` → 0.098; a bare number is seconds."""
    v, unit = _split(field, value)
    k = _TIME.get(unit)
    if k is None:
        raise ValueError(f"{field} = {value!r}: unknown time unit {unit!r}")
    return v * k


def size_bytes(value: Any, mss: int | None = None, field: str = "size") -> int:
    """`"1448B"` → 1448; `"10seg"` → 10 × `mss`."""
    v, unit = _split(field, value)
    if unit in _SEG:
        if mss is None:
            raise ValueError(f"{field} = {value!r} is in segments but no MSS is known here")
        return int(round(v)) * mss
    k = _BYTES.get(unit)
    if k is None:
        raise ValueError(f"{field} = {value!r}: unknown size unit {unit!r}")
    return int(round(v * k))


def queue_limit(value: Any, field: str = "limit") -> tuple[int, str]:
    """`"25pkt"` → (25, "pkt"); `"64kB"` → (64000, "B")."""
    v, unit = _split(field, value)
    if unit in _PKT or unit == "":
        return int(round(v)), "pkt"
    return size_bytes(value, field=field), "B"


def rate_or_share(value: Any, bottleneck_bps: int, field: str = "rate") -> int:
    """`"60%"` of `bottleneck_bps`, or an absolute rate."""
    v, unit = _split(field, value)
    if unit == "%":
        return int(round(bottleneck_bps * v / 100.0))
    return rate_bps(value, field)


def relay_duration(secs: float) -> str:
    """Seconds as the relay writes durations (whole nanoseconds)."""
    return f"{int(round(secs * 1e9))}ns"

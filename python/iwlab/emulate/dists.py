"""Distributions of a scenario, sampled with the standard library (no numpy), so that the
traffic agent can import this file alone and start fast.

The laws are the engine's (`crates/iwlab-core/src/traffic/dist/`): the same parameters give
the same distribution; the random streams are Python's, so individual draws differ from the
simulator's.

A distribution travels as a plain dict already in the field's base unit (bytes, seconds,
bits/s) — `normalize` turns a scenario's table (with `unit`, `file`, `builtin` …) into one:

>>> import random
>>> d = normalize({"kind": "uniform", "lo": 1, "hi": 5, "unit": "ms"}, 1e-3)
>>> d
{'kind': 'uniform', 'lo': 0.001, 'hi': 0.005}
>>> 0.001 <= sample(d, random.Random(1)) <= 0.005
True
>>> sample(normalize(3.0, 1.0), random.Random(1))
3.0
"""

from __future__ import annotations

import bisect
import math
import random
from pathlib import Path
from typing import Any

# crates/iwlab-core/src/traffic/dist/builtin.rs (bytes, cdf).
BUILTIN: dict[str, list[tuple[float, float]]] = {
    "websearch": [(0.0, 0.0), (10_000.0, 0.15), (20_000.0, 0.20), (30_000.0, 0.30), (50_000.0, 0.40),
                  (80_000.0, 0.53), (200_000.0, 0.60), (1_000_000.0, 0.70), (2_000_000.0, 0.80),
                  (5_000_000.0, 0.90), (10_000_000.0, 0.97), (30_000_000.0, 1.0)],
    "datamining": [(0.0, 0.0), (180.0, 0.1), (216.0, 0.2), (560.0, 0.3), (900.0, 0.4), (1_100.0, 0.5),
                   (1_870.0, 0.6), (3_160.0, 0.7), (10_000.0, 0.8), (400_000.0, 0.9), (3_160_000.0, 0.95),
                   (100_000_000.0, 0.98), (1_000_000_000.0, 1.0)],
}


def _csv_points(text: str) -> list[tuple[float, float]]:
    """`value,cdf` lines; `#` comments; a non-numeric first line is a header."""
    pts: list[tuple[float, float]] = []
    for line in text.splitlines():
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        a, _, b = line.partition(",")
        try:
            pts.append((float(a), float(b)))
        except ValueError:
            if pts:
                raise ValueError(f"empirical CDF: bad line {line!r}") from None
    if pts and abs(pts[-1][1] - 1.0) < 1e-9:
        pts[-1] = (pts[-1][0], 1.0)
    return pts


def normalize(spec: Any, factor: float, base_dir: str | Path | None = None,
              fixed: float | None = None) -> dict[str, Any]:
    """A scenario's fixed-or-dist value as a dict in base units.

    `spec` is a distribution table or a plain number already in base units; `factor` turns
    the table's `unit` into base units (the caller knows the field's kind); `fixed` is the
    value of a fixed quantity the caller has parsed itself (`"2s"`, `"10seg"`)."""
    if fixed is not None:
        return {"kind": "constant", "value": float(fixed)}
    if isinstance(spec, (int, float)) and not isinstance(spec, bool):
        return {"kind": "constant", "value": float(spec)}
    if not isinstance(spec, dict) or "kind" not in spec:
        raise ValueError(f"not a distribution: {spec!r}")
    k = factor if spec.get("unit") is not None else 1.0
    kind = spec["kind"]
    out: dict[str, Any] = {"kind": kind}
    if kind == "constant":
        out["value"] = spec["value"] * k
    elif kind == "uniform":
        out.update(lo=spec["lo"] * k, hi=spec["hi"] * k)
    elif kind == "exponential":
        out["mean"] = spec["mean"] * k
    elif kind in ("pareto", "lomax", "weibull"):
        out.update(shape=spec["shape"], scale=spec["scale"] * k)
    elif kind == "lognormal":
        if spec.get("mu") is not None:
            mu, sigma = spec["mu"] + math.log(k), spec["sigma"]
        else:
            mean, median = spec["mean"] * k, spec["median"] * k
            mu, sigma = math.log(median), math.sqrt(2.0 * math.log(mean / median))
        out.update(mu=mu, sigma=sigma)
    elif kind == "empirical":
        if spec.get("points") is not None:
            pts = [(float(v) * k, float(c)) for v, c in spec["points"]]
        elif spec.get("csv") is not None:
            pts = _csv_points(spec["csv"])
        elif spec.get("file") is not None:
            p = Path(spec["file"])
            if not p.is_absolute() and base_dir is not None:
                p = Path(base_dir) / p
            pts = _csv_points(p.read_text())
        else:
            pts = list(BUILTIN[spec["builtin"]])
        out["points"] = [list(p) for p in pts]
    else:
        raise ValueError(f"unknown distribution kind {kind!r}")
    for key in ("min", "cap"):
        if spec.get(key) is not None:
            out[key] = spec[key] * k
    return out


def empirical(points: list[list[float]], u: float) -> float:
    # Left-continuous inverse, as Empirical::quantile: first point with cdf >= u.
    cdf = [c for _, c in points]
    i = bisect.bisect_left(cdf, u)
    if i == 0:
        return points[0][0]
    i = min(i, len(points) - 1)
    (v0, p0), (v1, p1) = points[i - 1], points[i]
    return v0 + (v1 - v0) * ((u - p0) / (p1 - p0))


def sample(d: dict[str, Any], rng: random.Random) -> float:
    """One draw of a normalised distribution, clamped to [min, cap]."""
    kind = d["kind"]
    if kind == "constant":
        x = d["value"]
    elif kind == "uniform":
        x = d["lo"] + (d["hi"] - d["lo"]) * rng.random()
    elif kind == "exponential":
        x = -d["mean"] * math.log(1.0 - rng.random())
    elif kind == "pareto":
        x = d["scale"] * (1.0 - rng.random()) ** (-1.0 / d["shape"])
    elif kind == "lomax":
        x = d["scale"] * ((1.0 - rng.random()) ** (-1.0 / d["shape"]) - 1.0)
    elif kind == "weibull":
        x = d["scale"] * (-math.log(1.0 - rng.random())) ** (1.0 / d["shape"])
    elif kind == "lognormal":
        x = math.exp(rng.gauss(d["mu"], d["sigma"]))
    elif kind == "empirical":
        x = empirical(d["points"], rng.random())
    else:
        raise ValueError(f"unknown distribution kind {kind!r}")
    if "min" in d:
        x = max(x, d["min"])
    if "cap" in d:
        x = min(x, d["cap"])
    return x


def mean(d: dict[str, Any], rng: random.Random | None = None, n: int = 200_000) -> float:
    """The mean: exact where it is simple, else estimated from `n` draws."""
    kind = d["kind"]
    if "min" not in d and "cap" not in d:
        if kind == "constant":
            return d["value"]
        if kind == "uniform":
            return (d["lo"] + d["hi"]) / 2
        if kind == "exponential":
            return d["mean"]
        if kind == "empirical":
            pts = d["points"]
            return pts[0][0] * pts[0][1] + sum((v0 + v1) / 2 * (p1 - p0)
                                               for (v0, p0), (v1, p1) in zip(pts, pts[1:]))
    rng = rng or random.Random(0)
    return sum(sample(d, rng) for _ in range(n)) / n


def draw_bytes(d: dict[str, Any], rng: random.Random, least: int = 1) -> int:
    """A draw rounded to whole bytes, at least `least` (as the engine's `draw_bytes`)."""
    x = sample(d, rng)
    if math.isnan(x) or x < 0:
        return least
    return max(int(round(x)) if math.isfinite(x) else 2**62, least)


def mix_picks(n: int, order: str, rng: random.Random):
    """Indices into a mix of `n` (size, IW) combinations, without end, in `order`: "cyclic" (as
    given), "random" (uniform, independent) or "permuted-blocks" (every combination once per block,
    each block in its own order) — the simulator's orders (crates/iwlab-core/src/traffic/arrivals.rs),
    with Python's draws."""
    block, k = list(range(n)), 0
    while True:
        if n == 1 or order == "cyclic":
            yield k % n
        elif order == "random":
            yield rng.randrange(n)
        else:
            if k % n == 0:
                rng.shuffle(block)
            yield block[k % n]
        k += 1

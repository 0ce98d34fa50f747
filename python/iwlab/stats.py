"""Statistics for studies: per-run metrics from records, and summaries across seeds.

Per run (`run_metrics`): the figures of merit of the studies (docs/studies.md) — median page delay, flow completion
times, bottleneck utilisation and drop rate per direction, goodput, network power
(goodput / median delay), retransmission rate. Across runs (`summarize`): a statistic per
group with a bootstrap confidence interval (`scipy.stats.bootstrap`, fixed seed), and
`normalize` to express a metric relative to a baseline IW (RFC 2415's "normalised network power").

>>> median([3, 1, 2])
2.0
>>> network_power(12_000.0, 0.5)
24000.0
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

import numpy as np
import pandas as pd

__all__ = [
    "BOTTLENECK",
    "bootstrap_ci",
    "cdf",
    "mean",
    "median",
    "network_power",
    "normalize",
    "percentile",
    "run_metrics",
    "summarize",
]

# The dumbbell's bottleneck ports by (from, to) node names in the links records.
# "forward" is left → right, as in the scenario format; data of TCP applications flows
# servers → clients, i.e. usually "reverse" in the presets (servers on the right).
BOTTLENECK = {"forward": ("router-left", "router-right"), "reverse": ("router-right", "router-left")}


def _values(x: Iterable[Any] | pd.Series | np.ndarray) -> np.ndarray:
    """Finite float values of `x` (nulls and NaN dropped)."""
    if isinstance(x, pd.Series):
        a = x.to_numpy(dtype=float, na_value=np.nan)
    else:
        a = np.asarray(list(x) if not isinstance(x, np.ndarray) else x, dtype=float)
    return a[np.isfinite(a)]


def median(x: Iterable[Any]) -> float:
    """Median of the finite values; NaN when there are none."""
    a = _values(x)
    return float(np.median(a)) if a.size else float("nan")


def mean(x: Iterable[Any]) -> float:
    """Mean of the finite values; NaN when there are none."""
    a = _values(x)
    return float(np.mean(a)) if a.size else float("nan")


def percentile(x: Iterable[Any], q: float) -> float:
    """The q-th percentile (0…100, linear interpolation) of the finite values; NaN if none.

    >>> percentile(range(101), 99)
    99.0
    """
    if not 0 <= q <= 100:
        raise ValueError(f"percentile q = {q} is not allowed; expected 0 <= q <= 100")
    a = _values(x)
    return float(np.percentile(a, q)) if a.size else float("nan")


def cdf(x: Iterable[Any]) -> tuple[np.ndarray, np.ndarray]:
    """Empirical CDF: sorted values and P(X <= value) = (i + 1) / n."""
    a = np.sort(_values(x))
    return a, np.arange(1, a.size + 1) / a.size if a.size else np.array([])


def network_power(goodput: Any, delay: Any) -> Any:
    """Network power = goodput / delay (the RFC 2415 study, docs/studies.md); NaN where the delay is not > 0.

    Works on scalars, arrays and Series alike.
    """
    g = np.asarray(goodput, dtype=float)
    d = np.asarray(delay, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        p = np.where(d > 0, g / np.where(d > 0, d, 1.0), np.nan)
    if isinstance(goodput, pd.Series):
        return pd.Series(p, index=goodput.index, name="power")
    if isinstance(delay, pd.Series):
        return pd.Series(p, index=delay.index, name="power")
    return float(p) if p.ndim == 0 else p


_STATISTICS: dict[str, Callable[..., Any]] = {
    "mean": np.mean,
    "median": np.median,
}


def _statistic(statistic: str | Callable[..., Any]) -> Callable[..., Any]:
    if callable(statistic):
        return statistic
    try:
        return _STATISTICS[statistic]
    except KeyError:
        raise ValueError(f"statistic = {statistic!r} is not allowed; expected one of {sorted(_STATISTICS)} "
                         "or a callable f(x, axis)") from None


def bootstrap_ci(x: Iterable[Any], statistic: str | Callable[..., Any] = "mean", confidence: float = 0.95,
                 n_resamples: int = 9999, random_state: int = 0,
                 method: str = "percentile") -> tuple[float, float]:
    """Bootstrap confidence interval of `statistic` over the finite values of `x`.

    `scipy.stats.bootstrap` with a fixed seed (`random_state`), so the interval is reproducible.
    Fewer than two values give (NaN, NaN); identical values give (value, value). `method` is
    scipy's ("percentile", "basic" or "BCa"); percentile is the default because studies often
    have few seeds, where BCa is unstable.
    """
    if not 0 < confidence < 1:
        raise ValueError(f"confidence = {confidence} is not allowed; expected 0 < confidence < 1")
    a = _values(x)
    if a.size < 2:
        return float("nan"), float("nan")
    if np.all(a == a[0]):
        return float(a[0]), float(a[0])
    from scipy import stats as sps  # imported here: scipy.stats takes a second to import

    fn = _statistic(statistic)
    res = sps.bootstrap((a,), lambda s, axis: fn(s, axis=axis), vectorized=True, n_resamples=n_resamples,
                        confidence_level=confidence, method=method, rng=np.random.default_rng(random_state))
    return float(res.confidence_interval.low), float(res.confidence_interval.high)


def summarize(df: pd.DataFrame, by: Sequence[str], metrics: Sequence[str], statistic: str = "mean",
              confidence: float = 0.95, n_resamples: int = 9999, random_state: int = 0) -> pd.DataFrame:
    """One row per (group, metric): the group keys, `metric`, `n` (finite values), `value`
    (the statistic across the group's rows, e.g. across seeds), `ci_low`, `ci_high`.

    >>> runs = pd.DataFrame({"iw": [1, 1, 2, 2], "delay": [1.0, 3.0, 1.0, 1.0]})
    >>> summarize(runs, by=["iw"], metrics=["delay"])[["iw", "value", "ci_low", "ci_high"]].to_dict("records")
    [{'iw': 1, 'value': 2.0, 'ci_low': 1.0, 'ci_high': 3.0}, {'iw': 2, 'value': 1.0, 'ci_low': 1.0, 'ci_high': 1.0}]
    """
    by = list(by)
    missing = [c for c in [*by, *metrics] if c not in df.columns]
    if missing:
        raise KeyError(f"columns {missing} are not in the data; it has {list(df.columns)}")
    fn = _statistic(statistic)
    groups = df.groupby(by, sort=False, dropna=False) if by else [((), df)]
    rows = []
    for key, g in groups:
        key = key if isinstance(key, tuple) else (key,)
        for m in metrics:
            a = _values(g[m])
            lo, hi = bootstrap_ci(a, fn, confidence, n_resamples, random_state)
            rows.append({**dict(zip(by, key)), "metric": m, "n": int(a.size),
                         "value": float(fn(a)) if a.size else float("nan"), "ci_low": lo, "ci_high": hi})
    return pd.DataFrame(rows, columns=[*by, "metric", "n", "value", "ci_low", "ci_high"])


def normalize(df: pd.DataFrame, column: str, by: str, baseline: Any,
              within: Sequence[str] = ()) -> pd.Series:
    """`column` divided by its value at `by == baseline` in the same `within` group.

    E.g. network power normalised by the IW=1 value, per seed and per number of clients:
    `normalize(runs, "web_power", by="iw.default", baseline="iw1", within=["apps[0].count", "seed"])`.
    Each group must hold exactly one baseline row (summarise across seeds first, or put
    `seed` in `within` to normalise each seed by its own baseline).
    """
    within = list(within)
    base = df[df[by] == baseline]
    if base.empty:
        raise ValueError(f"{by} = {baseline!r} is not in the data; values: {list(pd.unique(df[by]))}")
    ambiguous = base.duplicated(within).any() if within else len(base) > 1
    if ambiguous:
        raise ValueError(f"several rows have {by} = {baseline!r} in one group of {within}; "
                         "add the distinguishing columns (e.g. 'seed') to `within` or summarise first")
    values = df[column].to_numpy(dtype=float, na_value=np.nan)
    if within:
        ref = df[within].merge(base[[*within, column]].rename(columns={column: "__base"}), on=within, how="left")
        ref_values = ref["__base"].to_numpy(dtype=float, na_value=np.nan)
    else:
        ref_values = np.full(len(df), float(base[column].iloc[0]))
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.where(ref_values != 0, values / np.where(ref_values != 0, ref_values, 1.0), np.nan)
    return pd.Series(out, index=df.index, name=f"{column}_norm")


# ---------------------------------------------------------------------------------------------
# Per-run metrics


def _num(df: pd.DataFrame, col: str) -> np.ndarray:
    return df[col].to_numpy(dtype=float, na_value=np.nan) if len(df) else np.array([], dtype=float)


def _mask(df: pd.DataFrame, col: str) -> np.ndarray:
    return df[col].to_numpy(dtype=bool, na_value=False) if len(df) else np.array([], dtype=bool)


def _bottleneck(links: pd.DataFrame, direction: str) -> pd.DataFrame:
    a, b = BOTTLENECK[direction]
    if links.empty or "from" not in links.columns:
        return links.iloc[0:0]
    return links[(links["from"] == a) & (links["to"] == b)]


def _first(x: np.ndarray) -> float:
    return float(x[0]) if x.size else float("nan")


def run_metrics(flows: pd.DataFrame, pages: pd.DataFrame, links: pd.DataFrame,
                summary: dict[str, Any]) -> dict[str, float | int]:
    """The figures of merit of one run (records before the warm-up excluded).

    Delays in seconds, goodput in bits/s of delivered payload over the measured time
    (duration − warm-up), power in (bits/s)/s:

    * flows, flows_completed, fct_median / fct_mean / fct_p99 (completion of completed flows);
    * pages, pages_completed, median_page_delay, mean_page_delay (request of the primary to the
      last embedded object);
    * goodput_bps and power = goodput / fct_median; web_goodput_bps and web_power = web goodput /
      median page delay; ftp_goodput_bps, ftp_median_delay and ftp_power (the RFC 2415 study, docs/studies.md);
    * util_forward / util_reverse, drop_rate_forward / drop_rate_reverse, drops_forward /
      drops_reverse of the bottleneck (forward = left → right);
    * data_segments, retransmits, retransmit_rate = retransmits / data segments, timeouts,
      fast_retransmits, syn_retransmits; events.
    """
    window = float(summary.get("duration", float("nan"))) - float(summary.get("warmup", 0.0))
    f = flows[~_mask(flows, "in_warmup")] if len(flows) else flows
    done = _mask(f, "completed")
    fct = _num(f, "completion")[done]
    delivered = _num(f, "delivered_bytes")
    kind = f["app_kind"].to_numpy(dtype=object, na_value="") if len(f) else np.array([], dtype=object)
    p = pages[~_mask(pages, "in_warmup")] if len(pages) else pages
    page_delay = _num(p, "delay")[_mask(p, "completed")]

    def bps(nbytes: float) -> float:
        return nbytes * 8 / window if window > 0 else float("nan")

    m: dict[str, float | int] = {
        "flows": len(f),
        "flows_completed": int(done.sum()),
        "fct_median": median(fct),
        "fct_mean": mean(fct),
        "fct_p99": percentile(fct, 99),
        "pages": len(p),
        "pages_completed": int(page_delay.size),
        "median_page_delay": median(page_delay),
        "mean_page_delay": mean(page_delay),
        "goodput_bps": bps(float(delivered.sum())),
    }
    m["power"] = network_power(m["goodput_bps"], m["fct_median"])
    m["web_goodput_bps"] = bps(float(delivered[kind == "web"].sum()))
    m["web_power"] = network_power(m["web_goodput_bps"], m["median_page_delay"])
    ftp = kind == "ftp"
    m["ftp_goodput_bps"] = bps(float(delivered[ftp].sum()))
    m["ftp_median_delay"] = median(_num(f, "completion")[ftp & done])
    m["ftp_power"] = network_power(m["ftp_goodput_bps"], m["ftp_median_delay"])
    for direction in BOTTLENECK:
        link = _bottleneck(links, direction)
        m[f"util_{direction}"] = _first(_num(link, "utilisation"))
        m[f"drop_rate_{direction}"] = _first(_num(link, "drop_rate"))
        drops = _num(link, "queue_drops") + _num(link, "loss_drops")
        m[f"drops_{direction}"] = int(drops[0]) if drops.size else 0
    counters = {c: int(np.nansum(_num(f, c))) for c in
                ("data_segments", "retransmits", "timeouts", "fast_retransmits", "syn_retransmits")}
    m.update(counters)
    m["retransmit_rate"] = (counters["retransmits"] / counters["data_segments"]
                            if counters["data_segments"] else float("nan"))
    m["events"] = int(summary.get("events", 0))
    return m

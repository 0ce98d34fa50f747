"""What every study produces — tables (every cell with its spread across seeds), figures, conclusions
computed from the data — as plain types. The ledger (`claims`) and the report (`report`) build on these;
`base` writes them out, so nothing here imports a floor above.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Protocol, Sequence

import numpy as np
import pandas as pd

__all__ = ["TINY_ENV", "Cell", "Figure", "Options", "Study", "StudyResult", "Table", "cell", "quantity", "tiny",
           "Runner"]

#: Environment variable for the tests' "tiny" mode: `IWLAB_STUDY_TINY=1` makes a study run its
#: smallest meaningful version (2 seeds unless `Options.seeds` says otherwise, very short runs,
#: a reduced grid) so that its tables, figures and report can be checked in seconds.
TINY_ENV = "IWLAB_STUDY_TINY"


def tiny() -> bool:
    """True when `IWLAB_STUDY_TINY` is set to a true value (`1`, `true`, `yes`)."""
    return os.environ.get(TINY_ENV, "").strip().lower() in ("1", "true", "yes")


_UNITS = {"bps": 1.0, "kbps": 1e3, "mbps": 1e6, "gbps": 1e9,
          "ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0, "min": 60.0,
          "b": 1.0, "kb": 1e3, "mb": 1e6, "gb": 1e9, "kib": 2.0**10, "mib": 2.0**20, "gib": 2.0**30}


def quantity(text: str | float) -> float:
    """A scenario quantity in its base unit: bits/s, seconds or bytes (`"2Mbps"` → 2e6,
    `"98ms"` → 0.098, `"200kB"` → 2e5); a bare number is returned as it is.

    >>> quantity("2Mbps"), quantity("98ms"), quantity("200kB"), quantity(3)
    (2000000.0, 0.098, 200000.0, 3.0)
    """
    import re

    if isinstance(text, (int, float)):
        return float(text)
    m = re.fullmatch(r"\s*([0-9.eE+-]+)\s*([A-Za-z]*)\s*", text)
    unit = m.group(2).lower() if m else ""
    if not m or (unit and unit not in _UNITS):
        raise ValueError(f"{text!r} is not a quantity; expected a number with one of {sorted(_UNITS)}")
    return float(m.group(1)) * (_UNITS[unit] if unit else 1.0)


#: Seeds per scenario in quick mode: the fewest behind an interval that is printed and judged
#: (claims.MIN_SEEDS), so quick verdicts are wider than full ones, never of another kind.
QUICK_SEEDS = 5


@dataclass(frozen=True)
class Options:
    """How a study is run. `quick` means fewer seeds and shorter runs (documented per study)."""

    out: Path
    quick: bool = False
    seeds: int | None = None
    jobs: int | None = None
    dask: str | None = None
    progress: bool = True
    #: Run the "where would it hold" variants for claims not reproduced; False skips them.
    where: bool = True
    #: Full mode with the study's own seed count: re-run with more seeds (at most this many) while
    #: claims are left inconclusive that such a run would decide (`iwlab.studies.reproduce`); 0 = never.
    decide_up_to: int = 0

    def n_seeds(self, full: int = 10, quick: int = QUICK_SEEDS) -> int:
        return self.seeds if self.seeds is not None else (quick if self.quick else full)


@dataclass(frozen=True)
class Cell:
    """A value across seeds: the mean and a 95 % bootstrap interval."""

    value: float
    lo: float
    hi: float
    n: int


def cell(values: Sequence[float] | pd.Series | np.ndarray, confidence: float = 0.95) -> Cell:
    """Mean of per-seed values with a bootstrap interval (NaNs dropped; one value ⇒ no spread)."""
    from iwlab import stats

    x = np.asarray(pd.Series(values, dtype="float64").dropna(), dtype="float64")
    if len(x) == 0:
        return Cell(float("nan"), float("nan"), float("nan"), 0)
    if len(x) == 1 or np.all(x == x[0]):
        return Cell(float(x[0]), float(x[0]), float(x[0]), len(x))
    lo, hi = stats.bootstrap_ci(x, "mean", confidence)
    return Cell(float(x.mean()), float(lo), float(hi), len(x))


@dataclass
class Table:
    """One table of a study, in the layout of the original document.

    `frame` holds the values: one row per scenario (the index names it), one column per
    compared setting (e.g. IW); `low` and `high` (same shape) hold the interval bounds.
    """

    name: str
    title: str
    frame: pd.DataFrame
    low: pd.DataFrame | None = None
    high: pd.DataFrame | None = None
    note: str = ""
    fmt: str = "{:.3g}"
    #: Tidy keys of a row label (e.g. "8/0" → {"webs": 8, "ftps": 0}) and of a column label (e.g.
    #: "IW=2 (% decrease)" → {"iw": 2, "metric": "delay_decrease_pct"}) for the long form; absent →
    #: {"row": label} / {"metric": label}.
    row_keys: Callable[[Any], dict[str, Any]] | None = None
    col_keys: Callable[[Any], dict[str, Any]] | None = None

    @classmethod
    def from_cells(cls, name: str, title: str, cells: dict[Any, dict[Any, Cell]], note: str = "",
                   fmt: str = "{:.3g}", index_name: str = "scenario") -> "Table":
        """`cells[row][column]` → a table with its interval frames."""
        rows = list(cells)
        cols = list(dict.fromkeys(c for r in rows for c in cells[r]))

        def frame(attr: str) -> pd.DataFrame:
            data = {c: [getattr(cells[r].get(c), attr, np.nan) if cells[r].get(c) else np.nan for r in rows]
                    for c in cols}
            return pd.DataFrame(data, index=pd.Index(rows, name=index_name))

        return cls(name, title, frame("value"), frame("lo"), frame("hi"), note, fmt)

    def to_csv_frame(self) -> pd.DataFrame:
        """One row per scenario, one column per setting, plus `<col>_lo` / `<col>_hi`."""
        out = self.frame.copy()
        for bound, df in (("lo", self.low), ("hi", self.high)):
            if df is not None:
                for c in self.frame.columns:
                    out[f"{c}_{bound}"] = df[c]
        return out

    def to_long(self) -> pd.DataFrame:
        """The long (tidy) form: one row per cell with separate key columns (from `row_keys` /
        `col_keys`), `metric`, `value`, `ci_lo`, `ci_hi`, and the display labels `row_label`,
        `col_label` (so the display table can be rebuilt: `Table.from_long`)."""
        rows = []
        for r in self.frame.index:
            rk = self.row_keys(r) if self.row_keys else {"row": str(r)}
            for c in self.frame.columns:
                ck = self.col_keys(c) if self.col_keys else {"metric": str(c)}
                v = self.frame.loc[r, c]
                lo = self.low.loc[r, c] if self.low is not None else v
                hi = self.high.loc[r, c] if self.high is not None else v
                rows.append({**rk, **ck, "value": v, "ci_lo": lo, "ci_hi": hi, "row_label": str(r),
                             "col_label": str(c)})
        df = pd.DataFrame(rows)
        keys = [k for k in df.columns if k not in ("metric", "value", "ci_lo", "ci_hi", "row_label", "col_label")]
        return df[[*keys, "metric", "value", "ci_lo", "ci_hi", "row_label", "col_label"]]

    @staticmethod
    def from_long(df: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
        """(frame, low, high) of the display table rebuilt from its long form (labels as strings)."""
        rows = list(dict.fromkeys(df["row_label"].astype(str)))
        cols = list(dict.fromkeys(df["col_label"].astype(str)))
        d = df.assign(row_label=df["row_label"].astype(str), col_label=df["col_label"].astype(str))

        def wide(v: str) -> pd.DataFrame:
            return d.pivot(index="row_label", columns="col_label", values=v).reindex(index=rows, columns=cols)

        return wide("value"), wide("ci_lo"), wide("ci_hi")

    def text(self) -> str:
        """The table as aligned text: `value [lo, hi]` per cell."""
        def show(r: Any, c: Any) -> str:
            v = self.frame.loc[r, c]
            if pd.isna(v):
                return "—"
            s = self.fmt.format(v)
            if self.low is not None and self.high is not None and not pd.isna(self.low.loc[r, c]):
                lo, hi = self.low.loc[r, c], self.high.loc[r, c]
                if lo != hi:
                    s += f" [{self.fmt.format(lo)}, {self.fmt.format(hi)}]"
            return s

        header = [str(self.frame.index.name or "")] + [str(c) for c in self.frame.columns]
        body = [[str(r)] + [show(r, c) for c in self.frame.columns] for r in self.frame.index]
        widths = [max(len(row[i]) for row in [header, *body]) for i in range(len(header))]
        line = lambda row: "  ".join(x.ljust(w) if i == 0 else x.rjust(w) for i, (x, w) in enumerate(zip(row, widths)))
        return "\n".join([f"{self.name}: {self.title}", line(header), *map(line, body)] + ([self.note] if self.note else []))


def metric_name(label: str) -> str:
    """A display label as a snake-case metric name: "drops (%)" → "drops_pct", "CT_s (s)" → "ct_s_s"."""
    import re

    s = label.replace("%", " pct ").replace("/", " per ").replace("−", "-")
    return re.sub(r"[^0-9a-z]+", "_", s.lower()).strip("_")


def iw_col_keys(col: Any) -> dict[str, Any]:
    """Keys of a column label that names an IW ("IW=2 (% decrease)", "util IW=1 (%)", "9 seg IW10"):
    `iw` (segments) and `metric` (the rest, snake-case)."""
    import re

    text = str(col)
    m = re.search(r"IW\s*=?\s*(\d+)", text)
    if not m:
        return {"iw": None, "metric": metric_name(text)}
    rest = (text[: m.start()] + " " + text[m.end():]).strip()
    return {"iw": int(m.group(1)), "metric": metric_name(rest) or "value"}


@dataclass
class Figure:
    name: str
    png: bytes
    caption: str


@dataclass
class StudyResult:
    study: str
    title: str
    tables: list[Table] = field(default_factory=list)
    figures: list[Figure] = field(default_factory=list)
    #: Sentences computed from the data (e.g. "IW 4 lowers the median page delay by 12 % …").
    conclusions: list[str] = field(default_factory=list)
    #: The same in Japanese where a study provides it (RFC 2415's Japanese translation readers).
    conclusions_ja: list[str] = field(default_factory=list)
    #: What was run: seeds, durations, grid sizes, scenario files and their hashes.
    setup: dict[str, Any] = field(default_factory=dict)
    #: Documentation shown in the report (distributions, defaults, model choices).
    notes: list[str] = field(default_factory=list)
    #: The claims ledger judged on this run (`iwlab.studies.claims.Judged`), shown first.
    claims: list[Any] = field(default_factory=list)
    #: Japanese summary of the verdicts (RFC 2415).
    claims_ja: list[str] = field(default_factory=list)
    #: Suspected errors in the original (`iwlab.studies.claims.Erratum`), with their evidence.
    errata: list[Any] = field(default_factory=list)


class Study(Protocol):
    name: str
    title: str

    def run(self, opts: Options) -> StudyResult: ...


Runner = Callable[[Options], StudyResult]

"""Python API: load scenarios, run them, get pandas DataFrames (Arrow-backed).

>>> import iwlab
>>> sc = iwlab.load("rfc2415", sets=["duration=20s"])
>>> r = iwlab.run(sc, seed=2)
>>> r.seed, len(r.flows) == r.summary["flows"], r.summary["pages_completed"] <= r.summary["pages"]
(2, True, True)
>>> str(r.pages["delay"].dtype)
'double[pyarrow]'
>>> 0 < r.summary["bottleneck_reverse_utilisation"] <= 1
True
"""

from __future__ import annotations

import html
import json
import math
import statistics
from pathlib import Path
from typing import TYPE_CHECKING, Any

from iwlab import _core
from iwlab.scenario_io import Scenario, ScenarioError, load

if TYPE_CHECKING:
    import pandas as pd
    import pyarrow as pa

__all__ = ["Result", "run", "load", "TABLES"]

#: The record tables of a run, in file order.
TABLES = ("flows", "pages", "links", "queues")
#: Tables a run has only when asked for (`run(…, iw_events=True)`).
OPTIONAL_TABLES = ("iw_events",)

# Column types of the core → Arrow. Unsigned counts become int64 (they fit, and differences of
# them stay signed).
_ARROW = {"u64": "int64", "i64": "int64", "f64": "float64", "opt_f64": "float64", "bool": "bool_", "str": "string"}


def _bitmap(bits: list[bool]) -> bytes:
    """Arrow's LSB-first bit packing."""
    out = bytearray((len(bits) + 7) // 8)
    for i, b in enumerate(bits):
        if b:
            out[i >> 3] |= 1 << (i & 7)
    return bytes(out)


def _arrow_array(values: list[Any], kind: str) -> pa.Array:
    """One column of the core as an Arrow array, built from buffers: `pa.array(list)` would
    import pandas (pyarrow checks every input for pandas types), 0.5 s that `iwlab run` and
    `Result.save` do not need."""
    import array

    import pyarrow as pa

    n = len(values)
    typ = getattr(pa, _ARROW[kind])()
    if kind in ("u64", "i64"):
        return pa.Array.from_buffers(typ, n, [None, pa.py_buffer(array.array("q", values))])
    if kind == "f64":
        return pa.Array.from_buffers(typ, n, [None, pa.py_buffer(array.array("d", values))])
    if kind == "opt_f64":
        valid = [v is not None for v in values]
        data = array.array("d", [0.0 if v is None else v for v in values])
        nulls = n - sum(valid)
        return pa.Array.from_buffers(typ, n, [pa.py_buffer(_bitmap(valid)) if nulls else None, pa.py_buffer(data)],
                                     null_count=nulls)
    if kind == "bool":
        return pa.Array.from_buffers(typ, n, [None, pa.py_buffer(_bitmap(values))])
    encoded = [v.encode() for v in values]
    offsets = array.array("i", [0])
    for e in encoded:
        offsets.append(offsets[-1] + len(e))
    return pa.Array.from_buffers(typ, n, [None, pa.py_buffer(offsets), pa.py_buffer(b"".join(encoded))])


def _arrow_table(columns: dict[str, list[Any]], types: dict[str, str]) -> pa.Table:
    import pyarrow as pa

    names = list(columns)
    return pa.Table.from_arrays([_arrow_array(columns[n], types[n]) for n in names], names=names)


def _frame(columns: dict[str, list[Any]], types: dict[str, str]) -> pd.DataFrame:
    import pandas as pd

    return _arrow_table(columns, types).to_pandas(types_mapper=pd.ArrowDtype)


def _median(values: list[float | None]) -> float | None:
    values = [v for v in values if v is not None and not math.isnan(v)]
    return float(statistics.median(values)) if values else None


def headline(flows: dict[str, list[Any]], pages: dict[str, list[Any]], links: dict[str, list[Any]],
             summary: dict[str, Any]) -> dict[str, Any]:
    """The numbers `iwlab run` prints, from the core's columns (no pandas needed): medians over
    completed records after warm-up (None if there are none), bottleneck utilisation and drop
    rate per direction (L → R is forward), simulator events and link transmissions (packets put
    on any link, once per hop) per wall-clock second of the engine run."""
    out: dict[str, Any] = {}
    for name, rows, column in (("median_flow_completion", flows, "completion"), ("median_page_delay", pages, "delay")):
        done = [v for v, c, w in zip(rows[column], rows["completed"], rows["in_warmup"]) if c and not w]
        out[name] = _median(done)
    for direction, (a, b) in (("forward", ("router-left", "router-right")), ("reverse", ("router-right", "router-left"))):
        row = [i for i, (f, t) in enumerate(zip(links["from"], links["to"])) if f == a and t == b]
        for key, column in (("utilisation", "utilisation"), ("drop_rate", "drop_rate")):
            value = links[column][row[0]] if row else None
            out[f"bottleneck_{direction}_{key}"] = None if value is None else float(value)
    wall = summary.get("wall_seconds") or 0.0
    out["events_per_second"] = summary["events"] / wall if wall > 0 else None
    tx = summary.get("link_transmissions")
    out["link_tx_per_wall_s"] = tx / wall if wall > 0 and tx is not None else None
    return out


class _Table:
    """A record table of `Result`: a DataFrame built from the core's columns on first access."""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __get__(self, obj: Result | None, owner: type) -> Any:
        if obj is None:
            return self
        frames = obj._frames
        if self.name not in frames:
            if self.name not in obj._columns:  # an optional table the run did not record
                return None
            frames[self.name] = _frame(obj._columns.pop(self.name), obj._types[self.name])
        return frames[self.name]

    def __set__(self, obj: Result, value: pd.DataFrame) -> None:
        obj._frames[self.name] = value
        obj._columns.pop(self.name, None)


class Result:
    """What one run produced: per-flow, per-page, per-link rows, queue samples, a summary.

    `flows`, `pages`, `links` and `queues` are pandas DataFrames (Arrow-backed), built on first
    access: a run that only saves or prints never imports pandas.
    `summary` holds the core's counters (`seed`, `events`, `flows`, `flows_completed`,
    `pages`, `pages_completed`, `packets_*`, `wall_seconds` and `cpu_seconds` of the engine run,
    …), the scenario's name and hash,
    and the headline numbers of `headline()`.
    """

    flows = _Table()
    pages = _Table()
    links = _Table()
    queues = _Table()
    iw_events = _Table()
    """Every IW decision and policy event, when the run recorded them (`run(…, iw_events=True)`;
    columns in crates/iwlab-core/src/metrics/iw_events.rs); None otherwise."""

    def __init__(self, scenario: Scenario, seed: int, flows: pd.DataFrame | None = None,
                 pages: pd.DataFrame | None = None, links: pd.DataFrame | None = None,
                 queues: pd.DataFrame | None = None, summary: dict[str, Any] | None = None, *,
                 iw_events: pd.DataFrame | None = None,
                 columns: dict[str, dict[str, list[Any]]] | None = None,
                 types: dict[str, dict[str, str]] | None = None) -> None:
        """The tables as DataFrames, or as the core's `columns` (name → values) and `types`."""
        self.scenario, self.seed = scenario, seed
        self.summary: dict[str, Any] = {} if summary is None else summary
        self._columns = dict(columns or {})
        self._types = dict(types or {})
        self._frames: dict[str, pd.DataFrame] = {}
        for name, frame in zip(TABLES + OPTIONAL_TABLES, (flows, pages, links, queues, iw_events)):
            if frame is not None:
                self._frames[name] = frame
        missing = [n for n in TABLES if n not in self._frames and n not in self._columns]
        if missing:
            raise TypeError(f"Result: tables {missing} missing")

    def _rows(self, name: str) -> int:
        if name in self._frames:
            return len(self._frames[name])
        return len(next(iter(self._columns[name].values()), []))

    def __repr__(self) -> str:
        sizes = ", ".join(f"{n}={self._rows(n)}" for n in TABLES)
        return f"Result(scenario={self.scenario.name!r}, seed={self.seed}, {sizes})"

    def _repr_html_(self) -> str:
        """A summary table for Jupyter."""
        rows = "".join(f"<tr><th style='text-align:left'>{html.escape(k)}</th><td>{html.escape(v)}</td></tr>"
                       for k, v in summary_rows(self.summary))
        title = html.escape(f"iwlab run: {self.scenario.name}, seed {self.seed}")
        return f"<table><caption style='text-align:left'><b>{title}</b></caption>{rows}</table>"

    def save(self, out: str | Path) -> Path:
        """Writes flows/pages/links/queues as Parquet, summary.json and scenario.toml into `out`."""
        out = Path(out)
        out.mkdir(parents=True, exist_ok=True)
        for name in TABLES + OPTIONAL_TABLES:
            if name not in self._frames and name not in self._columns:
                continue
            if name in self._frames:
                self._frames[name].to_parquet(out / f"{name}.parquet", index=False)
            else:  # straight from the core's columns: no pandas
                import pyarrow.parquet as pq

                pq.write_table(_arrow_table(self._columns[name], self._types[name]), out / f"{name}.parquet")
        meta = dict(self.summary, scenario=self.scenario.name, scenario_hash=self.scenario.hash())
        (out / "summary.json").write_text(json.dumps(meta, indent=2, sort_keys=True) + "\n")
        (out / "scenario.toml").write_text(self.scenario.to_toml())
        return out

    @classmethod
    def load(cls, folder: str | Path) -> Result:
        """Reads back what `save` wrote."""
        import pandas as pd

        folder = Path(folder)
        frames = {n: pd.read_parquet(folder / f"{n}.parquet", dtype_backend="pyarrow")
                  for n in TABLES + OPTIONAL_TABLES if n in TABLES or (folder / f"{n}.parquet").exists()}
        summary = json.loads((folder / "summary.json").read_text())
        scenario = Scenario.from_toml((folder / "scenario.toml").read_text(), str(folder / "scenario.toml"))
        return cls(scenario=scenario, seed=int(summary["seed"]), summary=summary, **frames)


def _fmt_seconds(v: float | None) -> str:
    if v is None or math.isnan(v):
        return "-"
    return f"{v * 1000:.1f} ms" if v < 1 else f"{v:.3f} s"


def _fmt_pct(v: float | None) -> str:
    return "-" if v is None else f"{100 * v:.2f} %"


def summary_rows(s: dict[str, Any]) -> list[tuple[str, str]]:
    """(label, value) rows of a summary, as `iwlab run` and `Result._repr_html_` show them."""
    eps = s.get("events_per_second")
    tps = s.get("link_tx_per_wall_s")
    return [
        ("scenario", f"{s.get('scenario', '')} ({s.get('scenario_hash', '')})"),
        ("seed", str(s.get("seed"))),
        ("simulated", f"{s.get('duration', 0):g} s (warm-up {s.get('warmup', 0):g} s)"),
        ("flows completed", f"{s.get('flows_completed')} / {s.get('flows')}"),
        ("median flow completion", _fmt_seconds(s.get("median_flow_completion"))),
        ("pages completed", f"{s.get('pages_completed')} / {s.get('pages')}"),
        ("median page delay", _fmt_seconds(s.get("median_page_delay"))),
        ("bottleneck L→R utilisation", _fmt_pct(s.get("bottleneck_forward_utilisation"))),
        ("bottleneck L→R drop rate", _fmt_pct(s.get("bottleneck_forward_drop_rate"))),
        ("bottleneck R→L utilisation", _fmt_pct(s.get("bottleneck_reverse_utilisation"))),
        ("bottleneck R→L drop rate", _fmt_pct(s.get("bottleneck_reverse_drop_rate"))),
        ("packets created / dropped", f"{s.get('packets_created')} / {s.get('packets_dropped')}"),
        ("events", f"{s.get('events')} ({'-' if eps is None else f'{eps / 1e6:.2f} M'} events/s)"),
        ("link transmissions",
         f"{s.get('link_transmissions', '-')} ({'-' if tps is None else f'{tps / 1e6:.2f} M'} /s)"),
        ("wall time", _fmt_seconds(s.get("wall_seconds"))),
    ]


def run(scenario: Scenario | str | Path, seed: int | None = None, pcap: str | Path | None = None,
        flows: list[int] | None = None, iw_events: bool = False) -> Result:
    """Runs `scenario` (a Scenario, a TOML path or a preset name) once, with `seed` (default:
    the scenario's). With `pcap`, the packets of the bottleneck (both directions) of the
    flows `flows` (ids of the `flow` column; all if None) are written to that file. With
    `iw_events`, every IW decision and event of the IW policies is recorded (`Result.iw_events`).

    >>> r = run(load("congested-links", sets=["duration=10s", "warmup=1s"]), seed=1)
    >>> list(r.queues.columns), r.summary["scenario"]
    (['time', 'port', 'packets', 'bytes'], 'congested-links')
    """
    sc = scenario if isinstance(scenario, Scenario) else load(scenario)
    try:
        raw = _core.run(sc.to_json(), "json", seed, None if pcap is None else str(pcap), flows, iw_events)
    except _core.ScenarioError as e:
        raise ScenarioError.from_core(e, sc.source, located=False) from None
    summary = dict(raw["summary"], scenario=sc.name, scenario_hash=sc.hash())
    summary.update(headline(raw["flows"], raw["pages"], raw["links"], summary))
    columns = {n: raw[n] for n in TABLES + OPTIONAL_TABLES if n in raw}
    return Result(sc, int(summary["seed"]), summary=summary, columns=columns, types=raw["types"])

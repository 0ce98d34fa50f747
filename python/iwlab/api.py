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

import json
import math
import threading
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


def _arrow_from_buffers(column: tuple[Any, ...]) -> pa.Array:
    """One column of a chunk the core handed to the sink: `(kind, rows, data, validity,
    null_count, offsets)`, Arrow buffers wrapped without a copy."""
    import pyarrow as pa

    kind, n, data, valid, nulls, offsets = column
    typ = getattr(pa, _ARROW[kind])()
    if kind == "str":
        return pa.Array.from_buffers(typ, n, [None, pa.py_buffer(offsets), pa.py_buffer(data)])
    return pa.Array.from_buffers(typ, n, [None if valid is None else pa.py_buffer(valid), pa.py_buffer(data)],
                                 null_count=nulls)


class _Records:
    """A run's records kept in memory (a run without `out`): the core hands each table over
    chunk by chunk as Arrow buffers, kept as record batches — no Python object per value, no
    second copy of a table. With `out` the core writes the same chunks to Parquet itself
    (crates/iwlab-py/src/parquet_files.rs) and pyarrow is not needed at all; either way the
    headline numbers come with the core's summary, read off the chunks on the way
    (crates/iwlab-core/src/metrics/headline.rs)."""

    def __init__(self) -> None:
        self.batches: dict[str, list[pa.RecordBatch]] = {}

    def __call__(self, name: str, columns: dict[str, tuple[Any, ...]]) -> None:
        import pyarrow as pa

        batch = pa.RecordBatch.from_arrays([_arrow_from_buffers(c) for c in columns.values()], names=list(columns))
        self.batches.setdefault(name, []).append(batch)


#: The headline keys the core adds to its summary (`_core.run`), in summary order.
_HEADLINE = ("median_flow_completion", "median_page_delay", "bottleneck_forward_utilisation",
             "bottleneck_forward_drop_rate", "bottleneck_reverse_utilisation", "bottleneck_reverse_drop_rate")


def _arrow_table(columns: dict[str, list[Any]], types: dict[str, str]) -> pa.Table:
    import pyarrow as pa

    names = list(columns)
    return pa.Table.from_arrays([_arrow_array(columns[n], types[n]) for n in names], names=names)


def _median(values: list[float | None]) -> float | None:
    import statistics  # with its fractions, decimal and random: not on the path of `iwlab run`

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
    out.update(_link_headline(links))
    out.update(_rates(summary))
    return out


def _link_headline(links: dict[str, list[Any]]) -> dict[str, Any]:
    """The part of `headline` that reads the links table."""
    out: dict[str, Any] = {}
    for direction, (a, b) in (("forward", ("router-left", "router-right")), ("reverse", ("router-right", "router-left"))):
        row = [i for i, (f, t) in enumerate(zip(links["from"], links["to"])) if f == a and t == b]
        for key, column in (("utilisation", "utilisation"), ("drop_rate", "drop_rate")):
            value = links[column][row[0]] if row else None
            out[f"bottleneck_{direction}_{key}"] = None if value is None else float(value)
    return out


def _rates(summary: dict[str, Any]) -> dict[str, Any]:
    """Simulator events and link transmissions per wall-clock second of the engine run."""
    out: dict[str, Any] = {}
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
            if not obj._has(self.name):  # an optional table the run did not record: no pyarrow
                return None
            table = obj._arrow(self.name)
            import pandas as pd

            frames[self.name] = table.to_pandas(types_mapper=pd.ArrowDtype)
            obj._columns.pop(self.name, None)
            obj._batches.pop(self.name, None)
        return frames[self.name]

    def __set__(self, obj: Result, value: pd.DataFrame) -> None:
        obj._frames[self.name] = value
        obj._columns.pop(self.name, None)
        obj._batches.pop(self.name, None)
        obj._files.pop(self.name, None)


class Result:
    """What one run produced: per-flow, per-page, per-link rows, queue samples, a summary.

    `flows`, `pages`, `links` and `queues` are pandas DataFrames (Arrow-backed), built on first
    access from the Parquet files the run wrote (`run(…, out=…)`) or from its Arrow record
    batches: a run that only saves or prints never imports pandas.
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
                 types: dict[str, dict[str, str]] | None = None,
                 batches: dict[str, list[pa.RecordBatch]] | None = None,
                 files: dict[str, Path] | None = None) -> None:
        """The tables as DataFrames, as the core's `columns` (name → values) and `types`, as
        Arrow record `batches`, or as Parquet `files` (name → path)."""
        self.scenario, self.seed = scenario, seed
        self.summary: dict[str, Any] = {} if summary is None else summary
        self._columns = dict(columns or {})
        self._types = dict(types or {})
        self._batches = dict(batches or {})
        self._files = {n: Path(f) for n, f in (files or {}).items()}
        self._frames: dict[str, pd.DataFrame] = {}
        for name, frame in zip(TABLES + OPTIONAL_TABLES, (flows, pages, links, queues, iw_events)):
            if frame is not None:
                self._frames[name] = frame
        missing = [n for n in TABLES if not self._has(n)]
        if missing:
            raise TypeError(f"Result: tables {missing} missing")

    def _has(self, name: str) -> bool:
        return any(name in held for held in (self._frames, self._columns, self._batches, self._files))

    def _arrow(self, name: str) -> pa.Table | None:
        """Table `name` as Arrow, from wherever it is held; None if the run did not record it."""
        import pyarrow as pa

        if name in self._columns:
            return _arrow_table(self._columns[name], self._types[name])
        if name in self._batches:
            return pa.Table.from_batches(self._batches[name])
        if name in self._files:
            import pyarrow.parquet as pq

            return pq.read_table(self._files[name])
        return None

    def arrow(self, name: str) -> pa.Table | None:
        """Record table `name` as an Arrow table (no pandas unless the table is held as a
        DataFrame already); None for an optional table the run did not record."""
        if name in self._frames:
            import pyarrow as pa

            return pa.Table.from_pandas(self._frames[name], preserve_index=False)
        return self._arrow(name)

    def _rows(self, name: str) -> int:
        if name in self._frames:
            return len(self._frames[name])
        if name in self._batches:
            return sum(b.num_rows for b in self._batches[name])
        if name in self._files:
            import pyarrow.parquet as pq

            return pq.ParquetFile(self._files[name]).metadata.num_rows
        return len(next(iter(self._columns[name].values()), []))

    def __repr__(self) -> str:
        sizes = ", ".join(f"{n}={self._rows(n)}" for n in TABLES)
        return f"Result(scenario={self.scenario.name!r}, seed={self.seed}, {sizes})"

    def _repr_html_(self) -> str:
        """A summary table for Jupyter."""
        import html

        rows = "".join(f"<tr><th style='text-align:left'>{html.escape(k)}</th><td>{html.escape(v)}</td></tr>"
                       for k, v in summary_rows(self.summary))
        title = html.escape(f"iwlab run: {self.scenario.name}, seed {self.seed}")
        return f"<table><caption style='text-align:left'><b>{title}</b></caption>{rows}</table>"

    def save(self, out: str | Path) -> Path:
        """Writes flows/pages/links/queues as Parquet, summary.json and scenario.toml into `out`."""
        out = Path(out)
        out.mkdir(parents=True, exist_ok=True)
        for name in TABLES + OPTIONAL_TABLES:
            path = out / f"{name}.parquet"
            if name in self._frames:
                self._frames[name].to_parquet(path, index=False)
            elif name in self._files:  # written while the run went
                if self._files[name].resolve() != path.resolve():
                    import shutil

                    shutil.copyfile(self._files[name], path)
            elif self._has(name):  # straight from the core's columns or batches: no pandas
                import pyarrow.parquet as pq

                pq.write_table(self._arrow(name), path)
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
        flows: list[int] | None = None, iw_events: bool = False, out: str | Path | None = None,
        keylog: str | Path | None = None) -> Result:
    """Runs `scenario` (a Scenario, a TOML path or a preset name) once, with `seed` (default:
    the scenario's). With `pcap`, the packets of the bottleneck (both directions) of the
    flows `flows` (ids of the `flow` column; all if None) are written to that file; with
    `keylog` as well, the TLS secrets of the QUIC connections go to that file (SSLKEYLOGFILE
    format) and the pcap carries the QUIC datagrams as sent, which Wireshark decrypts (both
    byte-identical for the same seed). With
    `iw_events`, every IW decision and event of the IW policies is recorded (`Result.iw_events`).
    With `out`, the record tables are written to `out/NAME.parquet` as the engine hands them
    over (the rest of the folder comes with `Result.save(out)`); without, they stay in memory
    as Arrow record batches.

    >>> r = run(load("congested-links", sets=["duration=10s", "warmup=1s"]), seed=1)
    >>> list(r.queues.columns), r.summary["scenario"]
    (['time', 'port', 'packets', 'bytes'], 'congested-links')
    """
    sc = scenario if isinstance(scenario, Scenario) else load(scenario)
    folder = None if out is None else Path(out)
    pcap_path = None if pcap is None else str(pcap)
    if keylog is not None and pcap is None:
        raise ValueError("keylog needs a pcap: the key log decrypts the QUIC datagrams the pcap holds")
    keylog_path = None if keylog is None else str(keylog)
    records = _Records()
    try:
        if folder is not None:  # the core writes the Parquet files: no pyarrow in this process
            raw = _core.run(sc.to_json(), "json", seed, pcap_path, flows, iw_events, None, str(folder), keylog_path)
        else:
            # pyarrow takes a third of a second to import; the engine runs without the GIL, so
            # the import overlaps it on a second core instead of following it.
            warm = threading.Thread(target=_import_arrow, daemon=True)
            warm.start()
            try:
                raw = _core.run(sc.to_json(), "json", seed, pcap_path, flows, iw_events, _after(warm, records), None,
                                keylog_path)
            finally:
                warm.join()  # also when the run failed: no import outlives the call
    except _core.ScenarioError as e:
        raise ScenarioError.from_core(e, sc.source, located=False) from None
    core = dict(raw["summary"])
    head = {k: core.pop(k) for k in _HEADLINE}
    summary = dict(core, scenario=sc.name, scenario_hash=sc.hash())
    summary.update(head)
    summary.update(_rates(summary))
    if folder is None:
        return Result(sc, int(summary["seed"]), summary=summary, batches=records.batches)
    files = {name: folder / f"{name}.parquet" for name in raw["tables"]}
    return Result(sc, int(summary["seed"]), summary=summary, files=files)


def _import_arrow() -> None:
    import pyarrow.parquet  # noqa: F401


def _after(warm: threading.Thread, records: _Records) -> Any:
    """`records`, called once `warm` has imported pyarrow."""
    def sink(name: str, columns: dict[str, tuple[Any, ...]]) -> None:
        warm.join()
        records(name, columns)
    return sink

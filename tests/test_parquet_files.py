"""The record tables the extension writes to Parquet itself (`iwlab.run(…, out=DIR)`,
crates/iwlab-py/src/parquet_files.rs) read back exactly as those pyarrow wrote from the same
chunks — same schema, same values, same DataFrames — and the headline the core reads off the
chunks (crates/iwlab-core/src/metrics/headline.rs) is the one numpy computes from the tables."""

from __future__ import annotations

import hashlib
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import iwlab
import iwlab.api

ROOT = Path(__file__).resolve().parent.parent
BENCH = ROOT / "bench" / "scenarios"

# (scenario, --set values, seed, iw_events): labels and missing values (rfc2415), queue samples
# (congested-links), an empty pages table (bulk), several row groups (million-flows: > 4 096 flows).
CASES = [
    ("rfc2415", ["duration=20s", "warmup=2s"], 3, True),
    ("congested-links", ["duration=10s", "warmup=1s"], 1, False),
    (str(BENCH / "bulk.toml"), ["duration=2s"], 2, False),
    (str(BENCH / "million-flows.toml"), ["duration=1.2s"], 1, False),
]


def write_as_pyarrow(batches: list[pa.RecordBatch], path: Path) -> None:
    """What `iwlab.run(…, out=…)` did before the extension wrote the files: one
    `ParquetWriter.write_batch` per chunk, an empty table written as its one empty chunk."""
    with pq.ParquetWriter(path, batches[0].schema) as writer:
        for b in batches:
            if b.num_rows or sum(x.num_rows for x in batches) == 0:
                writer.write_batch(b)


def digest(path: Path) -> str:
    """SHA-256 of the table read back as one chunk, as Arrow IPC (bench/records_memory.py)."""
    table = pq.read_table(path).combine_chunks().replace_schema_metadata(None)
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table)
    return hashlib.sha256(sink.getvalue().to_pybytes()).hexdigest()


@pytest.fixture(scope="module", params=CASES, ids=lambda c: Path(c[0]).stem)
def pair(request, tmp_path_factory):
    """The same run twice: records kept in memory (Arrow batches), and written by the extension."""
    name, sets, seed, iw_events = request.param
    sc = iwlab.load(name, sets=sets)
    folder = tmp_path_factory.mktemp("out")
    return iwlab.run(sc, seed=seed, iw_events=iw_events), iwlab.run(sc, seed=seed, iw_events=iw_events, out=folder)


def test_the_extension_writes_every_table_the_run_recorded(pair):
    memory, files = pair
    assert set(files._files) == set(memory._batches)
    assert all(p.exists() for p in files._files.values())


def test_each_file_reads_back_as_the_file_pyarrow_wrote_from_the_same_chunks(pair, tmp_path):
    memory, files = pair
    for name, batches in memory._batches.items():
        reference = tmp_path / f"{name}.parquet"
        write_as_pyarrow(batches, reference)
        ours = files._files[name]
        assert pq.read_schema(ours).remove_metadata() == pq.read_schema(reference).remove_metadata(), name
        assert pq.read_schema(ours).metadata is None, name  # nothing beyond the schema itself
        assert digest(ours) == digest(reference), name  # same columns, types, nulls and values
        rows = sum(b.num_rows for b in batches)
        assert pq.ParquetFile(ours).metadata.num_rows == rows, name
        # one row group per non-empty chunk, as the writer was handed them
        assert pq.ParquetFile(ours).metadata.num_row_groups == sum(1 for b in batches if b.num_rows), name


def test_result_dataframes_from_the_files_equal_those_from_memory(pair):
    memory, files = pair
    for name in (*iwlab.api.TABLES, *iwlab.api.OPTIONAL_TABLES):
        a, b = getattr(memory, name), getattr(files, name)
        if a is None:
            assert b is None, name
            continue
        pd.testing.assert_frame_equal(b, a)
        assert list(b.dtypes.astype(str)) == list(a.dtypes.astype(str)), name


def test_a_folder_that_cannot_be_written_is_named_in_the_error(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    with pytest.raises(OSError, match="file/sub/flows.parquet: Not a directory"):
        iwlab.run(iwlab.load("rfc2415", sets=["duration=2s"]), seed=1, out=blocker / "sub")


# --- the headline --------------------------------------------------------------------------

def numpy_median(frame: pd.DataFrame, column: str) -> float | None:
    """What the summary held before the core computed it: numpy's median of the completed rows
    after warm-up, missing and NaN values left out."""
    keep = frame["completed"].astype(bool) & ~frame["in_warmup"].astype(bool)
    values = frame.loc[keep, column].dropna().to_numpy(dtype=float)
    values = values[~np.isnan(values)]
    return float(np.median(values)) if len(values) else None


def same(a: float | None, b: float | None) -> bool:
    """Equal to the last bit (NaN equal to NaN)."""
    if a is None or b is None:
        return a is b
    return (math.isnan(a) and math.isnan(b)) or (a == b and math.copysign(1, a) == math.copysign(1, b))


HEADLINE_RUNS = [
    ("rfc2415", ["duration=20s", "warmup=2s"], seed) for seed in (1, 2, 3)
] + [
    ("rfc6928", ["duration=20s", "warmup=2s"], 1),
    ("congested-links", ["duration=10s", "warmup=1s"], 4),
    (str(BENCH / "short-flows.toml"), ["duration=3s"], 1),
    (str(BENCH / "short-flows.toml"), ["duration=3s"], 2),
    (str(BENCH / "bulk.toml"), ["duration=2s"], 1),
]


def test_the_headline_is_numpys_median_and_the_bottlenecks_first_link_row(tmp_path):
    parities = set()
    for name, sets, seed in HEADLINE_RUNS:
        sc = iwlab.load(name, sets=sets)
        r = iwlab.run(sc, seed=seed)
        s = r.summary
        for key, table, column in (("median_flow_completion", r.flows, "completion"),
                                   ("median_page_delay", r.pages, "delay")):
            want = numpy_median(table, column)
            assert same(s[key], want), (name, seed, key, s[key], want)
            if want is not None:
                keep = table["completed"].astype(bool) & ~table["in_warmup"].astype(bool)
                parities.add(int(table.loc[keep, column].dropna().shape[0]) % 2)
        links = r.links
        for direction, (a, b) in (("forward", ("router-left", "router-right")),
                                  ("reverse", ("router-right", "router-left"))):
            rows = links[(links["from"] == a) & (links["to"] == b)]
            for key in ("utilisation", "drop_rate"):
                want = None if rows.empty else float(rows[key].iloc[0])
                assert same(s[f"bottleneck_{direction}_{key}"], want), (name, seed, direction, key)
        # the same numbers whether the records went to memory or to files
        written = iwlab.run(sc, seed=seed, out=tmp_path / f"{Path(name).stem}-{seed}").summary
        for key in iwlab.api._HEADLINE:
            assert same(written[key], s[key]), (name, seed, key)
    assert parities == {0, 1}  # both branches of the median: the middle value, the mean of two

"""Whole-process peak RSS of `iwlab run` against the number of flows, and digests of the record
tables it writes: each case runs in a fresh process (`iwlab run SCENARIO --set duration=… --out
DIR`), its peak RSS and CPU time read from wait4(2); the slope between the smallest and the
largest case is the memory per extra flow. `--pythonpath DIR` runs the `iwlab` package found in
DIR instead (a copy of an older tree with its extension, for before/after columns).

The digest of a table is SHA-256 of its Arrow IPC stream after reading the Parquet file back as
one chunk without schema metadata: equal digests ⇒ the same columns, types and values, however
the file was cut into row groups.

    .venv/bin/python bench/records_memory.py bench/scenarios/websearch-1g.toml 20s 100s 300s
    .venv/bin/python bench/records_memory.py bench/scenarios/million-flows.toml 205s
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CLI = "import sys; sys.argv[0] = 'iwlab'; from iwlab.cli import main; sys.exit(main())"
TABLES = ("flows", "pages", "links", "queues")


def digest(path: Path) -> str:
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pq.read_table(path).combine_chunks().replace_schema_metadata(None)
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table)
    return hashlib.sha256(sink.getvalue().to_pybytes()).hexdigest()[:16]


def measure(scenario: str, duration: str, out: Path, env: dict[str, str]) -> dict[str, object]:
    """One `iwlab run` in a fresh process: flows, peak RSS (MB), CPU s (user + system), the
    engine's own CPU s, digests."""
    cmd = [sys.executable, "-c", CLI, "run", scenario, "--set", f"duration={duration}", "--out", str(out)]
    child = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    _, status, usage = os.wait4(child.pid, 0)
    err = child.stderr.read().decode() if child.stderr else ""
    if status != 0:
        raise SystemExit(f"{' '.join(cmd)} failed:\n{err}")
    summary = json.loads((out / "summary.json").read_text())
    return {
        "duration": duration,
        "flows": summary["flows"],
        "peak_rss_mb": usage.ru_maxrss / 1024,
        "cpu_s": usage.ru_utime + usage.ru_stime,
        "engine_cpu_s": summary["cpu_seconds"],
        "digests": {t: digest(out / f"{t}.parquet") for t in TABLES},
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("scenario")
    ap.add_argument("durations", nargs="+", help="simulated durations, e.g. 20s 100s 300s")
    ap.add_argument("--pythonpath", help="run the iwlab package found in this folder")
    ap.add_argument("--json", help="also write the rows to this file")
    args = ap.parse_args()
    env = dict(os.environ)
    if args.pythonpath:
        env["PYTHONPATH"] = args.pythonpath
    rows = []
    with tempfile.TemporaryDirectory(prefix="iwg-records-") as tmp:
        for i, duration in enumerate(args.durations):
            rows.append(measure(args.scenario, duration, Path(tmp) / str(i), env))
    print("| duration | flows | peak RSS MB | process CPU s | engine CPU s | digests (flows pages links queues) |")
    print("| --- | --- | --- | --- | --- | --- |")
    for r in rows:
        print(f"| {r['duration']} | {r['flows']} | {r['peak_rss_mb']:.1f} | {r['cpu_s']:.2f} | {r['engine_cpu_s']:.2f} | "
              f"{' '.join(r['digests'].values())} |")
    if len(rows) > 1:
        a, b = rows[0], rows[-1]
        per_flow = (b["peak_rss_mb"] - a["peak_rss_mb"]) * 1024 * 1024 / (b["flows"] - a["flows"])
        print(f"\npeak RSS per extra flow: {per_flow:.0f} B ({a['flows']} → {b['flows']} flows)")
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=2) + "\n")


if __name__ == "__main__":
    main()

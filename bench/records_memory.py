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
    .venv/bin/python bench/records_memory.py bench/scenarios/websearch-1g.toml 20s 300s --engine-only

`--engine-only` measures the engine's share instead: `_core.run` with a sink that drops every
chunk, the peak RSS read when the first chunk arrives (the engine has run; nothing of the records
exists yet on the Python side; pyarrow not imported).
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
    }


ENGINE_ONLY = r"""
import json, resource, sys
import iwlab
from iwlab import _core
sc = iwlab.load(sys.argv[1], sets=[f"duration={sys.argv[2]}"])
peak = []
def sink(name, columns):
    peak.append(peak[0] if peak else resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
out = _core.run(sc.to_json(), "json", None, None, None, False, sink)
print(json.dumps({"flows": out["summary"]["flows"], "engine_peak_mb": peak[0] / 1024}))
"""


def engine_only(scenario: str, durations: list[str]) -> None:
    rows = [json.loads(subprocess.run([sys.executable, "-c", ENGINE_ONLY, scenario, d], check=True,
                                      capture_output=True, text=True).stdout) for d in durations]
    print("| duration | flows | engine peak RSS MB |")
    print("| --- | --- | --- |")
    for d, r in zip(durations, rows):
        print(f"| {d} | {r['flows']} | {r['engine_peak_mb']:.1f} |")
    a, b = rows[0], rows[-1]
    if len(rows) > 1:
        per_flow = (b["engine_peak_mb"] - a["engine_peak_mb"]) * 1024 * 1024 / (b["flows"] - a["flows"])
        print(f"\nengine peak RSS per extra flow: {per_flow:.0f} B")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("scenario")
    ap.add_argument("durations", nargs="+", help="simulated durations, e.g. 20s 100s 300s")
    ap.add_argument("--pythonpath", help="run the iwlab package found in this folder")
    ap.add_argument("--json", help="also write the rows to this file")
    ap.add_argument("--engine-only", action="store_true", help="the engine's peak alone (see above)")
    args = ap.parse_args()
    if args.engine_only:
        engine_only(args.scenario, args.durations)
        return
    env = dict(os.environ)
    if args.pythonpath:
        env["PYTHONPATH"] = args.pythonpath
    rows = []
    with tempfile.TemporaryDirectory(prefix="iwg-records-") as tmp:
        for i, duration in enumerate(args.durations):
            rows.append(measure(args.scenario, duration, Path(tmp) / str(i), env))
        # Digests only once every child has run: they import pyarrow here, and a child's ru_maxrss
        # starts at this process's RSS when it is spawned (Linux keeps the high-water mark across
        # fork and exec), so a parent grown by pyarrow (~120 MB) would hide a smaller child.
        for i, r in enumerate(rows):
            r["digests"] = {t: digest(Path(tmp) / str(i) / f"{t}.parquet") for t in TABLES}
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

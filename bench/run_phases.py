"""Where the time of `iwlab run SCENARIO --out DIR` goes, phase by phase, in CPU seconds of the
whole process (all threads: `time.process_time`), which a loaded machine disturbs less than wall
time. Each repetition is a fresh process doing what the command does, with a clock between the
steps: interpreter start (`python -c pass`, measured apart), the command line (its imports and
the command tree typer reads, as `iwlab run` builds it),
loading and validating the scenario, the engine run (the core's own `cpu_seconds`), reading the
records off the engine and writing Parquet (`run` and `save` less the engine), printing the
summary. `--pythonpath DIR` runs the `iwlab` package found in DIR (an older tree, for the
before column).

    .venv/bin/python bench/run_phases.py bench/scenarios/bulk.toml --runs 5
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

CHILD = r"""
import json, sys, time
t0 = time.process_time()
import typer.main
from iwlab import cli
try:  # the app `iwlab run` builds: its own command module, or (older trees) the whole tree
    app = cli.build_one("run")
except AttributeError:
    app = cli.build()
typer.main.get_command(app)  # what calling the app does first: every command's signature read
from iwlab.cli.common import load_scenario
from iwlab.cli.run import _print_summary
t1 = time.process_time()
sc = load_scenario(sys.argv[1], None)
t2 = time.process_time()
from iwlab.api import run
try:
    r = run(sc, out=sys.argv[2])
except TypeError:  # a tree without streamed records: the tables are written by save
    r = run(sc)
r.save(sys.argv[2])
t3 = time.process_time()
import contextlib, io
with contextlib.redirect_stdout(io.StringIO()):
    _print_summary(r)
t4 = time.process_time()
print(json.dumps({"command line (imports, command tree)": t1 - t0, "scenario load + validation": t2 - t1,
                  "engine": r.summary["cpu_seconds"], "records + Parquet": t3 - t2 - r.summary["cpu_seconds"],
                  "summary print": t4 - t3}))
"""


def child_cpu(cmd: list[str], env: dict[str, str]) -> tuple[float, str]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    out = subprocess.run(cmd, check=True, capture_output=True, text=True, env=env).stdout
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("scenario")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--pythonpath", help="run the iwlab package found in this folder")
    args = ap.parse_args()
    env = dict(os.environ)
    if args.pythonpath:
        env["PYTHONPATH"] = args.pythonpath
    phases: dict[str, list[float]] = {}
    totals, starts = [], []
    with tempfile.TemporaryDirectory(prefix="iwg-phases-") as tmp:
        for i in range(args.runs + 1):  # the first run warms the page cache and is dropped
            start, _ = child_cpu([sys.executable, "-c", "pass"], env)
            total, out = child_cpu([sys.executable, "-c", CHILD, args.scenario, str(Path(tmp) / str(i))], env)
            if i == 0:
                continue
            starts.append(start)
            totals.append(total)
            for k, v in json.loads(out).items():
                phases.setdefault(k, []).append(v)
    med = statistics.median
    rows = [("interpreter start", med(starts))] + [(k, med(v)) for k, v in phases.items()]
    rows.append(("rest (exit, unaccounted)", med(totals) - sum(v for _, v in rows)))
    print(f"| phase | CPU s (median of {args.runs}) |")
    print("| --- | --- |")
    for k, v in rows:
        print(f"| {k} | {v:.3f} |")
    print(f"| **whole process** | **{med(totals):.3f}** |")


if __name__ == "__main__":
    main()

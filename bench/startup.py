"""Start-up times of the `iwlab` command line, hyperfine-style: each command
runs `--runs` times in a fresh process (after one warm-up run); prints the median and minimum
wall time and the median CPU time (user + system, less sensitive to a loaded machine) and, for
`iwlab run`, the engine's own time (summary.json `wall_seconds`) beside the whole process.
`--pythonpath DIR` runs the `iwlab` package found in DIR instead (a copy of an older tree, for
before/after figures with the same interpreter and extension).

    .venv/bin/python bench/startup.py --runs 10
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
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BENCH_A = str(ROOT / "bench" / "scenarios" / "bulk.toml")
# What the `iwlab` console script does.
CLI = "import sys; sys.argv[0] = 'iwlab'; from iwlab.cli import main; sys.exit(main())"


def timed(cmd: list[str], env: dict[str, str]) -> tuple[float, float]:
    """Wall and CPU seconds (user + system) of one run of `cmd`."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--pythonpath", help="run the iwlab package of this folder")
    args = ap.parse_args()
    env = dict(os.environ)
    if args.pythonpath:
        env["PYTHONPATH"] = args.pythonpath
    out = tempfile.mkdtemp(prefix="iwlab-startup-")
    py = [sys.executable]
    cases = {
        "python -c 'import iwlab'": py + ["-c", "import iwlab"],
        "iwlab --help": py + ["-c", CLI, "--help"],
        "iwlab presets": py + ["-c", CLI, "presets"],
        "iwlab validate bench/scenarios/bulk.toml": py + ["-c", CLI, "validate", BENCH_A],
        "iwlab run bench/scenarios/bulk.toml": py + ["-c", CLI, "run", BENCH_A, "--out", out],
    }
    print(f"load average before: {os.getloadavg()[0]:.1f}\n")
    print("| command | median wall s | min wall s | median CPU s | runs |\n| --- | --- | --- | --- | --- |")
    engine: list[float] = []
    engine_cpu: list[float] = []
    whole: list[tuple[float, float]] = []
    for name, cmd in cases.items():
        timed(cmd, env)  # warm-up: page cache, bytecode
        runs = [timed(cmd, env) for _ in range(args.runs)] if "run" not in name else []
        for _ in range(args.runs if "run" in name else 0):
            runs.append(timed(cmd, env))
            summary = json.loads((Path(out) / "summary.json").read_text())
            engine.append(summary["wall_seconds"])
            engine_cpu.append(summary["cpu_seconds"])
            whole.append(runs[-1])
        walls, cpus = [w for w, _ in runs], [c for _, c in runs]
        print(f"| `{name}` | {statistics.median(walls):.3f} | {min(walls):.3f} | {statistics.median(cpus):.3f} | {args.runs} |")
    over = [w - e for (w, _), e in zip(whole, engine)]
    over_cpu = [c - e for (_, c), e in zip(whole, engine_cpu)]
    print(f"\n`iwlab run` of bench A: engine {statistics.median(engine):.3f} s wall, {statistics.median(engine_cpu):.3f} s "
          f"CPU (medians); whole process minus engine: wall median {statistics.median(over):.3f} s (min {min(over):.3f}), "
          f"CPU median {statistics.median(over_cpu):.3f} s (min {min(over_cpu):.3f}); "
          f"load average after: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()

"""Bench A as whole processes, side by side: `iwlab run bench/scenarios/bulk.toml --out DIR`
(interpreter start, command line, scenario validation, engine, records, Parquet, summary,
exit) against ns-3's `bench/ns3/build/bulk --duration 60` (the same scenario, section "The
side-by-side benchmark"), alternated in fresh processes — iwlab first on odd repetitions, ns-3
first on even ones — with repetition r using iwlab seed r and ns-3 run r. Each process's wall
time (a monotonic clock around it) and CPU time (wait4(2)), and the load average before it;
the ratio of the medians, wall and CPU. `--pythonpath DIR` adds a third side, `iwlab run` of the
`iwlab` package found in DIR (an older tree with its extension: the before column), run beside
the other two in every repetition.

    .venv/bin/python bench/whole_process.py --reps 3 [--pythonpath /tmp/before/python]

`--no-ns3` leaves ns-3 out: many repetitions of before and after in the time of one ns-3 run.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CLI = "import sys; sys.argv[0] = 'iwlab'; from iwlab.entry import console_main; sys.exit(console_main())"  # the `iwlab` script


def timed(argv: list[str], env: dict[str, str]) -> dict[str, float]:
    load = os.getloadavg()[0]
    t = time.monotonic()
    child = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=ROOT, env=env)
    _, status, usage = os.wait4(child.pid, 0)
    wall = time.monotonic() - t
    if status != 0:
        raise SystemExit(f"{' '.join(argv)} failed:\n{child.stderr.read().decode() if child.stderr else ''}")
    return {"wall_s": wall, "cpu_s": usage.ru_utime + usage.ru_stime, "load": load}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--duration", type=float, default=60.0, help="simulated seconds (bulk.toml: 60)")
    ap.add_argument("--pythonpath", help="also run the iwlab package found in this folder (before)")
    ap.add_argument("--json", help="also write every run to this file")
    ap.add_argument("--no-ns3", action="store_true", help="run the iwlab sides only (no ratios)")
    args = ap.parse_args()
    env = dict(os.environ)
    before = dict(env, PYTHONPATH=args.pythonpath) if args.pythonpath else None
    runs: dict[str, list[dict[str, float]]] = {"iwlab run": []} if args.no_ns3 else {"iwlab run": [], "ns-3": []}
    if before:
        runs = {"iwlab run (before)": [], **runs}
    with tempfile.TemporaryDirectory(prefix="iwlab-whole-") as tmp:
        for r in range(1, args.reps + 1):
            # `--set` reads its values against the pydantic models (0.2 s more to import): only
            # when the duration is not the scenario's own.
            sets = [] if args.duration == 60 else ["--set", f"duration={args.duration:g}s"]
            iw = [sys.executable, "-c", CLI, "run", "bench/scenarios/bulk.toml", "--seed", str(r), *sets,
                  "--out", f"{tmp}/{r}"]
            ns3 = ["bench/ns3/build/bulk", "--duration", f"{args.duration:g}", "--run", str(r), "--weakEs", "1"]
            sides = [("iwlab run", iw, env)] + ([] if args.no_ns3 else [("ns-3", ns3, env)])
            if before:
                sides.insert(0, ("iwlab run (before)", iw[:-1] + [f"{tmp}/b{r}"], before))
            for name, argv, e in (sides if r % 2 else sides[::-1]):
                runs[name].append(timed(argv, e))
                print(f"rep {r} {name:9} wall {runs[name][-1]['wall_s']:8.3f} s  cpu {runs[name][-1]['cpu_s']:8.3f} s  "
                      f"load {runs[name][-1]['load']:.1f}", file=sys.stderr)
    med = {n: {k: statistics.median(x[k] for x in rs) for k in ("wall_s", "cpu_s")} for n, rs in runs.items()}
    loads = [x["load"] for rs in runs.values() for x in rs]
    print(f"| bench A, whole process ({args.reps} reps each, load {min(loads):.1f}–{max(loads):.1f}) "
          "| wall median s | CPU median s |")
    print("| --- | ---: | ---: |")
    for n, m in med.items():
        print(f"| {n} | {m['wall_s']:.3f} | {m['cpu_s']:.3f} |")
    for n in runs:
        if n != "ns-3" and "ns-3" in runs:
            print(f"| ratio ns-3 / {n} | {med['ns-3']['wall_s'] / med[n]['wall_s']:.0f}× | "
                  f"{med['ns-3']['cpu_s'] / med[n]['cpu_s']:.0f}× |")
    if args.json:
        Path(args.json).write_text(json.dumps({"runs": runs, "medians": med}, indent=2) + "\n")


if __name__ == "__main__":
    main()

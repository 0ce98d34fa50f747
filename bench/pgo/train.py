"""Training run of the profile-guided build (bench/README.md, "Fourth pass: profile-guided
build"): runs an instrumented engine on a short, fixed set of scenarios so that LLVM learns
which branches and calls are hot. Each entry is a scenario a user runs — the benchmarks and the
studies' presets — cut to a few simulated seconds: the profile records how often each branch is
taken, not for how long, so a short run of each teaches as much as a long one.

    python bench/pgo/train.py                          # through `iwlab run --out` (the extension)
    python bench/pgo/train.py --run-scenario BIN       # through the core's run_scenario example

Deterministic: fixed seeds, one engine thread, so the merged profile is the same run after run.
The `iwlab run` entry is `main`, not the console script's `console_main`, whose `os._exit`
would skip the exit handler that writes the instrumented library's counters."""

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# (scenario file or packaged preset, overrides): what each one exercises.
TRAINING = [
    ("bench/scenarios/bulk.toml", ["duration=10s"]),         # A: 100 NewReno bulk flows, 100 Mb/s
    ("bench/scenarios/short-flows.toml", ["duration=60s"]),  # B: Poisson short flows, IW 10
    ("bench/scenarios/bulk-bdp.toml", ["duration=1s"]),      # D: CUBIC + SACK, 1 Gb/s, large BDP
    ("bench/scenarios/websearch-1g.toml", ["duration=2s"]),  # web-search sizes, CUBIC + SACK, 1 Gb/s
    ("rfc2415", ["duration=120s"]),                          # HTTP/1.0 pages, IW 1, 1.5 Mb/s
    ("congested-links", ["duration=120s"]),                  # linux profile, UDP background
    ("iw-function", ["duration=60s"]),                       # size-based IW, web-search sizes
    ("rfc6928", ["duration=60s"]),                           # linux profile, per-host rates and RTTs
]

MAIN = "import sys; from iwlab.cli import main; sys.argv[0] = 'iwlab'; main()"


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--run-scenario", metavar="BIN", help="train this run_scenario binary instead of the extension")
    args = p.parse_args()
    with tempfile.TemporaryDirectory(prefix="iwlab-pgo-") as tmp:
        for i, (source, sets) in enumerate(TRAINING):
            path = str(ROOT / source) if source.endswith(".toml") else source
            t = time.perf_counter()
            if args.run_scenario:
                from iwlab.scenario_io import load
                scenario_json = Path(tmp) / f"{i}.json"
                scenario_json.write_text(load(path, sets).to_json())
                cmd = [args.run_scenario, str(scenario_json)]
            else:
                cmd = [sys.executable, "-c", MAIN, "run", path, "--out", f"{tmp}/{i}"]
                for s in sets:
                    cmd += ["--set", s]
            done = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
            if done.returncode != 0:
                sys.exit(f"pgo training: {source} failed (exit {done.returncode}): {done.stderr.strip()[-500:]}")
            print(f"pgo training: {source} {' '.join(sets)}: {time.perf_counter() - t:.1f} s", flush=True)


if __name__ == "__main__":
    main()

"""CPU-time A/B of engine builds on scenario files (bench/README.md "Per-event cost and window
size"): runs `run_scenario` binaries alternately, round by round (the order rotates each round),
and reads each child's user + system CPU time and peak RSS from wait4(2), so that figures stay
comparable on a shared, loaded machine. Appends CSV rows; `--table` prints the Markdown table.

    python3 bench/cpu_ab.py --runs 7 --out ab.csv \
        --builds base=/tmp/run_scenario.base new=target/release/examples/run_scenario -- /tmp/ws/*.toml
    python3 bench/cpu_ab.py --table ab.csv
"""

import argparse
import collections
import csv
import os
import re
import statistics
import subprocess
import sys
from pathlib import Path

FIELDS = ["run", "build", "scenario", "events", "link_tx", "flows", "flows_completed", "cpu_s", "wall_engine_s",
          "maxrss_kb", "load1"]


def run_once(binary: str, scenario: str) -> dict:
    p = subprocess.Popen([binary, scenario], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    text = p.stdout.read()
    _, status, ru = os.wait4(p.pid, 0)
    if status != 0:
        sys.exit(f"{binary} {scenario} failed:\n{text}")

    def field(name: str) -> str:  # run_scenario prints the Summary with {:#?}
        m = re.search(rf"^\s+{name}: (\d+),", text, re.M)
        return m.group(1) if m else ""  # older builds lack link_transmissions

    wall = re.search(r"^wall ([\d.]+) s", text, re.M)
    return {"events": field("events"), "link_tx": field("link_transmissions"), "flows": field("flows"),
            "flows_completed": field("flows_completed"), "cpu_s": f"{ru.ru_utime + ru.ru_stime:.4f}",
            "wall_engine_s": wall.group(1) if wall else "", "maxrss_kb": ru.ru_maxrss,
            "load1": f"{os.getloadavg()[0]:.2f}"}


def measure(args) -> None:
    builds = [b.split("=", 1) for b in args.builds]
    new = not Path(args.out).exists()
    with open(args.out, "a", newline="") as f:
        w = csv.DictWriter(f, FIELDS)
        if new:
            w.writeheader()
        for r in range(1, args.runs + 1):
            for scenario in args.scenarios:
                k = (r - 1) % len(builds)
                order = builds[k:] + builds[:k]
                for name, binary in order if r % 2 else order[::-1]:
                    row = run_once(binary, scenario)
                    w.writerow({"run": r, "build": name, "scenario": Path(scenario).stem, **row})
                    f.flush()


def table(path: str) -> None:
    rows = list(csv.DictReader(open(path)))
    by = collections.defaultdict(list)
    for r in rows:
        by[(r["scenario"], r["build"])].append(r)
    print("| scenario | build | events / CPU s (min–max) | link tx / CPU s | peak RSS | runs | spread |")
    print("|---|---|---|---|---|---|---|")
    for (scenario, build), v in by.items():
        ev = [int(r["events"]) / float(r["cpu_s"]) / 1e6 for r in v]
        lt = [int(r["link_tx"]) / float(r["cpu_s"]) / 1e6 for r in v if r["link_tx"]]
        rss = [int(r["maxrss_kb"]) / 1024 for r in v]
        med = statistics.median(ev)
        answers = {(r["events"], r["flows_completed"]) for r in v}
        assert len(answers) == 1, f"{scenario}/{build}: runs differ {answers}"
        print(f"| {scenario} | {build} | {med:.2f} M ({min(ev):.2f}–{max(ev):.2f}) | "
              f"{statistics.median(lt):.2f} M | {max(rss):.0f} MB | {len(v)} | "
              f"{100 * (max(ev) - min(ev)) / med:.1f} % |" if lt else
              f"| {scenario} | {build} | {med:.2f} M ({min(ev):.2f}–{max(ev):.2f}) | — | {max(rss):.0f} MB | "
              f"{len(v)} | {100 * (max(ev) - min(ev)) / med:.1f} % |")
    loads = [float(r["load1"]) for r in rows]
    print(f"\nload average (1 min) during the runs: {min(loads):.1f}–{max(loads):.1f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--out", default="cpu_ab.csv")
    ap.add_argument("--table", metavar="CSV", help="print the Markdown table of a CSV and exit")
    ap.add_argument("--builds", nargs="+", default=[], metavar="NAME=PATH", help="run_scenario binaries")
    ap.add_argument("scenarios", nargs="*", help="scenario files")
    args = ap.parse_args()
    if args.table:
        table(args.table)
        return
    if not args.builds or not args.scenarios:
        ap.error("give --builds NAME=PATH ... -- FILE ...")
    measure(args)


if __name__ == "__main__":
    main()

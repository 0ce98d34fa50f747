#!/usr/bin/env python3
"""The speed table of seven scenarios as a user meets it: `iwlab run FILE` as a whole process (bench/README.md,
"Per-event cost and window size").

    .venv/bin/python bench/cli_table.py [--runs 3] [--dir /tmp/ws]

Writes the seven scenario variants (websearch-1g with CUBIC + SACK, Reno + SACK, NewReno
without SACK; CUBIC + SACK at 100 Mb/s for 50 / 100 / 200 s; bench/scenarios/bulk.toml) into
--dir, runs `iwlab run` on each --runs times (round-robin), and prints a Markdown table:
events and link transmissions per second from summary.json (engine wall and CPU time), the
whole process's wall time and peak RSS from wait4(2). Medians over the runs.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
IWLAB = ROOT / ".venv" / "bin" / "iwlab"


def variants(base: str) -> dict[str, str]:
    """Scenario texts by name, derived from websearch-1g.toml as the README's sed commands do."""
    reno = re.sub(r'(?m)^cc = "cubic"', 'cc = "reno"', base)
    nosack = re.sub(r'(?m)^sack = true', "sack = false", reno)
    nosack = re.sub(r'(?m)^recovery = "sack"', 'recovery = "newreno"', nosack)
    out = {"cubic-sack": base, "reno-sack": reno, "newreno-nosack": nosack}
    for d in (50, 100, 200):
        t = re.sub(r'(?m)^rate = "1Gbps"', 'rate = "100Mbps"', base)
        out[f"cubic-sack-100m-{d}s"] = re.sub(r'(?m)^duration = "100s"', f'duration = "{d}s"', t)
    out["bulk"] = (ROOT / "bench" / "scenarios" / "bulk.toml").read_text()
    for name, text in out.items():
        if name != "cubic-sack" and name != "bulk" and text == base:
            raise SystemExit(f"websearch-1g.toml changed shape: the {name} variant could not be made")
    return out


def run_once(path: Path, out: Path) -> dict:
    t0 = time.perf_counter()
    p = subprocess.Popen([str(IWLAB), "run", str(path), "-o", str(out)],
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    err = p.stderr.read().decode(errors="replace")
    _, status, ru = os.wait4(p.pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"iwlab run {path} failed:\n{err[-2000:]}")
    s = json.loads((out / "summary.json").read_text())
    return dict(proc_wall=time.perf_counter() - t0, rss_mb=ru.ru_maxrss / 1024, eng_wall=s["wall_seconds"],
                eng_cpu=s["cpu_seconds"], events=s["events"], ltx=s["link_transmissions"], flows=s["flows"])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--dir", type=Path, default=Path("/tmp/ws"))
    a = ap.parse_args()
    if a.runs < 1:
        raise SystemExit("--runs must be >= 1")
    a.dir.mkdir(parents=True, exist_ok=True)
    files = {}
    for name, text in variants((ROOT / "bench" / "scenarios" / "websearch-1g.toml").read_text()).items():
        files[name] = a.dir / f"{name}.toml"
        files[name].write_text(text)
    res: dict[str, list[dict]] = {n: [] for n in files}
    for rep in range(a.runs):
        for name, path in files.items():
            r = run_once(path, a.dir / f"out-{name}")
            res[name].append(r)
            print(f"{name} run {rep + 1}: engine {r['eng_wall']:.2f} s, process {r['proc_wall']:.2f} s", file=sys.stderr)
    print("| scenario | flows | events | events/s (engine wall) | events per engine CPU s | link tx/s (engine wall) "
          "| `iwlab run` wall s (whole process) | peak RSS MB (whole process) | runs |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for name, rs in res.items():
        med = lambda k: statistics.median(r[k] for r in rs)  # noqa: E731
        ev = rs[0]["events"]
        if any(r["events"] != ev for r in rs):
            raise SystemExit(f"{name}: runs differ in events (determinism broken)")
        print(f"| {name} | {rs[0]['flows']} | {ev / 1e6:.1f} M | {ev / med('eng_wall') / 1e6:.2f} M "
              f"| {ev / med('eng_cpu') / 1e6:.2f} M | {rs[0]['ltx'] / med('eng_wall') / 1e6:.2f} M "
              f"| {med('proc_wall'):.2f} | {med('rss_mb'):.0f} | {len(rs)} |")


if __name__ == "__main__":
    main()

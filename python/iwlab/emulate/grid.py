"""The contested grid: a stored kernel reference over sizes x IW x backgrounds x arrival patterns.

`data/kernel/grid.toml` names the cells (background x arrivals x buffer); each cell is one
scenario whose short-flow client draws its (size, IW) combinations from a `mix`, so IW 3 and
IW 10 meet the same background. The kernel runner fills the grid in units — one cell, one seed,
`run.unit_seconds` of emulation — each stored atomically under `data/kernel/grid/CELL/seed-N/`
(per-flow Parquet + a JSON record of the run), so a killed runner loses at most the units in
progress and a new one skips what is stored:

    nice -n -10 python -m iwlab.emulate.grid run --grid data/kernel/grid.toml --parallel 3
    python -m iwlab.emulate.grid status --grid data/kernel/grid.toml

Which unit comes next: first every cell once, in the order of `[[slices]]`; then the unfinished
cell whose widest per-size IW10/IW3 95 % CI is widest. A cell is done when every size's CI
half-width is within `run.ci_halfwidth`, or at `run.flow_cap` short flows.
"""

from __future__ import annotations

import argparse
import copy
import datetime as dt
import json
import os
import platform
import shutil
import subprocess
import sys
import time
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from iwlab.emulate.units import seconds

SHORT_APP = "client"
CLIENT_HOST = "left-0"
FLOW_COLUMNS = ["app", "app_kind", "start", "request_bytes", "response_bytes", "iw_segments", "server_iw", "completed",
                "completion", "first_byte", "last_byte", "data_segments", "retransmits", "timeouts", "in_warmup"]
SYSCTLS = ["net.core.default_qdisc", "kernel.sched_rt_runtime_us", "net.ipv4.tcp_congestion_control"]


class GridError(ValueError):
    """A bad grid file: names the field, the value and what is allowed."""


@dataclass(frozen=True)
class Cell:
    background: str
    arrivals: str
    buffer: int

    @property
    def name(self) -> str:
        return f"{self.arrivals}-b{self.buffer}-{self.background}"


class Grid:
    def __init__(self, data: dict[str, Any], path: Path):
        self.data, self.path = data, path
        for key in ("path", "tcp", "flows", "backgrounds", "arrivals", "slices", "run"):
            if key not in data:
                raise GridError(f"{path}: [{key}] is missing")
        self.sizes = [int(s) for s in data["flows"]["sizes"]]
        self.iws = [int(w) for w in data["flows"]["iws"]]
        if sorted(self.iws) != [3, 10]:
            raise GridError(f"{path}: flows.iws = {self.iws}: the grid compares IW 3 with IW 10, allowed: [3, 10]")
        for i, sl in enumerate(data["slices"]):
            if sl.get("arrivals") not in data["arrivals"]:
                raise GridError(f"{path}: slices[{i}].arrivals = {sl.get('arrivals')!r}; allowed: "
                                + ", ".join(data["arrivals"]))
            if not isinstance(sl.get("buffer"), int) or sl["buffer"] < 1:
                raise GridError(f"{path}: slices[{i}].buffer = {sl.get('buffer')!r}; allowed: a packet count >= 1")
        for name, bg in data["backgrounds"].items():
            bad = set(bg) - {"udp", "bulk"}
            if bad:
                raise GridError(f"{path}: backgrounds.{name}: unknown field(s) {sorted(bad)}; allowed: udp, bulk")
        run = data["run"]
        self.unit_seconds = float(run["unit_seconds"])
        self.warmup = float(run.get("warmup_seconds", 5))
        self.halfwidth = float(run["ci_halfwidth"])
        self.flow_cap = int(run["flow_cap"])
        self.min_units = int(run.get("min_units", 1))

    @classmethod
    def load(cls, path: str | Path) -> "Grid":
        path = Path(path)
        try:
            data = tomllib.loads(path.read_text())
        except (OSError, tomllib.TOMLDecodeError) as e:
            raise GridError(f"{path}: {e}") from None
        return cls(data, path)

    @property
    def store(self) -> Path:
        """Stored kernel units: next to the grid file, in a directory named like it (grid.toml → grid/)."""
        return self.path.with_suffix("")

    def cells(self) -> list[Cell]:
        """Every cell, in the order the runner fills them (slice by slice)."""
        return [Cell(bg, sl["arrivals"], int(sl["buffer"])) for sl in self.data["slices"] for bg in self.data["backgrounds"]]

    def cell(self, name: str) -> Cell:
        for c in self.cells():
            if c.name == name:
                return c
        raise GridError(f"cell {name!r}: no such cell; cells are {', '.join(c.name for c in self.cells())}")

    def mss(self) -> int:
        return 1448

    def flight_within(self, cell: Cell) -> float:
        """The latest a first flight leaves after the SYN-ACK: base RTT + a full buffer of
        1500-byte packets + 20 ms (flight_loss.FIRST_FLIGHT_WITHIN_S for 25 packets)."""
        from iwlab.emulate.units import rate_bps

        p = self.data["path"]
        return 2 * seconds(p["one_way"]) + cell.buffer * 1500 * 8 / rate_bps(p["rate"]) + 0.02

    # ---- the scenario of a cell --------------------------------------------------------------
    def scenario_data(self, cell: Cell, duration: float | None = None, arrivals: dict[str, Any] | None = None) -> dict[str, Any]:
        p, fl = self.data["path"], self.data["flows"]
        one_way, acc = seconds(p["one_way"]), seconds(p["access_delay"])
        access = {"rate": p["access_rate"], "delay": p["access_delay"]}
        bg = self.data["backgrounds"][cell.background]
        left = [{"name": "clients", "count": 1, "access": access}]
        right = [{"name": "servers", "count": 1, "access": access}]
        apps: list[dict[str, Any]] = [{
            "kind": "short-flows", "name": SHORT_APP, "clients": "clients", "servers": "servers", "count": 1,
            "start": "1s", "request": fl["request"],
            "mix": [{"response": f"{s}seg", "server_iw": f"iw{w}"} for s in self.sizes for w in self.iws],
            "mix_order": fl.get("mix_order", "permuted-blocks"),
            "arrivals": copy.deepcopy(arrivals if arrivals is not None else self.data["arrivals"][cell.arrivals])}]
        if apps[0]["arrivals"]["kind"] == "replay":
            # A replay file carries each flow's start, size and IW (docs/scenario-format.md): no mix,
            # and its times count from the run's start.
            for k in ("mix", "mix_order"):
                apps[0].pop(k)
            apps[0]["start"] = "0s"
        if bg.get("udp"):
            left.append({"name": "udp-sinks", "count": 1, "access": access})
            right.append({"name": "udp-sources", "count": 1, "access": access})
            apps.append({"kind": "udp", "name": "udp-background", "clients": "udp-sinks", "servers": "udp-sources",
                         "count": 1, "rate": bg["udp"], "payload": "1472B", "poisson": False})
        if bg.get("bulk"):
            n = int(bg["bulk"])
            left.append({"name": "bulk-sinks", "count": n, "access": access})
            right.append({"name": "bulk-sources", "count": n, "access": access})
            apps.append({"kind": "bulk", "name": "bulk-background", "clients": "bulk-sinks", "servers": "bulk-sources",
                         "count": n, "mapping": "distinct", "server_iw": "iw10", "client_iw": "iw10", "start": "0s"})
        dur = self.unit_seconds if duration is None else duration
        return {
            "name": f"grid-{cell.name}",
            "description": f"contested grid cell {cell.name} (data/kernel/grid.toml)",
            "duration": f"{dur:g}s", "warmup": f"{self.warmup:g}s",
            "topology": {"kind": "dumbbell", "bottleneck": {
                "rate": p["rate"], "delay": f"{round((one_way - 2 * acc) * 1e6)}us",
                "queue": {"kind": "drop-tail", "limit": f"{cell.buffer}pkt"}}, "left": left, "right": right},
            "tcp": dict(self.data["tcp"]),
            "iw": {"default": "iw10", "policies": {f"iw{w}": {"kind": "fixed", "segments": w} for w in self.iws}},
            "apps": apps,
        }

    def scenario(self, cell: Cell, duration: float | None = None, arrivals: dict[str, Any] | None = None,
                 engine: bool = True):
        """The cell's Scenario. `engine=False` (the kernel side only) accepts the short-flow app
        even where the engine does not know its arrival model yet: the rest is validated, the
        app is read by the emulator's workload as written."""
        from iwlab.scenario import Scenario
        from iwlab.scenario_error import ScenarioError

        data = self.scenario_data(cell, duration, arrivals)
        try:
            return Scenario.from_data(data, str(self.path))
        except ScenarioError:
            if engine:
                raise
        stand_in = copy.deepcopy(data)
        stand_in["apps"][0] = {k: v for k, v in stand_in["apps"][0].items() if k not in ("mix", "mix_order", "arrivals")}
        stand_in["apps"][0].update(response="10seg", server_iw="iw10", arrivals={"kind": "periodic", "period": "2s"})
        norm = Scenario.from_data(stand_in, str(self.path)).data
        norm["apps"][0] = data["apps"][0]
        return Scenario(norm, str(self.path))


# ---- stored units ------------------------------------------------------------------------------
def unit_dir(grid: Grid, cell: Cell, seed: int) -> Path:
    return grid.store / cell.name / f"seed-{seed}"


def stored_seeds(grid: Grid, cell: Cell) -> list[int]:
    d = grid.store / cell.name
    if not d.exists():
        return []
    return sorted(int(p.name[5:]) for p in d.glob("seed-*") if (p / "run.json").exists())


def load_flows(grid: Grid, cell: Cell) -> pd.DataFrame:
    """The stored kernel flows of a cell (every seed), warm-up excluded."""
    parts = []
    for s in stored_seeds(grid, cell):
        f = pd.read_parquet(unit_dir(grid, cell, s) / "flows.parquet")
        if "server_iw" not in f:  # units stored before the records named the server's policy
            f = f.rename(columns={"iw_policy": "server_iw"})
        parts.append(f.assign(seed=s))
    if not parts:
        return pd.DataFrame(columns=[*FLOW_COLUMNS, "seed"])
    f = pd.concat(parts, ignore_index=True)
    return f[~f["in_warmup"].astype(bool)]


def short_flows(f: pd.DataFrame) -> pd.DataFrame:
    return f[f["app_kind"] == "short"]


def ratio_ci(iw3: np.ndarray, iw10: np.ndarray, seed: int = 0, n: int = 1000) -> tuple[float, float]:
    """95 % bootstrap interval of mean(IW 10) / mean(IW 3), resampling flows."""
    if len(iw3) < 2 or len(iw10) < 2:
        return float("nan"), float("nan")
    rng = np.random.default_rng(seed)
    a = rng.choice(iw10, (n, len(iw10))).mean(axis=1)
    b = rng.choice(iw3, (n, len(iw3))).mean(axis=1)
    r = a / b
    return float(np.quantile(r, 0.025)), float(np.quantile(r, 0.975))


def per_size(f: pd.DataFrame, mss: int, sizes: list[int]) -> pd.DataFrame:
    """Per size: mean completion per IW (completed flows), the IW10/IW3 ratio and its 95 % CI,
    RTOs per flow and the flows counted. A flow that did not complete counts as not measured."""
    rows = []
    short = short_flows(f)
    for s in sizes:
        g = short[short["response_bytes"] == s * mss]
        done = g[g["completed"].astype(bool)]
        c3 = done.loc[done["iw_segments"] == 3, "completion"].to_numpy(dtype=float)
        c10 = done.loc[done["iw_segments"] == 10, "completion"].to_numpy(dtype=float)
        lo, hi = ratio_ci(c3, c10)
        ratio = c10.mean() / c3.mean() if len(c3) and len(c10) else float("nan")
        rows.append({"size": s, "n3": len(c3), "n10": len(c10), "iw3_mean": c3.mean() if len(c3) else float("nan"),
                     "iw10_mean": c10.mean() if len(c10) else float("nan"), "ratio": ratio, "ratio_lo": lo,
                     "ratio_hi": hi, "incomplete": int(len(g) - len(done)),
                     "rto_per_flow": float(g["timeouts"].mean()) if len(g) else float("nan"),
                     "ff_loss_share": float((g["ff_lost"] > 0).mean()) if "ff_lost" in g and g["ff_lost"].notna().any()
                     else float("nan")})
    return pd.DataFrame(rows)


def cell_state(grid: Grid, cell: Cell) -> dict[str, Any]:
    """Units stored, short flows, widest CI half-width over sizes, and whether the cell is done."""
    f = load_flows(grid, cell)
    seeds = stored_seeds(grid, cell)
    n = int(len(short_flows(f)))
    if not seeds:
        return {"cell": cell.name, "units": 0, "flows": 0, "widest": float("inf"), "done": False}
    t = per_size(f, grid.mss(), grid.sizes)
    half = ((t["ratio_hi"] - t["ratio_lo"]) / 2).fillna(float("inf"))
    widest = float(half.max())
    return {"cell": cell.name, "units": len(seeds), "flows": n, "widest": widest,
            "done": (widest <= grid.halfwidth and len(seeds) >= grid.min_units) or n >= grid.flow_cap}


# ---- one unit on the kernel --------------------------------------------------------------------
def first_flight_losses(flows: pd.DataFrame, capture: Path, mss: int, within: float,
                        world: str = "kernel") -> pd.Series:
    """Per short flow (index of `flows`): first-flight segments (and lone FIN) that did not cross
    the bottleneck, read from the client's capture or the simulator's trace
    (flight_loss.first_flight); NaN for a flow without its connection in the capture."""
    from iwlab.emulate import flight_loss, pcap

    out = pd.Series(np.nan, index=flows.index, dtype=float)
    short = flows[flows["app_kind"] == "short"].sort_values("start", kind="stable")
    conns = sorted(flight_loss.by_client(pcap.read(capture)).values(), key=lambda c: c["syn"])
    if not conns or not len(short):
        return out
    # The capture's clock and the records' differ by a constant: pair each flow with the SYN
    # nearest to its start shifted by the offset that pairs the most flows within 20 ms (one of
    # the first SYNs with one of the first flows; robust to a connection missing on either side).
    syn = np.array([c["syn"] for c in conns])
    starts = short["start"].to_numpy(dtype=float)

    def matched(off: float) -> int:
        return int((np.abs(syn[np.clip(np.searchsorted(syn, starts + off), 0, len(syn) - 1)] - starts - off) < 0.02).sum()
                   + (np.abs(syn[np.clip(np.searchsorted(syn, starts + off) - 1, 0, len(syn) - 1)] - starts - off) < 0.02).sum())

    offset = max((syn[i] - starts[j] for i in range(min(3, len(syn))) for j in range(min(3, len(starts)))), key=matched)
    for (idx, f), t0 in zip(short.iterrows(), starts + offset):
        j = int(np.argmin(np.abs(syn - t0)))
        if abs(syn[j] - t0) > 0.02:
            continue
        c = conns[j]
        iw = int(f["iw_segments"]) if pd.notna(f["iw_segments"]) else 0
        segs = -(-int(f["response_bytes"]) // mss)
        got = flight_loss.first_flight(c["server"], mss, segs, iw, world, within)
        if got is not None:
            out[idx] = len(flight_loss.expected(segs, iw) - got)
    return out


def sysctl_values(names: list[str]) -> dict[str, str | None]:
    out: dict[str, str | None] = {}
    for n in names:
        try:
            out[n] = Path("/proc/sys/" + n.replace(".", "/")).read_text().strip()
        except OSError:
            out[n] = None
    return out


def run_unit(grid: Grid, cell: Cell, seed: int, rt_priority: int | None = 50) -> Path:
    """Emulates one unit and stores it atomically (temp dir, then rename)."""
    from iwlab.emulate.plan import build_plan
    from iwlab.emulate.run import emulate

    final = unit_dir(grid, cell, seed)
    tmp = final.with_name(f".tmp-{final.name}-{os.getpid()}")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    sc = grid.scenario(cell, engine=False)
    loads: list[float] = [os.getloadavg()[0]]
    started = dt.datetime.now(dt.timezone.utc)
    import threading

    stop = threading.Event()

    def sample_load() -> None:
        while not stop.wait(15):
            loads.append(os.getloadavg()[0])

    th = threading.Thread(target=sample_load, daemon=True)
    th.start()
    try:
        res = emulate(sc, seed=seed, replay=False, capture=[CLIENT_HOST], out=tmp / "raw", relay_rt=rt_priority,
                      save=False)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)  # a failed unit leaves nothing the next run must skip
        raise
    finally:
        stop.set()
    loads.append(os.getloadavg()[0])
    flows = res.flows.copy()
    cap = tmp / "raw" / f"capture-{CLIENT_HOST}.pcap"
    flows["ff_lost"] = first_flight_losses(flows, cap, grid.mss(), grid.flight_within(cell)) if cap.exists() else np.nan
    flows = flows[[*FLOW_COLUMNS, "ff_lost"]]
    flows.to_parquet(tmp / "flows.parquet", index=False)
    shutil.rmtree(tmp / "raw", ignore_errors=True)
    plan = build_plan(sc, seed=seed, replay=False, pid=1)
    s = res.summary
    record = {
        "cell": cell.name, "seed": seed, "grid": str(grid.path),
        "command": " ".join([sys.executable, "-m", "iwlab.emulate.grid", *sys.argv[1:]]),
        "start": started.isoformat(timespec="seconds"),
        "end": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        "kernel": platform.release(), "duration": s["duration"], "warmup": s["warmup"],
        "load_average": {"min": min(loads), "max": max(loads), "mean": float(np.mean(loads)), "samples": loads},
        "relay": {"rt_priority": rt_priority, "lateness_p99_us": s["relay_lateness_p99_us"],
                  "cpu_seconds": s["cpu_seconds"], "links": [dict(tun=d.tun, rate_bps=d.rate_bps, delay=d.delay,
                                                                  queue=d.queue) for d in (plan.forward, plan.reverse)]},
        "namespace_sysctls": plan.kernel.sysctls, "host_sysctls": sysctl_values(SYSCTLS),
        "congestion_control": s["congestion_control"], "flows": s["flows"], "flows_completed": s["flows_completed"],
        "packets_dropped": s["packets_dropped"], "notes": s["notes"], "agent_errors": s["agent_errors"],
        "scenario": sc.data,
    }
    (tmp / "run.json").write_text(json.dumps(record, indent=1, default=str))
    final.parent.mkdir(parents=True, exist_ok=True)
    if final.exists():
        shutil.rmtree(tmp)
        return final
    os.rename(tmp, final)
    return final


# ---- the scheduler -----------------------------------------------------------------------------
def in_progress(grid: Grid) -> dict[str, list[int]]:
    """Cells with a unit being written by a live process (any runner): cell → seeds."""
    out: dict[str, list[int]] = {}
    for d in grid.store.glob("*/.tmp-seed-*-*") if grid.store.exists() else []:
        seed, pid = d.name[len(".tmp-seed-"):].rsplit("-", 1)
        if Path(f"/proc/{pid}").exists():
            out.setdefault(d.parent.name, []).append(int(seed))
    return out


def next_units(grid: Grid, busy: set[str], k: int) -> list[tuple[Cell, int]]:
    """Up to `k` (cell, seed) units to run now, none in a cell already running (here or in
    another runner): first every never-measured cell in slice order, then cells with fewer units
    than `min_units` (a cell whose one seed looks narrow is still one queue's history), then the
    cells with the widest CI."""
    live = in_progress(grid)
    busy = set(busy) | set(live)
    states = [(c, cell_state(grid, c)) for c in grid.cells()]
    todo = [(c, st) for c, st in states if not st["done"] and c.name not in busy]
    fresh = [(c, st) for c, st in todo if st["units"] == 0]
    few = [(c, st) for c, st in todo if 0 < st["units"] < grid.min_units]
    rest = sorted((x for x in todo if x[1]["units"] >= grid.min_units), key=lambda x: -x[1]["widest"])
    out = []
    for c, _ in [*fresh, *few, *rest][:k]:
        seeds = stored_seeds(grid, c) + live.get(c.name, [])
        out.append((c, max(seeds, default=0) + 1))
    return out


#: Units failing one after another mean the installation is broken (e.g. a stale extension).
MAX_FAILURES_IN_A_ROW = 3


def run(grid: Grid, parallel: int, log: Path | None, max_units: int | None = None,
        max_load: float | None = None) -> None:
    """Keeps `parallel` units running (each in its own process) until every cell is done."""
    running: dict[str, tuple[subprocess.Popen, Cell, int, float]] = {}
    started = 0
    failed_in_a_row = 0
    while True:
        for name, (p, c, s, t0) in list(running.items()):
            if p.poll() is not None:
                failed_in_a_row = failed_in_a_row + 1 if p.returncode else 0
                print(f"{dt.datetime.now(dt.timezone.utc):%H:%M:%S} {c.name} seed {s}: "
                      f"{'stored' if p.returncode == 0 else f'FAILED ({p.returncode})'} after {time.time() - t0:.0f} s",
                      flush=True)
                del running[name]
        if failed_in_a_row >= MAX_FAILURES_IN_A_ROW:  # a broken install, not a cell: stop, don't spin
            for p, *_ in running.values():
                p.wait()
            raise SystemExit(f"grid run: {failed_in_a_row} units failed in a row; their logs say why"
                             + (f" ({log.parent}/{log.stem}-CELL-SEED.log)" if log else " (rerun with --log)"))
        # Loaded testbed units lose fewer first-flight segments than quiet ones (docs/kernel-grid.md,
        # "The testbed's load"): with `max_load`, a unit starts only while the machine is quiet.
        quiet = max_load is None or os.getloadavg()[0] <= max_load
        if quiet and (max_units is None or started < max_units):
            room = parallel - len(set(running) | set(in_progress(grid)))  # other runners' units count too
            if max_units is not None:
                room = min(room, max_units - started)
            for c, s in next_units(grid, set(running), room) if room > 0 else []:
                cmd = [sys.executable, "-m", "iwlab.emulate.grid", "unit", "--grid", str(grid.path), "--cell", c.name,
                       "--seed", str(s)]
                out = open(log.with_name(f"{log.stem}-{c.name}-{s}.log"), "w") if log else subprocess.DEVNULL
                running[c.name] = (subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT), c, s, time.time())
                started += 1
                print(f"{dt.datetime.now(dt.timezone.utc):%H:%M:%S} {c.name} seed {s}: started "
                      f"(load {os.getloadavg()[0]:.1f})", flush=True)
        # Nothing running here or elsewhere (a restarted runner waits for the units it found) and
        # nothing started although allowed to: every cell is done.
        done_starting = max_units is not None and started >= max_units
        if not running and not in_progress(grid) and (quiet or done_starting):
            return
        time.sleep(2)


def status(grid: Grid) -> pd.DataFrame:
    return pd.DataFrame([cell_state(grid, c) for c in grid.cells()])


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run", help="fill the grid on the kernel (resumable, adaptive)")
    r.add_argument("--grid", type=Path, required=True)
    r.add_argument("--parallel", type=int, default=2)
    r.add_argument("--log", type=Path, default=None, help="per-unit logs next to this path")
    r.add_argument("--max-units", type=int, default=None)
    r.add_argument("--max-load", type=float, default=None,
                   help="start a unit only while the 1-minute load average is at most this")
    u = sub.add_parser("unit", help="one unit: a cell, a seed")
    u.add_argument("--grid", type=Path, required=True)
    u.add_argument("--cell", required=True)
    u.add_argument("--seed", type=int, required=True)
    u.add_argument("--no-rt", action="store_true", help="the relay without real-time priority")
    st = sub.add_parser("status", help="units, flows and widest CI per cell")
    st.add_argument("--grid", type=Path, required=True)
    a = p.parse_args(argv)
    try:
        grid = Grid.load(a.grid)
        if a.cmd == "run":
            run(grid, a.parallel, a.log, a.max_units, a.max_load)
        elif a.cmd == "unit":
            print(run_unit(grid, grid.cell(a.cell), a.seed, None if a.no_rt else 50))
        else:
            print(status(grid).to_string(index=False))
    except GridError as e:
        print(f"error: {e}", file=sys.stderr)
        raise SystemExit(2) from None


if __name__ == "__main__":
    main()

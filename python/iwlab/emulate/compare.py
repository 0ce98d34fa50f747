"""`iwlab compare`: the simulator and the emulator on the same scenario, side by side.

For each seed both run the same scenario (cut to the same `duration` when one is given).
Flows that completed after the warm-up are grouped by response size (exact sizes when there
are few, else logarithmic bins of segments) and IW; for each group the median and 99th
percentile completion times of both, and the relative difference (emulated − simulated) /
simulated. Below: bottleneck utilisation (each direction), drop rate, retransmission rate
(retransmitted / sent data segments) and timeouts per flow, and the median page delay when
there are pages. A figure shows both CDFs per group.

QUIC scenarios (apps with `transport = "quic"`) compare the engine's quinn-proto with a real
QUIC stack on the kernel's UDP (`quic_stack`: aioquic or quinn, quic_apps.py): the groups are
(response size, IW in datagrams), and the metrics add the medians of the handshake time, the
time to first byte and the server's first flight (bytes, datagrams), the share of flows whose
server was amplification-limited and the PTOs per flow.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import numpy as np
import pandas as pd

MAX_EXACT_SIZES = 12


@dataclass
class Comparison:
    scenario: str
    seeds: list[int]
    duration: float
    groups: pd.DataFrame  # one row per (size, IW)
    metrics: pd.DataFrame  # one row per metric: sim, emu, rel
    flows: pd.DataFrame  # completed post-warm-up flows of both, column `mode`
    notes: list[str] = field(default_factory=list)

    def text(self) -> str:
        lines = [f"scenario {self.scenario}: seeds {', '.join(map(str, self.seeds))}, {self.duration:g} s each"]
        lines += [f"  note: {n}" for n in self.notes]
        lines.append("")
        lines.append("completion time (s) of completed flows after the warm-up")
        g = self.groups
        hdr = f"{'size':>14} {'IW':>4} | {'n sim':>6} {'n emu':>6} | {'median sim':>10} {'emu':>8} {'diff':>7} | " \
              f"{'p99 sim':>8} {'emu':>8} {'diff':>7}"
        lines += [hdr, "-" * len(hdr)]
        for r in g.itertuples():
            lines.append(f"{r.size:>14} {r.iw:>4g} | {r.n_sim:>6d} {r.n_emu:>6d} | {_f(r.median_sim):>10} "
                         f"{_f(r.median_emu):>8} {_pct(r.median_rel):>7} | {_f(r.p99_sim):>8} {_f(r.p99_emu):>8} "
                         f"{_pct(r.p99_rel):>7}")
        lines += ["", f"{'metric':<36} {'sim':>10} {'emu':>10} {'diff':>8}"]
        for r in self.metrics.itertuples():
            lines.append(f"{r.metric:<36} {_f(r.sim, 4):>10} {_f(r.emu, 4):>10} {_pct(r.rel):>8}")
        return "\n".join(lines)

    def save(self, out: str | Path) -> Path:
        out = Path(out)
        out.mkdir(parents=True, exist_ok=True)
        self.groups.to_csv(out / "compare-groups.csv", index=False)
        self.metrics.to_csv(out / "compare-metrics.csv", index=False)
        (out / "compare.txt").write_text(self.text() + "\n")
        (out / "compare.json").write_text(json.dumps({
            "scenario": self.scenario, "seeds": self.seeds, "duration": self.duration, "notes": self.notes,
            "groups": self.groups.to_dict("records"), "metrics": self.metrics.to_dict("records")},
            indent=1, default=float))
        self.figure(out / "compare-cdf.png")
        return out

    def figure(self, path: str | Path) -> Path:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        keys = list(self.groups[["size", "iw"]].itertuples(index=False, name=None))
        n = max(1, len(keys))
        cols = min(4, n)
        rows = math.ceil(n / cols)
        fig, axes = plt.subplots(rows, cols, figsize=(4 * cols, 3 * rows), squeeze=False)
        for ax, (size, iw) in zip(axes.flat, keys):
            for mode, style in (("simulated", "-"), ("emulated", "--")):
                x = np.sort(self.flows.loc[(self.flows["mode"] == mode) & (self.flows["size"] == size)
                                           & (self.flows["iw"] == iw), "completion"].to_numpy(dtype=float))
                if len(x):
                    ax.step(np.r_[x[0], x], np.r_[0.0, np.arange(1, len(x) + 1) / len(x)], style, where="post",
                            label=mode)
            ax.set_title(f"{size}, IW {iw:g}", fontsize=9)
            ax.set_xlabel("completion time (s)")
            ax.set_ylabel("CDF")
            ax.grid(alpha=0.3)
            ax.legend(fontsize=7)
        for ax in list(axes.flat)[n:]:
            ax.set_visible(False)
        fig.suptitle(f"{self.scenario}: simulated vs emulated", fontsize=10)
        fig.tight_layout()
        fig.savefig(path, dpi=110)
        plt.close(fig)
        return Path(path)


def _f(x: Any, digits: int = 3) -> str:
    return "-" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.{digits}f}"


def _pct(x: Any) -> str:
    return "-" if x is None or (isinstance(x, float) and not math.isfinite(x)) else f"{100 * x:+.1f}%"


def _rel(emu: float, sim: float) -> float:
    if sim is None or emu is None or not np.isfinite(sim) or not np.isfinite(emu) or sim == 0:
        return float("nan")
    return (emu - sim) / sim


def size_labels(sizes: pd.Series, mss: int) -> pd.Series:
    """Exact byte sizes when there are few of them, else bins of segments (1, 2–3, 4–10, …)."""
    if sizes.nunique() <= MAX_EXACT_SIZES:
        return sizes.map(lambda b: f"{int(b)} B")
    edges = [0, 1, 3, 10, 30, 100, 300, 1000, 10**9]
    segs = np.ceil(sizes.to_numpy(dtype=float) / mss)
    idx = np.maximum(np.searchsorted(edges, segs, side="left"), 1)
    return pd.Series([f"{edges[i - 1] + 1}-{edges[i]} seg" if edges[i] < 10**9 else f">{edges[i - 1]} seg"
                      for i in idx], index=sizes.index)


def _flows(result, mode: str) -> pd.DataFrame:
    f = result.flows
    f = f[f["completed"] & ~f["in_warmup"]]
    return pd.DataFrame({"mode": mode, "seed": result.seed, "size": f["response_bytes"].astype("int64").to_numpy(),
                         "iw": f["iw_segments"].astype("float64").to_numpy(),
                         "completion": f["completion"].astype("float64").to_numpy()})


def _metrics(results: list, mode: str) -> dict[str, float]:
    out: dict[str, list[float]] = {}

    def add(k: str, v: float) -> None:
        out.setdefault(k, []).append(v)

    for r in results:
        links = r.links.set_index("port")
        for port, name in ((0, "left→right"), (1, "right→left")):
            if port in links.index:
                add(f"bottleneck utilisation {name}", float(links.loc[port, "utilisation"]))
                add(f"bottleneck drop rate {name}", float(links.loc[port, "drop_rate"]))
        f = r.flows[~r.flows["in_warmup"]]
        segs = f["data_segments"].astype("float64").sum()
        add("retransmission rate", float(f["retransmits"].astype("float64").sum() / segs) if segs else float("nan"))
        add("timeouts per flow", float(f["timeouts"].astype("float64").mean()) if len(f) else float("nan"))
        add("flows completed", float(f["completed"].sum()))
        if "transport" in f.columns:
            q = f[(f["transport"] == "quic") & f["completed"]]
            for col, name in (("handshake", "QUIC median handshake (s)"), ("ttfb", "QUIC median time to first byte (s)"),
                              ("first_flight_bytes", "QUIC median first flight (bytes)"),
                              ("first_flight_packets", "QUIC median first flight (datagrams)")):
                add(name, float(q[col].astype("float64").median()) if len(q) else float("nan"))
            add("QUIC amplification-limited share", float(q["amp_blocked"].astype("float64").mean())
                if len(q) else float("nan"))
            add("QUIC PTOs per flow", float(q["pto_count"].astype("float64").mean()) if len(q) else float("nan"))
        p = r.pages[~r.pages["in_warmup"]] if len(r.pages) else r.pages
        if len(p):
            add("median page delay (s)", float(p["delay"].astype("float64").median()))
    # A metric no run could measure (PTOs of an endpoint that does not report them) stays NaN.
    return {k: float(np.nanmean(v)) if np.isfinite(v).any() else float("nan") for k, v in out.items()}


def compare(scenario, seeds: int = 1, duration: float | None = None, out: str | Path | None = None,
            first_seed: int | None = None, say: Callable[[str], None] | None = None,
            quic_stack: str = "aioquic") -> Comparison:
    """Runs simulator and emulator `seeds` times each and compares them; the emulator runs QUIC
    apps on `quic_stack`."""
    import iwlab
    from iwlab.emulate.plan import run_window, shortened
    from iwlab.emulate.run import emulate
    from iwlab.scenario import Scenario, load

    say = say or (lambda s: None)
    sc = scenario if isinstance(scenario, Scenario) else load(scenario)
    sim_sc = shortened(sc, duration)
    _, run, _ = run_window(sc.data, duration)
    base = int(sc.data.get("seed", 1) if first_seed is None else first_seed)
    seed_list = [base + i for i in range(seeds)]
    sims, emus = [], []
    for s in seed_list:
        say(f"seed {s}: simulating")
        sims.append(iwlab.run(sim_sc, seed=s))
        say(f"seed {s}: emulating ({run:g} s)")
        emu_out = None if out is None else Path(out) / f"emulated-seed{s}"
        emus.append(emulate(sc, seed=s, duration=duration, out=emu_out, say=say, quic_stack=quic_stack))
    flows = pd.concat([_flows(r, "simulated") for r in sims] + [_flows(r, "emulated") for r in emus],
                      ignore_index=True)
    mss = 1460
    try:
        from iwlab.emulate.plan import merged_tcp
        from iwlab.emulate.units import size_bytes

        mss = size_bytes(merged_tcp(sc.data)["mss"])  # with tcp.profile applied
    except ValueError:
        pass
    if len(flows):
        flows["size"] = size_labels(flows["size"], mss)
    rows = []
    for (size, iw), g in flows.groupby(["size", "iw"], sort=False):
        s = g.loc[g["mode"] == "simulated", "completion"]
        e = g.loc[g["mode"] == "emulated", "completion"]
        q = lambda x, p: float(np.quantile(x, p)) if len(x) else float("nan")  # noqa: E731
        rows.append({"size": size, "iw": iw, "n_sim": int(len(s)), "n_emu": int(len(e)),
                     "median_sim": q(s, 0.5), "median_emu": q(e, 0.5), "median_rel": _rel(q(e, 0.5), q(s, 0.5)),
                     "p99_sim": q(s, 0.99), "p99_emu": q(e, 0.99), "p99_rel": _rel(q(e, 0.99), q(s, 0.99))})
    groups = pd.DataFrame(rows, columns=["size", "iw", "n_sim", "n_emu", "median_sim", "median_emu", "median_rel",
                                         "p99_sim", "p99_emu", "p99_rel"])
    if len(groups):
        groups["_bytes"] = groups["size"].map(size_key)
        groups = groups.sort_values(["_bytes", "iw"]).drop(columns="_bytes").reset_index(drop=True)
    ms, me = _metrics(sims, "simulated"), _metrics(emus, "emulated")
    metrics = pd.DataFrame([{"metric": k, "sim": ms.get(k, float("nan")), "emu": me.get(k, float("nan")),
                             "rel": _rel(me.get(k, float("nan")), ms.get(k, float("nan")))}
                            for k in dict.fromkeys(list(ms) + list(me))])
    notes = sorted({n for r in emus for n in r.summary.get("notes", [])})
    cmp = Comparison(sc.name, seed_list, run, groups, metrics, flows, notes)
    if out is not None:
        cmp.save(out)
    return cmp


def size_key(label: str) -> float:
    head = label.split()[0].lstrip(">").split("-")[0]
    try:
        return float(head)
    except ValueError:
        return math.inf

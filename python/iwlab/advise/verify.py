"""`iwlab advise --verify`: the recommendation and the two runners-up on real Linux TCP.

Each of the three runs the same scenario (the profile, as `build.scenario_data` makes it) in the
simulator and in the emulator (`iwlab.emulate`: network namespaces, the kernel's TCP, the
workload replayed from the simulator's draws), with the same seeds and the same length, and the
same figures are computed from both (`evaluate.reduce`). The simulator's and the kernel's means
stand side by side with their 95 % CIs, and the ranking is checked: does the kernel order the
three as the simulator does, and is the recommendation still the best?

A candidate the emulator cannot run (a paced first flight, an adaptive policy, where this build
refuses them) is listed with the reason, not silently left out.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

import numpy as np
import pandas as pd

from iwlab.advise.build import scenario_data
from iwlab.advise.evaluate import EvalSpec, reduce
from iwlab.advise.search import t_interval
from iwlab.advise.types import AdviceRecord

__all__ = ["verify", "leaders"]


def leaders(a: AdviceRecord, n: int = 3) -> list[str]:
    """The recommendation and the next best distinct candidates (twins of one another and
    candidates that completed no flow left out), by the paired difference to the recommendation."""
    rec = a.recommended["candidate"]
    t = a.candidates
    others = t[(t["candidate"] != rec) & ~t["status"].astype(str).str.startswith("identical")
               & np.isfinite(t["value"].to_numpy(dtype=float))]
    return [rec, *others["candidate"].tolist()[: n - 1]]


def verify(a: AdviceRecord, candidates: list[str] | None = None, seeds: int = 3, duration: float | None = None,
           say: Callable[[str], None] | None = None) -> tuple[pd.DataFrame, str]:
    """Simulator and kernel side by side for `candidates` (default: `leaders(a)`), seeds 1…`seeds`,
    each run `duration` seconds long (default: the profile's). Returns the table and one line
    saying whether the ranking holds. Raises `iwlab.emulate.EmulationError` when this host cannot
    emulate at all (not root, no namespaces)."""
    import iwlab
    from iwlab.emulate import EmulationError, PlanError, emulate, preflight
    from iwlab.scenario import Scenario

    say = say or (lambda s: None)
    why = preflight()
    if why:
        raise EmulationError("--verify needs the emulator: " + "; ".join(why))
    p = a.profile
    if duration is not None:
        p = replace(p, duration_s=float(duration), warmup_s=min(p.warmup_s, float(duration) / 4))
    names = candidates or leaders(a)
    by_name = {c.name: c for c in a.pool}
    col = f"fct_{p.objective.metric}"
    rows = []
    for name in names:
        c = by_name[name]
        data = scenario_data(p, c)
        sc = Scenario.from_data(data, "<advise --verify>")
        spec = EvalSpec.of(data, min_size=p.objective.min_size, max_size=p.objective.max_size, rate_bps=p.rate_bps)
        sim, kern, status = [], [], "ok"
        for s in range(1, seeds + 1):
            r = iwlab.run(sc, seed=s)
            sim.append(reduce(r.flows, r.links, r.queues, spec)[col])
            say(f"verify: {name} seed {s} on Linux TCP ({p.duration_s:g} s)")
            try:
                e = emulate(sc, seed=s)
            except PlanError as err:
                status = f"not emulable: {' '.join(str(err).split())}"
                break
            kern.append(reduce(e.flows, e.links, e.queues, spec)[col])
        sm, slo, shi = t_interval(np.array(sim, dtype=float))
        km, klo, khi = t_interval(np.array(kern, dtype=float)) if kern else (float("nan"),) * 3
        rows.append({"candidate": name, "seeds": len(kern), "sim_ms": sm * 1e3, "sim_ci_ms": _ci(slo, shi),
                     "kernel_ms": km * 1e3, "kernel_ci_ms": _ci(klo, khi), "status": status})
    df = pd.DataFrame(rows)
    return df, _verdict(df, names[0])


def _ci(lo: float, hi: float) -> str:
    return f"{lo * 1e3:.1f}…{hi * 1e3:.1f}" if np.isfinite(lo) else "-"


def _verdict(df: pd.DataFrame, rec: str) -> str:
    ok = df[(df["status"] == "ok") & np.isfinite(df["kernel_ms"].to_numpy(dtype=float))]
    if rec not in set(ok["candidate"]):
        return f"not verified: {rec} could not run on Linux TCP ({df.set_index('candidate').loc[rec, 'status']})"
    if len(ok) < 2:
        return "not verified: fewer than two candidates ran on Linux TCP"
    sim_order = ok.sort_values(["sim_ms", "candidate"])["candidate"].tolist()
    kern_order = ok.sort_values(["kernel_ms", "candidate"])["candidate"].tolist()
    best = kern_order[0]
    if sim_order == kern_order:
        return f"ranking holds: the kernel orders {', '.join(kern_order)} as the simulator does"
    if best == rec:
        return (f"recommendation holds, order of the others differs: simulator {', '.join(sim_order)}, "
                f"kernel {', '.join(kern_order)}")
    return (f"ranking does NOT hold: the kernel's best is {best}, not {rec} (simulator {', '.join(sim_order)}, "
            f"kernel {', '.join(kern_order)})")

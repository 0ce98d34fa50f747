"""`iwlab advise --verify`: the recommendation against its runner-up on real Linux TCP, under
workloads the advice did not assume.

The simulator's ranking rests on a workload model (arrival process, load); a check that runs the
same model on the kernel can only confirm the model. So the verification runs the top two
candidates (`iwlab.emulate`: network namespaces, the kernel's TCP) under several arrival
processes — the profile's own and at least periodic and Poisson — PAIRED: both candidates run
every seed, so they meet the same flow start times and sizes, and the verdict rests on the
seed-by-seed difference. Seeds are added until the difference is resolved against the advice's
margin or the time limit is reached:

* **confirmed** — the 95 % CI of (runner-up − recommendation) lies above −margin: the
  recommendation is not worse than the runner-up beyond the margin;
* **reversed** — the CI lies below −margin: the runner-up is better beyond the margin;
* **unresolved** — neither, at the seeds the time allowed.

A reversed verdict changes the printed advice (`AdviceRecord.verify_verdict`). The runs are as
short as the objective allows (enough of its flows, `search.flows_needed`, after a 1 s warm-up),
and several run at once, each in its own namespaces (prefix `hv<pid>-`): the first `min_seeds`
seeds of both candidates together, then further seeds in steps. Whether an arrival process can
run on the kernel is the emulator's to say: its plan refuses what it cannot emulate
(`iwlab.emulate.PlanError`), and the variant is reported "not emulable" with that reason.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

import numpy as np
import pandas as pd

from iwlab.advise.build import mean_response_bytes, scenario_data
from iwlab.advise.evaluate import EvalSpec, reduce
from iwlab.advise.search import flows_needed, t_interval
from iwlab.advise.types import AdviceRecord

__all__ = ["verify", "leaders", "verify_profile", "verify_data", "VERIFY_ARRIVALS", "verdict"]

#: The arrival processes every verification runs, beside the profile's own (those the emulator runs).
VERIFY_ARRIVALS = ("periodic", "poisson")
#: Warm-up of a verification run: the background's slow start, not the profile's full warm-up.
WARMUP_S = 1.0


def leaders(a: AdviceRecord, n: int = 2) -> list[str]:
    """The recommendation and the next best distinct candidates (twins of one another and
    candidates that completed no flow left out), by the paired difference to the recommendation."""
    rec = a.recommended["candidate"]
    t = a.candidates
    others = t[(t["candidate"] != rec) & ~t["status"].astype(str).str.startswith("identical")
               & np.isfinite(t["value"].to_numpy(dtype=float))]
    others = others.sort_values("value")
    return [rec, *others["candidate"].tolist()[: n - 1]]


def verify_profile(p: Any, arrivals: str, duration: float | None = None) -> Any:
    """The profile a verification runs under `arrivals`: by default as long as the objective
    needs (`flows_needed` of its flows, 25 % more for the draw's spread) after a 1 s warm-up."""
    q = p.scaled(arrivals=arrivals)
    if duration is None:
        per_s = p.flow_rate if p.flow_rate is not None else p.load * p.rate_bps / (8 * mean_response_bytes(p))
        need = flows_needed(f"fct_{p.objective.metric}")
        duration = min(p.duration_s, WARMUP_S + 1.25 * need / per_s) if per_s else p.duration_s
    return replace(q, duration_s=float(duration), warmup_s=min(WARMUP_S, float(duration) / 4))


def verify_data(q: Any, cand: Any) -> dict[str, Any]:
    """The scenario a verification emulates: the profile's (`build.scenario_data`) with its
    servers on one host. Every flow is a connection of its own and a server's IW is per
    connection (a fixed or size-based IW) or per destination (a watcher's route to the client's
    address), so one server host sends the same flows with the same IWs; it is 7 namespaces and
    agents fewer to start per run."""
    data = scenario_data(q, cand)
    next(g for g in data["topology"]["right"] if g["name"] == "servers")["count"] = 1
    return data


def _pool(parallel: int) -> Any:
    """Worker processes for the emulations, forked from a server that imported the emulator once
    (a spawned worker imports it itself: seconds each on a busy machine)."""
    from concurrent.futures import ProcessPoolExecutor
    from multiprocessing import get_context

    ctx = get_context("forkserver")
    ctx.set_forkserver_preload(["iwlab.emulate", "iwlab.advise.evaluate", "iwlab.scenario"])
    return ProcessPoolExecutor(max_workers=max(1, parallel), mp_context=ctx)


def verdict(diffs: Sequence[float], margin_s: float) -> tuple[str, float, float, float]:
    """(verdict, mean, CI low, CI high) of the paired differences runner-up − recommendation."""
    m, lo, hi = t_interval(np.asarray(diffs, dtype=float))
    if np.isfinite(lo) and lo > -margin_s:
        return "confirmed", m, lo, hi
    if np.isfinite(hi) and hi < -margin_s:
        return "reversed", m, lo, hi
    return "unresolved", m, lo, hi


def _kernel_value(data: dict[str, Any], seed: int, col: str, spec: EvalSpec, prefix: str) -> float:
    """One kernel run of a scenario (in a worker process: its own namespaces, `prefix`)."""
    from iwlab.emulate import emulate
    from iwlab.scenario import Scenario

    e = emulate(Scenario.from_data(data, "<advise --verify>"), seed=seed, ns_prefix=f"{prefix}{os.getpid()}-")
    return float(reduce(e.flows, e.links, e.queues, spec)[col])


def verify(a: AdviceRecord, arrivals: Sequence[str] | None = None, min_seeds: int = 3, max_seeds: int = 16,
           time_limit: float = 600.0, duration: float | None = None, parallel: int = 6,
           say: Callable[[str], None] | None = None, prefix: str = "hv") -> tuple[pd.DataFrame, str]:
    """The top two candidates on Linux TCP under `arrivals` (default: the profile's own, then
    `VERIFY_ARRIVALS`), paired, seeds `min_seeds`…`max_seeds` until resolved against the
    advice's margin or `time_limit` seconds have passed. `parallel` emulations run at once (each
    in its own namespaces): the first `min_seeds` seeds of both candidates together, then as
    many more seeds per step as fit. Returns one row per arrival process (kernel means, the
    paired difference with its CI, the verdict) and one line summing up. Raises
    `iwlab.emulate.EmulationError` when this host cannot emulate (not root, no namespaces)."""
    from iwlab.emulate import EmulationError, PlanError, preflight

    say = say or (lambda s: None)
    why = preflight()
    if why:
        raise EmulationError("--verify needs the emulator: " + "; ".join(why))
    p = a.profile
    names = leaders(a, 2)
    if len(names) < 2:
        return pd.DataFrame(), "not verified: no runner-up to verify the recommendation against"
    rec, ru = names
    by_name = {c.name: c for c in a.pool}
    col = f"fct_{p.objective.metric}"
    kinds = list(dict.fromkeys([*(arrivals or [p.arrivals, *VERIFY_ARRIVALS])]))
    step = max(1, parallel // 2)  # paired seeds per step after the first
    t0 = time.monotonic()
    rows = []
    with _pool(parallel) as pool:
        for kind in kinds:
            q = verify_profile(p, kind, duration)
            data = {n: verify_data(q, by_name[n]) for n in names}
            spec = EvalSpec.of(data[rec], min_size=q.objective.min_size, max_size=q.objective.max_size,
                               rate_bps=q.rate_bps)
            vals: dict[str, list[float]] = {rec: [], ru: []}
            status, s = "", 0
            while s < max_seeds:
                seeds = list(range(s + 1, min(max_seeds, s + (min_seeds if s == 0 else step)) + 1))
                say(f"verify: {kind} arrivals, seeds {seeds[0]}…{seeds[-1]}: {rec} and {ru} on Linux TCP "
                    f"({q.duration_s:.0f} s each, {min(parallel, 2 * len(seeds))} at once)")
                futs = {(n, x): pool.submit(_kernel_value, data[n], x, col, spec, prefix) for x in seeds for n in names}
                try:
                    got = {k: f.result() for k, f in futs.items()}
                except PlanError as err:
                    for f in futs.values():
                        f.cancel()
                    status = f"not emulable: {' '.join(str(err).split())}"
                    break
                for x in seeds:
                    for n in names:
                        vals[n].append(got[(n, x)])
                s = seeds[-1]
                diffs = np.array(vals[ru]) - np.array(vals[rec])
                if s >= min_seeds:
                    v, m, lo, hi = verdict(diffs, a.margin_s)
                    if v != "unresolved":
                        status = v
                        break
                if time.monotonic() - t0 > time_limit:
                    break
            if not status:
                status = "unresolved"
            diffs = np.array(vals[ru]) - np.array(vals[rec])
            _v, m, lo, hi = verdict(diffs, a.margin_s) if len(diffs) else ("", np.nan, np.nan, np.nan)
            rows.append({"arrivals": kind, "runner_up": ru, "seeds": len(diffs), "run_s": q.duration_s,
                         f"{rec} ms": round(float(np.mean(vals[rec])) * 1e3, 1) if vals[rec] else np.nan,
                         f"{ru} ms": round(float(np.mean(vals[ru])) * 1e3, 1) if vals[ru] else np.nan,
                         "runner-up − rec ms": round(m * 1e3, 1) if np.isfinite(m) else np.nan,
                         "±": round((hi - lo) / 2 * 1e3, 1) if np.isfinite(lo) else np.nan,
                         "verdict": status})
    df = pd.DataFrame(rows)
    wall = time.monotonic() - t0
    rev = df[df["verdict"] == "reversed"]["arrivals"].tolist()
    unres = df[df["verdict"] == "unresolved"]["arrivals"].tolist()
    head = f"{rec} against {ru}, paired, margin ±{a.margin_s * 1e3:.1f} ms, {wall:.0f} s"
    if rev:
        detail = (f"REVERSED under {', '.join(rev)} arrivals: on Linux TCP {ru} is better than {rec} beyond the "
                  f"margin ({head})")
    elif unres:
        detail = (f"unresolved under {', '.join(unres)} arrivals ({head}); "
                  + ("confirmed under " + ", ".join(df[df['verdict'] == 'confirmed']['arrivals']) if
                     (df["verdict"] == "confirmed").any() else "confirmed under none"))
    else:
        detail = f"confirmed under {', '.join(df['arrivals'])} arrivals ({head})"
    return df, detail

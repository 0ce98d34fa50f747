"""`iwlab.advise(...)`: profile → candidates → race → recommendation with its evidence.

>>> a = iwlab.advise(rate="2Mbps", rtt="100ms", buffer="25pkt", sizes="9seg",
...                  candidates=["fixed:3,10"], budget="40runs")                # doctest: +SKIP
>>> a.recommended["iw_segments"], a.candidates[["candidate", "value", "ci_low", "ci_high"]]  # doctest: +SKIP
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from iwlab.advise.build import scenario_data
from iwlab.advise.candidates import BASELINE, DEFAULT, Candidate, expand
from iwlab.advise.evaluate import EvalSpec, sweep_module
from iwlab.advise.profile import Profile
from iwlab.advise.search import Budget, RaceState, Runner, race, t_interval

__all__ = ["advise", "Advice", "SENSITIVITY", "policy_entry"]

SENSITIVITY = (("RTT ×0.5", 0.5, 1.0), ("RTT ×2", 2.0, 1.0), ("buffer ×0.5", 1.0, 0.5), ("buffer ×2", 1.0, 2.0))


@dataclass
class Advice:
    """The recommendation and its evidence.

    * `recommended`: candidate name, `policy` (its name in the policy file), `policy_table` (the
      `[iw.policies]` entry), `iw_segments`, `tcp` (fields it needs, e.g. paced IW), the objective's
      `value` with `ci_low`/`ci_high` (95 %, Student t over seeds), `retransmit_rate`, `seeds`;
    * `candidates`: one row per candidate (value and CI, retransmission rate, constraint figures,
      seeds run, status — why it was dropped — and whether it is on the Pareto front);
    * `runs`: one row per run (candidate, seed, every figure); `rounds`: the race, round by round;
    * `sensitivity`: the best of the leading candidates at half/double RTT and buffer;
    * `stop_reason` ("separated", "max-seeds" or "budget") and `stop_detail`;
    * `policy_file` (TOML for `iwlab apply`) and `ip_route` (the equivalent `ip route` line).
    """

    profile: Profile
    objective: str
    recommended: dict[str, Any]
    candidates: pd.DataFrame
    runs: pd.DataFrame
    rounds: pd.DataFrame
    sensitivity: pd.DataFrame
    stop_reason: str
    stop_detail: str
    policy_file: str
    ip_route: str
    budget: str
    seconds: float
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        def clean(v: Any) -> Any:
            if isinstance(v, float) and not math.isfinite(v):
                return None
            if isinstance(v, (np.floating, np.integer)):
                return clean(v.item())
            if isinstance(v, dict):
                return {k: clean(x) for k, x in v.items()}
            if isinstance(v, (list, tuple)):
                return [clean(x) for x in v]
            return v

        return clean({
            "recommended": self.recommended,
            "objective": self.objective,
            "profile": self.profile.describe(),
            "candidates": self.candidates.to_dict("records"),
            "sensitivity": self.sensitivity.to_dict("records"),
            "rounds": self.rounds.to_dict("records"),
            "stop_reason": self.stop_reason,
            "stop_detail": self.stop_detail,
            "runs": int(len(self.runs)),
            "budget": self.budget,
            "seconds": self.seconds,
            "policy_file": self.policy_file,
            "ip_route": self.ip_route,
            "notes": self.notes,
        })

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2, default=str)

    def summary(self) -> str:
        r = self.recommended
        lines = [f"recommended: {r['candidate']} (IW {r['iw_segments']} segments{', paced' if r['tcp'] else ''}): "
                 f"{self.objective} = {r['value'] * 1e3:.1f} ms (95 % CI {r['ci_low'] * 1e3:.1f}…{r['ci_high'] * 1e3:.1f} ms)"
                 f", retransmissions {r['retransmit_rate'] * 100:.2f} %, {r['seeds']} seeds",
                 f"stopped: {self.stop_reason} — {self.stop_detail}",
                 f"{len(self.runs)} runs in {self.seconds:.1f} s (budget {self.budget})", ""]
        cols = ["candidate", "iw_segments", "seeds", "value_ms", "ci_ms", "retransmit_pct", "pareto", "status"]
        t = self.candidates.assign(
            value_ms=(self.candidates["value"] * 1e3).round(1),
            ci_ms=[f"{a * 1e3:.1f}…{b * 1e3:.1f}" if np.isfinite(a) else "-" for a, b in
                   zip(self.candidates["ci_low"], self.candidates["ci_high"])],
            retransmit_pct=(self.candidates["retransmit_rate"] * 100).round(2))
        lines.append(t[cols].to_string(index=False))
        if len(self.sensitivity):
            lines += ["", "sensitivity (best of the leading candidates when the profile changes):"]
            lines.append(self.sensitivity[["variant", "best", "same", "detail"]].to_string(index=False))
        lines += ["", "policy file (iwlab apply):", self.policy_file.rstrip(), "", f"or: {self.ip_route}"]
        lines += [f"note: {n}" for n in self.notes]
        return "\n".join(lines)

    def pareto_png(self) -> bytes:
        from iwlab.advise.report import pareto_png

        return pareto_png(self)

    def write(self, out: str | Path) -> dict[str, Path]:
        """Writes advice.json, policy.toml, runs.parquet, candidates.csv, pareto.png and report.html into `out`."""
        from iwlab.advise.report import html_report

        out = Path(out)
        out.mkdir(parents=True, exist_ok=True)
        paths = {"json": out / "advice.json", "policy": out / "policy.toml", "runs": out / "runs.parquet",
                 "candidates": out / "candidates.csv", "pareto": out / "pareto.png", "report": out / "report.html"}
        paths["json"].write_text(self.to_json() + "\n")
        paths["policy"].write_text(self.policy_file)
        self.runs.to_parquet(paths["runs"], index=False)
        self.candidates.to_csv(paths["candidates"], index=False)
        paths["pareto"].write_bytes(self.pareto_png())
        paths["report"].write_text(html_report(self), encoding="utf-8")
        return paths


def _lit(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, str):
        return json.dumps(v)
    return str(v)


def policy_entry(recommended: dict[str, Any]) -> tuple[str, str]:
    """The `[iw.policies]` line of a recommendation: (name, 'name = { kind = …, … }')."""
    table = ", ".join(f"{k} = {_lit(v)}" for k, v in recommended["policy_table"].items())
    return recommended["policy"], f"{recommended['policy']} = {{ {table} }}"


def _policy_file(c: Candidate, prefix: str, profile: Profile, objective: str, value: float) -> str:
    d = profile.describe()
    name, line = policy_entry({"policy": _policy_name(c), "policy_table": c.policy})
    lines = [f"# iwlab advise: {c.name} for {d['rate']} / RTT {d['rtt']} / buffer {d['buffer']} / "
             f"background {d['background']}",
             f"# objective: {objective} = {value * 1e3:.1f} ms",
             "[iw.policies]", line, "", "[[routes]]", f"prefix = {json.dumps(prefix)}", f"policy = {json.dumps(name)}"]
    if c.tcp.get("paced_iw"):
        lines.insert(2, "# paced IW: Linux paces a socket without fq once SO_MAX_PACING_RATE is set (the route "
                        "carries only initcwnd)")
    return "\n".join(lines) + "\n"


def _policy_name(c: Candidate) -> str:
    return c.name.replace(".", "_")


def _ip_route(c: Candidate, prefix: str) -> str:
    dst = "default" if prefix in ("0.0.0.0/0", "::/0", "default") else prefix
    if c.kind in ("fixed", "paced", "rfc3390", "rfc6928"):
        return f"ip route change {dst} via GATEWAY dev DEV initcwnd {c.iw_segments}"
    return (f"ip route change {dst} via GATEWAY dev DEV initcwnd {c.iw_segments}   "
            f"# {c.kind} decides per connection; the route can hold only this start value")


def advise(profile: Profile | str | Path | None = None, *, candidates: Sequence[str] | None = None,
           budget: str | int | None = "120s", jobs: int | None = None, dask: Any = None, seeds: int = 3,
           max_seeds: int = 24, sensitivity: bool = True, prefix: str = "default", progress: bool = False,
           **flags: Any) -> Advice:
    """Recommends an IW (or IW policy) for a profile.

    `profile` is a Profile, a TOML file, or None (flags only); `flags` override its fields
    (rate, rtt, buffer, background, loss, sizes, load, tcp, clients, duration, warmup, objective,
    min_size, max_size, max_retransmit_pp, max_harm_pct, max_voip_ms). `candidates` are
    `KIND[:ARGS]` strings (default: fixed IW 1…64, RFC 3390, RFC 6928, size-based with θ and V
    searched, paced IW, adaptive policies when the engine has them). `budget`: runs ('200runs')
    or wall time ('120s'). `seeds`: seeds in the first round; `max_seeds`: at most this many.
    """
    sweep = sweep_module()
    from iwlab.scenario import Scenario

    if isinstance(profile, (str, Path)):
        profile = Profile.from_toml(profile)
    p = Profile.from_flags(profile, **flags)
    if not 2 <= seeds <= max_seeds:
        raise ValueError(f"seeds = {seeds} is not allowed; expected 2 <= seeds <= max_seeds ({max_seeds})")
    b = Budget.parse(budget)
    cands = expand(list(candidates or DEFAULT), p.mss)
    constraint = p.constraints
    if constraint.any() and BASELINE not in {c.name for c in cands}:
        cands = [*expand(["fixed:3"], p.mss), *cands]
    if not cands:
        raise ValueError("candidates: nothing to choose from")
    baseline = BASELINE if BASELINE in {c.name for c in cands} else None
    col = f"fct_{p.objective.metric}"
    spec = EvalSpec.of(scenario_data(p, cands[0]), min_size=p.objective.min_size, max_size=p.objective.max_size,
                       rate_bps=p.rate_bps, voip=constraint.voip_ms is not None)
    checks: list[Any] = []
    if constraint.retransmit_pp is not None:
        checks.append(("retransmission rate +pp over IW 3", "retransmit_rate", constraint.retransmit_pp,
                       lambda r, b0: 100 * (r["retransmit_rate"] - b0["retransmit_rate"])))
    if constraint.harm_pct is not None:
        checks.append(("slow-down of IW-3 flows sharing the link (%)", "others_fct_mean", constraint.harm_pct,
                       lambda r, b0: 100 * (r["others_fct_mean"] / b0["others_fct_mean"] - 1)))
    if constraint.voip_ms is not None:
        checks.append(("real-time p99 delay growth (ms)", "queue_delay_p99", constraint.voip_ms,
                       lambda r, b0: 1e3 * (r["queue_delay_p99"] - b0["queue_delay_p99"])))

    scenarios: dict[tuple[str, str], Any] = {}

    def make_task(prof: Profile, variant: str):
        def task(c: Candidate, seed: int) -> Any:
            key = (variant, c.name)
            if key not in scenarios:
                sc = Scenario.from_data(scenario_data(prof, c), "<advise>")
                scenarios[key] = (sc, sc.hash())
            sc, h = scenarios[key]
            return sweep._Task(f"{h}-s{seed}", {"candidate": c.name, "variant": variant}, seed, sc, h)

        return task

    runner = Runner(jobs, dask)
    try:
        st = race(cands, make_task(p, "base"), spec, col, checks, baseline, b, runner, n0=seeds,
                  max_seeds=max_seeds, progress=progress)
        table = _candidate_table(st, cands, col, checks, baseline)
        rec_name = st.best
        rec = next(c for c in cands if c.name == rec_name)
        sens = _sensitivity(p, cands, table, rec, make_task, spec, col, runner, progress) if sensitivity else \
            pd.DataFrame(columns=["variant", "best", "same", "detail"])
    finally:
        runner.close()
    row = table[table["candidate"] == rec_name].iloc[0]
    recommended = {"candidate": rec.name, "policy": _policy_name(rec), "policy_table": rec.policy,
                   "iw_segments": rec.iw_segments, "tcp": rec.tcp, "kind": rec.kind,
                   "value": float(row["value"]), "ci_low": float(row["ci_low"]), "ci_high": float(row["ci_high"]),
                   "retransmit_rate": float(row["retransmit_rate"]), "seeds": int(row["seeds"])}
    notes = []
    per_run = float(runs_df["flows"].mean()) if len(runs_df := pd.DataFrame(st.rows)) else 0.0
    if per_run < 30:
        notes.append(f"only {per_run:.1f} flows per run in the objective's range: the figures are noisy; "
                     "lengthen --duration or raise --load")
    if rec.tcp.get("paced_iw"):
        notes.append("the recommendation paces its IW: a route's initcwnd cannot express that; on Linux set "
                     "SO_MAX_PACING_RATE on the sockets (internal pacing, no fq needed) or use fq")
    if st.stop_reason != "separated":
        notes.append(f"not separated ({st.stop_reason}): {st.stop_detail}")
    runs = pd.DataFrame(st.rows)
    return Advice(profile=p, objective=p.objective.label(), recommended=recommended, candidates=table, runs=runs,
                  rounds=pd.DataFrame(st.rounds), sensitivity=sens, stop_reason=st.stop_reason,
                  stop_detail=st.stop_detail,
                  policy_file=_policy_file(rec, prefix, p, p.objective.label(), float(row["value"])),
                  ip_route=_ip_route(rec, prefix), budget=b.label(), seconds=st.seconds, notes=notes)


def _candidate_table(st: RaceState, cands: Sequence[Candidate], col: str, checks: Sequence[Any],
                     baseline: str | None) -> pd.DataFrame:
    runs = pd.DataFrame(st.rows)
    rows = []
    base = runs[runs["candidate"] == baseline].set_index("seed") if baseline else None
    for c in cands:
        r = runs[runs["candidate"] == c.name]
        m, lo, hi = t_interval(r[col].to_numpy(dtype=float)) if len(r) else (float("nan"),) * 3
        row = {"candidate": c.name, "kind": c.kind, "iw_segments": c.iw_segments, "seeds": int(len(r)),
               "value": m, "ci_low": lo, "ci_high": hi,
               "retransmit_rate": float(np.nanmean(r["retransmit_rate"])) if len(r) else float("nan"),
               "completed": float(np.nanmean(r["completed"])) if len(r) else float("nan"),
               "status": "recommended" if c.name == st.best else (
                   st.open.get(c.name, "tied") if st.status.get(c.name) == "racing" else st.status.get(c.name, "")),
               "dropped_in_round": st.dropped_in.get(c.name)}
        for name, _c, _limit, excess in checks:
            if base is not None and len(r):
                x = [excess(rr, base.loc[s]) for s, rr in zip(r["seed"], r.to_dict("records")) if s in base.index]
                row[name] = float(np.nanmean(x)) if x else float("nan")
        rows.append(row)
    df = pd.DataFrame(rows)
    df["pareto"] = _pareto(df["value"].to_numpy(dtype=float), df["retransmit_rate"].to_numpy(dtype=float))
    return df.sort_values(["value", "candidate"], na_position="last").reset_index(drop=True)


def _pareto(y: np.ndarray, x: np.ndarray) -> list[bool]:
    """Not dominated: no other point is <= in both completion time and retransmission rate and < in one."""
    out = []
    for i in range(len(y)):
        if not (np.isfinite(y[i]) and np.isfinite(x[i])):
            out.append(False)
            continue
        dom = (y <= y[i]) & (x <= x[i]) & ((y < y[i]) | (x < x[i])) & np.isfinite(y) & np.isfinite(x)
        out.append(not bool(dom.any()))
    return out


def _sensitivity(p: Profile, cands: Sequence[Candidate], table: pd.DataFrame, rec: Candidate, make_task: Any,
                 spec: EvalSpec, col: str, runner: Runner, progress: bool) -> pd.DataFrame:
    """Runs the leading candidates (the recommendation and the next two by value) at half and
    double RTT and buffer with the same seeds; is the recommendation still the best?"""
    from tqdm import tqdm

    distinct = table[~table["status"].str.startswith("identical")]
    lead = [rec.name] + [n for n in distinct["candidate"] if n != rec.name][:2]
    by_name = {c.name: c for c in cands}
    nseeds = max(2, min(4, int(table.loc[table["candidate"] == rec.name, "seeds"].iloc[0])))
    rows = []
    bar = tqdm(total=len(SENSITIVITY) * len(lead) * nseeds, desc="sensitivity: RTT and buffer ×0.5/×2",
               unit="run", disable=not progress, dynamic_ncols=True)
    try:
        for label, rtt, buf in SENSITIVITY:
            q = p.scaled(rtt=rtt, buffer=buf)
            if q.rtt_s <= 0.004:
                continue
            task = make_task(q, label)
            tasks = [task(by_name[n], s) for n in lead for s in range(1, nseeds + 1)]
            res = []
            for r in runner.map(tasks, spec):
                res.append(r)
                bar.update(1)
            df = pd.DataFrame([{"candidate": r["point"]["candidate"], "seed": r["seed"], "v": r[col]} for r in res])
            stats = {n: t_interval(df[df["candidate"] == n]["v"].to_numpy(dtype=float)) for n in lead}
            best = min(lead, key=lambda n: (stats[n][0] if np.isfinite(stats[n][0]) else math.inf,
                                            by_name[n].iw_segments, bool(by_name[n].tcp), n))
            piv = df.pivot(index="seed", columns="candidate", values="v")
            d = t_interval((piv[rec.name] - piv[best]).to_numpy(dtype=float)) if best != rec.name else (0.0, 0.0, 0.0)
            same = best == rec.name
            detail = ("unchanged" if same else
                      f"{best} better by {d[0] * 1e3:.1f} ms" + (" (within the CI: not significant)"
                                                                  if not (np.isfinite(d[1]) and d[1] > 0) else ""))
            row = {"variant": label, "rtt_s": q.rtt_s, "buffer_packets": q.buffer_packets(), "best": best,
                   "same": same, "detail": detail, "seeds": nseeds}
            for n in lead:
                row[f"{n}"] = stats[n][0]
            rows.append(row)
    finally:
        bar.close()
    return pd.DataFrame(rows)

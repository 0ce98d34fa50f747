"""`iwlab.advise(...)`: profile → candidates → race → recommendation with its evidence.

>>> a = iwlab.advise(rate="2Mbps", rtt="100ms", buffer="25pkt", sizes="9seg",
...                  candidates=["fixed:3,10"], budget="40runs")                # doctest: +SKIP
>>> a.recommended["iw_segments"], a.candidates[["candidate", "value", "ci_low", "ci_high"]]  # doctest: +SKIP
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from iwlab.advise.build import scenario_data
from iwlab.advise.candidates import BASELINE, DEFAULT, DEPLOYABLE, Candidate, expand
from iwlab.advise.evaluate import EvalSpec
from iwlab.advise.profile import Profile
from iwlab.advise.search import Budget, Margin, RaceState, Runner, preference, race, t_interval
from iwlab.advise.types import DEPLOY, INSUFFICIENT, SIMPLICITY, AdviceRecord

__all__ = ["advise", "Advice", "SENSITIVITY", "policy_entry"]

SENSITIVITY = (("RTT ×0.5", 0.5, 1.0), ("RTT ×2", 2.0, 1.0), ("buffer ×0.5", 1.0, 0.5), ("buffer ×2", 1.0, 2.0))


class Advice(AdviceRecord):
    __doc__ = AdviceRecord.__doc__

    def pareto_png(self) -> bytes:
        from iwlab.advise.report import pareto_png

        return pareto_png(self)

    def write(self, out: str | Path) -> dict[str, Path]:
        """Writes advice.json, runs.parquet, candidates.csv, pareto.png, report.html and — when the
        winner deploys as written — policy.toml into `out`."""
        from iwlab.advise.report import write

        return write(self, out)


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


def check_prefix(prefix: str) -> str:
    """`--prefix` validated as a policy file's route prefix is (`iwlab.policy`): 'default' or an
    IPv4/IPv6 CIDR; the canonical text, or ValueError naming the value and what is allowed."""
    from iwlab.policy import PolicyFileError, parse_policy

    text = f'[iw.policies]\np = {{ kind = "fixed", segments = 10 }}\n[[routes]]\nprefix = {json.dumps(str(prefix))}\npolicy = "p"\n'
    try:
        r = parse_policy(text, "--prefix").routes[0]
    except PolicyFileError:
        raise ValueError(f"prefix = {prefix!r} is not allowed; expected an IPv4/IPv6 CIDR (10.0.0.0/8, 2001:db8::/32) "
                         "or default") from None
    return r.key


def _policy_file(c: Candidate, prefix: str, profile: Profile, objective: str, value: float) -> str:
    """The policy file of `c` for `iwlab apply` / `flow-iw` / `watch` (checked by the policy file
    parser before it is returned)."""
    from iwlab.policy import parse_policy

    d = profile.describe()
    name, line = policy_entry({"policy": _policy_name(c), "policy_table": c.policy})
    lines = [f"# iwlab advise: {c.name} for {d['rate']} / RTT {d['rtt']} / buffer {d['buffer']} / "
             f"background {d['background']}",
             f"# objective: {objective} = {value * 1e3:.1f} ms",
             f"# deploy with: {_deploy_command(c)}",
             "[iw.policies]", line, "", "[[routes]]", f"prefix = {json.dumps(prefix)}", f"policy = {json.dumps(name)}"]
    if c.deploy == "paced":
        # flow-iw's sock_ops program: SO_MAX_PACING_RATE = IW·MSS per handshake RTT, lifted at the
        # first RTT sample, internal pacing after (the candidate's simulated tcp, PACED_TCP).
        lines += ["", "[tcp]", f"pacing = {str(bool(c.tcp.get('pacing'))).lower()}",
                  f"paced_iw = {str(bool(c.tcp.get('paced_iw'))).lower()}"]
    text = "\n".join(lines) + "\n"
    parse_policy(text, "<advice>")
    return text


def _policy_name(c: Candidate) -> str:
    return c.name.replace(".", "_")


def _deploy_command(c: Candidate) -> str:
    return {"route": "iwlab apply policy.toml",
            "flow-iw": "iwlab flow-iw attach --cgroup NAME --policy policy.toml",
            "watch": "iwlab watch --policy policy.toml",
            "paced": "iwlab flow-iw attach --cgroup NAME --policy policy.toml"}[c.deploy]


def _ip_route(c: Candidate, prefix: str) -> str:
    """The equivalent `ip route` line — only where a route's initcwnd *is* the policy."""
    if c.deploy != "route":
        return ""
    dst = "default" if prefix in ("0.0.0.0/0", "::/0", "default") else prefix
    return f"ip route change {dst} via GATEWAY dev DEV initcwnd {c.iw_segments}"


def _refusal(c: Candidate, table: pd.DataFrame, cands: Sequence[Candidate]) -> str:
    """Why no policy file is written for winner `c` ('' when it deploys), naming the best
    deployable candidate instead."""
    if c.deploy in DEPLOYABLE:
        return ""
    by_name = {x.name: x for x in cands}
    alt = [n for n in table["candidate"] if by_name[n].deploy in DEPLOYABLE]
    instead = f"; the best deployable candidate is {alt[0]} (--candidates without {c.kind})" if alt else ""
    return (f"{c.name} wins but {DEPLOY[c.deploy]} is not deployable with this iwlab: no policy file "
            f"and no ip route line are written{instead}")


def advise(profile: Profile | str | Path | None = None, *, candidates: Sequence[str] | None = None,
           budget: str | int | None = "120s", jobs: int | None = None, dask: Any = None, seeds: int = 3,
           max_seeds: int = 24, sensitivity: bool = True, prefix: str = "default", progress: bool = False,
           verify: bool = False, verify_seeds: int = 16, verify_duration: float | None = None,
           verify_time: float = 600.0,
           margin: str | Margin | None = None, **flags: Any) -> Advice:
    """Recommends an IW (or IW policy) for a profile.

    `profile` is a Profile, a TOML file, or None (flags only); `flags` override its fields
    (rate, rtt, buffer, background, loss, sizes, load, tcp, clients, duration, warmup, objective,
    min_size, max_size, max_retransmit_pp, max_harm_pct, max_voip_ms). `candidates` are
    `KIND[:ARGS]` strings (default: fixed IW 1…64, RFC 3390, RFC 6928, size-based with θ and V
    searched, paced IW, adaptive policies when the engine has them). `budget`: runs ('200runs')
    or wall time ('120s'). `seeds`: seeds in the first round; `max_seeds`: at most this many.
    `prefix`: the policy file's route ('default' or a CIDR). `margin`: the practical-equivalence
    margin ('2%' of the objective, at least 1 ms, by default; or a time '5ms'): smaller
    differences are no differences, and among equals the simplest deployment nearest IW 10 wins. `verify`: run the recommendation and
    its runner-up on Linux TCP under the profile's and other arrival processes, paired, adding
    seeds (at most `verify_seeds`) until the difference is resolved against the margin or
    `verify_time` seconds pass (`verify.verify`; runs of `verify_duration` seconds, default as
    long as the objective needs; root, namespaces).
    """
    from iwlab.runs import Task
    from iwlab.scenario import Scenario

    if isinstance(profile, (str, Path)):
        profile = Profile.from_toml(profile)
    p = Profile.from_flags(profile, **flags)
    prefix = check_prefix(prefix)
    if not 2 <= seeds <= max_seeds:
        raise ValueError(f"seeds = {seeds} is not allowed; expected 2 <= seeds <= max_seeds ({max_seeds})")
    b = Budget.parse(budget)
    mg = margin if isinstance(margin, Margin) else Margin.parse(margin)
    cands = expand(list(candidates or DEFAULT), p.mss)
    constraint = p.constraints
    if constraint.any() and BASELINE not in {c.name for c in cands}:
        cands = [*expand(["fixed:3"], p.mss), *cands]
    if not cands:
        raise ValueError("candidates: nothing to choose from")
    baseline = BASELINE if BASELINE in {c.name for c in cands} else None
    col = f"fct_{p.objective.metric}"
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

    scenarios: dict[tuple[Any, ...], Any] = {}

    def make_task(prof: Profile, variant: str):
        def task(c: Candidate, seed: int) -> Any:
            key = (variant, prof.duration_s, c.name)
            if key not in scenarios:
                sc = Scenario.from_data(scenario_data(prof, c), "<advise>")
                scenarios[key] = (sc, sc.hash())
            sc, h = scenarios[key]
            return Task(f"{h}-s{seed}", {"candidate": c.name, "variant": variant}, seed, sc, h)

        return task

    runner = Runner(jobs, dask)
    lengthened: list[str] = []
    try:
        st, p, spec = _race_long_enough(p, cands, make_task, col, checks, baseline, b, runner, seeds, max_seeds,
                                        progress, mg, constraint, lengthened)
        table = _candidate_table(st, cands, col, checks, baseline)
        rec = next((c for c in cands if c.name == st.best), None) if st.stop_reason != INSUFFICIENT else None
        sens = _sensitivity(p, cands, table, rec, make_task, spec, col, runner, progress, st.margin_s) \
            if sensitivity and rec is not None else \
            pd.DataFrame(columns=["variant", "best", "same", "detail", "significant"])
    finally:
        runner.close()
    runs = pd.DataFrame(st.rows)
    robust = ""
    if rec is not None and len(sens) and sens["significant"].astype(bool).any():
        prev = rec.name
        rec, table, robust = _robust_choice(rec, cands, table, sens)
        if rec.name != prev:
            rr = runs[runs["candidate"] == rec.name]
            table["vs_recommended"] = [_vs(runs[runs["candidate"] == n], rr, col) for n in table["candidate"]]
            table["vs_recommended_pm"] = [_vs(runs[runs["candidate"] == n], rr, col, half=True)
                                          for n in table["candidate"]]
    common = dict(profile=p, objective=p.objective.label(), candidates=table, runs=runs,
                  rounds=pd.DataFrame(st.rounds), sensitivity=sens, stop_reason=st.stop_reason,
                  stop_detail=st.stop_detail, budget=b.label(), seconds=st.seconds, pool=list(cands),
                  margin_s=st.margin_s, margin_rule=mg.label(), region=robust or region_line(p, sens))
    if st.stop_reason == INSUFFICIENT or rec is None:
        return Advice(recommended={}, policy_file="", ip_route="",
                      notes=[*lengthened, f"no recommendation ({INSUFFICIENT}): {st.stop_detail}"], **common)
    recommended, refused = _recommended(rec, table, cands)
    notes = list(lengthened)
    if rec.deploy == "flow-iw":
        notes.append(f"{rec.name} gives each connection its IW from its declared size (IW {rec.policy.get('v')} up "
                     f"to {rec.policy.get('theta')}, MinIW {rec.iw_segments} otherwise): it deploys per flow through "
                     "iwlab flow-iw (eBPF); no route initcwnd expresses it")
    if rec.deploy == "watch":
        notes.append(f"{rec.name} re-decides the IW per destination: it deploys through iwlab watch, which "
                     "starts from the policy's initial IW and changes the route's initcwnd as it learns")
    if refused:
        notes.append(f"not deployable: {refused}")
    if st.stop_reason != "separated":
        notes.append(f"not separated ({st.stop_reason}): {st.stop_detail}")
    for _, v in sens[sens["significant"].astype(bool)].iterrows() if len(sens) else ():
        notes.append(f"sensitivity: at {v['variant']} the best is {v['best']}, significantly ({v['detail']}): "
                     "the answer depends on that parameter — measure it")
    if robust:
        notes.append(robust)
    value = recommended["value"]
    a = Advice(recommended=recommended,
               policy_file="" if refused else _policy_file(rec, prefix, p, p.objective.label(), value),
               ip_route="" if refused else _ip_route(rec, prefix), refused=refused, notes=notes, **common)
    if verify:
        from iwlab.advise.verify import verify as run_verify

        a.verify, a.verify_detail = run_verify(a, max_seeds=verify_seeds, duration=verify_duration,
                                               time_limit=verify_time, say=print if progress else None)
        _apply_verify(a, cands, prefix)
    return a


def _recommended(rec: Candidate, table: pd.DataFrame, cands: Sequence[Candidate]) -> tuple[dict[str, Any], str]:
    row = table[table["candidate"] == rec.name].iloc[0]
    refused = _refusal(rec, table, cands)
    return {"candidate": rec.name, "policy": _policy_name(rec), "policy_table": rec.policy,
            "iw_segments": rec.iw_segments, "iw_segments_got": float(row["iw_got"]), "tcp": rec.tcp,
            "kind": rec.kind, "deploy": rec.deploy, "deploy_command": "" if refused else _deploy_command(rec),
            "value": float(row["value"]), "ci_low": float(row["ci_low"]), "ci_high": float(row["ci_high"]),
            "retransmit_rate": float(row["retransmit_rate"]), "completed": float(row["completed"]),
            "seeds": int(row["seeds"])}, refused


def _apply_verify(a: Advice, cands: Sequence[Candidate], prefix: str) -> None:
    """A reversed verdict changes the advice: reversed under the profile's own arrival process,
    the runner-up (better on Linux TCP) becomes the recommendation, its policy file written;
    reversed only under another process, the advice says the answer depends on it."""
    v = a.verify
    if v is None or not len(v) or not (v["verdict"] == "reversed").any():
        a.verify_verdict = "" if v is None or not len(v) else (
            "confirmed" if (v["verdict"] == "confirmed").all() else "unresolved")
        return
    by_name = {c.name: c for c in cands}
    ru_name = str(v["runner_up"].iloc[0])
    rev = v[v["verdict"] == "reversed"]["arrivals"].tolist()
    old = a.recommended["candidate"]
    if a.profile.arrivals in rev and ru_name in by_name:
        c = by_name[ru_name]
        a.recommended, a.refused = _recommended(c, a.candidates, cands)
        a.policy_file = "" if a.refused else _policy_file(c, prefix, a.profile, a.objective, a.recommended["value"])
        a.ip_route = "" if a.refused else _ip_route(c, prefix)
        st = a.candidates["status"].astype(object)
        st[a.candidates["candidate"] == old] = f"simulator's choice; reversed on Linux TCP ({', '.join(rev)} arrivals)"
        st[a.candidates["candidate"] == ru_name] = "recommended"
        a.candidates["status"] = st
        a.verify_verdict = f"reversed: {ru_name} replaces the simulator's {old} (Linux TCP, {', '.join(rev)} arrivals)"
    else:
        a.verify_verdict = (f"reversed under {', '.join(rev)} arrivals: there Linux TCP prefers {ru_name}; "
                            f"the advice holds only for {a.profile.arrivals} arrivals — measure yours")
    a.notes.append(f"verify: {a.verify_verdict}")


#: The longest run the advisor lengthens to (a profile's duration is at most 1 h).
MAX_DURATION = 3600.0


def _race_long_enough(p: Profile, cands: Sequence[Candidate], make_task: Any, col: str, checks: Sequence[Any],
                      baseline: str | None, b: Budget, runner: Runner, seeds: int, max_seeds: int, progress: bool,
                      mg: Margin, constraint: Any, notes: list[str]) -> tuple[RaceState, Profile, EvalSpec]:
    """Races; when the first round shows too few of the profile's flows per run in the
    objective's range (`search.flows_needed`), lengthens the runs to reach them and races again
    within what is left of the budget. Refuses (stop reason 'insufficient data') only when the
    budget cannot pay for runs that long, saying which budget would."""
    from dataclasses import replace

    from iwlab.advise.search import flows_needed, flows_per_run

    used_runs, used_s = 0, 0.0
    need = flows_needed(col)
    first = p.duration_s
    for _attempt in range(4):
        left = Budget(runs=None if b.runs is None else b.runs - used_runs,
                      seconds=None if b.seconds is None else b.seconds - used_s)
        spec = EvalSpec.of(scenario_data(p, cands[0]), min_size=p.objective.min_size, max_size=p.objective.max_size,
                           rate_bps=p.rate_bps, voip=constraint.voip_ms is not None)
        st = race(cands, make_task(p, "base"), spec, col, checks, baseline, left, runner, n0=seeds,
                  max_seeds=max_seeds, progress=progress, margin=mg)
        used_runs += st.runs
        used_s += st.seconds
        if st.stop_reason != INSUFFICIENT:
            break
        have = flows_per_run(st)
        if not np.isfinite(have):
            break
        measured = p.duration_s - p.warmup_s
        # Flows per run grow with the measured time; 25 % more than the estimate for the draw's spread.
        scale = 10.0 if have <= 0 else 1.25 * need / have
        dur = p.warmup_s + measured * scale
        first_round = len(cands) * seeds
        round_s = (st.rounds[0]["seconds"] if st.rounds else st.seconds) * scale
        why = (f"{have:.1f} flows per run of {p.duration_s:g} s in the objective's range, at least {need} needed")
        if dur > MAX_DURATION:
            st.stop_detail = (f"{why}; runs of {dur:.0f} s would be needed, longer than {MAX_DURATION:.0f} s: "
                              "raise --load or widen --min-size/--max-size")
            break
        if b.runs is not None and b.runs - used_runs < first_round:
            st.stop_detail = (f"{why}; runs of {dur:.0f} s would reach it, but {b.runs - used_runs} of the budget's "
                              f"runs are left: a budget of at least {used_runs + 2 * first_round} runs would")
            break
        if b.seconds is not None and b.seconds - used_s < round_s:
            st.stop_detail = (f"{why}; runs of {dur:.0f} s would reach it, but {b.seconds - used_s:.0f} s of the "
                              f"budget are left and a first round of such runs takes about {round_s:.0f} s: a budget "
                              f"of at least {used_s + 3 * round_s:.0f} s would")
            break
        notes.append(f"runs lengthened from {p.duration_s:g} s to {dur:.0f} s: {why}")
        p = replace(p, duration_s=float(round(dur)))
    if p.duration_s != first and st.stop_reason != INSUFFICIENT:
        notes[-1] += f" (now {flows_per_run(st):.0f} per run)"
    return st, p, spec


def region_line(p: Profile, sens: pd.DataFrame) -> str:
    """Where the recommendation holds: per varied dimension, the contiguous range of variants
    around the profile where the best stays the same (from the sensitivity runs)."""
    if not len(sens):
        return f"workload: {p.workload_label()} (sensitivity not run: the region where it holds is unknown)"
    parts = []
    dims = sens["dimension"] if "dimension" in sens.columns else pd.Series(["rtt" if "RTT" in v else "buffer"
                                                                             for v in sens["variant"]])
    sens = sens.assign(dimension=dims.to_numpy())
    for dim, g in sens.groupby("dimension", sort=False):
        if dim == "arrivals":
            held = [v for v, same in zip(g["variant"], g["same"]) if same]
            lost = [v for v, same in zip(g["variant"], g["same"]) if not same]
            parts.append(f"arrivals {', '.join(held) or 'none'}" + (f" (not {', '.join(lost)})" if lost else ""))
            continue
        f = g["factor"].to_numpy(dtype=float) if "factor" in g.columns else np.array(
            [0.5 if "×0.5" in v else 2.0 for v in g["variant"]])
        same = g["same"].to_numpy(dtype=bool)
        lo, hi = 1.0, 1.0
        for x, ok in sorted(zip(f[f < 1], same[f < 1]), reverse=True):
            if not ok:
                break
            lo = x
        for x, ok in sorted(zip(f[f > 1], same[f > 1])):
            if not ok:
                break
            hi = x
        name = {"rtt": "RTT", "buffer": "buffer", "load": "load"}.get(dim, dim)
        parts.append(f"{name} ×{lo:g}…×{hi:g}")
    return f"holds for {p.workload_label()} with " + "; ".join(parts)


def _candidate_table(st: RaceState, cands: Sequence[Candidate], col: str, checks: Sequence[Any],
                     baseline: str | None) -> pd.DataFrame:
    runs = pd.DataFrame(st.rows)
    rows = []
    base = runs[runs["candidate"] == baseline].set_index("seed") if baseline else None
    rec_runs = runs[runs["candidate"] == st.best]
    for c in cands:
        r = runs[runs["candidate"] == c.name]
        m, lo, hi = t_interval(r[col].to_numpy(dtype=float)) if len(r) else (float("nan"),) * 3
        iw = r["iw_segments"].to_numpy(dtype=float) if len(r) else np.array([])
        row = {"candidate": c.name, "kind": c.kind, "deploy": c.deploy, "iw_segments": c.iw_segments,
               "iw_got": float(np.nanmean(iw)) if np.isfinite(iw).any() else float(c.iw_segments),
               "seeds": int(len(r)), "value": m, "ci_low": lo, "ci_high": hi,
               "vs_recommended": _vs(r, rec_runs, col),
               "vs_recommended_pm": _vs(r, rec_runs, col, half=True),
               "retransmit_rate": float(np.nanmean(r["retransmit_rate"])) if len(r) else float("nan"),
               "completed": float(np.nanmean(r["completed"])) if len(r) else float("nan"),
               "status": ("recommended" if st.stop_reason != INSUFFICIENT else
                          f"lowest mean; not recommended ({INSUFFICIENT})") if c.name == st.best else (
                   st.open.get(c.name, "tied") if st.status.get(c.name) == "racing" else st.status.get(c.name, "")),
               "dropped_in_round": st.dropped_in.get(c.name)}
        for name, _c, _limit, excess in checks:
            if base is not None and len(r):
                x = [excess(rr, base.loc[s]) for s, rr in zip(r["seed"], r.to_dict("records")) if s in base.index]
                row[name] = float(np.nanmean(x)) if x else float("nan")
        rows.append(row)
    df = pd.DataFrame(rows)
    df["pareto"] = _pareto(df["value"].to_numpy(dtype=float), df["retransmit_rate"].to_numpy(dtype=float))
    # Ranked by the paired difference to the recommendation (same seeds), not by means over
    # different seed sets; the mean breaks ties of candidates without common seeds.
    return df.sort_values(["vs_recommended", "value", "candidate"], na_position="last").reset_index(drop=True)


def _vs(r: pd.DataFrame, rec: pd.DataFrame, col: str, half: bool = False) -> float:
    """Mean of (candidate − recommendation) over the seeds both ran (`half`: its 95 % CI's half-width)."""
    if not len(r) or not len(rec):
        return float("nan")
    m = r[["seed", col]].merge(rec[["seed", col]], on="seed", suffixes=("", "_rec"))
    d = (m[col] - m[f"{col}_rec"]).to_numpy(dtype=float)
    d = d[np.isfinite(d)]
    if half:
        _m, lo, hi = t_interval(d)
        return (hi - lo) / 2 if np.isfinite(lo) else float("nan")
    return float(d.mean()) if d.size else float("nan")


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


def sensitivity_variants(p: Profile) -> list[tuple[str, str, float, Profile]]:
    """(dimension, label, factor, profile) of every variant the sensitivity check runs: RTT and
    buffer ×0.5/×2, load ×0.25…×4, and every other arrival process."""
    from iwlab.advise.profile import ARRIVALS

    out = []
    for dim, factors in (("rtt", (0.5, 2.0)), ("buffer", (0.5, 2.0)), ("load", (0.25, 0.5, 2.0, 4.0))):
        for f in factors:
            q = p.scaled(**{dim: f})
            if dim == "rtt" and q.rtt_s <= 0.004:
                continue
            if dim == "load" and p.flow_rate is None and q.load == p.load:
                continue  # a share already at the 95 % ceiling
            name = {"rtt": "RTT", "buffer": "buffer", "load": "load"}[dim]
            out.append((dim, f"{name} ×{f:g}", f, q))
    for kind in ARRIVALS:
        if kind != p.arrivals:
            out.append(("arrivals", kind, float("nan"), p.scaled(arrivals=kind)))
    return out


def _robust_choice(rec: Candidate, cands: Sequence[Candidate], table: pd.DataFrame,
                   sens: pd.DataFrame) -> tuple[Candidate, pd.DataFrame, str]:
    """The ranking of the leading candidates flips within the workload's uncertainty: the
    candidate with the best worst case over the profile and its variants (minimax regret), not
    the best mean at the profile alone. Returns it, the table relabelled, and the line saying so."""
    by_name = {c.name: c for c in cands}
    lead = [c for c in sens.columns if c in by_name]
    base = table.set_index("candidate").loc[lead, "value"].rename("profile as given")
    values = pd.concat([base.to_frame().T, sens.set_index("variant")[lead]]).astype(float)
    values = values.dropna(axis=1, how="any")
    if rec.name not in values.columns or values.shape[1] < 2:
        return rec, table, ""
    pick, worst = minimax_regret(values, prefer=lambda n: preference(by_name[n]))
    flips = ", ".join(f"{v} ({b})" for v, b in zip(sens["variant"], sens["best"]) if b != rec.name
                      and bool(sens.loc[sens["variant"] == v, "significant"].iloc[0]))
    line = (f"the ranking flips within the workload's uncertainty (at {flips}): recommending the best worst case, "
            f"{pick} (at most {worst[pick] * 100:.1f} % slower than the best of any variant), "
            + ("which is also the best mean" if pick == rec.name else
               f"rather than the best mean, {rec.name} (at most {worst[rec.name] * 100:.1f} % slower)"))
    if pick != rec.name:
        table = table.copy()
        st = table["status"].astype(object)
        st[table["candidate"] == rec.name] = f"best mean at the profile; worst case {worst[rec.name] * 100:.1f} % slower"
        st[table["candidate"] == pick] = "recommended"
        table["status"] = st
    return by_name[pick], table, line


def minimax_regret(values: pd.DataFrame, prefer: Any = None) -> tuple[str, pd.Series]:
    """The candidate with the best worst case: `values` is variants × candidates (the objective,
    lower is better); a candidate's regret in a variant is how much worse it is than that
    variant's best, relative to it; the pick minimises the largest regret over the variants
    (ties: `prefer(name)`, smaller first). Returns the pick and every candidate's worst regret.

    >>> v = pd.DataFrame({"a": [1.0, 3.0], "b": [1.2, 2.0]}, index=["x", "y"])
    >>> minimax_regret(v)[0]
    'b'
    """
    best = values.min(axis=1)
    regret = values.sub(best, axis=0).div(best, axis=0)
    worst = regret.max(axis=0)
    order = sorted(worst.index, key=lambda n: (round(float(worst[n]), 9), prefer(n) if prefer else n))
    return order[0], worst


def _sensitivity(p: Profile, cands: Sequence[Candidate], table: pd.DataFrame, rec: Candidate, make_task: Any,
                 spec: EvalSpec, col: str, runner: Runner, progress: bool, margin_s: float = 0.0) -> pd.DataFrame:
    """Runs the leading candidates (the recommendation and the next two by value) in every
    variant of `sensitivity_variants` with the same seeds; does the recommendation still hold —
    is no other leading candidate better than it beyond the margin with its whole CI?"""
    from iwlab.advise.progress import Progress

    distinct = table[~table["status"].str.startswith("identical")]
    lead = [rec.name] + [n for n in distinct["candidate"] if n != rec.name][:2]
    by_name = {c.name: c for c in cands}
    nseeds = max(2, min(4, int(table.loc[table["candidate"] == rec.name, "seeds"].iloc[0])))
    rows = []
    bar = Progress(progress, "sensitivity")
    try:
        for dim, label, factor, q in sensitivity_variants(p):
            task = make_task(q, label)
            tasks = [task(by_name[n], s) for n in lead for s in range(1, nseeds + 1)]
            bar.round(f"{label}: {', '.join(lead)} × {nseeds} seeds", len(tasks))
            res = []
            for r in runner.map(tasks, spec):
                res.append(r)
                bar.update(1)
            df = pd.DataFrame([{"candidate": r["point"]["candidate"], "seed": r["seed"], "v": r[col]} for r in res])
            stats = {n: t_interval(df[df["candidate"] == n]["v"].to_numpy(dtype=float)) for n in lead}
            best = min(lead, key=lambda n: (stats[n][0] if np.isfinite(stats[n][0]) else math.inf,
                                            preference(by_name[n])))
            piv = df.pivot(index="seed", columns="candidate", values="v")
            d = t_interval((piv[rec.name] - piv[best]).to_numpy(dtype=float)) if best != rec.name else (0.0, 0.0, 0.0)
            # A flip is significant when the paired 95 % CI of (recommendation − new best) lies
            # wholly above the margin: a smaller gain is no gain.
            significant = bool(best != rec.name and np.isfinite(d[1]) and d[1] > margin_s)
            detail = ("unchanged" if best == rec.name else
                      f"{best} better by {d[0] * 1e3:.1f} ms ±{(d[2] - d[1]) / 2 * 1e3:.1f}"
                      + ("" if significant else f": within the CI or the margin ±{margin_s * 1e3:.1f} ms, not significant"))
            row = {"dimension": dim, "variant": label, "factor": factor, "rtt_s": q.rtt_s,
                   "buffer_packets": q.buffer_packets(), "arrivals": q.arrivals, "best": best,
                   "same": not significant, "significant": significant, "detail": detail, "seeds": nseeds}
            for n in lead:
                row[f"{n}"] = stats[n][0]
            rows.append(row)
    finally:
        bar.close()
    return pd.DataFrame(rows)

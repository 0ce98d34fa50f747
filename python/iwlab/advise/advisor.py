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
from iwlab.advise.evaluate import EvalSpec, sweep_module
from iwlab.advise.profile import Profile
from iwlab.advise.search import Budget, RaceState, Runner, race, t_interval
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
           verify: bool = False, verify_seeds: int = 3, verify_duration: float | None = None,
           **flags: Any) -> Advice:
    """Recommends an IW (or IW policy) for a profile.

    `profile` is a Profile, a TOML file, or None (flags only); `flags` override its fields
    (rate, rtt, buffer, background, loss, sizes, load, tcp, clients, duration, warmup, objective,
    min_size, max_size, max_retransmit_pp, max_harm_pct, max_voip_ms). `candidates` are
    `KIND[:ARGS]` strings (default: fixed IW 1…64, RFC 3390, RFC 6928, size-based with θ and V
    searched, paced IW, adaptive policies when the engine has them). `budget`: runs ('200runs')
    or wall time ('120s'). `seeds`: seeds in the first round; `max_seeds`: at most this many.
    `prefix`: the policy file's route ('default' or a CIDR). `verify`: run the recommendation and
    the two runners-up on Linux TCP too (`verify.verify`: `verify_seeds` seeds of
    `verify_duration` seconds, default the profile's duration; root, namespaces).
    """
    sweep = sweep_module()
    from iwlab.scenario import Scenario

    if isinstance(profile, (str, Path)):
        profile = Profile.from_toml(profile)
    p = Profile.from_flags(profile, **flags)
    prefix = check_prefix(prefix)
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
        rec = next((c for c in cands if c.name == st.best), None)
        sens = _sensitivity(p, cands, table, rec, make_task, spec, col, runner, progress) \
            if sensitivity and rec is not None and st.stop_reason != INSUFFICIENT else \
            pd.DataFrame(columns=["variant", "best", "same", "detail", "significant"])
    finally:
        runner.close()
    runs = pd.DataFrame(st.rows)
    common = dict(profile=p, objective=p.objective.label(), candidates=table, runs=runs,
                  rounds=pd.DataFrame(st.rounds), sensitivity=sens, stop_reason=st.stop_reason,
                  stop_detail=st.stop_detail, budget=b.label(), seconds=st.seconds, pool=list(cands))
    if st.stop_reason == INSUFFICIENT or rec is None:
        return Advice(recommended={}, policy_file="", ip_route="",
                      notes=[f"no recommendation ({INSUFFICIENT}): {st.stop_detail}"], **common)
    row = table[table["candidate"] == rec.name].iloc[0]
    refused = _refusal(rec, table, cands)
    recommended = {"candidate": rec.name, "policy": _policy_name(rec), "policy_table": rec.policy,
                   "iw_segments": rec.iw_segments, "iw_segments_got": float(row["iw_got"]), "tcp": rec.tcp,
                   "kind": rec.kind, "deploy": rec.deploy, "deploy_command": "" if refused else _deploy_command(rec),
                   "value": float(row["value"]), "ci_low": float(row["ci_low"]), "ci_high": float(row["ci_high"]),
                   "retransmit_rate": float(row["retransmit_rate"]), "completed": float(row["completed"]),
                   "seeds": int(row["seeds"])}
    notes = []
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
    a = Advice(recommended=recommended,
               policy_file="" if refused else _policy_file(rec, prefix, p, p.objective.label(), float(row["value"])),
               ip_route="" if refused else _ip_route(rec, prefix), refused=refused, notes=notes, **common)
    if verify:
        from iwlab.advise.verify import verify as run_verify

        a.verify, a.verify_detail = run_verify(a, seeds=verify_seeds, duration=verify_duration,
                                               say=print if progress else None)
    return a


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
    # Ranked by the paired difference to the recommendation (same seeds), not by means over
    # different seed sets; the mean breaks ties of candidates without common seeds.
    return df.sort_values(["vs_recommended", "value", "candidate"], na_position="last").reset_index(drop=True)


def _vs(r: pd.DataFrame, rec: pd.DataFrame, col: str) -> float:
    """Mean of (candidate − recommendation) over the seeds both ran."""
    if not len(r) or not len(rec):
        return float("nan")
    m = r[["seed", col]].merge(rec[["seed", col]], on="seed", suffixes=("", "_rec"))
    d = (m[col] - m[f"{col}_rec"]).to_numpy(dtype=float)
    d = d[np.isfinite(d)]
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
                                            SIMPLICITY.get(by_name[n].deploy, 9), by_name[n].iw_segments, n))
            piv = df.pivot(index="seed", columns="candidate", values="v")
            d = t_interval((piv[rec.name] - piv[best]).to_numpy(dtype=float)) if best != rec.name else (0.0, 0.0, 0.0)
            same = best == rec.name
            # A flip is significant when the paired 95 % CI of (recommendation − new best) lies above 0.
            significant = bool(not same and np.isfinite(d[1]) and d[1] > 0)
            detail = ("unchanged" if same else
                      f"{best} better by {d[0] * 1e3:.1f} ms (95 % CI {d[1] * 1e3:.1f}…{d[2] * 1e3:.1f} ms)"
                      + ("" if significant else ": within the CI, not significant"))
            row = {"variant": label, "rtt_s": q.rtt_s, "buffer_packets": q.buffer_packets(), "best": best,
                   "same": same, "significant": significant, "detail": detail, "seeds": nseeds}
            for n in lead:
                row[f"{n}"] = stats[n][0]
            rows.append(row)
    finally:
        bar.close()
    return pd.DataFrame(rows)

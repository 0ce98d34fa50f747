"""The advisor's shared types, below every other module of `iwlab.advise`: what a candidate is
(and how it deploys on a Linux host), and the advice's record (figures, recommendation, the
lines to deploy). The search, the report and the advisor all import from here, never from each
other upwards.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from iwlab.advise.profile import Profile

__all__ = ["Candidate", "DEPLOY", "SIMPLICITY", "AdviceRecord", "MIN_FLOWS_PER_RUN", "INSUFFICIENT", "LIMITS"]

#: How a candidate reaches a Linux host (docs/deploy.md):
DEPLOY = {
    # `iwlab apply` writes the route's initcwnd: one IW for every connection to the prefix
    "route": "iwlab apply (route initcwnd)",
    # `iwlab flow-iw` sets each connection's IW from its declared size (eBPF sock_ops, TCP_BPF_IW)
    "flow-iw": "iwlab flow-iw (per-flow IW, eBPF)",
    # the first flight paced over the handshake RTT, through `iwlab flow-iw`
    "paced": "iwlab flow-iw (paced first flight)",
    # `iwlab watch` re-decides the route's initcwnd per destination from finished connections
    "watch": "iwlab watch (adaptive, per destination)",
}

#: Simplicity of a deployment, for candidates equal within the margin: a fixed route IW, then a
#: per-size IW (a per-flow program), then a paced first flight, then an adaptive watcher.
SIMPLICITY = {"route": 0, "flow-iw": 1, "paced": 2, "watch": 3}

#: Fewer flows than this per run in the objective's range: the means are noise, no advice.
MIN_FLOWS_PER_RUN = 30
INSUFFICIENT = "insufficient data"

#: What the advice cannot see (docs/advise.md, "Limits"); printed with every advice.
LIMITS = (
    "the figures are the simulator's (iwlab-core): --verify checks the leading candidates on real Linux TCP",
    "one bottleneck, one profile: a path unlike it (RTT, buffer, cross traffic) may want another IW; see the "
    "sensitivity check",
    "a flow still open at the run's end counts with its time censored there (a lower bound); the completed "
    "fraction is a constraint (at most 2 pp below the best-completing candidate)",
    "candidates equal within the margin, or not told apart, are separated by simplicity of deployment and "
    "nearness to IW 10, not by evidence",
)


@dataclass(frozen=True)
class Candidate:
    """One thing to try: `policy` is an `[iw.policies]` table; `tcp` are `[tcp]` fields it needs;
    `iw_segments` the IW of a connection whose size is unknown; `deploy` one of `DEPLOY`."""

    name: str
    kind: str
    policy: dict[str, Any]
    iw_segments: int
    tcp: dict[str, Any] = field(default_factory=dict)
    note: str = ""
    deploy: str = "route"

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "kind": self.kind, "policy": self.policy, "tcp": self.tcp,
                "iw_segments": self.iw_segments, "deploy": self.deploy}


@dataclass
class AdviceRecord:
    """The recommendation and its evidence.

    * `recommended` (empty when the data are insufficient): candidate name, `policy` (its name in
      the policy file), `policy_table` (the `[iw.policies]` entry), `iw_segments` (the IW of a
      connection of unknown size), `iw_segments_got` (the mean IW the profile's flows got), `tcp`
      (fields it needs, e.g. paced IW), `deploy` and `deploy_command`, the objective's `value`
      with `ci_low`/`ci_high` (95 %, Student t over seeds), `completed`, `retransmit_rate`, `seeds`;
    * `candidates`: one row per candidate (value and CI, `vs_recommended` — the paired mean
      difference to the recommendation over the seeds both ran —, completed fraction,
      retransmission rate, constraint figures, seeds run, status — why it was dropped — and
      whether it is on the Pareto front);
    * `runs`: one row per run (candidate, seed, every figure); `rounds`: the race, round by round;
    * `sensitivity`: the best of the leading candidates at half/double RTT and buffer;
    * `stop_reason` ("separated", "max-seeds", "budget" or "insufficient data") and `stop_detail`;
    * `policy_file` (TOML for `iwlab apply`/`flow-iw`/`watch`) and `ip_route` (the equivalent
      `ip route` line, only for a route-deployed winner); both empty, with `refused` saying why,
      when the winner cannot be deployed.
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
    #: why no policy file / route line was written for the winner ('' when they were)
    refused: str = ""
    #: `--verify`: the leading candidates on real Linux TCP beside the simulator (verify.py)
    verify: pd.DataFrame | None = None
    verify_detail: str = ""
    #: what the verification did to the advice ('' unless it ran; 'reversed: …' changes the headline)
    verify_verdict: str = ""
    #: the candidates raced (to re-run any of them, e.g. `--verify`)
    pool: list[Candidate] = field(default_factory=list)
    #: the practical-equivalence margin (seconds) the decision used, and its rule
    margin_s: float = 0.0
    margin_rule: str = ""
    #: where the recommendation holds (the sensitivity's region), one line
    region: str = ""

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
            "headline": self.headline(),
            "objective": self.objective,
            "margin_s": self.margin_s,
            "margin_rule": self.margin_rule,
            "region": self.region,
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
            "refused": self.refused,
            "verify": None if self.verify is None else {"detail": self.verify_detail, "verdict": self.verify_verdict,
                                                         "variants": self.verify.to_dict("records")},
            "limits": LIMITS,
        })

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2, default=str)

    def headline(self) -> list[str]:
        """The first three lines: the recommendation (or that there is none), its margin over the
        runner-up, and the workload region where it holds."""
        r = self.recommended
        t = self.candidates
        if not r:
            low = t[t["status"].astype(str).str.startswith("lowest mean")]
            first = f"NO recommendation ({self.stop_reason}): {self.stop_detail}"
            second = (f"lowest mean, not recommended: {low.iloc[0]['candidate']} "
                      f"({low.iloc[0]['value'] * 1e3:.1f} ms ±{_half(low.iloc[0]) * 1e3:.1f})" if len(low)
                      else "no candidate is recommended")
            return [first, second, f"workload: {self.profile.workload_label()}"]
        pre = f"[verify {self.verify_verdict}] " if self.verify_verdict.startswith("reversed") else ""
        first = (f"{pre}recommended: {r['candidate']} (IW {r['iw_segments']}{', paced' if r['tcp'] else ''}, "
                 f"{DEPLOY[r['deploy']]}): {self.objective} {r['value'] * 1e3:.1f} ms "
                 f"±{(r['ci_high'] - r['ci_low']) / 2 * 1e3:.1f} (95 % CI, {r['seeds']} seeds)")
        others = t[(t["candidate"] != r["candidate"]) & ~t["status"].astype(str).str.startswith("identical")]
        others = others[np.isfinite(others["value"].to_numpy(dtype=float))]
        if len(others):
            ru = others.sort_values("value").iloc[0]
            d, h = float(ru["vs_recommended"]), float(ru.get("vs_recommended_pm", float("nan")))
            m = self.margin_s
            if np.isfinite(h) and d - h > m:
                verdict = f"better beyond the margin ±{m * 1e3:.1f} ms"
            elif np.isfinite(h) and abs(d) + h <= m:
                verdict = f"equal within the margin ±{m * 1e3:.1f} ms; chosen as the simpler deployment nearer IW 10"
            elif d < 0:
                verdict = (f"the runner-up's mean is lower but not beyond the margin ±{m * 1e3:.1f} ms with its CI; "
                           "chosen as the simpler deployment nearer IW 10")
            else:
                verdict = f"not told apart at this precision (margin ±{m * 1e3:.1f} ms)"
            second = (f"runner-up {ru['candidate']}: {d * 1e3:+.1f} ms ±{h * 1e3:.1f} against it — {verdict}")
        else:
            second = "no runner-up"
        return [first, second, self.region]

    def summary(self) -> str:
        lines = self.headline()
        lines += [f"stopped: {self.stop_reason} — {self.stop_detail}",
                  f"{len(self.runs)} runs in {self.seconds:.1f} s (budget {self.budget}); margin "
                  f"±{self.margin_s * 1e3:.1f} ms ({self.margin_rule})", ""]
        t = self.candidates
        rec = self.recommended.get("candidate")
        lines.append(f"candidates (times in ms, ± is the 95 % CI half-width; vs {rec or 'the lowest mean'} "
                     "paired over common seeds):")
        tab = pd.DataFrame({
            "candidate": t["candidate"], "deploy": t["deploy"], "iw_got": t["iw_got"].round(1), "seeds": t["seeds"],
            "mean": (t["value"] * 1e3).round(1),
            "±": [round(_half(row) * 1e3, 1) for _, row in t.iterrows()],
            "vs": (t["vs_recommended"] * 1e3).round(1),
            "vs ±": (t.get("vs_recommended_pm", pd.Series([np.nan] * len(t))) * 1e3).round(1),
            "completed %": (t["completed"] * 100).round(1),
            "retransmit %": (t["retransmit_rate"] * 100).round(2),
            "status": t["status"]})
        lines.append(tab.to_string(index=False))
        if len(self.sensitivity):
            lines += ["", "sensitivity (times in ms; best of the leading candidates when the profile changes):"]
            cols = [c for c in ("dimension", "variant", "best", "same", "significant", "detail")
                    if c in self.sensitivity.columns]
            lines.append(self.sensitivity[cols].to_string(index=False))
        if self.verify is not None:
            lines += ["", f"verify on Linux TCP (iwlab emulate): {self.verify_detail}"]
            if len(self.verify):
                lines.append(self.verify.to_string(index=False))
        r = self.recommended
        if self.policy_file:
            lines += ["", f"policy file ({r['deploy_command']}):", self.policy_file.rstrip()]
        if self.ip_route:
            lines += ["", f"or: {self.ip_route}"]
        lines += [f"note: {n}" for n in self.notes]
        lines += ["", "limits:"] + [f"- {x}" for x in LIMITS]
        return "\n".join(lines)


def _half(row: Any) -> float:
    """Half the width of a table row's 95 % CI (seconds; NaN without one)."""
    lo, hi = float(row["ci_low"]), float(row["ci_high"])
    return (hi - lo) / 2 if np.isfinite(lo) and np.isfinite(hi) else float("nan")

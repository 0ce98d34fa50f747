"""`iwlab advise --from-watch STATE`: one profile per destination prefix from what `iwlab watch`
measured, one recommendation each, one policy file for all of them.

The watcher's SQLite state (`iwlab.deploy.state`, schema version 1 or 2) keeps per
prefix: connections seen, data segments out, retransmissions, and the sum and count of RTT
samples. From these a prefix's profile takes

* `rtt` = mean RTT sample;
* `sizes` = `Nseg` with N = (segments out − retransmissions) / connections, the mean flow in
  segments (the state keeps counters, not each flow's size: a mean, not a distribution);
* `loss` = retransmissions / segments out, as random loss — the only way the profile can hold
  a measured loss rate; with a modelled `background` it would count congestion losses twice;

and everything else (rate, buffer, background, load, TCP flavour, objective) from the base
profile (flags or file), which the watcher cannot measure. The file is opened read-only and
must be an iwlab state file of schema version 1 or 2 (2 added the evidence's provenance; the
`prefixes` table read here is the same in both).
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pandas as pd

from iwlab.advise.profile import Profile, ProfileError

__all__ = ["profiles_from_watch", "advise_watch", "WatchAdvice", "APPLICATION_ID", "SCHEMA_VERSION", "SCHEMA_VERSIONS"]

APPLICATION_ID = 0x49574C42  # "IWLB", iwlab.deploy.state
SCHEMA_VERSION = 2
SCHEMA_VERSIONS = (1, 2)  # the versions whose `prefixes` table this reads


def profiles_from_watch(state: str | Path, base: Profile, netns: str | None = None,
                        min_connections: int = 1) -> dict[str, tuple[Profile, dict[str, Any]]]:
    """prefix → (its profile, what was measured) for every prefix with at least
    `min_connections` connections and an RTT sample."""
    path = Path(state)
    if not path.is_file():
        raise ProfileError("from_watch", str(path), "an iwlab watch state file (SQLite) that exists")
    try:
        db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            app = db.execute("PRAGMA application_id").fetchone()[0]
            version = db.execute("PRAGMA user_version").fetchone()[0]
            if app != APPLICATION_ID or version not in SCHEMA_VERSIONS:
                raise ProfileError("from_watch", str(path), f"an iwlab state file of schema version 1 or 2 "
                                   f"(this one: application_id {app:#x}, version {version})")
            rows = db.execute("SELECT prefix, connections, segs_out, retrans, rtt_us_sum, rtt_n FROM prefixes "
                              "WHERE netns = ? ORDER BY prefix", (netns or "",)).fetchall()
        finally:
            db.close()
    except sqlite3.DatabaseError as e:
        raise ProfileError("from_watch", str(path), f"a readable iwlab state file ({e})") from None
    out = {}
    for prefix, conns, segs, retrans, rtt_sum, rtt_n in rows:
        if conns < min_connections or not rtt_n or segs <= 0:
            continue
        rtt = rtt_sum / rtt_n / 1e6
        n = max(1, round((segs - retrans) / conns))
        loss = min(retrans / segs, 0.5)
        measured = {"prefix": prefix, "connections": conns, "segments_out": segs, "retransmissions": retrans,
                    "rtt_s": rtt, "mean_flow_segments": n, "retransmit_rate": retrans / segs}
        p = Profile.from_flags(base, rtt=f"{max(rtt, 0.005) * 1e3:.3f}ms", sizes=f"{n}seg", loss=loss)
        out[prefix] = (replace(p, source=f"{path} [{prefix}]"), measured)
    if not out:
        raise ProfileError("from_watch", str(path), f"at least one prefix with {min_connections}+ connections and an "
                           "RTT sample (run `iwlab watch` longer)")
    return out


@dataclass
class WatchAdvice:
    """Per-prefix advice: `prefixes` (one row per prefix: what was measured, the recommendation),
    `advice` (prefix → Advice), and one `policy_file` covering every prefix."""

    prefixes: pd.DataFrame
    advice: dict[str, Any]
    policy_file: str

    def to_dict(self) -> dict[str, Any]:
        return {"prefixes": [{**row, "recommended": self.advice[row["prefix"]].to_dict()["recommended"]}
                             for row in self.prefixes.to_dict("records")],
                "policy_file": self.policy_file}

    def summary(self) -> str:
        cols = ["prefix", "connections", "rtt_ms", "mean_flow_segments", "retransmit_pct", "recommended",
                "iw_segments", "value_ms", "stop_reason"]
        t = self.prefixes.assign(rtt_ms=(self.prefixes["rtt_s"] * 1e3).round(1),
                                 retransmit_pct=(self.prefixes["retransmit_rate"] * 100).round(2),
                                 value_ms=(self.prefixes["value"] * 1e3).round(1))
        return t[cols].to_string(index=False) + "\n\npolicy file (iwlab apply):\n" + self.policy_file


def advise_watch(state: str | Path, base: Profile, netns: str | None = None, budget: str | int | None = "120s",
                 **kw: Any) -> WatchAdvice:
    """Runs `advise` for every measured prefix (the budget shared equally) and writes one policy file."""
    from iwlab.advise.advisor import advise, policy_entry
    from iwlab.advise.search import Budget

    profiles = profiles_from_watch(state, base, netns)
    b = Budget.parse(budget)
    share = (Budget(runs=max(1, b.runs // len(profiles))) if b.runs is not None else
             Budget(seconds=b.seconds / len(profiles)) if b.seconds is not None else b)
    per_budget = f"{share.runs}runs" if share.runs is not None else (f"{share.seconds:g}s" if share.seconds else None)
    rows, advice = [], {}
    policies: dict[str, str] = {}
    routes = []
    for prefix, (p, measured) in profiles.items():
        a = advise(p, budget=per_budget, prefix=prefix, **kw)
        advice[prefix] = a
        r = a.recommended
        if r and a.policy_file:
            # Only a winner that deploys gets a route (a paced winner, or no answer, gets none).
            name, line = policy_entry(r)
            policies[name] = line
            routes.append((prefix, name))
        rows.append({**measured, "recommended": r.get("candidate", ""), "iw_segments": r.get("iw_segments"),
                     "value": r.get("value"), "ci_low": r.get("ci_low"), "ci_high": r.get("ci_high"),
                     "stop_reason": a.stop_reason})
    text = [f"# iwlab advise --from-watch {state}: one route per measured prefix", "[iw.policies]",
            *policies.values(), ""]
    for prefix, name in routes:
        text += ["[[routes]]", f'prefix = "{prefix}"', f'policy = "{name}"', ""]
    return WatchAdvice(pd.DataFrame(rows), advice, "\n".join(text))

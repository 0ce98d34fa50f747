"""Adaptive IW policies against fixed IW3/IW10 (docs/adaptive-policies.md).

The policies are added to a preset with `--set` and chosen by a sweep grid; this module holds
those settings and turns a sweep's flow records into the comparison table: per grid point,
how many response flows, how many completed, median and 95th-percentile completion time of
the completed ones, retransmissions and RTOs per flow, the share of flows that retransmitted,
and the mean IW the flows got (segments).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pandas as pd

__all__ = ["POLICIES", "policy_sets", "compare", "markdown"]

#: The adaptive policies, with their defaults (docs/scenario-format.md): the RFC 6928 fallback
#: cache, per-destination AIMD and the learned IW.
POLICIES = {
    "fb": '{ kind = "rfc6928-fallback" }',
    "ai": '{ kind = "aimd" }',
    "le": '{ kind = "learned" }',
}


def policy_sets() -> list[str]:
    """`--set` overrides adding the policies to a scenario's `[iw.policies]`."""
    return [f"iw.policies.{name}={spec}" for name, spec in POLICIES.items()]


def compare(out: str | Path, by: Sequence[str], app: int | None = None) -> pd.DataFrame:
    """The comparison table of the sweep stored in `out`, one row per value of the grid keys
    `by` (seeds pooled): server-sent flows (of application `app` only, if given), outside the
    warm-up."""
    from iwlab.sweep import sweep_records

    f = sweep_records(out, table="flows")
    f = f[(f["sender"] == "server") & ~f["in_warmup"].astype(bool)]
    if app is not None:
        f = f[f["app"] == app]
    done = f[f["completed"].astype(bool)]

    def q(p: float):
        return lambda x: float(x.quantile(p)) if len(x) else float("nan")

    g = f.groupby(list(by), sort=False)
    out_df = pd.DataFrame({
        "flows": g.size(),
        "completed": g["completed"].mean(),
        "retransmits_per_flow": g["retransmits"].mean(),
        "flows_retransmitting": g["retransmits"].agg(lambda x: float((x > 0).mean())),
        "rtos_per_flow": g["timeouts"].mean(),
        "mean_iw_segments": g["iw_segments"].mean(),
    })
    d = done.groupby(list(by), sort=False)["completion"]
    out_df.insert(2, "fct_median", d.agg(q(0.5)))
    out_df.insert(3, "fct_p95", d.agg(q(0.95)))
    return out_df.reset_index()


def markdown(df: pd.DataFrame, digits: int = 3) -> str:
    """A Markdown table of `df` (numbers rounded to `digits` significant places)."""
    def cell(v) -> str:
        if isinstance(v, float):
            return "-" if v != v else f"{v:.{digits}g}"
        return str(v)

    head = "| " + " | ".join(df.columns) + " |"
    rule = "|" + "|".join("---" for _ in df.columns) + "|"
    rows = ["| " + " | ".join(cell(v) for v in row) + " |" for row in df.itertuples(index=False)]
    return "\n".join([head, rule, *rows])

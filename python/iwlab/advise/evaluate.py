"""One run → the few numbers the advisor compares (computed where the run happened, so a
worker or a Dask node sends back a small dict, not the records).

The run itself goes through `iwlab.runs` (`Task`, `run_one`), exactly as `iwlab sweep` runs it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["EvalSpec", "evaluate", "METRICS"]

METRICS = ("fct_mean", "fct_median", "fct_p95", "fct_p99")


@dataclass(frozen=True)
class EvalSpec:
    min_size: int | None = None
    max_size: int | None = None
    rate_bps: int = 0
    voip: bool = False
    #: indices of the applications whose flows are the candidate's, and of the IW-3 flows sharing the link
    #: (records without `app_name`; an app of `count` instances has one id per instance there)
    apps: tuple[int, ...] = (0,)
    others: tuple[int, ...] = ()
    #: the same applications by name: every instance's flows (records carry `app_name`)
    names: tuple[str, ...] = ()
    other_names: tuple[str, ...] = ()
    #: the run's end, seconds: a flow still open then counts with its completion time censored
    #: there (end − start), a lower bound of what it would have taken; None counts completed flows only
    end: float | None = None

    @classmethod
    def of(cls, data: dict[str, Any], **kw: Any) -> EvalSpec:
        """The spec for a scenario made by `build.scenario_data` (apps found by name)."""
        from iwlab.advise.build import FOREGROUND, OTHERS

        from iwlab.emulate.units import seconds

        names = [a.get("name", "") for a in data["apps"]]
        kw.setdefault("end", seconds(data["duration"]))
        return cls(apps=tuple(i for i, n in enumerate(names) if n.startswith(f"{FOREGROUND}-")),
                   others=tuple(i for i, n in enumerate(names) if n.startswith(f"{OTHERS}-")),
                   names=tuple(n for n in names if n.startswith(f"{FOREGROUND}-")),
                   other_names=tuple(n for n in names if n.startswith(f"{OTHERS}-")), **kw)


def _stats(x: np.ndarray) -> dict[str, float]:
    if x.size == 0:
        return {m: float("nan") for m in METRICS}
    return {"fct_mean": float(np.mean(x)), "fct_median": float(np.median(x)),
            "fct_p95": float(np.percentile(x, 95)), "fct_p99": float(np.percentile(x, 99))}


def reduce(flows: Any, links: Any, queues: Any, spec: EvalSpec) -> dict[str, float]:
    """Per-run figures: completion-time statistics and retransmission rate of the candidate's
    flows (after the warm-up, in the size range; a flow not completed by the run's end counts
    with its time censored at the end — otherwise a candidate that leaves its slowest flows
    unfinished would look fast), the fraction completed, the mean completion time of the
    IW-3 flows sharing the link, and the p99 queueing delay at the bottleneck (R → L)."""
    f = flows[~flows["in_warmup"].to_numpy(dtype=bool, na_value=False)]
    app = f["app"].to_numpy(dtype=np.int64, na_value=-1)
    size = f["response_bytes"].to_numpy(dtype=float, na_value=np.nan)
    done = f["completed"].to_numpy(dtype=bool, na_value=False)
    fct = f["completion"].to_numpy(dtype=float, na_value=np.nan)
    # By name where the records say it: the record's `app` is the instance, so matching the app's
    # index would keep only its first client's flows.
    by_name = bool(spec.names) and "app_name" in f.columns
    app_name = f["app_name"].astype(str).to_numpy() if by_name else None
    mine = np.isin(app_name, spec.names) if by_name else np.isin(app, spec.apps)
    in_range = np.ones(len(f), dtype=bool)
    if spec.min_size is not None:
        in_range &= size >= spec.min_size
    if spec.max_size is not None:
        in_range &= size <= spec.max_size
    sel = mine & in_range
    if spec.end is not None:
        start = f["start"].to_numpy(dtype=float, na_value=np.nan)
        fct = np.where(done, fct, np.maximum(spec.end - start, 0.0))
        out: dict[str, float] = _stats(fct[sel & np.isfinite(fct)])
    else:
        out = _stats(fct[sel & done])
    out["flows"] = float(sel.sum())
    out["completed"] = float((sel & done).sum() / sel.sum()) if sel.sum() else float("nan")
    segs = f["data_segments"].to_numpy(dtype=float, na_value=0)[mine]
    rtx = f["retransmits"].to_numpy(dtype=float, na_value=0)[mine]
    out["retransmit_rate"] = float(rtx.sum() / segs.sum()) if segs.sum() else float("nan")
    out["timeouts"] = float(f["timeouts"].to_numpy(dtype=float, na_value=0)[mine].sum())
    iw = f["iw_segments"].to_numpy(dtype=float, na_value=np.nan)[mine]
    out["iw_segments"] = float(np.nanmean(iw)) if iw.size and np.isfinite(iw).any() else float("nan")
    others = (np.isin(app_name, spec.other_names) if by_name else np.isin(app, spec.others)) & done
    out["others_fct_mean"] = float(np.mean(fct[others])) if others.any() else float("nan")
    out["queue_delay_p99"] = float("nan")
    if spec.voip and len(queues) and len(links):
        row = links[(links["from"] == "router-right") & (links["to"] == "router-left")]
        if len(row):
            port = int(row["port"].iloc[0])
            q = queues[queues["port"] == port]["bytes"].to_numpy(dtype=float, na_value=np.nan)
            if q.size:
                out["queue_delay_p99"] = float(np.percentile(q, 99) * 8 / spec.rate_bps)
    return out


def evaluate(task: Any, spec: EvalSpec) -> dict[str, Any]:
    """Runs one sweep task and reduces it (in a worker process or on a Dask worker)."""
    from iwlab.runs import run_one

    rec = run_one(task)
    out = reduce(rec.frame("flows"), rec.frame("links"), rec.frame("queues"), spec)
    return {"run_id": task.run_id, "point": task.point, "seed": task.seed,
            "wall_seconds": rec.meta["wall_seconds"], **out}

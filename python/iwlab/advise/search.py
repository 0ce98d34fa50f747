"""The racing search: every candidate starts with a few seeds; after each round a candidate whose
paired confidence interval (its objective minus the current best's, seed by seed — the same seeds,
so the same flow arrivals and sizes) lies entirely above zero is dropped, as is one that violates a
constraint with confidence; the survivors get twice the seeds. It stops when one candidate is left
(the best is separated), when the seeds reach `max_seeds` with several left (they are
indistinguishable at that precision), or when the budget is spent — and says which. When a
round does not fit in what is left of the budget, the worse half of the survivors is dropped
first (successive halving) until it fits.

Runs go through `iwlab.runs` (`Task`, `run_one`) in a pool of local
processes kept for the whole search, or on a Dask cluster.
"""

from __future__ import annotations

import math
import re
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from iwlab.advise.types import INSUFFICIENT, MIN_FLOWS_PER_RUN, SIMPLICITY, Candidate
from iwlab.advise.evaluate import EvalSpec, evaluate

__all__ = ["flows_per_run", "flows_needed", "Budget", "Margin", "Runner", "race", "RaceState", "t_interval", "preference"]

CONFIDENCE = 0.95
#: A candidate may complete at most this fraction fewer of the profile's flows than the best-completing one.
COMPLETION_SLACK = 0.02


@dataclass(frozen=True)
class Budget:
    """`--budget`: a number of runs (`200runs`, `200`) or seconds of wall time (`120s`, `2min`)."""

    runs: int | None = None
    seconds: float | None = None

    @classmethod
    def parse(cls, text: str | int | None) -> Budget:
        if text is None:
            return cls()
        if isinstance(text, int) and not isinstance(text, bool):
            if text < 1:
                raise ValueError(f"budget = {text} is not allowed; expected >= 1 run")
            return cls(runs=text)
        t = str(text).strip().lower()
        m = re.fullmatch(r"([0-9]+)\s*(runs?)?", t)
        if m and int(m.group(1)) >= 1:
            return cls(runs=int(m.group(1)))
        m = re.fullmatch(r"([0-9]*\.?[0-9]+)\s*(s|sec|min|m|h)", t)
        if m and float(m.group(1)) > 0:
            k = {"s": 1, "sec": 1, "min": 60, "m": 60, "h": 3600}[m.group(2)]
            return cls(seconds=float(m.group(1)) * k)
        raise ValueError(f"budget = {text!r} is not allowed; expected runs ('200runs', '200') or a time "
                         "('120s', '2min') > 0")

    def label(self) -> str:
        if self.runs is not None:
            return f"{self.runs} runs"
        if self.seconds is not None:
            return f"{self.seconds:g} s"
        return "unlimited"


@dataclass(frozen=True)
class Margin:
    """`--margin`: the practical-equivalence margin. Two candidates whose objectives differ by less
    than it are equal (whatever the CI says); a difference is significant only when the whole 95 %
    CI of the paired difference lies beyond it. A share of the best candidate's objective ('2%',
    at least `floor` seconds) or a time ('5ms')."""

    share: float | None = 0.02
    seconds: float | None = None
    floor: float = 0.001

    @classmethod
    def parse(cls, text: str | float | None) -> Margin:
        if text is None:
            return cls()
        t = str(text).strip().lower()
        allowed = "a share of the objective ('2%', 0 <= share < 100 %) or a time ('5ms', '0.01s', >= 0)"
        m = re.fullmatch(r"([0-9]*\.?[0-9]+)\s*%", t)
        if m and float(m.group(1)) < 100:
            return cls(share=float(m.group(1)) / 100)
        m = re.fullmatch(r"([0-9]*\.?[0-9]+)\s*(us|ms|s)", t)
        if m:
            k = {"us": 1e-6, "ms": 1e-3, "s": 1.0}[m.group(2)]
            return cls(share=None, seconds=float(m.group(1)) * k)
        raise ValueError(f"margin = {text!r} is not allowed; expected {allowed}")

    def of(self, best: float) -> float:
        """The margin in seconds when the best candidate's objective is `best` seconds."""
        if self.seconds is not None:
            return self.seconds
        v = self.share * best if np.isfinite(best) else 0.0
        return max(v, self.floor)

    def label(self) -> str:
        if self.seconds is not None:
            return f"{self.seconds * 1e3:g} ms"
        return f"{self.share * 100:g} % of the objective, at least {self.floor * 1e3:g} ms"


def preference(c: Candidate) -> tuple[Any, ...]:
    """Among candidates equal within the margin (or not told apart): the simplest deployment
    wins (a fixed route IW, then a per-size IW, then a paced first flight, then an adaptive
    policy), then the IW nearest today's default (IW 10, RFC 6928), then the name."""
    return (SIMPLICITY.get(c.deploy, 9), abs(c.iw_segments - DEFAULT_IW), c.name)


#: Today's default initial window (RFC 6928; Linux since 2.6.39).
DEFAULT_IW = 10


def t_interval(x: np.ndarray, confidence: float = CONFIDENCE) -> tuple[float, float, float]:
    """Mean and Student-t confidence interval of the finite values of `x` (NaN CI below two values)."""
    x = np.asarray(x, dtype=float)
    x = x[np.isfinite(x)]
    if x.size == 0:
        return float("nan"), float("nan"), float("nan")
    m = float(np.mean(x))
    if x.size < 2:
        return m, float("nan"), float("nan")
    from scipy.stats import t

    h = float(t.ppf(0.5 + confidence / 2, x.size - 1) * np.std(x, ddof=1) / math.sqrt(x.size))
    return m, m - h, m + h


class Runner:
    """Runs tasks in local processes (kept across rounds) or on a Dask cluster (`iwlab.runs.Pool`)."""

    def __init__(self, jobs: int | None = None, dask: Any = None):
        from iwlab.runs import Pool

        self.pool = Pool(jobs, dask)
        self.jobs = self.pool.jobs

    def map(self, tasks: Sequence[Any], spec: EvalSpec) -> Iterator[dict[str, Any]]:
        return self.pool.map(evaluate, tasks, spec, names=lambda t: t.run_id)

    def close(self) -> None:
        self.pool.close()


@dataclass
class RaceState:
    """What the search knows: per-run rows, each candidate's status, the rounds, why it stopped."""

    rows: list[dict[str, Any]] = field(default_factory=list)
    status: dict[str, str] = field(default_factory=dict)  # "racing" or why it was dropped
    dropped_in: dict[str, int] = field(default_factory=dict)
    rounds: list[dict[str, Any]] = field(default_factory=list)
    stop_reason: str = ""
    stop_detail: str = ""
    #: why a candidate still races: a constraint not yet decided, or a tie with the best
    open: dict[str, str] = field(default_factory=dict)
    #: the constraints' baseline is worse than the best with confidence (it keeps running as
    #: their reference, but no longer as a contender)
    reference_worse: bool = False
    best: str = ""
    #: the margin (seconds) at the last decision; the candidates the recommendation was chosen from
    margin_s: float = 0.0
    eligible: list[str] = field(default_factory=list)
    #: candidates over a constraint's limit at their last look (never recommended)
    infeasible: set[str] = field(default_factory=set)
    runs: int = 0
    seconds: float = 0.0


def _matrix(rows: list[dict[str, Any]], names: Sequence[str], col: str) -> dict[str, dict[int, float]]:
    """candidate → seed → value. A completion-time statistic that is undefined because no flow in
    the objective's range completed counts as +inf (the worst); a seed without any such flow
    (the same for every candidate: common arrivals) is left out."""
    out: dict[str, dict[int, float]] = {n: {} for n in names}
    for r in rows:
        if r["candidate"] in out:
            v = r.get(col, float("nan"))
            if not np.isfinite(v) and col.startswith("fct"):
                if not r.get("flows", 1):
                    continue
                v = float("inf")
            out[r["candidate"]][r["seed"]] = v
    return out


def _paired(a: dict[int, float], b: dict[int, float]) -> np.ndarray:
    seeds = sorted(set(a) & set(b))
    d = np.array([a[s] - b[s] for s in seeds], dtype=float)
    both_inf = np.array([np.isinf(a[s]) and np.isinf(b[s]) for s in seeds], dtype=bool)
    d[both_inf] = 0.0
    return d


def race(candidates: Sequence[Candidate], make_task: Callable[[Candidate, int], Any], spec: EvalSpec,
         objective: str, constraint_checks: Sequence[tuple[str, str, float, Callable[[dict[str, Any], dict[str, Any]], float]]],
         baseline: str | None, budget: Budget, runner: Runner, n0: int = 3, max_seeds: int = 24,
         progress: bool = True, margin: Margin = Margin()) -> RaceState:
    """Races `candidates` on `objective` (a column of the per-run figures, lower is better).

    `constraint_checks` are (name, column, limit, f(run, baseline_run) → excess over the baseline);
    a candidate whose excess has a CI entirely above the limit is dropped; the best is chosen among
    candidates whose mean excess is within the limit. `baseline` (IW 3) is run with every seed any
    candidate gets, and never dropped while constraints need it.

    `margin` (practical equivalence): a candidate leaves as worse only when the CI of its paired
    difference to the best lies wholly above the margin, and as equal when that CI lies wholly
    within ±margin. At the end the recommendation is the most preferred (`preference`) of the
    best and every candidate not shown worse than it by more than the margin."""
    from iwlab.advise.progress import Progress

    names = [c.name for c in candidates]
    by_name = {c.name: c for c in candidates}
    # Ties in the mean (and identical twins) go to the simplest deployment, then the IW nearest
    # today's default (`preference`).
    def modesty(n: str) -> tuple[Any, ...]:
        return preference(by_name[n])

    st = RaceState(status={n: "racing" for n in names})
    have: dict[str, int] = {n: 0 for n in names}
    keep_baseline = baseline is not None and bool(constraint_checks)
    t0 = time.perf_counter()
    per_run = None  # seconds of wall time per run, measured
    target = n0
    bar = Progress(progress, "advise")
    try:
        for rnd in range(64):
            active = [n for n in names if st.status[n] == "racing"]
            need = [n for n in active if have[n] < target]
            if keep_baseline and baseline not in need and have[baseline] < target:
                need.append(baseline)
            tasks = [(n, s) for n in need for s in range(have[n] + 1, target + 1)]
            if rnd == 0 and budget.runs is not None and len(tasks) > budget.runs:
                raise ValueError(f"budget = {budget.runs} runs is not allowed for {len(need)} candidates: the first round "
                                 f"alone needs {len(tasks)} ({len(need)} × {n0} seeds); expected >= {len(tasks)} runs, "
                                 "or fewer --candidates")
            # Budget: drop the worse half of the survivors (successive halving) until the round fits.
            left = _left(budget, st.runs, time.perf_counter() - t0, per_run, runner.jobs)
            halved: list[str] = []
            keep = list(active)
            while left is not None and len(tasks) > left and rnd > 0:
                ranked = _ranked(st, keep, objective)
                worse = [n for n in ranked[(len(ranked) + 1) // 2:]
                         if n != st.best and not (keep_baseline and n == baseline)]
                if len(ranked) <= 2 or not worse:
                    break
                halved += worse
                keep = [n for n in keep if n not in worse]
                need = [n for n in keep if have[n] < target] + (
                    [baseline] if keep_baseline and baseline not in keep and have[baseline] < target else [])
                tasks = [(n, s) for n in need for s in range(have[n] + 1, target + 1)]
            if left is not None and (len(tasks) > left or left <= 0) and rnd > 0:
                # The round cannot run even halved: nothing is dropped for it (a candidate leaves
                # only for evidence gathered, never for a round that never ran).
                st.stop_reason = "budget"
                rest = [n for n in _ranked(st, active, objective) if n != st.best]
                st.stop_detail = (f"budget of {budget.label()} spent with {st.best} not separated: "
                                  + "; ".join(f"{n}: {st.open.get(n, 'tied')}" for n in rest))
                break
            if not tasks:
                st.stop_reason = "separated"
                break
            for n in halved:
                st.status[n] = "dropped by successive halving (budget)"
                st.dropped_in[n] = rnd
            active = keep
            rivals = _ranked(st, active, objective)[:2] if rnd else []
            what = f"{rivals[0]} vs {rivals[1]}" if len(rivals) == 2 else "first look"
            bar.round(f"round {rnd + 1}: {len(active)} candidates, {target} seeds; deciding {what}", len(tasks))
            r0 = time.perf_counter()
            runs = [make_task(by_name[n], s) for n, s in tasks]
            for res in runner.map(runs, spec):
                st.rows.append({"candidate": res["point"]["candidate"], **{k: v for k, v in res.items() if k != "point"}})
                bar.update(1)
            st.runs += len(tasks)
            wall = time.perf_counter() - r0
            per_run = wall / len(tasks)
            for n in need:
                have[n] = target
            dropped = _eliminate(st, active, objective, constraint_checks, baseline, rnd, modesty, margin)
            st.rounds.append({"round": rnd + 1, "seeds": target, "candidates": len(active), "runs": len(tasks),
                              "seconds": wall, "best": st.best, "dropped": ", ".join(dropped),
                              "halved": ", ".join(halved)})
            short = _insufficient(st, objective)
            if short:
                st.stop_reason, st.stop_detail = INSUFFICIENT, short
                break
            active = [n for n in names if st.status[n] == "racing"]
            contenders = [n for n in active if not (keep_baseline and n == baseline and st.reference_worse)]
            if len(contenders) <= 1:
                st.stop_reason = "separated"
                st.stop_detail = f"{st.best} is separated from every other candidate at {target} seeds"
                break
            if target >= max_seeds:
                st.stop_reason = "max-seeds"
                rest = [n for n in _ranked(st, contenders, objective) if n != st.best]
                st.stop_detail = (f"{st.best} is not separated at {target} seeds: "
                                  + "; ".join(f"{n}: {st.open.get(n, 'tied')}" for n in rest))
                break
            target = min(2 * target, max_seeds)
    finally:
        bar.close()
    if not st.stop_detail and st.stop_reason == "separated":
        st.stop_detail = f"{st.best} is separated from every other candidate"
    if st.stop_reason != INSUFFICIENT and st.best:
        _choose(st, names, by_name, objective, margin)
    st.seconds = time.perf_counter() - t0
    return st


def _left(budget: Budget, runs: int, elapsed: float, per_run: float | None, jobs: int) -> int | None:
    if budget.runs is not None:
        return budget.runs - runs
    if budget.seconds is not None:
        if per_run is None:
            return None
        return int((budget.seconds - elapsed) / per_run)
    return None


def _means(st: RaceState, names: Sequence[str], col: str) -> dict[str, float]:
    m = _matrix(st.rows, names, col)
    return {n: (float(np.mean(list(v.values()))) if v else float("inf")) for n, v in m.items()}


def _ranked(st: RaceState, names: Sequence[str], col: str) -> list[str]:
    means = _means(st, names, col)
    return sorted(names, key=lambda n: (means[n], n != st.best))


def _eliminate(st: RaceState, active: list[str], objective: str, checks: Sequence[Any], baseline: str | None,
               rnd: int, modesty: Callable[[str], tuple[Any, ...]], margin: Margin = Margin()) -> list[str]:
    by_seed: dict[str, dict[int, dict[str, Any]]] = {}
    for r in st.rows:
        by_seed.setdefault(r["candidate"], {})[r["seed"]] = r
    feasible = []
    dropped = []
    st.open = {}
    for n in active:
        ok = True
        for cname, _col, limit, excess in checks:
            if baseline is None or baseline not in by_seed or n == baseline:
                continue
            seeds = sorted(set(by_seed[n]) & set(by_seed[baseline]))
            x = np.array([excess(by_seed[n][s], by_seed[baseline][s]) for s in seeds], dtype=float)
            m, lo, _hi = t_interval(x)
            if np.isfinite(lo) and lo > limit:
                st.status[n] = f"violates {cname}: {m:.3g} (CI low {lo:.3g}) > {limit:g}"
                st.dropped_in[n] = rnd + 1
                dropped.append(n)
                ok = False
                break
            if np.isfinite(m) and m > limit:
                st.open[n] = f"{cname} {m:.3g} over the limit {limit:g}, not yet with confidence (CI low {lo:.3g})"
                ok = False
        if ok:
            feasible.append(n)
    # The completed fraction is a constraint: a candidate that finishes fewer of the profile's
    # flows than the most-completing one, by more than COMPLETION_SLACK with confidence, is out
    # (censoring counts its open flows, but only up to the run's end).
    done = _matrix(st.rows, active, "completed")
    def frac(n: str) -> float:
        v = np.array(list(done[n].values()), dtype=float)
        return float(v[np.isfinite(v)].mean()) if np.isfinite(v).any() else -1.0

    top = max(active, key=lambda n: (frac(n), n == st.best))
    for n in active:
        if n == top or st.status[n] != "racing" or (n == baseline and checks):
            continue
        m, lo, _hi = t_interval(_paired(done[top], done[n]))
        if np.isfinite(lo) and lo > COMPLETION_SLACK:
            st.status[n] = (f"completes fewer flows than {top}: {m * 100:.1f} pp fewer "
                            f"(CI low {lo * 100:.1f} pp > {COMPLETION_SLACK * 100:g} pp)")
            st.dropped_in[n] = rnd + 1
            dropped.append(n)
            if n in feasible:
                feasible.remove(n)
    alive = [n for n in active if st.status[n] == "racing"]
    pool = feasible or ([baseline] if baseline in alive else alive)
    means = _means(st, pool, objective)
    st.best = min(pool, key=lambda n: (means[n], modesty(n)))
    for n in active:
        (st.infeasible.discard if n in feasible else st.infeasible.add)(n)
    mg = margin.of(means[st.best])
    st.margin_s = mg
    mat = _matrix(st.rows, alive, objective)
    same = _twins(st, alive, objective, modesty, keep=st.best)
    st.reference_worse = False
    for n in alive:
        if n == st.best:
            continue
        d = _paired(mat[n], mat[st.best])
        if n == baseline and checks:
            # The constraints' reference keeps running; it only stops contending.
            m, lo, hi = t_interval(d)
            st.reference_worse = bool(np.isfinite(lo) and lo > 0)
            if st.reference_worse:
                st.open[n] = f"worse than {st.best}: {_pm(m, lo, hi)}; still run as the constraints' reference"
            continue
        twin = same.get(n)
        if twin is not None:
            st.status[n] = f"identical to {twin} on every seed"
        else:
            m, lo, hi = t_interval(d)
            st.open.setdefault(n, f"tied with {st.best}: {_pm(m, lo, hi)}")
            if np.isfinite(lo) and lo > mg:
                st.status[n] = f"worse than {st.best}: {_pm(m, lo, hi)}, beyond the margin ±{mg * 1e3:.1f} ms"
            elif np.isfinite(lo) and np.isfinite(hi) and -mg <= lo and hi <= mg:
                st.status[n] = f"equal to {st.best} within the margin ±{mg * 1e3:.1f} ms: {_pm(m, lo, hi)}"
            elif np.isinf(m) and m > 0:
                st.status[n] = "completes no flow in the objective's range"
            else:
                continue
        st.dropped_in[n] = rnd + 1
        dropped.append(n)
    return dropped


def _pm(m: float, lo: float, hi: float) -> str:
    """A difference in ms with its CI as ±: '+12.3 ms ±4.5'."""
    if not np.isfinite(lo):
        return f"{m * 1e3:+.1f} ms"
    return f"{m * 1e3:+.1f} ms ±{(hi - lo) / 2 * 1e3:.1f}"


def _choose(st: RaceState, names: Sequence[str], by_name: dict[str, Candidate], objective: str,
            margin: Margin) -> None:
    """The recommendation: of the best (lowest mean) and every candidate not shown worse than it
    by more than the margin — equal within it, or not told apart — the most preferred
    (`preference`). No evidence that a difference matters leaves the simplest deployment nearest
    today's default; the lowest mean alone does not decide."""
    mat = _matrix(st.rows, names, objective)
    means = _means(st, names, objective)
    best = st.best
    mg = margin.of(means[best])
    st.margin_s = mg
    eligible = [best]
    for n in names:
        if n == best or n in st.infeasible:
            continue
        s = st.status[n]
        if not (s == "racing" or s.startswith("equal to") or s.startswith("dropped by successive halving")):
            continue
        _m, lo, _hi = t_interval(_paired(mat[n], mat[best]))
        if not (np.isfinite(lo) and lo > mg) and not (np.isinf(_m) and _m > 0):
            eligible.append(n)
    pick = min(eligible, key=lambda n: preference(by_name[n]))
    st.eligible = eligible
    if pick != best:
        st.stop_detail += (f"; {pick} is recommended over {best} (lowest mean, {_pm(*t_interval(_paired(mat[pick], mat[best])))} "
                           f"difference): not worse beyond the margin ±{mg * 1e3:.1f} ms and simpler to deploy or "
                           "nearer today's IW 10")
        st.open[best] = f"lowest mean; {pick} is not worse beyond the margin"
        if st.status[pick] != "racing":
            st.status[pick] = "racing"
        st.best = pick


def _twins(st: RaceState, alive: Sequence[str], col: str, modesty: Callable[[str], tuple[Any, ...]],
           keep: str) -> dict[str, str]:
    """Candidates with identical results on every seed (at least two), merged into the simplest
    of each group (`modesty`; `keep` always represents its own group): name → its representative."""
    groups: dict[tuple[Any, ...], list[str]] = {}
    for n in alive:
        rows = sorted((r["seed"], r.get(col), r.get("retransmit_rate"), r.get("completed"))
                      for r in st.rows if r["candidate"] == n)
        if len(rows) >= 2:
            groups.setdefault(tuple(rows), []).append(n)
    out = {}
    for g in groups.values():
        if len(g) > 1:
            head = keep if keep in g else min(g, key=modesty)
            out.update({n: head for n in g if n != head})
    return out


def _iw_got(st: RaceState, c: Candidate) -> float:
    """The mean IW (segments) the profile's flows actually got with `c` (a size-based policy gives
    V to flows up to θ, not its MinIW); the candidate's nominal IW before it has run."""
    v = [r["iw_segments"] for r in st.rows if r["candidate"] == c.name and np.isfinite(r.get("iw_segments", np.nan))]
    return float(np.mean(v)) if v else float(c.iw_segments)


def flows_per_run(st: RaceState) -> float:
    """The mean number of the profile's flows per run in the objective's size range."""
    flows = [r["flows"] for r in st.rows if "flows" in r]
    return float(np.mean(flows)) if flows else math.inf


def flows_needed(col: str) -> int:
    """Flows per run in the objective's range that a run's statistic needs: 30 for a mean or a
    median; a tail needs at least 5 flows beyond its quantile (p95: 100, p99: 500)."""
    return {"p95": 100, "p99": 500}.get(col.rsplit("_", 1)[-1], MIN_FLOWS_PER_RUN)


def _insufficient(st: RaceState, col: str) -> str:
    """Why the runs so far cannot carry advice ('' if they can): too few flows per run in the
    objective's range, or an objective that is infinite or undefined for every candidate."""
    per_run = flows_per_run(st)
    need = flows_needed(col)
    if per_run < need:
        return (f"{per_run:.1f} flows per run in the objective's range (at least {need} needed for {col})")
    vals = np.array([r.get(col, np.nan) for r in st.rows], dtype=float)
    if not np.isfinite(vals).any():
        return (f"the objective ({col}) is undefined in every run: no flow in its range finished; "
                "lengthen --duration")
    best = _means(st, sorted({r["candidate"] for r in st.rows}), col)
    if not any(np.isfinite(v) for v in best.values()):
        return f"every candidate's objective ({col}) is infinite: lengthen --duration"
    return ""

"""`iwlab advise --transport quic`: a QUIC initial window (and pacing) for a profile, and the setting
that gives it in each stack of `iwlab/quic/profiles.toml`.

The profile's network and workload are the TCP advisor's (`build.scenario_data`); the candidate's
flows become QUIC flows on quinn-proto (`transport = "quic"`, NewReno, the IW and datagram size from
`[quic]`, the server's certificate chain as given). Candidates are IWs in datagrams; the baseline is
RFC 9002 §7.2's min(10 × size, max(14 720, 2 × size)). Every candidate runs the same seeds; a
candidate is recommended only when its paired difference from the baseline (95 % bootstrap CI over
seeds) is below zero and it keeps the profile's constraints (retransmission rate, harm to the IW-3
flows); otherwise the baseline is. quinn-proto always paces, so pacing is recommended as measured,
and each stack is told how to keep or turn it on.
"""

from __future__ import annotations

import json
import math
import re
from concurrent.futures import as_completed
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from iwlab.advise.profile import Profile, ProfileError

__all__ = ["DEFAULT_PACKETS", "QuicAdvice", "advise_quic", "baseline_bytes", "parse_packets", "stack_settings"]

DEFAULT_PACKETS = (10, 16, 24, 32)
#: The certificate chain when the profile names none (DER bytes): a typical RSA leaf + intermediate.
DEFAULT_CHAIN = 4000


def baseline_bytes(datagram: int) -> int:
    """RFC 9002 §7.2: min(10 × max_datagram_size, max(14 720, 2 × max_datagram_size))."""
    return min(10 * datagram, max(14_720, 2 * datagram))


def parse_packets(text: str | None) -> tuple[int, ...]:
    """`"10,16,32"` → (10, 16, 32); each ≥ 2 (RFC 9002 §7.2's floor of two datagrams)."""
    if text is None:
        return DEFAULT_PACKETS
    try:
        out = tuple(sorted({int(x) for x in text.split(",") if x.strip()}))
    except ValueError:
        raise ProfileError("quic-iw", text, "a comma-separated list of datagram counts, e.g. 10,16,32") from None
    if not out or out[0] < 2 or out[-1] > 1000:
        raise ProfileError("quic-iw", text, "datagram counts in 2..=1000 (RFC 9002 §7.2: at least 2)")
    return out


def stack_settings(iw_bytes: int, pacing: bool = True) -> list[dict[str, Any]]:
    """For each stack of profiles.toml: how to set `iw_bytes` (in the stack's own unit) and pacing."""
    from iwlab.quic.profiles import load

    rows = []
    for key, p in load().items():
        unit = p.iw.packet_bytes or p.max_datagram_size
        options = [int(x) for x in re.findall(r"\bIW(\d\d)\b", p.setting)]
        if p.setting.startswith("none"):
            how, value = f"no setting ({p.setting[4:].strip(' :()') or 'fixed'}); its default is {p.iw_bytes} B", None
        elif options:  # connection options naming packet counts (Google's QUICHE)
            n = min(options, key=lambda o: (abs(o * unit - iw_bytes), o))
            how, value = f"{p.setting.split(' (')[0]}: IW{n:02d} ({n} × {unit} B = {n * unit} B)", n
        elif p.iw.rule == "packets":
            n = max(2, math.ceil(iw_bytes / unit))
            how, value = f"{p.setting} = {n} ({n} × {unit} B = {n * unit} B)", n
        else:  # counted in bytes (quinn's controllers)
            how, value = f"{p.setting} = {iw_bytes}", iw_bytes
        paced = p.pacing.lower()
        pace = ("on by default" if paced.startswith(("on", "always")) else
                f"off by default, turn it on ({p.pacing[3:].strip(' ()')})" if paced.startswith("off") else p.pacing)
        rows.append({"stack": p.name, "key": key, "release": p.ref, "default_iw_bytes": p.iw_bytes, "set_iw": how,
                     "value": value, "setting_at": p.setting_at, "pacing": pace if pacing else p.pacing})
    return rows


@dataclass
class QuicAdvice:
    profile: Profile
    datagram: int
    chain: int
    seeds: int
    candidates: list[dict[str, Any]]
    recommended: dict[str, Any]
    reason: str
    stacks: list[dict[str, Any]] = field(default_factory=list)

    @property
    def policy_file(self) -> str:
        """A policy file whose `[quic]` table is the recommendation (the scenario's `[quic]` keys), with
        each stack's setting as a comment (they are not the engine's to apply)."""
        r = self.recommended
        lines = [f"# iwlab advise --transport quic: {self.reason}",
                 "[quic]", f"initial_window = {r['iw_bytes']}   # bytes: {r['iw_bytes'] / self.datagram:g} datagrams",
                 f"max_datagram_size = {self.datagram}", "pacing = true", "",
                 "# The same window in each stack (python/iwlab/quic/profiles.toml, file:line of each setting):"]
        lines += [f"#   {s['stack']} {s['release']}: {s['set_iw']}; pacing {s['pacing']}" for s in self.stacks]
        return "\n".join(lines) + "\n"

    def to_dict(self) -> dict[str, Any]:
        return {"transport": "quic", "recommended": self.recommended, "reason": self.reason,
                "max_datagram_size": self.datagram, "certificate_chain": self.chain, "seeds": self.seeds,
                "objective": self.profile.objective.label(), "candidates": self.candidates, "stacks": self.stacks,
                "policy_file": self.policy_file}

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2, default=str)

    def summary(self) -> str:
        r = self.recommended
        out = [f"QUIC initial window for {self.profile.objective.label()} ({self.seeds} seeds, datagrams of "
               f"{self.datagram} B, a {self.chain} B certificate chain):",
               f"  {'IW':>16}  {'objective (s)':>14}  {'vs RFC 9002 [95 % CI]':>28}  {'retx %':>7}  verdict"]
        for c in self.candidates:
            ci = f"{c['diff_s']:+.4f} [{c['diff_lo']:+.4f}, {c['diff_hi']:+.4f}]" if c["iw_bytes"] != r[
                "baseline_bytes"] else "baseline"
            out.append(f"  {c['iw_packets']:>5g} × {self.datagram} B  {c['objective_s']:>14.4f}  {ci:>28}  "
                       f"{100 * c['retransmit_rate']:>7.2f}  {c['verdict']}")
        out += [f"Recommended: {r['iw_packets']} datagrams = {r['iw_bytes']} B, pacing on — {self.reason}", "",
                "Per stack (python/iwlab/quic/profiles.toml):"]
        out += [f"  {s['stack']:<12} {s['set_iw']}; pacing {s['pacing']}" for s in self.stacks]
        return "\n".join(out)

    def write(self, out: Path) -> dict[str, Path]:
        out.mkdir(parents=True, exist_ok=True)
        paths = {"advice": out / "advice.json", "policy": out / "policy.toml"}
        paths["advice"].write_text(self.to_json() + "\n")
        paths["policy"].write_text(self.policy_file)
        return paths


def scenario(p: Profile, iw_bytes: int, datagram: int, chain: int) -> dict[str, Any]:
    """The TCP advisor's scenario for `p` with the candidate's flows on QUIC."""
    from iwlab.advise.build import FOREGROUND, scenario_data
    from iwlab.advise.candidates import expand

    if not p.sizes.endswith("seg"):
        raise ProfileError("sizes", p.sizes, "one response size ('Nseg') with --transport quic (QUIC flows are "
                           "short-flows apps; sizes from a distribution use poisson-flows, TCP only)")
    data = scenario_data(p, expand(["fixed:10"], p.mss)[0], name="advise-quic")
    for app in data["apps"]:
        if app.get("name", "").startswith(f"{FOREGROUND}-"):
            for k in ("server_iw", "client_iw", "tcp"):
                app.pop(k, None)
            app["transport"] = "quic"
    data["quic"] = {"profile": "rfc9002", "initial_window": iw_bytes, "max_datagram_size": datagram,
                    "certificate_chain": f"{chain}B"}
    data["description"] = f"iwlab advise --transport quic: IW {iw_bytes} B in datagrams of {datagram} B"
    return data


def _evaluate(args: tuple[dict[str, Any], int, dict[str, Any]]) -> dict[str, float]:
    from iwlab.advise.evaluate import EvalSpec, reduce
    from iwlab.api import run
    from iwlab.scenario import Scenario

    data, seed, kw = args
    r = run(Scenario.from_data(data, "advise-quic"), seed=seed)
    return reduce(r.flows, r.links, r.queues, EvalSpec.of(data, **kw))


def _run_all(jobs_args: list[tuple[dict[str, Any], int, dict[str, Any]]], jobs: int) -> list[dict[str, float]]:
    from iwlab import workers

    if jobs <= 1 or len(jobs_args) == 1:
        return [_evaluate(a) for a in jobs_args]
    out: dict[int, dict[str, float]] = {}
    with workers.pool(min(jobs, len(jobs_args))) as pool:
        index = {pool.submit(_evaluate, a): i for i, a in enumerate(jobs_args)}
        for fut in as_completed(index):
            out[index[fut]] = fut.result()
    return [out[i] for i in range(len(jobs_args))]


def advise_quic(p: Profile, *, packets: tuple[int, ...] = DEFAULT_PACKETS, datagram: int = 1200,
                chain: int = DEFAULT_CHAIN, seeds: int = 3, jobs: int | None = None) -> QuicAdvice:
    """Runs every candidate (and the RFC 9002 baseline) on the same `seeds` and recommends one."""
    import os

    from iwlab import stats

    if not 1200 <= datagram <= 65_527:
        raise ProfileError("quic-datagram", datagram, "1200..=65527 bytes (RFC 9000 §14; UDP payload)")
    if seeds < 2:
        raise ProfileError("seeds", seeds, ">= 2 (a paired interval needs two seeds)")
    base = baseline_bytes(datagram)
    # Candidates in whole datagrams; the baseline is RFC 9002's bytes, which may not be a whole number of them.
    cands = sorted({n * datagram for n in packets} | {base})
    metric = f"fct_{p.objective.metric}"
    kw = {"min_size": p.objective.min_size, "max_size": p.objective.max_size, "rate_bps": p.rate_bps}
    args, index = [], []
    for b in cands:
        data = scenario(p, b, datagram, chain)
        for s in range(1, seeds + 1):
            args.append((data, s, kw))
            index.append((b, s))
    res = _run_all(args, jobs or os.cpu_count() or 1)
    by: dict[int, dict[int, dict[str, float]]] = {}
    for (b, s), r in zip(index, res):
        by.setdefault(b, {})[s] = r
    if any(not math.isfinite(r[metric]) for r in res):
        raise ProfileError("sizes", p.sizes, "flows that complete within the profile's duration (a run had none; "
                           "lengthen --duration or raise the load)")
    limit = p.constraints.retransmit_pp
    harm = p.constraints.harm_pct
    b0 = by[base]
    rows = []
    for b in cands:
        x = np.array([by[b][s][metric] for s in range(1, seeds + 1)])
        d = x - np.array([b0[s][metric] for s in range(1, seeds + 1)])
        lo, hi = stats.bootstrap_ci(d, "mean", 0.95) if np.ptp(d) > 0 else (float(d[0]), float(d[0]))
        retx = float(np.mean([by[b][s]["retransmit_rate"] for s in by[b]]))
        retx0 = float(np.mean([b0[s]["retransmit_rate"] for s in b0]))
        verdict = "baseline" if b == base else ("faster" if hi < 0 else "slower" if lo > 0 else "no clear difference")
        if limit is not None and b != base and 100 * (retx - retx0) > limit:
            verdict = f"refused: retransmissions +{100 * (retx - retx0):.2f} pp > {limit:g} pp"
        if harm is not None and b != base:
            o = np.nanmean([by[b][s]["others_fct_mean"] for s in by[b]])
            o0 = np.nanmean([b0[s]["others_fct_mean"] for s in b0])
            if math.isfinite(o) and math.isfinite(o0) and o0 > 0 and 100 * (o / o0 - 1) > harm:
                verdict = f"refused: IW-3 flows {100 * (o / o0 - 1):.1f} % slower > {harm:g} %"
        rows.append({"iw_bytes": b, "iw_packets": round(b / datagram, 2), "objective_s": float(x.mean()),
                     "diff_s": float(d.mean()), "diff_lo": float(lo), "diff_hi": float(hi), "retransmit_rate": retx,
                     "verdict": verdict})
    faster = [r for r in rows if r["verdict"] == "faster"]
    if faster:
        best = min(faster, key=lambda r: (r["objective_s"], r["iw_bytes"]))
        reason = (f"{best['iw_bytes']} B lowers the {p.objective.metric} completion time by "
                  f"{-best['diff_s'] * 1e3:.1f} ms [{-best['diff_hi'] * 1e3:.1f}, {-best['diff_lo'] * 1e3:.1f}] against "
                  f"RFC 9002's {base} B, within the constraints")
    else:
        best = next(r for r in rows if r["iw_bytes"] == base)
        reason = f"no candidate is faster than RFC 9002's {base} B with 95 % confidence within the constraints"
    rec = {"iw_bytes": best["iw_bytes"], "iw_packets": math.ceil(best["iw_bytes"] / datagram), "pacing": True,
           "baseline_bytes": base, "objective_s": best["objective_s"]}
    return QuicAdvice(p, datagram, chain, seeds, rows, rec, reason, stack_settings(best["iw_bytes"]))


def cli(p: Profile, *, packets: str | None, datagram: int, chain: str | None, seeds: int, jobs: int | None,
        out: Path | None, as_json: bool) -> str:
    """`iwlab advise --transport quic`: runs the advice, writes `out/advice.json` and `out/policy.toml`,
    returns the text to print."""
    from iwlab.studies.model import quantity

    try:
        chain_bytes = DEFAULT_CHAIN if chain is None else int(quantity(chain))
    except ValueError:
        raise ProfileError("certificate-chain", chain, "bytes, e.g. 4kB or 16000") from None
    a = advise_quic(p, packets=parse_packets(packets), datagram=datagram, chain=chain_bytes, seeds=seeds, jobs=jobs)
    text = a.to_json() if as_json else a.summary()
    if out is not None:
        written = a.write(out)
        if not as_json:
            text += f"\n\nwritten: {', '.join(str(x) for x in written.values())}"
    return text

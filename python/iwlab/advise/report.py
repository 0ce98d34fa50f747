"""The advice's figure (Pareto: completion time vs retransmission rate) and its HTML report,
built from the report package's parts (self-contained page, figures as PNG)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from iwlab.advise.types import DEPLOY, LIMITS, AdviceRecord as Advice

__all__ = ["pareto_png", "html_report", "write"]


def pareto_png(a: Advice) -> bytes:
    """Each candidate's objective (with its 95 % CI) against its retransmission rate; the Pareto
    front joined by a line; the recommendation circled."""
    from matplotlib.figure import Figure

    from iwlab.report.figures import png

    df = a.candidates
    fig = Figure(figsize=(7.5, 4.8), layout="constrained")
    ax = fig.subplots()
    x = df["retransmit_rate"].to_numpy(dtype=float) * 100
    y = df["value"].to_numpy(dtype=float) * 1e3
    lo = df["ci_low"].to_numpy(dtype=float) * 1e3
    hi = df["ci_high"].to_numpy(dtype=float) * 1e3
    ok = np.isfinite(x) & np.isfinite(y)
    err = np.vstack([np.where(np.isfinite(lo), y - lo, 0), np.where(np.isfinite(hi), hi - y, 0)])
    front = df["pareto"].to_numpy(dtype=bool)
    for kind, marker in (("fixed", "o"), ("paced", "s"), ("size-based", "^"), ("rfc3390", "D"), ("rfc6928", "D")):
        sel = ok & (df["kind"].to_numpy() == kind)
        if sel.any():
            ax.errorbar(x[sel], y[sel], yerr=np.clip(err[:, sel], 0, None), fmt=marker, capsize=2, label=kind,
                        alpha=0.85)
    other = ok & ~np.isin(df["kind"].to_numpy(), ["fixed", "paced", "size-based", "rfc3390", "rfc6928"])
    if other.any():
        ax.errorbar(x[other], y[other], yerr=np.clip(err[:, other], 0, None), fmt="v", capsize=2, label="adaptive")
    f = ok & front
    order = np.argsort(x[f])
    ax.plot(x[f][order], y[f][order], "k--", linewidth=0.8, label="Pareto front")
    for (xi, yi), label in coincident_labels(x[ok], y[ok], df["candidate"].to_numpy()[ok]):
        ax.annotate(label, (xi, yi), textcoords="offset points", xytext=(4, 3), fontsize=7)
    rec = df["candidate"] == a.recommended.get("candidate")
    if rec.any() and ok[rec.to_numpy()].any():
        i = int(np.flatnonzero(rec.to_numpy())[0])
        ax.scatter([x[i]], [y[i]], s=220, facecolors="none", edgecolors="red", linewidths=1.5, label="recommended")
    ax.set(xlabel="retransmission rate of the profile's flows (%)", ylabel=f"{a.objective} (ms)",
           title="Candidates: completion time vs retransmissions (95 % CI over seeds)")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize="small")
    return png(fig)


def coincident_labels(x: np.ndarray, y: np.ndarray, names: np.ndarray, shown: int = 2) -> list[tuple[tuple[float, float], str]]:
    """One label per point where candidates coincide (same figures to 0.1 ‰ of the axes' span):
    the first `shown` names and '+N more', so identical candidates do not print over each other.

    >>> coincident_labels(np.array([1.0, 1.0, 1.0, 2.0]), np.array([5.0, 5.0, 5.0, 6.0]),
    ...                   np.array(["iw32", "iw46", "iw64", "iw3"]))
    [((1.0, 5.0), 'iw32, iw46 +1 more'), ((2.0, 6.0), 'iw3')]
    """
    span = max(float(np.ptp(x)) if x.size else 0.0, float(np.ptp(y)) if y.size else 0.0, 1e-12)
    groups: dict[tuple[int, int], list[int]] = {}
    for i in range(len(x)):
        groups.setdefault((round(x[i] / span * 1e4), round(y[i] / span * 1e4)), []).append(i)
    out = []
    for idx in groups.values():
        n = [str(names[i]) for i in idx]
        label = ", ".join(n[:shown]) + (f" +{len(n) - shown} more" if len(n) > shown else "")
        out.append(((float(x[idx[0]]), float(y[idx[0]])), label))
    return out


def html_report(a: Advice) -> str:
    from iwlab.report import html

    r = a.recommended
    if r:
        head = html.kv_table({
            "recommended": f"{r['candidate']} ({r['kind']}, IW {r['iw_segments']} segments, flows got "
                           f"{r['iw_segments_got']:.1f}{', paced over the handshake RTT' if r['tcp'] else ''})",
            "deploys via": DEPLOY[r["deploy"]],
            "objective": a.objective,
            "value": f"{r['value'] * 1e3:.1f} ms (95 % CI {r['ci_low'] * 1e3:.1f} … {r['ci_high'] * 1e3:.1f} ms)",
            "completed": f"{r['completed'] * 100:.1f} %",
            "retransmission rate": f"{r['retransmit_rate'] * 100:.2f} %",
            "seeds": r["seeds"],
            "stopped": f"{a.stop_reason}: {a.stop_detail}",
            "runs": f"{len(a.runs)} in {a.seconds:.1f} s (budget {a.budget})",
        })
    else:
        head = html.kv_table({"recommendation": f"none ({a.stop_reason})", "stopped": f"{a.stop_reason}: {a.stop_detail}",
                              "runs": f"{len(a.runs)} in {a.seconds:.1f} s (budget {a.budget})"})
    prof = html.kv_table({k: v for k, v in a.profile.describe().items()})
    cols = [c for c in a.candidates.columns if c != "kind"]
    table = a.candidates[cols].copy()
    for c in ("value", "ci_low", "ci_high"):
        table[c] = (table[c] * 1e3).round(2)
    table = table.rename(columns={"value": "value (ms)", "ci_low": "CI low (ms)", "ci_high": "CI high (ms)"})
    blocks = [
        html.section("Recommendation", *(html.para(x) for x in a.headline()), head, *(html.note(n) for n in a.notes)),
        html.section("Profile", prof),
        html.section("Candidates", html.figure(pareto_png(a), "Completion time vs retransmission rate; the "
                                               "dashed line joins the Pareto front.", "Pareto figure"),
                     html.table(table)),
        html.section("The race", html.para("Every candidate ran the same seeds (same flow arrivals and sizes); "
                                           "a candidate was dropped when the 95 % CI of its paired difference to the "
                                           "best lay above zero, or when it violated a constraint with confidence."),
                     html.table(a.rounds) if len(a.rounds) else html.para("no rounds")),
        html.section("Sensitivity", html.para("The leading candidates at half and double the RTT and the buffer "
                                              "(same seeds). 'same' says whether the recommendation stays the best."),
                     html.table(a.sensitivity) if len(a.sensitivity) else html.para("not run")),
        html.section("Verified on Linux TCP", html.para(a.verify_detail), html.table(a.verify))
        if a.verify is not None and len(a.verify) else html.section(
            "Verified on Linux TCP", html.para(a.verify_detail or "not run (iwlab advise --verify)")),
        html.section("Deploying it", *((html.para(f"with {r['deploy_command']}"), html.pre(a.policy_file))
                                       if a.policy_file else (html.para(a.refused or "nothing to deploy"),)),
                     *((html.pre(a.ip_route),) if a.ip_route else ())),
        html.section("Limits", *(html.para(x) for x in LIMITS)),
    ]
    return html.document(f"iwlab advise: {r.get('candidate', a.stop_reason)}", blocks, a.objective)


def write(a: Advice, out: str | Path) -> dict[str, Path]:
    """advice.json, runs.parquet, candidates.csv, pareto.png, report.html into `out`, and
    policy.toml only when the advice has a deployable policy file (else none is written, and an
    old one is removed so it cannot be mistaken for this advice)."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    paths = {"json": out / "advice.json", "runs": out / "runs.parquet", "candidates": out / "candidates.csv",
             "pareto": out / "pareto.png", "report": out / "report.html"}
    paths["json"].write_text(a.to_json() + "\n")
    if a.policy_file:
        paths["policy"] = out / "policy.toml"
        paths["policy"].write_text(a.policy_file)
    else:
        (out / "policy.toml").unlink(missing_ok=True)
    a.runs.to_parquet(paths["runs"], index=False)
    a.candidates.to_csv(paths["candidates"], index=False)
    paths["pareto"].write_bytes(pareto_png(a))
    paths["report"].write_text(html_report(a), encoding="utf-8")
    return paths

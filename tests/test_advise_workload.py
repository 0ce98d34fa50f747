"""The workload in the advice: arrival process and load in the profile, built with the engine's
one arrival model (the `short-flows` app's `arrivals`), long-lived backgrounds as the studies'
`bulk` app; the sensitivity over load and arrival process; the minimax-regret choice when the
ranking flips; refusal labelling; output a person reads."""

from __future__ import annotations

import io
import json
import re

import numpy as np
import pandas as pd
import pytest

import iwlab
from iwlab.advise.advisor import _robust_choice, _sensitivity, minimax_regret, sensitivity_variants
from iwlab.advise.build import scenario_data
from iwlab.advise.candidates import expand
from iwlab.advise.evaluate import EvalSpec
from iwlab.advise.profile import Profile, ProfileError
from iwlab.advise.progress import Progress
from iwlab.scenario import Scenario

CELL = dict(rate="2Mbps", rtt="100ms", buffer="25pkt", sizes="9seg", background="tcp:1")


@pytest.mark.parametrize("kind, expect", [
    ("poisson", {"kind": "poisson", "load": "1.25%"}),
    ("periodic", {"kind": "periodic"}),
    ("closed-loop", {"kind": "closed-loop"}),
    ("bursts", {"kind": "bursts", "flows": 4}),
])
def test_each_arrival_process_is_the_engines_short_flows_app(kind, expect):
    p = Profile.from_flags(**CELL, arrivals=kind, load="10%")
    c = expand(["fixed:10"], p.mss)[0]
    data = scenario_data(p, c)
    Scenario.from_data(data, "<t>")  # the engine accepts it
    fg = [a for a in data["apps"] if a["name"].startswith("cand")]
    assert len(fg) == 1 and fg[0]["kind"] == "short-flows" and fg[0]["response"] == "9seg"
    arr = fg[0]["arrivals"]
    assert {k: arr[k] for k in expect} == expect, arr
    # Every source offers 1/8 of 10 % of 2 Mb/s in 9 x 1448-byte responses.
    per_s = 0.1 * 2e6 / (8 * 9 * 1448) / 8
    if kind == "periodic":
        assert float(arr["period"].removesuffix("us")) * 1e-6 == pytest.approx(1 / per_s, rel=1e-5)
        assert fg[0]["start"]["kind"] == "uniform"  # sources out of phase
    if kind == "closed-loop":
        assert arr["think"] == {"kind": "exponential", "mean": pytest.approx(1 / per_s)}
    if kind == "bursts":
        assert arr["gap"]["mean"] == pytest.approx(4 / per_s)


def test_load_as_flows_per_second_and_bad_arrivals_name_the_field():
    p = Profile.from_flags(**CELL, load="2/s")
    assert p.flow_rate == 2.0
    arr = [a for a in scenario_data(p, expand(["fixed:10"], p.mss)[0])["apps"] if a["name"].startswith("cand")][0]
    assert arr["arrivals"] == {"kind": "poisson", "rate": pytest.approx(2.0 / 8)}
    with pytest.raises(ProfileError, match=r"arrivals = 'uniform' is not allowed; expected one of \['poisson'"):
        Profile.from_flags(arrivals="uniform")
    with pytest.raises(ProfileError, match=r"load = '-2/s' is not allowed"):
        Profile.from_flags(load="-2/s")


def test_long_lived_backgrounds_are_the_studies_bulk_app_bulk_rate_limited_or_a_measured_share():
    from iwlab.studies.congested_links.scenarios import scenario as study

    c = expand(["fixed:10"], 1448)[0]

    def bg(text):
        d = scenario_data(Profile.from_flags(**{**CELL, "background": text}), c)
        app = next(a for a in d["apps"] if a["name"] == "background")
        src = next(g for g in d["topology"]["right"] if g["name"] == "bg-sources")
        return app, src["access"]["rate"]

    app, rate = bg("tcp:1")
    assert rate == "1Gbps"
    s = study("varying", 80, 9, "iw10", 30.0, 5.0, tcp_background="long-lived", bulk_flows=1)
    ref = next(a for a in s.data["apps"] if a["name"] == "tcp-background")
    assert {k: app[k] for k in ("kind", "count", "mapping")} == {k: ref[k] for k in ("kind", "count", "mapping")}
    assert bg("tcp:2@500kbps") == ({**bg("tcp:2")[0]}, "500000bps")
    app, rate = bg("tcp-share:40%")
    assert app["kind"] == "bulk" and app["count"] == 1 and rate == "800000bps"


def test_sensitivity_varies_rtt_buffer_load_and_the_arrival_process():
    v = sensitivity_variants(Profile.from_flags(**CELL))
    dims = {d for d, *_ in v}
    assert dims == {"rtt", "buffer", "load", "arrivals"}
    assert sorted(f for d, _l, f, _q in v if d == "load") == [0.25, 0.5, 2.0, 4.0]
    assert sorted(q.arrivals for d, *_x, q in v if d == "arrivals") == ["bursts", "closed-loop", "periodic"]
    # Sizes from a distribution arrive every way too.
    assert sorted(q.arrivals for d, *_x, q in sensitivity_variants(Profile.from_flags(sizes="websearch"))
                  if d == "arrivals") == ["bursts", "closed-loop", "periodic"]


@pytest.mark.parametrize("kind", ["periodic", "closed-loop", "bursts"])
def test_sizes_from_a_distribution_arrive_every_way_as_equally_likely_strata_keeping_the_mean(kind, tmp_path):
    from iwlab.advise.build import STRATA, mean_response_bytes, size_strata
    from iwlab.advise.profile import sizes_cdf
    from iwlab.emulate.dists import mean, normalize

    p = Profile.from_flags(**{**CELL, "sizes": "websearch"}, arrivals=kind, load="10%")
    data = scenario_data(p, expand(["fixed:10"], p.mss)[0])
    Scenario.from_data(data, "<t>")  # the engine accepts it
    (fg,) = [a for a in data["apps"] if a["name"].startswith("cand")]
    assert fg["kind"] == "short-flows" and fg["arrivals"]["kind"] == kind and fg["mix_order"] == "random"
    sizes = [int(m["response"].removesuffix("B")) for m in fg["mix"]]
    assert len(sizes) == STRATA and sizes == sorted(sizes) and sizes[0] >= p.mss
    # The strata keep the distribution's mean (so the load): web-search's CDF, at least one MSS.
    exact = mean(normalize({"kind": "empirical", "builtin": "websearch", "min": p.mss}, 1.0), n=400_000)
    assert mean_response_bytes(p) == pytest.approx(exact, rel=0.01)
    # The median (50 kB + 30 kB x 0.10/0.13, between the CDF's points at 0.40 and 0.53) lies between
    # the 50th and the 51st stratum; the top stratum is in the 10…30 MB tail.
    assert sizes[49] < 50_000 + 30_000 * 0.10 / 0.13 < sizes[50] and sizes[-1] > 10e6
    # A file of sizes: the engine's interpolated CDF of it, with the same mean.
    f = tmp_path / "sizes.csv"
    f.write_text("13032\n30408\n")
    q = Profile.from_flags(**{**CELL, "sizes": str(f)}, arrivals=kind)
    xs = size_strata(q)
    assert sum(xs) / len(xs) == pytest.approx(mean({"kind": "empirical", "points": sizes_cdf(str(f))}), rel=1e-3)


def test_a_distribution_under_poisson_arrivals_is_still_the_distribution_itself():
    p = Profile.from_flags(**{**CELL, "sizes": "websearch"})
    (fg,) = [a for a in scenario_data(p, expand(["fixed:10"], p.mss)[0])["apps"] if a["name"].startswith("cand")]
    assert fg["kind"] == "poisson-flows" and fg["size"]["builtin"] == "websearch"


def test_minimax_regret_picks_the_best_worst_case_not_the_best_mean():
    # iw10 is best at the profile and under Poisson, but 60 % slower under periodic arrivals;
    # iw3 is never more than 10 % from the best.
    v = pd.DataFrame({"iw10": [1.00, 1.00, 1.60], "iw3": [1.05, 1.10, 1.00], "iw16": [1.02, 1.3, 2.0]},
                     index=["profile", "poisson", "periodic"])
    pick, worst = minimax_regret(v)
    assert pick == "iw3" and worst["iw3"] == pytest.approx(0.10) and worst["iw10"] == pytest.approx(0.6)
    # No flip: the best mean everywhere is also the best worst case.
    assert minimax_regret(v.drop(index="periodic"))[0] == "iw10"


def test_a_significant_flip_in_the_arrival_process_changes_the_advice_to_the_minimax_choice():
    p = Profile.from_flags(**CELL)
    cands = expand(["fixed:3,10"], p.mss)
    table = pd.DataFrame({"candidate": ["iw10", "iw3"], "status": ["recommended", "tied"], "seeds": [4, 4],
                          "value": [1.0, 1.04]})

    def value(label, name, seed):
        if label == "periodic":  # the kernel testbed's order: IW 10 much slower
            return (1.6 if name == "iw10" else 1.0) + 0.01 * seed
        return (1.0 if name == "iw10" else 1.04) + 0.01 * seed

    class R:
        def map(self, tasks, spec):
            for label, name, seed in tasks:
                yield {"point": {"candidate": name}, "seed": seed, "fct_mean": value(label, name, seed)}

    sens = _sensitivity(p, cands, table, cands[1], lambda q, label: (lambda c, s: (label, c.name, s)), EvalSpec(),
                        "fct_mean", R(), False, 0.02)
    s = sens.set_index("variant")
    assert bool(s.loc["periodic", "significant"]) and s.loc["periodic", "best"] == "iw3"
    assert bool(s.loc["load ×4", "same"]) and not s.loc["RTT ×2", "significant"]
    rec, t, line = _robust_choice(cands[1], cands, table, sens)
    assert rec.name == "iw3" and "flips" in line and "rather than the best mean, iw10" in line
    assert t.set_index("candidate").loc["iw3", "status"] == "recommended"


# ---- refusal, run length, output ---------------------------------------------------------------

def test_21_segment_responses_at_the_default_load_get_longer_runs_not_a_refusal():
    a = iwlab.advise(sizes="21seg", candidates=["fixed:3,10"], budget="40runs", jobs=1, seeds=3, max_seeds=6,
                     sensitivity=False)
    assert a.recommended, (a.stop_reason, a.stop_detail)
    assert a.profile.duration_s > 30 and any(n.startswith("runs lengthened from 30 s") for n in a.notes), a.notes
    assert a.runs["flows"].mean() >= 30


def test_a_refused_run_labels_no_candidate_recommended_anywhere(tmp_path):
    # 256 kb/s at 30 % with web-search sizes needs runs far beyond an 8-run budget's reach.
    a = iwlab.advise(rate="256kbps", load="30%", sizes="websearch", candidates=["fixed:3,10"], budget="8runs",
                     jobs=1, seeds=3, max_seeds=6, sensitivity=False)
    assert a.stop_reason == "insufficient data" and a.recommended == {}
    assert re.search(r"a budget of at least \d+ runs would|longer than 3600 s", a.stop_detail), a.stop_detail
    a.write(tmp_path / "a")
    assert not any(s == "recommended" for s in a.candidates["status"])
    assert "recommended" not in set(pd.read_csv(tmp_path / "a" / "candidates.csv")["status"])
    d = json.loads((tmp_path / "a" / "advice.json").read_text())
    assert d["recommended"] == {} and all(c["status"] != "recommended" for c in d["candidates"])
    assert d["headline"][0].startswith("NO recommendation")
    html = (tmp_path / "a" / "report.html").read_text()
    assert "<td>recommended</td>" not in html and "NO recommendation" in html, html[:2000]
    assert a.summary().splitlines()[0].startswith("NO recommendation")


def test_the_first_three_lines_say_what_by_how_much_and_where_and_tables_are_in_ms():
    a = iwlab.advise(rate="2Mbps", rtt="100ms", buffer="25pkt", sizes="9seg", load="15%", duration="15s",
                     candidates=["fixed:3,10"], budget="24runs", jobs=1, seeds=3, max_seeds=6, sensitivity=False)
    first, second, third = a.summary().splitlines()[:3]
    assert first.startswith("recommended: iw") and " ms ±" in first
    assert second.startswith("runner-up iw") and "margin ±" in second
    assert third.startswith("workload: 2 Mb/s, RTT 100ms, buffer 25 pkt, 9seg responses, poisson arrivals at 15 % load")
    text = a.summary()
    assert not re.search(r"\d e-?\d|\de-\d\d", text) and " s (CI" not in text and "…" not in text.split("limits:")[0]


def test_progress_is_a_bar_on_a_terminal_and_plain_lines_elsewhere():
    out = io.StringIO()
    bar = Progress(True, "advise", stream=out)
    bar.round("round 1: 2 candidates, 3 seeds", 6)
    bar.update(6)
    bar.close()
    assert out.getvalue() == "advise: round 1: 2 candidates, 3 seeds: 6 runs\n" and "\r" not in out.getvalue()

    class Tty(io.StringIO):
        def isatty(self):
            return True

    tty = Tty()
    bar = Progress(True, "advise", stream=tty)
    bar.round("round 1", 2)
    bar.update(2)
    bar.close()
    assert "\r" in tty.getvalue()
    silent = io.StringIO()
    Progress(False, "advise", stream=silent).round("x", 1)
    assert silent.getvalue() == ""


def test_the_objective_counts_the_flows_of_every_client_not_only_the_first():
    # A short-flows app of 8 instances has one record id per instance: the candidate's flows are
    # found by the app's name, so all 8 clients' flows count.
    from iwlab.advise.evaluate import reduce

    p = Profile.from_flags(**CELL, duration="20s")
    data = scenario_data(p, expand(["fixed:10"], p.mss)[0])
    r = iwlab.run(Scenario.from_data(data, "<t>"), seed=1)
    f = r.flows[~r.flows["in_warmup"].astype(bool)]
    mine = f[f["app_name"].astype(str).str.startswith("cand-")]
    assert mine["client"].nunique() > 1
    out = reduce(r.flows, r.links, r.queues, EvalSpec.of(data, end=20.0))
    assert out["flows"] == len(mine) >= 30

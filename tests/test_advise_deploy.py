"""iwlab advise: what it recommends is what gets deployed, and its statistics are honest.

Each test reproduces a way the advice went wrong: a paced or size-based winner written as a
plain route initcwnd, ties broken by a size-based policy's MinIW instead of the IW its flows got,
identical candidates kept apart, successive halving deciding by rounds that never ran, an
answer given from a handful of flows, unfinished flows left out, a prefix no policy file takes.
"""

from __future__ import annotations

import subprocess
import sys
import tomllib

import numpy as np
import pandas as pd
import pytest

import iwlab
from iwlab.advise.advisor import _ip_route, _policy_file
from iwlab.advise.candidates import DEFAULT, DEPLOYABLE, expand
from iwlab.advise.evaluate import EvalSpec, reduce
from iwlab.advise.profile import Profile
from iwlab.advise.report import coincident_labels
from iwlab.advise.search import Budget, race
from iwlab.policy import parse_policy


def _cli(*args, timeout=600):
    return subprocess.run([sys.executable, "-c", "from iwlab.cli import main; main()", *args], capture_output=True,
                          text=True, timeout=timeout)


# ---- deployable by construction ----------------------------------------------------------------

def test_the_default_candidates_are_what_iwlab_can_deploy_paced_iw_included():
    p = Profile.from_flags()
    default = expand(list(DEFAULT), p.mss)
    assert default and all(c.deploy in DEPLOYABLE for c in default), [(c.name, c.deploy) for c in default]
    assert {c.name for c in default if c.kind == "paced"} == {"paced-iw10", "paced-iw16", "paced-iw32"}
    how = {c.kind: c.deploy for c in expand([*DEFAULT, "paced:10", "rfc6928:fallback"], p.mss)}
    assert how == {"fixed": "route", "rfc3390": "route", "rfc6928": "route", "size-based": "flow-iw",
                   "aimd": "watch", "learned": "watch", "paced": "paced", "rfc6928-fallback": "watch"}


def test_only_a_route_deployed_winner_gets_an_ip_route_line_and_each_policy_file_names_its_deployment():
    p = Profile.from_flags()
    for c in expand(["fixed:10", "size-based:50kB/32", "adaptive:aimd", "rfc6928:fallback", "paced:32"], p.mss):
        text = _policy_file(c, "10.0.0.0/8", p, "mean", 0.1)
        pf = parse_policy(text)
        assert pf.routes[0].policy == c.name and pf.to_scenario_policies()[c.name]["kind"] == c.policy["kind"]
        line = _ip_route(c, "10.0.0.0/8")
        if c.deploy == "route":
            assert line == f"ip route change 10.0.0.0/8 via GATEWAY dev DEV initcwnd {c.iw_segments}"
            assert "# deploy with: iwlab apply policy.toml" in text
        else:
            # A size-based policy's MinIW (or an adaptive start value) is not the policy: no route line.
            assert line == "", (c.name, line)
            assert ("iwlab watch --policy" if c.deploy == "watch" else "iwlab flow-iw attach") in text
        # The file's [tcp] is the candidate's pacing: flow-iw paces what was simulated, nothing else.
        assert pf.tcp == {"pacing": c.deploy == "paced", "paced_iw": c.deploy == "paced"}, (c.name, pf.tcp)


def test_a_winner_this_iwlab_cannot_deploy_gets_a_refusal_naming_the_best_deployable(monkeypatch):
    import iwlab.advise.advisor as advisor

    p = Profile.from_flags()
    cands = expand(["paced:32", "fixed:10"], p.mss)
    table = pd.DataFrame({"candidate": ["paced-iw32", "iw10"]})
    assert advisor._refusal(cands[0], table, cands) == ""
    # Were paced IW not deployable here, its win would be refused and IW 10 named instead.
    monkeypatch.setattr(advisor, "DEPLOYABLE", frozenset({"route", "flow-iw", "watch"}))
    why = advisor._refusal(cands[0], table, cands)
    assert why.startswith("paced-iw32 wins but") and "the best deployable candidate is iw10" in why, why


def test_a_paced_policy_file_simulates_exactly_the_paced_candidate():
    from iwlab.advise.build import scenario_data
    from iwlab.policy import with_policy
    from iwlab.scenario import Scenario

    p = Profile.from_flags()
    c = expand(["paced:32"], p.mss)[0]
    pf = parse_policy(_policy_file(c, "default", p, "mean", 0.1))
    unpaced = expand(["fixed:32"], p.mss)[0]
    # Simulating the file on the unpaced IW 32's scenario gives every connection the candidate's
    # tcp (pacing, paced IW, Linux's pacer) and the candidate's policy.
    sc = with_policy(Scenario.from_data(scenario_data(p, unpaced)), pf)
    assert {k: sc.data["tcp"][k] for k in c.tcp} == c.tcp
    assert pf.policies[pf.routes[0].policy] == c.policy


def test_a_lossless_200ms_path_with_30_segment_flows_gets_a_route_iw_of_32_not_a_minimum_of_4(tmp_path):
    # iw32, iw64 and size-based V 32 (θ 50 kB covers the 43 kB flows) give every flow 32
    # segments: identical on every seed. The simplest deployment of the three wins — a route
    # initcwnd 32 — not the size-based policy by its MinIW 4.
    a = iwlab.advise(rate="10Mbps", rtt="200ms", buffer="500pkt", sizes="30seg", load="10%", duration="20s",
                     candidates=["fixed:4,10,32,64", "size-based:50kB/32"], budget="60runs", jobs=1, seeds=3,
                     max_seeds=6, sensitivity=False)
    r = a.recommended
    assert r["candidate"] == "iw32" and r["iw_segments"] == 32 and r["deploy"] == "route", a.candidates
    t = a.candidates.set_index("candidate")
    assert t.loc["size-50kB-v32", "iw_got"] > 30 and t.loc["size-50kB-v32", "status"] == "identical to iw32 on every seed"
    assert t.loc["iw64", "status"] == "identical to iw32 on every seed"
    assert a.ip_route == "ip route change default via GATEWAY dev DEV initcwnd 32"
    pol = tomllib.loads(a.policy_file)
    assert pol["iw"]["policies"]["iw32"] == {"kind": "fixed", "segments": 32}
    assert (tmp_path / "adv" / "policy.toml").exists() is False
    a.write(tmp_path / "adv")
    assert tomllib.loads((tmp_path / "adv" / "policy.toml").read_text()) == pol


# ---- honest statistics -------------------------------------------------------------------------

class Runner:
    """Runs nothing: a run's figures are `table[name](seed)`."""

    jobs = 1

    def __init__(self, table):
        self.table, self.calls = table, []

    def map(self, tasks, spec):
        for name, seed in tasks:
            self.calls.append((name, seed))
            yield {"point": {"candidate": name}, "seed": seed, "wall_seconds": 0.0, **self.table[name](seed)}


def _race(runner, specs, budget=Budget(), max_seeds=24):
    return race(expand(specs, 1448), lambda c, s: (c.name, s), EvalSpec(), "fct_mean", (), None, budget, runner,
                n0=3, max_seeds=max_seeds, progress=False)


def test_identical_candidates_are_merged_with_each_other_not_only_with_the_best():
    same = lambda s: {"fct_mean": 2.0 + 0.1 * (s % 3), "retransmit_rate": 0.01, "completed": 1.0}  # noqa: E731
    r = Runner({"iw10": lambda s: {"fct_mean": 1.0 + 0.01 * s, "retransmit_rate": 0.0, "completed": 1.0},
                "iw32": same, "iw64": same, "iw46": same})
    st = _race(r, ["fixed:10,32,46,64"])
    # iw32, iw46 and iw64 tie with one another, not with the best: merged into the smallest.
    assert st.status["iw46"] == st.status["iw64"] == "identical to iw32 on every seed", st.status
    assert st.status["iw32"].startswith("worse than iw10") and st.best == "iw10"


def test_the_answer_does_not_change_with_the_budget():
    # Eleven fixed IWs 0.01 s apart under 0.8 s of per-seed noise: no budget separates them, so
    # every budget must give the same answer — the one nearest today's IW 10, as nothing shows a
    # difference. Halving used to drop IWs by their means and answer by the budget.
    names = ["iw1", "iw2", "iw3", "iw4", "iw7", "iw10", "iw16", "iw24", "iw32", "iw46", "iw64"]
    noise = {n: np.random.default_rng(i).normal(0, 0.8, 64) for i, n in enumerate(names)}
    table = {n: (lambda s, n=n, i=i: {"fct_mean": 1.0 - 0.01 * i + noise[n][s], "retransmit_rate": 0.01})
             for i, n in enumerate(names)}
    answers = {runs: _race(Runner(table), ["fixed:1,2,3,4,7,10,16,24,32,46,64"], budget=Budget(runs=runs)).best
               for runs in (100, 150, 300, 600)}
    assert set(answers.values()) == {"iw10"}, answers


def test_a_candidate_that_finishes_fewer_flows_is_out_even_if_its_finished_flows_are_fast():
    r = Runner({"iw3": lambda s: {"fct_mean": 1.0 + 0.01 * s, "retransmit_rate": 0.0, "completed": 0.95},
                "iw64": lambda s: {"fct_mean": 0.8 + 0.01 * s, "retransmit_rate": 0.0, "completed": 0.6 + 0.01 * (s % 2)}})
    st = _race(r, ["fixed:3,64"])
    assert st.best == "iw3" and st.status["iw64"].startswith("completes fewer flows than iw3"), st.status


def test_open_flows_count_with_their_time_censored_at_the_end_of_the_run():
    flows = pd.DataFrame({"in_warmup": [False, False, False], "app": [0, 0, 0],
                          "response_bytes": [1000, 1000, 1000], "completed": [True, False, True],
                          "completion": [1.0, float("nan"), 2.0], "start": [1.0, 4.0, 3.0],
                          "data_segments": [1, 1, 1], "retransmits": [0, 0, 0], "timeouts": [0, 0, 0],
                          "iw_segments": [10, 10, 10]})
    out = reduce(flows, pd.DataFrame(), pd.DataFrame(), EvalSpec(end=10.0))
    assert out["fct_mean"] == pytest.approx((1.0 + 6.0 + 2.0) / 3) and out["completed"] == pytest.approx(2 / 3)
    assert reduce(flows, pd.DataFrame(), pd.DataFrame(), EvalSpec())["fct_mean"] == pytest.approx(1.5)


def test_too_few_flows_within_the_budget_give_no_answer_exit_3_and_say_which_budget_would(tmp_path):
    # 256 kb/s at 30 % load with web-search sizes: a handful of flows per 30 s run; longer runs
    # would reach enough, but the 9-run budget is spent by the first look.
    a = iwlab.advise(rate="256kbps", load="30%", sizes="websearch", candidates=["fixed:1,3,10"], budget="9runs",
                     jobs=1, seeds=3, max_seeds=6, sensitivity=False)
    assert a.stop_reason == "insufficient data" and a.recommended == {} and a.policy_file == a.ip_route == ""
    assert "a budget of at least 27 runs would" in a.stop_detail and len(a.runs) == 9, a.stop_detail
    out = _cli("advise", "--rate", "256kbps", "--load", "30%", "--sizes", "websearch", "--candidates", "fixed:1,3,10",
               "--budget", "9runs", "--jobs", "1", "--no-sensitivity", "--no-progress", "--out", str(tmp_path / "a"))
    assert out.returncode == 3, (out.returncode, out.stderr)
    assert out.stderr.strip().splitlines()[-1].startswith("iwlab advise: no recommendation (insufficient data): ")
    assert not (tmp_path / "a" / "policy.toml").exists() and (tmp_path / "a" / "advice.json").exists()


@pytest.mark.parametrize("prefix", ["10.0.0.0/33", "garbage"])
def test_a_prefix_no_policy_file_takes_is_refused_before_anything_runs(prefix):
    out = _cli("advise", "--prefix", prefix, "--candidates", "fixed:3,10")
    assert out.returncode == 2 and out.stderr.count("\n") == 1, out.stderr
    assert out.stderr.startswith(f"error: prefix = '{prefix}' is not allowed; expected an IPv4/IPv6 CIDR"), out.stderr
    with pytest.raises(ValueError, match="prefix = "):
        iwlab.advise(prefix=prefix, candidates=["fixed:3"])


def test_coinciding_candidates_get_one_readable_label():
    x = np.array([1.0, 1.0, 1.0, 1.0, 2.0])
    y = np.array([5.0, 5.0, 5.0, 5.0, 6.0])
    labels = coincident_labels(x, y, np.array(["iw32", "iw46", "iw64", "size-50kB-v32", "iw3"]))
    assert labels == [((1.0, 5.0), "iw32, iw46 +2 more"), ((2.0, 6.0), "iw3")]


def test_a_sensitivity_flip_is_flagged_only_when_its_ci_excludes_zero():
    from iwlab.advise.advisor import _sensitivity

    p = Profile.from_flags()
    cands = expand(["fixed:10,32"], p.mss)
    table = pd.DataFrame({"candidate": ["iw10", "iw32"], "status": ["recommended", "worse"], "seeds": [4, 4]})

    def value(label, name, seed):
        if name == "iw10":
            return 1.0 + 0.1 * seed
        # RTT ×2: iw32 better by 0.3 s on every seed; buffer ×2: better on average, by noise only.
        return {"RTT ×2": 0.7 + 0.1 * seed, "buffer ×2": 1.0 + 0.1 * seed + (-0.3 if seed % 2 else 0.25)}.get(
            label, 1.5 + 0.1 * seed)

    class R:
        def map(self, tasks, spec):
            for label, name, seed in tasks:
                yield {"point": {"candidate": name}, "seed": seed, "fct_mean": value(label, name, seed)}

    s = _sensitivity(p, cands, table, cands[0], lambda q, label: (lambda c, seed: (label, c.name, seed)),
                     EvalSpec(), "fct_mean", R(), False).set_index("variant")
    assert s.loc["RTT ×2", "best"] == "iw32" and bool(s.loc["RTT ×2", "significant"])
    assert s.loc["buffer ×2", "best"] == "iw32" and not s.loc["buffer ×2", "significant"]
    assert "not significant" in s.loc["buffer ×2", "detail"]
    assert bool(s.loc["RTT ×0.5", "same"]) and not s.loc["RTT ×0.5", "significant"]

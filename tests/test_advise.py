"""iwlab advise: profiles and their errors, candidates, scenarios built from profiles, the racing
search (on synthetic figures, where the right answer is known exactly), the result object, its
policy file and report, and the CLI through the real entry point."""

from __future__ import annotations

import json
import math
import subprocess
import sys
import tomllib
from pathlib import Path

import numpy as np
import pytest

import iwlab
from iwlab.advise.build import scenario_data
from iwlab.advise.candidates import expand
from iwlab.advise.evaluate import EvalSpec
from iwlab.advise.profile import Profile, ProfileError
from iwlab.advise.search import Budget, Margin, race, t_interval
from iwlab.scenario import Scenario

# ---------------------------------------------------------------------------------------------
# Profiles


def test_flags_give_the_profile_in_base_units():
    p = Profile.from_flags(rate="2Mbps", rtt="100ms", buffer="25pkt", background="udp:60%", sizes="9seg",
                           objective="p95", max_retransmit_pp=0.5)
    assert (p.rate_bps, p.rtt_s, p.buffer_packets(), p.sizes) == (2_000_000, 0.1, 25, "9seg")
    assert (p.background.kind, p.background.share, p.objective.metric) == ("udp", 0.6, "p95")
    assert p.constraints.retransmit_pp == 0.5
    # A buffer in time is converted at the bottleneck rate in 1500-byte packets: 60 ms of 2 Mb/s = 10.
    assert Profile.from_flags(rate="2Mbps", buffer="60ms").buffer_packets() == 10
    assert Profile.from_flags(background="tcp:2").background.flows == 2
    assert Profile.from_flags(rtt="50ms-300ms").rtt_hi_s == pytest.approx(0.3)


@pytest.mark.parametrize("field, value, allowed", [
    ("rate", "fast", "a rate > 0"),
    ("rtt", "-5ms", "a time > 4 ms"),
    ("buffer", "12pkts", "packets ('25pkt') or a time"),
    ("background", "udp:160%", "udp:P%"),
    ("background", "icmp", "none, udp:P%, tcp:N (bulk), tcp:N@RATE (rate-limited), tcp-share:P%"),
    ("loss", 1.5, "0 <= p < 1"),
    ("sizes", "huge", "'Nseg'"),
    ("tcp", "bbr", "['linux', 'reno']"),
    ("objective", "p50", "['mean', 'median', 'p95', 'p99']"),
    ("max_retransmit_pp", -1, ">= 0"),
])
def test_bad_flags_name_the_field_the_value_and_what_is_allowed(field, value, allowed):
    with pytest.raises(ProfileError) as e:
        Profile.from_flags(**{field: value})
    msg = str(e.value)
    assert f"{field} = {value!r}" in msg and allowed in msg, msg


def test_profile_files_are_read_and_their_errors_carry_file_and_line(tmp_path):
    f = tmp_path / "p.toml"
    f.write_text('rate = "10Mbps"\nrtt = "200ms"\nbuffer = "100pkt"\nsizes = "websearch"\n'
                 '[objective]\nmetric = "median"\nmax_size = "200kB"\n[constraints]\nretransmit_pp = 0.5\n'
                 '[[population]]\nshare = 0.5\nrate = "1Mbps"\n[[population]]\nshare = 0.5\nrate = "5Mbps"\n')
    p = Profile.from_toml(f)
    assert (p.rate_bps, p.rtt_s, p.sizes, p.objective.metric, p.objective.max_size) == (
        10_000_000, 0.2, "websearch", "median", 200_000)
    assert [b.rate_bps for b in p.buckets] == [1_000_000, 5_000_000]
    f.write_text('rate = "10Mbps"\n\nbackground = "udp:0%"\n')
    with pytest.raises(ProfileError) as e:
        Profile.from_toml(f)
    assert str(e.value).startswith(f"{f}:3: background = 'udp:0%'"), str(e.value)
    f.write_text('rate = "10Mbps"\n[objective]\nmax_size = "1MB"\nmetric = "p50"\n')
    with pytest.raises(ProfileError, match=r"p.toml:4: objective.metric = 'p50' is not allowed"):
        Profile.from_toml(f)
    f.write_text('rate = "10Mbps"\nspeed = 3\n')
    with pytest.raises(ProfileError, match=r"p.toml:2: speed = 3 is not allowed; expected one of the keys"):
        Profile.from_toml(f)


def test_sizes_from_a_csv_of_sizes_or_of_a_cdf(tmp_path):
    sizes = tmp_path / "sizes.csv"
    sizes.write_text("bytes\n1000\n5000\n5000\n20000\n")
    p = Profile.from_flags(sizes=str(sizes))
    pts = scenario_data(p, expand(["fixed:10"], p.mss)[0])["apps"][0]["size"]["points"]
    assert [x for x, _ in pts][1:] == [1000, 5000, 20000] and [f for _, f in pts] == [0, 0.25, 0.75, 1.0]
    cdf = tmp_path / "cdf.csv"
    cdf.write_text("1000,0\n10000,0.5\n100000,1\n")
    assert Profile.from_flags(sizes=str(cdf)).sizes == str(cdf.resolve())
    bad = tmp_path / "bad.csv"
    bad.write_text("1000,0.5\n10,0.2\n")
    with pytest.raises(ProfileError, match="sizes"):
        Profile.from_flags(sizes=str(bad))


# ---------------------------------------------------------------------------------------------
# Candidates and scenarios


def test_candidate_registry_expands_kinds_and_rejects_unknown_ones():
    names = [c.name for c in expand(["fixed:1,3-4", "rfc3390", "rfc6928", "size-based:200kB/16", "paced:10"], 1448)]
    assert names == ["iw1", "iw3", "iw4", "rfc3390", "rfc6928", "size-200kB-v16", "paced-iw10"]
    by = {c.name: c for c in expand(["rfc3390", "rfc6928", "paced:10"], 1448)}
    # RFC 3390 with MSS 1448: 4380 B = 3 whole segments; RFC 6928: 14480 B = 10.
    assert (by["rfc3390"].iw_segments, by["rfc6928"].iw_segments) == (3, 10)
    # Paced as flow-iw deploys it: the first flight capped, internal pacing after, Linux's pacer.
    assert by["paced-iw10"].tcp == {"pacing": True, "paced_iw": True, "pacer": "linux"}
    with pytest.raises(ValueError, match="KIND one of"):
        expand(["iw10"], 1448)
    with pytest.raises(ValueError, match="segments must be 1…1000"):
        expand(["fixed:0"], 1448)


@pytest.mark.parametrize("flags", [
    {}, {"background": "udp:60%"}, {"background": "tcp:2"}, {"background": "poisson-tcp:50%"},
    {"rtt": "40ms-300ms", "loss": 0.01, "tcp": "reno"}, {"max_harm_pct": 10, "max_voip_ms": 20},
    {"sizes": "websearch", "buffer": "50ms"},
])
def test_every_profile_and_candidate_builds_a_scenario_the_core_accepts(flags):
    p = Profile.from_flags(**flags)
    for c in expand(["fixed:1,10", "rfc3390", "rfc6928", "size-based:50kB/10", "paced:16"], p.mss):
        sc = Scenario.from_data(scenario_data(p, c))
        assert sc.data["iw"]["policies"]["cand"] == c.policy
    data = scenario_data(p, expand(["paced:10"], p.mss)[0])
    # RTT = 2 × (1 ms + bottleneck + 1 ms)
    assert data["topology"]["bottleneck"]["delay"] == f"{(p.rtt_s / 2 - 0.002) * 1e6:.0f}us"
    assert data["apps"][0]["tcp"]["paced_iw"] is True


def test_population_buckets_become_client_groups_with_their_share_of_the_load():
    p = Profile.from_flags(population=[{"share": 0.25, "rate": "256kbps"}, {"share": 0.75, "rate": "5Mbps",
                                                                             "rtt": "300ms"}], load="20%")
    data = scenario_data(p, expand(["fixed:10"], p.mss)[0])
    groups = [g for g in data["topology"]["left"]]
    assert [g["access"]["rate"] for g in groups] == ["256000bps", "5000000bps"]
    # Every client host is one source of Poisson arrivals; each carries 1/8 of the 20 %.
    assert [(a["count"], a["arrivals"]) for a in data["apps"]] == [(2, {"kind": "poisson", "load": "2.5%"}),
                                                                   (6, {"kind": "poisson", "load": "2.5%"})]
    Scenario.from_data(data)


# ---------------------------------------------------------------------------------------------
# The racing search on synthetic figures


def test_t_interval_is_the_student_t_interval():
    m, lo, hi = t_interval(np.array([1.0, 2.0, 3.0, 4.0]))
    # t(0.975, 3) = 3.182446; s = 1.290994; half width = 3.182446 × 1.290994 / 2
    assert (m, lo, hi) == pytest.approx((2.5, 2.5 - 2.054255, 2.5 + 2.054255), abs=1e-5)
    assert math.isnan(t_interval(np.array([1.0]))[1])


class FakeRunner:
    """Runs nothing: a run's objective is the candidate's true mean plus seeded noise."""

    jobs = 1

    def __init__(self, means, noise=0.05, rtx=None):
        self.means, self.noise, self.rtx, self.calls = means, noise, rtx or {}, []

    def map(self, tasks, spec):
        for name, seed in tasks:
            self.calls.append((name, seed))
            rng = np.random.default_rng(seed)
            common = rng.normal(0, self.noise)  # the seed's own luck, shared by all candidates
            own = np.random.default_rng([seed, sum(map(ord, name))]).normal(0, self.noise / 2)
            yield {"point": {"candidate": name}, "seed": seed, "fct_mean": self.means[name] + common + own,
                   "retransmit_rate": self.rtx.get(name, 0.01) + own / 100, "wall_seconds": 0.0}


def _race(runner, names, budget=Budget(), checks=(), baseline=None, max_seeds=24, margin=Margin()):
    cands = expand([f"fixed:{','.join(n.removeprefix('iw') for n in names)}"], 1448)
    return race(cands, lambda c, s: (c.name, s), EvalSpec(), "fct_mean", checks, baseline, budget, runner,
                n0=3, max_seeds=max_seeds, progress=False, margin=margin)


def test_race_drops_clearly_worse_candidates_early_and_stops_when_the_best_is_separated():
    r = FakeRunner({"iw3": 1.0, "iw10": 0.5, "iw16": 0.55, "iw64": 2.0})
    st = _race(r, ["iw3", "iw10", "iw16", "iw64"])
    assert st.best == "iw10" and st.stop_reason == "separated"
    # iw3 and iw64 are worse by far more than the noise: gone after the first round (3 seeds each).
    assert st.dropped_in["iw3"] == 1 and st.dropped_in["iw64"] == 1
    seeds = {n: max(s for m, s in r.calls if m == n) for n in ["iw3", "iw10", "iw16", "iw64"]}
    assert seeds["iw3"] == seeds["iw64"] == 3 and seeds["iw16"] > 3, seeds
    assert "worse than iw10" in st.status["iw16"]


class TiedRunner(FakeRunner):
    """Two candidates whose seed-by-seed differences alternate ±0.02: truly tied, never identical."""

    def map(self, tasks, spec):
        for name, seed in tasks:
            self.calls.append((name, seed))
            sign = (1 if seed % 2 else -1) * (1 if name == "iw3" else -1)
            yield {"point": {"candidate": name}, "seed": seed, "fct_mean": 1.0 + 0.1 * seed + 0.01 * sign,
                   "retransmit_rate": 0.01, "wall_seconds": 0.0}


def test_race_reports_indistinguishable_candidates_at_max_seeds():
    # Without a margin the ±0.01 s alternation is never resolved: max-seeds, and the tie goes to
    # the IW nearest today's default.
    r = TiedRunner({})
    st = _race(r, ["iw3", "iw10"], max_seeds=12, margin=Margin(share=None, seconds=0.0))
    assert st.stop_reason == "max-seeds" and "not separated at 12 seeds" in st.stop_detail, st.stop_detail
    assert st.best == "iw10"
    assert st.runs == 24
    # With the default margin (2 % of ~1.6 s) the CI soon lies within it: equal, decided early.
    st = _race(TiedRunner({}), ["iw3", "iw10"], max_seeds=12)
    assert st.stop_reason == "separated" and st.best == "iw10" and st.status["iw3"].startswith("equal to"), st.status


def test_race_stops_when_the_budget_is_spent_and_says_so():
    r = FakeRunner({"iw3": 1.0, "iw10": 1.0, "iw16": 1.0, "iw32": 1.0})
    st = _race(r, ["iw3", "iw10", "iw16", "iw32"], budget=Budget(runs=20))
    assert st.stop_reason == "budget" and st.runs <= 20, (st.stop_reason, st.runs)


def test_race_honours_a_constraint_against_the_baseline():
    # iw64 is fastest but retransmits 3 pp more than iw3: with a +0.5 pp limit iw10 wins.
    r = FakeRunner({"iw3": 1.0, "iw10": 0.7, "iw64": 0.5}, rtx={"iw3": 0.01, "iw10": 0.012, "iw64": 0.04})
    check = ("rtx", "retransmit_rate", 0.5, lambda a, b: 100 * (a["retransmit_rate"] - b["retransmit_rate"]))
    st = _race(r, ["iw3", "iw10", "iw64"], checks=[check], baseline="iw3")
    assert st.best == "iw10" and st.status["iw64"].startswith("violates rtx"), st.status
    # IW 3 keeps running as the constraint's reference, but it no longer contends: separated.
    assert st.stop_reason == "separated" and st.reference_worse, (st.stop_reason, st.open)
    assert max(s for n, s in r.calls if n == "iw3") == max(s for n, s in r.calls if n == "iw10")


def test_successive_halving_under_a_budget_keeps_the_best_and_the_constraint_baseline():
    r = FakeRunner({"iw3": 1.0, "iw4": 0.99, "iw7": 0.98, "iw10": 0.97, "iw16": 0.96}, noise=0.5)
    check = ("rtx", "retransmit_rate", 5.0, lambda a, b: 100 * (a["retransmit_rate"] - b["retransmit_rate"]))
    st = _race(r, ["iw3", "iw4", "iw7", "iw10", "iw16"], budget=Budget(runs=50), checks=[check], baseline="iw3")
    assert st.stop_reason == "budget" and st.runs <= 50, (st.stop_reason, st.runs)
    assert "dropped by successive halving (budget)" in st.status.values(), st.status
    assert st.status["iw3"] == "racing" and st.status[st.best] == "racing"
    # The halved round ran: it names what it dropped, and the survivors got its seeds.
    halved = next(x for x in st.rounds if x["halved"])
    assert halved["runs"] == 6 * halved["candidates"] and halved["seeds"] == 12, st.rounds


def test_successive_halving_never_drops_a_candidate_for_a_round_that_does_not_run():
    # 30 runs spent, 10 left: the next round does not fit even halved, so the race stops with
    # all five still in it — nobody is dropped on the strength of runs that never happen.
    r = FakeRunner({"iw3": 1.0, "iw4": 0.99, "iw7": 0.98, "iw10": 0.97, "iw16": 0.96}, noise=0.5)
    st = _race(r, ["iw3", "iw4", "iw7", "iw10", "iw16"], budget=Budget(runs=40))
    assert st.stop_reason == "budget" and st.runs == 30, (st.stop_reason, st.runs)
    assert set(st.status.values()) == {"racing"}, st.status


def test_a_budget_smaller_than_the_first_round_is_an_error():
    with pytest.raises(ValueError, match="first round alone needs 12 .4 × 3 seeds"):
        _race(FakeRunner({"iw3": 1, "iw10": 1, "iw16": 1, "iw32": 1}), ["iw3", "iw10", "iw16", "iw32"],
              budget=Budget(runs=10))


def test_budget_parses_runs_and_times():
    assert Budget.parse("120s") == Budget(seconds=120.0) and Budget.parse("2min") == Budget(seconds=120.0)
    assert Budget.parse("200runs") == Budget(runs=200) and Budget.parse("50") == Budget(runs=50)
    with pytest.raises(ValueError, match="budget = 'lots' is not allowed"):
        Budget.parse("lots")


# ---------------------------------------------------------------------------------------------
# End to end: API, result object, files, CLI

SMALL = dict(rate="2Mbps", rtt="100ms", buffer="25pkt", sizes="9seg", duration="15s", load="15%")


def test_advise_returns_the_recommendation_with_its_evidence(tmp_path):
    a = iwlab.advise(candidates=["fixed:3,10", "paced:10"], budget="30runs", jobs=1, seeds=2, max_seeds=4,
                     **SMALL)
    r = a.recommended
    assert r["candidate"] in {"iw3", "iw10", "paced-iw10"} and r["iw_segments"] in (3, 10)
    assert r["ci_low"] <= r["value"] <= r["ci_high"]
    assert set(a.candidates["candidate"]) == {"iw3", "iw10", "paced-iw10"}
    assert {"value", "ci_low", "ci_high", "retransmit_rate", "seeds", "status", "pareto"} <= set(a.candidates.columns)
    assert a.candidates["pareto"].any()
    assert set(a.runs["candidate"]) == {"iw3", "iw10", "paced-iw10"} and a.runs["fct_mean"].gt(0).all()
    assert a.stop_reason in ("separated", "max-seeds", "budget")
    assert list(a.sensitivity["variant"]) == ["RTT ×0.5", "RTT ×2", "buffer ×0.5", "buffer ×2", "load ×0.25", "load ×0.5",
                                             "load ×2", "load ×4", "periodic", "closed-loop", "bursts"]
    pol = tomllib.loads(a.policy_file)
    assert pol["routes"] == [{"prefix": "default", "policy": r["policy"]}]
    assert pol["iw"]["policies"][r["policy"]] == r["policy_table"]
    assert a.ip_route.startswith(f"ip route change default via GATEWAY dev DEV initcwnd {r['iw_segments']}")
    paths = a.write(tmp_path / "adv")
    assert json.loads(paths["json"].read_text())["recommended"]["iw_segments"] == r["iw_segments"]
    page = paths["report"].read_text()
    assert "Pareto" in page and "data:image/png;base64," in page and r["candidate"] in page
    assert paths["pareto"].read_bytes()[:4] == b"\x89PNG"


def _cli(*args, timeout=300):
    return subprocess.run([sys.executable, "-c", "from iwlab.cli import main; main()", *args], capture_output=True,
                          text=True, timeout=timeout)


def test_cli_help_shows_a_complete_example_that_runs_in_under_a_minute(tmp_path):
    import re
    import shlex
    import time

    out = _cli("advise", "--help")
    assert out.returncode == 0
    for flag in ("--rate", "--rtt", "--buffer", "--background", "--sizes", "--objective", "--budget", "--json",
                 "--dask", "iwlab advise --rate 2Mbps"):
        assert flag in out.stdout, flag
    # The example as printed (rich wraps the box; the example's own lines end in a backslash).
    lines = [ln.strip(" │") for ln in out.stdout.splitlines()]
    start = next(i for i, ln in enumerate(lines) if ln.startswith("iwlab advise --rate"))
    cmd = ""
    for ln in lines[start:]:
        cmd += " " + ln.rstrip("\\").strip()
        if not ln.endswith("\\"):
            break
    args = shlex.split(cmd)[2:]
    args[args.index("--out") + 1] = str(tmp_path / "advice")
    t0 = time.perf_counter()
    run = _cli("advise", *args, "--no-progress")
    assert run.returncode == 0, run.stderr
    assert time.perf_counter() - t0 < 60
    assert re.search(r"^recommended: \S+ \(IW \d+", run.stdout, re.M), run.stdout
    assert (tmp_path / "advice" / "report.html").exists()


def test_cli_bad_input_exits_2_naming_the_field():
    out = _cli("advise", "--background", "udp:200%")
    assert out.returncode == 2 and "background = 'udp:200%' is not allowed" in out.stderr, out.stderr
    out = _cli("advise", "--budget", "forever")
    assert out.returncode == 2 and "budget = 'forever'" in out.stderr, out.stderr
    with pytest.raises(ValueError, match="candidates: 'magic'"):
        iwlab.advise(candidates=["magic"])


def test_cli_json_has_the_recommended_policy_and_iw_beside_every_candidate():
    out = _cli("advise", "--rate", "2Mbps", "--rtt", "100ms", "--buffer", "25pkt", "--background", "udp:60%",
               "--sizes", "9seg", "--objective", "mean", "--budget", "12runs", "--duration", "25s", "--load", "20%",
               "--candidates", "fixed:3,10", "--seeds", "2", "--max-seeds", "2", "--no-sensitivity", "--jobs", "1",
               "--json")
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    assert {"policy", "iw_segments"} <= set(doc["recommended"])
    assert [c["candidate"] for c in doc["candidates"]] and all(
        {"value", "ci_low", "ci_high", "retransmit_rate"} <= set(c) for c in doc["candidates"])
    assert doc["stop_reason"] in ("separated", "max-seeds", "budget")
    assert "initcwnd" in doc["ip_route"] and "[[routes]]" in doc["policy_file"]


def test_profile_path_is_relative_to_nothing_surprising(tmp_path):
    f = tmp_path / "p.toml"
    f.write_text('sizes = "sizes.csv"\n')
    (tmp_path / "sizes.csv").write_text("1000\n2000\n")
    assert Path(Profile.from_toml(f).sizes) == (tmp_path / "sizes.csv").resolve()


# ---------------------------------------------------------------------------------------------
# --from-watch: profiles per prefix from the watcher's state (iwlab.deploy.state, schema 1)


def _watch_state(path: Path, rows: list[tuple]) -> Path:
    """A state file written by the watcher's own state code (iwlab.deploy.state) with these
    per-prefix counters: (netns, prefix, connections, segs_out, retrans, rtt_us_sum, rtt_n)."""
    from iwlab.deploy.state import State

    st = State(path)
    for netns, prefix, connections, segs_out, retrans, rtt_us_sum, rtt_n in rows:
        counts = {prefix: {"connections": connections, "iw_loss": 0, "segs_out": segs_out, "retrans": retrans,
                           "rtt_us_sum": rtt_us_sum, "rtt_n": rtt_n}}
        st.add_counts(netns or None, counts, None, "policy.toml", "")
    st.close()
    return path


def test_from_watch_builds_one_profile_per_prefix_from_the_measurements(tmp_path):
    from iwlab.advise.watch import profiles_from_watch

    state = _watch_state(tmp_path / "state.sqlite", [
        ("", "10.1.0.0/16", 100, 3000, 0, 100 * 300_000, 100),     # 300 ms, 30 segments, lossless
        ("", "10.2.0.0/16", 50, 500, 50, 50 * 40_000, 50),          # 40 ms, 9 segments, 10 % retransmitted
        ("", "10.3.0.0/16", 0, 0, 0, 0, 0),                         # nothing seen: no profile
        ("ns1", "10.4.0.0/16", 10, 100, 0, 10 * 50_000, 10),       # another namespace
    ])
    base = Profile.from_flags(rate="10Mbps", buffer="100pkt")
    ps = profiles_from_watch(state, base)
    assert list(ps) == ["10.1.0.0/16", "10.2.0.0/16"]
    a, b = ps["10.1.0.0/16"][0], ps["10.2.0.0/16"][0]
    assert (a.rtt_s, a.sizes, a.loss, a.rate_bps, a.buffer_packets()) == (pytest.approx(0.3), "30seg", 0.0,
                                                                           10_000_000, 100)
    assert (b.rtt_s, b.sizes, b.loss) == (pytest.approx(0.04), "9seg", pytest.approx(0.1))
    assert list(profiles_from_watch(state, base, netns="ns1")) == ["10.4.0.0/16"]
    with pytest.raises(ProfileError, match="schema version 1"):
        import sqlite3

        other = tmp_path / "other.sqlite"
        sqlite3.connect(other).execute("CREATE TABLE t (x)").connection.close()
        profiles_from_watch(other, base)


def test_cli_from_watch_writes_one_policy_file_for_every_prefix(tmp_path):
    state = _watch_state(tmp_path / "state.sqlite", [
        ("", "10.1.0.0/16", 100, 3000, 0, 100 * 300_000, 100),
        ("", "10.2.0.0/16", 50, 500, 50, 50 * 40_000, 50)])
    out = _cli("advise", "--from-watch", str(state), "--rate", "10Mbps", "--buffer", "100pkt", "--duration", "20s",
               "--load", "50%",
               "--candidates", "fixed:3,32", "--budget", "48runs", "--seeds", "4", "--max-seeds", "4",
               "--no-sensitivity", "--jobs", "1", "--json", "--out", str(tmp_path / "adv"))
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    assert [p["prefix"] for p in doc["prefixes"]] == ["10.1.0.0/16", "10.2.0.0/16"]
    # 30-segment flows at 300 ms: IW 32 ends most in one round trip. 20 s runs hold ~25 such flows,
    # fewer than the 30 per run the advisor wants, so it lengthens them: 24 runs per prefix pay for it. IW 32's bursts meet the 50 %
    # load's queue now and then (≈ 3 % retransmitted), so 2 seeds leave the two tied; 4 separate them.
    assert doc["prefixes"][0]["recommended"]["iw_segments"] == 32
    pol = tomllib.loads((tmp_path / "adv" / "policy.toml").read_text())
    assert [r["prefix"] for r in pol["routes"]] == ["10.1.0.0/16", "10.2.0.0/16"]
    from iwlab.policy import load_policy

    assert [r.key for r in load_policy(tmp_path / "adv" / "policy.toml").routes] == ["10.1.0.0/16", "10.2.0.0/16"]
    assert all(r["policy"] in pol["iw"]["policies"] for r in pol["routes"])
    out = _cli("advise", "--from-watch", str(tmp_path / "missing.sqlite"))
    assert out.returncode == 2 and "from_watch" in out.stderr


def test_paced_iw_study_cuts_retransmissions_into_a_five_packet_buffer():
    from iwlab.advise import paced_study

    s = paced_study.summary(paced_study.run(seeds=6, buffers=(5,), duration="20s")).set_index("variant")
    # Paced as Linux paces it: 10 segments at line rate, 10 RTT/IW apart — fewer losses, sooner done.
    assert s.loc["paced IW20", "retransmit_rate"] < 0.8 * s.loc["bursty IW20", "retransmit_rate"], s
    assert s.loc["paced IW20", "fct_mean"] < s.loc["bursty IW20", "fct_mean"], s
    assert paced_study.figure(s.reset_index())[:4] == b"\x89PNG"


def test_local_processes_and_a_dask_cluster_give_the_runs_of_one_process():
    distributed = pytest.importorskip("distributed")
    kw = dict(candidates=["fixed:3,10"], budget="8runs", seeds=2, max_seeds=2, sensitivity=False, **SMALL)
    cols = ["candidate", "seed", "fct_mean", "retransmit_rate", "flows"]

    def runs(a):
        return a.runs[cols].sort_values(["candidate", "seed"]).reset_index(drop=True)

    one = runs(iwlab.advise(jobs=1, **kw))
    assert runs(iwlab.advise(jobs=2, **kw)).equals(one)
    with distributed.LocalCluster(n_workers=1, processes=False, threads_per_worker=2,
                                  dashboard_address=None) as cluster:
        assert runs(iwlab.advise(dask=cluster.scheduler_address, **kw)).equals(one)


def test_policy_files_parse_as_policy_files_and_adaptive_policies_are_candidates():
    from iwlab.advise.advisor import _policy_file
    from iwlab.policy import parse_policy

    p = Profile.from_flags()
    names = [c.name for c in expand(["adaptive"], p.mss)]
    assert names == ["aimd-10", "learned-10"]
    for c in expand(["fixed:10", "rfc6928:fallback", "size-based:200kB/16", "paced:10", "adaptive"], p.mss):
        for prefix in ("default", "10.77.2.0/24"):
            pf = parse_policy(_policy_file(c, prefix, p, "mean", 0.1))
            assert [r.key for r in pf.routes] == [prefix] and pf.routes[0].policy == c.name
        Scenario.from_data(scenario_data(p, c))

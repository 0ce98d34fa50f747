"""The practical-equivalence margin: differences below it are no differences; among equals the
simplest deployment (a fixed route IW, then per-size, then paced, then adaptive) nearest today's
IW 10 wins; a difference is significant only when its whole CI lies beyond the margin."""

from __future__ import annotations

import pytest

import iwlab
from iwlab.advise.candidates import expand
from iwlab.advise.evaluate import EvalSpec
from iwlab.advise.search import Budget, Margin, preference, race


class Runner:
    jobs = 1

    def __init__(self, table):
        self.table = table

    def map(self, tasks, spec):
        for name, seed in tasks:
            yield {"point": {"candidate": name}, "seed": seed, "wall_seconds": 0.0, "completed": 1.0,
                   "retransmit_rate": 0.0, **self.table[name](seed)}


def _race(table, specs, margin=Margin(), max_seeds=24):
    return race(expand(specs, 1448), lambda c, s: (c.name, s), EvalSpec(), "fct_mean", (), None, Budget(),
                Runner(table), n0=3, max_seeds=max_seeds, progress=False, margin=margin)


def test_margin_parses_shares_and_times_and_has_a_floor():
    assert Margin.parse(None).of(1.0) == pytest.approx(0.02) and Margin.parse(None).of(0.01) == 0.001
    assert Margin.parse("5ms").of(10.0) == pytest.approx(0.005) and Margin.parse("1%").of(2.0) == pytest.approx(0.02)
    with pytest.raises(ValueError, match="margin = 'wide' is not allowed; expected a share"):
        Margin.parse("wide")


def test_a_gain_below_the_margin_is_no_gain_the_simpler_route_iw_wins():
    # The adaptive policy is faster on every seed, by 0.5 us: "significant" by the CI, nothing in practice.
    t = {"iw32": lambda s: {"fct_mean": 0.6 + 0.01 * (s % 5)},
         "learned-10": lambda s: {"fct_mean": 0.6 + 0.01 * (s % 5) - 5e-7}}
    st = _race(t, ["fixed:32", "adaptive:learned"])
    assert st.best == "iw32", (st.best, st.status, st.stop_detail)
    assert st.status["learned-10"].startswith("equal to") or "not worse beyond the margin" in st.open["learned-10"]
    # With no margin at all, the 0.5 us are a difference and the adaptive policy wins.
    st0 = _race(t, ["fixed:32", "adaptive:learned"], margin=Margin(share=None, seconds=0.0))
    assert st0.best == "learned-10"


def test_a_gain_beyond_the_margin_with_its_ci_is_a_difference():
    t = {"iw10": lambda s: {"fct_mean": 1.0 + 0.01 * (s % 5)},
         "size-50kB-v32": lambda s: {"fct_mean": 0.9 + 0.01 * (s % 5)}}
    st = _race(t, ["fixed:10", "size-based:50kB/32"])
    assert st.best == "size-50kB-v32" and st.status["iw10"].startswith("worse than size-50kB-v32")


def test_among_equals_the_simplest_then_the_nearest_to_iw10_wins_not_the_smallest():
    same = lambda s: {"fct_mean": 1.0 + 0.05 * (s % 3)}  # noqa: E731
    st = _race({"iw1": same, "iw10": same, "iw16": same, "size-50kB-v10": same},
               ["fixed:1,10,16", "size-based:50kB/10"])
    assert st.best == "iw10", (st.best, st.status)
    order = sorted(expand(["paced:10", "adaptive:learned", "size-based:50kB/10", "fixed:1,16"], 1448), key=preference)
    assert [c.name for c in order] == ["iw16", "iw1", "size-50kB-v10", "paced-iw10", "learned-10"]


def test_a_lossless_200ms_path_with_30_segment_responses_gets_a_fixed_route_iw():
    a = iwlab.advise(rate="10Mbps", rtt="200ms", buffer="500pkt", sizes="30seg", load="10%", duration="20s",
                     candidates=["fixed:10,32", "adaptive:learned"], budget="40runs", jobs=1, seeds=3, max_seeds=6,
                     sensitivity=False)
    r = a.recommended
    assert r["deploy"] == "route" and r["candidate"] == "iw32", a.candidates
    assert a.ip_route.endswith("initcwnd 32")

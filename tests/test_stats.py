"""Statistics with hand-computed numbers: medians, percentiles, power, normalisation, bootstrap
intervals, group summaries and the per-run metrics of records."""

import doctest
import math

import numpy as np
import pandas as pd
import pytest

from iwlab import stats


@pytest.mark.parametrize(("values", "median", "mean"), [
    ([3, 1, 2], 2.0, 2.0),
    ([4, 1, 3, 2], 2.5, 2.5),
    ([1, 2, 9, float("nan")], 2.0, 4.0),            # NaN ignored
    (pd.Series([1.0, None, 5.0], dtype="double[pyarrow]"), 3.0, 3.0),  # nulls ignored
    ([], math.nan, math.nan),
])
def test_median_and_mean_of_known_arrays(values, median, mean):
    for got, want in ((stats.median(values), median), (stats.mean(values), mean)):
        assert got == want or (math.isnan(got) and math.isnan(want))


@pytest.mark.parametrize(("q", "want"), [(0, 0.0), (50, 50.0), (99, 99.0), (100, 100.0), (12.5, 12.5)])
def test_percentiles_interpolate_linearly(q, want):
    assert stats.percentile(range(101), q) == pytest.approx(want)


def test_percentile_out_of_range_is_refused():
    with pytest.raises(ValueError, match="q = 101"):
        stats.percentile([1], 101)


def test_cdf_steps_by_one_over_n():
    x, p = stats.cdf([3, 1, 2, 4])
    assert x.tolist() == [1, 2, 3, 4] and p.tolist() == [0.25, 0.5, 0.75, 1.0]


def test_network_power_is_goodput_over_delay():
    assert stats.network_power(1_500_000.0, 0.5) == 3_000_000.0
    assert math.isnan(stats.network_power(1.0, 0.0))
    got = stats.network_power(pd.Series([10.0, 20.0, 30.0]), pd.Series([2.0, 4.0, 0.0]))
    assert got.tolist()[:2] == [5.0, 5.0] and math.isnan(got.iloc[2])


def test_normalisation_divides_by_the_baseline_of_the_same_group():
    df = pd.DataFrame({"iw": ["iw1", "iw2", "iw4", "iw1", "iw2", "iw4"],
                       "clients": [8, 8, 8, 16, 16, 16],
                       "power": [2.0, 3.0, 5.0, 4.0, 2.0, 6.0]})
    got = stats.normalize(df, "power", by="iw", baseline="iw1", within=["clients"])
    assert got.tolist() == [1.0, 1.5, 2.5, 1.0, 0.5, 1.5]
    one = stats.normalize(df[df["clients"] == 8], "power", by="iw", baseline="iw1")
    assert one.tolist() == [1.0, 1.5, 2.5]


def test_normalisation_needs_one_baseline_per_group():
    df = pd.DataFrame({"iw": ["iw1", "iw1", "iw2"], "seed": [1, 2, 1], "power": [1.0, 2.0, 3.0]})
    with pytest.raises(ValueError, match="several rows"):
        stats.normalize(df, "power", by="iw", baseline="iw1")
    assert stats.normalize(df, "power", by="iw", baseline="iw1", within=["seed"]).tolist() == [1.0, 1.0, 3.0]
    with pytest.raises(ValueError, match="iw9"):
        stats.normalize(df, "power", by="iw", baseline="iw9")


def test_bootstrap_intervals_cover_the_true_mean_about_95_percent_of_the_time():
    rng = np.random.default_rng(7)
    samples = rng.exponential(scale=3.0, size=(200, 60))  # true mean 3
    cis = [stats.bootstrap_ci(x, "mean", confidence=0.95, n_resamples=999, random_state=i)
           for i, x in enumerate(samples)]
    coverage = np.mean([lo < 3.0 < hi for lo, hi in cis])
    assert 0.88 <= coverage <= 0.99  # percentile intervals run slightly short on skewed data
    width = np.mean([hi - lo for lo, hi in cis])
    assert width == pytest.approx(2 * 1.96 * 3.0 / math.sqrt(60), rel=0.2)  # ≈ the normal-theory width


def test_a_bootstrap_interval_is_reproducible_and_brackets_the_statistic():
    sample = np.random.default_rng(3).normal(loc=5.0, scale=2.0, size=200)
    lo, hi = stats.bootstrap_ci(sample, "mean", random_state=1)
    assert lo < 5.0 < hi and lo < sample.mean() < hi
    assert stats.bootstrap_ci(sample, "mean", random_state=1) == (lo, hi)
    mlo, mhi = stats.bootstrap_ci(sample, "median", random_state=1)
    assert mlo < np.median(sample) < mhi


@pytest.mark.parametrize(("values", "want"), [([2.0, 2.0, 2.0], (2.0, 2.0)), ([1.0], (math.nan, math.nan)),
                                              ([], (math.nan, math.nan))])
def test_degenerate_bootstrap_samples_give_a_point_or_nothing(values, want):
    got = stats.bootstrap_ci(values)
    assert all(g == w or (math.isnan(g) and math.isnan(w)) for g, w in zip(got, want))


def test_summaries_give_value_and_interval_per_group_and_metric():
    runs = pd.DataFrame({"iw": ["iw1"] * 4 + ["iw3"] * 4, "seed": [1, 2, 3, 4] * 2,
                         "delay": [1.0, 2.0, 3.0, 6.0, 1.0, 1.0, 1.0, 1.0],
                         "util": [0.5, 0.5, 0.7, 0.7, 0.9, 0.9, 0.9, 0.9]})
    s = stats.summarize(runs, by=["iw"], metrics=["delay", "util"])
    assert list(s.columns) == ["iw", "metric", "n", "value", "ci_low", "ci_high"]
    assert s[["iw", "metric"]].values.tolist() == [["iw1", "delay"], ["iw1", "util"], ["iw3", "delay"],
                                                   ["iw3", "util"]]
    assert s["value"].tolist() == pytest.approx([3.0, 0.6, 1.0, 0.9]) and s["n"].tolist() == [4] * 4
    d = s.iloc[0]
    assert 1.0 <= d["ci_low"] < 3.0 < d["ci_high"] <= 6.0
    assert (s.iloc[2]["ci_low"], s.iloc[2]["ci_high"]) == (1.0, 1.0)
    med = stats.summarize(runs, by=["iw"], metrics=["delay"], statistic="median")
    assert med["value"].tolist() == [2.5, 1.0]
    with pytest.raises(KeyError, match="nope"):
        stats.summarize(runs, by=["iw"], metrics=["nope"])


def _records():
    flows = pd.DataFrame({
        "app_kind": ["web", "web", "web", "ftp", "web"],
        "completion": [0.2, 0.4, None, 8.0, 0.1],
        "completed": [True, True, False, True, True],
        "in_warmup": [False, False, False, False, True],
        "delivered_bytes": [1000, 3000, 500, 100_000, 7],
        "data_segments": [1, 3, 1, 70, 1],
        "retransmits": [0, 1, 0, 6, 5],
        "timeouts": [0, 1, 0, 1, 0], "fast_retransmits": [0, 0, 0, 2, 0], "syn_retransmits": [0, 0, 1, 0, 0],
    })
    pages = pd.DataFrame({"delay": [1.0, 2.0, 4.0, 9.0], "completed": [True, True, True, False],
                          "in_warmup": [False, False, False, False]})
    links = pd.DataFrame({"from": ["router-left", "router-right", "left-0"],
                          "to": ["router-right", "router-left", "router-left"],
                          "utilisation": [0.1, 0.9, 0.01], "drop_rate": [0.0, 0.02, 0.0],
                          "queue_drops": [0, 20, 0], "loss_drops": [0, 1, 0]})
    return flows, pages, links, {"duration": 12.0, "warmup": 2.0, "events": 42}


def test_run_metrics_from_hand_made_records():
    m = stats.run_metrics(*_records())
    assert (m["flows"], m["flows_completed"], m["pages"], m["pages_completed"]) == (4, 3, 4, 3)
    assert m["fct_median"] == 0.4 and m["fct_mean"] == pytest.approx(8.6 / 3)
    assert m["median_page_delay"] == 2.0 and m["mean_page_delay"] == pytest.approx(7 / 3)
    assert m["goodput_bps"] == 104_500 * 8 / 10  # delivered payload over duration − warm-up
    assert m["power"] == pytest.approx(m["goodput_bps"] / 0.4)
    assert m["web_goodput_bps"] == 4_500 * 8 / 10 and m["web_power"] == pytest.approx(3600 / 2.0)
    assert m["ftp_median_delay"] == 8.0 and m["ftp_power"] == pytest.approx(80_000 / 8.0)
    assert (m["util_forward"], m["util_reverse"]) == (0.1, 0.9)
    assert (m["drop_rate_forward"], m["drop_rate_reverse"], m["drops_reverse"]) == (0.0, 0.02, 21)
    assert (m["data_segments"], m["retransmits"], m["timeouts"]) == (75, 7, 2)
    assert m["retransmit_rate"] == 7 / 75 and m["events"] == 42


def test_run_metrics_of_a_run_without_traffic_are_nan_not_errors():
    flows, pages, links, summary = _records()
    m = stats.run_metrics(flows.iloc[0:0], pages.iloc[0:0], links.iloc[0:0], summary)
    assert m["flows"] == 0 and math.isnan(m["median_page_delay"]) and math.isnan(m["retransmit_rate"])
    assert math.isnan(m["util_reverse"]) and m["goodput_bps"] == 0.0


def test_the_doc_examples_run():
    assert doctest.testmod(stats).failed == 0

"""A tiny version of docs/adaptive-policies.md (python/iwlab/adaptive/compare.py)."""

from __future__ import annotations

import iwlab
from iwlab.adaptive import POLICIES, compare, markdown, policy_sets


def test_adaptive_policies_next_to_fixed_iws_on_congested_links(tmp_path):
    sc = iwlab.load("congested-links", sets=["duration=60s", *policy_sets()])
    iwlab.sweep(sc, grid={"apps[0].server_iw": ["iw3", "iw10", *POLICIES], "apps[2].rate": ["60%", "95%"]},
                seeds=1, jobs=1, out=tmp_path, progress=False)
    t = compare(tmp_path, ["apps[2].rate", "apps[0].server_iw"], app=0).set_index(["apps[2].rate",
                                                                                   "apps[0].server_iw"])
    assert len(t) == 10 and (t["flows"] > 5).all()
    # No loss at 60 %: fixed IWs are what they say, IW10 finishes in fewer round trips, the
    # fallback and learned IW stay at 10, AIMD grows (clean connections).
    calm = t.loc["60%"]
    assert calm.loc["iw3", "mean_iw_segments"] == 3 and calm.loc["iw10", "mean_iw_segments"] == 10
    assert calm.loc["iw10", "fct_median"] < calm.loc["iw3", "fct_median"]
    assert calm.loc["fb", "mean_iw_segments"] == 10 and calm.loc["le", "mean_iw_segments"] == 10
    assert calm.loc["ai", "mean_iw_segments"] > 10
    assert (calm["retransmits_per_flow"] == 0).all()
    # At 95 % IW10 loses in its first flight; every adaptive policy backs off below 10.
    busy = t.loc["95%"]
    assert busy.loc["iw10", "retransmits_per_flow"] > busy.loc["iw3", "retransmits_per_flow"]
    for p in POLICIES:
        assert busy.loc[p, "mean_iw_segments"] < 10, p
    assert markdown(t.reset_index()).count("\n") == 11

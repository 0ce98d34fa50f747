"""The Python API runs packaged presets and returns Arrow-backed DataFrames."""

import iwlab


def test_a_preset_runs_and_its_records_balance():
    r = iwlab.run("rfc2415", seed=3)
    s = r.summary
    assert s["packets_created"] == s["packets_delivered"] + s["packets_dropped"] + s["packets_in_flight"]
    assert len(r.flows) == s["flows"] and len(r.pages) == s["pages"]
    assert str(r.pages["delay"].dtype).endswith("[pyarrow]")


def test_the_same_seed_gives_identical_records():
    a, b = iwlab.run("rfc2415", seed=5), iwlab.run("rfc2415", seed=5)
    assert a.flows.equals(b.flows) and a.pages.equals(b.pages)

"""`iwlab.emulate.kernel_cells`: the simulated side's `--sim-tcp FIELD=VALUE` overrides."""

from iwlab.emulate.kernel_cells import _scalar, cells, with_tcp


def test_sim_tcp_values_are_read_as_toml_scalars():
    # Booleans and numbers as a scenario file writes them; anything else stays a string.
    assert _scalar("false") is False
    assert _scalar("3") == 3
    assert _scalar("every-ack") == "every-ack"


def test_with_tcp_sets_a_boolean_rule_over_the_profile():
    sc, _, _ = cells()["adv9-tcp1"]
    off = with_tcp(sc, {"frto": _scalar("false"), "undo": _scalar("false")})
    assert off.data["tcp"] == {"profile": "linux", "frto": False, "undo": False}


def test_the_rto_interval_resamples_seeds_not_flows():
    import pandas as pd

    from iwlab.emulate.kernel_cells import per_flow_ci

    # Every seed alike: the interval is the point itself.
    same = pd.DataFrame({"seed": [1, 1, 2, 2, 3, 3], "timeouts": [0, 1, 1, 0, 0, 1]})
    assert per_flow_ci(same, "timeouts") == (0.5, 0.5)
    # Seeds that differ: the interval spans the seeds' own rates, and holds the pooled one.
    apart = pd.DataFrame({"seed": [1] * 10 + [2] * 10, "timeouts": [0] * 10 + [1] * 10})
    lo, hi = per_flow_ci(apart, "timeouts")
    assert lo == 0.0 and hi == 1.0


def test_sim_jitter_sets_the_topology_field_and_is_checked():
    import pytest

    from iwlab.emulate.kernel_cells import with_jitter
    from iwlab.scenario import ScenarioError

    sc, _, _ = cells()["adv9-tcp1"]
    assert with_jitter(sc, "200us").data["topology"]["jitter"] == "200us"
    with pytest.raises(ScenarioError, match="topology.jitter"):
        with_jitter(sc, "5s")

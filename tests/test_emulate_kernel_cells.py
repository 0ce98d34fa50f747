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

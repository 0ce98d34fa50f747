"""The scenarios of python/iwlab/emulate/profile_effect.py (the pure part; the runs need root)."""

from iwlab.emulate.plan import kernel_settings, merged_tcp
from iwlab.emulate.profile_effect import EXPLICIT_TCP, variants


def test_the_variants_differ_only_in_their_tcp():
    v = variants(80)
    assert sorted(v) == [("mixed", "explicit"), ("mixed", "linux"), ("varying", "explicit"), ("varying", "linux")]
    for pattern in ("varying", "mixed"):
        a, b = v[(pattern, "explicit")].data, v[(pattern, "linux")].data
        assert a["tcp"] == EXPLICIT_TCP and b["tcp"] == {"profile": "linux"}
        strip = lambda d: [{k: x for k, x in app.items() if k != "tcp"} for app in d["apps"]]  # noqa: E731
        assert strip(a) == strip(b) and a["topology"] == b["topology"]
        kinds = [app["kind"] for app in a["apps"]]
        assert kinds == ["short-flows", "short-flows"] + (["udp"] if pattern == "mixed" else []) + ["poisson-flows"]
        assert [app.get("tcp") for app in a["apps"][:2]] == [{"delayed_ack": False}] * 2


def test_the_emulator_applies_the_profile_and_the_explicit_fields_over_it():
    linux = variants(80)[("varying", "linux")].data
    t = merged_tcp(linux, linux["apps"][0])
    assert (t["mss"], t["cc"], t["prr"], t["hystart"], t["quickack"], t["min_rto"]) == \
        (1448, "cubic", "linux", "linux", 16, "200ms")
    notes: list[str] = []
    k = kernel_settings(t, notes)
    assert k.sysctls["net.ipv4.tcp_sack"] == "1" and k.optional_sysctls["net.ipv4.tcp_rto_min_us"] == "200000"
    assert not any(k in n for n in notes for k in ("prr", "hystart", "quickack", "undo", "rto_window")), notes
    assert (k.sysctls["net.ipv4.tcp_frto"], k.sysctls["net.ipv4.tcp_dsack"]) == ("2", "1")
    explicit = variants(80)[("varying", "explicit")].data
    notes = []
    k = kernel_settings(merged_tcp(explicit, explicit["apps"][0]), notes)
    assert any("tcp.prr = false" in n for n in notes) and any("tcp.hystart" in n for n in notes)
    assert any("tcp.undo = false" in n for n in notes) and any("tcp.rto_window" in n for n in notes)
    assert (k.sysctls["net.ipv4.tcp_frto"], k.sysctls["net.ipv4.tcp_dsack"]) == ("0", "0")


def test_the_long_lived_pattern_runs_bulk_flows_and_the_chosen_response_size():
    v = variants(80, ("long-lived",), ("linux",), segments=9, bulk_flows=3)
    data = v[("long-lived", "linux")].data
    bulk = [a for a in data["apps"] if a["kind"] == "bulk"]
    assert len(bulk) == 1 and bulk[0]["count"] == 3
    shorts = [a for a in data["apps"] if a["kind"] == "short-flows"]
    assert shorts and all(a["response"] == "9seg" for a in shorts)
    assert not any(a["kind"] in ("udp", "poisson-flows") for a in data["apps"])

"""`iwlab advise --transport quic`: candidates run as QUIC flows on the profile's network, the
recommendation is RFC 9002's window unless a larger one is faster with 95 % confidence, and each
stack of profiles.toml is told its own setting; the policy file's `[quic]` is the engine's."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from iwlab.advise.profile import Profile, ProfileError
from iwlab.advise.quic import advise_quic, baseline_bytes, parse_packets, scenario, stack_settings
from iwlab.cli import build
from iwlab.policy import parse_policy
from iwlab.scenario import Scenario

#: Small and fast: 29 kB responses over 100 ms and 10 Mb/s, one client, a few flows.
FLAGS = dict(rate="10Mbps", rtt="100ms", sizes="20seg", load="5%", clients=1, duration="8s")


def test_the_baseline_is_rfc_9002s_window():
    assert baseline_bytes(1200) == 12_000
    assert baseline_bytes(1460) == 14_600
    assert baseline_bytes(1500) == 14_720  # max(14 720, 2 × size) caps 10 × 1 500
    assert baseline_bytes(9000) == 18_000


def test_candidate_counts_are_checked():
    assert parse_packets(None) == (10, 16, 24, 32)
    assert parse_packets("32,10,10") == (10, 32)
    for bad in ("1", "ten", "", "2000"):
        with pytest.raises(ProfileError, match="quic-iw"):
            parse_packets(bad)


def test_each_stack_gets_the_window_in_its_own_unit():
    by = {s["key"]: s for s in stack_settings(38_400)}
    assert by["quiche"]["value"] == 32 and "set_initial_congestion_window_packets = 32" in by["quiche"]["set_iw"]
    assert by["msquic"]["value"] == 31  # 38 400 / 1 260 B, rounded up
    assert by["quinn"]["value"] == 38_400  # bytes
    assert by["google-quiche"]["value"] == 20 and "IW20" in by["google-quiche"]["set_iw"]  # nearest option
    assert by["lsquic"]["value"] is None and by["lsquic"]["set_iw"].startswith("no setting")
    assert "46720 B" in by["lsquic"]["set_iw"]
    assert by["mvfst"]["pacing"].startswith("off by default, turn it on (TransportSettings::pacingEnabled")
    assert by["quiche"]["pacing"] == "on by default"
    assert len(by) == 10


def test_the_candidates_flows_become_quic_and_the_rest_stays():
    p = Profile.from_flags(None, **FLAGS, max_harm_pct=5)
    data = scenario(p, 38_400, 1200, 4000)
    apps = {a["name"]: a for a in data["apps"]}
    assert all(a.get("transport") == "quic" for n, a in apps.items() if n.startswith("cand-"))
    assert all("transport" not in a for n, a in apps.items() if n.startswith("others-"))
    assert data["quic"]["initial_window"] == 38_400 and data["quic"]["certificate_chain"] == "4000B"
    Scenario.from_data(data, "test")  # the engine accepts it
    with pytest.raises(ProfileError, match="sizes"):
        scenario(Profile.from_flags(None, **{**FLAGS, "sizes": "websearch"}), 12_000, 1200, 4000)


def test_a_window_that_holds_the_response_is_recommended_and_written():
    p = Profile.from_flags(None, **FLAGS)
    a = advise_quic(p, packets=(10, 32), seeds=2, jobs=1)
    rows = {r["iw_bytes"]: r for r in a.candidates}
    assert set(rows) == {12_000, 38_400}
    # 29 kB fit in 38 400 B: one flight, where 12 000 B needs a second round of slow start (at least
    # half a 100 ms round trip saved on the mean).
    assert rows[38_400]["verdict"] == "faster" and rows[38_400]["diff_s"] < -0.05
    assert a.recommended["iw_bytes"] == 38_400 and a.recommended["pacing"] is True
    f = parse_policy(a.policy_file)
    assert f.quic == {"initial_window": 38_400, "max_datagram_size": 1200, "pacing": True}
    assert "set_initial_congestion_window_packets = 32" in a.policy_file
    assert "Recommended: 32 datagrams = 38400 B" in a.summary()
    # The worked example of docs/quic.md is this run (docs/data/quic-iw/advise-example.txt).
    stored = Path(__file__).resolve().parents[1] / "docs" / "data" / "quic-iw" / "advise-example.txt"
    assert a.summary() + "\n" == stored.read_text()


def test_the_cli_writes_advice_and_policy_and_refuses_bad_input(tmp_path):
    args = ["advise", "--transport", "quic", "--rate", "10Mbps", "--rtt", "100ms", "--sizes", "20seg", "--load", "5%",
            "--clients", "1", "--duration", "8s", "--seeds", "2", "--quic-iw", "10,32", "-j", "1"]
    r = CliRunner().invoke(build(), [*args, "--json", "--out", str(tmp_path)])
    assert r.exit_code == 0, r.output
    out = json.loads(r.output)
    assert out["recommended"]["iw_bytes"] == 38_400 and len(out["stacks"]) == 10
    assert parse_policy((tmp_path / "policy.toml").read_text()).quic["initial_window"] == 38_400
    r = CliRunner().invoke(build(), [*args[:2], "udp"])
    assert r.exit_code == 2 and "--transport 'udp' is not allowed" in r.output
    r = CliRunner().invoke(build(), [*args[:-4], "--quic-iw", "1"])
    assert r.exit_code == 2 and "quic-iw" in r.output

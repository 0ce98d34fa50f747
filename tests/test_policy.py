"""Policy files and the Decider (python/iwlab/policy/ over iwlab._core.PolicyEngine)."""

from __future__ import annotations

import ipaddress
import json

import pytest

from iwlab import _core
from iwlab.policy import Decider, PolicyFileError, Route, load_policy, parse_policy

MINIMAL = """[iw.policies]
ten = { kind = "fixed", segments = 10 }

[[routes]]
prefix = "10.77.2.0/24"
policy = "ten"
"""

FULL = """[iw]
default = "fb"
[iw.policies]
fb = { kind = "rfc6928-fallback", expiry = "10s" }
ai = { kind = "aimd", initial = 10, min = 3, max = 12, step = 2, raise_after = 2 }
le = { kind = "learned", samples = 3, min = 2 }
sb = { kind = "size-based", theta = "20kB" }

[[routes]]
prefix = "10.0.0.0/8"
policy = "ai"
initrwnd = 20
congctl = "cubic"

[[routes]]
prefix = "10.1.0.0/16"
policy = "le"

[[routes]]
prefix = "2001:db8::/32"
policy = "sb"

[[routes]]
prefix = "default"
policy = "fb"
"""


def test_the_issues_minimal_example_loads(tmp_path):
    p = tmp_path / "p.toml"
    p.write_text(MINIMAL)
    pf = load_policy(p)
    assert pf.path == str(p) and pf.text == MINIMAL and pf.default is None
    assert pf.policies == {"ten": {"kind": "fixed", "segments": 10}}
    assert pf.routes == (Route(ipaddress.ip_network("10.77.2.0/24"), "ten", None, None, 5),)
    assert pf.to_scenario_policies() == {"ten": {"kind": "fixed", "segments": 10}}


def test_canonical_specs_and_longest_prefix_match():
    pf = parse_policy(FULL)
    assert pf.default == "fb"
    assert pf.policies["fb"] == {"kind": "rfc6928-fallback", "expiry": "10s"}
    assert pf.policies["le"] == {"kind": "learned", "initial": 10, "min": 2, "max": 40, "samples": 3,
                                 "percentile": 50}
    assert pf.policies["sb"]["theta"] == "20kB"
    assert [r.line for r in pf.routes] == [10, 16, 20, 24]
    assert pf.routes[0].initrwnd == 20 and pf.routes[0].congctl == "cubic"
    assert pf.route_for("10.1.2.3").policy == "le"
    assert pf.route_for("10.2.2.3").policy == "ai"
    assert pf.route_for("2001:db8::9").policy == "sb"
    assert pf.route_for("192.0.2.1").key == "default" and pf.route_for("::1").prefix is None
    assert parse_policy(MINIMAL).route_for("192.0.2.1") is None


@pytest.mark.parametrize("text, line, field, says", [
    (MINIMAL.replace("10.77.2.0/24", "10.77.2.1/24"), 5, "routes[0].prefix",
     'routes[0].prefix = "10.77.2.1/24" is not allowed; expected "default" or an IPv4/IPv6 network'),
    (MINIMAL.replace("10.77.2.0/24", "10.77.2.0/40"), 5, "routes[0].prefix", "the length must be 0..=32"),
    (MINIMAL.replace('policy = "ten"', 'policy = "nine"'), 6, "routes[0].policy",
     'routes[0].policy = "nine" is not allowed; expected a policy of [iw.policies], one of ["ten"]'),
    (MINIMAL + "mtu = 1500\n", 7, "routes[0].mtu", "unknown field `mtu`"),
    (MINIMAL.replace("segments = 10", "segments = 0"), 2, "iw.policies.ten.segments",
     "iw.policies.ten.segments = 0 is not allowed; expected >= 1 segment"),
    (MINIMAL + "initrwnd = 0\n", 7, "routes[0].initrwnd", "routes[0].initrwnd = 0 is not allowed"),
    ('[iw.policies]\na = { kind = "learned", percentile = 101 }\n', 2, "iw.policies.a.percentile",
     "iw.policies.a.percentile = 101 is not allowed; expected 1 ..= 100"),
    ('[iw.policies]\na = { kind = "aimd", max = 2 }\n', 2, "iw.policies.a.max",
     "iw.policies.a.max = 2 is not allowed; expected >= min (3)"),
])
def test_bad_files_name_file_line_field_value_and_what_is_allowed(tmp_path, text, line, field, says):
    p = tmp_path / "bad.toml"
    p.write_text(text)
    with pytest.raises(PolicyFileError) as e:
        load_policy(p)
    assert (e.value.path, e.value.line, e.value.field) == (str(p), line, field)
    assert str(e.value).startswith(f"{p}:{line}: ") and says in str(e.value), str(e.value)
    assert isinstance(e.value, ValueError)


def test_an_unreadable_file_is_a_policy_file_error(tmp_path):
    with pytest.raises(PolicyFileError, match="cannot read"):
        load_policy(tmp_path / "missing.toml")


def test_decisions_are_the_simulators_policies_per_prefix():
    pf = parse_policy(FULL)
    d = Decider(pf)
    # aimd on 10.0.0.0/8: 10 → evidence (> 4 KB) halves → 5; two clean closes raise by 2 → 7.
    assert d.iw_segments("10.0.0.0/8", 1000, 0) == 10
    d.learn("10.0.0.0/8", 1, {"kind": "loss_in_initial_window", "bytes_sent": 10_000})
    assert d.iw_bytes("10.0.0.0/8", 1000, 2) == 5000
    d.learn("10.0.0.0/8", 3, {"kind": "closed", "bytes_sent": 50_000, "loss": False, "cwnd": 40_000})
    d.learn("10.0.0.0/8", 4, {"kind": "closed", "bytes_sent": 50_000, "loss": False, "cwnd": 40_000})
    assert d.iw_segments("10.0.0.0/8", 1000, 5) == 7
    # learned on 10.1.0.0/16: median of min(cwnd, acked) of the last 3 closes.
    for cwnd in (30_000, 8_000, 16_000):
        d.learn("10.1.0.0/16", 6, {"kind": "closed", "bytes_sent": 90_000, "loss": False, "cwnd": cwnd})
    assert d.iw_segments("10.1.0.0/16", 1000, 7) == 16
    # the fallback cache on the default route: RFC 3390 until the 10 s expiry.
    assert d.iw_bytes("default", 1460, 0) == 14600
    d.learn("default", 1_000, {"kind": "loss_in_initial_window", "bytes_sent": 14_600})
    assert d.iw_bytes("default", 1460, 2_000) == 4380
    assert d.iw_bytes("default", 1460, 10_000_001_000) == 14600
    # size-based: IW(40 kB) with θ = 20 kB, V = 10, MinIW = 4 is ⌊(20·10 + 20·4)/40⌋ = 7.
    assert d.iw_segments("2001:db8::/32", 1448, 0, declared_size=40_000) == 7
    # rounding: RFC 6928's IW is a byte bound, min(10·MSS, max(2·MSS, 14600)); segments round down:
    # 14600 B at MSS 1600 is 9 segments.
    assert d.iw_bytes("default", 1600, 0) == 14600 and d.iw_segments("default", 1600, 0) == 9
    with pytest.raises(KeyError, match="10.9.0.0/16"):
        d.iw_bytes("10.9.0.0/16", 1000, 0)


@pytest.mark.parametrize("event, says", [
    ({"kind": "reset"}, "event kind = 'reset'"),
    ({"kind": "closed"}, "bytes_sent is missing"),
    ({"kind": "closed", "bytes_sent": -1}, "bytes_sent = -1"),
    ({"kind": "closed", "bytes_sent": 1, "loss": 1}, "loss = 1"),
    ({"kind": "closed", "bytes_sent": 1, "cwnd": 2.5}, "cwnd = 2.5"),
])
def test_bad_events_are_rejected(event, says):
    with pytest.raises(ValueError, match=says.replace("(", r"\(")):
        Decider(parse_policy(FULL)).learn("default", 0, event)


def test_state_says_iw_evidence_since_and_why():
    d = Decider(parse_policy(FULL))
    d.learn("default", 5_000, {"kind": "loss_in_initial_window", "bytes_sent": 8_000})
    s = d.state("default", mss=1460)
    assert s["kind"] == "rfc6928-fallback" and s["iw_segments"] == 3 and s["iw_bytes"] == 4380
    assert s["evidence"] == {"kind": "loss_in_initial_window", "bytes_sent": 8000}
    assert s["since_ns"] == 5_000 and s["until_ns"] == 10_000_005_000 and "8000 bytes" in s["why"]
    assert json.loads(json.dumps(s)) == s
    s = d.state("10.0.0.0/8", mss=1000)
    assert s["iw_segments"] == 10 and s["evidence"] is None
    s = d.state("2001:db8::/32")
    assert s["kind"] == "size-based" and "no learned state" in s["why"]


def test_snapshots_carry_the_learned_state_across_restarts():
    pf = parse_policy(FULL)
    d = Decider(pf)
    d.learn("10.0.0.0/8", 1, {"kind": "loss_in_initial_window", "bytes_sent": 10_000})
    d.learn("10.0.0.0/8", 2, {"kind": "closed", "bytes_sent": 1, "loss": False, "cwnd": 1})
    d.learn("10.1.0.0/16", 3, {"kind": "closed", "bytes_sent": 9_000, "loss": True, "cwnd": 20_000})
    d.learn("default", 4, {"kind": "loss_in_initial_window", "bytes_sent": 8_000})
    e = Decider.restore(pf, d.snapshot())
    for prefix in ("10.0.0.0/8", "10.1.0.0/16", "default"):
        assert e.state(prefix) == d.state(prefix)
    # the clean count survived too: one more clean close raises 5 → 7
    e.learn("10.0.0.0/8", 5, {"kind": "closed", "bytes_sent": 1, "loss": False, "cwnd": 1})
    assert e.iw_segments("10.0.0.0/8", 1000, 6) == 7
    # a policy whose kind changed starts afresh
    changed = parse_policy(FULL.replace('ai = { kind = "aimd", initial = 10, min = 3, max = 12, step = 2, '
                                        'raise_after = 2 }', 'ai = { kind = "fixed", segments = 4 }'))
    assert Decider.restore(changed, d.snapshot()).iw_segments("10.0.0.0/8", 1000, 6) == 4
    for bad in ("{", "[]", '{"format": "x"}', json.dumps({"format": "iwlab-decider/1", "engine": {"format": 1}})):
        with pytest.raises(ValueError, match="snapshot"):
            Decider.restore(pf, bad)


def test_the_engine_validates_with_the_scenario_code():
    with pytest.raises(_core.ScenarioError, match="iw.policies.x.raise_after = 0"):
        _core.PolicyEngine('{"x": {"kind": "aimd", "raise_after": 0}}')


# ---- the simulator's decisions, replayed -------------------------------------

# rfc6928 made small and lossy: 8 clients behind 6-packet access buffers, so IW10 loses packets.
SMALL = ["duration=40s", "warmup=0s", "topology.left[0].count=8", "apps[0].count=8",
         'topology.left[0].access.queue.limit="6pkt"']


@pytest.mark.parametrize("spec", ['{ kind = "rfc6928-fallback", expiry = "10s" }',
                                  '{ kind = "aimd", raise_after = 2 }',
                                  '{ kind = "learned", samples = 4 }'])
def test_a_decider_fed_the_simulators_events_makes_the_simulators_decisions(spec):
    import iwlab
    from iwlab.policy import replay_run, with_policy

    # Clients are 198.18.0.2, .6, … .30 (4g + 2); a /27 covers them, and one state per server.
    pf = parse_policy(f'[iw.policies]\np = {spec}\n[[routes]]\nprefix = "198.18.0.0/27"\npolicy = "p"\n')
    r = iwlab.run(with_policy(iwlab.load("rfc6928", sets=SMALL), pf), iw_events=True)
    ev = r.iw_events
    assert set(ev["kind"]) >= {"iw", "closed", "loss_in_initial_window"}
    assert (ev[ev["kind"] == "iw"]["dst_addr"].str.startswith("198.18.0.")).all()
    rows = replay_run(pf, ev)
    # Every server's IW to a client went through the route (the clients' requests to servers did not).
    assert len(rows) == (ev["kind"] == "iw").sum() - (~ev["dst_addr"].isin([f"198.18.0.{4 * g + 2}" for g in range(8)])
                                                        & (ev["kind"] == "iw")).sum()
    assert [x["iw_bytes"] for x in rows] == [x["sim_iw_bytes"] for x in rows]
    assert len({x["iw_bytes"] for x in rows}) >= 2, "the policy changed its decision at least once"
    # The flows table has the same IWs (a route's policy, or the SYN-loss rule's 1 segment) —
    # for the flows whose handshake finished: one the run's end cuts before its SYN-ACK has none.
    f = r.flows
    sent = f[(f["sender"] == "server") & f["syn_ack"].notna()]["iw_bytes"]
    assert set(sent) <= {x["iw_bytes"] for x in rows} | {1448}


def test_without_routes_a_scenario_runs_as_before_and_records_only_when_asked():
    import iwlab

    sc = iwlab.load("rfc6928", sets=SMALL)
    a, b = iwlab.run(sc), iwlab.run(sc, iw_events=True)
    assert a.iw_events is None and b.iw_events is not None
    assert a.flows.equals(b.flows) and a.summary["events"] == b.summary["events"]
    assert set(b.iw_events["policy"]) == {"iw10"}


def test_routes_choose_the_policy_by_destination_address():
    import iwlab
    from iwlab.policy import with_policy

    # Client 0 (198.18.0.2) gets IW 2 from a /32; every other destination keeps the scenario's IW10.
    pf = parse_policy('[iw.policies]\ntwo = { kind = "fixed", segments = 2 }\n'
                      '[[routes]]\nprefix = "198.18.0.2/32"\npolicy = "two"\n')
    r = iwlab.run(with_policy(iwlab.load("rfc6928", sets=SMALL), pf), iw_events=True)
    ev = r.iw_events[r.iw_events["kind"] == "iw"]
    assert set(ev[ev["dst_addr"] == "198.18.0.2"]["iw_bytes"]) == {2 * 1448}
    assert set(ev[ev["dst_addr"] != "198.18.0.2"]["iw_bytes"]) == {14480}
    # the policy column names the policy that decided: the route's, else the application's
    assert set(r.iw_events[r.iw_events["dst_addr"] == "198.18.0.2"]["policy"]) == {"two"}
    assert "two" not in set(r.iw_events[r.iw_events["dst_addr"] != "198.18.0.2"]["policy"])


def test_a_policy_name_the_scenario_defines_differently_is_an_error():
    import iwlab
    from iwlab.policy import with_policy

    pf = parse_policy('[iw.policies]\niw10 = { kind = "fixed", segments = 7 }\n'
                      '[[routes]]\nprefix = "default"\npolicy = "iw10"\n', "p.toml")
    with pytest.raises(PolicyFileError, match=r"p.toml:4: iw.policies.iw10 = .* rename it"):
        with_policy(iwlab.load("rfc6928"), pf)


def test_cli_run_with_the_issues_minimal_policy_file(tmp_path):
    import subprocess
    import sys
    from pathlib import Path

    iwlab_bin = Path(sys.executable).with_name("iwlab")
    p = tmp_path / "p.toml"
    p.write_text(MINIMAL.replace("10.77.2.0/24", "198.18.0.0/16"))  # the simulated hosts' addresses
    r = subprocess.run([str(iwlab_bin), "run", "congested-links", "--set", "duration=3s", "--set", "warmup=0s",
                        "--policy", str(p), "--out", str(tmp_path / "o")], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "o" / "iw_events.parquet").exists() and "iw_events" in r.stdout
    p.write_text(MINIMAL.replace("10.77.2.0/24", "10.77.2.0/33"))
    r = subprocess.run([str(iwlab_bin), "run", "congested-links", "--policy", str(p)], capture_output=True, text=True)
    assert r.returncode == 2 and f"{p}:5: routes[0].prefix" in r.stderr


def test_the_emulator_gives_a_policy_files_routes_to_the_senders_watchers():
    import iwlab
    from iwlab.emulate.plan import build_plan
    from iwlab.policy import with_policy

    # congested-links: clients on the left (198.18.0.2, .6, …), servers on the right. A route
    # covering the first client only: its servers' watchers decide their IW toward it; the
    # other clients keep the application's IW (an alias address).
    sc = with_policy(iwlab.load("congested-links"), parse_policy(MINIMAL.replace("10.77.2.0/24", "198.18.0.0/30")))
    plan = build_plan(sc, pid=1)
    first = plan.hosts[0]
    assert first.addr == "198.18.0.2"
    assert plan.watchers and all('prefix = "198.18.0.0/30"' in t and "ten = " in t for t in plan.watchers.values())
    assert plan.agents[first.name]["watched"]
    assert not any(plan.agents[h.name]["watched"] for h in plan.hosts[1:] if h.side == "left")
    # Nothing covered: no watcher, every flow on its alias as before.
    plain = build_plan(with_policy(iwlab.load("congested-links"), parse_policy(MINIMAL)), pid=1)
    assert plain.watchers == {} and not any(a["watched"] for a in plain.agents.values())


PACED = MINIMAL + "\n[tcp]\npacing = true\npaced_iw = true\n"


def test_the_tcp_section_carries_the_deployable_pacing():
    assert parse_policy(MINIMAL).tcp == {"pacing": False, "paced_iw": False} and not parse_policy(MINIMAL).paced
    pf = parse_policy(PACED)
    assert pf.tcp == {"pacing": True, "paced_iw": True} and pf.paced
    with pytest.raises(PolicyFileError, match=r"p.toml:8: tcp.paced_iw = true is not allowed; expected true only "
                                              r"with tcp.pacing = true"):
        parse_policy(MINIMAL + "[tcp]\npaced_iw = true\n", "p.toml")
    with pytest.raises(PolicyFileError, match=r"unknown field `pacing_ca_ratio`"):
        parse_policy(MINIMAL + "[tcp]\npacing_ca_ratio = 100\n")


def test_a_paced_policy_file_simulates_paced_connections():
    import iwlab
    from iwlab.policy import with_policy

    base = iwlab.load("rfc6928", sets=SMALL)
    paced = with_policy(base, parse_policy(PACED.replace("10.77.2.0/24", "default")))
    assert paced.data["tcp"]["pacing"] is True and paced.data["tcp"]["paced_iw"] is True
    plain = with_policy(base, parse_policy(MINIMAL.replace("10.77.2.0/24", "default")))
    assert "paced_iw" not in plain.data.get("tcp", {})
    # Paced departures change when flows complete: the run is not the unpaced one.
    a, b = iwlab.run(plain), iwlab.run(paced)
    assert not a.flows["completion"].equals(b.flows["completion"])


def test_cli_run_refuses_a_policy_whose_prefixes_cover_no_simulated_host(tmp_path):
    """A real host's prefix matches none of the simulator's 198.18.x hosts: running it would
    silently simulate the scenario's own IW, so it is one clear line and exit 2."""
    import subprocess
    import sys
    from pathlib import Path

    p = tmp_path / "p.toml"
    p.write_text(MINIMAL)
    r = subprocess.run([str(Path(sys.executable).with_name("iwlab")), "run", "congested-links", "--policy", str(p),
                        "--out", str(tmp_path / "o")], capture_output=True, text=True)
    lines = r.stderr.strip().splitlines()
    assert r.returncode == 2 and len(lines) == 1, r.stderr
    assert f"{p}:5: routes[0].prefix = '10.77.2.0/24' covers no simulated host" in lines[0]
    assert "198.18.0.2" in lines[0] and not (tmp_path / "o").exists()


def test_simulated_host_addresses_are_the_emulators():
    import iwlab
    from iwlab.emulate.plan import build_plan
    from iwlab.policy import sim_host_addresses

    sc = iwlab.load("congested-links")
    hosts = sim_host_addresses(sc)
    flat = [a for group in hosts.values() for a in group]
    assert flat == [h.addr for h in sorted(build_plan(sc, pid=1).hosts, key=lambda h: h.g)]


def test_a_toml_syntax_error_is_one_line_with_file_and_line(tmp_path):
    p = tmp_path / "p.toml"
    p.write_text(MINIMAL + "policy = = 1\n")
    with pytest.raises(PolicyFileError) as e:
        load_policy(p)
    assert "\n" not in str(e.value) and str(e.value).startswith(f"{p}:7: "), str(e.value)

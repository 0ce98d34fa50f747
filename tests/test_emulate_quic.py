"""QUIC scenarios in the emulator: the apps with `transport = "quic"` run on real QUIC stacks
(aioquic: python/iwlab/emulate/quic_peer.py; quinn: crates/iwlab-quic-peer) over the relay, and
`iwlab compare` sets them beside the engine's quinn-proto.

Plain tests check the settings and the peer's wire protocol on loopback (no root). Tests marked
`netns` run a scenario in namespaces of their own (`iwl<pid>-…`, removed after the run).
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from iwlab.emulate.errors import PlanError
from iwlab.emulate.quic_apps import PEER, quic_settings, rfc9002_initial_window

REPO = Path(__file__).resolve().parents[1]
MDS = 1200
IW = 20 * MDS  # 24 000 B: the response (60 kB) needs more than one round trip

SCENARIO = f"""
name = "quic-emu"
seed = 3
duration = "4s"
[topology]
kind = "dumbbell"
bottleneck = {{ rate = "100Mbps", delay = "48ms", queue = {{ kind = "drop-tail", limit = "1000pkt" }} }}
left = [{{ name = "clients", count = 1, access = {{ rate = "1Gbps", delay = "1ms" }} }}]
right = [{{ name = "servers", count = 1, access = {{ rate = "1Gbps", delay = "1ms" }} }}]
[iw]
default = "iw10"
policies.iw10 = {{ kind = "fixed", segments = 10 }}
[quic]
profile = "rfc9002"
certificate_chain = "1kB"
initial_window = "20pkt"
[[apps]]
kind = "short-flows"
clients = "clients"
servers = "servers"
response = "60kB"
arrivals = {{ kind = "periodic", period = "600ms" }}
flows = 5
transport = "quic"
"""


def scenario(text: str = SCENARIO):
    from iwlab.scenario import Scenario

    return Scenario.from_toml(text, "<test>")


# ---- settings (no root) ------------------------------------------------------------------------

def test_the_app_table_overrides_quic_field_by_field_and_the_default_window_is_rfc9002s():
    data = {"quic": {"profile": "rfc9002", "max_datagram_size": 1400, "certificate_chain": "6kB"}}
    q = quic_settings(data, {"quic": {"initial_window": "10pkt"}}, "apps[0]", "aioquic", 100, 10_000)
    assert (q["iw"], q["mds"], q["chain"], q["cc"]) == (14_000, 1400, 6000, "reno")
    q = quic_settings(data, {}, "apps[0]", "aioquic", 100, 10_000)
    assert q["iw"] == rfc9002_initial_window(1400) == 14_000
    assert rfc9002_initial_window(1200) == 12_000 and rfc9002_initial_window(1500) == 14_720
    q = quic_settings({}, {}, "apps[0]", "aioquic", 100, 10_000)
    assert (q["iw"], q["chain"], q["cc"]) == (12_000, 4000, "cubic")  # quinn's profile: CUBIC
    assert q["server_args"][-1] == "--log" and "--listen" in q["server_args"]


def test_a_controller_the_stack_lacks_and_a_request_too_short_for_the_header_are_refused():
    with pytest.raises(PlanError, match=r"apps\[0\]\.quic\.cc = 'bbr' cannot be emulated on aioquic"):
        quic_settings({}, {"quic": {"cc": "bbr"}}, "apps[0]", "aioquic", 100, 10_000)
    with pytest.raises(PlanError, match=r"apps\[0\]\.request = 8 B .* expected >= 16 B"):
        quic_settings({}, {}, "apps[0]", "aioquic", 8, 10_000)
    with pytest.raises(PlanError, match="quic_stack = 'msquic' is not allowed"):
        quic_settings({}, {}, "apps[0]", "msquic", 100, 10_000)


def _free_udp_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _exchange_on_loopback(peer: list[str], iw: int, response: int, chain: int, tmp_path: Path) -> tuple[dict, dict]:
    """One flow between a server and a client endpoint of `peer` on 127.0.0.1."""
    port, log = _free_udp_port(), tmp_path / "server.jsonl"
    opts = ["--iw", str(iw), "--mds", str(MDS), "--cc", "reno"]
    srv = subprocess.Popen([*peer, "server", "--listen", f"127.0.0.1:{port}", *opts, "--chain", str(chain),
                            "--log", str(log)], stdout=subprocess.PIPE, text=True)
    try:
        assert srv.stdout.readline().strip() == "ready"
        job = {"uid": "c/1", "flow": 77, "bind": "127.0.0.1", "dst": "127.0.0.1", "port": port, "request": 100,
               "response": response}
        out = subprocess.run([*peer, "client", *opts], input=json.dumps(job) + "\n", capture_output=True, text=True,
                             timeout=30)
        lines = [json.loads(x) for x in out.stdout.splitlines() if x.startswith("{")]
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and not (log.exists() and log.read_text().strip()):
            time.sleep(0.05)
    finally:
        srv.terminate()
        srv.wait(10)
        srv.stdout.close()
    (client,) = lines
    (server,) = [json.loads(x) for x in log.read_text().splitlines()]
    return client, server


def test_the_aioquic_peer_serves_the_response_its_request_names_and_reports_both_ends(tmp_path):
    c, s = _exchange_on_loopback([sys.executable, str(PEER)], IW, 60_000, 1000, tmp_path)
    assert c["completed"] and c["delivered"] == 60_000 and c["uid"] == "c/1"
    assert c["start"] < c["handshake"] < c["first_byte"] <= c["last_byte"]
    assert s["flow"] == 77  # the request's header
    assert s["client_first_dgram"] == 1200 and not s["amp_blocked"]  # 1 kB chain: under 3 x 1 200 B
    # aioquic's NewReno grows its window by the acknowledged handshake bytes too (RFC 9002 §7.3.1), so
    # the first flight may carry IW plus its handshake flight; on loopback the ACKs usually cut it sooner.
    assert 0 < s["first_flight_bytes"] <= IW + 3 * MDS and s["datagrams"] >= 50


def test_a_large_certificate_holds_the_aioquic_server_to_three_times_the_clients_bytes(tmp_path):
    c, s = _exchange_on_loopback([sys.executable, str(PEER)], IW, 2000, 8000, tmp_path)
    assert c["completed"]
    assert s["amp_blocked"] and 3600 - MDS < s["bytes_before_2nd"] <= 3600  # RFC 9000 §8.1


# ---- in namespaces (root) ----------------------------------------------------------------------

def _require_netns() -> None:
    from iwlab.emulate import preflight, relay_binary
    from iwlab.emulate.run import EmulationError

    why = preflight()
    if why:
        pytest.skip("; ".join(why))
    try:
        relay_binary()
    except EmulationError:
        pytest.skip("iwlab-link is not built (cargo build --release -p iwlab-link)")


def _leftover_namespaces() -> list[str]:
    pre = f"iwl{os.getpid()}-"
    return [n for n in subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout.split()
            if n.startswith(pre)]


def _check_against_engine(stack: str, tmp_path: Path, first_flight: tuple[int, int], tolerance: float):
    """Emulates SCENARIO on `stack` and compares it with the engine: the emulated server's median
    first flight within `first_flight` bytes, the median completion time within `tolerance` of
    the engine's."""
    from iwlab.emulate.compare import compare

    try:
        c = compare(scenario(), seeds=1, out=tmp_path / "cmp", quic_stack=stack)
    finally:
        assert _leftover_namespaces() == []
    text = c.text()
    print(text)
    emu = c.flows[c.flows["mode"] == "emulated"]
    sim = c.flows[c.flows["mode"] == "simulated"]
    assert len(emu) == len(sim) == 5, text
    m = c.metrics.set_index("metric")
    lo, hi = first_flight
    assert lo <= m.loc["QUIC median first flight (bytes)", "emu"] <= hi, text
    # quinn-proto sends while bytes in flight + one datagram stay below the window (docs/quic.md).
    assert m.loc["QUIC median first flight (bytes)", "sim"] == 22_800, text
    assert m.loc["QUIC amplification-limited share", "emu"] == 0.0, text
    (g,) = c.groups.itertuples()
    assert g.iw == IW / MDS
    assert abs(g.median_rel) <= tolerance, text
    return c


# The completion times differ by the endpoints' CPU (the handshake's signatures and key
# exchange in Python or a debug build, on a shared machine): +17 % (aioquic) and +19 % (quinn,
# debug build) were measured on a 2-core machine running other jobs; 30 % is the bound.
TOLERANCE = 0.30


@pytest.mark.netns
@pytest.mark.timeout(120)
def test_aioquic_in_the_emulator_sends_the_configured_window_and_completes_as_the_engine(tmp_path):
    _require_netns()
    # aioquic's NewReno grows its window by every byte acknowledged in slow start (RFC 9002
    # §7.3.1), the server's handshake flight too, before the response starts: the first flight
    # is the IW plus that flight (1 527 B here: 24 000 + 1 527 = 25 527 B measured), which is
    # under 3 x 1 200 B (not amplification-limited). At least the IW less one datagram.
    _check_against_engine("aioquic", tmp_path, (IW - MDS, IW + 3 * MDS), TOLERANCE)


@pytest.mark.netns
@pytest.mark.timeout(120)
def test_quinn_in_the_emulator_sends_the_engines_first_flight_and_completes_as_the_engine(tmp_path):
    _require_netns()
    from iwlab.binaries import find_binary

    if find_binary("iwlab-quic-peer", "IWLAB_QUIC_PEER") is None:
        pytest.skip("iwlab-quic-peer is not built (make quic-peer)")
    # The engine's own quinn-proto configuration on real sockets: the same 19 datagrams.
    _check_against_engine("quinn", tmp_path, (22_800, 22_800), TOLERANCE)

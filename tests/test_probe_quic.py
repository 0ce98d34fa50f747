"""`iwlab probe --quic`: the counting rules on scripted and recorded packet sequences (no root), the
client's silence (no ACK frame) against an aioquic server in memory (no root), and the probe against
aioquic HTTP/3 servers of known initial windows in namespaces of our own (marker `netns`: root).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from iwlab.probe import ProbeError, ProbeInputError
from iwlab.probe.quic import parse_quic_target, split
from iwlab.probe.quic_flight import (MIN_PROBE_GAP, Frame, Handshake, Packet, first_flight, gap_for, limited)

HERE = Path(__file__).parent
RECORDED = HERE / "data" / "quic_flight_iw12000.json"

# ---------------------------------------------------------------- scripted sequences

SID = 0  # the request's stream


def pkt(at, n, size=1200, space="1RTT", frames=None, datagram=None):
    return Packet(at, n if datagram is None else datagram, space, n, size,
                  tuple(frames if frames is not None else [Frame("stream", SID, (n - 1) * 1000, 1000)]))


def flight_of(n, start=0.01, step=0.001, first_number=1):
    return [pkt(start + i * step, first_number + i) for i in range(n)]


def test_the_ack_eliciting_1rtt_bytes_before_the_retransmission_are_the_window():
    ps = flight_of(10) + [pkt(0.5, 11, frames=[Frame("stream", SID, 0, 1000)])]  # resends offset 0
    fl = first_flight(ps, request_at=0.0, gap=MIN_PROBE_GAP, response_stream=SID)
    assert (fl.bytes, fl.packets, fl.lower_bound) == (12000, 10, False)
    assert fl.why.startswith("retransmission") and fl.pto_ms == pytest.approx(481.0)  # 0.5 s − the last packet at 19 ms


def test_handshake_packets_and_acks_do_not_count_but_half_rtt_data_does():
    ps = [pkt(0.001, 0, 1000, "initial", [Frame("crypto", None, 0, 90), Frame("ack")], datagram=0),
          pkt(0.001, 0, 200, "handshake", [Frame("crypto", None, 0, 150)], datagram=0),
          pkt(0.002, 1, 300, frames=[Frame("stream", 3, 0, 20)], datagram=1),  # 0.5-RTT: SETTINGS
          pkt(0.011, 2, 50, frames=[Frame("ack")]),  # ACK of the request: not ack-eliciting
          pkt(0.012, 3, 1200, frames=[Frame("handshake_done"), Frame("stream", SID, 0, 1100)]),
          pkt(0.013, 4, 1200, frames=[Frame("stream", SID, 1100, 1150)]),
          pkt(0.5, 5, 1200, frames=[Frame("handshake_done")])]
    fl = first_flight(ps, request_at=0.01, gap=MIN_PROBE_GAP, response_stream=SID)
    assert (fl.bytes, fl.packets, fl.half_rtt_bytes, fl.response_bytes) == (2700, 3, 300, 2250)
    assert fl.max_datagram_size == 1200 and not fl.lower_bound


def test_a_probe_with_new_data_after_a_silence_ends_the_flight():
    ps = flight_of(8) + [pkt(0.4, 9)]  # offset 8000: new data, 383 ms after the flight
    fl = first_flight(ps, 0.0, MIN_PROBE_GAP, SID)
    assert (fl.packets, fl.bytes) == (8, 9600) and fl.why.startswith("probe after 383.0 ms")


def test_pacing_gaps_do_not_end_the_flight_but_twice_the_widest_does():
    # a paced first flight: bursts of 5 packets 60 ms apart
    ps, t = [], 0.01
    for burst in range(4):
        for i in range(5):
            ps.append(pkt(t + i * 0.0001, len(ps) + 1))
        t += 0.06
    ps.append(pkt(ps[-1].at + 0.11, len(ps) + 1))  # 110 ms: over the floor, under 2 × 60 ms
    ps.append(pkt(ps[-1].at + 0.25, len(ps) + 1))  # 250 ms: the PTO
    fl = first_flight(ps, 0.0, MIN_PROBE_GAP, SID)
    assert fl.packets == 21 and not fl.lower_bound


def test_a_pause_followed_by_more_of_the_flight_is_not_a_probe():
    # the sender was descheduled for 150 ms, then sent five more: a PTO sends at most two
    ps = (flight_of(5) + flight_of(5, start=0.164, first_number=6)
          + [pkt(0.6, 11, frames=[Frame("stream", SID, 0, 1000)])])
    fl = first_flight(ps, 0.0, MIN_PROBE_GAP, SID)
    assert (fl.packets, fl.bytes) == (10, 12000) and fl.why.startswith("retransmission")


def test_a_lone_packet_after_a_silence_waits_for_the_threshold_before_it_is_a_probe():
    ps = flight_of(5) + [pkt(0.3, 6)]
    fl = first_flight(ps, 0.0, MIN_PROBE_GAP, SID, now=0.35)
    assert fl.ended_at is None and fl.pending_until == pytest.approx(0.4) and fl.packets == 5
    fl = first_flight(ps, 0.0, MIN_PROBE_GAP, SID, now=0.41)
    assert fl.ended_at == 0.3 and fl.packets == 5 and fl.why.startswith("probe after 286.0 ms")


def test_the_wait_for_the_response_is_not_a_pto():
    ps = [pkt(0.002, 1, 300, frames=[Frame("stream", 3, 0, 20)])] + flight_of(5, start=0.3, first_number=2)
    fl = first_flight(ps, request_at=0.05, gap=MIN_PROBE_GAP, response_stream=SID)
    assert fl.packets == 6 and fl.lower_bound and fl.why.startswith("no retransmission")


def test_a_duplicated_datagram_is_neither_counted_nor_a_retransmission():
    ps = flight_of(3) + [pkt(0.0125, 2)] + flight_of(2, start=0.013, first_number=4)
    fl = first_flight(ps, 0.0, MIN_PROBE_GAP, SID)
    assert fl.packets == 5 and fl.lower_bound


def test_a_response_that_ends_in_the_window_is_a_lower_bound():
    ps = flight_of(3)[:-1] + [pkt(0.013, 3, frames=[Frame("stream", SID, 2000, 500, fin=True)]),
                              pkt(0.4, 4, frames=[Frame("stream", SID, 2000, 500, fin=True)])]
    fl = first_flight(ps, 0.0, MIN_PROBE_GAP, SID)
    assert fl.lower_bound and fl.why.startswith("the whole response") and fl.packets == 3


def test_the_gap_threshold_is_at_least_the_floor_and_above_the_network_share_of_a_pto():
    assert gap_for(0.001, 0.025) == MIN_PROBE_GAP
    assert gap_for(0.2, 0.025) == pytest.approx(0.2 + 0.0005 + 0.0125)


@pytest.mark.parametrize("client, server, complete, expected", [
    (1200, 3600, False, True),  # stopped at 3 × 1200 with the handshake unfinished
    (1200, 2400, False, True),  # within one datagram of the limit
    (1200, 1500, False, False),  # stalled well below it (loss, not the limit)
    (1200, 3600, True, False),  # the whole handshake fit
    (2400, 3600, False, False),  # a larger client flight allows 7 200
])
def test_amplification_limited_means_stopped_at_three_times_the_client_bytes(client, server, complete, expected):
    assert limited(client, server, complete) is expected
    assert Handshake(client, server, 3, complete).amplification_limited is expected


def test_recorded_flight_of_a_12000_byte_window():
    """A real run against tests/quic_server.py with IW 12 000 B (make it again with
    `python tests/test_probe_quic.py record TARGET`)."""
    rec = json.loads(RECORDED.read_text())
    ps = [Packet.from_dict(d) for d in rec["packets"]]
    fl = first_flight(ps, rec["request_at"], rec["gap"], rec["response_stream"])
    assert 12000 - 1200 < fl.bytes <= 12000 and not fl.lower_bound
    assert any(p.space == "handshake" for p in ps) and fl.half_rtt_bytes > 0


# ---------------------------------------------------------------- datagrams and targets

def _long(kind: int, payload: bytes) -> bytes:  # a long-header packet: type bits, version 1, CIDs
    return (bytes([0xC0 | kind << 4]) + (1).to_bytes(4, "big") + b"\x08" + b"D" * 8 + b"\x08" + b"S" * 8
            + (b"\x00" if kind == 0 else b"") + (0x4000 | len(payload)).to_bytes(2, "big") + payload)


def test_split_keeps_coalesced_long_header_packets_apart_from_the_1rtt_packet():
    initial, handshake, short = _long(0, b"i" * 100), _long(2, b"h" * 300), b"\x40" + b"D" * 8 + b"x" * 50
    assert split(initial + handshake + short) == (initial + handshake, short)
    assert split(short) == (b"", short)
    assert split(initial + b"\x00" * 200) == (initial, b"")  # padding after the packets: no packet


@pytest.mark.parametrize("text, host, port, path", [
    ("192.0.2.1", "192.0.2.1", 443, "/"),
    ("192.0.2.1:4433", "192.0.2.1", 4433, "/"),
    ("[2001:db8::1]:8443", "2001:db8::1", 8443, "/"),
    ("2001:db8::1", "2001:db8::1", 443, "/"),
    ("https://example.test/big.bin", "example.test", 443, "/big.bin"),
    ("example.test", "example.test", 443, "/"),
])
def test_quic_targets(text, host, port, path):
    t = parse_quic_target(text)
    assert (t.host, t.port, t.path, t.scheme) == (host, port, path, "quic")


@pytest.mark.parametrize("text, path, needle", [
    ("http://example.test/", "/", "scheme 'http'"),
    ("192.0.2.1:70000", "/", "port = '70000'"),
    ("", "/", "empty"),
    ("192.0.2.1", "big.bin", "--path = 'big.bin'"),
])
def test_bad_quic_targets_name_the_value(text, path, needle):
    with pytest.raises(ProbeInputError, match=needle.replace("(", r"\(")):
        parse_quic_target(text, path)


@pytest.mark.parametrize("args, needle", [
    (["--quic", "192.0.2.1:443", "--mss", "536"], "--mss with --quic"),
    (["--quic", "192.0.2.1:443", "--expect", "10"], "--expect with --quic"),
    (["--quic", "ftp://x/"], "scheme 'ftp' with --quic"),
    (["--quic", "192.0.2.1", "--path", "big.bin"], "--path = 'big.bin'"),
    (["192.0.2.1:80", "--path", "/x"], "--path = '/x' without --quic"),
])
def test_bad_cli_input_exits_2_with_one_line_and_no_traffic(args, needle):
    iwlab = Path(sys.executable).with_name("iwlab")
    r = subprocess.run([str(iwlab), "probe", *args], capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and needle in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr


# ---------------------------------------------------------------- the client sends no ACK frame

def test_the_client_sends_no_ack_frame_through_the_handshake():
    """aioquic writes an ACK frame whenever a space's `ack_at` is set; the probe clears it before
    every send. Checked against an aioquic server in memory: it never receives an ACK frame, yet
    the handshake completes."""
    from aioquic.h3.connection import H3_ALPN
    from aioquic.quic.configuration import QuicConfiguration
    from aioquic.quic.connection import QuicConnection
    from aioquic.quic.events import HandshakeCompleted
    import ssl

    from iwlab.probe.quic import _no_acks, _Recorder
    from quic_server import certificate

    from aioquic.buffer import Buffer
    from aioquic.quic.packet import pull_quic_header

    cert, key = certificate(1)
    rec = _Recorder()
    client = QuicConnection(configuration=QuicConfiguration(is_client=True, alpn_protocols=H3_ALPN,
                                                            verify_mode=ssl.CERT_NONE))
    now, caddr, saddr = 1.0, ("10.0.0.2", 4000), ("10.0.0.1", 443)
    client.connect(saddr, now=now)
    first = client.datagrams_to_send(now=now)
    odcid = pull_quic_header(Buffer(data=first[0][0]), host_cid_length=8).destination_cid
    server = QuicConnection(configuration=QuicConfiguration(
        is_client=False, alpn_protocols=H3_ALPN, certificate=cert, private_key=key, quic_logger=rec.logger),
        original_destination_connection_id=odcid)
    for data, _ in first:
        server.receive_datagram(data, caddr, now=now)
    done = False
    for _ in range(6):
        for data, _ in server.datagrams_to_send(now=now):
            client.receive_datagram(data, saddr, now=now)
        while (ev := client.next_event()) is not None:
            done = done or isinstance(ev, HandshakeCompleted)
        now += 0.01
        _no_acks(client)
        for data, _ in client.datagrams_to_send(now=now):
            server.receive_datagram(data, caddr, now=now)
    received = [f["frame_type"] for ev, d in rec.events if ev == "packet_received" for f in d["frames"]]
    assert done and "crypto" in received and "ack" not in received


def test_on_loopback_without_privileges():
    """No root, no namespace: an ordinary UDP socket is all the probe needs."""
    import socket

    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    p = subprocess.Popen([sys.executable, str(HERE / "quic_server.py"), str(port), "15360", "--host", "127.0.0.1"],
                         stdout=subprocess.PIPE, text=True)
    try:
        assert p.stdout.readline().strip() == "ready"
        from iwlab.probe.quic import probe_quic

        r = probe_quic(f"127.0.0.1:{port}")
        assert 15360 - 1200 < r.initial_window_bytes <= 15360 and not r.lower_bound, r.line()
    finally:
        p.kill()
        p.wait(timeout=10)
        p.stdout.close()


# ---------------------------------------------------------------- real servers in namespaces

PID = os.getpid()
S, C = f"hq-{PID}s", f"hq-{PID}c"
NET, NET6 = "10.95.7", "fd95:7::"
SERVER = f"{NET}.1"
SERVERS = {  # port: (IW bytes, extra arguments)
    4431: (12000, []),  # 10 × 1200 (RFC 9002 §7.2 at 1200 B)
    4432: (38400, []),  # 32 × 1200
    4433: (15360, []),  # picoquic's 10 × 1536
    # a 14.9 kB certificate (540 names; aioquic holds a server's handshake messages in 16 384 B,
    # CRYPTO_BUFFER_SIZE): the handshake flight exceeds 3 × 1200 B, and in 4436 also the window
    4434: (38400, ["--names", "540"]),
    4436: (12000, ["--names", "540"]),
    4435: (12000, ["--size", "3000"]),  # a response smaller than the window
    4437: ("default", []),  # aioquic as it comes
    4438: (38400, ["--retry"]),  # validates addresses with a Retry (RFC 9000 §8.1.2)
}
GO_SERVER = HERE / "quic_go_server"  # quic-go's HTTP/3 server with its defaults (main.go)
GO_PORT = 4440


def _run(*cmd, check=True, timeout=60):
    r = subprocess.run(list(cmd), capture_output=True, text=True, timeout=timeout)
    if check and r.returncode:
        raise AssertionError(f"{' '.join(cmd)}: {r.stderr}")
    return r


@pytest.fixture(scope="module")
def lab(module_namespace):
    from netns_common import veth_pair

    procs = []
    try:
        veth_pair(module_namespace, S, C, "q0", "q1", NET, NET6)
        for port, (iw, extra) in SERVERS.items():
            p = subprocess.Popen(["ip", "netns", "exec", S, sys.executable, str(HERE / "quic_server.py"), str(port),
                                  str(iw), *extra], stdout=subprocess.PIPE, text=True)
            procs.append(p)
        for p in procs:
            assert p.stdout.readline().strip() == "ready"
        yield {"procs": procs}
    finally:
        for p in procs:
            p.kill()
            p.wait(timeout=10)
            p.stdout.close()  # the namespaces go with module_namespace


@pytest.fixture(scope="module")
def go_server(lab):
    """tests/quic_go_server built with `go` (modules from its go.sum; 1–4 min the first time, then
    Go's build cache) and started in the server namespace; skips without a Go toolchain."""
    import shutil

    if shutil.which("go") is None:
        pytest.skip("needs a Go toolchain (tests/quic_go_server)")
    out = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "iwlab" / "quic_go_server"
    _run("go", "build", "-C", str(GO_SERVER), "-o", str(out), ".", timeout=840)
    p = subprocess.Popen(["ip", "netns", "exec", S, str(out), f"0.0.0.0:{GO_PORT}"], stdout=subprocess.PIPE,
                         text=True)
    lab["procs"].append(p)  # stopped with the others
    assert p.stdout.readline().strip() == "ready"
    yield GO_PORT


def probe_from_client(port: int, server: str = SERVER, **kw):
    from iwlab.probe.quic import probe_quic

    return probe_quic(f"{server}:{port}", netns=C, **kw)


@pytest.mark.netns
@pytest.mark.parametrize("port", [4431, 4432, 4433])
def test_the_probe_is_exact_to_one_datagram(lab, port):
    iw = SERVERS[port][0]
    r = probe_from_client(port)
    assert not r.lower_bound, r.why
    assert iw - r.max_datagram_size < r.initial_window_bytes <= iw, r.line()
    assert r.max_datagram_size == 1200 and r.http_status == 200


def _matches_profile(stack: str, port: int):
    from iwlab.quic.profiles import load

    iw = load()[stack].iw_bytes
    r = probe_from_client(port)
    assert not r.lower_bound and abs(r.initial_window_bytes - iw) < r.max_datagram_size, r.line()
    return r


@pytest.mark.netns
def test_aioquic_as_it_comes_starts_at_its_profiled_window(lab):
    """profiles.toml against the wire: the window read in the stack's source is what its server
    sends, to one datagram."""
    r = _matches_profile("aioquic", 4437)
    assert r.initial_window_bytes <= 12000  # it sends a packet only while it fits


@pytest.mark.netns
@pytest.mark.slow
@pytest.mark.timeout(900)
def test_quic_go_as_it_comes_starts_at_its_profiled_window(go_server):
    """quic-go sends while bytes in flight are below the window (CanSend in
    internal/congestion/cubic_sender.go), so its last datagram may overshoot 32 × 1280 B."""
    _matches_profile("quic-go", go_server)


@pytest.mark.netns
def test_ipv6(lab):
    r = probe_from_client(4432, f"[{NET6}1]")
    assert r.address == f"{NET6}1" and 38400 - 1200 < r.initial_window_bytes <= 38400, r.line()


@pytest.mark.netns
def test_a_15kB_certificate_makes_the_handshake_amplification_limited(lab):
    r = probe_from_client(4434)
    assert r.amplification_limited and not r.handshake["complete"], r.line()
    assert 2400 <= r.handshake["server_bytes"] <= 3 * r.handshake["client_bytes"]
    assert 38400 - 1200 < r.initial_window_bytes <= 38400  # the window is still measured exactly
    assert r.handshake["acked_bytes"] == 0


@pytest.mark.netns
def test_a_handshake_larger_than_the_window_is_acknowledged_and_reported(lab):
    """15 kB of handshake cannot leave a 12 000-byte window unacknowledged: the client acknowledges
    it, and aioquic's NewReno grows its window by the bytes acknowledged (RFC 9002 §7.3.1)."""
    r = probe_from_client(4436)
    acked = r.handshake["acked_bytes"]
    assert r.amplification_limited and acked > 12000 - 3 * 1200
    assert 12000 - 1200 < r.initial_window_bytes <= 12000 + acked, r.line()


@pytest.mark.netns
def test_a_small_certificate_is_not_amplification_limited(lab):
    r = probe_from_client(4431)
    assert not r.amplification_limited and r.handshake["complete"]
    assert r.handshake["server_bytes"] < 3 * r.handshake["client_bytes"]


@pytest.mark.netns
def test_a_retry_first_is_reported_and_the_window_still_measured(lab):
    r = probe_from_client(4438)
    assert r.handshake["retry"] and not r.amplification_limited, r.line()
    assert 38400 - 1200 < r.initial_window_bytes <= 38400


@pytest.mark.netns
def test_a_response_smaller_than_the_window_is_a_lower_bound(lab):
    r = probe_from_client(4435)
    assert r.lower_bound and r.why.startswith("the whole response") and r.initial_window_bytes < 12000


@pytest.mark.netns
def test_the_cli_prints_json_with_the_measured_keys(lab):
    iwlab = Path(sys.executable).with_name("iwlab")
    r = _run(str(iwlab), "probe", "--quic", f"{SERVER}:4431", "--netns", C, "--json")
    [out] = json.loads(r.stdout)
    for key in ("initial_window_bytes", "packets", "max_datagram_size", "amplification_limited",
                "transport_parameters", "pto_ms", "handshake"):
        assert key in out
    assert out["transport_parameters"]["max_ack_delay"] == 25 and out["packets"] >= 10


@pytest.mark.netns
def test_failures_are_one_line_with_exit_1_and_bad_input_exit_2(lab):
    iwlab = Path(sys.executable).with_name("iwlab")
    closed = _run(str(iwlab), "probe", "--quic", f"{SERVER}:4499", "--netns", C, "--timeout", "1", check=False)
    assert closed.returncode == 1 and len(closed.stderr.strip().splitlines()) == 1
    assert "port unreachable" in closed.stderr or "no answer" in closed.stderr
    bad = _run(str(iwlab), "probe", "--quic", f"{SERVER}:4431", "--netns", "hq-no-such-ns", check=False)
    assert bad.returncode == 2 and "no such network namespace" in bad.stderr, bad.stderr


def _record(target: str, netns: str | None) -> None:
    from iwlab.probe.quic import probe_quic

    r = probe_quic(target, netns=netns)
    RECORDED.write_text(json.dumps(r.recording, indent=1) + "\n")
    print(r.line())


if __name__ == "__main__" and sys.argv[1:2] == ["record"]:
    _record(sys.argv[2], sys.argv[3] if len(sys.argv) > 3 else None)

"""The prober's pure parts (python/iwlab/probe/): targets, segments, the end of a flight, the
segment/byte classification, the rate limit. The namespace tests are tests/test_probe_netns.py."""

from __future__ import annotations

import ipaddress
import struct
import threading
import time
from types import SimpleNamespace

import pytest

from iwlab.probe import ProbeInputError, classify, parse_target
from iwlab.probe import packet
from iwlab.probe.client import _http_complete, _tls_flight_done
from iwlab.probe.many import RateLimit
from iwlab.probe.request import client_hello, http_get


@pytest.mark.parametrize("text, scheme, host, port, path", [
    ("http://example.org/big.bin", "http", "example.org", 80, "/big.bin"),
    ("https://example.org", "https", "example.org", 443, "/"),
    ("http://10.0.0.1:8080/a?b=1", "http", "10.0.0.1", 8080, "/a?b=1"),
    ("http://[2001:db8::1]:8000/x", "http", "2001:db8::1", 8000, "/x"),
    ("10.0.0.1:443", "tcp", "10.0.0.1", 443, "/"),
    ("[2001:db8::1]:80", "tcp", "2001:db8::1", 80, "/"),
])
def test_targets_parse(text, scheme, host, port, path):
    t = parse_target(text)
    assert (t.scheme, t.host, t.port, t.path) == (scheme, host, port, path)


@pytest.mark.parametrize("text, says", [
    ("ftp://x/", "scheme 'ftp'"), ("http://x:0/", "port"), ("http://x:99999/", "port = '99999'"),
    ("x", "no port"), ("2001:db8::1:80", "no port"), ("[2001:db8::1]", "IPv6 needs [ADDR]:PORT"),
    ("http:///path", "no host"), ("x:http", "port = 'http'"), ("", "empty"),
])
def test_bad_targets_name_the_value_and_what_is_allowed(text, says):
    with pytest.raises(ProbeInputError, match="allowed") as e:
        parse_target(text)
    assert says in str(e.value)


def test_a_segment_carries_a_valid_checksum_and_parses_back():
    for src, dst in (("10.0.0.1", "10.0.0.2"), ("2001:db8::1", "2001:db8::2")):
        seg = packet.build(src, dst, 40000, 80, 7, 9, packet.SYN, 65535, packet.syn_options(1460, 7), b"hi")
        assert packet.checksum(packet.pseudo_header(src, dst, len(seg)) + seg) == 0
        p = packet.parse(seg)
        assert (p.sport, p.dport, p.seq, p.ack, p.flags, p.mss, p.payload) == (40000, 80, 7, 9, packet.SYN, 1460, b"hi")


def test_the_syn_offers_neither_sack_nor_timestamps():
    """A Linux sender's tail loss probe needs SACK; it would add a segment before the RTO."""
    opts = packet.syn_options(536, 7)
    kinds, i = [], 0
    while i < len(opts):
        kinds.append(opts[i])
        i += 1 if opts[i] == 1 else opts[i + 1]
    assert 4 not in kinds and 8 not in kinds and 2 in kinds and 3 in kinds


def test_ipv4_payload_skips_the_header():
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 24, 0, 0, 64, 6, 0, ipaddress.IPv4Address("10.1.2.3").packed,
                     ipaddress.IPv4Address("10.1.2.4").packed)
    assert packet.ipv4_payload(ip + b"abcd") == ("10.1.2.3", b"abcd")
    assert packet.ipv4_payload(ip[:9] + b"\x11" + ip[10:] + b"abcd") is None  # UDP


def test_http_completeness_comes_from_content_length():
    head = b"HTTP/1.0 200 OK\r\nContent-Length: 10\r\n\r\n"
    assert _http_complete(head + b"0123456789", len(head) + 10) is True
    assert _http_complete(head + b"01234", len(head) + 5) is False
    assert _http_complete(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n", 60) is None
    assert _http_complete(b"\x16\x03\x03", 3) is None


def test_a_tls_flight_is_done_at_a_record_boundary():
    rec = b"\x16\x03\x03\x00\x04abcd"
    assert _tls_flight_done(rec + rec) is True
    assert _tls_flight_done(rec + rec[:6]) is False
    assert _tls_flight_done(b"HTTP/1.1 200") is None


def test_the_client_hello_carries_the_sni():
    hello = client_hello(parse_target("https://probe.example:8443/"))
    assert hello[0] == 22 and b"probe.example" in hello  # a handshake record with server_name
    assert b"10.0.0.1" not in client_hello(parse_target("https://10.0.0.1/"))  # no SNI for an address
    assert http_get(parse_target("http://[2001:db8::1]:8000/x")).startswith(
        b"GET /x HTTP/1.1\r\nHost: [2001:db8::1]:8000\r\n")


def run(segments, nbytes, size, lower=False):
    return SimpleNamespace(segments=segments, bytes=nbytes, segment_size=size, lower_bound=lower)


@pytest.mark.parametrize("runs, kind", [
    ([run(10, 5360, 536), run(10, 14600, 1460)], "segments"),
    ([run(27, 14472, 536), run(10, 14600, 1460)], "bytes"),
    ([run(20, 10720, 536), run(10, 14600, 1460)], "unclear"),
    ([run(10, 5360, 536), run(4, 5840, 1460, lower=True)], None),
    ([run(10, 14600, 1460)], None),
])
def test_two_segment_sizes_tell_a_segment_based_from_a_byte_based_iw(runs, kind):
    assert classify(runs) == kind


def test_the_rate_limit_spaces_connections():
    limit, stop, times = RateLimit(50.0), threading.Event(), []
    for _ in range(6):
        limit.wait(stop)
        times.append(time.monotonic())
    # the k-th start is no earlier than k gaps after the first (each may be late, none early)
    assert all(t - times[0] >= k * 0.02 - 1e-3 for k, t in enumerate(times))


class ScriptedConn:
    """Hands `_first_flight` the server's segments of a script: (time, offset, payload, flags)."""

    def __init__(self, irs, script):
        self.irs, self.script, self.src = irs, list(script), "10.0.0.2"

    def recv(self, until, stop):
        if not self.script:
            return None
        t, off, data, flags = self.script.pop(0)
        return t, packet.Segment(80, 40000, (self.irs + 1 + off) & 0xFFFFFFFF, 0, packet.ACK | flags, 0, None, data)


def flight(script, target="http://10.0.0.1/big.bin", size=1000, irs=0xFFFFFF00):
    from iwlab.probe.client import _first_flight

    return _first_flight(ScriptedConn(irs, script), parse_target(target), "10.0.0.1", size, size, size, irs,
                         0.0, 3.0, None)


HEAD = b"HTTP/1.0 200 OK\r\nContent-Length: 100000\r\n\r\n"


def seg(i, size=1000):
    return (0.001 * i, i * size, bytes(size), 0)


def test_data_up_to_the_first_retransmission_is_the_window():
    r = flight([seg(0), seg(1), seg(2), (0.201, 0, bytes(1000), 0)])  # the sequence number wraps, too
    assert (r.segments, r.bytes, r.lower_bound, r.why, r.rto_ms) == (3, 3000, False, "retransmission", 201.0)


def test_a_segment_that_fills_a_reordering_hole_is_not_a_retransmission():
    r = flight([seg(1), seg(0), seg(2), (0.2, 1000, bytes(1000), 0)])
    assert (r.segments, r.lower_bound) == (3, False)


def test_an_aggregate_of_n_full_segments_counts_n():
    r = flight([(0.0, 0, bytes(4000), 0), (0.001, 4000, bytes(1000), 0), (0.2, 0, bytes(1000), 0)])
    assert (r.segments, r.bytes) == (5, 5000)


def test_a_response_that_ends_inside_the_window_is_a_lower_bound():
    small = b"HTTP/1.0 200 OK\r\nContent-Length: 10\r\n\r\n0123456789"
    r = flight([(0.0, 0, small, 0), (0.2, 0, small, 0)])
    assert r.lower_bound and r.why.startswith("the whole response")
    r = flight([(0.0, 0, HEAD + bytes(1000 - len(HEAD)), 0), (0.001, 1000, bytes(500), packet.FIN)])
    assert (r.segments, r.lower_bound, r.why) == (2, True, "the server closed (FIN)")
    # a full window of a long response: exact, although the last segment is full only by chance
    r = flight([(0.0, 0, HEAD + bytes(1000 - len(HEAD)), 0), seg(1), (0.2, 0, HEAD, 0)])
    assert (r.segments, r.lower_bound) == (2, False)

"""`iwlab trace --keylog`: the engine's QUIC runs as pcaps Wireshark decrypts. The key log has
each connection's TLS 1.3 secrets (SSLKEYLOGFILE format), the pcap the datagrams as sent; tshark
(when installed: `make deps-tools`) decrypts every connection's 1-RTT STREAM frames with them.
Without `--keylog` nothing changes: the pcap's QUIC payloads are zeros and runs are bit-identical;
with it, one seed gives byte-identical pcaps and key logs (the key shares come from the seed too).
"""

from __future__ import annotations

import shutil
import struct
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

import iwlab
from iwlab.scenario import Scenario

SCENARIO = """
name = "quic-keys"
duration = "3s"
[topology]
kind = "dumbbell"
bottleneck = { rate = "100Mbps", delay = "48ms", queue = { kind = "drop-tail", limit = "500pkt" } }
left = [{ name = "clients", count = 2, access = { rate = "1Gbps", delay = "1ms" } }]
right = [{ name = "servers", count = 2, access = { rate = "1Gbps", delay = "1ms" } }]
[iw]
default = "iw10"
policies.iw10 = { kind = "fixed", segments = 10 }
[quic]
certificate_chain = "1kB"
[[apps]]
kind = "short-flows"
clients = "clients"
servers = "servers"
count = 2
response = "20kB"
arrivals = { kind = "periodic", period = "500ms" }
flows = 2
transport = "quic"
"""
LABELS = ["CLIENT_HANDSHAKE_TRAFFIC_SECRET", "CLIENT_TRAFFIC_SECRET_0", "EXPORTER_SECRET",
          "SERVER_HANDSHAKE_TRAFFIC_SECRET", "SERVER_TRAFFIC_SECRET_0"]


def udp_payloads(pcap: Path) -> list[tuple[int, int, bytes]]:
    """(source port, destination port, payload) of every UDP frame of a classic pcap."""
    b = pcap.read_bytes()
    assert struct.unpack_from("<I", b, 0)[0] == 0xa1b23c4d
    out, at = [], 24
    while at < len(b):
        incl = struct.unpack_from("<I", b, at + 8)[0]
        frame = b[at + 16:at + 16 + incl]
        if frame[23] == 17:  # IPv4 protocol UDP
            sport, dport = struct.unpack_from("!HH", frame, 34)
            out.append((sport, dport, frame[42:]))
        at += 16 + incl
    return out


def scenario() -> Scenario:
    return Scenario.from_toml(SCENARIO, "<test>")


def test_the_key_log_has_five_secrets_for_each_connection(tmp_path):
    r = iwlab.run(scenario(), pcap=tmp_path / "q.pcap", keylog=tmp_path / "keys.log")
    lines = (tmp_path / "keys.log").read_text().splitlines()
    per_conn = Counter(line.split()[1] for line in lines)
    assert len(per_conn) == len(r.flows) == 4 and set(per_conn.values()) == {5}
    for random in per_conn:
        assert sorted(x.split()[0] for x in lines if x.split()[1] == random) == LABELS
    quic = udp_payloads(tmp_path / "q.pcap")
    assert quic and all(443 in (s, d) for s, d, _ in quic)
    initials = [p for s, d, p in quic if d == 443 and p[0] & 0xF0 == 0xC0 and p[1:5] == b"\0\0\0\1"]
    assert len(initials) >= 4 and {len(p) for p in initials} == {1200}


def test_without_a_key_log_the_pcap_and_the_records_are_as_before(tmp_path):
    a = iwlab.run(scenario(), pcap=tmp_path / "a.pcap")
    b = iwlab.run(scenario(), pcap=tmp_path / "b.pcap")
    k = iwlab.run(scenario(), pcap=tmp_path / "k.pcap", keylog=tmp_path / "keys.log")
    assert (tmp_path / "a.pcap").read_bytes() == (tmp_path / "b.pcap").read_bytes()
    assert all(not any(p) for _, _, p in udp_payloads(tmp_path / "a.pcap")), "zeros: nothing random in it"
    assert a.flows.equals(b.flows) and a.flows.equals(k.flows)


def test_one_seed_gives_byte_identical_pcaps_and_key_logs_in_this_process_and_another(tmp_path):
    for name in ("a", "b"):
        iwlab.run(scenario(), pcap=tmp_path / f"{name}.pcap", keylog=tmp_path / f"{name}.log")
    p = cli("trace", _write(tmp_path), "--pcap", tmp_path / "c.pcap", "--keylog", tmp_path / "c.log")
    assert p.returncode == 0, p.stderr
    for ext in ("pcap", "log"):
        a = (tmp_path / f"a.{ext}").read_bytes()
        assert a == (tmp_path / f"b.{ext}").read_bytes() == (tmp_path / f"c.{ext}").read_bytes(), ext
    assert any(any(p) for _, _, p in udp_payloads(tmp_path / "a.pcap")), "the datagrams' own bytes"
    # The bytes follow the seed: another seed, other key shares, randoms and secrets.
    iwlab.run(scenario(), seed=2, pcap=tmp_path / "d.pcap", keylog=tmp_path / "d.log")
    a, d = udp_payloads(tmp_path / "a.pcap"), udp_payloads(tmp_path / "d.pcap")
    assert a[0][2] != d[0][2] and len(a[0][2]) == len(d[0][2]) == 1200, "the first Initials differ"
    assert set((tmp_path / "a.log").read_text().split()).isdisjoint(set((tmp_path / "d.log").read_text().split()) - set(LABELS))


def test_the_cli_writes_both_and_refuses_a_missing_folder(tmp_path):
    p = cli("trace", _write(tmp_path), "--pcap", tmp_path / "q.pcap", "--keylog", tmp_path / "keys.log")
    assert p.returncode == 0, p.stderr
    assert "wrote" in p.stdout and "(20 secrets)" in p.stdout
    p = cli("trace", _write(tmp_path), "--pcap", tmp_path / "q.pcap", "--keylog", tmp_path / "nowhere" / "keys.log")
    assert p.returncode == 2 and "Traceback" not in p.stderr
    assert "--keylog" in p.stderr and "does not exist" in p.stderr


def cli(*args) -> subprocess.CompletedProcess:
    iwlab_bin = Path(sys.executable).with_name("iwlab")
    return subprocess.run([str(iwlab_bin), *map(str, args)], capture_output=True, text=True, timeout=120)


def _write(tmp_path: Path) -> Path:
    p = tmp_path / "quic.toml"
    p.write_text(SCENARIO)
    return p


@pytest.mark.skipif(shutil.which("tshark") is None, reason="tshark is not installed (make deps-tools)")
def test_tshark_decrypts_every_connections_stream_frames_with_the_key_log(tmp_path):
    r = iwlab.run(scenario(), pcap=tmp_path / "q.pcap", keylog=tmp_path / "keys.log")
    out = subprocess.run(["tshark", "-r", str(tmp_path / "q.pcap"), "-o", f"tls.keylog_file:{tmp_path / 'keys.log'}",
                          "-Y", "quic.stream.stream_id", "-T", "fields", "-e", "udp.srcport", "-e", "udp.dstport",
                          "-e", "quic.stream.stream_id"], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    rows = [line.split("\t") for line in out.stdout.splitlines() if line.strip()]
    # 1-RTT STREAM frames of stream 0 (the request and the response) on every connection.
    clients = {r[0] if r[1] == "443" else r[1] for r in rows}
    assert len(clients) == len(r.flows) == 4
    assert all("0" in r[2].split(",") for r in rows)
    without = subprocess.run(["tshark", "-r", str(tmp_path / "q.pcap"), "-Y", "quic.stream.stream_id"],
                             capture_output=True, text=True, timeout=60)
    assert without.stdout.strip() == "", "no STREAM frame can be read without the keys"

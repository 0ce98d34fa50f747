"""The parts of `iwlab.deploy` that need no root: tcp_info and sock_diag decoding against the
kernel's uapi layout, the events a closed or live connection gives, the state file's checks,
and the shipped systemd unit. The kernel tests are tests/test_deploy_kernel.py and
tests/test_deploy_watch.py."""

from __future__ import annotations

import socket
import sqlite3
import struct
import subprocess
import sys
from pathlib import Path

import pytest

from iwlab.deploy import sockdiag, state, watch
from iwlab.deploy.sockdiag import TcpSock

IWLAB = Path(sys.executable).with_name("iwlab")


def _info(**fields: int) -> bytes:
    values = [fields.get(name, 0) for name in sockdiag._TCP_INFO_FIELDS]
    return sockdiag._TCP_INFO.pack(*values)


def test_tcp_info_offsets_are_the_kernels():
    """include/uapi/linux/tcp.h: offsets of the fields the watcher reads (struct tcp_info is
    248 bytes since Linux 6.7; an older, shorter one is zero-padded)."""
    expected = {"snd_mss": 16, "rtt": 68, "snd_cwnd": 80, "total_retrans": 100, "bytes_acked": 120,
                "min_rtt": 148, "data_segs_out": 156, "delivery_rate": 160, "bytes_sent": 200,
                "bytes_retrans": 208, "total_rto_time": 244}
    assert sockdiag._TCP_INFO.size == 248
    for name, offset in expected.items():
        raw = bytearray(248)
        raw[offset] = 0x5A  # little-endian low byte of that field
        assert sockdiag.parse_tcp_info(bytes(raw))[name] == 0x5A, name
    short = sockdiag.parse_tcp_info(_info(bytes_acked=7)[:192])  # a 4.19-era info: no bytes_sent
    assert short["bytes_acked"] == 7 and short["bytes_sent"] == 0


def test_a_sock_diag_message_with_tcp_info_decodes():
    info = _info(snd_mss=1448, snd_cwnd=3, total_retrans=2, bytes_acked=14001, bytes_sent=16896,
                 bytes_retrans=2896, data_segs_out=12, min_rtt=20500)
    msg = struct.pack("=BBBB HH 16s 16s I II IIIII", socket.AF_INET, 7, 0, 0, socket.htons(8080), socket.htons(40000),
                      socket.inet_aton("10.78.1.1") + bytes(12), socket.inet_aton("10.78.2.1") + bytes(12), 0,
                      0x1234, 0x1, 0, 0, 0, 0, 0)
    attr = struct.pack("=HH", 4 + len(info), sockdiag.INET_DIAG_INFO) + info
    body = msg + attr
    packet = struct.pack("=IHHII", 16 + len(body), sockdiag.SOCK_DIAG_BY_FAMILY, 2, 0, 0) + body
    done = struct.pack("=IHHII", 20, sockdiag.NLMSG_DONE, 2, 0, 0) + bytes(4)
    [s], finished = sockdiag.parse_messages(packet + done)
    assert finished
    assert (s.src, s.sport, s.dst, s.dport, s.cookie) == ("10.78.1.1", 8080, "10.78.2.1", 40000, 0x1_0000_1234)
    assert (s.snd_mss, s.snd_cwnd, s.total_retrans, s.bytes_sent, s.bytes_retrans, s.min_rtt_us) == \
        (1448, 3, 2, 16896, 2896, 20500)


def _sock(**kw) -> TcpSock:
    base = dict(cookie=1, family=socket.AF_INET, src="10.0.0.1", sport=80, dst="10.0.0.2", dport=5000, state=7,
                snd_mss=1448, rtt_us=20000, min_rtt_us=20000, snd_cwnd=10, total_retrans=0, bytes_acked=0,
                bytes_sent=0, bytes_retrans=0, data_segs_out=0, delivery_rate=0, has_info=True)
    return TcpSock(**(base | kw))


@pytest.mark.parametrize("sent, retrans_bytes, retrans, events", [
    # all 14 000 bytes fit in IW 10 × 1448 and something was retransmitted: loss in the IW
    (14_000 + 2896, 2896, 2, ["loss_in_initial_window", "closed"]),
    # 20 000 bytes > IW: a retransmission may be from a later window; the final info cannot tell
    (20_000 + 1448, 1448, 1, ["closed"]),
    # no retransmission: no evidence
    (14_000, 0, 0, ["closed"]),
])
def test_events_of_a_closed_connection(sent, retrans_bytes, retrans, events):
    s = _sock(bytes_sent=sent, bytes_retrans=retrans_bytes, total_retrans=retrans, snd_cwnd=5, bytes_acked=sent + 1)
    got = watch.events_for(s, 10, flagged=False)
    assert [e["kind"] for e in got] == events
    original = sent - retrans_bytes
    assert got[-1] == {"kind": "closed", "bytes_sent": original, "loss": retrans > 0, "cwnd": 5 * 1448,
                       "bytes_acked": original, "retrans": retrans}
    if len(got) == 2:
        assert got[0] == {"kind": "loss_in_initial_window", "bytes_sent": original}
    # a connection a poll already reported gives its IW loss only once
    assert [e["kind"] for e in watch.events_for(s, 10, flagged=True)] == ["closed"]


def test_early_evidence_from_a_live_connection():
    # retransmitted while the first flight (IW 10) is not yet acknowledged: evidence
    ev = watch.early_loss(_sock(bytes_sent=14_480 + 1448, bytes_retrans=1448, total_retrans=1, bytes_acked=5792), 10)
    assert ev == {"kind": "loss_in_initial_window", "bytes_sent": 14_480}
    # the first flight acknowledged before the retransmission was seen: no evidence
    assert watch.early_loss(_sock(bytes_sent=60_000, total_retrans=1, bytes_acked=30_000), 10) is None
    assert watch.early_loss(_sock(bytes_sent=5000, bytes_acked=0), 10) is None


def test_the_state_file_refuses_foreign_corrupt_and_newer_files(tmp_path):
    good = state.State(tmp_path / "s.sqlite")
    assert good.db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    gid = good.begin_generation(None, "apply", [{"key": "k", "prefix": "p", "old": None, "new": {"a": 1}}])
    assert [g["status"] for g in good.generations(None, ("pending",))] == ["pending"]
    good.finish_generation(gid, "applied", {"k": None})
    assert good.managed(None) == {"k": None} and good.edits(gid)[0]["new"] == {"a": 1}
    good.close()
    assert state.State(tmp_path / "s.sqlite").managed(None) == {"k": None}  # reopened, same data

    foreign = tmp_path / "foreign.sqlite"
    sqlite3.connect(foreign).execute("CREATE TABLE t (x)").connection.commit()
    with pytest.raises(state.StateError, match="another application"):
        state.State(foreign)
    newer = tmp_path / "newer.sqlite"
    state.State(newer).db.execute(f"PRAGMA user_version = {state.SCHEMA_VERSION + 1}")
    with pytest.raises(state.StateError, match=f"schema version {state.SCHEMA_VERSION + 1}"):
        state.State(newer)
    junk = tmp_path / "junk.sqlite"
    junk.write_bytes(b"\x00garbage" * 600)
    with pytest.raises(state.StateError, match="not a usable iwlab database"):
        state.State(junk)
    assert junk.read_bytes() == b"\x00garbage" * 600
    with pytest.raises(state.StateError, match="does not exist"):
        state.State(tmp_path / "none.sqlite", create=False)


def test_the_shipped_systemd_units_run_this_iwlab():
    for args, name in (([], "iwlab-watch.service"), (["--template"], "iwlab-watch@.service")):
        out = subprocess.run([str(IWLAB), "watch", "unit", *args], capture_output=True, text=True, check=True).stdout
        assert f"ExecStart={IWLAB} watch" in out and "@IWLAB@" not in out and "[Install]" in out, name
    assert "--netns %i" in out


def test_the_units_do_not_restart_on_bad_input():
    """Exit 2 (no policy applied, a bad file) cannot be fixed by a restart every 5 s."""
    for name in ("iwlab-watch.service", "iwlab-watch@.service"):
        text = (Path(watch.__file__).parent / name).read_text()
        assert "Restart=on-failure" in text and "RestartPreventExitStatus=2" in text, name

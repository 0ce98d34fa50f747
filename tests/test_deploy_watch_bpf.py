"""`iwlab watch --source bpf` end to end: IW-loss evidence from eBPF, at the retransmission
(marker `deploy`: root, namespaces, a cgroup of ours, iwlab-bpf built by `make bpf`).

The topology of tests/test_deploy_watch.py (server ─ router ─ tbf 8 Mbit/s with a 9 000-byte
queue ─ 10 ms delay line ─ client), whose `net` fixture this module reuses. The server is a
child process in a cgroup of ours (iwd<pid>ev), because the evidence program sees the
connections of the processes of the cgroup it is attached to. The first flight of IW 10 overflows
the bottleneck's queue; a 15 000-byte response (eleven segments, more than IW·MSS) is the case
the close-time rule of the poll source cannot judge, and a 200 000-byte one is long. The
evidence must come at the retransmission ("at the retransmission"), and a path whose queue
holds everything must give none. After each test, also a failing one: the watcher and its
`iwlab-bpf evidence` child are gone, no link of ours is attached to the cgroup, the cgroup is
removed, and nothing was pinned.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from iwlab.deploy import flow_iw
from netns_common import fetch, run
from test_deploy_watch import (IWLAB, NS_M, NS_S, POLICY, SERVER, DEV_M, Capture, _route_iw, _stop, net,  # noqa: F401
                               applied, nothing_left_behind, watched_fetch)

pytestmark = pytest.mark.deploy

PID = os.getpid()
CGROUP = f"iwd{PID}ev"
SERVE = """
import socket, sys
size = int(sys.argv[1])
s = socket.create_server((sys.argv[2], 0))
print(s.getsockname()[1], flush=True)
while True:
    c, _ = s.accept()
    with c:
        c.recv(16)
        c.sendall(b"x" * size)
"""


def _bpf_links(cg: Path) -> list:
    """Programs attached to the cgroup itself (bpftool's view, not through our own code)."""
    bpftool = "bpftool" if subprocess.run(["which", "bpftool"], capture_output=True).returncode == 0 else "/usr/sbin/bpftool"
    out = subprocess.run([bpftool, "-j", "cgroup", "show", str(cg)], capture_output=True, text=True)
    return json.loads(out.stdout.strip() or "[]") if out.returncode == 0 else []


@pytest.fixture
def cgroup():
    if not (flow_iw.CGROUP_ROOT / "cgroup.procs").exists():
        pytest.skip(f"no cgroup2 hierarchy at {flow_iw.CGROUP_ROOT}")
    try:
        flow_iw.binary()
    except flow_iw.FlowIwError as e:
        pytest.skip(str(e))
    cg = flow_iw.CGROUP_ROOT / CGROUP
    cg.mkdir()
    pins_before = set(os.listdir(flow_iw.BPFFS)) if flow_iw.BPFFS.is_dir() else set()
    try:
        yield cg
    finally:
        for pid in (cg / "cgroup.procs").read_text().split():
            try:
                os.kill(int(pid), 9)
            except ProcessLookupError:
                pass
        deadline = time.monotonic() + 10
        while (cg / "cgroup.procs").read_text().strip() and time.monotonic() < deadline:
            time.sleep(0.05)
        try:
            links = _bpf_links(cg)
        finally:
            cg.rmdir()
        pins_after = set(os.listdir(flow_iw.BPFFS)) if flow_iw.BPFFS.is_dir() else set()
        assert links == [], f"programs still attached to {cg}: {links}"
        assert pins_after <= pins_before, f"pinned: {pins_after - pins_before}"


class CgroupServer:
    """Answers every connection with `size` bytes; a process in the cgroup, in NS_S."""

    def __init__(self, cg: Path, size: int):
        def join():
            (cg / "cgroup.procs").write_text(str(os.getpid()))

        # into the cgroup first: `ip netns exec` remounts /sys, where the cgroup2 tree lives
        self.p = subprocess.Popen(["ip", "netns", "exec", NS_S, sys.executable, "-c", SERVE, str(size), SERVER],
                                  stdout=subprocess.PIPE, text=True, preexec_fn=join)
        self.port = int(self.p.stdout.readline())
        self.size = size

    def fetch(self) -> int:
        return fetch("iwd%dc" % PID, SERVER, self.port)

    def close(self) -> None:
        self.p.kill()
        self.p.wait(10)
        self.p.stdout.close()


def _watch_bpf(state: Path) -> subprocess.Popen:
    p = subprocess.Popen([str(IWLAB), "watch", "--netns", NS_S, "--state", str(state), "--source", "bpf",
                          "--cgroup", CGROUP], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    line = p.stdout.readline()
    assert "evidence from eBPF" in line, line + p.stderr.read()
    return p


def _iw_loss_at_retransmission(net, cgroup, tmp_path, size: int) -> tuple[str, list]:
    with applied(tmp_path) as state:
        watcher = _watch_bpf(state)
        server = CgroupServer(cgroup, size)
        cap = Capture(tmp_path / "server.pcap")
        try:
            assert server.fetch() == size
            deadline = time.monotonic() + 10
            while _route_iw() != 3 and time.monotonic() < deadline:
                time.sleep(0.05)
            assert _route_iw() == 3, "the watcher did not fall back"
        finally:
            wire = cap.stop()
            server.close()
            err = _stop(watcher)
        status = json.loads(run(str(IWLAB), "watch", "status", "--netns", NS_S, "--state", str(state),
                                "--json").stdout)
    [p] = status["prefixes"]
    assert (p["connections"], p["iw_loss_events"]) == (1, 1), p
    return err, wire


def test_iw_loss_on_a_15kB_response_is_seen_at_the_retransmission(net, cgroup, tmp_path):
    """Eleven segments: more than IW·MSS, so the close-time rule cannot tell; the program sees
    a segment of the first flight retransmitted."""
    err, wire = _iw_loss_at_retransmission(net, cgroup, tmp_path, 15_000)
    assert wire[0][0] == 10 and wire[0][1] > 0, wire  # ten segments at once, then retransmissions
    assert re.search(r"loss_in_initial_window \(at the retransmission\) from 10\.78\.2\.1 \(\d+ bytes sent, "
                     r"\d+ retransmissions\): IW 10 → 3 segments", err), err


def test_iw_loss_on_a_200kB_response_is_seen_at_the_retransmission(net, cgroup, tmp_path):
    err, wire = _iw_loss_at_retransmission(net, cgroup, tmp_path, 200_000)
    assert wire[0][0] == 10 and wire[0][1] > 0, wire
    m = re.search(r"loss_in_initial_window \(at the retransmission\) from 10\.78\.2\.1 \((\d+) bytes sent", err)
    assert m and 0 < int(m.group(1)) <= 10 * 1448, err


def test_a_path_that_loses_nothing_gives_no_evidence(net, cgroup, tmp_path):
    """A queue that holds every flight: five 200 kB responses, closed events only, IW stays 10."""
    policy, state = tmp_path / "policy.toml", tmp_path / "state.sqlite"
    policy.write_text(POLICY)
    run(str(IWLAB), "apply", str(policy), "--netns", NS_S, "--state", str(state))
    run("ip", "netns", "exec", NS_M, "tc", "qdisc", "change", "dev", DEV_M, "root", "tbf", "rate", "8mbit",
        "burst", "1600", "limit", "2000000")
    watcher = _watch_bpf(state)
    server = CgroupServer(cgroup, 200_000)
    cap = Capture(tmp_path / "server.pcap")
    try:
        assert [server.fetch() for _ in range(5)] == [200_000] * 5
        time.sleep(1.5)  # one flush of the watcher's counters
    finally:
        wire = cap.stop()
        server.close()
        err = _stop(watcher)
        run("ip", "netns", "exec", NS_M, "tc", "qdisc", "change", "dev", DEV_M, "root", "tbf", "rate", "8mbit",
            "burst", "1600", "limit", "9000")
    assert [r for _, r in wire] == [0] * 5, wire
    status = json.loads(run(str(IWLAB), "watch", "status", "--netns", NS_S, "--state", str(state), "--json").stdout)
    run(str(IWLAB), "rollback", "--netns", NS_S, "--state", str(state))
    [p] = status["prefixes"]
    assert (p["connections"], p["iw_loss_events"], p["iw"]) == (5, 0, 10), (p, err)
    assert "loss_in_initial_window" not in err


def test_the_evidence_child_dies_with_a_killed_watcher_and_detaches(net, cgroup, tmp_path):
    """kill -9 of the watcher: its iwlab-bpf child goes too (PR_SET_PDEATHSIG) and, holding the
    only reference to the link, takes the program off the cgroup."""
    policy, state = tmp_path / "policy.toml", tmp_path / "state.sqlite"
    policy.write_text(POLICY)
    run(str(IWLAB), "apply", str(policy), "--netns", NS_S, "--state", str(state))
    watcher = _watch_bpf(state)
    try:
        assert len(_bpf_links(cgroup)) == 1
    finally:
        watcher.kill()
        watcher.communicate(timeout=10)
    deadline = time.monotonic() + 10
    while _bpf_links(cgroup) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _bpf_links(cgroup) == []
    # auto without a cgroup: the poll source, and one log line saying why
    r = subprocess.run([str(IWLAB), "watch", "--netns", NS_S, "--state", str(state), "--duration", "0.5"],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and "evidence source: poll" in r.stderr and "no --cgroup" in r.stderr, r.stderr
    run(str(IWLAB), "rollback", "--netns", NS_S, "--state", str(state))


def test_source_bpf_without_a_cgroup_and_an_unknown_source_are_one_line_errors(tmp_path):
    r = subprocess.run([str(IWLAB), "watch", "--source", "bpf", "--state", str(tmp_path / "s")],
                       capture_output=True, text=True)
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "--cgroup" in r.stderr, r.stderr
    r = subprocess.run([str(IWLAB), "watch", "--source", "ebpf", "--state", str(tmp_path / "s")],
                       capture_output=True, text=True)
    assert r.returncode == 2 and "--source = 'ebpf': allowed bpf, poll or auto" in r.stderr, r.stderr


PAIR = """
import socket, sys, threading
fam = socket.AF_INET6 if ":" in sys.argv[1] else socket.AF_INET
s = socket.create_server((sys.argv[1], 0), family=fam)
def serve():
    c, _ = s.accept()
    c.recv(16)
    c.sendall(b"x" * 5000)
    c.close()
t = threading.Thread(target=serve)
t.start()
c = socket.create_connection((sys.argv[1], s.getsockname()[1]))
c.sendall(b"GET\\n")
while c.recv(65536):
    pass
print(c.getsockname()[1], s.getsockname()[1], flush=True)
c.close()
t.join()
"""


@pytest.mark.parametrize("addr", ["127.0.0.1", "::1"])
def test_the_program_reports_ipv4_and_ipv6_connections_byte_exact(cgroup, addr):
    """Both ends of a loopback connection in the cgroup: one close record each, with the
    addresses, ports and data in sequence space (the FIN not counted)."""
    from iwlab.deploy import evidence_bpf

    ev = evidence_bpf.BpfEvidence(CGROUP)
    try:
        p = subprocess.run([sys.executable, "-c", PAIR, addr], capture_output=True, text=True, timeout=30,
                           preexec_fn=lambda: (cgroup / "cgroup.procs").write_text(str(os.getpid())))
        client_port, server_port = map(int, p.stdout.split())
        closes, deadline = {}, time.monotonic() + 10
        while len(closes) < 2 and time.monotonic() < deadline:
            import select

            select.select([ev], [], [], 0.5)
            for what, s, _ in ev.read():
                if what == "closed":
                    closes[s.sport] = s
    finally:
        ev.close()
    assert set(closes) == {client_port, server_port}, closes
    server, client = closes[server_port], closes[client_port]
    assert (server.dst, server.dport, server.bytes_sent, server.bytes_acked) == (addr, client_port, 5000, 5000)
    assert (client.dst, client.dport, client.bytes_sent) == (addr, server_port, 4)
    assert server.family == (evidence_bpf.AF_INET6 if ":" in addr else evidence_bpf.AF_INET)
    assert server.total_retrans == 0


SERVE_IDLE = """
import socket, sys, time
first, pause, second = int(sys.argv[1]), float(sys.argv[2]), int(sys.argv[3])
s = socket.create_server((sys.argv[4], 0))
print(s.getsockname()[1], flush=True)
while True:
    c, _ = s.accept()
    with c:
        c.recv(16)
        c.sendall(b"x" * first)
        time.sleep(pause)
        c.sendall(b"y" * second)
        time.sleep(0.5)  # the burst is delivered (and retransmitted) before the close
"""


class IdleCgroupServer(CgroupServer):
    """Per connection: `first` bytes, a pause, `second` bytes; a process in the cgroup, in NS_S."""

    def __init__(self, cg: Path, first: int, pause: float, second: int):
        def join():
            (cg / "cgroup.procs").write_text(str(os.getpid()))

        self.p = subprocess.Popen(["ip", "netns", "exec", NS_S, sys.executable, "-c", SERVE_IDLE, str(first),
                                   str(pause), str(second), SERVER], stdout=subprocess.PIPE, text=True,
                                  preexec_fn=join)
        self.port = int(self.p.stdout.readline())
        self.size = first + second


@pytest.mark.parametrize("pause", [0.6, 0.05])
def test_loss_in_a_restart_window_is_seen_at_the_retransmission(net, cgroup, tmp_path, pause):
    """RFC 5681 §4.1, RFC 6928 §2/§4: 2 000 bytes (inside IW 10, no loss), an idle of 0.6 s (>
    the RTO, ~220 ms), then 14 000 bytes: Linux restarts the cwnd (tcp_cwnd_restart, cubic) at
    min(IW, cwnd) = 10 segments, the burst overflows the bottleneck's 6-packet queue, and the
    program reports a retransmission of the restart window with the 14 000 bytes sent in it.
    With a pause of 50 ms (< RTO) there is no restart: the burst's loss is initial-window loss
    (its bytes are inside the first IW·MSS), never restart-window evidence."""
    err, rows, _ = watched_fetch(tmp_path, _watch_bpf, lambda: IdleCgroupServer(cgroup, 2000, pause, 14_000), 16_000)
    if pause > 0.5:
        assert [r[:2] for r in rows] == [("loss_in_restart_window", 14_000)], (rows, err)
        assert re.search(r"loss_in_initial_window \(restart window, at the retransmission\) from 10\.78\.2\.1 "
                         r"\(14000 bytes sent, \d+ retransmissions\): IW 10 → 3 segments", err), err
    else:
        assert rows and all(k == "loss_in_initial_window" for k, _, _ in rows), (rows, err)
        assert "restart window" not in err, err


IDLE_PAIR = """
import socket, sys, threading, time
cc = sys.argv[1].encode()
s = socket.create_server(("127.0.0.1", 0))
def serve():
    c, _ = s.accept()
    c.setsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, cc)
    c.recv(16)
    c.sendall(b"x" * 2000)
    time.sleep(0.35)  # > the RTO (200 ms minimum + a loopback RTT): Linux restarts the cwnd
    c.sendall(b"y" * 5000)
    c.close()
t = threading.Thread(target=serve)
t.start()
c = socket.create_connection(("127.0.0.1", s.getsockname()[1]))
c.sendall(b"GET\\n")
while c.recv(65536):
    pass
print(s.getsockname()[1], flush=True)
c.close()
t.join()
"""


@pytest.mark.parametrize("cc", ["reno", "bbr"])
def test_the_program_counts_a_restart_window_where_linux_restarts_the_cwnd(cgroup, cc):
    """2 000 bytes, an idle longer than the RTO, 5 000 bytes: with reno, tcp_cwnd_restart() runs
    before the second send and the close record has one restart window starting at byte 2 000,
    holding the 5 000 bytes (one loopback segment), no retransmission.
    BBR has its own cong_control: Linux does not restart it, and the program counts nothing."""
    import select

    from iwlab.deploy import evidence_bpf

    ev = evidence_bpf.BpfEvidence(CGROUP)
    try:
        p = subprocess.run([sys.executable, "-c", IDLE_PAIR, cc], capture_output=True, text=True, timeout=30,
                           preexec_fn=lambda: (cgroup / "cgroup.procs").write_text(str(os.getpid())))
        server_port = int(p.stdout)
        raw, deadline = [], time.monotonic() + 10
        while not any(r["sport"] == server_port for r in raw) and time.monotonic() < deadline:
            select.select([ev], [], [], 0.5)
            raw += [r for r in ev.raw() if r["kind"] == "close"]
    finally:
        ev.close()
    [server] = [r for r in raw if r["sport"] == server_port]
    assert server["bytes_sent"] == 7000 and server["total_retrans"] == 0, server
    if cc == "reno":
        assert (server["restarts"], server["rs_start"], server["rs_bytes"]) == (1, 2000, 5000), server
        assert server["rs_segments"] == -(-5000 // server["mss"]) == 1, server  # loopback MSS > 5 000
        assert server["rs_window"] >= 5000 and server["rs_retrans"] == 0, server
    else:
        assert (server["restarts"], server["rs_bytes"], server["rs_segments"]) == (0, 0, 0), server

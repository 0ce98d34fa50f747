"""Per-flow IW on this machine's kernel (marker `deploy`: root, network namespaces, a cgroup of
our own, BPF). The example client and server (python/iwlab/deploy/examples/sized.py) exchange
sized flows between two namespaces joined by a 20 ms each-way delay line (tests/delay_line.py:
this kernel has no netem, and without a delay the first ACK returns while the first flight is
still being sent). tcpdump captures the data sender's interface (GSO off) and the first flight —
data segments before the first ACK of data — is counted per flow, as the emulator counts it
(iwlab.emulate.pcap).

Everything is named iwlab-bpf-<pid> (cgroup, pins) or iwb<pid> (namespaces, devices) and removed
in `finally`; the cgroup fixture fails the test if the kernel still holds a cgroup, pin, program
or link of ours afterwards.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from iwlab.deploy import flow_iw, flow_iw_marks
from iwlab.deploy.flow_iw_app import FlowSizePolicy
from iwlab.emulate import pcap
from netns_common import delay_line_pair, kill_cgroup, run, stop_delay_line

pytestmark = pytest.mark.deploy

IWLAB = Path(sys.executable).with_name("iwlab")
PID = os.getpid()
NS_S, NS_C = f"iwb{PID}s", f"iwb{PID}c"
DEV_S, DEV_C = f"iwb{PID}st", f"iwb{PID}ct"  # TUN devices of the delay line
CLIENT, SERVICE = "198.18.200.2", "198.18.201.1"
DELAY_MS = 20
CGROUP = f"iwlab-bpf-{PID}"
PIN_ROOT = Path(f"/sys/fs/bpf/iwlab-bpf-{PID}")
PORT = 8080
POLICY = """
[iw.policies]
sized = { kind = "size-based", theta = "20kB", v = 10, min_iw = 4 }

[[routes]]
prefix = "default"
policy = "sized"
"""
# draft-you with θ = 20 kB, V = 10, MinIW = 4: IW(s) = V for s <= θ, else ⌊(θ/s)·V + (1 − θ/s)·MinIW⌋.
EXPECTED = {18_000: 10, 40_000: 7, 100_000: 5, 200_000: 4}
KERNEL_DEFAULT_IW = 10  # the initcwnd of a route without one (RFC 6928)


@pytest.fixture(scope="module")
def net(bpf_ready, module_namespace):
    """Client namespace ⇄ delay line (20 ms each way) ⇄ server namespace; addresses on lo."""
    line = delay_line_pair(module_namespace, NS_S, DEV_S, NS_C, DEV_C, DELAY_MS, SERVICE, CLIENT)
    try:
        yield
    finally:
        stop_delay_line(line)


@pytest.fixture
def policy(tmp_path):
    p = tmp_path / "policy.toml"
    p.write_text(POLICY)
    return p


def _kill_cgroup() -> None:
    kill_cgroup(flow_iw.CGROUP_ROOT / CGROUP)


def _bpftool(*args: str) -> list[dict]:
    exe = shutil.which("bpftool") or "/usr/sbin/bpftool"
    if not os.path.exists(exe):
        return []
    return json.loads(run(exe, "-j", *args).stdout or "[]")


def _leftovers(link_ids: set[int], prog_ids: set[int]) -> list[str]:
    """Anything of ours the kernel still has: cgroup, pins, links or programs (by id)."""
    out = []
    if (flow_iw.CGROUP_ROOT / CGROUP).exists():
        out.append(f"cgroup {CGROUP}")
    if PIN_ROOT.exists():
        out.append(f"pins {PIN_ROOT}: {sorted(p.name for p in PIN_ROOT.rglob('*'))}")
    out += [f"link {x['id']}" for x in _bpftool("link", "list") if x["id"] in link_ids]
    out += [f"prog {x['id']} {x.get('name')}" for x in _bpftool("prog", "list") if x["id"] in prog_ids]
    return out


@pytest.fixture
def cgroup(net):
    """Our cgroup's name; afterwards its processes are killed, the programs detached, the pins
    and the cgroup removed — and the test fails if the kernel still holds any of them."""
    seen: dict[str, set[int]] = {"links": set(), "progs": set()}

    def record(status: dict) -> None:
        for link in (status.get("links") or {}).values():
            if link:
                seen["links"].add(link["id"])
                seen["progs"].add(link["prog_id"])

    try:
        yield CGROUP, record
    finally:
        _kill_cgroup()
        try:
            flow_iw.detach(CGROUP, PIN_ROOT)
        finally:
            if (flow_iw.CGROUP_ROOT / CGROUP).exists():
                (flow_iw.CGROUP_ROOT / CGROUP).rmdir()
            if PIN_ROOT.exists():
                shutil.rmtree(PIN_ROOT, ignore_errors=True)
        deadline = time.monotonic() + 5  # programs are freed after an RCU grace period
        while _leftovers(seen["links"], seen["progs"]) and time.monotonic() < deadline:
            time.sleep(0.1)
        left = _leftovers(seen["links"], seen["progs"])
        assert not left, f"left behind: {left}"


class Capture:
    """tcpdump on one namespace's interface; every packet handed over and written at once."""

    def __init__(self, ns: str, dev: str, path: Path):
        self.path = path
        self.p = subprocess.Popen(["ip", "netns", "exec", ns, "tcpdump", "-i", dev, "-U", "--immediate-mode", "-n", "-s", "128",
                                   "-w", str(path), "tcp"], stderr=subprocess.PIPE, text=True)
        line = self.p.stderr.readline()  # "listening on …" once the socket is open
        assert "listening" in line, line

    def stop(self) -> None:
        time.sleep(0.2)
        self.p.send_signal(signal.SIGINT)
        self.p.wait(timeout=10)
        self.p.stderr.close()


def _server(argv_prefix: list[str], policy: Path | None, count: int) -> subprocess.Popen:
    cmd = [*argv_prefix, sys.executable, "-m", "iwlab.deploy.examples.sized", "server",
           "--listen", f"{SERVICE}:{PORT}", "--count", str(count), *(["--policy", str(policy)] if policy else [])]
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    line = p.stderr.readline()
    assert "listening" in line, line + p.stderr.read()
    return p


def _client(*args: str) -> list[dict]:
    r = run("ip", "netns", "exec", NS_C, sys.executable, "-m", "iwlab.deploy.examples.sized", "client",
            "--connect", f"{SERVICE}:{PORT}", *args)
    return [json.loads(x) for x in r.stdout.splitlines()]


def _server_log(p: subprocess.Popen) -> list[dict]:
    out, err = p.communicate(timeout=60)
    assert p.returncode == 0, err
    return [json.loads(x) for x in out.splitlines()]


def test_each_response_leaves_with_the_policys_iw_of_its_size(cgroup, policy, tmp_path):
    name, record = cgroup
    r = run(str(IWLAB), "flow-iw", "attach", "--cgroup", name, "--policy", str(policy),
            "--pin-root", str(PIN_ROOT), "--json")
    status = json.loads(r.stdout)
    record(status)
    assert status["attached"] and status["config"] == {"default_iw": 4, "max_iw": 10, "created_cgroup": True,
                                                    "pacing": False, "paced_iw": False}
    cap = Capture(NS_S, DEV_S, tmp_path / "responses.pcap")
    try:
        srv = _server([str(IWLAB), "flow-iw", "exec", "--cgroup", name, "--netns", NS_S, "--"], policy,
                      count=len(EXPECTED) + 1)
        got = _client("--get", ",".join(map(str, EXPECTED)))
        got += _client("--get", "40000", "--undeclared")
        log = _server_log(srv)
    finally:
        cap.stop()
    assert [g["received"] for g in got] == [*EXPECTED, 40_000]
    # The server asked the simulator's policy code, and the kernel took the hint.
    policy_iw = FlowSizePolicy(policy)
    assert {e["size"]: e["iw"] for e in log if e["iw"]} == EXPECTED == {
        s: policy_iw.segments(s, 1448, CLIENT) for s in EXPECTED}
    assert not [e for e in log if e["error"]]
    # On the wire: the first flight of each response is IW(size); the undeclared one gets the
    # cgroup's default, MinIW = the policy's IW of a flow of unknown size.
    flights = [(c.data_bytes, c.first_flight) for c in pcap.connections(cap.path)]
    assert flights == [*EXPECTED.items(), (40_000, 4)], flights
    stats = json.loads(run(str(IWLAB), "flow-iw", "status", "--cgroup", name, "--pin-root", str(PIN_ROOT),
                           "--json").stdout)["stats"]
    assert stats["hint_set"] == 4 and stats["default_set"] >= 5 and stats["hint_refused"] == 0
    out = run(str(IWLAB), "flow-iw", "detach", "--cgroup", name, "--pin-root", str(PIN_ROOT)).stdout
    assert "cgroup removed" in out


def test_without_the_programs_a_hint_fails_and_the_route_iw_applies(cgroup, policy, tmp_path):
    """The control: the same server outside any attached cgroup gets ENOPROTOOPT for its hint
    and sends its first flight with the kernel's own IW."""
    cap = Capture(NS_S, DEV_S, tmp_path / "control.pcap")
    try:
        srv = _server([str(IWLAB), "flow-iw", "exec", "--netns", NS_S, "--"], policy, count=1)
        _client("--get", "200000")
        log = _server_log(srv)
    finally:
        cap.stop()
    assert log[0]["iw"] is None and "cgroup has no iwlab flow-iw programs" in log[0]["error"]
    assert [(c.data_bytes, c.first_flight) for c in pcap.connections(cap.path)] == [(200_000, KERNEL_DEFAULT_IW)]


def test_a_hint_after_data_is_refused_with_einval(cgroup, net):
    name, record = cgroup
    record(flow_iw.attach(name, 4, 10, PIN_ROOT))
    code = f"""
import socket, errno
from iwlab.deploy.flow_iw_app import set_flow_iw
l = socket.create_server(("{SERVICE}", 0)); c = socket.create_connection(l.getsockname()); a, _ = l.accept()
set_flow_iw(a, 9)
a.sendall(b"x")
try:
    set_flow_iw(a, 8)
except OSError as e:
    print(e.errno)
"""
    r = run(str(IWLAB), "flow-iw", "exec", "--cgroup", name, "--netns", NS_S, "--", sys.executable, "-c", code)
    assert r.stdout.strip() == "22", r.stderr
    st = flow_iw.status(name, PIN_ROOT)["stats"]
    assert st["hint_set"] == 1 and st["hint_refused"] == 1
    # attach is idempotent; a new default re-configures in place (same links)
    again = flow_iw.attach(name, 4, 10, PIN_ROOT)
    assert not again["changed"]
    moved = flow_iw.attach(name, 3, 12, PIN_ROOT)
    assert moved["changed"] and moved["config"]["default_iw"] == 3 and moved["links"] == again["links"]


def test_the_root_cgroup_is_refused(net, tmp_path):
    r = run(str(flow_iw.binary()), "attach", "--cgroup", str(flow_iw.CGROUP_ROOT), "--pins",
            f"/sys/fs/bpf/iwlab-bpf-{PID}-root", "--max-iw", "10", check=False)
    assert r.returncode == 2 and "root of the cgroup2 hierarchy" in r.stderr


def test_a_marked_upload_takes_the_iw_of_its_marks_route(net, policy, tmp_path):
    """Route-mark variant: the client marks its socket with IW(size) before connect(); a rule
    sends it to the table whose route has initcwnd IW(size)."""
    try:
        r = run(str(IWLAB), "flow-iw", "marks", "install", "--policy", str(policy), "--netns", NS_C, "--json")
        installed = json.loads(r.stdout)
        assert {x["initcwnd"] for x in installed["routes"]} == set(range(4, 11))
        cap = Capture(NS_C, DEV_C, tmp_path / "uploads.pcap")
        try:
            srv = _server(["ip", "netns", "exec", NS_S], None, count=len(EXPECTED))
            got = _client("--put", ",".join(map(str, EXPECTED)), "--via", "mark", "--policy", str(policy))
            _server_log(srv)
        finally:
            cap.stop()
        assert {g["size"]: g["iw"] for g in got} == EXPECTED
        header = {s: len(f"PUT {s}\n") for s in EXPECTED}
        flights = [(c.data_bytes, c.first_flight) for c in pcap.connections(cap.path, data_from="client")]
        assert flights == [(s + header[s], iw) for s, iw in EXPECTED.items()], flights
    finally:
        run(str(IWLAB), "flow-iw", "marks", "remove", "--netns", NS_C, check=False)
    assert flow_iw_marks.show(NS_C) == {"rules": [], "routes": []}

"""`iwlab probe` against real servers in namespaces of our own (markers `netns`, `deploy`: root,
nftables). A server namespace (`python3 -m http.server`, a TLS server from Python's `ssl` with a
self-signed certificate made here) and a client namespace joined by a veth pair; the server's
IW is set by `iwlab apply` from a policy file and measured from the client namespace. Traffic
never leaves the two namespaces. Every test ends with nothing left: no prober table, no raw
socket, no child process.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from iwlab.probe import ProbeError, probe
from iwlab.probe.client import probe_once
from iwlab.probe.target import parse_target
from netns_common import children, run, veth_pair

pytestmark = [pytest.mark.netns, pytest.mark.deploy]

IWLAB = Path(sys.executable).with_name("iwlab")
PID = os.getpid()
S, C = f"iwr-p{PID}s", f"iwr-p{PID}c"
V4, V6 = "10.93.1", "fd93::"
SERVER4, SERVER6 = f"{V4}.1", f"{V6}1"
HTTP, TLS, MUTE = 8000, 8443, 8009
BIG = f"http://{SERVER4}:{HTTP}/big.bin"

TLS_SERVER = r"""
import socket, ssl, sys, threading
ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
ctx.load_cert_chain(sys.argv[1], sys.argv[2])
seen = open(sys.argv[3], "a")
def sni(obj, name, c):
    seen.write(f"{name}\n"); seen.flush()
ctx.sni_callback = sni
s = socket.create_server(("::", int(sys.argv[4])), family=socket.AF_INET6, dualstack_ipv6=True)
def serve(c):
    c.settimeout(10)
    try:
        ctx.wrap_socket(c, server_side=True).close()
    except OSError:
        c.close()
while True:
    c, _ = s.accept()
    threading.Thread(target=serve, args=(c,), daemon=True).start()
"""

# accepts and never sends a byte
MUTE_SERVER = r"""
import socket, sys, time
s = socket.create_server(("::", int(sys.argv[1])), family=socket.AF_INET6, dualstack_ipv6=True)
held = []
while True:
    held.append(s.accept()[0])
"""


def ns_run(ns, *cmd, check=True):
    return run("ip", "netns", "exec", ns, *cmd, check=check)


def prober_tables(ns=C) -> list[str]:
    out = json.loads(ns_run(ns, "nft", "-j", "list", "tables", "inet").stdout or '{"nftables": []}')
    return [t["table"]["name"] for t in out["nftables"] if "table" in t and t["table"]["name"].startswith("iwlab_probe_")]


def raw_sockets(ns=C) -> list[str]:
    return [ln for ln in ns_run(ns, "cat", "/proc/net/raw", "/proc/net/raw6").stdout.splitlines()
            if ln.strip() and not ln.strip().startswith("sl")]


def set_iw(lab, iw: int) -> None:
    policy = lab["dir"] / f"iw{iw}.toml"
    policy.write_text(f'[iw.policies]\np = {{ kind = "fixed", segments = {iw} }}\n\n'
                      f'[[routes]]\nprefix = "{V4}.0/24"\npolicy = "p"\n\n[[routes]]\nprefix = "{V6}/64"\npolicy = "p"\n')
    run(str(IWLAB), "apply", str(policy), "--netns", S, "--state", str(lab["dir"] / "state.sqlite"))


@pytest.fixture(scope="module")
def lab(tmp_path_factory, module_namespace):
    if not (shutil.which("nft") or os.path.exists("/usr/sbin/nft")):
        pytest.skip("needs nftables (make deps-probe)")
    d = tmp_path_factory.mktemp("iwr-probe")
    www = d / "www"
    www.mkdir()
    (www / "big.bin").write_bytes(os.urandom(1 << 20))
    (www / "small.bin").write_bytes(os.urandom(5000))
    # a certificate of ~10 kB (many names), so the TLS handshake's first flight exceeds small IWs
    cnf = d / "cert.cnf"
    cnf.write_text("[req]\ndistinguished_name=dn\nx509_extensions=ext\nprompt=no\n[dn]\nCN=probe.test\n"
                   "[ext]\nsubjectAltName=" + ",".join(f"DNS:host-{i:03d}.probe.test" for i in range(400)) + "\n")
    if shutil.which("openssl"):
        run("openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-keyout", str(d / "key.pem"),
            "-out", str(d / "cert.pem"), "-config", str(cnf))
    procs = []
    try:
        veth_pair(module_namespace, S, C, "v0", "v1", V4, V6)
        env = dict(os.environ, PYTHONUNBUFFERED="1")
        for argv in ([sys.executable, "-m", "http.server", str(HTTP), "--bind", "::", "--directory", str(www)],
                     [sys.executable, "-c", TLS_SERVER, str(d / "cert.pem"), str(d / "key.pem"), str(d / "sni.txt"),
                      str(TLS)],
                     [sys.executable, "-c", MUTE_SERVER, str(MUTE)]):
            procs.append(subprocess.Popen(["ip", "netns", "exec", S, *argv], stdout=subprocess.DEVNULL,
                                          stderr=subprocess.DEVNULL, env=env))
        for port in (HTTP, TLS, MUTE):  # until every server listens
            for _ in range(100):
                if f":{port:04X} " in ns_run(S, "cat", "/proc/net/tcp6").stdout:
                    break
                time.sleep(0.05)
        yield {"dir": d}
    finally:  # the servers; the namespaces go with module_namespace
        for p in procs:
            p.kill()
            p.wait()


@pytest.fixture
def clean(lab):
    """Fails the test if it leaves a prober table, a raw socket or a child process behind."""
    before = children()
    yield lab
    assert prober_tables() == [] and raw_sockets() == []
    deadline = time.monotonic() + 5
    while children() - before and time.monotonic() < deadline:
        time.sleep(0.05)
    assert children() - before == set()


@pytest.mark.parametrize("iw", [1, 3, 4, 10, 32, 64])
def test_the_iw_apply_sets_is_measured_exactly(clean, iw):
    set_iw(clean, iw)
    p = probe(BIG, netns=C)
    (r,) = p.results
    assert (r.segments, r.lower_bound, r.why) == (iw, False, "retransmission")
    assert r.segment_size == 1460 and r.bytes > (iw - 1) * 1460
    assert 150 < r.rto_ms < 1500  # Linux: the 200 ms minimum RTO + the RTT variance


def test_ipv6_and_two_segment_sizes_say_segment_based(clean):
    set_iw(clean, 10)
    p = probe(f"http://[{SERVER6}]:{HTTP}/big.bin", msses=(536, 1440), netns=C)
    assert [(r.segments, r.segment_size, r.lower_bound) for r in p.results] == [(10, 536, False), (10, 1440, False)]
    assert p.kind == "segments"


def test_a_5kb_object_gives_a_lower_bound_not_a_wrong_number(clean):
    set_iw(clean, 10)
    (r,) = probe(f"http://{SERVER4}:{HTTP}/small.bin", netns=C).results
    assert r.lower_bound and r.bytes >= 5000 and r.segments <= 10


def test_a_tls_server_is_measured_from_its_handshake_with_sni(clean, monkeypatch):
    if not (clean["dir"] / "cert.pem").exists():
        pytest.skip("openssl (Debian package) is needed to make the test certificate")
    set_iw(clean, 4)
    (r,) = probe(f"https://[{SERVER6}]:{TLS}/", netns=C).results
    assert (r.segments, r.lower_bound) == (4, False)  # the ~10 kB certificate outruns 4 segments
    # a host name goes into the ClientHello (SNI); here it resolves to the server without the
    # host's resolver
    monkeypatch.setattr("iwlab.probe.client.resolve", lambda t, family=0: (socket.AF_INET6, SERVER6))
    set_iw(clean, 3)
    (r,) = probe(f"https://probe.test:{TLS}/", netns=C).results
    assert (r.segments, r.lower_bound) == (3, False)
    assert "probe.test" in (clean["dir"] / "sni.txt").read_text().split()


def test_without_the_rst_rule_the_kernel_resets_the_connection(clean):
    """What the nftables table is for: with the port not in its set the kernel answers the
    SYN-ACK with a RST and the server never sends its window."""
    from iwlab.probe.netns import in_netns
    from iwlab.probe.rstguard import RstGuard

    class NoPorts(RstGuard):
        def add(self, port):
            pass

        def remove(self, port):
            pass

    set_iw(clean, 10)
    with in_netns(C), NoPorts() as g, pytest.raises(ProbeError, match="reset|no data"):
        probe_once(parse_target(BIG), g, timeout=1.0)


def iwlab_probe(*args, timeout=60):
    return subprocess.run([str(IWLAB), "probe", *args], capture_output=True, text=True, timeout=timeout)


def test_the_command_reports_initcwnd_32_within_2_seconds(clean):
    set_iw(clean, 32)
    t0 = time.monotonic()
    r = iwlab_probe(BIG, "--netns", C, "--expect", "32")
    assert time.monotonic() - t0 < 2.0, "slower than 2 s"
    assert r.returncode == 0 and "IW 32 segments" in r.stdout and r.stderr == ""
    assert iwlab_probe(BIG, "--netns", C, "--expect", "31").returncode == 1


def test_a_host_port_target_sends_the_request_given(clean):
    set_iw(clean, 10)
    r = iwlab_probe(f"{SERVER4}:{HTTP}", "--netns", C, "--request", "GET /big.bin HTTP/1.0\\r\\n\\r\\n", "--json")
    run_ = json.loads(r.stdout)[0]["runs"][0]
    assert (r.returncode, run_["segments"], run_["lower_bound"]) == (0, 10, False)
    # without it: a GET of /, the directory listing, smaller than the window
    assert json.loads(iwlab_probe(f"{SERVER4}:{HTTP}", "--netns", C, "--json").stdout)[0]["runs"][0]["lower_bound"]


def test_apply_verify_probe_confirms_the_route_iw_and_catches_a_route_that_overrides_it(clean):
    set_iw(clean, 10)
    policy, state = clean["dir"] / "iw10.toml", clean["dir"] / "state.sqlite"
    apply = [str(IWLAB), "apply", str(policy), "--netns", S, "--state", str(state), "--verify-probe", BIG,
             "--probe-netns", C]
    r = subprocess.run(apply, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and "verified: " + BIG + ": IW 10 (MSS 1460) on the wire = initcwnd 10" in r.stdout
    # a more specific route iwlab did not write decides the client's IW: the check says so
    run("ip", "-n", S, "route", "add", f"{V4}.2/32", "dev", "v0", "initcwnd", "5")
    try:
        r = subprocess.run(apply, capture_output=True, text=True, timeout=60)
    finally:
        run("ip", "-n", S, "route", "del", f"{V4}.2/32")
    assert r.returncode == 1 and "not verified" in r.stderr and "IW 5 (MSS 1460) on the wire ≠ initcwnd 10" in r.stderr
    assert f"the kernel's route for the client is {V4}.2/32" in r.stderr


@pytest.mark.parametrize("args, code, says", [
    ([f"{SERVER4}:8001"], 1, "connection refused"),  # closed port
    ([f"{SERVER4}:{MUTE}", "--timeout", "0.5"], 1, "connected, but no data within 0.5 s"),
    ([f"{V4}.9:{HTTP}", "--timeout", "0.5"], 1, "no answer to the SYN"),  # nobody at that address
    (["10.94.0.1:80"], 1, "network is unreachable"),
    (["ftp://x/"], 2, "scheme 'ftp'"),
    (["http://x:99999/"], 2, "port = '99999'"),
    (["nonsense"], 2, "no port"),
    ([BIG, "--mss", "20"], 2, "--mss = 20"),
    ([BIG, "--request", "GET 1\\n"], 2, "--request with target"),
])
def test_failures_are_one_clear_line(clean, args, code, says):
    r = iwlab_probe(*args, "--netns", C)
    assert r.returncode == code and says in r.stderr, r.stderr
    assert len(r.stderr.strip().splitlines()) == 1 and "Traceback" not in r.stderr


def test_a_table_left_by_a_killed_prober_is_removed(clean):
    ns_run(C, "nft", "add", "table", "inet", "iwlab_probe_999999999")
    assert iwlab_probe(f"http://{SERVER4}:{HTTP}/small.bin", "--netns", C).returncode == 0
    assert prober_tables() == []


def test_many_targets_are_each_reported(clean, tmp_path):
    set_iw(clean, 10)
    targets = tmp_path / "targets.txt"
    targets.write_text("# 100 objects of one local server\n" +
                       "".join(f"{BIG}?n={i}\n" for i in range(100)))
    r = iwlab_probe("--many", str(targets), "--netns", C, "--concurrency", "8", "--rate", "200", "--json",
                    timeout=120)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert [p["target"] for p in out] == [f"{BIG}?n={i}" for i in range(100)]
    assert all(p["error"] is None and p["runs"][0]["segments"] == 10 for p in out)


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_an_interrupted_probe_leaves_nothing_behind(clean, tmp_path, sig):
    targets = tmp_path / "targets.txt"
    targets.write_text("".join(f"{SERVER4}:{MUTE}\n" for _ in range(8)))
    # As from a terminal: SIGINT at its default. A process started with SIGINT ignored (a
    # background job, or a test runner that ignores it) keeps it ignored, as Unix tools should.
    p = subprocess.Popen([str(IWLAB), "probe", "--many", str(targets), "--netns", C, "--timeout", "30",
                          "--rate", "100"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        deadline = time.monotonic() + 20
        while len(raw_sockets()) < 4 and time.monotonic() < deadline:  # probes connected and waiting
            time.sleep(0.05)
        assert prober_tables() != [] and raw_sockets() != []
        p.send_signal(sig)
        # Prompt on an idle machine (~1 s); on a loaded one a probe thread may finish its
        # current wait first, and the probes' own timeout (30 s) bounds that.
        out, err = p.communicate(timeout=45)
    finally:
        if p.poll() is None:
            p.kill()
            p.communicate()  # closes the pipes, so a failure here does not leak into later tests
    assert p.returncode == 130 and "interrupted" in err and "Traceback" not in err

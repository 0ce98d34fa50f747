"""The emulator (python/iwlab/emulate/).

Plain tests check the pure parts (units, distributions, the plan, queue specs, captures).
Tests marked `netns` run the kernel: they need root, `ip netns`, /dev/net/tun and the
`iwlab-link` relay (built here with cargo when missing), and install tcpdump/ethtool through
`python/iwlab/emulate/setup.sh`. Elsewhere they are skipped with the reason.
"""

from __future__ import annotations

import ipaddress
import math
import os
import random
import re
import shutil
import signal
import struct
import subprocess
import sys
import time
from pathlib import Path

import pytest

import iwlab
from iwlab.emulate import dists, pcap
from iwlab.emulate.agent import iw_segments
from iwlab.emulate.plan import PlanError, alias, build_plan, iw_prefix, relay_queue, shortened
from iwlab.emulate.units import queue_limit, rate_bps, rate_or_share, seconds, size_bytes
from scenario_common import TCP_SACK_RENO, dumbbell_toml, short_flows

MSS = 1448
SIZES = (9, 10, 21, 22)  # segments (Nathan & Rai: 9/21 need no extra round with IW3 compared to 10/22)

# IW3 vs IW10 short flows on a lossless 10 Mb/s, 100 ms RTT path: completion time is set by
# RTT and IW. Linux ACKs every segment (route `quickack 1`), so the simulator does too.
# Both servers serve both IWs to the same client (a mixed population per host pair): the
# 9- and 10-segment flows of IW3 and the 21- and 22-segment flows of IW10 run on pair 0, the
# others on pair 1. The kernel picks each flow's IW by its destination address.
IW_SCENARIO = dumbbell_toml(
    "iw3-vs-iw10", seed=7, duration="30s", clients=2, servers=2,
    extra='\ndescription = "lossless 10 Mb/s, RTT 100 ms; 9/10/21/22-segment responses with IW3 and IW10"',
) + TCP_SACK_RENO + """delayed_ack = false
limited_transmit = true
min_rto = "200ms"

[iw]
default = "iw10"
[iw.policies]
iw3 = { kind = "fixed", segments = 3 }
iw10 = { kind = "fixed", segments = 10 }
""" + "".join(short_flows(f"{seg}seg", "2s", 4, start=f"{0.5 + 0.25 * k:.2f}s",
                          extra=f'\nname = "iw{iw}-{seg}seg"\nmapping = "distinct"\noffset = {pair}\n'
                                f'server_iw = "iw{iw}"\nclient_iw = "iw{iw}"')
              for k, (iw, pair, seg) in enumerate((iw, int((iw == 3) != (seg < 20)), seg) for iw in (3, 10) for seg in SIZES))
RUN_SECONDS = 9.0  # 0.5 + 0.25·7 + 3·2 s of arrivals, plus the last flows' ~0.5 s


def scenario(text: str = IW_SCENARIO):
    from iwlab.scenario import Scenario

    return Scenario.from_toml(text, "<test>")


# ---- pure parts ------------------------------------------------------------------------------

@pytest.mark.parametrize("text, expected", [("1.5Mbps", 1_500_000), ("10Gbps", 10**10), ("600kbps", 600_000),
                                            ("9600", 9600), ("100 Mb/s", 10**8)])
def test_rates(text, expected):
    assert rate_bps(text) == expected


@pytest.mark.parametrize("text, expected", [("98ms", 0.098), ("1s", 1.0), ("250us", 250e-6), ("2", 2.0),
                                            ("1min", 60.0), ("7000000000ns", 7.0)])
def test_durations(text, expected):
    assert seconds(text) == pytest.approx(expected)


@pytest.mark.parametrize("text, expected", [("1448B", 1448), ("10seg", 14480), ("1MB", 10**6), ("64KiB", 65536),
                                            ("1kB", 1000), (250, 250)])
def test_sizes(text, expected):
    assert size_bytes(text, mss=MSS) == expected


def test_limits_and_shares():
    assert queue_limit("25pkt") == (25, "pkt") and queue_limit("64kB") == (64000, "B")
    assert rate_or_share("60%", 2_000_000) == 1_200_000 and rate_or_share("600kbps", 1) == 600_000
    with pytest.raises(ValueError, match="unknown rate unit"):
        rate_bps("3 parsecs")


@pytest.mark.parametrize("q, spec", [
    ({"kind": "drop-tail", "limit": "25pkt"}, "droptail:25pkt"),
    ({"kind": "drop-tail", "limit": "64kB"}, "droptail:64000B"),
    ({"kind": "red", "limit": "100pkt", "min_th": 10, "max_th": 30, "ecn": True},
     "red:limit=100pkt,min=10,max=30,ecn=1"),
    ({"kind": "red"}, "red"),
    ({"kind": "codel", "target": "5ms", "interval": "100ms"}, "codel:target=5000000ns,interval=100000000ns"),
])
def test_queues_become_relay_specs(q, spec):
    assert relay_queue(q, "q") == spec


def test_distributions_follow_the_engines_laws():
    rng = random.Random(3)
    u = dists.normalize({"kind": "uniform", "lo": 1, "hi": 5, "unit": "ms"}, 1e-3)
    assert all(1e-3 <= dists.sample(u, rng) <= 5e-3 for _ in range(1000))
    p = dists.normalize({"kind": "pareto", "shape": 1.2, "scale": 1122.46, "cap": 1e6}, 1.0)
    draws = sorted(dists.sample(p, rng) for _ in range(20001))
    assert draws[0] >= 1122.46 and draws[-1] <= 1e6
    assert draws[10000] == pytest.approx(1122.46 * 2 ** (1 / 1.2), rel=0.05)  # median ≈ 2000 B (the RFC 2415 study, docs/studies.md)
    ln = dists.normalize({"kind": "lognormal", "median": 30, "mean": 45, "unit": "ms"}, 1e-3)
    assert math.exp(ln["mu"]) == pytest.approx(0.030)
    # Empirical: the left-continuous inverse; a first cdf > 0 is an atom at the first value.
    e = {"kind": "empirical", "points": [[1000, 0.5], [3000, 1.0]]}
    assert dists.empirical(e["points"], 0.25) == 1000 and dists.empirical(e["points"], 0.75) == 2000
    websearch = dists.normalize({"kind": "empirical", "builtin": "websearch"}, 1.0)
    assert dists.mean(websearch) == pytest.approx(1.7e6, rel=0.05)
    assert dists.draw_bytes({"kind": "constant", "value": 0.2}, rng, 1) == 1


@pytest.mark.parametrize("size, iw", [(1, 10), (200_000, 10), (200_001, 9), (250_000, 8), (300_000, 8),
                                      (1_000_000, 5), (100_000_000, 4), (None, 4)])
def test_size_based_windows_are_the_engines(size, iw):
    # crates/iwlab-core/src/tcp/iw/size_based.rs, θ = 200 kB, V = 10, MinIW = 4.
    assert iw_segments({"kind": "size", "theta": 200_000, "v": 10, "min_iw": 4}, size) == iw


def test_plan_mirrors_the_simulators_topology_and_schedules_every_flow():
    sc = scenario()
    plan = build_plan(sc, pid=4194303)
    sim = iwlab.run(sc).links
    assert [(d.port, d.src, d.dst, d.rate_bps) for d in plan.links] == \
        list(zip(sim["port"], sim["from"], sim["to"], sim["rate_bps"]))
    assert [d.delay for d in plan.links] == pytest.approx(list(sim["delay"]))
    names = [d.tun for d in plan.links] + [h.dev for h in plan.hosts] + [h.rdev for h in plan.hosts]
    assert all(n.startswith("iwl4194303-") and len(n) <= 15 for n in names)
    assert plan.iw_values == [3, 10] and plan.kernel.route_opts == ["quickack", "1"]
    assert plan.kernel.sysctls["net.ipv4.tcp_timestamps"] == "1" and plan.kernel.mtu == 1500
    flows = [f for a in plan.agents.values() for f in a["schedule"]]
    assert len(flows) == 32 and {f["response"] for f in flows} == {s * MSS for s in SIZES}
    assert {(f["server"]["host"], f["app"] // 4) for f in flows} == {(f"right-{p}", i) for p in (0, 1) for i in (0, 1)}
    assert all(plan.agents[h]["listen"] for h in ("right-0", "right-1"))
    assert alias(3, 10) == "198.19.40.3" and iw_prefix(10) == "198.19.40.0/22"


def test_per_host_draws_are_the_simulators():
    sc = iwlab.load("rfc6928")
    plan = build_plan(sc, pid=1)
    sim = iwlab.run(shortened(sc, 0.001)).links.set_index("port")
    for d in plan.links:
        assert d.rate_bps == sim.loc[d.port, "rate_bps"] and d.delay == pytest.approx(sim.loc[d.port, "delay"])
    assert len({h.down.rate_bps for h in plan.hosts if h.side == "left"}) > 20  # a population, not one value


def test_shortened_runs_scale_the_warmup_and_say_so():
    sc = iwlab.load("congested-links")
    plan = build_plan(sc, duration=3.0, pid=1)
    assert plan.duration == 3.0 and plan.time_scale == pytest.approx(3 / 120)
    assert plan.warmup == pytest.approx(5 * 3 / 120)
    assert any("shortened" in n for n in plan.notes)
    with pytest.raises(PlanError, match="duration"):
        build_plan(sc, duration=500.0, pid=1)


def _pcap_bytes(segments: list[tuple[str, int, str, int, int, int, int, int]]) -> bytes:
    """A pcap (Ethernet) of TCP segments (src, sport, dst, dport, seq, ack, flags, payload)."""
    out = [struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1)]
    for i, (src, sp, dst, dp, seq, ack, flags, n) in enumerate(segments):
        tcp = struct.pack("!HHIIHHHH", sp, dp, seq, ack, (5 << 12) | flags, 65535, 0, 0)
        ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + 20 + n, 0, 0, 64, 6, 0,
                         bytes(map(int, src.split("."))), bytes(map(int, dst.split("."))))
        frame = b"\0" * 12 + b"\x08\x00" + ip + tcp + b"\0" * n
        out.append(struct.pack("<IIII", i, 0, len(frame), len(frame)) + frame)
    return b"".join(out)


def test_first_flight_counts_data_before_the_first_ack_of_data(tmp_path):
    c, s = ("10.0.0.1", 4000), ("10.0.0.2", 80)
    syn, synack, ack, push = 0x02, 0x12, 0x10, 0x18
    segs = [(*c, *s, 100, 0, syn, 0), (*s, *c, 5000, 101, synack, 0), (*c, *s, 101, 5001, ack, 0),
            (*c, *s, 101, 5001, push, 100),  # the request: acks only the SYN-ACK
            (*s, *c, 5001, 201, ack, 0)]  # the server's ACK of the request
    segs += [(*s, *c, 5001 + k * 1448, 201, ack, 1448) for k in range(3)]
    segs += [(*c, *s, 201, 5001 + 1448, ack, 0), (*s, *c, 5001 + 3 * 1448, 201, ack, 1448)]
    f = tmp_path / "x.pcap"
    f.write_bytes(_pcap_bytes(segs))
    (conn,) = pcap.connections(f)
    assert conn.server == s and conn.first_flight == 3 and conn.data_bytes == 4 * 1448


def test_first_flight_of_an_upload_counts_the_clients_data(tmp_path):
    c, s = ("10.0.0.1", 4000), ("10.0.0.2", 80)
    syn, synack, ack = 0x02, 0x12, 0x10
    segs = [(*c, *s, 100, 0, syn, 0), (*s, *c, 5000, 101, synack, 0), (*c, *s, 101, 5001, ack, 0)]
    segs += [(*c, *s, 101 + k * 1448, 5001, ack, 1448) for k in range(4)]
    segs += [(*s, *c, 5001, 101 + 1448, ack, 0), (*c, *s, 101 + 4 * 1448, 5001, ack, 1448)]
    f = tmp_path / "up.pcap"
    f.write_bytes(_pcap_bytes(segs))
    (conn,) = pcap.connections(f, data_from="client")
    assert conn.server == s and conn.first_flight == 4 and conn.data_bytes == 5 * 1448
    (down,) = pcap.connections(f)  # the server sent no data
    assert down.first_flight is None and down.data_bytes == 0


# ---- on the kernel -----------------------------------------------------------------------------

def _ours(pid: int) -> dict[str, list[str]]:
    """What a run of process `pid` could have left: namespaces, links, processes, run dir."""
    pre = f"iwl{pid}-"
    ns = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout.split()
    links = subprocess.run(["ip", "-o", "link"], capture_output=True, text=True).stdout
    procs = []
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                cmd = (d / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            except OSError:
                continue
            if f"iwlab-emulate-{pid}/" in cmd:
                procs.append(f"{d.name}: {cmd}")
    return {"namespaces": [n for n in ns if n.startswith(pre)], "links": re.findall(rf"\b{pre}\S+", links),
            "processes": procs,
            "rundir": [str(p) for p in Path(os.environ.get("TMPDIR", "/tmp")).glob(f"iwlab-emulate-{pid}")]}


def _root_network() -> tuple[str, str, str]:
    def run(*a: str) -> str:
        return subprocess.run(list(a), capture_output=True, text=True).stdout

    return run("ip", "route", "show", "table", "all"), run("ip", "rule"), run("ip", "-o", "link")


@pytest.mark.netns
@pytest.mark.timeout(240)
def test_iw3_vs_iw10_on_the_kernel_matches_the_simulator(emulation_ready, tmp_path):
    from iwlab.emulate import emulate
    from iwlab.emulate.collect import FLOW_SCHEMA

    sc = scenario()
    root_before = _root_network()
    mid_run: dict[str, object] = {}

    def say(msg: str) -> None:
        if msg.startswith("running"):
            mid_run["root"] = _root_network()
            mid_run["ours"] = _ours(os.getpid())

    emu = emulate(sc, out=tmp_path, duration=RUN_SECONDS, capture=["right-0", "right-1"], say=say)
    sim = iwlab.run(shortened(sc, RUN_SECONDS))

    # Nothing is left behind, and the host's own network was never touched.
    assert _ours(os.getpid()) == {"namespaces": [], "links": [], "processes": [], "rundir": []}
    assert len(mid_run["ours"]["namespaces"]) == 5 and mid_run["ours"]["links"] == []
    assert mid_run["root"] == root_before == _root_network()

    # Same records as the simulator; the summary says it was emulated and shortened.
    assert list(emu.flows.columns) == [f.name for f in FLOW_SCHEMA] == list(sim.flows.columns)
    assert [str(t) for t in emu.flows.dtypes] == [str(t) for t in sim.flows.dtypes]
    assert list(emu.links.columns) == list(sim.links.columns) and list(emu.pages.columns) == list(sim.pages.columns)
    s = emu.summary
    assert s["mode"] == "emulated" and s["shortened"] and s["time_scale"] == pytest.approx(RUN_SECONDS / 30)
    for name in ("flows.parquet", "pages.parquet", "links.parquet", "queues.parquet", "summary.json", "scenario.toml"):
        assert (tmp_path / name).exists()
    assert s["congestion_control"] == ["reno"]  # set per socket, read back with TCP_CONGESTION

    # Every flow completed, without loss.
    f = emu.flows
    assert len(f) == 32 and f["completed"].all() and (f["retransmits"] == 0).all() and (f["timeouts"] == 0).all()
    assert set(zip(f["iw_segments"], f["response_bytes"])) == {(float(w), k * MSS) for w in (3, 10) for k in SIZES}

    # The kernel's first flight is the IW: captured at each server's own interface. The
    # client's address says which IW the server was to use (198.19.0.0 + 1024·w + g).
    seen = []
    for host in ("right-0", "right-1"):
        conns = pcap.connections(tmp_path / f"capture-{host}.pcap")
        assert len(conns) == 16, host
        for c in conns:
            iw = (int(ipaddress.IPv4Address(c.client[0])) - int(ipaddress.IPv4Address("198.19.0.0"))) // 1024
            segs = math.ceil(c.data_bytes / MSS)
            assert segs in SIZES and c.first_flight == min(iw, segs), (host, c)
            seen.append((host, iw))
    assert sorted(set(seen)) == [("right-0", 3), ("right-0", 10), ("right-1", 3), ("right-1", 10)]

    # Completion times within 10 % of the simulator's (medians per size and IW).
    def medians(r):
        g = r.flows[r.flows["completed"]].groupby(["response_bytes", "iw_segments"])["completion"]
        return g.median().astype(float).to_dict()

    me, ms = medians(emu), medians(sim)
    assert set(me) == set(ms)
    diffs = {k: (me[k] - ms[k]) / ms[k] for k in ms}
    print("relative differences (emulated - simulated) / simulated:",
          {f"{k[0] // MSS}seg IW{k[1]:g}": f"{100 * v:+.1f}%" for k, v in sorted(diffs.items())})
    assert all(abs(d) < 0.10 for d in diffs.values()), diffs
    # IW10 beats IW3 by the rounds the closed form says (RFC 6928 §5.1 with an ACK per segment).
    assert me[(10 * MSS, 10.0)] < me[(10 * MSS, 3.0)] - 0.15


def _start_cli(tmp_path: Path, *args: str) -> subprocess.Popen:
    f = tmp_path / "long.toml"
    f.write_text(IW_SCENARIO.replace("flows = 4", "flows = 100"))
    return subprocess.Popen([sys.executable, "-c", "from iwlab.cli import main; main()", "emulate", str(f), *args],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True)


def _wait_running(p: subprocess.Popen, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        line = p.stdout.readline()
        if "running" in line:
            return
        if not line and p.poll() is not None:
            break
    p.kill()
    raise AssertionError(f"the emulator did not start: {p.stdout.read()}")


@pytest.mark.netns
@pytest.mark.timeout(120)
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_tears_everything_down(emulation_ready, tmp_path, sig):
    p = _start_cli(tmp_path, "--duration", "25s")
    _wait_running(p)
    assert len(_ours(p.pid)["namespaces"]) == 5
    p.send_signal(sig)
    p.wait(30)
    p.stdout.close()
    assert p.returncode != 0
    assert _ours(p.pid) == {"namespaces": [], "links": [], "processes": [], "rundir": []}


@pytest.mark.netns
@pytest.mark.timeout(120)
def test_cleanup_removes_what_a_killed_run_left(emulation_ready, tmp_path):
    p = _start_cli(tmp_path, "--duration", "25s")
    _wait_running(p)
    p.kill()  # no chance to tidy up
    p.wait(10)
    p.stdout.close()
    left = _ours(p.pid)
    assert len(left["namespaces"]) == 5
    r = subprocess.run([sys.executable, "-c", "from iwlab.cli import main; main()", "emulate", "--cleanup"],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert f"namespace iwl{p.pid}-router" in r.stdout
    deadline = time.monotonic() + 5
    while _ours(p.pid)["processes"] and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _ours(p.pid) == {"namespaces": [], "links": [], "processes": [], "rundir": []}


@pytest.mark.netns
@pytest.mark.timeout(120)
def test_an_error_during_the_run_tears_everything_down(emulation_ready, monkeypatch):
    from iwlab.emulate import emulate
    from iwlab.emulate.run import EmulationError

    monkeypatch.setenv("IWLAB_LINK", shutil.which("false") or "/bin/false")  # the relay dies at once
    with pytest.raises(EmulationError, match="relay exited"):
        emulate(scenario(), duration=2.0)
    assert _ours(os.getpid()) == {"namespaces": [], "links": [], "processes": [], "rundir": []}


@pytest.mark.netns
@pytest.mark.timeout(180)
def test_compare_prints_both_side_by_side(emulation_ready, tmp_path):
    from iwlab.emulate.compare import compare

    c = compare(scenario(IW_SCENARIO.replace("flows = 4", "flows = 1")), seeds=1, duration=3.0, out=tmp_path)
    g = c.groups
    assert len(g) == 8 and (g["n_sim"] == 1).all() and (g["n_emu"] == 1).all()
    assert (g["median_rel"].abs() < 0.10).all(), g
    text = c.text()
    assert "13032 B" in text and "median sim" in text and "bottleneck utilisation" in text
    for name in ("compare-cdf.png", "compare-groups.csv", "compare-metrics.csv", "compare.json", "compare.txt"):
        assert (tmp_path / name).stat().st_size > 0
    assert (tmp_path / "emulated-seed7" / "flows.parquet").exists()


def test_link_jitter_is_noted_not_added_by_the_relay():
    data = iwlab.load("congested-links").data
    data["topology"]["jitter"] = "200us"
    plan = build_plan(iwlab.Scenario.from_data(data, "jittered"), duration=3.0, pid=1)
    assert any(n.startswith("topology.jitter = 200us: not added by the relay") for n in plan.notes)

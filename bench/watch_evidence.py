"""Benchmark of `iwlab watch`'s evidence sources at 1 000 and 10 000 connections/s (root).

    .venv/bin/python bench/watch_evidence.py [--rates 1000,10000] [--seconds 10] [--sources bpf,poll]
                                             [--policy fallback|aimd]

Two namespaces joined by a veth: a server (bench/connload/connload.c `serve`, 1 000-byte
responses) in a cgroup of its own, and a client (`connload load`) opening connections at a fixed
rate. For each source and rate: `iwlab apply` (rfc6928-fallback on the client's prefix, or `--policy`), `iwlab
watch --source S --cgroup …` (a subprocess, as in production), the load, then `iwlab watch status`.
`--policy aimd` puts an aimd policy on the prefix instead: the bpf reader then passes every close
to the watcher (aimd learns from each), the cost of the per-connection path.
Reported: the watcher's CPU (user + system from /proc/PID/stat, the watcher and its iwlab-bpf
child, from the start of the load until the watcher has caught up) per second of load, and the connections the watcher counted against
those the client completed (missed = completed − counted). Writes bench/watch_evidence.json.
Everything (namespaces, cgroup, temp dir, processes) is removed at the end, also on failure.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
IWLAB = Path(sys.executable).with_name("iwlab")
CGROUP_ROOT = Path(os.environ.get("IWLAB_CGROUP2", "/sys/fs/cgroup/unified"))
P = f"{os.environ.get('IWLAB_BENCH_PREFIX', 'iwb')}{os.getpid()}"  # namespaces, cgroup, temp dir
NS_S, NS_C, CGROUP = f"{P}s", f"{P}c", f"{P}cg"
SERVER, CLIENT = "10.79.1.1", "10.79.2.1"
PORT = 8080
# --policy: rfc6928-fallback learns only from IW loss (the bpf reader sums its clean closes);
# aimd learns from every close (a line per connection, as before the sums)
POLICIES = {"fallback": '{ kind = "rfc6928-fallback", expiry = "600s" }',
            "aimd": '{ kind = "aimd", initial = 10, min = 2, max = 10, step = 1, raise_after = 100 }'}
POLICY = """
[iw.policies]
p = {spec}

[[routes]]
prefix = "10.79.2.0/24"
policy = "p"
"""


def sh(*args: str, check: bool = True) -> subprocess.CompletedProcess:
    r = subprocess.run(args, capture_output=True, text=True)
    if check and r.returncode != 0:
        raise RuntimeError(f"{' '.join(args)}: {r.stderr.strip()}")
    return r


def cpu_ticks(pid: int) -> int:
    try:
        f = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0
    return int(f[11]) + int(f[12])  # utime, stime (fields 14 and 15)


def tree(pid: int) -> list[int]:
    out = [pid]
    try:
        for child in Path(f"/proc/{pid}/task/{pid}/children").read_text().split():
            out += tree(int(child))
    except OSError:
        pass
    return out


def setup(tmp: Path) -> Path:
    for ns in (NS_S, NS_C):
        sh("ip", "netns", "add", ns)
        sh("ip", "-n", ns, "link", "set", "lo", "up")
    sh("ip", "-n", NS_S, "link", "add", "s0", "type", "veth", "peer", "name", "c0", "netns", NS_C)
    sh("ip", "-n", NS_S, "addr", "add", f"{SERVER}/24", "dev", "s0")
    sh("ip", "-n", NS_C, "addr", "add", "10.79.1.2/24", "dev", "c0")
    sh("ip", "-n", NS_C, "addr", "add", f"{CLIENT}/32", "dev", "lo")
    for ns, dev in ((NS_S, "s0"), (NS_C, "c0")):
        sh("ip", "-n", ns, "link", "set", dev, "up")
    sh("ip", "-n", NS_S, "route", "add", "10.79.2.0/24", "via", "10.79.1.2")
    sh("ip", "-n", NS_C, "route", "add", f"{SERVER}/32", "dev", "c0", "src", CLIENT)
    # 10 000/s for 10 s = 100 000 client ports; the server closes first, so TIME_WAIT is its own
    sh("ip", "netns", "exec", NS_C, "sysctl", "-qw", "net.ipv4.ip_local_port_range=1024 65535")
    sh("ip", "netns", "exec", NS_S, "sysctl", "-qw", "net.core.somaxconn=4096")
    sh("ip", "netns", "exec", NS_S, "sysctl", "-qw", "net.ipv4.tcp_max_syn_backlog=8192")
    exe = tmp / "connload"
    sh("cc", "-O2", "-Wall", "-o", str(exe), str(HERE / "connload" / "connload.c"))
    (CGROUP_ROOT / CGROUP).mkdir()
    return exe


def teardown(procs: list[subprocess.Popen]) -> None:
    for p in procs:
        if p.poll() is None:
            p.kill()
            p.wait()
    cg = CGROUP_ROOT / CGROUP
    if cg.exists():
        for pid in (cg / "cgroup.procs").read_text().split():
            os.kill(int(pid), signal.SIGKILL)
        for _ in range(100):
            if not (cg / "cgroup.procs").read_text().strip():
                break
            time.sleep(0.05)
        cg.rmdir()
    for ns in (NS_S, NS_C):
        sh("ip", "netns", "del", ns, check=False)


def scenario(exe: Path, tmp: Path, source: str, rate: int, seconds: float, kind: str) -> dict:
    state, policy = tmp / f"state-{source}-{rate}.sqlite", tmp / "policy.toml"
    policy.write_text(POLICY.format(spec=POLICIES[kind]))
    sh(str(IWLAB), "apply", str(policy), "--netns", NS_S, "--state", str(state))
    w = subprocess.Popen([str(IWLAB), "watch", "--netns", NS_S, "--state", str(state), "--source", source,
                          "--cgroup", CGROUP], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = w.stdout.readline()
        if "watching" not in line:
            raise RuntimeError(f"watcher did not start: {line}{w.stderr.read()}")
        time.sleep(1.0)
        pids = tree(w.pid)
        c0 = sum(cpu_ticks(p) for p in pids)
        t0 = time.monotonic()
        out = sh("ip", "netns", "exec", NS_C, str(exe), "load", SERVER, str(PORT), str(rate), str(seconds)).stdout
        load = json.loads(out)
        wall = time.monotonic() - t0
        # until the watcher has caught up (less than 2 % of a core for a second), at most 60 s:
        # its CPU for these connections includes what it does after the load
        c1, deadline = sum(cpu_ticks(p) for p in pids), time.monotonic() + 60
        while time.monotonic() < deadline:
            time.sleep(1.0)
            c = sum(cpu_ticks(p) for p in pids)
            if c - c1 <= 2:
                break
            c1 = c
        time.sleep(1.5)  # one more flush of its counters
    finally:
        w.send_signal(signal.SIGTERM)
        _, err = w.communicate(timeout=60)
    status = json.loads(sh(str(IWLAB), "watch", "status", "--netns", NS_S, "--state", str(state), "--json").stdout)
    sh(str(IWLAB), "rollback", "--netns", NS_S, "--state", str(state))
    counted = sum(p["connections"] for p in status["prefixes"])
    hz = os.sysconf("SC_CLK_TCK")
    return {"source": source, "policy": kind, "rate": rate, "seconds": round(wall, 2), "rate_achieved": round(load["completed"] / wall), "completed": load["completed"],
            "failed": load["failed"], "failures": {k: load[k] for k in ("no_socket", "refused", "reset")}, "unfinished": load["unfinished"], "counted": counted,
            "missed": load["completed"] - counted, "cpu_cores": round((c1 - c0) / hz / wall, 3),
            "cpu_us_per_connection": round((c1 - c0) / hz / max(1, load["completed"]) * 1e6, 1),
            "iw_loss_events": sum(p["iw_loss_events"] for p in status["prefixes"]),
            "watcher_log_tail": err.strip().splitlines()[-3:]}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rates", default="1000,10000")
    ap.add_argument("--seconds", type=float, default=10.0)
    ap.add_argument("--sources", default="bpf,poll")
    ap.add_argument("--policy", default="fallback", choices=sorted(POLICIES))
    ap.add_argument("--out", default=str(HERE / "watch_evidence.json"))
    a = ap.parse_args()
    if os.geteuid() != 0:
        print("watch_evidence: needs root (namespaces, cgroup, BPF)", file=sys.stderr)
        return 2
    tmp = Path(tempfile.mkdtemp(prefix=f"{P}-"))
    results = []
    try:
        # fresh namespaces for each run: the TIME_WAIT sockets of one run (the server closes
        # first) would otherwise be in every INET_DIAG dump of the next
        for source in a.sources.split(","):
            for rate in (int(r) for r in a.rates.split(",")):
                procs: list[subprocess.Popen] = []
                try:
                    exe = setup(tmp)
                    cg = CGROUP_ROOT / CGROUP
                    server = subprocess.Popen(
                        ["ip", "netns", "exec", NS_S, str(exe), "serve", SERVER, str(PORT), "1000"],
                        stdout=subprocess.PIPE, text=True,
                        preexec_fn=lambda: (cg / "cgroup.procs").write_text(str(os.getpid())))
                    procs.append(server)
                    assert server.stdout.readline().strip() == "listening"
                    r = scenario(exe, tmp, source, rate, a.seconds, a.policy)
                    r["load_average"] = os.getloadavg()
                finally:
                    teardown(procs)
                results.append(r)
                print(json.dumps(r), flush=True)
        report = {"cpus": os.cpu_count(), "results": results,
                  "command": " ".join([Path(sys.executable).name, *sys.argv])}
        Path(a.out).write_text(json.dumps(report, indent=1) + "\n")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

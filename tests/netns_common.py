"""Helpers of the tests that change a real kernel in namespaces of their own (marker `deploy`)."""

from __future__ import annotations

import os
import signal
import subprocess
from pathlib import Path


def run(*cmd: str, check: bool = True, env: dict | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
    """Runs a command; with `check`, a non-zero exit fails the test with its output."""
    r = subprocess.run(list(cmd), capture_output=True, text=True, timeout=timeout, env=env)
    if check and r.returncode != 0:
        raise AssertionError(f"{' '.join(cmd)} exited {r.returncode}: {r.stdout}{r.stderr.strip()}")
    return r


def delete_namespaces(*names: str) -> None:
    """Kills what runs in these namespaces and deletes them (those that exist)."""
    for ns in names:
        if (Path("/run/netns") / ns).exists():
            for pid in run("ip", "netns", "pids", ns, check=False).stdout.split():
                try:
                    os.kill(int(pid), signal.SIGKILL)
                except ProcessLookupError:
                    pass
            run("ip", "netns", "del", ns, check=False)


def children() -> set[int]:
    """Process ids of this test process's children now (other modules' long-lived helpers, such
    as multiprocessing's resource tracker, are there before a module starts and stay after it)."""
    import psutil

    return {p.pid for p in psutil.Process().children(recursive=True)}


def leftovers(prefix: str, before: set[int] = frozenset()) -> tuple[list[str], list[list[str]]]:
    """Namespaces named `prefix…` and child processes of this test process still alive that
    were not already there (`before`, from `children()`)."""
    import psutil

    names = [n for n in run("ip", "netns", "list").stdout.split() if n.startswith(prefix)]
    return names, [p.cmdline() for p in psutil.Process().children(recursive=True) if p.pid not in before]


DELAY_LINE = Path(__file__).with_name("delay_line.py")


def start_delay_line(ns_a: str, dev_a: str, ns_b: str, dev_b: str, delay_ms: int) -> subprocess.Popen:
    """tests/delay_line.py between two namespaces; returns once its TUN devices exist."""
    import sys

    p = subprocess.Popen([sys.executable, str(DELAY_LINE), ns_a, dev_a, ns_b, dev_b, str(delay_ms)],
                         stdout=subprocess.PIPE, text=True)
    assert p.stdout.readline().strip() == "ready"
    return p


def stop_delay_line(p: subprocess.Popen | None) -> None:
    if p is not None:
        p.terminate()
        p.wait(timeout=10)
        p.stdout.close()


#: One end of a veth pair, v0 at 10.77.1.1/24 with the default route through 10.77.1.2; no
#: link-local addresses (and routes) appearing while a test runs.
VETH = (["link", "set", "lo", "up"], ["link", "add", "v0", "type", "veth", "peer", "name", "v1"],
        ["link", "set", "v0", "addrgenmode", "none"], ["link", "set", "v1", "addrgenmode", "none"],
        ["addr", "add", "10.77.1.1/24", "dev", "v0"], ["link", "set", "v0", "up"], ["link", "set", "v1", "up"],
        ["route", "add", "default", "via", "10.77.1.2"])


def veth_pair(make, ns_a: str, ns_b: str, dev_a: str, dev_b: str, v4: str, v6: str) -> None:
    """Namespaces `ns_a` (host 1) and `ns_b` (host 2) joined by a veth pair, on `v4`.0/24 and `v6`::/64."""
    make(ns_a)
    make(ns_b)
    run("ip", "-n", ns_a, "link", "add", dev_a, "type", "veth", "peer", "name", dev_b, "netns", ns_b)
    for ns, dev, host in ((ns_a, dev_a, 1), (ns_b, dev_b, 2)):
        for cmd in (["link", "set", "lo", "up"], ["addr", "add", f"{v4}.{host}/24", "dev", dev],
                    ["addr", "add", f"{v6}{host}/64", "dev", dev, "nodad"], ["link", "set", dev, "up"]):
            run("ip", "-n", ns, *cmd)


def delay_line_pair(make, ns_s: str, dev_s: str, ns_c: str, dev_c: str, delay_ms: int, service: str, client: str,
                    server_route: tuple[str, ...] = ()) -> subprocess.Popen:
    """Server namespace ⇄ delay line (`delay_ms` each way) ⇄ client namespace, made with `make`
    (the `namespace` fixture); addresses on lo, GSO off, the server's route to the client with
    `server_route` added. Returns the delay line (stopped here if the set-up fails)."""
    for ns in (ns_s, ns_c):
        make(ns, ["link", "set", "lo", "up"])
        run("ip", "netns", "exec", ns, "sysctl", "-qw", "net.ipv4.conf.all.rp_filter=0")
    line = start_delay_line(ns_s, dev_s, ns_c, dev_c, delay_ms)
    try:
        for ns, dev, own in ((ns_s, dev_s, service), (ns_c, dev_c, client)):
            run("ip", "-n", ns, "addr", "add", f"{own}/32", "dev", "lo")
            run("ip", "-n", ns, "link", "set", dev, "up")
            run("ip", "netns", "exec", ns, "ethtool", "-K", dev, "gso", "off", check=False)
        run("ip", "-n", ns_s, "route", "add", f"{client}/32", "dev", dev_s, "src", service, *server_route)
        run("ip", "-n", ns_c, "route", "add", "default", "dev", dev_c, "src", client)
    except BaseException:
        stop_delay_line(line)
        raise
    return line


def fetch(ns: str, server: str, port: int) -> int:
    """Bytes received by a client in `ns` that connects to `server:port`, sends `GET` and reads
    until the server closes."""
    import socket

    from iwlab.deploy import netlink

    with netlink.in_netns(ns):
        c = socket.create_connection((server, port), timeout=10)
    with c:
        c.sendall(b"GET\n")
        got = 0
        while chunk := c.recv(65536):
            got += len(chunk)
    return got


def kill_cgroup(cg: Path) -> None:
    """Kills the processes of cgroup `cg` (cgroup.kill) and waits up to 2 s for it to empty."""
    import time

    if (cg / "cgroup.kill").exists():
        (cg / "cgroup.kill").write_text("1")
    for _ in range(100):
        if not cg.exists() or not (cg / "cgroup.procs").read_text().split():
            return
        time.sleep(0.02)

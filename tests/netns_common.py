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

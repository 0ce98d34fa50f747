"""The rule that keeps the kernel quiet for the prober's connections.

The prober's TCP lives in user space, so the kernel knows no socket for its packets and answers
the server's SYN-ACK and every data segment with a RST (tcp_v4_send_reset / tcp_v6_send_reset).
One nftables table per prober process, `iwlab_probe_<pid>` (family inet: IPv4 and IPv6), drops
every TCP packet leaving the namespace from a port in its set `ports` unless it carries the
prober's own packet mark (`SO_MARK` on its raw sockets; the kernel's RSTs carry none). The table
is deleted when the prober ends — also on SIGINT/SIGTERM; a table left by a process that was
killed (`kill -9`) is deleted by the next prober in that namespace (its pid is gone).

nftables (Debian package `nftables`, `make deps-probe`) is driven through `nft -f -` (a script
on stdin) and read back with `nft -j` (JSON), never by parsing its text output.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import threading

from iwlab.probe.errors import ProbeError
from iwlab.workers import pid_alive as _alive

TABLE_PREFIX = "iwlab_probe_"
MARK = 0x1A0B  # the prober's packets (SO_MARK); any value no other rule of the host uses


def _nft() -> str:
    path = shutil.which("nft") or ("/usr/sbin/nft" if os.path.exists("/usr/sbin/nft") else None)
    if path is None:
        raise ProbeError("nft not found: iwlab probe needs nftables (Debian package `nftables`; `make deps-probe`)")
    return path


def _run(args: list[str], script: str | None = None) -> str:
    r = subprocess.run([_nft(), *args], input=script, capture_output=True, text=True, timeout=30)
    if r.returncode != 0:
        msg = " ".join(r.stderr.split()) or f"exit {r.returncode}"
        if "Operation not permitted" in msg:
            raise PermissionError(f"nft: {msg} (iwlab probe needs root: raw sockets and an nftables rule)")
        raise ProbeError(f"nft {' '.join(args)}: {msg}")
    return r.stdout


def tables() -> list[str]:
    """Names of the prober tables in this namespace."""
    out = json.loads(_run(["-j", "list", "tables", "inet"]) or '{"nftables": []}')
    return [t["table"]["name"] for t in out.get("nftables", []) if "table" in t
            and t["table"]["name"].startswith(TABLE_PREFIX)]


class RstGuard:
    """`with RstGuard() as g: g.add(port) … g.remove(port)`: the table exists inside the block."""

    def __init__(self) -> None:
        self.table = f"{TABLE_PREFIX}{os.getpid()}"
        self._lock = threading.Lock()
        self._open = False

    def __enter__(self) -> "RstGuard":
        stale = [t for t in tables() if t[len(TABLE_PREFIX):].isdigit() and t != self.table
                 and not _alive(int(t[len(TABLE_PREFIX):]))]
        script = "".join(f"delete table inet {t}\n" for t in stale)
        script += (f"add table inet {self.table}\n"
                   f"add set inet {self.table} ports {{ type inet_service; }}\n"
                   f"add chain inet {self.table} out {{ type filter hook output priority 0; policy accept; }}\n"
                   f"add rule inet {self.table} out meta l4proto tcp tcp sport @ports meta mark != {MARK:#x} drop\n")
        _run(["-f", "-"], script)
        self._open = True
        return self

    def add(self, port: int) -> None:
        with self._lock:
            _run(["add", "element", "inet", self.table, "ports", f"{{ {port} }}"])

    def remove(self, port: int) -> None:
        with self._lock:
            if self._open:
                _run(["delete", "element", "inet", self.table, "ports", f"{{ {port} }}"])

    def __exit__(self, *exc) -> None:
        with self._lock:
            if self._open:
                self._open = False
                _run(["delete", "table", "inet", self.table])

"""A two-way delay line between two network namespaces, for tests that count first flights.

    python tests/delay_line.py NS_A TUN_A NS_B TUN_B DELAY_MS

Opens TUN device TUN_A in namespace NS_A and TUN_B in NS_B (the devices live while this
process does), prints `ready`, then writes every packet read from one into the other DELAY_MS
later, in order. This kernel has no netem, and a veth has no delay: without one, the first
ACK of data comes back while the sender is still sending its first flight, and a capture can
no longer tell the flights apart. Standard library only; exits on SIGTERM or when its parent
dies.
"""

from __future__ import annotations

import ctypes
import fcntl
import heapq
import os
import select
import signal
import struct
import sys
import time

TUNSETIFF = 0x400454CA
IFF_TUN, IFF_NO_PI = 0x0001, 0x1000
CLONE_NEWNET = 0x40000000
PR_SET_PDEATHSIG = 1


def open_tun(netns: str, name: str) -> int:
    """A TUN fd for device `name`, created in namespace `netns` (setns applies to this thread)."""
    libc = ctypes.CDLL(None, use_errno=True)
    ns = os.open(f"/run/netns/{netns}", os.O_RDONLY)
    try:
        if libc.setns(ns, CLONE_NEWNET) != 0:
            raise OSError(ctypes.get_errno(), f"setns {netns}")
    finally:
        os.close(ns)
    fd = os.open("/dev/net/tun", os.O_RDWR)
    fcntl.ioctl(fd, TUNSETIFF, struct.pack("16sH", name.encode(), IFF_TUN | IFF_NO_PI))
    os.set_blocking(fd, False)
    return fd


def main(ns_a: str, tun_a: str, ns_b: str, tun_b: str, delay_ms: str) -> None:
    ctypes.CDLL(None).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    a, b = open_tun(ns_a, tun_a), open_tun(ns_b, tun_b)
    peer = {a: b, b: a}
    delay = float(delay_ms) / 1000
    queue: list[tuple[float, int, int, bytes]] = []  # (due, seq, out fd, packet)
    seq = 0
    print("ready", flush=True)
    while True:
        timeout = max(0.0, queue[0][0] - time.monotonic()) if queue else None
        readable, _, _ = select.select([a, b], [], [], timeout)
        now = time.monotonic()
        for fd in readable:
            while True:
                try:
                    pkt = os.read(fd, 65536)
                except BlockingIOError:
                    break
                heapq.heappush(queue, (now + delay, seq, peer[fd], pkt))
                seq += 1
        while queue and queue[0][0] <= time.monotonic():
            _, _, out, pkt = heapq.heappop(queue)
            try:
                os.write(out, pkt)
            except OSError:  # device down: the packet is lost, as on a real link
                pass


if __name__ == "__main__":
    main(*sys.argv[1:6])

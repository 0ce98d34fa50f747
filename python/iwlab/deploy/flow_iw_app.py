"""Per-flow IW, the application's side: tell the kernel the IW of the connection you are about
to send on (draft-you's IW as a function of the flow size).

    from iwlab.deploy.flow_iw_app import FlowSizePolicy, set_flow_size

    policy = FlowSizePolicy("policy.toml")        # once
    conn, _ = listener.accept()
    request = conn.recv(...)                       # now the response size is known
    set_flow_size(conn, len(body), policy)         # IW(s) from the simulator's own policy code
    conn.sendall(body)

The process must run in a cgroup where `iwlab flow-iw attach` put iwlab's programs (`iwlab
flow-iw exec --cgroup NAME -- CMD` starts a command there). Call it after connect()/accept()
and before the first write: once data has been sent the kernel refuses (EINVAL). Without the
programs the call fails with ENOPROTOOPT; both come back as `OSError` with a message saying so.
No root needed. Standard library only, besides the policy code.
"""

from __future__ import annotations

import errno
import socket
import struct
import time
from pathlib import Path

# bpf/flow_iw.h IWLAB_TCP_FLOW_IW: the private setsockopt(IPPROTO_TCP, …) name the cgroup/setsockopt
# program turns into TCP_BPF_IW (a test checks the two agree).
TCP_FLOW_IW = 0x49570001


def set_flow_iw(sock: socket.socket, segments: int) -> None:
    """Sets the connection's initial window to `segments` (before its first write)."""
    if isinstance(segments, bool) or not isinstance(segments, int) or segments < 1:
        raise ValueError(f"segments = {segments!r}: allowed an integer >= 1")
    try:
        sock.setsockopt(socket.IPPROTO_TCP, TCP_FLOW_IW, struct.pack("=I", segments))
    except OSError as e:
        if e.errno == errno.ENOPROTOOPT:
            raise OSError(e.errno, "per-flow IW unavailable: this process's cgroup has no iwlab flow-iw "
                                   "programs (`iwlab flow-iw attach --cgroup NAME`, then run the application "
                                   "with `iwlab flow-iw exec --cgroup NAME -- …`)") from None
        if e.errno == errno.EINVAL:
            raise OSError(e.errno, f"IW {segments} refused: above the cgroup's max_iw (`iwlab flow-iw status`), "
                                   "or the connection has already sent data (set it after connect()/accept(), "
                                   "before the first write)") from None
        raise


def mss_of(sock: socket.socket) -> int:
    """The connection's MSS (TCP_MAXSEG of a connected socket: payload bytes per segment)."""
    return sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_MAXSEG)


class FlowSizePolicy:
    """IW for a flow of a given size towards a peer, decided by the simulator's own `IwPolicy`
    code: the policy of the file's route covering the peer (longest prefix), through the
    Decider of `iwlab.policy`."""

    def __init__(self, policy_file: str | Path):
        from iwlab.policy import Decider, load_policy

        self.file = load_policy(policy_file)
        self._decider = Decider(self.file)

    def route(self, peer: str):
        """The file's route whose prefix covers `peer` (longest prefix, the default route last), or None."""
        return self.file.route_for(peer)

    def segments(self, nbytes: int | None, mss: int, peer: str) -> int:
        """IW (segments) for a flow of `nbytes` bytes (None: undeclared) to `peer`."""
        r = self.route(peer)
        if r is None:
            raise LookupError(f"no route of {self.file.path} covers {peer}")
        return self._decider.iw_segments(r.key, mss, time.time_ns(), declared_size=nbytes)


def set_flow_size(sock: socket.socket, nbytes: int, policy: FlowSizePolicy) -> int:
    """Sets the IW the policy gives a flow of `nbytes` to this socket's peer; returns it (segments)."""
    peer = sock.getpeername()[0]
    segments = policy.segments(nbytes, mss_of(sock), peer)
    set_flow_iw(sock, segments)
    return segments

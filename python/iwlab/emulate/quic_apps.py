"""QUIC applications in the emulator: the stack settings of an app with `transport = "quic"`
(the simulator's `[quic]` rules, crates/iwlab-core/src/scenario/quic.rs) and the real QUIC
endpoint that runs them — aioquic (`quic_peer.py`) or quinn (`crates/iwlab-quic-peer`), both
speaking the wire protocol described in `quic_peer.py`.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from iwlab.emulate.errors import PlanError
from iwlab.emulate.units import size_bytes

PEER = Path(__file__).with_name("quic_peer.py")
STACKS = ("aioquic", "quinn")
HEADER_BYTES = 16  # the request's header: response size and flow number (quic_peer.py)
MIN_DATAGRAM = 1200  # RFC 9000 §14
DEFAULT_CHAIN = 4000  # crates/iwlab-core/src/quic/crypto.rs DEFAULT_CHAIN_BYTES
PROFILE_CC = {"quinn": "cubic", "rfc9002": "reno"}  # crates/iwlab-core/src/quic/config.rs
STACK_CCS = {"aioquic": ("reno", "cubic"), "quinn": ("reno", "cubic", "bbr")}


def rfc9002_initial_window(mds: int) -> int:
    """RFC 9002 §7.2: min(10 × max_datagram_size, max(14 720, 2 × max_datagram_size))."""
    return min(10 * mds, max(14_720, 2 * mds))


def peer_command(stack: str) -> list[str]:
    """The program of a QUIC endpoint of `stack` (its role and options follow)."""
    if stack == "aioquic":
        return [sys.executable, str(PEER)]
    if stack == "quinn":
        from iwlab.binaries import find_binary

        found = find_binary("iwlab-quic-peer", "IWLAB_QUIC_PEER")
        if found is None:
            raise PlanError("iwlab-quic-peer not found: build it with `cargo build --release -p iwlab-quic-peer` "
                            "or set IWLAB_QUIC_PEER to its path")
        return [str(found)]
    raise PlanError(f"quic_stack = {stack!r} is not allowed; allowed: {', '.join(STACKS)}")


def quic_settings(data: dict[str, Any], app: dict[str, Any], path: str, stack: str, request: int,
                  port: int) -> dict[str, Any]:
    """The app's QUIC settings (its `quic` table over `[quic]`, field by field) for `stack`, and
    the command lines of its server (listening on `port`) and client endpoints."""
    top, own = data.get("quic") or {}, app.get("quic") or {}

    def pick(key: str) -> tuple[Any, str]:
        if own.get(key) is not None:
            return own[key], f"{path}.quic.{key}"
        return top.get(key), f"quic.{key}"

    peer = peer_command(stack)
    if request < HEADER_BYTES:
        raise PlanError(f"{path}.request = {request} B cannot be emulated with transport = \"quic\"; expected >= "
                        f"{HEADER_BYTES} B (the request carries the response size and the flow's number)")
    profile, _ = pick("profile")
    profile = profile or "quinn"
    mds, _ = pick("max_datagram_size")
    mds = int(mds or MIN_DATAGRAM)
    iw, iw_path = pick("initial_window")
    if iw is None:
        iw_bytes = rfc9002_initial_window(mds)
    elif isinstance(iw, str) and iw.strip().endswith(("pkt", "pkts", "packets", "datagrams")):
        n = iw.strip().rstrip("abcdefghijklmnopqrstuvwxyz").strip()
        iw_bytes = int(n) * mds
    else:
        iw_bytes = size_bytes(iw, None, iw_path)
    chain, chain_path = pick("certificate_chain")
    chain = DEFAULT_CHAIN if chain is None else size_bytes(chain, None, chain_path)
    cc, cc_path = pick("cc")
    cc = {"newreno": "reno"}.get(cc, cc) if cc is not None else PROFILE_CC[profile]
    if cc not in STACK_CCS[stack]:
        raise PlanError(f"{cc_path} = {cc!r} cannot be emulated on {stack}; it has {', '.join(STACK_CCS[stack])}")
    q = {"stack": stack, "profile": profile, "iw": iw_bytes, "mds": mds, "chain": chain, "cc": cc}
    opts = ["--iw", str(iw_bytes), "--mds", str(mds), "--cc", cc]
    # The agent appends the server's record file to `server_args`.
    return dict(q, server_args=[*peer, "server", "--listen", f"0.0.0.0:{port}", *opts, "--chain", str(chain), "--log"],
                client_args=[*peer, "client", *opts])

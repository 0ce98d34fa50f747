"""An HTTP/3 server with a known initial window, for `iwlab probe --quic` tests (aioquic).

    python quic_server.py PORT IW_BYTES [--host ::] [--datagram 1200] [--names 1] [--size 1048576] [--retry]

Its congestion controller is aioquic's NewReno with the window starting at IW_BYTES, registered
under its own name (`register_congestion_control`), or aioquic's own "reno" unchanged when
IW_BYTES is "default"; every request gets SIZE bytes. The
certificate (ECDSA P-256, self-signed, made at start) carries NAMES subjectAltNames: ~40 bytes
each, which is how a test makes the handshake flight larger than 3× the client's Initial.
Prints "ready" once it listens.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime

from aioquic.asyncio import serve
from aioquic.h3.connection import H3_ALPN
from aioquic.quic.configuration import QuicConfiguration
from aioquic.quic.congestion.base import register_congestion_control
from aioquic.quic.congestion.reno import RenoCongestionControl
from cryptography import x509
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from iwlab.lab_h3 import Server as LabServer


def controller(iw: int):
    class FixedIw(RenoCongestionControl):
        def __init__(self, *, max_datagram_size: int) -> None:
            super().__init__(max_datagram_size=max_datagram_size)
            self.congestion_window = iw  # RFC 9002 §7.2: the window at the start, in bytes

    return FixedIw


def certificate(names: int):
    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "quic.probe.test")])
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (x509.CertificateBuilder().subject_name(subject).issuer_name(subject).public_key(key.public_key())
            .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(days=1))
            .not_valid_after(now + datetime.timedelta(days=2))
            .add_extension(x509.SubjectAlternativeName(
                [x509.DNSName(f"host-{i:04d}.quic.probe.test") for i in range(names)]), critical=False)
            .sign(key, hashes.SHA256()))
    return cert, key


class Server(LabServer):
    """Every request gets `size` zero bytes, whatever its path."""

    size = 1 << 20

    def body(self, path: bytes) -> bytes:
        return bytes(self.size)


async def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("port", type=int)
    ap.add_argument("iw")
    ap.add_argument("--host", default="::")
    ap.add_argument("--datagram", type=int, default=1200)
    ap.add_argument("--names", type=int, default=1)
    ap.add_argument("--size", type=int, default=1 << 20)
    ap.add_argument("--retry", action="store_true", help="validate addresses with a Retry (RFC 9000 §8.1.2)")
    a = ap.parse_args()
    name = "reno" if a.iw == "default" else f"iw{a.iw}"
    if a.iw != "default":
        register_congestion_control(name, controller(int(a.iw)))
    cert, key = certificate(a.names)
    config = QuicConfiguration(is_client=False, alpn_protocols=H3_ALPN, congestion_control_algorithm=name,
                               max_datagram_size=a.datagram, certificate=cert, private_key=key)
    Server.size = a.size
    await serve(a.host, a.port, configuration=config, create_protocol=Server, retry=a.retry)
    print("ready", flush=True)
    await asyncio.Future()


if __name__ == "__main__":
    asyncio.run(main())

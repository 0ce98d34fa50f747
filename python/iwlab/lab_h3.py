"""The lab's HTTP/3 server (`iwlab lab up --quic`): aioquic as it comes — its NewReno with the
initial window of RFC 9002 §7.2, 10 × 1 200 B = 12 000 B — serving the files of a directory on
UDP, so that `iwlab probe --quic` has a server of known IW on the lab's web host.

    python -m iwlab.lab_h3 --port 443 --directory DIR

The certificate is self-signed (ECDSA P-256, made at start): the probe does not verify it. A
path that names no file of DIR gets status 404. Prints "ready" once it listens.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime
from pathlib import Path

from aioquic.asyncio import QuicConnectionProtocol, serve
from aioquic.h3.connection import H3_ALPN, H3Connection
from aioquic.h3.events import HeadersReceived
from aioquic.quic.configuration import QuicConfiguration
from aioquic.quic.events import ProtocolNegotiated

NAME = "web.lab.test"


def certificate():
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, NAME)])
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (x509.CertificateBuilder().subject_name(subject).issuer_name(subject).public_key(key.public_key())
            .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(days=1))
            .not_valid_after(now + datetime.timedelta(days=365))
            .add_extension(x509.SubjectAlternativeName([x509.DNSName(NAME)]), critical=False)
            .sign(key, hashes.SHA256()))
    return cert, key


def file_for(directory: Path, path: bytes) -> Path | None:
    """The file of `directory` a request's :path names, or None (also for a path outside it)."""
    name = path.decode("utf-8", "replace").split("?", 1)[0].lstrip("/")
    root = directory.resolve()
    f = (root / name).resolve()
    return f if root in f.parents and f.is_file() else None


class Server(QuicConnectionProtocol):
    """Answers each HTTP/3 request with `body(path)`: 200 and the bytes, or 404 for None."""

    directory = Path(".")

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.h3: H3Connection | None = None

    def body(self, path: bytes) -> bytes | None:
        """The file of `directory` the request's :path names."""
        f = file_for(self.directory, path)
        return f.read_bytes() if f else None

    def quic_event_received(self, event) -> None:
        if isinstance(event, ProtocolNegotiated):
            self.h3 = H3Connection(self._quic)
        if self.h3 is None:
            return
        for ev in self.h3.handle_event(event):
            if isinstance(ev, HeadersReceived):
                body = self.body(dict(ev.headers).get(b":path", b"/"))
                self.h3.send_headers(ev.stream_id, [(b":status", b"404" if body is None else b"200"),
                                                    (b"content-length", str(len(body or b"")).encode())])
                self.h3.send_data(ev.stream_id, body or b"", end_stream=True)
                self.transmit()


async def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="python -m iwlab.lab_h3", description=__doc__.split("\n\n")[0])
    ap.add_argument("--port", type=int, default=443)
    ap.add_argument("--host", default="::", help="'::' serves IPv4 and IPv6")
    ap.add_argument("--directory", type=Path, required=True)
    a = ap.parse_args(argv)
    cert, key = certificate()
    Server.directory = a.directory
    config = QuicConfiguration(is_client=False, alpn_protocols=H3_ALPN, certificate=cert, private_key=key)
    await serve(a.host, a.port, configuration=config, create_protocol=Server)
    print("ready", flush=True)
    await asyncio.Future()


if __name__ == "__main__":
    asyncio.run(main())

"""What the prober sends after the handshake: an HTTP/1.1 GET, or a TLS ClientHello with SNI
built by the standard library's `ssl` (a memory BIO: the handshake's first flight, nothing sent
through a socket)."""

from __future__ import annotations

from iwlab.probe.target import Target

USER_AGENT = "iwlab-probe"


def http_get(target: Target) -> bytes:
    host = f"[{target.host}]" if ":" in target.host else target.host
    if target.port != (443 if target.tls else 80):
        host += f":{target.port}"
    return (f"GET {target.path} HTTP/1.1\r\nHost: {host}\r\nUser-Agent: {USER_AGENT}\r\nAccept: */*\r\n"
            f"Connection: close\r\n\r\n").encode("ascii")


def client_hello(target: Target) -> bytes:
    """The TLS ClientHello a Python client would send to `target` (SNI = its host name; none for
    an address literal, RFC 6066 section 3)."""
    import ipaddress
    import ssl

    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    try:
        ipaddress.ip_address(target.host)
        sni = None
    except ValueError:
        sni = target.host
    incoming, outgoing = ssl.MemoryBIO(), ssl.MemoryBIO()
    obj = ctx.wrap_bio(incoming, outgoing, server_side=False, server_hostname=sni)
    try:
        obj.do_handshake()
    except ssl.SSLWantReadError:
        pass
    return outgoing.read()


def request_for(target: Target) -> bytes:
    return client_hello(target) if target.tls else http_get(target)

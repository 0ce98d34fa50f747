"""Targets of `iwlab probe`: `http://HOST[:PORT]/PATH`, `https://HOST[:PORT]/PATH` (a TLS
ClientHello with SNI = HOST) and `HOST:PORT` (an HTTP GET of `/`). HOST is an IPv4 or IPv6
literal (`[2001:db8::1]`) or a name resolved once, before the probe."""

from __future__ import annotations

import ipaddress
import socket
from dataclasses import dataclass
from urllib.parse import urlsplit

from iwlab.probe.errors import ProbeError, ProbeInputError

ALLOWED = "allowed: http://HOST[:PORT]/PATH, https://HOST[:PORT]/PATH or HOST:PORT"


@dataclass(frozen=True)
class Target:
    text: str  # as the user wrote it
    scheme: str  # "http", "https" or "tcp" (HOST:PORT: an HTTP GET of /)
    host: str  # as written (the SNI and the Host header)
    port: int
    path: str

    @property
    def tls(self) -> bool:
        return self.scheme == "https"


def _port(value: str | None, text: str, default: int) -> int:
    if value is None or value == "":
        return default
    if not value.isdigit() or not 1 <= int(value) <= 65535:
        raise ProbeInputError(f"target {text!r}: port = {value!r}; allowed 1..65535")
    return int(value)


def parse_target(text: str) -> Target:
    """Parses one target; a bad one raises ProbeInputError naming the value and what is allowed."""
    t = text.strip()
    if not t:
        raise ProbeInputError(f"target {text!r} is empty; {ALLOWED}")
    if "://" in t:
        scheme = t.split("://", 1)[0].lower()
        if scheme not in ("http", "https"):
            raise ProbeInputError(f"target {text!r}: scheme {scheme!r}; {ALLOWED}")
        u = urlsplit(t)
        host = u.hostname
        if not host or "@" in u.netloc:
            raise ProbeInputError(f"target {text!r}: no host (or user info); {ALLOWED}")
        try:
            port = u.port
        except ValueError:
            raise ProbeInputError(f"target {text!r}: port = {u.netloc.rpartition(':')[2]!r}; allowed 1..65535") from None
        if port == 0:
            raise ProbeInputError(f"target {text!r}: port = '0'; allowed 1..65535")
        port = port or (443 if scheme == "https" else 80)
        path = u.path or "/"
        if u.query:
            path += "?" + u.query
        if any(c in path for c in " \r\n"):
            raise ProbeInputError(f"target {text!r}: spaces or line breaks in the path; {ALLOWED}")
        return Target(text, scheme, host, port, path)
    if t.startswith("["):
        host, sep, rest = t[1:].partition("]")
        if not sep or not rest.startswith(":"):
            raise ProbeInputError(f"target {text!r}: IPv6 needs [ADDR]:PORT; {ALLOWED}")
        port_text = rest[1:]
    else:
        host, sep, port_text = t.rpartition(":")
        if not sep or not host or ":" in host:
            raise ProbeInputError(f"target {text!r}: no port; {ALLOWED}")
    if not port_text:
        raise ProbeInputError(f"target {text!r}: no port; {ALLOWED}")
    return Target(text, "tcp", host, _port(port_text, text, 0), "/")


def resolve(target: Target, family: int = 0) -> tuple[int, str]:
    """(address family, address) of the target: a literal as is, a name by getaddrinfo (first answer)."""
    try:
        ip = ipaddress.ip_address(target.host)
        return (socket.AF_INET6 if ip.version == 6 else socket.AF_INET), str(ip)
    except ValueError:
        pass
    try:
        infos = socket.getaddrinfo(target.host, target.port, family, socket.SOCK_STREAM)
    except socket.gaierror as e:
        raise ProbeError(f"{target.text}: host {target.host!r} does not resolve ({e.strerror})") from None
    fam, _, _, _, addr = infos[0]
    return fam, addr[0]

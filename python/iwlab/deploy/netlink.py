"""Routes through netlink (pyroute2), in the root namespace or a named one.

A route is handled as a plain, JSON-able record (`KRoute`) holding every attribute iwlab
reads back and writes again, so a route iwlab changed can be restored exactly. Routes with
attributes outside that set (multipath, encapsulation, nexthop objects, …) are reported and
never rewritten. Namespaces are entered with setns(2) only for the moment a netlink socket is
opened: the socket stays in the namespace, the process does not (pyroute2's `IPRoute(netns=)`
would create a missing namespace; here a missing one is an error).
"""

from __future__ import annotations

import contextlib
import ctypes
import ipaddress
import os
import socket
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Iterator

PROTO = 0x49  # iwlab's route protocol (rtm_protocol); the same number flow_iw_marks uses
NETNS_DIR = Path("/run/netns")
CLONE_NEWNET = 0x40000000
MAIN_TABLE = 254
RTNH_F_ONLINK = 0x4  # the one next-hop flag a user sets; others (linkdown, dead, offload…) are kernel state
# rtmsg attributes iwlab reads and writes back; others make a route one iwlab will not rewrite.
_KNOWN = {"RTA_TABLE", "RTA_DST", "RTA_GATEWAY", "RTA_OIF", "RTA_PREFSRC", "RTA_PRIORITY", "RTA_METRICS",
          "RTA_PREF", "RTA_CACHEINFO", "RTA_EXPIRES"}
# route metric names iwlab writes from a policy (RFC 6928 §2 / draft-you: Linux's per-route IW)
MANAGED_METRICS = ("RTAX_INITCWND", "RTAX_INITRWND", "RTAX_CC_ALGO")


class NetlinkError(RuntimeError):
    """A route operation failed; `usage` marks errors caused by the user's input (exit 2)."""

    def __init__(self, message: str, usage: bool = False):
        super().__init__(message)
        self.usage = usage


# RFC 6928 §2 argues for 10 segments and asks for experiments beyond; Linux takes initcwnd up to
# 2^32−1, where one route's typo (1000 for 10) floods every path behind it. Every route iwlab
# writes with its own protocol passes `check_iw` (in `replace`, the one route writer of
# `apply`, the watcher, rollback, recovery and `flow-iw marks`); above the bound it needs `--force`.
MAX_IW_SEGMENTS = 100


class IwBoundError(NetlinkError):
    """An initcwnd outside 1…MAX_IW_SEGMENTS on a route iwlab would write (bad input: exit 2)."""

    def __init__(self, message: str):
        super().__init__(message, usage=True)


def initcwnd_of(metrics: dict[str, Any] | None) -> int | None:
    """The initcwnd in a route's metrics, as KRoute (RTAX_INITCWND) or pyroute2's keywords (initcwnd) hold it."""
    m = metrics or {}
    v = m.get("RTAX_INITCWND", m.get("initcwnd"))
    return None if v is None else int(v)


def check_iw(dst: str, proto: int | None, metrics: dict[str, Any] | None, force: bool = False) -> None:
    """Raises IwBoundError when a route iwlab writes with its protocol carries an initcwnd outside
    1…MAX_IW_SEGMENTS and `force` is not set. A route restored to its original (another protocol:
    the administrator's own route, as iwlab found it) is not iwlab's IW and passes."""
    iw = initcwnd_of(metrics)
    if force or proto != PROTO or iw is None or 1 <= iw <= MAX_IW_SEGMENTS:
        return
    raise IwBoundError(f"route {dst}: initcwnd = {iw} segments; allowed 1…{MAX_IW_SEGMENTS} "
                       "(--force to write it anyway)")


def replace(ipr, force: bool = False, **route: Any) -> None:
    """`ip route replace` through netlink: the only place iwlab writes a route, after `check_iw`."""
    dst = str(route.get("dst") or "default")
    if "dst" in route and "dst_len" in route and "/" not in dst:
        dst = f"{dst}/{route['dst_len']}"
    check_iw(dst, route.get("proto"), route.get("metrics"), force)
    ipr.route("replace", **route)


@dataclass(frozen=True)
class KRoute:
    """One kernel route: the rtmsg header fields and the attributes iwlab restores."""

    family: int
    dst: str  # "10.0.0.0/24", "0.0.0.0/0", "::/0"
    table: int = MAIN_TABLE
    tos: int = 0
    priority: int | None = None
    proto: int = 3  # RTPROT_BOOT
    scope: int = 0
    type: int = 1  # RTN_UNICAST
    flags: int = 0
    gateway: str | None = None
    oif: int | None = None
    prefsrc: str | None = None
    pref: int | None = None
    metrics: dict[str, Any] = field(default_factory=dict)
    unsupported: tuple[str, ...] = ()

    @property
    def key(self) -> str:
        """What the kernel matches a replace on (family, table, destination, tos, priority)."""
        return f"{self.family}|{self.table}|{self.dst}|{self.tos}|{self.priority}"

    @property
    def net(self):
        return ipaddress.ip_network(self.dst)

    def to_json(self) -> dict[str, Any]:
        return asdict(self) | {"unsupported": list(self.unsupported)}

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> KRoute:
        return cls(**(d | {"unsupported": tuple(d.get("unsupported", ()))}))

    def with_metrics(self, metrics: dict[str, Any], proto: int) -> KRoute:
        return KRoute(**(asdict(self) | {"metrics": dict(sorted(metrics.items())), "proto": proto,
                                         "unsupported": self.unsupported}))

    def describe(self, devices: dict[int, str] | None = None) -> str:
        """Close to `ip route`'s words (`devices`: interface index → name)."""
        via = f" via {self.gateway}" if self.gateway else ""
        dev = (devices or {}).get(self.oif, f"#{self.oif}")
        m = " ".join(f"{_METRIC_WORDS.get(k, k[5:].lower())} {v}" for k, v in self.metrics.items())
        tbl = "" if self.table == MAIN_TABLE else f" table {self.table}"
        prio = "" if self.priority is None else f" metric {self.priority}"
        dst = "default" if self.net.prefixlen == 0 else self.dst
        return f"{dst}{via} dev {dev}{tbl}{prio} proto {_PROTOS.get(self.proto, self.proto)}{' ' + m if m else ''}"


_METRIC_WORDS = {"RTAX_CC_ALGO": "congctl", "RTAX_RTT": "rtt(ms*8)", "RTAX_RTTVAR": "rttvar(ms*4)"}
_PROTOS = {2: "kernel", 3: "boot", 4: "static", 9: "ra", PROTO: "iwlab(73)"}


def devices(ipr) -> dict[int, str]:
    """Interface index → name."""
    return {link["index"]: link.get_attr("IFLA_IFNAME") for link in ipr.get_links()}


def namespace_exists(name: str) -> bool:
    return (NETNS_DIR / name).exists()


def check_namespace_name(netns: str) -> None:
    """A name `ip netns add` accepts (iproute2's is_valid_netns_name: a file name under
    /run/netns): 1–255 bytes, no '/', not '.' or '..', no NUL."""
    if (not netns or len(netns.encode()) > 255 or "/" in netns or "\0" in netns or netns in (".", "..")):
        raise NetlinkError(f"--netns = {netns!r}: not a namespace name; allowed 1-255 characters without '/', "
                           "not '.' or '..' (see `ip netns list`)", usage=True)


def check_namespace(netns: str | None) -> None:
    if netns is not None:
        check_namespace_name(netns)
    if netns is not None and not namespace_exists(netns):
        raise NetlinkError(f"--netns = {netns!r}: no such network namespace (see `ip netns list`)", usage=True)


@contextlib.contextmanager
def in_netns(netns: str | None) -> Iterator[None]:
    """Runs the body with this thread in `netns` (setns), and returns to the original one."""
    if netns is None:
        yield
        return
    check_namespace(netns)
    libc = ctypes.CDLL(None, use_errno=True)
    home = os.open("/proc/thread-self/ns/net", os.O_RDONLY)
    target = os.open(NETNS_DIR / netns, os.O_RDONLY)
    try:
        if libc.setns(target, CLONE_NEWNET) != 0:
            raise NetlinkError(f"setns({netns}): {os.strerror(ctypes.get_errno())} (needs root)")
        try:
            yield
        finally:
            if libc.setns(home, CLONE_NEWNET) != 0:  # cannot continue in the wrong namespace
                raise SystemExit(f"setns back from {netns} failed: {os.strerror(ctypes.get_errno())}")
    finally:
        os.close(home)
        os.close(target)


def open_ipr(netns: str | None):
    """An IPRoute socket in `netns` (the namespace must exist)."""
    from pyroute2 import IPRoute

    with in_netns(netns):
        try:
            return IPRoute()
        except PermissionError as e:
            raise NetlinkError(f"netlink: {e} (needs root)") from None


def _metrics(msg) -> dict[str, Any]:
    m = msg.get_attr("RTA_METRICS")
    if not m:
        return {}
    return dict(sorted((k, v) for k, v in m.get("attrs", [])))


def from_msg(msg) -> KRoute:
    fam = msg["family"]
    dst = msg.get_attr("RTA_DST") or ("::" if fam == socket.AF_INET6 else "0.0.0.0")
    names = tuple(sorted({a[0] for a in msg["attrs"]} - _KNOWN))
    return KRoute(family=fam, dst=str(ipaddress.ip_network(f"{dst}/{msg['dst_len']}")),
                  table=msg.get_attr("RTA_TABLE") or msg["table"], tos=msg["tos"],
                  priority=msg.get_attr("RTA_PRIORITY"), proto=msg["proto"], scope=msg["scope"],
                  type=msg["type"], flags=msg["flags"], gateway=msg.get_attr("RTA_GATEWAY"),
                  oif=msg.get_attr("RTA_OIF"), prefsrc=msg.get_attr("RTA_PREFSRC"),
                  pref=msg.get_attr("RTA_PREF"), metrics=_metrics(msg), unsupported=names)


def dump(ipr, table: int | None = MAIN_TABLE) -> list[KRoute]:
    """Unicast routes of `table` (None: every table), IPv4 and IPv6, in the kernel's order."""
    out = []
    for fam in (socket.AF_INET, socket.AF_INET6):
        for msg in ipr.route("dump", family=fam):
            r = from_msg(msg)
            if (table is None or r.table == table) and r.type == 1 and r.net.prefixlen is not None:
                if fam == socket.AF_INET6 and r.net.is_link_local:
                    continue
                out.append(r)
    return out


def find(ipr, key: str, table: int = MAIN_TABLE) -> KRoute | None:
    return next((r for r in dump(ipr, table) if r.key == key), None)


def covering(routes: list[KRoute], net) -> KRoute | None:
    """The most specific route whose destination covers `net` (lowest priority on a tie)."""
    best = None
    for r in routes:
        if r.net.version == net.version and net.subnet_of(r.net):
            rank = (r.net.prefixlen, -(r.priority or 0))
            if best is None or rank > best[0]:
                best = (rank, r)
    return None if best is None else best[1]


def _args(r: KRoute) -> dict[str, Any]:
    net = r.net
    a: dict[str, Any] = dict(family=r.family, dst_len=net.prefixlen, table=r.table, tos=r.tos, proto=r.proto,
                             scope=r.scope, type=r.type, flags=r.flags & RTNH_F_ONLINK)
    if net.prefixlen:
        a["dst"] = str(net.network_address)
    for k in ("priority", "gateway", "oif", "prefsrc"):
        v = getattr(r, k)
        if v is not None:
            a[k] = v
    if r.metrics:
        a["metrics"] = dict(r.metrics)
    return a


def write(ipr, r: KRoute, force: bool = False) -> None:
    """Creates or replaces the route with key `r.key` so that it reads back equal to `r`
    (`force`: an initcwnd beyond MAX_IW_SEGMENTS, `check_iw`)."""
    if r.unsupported:
        raise NetlinkError(f"route {r.dst}: has {', '.join(r.unsupported)}, which iwlab does not rewrite")
    try:
        replace(ipr, force, **_args(r))
    except IwBoundError:
        raise
    except Exception as e:  # pyroute2 raises NetlinkError(code, msg)
        raise NetlinkError(f"route replace {r.describe()}: {e}") from None
    back = find(ipr, r.key, r.table)
    if back is None or _comparable(back) != _comparable(r):
        raise NetlinkError(f"route {r.dst} read back as {back.describe() if back else 'missing'}, "
                           f"wrote {r.describe()}")


def delete(ipr, r: KRoute) -> None:
    """Deletes the route with key `r.key` (only routes iwlab created are ever passed here)."""
    a = _args(r)
    a.pop("metrics", None)
    try:
        ipr.route("del", **a)
    except Exception as e:
        raise NetlinkError(f"route del {r.describe()}: {e}") from None
    if find(ipr, r.key, r.table) is not None:
        raise NetlinkError(f"route {r.dst}: still present after deleting it")


def _comparable(r: KRoute) -> dict[str, Any]:
    d = r.to_json()
    d.pop("unsupported")
    d["flags"] &= RTNH_F_ONLINK
    return d


def same(a: KRoute | None, b: KRoute | None) -> bool:
    if a is None or b is None:
        return a is b
    return _comparable(a) == _comparable(b)


def device_mss(ipr, oif: int | None, family: int) -> int:
    """The MSS a connection over device `oif` starts from: MTU − 40 (IPv4) or − 60 (IPv6)."""
    mtu = 1500
    if oif is not None:
        links = ipr.get_links(oif)
        if links:
            mtu = links[0].get_attr("IFLA_MTU") or 1500
    return mtu - (60 if family == socket.AF_INET6 else 40)

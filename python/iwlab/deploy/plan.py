"""A plan: the list of route edits that brings a namespace's routes to what a policy file asks.

The same `Plan` drives `iwlab plan` (shown), `iwlab apply` and `--try` (executed through
`iwlab.deploy.apply`), and the watcher's changes (the same computation with the watcher's
Decider). Every edit carries the route before and after, so it can be undone exactly.

For each route of the policy file (and each family for `default`):
* a route with exactly that destination exists in the table → iwlab changes its metrics (the
  "covering route whose metrics the plan changes"; its original is recorded for rollback);
* otherwise iwlab creates a route for the prefix via the gateway and device of the most
  specific route covering it, with that route's other metrics.
Either way the route gets iwlab's route protocol (`netlink.PROTO`) and the full metric set:
the original metrics with `initcwnd` (the policy's IW in segments for this route's MSS),
`initrwnd` and `congctl` (when the file gives them) replaced — a netlink replace drops any
metric not written. Routes iwlab manages that the file no longer covers are restored
(changed ones) or deleted (created ones). Nothing else is touched.
"""

from __future__ import annotations

import hashlib
import ipaddress
import socket
import time
from dataclasses import dataclass
from typing import Any, Callable

from iwlab.deploy import netlink
from iwlab.deploy.netlink import KRoute, NetlinkError

IwFor = Callable[[str, int], int]  # (policy prefix, MSS) → IW in segments


@dataclass(frozen=True)
class Edit:
    key: str
    prefix: str  # the policy file's prefix ("default" or a CIDR)
    old: KRoute | None  # the route now; None: it will be created
    new: KRoute | None  # the route after; None: it will be deleted
    why: str

    @property
    def action(self) -> str:
        return "create" if self.old is None else "delete" if self.new is None else "change"

    def to_json(self) -> dict[str, Any]:
        return {"key": self.key, "prefix": self.prefix, "action": self.action, "why": self.why,
                "old": None if self.old is None else self.old.to_json(),
                "new": None if self.new is None else self.new.to_json()}

    def describe(self, devs: dict[int, str] | None = None) -> str:
        if self.old is None:
            return f"+ {self.new.describe(devs)}\n    ({self.why})"
        if self.new is None:
            return f"- {self.old.describe(devs)}\n    ({self.why})"
        return f"~ {self.old.describe(devs)}\n  → {self.new.describe(devs)}\n    ({self.why})"


@dataclass(frozen=True)
class Plan:
    netns: str | None
    edits: tuple[Edit, ...]
    policy_path: str | None = None
    policy_text: str | None = None
    devices: tuple[tuple[int, str], ...] = ()  # interface names, for describe()

    @property
    def policy_sha(self) -> str | None:
        return None if self.policy_text is None else sha(self.policy_text)

    def describe(self) -> str:
        where = f"namespace {self.netns}" if self.netns else "the root namespace"
        if not self.edits:
            return f"nothing to change in {where}"
        devs = dict(self.devices)
        return f"{len(self.edits)} route edit(s) in {where}:\n" + "\n".join(e.describe(devs) for e in self.edits)


def sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def prefix_name(route) -> str:
    """The key a policy route has in the Decider and in the state: its CIDR or 'default'."""
    return "default" if route.prefix is None else str(route.prefix)


def _policy_metrics(base: dict[str, Any], iw: int, route) -> dict[str, Any]:
    m = dict(base)
    m["RTAX_INITCWND"] = iw
    if route.initrwnd is not None:
        m["RTAX_INITRWND"] = route.initrwnd
    if route.congctl is not None:
        m["RTAX_CC_ALGO"] = route.congctl
    return m


AVAILABLE_CC = "/proc/sys/net/ipv4/tcp_available_congestion_control"


def available_congestion_control() -> list[str]:
    """The congestion controls the kernel has registered (net/ipv4/tcp_cong.c keeps one list for
    every namespace); a route's congctl must name one of them, or the route replace fails."""
    try:
        with open(AVAILABLE_CC) as f:
            return f.read().split()
    except OSError:
        return []


def check_congctl(pf) -> None:
    """A usage NetlinkError for the first route whose congctl the kernel does not offer."""
    have = None
    for route in pf.routes:
        if route.congctl is None:
            continue
        have = available_congestion_control() if have is None else have
        if have and route.congctl not in have:
            raise NetlinkError(f"{pf.path or '<policy>'}:{route.line}: congctl = {route.congctl!r} is not "
                               f"available in this kernel; allowed one of {', '.join(have)} "
                               f"({AVAILABLE_CC})", usage=True)


def _mss(ipr, r: KRoute) -> int:
    if r.metrics.get("RTAX_ADVMSS"):
        return int(r.metrics["RTAX_ADVMSS"])
    if r.metrics.get("RTAX_MTU"):
        return int(r.metrics["RTAX_MTU"]) - (60 if r.family == socket.AF_INET6 else 40)
    return netlink.device_mss(ipr, r.oif, r.family)


def targets(ipr, pf, iw_for: IwFor, managed: dict[str, Any], table: int = netlink.MAIN_TABLE,
            only: set[str] | None = None) -> dict[str, tuple[str, KRoute]]:
    """Route key → (policy prefix, the route as the file wants it)."""
    now = netlink.dump(ipr, table)
    view = []  # the table as it was before iwlab: originals back, iwlab's own routes out
    for r in now:
        if r.key in managed:
            if managed[r.key] is not None:
                view.append(KRoute.from_json(managed[r.key]))
        else:
            view.append(r)
    out: dict[str, tuple[str, KRoute]] = {}
    for route in pf.routes:
        name = prefix_name(route)
        if only is not None and name not in only:
            continue
        nets = ([ipaddress.ip_network("0.0.0.0/0"), ipaddress.ip_network("::/0")] if route.prefix is None
                else [route.prefix])
        found = 0
        for net in nets:
            exact = sorted((r for r in view if r.net == net), key=lambda r: r.priority or 0)
            if exact:
                base = exact[0]
                if base.unsupported:
                    raise NetlinkError(f"{pf.path}:{route.line}: route {net} has {', '.join(base.unsupported)}, "
                                       "which iwlab does not rewrite", usage=True)
                want = base.with_metrics(_policy_metrics(base.metrics, iw_for(name, _mss(ipr, base)), route),
                                         netlink.PROTO)
            else:
                cover = netlink.covering(view, net)
                if cover is None:
                    continue
                if cover.unsupported:
                    raise NetlinkError(f"{pf.path}:{route.line}: the route covering {net} ({cover.dst}) has "
                                       f"{', '.join(cover.unsupported)}, which iwlab does not copy", usage=True)
                want = KRoute(family=cover.family, dst=str(net), table=cover.table, tos=cover.tos,
                              priority=cover.priority, proto=netlink.PROTO, scope=cover.scope, type=cover.type,
                              flags=cover.flags, gateway=cover.gateway, oif=cover.oif, prefsrc=cover.prefsrc,
                              metrics={})
                want = want.with_metrics(_policy_metrics(cover.metrics, iw_for(name, _mss(ipr, cover)), route),
                                         netlink.PROTO)
            found += 1
            out[want.key] = (name, want)
        if not found:
            raise NetlinkError(f"{pf.path}:{route.line}: prefix = {name!r}: no route in table {table} covers it "
                               "(iwlab copies the gateway and device of the covering route)", usage=True)
    return out


def compute(ipr, pf, iw_for: IwFor, managed: dict[str, Any], netns: str | None,
            table: int = netlink.MAIN_TABLE, only: set[str] | None = None, why: str | None = None) -> Plan:
    """The edits from the routes now to the routes `pf` wants. `only`: restrict to these policy
    prefixes (the watcher changes one prefix at a time) and leave other managed routes alone."""
    check_congctl(pf)
    want = targets(ipr, pf, iw_for, managed, table, only)
    now = {r.key: r for r in netlink.dump(ipr, table)}
    edits = []
    for key, (name, new) in want.items():
        old = now.get(key)
        if not netlink.same(old, new):
            reason = why or (f"{pf.path}: {name} → initcwnd {new.metrics.get('RTAX_INITCWND')}"
                             + ("; iwlab creates it via the covering route" if old is None else ""))
            edits.append(Edit(key, name, old, new, reason))
    if only is None:
        for key, original in managed.items():
            if key in want:
                continue
            old = now.get(key)
            if original is None:
                if old is not None:
                    edits.append(Edit(key, "-", old, None, "no longer in the policy file: delete the route iwlab created"))
            else:
                orig = KRoute.from_json(original)
                if not netlink.same(old, orig):
                    edits.append(Edit(key, "-", old, orig, "no longer in the policy file: restore the original"))
    return Plan(netns, tuple(edits), str(pf.path) if pf.path is not None else None, pf.text,
                tuple(sorted(netlink.devices(ipr).items())))


def fresh_iw_for(decider) -> IwFor:
    """IW (segments) by the Decider for a connection of unknown size starting now (wall-clock ns: the state outlives a reboot)."""
    return lambda name, mss: decider.iw_segments(name, mss, time.time_ns())

"""Per-flow IW by route marks, for clients that know their flow size before they connect
(the variant without eBPF).

A route carries its own `initcwnd`, and a connection takes its route's metrics when it is set
up; a socket's mark (`SO_MARK`) can select the route through a policy rule. So for every IW w
the size-based policies of a file can give (MinIW … V), `install` writes

    ip rule add fwmark MARK_BASE+w lookup TABLE_BASE+w priority RULE_PRIORITY
    ip route replace PREFIX via GATEWAY dev DEV table TABLE_BASE+w proto PROTO initcwnd w

for each size-based route of the file (gateway and device copied from the main table's route
covering PREFIX), through netlink (pyroute2). A client marks its socket with MARK_BASE + IW(s)
before connect() (`set_mark_for`); the kernel routes it through table TABLE_BASE + IW(s) and
the first flight is IW(s). Limits: SO_MARK needs CAP_NET_ADMIN; it works for connections the
host opens (the route of an accepted connection is chosen at SYN time, before a server knows
what it will send — servers use the eBPF hint); IW values outside MinIW … V match no rule.
`remove` deletes exactly the rules and routes with these marks, tables and protocol.
"""

from __future__ import annotations

import ipaddress
import socket
from pathlib import Path
from typing import Any

MARK_BASE = 0x49570000  # "IW" in the high half; the low half is the IW in segments
TABLE_BASE = 0x49570000
RULE_PRIORITY = 32000  # after `local` (0), before `main` (32766)
PROTO = 0x49  # route protocol of what this module writes (rtnetlink's rtm_protocol)
MAX_IW = 1000
SO_MARK = getattr(socket, "SO_MARK", 36)


class MarksError(RuntimeError):
    def __init__(self, message: str, usage: bool = False):
        super().__init__(message)
        self.usage = usage


def mark_for(segments: int) -> int:
    if not 1 <= segments <= MAX_IW:
        raise ValueError(f"segments = {segments}: allowed 1..{MAX_IW}")
    return MARK_BASE + segments


def set_mark_for(sock: socket.socket, nbytes: int, policy, peer: str, mss: int = 1460) -> int:
    """Marks an unconnected socket so its route gives the IW the policy gives `nbytes` to
    `peer`; returns that IW (segments). The MSS is not known before connect(): IW(s) of the
    size-based and fixed policies does not depend on it."""
    segments = policy.segments(nbytes, mss, peer)
    sock.setsockopt(socket.SOL_SOCKET, SO_MARK, mark_for(segments))
    return segments


def _ipr(netns: str | None):
    from pyroute2 import IPRoute, NetNS

    if netns is None:
        return IPRoute()
    if not (Path("/run/netns") / netns).exists():  # NetNS would create it
        raise MarksError(f"--netns = {netns!r}: no such network namespace (ip netns list)", usage=True)
    return NetNS(netns)


def _net(prefix: str, family: int) -> ipaddress._BaseNetwork:
    if prefix == "default":
        return ipaddress.ip_network("::/0" if family == socket.AF_INET6 else "0.0.0.0/0")
    return ipaddress.ip_network(prefix)


def _main_route(ipr, net) -> dict[str, Any]:
    """Gateway and device of the main table's most specific route covering `net`."""
    family = socket.AF_INET6 if net.version == 6 else socket.AF_INET
    best = None
    for r in ipr.route("dump", family=family, table=254):
        dst = r.get_attr("RTA_DST")
        rnet = ipaddress.ip_network(f"{dst or ('::' if net.version == 6 else '0.0.0.0')}/{r['dst_len']}")
        if net.subnet_of(rnet) and (best is None or rnet.prefixlen > best[0].prefixlen):
            best = (rnet, r)
    if best is None:
        raise MarksError(f"no route in the main table covers {net}")
    r = best[1]
    return {"gateway": r.get_attr("RTA_GATEWAY"), "oif": r.get_attr("RTA_OIF")}


def plan(policy_file, netns: str | None = None) -> list[dict[str, Any]]:
    """One entry per (size-based route, IW w): the rule and route `install` writes."""
    out = []
    with _ipr(netns) as ipr:
        for route in policy_file.routes:
            spec = policy_file.policies[route.policy]
            if spec.get("kind") != "size-based":
                continue
            families = [socket.AF_INET, socket.AF_INET6] if route.prefix is None else [0]
            found = 0
            for fam in families:
                net = _net(route.key, fam)
                try:
                    via = _main_route(ipr, net)
                except MarksError:
                    continue  # "default": no IPv6 (or IPv4) default route here, nothing to copy
                found += 1
                for w in range(spec["min_iw"], spec["v"] + 1):
                    out.append({"prefix": str(net), "iw": w, "mark": mark_for(w), "table": TABLE_BASE + w, **via})
            if not found:
                raise MarksError(f"route {route.key} of {policy_file.path}: no route in the main table "
                                 f"{'of ' + netns + ' ' if netns else ''}covers it (nothing to copy)")
    return out


def _family(prefix: str) -> int:
    return socket.AF_INET6 if ipaddress.ip_network(prefix).version == 6 else socket.AF_INET


def _our_rules(ipr) -> list:
    rules = []
    for fam in (socket.AF_INET, socket.AF_INET6):
        for r in ipr.get_rules(family=fam):
            table = r.get_attr("FRA_TABLE") or r["table"]
            if r.get_attr("FRA_PRIORITY") == RULE_PRIORITY and TABLE_BASE < table <= TABLE_BASE + MAX_IW:
                rules.append(r)
    return rules


def _our_routes(ipr) -> list:
    routes = []
    for fam in (socket.AF_INET, socket.AF_INET6):
        for r in ipr.route("dump", family=fam):  # every table (table=0 would filter)
            table = r.get_attr("RTA_TABLE") or r["table"]
            if r["proto"] == PROTO and TABLE_BASE < table <= TABLE_BASE + MAX_IW:
                routes.append(r)
    return routes


def show(netns: str | None = None) -> dict[str, Any]:
    with _ipr(netns) as ipr:
        rules = [{"mark": r.get_attr("FRA_FWMARK"), "table": r.get_attr("FRA_TABLE") or r["table"]}
                 for r in _our_rules(ipr)]
        routes = []
        for r in _our_routes(ipr):
            metrics = dict((r.get_attr("RTA_METRICS") or {}).get("attrs", []))
            dst = r.get_attr("RTA_DST") or ("::" if r["family"] == socket.AF_INET6 else "0.0.0.0")
            routes.append({"prefix": f"{dst}/{r['dst_len']}", "table": r.get_attr("RTA_TABLE") or r["table"],
                           "gateway": r.get_attr("RTA_GATEWAY"), "initcwnd": metrics.get("RTAX_INITCWND")})
    return {"rules": sorted(rules, key=lambda x: x["table"]), "routes": sorted(routes, key=lambda x: (x["table"], x["prefix"]))}


def install(policy_file, netns: str | None = None, force: bool = False) -> dict[str, Any]:
    """Writes the rules and routes of `plan`; idempotent; all or nothing (what this call added
    is removed again if a later step fails); every route is read back. Each route goes through
    `netlink.replace`, whose bound on initcwnd (1…MAX_IW_SEGMENTS unless `force`) every IW of
    the file is checked against before the first rule is added."""
    from iwlab.deploy import netlink

    entries = plan(policy_file, netns)
    for e in entries:  # the writer's own check, before anything is written: all or nothing
        netlink.check_iw(e["prefix"], PROTO, {"initcwnd": e["iw"]}, force)
    if not entries:
        raise MarksError(f"{policy_file.source}: no route uses a size-based policy", usage=True)
    added: list[tuple[str, dict]] = []
    with _ipr(netns) as ipr:
        have_rules = {(r["family"], r.get_attr("FRA_FWMARK")) for r in _our_rules(ipr)}
        try:
            for e in entries:
                fam = _family(e["prefix"])
                if (fam, e["mark"]) not in have_rules:
                    rule = dict(family=fam, priority=RULE_PRIORITY, fwmark=e["mark"], fwmask=0xFFFFFFFF, table=e["table"])
                    ipr.rule("add", **rule)
                    added.append(("rule", rule))
                    have_rules.add((fam, e["mark"]))
                route = dict(dst=e["prefix"], table=e["table"], proto=PROTO, metrics={"initcwnd": e["iw"]},
                             **{k: e[k] for k in ("gateway", "oif") if e[k] is not None})
                netlink.replace(ipr, force, **route)
                added.append(("route", route))
                back = ipr.route("get", dst=str(ipaddress.ip_network(e["prefix"])[0]), table=e["table"])
                if not back:
                    raise MarksError(f"route {e['prefix']} table {e['table']}: not found after writing it")
        except Exception:
            for kind, spec in reversed(added):
                try:
                    ipr.rule("del", **spec) if kind == "rule" else ipr.route("del", **spec)
                except Exception:  # best effort: report the first error
                    pass
            raise
    state = show(netns)
    wrong = [r for r in state["routes"] if r["initcwnd"] != r["table"] - TABLE_BASE]
    if wrong:
        raise MarksError(f"routes read back with the wrong initcwnd: {wrong}")
    return {"entries": entries, **state}


def remove(netns: str | None = None) -> dict[str, Any]:
    """Deletes every rule and route this module writes (its marks, tables and protocol)."""
    with _ipr(netns) as ipr:
        rules, routes = _our_rules(ipr), _our_routes(ipr)
        for r in routes:
            ipr.route("del", family=r["family"], dst_len=r["dst_len"], dst=r.get_attr("RTA_DST"),
                      table=r.get_attr("RTA_TABLE") or r["table"], proto=PROTO)
        for r in rules:
            ipr.rule("del", family=r["family"], priority=RULE_PRIORITY, fwmark=r.get_attr("FRA_FWMARK"),
                     fwmask=0xFFFFFFFF, table=r.get_attr("FRA_TABLE") or r["table"])
    return {"rules_removed": len(rules), "routes_removed": len(routes)}

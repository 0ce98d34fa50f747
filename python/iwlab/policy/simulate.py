"""A policy file in simulation: a scenario that uses it, and the check that a run's decisions
are the Decider's."""

from __future__ import annotations

import json
from typing import Any

from .decider import Decider, replay
from .file import PolicyFile, PolicyFileError

__all__ = ["with_policy", "sim_replay_records", "replay_run", "sim_host_addresses", "check_routes_cover_hosts",
           "map_prefixes"]


def with_policy(scenario, pf: PolicyFile):
    """`scenario` (an iwlab.Scenario) simulating the policy file: its policies join the
    scenario's `[iw.policies]` (a name the scenario defines differently is an error), its routes
    become `[[iw.routes]]` (replacing any), and its `[iw] default`, if set, becomes the scenario's.
    Hosts have the emulator's addresses (198.18.0.0 + 4g + 2, g counting left hosts first, then
    right); a sender's IW towards a host a route covers is the route's policy, per sending host
    and keyed by the route's prefix; other destinations keep the application's policy
    (docs/scenario-format.md, "Policy files"). A file that paces (`[tcp]` pacing or
    paced_iw true) sets the scenario's `tcp.pacing` and `tcp.paced_iw` to its values, and
    `tcp.pacer` to "linux" (the kernel that runs it leaves the first 10 data segments unpaced),
    for every connection, as the deployed program paces every connection of its cgroup; a file that
    paces nothing deploys nothing there, and the scenario's own keep."""
    from iwlab.scenario import Scenario

    data = json.loads(json.dumps(scenario.data))
    iw = data.setdefault("iw", {})
    policies = iw.setdefault("policies", {})
    for name, spec in pf.policies.items():
        if name in policies and policies[name] != spec:
            line = next((r.line for r in pf.routes if r.policy == name), None)
            raise PolicyFileError(f"iw.policies.{name} = {json.dumps(spec)} is not allowed; expected a name the "
                                  f"scenario {scenario.name!r} does not define differently "
                                  f"(it has {json.dumps(policies[name])}): rename it", pf.path, line,
                                  f"iw.policies.{name}")
        policies[name] = spec
    iw["routes"] = [{k: v for k, v in (("prefix", r.key), ("policy", r.policy), ("initrwnd", r.initrwnd),
                                       ("congctl", r.congctl)) if v is not None} for r in pf.routes]
    if pf.default is not None:
        iw["default"] = pf.default
    if pf.paced:
        pacing = {"pacing": pf.tcp["pacing"], "paced_iw": pf.tcp["paced_iw"], "pacer": "linux"}
        data.setdefault("tcp", {}).update(pacing)
        # An application's `tcp` table overrides the scenario's field by field: set it there too.
        for app in data.get("apps", []):
            if isinstance(app.get("tcp"), dict):
                app["tcp"].update(pacing)
    return Scenario.from_data(data, f"{scenario.source} + {pf.path or '<policy>'}")


def sim_replay_records(pf: PolicyFile, iw_events) -> dict[int, list[dict]]:
    """A simulated run's `iw_events` (a DataFrame or a list of row dicts, `iwlab.run(…,
    iw_events=True)`) as `replay` records, per policy instance (sending host), keyed by the
    route of `pf` covering each destination's address; destinations no route covers (they used
    the application's policy) and restart windows are left out."""
    rows = iw_events.to_dict("records") if hasattr(iw_events, "to_dict") else list(iw_events)
    out: dict[int, list[dict]] = {}
    for row in rows:
        route = pf.route_for(row["dst_addr"]) if row["dst_addr"] else None
        if route is None or row["kind"] == "restart":
            continue
        rec: dict[str, Any] = {"time_ns": int(row["time_ns"]), "dst": route.key, "kind": row["kind"]}
        if row["kind"] == "iw":
            declared = row["declared_size"]
            rec.update(mss=int(row["mss"]), declared_size=None if declared is None or declared != declared
                       else int(declared), sim_iw_bytes=int(row["iw_bytes"]))
        else:
            rec["bytes_sent"] = int(row["bytes_sent"])
            if row["kind"] == "closed":
                rec.update(loss=bool(row["loss"]), cwnd=int(row["cwnd"]), bytes_acked=int(row["bytes_acked"]),
                           retrans=int(row["retrans"]))
        out.setdefault(int(row["instance"]), []).append(rec)
    return out


def replay_run(pf: PolicyFile, iw_events) -> list[dict]:
    """Replays every sending host's recorded sequence of a run into a fresh `Decider` of `pf`
    and returns one row per IW decision: instance, time_ns, dst (prefix), the simulator's
    `sim_iw_bytes` and the Decider's `iw_bytes`. Equal columns = the same decisions."""
    out = []
    for instance, recs in sorted(sim_replay_records(pf, iw_events).items()):
        asked = [r for r in recs if r["kind"] == "iw"]
        for r, d in zip(asked, replay(Decider(pf), recs)):
            out.append({"instance": instance, "time_ns": r["time_ns"], "dst": r["dst"],
                        "sim_iw_bytes": r["sim_iw_bytes"], "iw_bytes": d["iw_bytes"]})
    return out


def sim_host_addresses(scenario) -> dict[str, list[str]]:
    """Group name → its simulated hosts' addresses, as the emulator (and the core's
    `policy_file::sim_host_addresses`) gives them: host g — left hosts first, then right, each
    group in file order — is 198.18.0.0 + 4g + 2."""
    import ipaddress

    base = int(ipaddress.IPv4Address("198.18.0.0"))
    topo = scenario.data.get("topology", {})
    out: dict[str, list[str]] = {}
    g = 0
    for side in ("left", "right"):
        for grp in topo.get(side, []):
            count = int(grp.get("count", 1))
            out[grp.get("name", f"{side}-{len(out)}")] = [str(ipaddress.IPv4Address(base + 4 * (g + i) + 2))
                                                          for i in range(count)]
            g += count
    return out


def check_routes_cover_hosts(scenario, pf: PolicyFile) -> None:
    """PolicyFileError for the first prefix route of `pf` that covers no simulated host: in
    simulation it would change nothing, silently (real prefixes never match 198.18.x)."""
    import ipaddress

    hosts = sim_host_addresses(scenario)
    addrs = [ipaddress.ip_address(a) for group in hosts.values() for a in group]
    for i, r in enumerate(pf.routes):
        if r.prefix is None or any(a.version == r.prefix.version and a in r.prefix for a in addrs):
            continue
        groups = "; ".join(f"{name} {a[0]}" + (f"…{a[-1]}" if len(a) > 1 else "") for name, a in hosts.items())
        raise PolicyFileError(f"routes[{i}].prefix = {r.key!r} covers no simulated host of {scenario.name!r}, so "
                              f"it would change nothing; expected a prefix of the emulator's addresses ({groups}) "
                              "(--map PREFIX=GROUP or PREFIX=CIDR) or a copy of the file with such prefixes", pf.path, r.line,
                              f"routes[{i}].prefix")


class MapError(ValueError):
    """A `--map PREFIX=HOSTS` that cannot be used: names the map, the value and what is allowed."""


def _group_blocks(scenario) -> dict[str, tuple[int, int]]:
    """Group → (first, last) address of its hosts' /30 blocks (198.18.0.0 + 4g … + 4g + 3)."""
    import ipaddress

    out = {}
    for name, addrs in sim_host_addresses(scenario).items():
        if addrs:
            out[name] = (int(ipaddress.IPv4Address(addrs[0])) - 2, int(ipaddress.IPv4Address(addrs[-1])) + 1)
    return out


def map_prefixes(scenario, pf: PolicyFile, maps: list[str]) -> PolicyFile:
    """`pf` with the prefixes of real routes replaced by prefixes of simulated hosts, so the file
    can be simulated as written: each map is "PREFIX=HOSTS", PREFIX a route prefix of the file
    (as written or normalised) and HOSTS a topology group name (the smallest prefix covering
    its hosts, which must cover no other group's host) or a CIDR of the emulator's addresses
    that covers at least one host. Everything else about the route (policy, initrwnd,
    congctl) stays. Raises MapError."""
    import dataclasses
    import ipaddress

    blocks = _group_blocks(scenario)
    hosts = {name: addrs for name, addrs in sim_host_addresses(scenario).items()}
    all_addrs = [(name, ipaddress.ip_address(a)) for name, group in hosts.items() for a in group]
    groups = "; ".join(f"{n} {a[0]}" + (f"…{a[-1]}" if len(a) > 1 else "") for n, a in hosts.items())
    routes = list(pf.routes)
    seen: set[str] = set()
    for m in maps:
        prefix, eq, target = m.partition("=")
        prefix, target = prefix.strip(), target.strip()
        if not eq or not prefix or not target:
            raise MapError(f"--map {m!r}: expected PREFIX=HOSTS, e.g. 203.0.113.0/24=clients")
        try:
            key = "default" if prefix == "default" else str(ipaddress.ip_network(prefix, strict=False))
        except ValueError:
            raise MapError(f"--map {m!r}: PREFIX = {prefix!r} is not a prefix; expected one of the file's routes: "
                           f"{', '.join(r.key for r in pf.routes) or 'none'}") from None
        i = next((j for j, r in enumerate(pf.routes) if r.key == key), None)
        if i is None:
            raise MapError(f"--map {m!r}: PREFIX = {prefix!r} is not a route of {pf.path or 'the policy file'}; "
                           f"expected one of: {', '.join(r.key for r in pf.routes) or 'none'}")
        if key == "default":
            raise MapError(f"--map {m!r}: PREFIX = 'default' already covers every simulated host; expected a prefix "
                           "route of the file")
        if key in seen:
            raise MapError(f"--map {m!r}: PREFIX = {key!r} is mapped twice; expected each route mapped once")
        seen.add(key)
        if target in blocks:
            lo, hi = blocks[target]
            net = next(ipaddress.summarize_address_range(ipaddress.IPv4Address(lo), ipaddress.IPv4Address(lo)))
            while int(net.broadcast_address) < hi:
                net = net.supernet()
            others = [(n, a) for n, a in all_addrs if n != target and a in net]
            if others:
                first = next(ipaddress.summarize_address_range(ipaddress.IPv4Address(lo), ipaddress.IPv4Address(hi)))
                raise MapError(f"--map {m!r}: the smallest prefix covering group {target!r} ({net}) also covers "
                               f"{others[0][0]} host {others[0][1]}; expected a CIDR inside the group, e.g. "
                               f"{key}={first} ({first.num_addresses // 4} hosts)")
        else:
            try:
                net = ipaddress.ip_network(target, strict=False)
            except ValueError:
                raise MapError(f"--map {m!r}: HOSTS = {target!r} is neither a group of the scenario nor a CIDR; "
                               f"expected one of {sorted(blocks)} or a prefix of the hosts ({groups})") from None
            if not any(a.version == net.version and a in net for _, a in all_addrs):
                raise MapError(f"--map {m!r}: HOSTS = {target!r} covers no simulated host; expected a group or "
                               f"a prefix of the hosts ({groups})")
        routes[i] = dataclasses.replace(routes[i], prefix=net)
    keys = [r.key for r in routes]
    dup = next((k for k in keys if keys.count(k) > 1), None)
    if dup is not None:
        raise MapError(f"--map: two routes would have prefix {dup}; expected maps onto distinct prefixes")
    return dataclasses.replace(pf, routes=tuple(routes))

"""The deploy check: after `iwlab apply`, is the IW on the wire the one the policy put on the
route? Probe a server of the applied namespace from a client, find the route iwlab manages that
covers the client's address (the most specific one), and compare its `initcwnd` with every run.

A route the kernel prefers for that client that iwlab did not write (a more specific one, with
its own initcwnd), a BPF program overriding the route (TCP_BPF_IW), or a middlebox all show up as
a mismatch — which is what the check is for."""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from typing import Sequence

from iwlab.probe import Probe, ProbeError, probe


@dataclass
class Verdict:
    ok: bool
    expected: int | None  # the managed route's initcwnd
    route: str  # the managed route, as `ip route` would say it
    kernel_route: str  # the route the kernel uses for the client
    probe: Probe

    @property
    def message(self) -> str:
        got = ", ".join(f"{r.iw_text()} (MSS {r.segment_size})" for r in self.probe.results)
        if self.ok:
            return f"verified: {self.probe.target}: IW {got} on the wire = initcwnd {self.expected} of {self.route}"
        note = "" if self.kernel_route == self.route else f"; the kernel's route for the client is {self.kernel_route}"
        return f"not verified: {self.probe.target}: IW {got} on the wire ≠ initcwnd {self.expected} of {self.route}{note}"


def verify(target: str, server_netns: str | None, client_netns: str | None,
           msses: Sequence[int | None] = (None,), timeout: float = 3.0) -> Verdict:
    """Raises ProbeError when the target cannot be measured or no managed route covers the client."""
    from iwlab.deploy import netlink

    p = probe(target, msses, timeout, client_netns)
    src = ipaddress.ip_network(p.results[0].source)
    netlink.check_namespace(server_netns)
    ipr = netlink.open_ipr(server_netns)
    try:
        routes = netlink.dump(ipr)
        devs = netlink.devices(ipr)
    finally:
        ipr.close()
    managed = netlink.covering([r for r in routes if r.proto == netlink.PROTO], src)
    if managed is None:
        raise ProbeError(f"no route iwlab manages in {server_netns or 'the root namespace'} covers the "
                         f"prober's address {src.network_address}: nothing to verify")
    used = netlink.covering(routes, src)
    expected = managed.metrics.get("RTAX_INITCWND")
    ok = all(not r.lower_bound and r.segments == expected for r in p.results)
    return Verdict(ok, expected, managed.describe(devs), used.describe(devs) if used else "none", p)

"""Policy files and the simulator's IW decisions outside the simulator.

A policy file is the `[iw]` section of a scenario — the same policy kinds and parameters,
validated by the same Rust code — plus `[[routes]]` that map destination prefixes onto them
(docs/scenario-format.md, "Policy files"):

    [iw.policies]
    ten = { kind = "fixed", segments = 10 }

    [[routes]]
    prefix = "10.77.2.0/24"       # IPv4/IPv6 CIDR, or "default"
    policy = "ten"
    initrwnd = 20                 # optional
    congctl = "cubic"             # optional

    [tcp]                         # optional: pacing of the connections deployed
    pacing = true                 # Linux's internal pacing (scenario key tcp.pacing)
    paced_iw = true               # first flight spread over the handshake RTT (needs pacing)

`Decider` answers "which IW for a new connection to this prefix" and learns from the events
the simulator's connections report (loss in the initial window, close), through
`iwlab._core.PolicyEngine`: the very `IwPolicy` implementations of `crates/iwlab-core/src/tcp/iw`.
One policy instance per policy name keeps per-destination state keyed by the route's prefix,
as one instance per (host, policy) keeps it per peer in the simulator.

>>> pf = parse_policy('[iw.policies]\\nten = { kind = "fixed", segments = 10 }\\n'
...                   '[[routes]]\\nprefix = "10.77.2.0/24"\\npolicy = "ten"\\n')
>>> pf.route_for("10.77.2.9").policy, pf.route_for("10.77.3.9")
('ten', None)
>>> Decider(pf).iw_segments("10.77.2.0/24", mss=1448, now_ns=0)
10

The package is split by concept: `file` (the file, its routes, its errors), `decider` (IW
decisions and learning, replay), `simulate` (a policy file inside a simulated scenario).
"""

from .decider import Decider, replay
from .file import PolicyFile, PolicyFileError, Route, load_policy, parse_policy
from .simulate import (MapError, check_routes_cover_hosts, map_prefixes, replay_run, sim_host_addresses,
                       sim_replay_records, with_policy)

__all__ = ["PolicyFileError", "Route", "PolicyFile", "parse_policy", "load_policy", "Decider", "replay",
           "with_policy", "sim_replay_records", "replay_run", "sim_host_addresses", "check_routes_cover_hosts",
           "map_prefixes", "MapError"]

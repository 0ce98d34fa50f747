"""Emulation: run a scenario on real Linux TCP stacks in network namespaces.

* `emulate(scenario, seed, out, duration)` — one run; the same records as `iwlab.run`
  (flows, pages, links, queues, summary with `"mode": "emulated"`).
* `cleanup()` — removes what a killed run left behind.
* `compare(scenario, seeds)` — simulator and emulator side by side (compare.py).

Layout: `plan.py` (scenario → hosts, addresses, links, kernel settings, agent work; pure),
`topology.py` (namespaces, veths, TUNs, policy routing), `agent.py` (the traffic agent, one
per host namespace), `run.py` (orchestration and teardown), `collect.py` (records),
`pcap.py` (first flights from a capture), `setup.sh` (tcpdump, ethtool).
"""

from iwlab.emulate.plan import PlanError, build_plan
from iwlab.emulate.run import EmulationError, emulate, preflight, relay_binary
from iwlab.emulate.topology import cleanup, leftovers

__all__ = ["EmulationError", "PlanError", "build_plan", "cleanup", "emulate", "leftovers", "preflight",
           "relay_binary"]

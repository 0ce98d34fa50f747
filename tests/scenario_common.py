"""Scenario text shared by the test modules: a dumbbell's head and a short-flows app."""

from __future__ import annotations


def dumbbell_toml(name: str, *, rate: str = "10Mbps", delay: str = "48ms", clients: int = 1, servers: int = 1,
                  seed: int = 1, duration: str = "3s", access_queue: bool = True, extra: str = "") -> str:
    """The head of a dumbbell scenario: name, seed, duration (and the lines of `extra`), the
    bottleneck (drop-tail, 1000 packets), `clients` and `servers` behind 100 Mb/s, 1 ms access
    links (drop-tail, 1000 packets, unless not `access_queue`). A test adds `[tcp]`, `[iw]` and
    `[[apps]]`."""
    q = 'queue = { kind = "drop-tail", limit = "1000pkt" }'
    edge = 'access = { rate = "100Mbps", delay = "1ms"' + (f", {q} }}" if access_queue else " }")
    return f"""
name = "{name}"
seed = {seed}
duration = "{duration}"{extra}
[topology]
kind = "dumbbell"
[topology.bottleneck]
rate = "{rate}"
delay = "{delay}"
{q}
[[topology.left]]
name = "clients"
count = {clients}
{edge}
[[topology.right]]
name = "servers"
count = {servers}
{edge}
"""


def short_flows(response: str, period: str, flows: int, start: str | None = None, extra: str = "") -> str:
    """One `[[apps]]` table: short flows of `response` from the servers to the clients, 100-byte
    requests, periodic arrivals."""
    return f"""[[apps]]
kind = "short-flows"
clients = "clients"
servers = "servers"{extra}
{"" if start is None else f'start = "{start}"{chr(10)}'}request = "100B"
response = "{response}"
arrivals = {{ kind = "periodic", period = "{period}" }}
flows = {flows}
"""


#: Linux's TCP as the emulation tests hold it: MSS 1448 (timestamps), SACK recovery, Reno.
TCP_SACK_RENO = """[tcp]
mss = 1448
timestamps = true
sack = true
recovery = "sack"
cc = "reno"
"""


def policy_toml(policies: dict[str, str], routes: list[tuple[str, str]]) -> str:
    """A policy file (`iwlab apply`, `iwlab watch`): `[iw.policies]` name = inline table, then one
    `[[routes]]` table per (prefix, policy)."""
    return "\n[iw.policies]\n" + "".join(f"{name} = {spec}\n" for name, spec in policies.items()) + "".join(
        f'\n[[routes]]\nprefix = "{prefix}"\npolicy = "{policy}"\n' for prefix, policy in routes)


FIXED_10 = '{ kind = "fixed", segments = 10 }'
AIMD_3_20 = '{ kind = "aimd", initial = 10, min = 3, max = 20, step = 2, raise_after = 3 }'

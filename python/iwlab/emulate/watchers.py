"""IW decisions the agents cannot make alone: adaptive policies (`aimd`, `learned`,
`rfc6928-fallback`) and `iw.routes` (a policy file, `iwlab run --policy`) are decided in the
emulation as on a host — by `iwlab watch` (iwlab.deploy.watch: the simulator's `PolicyEngine`
through `iwlab.policy.Decider`), one per sending host that needs it, inside that host's
namespace. It reads each closed connection's `tcp_info` (sock_diag), learns, and writes the
route `initcwnd` per destination prefix; a peer whose IW the watcher decides connects from its
own address (198.18.0.0 + 4g + 2) instead of an IW alias, so the sender's route lookup for its
SYN-ACK finds the watcher's route.

The watcher's file: the scenario's `iw.policies`; its `iw.routes` (prefixes in the emulator's
addresses, as `iwlab.policy.with_policy` simulates them); and, for an application whose server
policy is adaptive, one `/32` route per client host of that application (the simulator keeps an
adaptive policy's state per destination host).
"""

from __future__ import annotations

import json
from typing import Any

__all__ = ["ADAPTIVE", "READY", "watch_file"]

#: Policy kinds whose IW depends on what earlier connections saw.
ADAPTIVE = ("aimd", "learned", "rfc6928-fallback")
#: What `iwlab watch` prints once its routes are written and it watches.
READY = "watching"


def _lit(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return repr(v)
    return json.dumps(str(v))


def watch_file(policies: dict[str, dict[str, Any]], routes: list[dict[str, Any]]) -> str:
    """A policy file (docs/scenario-format.md, "Policy files") for `iwlab watch`: `policies`
    (name → the scenario's policy table) and `routes` ({"prefix", "policy", "initrwnd"?,
    "congctl"?}, in order). Checked by the policy-file parser before it is returned."""
    from iwlab.policy import parse_policy

    lines = ["# iwlab emulate: this host's IW decisions (iwlab watch)", "[iw.policies]"]
    for name, table in policies.items():
        lines.append(f"{name} = {{ " + ", ".join(f"{k} = {_lit(v)}" for k, v in table.items()) + " }")
    for r in routes:
        lines += ["", "[[routes]]"] + [f"{k} = {_lit(r[k])}" for k in ("prefix", "policy", "initrwnd", "congctl")
                                       if r.get(k) is not None]
    text = "\n".join(lines) + "\n"
    parse_policy(text, "<emulate watcher>")
    return text

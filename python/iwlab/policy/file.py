"""Policy files: parsing, validation (in the Rust core) and route lookup.

A policy file is the `[iw]` section of a scenario plus `[[routes]]` that map destination
prefixes onto its policies (docs/scenario-format.md, "Policy files").
"""

from __future__ import annotations

import functools
import ipaddress
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Union

from iwlab import _core

__all__ = ["Network", "PolicyFileError", "Route", "PolicyFile", "parse_policy", "load_policy"]

Network = Union[ipaddress.IPv4Network, ipaddress.IPv6Network]


class PolicyFileError(ValueError):
    """A rejected policy file. str(e) is "FILE:LINE: FIELD = VALUE is not allowed; expected
    WHAT" (the core's message: field path, value, what is allowed). Attributes: `path` (the
    file, None for text), `line` (1-based, None when unknown), `field` (`routes[0].prefix`)."""

    def __init__(self, message: str, path: str | None = None, line: int | None = None, field: str = "") -> None:
        super().__init__(message, path, line, field)
        self.message, self.path, self.line, self.field = message, path, line, field

    def __reduce__(self) -> tuple[Any, ...]:
        return type(self), (self.message, self.path, self.line, self.field)

    def __str__(self) -> str:
        where = self.path or "<policy>"
        return f"{where}:{self.line}: {self.message}" if self.line else f"{where}: {self.message}"


@dataclass(frozen=True)
class Route:
    """A route of a policy file: `prefix` None is the default route (both families)."""
    prefix: Network | None
    policy: str
    initrwnd: int | None
    congctl: str | None
    line: int

    @property
    def key(self) -> str:
        """The prefix as text ("default" for the default route): the destination key of `Decider`."""
        return "default" if self.prefix is None else str(self.prefix)


@dataclass(frozen=True)
class PolicyFile:
    path: str | None
    text: str
    policies: dict[str, dict]
    """Canonical policy specs by name, as a scenario's JSON has them."""
    routes: tuple[Route, ...]
    default: str | None
    """`[iw] default`: the policy of connections no route covers, in simulation."""
    tcp: dict = field(default_factory=lambda: {"pacing": False, "paced_iw": False})
    """`[tcp]`: {"pacing": bool, "paced_iw": bool}, the pacing deployed with the policies
    (`iwlab flow-iw attach --policy`) and simulated (`with_policy`); paced_iw implies pacing."""
    quic: dict = field(default_factory=dict)
    """`[quic]`: the QUIC settings of `iwlab advise --transport quic` (a scenario's `[quic]` keys, as given)."""

    @property
    def paced(self) -> bool:
        """Does the file deploy any pacing (a `sock_ops` program must carry it)?"""
        return bool(self.tcp["pacing"] or self.tcp["paced_iw"])

    @functools.cached_property
    def _keys(self) -> list[str]:
        return [r.key for r in self.routes]

    def route_for(self, addr: str | ipaddress.IPv4Address | ipaddress.IPv6Address) -> Route | None:
        """The route whose prefix covers `addr`, longest prefix first, the default route last;
        None if none does (the core's matching, crates/iwlab-prefix). ValueError for a bad address."""
        i = _core.route_for(self._keys, str(addr))
        return None if i is None else self.routes[i]

    def peer_route(self, addr: str | ipaddress.IPv4Address | ipaddress.IPv6Address) -> Route | None:
        """The route of a connection's peer, as the watcher and the eBPF reader key its evidence:
        `route_for` of an IPv4-mapped IPv6 address's IPv4 address; None for a loopback peer."""
        i = _core.peer_route(self._keys, str(addr))
        return None if i is None else self.routes[i]

    def route(self, prefix: str | Network | None) -> Route:
        """The route of exactly this prefix ("default" or None: the default route); KeyError if
        the file has none."""
        key = "default" if prefix is None else str(prefix)
        i = _core.prefix_index(self._keys, key)
        if i is None:
            have = ", ".join(self._keys) or "none"
            raise KeyError(f"prefix = {key!r}: {self.path or 'the policy file'} routes {have}")
        return self.routes[i]

    def to_scenario_policies(self) -> dict:
        """The `[iw.policies]` table, for simulation."""
        return json.loads(json.dumps(self.policies))

    def to_scenario_iw(self) -> dict:
        """The whole `[iw]` section (policies and, if set, default), for simulation."""
        out: dict[str, Any] = {"policies": self.to_scenario_policies()}
        if self.default is not None:
            out["default"] = self.default
        return out


def one_line(message: str) -> str:
    """A parser's message on one line: the toml crate prints the offending line with a caret
    under it (`3 | a = = 1`, `  |     ^`) between its first line and its explanation; the file
    and line are already in PolicyFileError, so the excerpt goes and the rest is joined."""
    parts = [p.strip() for p in message.splitlines()]
    parts = [p for p in parts if p and not re.match(r"^\d*\s*\|", p)]
    return "; ".join(parts)


def parse_policy(text: str, path: str | None = None) -> PolicyFile:
    """Parses and validates a policy file's TOML text (in the Rust core). Raises PolicyFileError."""
    try:
        data = json.loads(_core.parse_policy_file(text))
    except _core.ScenarioError as e:
        message, field, line, _column = e.args
        raise PolicyFileError(one_line(message), str(path) if path is not None else None, line, field) from None
    routes = tuple(Route(None if r["prefix"] is None else ipaddress.ip_network(r["prefix"]), r["policy"],
                         r["initrwnd"], r["congctl"], r["line"]) for r in data["routes"])
    return PolicyFile(str(path) if path is not None else None, text, data["policies"], routes, data["default"],
                      dict(data["tcp"]), dict(data.get("quic") or {}))


def load_policy(path: str | Path) -> PolicyFile:
    """Reads and validates a policy file. Raises PolicyFileError (also when it cannot be read)."""
    try:
        text = Path(path).read_text()
    except (OSError, UnicodeDecodeError) as e:
        raise PolicyFileError(f"cannot read the policy file: {e}", str(path)) from None
    return parse_policy(text, str(path))

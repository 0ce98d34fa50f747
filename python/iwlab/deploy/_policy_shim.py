"""TEMPORARY stand-in for `iwlab.policy` (load_policy, Decider) until the iw-policies engineer
lands it on main; deleted then, and flow_iw_app imports `iwlab.policy`. No validation beyond
what the tests need; the size-based function is the emulator's existing `iw_segments`, not a
new copy of the formula."""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path


@dataclass
class Route:
    prefix: str
    policy: str
    initrwnd: int | None = None
    congctl: str | None = None


@dataclass
class PolicyFile:
    policies: dict
    routes: list
    source: str


def load_policy(path: Path) -> PolicyFile:
    from iwlab.emulate.units import size_bytes

    data = tomllib.loads(Path(path).read_text())
    policies = {}
    for name, spec in data["iw"]["policies"].items():
        spec = dict(spec)
        if spec["kind"] == "size-based":
            spec = {"kind": "size-based", "theta": size_bytes(spec.get("theta", "200kB")),
                    "v": spec.get("v", 10), "min_iw": spec.get("min_iw", 4)}
        policies[name] = spec
    routes = [Route(r["prefix"], r["policy"], r.get("initrwnd"), r.get("congctl")) for r in data.get("routes", [])]
    return PolicyFile(policies, routes, str(path))


class Decider:
    def __init__(self, pf: PolicyFile):
        self.pf = pf

    def initial_window(self, dst: str, mss: int, now_ns: int, declared_size: int | None = None) -> int:
        from iwlab.emulate.agent import iw_segments

        route = next(r for r in self.pf.routes if r.prefix == dst)
        spec = self.pf.policies[route.policy]
        if spec["kind"] == "fixed":
            return spec["segments"] * mss
        if spec["kind"] != "size-based":
            raise NotImplementedError(f"temporary policy stand-in: kind {spec['kind']!r}")
        return iw_segments(spec, declared_size) * mss

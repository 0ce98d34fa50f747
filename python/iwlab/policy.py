"""Policy files and the simulator's IW decisions outside the simulator (issue 11 items 1 and 4).

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
"""

from __future__ import annotations

import ipaddress
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Union

from iwlab import _core

__all__ = ["PolicyFileError", "Route", "PolicyFile", "parse_policy", "load_policy", "Decider", "replay",
           "with_policy", "sim_replay_records", "replay_run"]

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

    @property
    def paced(self) -> bool:
        """Does the file deploy any pacing (a `sock_ops` program must carry it)?"""
        return bool(self.tcp["pacing"] or self.tcp["paced_iw"])

    def route_for(self, addr: str | ipaddress.IPv4Address | ipaddress.IPv6Address) -> Route | None:
        """The route whose prefix covers `addr`, longest prefix first, the default route last;
        None if none does."""
        ip = ipaddress.ip_address(addr)
        best: Route | None = None
        for r in self.routes:
            if r.prefix is not None and r.prefix.version == ip.version and ip in r.prefix:
                if best is None or r.prefix.prefixlen > best.prefix.prefixlen:  # type: ignore[union-attr]
                    best = r
        return best or next((r for r in self.routes if r.prefix is None), None)

    def route(self, prefix: str | Network | None) -> Route:
        """The route of exactly this prefix ("default" or None: the default route); KeyError if
        the file has none."""
        key = _key(prefix)
        for r in self.routes:
            if r.key == key:
                return r
        have = ", ".join(r.key for r in self.routes) or "none"
        raise KeyError(f"prefix = {key!r}: {self.path or 'the policy file'} routes {have}")

    def to_scenario_policies(self) -> dict:
        """The `[iw.policies]` table, for simulation."""
        return json.loads(json.dumps(self.policies))

    def to_scenario_iw(self) -> dict:
        """The whole `[iw]` section (policies and, if set, default), for simulation."""
        out: dict[str, Any] = {"policies": self.to_scenario_policies()}
        if self.default is not None:
            out["default"] = self.default
        return out


def _key(prefix: str | Network | None) -> str:
    if prefix is None or prefix == "default":
        return "default"
    try:
        return str(ipaddress.ip_network(prefix))
    except ValueError:
        return str(prefix)


def parse_policy(text: str, path: str | None = None) -> PolicyFile:
    """Parses and validates a policy file's TOML text (in the Rust core). Raises PolicyFileError."""
    try:
        data = json.loads(_core.parse_policy_file(text))
    except _core.ScenarioError as e:
        message, field, line, _column = e.args
        raise PolicyFileError(message, str(path) if path is not None else None, line, field) from None
    routes = tuple(Route(None if r["prefix"] is None else ipaddress.ip_network(r["prefix"]), r["policy"],
                         r["initrwnd"], r["congctl"], r["line"]) for r in data["routes"])
    return PolicyFile(str(path) if path is not None else None, text, data["policies"], routes, data["default"],
                      dict(data["tcp"]))


def load_policy(path: str | Path) -> PolicyFile:
    """Reads and validates a policy file. Raises PolicyFileError (also when it cannot be read)."""
    try:
        text = Path(path).read_text()
    except (OSError, UnicodeDecodeError) as e:
        raise PolicyFileError(f"cannot read the policy file: {e}", str(path)) from None
    return parse_policy(text, str(path))


_EVENT_KINDS = ("loss_in_initial_window", "closed")


class Decider:
    """The simulator's IW decisions for a policy file's routes. The policy of a prefix is its
    route's policy; one `IwPolicy` instance per policy name holds every prefix's state.

    `now_ns` is any nanosecond clock that only moves forward, also across restarts when
    snapshots are restored (evidence expiry compares against it): `time.time_ns()` on hosts,
    the simulation time when replaying a run.
    """

    SNAPSHOT_FORMAT = "iwlab-decider/1"

    def __init__(self, pf: PolicyFile):
        self.pf = pf
        self._engine = _core.PolicyEngine(json.dumps(pf.policies))
        self._now = 0

    def _policy(self, prefix: str | Network | None) -> tuple[str, str]:
        r = self.pf.route(prefix)
        return r.policy, r.key

    def iw_bytes(self, prefix: str, mss: int, now_ns: int, declared_size: int | None = None) -> int:
        """The IW, bytes, of a new connection to `prefix` (the route's prefix text, or
        "default") for a sender of `mss` bytes that declared `declared_size` bytes (or None)."""
        policy, key = self._policy(prefix)
        self._now = max(self._now, now_ns)
        return self._engine.initial_window(policy, key, mss, now_ns, declared_size)

    def iw_segments(self, prefix: str, mss: int, now_ns: int, declared_size: int | None = None) -> int:
        """The IW in segments, as `ip route … initcwnd` takes it: ⌊iw_bytes / mss⌋, at least 1
        (never above the policy's byte window; RFC 3390/6928 windows are byte bounds, e.g.
        4380 B at MSS 1000 is 4 segments)."""
        return max(1, self.iw_bytes(prefix, mss, now_ns, declared_size) // mss)

    def learn(self, prefix: str, now_ns: int, event: dict) -> None:
        """Feeds an event of a connection to `prefix`, as the simulator's connections report them:
        {"kind": "loss_in_initial_window", "bytes_sent": int} (loss detected while the initial or
        a restart window was the first unacknowledged flight; bytes sent in it), or
        {"kind": "closed", "bytes_sent": int, "loss": bool, "cwnd": int (bytes at close:
        tcpi_snd_cwnd × MSS), "bytes_acked": int (default bytes_sent), "retrans": int (segments,
        default 0)}. Other keys are ignored."""
        if not isinstance(event, dict) or event.get("kind") not in _EVENT_KINDS:
            kind = event.get("kind") if isinstance(event, dict) else event
            raise ValueError(f"event kind = {kind!r}: allowed one of {list(_EVENT_KINDS)}")

        def count(name: str, default: int | None = None) -> int | None:
            v = event.get(name, default)
            if v is None and default is None and name not in event:
                raise ValueError(f"event {event['kind']}: {name} is missing")
            if v is not None and (isinstance(v, bool) or not isinstance(v, int) or v < 0):
                raise ValueError(f"event {event['kind']}: {name} = {v!r}: allowed an integer >= 0")
            return v

        bytes_sent = count("bytes_sent")
        policy, key = self._policy(prefix)
        self._now = max(self._now, now_ns)
        if event["kind"] == "loss_in_initial_window":
            self._engine.learn(policy, key, now_ns, "loss_in_initial_window", bytes_sent)
            return
        loss = event.get("loss", False)
        if not isinstance(loss, bool):
            raise ValueError(f"event closed: loss = {loss!r}: allowed true or false")
        self._engine.learn(policy, key, now_ns, "closed", bytes_sent, loss, count("cwnd", 0),
                           count("bytes_acked", bytes_sent), count("retrans", 0))

    def state(self, prefix: str, mss: int = 1448, now_ns: int | None = None) -> dict:
        """What the policy of `prefix` holds now, JSON-able: prefix, policy, kind, the IW it would
        give now (bytes and segments at `mss`), and the policy's own account — evidence,
        since_ns, why — (for `iwlab watch status`). `now_ns` defaults to the latest time this
        Decider was given."""
        policy, key = self._policy(prefix)
        now = self._now if now_ns is None else now_ns
        detail = json.loads(self._engine.describe(policy, key, now))
        iw = self._engine.initial_window(policy, key, mss, now, None)
        out = {"prefix": key, "policy": policy, "kind": self._engine.kind(policy), "mss": mss, "now_ns": now,
               "iw_bytes": iw, "iw_segments": max(1, iw // mss)}
        if detail is None:
            detail = {"evidence": None, "since_ns": None,
                      "why": f"{out['kind']}: a fixed function of the MSS and declared size, no learned state"}
        detail.pop("iw_segments", None)
        out.update(detail)
        return out

    def snapshot(self) -> str:
        """Everything learned, as JSON text (restore it with `Decider.restore`)."""
        return json.dumps({"format": self.SNAPSHOT_FORMAT, "now_ns": self._now,
                           "engine": json.loads(self._engine.snapshot())}, sort_keys=True)

    @classmethod
    def restore(cls, pf: PolicyFile, snapshot: str) -> "Decider":
        """A Decider for `pf` with the state of `snapshot`. Policies of `pf` absent from the
        snapshot, or whose kind changed, start afresh; a malformed or foreign snapshot raises
        ValueError."""
        try:
            data = json.loads(snapshot)
        except (TypeError, json.JSONDecodeError) as e:
            raise ValueError(f"decider snapshot: not JSON ({e})") from None
        if not isinstance(data, dict) or data.get("format") != cls.SNAPSHOT_FORMAT:
            got = data.get("format") if isinstance(data, dict) else type(data).__name__
            raise ValueError(f"decider snapshot: format = {got!r}: allowed {cls.SNAPSHOT_FORMAT!r}")
        d = cls(pf)
        d._engine.restore(json.dumps(data.get("engine")))
        d._now = int(data.get("now_ns", 0))
        return d


def replay(decider: Decider, records: list[dict]) -> list[dict]:
    """Feeds a recorded sequence to `decider` in order and returns its decisions. Each record is
    {"time_ns", "dst" (a prefix of the decider's file), "kind", ...}: kind "iw" (a new
    connection asks: "mss", optional "declared_size") is answered — the returned list has one
    {"time_ns", "dst", "iw_bytes"} per such record —, any other kind is an event for
    `Decider.learn` (the record's other fields)."""
    out = []
    for rec in records:
        if rec["kind"] == "iw":
            iw = decider.iw_bytes(rec["dst"], rec["mss"], rec["time_ns"], rec.get("declared_size"))
            out.append({"time_ns": rec["time_ns"], "dst": rec["dst"], "iw_bytes": iw})
        else:
            decider.learn(rec["dst"], rec["time_ns"], {k: v for k, v in rec.items() if k not in ("time_ns", "dst")})
    return out


# ---- simulation ---------------------------------------------------------------------------------

def with_policy(scenario, pf: PolicyFile):
    """`scenario` (an iwlab.Scenario) simulating the policy file: its policies join the
    scenario's `[iw.policies]` (a name the scenario defines differently is an error), its routes
    become `[[iw.routes]]` (replacing any), and its `[iw] default`, if set, becomes the scenario's.
    Hosts have the emulator's addresses (198.18.0.0 + 4g + 2, g counting left hosts first, then
    right); a sender's IW towards a host a route covers is the route's policy, per sending host
    and keyed by the route's prefix; other destinations keep the application's policy
    (docs/scenario-format.md, "Policy files"). A file that paces (`[tcp]` pacing or
    paced_iw true) sets the scenario's `tcp.pacing` and `tcp.paced_iw` to its values, for every
    connection, as the deployed program paces every connection of its cgroup; a file that
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
        pacing = {"pacing": pf.tcp["pacing"], "paced_iw": pf.tcp["paced_iw"]}
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

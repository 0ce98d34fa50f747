"""IW-loss evidence shared between hosts: `iwlab watch export-evidence` writes what this host's
watcher saw as JSON lines, `iwlab watch import-evidence` stores another host's lines, and the
watcher feeds them to its policy — the same `Decider` (the simulator's `IwPolicy` code) that
learns from local connections — so a prefix that fell back on one edge falls back on all.

One record per line (format "iwlab-evidence/1"):

    {"format": "iwlab-evidence/1", "host": "edge-a", "ts": 1764200000.25,
     "prefix": "10.78.2.0/24", "kind": "loss_in_initial_window", "bytes_sent": 14000,
     "peer": "10.78.2.1", "retrans": 3, "iw": 10, "rtt_us": 20400, "detail": "at close"}

`host` is the exporting host (its provenance, kept in the importing state file); `ts` the
time it was seen (seconds since the epoch); `prefix` the policy file's route prefix
("default" for the default route); `kind` loss_in_initial_window or loss_in_restart_window;
`bytes_sent` the data sent in that window. Only IW-loss evidence travels: it is what makes
RFC 6928 §2/§12 fallback act, and it is small (one line per lossy first flight). Imported
records are never exported again, so two hosts importing each other's files do not echo.
"""

from __future__ import annotations

import json
import math
import socket
from typing import Any, Iterable

from iwlab.deploy.state import State

FORMAT = "iwlab-evidence/1"
KINDS = ("loss_in_initial_window", "loss_in_restart_window")
MAX_BYTES = 1 << 40  # a window of a terabyte is a corrupt record, not a first flight


class EvidenceError(ValueError):
    """A record that cannot be imported: names the line, the field, the value, what is allowed."""
    usage = True


def host_label(label: str | None) -> str:
    """The host's name in records, metrics and status: `label`, else the hostname."""
    return label if label else socket.gethostname()


def export(st: State, netns: str | None, host: str, since: float = 0.0) -> list[dict[str, Any]]:
    """This host's own evidence (not what it imported) since `since`, as records."""
    out = []
    for r in st.local_evidence(netns, since):
        rec = {"format": FORMAT, "host": host, "ts": r["ts"], "prefix": r["prefix"], "kind": r["kind"],
               "bytes_sent": r["bytes_sent"]}
        for k in ("peer", "retrans", "iw", "rtt_us", "detail"):
            if r[k] is not None:
                rec[k] = r[k]
        out.append(rec)
    return out


def _field(where: str, rec: dict, name: str, ok, allowed: str, optional: bool = False):
    if name not in rec:
        if optional:
            return None
        raise EvidenceError(f"{where}: {name} is missing; allowed {allowed}")
    v = rec[name]
    if optional and v is None:
        return None
    if not ok(v):
        raise EvidenceError(f"{where}: {name} = {json.dumps(v)[:60]} is not allowed; expected {allowed}")
    return v


def _count(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and 0 <= v <= MAX_BYTES


def parse(lines: Iterable[str], source: str = "<stdin>") -> list[dict[str, Any]]:
    """Validated records of JSON-lines text (empty lines skipped). EvidenceError names the
    first bad line, field and value."""
    out = []
    for i, line in enumerate(lines, 1):
        if not line.strip():
            continue
        where = f"{source}:{i}"
        try:
            rec = json.loads(line)
        except json.JSONDecodeError as e:
            raise EvidenceError(f"{where}: not JSON ({e.msg}); expected one {FORMAT} record per line") from None
        if not isinstance(rec, dict):
            raise EvidenceError(f"{where}: a JSON {type(rec).__name__}; expected one {FORMAT} record (an object)")
        _field(where, rec, "format", lambda v: v == FORMAT, json.dumps(FORMAT))
        out.append({
            "host": _field(where, rec, "host", lambda v: isinstance(v, str) and 0 < len(v) <= 253 and v.isprintable(),
                           "a host name (1-253 printable characters)"),
            "ts": float(_field(where, rec, "ts", lambda v: isinstance(v, (int, float)) and not isinstance(v, bool)
                               and math.isfinite(v) and v > 0, "seconds since the epoch > 0")),
            "prefix": _field(where, rec, "prefix", lambda v: isinstance(v, str) and 0 < len(v) <= 64,
                             "a route prefix of the policy file, e.g. \"10.78.2.0/24\" or \"default\""),
            "kind": _field(where, rec, "kind", lambda v: v in KINDS, f"one of {list(KINDS)}"),
            "bytes_sent": _field(where, rec, "bytes_sent", lambda v: _count(v) and v > 0, "an integer > 0 (bytes)"),
            "peer": _field(where, rec, "peer", lambda v: isinstance(v, str) and len(v) <= 64, "an address", True),
            "retrans": _field(where, rec, "retrans", _count, "an integer >= 0", True),
            "iw": _field(where, rec, "iw", _count, "an integer >= 0 (segments)", True),
            "rtt_us": _field(where, rec, "rtt_us", _count, "an integer >= 0 (µs)", True),
            "detail": _field(where, rec, "detail", lambda v: isinstance(v, str) and len(v) <= 200, "a short text", True),
        })
    return out


def routed(records: list[dict[str, Any]], pf) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(records whose prefix is a route of policy file `pf`, the others): evidence about a
    prefix this host does not route has nothing to decide here."""
    from iwlab.deploy import plan

    names = {plan.prefix_name(r) for r in pf.routes}
    return [r for r in records if r["prefix"] in names], [r for r in records if r["prefix"] not in names]


def event(rec) -> dict[str, Any]:
    """The policy event of a record (or a state-file row of one): both window kinds are the
    simulator's `loss_in_initial_window` (a restart window is an initial window again, RFC
    5681 §4.1), with the bytes sent in that window."""
    return {"kind": "loss_in_initial_window", "bytes_sent": int(rec["bytes_sent"])}

"""The simulator's IW decisions outside the simulator: `Decider` over
`iwlab._core.PolicyEngine` (the very `IwPolicy` implementations of crates/iwlab-core/src/tcp/iw),
and `replay` of recorded decisions and events."""

from __future__ import annotations

import json

from iwlab import _core

from .file import Network, PolicyFile

__all__ = ["Decider", "replay"]


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
        # Remembered per prefix text: PolicyFile.route parses the prefix (~20 µs), and the
        # watcher asks three times per connection (bench/watch_evidence.py at 10 000/s).
        if isinstance(prefix, str):
            cache = self.__dict__.setdefault("_routes", {})
            hit = cache.get(prefix)
            if hit is None or hit[0] is not self.pf:
                r = self.pf.route(prefix)
                hit = cache[prefix] = (self.pf, r.policy, r.key)
            return hit[1], hit[2]
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

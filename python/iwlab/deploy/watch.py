"""`iwlab watch`: real connections → the simulator's IW events → the policy's decisions → routes.

What it reads (sockdiag.py): every TCP socket's final `tcp_info` as the kernel destroys it
(short flows included), and a poll of the live sockets every `interval` for long ones. For
each connection with data sent, keyed by the policy file's longest-matching route prefix of
the peer address, it makes the events the simulator's `IwPolicy` learns from (`events_for`):

* `loss_in_initial_window` (RFC 6928 §2/§12 evidence) when the connection retransmitted
  while all it had sent fitted in its initial window — the final `tcp_info` of a connection
  whose original data (`bytes_sent − bytes_retrans`) is at most IW × MSS and that has
  `total_retrans > 0`; or, for a live connection, a poll that sees `total_retrans > 0` while
  `bytes_acked` is still within IW × MSS (the first flight is not yet acknowledged);
* the same `loss_in_initial_window` for loss in a restart window (RFC 5681 §4.1; RFC 6928 §2/§4),
  `bytes_sent` = data sent in that window (`RestartWindows`: a poll sees the connection idle
  longer than its RTO with nothing in flight, then more retransmissions while `bytes_acked` is
  inside the restart window min(IW, cwnd));
* `closed` for every connection: data sent (without retransmissions), whether it retransmitted,
  cwnd at close (bytes), bytes acknowledged, segments retransmitted.

After each event it asks the Decider (the simulator's policy code, `iwlab.policy`) for that
prefix's IW; when it differs from the IW on the route, it changes the route through
`apply.apply_policy` — the code path of `iwlab apply` — and records why. Rules with a clock
(the fallback cache's expiry) are re-evaluated every second. Counters, evidence, decisions
and the Decider's snapshot go to the state file once a second; a restarted watcher resumes
from them. Evidence other hosts saw (`iwlab watch import-evidence`, evidence.py) is fed to the
same Decider at start and every second, and decides the same way, with its host named.
"""

from __future__ import annotations

import fcntl
import json
import logging
import os
import select
import signal
import time
from typing import Any

from iwlab.deploy import apply, netlink, plan, sockdiag
from iwlab.deploy import evidence as shared_evidence
from iwlab.deploy.state import State, StateError

log = logging.getLogger("iwlab.watch")
KERNEL_DEFAULT_IW = 10  # initcwnd of a route without one (Linux, RFC 6928)
FLUSH_SECONDS = 1.0


def recover(ipr, st: State, netns: str | None, force: bool = False) -> list[str]:
    """Finishes what a killed apply or rollback left (all old, `apply.recover`) before the
    watcher reads which policy is applied: an interrupted first apply leaves none."""
    with st.lock():
        return apply.recover(ipr, st, netns, force)


def applied_policy(st: State, netns: str | None):
    """The policy file of the last apply in `netns`, as it was applied (its text is stored)."""
    from iwlab.policy import parse_policy

    rows = st.db.execute("SELECT policy_path, policy FROM generations WHERE netns = ? AND source = 'apply' "
                         "AND status IN ('applied', 'trial') AND policy IS NOT NULL ORDER BY id DESC LIMIT 1",
                         (netns or "",)).fetchall()
    if not rows:
        raise StateError(f"no policy applied {'in ' + netns if netns else 'here'} yet (state {st.path}): "
                         "run `iwlab apply POLICY` first, or pass --policy")
    return parse_policy(rows[0]["policy"], rows[0]["policy_path"])


def events_for(s: sockdiag.TcpSock, iw_segments: int, flagged: bool) -> list[dict[str, Any]]:
    """The IW events a closed connection gives (`flagged`: a poll already reported its IW loss)."""
    mss = s.snd_mss or 1448
    original = max(0, s.bytes_sent - s.bytes_retrans)
    loss = s.total_retrans > 0
    out = []
    if loss and not flagged and 0 < original <= iw_segments * mss:
        out.append({"kind": "loss_in_initial_window", "bytes_sent": original})
    # the simulator's Closed: bytes_sent = application data (no retransmissions), cwnd in bytes
    out.append({"kind": "closed", "bytes_sent": original, "loss": loss, "cwnd": s.snd_cwnd * mss,
                "bytes_acked": min(s.bytes_acked, original), "retrans": s.total_retrans})
    return out


def early_loss(s: sockdiag.TcpSock, iw_segments: int) -> dict[str, Any] | None:
    """IW-loss evidence from a live connection: retransmitted before its first flight was acked."""
    mss = s.snd_mss or 1448
    if s.total_retrans > 0 and s.bytes_acked <= iw_segments * mss and s.bytes_sent > 0:
        return {"kind": "loss_in_initial_window", "bytes_sent": min(s.bytes_sent - s.bytes_retrans, iw_segments * mss)}
    return None


# Congestion controls that bring their own `cong_control` hook: Linux skips `tcp_cwnd_restart`
# for them (tcp_slow_start_after_idle_check), so they have no restart window.
NO_RESTART_WINDOW = frozenset({"bbr", "bbr2", "bbr3"})


def restart_cwnd(cwnd: int, iw: int, idle_us: int, rto_us: int) -> int:
    """cwnd (segments) after an idle of `idle_us`, as Linux `tcp_cwnd_restart` sets it (RFC 5681
    §4.1, RFC 2861): halved once per RTO of idle, but not below the restart window min(IW, cwnd)."""
    rw = min(iw, cwnd)
    idle_us -= rto_us
    while idle_us > 0 and cwnd > rw:
        cwnd >>= 1
        idle_us -= rto_us
    return max(cwnd, rw)


class _Restart:
    __slots__ = ("start", "window", "retrans", "flagged")

    def __init__(self, start: int, window: int, retrans: int):
        self.start, self.window, self.retrans, self.flagged = start, window, retrans, False


class RestartWindows:
    """Loss in a restart window (RFC 6928 §2/§4, RFC 5681 §4.1) from polls of live connections.

    A poll that sees a connection with nothing in flight (`tcpi_unacked` 0) and no data sent for
    longer than its RTO (`tcpi_last_data_sent` > `tcpi_rto`) knows Linux will restart its cwnd
    before it sends again: it records where the restart window starts (`tcpi_bytes_acked`, all
    of the data so far), how large it is (`restart_cwnd` × MSS, from the route's IW, the cwnd and
    the idle time seen so far) and the retransmissions so far. A later poll that sees more
    retransmissions while `bytes_acked` is still inside that window (the simulator's
    `snd_una < end`), or the final `tcp_info` of a connection whose data since the restart fitted
    in it and that retransmitted since, is the simulator's `loss_in_initial_window` event with
    `bytes_sent` = data sent in the window. `restarted` holds the connections that went idle: the
    initial-window rules no longer apply to them (the simulator replaces its initial-window probe
    by the restart window's, sender.rs `restart_after_idle`)."""

    def __init__(self, slow_start_after_idle: bool = True):
        self.enabled = slow_start_after_idle
        self.conns: dict[int, _Restart] = {}
        self.restarted: set[int] = set()

    def poll(self, s: sockdiag.TcpSock, iw_segments: int) -> dict[str, Any] | None:
        r = self.conns.get(s.cookie)
        mss = s.snd_mss or 1448
        if (self.enabled and s.cong not in NO_RESTART_WINDOW and s.unacked == 0 and s.bytes_acked > 0
                and s.last_data_sent_ms * 1000 > s.rto_us > 0):
            window = restart_cwnd(s.snd_cwnd, iw_segments, s.last_data_sent_ms * 1000, s.rto_us) * mss
            self.conns[s.cookie] = _Restart(s.bytes_acked, window, s.total_retrans)
            self.restarted.add(s.cookie)
            return None
        if r is None or r.flagged:
            return None
        sent = s.bytes_sent - s.bytes_retrans - r.start
        if sent > 0 and s.total_retrans > r.retrans and s.bytes_acked < r.start + r.window:
            r.flagged = True
            return {"kind": "loss_in_initial_window", "bytes_sent": min(sent, r.window)}
        if s.bytes_acked >= r.start + r.window:  # the window is acknowledged (or a poll missed it)
            del self.conns[s.cookie]
        return None

    def closed(self, s: sockdiag.TcpSock) -> tuple[dict[str, Any] | None, bool]:
        """(restart-window event from the final tcp_info, whether the connection restarted)."""
        restarted = s.cookie in self.restarted
        self.restarted.discard(s.cookie)
        r = self.conns.pop(s.cookie, None)
        if r is None or r.flagged:
            return None, restarted
        sent = s.bytes_sent - s.bytes_retrans - r.start
        if s.total_retrans > r.retrans and 0 < sent <= r.window:
            return {"kind": "loss_in_initial_window", "bytes_sent": sent}, restarted
        return None, restarted


def slow_start_after_idle() -> bool:
    """net.ipv4.tcp_slow_start_after_idle of the current (thread's) network namespace."""
    try:
        with open("/proc/sys/net/ipv4/tcp_slow_start_after_idle") as f:
            return f.read().strip() != "0"
    except OSError:
        return True


def watch_lock_path(state_path, netns: str | None) -> str:
    """The lock a running watcher holds for (state file, namespace)."""
    return f"{state_path}.watch-{netns or 'root'}.lock"


def watcher_running(state_path, netns: str | None) -> bool:
    return running_evidence(state_path, netns) is not None


def running_evidence(state_path, netns: str | None) -> dict[str, Any] | None:
    """The evidence source of the watcher running for (state file, namespace) — `source`
    (bpf or poll), `requested` (--source), `degraded`, `why`, `since`, `pid` — as it wrote
    it into its lock file; None when none runs."""
    path = watch_lock_path(state_path, netns)
    if not os.path.exists(path):
        return None
    fd = os.open(path, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        return None
    except BlockingIOError:
        try:
            return json.loads(os.pread(fd, 65536, 0) or b"{}")
        except ValueError:  # written by a watcher before it said its source
            return {}
    finally:
        os.close(fd)


class Decisions:
    """The watcher's decision path, without sockets or routes: events in, per-prefix IW
    changes out. `iw` is the IW on each prefix's route (segments), `mss` the MSS the routes'
    IW is computed for. tests/test_deploy_decisions.py feeds it a recorded event sequence.
    `record`, if given, receives every event and every IW question in the record format of
    `iwlab.policy.replay` (`iwlab watch --record FILE` writes them as JSON lines)."""

    def __init__(self, pf, decider, record=None):
        self.pf, self.decider, self.record = pf, decider, record
        self.iw: dict[str, int] = {}
        self.mss: dict[str, int] = {}
        self._prefixes: dict[str, str | None] = {}

    # Peers remembered by `prefix`: every event of a connection asks for its peer's route, and
    # a watcher sees the same peers again and again (bench/watch_evidence.py, 10 000 connections/s).
    PREFIX_CACHE = 1 << 16

    def prefix(self, addr: str) -> str | None:
        """The policy prefix of a peer: the file's longest-matching route (None: not covered,
        or loopback)."""
        try:
            return self._prefixes[addr]
        except KeyError:
            pass
        if len(self._prefixes) >= self.PREFIX_CACHE:
            self._prefixes.clear()
        name = self._prefixes[addr] = self._match(addr)
        return name

    def _match(self, addr: str) -> str | None:
        r = self.pf.peer_route(addr)
        return None if r is None else plan.prefix_name(r)

    def learn(self, name: str, now_ns: int, ev: dict[str, Any]) -> tuple[int | None, int] | None:
        """Feeds one event; returns (old IW, new IW) when the prefix's IW changes."""
        if self.record is not None:
            self.record({"time_ns": now_ns, "dst": name, **ev})
        self.decider.learn(name, now_ns, ev)
        return self.check(name, now_ns)

    def feed(self, name: str, now_ns: int, ev: dict[str, Any], on_time_change=None) -> tuple[
            tuple[int | None, int] | None, tuple[int | None, int] | None]:
        """Feeds one event, keeping apart what time alone changed before it (evidence expired)
        from what the event changed, so that an IW raised by expiry is not put down to the
        connection that happened to close next. `on_time_change(change)` acts on the first (the
        watcher writes the route; default: take the new IW as the route's) before the event is
        learned. Returns (change by time, change by the event)."""
        by_time = self.check(name, now_ns)
        if by_time is not None:
            if on_time_change is None:
                self.iw[name] = by_time[1]
            else:
                on_time_change(by_time)
        return by_time, self.learn(name, now_ns, ev)

    def feed_imported(self, rows, on_time_change=None):
        """Feeds evidence other hosts saw (state rows or records of `evidence.parse`) as events
        of their prefix, learned now (another host's clock cannot move the Decider's back);
        yields (row, change by the event) for each row whose prefix the policy routes (one it
        no longer routes, after a policy change, is skipped). `on_time_change(name, change)`
        as in `feed`."""
        names = {plan.prefix_name(r) for r in self.pf.routes}
        for row in rows:
            name = row["prefix"]
            if name not in names:
                continue
            cb = None if on_time_change is None else (lambda by_time, n=name: on_time_change(n, by_time))
            _, change = self.feed(name, time.time_ns(), shared_evidence.event(row), cb)
            yield row, change

    def check(self, name: str, now_ns: int) -> tuple[int | None, int] | None:
        old, mss = self.iw.get(name), self.mss.get(name, 1448)
        if self.record is not None:
            self.record({"time_ns": now_ns, "dst": name, "kind": "iw", "mss": mss})
        new = self.decider.iw_segments(name, mss, now_ns)
        return None if new == old else (old, new)


class Counts:
    __slots__ = ("connections", "iw_loss", "segs_out", "retrans", "rtt_us_sum", "rtt_n", "last_evidence")

    def __init__(self):
        self.connections = self.iw_loss = self.segs_out = self.retrans = self.rtt_us_sum = self.rtt_n = 0
        self.last_evidence = None

    def as_dict(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in self.__slots__}


class Watcher:
    def __init__(self, ipr, st: State, netns: str | None, pf, interval: float = 0.1,
                 metrics_addr: tuple[str, int] | None = None, record: str | None = None, evidence=None,
                 host: str | None = None, force: bool = False, evidence_info: dict[str, Any] | None = None):
        """`evidence`: an `evidence_bpf.BpfEvidence`, or None for sock_diag polling;
        `evidence_info` (`evidence_bpf.describe`) says which and why, for `iwlab watch status`
        and the `iwlab_evidence_source` metric. `force`: write IWs beyond the bound
        (`netlink.check_iw`), as `iwlab apply --force` does."""
        self.ipr, self.st, self.netns, self.pf, self.interval = ipr, st, netns, pf, interval
        self.force = force
        self.host = shared_evidence.host_label(host)
        self._lock_fd = self._exclusive()
        self.evidence_info = dict(evidence_info or {"source": "poll" if evidence is None else "bpf",
                                                    "requested": None, "degraded": False, "why": None},
                                  since=time.time(), pid=os.getpid())
        os.pwrite(self._lock_fd, json.dumps(self.evidence_info).encode(), 0)  # read by `status`
        self.record_file = None if record is None else open(record, "a", buffering=1)
        write = None if record is None else (lambda r: self.record_file.write(json.dumps(r) + "\n"))
        self.decisions = Decisions(pf, apply.decider_for(st, netns, pf), write)
        self.decider = self.decisions.decider
        self.iw, self.mss = self.decisions.iw, self.decisions.mss
        self.sha = plan.sha(pf.text)
        self.counts: dict[str, Counts] = {}
        self.evidence: list[tuple] = []
        self.flagged: set[int] = set()  # cookies of live connections already reported
        self.stop = False
        self.metrics = None
        if metrics_addr is not None:
            from iwlab.deploy.metrics import Metrics

            self.metrics = Metrics(metrics_addr, self.host, {plan.prefix_name(r): r.policy for r in pf.routes})
            self.metrics.evidence_source(self.evidence_info)
        # The evidence source: an `evidence_bpf.BpfEvidence` (exact, from eBPF), or sock_diag
        # destroy events and INET_DIAG polls of the namespace.
        self.bpf = evidence
        self.destroyed = self.poll_sock = None
        self.restarts = RestartWindows(False)
        if evidence is None:
            with netlink.in_netns(netns):  # the sockets stay in the namespace
                self.destroyed = sockdiag.DestroyListener()
                self.poll_sock = sockdiag._socket()
                self.restarts = RestartWindows(slow_start_after_idle())
        self._routes_now("watch start: routes as the policy and the saved evidence say")
        self.consumed: list[int] = []
        self.feed_imports()

    def _exclusive(self) -> int:
        fd = os.open(watch_lock_path(self.st.path, self.netns), os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise StateError(f"another `iwlab watch` uses {self.st.path} for "
                             f"{'namespace ' + self.netns if self.netns else 'the root namespace'}") from None
        os.ftruncate(fd, 0)  # the lock file holds the running watcher's evidence source
        return fd

    # -- routes -----------------------------------------------------------------------------
    def _iw_for(self, now_ns: int):
        return lambda name, mss: self.decider.iw_segments(name, mss, now_ns)

    def _routes_now(self, reason: str, only: set[str] | None = None) -> int | None:
        now = time.time_ns()
        p, gid, notes = apply.apply_policy(self.ipr, self.st, self.netns, self.pf, self._iw_for(now),
                                           source="watch", reason=reason, only=only, force=self.force)
        for n in notes:
            log.warning(n)
        for key, (name, r) in plan.targets(self.ipr, self.pf, self._iw_for(now), self.st.managed(self.netns),
                                           only=only).items():
            self.iw[name] = int(r.metrics.get("RTAX_INITCWND", KERNEL_DEFAULT_IW))
            self.mss.setdefault(name, plan._mss(self.ipr, r))
            if self.metrics:
                self.metrics.prefix(self.metrics.iw, name).set(self.iw[name])
        return gid

    def _decide(self, name: str, why: str, change: tuple[int | None, int] | None) -> None:
        if change is None:
            return
        old, new = change
        reason = f"{why}: IW {old} → {new} segments ({self.pf.policies[self._route(name).policy].get('kind')} policy)"
        try:
            gid = self._routes_now(reason, only={name})
        except netlink.NetlinkError as e:  # the route stays; the next check (1 s) tries again
            log.error("%s: could not apply IW %s: %s", name, new, e)
            return
        self.st.add_decision(self.netns, name, old, new, reason, gid)
        log.warning("%s: %s", name, reason)
        if self.metrics:
            self.metrics.prefix(self.metrics.decisions, name, "down" if old is not None and new < old else "up").inc()

    def _route(self, name: str):
        return next(r for r in self.pf.routes if plan.prefix_name(r) == name)

    # -- connections ------------------------------------------------------------------------
    def _prefix(self, addr: str) -> str | None:
        return self.decisions.prefix(addr)

    def _learn(self, name: str, s: sockdiag.TcpSock, ev: dict[str, Any], source: str = "at close",
               window: str = "initial") -> None:
        _, change = self.decisions.feed(name, time.time_ns(), ev,
                                        lambda by_time: self._decide(name, "re-evaluated (time passed)", by_time))
        c = self.counts.setdefault(name, Counts())
        if window != "initial":
            source = f"{window} window, {source}"
        if ev["kind"] == "loss_in_initial_window":
            c.iw_loss += 1
            c.last_evidence = time.time()
            self.evidence.append((time.time(), name, f"loss_in_{window}_window", s.dst, ev["bytes_sent"], s.total_retrans,
                                  self.iw.get(name), s.min_rtt_us, source))
            if self.metrics:
                self.metrics.prefix(self.metrics.iw_loss, name).inc()
        self._decide(name, f"{ev['kind']} ({source}) from {s.dst} ({ev['bytes_sent']} bytes sent, "
                           f"{s.total_retrans} retransmissions)", change)

    def on_closed(self, s: sockdiag.TcpSock) -> None:
        if not s.has_info or s.bytes_sent == 0:
            self.flagged.discard(s.cookie)
            return
        name = self._prefix(s.dst)
        if name is None:
            self.flagged.discard(s.cookie)
            return
        c = self.counts.setdefault(name, Counts())
        c.connections += 1
        c.segs_out += s.data_segs_out
        c.retrans += s.total_retrans
        if 0 < s.min_rtt_us < 0xFFFFFFFF:  # ~0: no RTT sample
            c.rtt_us_sum += s.min_rtt_us
            c.rtt_n += 1
        if self.metrics:
            self.metrics.observe(name, s)
        flagged = s.cookie in self.flagged
        self.flagged.discard(s.cookie)
        restart_ev, restarted = self.restarts.closed(s)
        if restart_ev is not None:
            self._learn(name, s, restart_ev, window="restart")
        for ev in events_for(s, self.iw.get(name, KERNEL_DEFAULT_IW), flagged or restarted):
            self._learn(name, s, ev)

    def on_iw_retrans(self, s: sockdiag.TcpSock, ev: dict[str, Any]) -> None:
        """An initial-window segment retransmitted (the bpf source), as it happens."""
        name = self._prefix(s.dst)
        if name is None or s.cookie in self.flagged:
            return
        self.flagged.add(s.cookie)
        self._learn(name, s, ev, "at the retransmission")

    def on_restart_retrans(self, s: sockdiag.TcpSock, ev: dict[str, Any]) -> None:
        """A restart-window segment retransmitted (the bpf source, once per window)."""
        name = self._prefix(s.dst)
        if name is not None:
            self._learn(name, s, ev, "at the retransmission", window="restart")

    def on_summary(self, name: str, rec: dict[str, Any]) -> None:
        """Clean closes of a route whose policy learns only from IW-loss events, summed by the
        bpf reader (evidence_bpf.SUMMARY_KINDS): counted as `on_closed` counts each; the policy
        is asked again for the prefix (evidence may have expired), as before each event."""
        c = self.counts.setdefault(name, Counts())
        c.connections += rec["connections"]
        c.segs_out += rec["data_segs_out"]
        c.retrans += rec["total_retrans"]
        c.rtt_us_sum += rec["rtt_us_sum"]
        c.rtt_n += rec["rtt_n"]
        if self.metrics:
            self.metrics.observe_sum(name, rec)
        self._decide(name, "re-evaluated (time passed)", self.decisions.check(name, time.time_ns()))

    def on_bpf(self) -> None:
        for what, s, ev in self.bpf.read():
            if what == "iw_loss":
                self.on_iw_retrans(s, ev)
            elif what == "restart_loss":
                self.on_restart_retrans(s, ev)
            elif what == "summary":
                self.on_summary(s, ev)
            else:  # the bpf source reported any IW loss at its retransmission: no close-time rule
                self.flagged.add(s.cookie)
                self.on_closed(s)

    def on_live(self, s: sockdiag.TcpSock) -> None:
        if not s.has_info:
            return
        name = self._prefix(s.dst)
        if name is None:
            return
        ev = self.restarts.poll(s, self.iw.get(name, KERNEL_DEFAULT_IW))
        if ev is not None:
            self._learn(name, s, ev, "seen by a poll", window="restart")
        if s.cookie in self.flagged or s.cookie in self.restarts.restarted:
            return
        ev = early_loss(s, self.iw.get(name, KERNEL_DEFAULT_IW))
        if ev is not None:
            self.flagged.add(s.cookie)
            self._learn(name, s, ev, "seen by a poll")

    def feed_imports(self) -> None:
        """Feeds evidence imported from other hosts to the policy, as a local event would be
        (`Decisions.feed`, then the route), naming the host in the decision's reason. It is
        learned now: another host's clock cannot move the Decider's clock back."""
        rows = self.st.pending_imports(self.netns)
        self.consumed += [row["id"] for row in rows]
        for row, change in self.decisions.feed_imported(
                rows, lambda name, by_time: self._decide(name, "re-evaluated (time passed)", by_time)):
            self._decide(row["prefix"], f"{row['kind']} imported from host {row['host']} (peer {row['peer'] or '?'}, "
                                        f"{row['bytes_sent']} bytes sent)", change)
            if self.metrics:
                self.metrics.prefix(self.metrics.imported, row["prefix"], row["host"]).inc()

    # -- loop -------------------------------------------------------------------------------
    def flush(self) -> None:
        self.st.add_counts(self.netns, {k: c.as_dict() for k, c in self.counts.items()}, self.decider.snapshot(),
                           str(self.pf.path), self.sha)
        if self.consumed:  # after the snapshot that holds what they taught
            self.st.mark_consumed(self.consumed)
            self.consumed = []
        if self.evidence:
            self.st.add_evidence(self.netns, self.evidence)
        self.counts.clear()
        self.evidence.clear()

    def run(self, duration: float | None = None) -> None:
        # A signal wakes the select below through this pipe: Python retries a select that a
        # signal interrupted with the time left (PEP 475), so a flag alone waits for the timeout.
        wake_r, wake_w = os.pipe()
        os.set_blocking(wake_w, False)

        def on_signal(*_):
            self.stop = True
            try:
                os.write(wake_w, b"\0")
            except OSError:  # the pipe is full: a wake-up is already pending
                pass

        for sig in (signal.SIGTERM, signal.SIGINT):
            signal.signal(sig, on_signal)
        where = f"namespace {self.netns}" if self.netns else "the root namespace"
        log.warning("watching %s: %s", where, ", ".join(f"{k} IW {v}" for k, v in sorted(self.iw.items())))
        print(f"watching {where}" + (f" (evidence from eBPF, cgroup {self.bpf.cgroup})" if self.bpf else ""),
              flush=True)
        end = None if duration is None else time.monotonic() + duration
        next_poll = next_flush = time.monotonic()
        try:
            while not self.stop and (end is None or time.monotonic() < end):
                timeout = max(0.0, min(next_poll, next_flush) - time.monotonic())
                try:
                    ready, _, _ = select.select([self.bpf or self.destroyed, wake_r], [], [], timeout)
                except InterruptedError:
                    continue
                if self.stop:
                    break
                if self.bpf is not None and self.bpf in ready:
                    self.on_bpf()
                elif self.destroyed is not None and self.destroyed in ready:
                    for s in self.destroyed.read():
                        self.on_closed(s)
                now = time.monotonic()
                if self.bpf is not None:
                    next_poll = now + 3600.0  # nothing to poll
                elif now >= next_poll:
                    for s in sockdiag.dump(self.poll_sock):
                        self.on_live(s)
                    next_poll = now + self.interval
                if now >= next_flush:
                    self.feed_imports()
                    for name in list(self.iw):
                        self._decide(name, "re-evaluated (time passed)", self.decisions.check(name, time.time_ns()))
                    self.flush()
                    if self.metrics:
                        self.metrics.missed.set(self.bpf.missed if self.bpf else self.destroyed.overruns)
                    next_flush = now + FLUSH_SECONDS
        finally:
            self.flush()
            self.close()
            os.close(wake_r)
            os.close(wake_w)

    def close(self) -> None:
        if self.record_file is not None:
            self.record_file.close()
        if self.bpf is not None:
            self.bpf.close()
        else:
            self.destroyed.close()
            self.poll_sock.close()
        if self.metrics:
            self.metrics.close()
        os.close(self._lock_fd)


def _policy_states(st: State, netns: str | None, w) -> dict[str, Any]:
    """What the policy holds per prefix now (Decider.state), from the watcher's snapshot."""
    if w is None or not w["snapshot"]:
        return {}
    try:
        pf = applied_policy(st, netns)
    except StateError:
        return {}
    if plan.sha(pf.text) != w["policy_sha"]:
        return {}
    from iwlab.policy import Decider

    d = Decider.restore(pf, w["snapshot"])
    return {plan.prefix_name(r): d.state(plan.prefix_name(r)) for r in pf.routes}


def kernel_iw(ipr) -> tuple[dict[str, int], int]:
    """The initcwnd of every route carrying iwlab's protocol, by policy prefix ("default" for
    0.0.0.0/0 and ::/0; a route without initcwnd has the kernel's 10), and how many such routes."""
    ours = [r for r in netlink.dump(ipr, None) if r.proto == netlink.PROTO]
    iw: dict[str, int] = {}
    for r in ours:
        name = "default" if r.net.prefixlen == 0 else str(r.net)
        iw.setdefault(name, int(r.metrics.get("RTAX_INITCWND") or KERNEL_DEFAULT_IW))
    return iw, len(ours)


STATUS_SCHEMA = "iwlab-watch-status/1"


def _last_decisions(st: State, netns: str | None) -> dict[str, dict[str, Any]]:
    rows = st.db.execute("SELECT d.* FROM decisions d JOIN (SELECT prefix, MAX(id) AS id FROM decisions "
                         "WHERE netns = ? GROUP BY prefix) m ON d.id = m.id", (netns or "",)).fetchall()
    return {r["prefix"]: {"ts": r["ts"], "old_iw": r["old_iw"], "new_iw": r["new_iw"], "reason": r["reason"]}
            for r in rows}


def status(st: State, netns: str | None, ipr=None, host: str | None = None) -> dict[str, Any]:
    """The watcher's per-prefix state (schema STATUS_SCHEMA, docs/deploy.md "Fleet view"). With
    `ipr` (a netlink socket in `netns`), the IW is read from the routes themselves — what new
    connections get, whatever the state file remembers after a stop, rollback or apply — and
    `routes_managed` counts the routes with iwlab's protocol. `host` names this host (default
    its hostname) so that many hosts' outputs can be merged."""
    w = st.watch_row(netns)
    states = _policy_states(st, netns, w)
    in_kernel, n_ours = kernel_iw(ipr) if ipr is not None else (None, None)
    counts, last = st.evidence_counts(netns), _last_decisions(st, netns)
    prefixes = []
    for r in st.prefixes(netns):
        segs = r["segs_out"]
        iw = r["iw"] if in_kernel is None else in_kernel.get(r["prefix"])
        ps = states.get(r["prefix"])
        prefixes.append({"prefix": r["prefix"], "iw": iw, "since": r["since"], "why": r["why"],
                         "policy": None if ps is None else ps["policy"],
                         "connections": r["connections"], "iw_loss_events": r["iw_loss"],
                         "evidence": counts.get(r["prefix"], {"local": 0, "imported": 0}),
                         "last_evidence": r["last_evidence"], "last_decision": last.get(r["prefix"]),
                         "retransmission_rate": (r["retrans"] / segs) if segs else None,
                         "handshake_rtt_ms": (r["rtt_us_sum"] / r["rtt_n"] / 1000) if r["rtt_n"] else None,
                         "policy_state": ps})
    ev = running_evidence(st.path, netns)
    evidence_source = ({"running": False, "source": None, "requested": None, "degraded": None,
                        "why": "no watcher is running"} if ev is None else {"running": True, **ev})
    return {"schema": STATUS_SCHEMA, "host": shared_evidence.host_label(host), "netns": netns,
            "evidence_source": evidence_source,
            "policy": None if w is None else w["policy"],
            "updated": None if w is None else w["updated"], "prefixes": prefixes,
            "routes_managed": len(st.managed(netns)) if n_ours is None else n_ours,
            "decisions": [dict(d) for d in st.recent_decisions(netns, 10)]}


def _t(ts: float | None) -> str:
    return "-" if ts is None else time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(ts))


def _evidence_line(ev: dict[str, Any]) -> str:
    if not ev["running"]:
        return "  evidence: - (no watcher is running)"
    if not ev.get("source"):
        return "  evidence: (the running watcher did not say)"
    return (f"  evidence: {ev['source']}" + (" — DEGRADED" if ev.get("degraded") else "")
            + f" ({ev.get('why')}; --source {ev.get('requested')}, since {_t(ev.get('since'))})")


def status_text(out: dict[str, Any]) -> str:
    where = f"namespace {out['netns']}" if out["netns"] else "the root namespace"
    if not out["prefixes"]:
        return (f"{where}: no watcher state yet ({out['routes_managed']} route(s) managed by iwlab)\n"
                + _evidence_line(out["evidence_source"]))
    lines = [f"{out['host']}, {where}: policy {out['policy']}, updated {_t(out['updated'])}",
             _evidence_line(out["evidence_source"])]
    for p in out["prefixes"]:
        rate = "-" if p["retransmission_rate"] is None else f"{100 * p['retransmission_rate']:.2f} %"
        rtt = "-" if p["handshake_rtt_ms"] is None else f"{p['handshake_rtt_ms']:.2f} ms"
        lines.append(f"  {p['prefix']}: IW {p['iw'] if p['iw'] is not None else '(no iwlab route)'} since {_t(p['since'])}; "
                     f"{p['connections']} connections, {p['iw_loss_events']} IW-loss events"
                     + (f" (+{p['evidence']['imported']} imported)" if p["evidence"]["imported"] else "") + " (last "
                     f"{_t(p['last_evidence'])}), retransmissions {rate}, handshake RTT {rtt}")
        if p["why"]:
            lines.append(f"    why: {p['why']}")
        if p["policy_state"]:
            lines.append(f"    policy: {json.dumps(p['policy_state'], sort_keys=True)}")
    return "\n".join(lines)

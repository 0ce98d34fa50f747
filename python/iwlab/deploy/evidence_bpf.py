"""IW-loss evidence from eBPF (`iwlab watch --source bpf`): exact, at the retransmission.

`iwlab-bpf evidence --cgroup DIR` (crates/iwlab-bpf, bpf/evidence.bpf.c) attaches a sock_ops
program to the cgroup the watched service runs in and prints JSON lines from its ring buffer:

* `iw_retrans` — a segment of a connection's initial window (sequence numbers inside
  [first data byte, + IW·MSS), IW = cwnd at establishment) was retransmitted, emitted by
  `tcp_retransmit_skb` as it happens: the simulator's `loss_in_initial_window` with
  `bytes_sent` = data sent so far, at most IW·MSS. Every connection length is covered, and a
  loss after the first ACK or between two polls is still seen — the poll source's limits;
* `close` — the connection's counters at TCP_CLOSE (data sent and acknowledged without
  retransmissions, IW retransmissions, all retransmissions, cwnd): the `closed` event. A close
  with IW retransmissions whose `iw_retrans` record was lost (`ringbuf_full`) still gives the
  IW-loss event, then;
* `rs_retrans` — a segment of a restart window (the window Linux's `tcp_cwnd_restart` sets when
  a connection sends after an idle longer than its RTO, RFC 5681 §4.1) was retransmitted, once
  per window: `loss_in_initial_window` with `bytes_sent` = data sent in that window (RFC 6928
  §2/§4 count it as evidence too);
* `summary` — with a route table (`prefix_args`), the clean closes of routes whose policy
  learns only from IW-loss events, summed per prefix every `summary_ms` (crates/iwlab-bpf
  src/summary.rs): the watcher's per-connection work was its cost at 10 000 connections/s;
* `stats` — the program's counters once a second (`ringbuf_full`: records lost).

A child process rather than a binding in the extension: the link, ring buffer and per-socket
storage belong to it alone and go when it ends, however it ends (its parent's death kills it:
PR_SET_PDEATHSIG), so a crashed or killed watcher leaves nothing attached; and the reader's
inner loop runs in Rust, outside the watcher's interpreter.
"""

from __future__ import annotations

import json
import os
import select
import subprocess
import time
from typing import Any, Iterator

from iwlab import _core
from iwlab.deploy import flow_iw, sockdiag

AF_INET, AF_INET6 = 2, 10
TCP_CLOSE = 7
START_TIMEOUT = 20.0  # seconds for the verifier and the attachment on a loaded machine


# Policy kinds whose decisions depend only on IW-loss events (`IwConfig::SUMMARY_KINDS` of the
# core, crates/iwlab-core/src/tcp/iw/mod.rs, whose test checks the list against each policy's
# `learn`): their routes' clean closes can be summed without changing a decision
# (tests/test_evidence_summary.py checks each against the Decider). `aimd` and `learned` learn
# from every close: their routes keep a line per connection, as does any kind not listed.
SUMMARY_KINDS = frozenset(_core.summary_kinds())


def prefix_args(pf) -> list[str]:
    """`iwlab-bpf evidence --prefix` items for a policy file's routes: KEY=sum or KEY=each."""
    out = []
    for r in pf.routes:
        kind = pf.policies.get(r.policy, {}).get("kind")
        out += ["--prefix", f"{r.key}={'sum' if kind in SUMMARY_KINDS else 'each'}"]
    return out


class BpfUnavailable(RuntimeError):
    """The bpf source cannot run here; the message says why (the watcher falls back to polling).
    `usage`: the configuration is wrong (no such cgroup, not root, no iwlab-bpf): `iwlab watch
    --source bpf` exits 2, which the systemd units do not restart on; else the kernel or the
    reader failed (exit 1, restarted)."""

    def __init__(self, message: str, usage: bool = False):
        super().__init__(message)
        self.usage = usage


def sock(rec: dict[str, Any]) -> sockdiag.TcpSock:
    """A record as the sock_diag socket the watcher's decision path takes: `bytes_sent` is the
    original data (the program counts sequence space, retransmissions never included)."""
    dst = rec["dst"]
    return sockdiag.TcpSock(
        cookie=rec["cookie"], family=AF_INET6 if ":" in dst else AF_INET, src=rec["src"], sport=rec["sport"],
        dst=dst, dport=rec["dport"], state=TCP_CLOSE, snd_mss=rec["mss"], rtt_us=rec["srtt_us"],
        min_rtt_us=rec["min_rtt_us"], snd_cwnd=rec["snd_cwnd"], total_retrans=rec["total_retrans"],
        bytes_acked=rec["bytes_acked"], bytes_sent=rec["bytes_sent"], bytes_retrans=0,
        data_segs_out=rec["data_segs_out"], delivery_rate=0, has_info=True)


def iw_loss(rec: dict[str, Any]) -> dict[str, Any]:
    """The `loss_in_initial_window` event of a record with IW retransmissions."""
    return {"kind": "loss_in_initial_window",
            "bytes_sent": max(1, min(rec["bytes_sent"], rec["iw_segments"] * rec["mss"]))}


def restart_loss(rec: dict[str, Any]) -> dict[str, Any]:
    """The `loss_in_initial_window` event of a record with restart-window retransmissions:
    `bytes_sent` = data sent in the (last) restart window, min(snd_nxt, end) − start as the
    simulator's sender counts it (tcp/sender.rs)."""
    return {"kind": "loss_in_initial_window",
            "bytes_sent": max(1, min(rec["bytes_sent"] - rec["rs_start"], rec["rs_window"]))}


class Records:
    """Turns the record stream into the watcher's calls: ("iw_loss", sock, event) and
    ("restart_loss", sock, event) at the retransmission (or at close when that record was lost),
    ("closed", sock, None), and ("summary", prefix, sums) for summed clean closes."""

    def __init__(self):
        self.reported: set[int] = set()
        self.rs_reported: set[int] = set()
        self.stats: dict[str, int] = {}
        self.counts = {"iw_retrans": 0, "rs_retrans": 0, "close": 0, "summary": 0}

    def feed(self, rec: dict[str, Any]) -> Iterator[tuple[str, Any, dict[str, Any] | None]]:
        kind = rec.get("kind")
        if kind == "stats":
            self.stats = {k: v for k, v in rec.items() if k != "kind"}
            return
        if kind not in self.counts:
            return
        self.counts[kind] += 1
        if kind == "summary":
            yield "summary", rec["prefix"], rec
            return
        s = sock(rec)
        if kind == "iw_retrans":
            self.reported.add(s.cookie)
            yield "iw_loss", s, iw_loss(rec)
            return
        if kind == "rs_retrans":
            self.rs_reported.add(s.cookie)
            yield "restart_loss", s, restart_loss(rec)
            return
        if rec["iw_retrans"] > 0 and s.cookie not in self.reported:
            yield "iw_loss", s, iw_loss(rec)
        if rec.get("rs_retrans", 0) > 0 and s.cookie not in self.rs_reported:
            yield "restart_loss", s, restart_loss(rec)
        self.reported.discard(s.cookie)
        self.rs_reported.discard(s.cookie)
        yield "closed", s, None


class BpfEvidence:
    """The running `iwlab-bpf evidence` child for one cgroup (a name below flow_iw.CGROUP_ROOT,
    as `iwlab flow-iw` takes it). Raises BpfUnavailable when it cannot start."""

    def __init__(self, cgroup: str, batch_ms: int = 5, prefixes: list[str] | None = None, summary_ms: int = 200):
        try:
            cg = flow_iw.cgroup_dir(cgroup)
            if not cg.is_dir():
                raise BpfUnavailable(f"--cgroup = {cgroup!r}: {cg} does not exist (`iwlab flow-iw attach` or the "
                                     "service's unit makes it)", usage=True)
            exe = flow_iw.binary()
        except flow_iw.FlowIwError as e:  # a bad cgroup name, no iwlab-bpf binary
            raise BpfUnavailable(str(e), usage=True) from None
        env = {**os.environ, "IWLAB_EVIDENCE_PARENT": str(os.getpid())}
        args = [str(exe), "evidence", "--cgroup", str(cg), "--batch-ms", str(batch_ms)]
        if prefixes:
            args += [*prefixes, "--summary-ms", str(summary_ms)]
        self.summarized = bool(prefixes)
        self.p = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
        self.cgroup = cg
        self.records = Records()
        self._buf = b""
        try:
            ready, _, _ = select.select([self.p.stdout], [], [], START_TIMEOUT)
            first = os.read(self.p.stdout.fileno(), 65536) if ready else b""
        except BaseException:
            self.close()
            raise
        line, _, self._buf = first.partition(b"\n")
        try:
            hello = json.loads(line) if line else {}
        except ValueError:
            hello = {}
        if hello.get("kind") != "attached":
            err = self._stop_and_stderr()
            raise BpfUnavailable(err or f"iwlab-bpf evidence did not start within {START_TIMEOUT:.0f} s")
        self.cgroup_id = hello["cgroup_id"]
        os.set_blocking(self.p.stdout.fileno(), False)

    def fileno(self) -> int:
        return self.p.stdout.fileno()

    @property
    def missed(self) -> int:
        return self.records.stats.get("ringbuf_full", 0)

    def read(self) -> Iterator[tuple[str, Any, dict[str, Any] | None]]:
        """Everything the child wrote since the last read, as the watcher's calls."""
        for rec in self.raw():
            yield from self.records.feed(rec)

    def raw(self) -> list[dict[str, Any]]:
        """Everything the child wrote since the last read, as the records it printed."""
        chunks = [self._buf]
        while True:
            try:
                b = os.read(self.p.stdout.fileno(), 1 << 20)
            except BlockingIOError:
                break
            if not b:
                if self.p.poll() is not None and not chunks[-1]:
                    raise BpfUnavailable(f"iwlab-bpf evidence ended: {self._stop_and_stderr() or self.p.returncode}")
                break
            chunks.append(b)
        data = b"".join(chunks)
        end = data.rfind(b"\n") + 1
        self._buf = data[end:]
        return [json.loads(line) for line in data[:end].decode().splitlines()]

    def _stop_and_stderr(self) -> str:
        self._end()
        try:
            return self.p.stderr.read().decode(errors="replace").strip().removeprefix("iwlab-bpf: ")
        finally:
            self.close()

    def _end(self) -> None:
        if self.p.poll() is None:
            self.p.terminate()
            try:
                self.p.wait(5)
            except subprocess.TimeoutExpired:
                self.p.kill()
                self.p.wait()

    def close(self) -> None:
        """Ends the child; the kernel detaches the program as its link's last holder exits."""
        self._end()
        for f in (self.p.stdout, self.p.stderr):
            if not f.closed:
                f.close()


def start(source: str, cgroup: str | None, pf=None) -> tuple[BpfEvidence | None, str | None]:
    """The evidence source for `iwlab watch --source`: "bpf" (BpfUnavailable if it cannot
    start), "poll" (None), "auto" (bpf where it starts, else None). `pf`: the watcher's policy
    file, whose routes the reader sums per prefix (None: a line per connection, as
    `--record` needs). Returns (source, the line to log when auto fell back to polling) —
    logged once the watcher is up, so that an error after this (a busy metrics port) stays the
    only line."""
    if source == "poll":
        return None, None
    why, usage = None, True
    if cgroup is None:
        why = "no --cgroup (the cgroup of the watched service) given"
    elif os.geteuid() != 0:
        why = "not root"
    else:
        try:
            return BpfEvidence(cgroup, prefixes=None if pf is None else prefix_args(pf)), None
        except BpfUnavailable as e:
            why, usage = str(e), e.usage
    if source == "bpf":
        raise BpfUnavailable(why, usage)
    return None, f"{FALLBACK}{why}"


FALLBACK = "evidence source: poll (sock_diag destroy events + INET_DIAG polls), bpf unavailable: "


def describe(evidence: BpfEvidence | None, requested: str, fallback: str | None) -> dict[str, Any]:
    """Which evidence source is live and why, for `iwlab watch status` (`evidence`) and the
    `iwlab_evidence_source` metric: `degraded` when `--source auto` fell back to polling, which
    misses IW losses of connections that recover between two polls (docs/deploy.md)."""
    if evidence is not None:
        return {"source": "bpf", "requested": requested, "degraded": False,
                "why": f"eBPF sock_ops on cgroup {evidence.cgroup}: every initial-window retransmission"}
    if fallback is None:
        return {"source": "poll", "requested": requested, "degraded": False,
                "why": "--source poll: sock_diag destroy events + INET_DIAG polls"}
    return {"source": "poll", "requested": requested, "degraded": True,
            "why": "bpf unavailable: " + fallback.removeprefix(FALLBACK)}


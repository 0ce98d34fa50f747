"""`iwlab probe`: measure the initial window a server uses, from the outside (docs/probe.md).

    from iwlab.probe import probe
    p = probe("http://10.0.0.1/big.bin", msses=(536, 1460), netns="client")
    p.results[0].segments, p.kind   # e.g. 32, "segments"

Needs root (raw sockets, an nftables rule while it runs). Traffic goes only to the targets given.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from iwlab.probe.errors import ProbeError, ProbeInputError
from iwlab.probe.target import Target, parse_target

__all__ = ["probe", "probe_many", "Probe", "ProbeError", "ProbeInputError", "parse_target", "classify"]


@dataclass
class Probe:
    """Every run of one target (one per MSS) and what they say together."""

    target: str
    results: list = field(default_factory=list)  # client.Result, one per MSS
    kind: str | None = None  # "segments", "bytes", "unclear" (two MSS or more), else None
    error: str | None = None  # a network failure (ProbeError), when there are no results

    def to_json(self) -> dict:
        return {"target": self.target, "runs": [r.to_json() for r in self.results], "kind": self.kind,
                "error": self.error}


def check_request(t: Target, request: bytes | None) -> None:
    if request is not None and t.scheme != "tcp":
        raise ProbeInputError(f"--request with target {t.text!r}: allowed only with HOST:PORT targets "
                              "(http:// sends its GET, https:// its ClientHello)")
    if request is not None and not request:
        raise ProbeInputError("--request = '': allowed a non-empty request")


def classify(results: Sequence) -> str | None:
    """Segment- or byte-based IW, from runs with different segment sizes: the same number of
    segments ⇒ "segments"; the same bytes (within one segment) ⇒ "bytes"; a lower bound among the
    runs or a single size ⇒ None; anything else "unclear"."""
    sizes = {r.segment_size for r in results}
    if len(sizes) < 2 or any(r.lower_bound for r in results):
        return None
    if len({r.segments for r in results}) == 1:
        return "segments"
    if max(r.bytes for r in results) - min(r.bytes for r in results) < max(sizes):
        return "bytes"
    return "unclear"


def probe(target: str | Target, msses: Sequence[int | None] = (None,), timeout: float = 3.0,
          netns: str | None = None, guard=None, stop: threading.Event | None = None,
          pace: Callable[[], None] | None = None, request: bytes | None = None) -> Probe:
    """Probes `target` once per MSS (None: the path MTU's). `request`: bytes sent instead of an
    HTTP GET, for a HOST:PORT target that speaks another protocol. Raises ProbeInputError for
    bad input, ProbeError when the target cannot be measured."""
    from iwlab.probe.client import check_mss, probe_once
    from iwlab.probe.netns import in_netns
    from iwlab.probe.rstguard import RstGuard

    t = target if isinstance(target, Target) else parse_target(target)
    check_request(t, request)
    for m in msses:
        if m is not None:
            check_mss(m)
    with in_netns(netns):
        if guard is None:
            with RstGuard() as g:
                return probe(t, msses, timeout, None, g, stop, pace, request)
        out = Probe(t.text)
        for m in msses:
            if pace is not None:
                pace()
            out.results.append(probe_once(t, guard, m, timeout, stop, request))
        out.kind = classify(out.results)
        return out


def probe_many(targets: Sequence[str], msses: Sequence[int | None] = (None,), timeout: float = 3.0,
               netns: str | None = None, concurrency: int | None = None, rate: float | None = None,
               stop: threading.Event | None = None, on_done: Callable | None = None,
               request: bytes | None = None) -> list[Probe]:
    """Probes every target (bad ones raise ProbeInputError before any traffic); a target that
    cannot be measured gets `error` set. Concurrency and rate: iwlab.probe.many's polite defaults."""
    from iwlab.probe import many
    from iwlab.probe.netns import in_netns
    from iwlab.probe.rstguard import RstGuard

    parsed = [parse_target(t) for t in targets]
    for t in parsed:
        check_request(t, request)
    concurrency = concurrency or many.DEFAULT_CONCURRENCY
    rate = rate or many.DEFAULT_RATE
    if concurrency < 1 or concurrency > 256:
        raise ProbeInputError(f"--concurrency = {concurrency}: allowed 1..256")
    if not 0 < rate <= 1000:
        raise ProbeInputError(f"--rate = {rate:g}: allowed > 0 and ≤ 1000 connections per second")

    def work(t: Target, stop_, pace) -> Probe:
        try:
            return probe(t, msses, timeout, None, guard, stop_, pace, request)
        except ProbeInputError:
            raise
        except ProbeError as e:
            return Probe(t.text, error=str(e))

    # the pool's threads are created inside the namespace, so they inherit it
    with in_netns(netns), RstGuard() as guard:
        return many.run_many(parsed, work, concurrency, rate, stop, on_done)

"""The bpf reader's per-prefix sums keep the policy's decisions exact (evidence_bpf.SUMMARY_KINDS,
crates/iwlab-bpf/src/summary.rs), without a kernel.

The reader sums the clean closes of a route only when its policy's decisions do not depend on
`closed` events: for every such kind, a Decider fed each connection's `closed` event between
the IW-loss events gives, after every event, the same IW and the same learned state as one fed
the IW-loss events alone. The kinds that do learn from closes (aimd, learned) must keep a line
per connection — the test shows their decisions would change."""

from __future__ import annotations

import json
import random

import pytest

from iwlab.deploy import evidence_bpf, watch
from iwlab.policy import Decider, parse_policy

SPECS = {
    "fixed": '{ kind = "fixed", segments = 7 }',
    "rfc3390": '{ kind = "rfc3390" }',
    "rfc6928": '{ kind = "rfc6928" }',
    "rfc6928-fallback": '{ kind = "rfc6928-fallback", expiry = "3s" }',
    "size-based": '{ kind = "size-based" }',
    "aimd": '{ kind = "aimd", initial = 10, min = 2, max = 40, step = 2, raise_after = 3 }',
    "learned": '{ kind = "learned", initial = 10, min = 2, max = 60, samples = 4, percentile = 50 }',
}


def policy(kind: str):
    return parse_policy(f'[iw.policies]\np = {SPECS[kind]}\n\n[[routes]]\nprefix = "10.0.0.0/8"\npolicy = "p"\n')


def connections(seed: int, n: int = 400):
    """A made sequence of connections: (time_ns, IW-loss event or None, closed event)."""
    rng = random.Random(seed)
    t = 0
    for _ in range(n):
        t += rng.randrange(1, 50_000_000)  # up to 50 ms apart: the fallback's 3 s expiry passes
        sent = rng.choice([1000, 5000, 15_000, 200_000])
        loss = rng.random() < 0.05
        iw = {"kind": "loss_in_initial_window", "bytes_sent": min(sent, 14_480)} if loss and rng.random() < 0.7 else None
        closed = {"kind": "closed", "bytes_sent": sent, "loss": loss, "cwnd": rng.randrange(2, 80) * 1448,
                  "bytes_acked": sent, "retrans": int(loss)}
        yield t, iw, closed


def _trace(kind: str, with_closes: bool, seed: int) -> list:
    d = Decider(policy(kind))
    out = []
    for t, iw, closed in connections(seed):
        if iw is not None:
            d.learn("10.0.0.0/8", t, iw)
        if with_closes:
            d.learn("10.0.0.0/8", t, closed)
        out.append((d.iw_segments("10.0.0.0/8", 1448, t), json.loads(d.snapshot())["engine"]))
    return out


@pytest.mark.parametrize("kind", sorted(evidence_bpf.SUMMARY_KINDS))
def test_summed_kinds_decide_the_same_without_the_closed_events(kind):
    for seed in (1, 2):
        with_closes, without = _trace(kind, True, seed), _trace(kind, False, seed)
        assert with_closes == without
    if kind == "rfc6928-fallback":  # the sequence does exercise fallback and expiry
        ivs = [iw for iw, _ in without]
        assert 2 <= min(ivs) < max(ivs) == 10


@pytest.mark.parametrize("kind", ["aimd", "learned"])
def test_kinds_that_learn_from_closes_keep_a_line_per_connection(kind):
    assert kind not in evidence_bpf.SUMMARY_KINDS
    assert _trace(kind, True, 1) != _trace(kind, False, 1)


def test_every_kind_the_core_accepts_is_classified():
    with pytest.raises(Exception) as e:
        parse_policy('[iw.policies]\np = { kind = "nope" }\n\n[[routes]]\nprefix = "10.0.0.0/8"\npolicy = "p"\n')
    core = set(e.value.message.split("expected one of ")[1].split(" (at")[0].replace("`", "").split(", "))
    assert core == set(SPECS), core


def test_the_reader_gets_each_route_with_its_mode():
    pf = parse_policy('[iw.policies]\nf = { kind = "rfc6928-fallback" }\na = ' + SPECS["aimd"] +
                      '\n\n[[routes]]\nprefix = "10.0.0.0/8"\npolicy = "f"\n\n[[routes]]\nprefix = "10.1.0.0/16"\n'
                      'policy = "a"\n\n[[routes]]\nprefix = "default"\npolicy = "f"\n')
    assert evidence_bpf.prefix_args(pf) == ["--prefix", "10.0.0.0/8=sum", "--prefix", "10.1.0.0/16=each",
                                           "--prefix", "default=sum"]


def test_a_summary_counts_as_its_connections_would():
    """The watcher's counters from one summary line equal those from the connections' closes."""

    class W:  # the part of Watcher that counts; no routes, no metrics
        on_summary = watch.Watcher.on_summary
        on_closed = watch.Watcher.on_closed
        metrics = None

        def __init__(self):
            pf = policy("rfc6928-fallback")
            self.counts, self.flagged, self.iw = {}, set(), {"10.0.0.0/8": 10}
            self.decisions = watch.Decisions(pf, Decider(pf))
            self.decisions.iw.update(self.iw)
            self.restarts = watch.RestartWindows(False)
            self.decided = []

        def _prefix(self, addr):
            return self.decisions.prefix(addr)

        def _learn(self, name, s, ev, *a, **k):
            self.decisions.feed(name, 1, ev)

        def _decide(self, name, why, change):
            self.decided.append(change)

    recs = [{"kind": "close", "cookie": i, "time_ns": 0, "src": "10.99.0.1", "sport": 80, "dst": f"10.0.0.{i}",
             "dport": 4000, "mss": 1448, "iw_segments": 10, "bytes_sent": 1000 * i, "bytes_acked": 1000 * i,
             "iw_retrans": 0, "total_retrans": i % 3, "first_retrans": None, "data_segs_out": i,
             "srtt_us": 0, "min_rtt_us": 0xFFFFFFFF if i == 4 else 100 * i, "snd_cwnd": 10, "old_state": 9,
             "restarts": 0, "rs_start": 0, "rs_window": 0, "rs_retrans": 0} for i in range(1, 6)]
    each, summed = W(), W()
    r = evidence_bpf.Records()
    for rec in recs:
        for _, s, _ in r.feed(rec):
            each.flagged.add(s.cookie)
            each.on_closed(s)
    rtts = [x["min_rtt_us"] for x in recs if x["min_rtt_us"] != 0xFFFFFFFF]
    line = {"kind": "summary", "prefix": "10.0.0.0/8", "connections": 5, "data_segs_out": 15,
            "total_retrans": sum(i % 3 for i in range(1, 6)), "rtt_us_sum": sum(rtts), "rtt_n": len(rtts),
            "last_min_rtt_us": rtts[-1], "bytes_sent": 15_000, "bytes_acked": 15_000, "iw_segments_sent": 15,
            "iw_retrans": 0, "lossy": 3, "restarts": 0, "rs_retrans": 0}
    [(what, name, rec)] = list(evidence_bpf.Records().feed(line))
    summed.on_summary(name, rec)
    assert {k: c.as_dict() for k, c in summed.counts.items()} == {k: c.as_dict() for k, c in each.counts.items()}
    assert summed.decided == [None]  # the prefix was asked again (nothing expired)


def rec(kind: str, cookie: int = 1, **kw) -> dict:
    r = {"kind": kind, "cookie": cookie, "time_ns": 0, "src": "10.0.0.1", "sport": 80, "dst": "10.0.2.7",
         "dport": 40000, "mss": 1448, "iw_segments": 10, "bytes_sent": 16_000, "bytes_acked": 2_000,
         "iw_retrans": 0, "total_retrans": 1, "first_retrans": 2_000, "data_segs_out": 12, "srtt_us": 20_000,
         "min_rtt_us": 20_000, "snd_cwnd": 10, "old_state": 9, "restarts": 1, "rs_start": 2_000,
         "rs_window": 14_480, "rs_retrans": 1}
    r.update(kw)
    return r


def test_a_restart_window_retransmission_is_evidence_with_the_window_s_bytes():
    r = evidence_bpf.Records()
    [(what, s, ev)] = list(r.feed(rec("rs_retrans")))
    assert what == "restart_loss" and ev == {"kind": "loss_in_initial_window", "bytes_sent": 14_000}
    # its close gives no second event; a close whose record was lost gives it then
    assert [w for w, _, _ in r.feed(rec("close"))] == ["closed"]
    out = list(r.feed(rec("close", cookie=2, bytes_sent=40_000)))
    assert [(w, e) for w, _, e in out] == [("restart_loss", {"kind": "loss_in_initial_window", "bytes_sent": 14_480}),
                                           ("closed", None)]

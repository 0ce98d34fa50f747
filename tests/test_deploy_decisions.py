"""The watcher decides as the simulator's policy does.

One recorded event sequence goes (a) through the watcher's decision path
(`iwlab.deploy.watch.Decisions`: the prefix of the peer, the event, the IW question after it,
the IW change it makes — with a watcher restart in the middle, resumed from the Decider's
snapshot as `iwlab watch` resumes from its state file) and (b) through
`iwlab.policy.replay` on a fresh `Decider`, the simulator's `IwPolicy` code. The IW after
every event must be the same. Two sequences: the one `iwlab watch --record` wrote during the
namespace run of tests/test_deploy_watch.py (aimd from IW 30 behind a small-buffer
bottleneck; tests/data/watch-aimd-events.jsonl), and a longer one made here over four policy
kinds and three prefixes, with times that cross the fallback cache's expiry.

And the simulator itself: a simulated run records every IW event and every IW its senders
chose (`iw_events`); each sending host's events go through the watcher's decision path, one
watcher per host, and at every connection the watcher's IW is the one the simulator used.
No root needed.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from iwlab.deploy.sockdiag import TcpSock
from iwlab.deploy.watch import Decisions, events_for
from iwlab.policy import Decider, parse_policy, replay
from scenario_common import AIMD_3_20, policy_toml

DATA = Path(__file__).with_name("data")
RECORDED_POLICY = (DATA / "watch-aimd-policy.toml").read_text()
MIXED_POLICY = policy_toml(
    {"fb": '{ kind = "rfc6928-fallback", expiry = "2s" }', "ai": AIMD_3_20,
     "le": '{ kind = "learned", initial = 10, min = 4, max = 40, samples = 5, percentile = 50 }'},
    [("10.1.0.0/16", "fb"), ("10.2.0.0/16", "ai"), ("default", "le")])
MSS = 1460  # the routes' MSS (veth MTU 1500 − 40): what the watcher computes the IW for


def _watcher_path(pf, records: list[dict], restart_at: int | None) -> list[int]:
    """The IW (segments) of the record's prefix after each event, as the watcher decides it."""
    d = Decisions(pf, Decider(pf))
    out = []
    for i, rec in enumerate(records):
        if i == restart_at:  # the watcher stops and starts again: state from its snapshot
            snap = d.decider.snapshot()
            iw, mss = dict(d.iw), dict(d.mss)
            d = Decisions(pf, Decider.restore(pf, snap))
            d.iw.update(iw)
            d.mss.update(mss)
        name = rec["dst"]
        d.mss.setdefault(name, MSS)
        d.iw.setdefault(name, d.decider.iw_segments(name, MSS, rec["time_ns"]))  # as applied at start
        ev = {k: v for k, v in rec.items() if k not in ("time_ns", "dst")}
        change = d.learn(name, rec["time_ns"], ev)
        if change is not None:
            d.iw[name] = change[1]  # the watcher applies it to the route
        out.append(d.iw[name])
    return out


def _simulator_path(pf, records: list[dict]) -> list[int]:
    """The same events through `replay`, an IW question after each."""
    asked = []
    for rec in records:
        asked += [rec, {"time_ns": rec["time_ns"], "dst": rec["dst"], "kind": "iw", "mss": MSS}]
    return [a["iw_bytes"] // MSS for a in replay(Decider(pf), asked)]


def _recorded() -> list[dict]:
    lines = (DATA / "watch-aimd-events.jsonl").read_text().splitlines()
    return [r for r in map(json.loads, lines) if r["kind"] != "iw"]


def _made(seed: int = 11, n: int = 400) -> list[dict]:
    """Closed connections of peers in three prefixes, turned into events by the watcher's own
    `events_for` (loss in the IW when everything sent fitted in it and something was
    retransmitted), at times 1–100 ms apart."""
    rng = random.Random(seed)
    pf = parse_policy(MIXED_POLICY)
    d = Decisions(pf, Decider(pf))
    out, t = [], 1_000_000_000
    for _ in range(n):
        t += rng.randrange(1_000_000, 100_000_000)
        peer = rng.choice(["10.1.3.4", "10.2.9.9", "192.0.2.7", "198.51.100.1"])
        name = d.prefix(peer)
        iw = 10 if name is None else d.decider.iw_segments(name, MSS, t)
        sent = rng.choice([3_000, 9_000, 14_000, 60_000, 400_000])
        retrans = rng.choice([0, 0, 0, 1, 3])
        sock = TcpSock(cookie=t, family=2, src="10.0.0.1", sport=80, dst=peer, dport=40_000, state=7,
                       snd_mss=1448, rtt_us=30_000, min_rtt_us=20_000, snd_cwnd=rng.randrange(2, 60),
                       total_retrans=retrans, bytes_acked=sent + 1, bytes_sent=sent + retrans * 1448,
                       bytes_retrans=retrans * 1448, data_segs_out=sent // 1448 + 1 + retrans,
                       delivery_rate=0, has_info=True)
        for ev in events_for(sock, iw, flagged=False):
            out.append({"time_ns": t, "dst": name, **ev})
            d.learn(name, t, ev)
    return out


@pytest.mark.parametrize("which", ["recorded in namespaces", "four policies, three prefixes"])
def test_the_watcher_decides_as_the_simulators_policy(which):
    pf = parse_policy(RECORDED_POLICY if which.startswith("recorded") else MIXED_POLICY)
    records = _recorded() if which.startswith("recorded") else _made()
    assert any(r["kind"] == "loss_in_initial_window" for r in records)
    sim = _simulator_path(pf, records)
    assert _watcher_path(pf, records, restart_at=None) == sim
    assert _watcher_path(pf, records, restart_at=len(records) // 2) == sim
    if which.startswith("recorded"):
        # what the namespace run did: 30 → 15 → 7 → 3, one halving per IW-loss event
        changes = [iw for i, iw in enumerate([30] + sim) if i == 0 or ([30] + sim)[i - 1] != iw]
        assert changes[:3] == [30, 15, 7]
    else:
        # every policy moved at least once, so the comparison says something
        for prefix in ("10.1.0.0/16", "10.2.0.0/16", "default"):
            seen = {iw for r, iw in zip(records, sim) if r["dst"] == prefix}
            assert len(seen) > 1, (prefix, seen)


# rfc6928 made small and lossy (as tests/test_policy.py): 8 clients behind 6-packet access
# buffers, so IW10 loses packets in its first flight
SMALL = ["duration=40s", "warmup=0s", "topology.left[0].count=8", "apps[0].count=8",
         'topology.left[0].access.queue.limit="6pkt"']


@pytest.mark.parametrize("spec", ['{ kind = "rfc6928-fallback", expiry = "10s" }',
                                  '{ kind = "aimd", initial = 10, min = 2, max = 16, raise_after = 2 }'])
def test_the_watcher_decides_as_the_simulator_did_in_a_run(spec):
    import iwlab
    from iwlab.policy import sim_replay_records, with_policy

    # the clients are 198.18.0.2, .6, … .30 (the emulator's addresses): one prefix covers them
    pf = parse_policy(f'[iw.policies]\np = {spec}\n[[routes]]\nprefix = "198.18.0.0/27"\npolicy = "p"\n')
    run = iwlab.run(with_policy(iwlab.load("rfc6928", sets=SMALL), pf), iw_events=True)
    per_host = sim_replay_records(pf, run.iw_events)
    assert per_host
    compared, seen = 0, set()
    for host, records in sorted(per_host.items()):
        d = Decisions(pf, Decider(pf))  # this host's watcher
        for i, rec in enumerate(records):
            if i == len(records) // 2:  # the watcher restarts half-way, from its snapshot
                iw, mss = dict(d.iw), dict(d.mss)
                d = Decisions(pf, Decider.restore(pf, d.decider.snapshot()))
                d.iw.update(iw)
                d.mss.update(mss)
            name, t = rec["dst"], rec["time_ns"]
            if rec["kind"] == "iw":  # a connection starts: the IW the watcher has put on the route
                # (the run's flows declare their sizes; these policies do not use them, and a
                # route carries one IW per prefix)
                d.mss[name] = rec["mss"]
                change = d.check(name, t)
                if change is not None:
                    d.iw[name] = change[1]
                assert d.iw[name] == rec["sim_iw_bytes"] // rec["mss"], (host, rec)
                compared += 1
                seen.add(d.iw[name])
            else:
                change = d.learn(name, t, {k: v for k, v in rec.items() if k not in ("time_ns", "dst")})
                if change is not None:
                    d.iw[name] = change[1]
    assert compared > 20 and len(seen) >= 2, (compared, seen)  # the policy did change its decision


def test_an_iw_raised_by_expiry_is_not_put_down_to_the_next_connection():
    """Fallback at t=0 (IW 3); the evidence expires after 2 s; a lossy connection closing at
    t=5 s finds the IW already due back at 10: that change is time's, the connection changes
    nothing."""
    from iwlab.deploy.watch import Decisions
    from iwlab.policy import Decider, parse_policy

    pf = parse_policy(MIXED_POLICY)
    d = Decisions(pf, Decider(pf))
    d.mss["10.1.0.0/16"] = MSS
    d.iw["10.1.0.0/16"] = d.decider.iw_segments("10.1.0.0/16", MSS, 0)
    assert d.iw["10.1.0.0/16"] == 10
    by_time, by_event = d.feed("10.1.0.0/16", 0, {"kind": "loss_in_initial_window", "bytes_sent": 9000})
    assert (by_time, by_event) == (None, (10, 3))
    d.iw["10.1.0.0/16"] = 3
    lossy_close = {"kind": "closed", "bytes_sent": 200_000, "loss": True, "cwnd": 20 * MSS, "retrans": 4}
    by_time, by_event = d.feed("10.1.0.0/16", 5 * 10**9, lossy_close)
    assert by_time == (3, 10) and by_event is None

"""The bpf source's records → the watcher's calls (evidence_bpf.Records), without a kernel."""

from __future__ import annotations

from iwlab.deploy import evidence_bpf, watch


def rec(kind: str, cookie: int = 1, **kw) -> dict:
    r = {"kind": kind, "cookie": cookie, "time_ns": 0, "src": "10.0.0.1", "sport": 80, "dst": "10.0.2.7",
         "dport": 40000, "mss": 1448, "iw_segments": 10, "bytes_sent": 15_000, "bytes_acked": 15_000,
         "iw_retrans": 0, "total_retrans": 0, "first_retrans": None, "data_segs_out": 11, "srtt_us": 20_000,
         "min_rtt_us": 20_000, "snd_cwnd": 12, "old_state": 9}
    r.update(kw)
    return r


def test_an_iw_retransmission_is_loss_evidence_at_once_capped_at_iw_mss():
    r = evidence_bpf.Records()
    [(what, s, ev)] = list(r.feed(rec("iw_retrans", bytes_sent=15_000, iw_retrans=1, total_retrans=1)))
    assert what == "iw_loss" and s.dst == "10.0.2.7" and s.cookie == 1
    assert ev == {"kind": "loss_in_initial_window", "bytes_sent": 14_480}


def test_the_close_after_a_reported_retransmission_is_only_closed():
    r = evidence_bpf.Records()
    list(r.feed(rec("iw_retrans", iw_retrans=1, total_retrans=1)))
    out = list(r.feed(rec("close", iw_retrans=3, total_retrans=5)))
    assert [w for w, _, _ in out] == ["closed"]
    s = out[0][1]
    assert (s.bytes_sent, s.bytes_retrans, s.total_retrans) == (15_000, 0, 5)
    # the watcher's closed event: original data, loss, cwnd in bytes
    [closed] = watch.events_for(s, 10, flagged=True)
    assert closed == {"kind": "closed", "bytes_sent": 15_000, "loss": True, "cwnd": 12 * 1448,
                      "bytes_acked": 15_000, "retrans": 5}


def test_a_close_with_iw_retransmissions_whose_record_was_lost_still_gives_the_evidence():
    r = evidence_bpf.Records()
    out = list(r.feed(rec("close", cookie=9, iw_retrans=2, total_retrans=2, bytes_sent=3_000)))
    assert [(w, ev) for w, _, ev in out] == [("iw_loss", {"kind": "loss_in_initial_window", "bytes_sent": 3_000}),
                                             ("closed", None)]


def test_retransmissions_after_the_initial_window_are_no_evidence():
    out = list(evidence_bpf.Records().feed(rec("close", bytes_sent=200_000, iw_retrans=0, total_retrans=7)))
    assert [w for w, _, _ in out] == ["closed"]


def test_stats_lines_count_lost_records_and_ipv6_peers_are_sockets_too():
    r = evidence_bpf.Records()
    assert list(r.feed({"kind": "stats", "ringbuf_full": 4, "closed": 10})) == []
    assert r.stats["ringbuf_full"] == 4
    [(_, s, _)] = list(r.feed(rec("close", dst="2001:db8::7", src="2001:db8::1")))
    assert s.family == evidence_bpf.AF_INET6 and s.dst == "2001:db8::7"


def test_source_poll_starts_nothing_and_auto_without_a_cgroup_says_why():
    assert evidence_bpf.start("poll", "x") == (None, None)
    ev, why = evidence_bpf.start("auto", None)
    assert ev is None and why.startswith("evidence source: poll") and "no --cgroup" in why

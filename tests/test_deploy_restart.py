"""The watcher's restart-window detector (watch.RestartWindows) on synthetic `tcp_info` samples:
the arithmetic of Linux `tcp_cwnd_restart` and the simulator's restart-window event. The
kernel end to end is in tests/test_deploy_watch.py (marker `deploy`)."""

from __future__ import annotations

from iwlab.deploy.sockdiag import TcpSock
from iwlab.deploy.watch import RestartWindows, restart_cwnd

MSS = 1448


def sock(*, acked: int, sent: int, retrans: int = 0, unacked: int = 0, idle_ms: int = 0, rto_us: int = 220_000,
         cwnd: int = 10, cong: str = "cubic", cookie: int = 7) -> TcpSock:
    return TcpSock(cookie=cookie, family=2, src="10.0.0.1", sport=80, dst="10.0.0.2", dport=5000, state=1,
                   snd_mss=MSS, rtt_us=20_000, min_rtt_us=20_000, snd_cwnd=cwnd, total_retrans=retrans,
                   bytes_acked=acked, bytes_sent=sent, bytes_retrans=0, data_segs_out=0, delivery_rate=0,
                   has_info=True, rto_us=rto_us, unacked=unacked, last_data_sent_ms=idle_ms, cong=cong)


def test_restart_cwnd_is_linux_tcp_cwnd_restart():
    # RFC 5681 §4.1 / RFC 2861: halve once per RTO idle, not below min(IW, cwnd)
    assert restart_cwnd(40, 10, 250_000, 220_000) == 20  # one RTO elapsed (delta − RTO > 0 once)
    assert restart_cwnd(40, 10, 500_000, 220_000) == 10  # two: 40 → 20 → 10
    assert restart_cwnd(40, 10, 5_000_000, 220_000) == 10
    assert restart_cwnd(6, 10, 5_000_000, 220_000) == 6  # cwnd below IW: min(IW, cwnd)
    assert restart_cwnd(40, 10, 200_000, 220_000) == 40  # shorter than the RTO: no restart


def test_loss_in_the_restart_window_is_an_iw_loss_event_with_the_window_s_bytes():
    rw = RestartWindows()
    assert rw.poll(sock(acked=2000, sent=2000, idle_ms=300), 10) is None  # idle > RTO: armed
    assert rw.conns[7].window == 10 * MSS and 7 in rw.restarted
    assert rw.poll(sock(acked=2000, sent=16000, unacked=10), 10) is None  # burst out, no loss yet
    ev = rw.poll(sock(acked=5000, sent=16000, retrans=2, unacked=8), 10)
    assert ev == {"kind": "loss_in_initial_window", "bytes_sent": 14000}
    assert rw.poll(sock(acked=6000, sent=16000, retrans=3, unacked=7), 10) is None  # once per window
    assert rw.closed(sock(acked=16000, sent=16000, retrans=3)) == (None, True)


def test_a_burst_larger_than_the_window_counts_only_the_window():
    rw = RestartWindows()
    rw.poll(sock(acked=2000, sent=2000, idle_ms=5000, cwnd=40), 10)
    ev = rw.poll(sock(acked=2000, sent=100_000, retrans=1, unacked=10, cwnd=10), 10)
    assert ev == {"kind": "loss_in_initial_window", "bytes_sent": 10 * MSS}  # min(snd_max, end) − start


def test_no_event_without_idle_after_the_window_or_without_restart():
    rw = RestartWindows()
    assert rw.poll(sock(acked=2000, sent=2000, idle_ms=100), 10) is None  # 100 ms < RTO
    assert rw.poll(sock(acked=2000, sent=16000, retrans=2, unacked=10), 10) is None and not rw.restarted
    rw.poll(sock(acked=2000, sent=2000, idle_ms=300, cookie=8), 10)
    assert rw.poll(sock(acked=20000, sent=30000, unacked=7, cookie=8), 10) is None  # window acked, clean
    assert rw.poll(sock(acked=20000, sent=30000, retrans=1, unacked=7, cookie=8), 10) is None  # later loss
    # BBR has its own cong_control: Linux does not restart its cwnd; nor with slow_start_after_idle=0
    for r, cong in ((RestartWindows(), "bbr"), (RestartWindows(slow_start_after_idle=False), "cubic")):
        assert r.poll(sock(acked=2000, sent=2000, idle_ms=300, cong=cong), 10) is None and not r.conns


def test_the_final_tcp_info_gives_the_event_when_no_poll_saw_the_loss():
    rw = RestartWindows()
    rw.poll(sock(acked=2000, sent=2000, idle_ms=300), 10)
    assert rw.closed(sock(acked=16000, sent=16000, retrans=2)) == (
        {"kind": "loss_in_initial_window", "bytes_sent": 14000}, True)
    rw.poll(sock(acked=2000, sent=2000, idle_ms=300), 10)
    assert rw.closed(sock(acked=40000, sent=40000, retrans=2)) == (None, True)  # more than the window: unknown
    assert rw.closed(sock(acked=40000, sent=40000, retrans=2, cookie=9)) == (None, False)

//! Completion times on a lossless path equal the closed form:
//! handshake + rounds × RTT + serialisation, for IW 1–4 and 10, with and without delayed ACKs.

mod common;
use common::*;
use iwlab_core::engine::{SimDuration, SimTime};
use iwlab_core::tcp::config::{DelayedAck, TcpConfig};
use iwlab_core::tcp::iw::IwConfig;

const RATE: u64 = 10_000_000; // 10 Mb/s: a round of ≤ 80 full segments fits in one RTT
const MSS: u64 = 1460;

fn tx(bytes: u64) -> SimDuration {
    SimDuration::transmission(bytes, RATE)
}

/// When the client has the last of `n` full segments the server sends after the handshake,
/// computed by hand. Rounds follow slow start: each ACK adds one SMSS to cwnd. With delayed
/// ACKs a round's odd last segment waits for the next round's first, and a round of a single
/// segment with nothing pending waits for the delayed-ACK timer.
fn expected(iw: u64, n: u64, delack: Option<SimDuration>) -> SimTime {
    let d = ms(50);
    let (syn, ack, data) = (tx(44), tx(40), tx(1500));
    // SYN and SYN-ACK carry a 4-byte MSS option; the handshake ACK is 40 bytes.
    let mut start = SimTime::ZERO + syn + d + syn + d + ack + d;
    let (mut cwnd, mut pending, mut sent) = (iw, 0u64, 0u64);
    loop {
        let w = cwnd - pending; // the pending segment is still in flight
        if sent + w >= n {
            let p = n - sent;
            return start + data.saturating_mul(p) + d;
        }
        sent += w;
        let acks = match delack {
            None => w,
            Some(_) => (w + pending) / 2,
        };
        // When the first ACK of this round leaves the client.
        let first_ack_sent = match delack {
            None => start + data + d,
            Some(_) if pending == 1 => start + data + d,
            Some(_) if w >= 2 => start + data.saturating_mul(2) + d,
            Some(timeout) => start + data + d + timeout,
        };
        let (acks, next_pending) = match delack {
            Some(_) if w + pending == 1 => (1, 0), // the timer ACKs the lone segment
            Some(_) => (acks, (w + pending) % 2),
            None => (acks, 0),
        };
        start = first_ack_sent + ack + d;
        cwnd += acks;
        pending = next_pending;
    }
}

fn simulated(iw: u32, n: u64, delack: Option<SimDuration>) -> SimTime {
    let mut p = pair(link(RATE, ms(50), 1000), 7);
    let cfg =
        TcpConfig { delayed_ack: delack.map(|timeout| DelayedAck { segments: 2, timeout }), ..TcpConfig::default() };
    let log = transfer(&mut p, &cfg, IwConfig::Fixed { segments: iw }, 0, n * MSS);
    run(&mut p.sim, at(ms(30_000)));
    let t = log.lock().unwrap().response_done.expect("response delivered");
    t
}

#[test]
fn with_an_ack_for_every_segment_completion_time_is_the_closed_form() {
    for iw in [1, 2, 3, 4, 10] {
        for n in [1, 2, 3, 5, 8, 13, 20, 31, 40] {
            assert_eq!(simulated(iw as u32, n, None), expected(iw, n, None), "IW {iw}, {n} segments");
        }
    }
}

#[test]
fn with_delayed_acks_completion_time_is_the_closed_form() {
    for iw in [1, 2, 3, 4, 10] {
        for n in [1, 2, 3, 5, 8, 13, 20, 31, 40] {
            let d = Some(ms(200));
            assert_eq!(simulated(iw as u32, n, d), expected(iw, n, d), "IW {iw}, {n} segments");
        }
    }
}

#[test]
fn iw1_with_delayed_acks_pays_the_delayed_ack_timer_once() {
    // Two segments at IW 1: the first waits 200 ms for its ACK; the second round follows.
    let with = simulated(1, 2, Some(ms(200)));
    let without = simulated(1, 2, None);
    assert_eq!(with - without, ms(200));
}

#[test]
fn a_larger_iw_never_takes_longer_on_a_lossless_path() {
    for n in [1, 4, 10, 25, 40] {
        let times: Vec<SimTime> = [1, 2, 3, 4, 10].iter().map(|&iw| simulated(iw, n, Some(ms(200)))).collect();
        assert!(times.windows(2).all(|w| w[1] <= w[0]), "{n} segments: {times:?}");
    }
}

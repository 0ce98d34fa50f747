//! RFC 6928 §5.1: round trips needed to deliver N segments on an infinite-bandwidth,
//! lossless path with standard delayed ACKs and a large delayed-ACK timer.

mod common;
use common::*;
use iwlab_core::tcp::config::{DelayedAck, TcpConfig};
use iwlab_core::tcp::iw::IwConfig;

const SEGMENTS: [u64; 13] = [3, 6, 10, 12, 21, 25, 33, 46, 51, 78, 79, 120, 127];
const IW3: [u64; 13] = [1, 2, 3, 3, 4, 5, 5, 6, 6, 7, 8, 8, 9];
const IW10: [u64; 13] = [1, 1, 1, 2, 2, 2, 3, 3, 4, 4, 4, 5, 5];

/// Round trips the server needs to deliver `n` full segments after the handshake.
fn rounds(iw: u32, n: u64) -> u64 {
    let rtt = ms(100);
    // 1 Tb/s: a 1500-byte packet serialises in 12 ns, "effectively infinite bandwidth".
    let mut p = pair(link(1_000_000_000_000, ms(50), 100_000), 1);
    let cfg = TcpConfig { delayed_ack: Some(DelayedAck { segments: 2, timeout: ms(10_000) }), ..TcpConfig::default() };
    let log = transfer(&mut p, &cfg, IwConfig::Fixed { segments: iw }, 0, n * 1460);
    run(&mut p.sim, at(ms(60_000)));
    let log = log.lock().unwrap();
    // The server may send once the handshake ACK arrives (1.5 RTT); its last segment arrives
    // half an RTT after the start of the round that carries it.
    let first_send = log.established.unwrap();
    let done = log.response_done.expect("response delivered");
    let elapsed = done - first_send;
    let r = (elapsed.as_nanos() + rtt.as_nanos() / 2) / rtt.as_nanos();
    assert!(
        elapsed.as_nanos() % rtt.as_nanos() >= rtt.as_nanos() / 2 - 1_000
            && elapsed.as_nanos() % rtt.as_nanos() <= rtt.as_nanos() / 2 + 1_000,
        "delivery should be half an RTT into a round, got {elapsed}"
    );
    r
}

#[test]
fn round_trips_to_deliver_n_segments_with_iw3_match_rfc6928_section_5_1() {
    let got: Vec<u64> = SEGMENTS.iter().map(|&n| rounds(3, n)).collect();
    assert_eq!(got, IW3);
}

#[test]
fn round_trips_to_deliver_n_segments_with_iw10_match_rfc6928_section_5_1() {
    let got: Vec<u64> = SEGMENTS.iter().map(|&n| rounds(10, n)).collect();
    assert_eq!(got, IW10);
}

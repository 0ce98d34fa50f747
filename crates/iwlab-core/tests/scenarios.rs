//! Scenario-level tests in the full simulator: scripted drops on links, SYN loss under both
//! rules, the RFC 6928 fallback cache, determinism and parallel simulations. Every run ends
//! with the accounting identity (`common::run`).

mod common;
use common::*;
use iwlab_core::engine::{SimDuration, SimTime};
use iwlab_core::net::loss::LossRule;
use iwlab_core::sim::{Observer, PacketEvent, Simulation};
use iwlab_core::tcp::config::{RecoveryKind, SynLossRule, TcpConfig};
use iwlab_core::tcp::iw::IwConfig;
use std::sync::{Arc, Mutex};

const MSS: u64 = 1460;

fn cfg(recovery: RecoveryKind) -> TcpConfig {
    TcpConfig { recovery, sack: recovery == RecoveryKind::Sack, ..TcpConfig::default() }
}

/// 40 segments from server to client over 10 Mb/s, 50 ms; the listed response segments
/// (1-based) are dropped on their first transmission.
fn response_with_drops(recovery: RecoveryKind, drops: &[u64]) -> (Pair, Arc<Mutex<Log>>) {
    let mut p = pair(link(10_000_000, ms(50), 1000), 3);
    for &k in drops {
        let rule = LossRule::Segment { flow: 0, to_server: false, seq: 1 + (k - 1) * MSS, nth: 1 };
        drop_on(&mut p.sim, p.down, rule);
    }
    let log = transfer(&mut p, &cfg(recovery), IwConfig::Fixed { segments: 10 }, 0, 40 * MSS);
    run(&mut p.sim, at(ms(60_000)));
    assert!(log.lock().unwrap().response_done.is_some(), "{recovery:?} delivered everything");
    (p, log)
}

#[test]
fn one_drop_is_repaired_by_fast_retransmit_without_timeout_in_every_variant() {
    for r in [RecoveryKind::Reno, RecoveryKind::NewReno, RecoveryKind::Sack] {
        let (p, _) = response_with_drops(r, &[15]);
        let s = &p.sim.core.conns[0].server.sender.stats;
        assert_eq!((s.fast_retransmits, s.timeouts, s.retransmits), (1, 0, 1), "{r:?}");
    }
}

#[test]
fn two_drops_in_one_window_newreno_uses_partial_acks_and_sack_needs_no_timeout() {
    let (p, _) = response_with_drops(RecoveryKind::NewReno, &[12, 15]);
    let s = &p.sim.core.conns[0].server.sender.stats;
    assert_eq!((s.fast_retransmits, s.timeouts, s.retransmits), (1, 0, 2), "one recovery repairs both");

    let (p, _) = response_with_drops(RecoveryKind::Sack, &[12, 15]);
    let s = &p.sim.core.conns[0].server.sender.stats;
    assert_eq!((s.fast_retransmits, s.timeouts, s.retransmits), (1, 0, 2));

    // Reno leaves recovery on the partial ACK: the second hole costs a second fast
    // retransmit (another halving) or a timeout.
    let (p, _) = response_with_drops(RecoveryKind::Reno, &[12, 15]);
    let s = &p.sim.core.conns[0].server.sender.stats;
    assert!(s.fast_retransmits + s.timeouts >= 2, "{s:?}");
}

#[test]
fn sack_finishes_two_drops_sooner_than_reno() {
    let (_, sack) = response_with_drops(RecoveryKind::Sack, &[12, 15]);
    let (_, reno) = response_with_drops(RecoveryKind::Reno, &[12, 15]);
    let (sack, reno) = (sack.lock().unwrap().response_done.unwrap(), reno.lock().unwrap().response_done.unwrap());
    assert!(sack < reno, "SACK {sack} vs Reno {reno}");
}

/// IW the server used, and when the response arrived, when the given handshake packet is
/// dropped `times` times.
fn syn_loss(rule: SynLossRule, synack: bool, times: u32) -> (u64, u32, SimTime) {
    let mut p = pair(link(10_000_000, ms(50), 1000), 5);
    for nth in 1..=times {
        let r = if synack { LossRule::SynAck { flow: 0, nth } } else { LossRule::Syn { flow: 0, nth } };
        let port = if synack { p.down } else { p.up };
        drop_on(&mut p.sim, port, r);
    }
    let c = TcpConfig { syn_loss: rule, ..TcpConfig::default() };
    let log = transfer(&mut p, &c, IwConfig::Fixed { segments: 10 }, 0, 20 * MSS);
    run(&mut p.sim, at(ms(120_000)));
    let server = &p.sim.core.conns[0].server;
    let done = log.lock().unwrap().response_done.unwrap();
    (server.stats.iw_bytes, server.stats.syn_retransmits, done)
}

#[test]
fn a_lost_syn_ack_reduces_the_iw_to_one_segment_under_rfc3390_and_not_under_rfc6928() {
    let (iw, rtx, _) = syn_loss(SynLossRule::ReduceToOne, true, 1);
    assert_eq!((iw, rtx), (MSS, 1));
    let (iw, rtx, _) = syn_loss(SynLossRule::Rfc6928, true, 1);
    assert_eq!((iw, rtx), (10 * MSS, 1));
}

#[test]
fn more_than_one_syn_ack_retransmission_reduces_the_iw_under_both_rules() {
    // SYN-ACKs 1–3 are lost: the server's timer expires twice (the client's duplicate SYNs
    // are answered too, but a duplicate SYN is not counted as a second loss).
    let (iw, rtx, _) = syn_loss(SynLossRule::ReduceToOne, true, 3);
    assert_eq!((iw, rtx), (MSS, 2));
    let (iw, rtx, _) = syn_loss(SynLossRule::Rfc6928, true, 3);
    assert_eq!((iw, rtx), (MSS, 2));
}

#[test]
fn a_lost_syn_is_retransmitted_after_the_initial_rto_of_one_second() {
    let (_, _, lossless) = syn_loss(SynLossRule::Rfc6928, false, 0);
    let (_, _, one) = syn_loss(SynLossRule::Rfc6928, false, 1);
    let (_, _, two) = syn_loss(SynLossRule::Rfc6928, false, 2);
    assert_eq!(one - lossless, ms(1000), "RFC 6298 (2.1): 1 s");
    assert_eq!(two - lossless, ms(3000), "then backed off to 2 s");
}

#[test]
fn the_client_that_lost_its_syn_counts_it_and_the_server_did_not_see_it() {
    let mut p = pair(link(10_000_000, ms(50), 1000), 5);
    drop_on(&mut p.sim, p.up, LossRule::Syn { flow: 0, nth: 1 });
    let c = TcpConfig { syn_loss: SynLossRule::ReduceToOne, ..TcpConfig::default() };
    transfer(&mut p, &c, IwConfig::Fixed { segments: 4 }, 8 * MSS, 8 * MSS);
    run(&mut p.sim, at(ms(60_000)));
    let conn = &p.sim.core.conns[0];
    assert_eq!((conn.client.stats.syn_retransmits, conn.client.stats.iw_bytes), (1, MSS));
    assert_eq!((conn.server.stats.syn_retransmits, conn.server.stats.iw_bytes), (0, 4 * MSS));
}

/// Three transfers from one server policy to one client at `starts`; the first loses its
/// 5th response segment (inside the IW).
fn fallback_iws(expiry: SimDuration, starts: [u64; 3]) -> Vec<u64> {
    policy_iws(IwConfig::Rfc6928Fallback { expiry, max_entries: 16_384 }, starts).0
}

/// `fallback_iws` with any policy; also the policy's records (client and server sides).
fn policy_iws(cfg: IwConfig, starts: [u64; 3]) -> (Vec<u64>, Vec<iwlab_core::tcp::iw::IwRecord>) {
    let mut p = pair(link(10_000_000, ms(50), 1000), 9);
    drop_on(&mut p.sim, p.down, LossRule::Segment { flow: 0, to_server: false, seq: 1 + 4 * MSS, nth: 1 });
    let mut any = cfg.build();
    any.record();
    let policy = p.sim.core.add_iw_policy(any);
    let c = TcpConfig::default();
    for start in starts {
        let app = Transfer {
            client: p.client,
            server: p.server,
            request: 0,
            response: 20 * MSS,
            client_cfg: c.clone(),
            server_cfg: c.clone(),
            client_iw: policy,
            server_iw: policy,
            log: Arc::new(Mutex::new(Log::default())),
        };
        p.sim.add_app(Box::new(app), at(ms(start)));
    }
    run(&mut p.sim, at(ms(60_000)));
    let iws = p.sim.core.conns.iter().map(|c| c.server.stats.iw_bytes).collect();
    (iws, p.sim.core.iw[policy].records().to_vec())
}

#[test]
fn loss_in_the_iw_moves_the_destination_to_the_rfc3390_iw_until_the_entry_expires() {
    // Connection 1 loses inside its 10-segment IW (> 4 KB sent): evidence cached for 10 s.
    let iws = fallback_iws(SimDuration::from_secs(10), [0, 5_000, 20_000]);
    assert_eq!(iws, vec![14_600, 4_380, 14_600]);
}

/// Records every packet event as a line, for byte-for-byte comparisons.
struct EventLog(Arc<Mutex<String>>);
impl Observer for EventLog {
    fn on_packet(&mut self, now: SimTime, ev: PacketEvent, port: u32, pkt: &iwlab_core::net::packet::Packet) {
        use std::fmt::Write;
        let seg = pkt.tcp().map(|s| (s.seq, s.ack, s.len, s.flags.0));
        writeln!(self.0.lock().unwrap(), "{} {:?} {} {} {:?}", now.as_nanos(), ev, port, pkt.uid, seg).unwrap();
    }
}

/// Six flows with random start times over a congested dumbbell with random loss.
fn busy_dumbbell(seed: u64) -> (String, Simulation) {
    use iwlab_core::engine::StreamKind;
    use rand::Rng;
    let (mut sim, d) = dumbbell(6, link(100_000_000, ms(1), 1000), link(5_000_000, ms(20), 20), seed);
    sim.core.topo.ports[d.forward as usize].loss.add(LossRule::Random { p: 0.01 });
    let text = Arc::new(Mutex::new(String::new()));
    sim.core.add_observer(Box::new(EventLog(text.clone())));
    let policy = sim.core.add_iw_policy(IwConfig::Fixed { segments: 4 }.build());
    let mut rng = sim.core.streams().stream(StreamKind::Scenario, 0);
    let c = cfg(RecoveryKind::Sack);
    for i in 0..6 {
        let app = Transfer {
            client: d.right[i],
            server: d.left[i],
            request: 300,
            response: 200 * MSS,
            client_cfg: c.clone(),
            server_cfg: c.clone(),
            client_iw: policy,
            server_iw: policy,
            log: Arc::new(Mutex::new(Log::default())),
        };
        let start = SimDuration::from_nanos(rng.gen_range(0..1_000_000_000));
        sim.add_app(Box::new(app), at(start));
    }
    run(&mut sim, at(ms(30_000)));
    let s = text.lock().unwrap().clone();
    (s, sim)
}

#[test]
fn the_same_seed_gives_a_byte_identical_event_log() {
    let (a, sim) = busy_dumbbell(42);
    let (b, _) = busy_dumbbell(42);
    assert!(a.len() > 100_000, "a busy run");
    assert!(sim.core.acct.dropped > 0, "with drops");
    assert_eq!(a, b);
    let (c, _) = busy_dumbbell(43);
    assert_ne!(a, c, "another seed, another run");
}

#[test]
fn two_simulations_run_at_once_on_two_threads_and_match_a_sequential_run() {
    let sequential = busy_dumbbell(7).0;
    let (x, y) = std::thread::scope(|s| {
        let a = s.spawn(|| busy_dumbbell(7).0);
        let b = s.spawn(|| busy_dumbbell(8).0);
        (a.join().unwrap(), b.join().unwrap())
    });
    assert_eq!(x, sequential);
    assert_ne!(x, y);
}

#[test]
fn every_packet_is_delivered_dropped_or_in_flight_when_a_run_stops_midway() {
    let (mut sim, d) = dumbbell(3, link(100_000_000, ms(1), 1000), link(2_000_000, ms(20), 10), 1);
    let policy = sim.core.add_iw_policy(IwConfig::Fixed { segments: 10 }.build());
    let c = cfg(RecoveryKind::NewReno);
    for i in 0..3 {
        let app = Transfer {
            client: d.right[i],
            server: d.left[i],
            request: 100,
            response: 1_000_000,
            client_cfg: c.clone(),
            server_cfg: c.clone(),
            client_iw: policy,
            server_iw: policy,
            log: Arc::new(Mutex::new(Log::default())),
        };
        sim.add_app(Box::new(app), SimTime::ZERO);
    }
    run(&mut sim, at(ms(1_234)));
    assert!(sim.core.in_flight() > 0, "stopped with packets in flight");
    assert!(sim.core.acct.dropped > 0, "and with drops");
}

#[test]
fn the_first_flight_is_limited_by_the_receivers_initial_window() {
    // Server IW 10, client initrwnd 4 segments: the first flight is 4 segments; the window
    // then opens by what was delivered.
    let mut p = pair(link(10_000_000, ms(50), 1000), 1);
    let server = TcpConfig::default();
    let client = TcpConfig { initial_rcv_wnd: Some(4 * MSS), ..TcpConfig::default() };
    let policy = p.sim.core.add_iw_policy(IwConfig::Fixed { segments: 10 }.build());
    let log = Arc::new(Mutex::new(Log::default()));
    let app = Transfer {
        client: p.client,
        server: p.server,
        request: 0,
        response: 30 * MSS,
        client_cfg: client,
        server_cfg: server,
        client_iw: policy,
        server_iw: policy,
        log: log.clone(),
    };
    p.sim.add_app(Box::new(app), SimTime::ZERO);
    run(&mut p.sim, at(ms(10_000)));
    let log = log.lock().unwrap();
    let first_round_end = log.established.unwrap() + ms(100);
    let in_first: u64 = log.response_progress.iter().filter(|(t, _)| *t < first_round_end).map(|x| x.1).max().unwrap();
    assert_eq!(in_first, 4 * MSS);
    assert!(log.response_done.is_some());
}

/// The destination of the first IW-loss event (the client: the server's response lost).
fn iw_loss_dst(records: &[iwlab_core::tcp::iw::IwRecord]) -> u32 {
    use iwlab_core::tcp::iw::{IwEventKind, IwRecordKind};
    let loss = |r: &&iwlab_core::tcp::iw::IwRecord| {
        matches!(r.what, IwRecordKind::Event(IwEventKind::LossInInitialWindow { .. }))
    };
    records.iter().find(loss).unwrap().dst
}

#[test]
fn aimd_halves_the_iw_on_iw_loss_and_raises_it_after_clean_connections() {
    use iwlab_core::tcp::iw::{IwEventKind, IwRecordKind};
    // Connection 1 loses inside its IW of 10 (> 4 KB sent): 10 → 5. Connection 2 closes clean:
    // one clean connection (raise_after = 1) raises by 1 → 6 for connection 3.
    let cfg = IwConfig::Aimd { initial: 10, min: 3, max: 40, step: 1, raise_after: 1 };
    let (iws, records) = policy_iws(cfg, [0, 5_000, 20_000]);
    assert_eq!(iws, vec![10 * MSS, 5 * MSS, 6 * MSS]);
    // The records hold the decisions and the events in order (server side: dst = the client).
    let client = iw_loss_dst(&records);
    let server: Vec<_> = records.iter().filter(|r| r.dst == client).map(|r| r.what).collect();
    let iw = |w| IwRecordKind::Iw { mss: MSS, declared_size: Some(20 * MSS), window: w };
    assert_eq!(server[0], iw(10 * MSS));
    assert_eq!(server[1], IwRecordKind::Event(IwEventKind::LossInInitialWindow { bytes_sent: 10 * MSS }));
    assert!(
        matches!(server[2], IwRecordKind::Event(IwEventKind::Closed { loss: true, bytes_sent, bytes_acked, retrans, .. })
        if bytes_sent == 20 * MSS && bytes_acked == 20 * MSS && retrans >= 1)
    );
    assert_eq!(server[3], iw(5 * MSS));
    assert!(matches!(server[4], IwRecordKind::Event(IwEventKind::Closed { loss: false, retrans: 0, .. })));
    assert_eq!(server[5], iw(6 * MSS));
}

#[test]
fn the_learned_iw_is_the_last_window_at_close_clamped() {
    use iwlab_core::tcp::iw::{IwEventKind, IwRecordKind};
    // One sample, percentile 100: the next IW is ⌊min(cwnd at close, bytes acked) / MSS⌋.
    let cfg = IwConfig::Learned { initial: 10, min: 2, max: 100, samples: 1, percentile: 100 };
    let (iws, records) = policy_iws(cfg, [0, 5_000, 20_000]);
    let client = iw_loss_dst(&records);
    let closes: Vec<u64> = records
        .iter()
        .filter(|r| r.dst == client)
        .filter_map(|r| match r.what {
            IwRecordKind::Event(IwEventKind::Closed { cwnd, bytes_acked, .. }) => Some(cwnd.min(bytes_acked) / MSS),
            _ => None,
        })
        .collect();
    assert_eq!(iws[0], 10 * MSS);
    assert_eq!(iws[1], closes[0].clamp(2, 100) * MSS);
    assert_eq!(iws[2], closes[1].clamp(2, 100) * MSS);
    // The lossy first connection closed with a smaller window than the clean second one.
    assert!(closes[0] < closes[1], "{closes:?}");
}

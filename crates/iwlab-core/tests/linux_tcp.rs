//! What Linux does beyond the RFC 5681/6675 generation (PRR's ACK-by-ACK tests are in
//! `scripted.rs`): HyStart (RFC 9406 and Linux's delay detector) on a lossless path whose
//! buffer standard slow start overflows; quick-ACK mode at connection start; the
//! `tcp.profile = "linux"` switch. MSS 1000 in the scripted tests so windows read as segments.

mod common;
use common::*;
use iwlab_core::engine::{SimDuration, SimTime};
use iwlab_core::scenario::Scenario;
use iwlab_core::tcp::cc::hystart::HyStartKind;
use iwlab_core::tcp::cc::CcConfig;
use iwlab_core::tcp::config::{DelayedAck, RecoveryKind, TcpConfig};
use iwlab_core::tcp::endpoint::{Endpoint, Outbox};
use iwlab_core::tcp::iw::IwConfig;
use iwlab_core::tcp::recovery::prr::ReductionBound;
use iwlab_core::tcp::segment::{Flags, Segment};

const MSS: u64 = 1000;

/// seq of the k-th data segment (1-based).
fn s(k: u64) -> u64 {
    1 + (k - 1) * MSS
}

/// A bulk transfer over one 10 Mb/s link, RTT 100 ms (BDP 86 packets of 1460 B) with a
/// 300-packet drop-tail buffer, 3000 segments: (packets dropped, completion time).
fn bulk(hystart: Option<HyStartKind>, cc: CcConfig) -> (u64, SimTime) {
    let mut p = pair(link(10_000_000, ms(50), 300), 1);
    let cfg = TcpConfig { hystart, cc, sack: true, recovery: RecoveryKind::Sack, ..TcpConfig::default() };
    let log = transfer(&mut p, &cfg, IwConfig::Fixed { segments: 10 }, 0, 3000 * 1460);
    run(&mut p.sim, at(ms(30_000)));
    let done = log.lock().unwrap().response_done.expect("delivered");
    (p.sim.core.acct.dropped, done)
}

#[test]
fn hystart_leaves_slow_start_before_the_buffer_overflows() {
    // Standard slow start doubles cwnd until the 86 + 300-packet pipe overflows.
    let (drops, _) = bulk(None, CcConfig::Reno);
    assert!(drops > 100, "slow start overshoots the buffer: {drops} drops");
    // HyStart++ sees the round's minimum RTT rise by RttThresh (12.5 ms, ~11 queued packets)
    // and leaves for CSS, then congestion avoidance, before the queue is full: no loss.
    for cc in [CcConfig::Reno, CcConfig::by_name("cubic").unwrap()] {
        assert_eq!(bulk(Some(HyStartKind::Rfc9406), cc.clone()).0, 0, "HyStart++ with {cc:?}");
        assert_eq!(bulk(Some(HyStartKind::Linux), cc.clone()).0, 0, "Linux HyStart with {cc:?}");
    }
}

#[test]
fn quick_ack_mode_acks_the_first_16_segments_at_once() {
    // A server receiving a 20-segment upload with delayed ACKs (2 segments, 40 ms).
    let cfg = TcpConfig {
        mss: MSS as u32,
        delayed_ack: Some(DelayedAck { segments: 2, timeout: SimDuration::from_millis(40) }),
        quickack: 16,
        ..TcpConfig::default()
    };
    let mut ep = Endpoint::server(&cfg, 1, None);
    let mut iw = IwConfig::Fixed { segments: 10 }.build();
    let mut out = Outbox::default();
    let t = SimTime::ZERO;
    let syn = Segment { seq: 0, flags: Flags::SYN, wnd: 1 << 30, ..Default::default() };
    ep.on_segment(t, &syn, false, &mut iw, &mut out);
    let ack = Segment { seq: 1, ack: 1, flags: Flags::ACK, wnd: 1 << 30, ..Default::default() };
    ep.on_segment(t, &ack, false, &mut iw, &mut out);
    let mut acks = vec![];
    for k in 1..=20 {
        out.clear();
        let data =
            Segment { seq: s(k), ack: 1, len: MSS as u32, flags: Flags::ACK, wnd: 1 << 30, ..Default::default() };
        ep.on_segment(t, &data, false, &mut iw, &mut out);
        acks.push(out.segments.iter().filter(|(x, _)| x.has_ack()).count());
    }
    // Segments 1..16 each get an ACK at once; then every second segment (RFC 5681 §4.2).
    assert_eq!(acks, [1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 0, 1]);
}

const PROFILE_SCENARIO: &str = r#"
name = "p"
duration = "1s"
[topology]
kind = "dumbbell"
[topology.bottleneck]
rate = "10Mbps"
delay = "10ms"
queue = { kind = "drop-tail", limit = "50pkt" }
[[topology.left]]
name = "c"
count = 1
access = { rate = "100Mbps", delay = "1ms" }
[[topology.right]]
name = "s"
count = 1
access = { rate = "100Mbps", delay = "1ms" }
[tcp]
profile = "linux"
min_rto = "1s"
[[apps]]
kind = "short-flows"
clients = "c"
servers = "s"
count = 1
start = "0s"
request = "100B"
response = "10seg"
arrivals = { kind = "periodic", period = "1s" }
tcp = { prr = false, quickack = 0 }
"#;

#[test]
fn the_linux_profile_sets_linux_defaults_and_explicit_fields_override_it() {
    let b = Scenario::from_toml_str(PROFILE_SCENARIO).unwrap().build(None).unwrap();
    let c = &b.apps[0].tcp;
    assert_eq!(c.mss, 1448);
    assert!(matches!(c.cc, CcConfig::Cubic(_)));
    assert!(c.sack && c.timestamps && c.limited_transmit);
    assert_eq!((c.recovery, c.tlp), (RecoveryKind::Rack, true));
    assert_eq!(c.hystart, Some(HyStartKind::Linux));
    assert_eq!(c.delayed_ack, Some(DelayedAck { segments: 2, timeout: SimDuration::from_millis(40) }));
    assert_eq!((c.initial_rto, c.max_rto), (SimDuration::from_secs(1), SimDuration::from_secs(120)));
    // Overridden: [tcp] min_rto, the application's prr and quickack.
    assert_eq!(c.min_rto, SimDuration::from_secs(1));
    assert_eq!((c.prr, c.quickack), (None, 0));
    // IW 10 segments of 1448 B where no policy is named.
    let ctx = iwlab_core::tcp::iw::IwContext { mss: 1448, dst: 0, declared_size: None, now: SimTime::ZERO };
    let mut b = b;
    let idx = b.apps[0].server_iw[0];
    assert_eq!(b.iw[idx].policy, "linux-iw10");
    assert_eq!(iwlab_core::tcp::iw::IwPolicy::initial_window(&mut b.sim.core.iw[idx], &ctx), 14_480);
}

#[test]
fn the_linux_profile_without_overrides_and_bad_profile_names() {
    let text = PROFILE_SCENARIO.replace("min_rto = \"1s\"\n", "").replace("tcp = { prr = false, quickack = 0 }\n", "");
    let b = Scenario::from_toml_str(&text).unwrap().build(None).unwrap();
    let c = &b.apps[0].tcp;
    assert_eq!((c.prr, c.quickack, c.min_rto), (Some(ReductionBound::Linux), 16, SimDuration::from_millis(200)));
    assert_eq!((c.timers, c.rto_keeps_reduced_ssthresh), (iwlab_core::tcp::rto::RtoRule::Linux, true));
    // sack = false: the profile's SACK recovery and PRR give way (Linux recovers NewReno-style).
    let nosack = PROFILE_SCENARIO.replace("tcp = { prr = false, quickack = 0 }", "tcp = { sack = false }");
    let b = Scenario::from_toml_str(&nosack).unwrap().build(None).unwrap();
    let c = &b.apps[0].tcp;
    assert_eq!((c.recovery, c.prr, c.tlp), (RecoveryKind::NewReno, None, false));
    // cc = "reno": no HyStart (Linux's is CUBIC's).
    let reno = PROFILE_SCENARIO.replace("tcp = { prr = false, quickack = 0 }", "tcp = { cc = \"reno\" }");
    let b = Scenario::from_toml_str(&reno).unwrap().build(None).unwrap();
    assert_eq!((b.apps[0].tcp.cc.clone(), b.apps[0].tcp.hystart), (CcConfig::Reno, None));
    let bad = PROFILE_SCENARIO.replace("profile = \"linux\"", "profile = \"bsd\"");
    let e = Scenario::from_toml_str(&bad).expect_err("an error").to_string();
    assert!(e.contains("tcp.profile") && e.contains("bsd") && e.contains("linux"), "{e}");
    let bad = PROFILE_SCENARIO.replace("tcp = { prr = false, quickack = 0 }", "tcp = { prr = \"fast\" }");
    let e = Scenario::from_toml_str(&bad).expect_err("an error").to_string();
    assert!(e.contains("apps[0].tcp.prr") && e.contains("crb"), "{e}");
}

/// A server that took a 30 ms handshake RTT sample and sent a 10-segment first flight of a
/// 20-segment response, none of it acknowledged: (ssthresh after each of two RTO expiries in
/// segments, the first two RTO deadlines after the flight in ms).
fn two_rtos(timers: iwlab_core::tcp::rto::RtoRule, keep: bool) -> ([u64; 2], [u64; 2]) {
    let cfg = TcpConfig {
        mss: MSS as u32,
        min_rto: SimDuration::from_millis(200),
        timers,
        rto_keeps_reduced_ssthresh: keep,
        ..TcpConfig::default()
    };
    let mut ep = Endpoint::server(&cfg, 1, None);
    let mut iw = IwConfig::Fixed { segments: 10 }.build();
    let mut out = Outbox::default();
    let syn = Segment { seq: 0, flags: Flags::SYN, wnd: 1 << 30, ..Default::default() };
    ep.on_segment(SimTime::ZERO, &syn, false, &mut iw, &mut out);
    let t = at(ms(30));
    let ack = Segment { seq: 1, ack: 1, flags: Flags::ACK, wnd: 1 << 30, ..Default::default() };
    ep.on_segment(t, &ack, false, &mut iw, &mut out);
    ep.write(t, 20 * MSS, &mut iw, &mut out);
    let mut ssthresh = [0; 2];
    let mut deadlines = [0; 2];
    for k in 0..2 {
        let due = ep.next_timeout().expect("the RTO is armed");
        deadlines[k] = (due.as_nanos() - if k == 0 { t.as_nanos() } else { 0 }) / 1_000_000;
        out.clear();
        ep.on_timer(due, &mut iw, &mut out);
        ssthresh[k] = ep.sender.w.ssthresh / MSS;
    }
    (ssthresh, deadlines)
}

#[test]
fn linux_reduces_ssthresh_once_per_rto_episode() {
    use iwlab_core::tcp::rto::RtoRule;
    // RFC 5681 (4) on every expiry: FlightSize/2 = 5, then max(1/2, 2) = 2 segments.
    assert_eq!(two_rtos(RtoRule::Rfc6298, false).0, [5, 2]);
    // tcp_enter_loss(): a repeated expiry of the same episode keeps the reduced ssthresh.
    assert_eq!(two_rtos(RtoRule::Rfc6298, true).0, [5, 5]);
}

#[test]
fn linux_arms_the_first_rto_at_srtt_plus_200_ms() {
    use iwlab_core::tcp::rto::RtoRule;
    // RFC 6298: max(30 + 4·15, 200) = 200 ms; Linux: 30 + max(2·30, 200) = 230 ms. The second
    // expiry comes one doubled RTO after the first (absolute: 30 + 200 + 400, 30 + 230 + 460).
    assert_eq!(two_rtos(RtoRule::Rfc6298, false).1, [200, 630]);
    assert_eq!(two_rtos(RtoRule::Linux, false).1, [230, 720]);
}

/// A server with a 30 ms handshake RTT sends 10 of 20 segments (sack and TLP on); nothing is
/// acknowledged. (When the loss probe fires, when the RTO is due after it), in ms.
fn probe_then_rto(timers: iwlab_core::tcp::rto::RtoRule) -> (u64, u64) {
    let cfg = TcpConfig {
        mss: MSS as u32,
        min_rto: SimDuration::from_millis(200),
        sack: true,
        recovery: RecoveryKind::Rack,
        tlp: true,
        timers,
        ..TcpConfig::default()
    };
    let mut ep = Endpoint::server(&cfg, 1, None);
    let mut iw = IwConfig::Fixed { segments: 10 }.build();
    let mut out = Outbox::default();
    let syn = Segment { seq: 0, flags: Flags::SYN, sack_permitted: true, wnd: 1 << 30, ..Default::default() };
    ep.on_segment(SimTime::ZERO, &syn, false, &mut iw, &mut out);
    let t = at(ms(30));
    let ack = Segment { seq: 1, ack: 1, flags: Flags::ACK, wnd: 1 << 30, ..Default::default() };
    ep.on_segment(t, &ack, false, &mut iw, &mut out);
    ep.write(t, 20 * MSS, &mut iw, &mut out);
    let pto = ep.next_timeout().expect("the probe timer is armed");
    out.clear();
    ep.on_timer(pto, &mut iw, &mut out);
    assert_eq!(out.segments.len(), 1, "one probe");
    let rto = ep.next_timeout().expect("the RTO is armed");
    (pto.as_nanos() / 1_000_000, rto.as_nanos() / 1_000_000)
}

#[test]
fn after_a_loss_probe_the_rto_restarts_from_the_probe() {
    use iwlab_core::tcp::rto::RtoRule;
    // RFC 8985 §7.3: the probe (2·30 ms after the flight, at 90 ms) re-arms a full RTO
    // (200 ms): due at 290 ms.
    assert_eq!(probe_then_rto(RtoRule::Rfc6298), (90, 290));
    // Linux: PTO = 2·srtt + 2 ms → 92 ms; tcp_send_loss_probe() clears icsk_pending before
    // tcp_rearm_rto(), so the RTO (30 + 200 ms) restarts from the probe: 92 + 230 = 322 ms.
    assert_eq!(probe_then_rto(RtoRule::Linux), (92, 322));
}

/// A server (MSS 1000, IW 10, 100 ms handshake RTT) whose application writes `first`
/// segments, all ACKed one by one 100 ms later, then `second` segments ACKed by one ACK:
/// cwnd in segments after each round.
fn app_limited_rounds(cwnd_limited: bool, first: u64, second: u64) -> (u64, u64) {
    // abc_l as Linux's tcp_slow_start(): cwnd grows by every segment ACKed.
    let cfg =
        TcpConfig { mss: MSS as u32, abc_l: Some(65535), grow_only_cwnd_limited: cwnd_limited, ..TcpConfig::default() };
    let mut ep = Endpoint::server(&cfg, 1, None);
    let mut iw = IwConfig::Fixed { segments: 10 }.build();
    let mut out = Outbox::default();
    let syn = Segment { seq: 0, flags: Flags::SYN, wnd: 1 << 30, ..Default::default() };
    ep.on_segment(SimTime::ZERO, &syn, false, &mut iw, &mut out);
    let ack = |a: u64| Segment { seq: 1, ack: a, flags: Flags::ACK, wnd: 1 << 30, ..Default::default() };
    ep.on_segment(at(ms(100)), &ack(1), false, &mut iw, &mut out);
    ep.write(at(ms(100)), first * MSS, &mut iw, &mut out);
    for k in 1..=first {
        ep.on_segment(at(ms(200)), &ack(s(k + 1)), false, &mut iw, &mut out);
    }
    let after_first = ep.sender.w.cwnd / MSS;
    ep.write(at(ms(200)), second * MSS, &mut iw, &mut out);
    ep.on_segment(at(ms(300)), &ack(s(first + second + 1)), false, &mut iw, &mut out);
    (after_first, ep.sender.w.cwnd / MSS)
}

#[test]
fn linux_grows_cwnd_in_slow_start_only_below_twice_the_segments_out() {
    // RFC 5681 slow start: every ACKed segment adds one: 10 + 3, then + 6.
    assert_eq!(app_limited_rounds(false, 3, 6), (13, 19));
    // tcp_is_cwnd_limited(): 3 segments out of 10 are not cwnd-limited and 10 >= 2·3: no
    // growth. Then 6 out: 10 < 2·6, so the ACK of 6 grows cwnd to 16.
    assert_eq!(app_limited_rounds(true, 3, 6), (10, 16));
    // A flight that fills cwnd grows it whatever the ratio (is_cwnd_limited).
    assert_eq!(app_limited_rounds(true, 10, 20), (20, 40));
}

/// A server (MSS 1000, IW 10, RTT 100 ms, min RTO 200 ms, Linux timers) grows cwnd to 40,
/// then its application is silent for `idle_ms` after the last ACK: (cwnd, ssthresh) in
/// segments when it writes again.
fn restart_after(halve_per_rto: bool, idle_ms: u64) -> (u64, u64, u64) {
    let cfg = TcpConfig {
        mss: MSS as u32,
        min_rto: SimDuration::from_millis(200),
        timers: iwlab_core::tcp::rto::RtoRule::Linux,
        restart_halves_per_rto: halve_per_rto,
        abc_l: Some(65535),
        ..TcpConfig::default()
    };
    let mut ep = Endpoint::server(&cfg, 1, None);
    let mut iw = IwConfig::Fixed { segments: 10 }.build();
    let mut out = Outbox::default();
    let syn = Segment { seq: 0, flags: Flags::SYN, wnd: 1 << 30, ..Default::default() };
    ep.on_segment(SimTime::ZERO, &syn, false, &mut iw, &mut out);
    let ack = |a: u64| Segment { seq: 1, ack: a, flags: Flags::ACK, wnd: 1 << 30, ..Default::default() };
    ep.on_segment(at(ms(100)), &ack(1), false, &mut iw, &mut out);
    ep.write(at(ms(100)), 30 * MSS, &mut iw, &mut out);
    ep.on_segment(at(ms(200)), &ack(s(11)), false, &mut iw, &mut out);
    ep.on_segment(at(ms(300)), &ack(s(31)), false, &mut iw, &mut out);
    assert_eq!(ep.sender.w.cwnd / MSS, 40);
    let rto = ep.sender.rtt.rto().as_nanos() / 1_000_000;
    ep.write(at(ms(300 + idle_ms)), 30 * MSS, &mut iw, &mut out);
    (ep.sender.w.cwnd / MSS, ep.sender.w.ssthresh / MSS, rto)
}

#[test]
fn linux_halves_cwnd_once_per_rto_of_idle_down_to_the_initial_window() {
    // The RTO after three 100 ms samples: 100 + max(2·50ish, 200) ≈ 300 ms.
    let (_, _, rto) = restart_after(true, 0);
    assert!((250..=350).contains(&rto), "rto {rto} ms");
    // RFC 5681 §4.1: min(IW, cwnd) = 10 whatever the idle time beyond one RTO.
    assert_eq!(restart_after(false, rto + rto / 2).0, 10);
    // tcp_cwnd_restart(): one RTO elapsed: 40 → 20; ssthresh = tcp_current_ssthresh(), at
    // least 3/4·40 (here still the initial, unbounded one), so slow start climbs back.
    let (cwnd, ssthresh, _) = restart_after(true, rto + rto / 2);
    assert_eq!(cwnd, 20);
    assert!(ssthresh >= 30, "ssthresh {ssthresh}");
    // Two RTOs: 40 → 20 → 10; many: still the initial window, never below it.
    assert_eq!(restart_after(true, 2 * rto + rto / 2).0, 10);
    assert_eq!(restart_after(true, 10 * rto).0, 10);
    // Idle for less than one RTO: no restart at all.
    assert_eq!(restart_after(true, rto / 2).0, 40);
}

#[test]
fn a_bulk_transfer_is_always_cwnd_limited_so_the_rule_changes_nothing_for_it() {
    // tcp_is_cwnd_limited() is true whenever a flight left no room in cwnd, also in congestion
    // avoidance where cwnd (in bytes here) ends mid-segment: a bulk transfer over a buffer it
    // overflows runs exactly as without the rule (same drops, same completion).
    let run_with = |grow_only_cwnd_limited: bool| {
        let mut p = pair(link(10_000_000, ms(50), 100), 1);
        let cfg = TcpConfig {
            cc: CcConfig::by_name("cubic").unwrap(),
            sack: true,
            recovery: RecoveryKind::Sack,
            grow_only_cwnd_limited,
            ..TcpConfig::default()
        };
        let log = transfer(&mut p, &cfg, IwConfig::Fixed { segments: 10 }, 0, 3000 * 1460);
        run(&mut p.sim, at(ms(30_000)));
        let done = log.lock().unwrap().response_done.expect("delivered");
        (p.sim.core.acct.dropped, done)
    };
    let plain = run_with(false);
    assert!(plain.0 > 0, "the transfer overflows the buffer");
    assert_eq!(run_with(true), plain);
}

#[test]
fn a_flight_without_room_for_another_segment_is_cwnd_limited_in_congestion_avoidance() {
    // After a multiplicative decrease cwnd (bytes here, packets in Linux) may end mid-segment:
    // 10.5 segments, ssthresh 5. A flight of 10 full segments leaves no room for an 11th, so
    // it is cwnd-limited (Linux: tcp_packets_in_flight() >= snd_cwnd with cwnd = 10) and the
    // ACK of the window grows cwnd in congestion avoidance; an application that sends only 4
    // of them is not, and cwnd stays.
    let grown = |segments: u64| {
        let cfg = TcpConfig { mss: MSS as u32, grow_only_cwnd_limited: true, ..TcpConfig::default() };
        let mut ep = Endpoint::server(&cfg, 1, None);
        let mut iw = IwConfig::Fixed { segments: 10 }.build();
        let mut out = Outbox::default();
        let syn = Segment { seq: 0, flags: Flags::SYN, wnd: 1 << 30, ..Default::default() };
        ep.on_segment(SimTime::ZERO, &syn, false, &mut iw, &mut out);
        let ack = |a: u64| Segment { seq: 1, ack: a, flags: Flags::ACK, wnd: 1 << 30, ..Default::default() };
        ep.on_segment(at(ms(100)), &ack(1), false, &mut iw, &mut out);
        ep.sender.w.cwnd = 10 * MSS + MSS / 2;
        ep.sender.w.ssthresh = 5 * MSS;
        ep.write(at(ms(100)), segments * MSS, &mut iw, &mut out);
        for k in 1..=segments {
            ep.on_segment(at(ms(200)), &ack(s(k + 1)), false, &mut iw, &mut out);
        }
        ep.sender.w.cwnd > 10 * MSS + MSS / 2
    };
    assert!(grown(10));
    assert!(!grown(4));
}

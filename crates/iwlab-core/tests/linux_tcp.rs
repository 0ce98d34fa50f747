//! What Linux does beyond the RFC 5681/6675 generation: PRR (RFC 6937) in SACK recovery,
//! cwnd ACK by ACK; HyStart (RFC 9406 and Linux's delay detector) on a lossless path whose
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
use iwlab_core::tcp::iw::{AnyIw, IwConfig};
use iwlab_core::tcp::recovery::prr::ReductionBound;
use iwlab_core::tcp::segment::{Flags, SackBlocks, Segment};

const MSS: u64 = 1000;

/// seq of the k-th data segment (1-based).
fn s(k: u64) -> u64 {
    1 + (k - 1) * MSS
}

struct Script {
    ep: Endpoint,
    iw: AnyIw,
    out: Outbox,
    now: SimTime,
}

impl Script {
    /// A client with IW `iw` that wrote `segments` segments and got its SYN-ACK at 100 ms.
    fn sender(cfg: &TcpConfig, iw: u32, segments: u64) -> (Script, Vec<Segment>) {
        let mut sc = Script {
            ep: Endpoint::client(cfg, 1, None),
            iw: IwConfig::Fixed { segments: iw }.build(),
            out: Outbox::default(),
            now: SimTime::ZERO,
        };
        sc.ep.connect(sc.now, &mut sc.out);
        sc.out.clear();
        sc.ep.write(sc.now, segments * MSS, &mut sc.iw, &mut sc.out);
        sc.now = SimTime::ZERO + SimDuration::from_millis(100);
        let synack = Segment {
            seq: 0,
            ack: 1,
            flags: Flags::SYN | Flags::ACK,
            wnd: 1 << 30,
            sack_permitted: true,
            ..Default::default()
        };
        let sent = sc.feed(synack);
        (sc, sent)
    }
    fn feed(&mut self, seg: Segment) -> Vec<Segment> {
        self.out.clear();
        self.ep.on_segment(self.now, &seg, false, &mut self.iw, &mut self.out);
        self.out.segments.iter().map(|(s, _)| s.clone()).collect()
    }
    fn ack_sack(&mut self, ack: u64, blocks: &[(u64, u64)]) -> Vec<Segment> {
        let mut sack = SackBlocks::default();
        for &(a, b) in blocks {
            sack.push(a, b);
        }
        self.now += SimDuration::from_micros(10);
        self.feed(Segment { seq: 1, ack, flags: Flags::ACK, wnd: 1 << 30, sack, ..Default::default() })
    }
    fn cwnd(&self) -> u64 {
        self.ep.sender.w.cwnd
    }
}

fn seqs(v: &[Segment]) -> Vec<u64> {
    v.iter().filter(|s| s.len > 0).map(|s| (s.seq - 1) / MSS + 1).collect()
}

fn sack_cfg(prr: Option<ReductionBound>) -> TcpConfig {
    TcpConfig {
        mss: MSS as u32,
        recovery: RecoveryKind::Sack,
        sack: true,
        limited_transmit: true,
        delayed_ack: None,
        prr,
        ..TcpConfig::default()
    }
}

/// RFC 6937 §3.1's first example in the engine: 20 segments in flight, the first lost, ACK j
/// SACKs segment j + 1 (the RFC's segment j); returns (cwnd, segments sent) per ACK j = 1..19.
fn single_loss(prr: Option<ReductionBound>) -> (Script, Vec<(u64, Vec<u64>)>) {
    let (mut sc, first) = Script::sender(&sack_cfg(prr), 20, 60);
    assert_eq!(seqs(&first), (1..=20).collect::<Vec<_>>());
    let rows = (1..=19)
        .map(|j| {
            let sent = sc.ack_sack(s(1), &[(s(2), s(j + 2))]);
            (sc.cwnd() / 100, seqs(&sent)) // cwnd in tenths of a segment
        })
        .collect();
    (sc, rows)
}

#[test]
fn prr_spreads_the_reduction_over_the_recovery_round_trip() {
    let (mut sc, rows) = single_loss(Some(ReductionBound::SlowStart));
    // ACKs 1-2: Limited Transmit (segments 21, 22), cwnd 20 unchanged.
    assert_eq!(rows[0], (200, vec![21]));
    assert_eq!(rows[1], (200, vec![22]));
    // ACK 3 enters recovery: FlightSize 22 ⇒ ssthresh 11 segments; RecoverFS = 22 − 2
    // segments SACKed before = 20. Each ACK delivers one segment; while pipe > ssthresh,
    // sndcnt = CEIL(prr_delivered·11/20) − prr_out and cwnd = pipe + sndcnt (RFC 6937 §3,
    // Linux tcp_cwnd_reduction()). ACK 3: 0.55 → forced to one segment, the retransmission.
    let cwnd: Vec<u64> = rows[2..].iter().map(|r| r.0).collect();
    assert_eq!(
        cwnd,
        [190, 181, 176, 172, 167, 163, 158, 154, 149, 145, 140, 136, 131, 127, 110, 110, 110],
        "cwnd (tenths of a segment) after ACKs 3..19"
    );
    assert_eq!(rows[2].1, vec![1], "ACK 3: fast retransmit of segment 1");
    let sent: Vec<(u64, Vec<u64>)> = rows
        .iter()
        .enumerate()
        .skip(3)
        .filter(|(_, r)| !r.1.is_empty())
        .map(|(i, r)| (i as u64 + 1, r.1.clone()))
        .collect();
    // New data on ACKs 6, 8, 10, 12, 13, 15 (proportional part), then 18 and 19 (pipe ≤
    // ssthresh: the slow-start reduction bound, sndcnt = ssthresh − pipe = 1).
    assert_eq!(
        sent,
        [
            (6, vec![23]),
            (8, vec![24]),
            (10, vec![25]),
            (12, vec![26]),
            (13, vec![27]),
            (15, vec![28]),
            (18, vec![29]),
            (19, vec![30])
        ]
    );
    // The cumulative ACK of everything sent before recovery ends it with cwnd = ssthresh.
    sc.ack_sack(s(23), &[(s(23), s(31))]);
    assert!(!sc.ep.sender.in_recovery);
    assert_eq!(sc.cwnd(), 11 * MSS);
}

#[test]
fn without_prr_rfc_6675_drops_cwnd_to_ssthresh_at_once_and_sends_nothing_for_half_a_round_trip() {
    let (_, rows) = single_loss(None);
    assert!(rows[2..].iter().all(|r| r.0 == 110), "cwnd = ssthresh = 11 from ACK 3 on");
    // pipe (18 after ACK 3, −1 per ACK) must fall below 11 before anything new is sent.
    let first_new = rows.iter().enumerate().skip(3).find(|(_, r)| !r.1.is_empty()).map(|(i, _)| i + 1);
    assert_eq!(first_new, Some(12), "pipe 19 after the retransmission, −1 per ACK: 10 at ACK 12");
}

#[test]
fn prr_burst_loss_conservative_vs_slow_start_bound() {
    // RFC 6937 §3.1's second example: segments 1..=15 lost, ACKs for 16..20 return.
    for (bound, per_ack) in [(ReductionBound::Conservative, 1), (ReductionBound::SlowStart, 2)] {
        let (mut sc, _) = Script::sender(&sack_cfg(Some(bound)), 20, 60);
        sc.ack_sack(s(1), &[(s(16), s(17))]);
        sc.ack_sack(s(1), &[(s(16), s(18))]);
        for j in 3..=5 {
            let sent = sc.ack_sack(s(1), &[(s(16), s(16 + j))]);
            assert_eq!(sent.len(), per_ack, "{bound:?}: ACK {j}");
            assert!(sent.iter().all(|x| x.retransmit), "{bound:?}: retransmissions");
        }
    }
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
    assert_eq!(c.recovery, RecoveryKind::Sack);
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
    // sack = false: the profile's SACK recovery and PRR give way (Linux recovers NewReno-style).
    let nosack = PROFILE_SCENARIO.replace("tcp = { prr = false, quickack = 0 }", "tcp = { sack = false }");
    let b = Scenario::from_toml_str(&nosack).unwrap().build(None).unwrap();
    assert_eq!((b.apps[0].tcp.recovery, b.apps[0].tcp.prr), (RecoveryKind::NewReno, None));
    let bad = PROFILE_SCENARIO.replace("profile = \"linux\"", "profile = \"bsd\"");
    let e = Scenario::from_toml_str(&bad).err().expect("an error").to_string();
    assert!(e.contains("tcp.profile") && e.contains("bsd") && e.contains("linux"), "{e}");
    let bad = PROFILE_SCENARIO.replace("tcp = { prr = false, quickack = 0 }", "tcp = { prr = \"fast\" }");
    let e = Scenario::from_toml_str(&bad).err().expect("an error").to_string();
    assert!(e.contains("apps[0].tcp.prr") && e.contains("crb"), "{e}");
}

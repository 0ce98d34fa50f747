//! Segment-scripted tests: one endpoint driven ACK by ACK, checking the exact window
//! arithmetic of loss recovery, timers and restarts against the RFC text.
//! MSS is 1000 bytes so that windows read as segment counts ×1000.

use iwlab_core::engine::{SimDuration, SimTime};
use iwlab_core::tcp::cc::cubic::SsthreshFrom;
use iwlab_core::tcp::cc::{CcConfig, CubicArithmetic, CubicConfig};
use iwlab_core::tcp::config::{DelayedAck, RecoveryKind, TcpConfig};
use iwlab_core::tcp::endpoint::{Endpoint, Outbox};
use iwlab_core::tcp::iw::{AnyIw, IwConfig};
use iwlab_core::tcp::recovery::prr::ReductionBound;
use iwlab_core::tcp::rto::RtoRule;
use iwlab_core::tcp::segment::{Flags, SackBlocks, Segment};

const MSS: u64 = 1000;

struct Script {
    ep: Endpoint,
    iw: AnyIw,
    out: Outbox,
    now: SimTime,
}

/// seq of the k-th data segment (1-based).
fn s(k: u64) -> u64 {
    1 + (k - 1) * MSS
}

impl Script {
    /// A client that completed its handshake at t = 100 ms (RTT 100 ms) and has
    /// written `segments` segments with IW `iw`.
    fn sender(recovery: RecoveryKind, sack: bool, iw: u32, segments: u64) -> (Script, Vec<Segment>) {
        let cfg = TcpConfig { mss: MSS as u32, recovery, sack, delayed_ack: None, ..TcpConfig::default() };
        Self::with_config(&cfg, iw, segments)
    }

    /// The same with any configuration (its `sack` is what the SYN-ACK offers).
    fn with_config(cfg: &TcpConfig, iw: u32, segments: u64) -> (Script, Vec<Segment>) {
        let sack = cfg.sack;
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
            sack_permitted: sack,
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

    fn ack(&mut self, ack: u64) -> Vec<Segment> {
        self.ack_sack(ack, &[])
    }

    fn ack_sack(&mut self, ack: u64, blocks: &[(u64, u64)]) -> Vec<Segment> {
        let mut sack = SackBlocks::default();
        for &(a, b) in blocks {
            sack.push(a, b);
        }
        self.now += SimDuration::from_micros(10);
        self.feed(Segment { seq: 1, ack, flags: Flags::ACK, wnd: 1 << 30, sack, ..Default::default() })
    }

    fn advance(&mut self, d: SimDuration) -> Vec<Segment> {
        self.now += d;
        self.out.clear();
        if self.ep.next_timeout().is_some_and(|t| t <= self.now) {
            self.ep.on_timer(self.now, &mut self.iw, &mut self.out);
        }
        self.out.segments.iter().map(|(s, _)| s.clone()).collect()
    }

    fn cwnd(&self) -> u64 {
        self.ep.sender.w.cwnd
    }
    fn ssthresh(&self) -> u64 {
        self.ep.sender.w.ssthresh
    }
}

fn seqs(v: &[Segment]) -> Vec<u64> {
    v.iter().filter(|s| s.len > 0).map(|s| (s.seq - 1) / MSS + 1).collect()
}

/// Segment 2 of a 10-segment IW is lost; segments 3..=10 each produce a duplicate ACK.
fn one_drop(kind: RecoveryKind, sack: bool) -> Script {
    let (mut sc, first) = Script::sender(kind, sack, 10, 40);
    assert_eq!(seqs(&first), (1..=10).collect::<Vec<_>>(), "the IW is 10 segments");
    // ACK of segment 1: slow start, cwnd 11, two new segments (11, 12).
    assert_eq!(seqs(&sc.ack(s(2))), vec![11, 12]);
    assert_eq!(sc.cwnd(), 11 * MSS);
    // Dup ACKs for segments 3, 4: nothing (no Limited Transmit); 5: fast retransmit of 2.
    for k in 3..=4 {
        let blocks = [(s(3), s(k + 1))];
        assert!(seqs(&sc.ack_sack(s(2), if sack { &blocks } else { &[] })).is_empty());
    }
    let blocks = [(s(3), s(6))];
    let fr = sc.ack_sack(s(2), if sack { &blocks } else { &[] });
    assert_eq!(seqs(&fr)[0], 2, "third duplicate ACK retransmits the lost segment");
    assert!(fr[0].retransmit);
    // FlightSize at the third dup ACK = 12 − 1 = 11 segments ⇒ ssthresh = 5500.
    assert_eq!(sc.ssthresh(), 5500);
    sc
}

#[test]
fn reno_one_drop_sets_ssthresh_to_half_the_flight_inflates_by_3_and_deflates_to_ssthresh() {
    let mut sc = one_drop(RecoveryKind::Reno, false);
    assert_eq!(sc.cwnd(), 5500 + 3 * MSS, "cwnd = ssthresh + 3*SMSS");
    // Seven more duplicates (segments 6..=12): +1 SMSS each; new data once cwnd allows.
    let mut new = vec![];
    for _ in 6..=12 {
        new.extend(seqs(&sc.ack(s(2))));
    }
    assert_eq!(sc.cwnd(), 5500 + 10 * MSS);
    // snd_una + cwnd = 1 + 15500: segments 13..=16 now fit.
    assert_eq!(new, vec![13, 14, 15, 16]);
    // The retransmission is ACKed up to 12: deflate to ssthresh, leave recovery.
    sc.ack(s(13));
    assert_eq!(sc.cwnd(), 5500);
    assert!(!sc.ep.sender.in_recovery());
    assert_eq!(sc.ep.sender.stats.fast_retransmits, 1);
}

#[test]
fn newreno_one_drop_leaves_the_same_windows_as_reno() {
    let mut sc = one_drop(RecoveryKind::NewReno, false);
    assert_eq!(sc.cwnd(), 8500);
    for _ in 6..=12 {
        sc.ack(s(2));
    }
    sc.ack(s(13));
    assert_eq!((sc.cwnd(), sc.ssthresh()), (5500, 5500));
    assert!(!sc.ep.sender.in_recovery());
}

#[test]
fn sack_one_drop_sets_cwnd_to_ssthresh_and_sends_by_pipe() {
    let mut sc = one_drop(RecoveryKind::Sack, true);
    // RFC 6675 (4.2): cwnd = ssthresh = FlightSize/2.
    assert_eq!((sc.cwnd(), sc.ssthresh()), (5500, 5500));
    // pipe after the retransmission: segments 6..=12 (7 not SACKed, not lost) + the
    // retransmitted 2 = 8 segments > cwnd: nothing new until SACKs shrink pipe.
    let mut new = vec![];
    for k in 6..=12 {
        new.extend(seqs(&sc.ack_sack(s(2), &[(s(3), s(k + 1))])));
    }
    // After all 10 SACKed, pipe = 1 (retransmission) + new ones; cwnd 5.5 allows 4 new.
    assert_eq!(new, vec![13, 14, 15, 16]);
    sc.ack(s(13));
    assert!(!sc.ep.sender.in_recovery());
    assert_eq!(sc.cwnd(), 5500);
}

/// Segments 2 and 5 of the IW are lost.
fn two_drops(kind: RecoveryKind, sack: bool) -> (Script, Vec<u64>) {
    let (mut sc, _) = Script::sender(kind, sack, 10, 40);
    let mut sent = seqs(&sc.ack(s(2))); // 11, 12
    let arrived = [3, 4, 6, 7, 8, 9, 10, 11, 12];
    let mut sacked: Vec<(u64, u64)> = vec![];
    for &k in &arrived {
        // merge SACK ranges of what arrived above the hole at 2
        match sacked.last_mut() {
            Some(r) if r.1 == s(k) => r.1 = s(k + 1),
            _ => sacked.push((s(k), s(k + 1))),
        }
        let blocks: Vec<(u64, u64)> = sacked.iter().rev().copied().collect();
        sent.extend(seqs(&sc.ack_sack(s(2), if sack { &blocks } else { &[] })));
    }
    (sc, sent)
}

#[test]
fn newreno_two_drops_retransmits_the_second_on_the_partial_ack() {
    let (mut sc, sent) = two_drops(RecoveryKind::NewReno, false);
    assert_eq!(sent[..3], [11, 12, 2]);
    assert_eq!(sc.ep.sender.recover, s(13), "recover = highest sequence sent");
    let cwnd = sc.cwnd();
    // The retransmitted 2 arrives: partial ACK up to 4 (segment 5 still missing).
    let on_partial = sc.ack(s(5));
    assert_eq!(seqs(&on_partial)[0], 5, "RFC 6582: retransmit the first unacknowledged segment at once");
    // Deflate by the 3 segments acknowledged, add back one SMSS.
    assert_eq!(sc.cwnd(), cwnd - 3 * MSS + MSS);
    assert!(sc.ep.sender.in_recovery(), "a partial ACK does not end NewReno recovery");
    sc.ack(s(13 + (seqs(&on_partial).len() as u64 - 1)));
    assert!(!sc.ep.sender.in_recovery());
    assert_eq!(sc.cwnd(), 5500);
    assert_eq!(sc.ep.sender.stats.timeouts, 0);
    assert_eq!(sc.ep.sender.stats.fast_retransmits, 1);
}

#[test]
fn reno_two_drops_leaves_recovery_on_the_partial_ack() {
    let (mut sc, _) = two_drops(RecoveryKind::Reno, false);
    let after = sc.ack(s(5));
    assert!(!sc.ep.sender.in_recovery(), "Reno exits on any ACK of new data");
    assert_eq!(sc.cwnd(), 5500);
    assert!(!seqs(&after).contains(&5), "Reno does not retransmit on a partial ACK");
    // Segment 5 is only repaired by three further duplicates (a second halving) or by the RTO.
    for _ in 0..3 {
        sc.ack(s(5));
    }
    // Nine dup ACKs inflated cwnd to 14.5 segments and released 13, 14, 15; after the partial
    // ACK 11 segments (5..=15) are in flight, so the second halving gives ssthresh 5.5 again.
    assert_eq!(sc.ep.sender.stats.fast_retransmits, 2);
    assert_eq!((sc.ssthresh(), sc.cwnd()), (5500, 8500));
}

#[test]
fn sack_two_drops_repairs_both_holes_before_any_cumulative_ack() {
    // RACK (RFC 8985) too: it marks both holes lost once three segments above are SACKed.
    for kind in [RecoveryKind::Sack, RecoveryKind::Rack] {
        let (sc, sent) = two_drops(kind, true);
        let rtx: Vec<u64> = sent.iter().copied().filter(|&k| k <= 10).collect();
        assert_eq!(rtx, vec![2, 5], "{kind:?}: both holes retransmitted while the cumulative ACK is stuck at 2");
        assert_eq!(sc.ep.sender.stats.timeouts, 0);
        assert_eq!(sc.ep.sender.stats.fast_retransmits, 1);
    }
}

#[test]
fn the_rto_doubles_on_each_expiry_and_the_loss_window_is_one_segment() {
    let (mut sc, _) = Script::sender(RecoveryKind::NewReno, false, 4, 4);
    // RTT sample from the SYN: 100 ms ⇒ RTO = max(1 s, 100 + 4*50 ms) = 1 s.
    let mut times = vec![];
    for _ in 0..4 {
        let deadline = sc.ep.next_timeout().unwrap();
        times.push((deadline - sc.now).as_nanos() / 1_000_000);
        sc.now = deadline;
        sc.out.clear();
        sc.ep.on_timer(sc.now, &mut sc.iw, &mut sc.out);
        assert_eq!(seqs(&sc.out.segments.iter().map(|x| x.0.clone()).collect::<Vec<_>>()), vec![1]);
        assert_eq!(sc.cwnd(), MSS, "RFC 5681: cwnd = LW = 1 SMSS after an RTO");
    }
    assert_eq!(times, vec![1000, 2000, 4000, 8000]);
    // ssthresh = max(FlightSize/2, 2*SMSS): 4 segments at the first timeout, 1 afterwards.
    assert_eq!(sc.ssthresh(), 2 * MSS);
}

#[test]
fn the_rto_is_clamped_to_the_configured_minimum() {
    let cfg = TcpConfig { mss: 1000, min_rto: SimDuration::from_millis(200), ..TcpConfig::default() };
    let mut ep = Endpoint::client(&cfg, 1, None);
    let (mut out, mut iw) = (Outbox::default(), IwConfig::Fixed { segments: 2 }.build());
    ep.connect(SimTime::ZERO, &mut out);
    ep.write(SimTime::ZERO, 1000, &mut iw, &mut out);
    let t = SimTime::ZERO + SimDuration::from_millis(10);
    let synack = Segment { ack: 1, flags: Flags::SYN | Flags::ACK, wnd: 1 << 20, ..Default::default() };
    ep.on_segment(t, &synack, false, &mut iw, &mut out);
    // SRTT 10 ms, RTTVAR 5 ms ⇒ 30 ms, clamped up to min RTO 200 ms.
    assert_eq!(ep.next_timeout(), Some(t + SimDuration::from_millis(200)));
}

#[test]
fn karn_no_rtt_sample_from_an_acknowledged_retransmission() {
    let (mut sc, _) = Script::sender(RecoveryKind::NewReno, false, 1, 1);
    let srtt = sc.ep.sender.rtt.srtt();
    sc.advance(SimDuration::from_secs(1)); // RTO: segment 1 retransmitted
    sc.now += SimDuration::from_millis(1);
    sc.ack(s(2)); // ambiguous ACK 1 ms after the retransmission
    assert_eq!(sc.ep.sender.rtt.srtt(), srtt, "no sample taken");
    // The backed-off RTO is kept until a valid sample (RFC 6298 (5.7)).
    assert_eq!(sc.ep.sender.rtt.backoff(), 1);
}

#[test]
fn after_an_idle_period_longer_than_the_rto_cwnd_restarts_at_the_iw() {
    let (mut sc, first) = Script::sender(RecoveryKind::NewReno, false, 3, 9);
    assert_eq!(first.len(), 3);
    for k in 2..=10 {
        sc.ack(s(k));
    }
    assert_eq!(sc.ep.sender.snd_una, s(10));
    let grown = sc.cwnd();
    assert!(grown > 3 * MSS);
    // Idle for 2 s (RTO is 1 s), then the application writes 20 segments.
    sc.now += SimDuration::from_secs(2);
    sc.out.clear();
    sc.ep.write(sc.now, 20 * MSS, &mut sc.iw, &mut sc.out);
    assert_eq!(sc.out.segments.len(), 3, "RFC 5681 §4.1: cwnd = min(IW, cwnd)");
}

#[test]
fn without_idle_restart_the_grown_cwnd_is_kept() {
    let cfg = TcpConfig { mss: 1000, restart_after_idle: false, delayed_ack: None, ..TcpConfig::default() };
    let mut ep = Endpoint::client(&cfg, 1, None);
    let (mut out, mut iw) = (Outbox::default(), IwConfig::Fixed { segments: 3 }.build());
    ep.connect(SimTime::ZERO, &mut out);
    ep.write(SimTime::ZERO, 9000, &mut iw, &mut out);
    let mut t = SimTime::ZERO + SimDuration::from_millis(100);
    let synack = Segment { ack: 1, flags: Flags::SYN | Flags::ACK, wnd: 1 << 20, ..Default::default() };
    ep.on_segment(t, &synack, false, &mut iw, &mut out);
    for ack in (2..=10).map(s) {
        t += SimDuration::from_millis(1);
        ep.on_segment(
            t,
            &Segment { seq: 1, ack, flags: Flags::ACK, wnd: 1 << 20, ..Default::default() },
            false,
            &mut iw,
            &mut out,
        );
    }
    out.clear();
    ep.write(t + SimDuration::from_secs(2), 20_000, &mut iw, &mut out);
    assert_eq!(out.segments.len(), 12, "cwnd grew from 3 to 12 segments and is kept");
}

#[test]
fn limited_transmit_sends_one_new_segment_on_each_of_the_first_two_dup_acks() {
    let cfg = TcpConfig { mss: 1000, limited_transmit: true, delayed_ack: None, ..TcpConfig::default() };
    let mut ep = Endpoint::client(&cfg, 1, None);
    let (mut out, mut iw) = (Outbox::default(), IwConfig::Fixed { segments: 4 }.build());
    ep.connect(SimTime::ZERO, &mut out);
    ep.write(SimTime::ZERO, 20_000, &mut iw, &mut out);
    let t = SimTime::ZERO + SimDuration::from_millis(100);
    let synack = Segment { ack: 1, flags: Flags::SYN | Flags::ACK, wnd: 1 << 20, ..Default::default() };
    ep.on_segment(t, &synack, false, &mut iw, &mut out);
    let dup = Segment { seq: 1, ack: 1, flags: Flags::ACK, wnd: 1 << 20, ..Default::default() };
    let mut got = vec![];
    for _ in 0..2 {
        out.clear();
        ep.on_segment(t, &dup, false, &mut iw, &mut out);
        got.push(seqs(&out.segments.iter().map(|x| x.0.clone()).collect::<Vec<_>>()));
    }
    assert_eq!(got, vec![vec![5], vec![6]], "RFC 3042");
    assert_eq!(ep.sender.w.cwnd, 4000, "cwnd unchanged by Limited Transmit");
}

#[test]
fn ecn_echo_halves_cwnd_once_per_window_and_sets_cwr() {
    let cfg = TcpConfig { mss: 1000, ecn: true, delayed_ack: None, ..TcpConfig::default() };
    let mut ep = Endpoint::client(&cfg, 1, None);
    let (mut out, mut iw) = (Outbox::default(), IwConfig::Fixed { segments: 10 }.build());
    ep.connect(SimTime::ZERO, &mut out);
    assert!(out.segments[0].0.flags.contains(Flags::ECE | Flags::CWR), "ECN-setup SYN");
    ep.write(SimTime::ZERO, 40_000, &mut iw, &mut out);
    let t = SimTime::ZERO + SimDuration::from_millis(100);
    let synack = Segment { ack: 1, flags: Flags::SYN | Flags::ACK | Flags::ECE, wnd: 1 << 20, ..Default::default() };
    out.clear();
    ep.on_segment(t, &synack, false, &mut iw, &mut out);
    assert!(out.segments.iter().all(|(_, e)| *e == iwlab_core::net::packet::Ecn::Ect0), "data is ECT(0)");
    let ece = |ack| Segment { seq: 1, ack, flags: Flags::ACK | Flags::ECE, wnd: 1 << 20, ..Default::default() };
    out.clear();
    ep.on_segment(t, &ece(s(2)), false, &mut iw, &mut out);
    // FlightSize when the echo arrives: 10 segments ⇒ ssthresh = cwnd = 5000, and this ACK
    // does not grow cwnd.
    assert_eq!((ep.sender.w.ssthresh, ep.sender.w.cwnd), (5000, 5000));
    ep.on_segment(t, &ece(s(3)), false, &mut iw, &mut out);
    assert_eq!(ep.sender.stats.ecn_reductions, 1, "one reduction per window of data");
    // Opening the window: the first new data segment carries CWR, later ones do not.
    out.clear();
    let ack = Segment { seq: 1, ack: s(8), flags: Flags::ACK, wnd: 1 << 20, ..Default::default() };
    ep.on_segment(t, &ack, false, &mut iw, &mut out);
    let cwr: Vec<bool> = out.segments.iter().map(|(s, _)| s.flags.contains(Flags::CWR)).collect();
    assert!(cwr.len() >= 2 && cwr[0] && !cwr[1..].iter().any(|&c| c), "{cwr:?}");
}

#[test]
fn no_rtt_sample_is_taken_from_a_handshake_whose_syn_ack_was_sent_twice() {
    // RFC 6298 §3 (Karn): an ACK of a retransmitted segment gives no RTT sample. Here the
    // second SYN-ACK answers a duplicate SYN, so the handshake ACK may acknowledge either copy.
    let cfg = TcpConfig { mss: MSS as u32, ..TcpConfig::default() };
    let mut iw = IwConfig::Fixed { segments: 10 }.build();
    let mut out = Outbox::default();
    let mut server = Endpoint::server(&cfg, 0, None);
    let syn = Segment { seq: 0, flags: Flags::SYN, wnd: 1 << 30, ..Default::default() };
    let ms = |x| SimTime::ZERO + SimDuration::from_millis(x);
    server.on_segment(ms(0), &syn, false, &mut iw, &mut out);
    server.on_segment(ms(300), &syn, false, &mut iw, &mut out);
    let synacks = out.segments.iter().filter(|(s, _)| s.is_syn()).count();
    assert_eq!(synacks, 2);
    let ack = Segment { seq: 1, ack: 1, flags: Flags::ACK, wnd: 1 << 30, ..Default::default() };
    server.on_segment(ms(350), &ack, false, &mut iw, &mut out);
    assert!(server.sender.rtt.srtt().is_none(), "sampled {:?}", server.sender.rtt.srtt());
    assert_eq!(server.sender.rtt.rto(), cfg.initial_rto);

    // The same handshake with one SYN-ACK does give a sample (the rule is what differs).
    let mut once = Endpoint::server(&cfg, 0, None);
    once.on_segment(ms(0), &syn, false, &mut iw, &mut out);
    once.on_segment(ms(350), &ack, false, &mut iw, &mut out);
    assert_eq!(once.sender.rtt.srtt(), Some(SimDuration::from_millis(350)));
}

// ---- RACK-TLP (RFC 8985) ----

fn ms(x: u64) -> SimTime {
    SimTime::ZERO + SimDuration::from_millis(x)
}

impl Script {
    /// A RACK-TLP client (delayed ACKs as given; SRTT = 100 ms from the handshake).
    fn rack(delayed_ack: Option<DelayedAck>, iw: u32, segments: u64) -> (Script, Vec<Segment>) {
        let cfg = TcpConfig {
            mss: MSS as u32,
            recovery: RecoveryKind::Rack,
            sack: true,
            tlp: true,
            delayed_ack,
            ..TcpConfig::default()
        };
        Self::with_config(&cfg, iw, segments)
    }

    /// An ACK arriving at exactly `t`.
    fn ack_at(&mut self, t: SimTime, ack: u64, blocks: &[(u64, u64)]) -> Vec<Segment> {
        let mut sack = SackBlocks::default();
        for &(a, b) in blocks {
            sack.push(a, b);
        }
        self.now = t;
        self.feed(Segment { seq: 1, ack, flags: Flags::ACK, wnd: 1 << 30, sack, ..Default::default() })
    }

    /// Runs timers until `t` (each at its deadline); what they sent, with the times.
    fn run_until(&mut self, t: SimTime) -> Vec<(SimTime, Segment)> {
        let mut sent = vec![];
        while let Some(d) = self.ep.next_timeout().filter(|&d| d <= t) {
            self.now = d;
            self.out.clear();
            self.ep.on_timer(d, &mut self.iw, &mut self.out);
            sent.extend(self.out.segments.iter().map(|(s, _)| (d, s.clone())));
        }
        self.now = t;
        sent
    }
}

/// A 9-segment response with IW 10 whose last segment is dropped: the ACK of 1..=8 comes at
/// 200 ms (RTT 100 ms: SRTT stays 100 ms), then nothing.
fn tail_drop(delayed_ack: Option<DelayedAck>) -> Script {
    let (mut sc, first) = Script::rack(delayed_ack, 10, 9);
    assert_eq!(seqs(&first), (1..=9).collect::<Vec<_>>());
    assert!(sc.ack_at(ms(200), s(9), &[]).is_empty());
    assert_eq!(sc.ep.sender.rtt.srtt(), Some(SimDuration::from_millis(100)));
    sc
}

#[test]
fn tlp_repairs_a_dropped_tail_after_two_srtt_not_after_the_rto() {
    // RFC 8985 §7.2: PTO = 2·SRTT (no delayed ACKs: TLP.max_ack_delay = 0), started by the
    // ACK of new data at 200 ms; the RTO (min 1 s) would fire at 1.2 s.
    let mut sc = tail_drop(None);
    assert_eq!(sc.ep.next_timeout(), Some(ms(400)));
    let sent = sc.run_until(ms(1_100));
    // §7.3: no new data, so the probe resends the highest-sequence segment, at 400 ms.
    assert_eq!(sent.len(), 1);
    assert_eq!((sent[0].0, seqs(&[sent[0].1.clone()])), (ms(400), vec![9]));
    assert!(sent[0].1.retransmit);
    assert_eq!(sc.ep.sender.stats.tlp_probes, 1);
    // The probe's ACK (TLP.end_seq exactly) completes the transfer at 500 ms, without an RTO.
    sc.ack_at(ms(500), s(10), &[]);
    assert!(sc.ep.sender.all_acked());
    assert_eq!(sc.ep.sender.stats.timeouts, 0);
    assert_eq!(sc.ep.next_timeout(), None);
}

#[test]
fn tlp_waits_for_the_delayed_ack_allowance_when_one_segment_is_in_flight() {
    // RFC 8985 §7.2: "If FlightSize is one segment: PTO += TLP.max_ack_delay" (200 ms here).
    let mut sc = tail_drop(Some(DelayedAck { segments: 2, timeout: SimDuration::from_millis(200) }));
    assert_eq!(sc.ep.next_timeout(), Some(ms(600)));
    let sent = sc.run_until(ms(700));
    assert_eq!(sent.iter().map(|(t, s)| (*t, s.seq)).collect::<Vec<_>>(), vec![(ms(600), s(9))]);
}

#[test]
fn without_tlp_the_dropped_tail_waits_for_the_rto() {
    let cfg = TcpConfig {
        mss: MSS as u32,
        recovery: RecoveryKind::Rack,
        sack: true,
        delayed_ack: None,
        ..TcpConfig::default()
    };
    let (mut sc, _) = Script::with_config(&cfg, 10, 9);
    sc.ack_at(ms(200), s(9), &[]);
    // RFC 6298 (5.3): restarted by the ACK: 200 ms + max(1 s, SRTT + 4·RTTVAR).
    assert_eq!(sc.ep.next_timeout(), Some(ms(1_200)));
    let sent = sc.run_until(ms(1_200));
    assert_eq!(sent.len(), 1);
    assert_eq!(sc.ep.sender.stats.timeouts, 1);
}

#[test]
fn tlp_probes_with_new_data_when_the_window_is_full() {
    // IW 2 of a 4-segment write; both segments lost. RFC 8985 §7.3: the probe is the
    // lowest unsent segment (3), beyond cwnd, at 100 + 2·100 ms.
    let (mut sc, first) = Script::rack(None, 2, 4);
    assert_eq!(seqs(&first), vec![1, 2]);
    let sent = sc.run_until(ms(300));
    assert_eq!(sent.iter().map(|(t, s)| (*t, s.seq, s.retransmit)).collect::<Vec<_>>(), vec![(ms(300), s(3), false)]);
    // Its ACK SACKs 3 at 400 ms: RACK.rtt = 100 ms and segments 1, 2 (sent at 100 ms) are
    // past 100 + 100 + reo_wnd (min_RTT/4 = 25 ms; one segment SACKed) ⇒ lost (§6.2 step 5):
    // recovery resends both at once (cwnd = ssthresh = 2 segments, pipe 0 after marking).
    let out = sc.ack_at(ms(400), s(1), &[(s(3), s(4))]);
    assert!(sc.ep.sender.in_recovery());
    assert_eq!(out.iter().filter(|x| x.retransmit).map(|x| x.seq).collect::<Vec<_>>(), vec![s(1), s(2)]);
    assert_eq!(sc.ep.sender.stats.timeouts, 0);
}

#[test]
fn tlp_retransmission_followed_by_an_ack_above_its_end_reduces_cwnd() {
    // RFC 8985 §7.4.2: "Else If ACK's ack. number > TLP.end_seq: … (Invoke congestion
    // control to react to the loss event the probe has repaired)".
    let mut sc = tail_drop(None);
    sc.run_until(ms(400));
    let cwnd_before = sc.cwnd();
    assert_eq!(cwnd_before, 11 * MSS, "slow start: one ACK of 8 segments, +1 SMSS (no ABC)");
    sc.ack_at(ms(500), s(10), &[]); // TLP.end_seq itself: still ambiguous, an ordinary ACK
    assert_eq!(sc.cwnd(), cwnd_before + MSS, "slow start goes on");
    sc.out.clear();
    sc.ep.write(sc.now, MSS, &mut sc.iw, &mut sc.out); // segment 10
    sc.ack_at(ms(600), s(11), &[]);
    // Reno: ssthresh = max(FlightSize/2, 2·SMSS) with FlightSize 1 segment ⇒ 2 segments.
    assert_eq!((sc.ssthresh(), sc.cwnd()), (2 * MSS, 2 * MSS));
    assert_eq!(sc.ep.sender.stats.tlp_repairs, 1);
}

#[test]
fn a_duplicate_ack_without_sack_ends_the_tlp_episode_without_reduction() {
    // RFC 8985 §7.4.2: "Else If ACK is a DupAck without any SACK option: TLP.end_seq = None"
    // — the original and the probe both arrived.
    let mut sc = tail_drop(None);
    sc.run_until(ms(400));
    sc.ack_at(ms(450), s(10), &[]); // the original's (late) ACK
    sc.ack_at(ms(500), s(10), &[]); // the duplicate the probe caused
    sc.out.clear();
    sc.ep.write(sc.now, MSS, &mut sc.iw, &mut sc.out);
    let cwnd = sc.cwnd();
    sc.ack_at(ms(600), s(11), &[]);
    assert_eq!(sc.ep.sender.stats.tlp_repairs, 0);
    assert!(sc.cwnd() >= cwnd);
}

#[test]
fn a_dsack_of_the_probe_ends_the_tlp_episode_without_reduction() {
    // Linux tcp_process_tlp_ack(), FLAG_DSACK_TLP: the original arrived late and the receiver
    // reports the probe as a duplicate (RFC 2883) — nothing was lost, even though the ACK
    // carries a SACK block and the next one advances past TLP.end_seq.
    let cfg = TcpConfig {
        mss: MSS as u32,
        recovery: RecoveryKind::Rack,
        sack: true,
        tlp: true,
        dsack: true,
        delayed_ack: None,
        ..TcpConfig::default()
    };
    let (mut sc, _) = Script::with_config(&cfg, 10, 9);
    sc.ack_at(ms(200), s(9), &[]);
    sc.run_until(ms(400)); // the probe resends segment 9
    sc.ack_at(ms(450), s(10), &[]); // the original's (late) ACK
    sc.ack_at(ms(500), s(10), &[(s(9), s(10))]); // the probe, reported as a duplicate
    sc.out.clear();
    sc.ep.write(sc.now, MSS, &mut sc.iw, &mut sc.out);
    let (cwnd, ssthresh) = (sc.cwnd(), sc.ssthresh());
    sc.ack_at(ms(600), s(11), &[]);
    assert_eq!(sc.ep.sender.stats.tlp_repairs, 0);
    assert_eq!(sc.ssthresh(), ssthresh);
    assert!(sc.cwnd() >= cwnd);
}

// ---------------------------------------------------------------------------------------
// RFC 6937 PRR (`tcp.prr`): cwnd ACK by ACK in SACK and RACK recovery

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
    single_loss_with(&sack_cfg(prr))
}

fn single_loss_with(cfg: &TcpConfig) -> (Script, Vec<(u64, Vec<u64>)>) {
    let (mut sc, first) = Script::with_config(cfg, 20, 60);
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
    assert!(!sc.ep.sender.in_recovery());
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
        let (mut sc, _) = Script::with_config(&sack_cfg(Some(bound)), 20, 60);
        sc.ack_sack(s(1), &[(s(16), s(17))]);
        sc.ack_sack(s(1), &[(s(16), s(18))]);
        for j in 3..=5 {
            let sent = sc.ack_sack(s(1), &[(s(16), s(16 + j))]);
            assert_eq!(sent.len(), per_ack, "{bound:?}: ACK {j}");
            assert!(sent.iter().all(|x| x.retransmit), "{bound:?}: retransmissions");
        }
    }
}

#[test]
fn prr_drives_cwnd_in_rack_recovery_too() {
    // RACK marks segment 1 lost on the third SACK (DupThresh SACKed, no reordering: reo_wnd
    // = 0, RFC 8985 §6.2 step 4), the same ACK as RFC 6675, and PRR then sets the same cwnd
    // per ACK, with RACK's in-flight as pipe.
    let cfg = TcpConfig { recovery: RecoveryKind::Rack, tlp: true, ..sack_cfg(Some(ReductionBound::SlowStart)) };
    let (rack, rows) = single_loss_with(&cfg);
    let (_, sack) = single_loss(Some(ReductionBound::SlowStart));
    assert!(rack.ep.sender.in_recovery());
    assert_eq!(rows, sack);
}

#[test]
fn with_linux_prr_the_ack_ending_recovery_also_grows_cwnd_from_ssthresh() {
    // Linux ends the reduction with cwnd = ssthresh (tcp_end_cwnd_reduction()) and the same
    // ACK, the state Open again, runs congestion avoidance on what it delivered
    // (tcp_cong_control()); RFC 6937 (the other bounds) stops at ssthresh.
    let end_of_recovery = |bound| {
        let (mut sc, _) = single_loss(Some(bound));
        sc.ack_sack(s(23), &[(s(23), s(31))]);
        assert!(!sc.ep.sender.in_recovery());
        (sc.ssthresh(), sc.cwnd())
    };
    assert_eq!(end_of_recovery(ReductionBound::SlowStart), (11 * MSS, 11 * MSS));
    // The ACK delivers segments 1, 21, 22 and SACKs 23..=30 (2..=20 were SACKed before): 11
    // segments, one cwnd's worth, so Reno's congestion avoidance (RFC 5681 (3)) adds
    // MSS·MSS/cwnd.
    assert_eq!(end_of_recovery(ReductionBound::Linux), (11 * MSS, 11 * MSS + MSS * MSS / (11 * MSS)));
}

/// A connection that wrote nothing yet, then writes 10 segments and closes at once (an
/// HTTP/1.0 response) with IW 10, SACK and RACK; returns what left at once.
fn write_and_close_ten(fin_after_write: bool) -> (Script, Vec<Segment>) {
    let cfg = TcpConfig {
        mss: MSS as u32,
        recovery: RecoveryKind::Rack,
        sack: true,
        delayed_ack: None,
        prr: Some(ReductionBound::Linux),
        fin_after_write,
        ..TcpConfig::default()
    };
    let (mut sc, _) = Script::with_config(&cfg, 10, 0);
    sc.out.clear();
    sc.ep.write_and_close(sc.now, 10 * MSS, &mut sc.iw, &mut sc.out);
    let sent = sc.out.segments.iter().map(|(s, _)| s.clone()).collect();
    (sc, sent)
}

#[test]
fn by_default_the_fin_of_a_write_and_close_rides_on_the_last_data_segment() {
    let (_, sent) = write_and_close_ten(false);
    assert_eq!(sent.len(), 10);
    assert!(sent[9].flags.contains(Flags::FIN) && sent[9].len == MSS as u32);
}

#[test]
fn after_a_write_that_fills_cwnd_linux_sends_the_fin_alone_when_an_ack_makes_room() {
    // Linux tcp_send_fin(): the write already left, so the FIN is a new skb that waits for
    // tcp_cwnd_test() (tests/conformance/fin-after-full-window.pkt).
    let (mut sc, sent) = write_and_close_ten(true);
    assert_eq!(sent.len(), 10);
    assert!(sent.iter().all(|s| !s.flags.contains(Flags::FIN)), "no FIN while cwnd is full");
    let out = sc.ack(s(7)); // segments 1..=6 delivered, 7..=10 lost
    let fin: Vec<_> = out.iter().filter(|s| s.flags.contains(Flags::FIN)).collect();
    assert_eq!(fin.len(), 1);
    assert_eq!((fin[0].seq, fin[0].len), (s(11), 0));
}

#[test]
fn the_sack_of_a_lone_fin_reveals_the_lost_tail_and_prr_counts_it_as_one_packet() {
    // Linux: the FIN's SACK advances RACK past segments 7..=10, which are lost at once
    // (tcp_rack_detect_loss()); PRR counts the FIN as one delivered packet and sends one
    // retransmission (tests/conformance/fin-alone-reveals-tail-loss.pkt).
    let (mut sc, _) = write_and_close_ten(true);
    sc.ack(s(7));
    sc.advance(SimDuration::from_millis(100));
    let out = sc.ack_sack(s(7), &[(s(11), s(11) + 1)]);
    assert_eq!(seqs(&out), vec![7], "one retransmission, no RTO or probe needed");
    assert!(sc.ep.sender.in_recovery());
}

// ---------------------------------------------------------------------------------------
// A head whose retransmissions are lost, then the RTO (Linux timers and cwnd growth)

/// Linux's CUBIC and RACK recovery with its PRR, `timers` and `cwnd_growth` as given, RTO
/// floor 200 ms.
fn lost_head_cfg(timers: RtoRule, linux_growth: bool) -> TcpConfig {
    let cubic =
        CubicConfig { ssthresh_from: SsthreshFrom::Cwnd, arithmetic: CubicArithmetic::Linux, ..CubicConfig::default() };
    TcpConfig {
        mss: MSS as u32,
        cc: CcConfig::Cubic(cubic),
        recovery: RecoveryKind::Rack,
        sack: true,
        delayed_ack: None,
        prr: Some(ReductionBound::Linux),
        min_rto: SimDuration::from_millis(200),
        timers,
        abc_l: Some(65535),
        rto_keeps_reduced_ssthresh: true,
        grow_only_cwnd_limited: linux_growth,
        ..TcpConfig::default()
    }
}

/// 10 segments at t = 100 ms (RTO 300 ms: SRTT 100 + the 200 ms floor); segment 1 is lost and
/// so are its first two retransmissions (t = 200 and 310 ms, RACK resends it each time),
/// while 2..=11 are SACKed (tests/conformance/rto-restarts-on-head-retransmission.pkt).
fn head_resent_twice(cfg: &TcpConfig) -> Script {
    let (mut sc, first) = Script::with_config(cfg, 10, 20);
    assert_eq!(seqs(&first), (1..=10).collect::<Vec<_>>());
    sc.advance(SimDuration::from_millis(100));
    assert_eq!(seqs(&sc.ack_sack(s(1), &[(s(2), s(5))])), vec![1]);
    sc.advance(SimDuration::from_millis(10));
    assert_eq!(seqs(&sc.ack_sack(s(1), &[(s(2), s(11))])), (11..=16).collect::<Vec<_>>());
    sc.advance(SimDuration::from_millis(100));
    assert_eq!(seqs(&sc.ack_sack(s(1), &[(s(2), s(12))])), vec![1, 17], "RACK resends the head");
    sc
}

#[test]
fn linux_restarts_the_rto_when_it_resends_the_head_segment() {
    // Linux tcp_xmit_retransmit_queue(): resending rtx_head rearms the RTO with icsk_rto; the
    // RTO would otherwise have fired at 100 + 300 ms, from the first transmission.
    let mut sc = head_resent_twice(&lost_head_cfg(RtoRule::Linux, true));
    assert!(sc.advance(SimDuration::from_millis(299)).is_empty(), "no RTO 299 ms after the resend");
    let rto = sc.advance(SimDuration::from_millis(1));
    assert_eq!(seqs(&rto), vec![1], "the RTO fires 300 ms after the last resend of the head");
    assert_eq!(sc.ep.sender.stats.timeouts, 1);
    assert_eq!(sc.cwnd(), MSS);
}

#[test]
fn with_rfc_6298_timers_a_resend_does_not_restart_a_running_rto() {
    // RFC 6298 (5.1): the timer is started when data leaves only if it is not running.
    let mut sc = head_resent_twice(&lost_head_cfg(RtoRule::Rfc6298, true));
    let rto = sc.advance(SimDuration::from_millis(90)); // t ≈ 400 ms
    assert_eq!(seqs(&rto), vec![1]);
    assert_eq!(sc.ep.sender.stats.timeouts, 1);
}

#[test]
fn after_an_rto_cwnd_grows_by_the_segments_an_ack_delivers_not_by_those_it_passes() {
    // The resent head's ACK moves snd.una over the ten SACKed segments 2..=11 but delivers one
    // segment: Linux's slow start (tcp_cong_control() with acked_sacked) gives cwnd 2 and two
    // lost segments are resent (tests/conformance/cwnd-grows-by-newly-delivered-not-by-
    // cumulative-ack.pkt); counting the cumulative ACK's eleven segments released a burst.
    let mut sc = head_resent_twice(&lost_head_cfg(RtoRule::Linux, true));
    assert_eq!(seqs(&sc.advance(SimDuration::from_millis(300))), vec![1]);
    sc.advance(SimDuration::from_millis(100));
    let out = sc.ack(s(12));
    assert_eq!(sc.cwnd(), 2 * MSS);
    assert_eq!(seqs(&out), vec![12, 13]);
}

#[test]
fn rfc_5681_slow_start_counts_every_byte_the_cumulative_ack_covers() {
    // RFC 5681 §3.1 with L = 65535 (RFC 3465): cwnd += min(N, L·SMSS), N = 11 000 bytes, so
    // one ACK takes cwnd from 1 segment to ssthresh (7: CUBIC's 0.7 × 10 from the recovery,
    // kept by the RTO) and five more segments leave at once.
    let mut sc = head_resent_twice(&lost_head_cfg(RtoRule::Linux, false));
    sc.advance(SimDuration::from_millis(300));
    sc.advance(SimDuration::from_millis(100));
    let out = sc.ack(s(12));
    assert_eq!((sc.cwnd(), sc.ssthresh()), (7 * MSS, 7 * MSS));
    assert_eq!(seqs(&out), (12..=18).collect::<Vec<_>>());
}

/// The head resent twice and lost, the RTO resends it again; its ACK moves snd.una to
/// segment 12 and SACKs 13 and 14 (never resent): three segments delivered, slow start gives
/// cwnd 4 while 12 and 15..=17 are lost (tests/conformance/rto-recovery-window-counts-packets-
/// in-flight.pkt). Returns what that ACK sent.
fn rto_then_sack_above_a_hole(rto_window_in_flight: bool) -> (Script, Vec<Segment>) {
    let cfg = TcpConfig { rto_window_in_flight, ..lost_head_cfg(RtoRule::Linux, true) };
    let mut sc = head_resent_twice(&cfg);
    assert_eq!(seqs(&sc.advance(SimDuration::from_millis(300))), vec![1], "the RTO resends the head");
    sc.advance(SimDuration::from_millis(100));
    let out = sc.ack_sack(s(12), &[(s(13), s(15))]);
    assert_eq!(sc.cwnd(), 4 * MSS);
    (sc, out)
}

#[test]
fn after_an_rto_linux_resends_while_the_packets_in_flight_are_below_cwnd() {
    // Linux tcp_xmit_retransmit_queue(): resend while tcp_packets_in_flight() (packets_out −
    // sacked_out − lost_out + retrans_out) < cwnd; the SACKed 13 and 14 are not in flight, so
    // cwnd 4 resends all four lost segments.
    let (_, out) = rto_then_sack_above_a_hole(true);
    assert_eq!(seqs(&out), vec![12, 15, 16, 17]);
}

#[test]
fn by_default_the_resends_after_an_rto_stay_within_snd_una_plus_cwnd() {
    // Go-back-N from snd.una (RFC 5681 §3.1): the window 12..=15 holds the SACKed 13 and 14,
    // so only 12 and 15 are resent.
    let (_, out) = rto_then_sack_above_a_hole(false);
    assert_eq!(seqs(&out), vec![12, 15]);
}

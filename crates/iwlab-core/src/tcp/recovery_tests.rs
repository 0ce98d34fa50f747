//! Loss recovery driven through a whole sender (`sender.rs` with the variants and mechanisms
//! of `recovery/`): RACK (RFC 8985 §6), D-SACK (RFC 2883) and undo / F-RTO as Linux does them.

/// Delivers a cumulative ACK with SACK blocks to a sender, and what it sent in response.
mod support {
use crate::engine::SimTime;
use crate::tcp::segment::{Flags, SackBlocks, Segment};
use crate::tcp::sender::{Sender, TxSeg};

/// Delivers a cumulative ACK of `ack` with SACK `blocks` at `now`; returns what the sender sent.
pub(crate) fn ack(s: &mut Sender, now: SimTime, ack: u64, blocks: &[(u64, u64)]) -> Vec<TxSeg> {
    let mut sack = SackBlocks::default();
    for &(a, b) in blocks {
        sack.push(a, b);
    }
    let seg = Segment { seq: 1, ack, flags: Flags::ACK, wnd: 1 << 30, sack, ..Default::default() };
    let mut out = vec![];
    s.on_ack(now, &seg, false, &mut out);
    s.transmit(now, &mut out);
    out
}
}

mod rack {
    use crate::engine::{SimDuration, SimTime};
    use crate::tcp::recovery::rack::reo_wnd;
    use crate::tcp::sender::{Sender, TxSeg};
    use crate::tcp::config::{RecoveryKind, TcpConfig};
    use super::support::ack;

    const MSS: u64 = 1000;

    fn ms(x: u64) -> SimDuration {
        SimDuration::from_millis(x)
    }
    fn at(x: u64) -> SimTime {
        SimTime::ZERO + ms(x)
    }
    fn seq(k: u64) -> u64 {
        1 + (k - 1) * MSS
    }

    /// A RACK sender (TLP off) with an RTT sample of `rtt` ms, `n` segments sent at t = 0.
    fn sender(n: u64, rtt: u64) -> (Sender, Vec<TxSeg>) {
        let cfg = TcpConfig { mss: MSS as u32, recovery: RecoveryKind::Rack, sack: true, ..TcpConfig::default() };
        let mut s = Sender::new(&cfg, true, false);
        s.rtt.sample(ms(rtt), 1, 1);
        s.write(n * MSS);
        s.start(n * MSS);
        let mut out = vec![];
        s.transmit(at(0), &mut out);
        assert_eq!(out.len() as u64, n);
        (s, out)
    }

    #[test]
    fn reo_wnd_is_a_quarter_of_min_rtt_capped_by_srtt() {
        // RFC 8985 §6.2 step 4: min(reo_wnd_mult · min_RTT / 4, SRTT), mult = 1.
        let (s, _) = sender(4, 100);
        assert_eq!(reo_wnd(&s, &s.mech.dsack), ms(25));
    }

    #[test]
    fn one_sacked_segment_marks_nothing_lost_and_arms_the_timer_for_rtt_plus_reo_wnd() {
        // Segments 1..=4 sent at 0; segment 1 lost; 2 SACKed at 100 ms (RACK.rtt = 100 ms).
        let (mut s, _) = sender(4, 100);
        let out = ack(&mut s, at(100), 1, &[(seq(2), seq(3))]);
        assert!(out.is_empty());
        assert!(!s.in_recovery());
        // §6.2 step 5: remaining = xmit_ts(1) + RACK.rtt + reo_wnd − now = 0 + 100 + 25 − 100.
        assert_eq!(s.rack_at, Some(at(125)));
    }

    #[test]
    fn the_rack_timer_marks_the_segment_lost_and_recovery_retransmits_it() {
        let (mut s, _) = sender(4, 100);
        ack(&mut s, at(100), 1, &[(seq(2), seq(3))]);
        // §6.3: on expiry RACK_detect_loss marks segment 1 (0 + 100 + 25 <= 125).
        let mut out = vec![];
        s.on_rto(at(125), &mut out);
        assert!(s.in_recovery());
        assert_eq!(out.first().map(|t| (t.seq, t.retransmit)), Some((seq(1), true)));
        // FlightSize 4 segments ⇒ ssthresh = cwnd = 2 segments (Reno's half).
        assert_eq!(s.w.ssthresh, 2 * MSS);
        assert_eq!(s.rack_at, None);
    }

    #[test]
    fn three_sacked_segments_mark_the_hole_lost_at_once() {
        // §6.2 step 4: no reordering seen and segs_sacked >= DupThresh ⇒ reo_wnd = 0, and
        // xmit_ts(1) + RACK.rtt <= now since segment 4 was sent no earlier.
        let (mut s, _) = sender(5, 100);
        ack(&mut s, at(100), 1, &[(seq(2), seq(3))]);
        ack(&mut s, at(100), 1, &[(seq(2), seq(4))]);
        assert!(!s.in_recovery());
        let out = ack(&mut s, at(100), 1, &[(seq(2), seq(5))]);
        assert!(s.in_recovery());
        assert_eq!(out[0].seq, seq(1));
        assert!(out[0].retransmit);
    }

    #[test]
    fn a_segment_sent_after_the_delivered_one_is_not_a_candidate() {
        // Segment 5 sent at 50 ms; segment 4 (sent at 0) SACKed at 100 ms: RACK.xmit_ts = 0,
        // so only segments 1..=3 (sent at 0, before it in transmit order) are candidates.
        let (mut s, _) = sender(4, 100);
        s.write(MSS);
        s.w.cwnd = 5 * MSS;
        let mut out = vec![];
        s.transmit(at(50), &mut out);
        assert_eq!(out.len(), 1);
        ack(&mut s, at(100), 1, &[(seq(4), seq(5))]);
        // Timer for the latest candidate (segment 3, sent at 0): 0 + 100 + 25.
        assert_eq!(s.rack_at, Some(at(125)));
        let mut out = vec![];
        s.on_rto(at(125), &mut out);
        let resent: Vec<u64> = out.iter().filter(|t| t.retransmit).map(|t| t.seq).collect();
        // Segments 1..=3 lost, 4 SACKed, 5 in flight. cwnd = ssthresh = 2.5 segments; 1 goes
        // out at once (RFC 6675 §5 (4.3)), then pipe = 4 unSACKed − 3 lost + 1 resent = 2
        // segments: no room for another.
        assert_eq!(resent, vec![seq(1)]);
        let pending: Vec<u64> = s.outstanding.rack.as_deref().unwrap().pending.iter().copied().collect();
        assert_eq!(pending, vec![seq(2), seq(3)], "2 and 3 wait for room; 5 was sent after RACK.xmit_ts");
    }

    #[test]
    fn a_lost_retransmission_is_detected_by_time_and_sent_again() {
        // RFC 8985 §2.2 / §6.2: retransmissions are timed like any segment.
        let (mut s, _) = sender(5, 100);
        for k in 3..=5 {
            ack(&mut s, at(100), 1, &[(seq(2), seq(k + 1))]);
        }
        assert!(s.in_recovery());
        let flight_ssthresh = s.w.ssthresh;
        // The retransmission of 1 (sent at 100) is lost; new data 6 is sent at 150 and SACKed
        // at 250: 100 + RACK.rtt (100) + 0 <= 250 ⇒ lost again, resent, one more reduction.
        s.write(MSS);
        s.w.cwnd += MSS;
        let mut out = vec![];
        s.transmit(at(150), &mut out);
        assert_eq!(out.iter().map(|t| t.seq).collect::<Vec<_>>(), vec![seq(6)]);
        let out = ack(&mut s, at(250), 1, &[(seq(2), seq(7))]);
        assert_eq!(out.first().map(|t| t.seq), Some(seq(1)), "the lost retransmission is resent");
        assert!(s.w.ssthresh < flight_ssthresh, "§9.3: an additional congestion response");
    }
}

mod dsack {
    use crate::engine::SimTime;
    use crate::tcp::recovery::rack::reo_wnd;
    use crate::tcp::segment::{Flags, SackBlocks, Segment};
    use crate::tcp::sender::Sender;

    fn seg(ack: u64, blocks: &[(u64, u64)]) -> Segment {
        let mut sack = SackBlocks::default();
        for &(a, b) in blocks {
            sack.push(a, b);
        }
        Segment { ack, flags: Flags::ACK, sack, ..Default::default() }
    }

    /// The D-SACK reading of an ACK, and what it tells undo (as `Sender::on_ack` does).
    fn dsack_on_ack(s: &mut Sender, seg: &Segment, probe_end: Option<u64>) {
        let (t, m) = s.split();
        if let Some(d) = m.dsack.on_ack(t, seg, probe_end) {
            m.undo.duplicates(d.resent, d.end);
        }
    }

    fn update_reo_wnd(s: &mut Sender, now: SimTime) {
        let (t, m) = s.split();
        m.dsack.update_reo_wnd(t, now);
    }

    use crate::engine::SimDuration;
    use crate::tcp::config::{RecoveryKind, TcpConfig};

    /// A RACK sender with D-SACK, min RTT 400 ms, one retransmission sent, reordering seen.
    fn sender(reordering_seen: bool) -> Sender {
        let cfg =
            TcpConfig { mss: 1000, recovery: RecoveryKind::Rack, sack: true, dsack: true, ..TcpConfig::default() };
        let mut s = Sender::new(&cfg, true, false);
        s.rtt.sample(SimDuration::from_millis(400), 1, 1);
        s.stats.retransmits = 1;
        s.outstanding.rack.as_deref_mut().unwrap().reordering_seen = reordering_seen;
        s
    }

    fn ms(x: u64) -> SimTime {
        SimTime::ZERO + SimDuration::from_millis(x)
    }

    #[test]
    fn after_reordering_a_dsack_doubles_the_reordering_window_for_sixteen_recoveries() {
        // tcp_rack_update_reo_wnd(): reo_wnd_steps 1 → 2, reo_wnd_persist = 16; each recovery
        // ending without an undo counts it down; at 0 the next delivery resets the steps.
        let mut s = sender(true);
        assert_eq!(reo_wnd(&s, &s.mech.dsack), SimDuration::from_millis(100));
        dsack_on_ack(&mut s, &seg(4001, &[(2001, 3001)]), None);
        update_reo_wnd(&mut s, ms(1000));
        assert_eq!(s.mech.dsack.reo_wnd_steps, 2);
        assert_eq!(reo_wnd(&s, &s.mech.dsack), SimDuration::from_millis(200));
        for _ in 0..15 {
            s.mech.dsack.recovery_ended();
            update_reo_wnd(&mut s, ms(2000));
        }
        assert_eq!(s.mech.dsack.reo_wnd_steps, 2, "kept for 16 recoveries");
        s.mech.dsack.recovery_ended();
        update_reo_wnd(&mut s, ms(3000));
        assert_eq!(s.mech.dsack.reo_wnd_steps, 1);
    }

    #[test]
    fn without_reordering_or_beyond_the_retransmissions_sent_a_dsack_leaves_the_window() {
        // tcp_dsack_seen(): rack.dsack_seen only once reordering was seen; and no more
        // duplicates believed than retransmissions sent (dsack_dups > total_retrans).
        let mut s = sender(false);
        dsack_on_ack(&mut s, &seg(4001, &[(2001, 3001)]), None);
        update_reo_wnd(&mut s, ms(1000));
        assert_eq!(s.mech.dsack.reo_wnd_steps, 1);
        let mut s = sender(true);
        dsack_on_ack(&mut s, &seg(4001, &[(1001, 3001)]), None); // two segments, one resent
        update_reo_wnd(&mut s, ms(1000));
        assert_eq!(s.mech.dsack.reo_wnd_steps, 1);
    }

    #[test]
    fn an_ack_carrying_a_believed_dsack_is_not_a_duplicate_ack() {
        // Linux tcp_ack(): num_dupack = 0 with FLAG_DSACKING_ACK. Segments 1..=10 out, 3
        // resent; the first ACK SACKs 2..=3, the second reports 3 again inside that block.
        let run = |dsack: bool| {
            let cfg = TcpConfig { mss: 1000, recovery: RecoveryKind::Sack, sack: true, dsack, ..TcpConfig::default() };
            let mut s = Sender::new(&cfg, true, false);
            s.write(10_000);
            s.start(10_000);
            s.transmit(ms(0), &mut vec![]);
            s.retransmit(ms(1), 2001, &mut vec![]);
            s.on_ack(ms(100), &seg(1, &[(1001, 3001)]), false, &mut vec![]);
            s.on_ack(ms(101), &seg(1, &[(2001, 3001), (1001, 3001)]), false, &mut vec![]);
            s.dupacks
        };
        assert_eq!(run(true), 1);
        assert_eq!(run(false), 2, "without tcp.dsack it is an ordinary duplicate ACK");
    }

    #[test]
    fn a_dsack_of_a_loss_probe_does_not_widen_the_window() {
        // FLAG_DSACK_TLP: a probe is timer-driven, not a RACK decision.
        let mut s = sender(true);
        dsack_on_ack(&mut s, &seg(4001, &[(2001, 3001)]), Some(3001));
        update_reo_wnd(&mut s, ms(1000));
        assert_eq!(s.mech.dsack.reo_wnd_steps, 1);
    }
}

mod undo {
    use crate::engine::{SimDuration, SimTime};
    use crate::tcp::cc::CcConfig;
    use crate::tcp::config::{RecoveryKind, TcpConfig};
    use super::support::ack;
    use crate::tcp::segment::{Flags, Segment};
    use crate::tcp::sender::{ts_value, Sender, TxSeg};
    use crate::tcp::tcb::CaState;

    const MSS: u64 = 1000;

    fn at(ms: u64) -> SimTime {
        SimTime::ZERO + SimDuration::from_millis(ms)
    }
    fn seq(k: u64) -> u64 {
        1 + (k - 1) * MSS
    }

    /// A Linux-like RACK sender (CUBIC, no TLP, no timestamps), RTT 100 ms, `n` segments in
    /// flight from t = 0 with IW 10, `data` segments written.
    fn sender(undo: bool, frto: bool, n: u64, data: u64) -> Sender {
        let cfg = TcpConfig {
            mss: MSS as u32,
            cc: CcConfig::by_name("cubic").unwrap(),
            recovery: RecoveryKind::Rack,
            sack: true,
            undo,
            frto,
            dsack: undo,
            rto_keeps_reduced_ssthresh: true,
            abc_l: Some(65535),
            min_rto: SimDuration::from_millis(200),
            ..TcpConfig::default()
        };
        let mut s = Sender::new(&cfg, true, false);
        s.rtt.sample(SimDuration::from_millis(100), 1, 1);
        s.write(data * MSS);
        s.start(10 * MSS);
        let mut out = vec![];
        s.transmit(at(0), &mut out);
        assert_eq!(out.len() as u64, n);
        s
    }

    fn rto(s: &mut Sender) -> Vec<TxSeg> {
        let t = s.rto_deadline_only().expect("RTO armed");
        let mut out = vec![];
        s.on_rto(t, &mut out);
        out
    }

    #[test]
    fn frto_an_ack_of_never_retransmitted_data_undoes_the_rto() {
        // tcp_process_loss(): FLAG_ORIG_SACK_ACKED → tcp_try_undo_loss(sk, true).
        let mut s = sender(true, true, 10, 30);
        let out = rto(&mut s);
        assert_eq!(out.iter().map(|t| (t.seq, t.retransmit)).collect::<Vec<_>>(), vec![(seq(1), true)]);
        assert_eq!((s.w.cwnd, s.w.ssthresh), (MSS, 7 * MSS), "CUBIC: ssthresh = 0.7 · 10");
        let t = s.rto_deadline_only().unwrap();
        // Segments 1 and 2 ACKed: 2 was never resent.
        let out = ack(&mut s, t + SimDuration::from_millis(10), seq(3), &[]);
        assert_eq!(s.w.ssthresh, u64::MAX, "ssthresh back to its value before the RTO");
        assert_eq!(s.w.cwnd, 12 * MSS, "cwnd 10 restored, then slow start by the 2 segments ACKed");
        assert!(!(s.ca == CaState::Loss) && s.mech.undo.undone == 1);
        // Go-back-N stopped: only new data follows (8 in flight, cwnd 12).
        assert!(out.iter().all(|t| !t.retransmit));
        assert_eq!(out.iter().map(|t| t.seq).collect::<Vec<_>>(), (11..=14).map(seq).collect::<Vec<_>>());
    }

    #[test]
    fn frto_undoes_a_spurious_rto_also_without_the_dsack_and_timestamp_undos() {
        let mut s = sender(false, true, 10, 30);
        rto(&mut s);
        let t = s.rto_deadline_only().unwrap();
        ack(&mut s, t + SimDuration::from_millis(10), seq(3), &[]);
        assert_eq!((s.w.cwnd, s.w.ssthresh), (12 * MSS, u64::MAX));
    }

    #[test]
    fn without_frto_the_same_ack_keeps_the_reduction() {
        let mut s = sender(true, false, 10, 30);
        rto(&mut s);
        let t = s.rto_deadline_only().unwrap();
        let out = ack(&mut s, t + SimDuration::from_millis(10), seq(3), &[]);
        assert_eq!(s.w.ssthresh, 7 * MSS);
        assert!((s.ca == CaState::Loss));
        assert!(out.iter().all(|t| t.retransmit), "go-back-N goes on");
    }

    #[test]
    fn frto_sends_new_data_after_the_ack_of_the_retransmission_then_undoes_on_original_data() {
        // RFC 5682 §3.1 step 2b (REXMIT_NEW): the ACK covers only the resent segment 1.
        let mut s = sender(true, true, 10, 30);
        rto(&mut s);
        let t = s.rto_deadline_only().unwrap();
        let out = ack(&mut s, t + SimDuration::from_millis(10), seq(2), &[]);
        // cwnd 2 after slow start on that ACK; nothing resent is in flight: two new segments.
        assert_eq!(
            out.iter().map(|t| (t.seq, t.retransmit)).collect::<Vec<_>>(),
            vec![(seq(11), false), (seq(12), false)]
        );
        assert!((s.ca == CaState::Loss) && s.mech.undo.frto);
        // Step 3b: the next ACK covers segment 2, never resent: spurious, undone.
        ack(&mut s, t + SimDuration::from_millis(20), seq(3), &[]);
        assert_eq!(s.w.ssthresh, u64::MAX);
        assert!(!(s.ca == CaState::Loss));
    }

    #[test]
    fn frto_a_sack_after_the_new_data_confirms_the_timeout_and_go_back_n_resumes() {
        let mut s = sender(true, true, 10, 30);
        rto(&mut s);
        let t = s.rto_deadline_only().unwrap();
        ack(&mut s, t + SimDuration::from_millis(10), seq(2), &[]);
        // Step 3a: a SACK of new segment 11 only: the flight was lost.
        let out = ack(&mut s, t + SimDuration::from_millis(20), seq(2), &[(seq(11), seq(12))]);
        assert!(!s.mech.undo.frto);
        assert_eq!(s.w.ssthresh, 7 * MSS);
        assert_eq!(out.first().map(|t| (t.seq, t.retransmit)), Some((seq(2), true)), "resent from 2 on");
    }

    #[test]
    fn a_dsack_of_the_only_retransmission_undoes_fast_recovery() {
        // tcp_check_dsack() → undo_retrans 0 → tcp_try_undo_dsack().
        let mut s = sender(true, false, 10, 10);
        ack(&mut s, at(100), 1, &[(seq(2), seq(5))]);
        assert!(s.in_recovery());
        assert_eq!((s.mech.undo.marker(), s.mech.undo.retrans()), (Some(1), Some(1)));
        ack(&mut s, at(110), seq(11), &[]);
        assert!(!s.in_recovery());
        assert_eq!(s.w.ssthresh, 7 * MSS, "recovery ended reduced: nothing shown spurious yet");
        ack(&mut s, at(200), seq(11), &[(seq(1), seq(2))]);
        assert_eq!(s.mech.undo.marker(), None, "the marker is cleared by the undo");
        assert_eq!((s.w.cwnd, s.w.ssthresh), (10 * MSS, u64::MAX));
    }

    #[test]
    fn an_ack_echoing_a_timestamp_older_than_the_retransmission_undoes_the_rto() {
        // tcp_try_undo_loss(sk, false) with tcp_packet_delayed() (RFC 3522 Eifel): the ACK of
        // segment 1 echoes the TSval of its original transmission (t = 0), not of the resend.
        let cfg = TcpConfig {
            mss: MSS as u32,
            cc: CcConfig::by_name("cubic").unwrap(),
            recovery: RecoveryKind::Rack,
            sack: true,
            timestamps: true,
            undo: true,
            rto_keeps_reduced_ssthresh: true,
            ..TcpConfig::default()
        };
        let after_rto = || {
            let mut s = Sender::new(&cfg, true, true);
            s.write(10 * MSS);
            s.start(10 * MSS);
            s.transmit(at(0), &mut vec![]);
            rto(&mut s);
            assert_eq!(s.w.ssthresh, 7 * MSS);
            s
        };
        let echo = |ecr: u32| Segment {
            seq: 1,
            ack: seq(2),
            flags: Flags::ACK,
            wnd: 1 << 30,
            ts: Some((1, ecr)),
            ..Default::default()
        };
        // Echo of the retransmission (sent at the first RTO, before `t`): no undo.
        let mut late = after_rto();
        let t = late.rto_deadline_only().unwrap();
        late.on_ack(t, &echo(ts_value(t)), false, &mut vec![]);
        assert_eq!(late.w.ssthresh, 7 * MSS);
        let mut s = after_rto();
        s.on_ack(t, &echo(ts_value(at(0))), false, &mut vec![]);
        assert_eq!(s.w.ssthresh, u64::MAX);
        assert!(s.w.cwnd >= 10 * MSS && !(s.ca == CaState::Loss));
    }

    #[test]
    fn without_undo_a_dsack_changes_nothing() {
        let mut s = sender(false, false, 10, 10);
        ack(&mut s, at(100), 1, &[(seq(2), seq(5))]);
        ack(&mut s, at(110), seq(11), &[]);
        let before = (s.w.cwnd, s.w.ssthresh);
        ack(&mut s, at(200), seq(11), &[(seq(1), seq(2))]);
        assert_eq!((s.w.cwnd, s.w.ssthresh), before);
    }
}

//! RACK, time-based loss detection (RFC 8985 §6), as the `recovery = "rack"` variant.
//!
//! A segment is lost when a segment sent after it has been delivered (cumulatively or
//! selectively acknowledged) and more than RACK.rtt + reo_wnd has passed since it was sent;
//! until then the RACK timer waits for it. No duplicate-ACK counting: with no reordering seen,
//! reo_wnd is 0 once DupThresh segments are SACKed or in recovery (§6.2 step 4), which gives
//! the DupThresh behaviour back.
//!
//! What is implemented:
//! - §6.1/§6.2 steps 1–3: per-segment transmit times, RACK.xmit_ts / end_seq / rtt, RACK.fack
//!   and reordering detection, RACK.min_RTT (the connection's minimum RTT sample); the filter
//!   of step 2 for retransmitted segments (TSecr before the retransmission, or RTT < min_RTT).
//!   Done in `tcp/scoreboard.rs` as each segment is delivered.
//! - §6.2 step 4: reo_wnd = 0 if no reordering was seen and the sender is in recovery or
//!   DupThresh segments are SACKed, else min(reo_wnd_mult · min_RTT/4, SRTT), with the
//!   multiplier adapted by D-SACKs as Linux does (`recovery/dsack.rs`; 1 without `tcp.dsack`).
//! - §6.2 step 5 and §6.3: loss marking and the RACK timer, incremental: the scoreboard keeps
//!   the segments in flight in transmit order (a retransmission moves to the tail), so each
//!   ACK looks at the segments it marks lost plus one.
//! - Recovery (§9 with RFC 6675's window rules): entering on the first loss RACK marks (unless
//!   the ACK does not cover the RecoveryPoint of an earlier recovery or RTO), ssthresh = cwnd
//!   = the controller's reduction of FlightSize; while cwnd − pipe ≥ 1 SMSS send the
//!   lowest-sequence lost segment not yet resent, else new data. pipe = unSACKed octets −
//!   lost + retransmitted since marked lost (Linux's in-flight). No RFC 6675 NextSeg (3)/(4)
//!   rescue retransmissions: RACK's timer and TLP cover the tail.
//! - §9.3: a lost retransmission triggers one more congestion response per recovery episode.
//! - After an RTO, go-back-N resends every unSACKed segment (as for `sack`); RACK's marks are
//!   cleared and each resent segment rejoins the transmit order.

use super::super::cc::CongestionControl;
use super::prr::ReductionBound;
use crate::engine::{SimDuration, SimTime};
use crate::tcp::sender::{Sender, TxSeg};

/// RFC 8985 §6.2 step 4, RACK_update_reo_wnd() (reo_wnd_mult from `recovery/dsack.rs`).
pub fn reo_wnd(s: &Sender) -> SimDuration {
    let r = s.outstanding.rack.as_deref().expect("RACK scoreboard");
    if !r.reordering_seen {
        // §6.2 step 4: "If in Fast or RTO recovery: return 0" (RTO recovery: the cumulative
        // ACK has not reached the RecoveryPoint of the last RTO).
        if s.in_recovery || s.snd_una < s.recover {
            return SimDuration::ZERO;
        }
        // "Else if RACK.segs_sacked >= DupThresh: return 0".
        if s.outstanding.sacked_segments() >= s.dupthresh as u64 {
            return SimDuration::ZERO;
        }
    }
    // "Return min(RACK.reo_wnd_mult * RACK.min_RTT / 4, SRTT)".
    let steps = s.dsack.reo_wnd_steps as u64;
    let quarter = s.rtt.min_rtt().map_or(SimDuration::ZERO, |m| SimDuration::from_nanos(m.as_nanos() / 4 * steps));
    s.rtt.srtt().map_or(quarter, |srtt| quarter.min(srtt))
}

/// RFC 8985 §6.2 step 5 and §6.3 RACK_detect_loss_and_arm_timer(): marks losses and sets
/// (or clears) the RACK timer.
fn detect_loss_and_arm_timer(s: &mut Sender, now: SimTime) {
    let reo = reo_wnd(s);
    s.rack_at = s.outstanding.rack_detect_loss(now, reo);
}

/// After every ACK (SACK blocks and cumulative ACK already applied): detect losses, and start
/// recovery or react to a lost retransmission. Transmission follows in `Sender::transmit`.
pub fn after_ack(s: &mut Sender, now: SimTime, out: &mut Vec<TxSeg>) {
    if s.ack_advanced || s.newly_sacked > 0 {
        super::dsack::update_reo_wnd(s, now); // Linux tcp_ack() → tcp_rack_update_reo_wnd()
    }
    detect_loss_and_arm_timer(s, now);
    // Linux computes the ACK's PRR share before the fast retransmission leaves
    // (tcp_fastretrans_alert(): tcp_enter_recovery(), tcp_cwnd_reduction(), then
    // tcp_xmit_recovery()), so the retransmission is part of sndcnt, not on top of it.
    let prr_first = s.prr_bound == Some(ReductionBound::Linux);
    let entered = react(s, now, out, !prr_first);
    if s.in_recovery {
        super::prr_on_ack(s); // RFC 6937, with `tcp.prr`
    }
    if entered && prr_first {
        first_retransmission(s, now, out);
    }
}

/// RFC 6675 §5 (4.3): on entering recovery the first lost segment goes out at once, whatever
/// pipe says.
fn first_retransmission(s: &mut Sender, now: SimTime, out: &mut Vec<TxSeg>) {
    if let Some(seq) = s.outstanding.rack_first_pending() {
        s.retransmit(now, seq, out);
    }
}

/// The RACK timer expired (§6.3): detect again, and send what recovery allows.
pub fn on_timer(s: &mut Sender, now: SimTime, out: &mut Vec<TxSeg>) {
    detect_loss_and_arm_timer(s, now);
    react(s, now, out, true);
    s.transmit(now, out);
}

/// Starts recovery on a RACK-detected loss (returns true then) or reacts to a lost
/// retransmission; `retransmit_now` sends the first lost segment when recovery starts.
fn react(s: &mut Sender, now: SimTime, out: &mut Vec<TxSeg>, retransmit_now: bool) -> bool {
    let lost = s.outstanding.rack_first_pending().is_some();
    let r = s.outstanding.rack.as_deref_mut().unwrap();
    let lost_rexmit = std::mem::take(&mut r.lost_retransmission);
    let resend_lost = std::mem::take(&mut r.resend_lost);
    if s.in_recovery {
        if lost_rexmit && !r.reacted && s.prr.is_none() {
            // §9.3: without PRR, a lost retransmission triggers an additional congestion
            // response — once per recovery episode: the controller's reduction applied to
            // the window in use (Reno: cwnd/2, CUBIC: β·cwnd), cwnd = ssthresh.
            r.reacted = true;
            let cwnd = s.w.cwnd;
            s.w.ssthresh = s.cc.ssthresh_on_loss(&s.w, cwnd, now);
            s.w.cwnd = s.w.ssthresh;
        }
        return false;
    }
    // Enter recovery on RACK-detected loss, unless a previous recovery or an RTO's go-back-N
    // is not over yet (RFC 6675 §5 (3): the ACK must cover RecoveryPoint) — except that a
    // resend of RTO recovery found lost again ends RTO recovery: Linux leaves CA_Loss for fast
    // recovery when a retransmission is lost (tcp_fastretrans_alert(), "Change state if cwnd
    // is undone or retransmission is lost"), a new reduction and PRR, and resends it at once
    // instead of waiting for the backed-off RTO. Linux marked everything outstanding lost at
    // the RTO (tcp_timeout_mark_lost()), so what go-back-N has not resent yet is lost too.
    let rto_resend_lost = s.in_rto_loss && s.snd_una < s.recover && resend_lost && lost;
    if rto_resend_lost {
        s.outstanding.rack_mark_lost_from(s.snd_nxt);
        s.snd_nxt = s.snd_max;
    }
    if lost && (rto_resend_lost || s.snd_una >= s.recover && s.snd_nxt == s.snd_max) {
        super::undo::on_enter_recovery(s); // Linux tcp_enter_recovery(): what an undo restores
        let flight = s.flight_size();
        // RFC 6675 §5 (4.2) as for `sack`: ssthresh = cwnd = the controller's reduction.
        s.w.ssthresh = s.cc.ssthresh_on_loss(&s.w, flight, now);
        s.w.cwnd = s.w.ssthresh;
        s.enter_recovery();
        super::prr_start(s); // RFC 6937, with `tcp.prr`
        s.outstanding.rack.as_deref_mut().unwrap().reacted = false;
        // RFC 8985 §7.1: a fast recovery ends any TLP episode.
        super::tlp::reset(s);
        if retransmit_now {
            first_retransmission(s, now, out);
        }
        return true;
    }
    false
}

pub fn on_ack(s: &mut Sender, now: SimTime) {
    // RFC 6675 §5 (1)–(2): recovery ends when the cumulative ACK reaches RecoveryPoint —
    // undone instead if it was spurious (Linux tcp_try_undo_recovery()).
    if s.snd_una >= s.recover && !super::undo::try_undo_recovery(s, now) {
        s.exit_recovery(now);
    }
}

/// In recovery, while cwnd − pipe ≥ 1 SMSS: the lowest lost segment not yet resent, else new
/// data the receiver's window allows.
pub fn send_next_segments(s: &mut Sender, now: SimTime, out: &mut Vec<TxSeg>) {
    loop {
        if s.w.cwnd < s.outstanding.rack_pipe() + s.w.mss || !s.pacer.ready(now) {
            return; // (or wait for the pacing clock, tcp/pacing.rs)
        }
        if let Some(seq) = s.outstanding.rack_first_pending() {
            s.retransmit(now, seq, out);
            continue;
        }
        let edge = s.snd_una + s.peer_wnd.min(u64::MAX - s.snd_una);
        if !s.send_new(now, edge, out) {
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tcp::config::{RecoveryKind, TcpConfig};
    use crate::tcp::recovery::test_support::ack;

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
        assert_eq!(reo_wnd(&s), ms(25));
    }

    #[test]
    fn one_sacked_segment_marks_nothing_lost_and_arms_the_timer_for_rtt_plus_reo_wnd() {
        // Segments 1..=4 sent at 0; segment 1 lost; 2 SACKed at 100 ms (RACK.rtt = 100 ms).
        let (mut s, _) = sender(4, 100);
        let out = ack(&mut s, at(100), 1, &[(seq(2), seq(3))]);
        assert!(out.is_empty());
        assert!(!s.in_recovery);
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
        assert!(s.in_recovery);
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
        assert!(!s.in_recovery);
        let out = ack(&mut s, at(100), 1, &[(seq(2), seq(5))]);
        assert!(s.in_recovery);
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
        assert!(s.in_recovery);
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

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

use super::dsack::Dsack;
use super::ops::{Ctx, RecoveryOps};
use crate::engine::{SimDuration, SimTime};
use crate::tcp::cc::CongestionOps;
use crate::tcp::rto::RtoRule;
use crate::tcp::tcb::{Tcb, TxSeg};
use crate::tcp::timers::TIMEOUT_MIN;

/// RACK's per-segment state (transmit order, RACK.xmit_ts / end_seq / rtt, reordering seen)
/// lives in the scoreboard (`scoreboard.rs`), next to the segments it describes.
#[derive(Clone, Debug, Default)]
pub struct Rack;

/// RFC 8985 §6.2 step 4, RACK_update_reo_wnd() (reo_wnd_mult from `recovery/dsack.rs`).
pub(crate) fn reo_wnd(t: &Tcb, dsack: &Dsack) -> SimDuration {
    let r = t.outstanding.rack.as_deref().expect("RACK scoreboard");
    // Linux reads the reordering its SACK processing counted (`tcp_rack_reo_wnd()`:
    // tp->reord_seen, `reordering.rs`), where a cumulative ACK counts only for holes below the
    // fack it found; RFC 8985 §6.2 step 3 otherwise.
    let seen = if t.reordering.learned { t.reordering.seen > 0 } else { r.reordering_seen };
    if !seen {
        // §6.2 step 4: "If in Fast or RTO recovery: return 0" (RTO recovery: the cumulative
        // ACK has not reached the RecoveryPoint of the last RTO).
        if t.in_recovery() || t.snd_una < t.recover {
            return SimDuration::ZERO;
        }
        // "Else if RACK.segs_sacked >= DupThresh: return 0".
        // (DupThresh is Linux's tp->reordering, `tcp_rack_reo_wnd()`.)
        if t.outstanding.sacked_segments() >= t.reordering.degree as u64 {
            return SimDuration::ZERO;
        }
    }
    // "Return min(RACK.reo_wnd_mult * RACK.min_RTT / 4, SRTT)".
    let steps = dsack.reo_wnd_steps as u64;
    let quarter = t.rtt.min_rtt().map_or(SimDuration::ZERO, |m| SimDuration::from_nanos(m.as_nanos() / 4 * steps));
    t.rtt.srtt().map_or(quarter, |srtt| quarter.min(srtt))
}

/// RFC 8985 §6.2 step 5 and §6.3 RACK_detect_loss_and_arm_timer(): marks losses and sets
/// (or clears) the RACK timer.
fn detect_loss_and_arm_timer(c: &mut Ctx, now: SimTime) {
    let reo = reo_wnd(c.t, &c.m.dsack);
    let due = c.t.outstanding.rack_detect_loss(now, reo);
    // Linux's timer in jiffies is armed TCP_TIMEOUT_MIN_US later, at most the RTO (`timers.rs`);
    // the exact clock runs RFC 8985's timer as written.
    let (clock, rto) = (c.t.rtt.clock(), c.t.rtt.rto());
    let linux = c.t.rtt.rule() == RtoRule::Linux && !clock.is_exact();
    let extra = if linux { TIMEOUT_MIN } else { SimDuration::ZERO };
    c.t.rack_at = due.map(|d| clock.rack(now, d.saturating_since(now), extra, rto));
}

impl RecoveryOps for Rack {
    fn undoable(&self) -> bool {
        true
    }
    fn detects_by_time(&self) -> bool {
        true
    }

    /// After every ACK (SACK blocks and cumulative ACK already applied) or on the RACK timer
    /// (§6.3): detect losses; in recovery, react to a lost retransmission; else say whether
    /// recovery starts.
    fn detect(&mut self, c: &mut Ctx, now: SimTime, on_ack: bool) -> bool {
        if on_ack && (c.t.ack_advanced || c.t.newly_sacked > 0) {
            c.m.dsack.update_reo_wnd(c.t, now); // Linux tcp_ack() → tcp_rack_update_reo_wnd()
        }
        detect_loss_and_arm_timer(c, now);
        let t = &mut *c.t;
        let (lost, in_recovery) = (t.outstanding.rack_first_pending().is_some(), t.in_recovery());
        let r = t.outstanding.rack.as_deref_mut().unwrap();
        let lost_rexmit = std::mem::take(&mut r.lost_retransmission);
        let resend_lost = std::mem::take(&mut r.resend_lost);
        if in_recovery {
            if lost_rexmit && !r.reacted && !c.m.prr.active() {
                // §9.3: without PRR, a lost retransmission triggers an additional congestion
                // response — once per recovery episode: the controller's reduction applied to
                // the window in use (Reno: cwnd/2, CUBIC: β·cwnd), cwnd = ssthresh.
                r.reacted = true;
                let cwnd = t.w.cwnd;
                t.w.ssthresh = c.cc.ssthresh_on_loss(&t.w, cwnd, now);
                t.w.cwnd = t.w.ssthresh;
            }
            return false;
        }
        // Enter recovery on RACK-detected loss, unless a previous recovery or an RTO's
        // go-back-N is not over yet (RFC 6675 §5 (3): the ACK must cover RecoveryPoint) —
        // except that a resend of RTO recovery found lost again ends RTO recovery: Linux
        // leaves CA_Loss for fast recovery when a retransmission is lost
        // (tcp_fastretrans_alert(), "Change state if cwnd is undone or retransmission is
        // lost"), a new reduction and PRR, and resends it at once instead of waiting for the
        // backed-off RTO. Linux marked everything outstanding lost at the RTO
        // (tcp_timeout_mark_lost()), so what go-back-N has not resent yet is lost too.
        let rto_resend_lost = t.in_loss() && resend_lost && lost;
        if rto_resend_lost {
            t.outstanding.rack_mark_lost_from(t.snd_nxt);
            t.snd_nxt = t.snd_max;
        }
        lost && (rto_resend_lost || t.snd_una >= t.recover && t.snd_nxt == t.snd_max)
    }

    fn on_enter(&mut self, c: &mut Ctx, now: SimTime) {
        // RFC 6675 §5 (4.2) as for `sack`: ssthresh = cwnd = the controller's reduction.
        c.t.w.ssthresh = c.ssthresh_on_loss(now);
        c.t.w.cwnd = c.t.w.ssthresh;
        c.m.prr.start(c.t); // RFC 6937, with `tcp.prr`
        c.t.outstanding.rack.as_deref_mut().unwrap().reacted = false;
        // RFC 8985 §7.1: a fast recovery ends any TLP episode.
        if let Some(tlp) = &mut c.m.tlp {
            tlp.reset();
        }
    }

    /// RFC 6675 §5 (4.3): on entering recovery the first lost segment goes out at once,
    /// whatever pipe says.
    fn fast_retransmit(&mut self, c: &mut Ctx, now: SimTime, out: &mut Vec<TxSeg>) {
        if let Some(seq) = c.t.outstanding.rack_first_pending() {
            c.retransmit(now, seq, out);
        }
    }

    /// RACK's in-flight estimate: unSACKed octets − lost + retransmitted since marked lost.
    fn pipe(&self, t: &Tcb) -> u64 {
        t.outstanding.rack_pipe()
    }

    /// In recovery, while cwnd − pipe ≥ 1 SMSS: the lowest lost segment not yet resent, else
    /// new data the receiver's window allows.
    fn send_in_recovery(&mut self, c: &mut Ctx, now: SimTime, out: &mut Vec<TxSeg>) -> bool {
        loop {
            if c.t.w.cwnd < c.t.outstanding.rack_pipe() + c.t.w.mss || !c.t.pacer.ready(now) {
                return true; // (or wait for the pacing clock, tcp/pacing.rs)
            }
            if let Some(seq) = c.t.outstanding.rack_first_pending() {
                c.retransmit(now, seq, out);
                continue;
            }
            let edge = c.t.rwnd_edge();
            if !c.send_new(now, edge, out) {
                return true;
            }
        }
    }
}

//! Tail Loss Probe (RFC 8985 §7): when the ACKs stop, send one probe after a probe timeout
//! (PTO) of about two round trips instead of waiting for the RTO, so that a lost tail of a
//! flight is repaired (or exposed to RACK / SACK recovery) quickly.
//!
//! - §7.2 scheduling: after sending new data (not a probe) and on each ACK of new data, unless
//!   in fast recovery, in RTO recovery, or with SACKed segments outstanding. PTO = 2·SRTT,
//!   plus `max_ack_delay` (the delayed-ACK timeout; 0 without delayed ACKs) when one segment
//!   is in flight; 1 s before any RTT sample; never later than the RTO would fire.
//! - §7.3 the probe: only if no probe is in flight (TLP.end_seq unset) and an RTT sample came
//!   in since the last probe; new data if any and the receive window allows (cwnd does not
//!   apply), else the highest-sequence segment again. Then the RTO timer is armed.
//! - §7.4 the episode: an ACK at or above TLP.end_seq ends it. If the probe was a
//!   retransmission and the ACK covers more than TLP.end_seq, the probe repaired a loss: the
//!   controller reduces ssthresh and cwnd = ssthresh (as a completed fast recovery). A
//!   duplicate ACK without SACK blocks ends it without reduction (original and probe both
//!   arrived), and so does a D-SACK of the probe itself (Linux FLAG_DSACK_TLP, with
//!   `tcp.dsack`), even when the ACK advances past TLP.end_seq.
//!
//! `tcp.tlp` switches it on (default: on with `recovery = "rack"`); it needs SACK and also
//! works with `recovery = "sack"`.

use super::super::cc::CongestionControl;
use crate::engine::{SimDuration, SimTime};
use crate::tcp::segment::Segment;
use crate::tcp::sender::{Sender, TxSeg};

/// TLP state of a sender (RFC 8985 §7.1).
#[derive(Clone, Debug, Default)]
pub struct Tlp {
    /// When the probe timer fires.
    pub at: Option<SimTime>,
    /// TLP.end_seq: SND.NXT when the probe in flight was sent.
    pub end_seq: Option<u64>,
    /// TLP.is_retrans: that probe resent data.
    pub is_retrans: bool,
    /// An RTT sample came in since the last probe (or since the connection started).
    pub rtt_sampled: bool,
    /// The worst-case delayed-ACK time added when one segment is in flight.
    pub max_ack_delay: SimDuration,
    /// Added when more than one segment is in flight (0 in RFC 8985; Linux's
    /// `tcp_schedule_loss_probe()` adds TCP_TIMEOUT_MIN, 2 ms).
    pub multi_delay: SimDuration,
    /// Set while the probe itself is sent (it must not reschedule the PTO).
    pub probing: bool,
}

/// RFC 8985 §7.1: fast recovery and RTO recovery end any episode.
pub fn reset(s: &mut Sender) {
    if let Some(t) = s.tlp.as_mut() {
        t.at = None;
        t.end_seq = None;
        t.is_retrans = false;
    }
}

/// RFC 8985 §7.2 TLP_calc_PTO(), given the RTO's expiry.
pub fn calc_pto(srtt: Option<SimDuration>, one_segment: bool, max_ack_delay: SimDuration) -> SimDuration {
    calc_pto_with(srtt, one_segment, max_ack_delay, SimDuration::ZERO)
}

/// `calc_pto` with `multi` added when more than one segment is in flight.
pub fn calc_pto_with(
    srtt: Option<SimDuration>,
    one_segment: bool,
    max_ack_delay: SimDuration,
    multi: SimDuration,
) -> SimDuration {
    match srtt {
        // "PTO = 2 * SRTT; if FlightSize is one segment: PTO += TLP.max_ack_delay".
        Some(srtt) => srtt.saturating_mul(2) + if one_segment { max_ack_delay } else { multi },
        // "Else: PTO = 1 sec".
        None => SimDuration::from_secs(1),
    }
}

/// RFC 8985 §7.2: (re)start the PTO if the conditions allow, else leave it unarmed.
pub fn schedule(s: &mut Sender, now: SimTime) {
    let Some(t) = s.tlp.as_ref() else { return };
    if t.probing {
        return;
    }
    let allowed = s.snd_una < s.snd_max
        && !s.in_recovery
        && s.snd_una >= s.recover
        && s.snd_nxt == s.snd_max
        && s.outstanding.sacked_segments() == 0;
    if !allowed {
        s.tlp.as_mut().unwrap().at = None;
        return;
    }
    let pto = calc_pto_with(s.rtt.srtt(), s.outstanding.len() == 1, t.max_ack_delay, t.multi_delay);
    // "If Now() + PTO > TCP_RTO_expiration(): PTO = TCP_RTO_expiration() − Now()".
    let mut at = now + pto;
    if let Some(rto) = s.rto_deadline_only() {
        at = at.min(rto);
    }
    s.tlp.as_mut().unwrap().at = Some(at);
}

/// RFC 8985 §7.2: an armed PTO is dropped once its conditions stop holding (recovery began,
/// segments were SACKed, nothing is in flight).
pub fn revalidate(s: &mut Sender) {
    if s.tlp.as_ref().is_some_and(|t| t.at.is_some())
        && (s.in_recovery || s.outstanding.sacked_segments() > 0 || s.snd_una == s.snd_max)
    {
        s.tlp.as_mut().unwrap().at = None;
    }
}

/// RFC 8985 §7.3 TLP_send_probe(): the PTO expired.
pub fn on_pto(s: &mut Sender, now: SimTime, out: &mut Vec<TxSeg>) {
    let t = s.tlp.as_mut().unwrap();
    t.at = None;
    if s.snd_una == s.snd_max {
        return;
    }
    // §7.3: at most one probe in flight, and an RTT sample since the last probe.
    if t.end_seq.is_none() && t.rtt_sampled {
        t.probing = true;
        // "Transmit the lowest-sequence unsent segment" if the receive window allows (FlightSize
        // may exceed cwnd by this one segment).
        let edge = s.snd_una + s.peer_wnd.min(u64::MAX - s.snd_una);
        let new_data = s.snd_nxt == s.snd_max && s.send_new(now, edge, out);
        if !new_data {
            // "Retransmit the highest-sequence segment sent".
            if let Some(last) = s.outstanding.back().map(|o| o.seq) {
                s.retransmit(now, last, out);
            }
        }
        let t = s.tlp.as_mut().unwrap();
        t.probing = false;
        t.is_retrans = !new_data;
        t.end_seq = Some(s.snd_nxt);
        t.rtt_sampled = false;
        s.stats.tlp_probes += 1;
    }
    // "Arm the RTO timer" (not the PTO) after the probe, or instead of it.
    // Linux too restarts the RTO from now after a probe (tcp_send_loss_probe() clears
    // icsk_pending before tcp_rearm_rto(); checked with rto-repeated-keeps-ssthresh.pkt).
    s.arm_rto(now);
}

/// RFC 8985 §7.4.2 TLP_process_ack(): called for every ACK before it changes the sender;
/// true if congestion control reduced cwnd.
/// `dsack`: the ACK's D-SACK block, if any (`recovery/dsack.rs`).
pub fn process_ack(s: &mut Sender, now: SimTime, seg: &Segment, dsack: Option<(u64, u64)>) -> bool {
    let Some(t) = s.tlp.as_mut() else { return false };
    let Some(end) = t.end_seq else { return false };
    let ack = seg.ack;
    if ack < end {
        return false;
    }
    let only_dsack = dsack.is_some() && seg.sack.len() == 1;
    if !t.is_retrans {
        t.end_seq = None; // TLP of new data delivered
    } else if dsack.is_some_and(|(a, b)| b == end && b - a <= s.w.mss) {
        // Linux FLAG_DSACK_TLP: the receiver got the probe twice — nothing was lost.
        t.end_seq = None;
    } else if ack > end {
        // "Repaired the single loss": invoke congestion control.
        t.end_seq = None;
        let flight = s.flight_size();
        s.w.ssthresh = s.cc.ssthresh_on_loss(&s.w, flight, now);
        s.w.cwnd = s.w.ssthresh.max(s.w.mss);
        s.stats.tlp_repairs += 1;
        s.note_loss();
        return true;
    } else if ack == s.snd_una && seg.len == 0 && (seg.sack.is_empty() || only_dsack) {
        // A duplicate ACK without SACK: the original and the probe both arrived.
        t.end_seq = None;
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(x: u64) -> SimDuration {
        SimDuration::from_millis(x)
    }

    #[test]
    fn pto_is_two_srtt() {
        // RFC 8985 §7.2: PTO = 2 * SRTT.
        assert_eq!(calc_pto(Some(ms(100)), false, ms(200)), ms(200));
    }

    #[test]
    fn pto_adds_the_delayed_ack_allowance_for_a_single_segment() {
        // RFC 8985 §7.2: "If FlightSize is one segment: PTO += TLP.max_ack_delay".
        assert_eq!(calc_pto(Some(ms(100)), true, ms(200)), ms(400));
        assert_eq!(calc_pto(Some(ms(100)), true, SimDuration::ZERO), ms(200));
    }

    #[test]
    fn pto_is_one_second_without_an_rtt_sample() {
        // RFC 8985 §7.2: "Else: PTO = 1 sec".
        assert_eq!(calc_pto(None, false, ms(200)), SimDuration::from_secs(1));
    }

    #[test]
    fn linux_adds_rto_min_for_one_segment_and_two_ms_for_more() {
        // tcp_schedule_loss_probe(): 2·srtt + TCP_RTO_MIN if packets_out == 1, else
        // + TCP_TIMEOUT_MIN (2 jiffies).
        assert_eq!(calc_pto_with(Some(ms(100)), true, ms(200), ms(2)), ms(400));
        assert_eq!(calc_pto_with(Some(ms(100)), false, ms(200), ms(2)), ms(202));
    }
}

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

use crate::engine::{SimDuration, SimTime};
use crate::tcp::segment::Segment;
use crate::tcp::tcb::Tcb;

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

/// What an ACK did to the probe's episode (RFC 8985 §7.4.2).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum TlpAck {
    /// No episode, or it goes on, or it ended without a loss.
    Nothing,
    /// The probe repaired a loss: the caller reduces cwnd (`ca_state::on_tlp_repair`).
    Repaired,
}

impl Tlp {
    /// RFC 8985 §7.1: fast recovery and RTO recovery end any episode.
    pub fn reset(&mut self) {
        self.at = None;
        self.end_seq = None;
        self.is_retrans = false;
    }

    /// RFC 8985 §7.2: (re)start the PTO if the conditions allow, else leave it unarmed.
    pub fn schedule(&mut self, t: &Tcb, now: SimTime) {
        if self.probing {
            return;
        }
        let allowed = t.snd_una < t.snd_max
            && !t.in_recovery()
            && t.snd_una >= t.recover
            && t.snd_nxt == t.snd_max
            && t.outstanding.sacked_segments() == 0;
        if !allowed {
            self.at = None;
            return;
        }
        let pto = calc_pto_with(t.rtt.srtt(), t.outstanding.len() == 1, self.max_ack_delay, self.multi_delay);
        // "If Now() + PTO > TCP_RTO_expiration(): PTO = TCP_RTO_expiration() − Now()".
        self.at = Some(t.rtt.clock().loss_probe(now, pto, t.rto_at));
    }

    /// RFC 8985 §7.2: an armed PTO is dropped once its conditions stop holding (recovery
    /// began, segments were SACKed, nothing is in flight).
    pub fn revalidate(&mut self, t: &Tcb) {
        if self.at.is_some() && (t.in_recovery() || t.outstanding.sacked_segments() > 0 || t.snd_una == t.snd_max) {
            self.at = None;
        }
    }

    /// RFC 8985 §7.3 TLP_send_probe(): the PTO expired. True if a probe is to be sent now —
    /// at most one probe in flight, and an RTT sample since the last probe. The sender sends
    /// it ("the lowest-sequence unsent segment" if the receive window allows, else "the
    /// highest-sequence segment sent" again) between this and [`Tlp::probe_sent`], then
    /// arms the RTO timer, with or without a probe.
    pub fn on_pto(&mut self, t: &Tcb) -> bool {
        self.at = None;
        if t.snd_una == t.snd_max {
            return false;
        }
        let probe = self.end_seq.is_none() && self.rtt_sampled;
        self.probing = probe;
        probe
    }

    /// The probe left: new data, or a retransmission (RFC 8985 §7.3).
    pub fn probe_sent(&mut self, t: &mut Tcb, new_data: bool) {
        self.probing = false;
        self.is_retrans = !new_data;
        self.end_seq = Some(t.snd_nxt);
        self.rtt_sampled = false;
        t.stats.tlp_probes += 1;
    }

    /// RFC 8985 §7.4.2 TLP_process_ack(): called for every ACK before it changes the sender.
    /// `dsack`: the ACK's D-SACK block, if any (`recovery/dsack.rs`).
    pub fn process_ack(&mut self, t: &Tcb, seg: &Segment, dsack: Option<(u64, u64)>) -> TlpAck {
        let Some(end) = self.end_seq else { return TlpAck::Nothing };
        let ack = seg.ack;
        if ack < end {
            return TlpAck::Nothing;
        }
        let only_dsack = dsack.is_some() && seg.sack.len() == 1;
        if !self.is_retrans {
            self.end_seq = None; // TLP of new data delivered
        } else if dsack.is_some_and(|(a, b)| b == end && b - a <= t.w.mss) {
            // Linux FLAG_DSACK_TLP: the receiver got the probe twice — nothing was lost.
            self.end_seq = None;
        } else if ack > end {
            // "Repaired the single loss": invoke congestion control.
            self.end_seq = None;
            return TlpAck::Repaired;
        } else if ack == t.snd_una && seg.len == 0 && (seg.sack.is_empty() || only_dsack) {
            // A duplicate ACK without SACK: the original and the probe both arrived.
            self.end_seq = None;
        }
        TlpAck::Nothing
    }
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

//! The RTT sample a cumulative ACK gives, from the send times of the segments it newly
//! covers (when timestamps are off; with timestamps the sender takes TSecr, RFC 7323 §4.1).
//!
//! Karn's rule (RFC 6298 §3) forbids samples from retransmitted segments; the two readings
//! differ on an ACK that covers both retransmitted and never-retransmitted segments:
//! - **RFC 6298** (`tcp.timers = "rfc6298"`): the newest segment sent once gives the sample.
//! - **Linux** (`tcp.timers = "linux"`, `tcp_clean_rtx_queue()` in net/ipv4/tcp_input.c): an
//!   ACK that covers any retransmitted segment (FLAG_RETRANS_DATA_ACKED) gives no sample at
//!   all; otherwise the RTO estimator's sample is the oldest newly covered segment not SACKed
//!   before (`first_ackt`), and the congestion controller's (HyStart) the newest (`last_ackt`).
//!   Since only a sample clears the RTO backoff (`tcp_ack_update_rtt()`), the ACK of a flight
//!   partly resent after an RTO leaves the timer backed off, where the RFC reading takes the
//!   send time of the flight's untouched tail — seconds old after a few expiries — as an RTT.

use super::rto::RtoRule;
use super::scoreboard::Outstanding;
use crate::engine::{SimDuration, SimTime};

/// The send times of the segments one ACK newly covers, gathered oldest first.
#[derive(Clone, Debug, Default)]
pub(crate) struct AckedSegments {
    /// Newest segment sent once (RFC reading).
    newest_once: Option<SimTime>,
    /// Oldest / newest segment sent once and not SACKed before (Linux `first_ackt`, `last_ackt`).
    first_clean: Option<SimTime>,
    last_clean: Option<SimTime>,
    /// A retransmitted segment is among them (Linux FLAG_RETRANS_DATA_ACKED).
    retransmitted: bool,
}

/// The samples of one ACK: for the RTO estimator and for the congestion controller.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct RttSamples {
    pub rto: Option<SimDuration>,
    pub cc: Option<SimDuration>,
}

impl AckedSegments {
    /// A segment the ACK covers, called in sequence order.
    pub fn note(&mut self, seg: &Outstanding) {
        if seg.tx > 1 {
            self.retransmitted = true;
            return;
        }
        self.newest_once = Some(seg.sent_at);
        if !seg.sacked() {
            self.first_clean.get_or_insert(seg.sent_at);
            self.last_clean = Some(seg.sent_at);
        }
    }

    /// The samples at `now` under `rule`.
    pub fn samples(&self, rule: RtoRule, now: SimTime) -> RttSamples {
        match rule {
            RtoRule::Rfc6298 => {
                let r = self.newest_once.map(|t| now - t);
                RttSamples { rto: r, cc: r }
            }
            RtoRule::Linux if self.retransmitted => RttSamples::default(),
            RtoRule::Linux => {
                RttSamples { rto: self.first_clean.map(|t| now - t), cc: self.last_clean.map(|t| now - t) }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(ms: u64) -> SimTime {
        SimTime::ZERO + SimDuration::from_millis(ms)
    }

    fn seg(seq: u64, sent_ms: u64, tx: u8) -> Outstanding {
        let mut o = Outstanding::new(seq, 1000, false, at(sent_ms));
        o.tx = tx;
        o
    }

    /// The ACK of a ten-segment flight sent at 0 ms whose head was resent at 4000 ms.
    fn flight_with_resent_head() -> AckedSegments {
        let mut a = AckedSegments::default();
        a.note(&seg(1, 4000, 5));
        for i in 1..10 {
            a.note(&seg(1 + 1000 * i, 0, 1));
        }
        a
    }

    #[test]
    fn linux_takes_no_sample_from_an_ack_covering_a_retransmission() {
        let s = flight_with_resent_head().samples(RtoRule::Linux, at(4300));
        assert_eq!(s, RttSamples { rto: None, cc: None });
    }

    #[test]
    fn rfc6298_takes_the_newest_segment_sent_once_even_beside_a_retransmission() {
        let s = flight_with_resent_head().samples(RtoRule::Rfc6298, at(4300));
        assert_eq!(s.rto, Some(SimDuration::from_millis(4300)));
    }

    #[test]
    fn linux_samples_the_oldest_segment_for_the_rto_and_the_newest_for_the_cc() {
        let mut a = AckedSegments::default();
        a.note(&seg(1, 10, 1));
        a.note(&seg(1001, 20, 1));
        let s = a.samples(RtoRule::Linux, at(70));
        assert_eq!(s.rto, Some(SimDuration::from_millis(60)));
        assert_eq!(s.cc, Some(SimDuration::from_millis(50)));
    }
}

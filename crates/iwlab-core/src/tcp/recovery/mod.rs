//! Fast retransmit and fast recovery, one variant per file: Reno (RFC 5681 §3.2), NewReno
//! (RFC 6582), SACK-based (RFC 6675). The sender calls these two entry points; a variant
//! sets ssthresh/cwnd and queues retransmissions through the sender's own methods.

pub mod newreno;
pub mod rack;
pub mod reno;
pub mod sack;
pub mod tlp;

use super::cc::CongestionControl;
use super::config::RecoveryKind;
use super::sender::{Sender, TxSeg};
use crate::engine::SimTime;

/// A duplicate ACK arrived (`s.dupacks` already counts it).
pub fn on_dupack(s: &mut Sender, now: SimTime, out: &mut Vec<TxSeg>) {
    match s.kind {
        RecoveryKind::Reno => reno::on_dupack(s, now, out),
        RecoveryKind::NewReno => newreno::on_dupack(s, now, out),
        RecoveryKind::Sack => sack::on_dupack(s, now, out),
        // RFC 8985: no duplicate-ACK counting; RACK looks at every ACK (`rack::after_ack`).
        RecoveryKind::Rack => {}
    }
}

/// New data was acknowledged while in recovery (`s.snd_una` already advanced).
pub fn on_ack_in_recovery(s: &mut Sender, now: SimTime, acked: u64, out: &mut Vec<TxSeg>) {
    match s.kind {
        RecoveryKind::Reno => reno::on_ack(s, now),
        RecoveryKind::NewReno => newreno::on_ack(s, now, acked, out),
        RecoveryKind::Sack => sack::on_ack(s, now),
        RecoveryKind::Rack => rack::on_ack(s, now),
    }
}

/// RFC 5681 §3.2 (2)–(3), shared by Reno and NewReno: ssthresh = max(FlightSize/2, 2*SMSS),
/// retransmit the first unacknowledged segment, cwnd = ssthresh + 3*SMSS.
pub(crate) fn fast_retransmit(s: &mut Sender, now: SimTime, out: &mut Vec<TxSeg>) {
    let flight = s.flight_size();
    s.w.ssthresh = s.cc.ssthresh_on_loss(&s.w, flight, now);
    s.enter_recovery();
    if let Some(first) = s.first_unacked() {
        s.retransmit(now, first.seq, out);
    }
    s.w.cwnd = s.w.ssthresh + s.dupthresh as u64 * s.w.mss;
}

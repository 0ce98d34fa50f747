//! Fast retransmit and fast recovery, one variant per file: Reno (RFC 5681 §3.2), NewReno
//! (RFC 6582), SACK-based (RFC 6675). The sender calls these two entry points; a variant
//! sets ssthresh/cwnd and queues retransmissions through the sender's own methods.

pub mod dsack;
pub mod newreno;
pub mod prr;
pub mod rack;
pub mod reno;
pub mod sack;
#[cfg(test)]
mod test_support;
pub mod tlp;
pub mod undo;

use super::cc::CongestionControl;
use super::config::RecoveryKind;
use super::sender::{Sender, TxSeg};
use crate::engine::SimTime;
use prr::Prr;

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

/// The pipe PRR compares with ssthresh: RFC 6675 SetPipe, or RACK's in-flight estimate.
fn recovery_pipe(s: &Sender) -> u64 {
    if s.kind == RecoveryKind::Rack {
        s.outstanding.rack_pipe()
    } else {
        s.outstanding.pipe()
    }
}

/// RFC 6937 §3, at the beginning of recovery (ssthresh already set, in SACK-based and RACK
/// recovery when `tcp.prr` is on): prr_delivered = prr_out = 0, RecoverFS = snd.nxt −
/// snd.una less the bytes SACKed before this ACK (RFC 9937 §6: not delivered in recovery).
pub(crate) fn prr_start(s: &mut Sender) {
    let Some(bound) = s.prr_bound else { return };
    let sacked_before = s.outstanding.sacked_bytes() - s.newly_sacked;
    let fs = s.flight_size().saturating_sub(sacked_before);
    s.prr = Some(Prr::start(bound, s.w.ssthresh, fs));
    s.prr_lost_seen = s.outstanding.lost_bytes_marked();
}

/// RFC 6937 §3, on every ACK during recovery: sndcnt from DeliveredData and pipe, then
/// cwnd = pipe + sndcnt so that the window rule sends exactly that (Linux
/// `tcp_cwnd_reduction()`). A safe ACK (Linux bound) advanced snd.una and marked no new loss.
pub(crate) fn prr_on_ack(s: &mut Sender) {
    // Linux counts packets: a SACKed FIN of its own is one delivered packet
    // (tcp_sacktag_one(): sacked_out += pcount), one segment here.
    let fin = if s.fin_newly_sacked { s.w.mss } else { 0 };
    if s.prr.is_none() || s.delivered + fin == 0 {
        return; // Linux: an ACK that delivers nothing leaves cwnd alone
    }
    // The scoreboard is up to date (IsLost / RACK marks included): a new loss shows as more
    // bytes marked lost than after the previous ACK.
    let lost = s.outstanding.lost_bytes_marked();
    let newly_lost = lost > s.prr_lost_seen;
    s.prr_lost_seen = lost;
    let pipe = recovery_pipe(s);
    let (delivered, mss, safe) = (s.delivered + fin, s.w.mss, s.ack_advanced && !newly_lost);
    let sndcnt = s.prr.as_mut().expect("checked above").on_ack(delivered, pipe, mss, safe);
    s.w.cwnd = pipe + sndcnt;
}

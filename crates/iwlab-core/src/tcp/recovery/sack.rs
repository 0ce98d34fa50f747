//! Conservative SACK-based loss recovery (RFC 6675): during recovery the sender keeps `pipe`
//! (its estimate of bytes in the network) below cwnd, choosing what to send with NextSeg.

use super::{prr_on_ack, prr_start};
use crate::engine::SimTime;
use crate::tcp::cc::CongestionControl;
use crate::tcp::sender::{Sender, TxSeg};

/// RFC 6675 §4 IsLost, for every outstanding segment at once: a segment is lost when
/// DupThresh SACKed segments, or more than (DupThresh − 1)·SMSS SACKed bytes, lie above it.
/// The scoreboard keeps the lost segments as a prefix whose end only moves forward, so this
/// costs amortised O(1) (`tcp/scoreboard.rs`).
pub(crate) fn mark_lost(s: &mut Sender) {
    s.outstanding.update_lost();
}

/// RFC 6675 §4 SetPipe: unSACKed octets not deemed lost, plus octets retransmitted
/// (at or below HighRxt) — from running sums, O(1).
pub(crate) fn pipe(s: &Sender) -> u64 {
    s.outstanding.pipe()
}

pub fn on_dupack(s: &mut Sender, now: SimTime, out: &mut Vec<TxSeg>) {
    if s.in_recovery {
        prr_on_ack(s);
        return; // NextSeg runs in transmit
    }
    mark_lost(s);
    let first_lost = s.outstanding.first_is_lost();
    // RFC 6675 §5 (3)/(4): enter on DupThresh duplicates or when IsLost(HighACK + 1),
    // unless the ACK does not cover RecoveryPoint of a previous recovery or RTO.
    if (s.dupacks >= s.dupthresh || first_lost) && s.snd_una >= s.recover {
        super::undo::on_enter_recovery(s);
        let flight = s.flight_size();
        // RFC 6675 §5 (4.2): ssthresh = cwnd = FlightSize / 2 (via the controller).
        s.w.ssthresh = s.cc.ssthresh_on_loss(&s.w, flight, now);
        s.w.cwnd = s.w.ssthresh;
        s.enter_recovery();
        prr_start(s);
        prr_on_ack(s);
        // (4.3): retransmit the first segment presumed dropped, HighACK + 1.
        if let Some(first) = s.first_unacked() {
            s.retransmit(now, first.seq, out);
        }
        // (4.4): then NextSeg while cwnd − pipe ≥ 1 SMSS.
        send_next_segments(s, now, out);
    }
}

pub fn on_ack(s: &mut Sender, now: SimTime) {
    // RFC 6675 §5 (1)–(2): recovery ends when the cumulative ACK reaches RecoveryPoint.
    if s.snd_una >= s.recover {
        if !super::undo::try_undo_recovery(s, now) {
            s.exit_recovery(now);
        }
    } else {
        prr_on_ack(s);
    }
}

/// RFC 6675 §5 (C): while cwnd − pipe ≥ 1 SMSS, send what NextSeg chooses.
pub fn send_next_segments(s: &mut Sender, now: SimTime, out: &mut Vec<TxSeg>) {
    mark_lost(s);
    loop {
        if s.w.cwnd < pipe(s) + s.w.mss || !s.pacer.ready(now) {
            return; // (or wait for the pacing clock, tcp/pacing.rs)
        }
        // NextSeg (1): the first unSACKed segment above HighRxt that IsLost.
        // NextSeg (3): failing (1) and (2), the first unSACKed segment above HighRxt.
        if let Some(seq) = hole(s, true) {
            s.retransmit(now, seq, out);
            continue;
        }
        // NextSeg (2): new data, if the receiver's window allows.
        let edge = s.snd_una + s.peer_wnd.min(u64::MAX - s.snd_una);
        if s.send_new(now, edge, out) {
            continue;
        }
        match hole(s, false) {
            Some(seq) => s.retransmit(now, seq, out),
            None => return,
        }
    }
}

/// The first unSACKed segment at or above HighRxt (that IsLost, if `lost_only`): O(log n).
fn hole(s: &mut Sender, lost_only: bool) -> Option<u64> {
    s.outstanding.hole(lost_only)
}

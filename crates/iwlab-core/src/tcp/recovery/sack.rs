//! Conservative SACK-based loss recovery (RFC 6675): during recovery the sender keeps `pipe`
//! (its estimate of bytes in the network) below cwnd, choosing what to send with NextSeg.

use super::prr::Prr;
use crate::engine::SimTime;
use crate::tcp::cc::CongestionControl;
use crate::tcp::sender::{Sender, TxSeg};

/// RFC 6675 §4 IsLost, for every outstanding segment at once: a segment is lost when
/// DupThresh SACKed segments, or more than (DupThresh − 1)·SMSS SACKed bytes, lie above it.
pub(crate) fn mark_lost(s: &mut Sender) {
    let (thresh, mss) = (s.dupthresh as u64, s.w.mss);
    let (mut count, mut bytes) = (0u64, 0u64);
    for o in s.outstanding.iter_mut().rev() {
        if o.sacked {
            count += 1;
            bytes += o.len as u64;
            o.lost = false;
        } else {
            o.lost = count >= thresh || bytes > (thresh - 1) * mss;
        }
    }
}

/// RFC 6675 §4 SetPipe: unSACKed octets not deemed lost, plus octets retransmitted
/// (at or below HighRxt).
pub(crate) fn pipe(s: &Sender) -> u64 {
    s.outstanding
        .iter()
        .filter(|o| !o.sacked)
        .map(|o| {
            let n = o.end() - o.seq;
            (!o.lost) as u64 * n + (o.end() <= s.high_rxt) as u64 * n
        })
        .sum()
}

pub fn on_dupack(s: &mut Sender, now: SimTime, out: &mut Vec<TxSeg>) {
    if s.in_recovery {
        prr_update(s, false);
        return; // NextSeg runs in transmit
    }
    mark_lost(s);
    let first_lost = s.outstanding.front().is_some_and(|o| o.lost);
    // RFC 6675 §5 (3)/(4): enter on DupThresh duplicates or when IsLost(HighACK + 1),
    // unless the ACK does not cover RecoveryPoint of a previous recovery or RTO.
    if (s.dupacks >= s.dupthresh || first_lost) && s.snd_una >= s.recover {
        let flight = s.flight_size();
        // RFC 6675 §5 (4.2): ssthresh = cwnd = FlightSize / 2 (via the controller).
        s.w.ssthresh = s.cc.ssthresh_on_loss(&s.w, flight, now);
        s.w.cwnd = s.w.ssthresh;
        s.enter_recovery();
        if let Some(bound) = s.prr_bound {
            // RFC 6937 §3: RecoverFS = snd.nxt − snd.una, less what was SACKed before this ACK
            // (RFC 9937 §6: it is not delivered during recovery).
            let sacked: u64 = s.outstanding.iter().filter(|o| o.sacked).map(|o| o.end() - o.seq).sum();
            let fs = s.flight_size().saturating_sub(sacked - s.newly_sacked);
            s.prr = Some(Prr::start(bound, s.w.ssthresh, fs));
            prr_update(s, false);
        }
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
        s.exit_recovery(now);
    } else {
        prr_update(s, true);
    }
}

/// RFC 6937 §3, on every ACK during recovery: sndcnt from DeliveredData and pipe, and
/// cwnd = pipe + sndcnt so that NextSeg sends exactly that (Linux `tcp_cwnd_reduction()`).
/// `advanced`: the ACK moved snd.una (a "safe" ACK if it also marked no new loss).
fn prr_update(s: &mut Sender, advanced: bool) {
    if s.prr.is_none() || s.delivered == 0 {
        return; // Linux: an ACK that delivers nothing leaves cwnd alone
    }
    let lost_before = s.outstanding.iter().filter(|o| o.lost).count();
    mark_lost(s);
    let newly_lost = s.outstanding.iter().filter(|o| o.lost).count() > lost_before;
    let p = pipe(s);
    let (delivered, mss) = (s.delivered, s.w.mss);
    let prr = s.prr.as_mut().expect("checked above");
    let sndcnt = prr.on_ack(delivered, p, mss, advanced && !newly_lost);
    s.w.cwnd = p + sndcnt;
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

/// The first unSACKed segment at or above HighRxt (that IsLost, if `lost_only`).
fn hole(s: &Sender, lost_only: bool) -> Option<u64> {
    s.outstanding.iter().find(|o| !o.sacked && o.seq >= s.high_rxt && (o.lost || !lost_only)).map(|o| o.seq)
}

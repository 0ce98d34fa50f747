//! Conservative SACK-based loss recovery (RFC 6675): during recovery the sender keeps `pipe`
//! (its estimate of bytes in the network) below cwnd, choosing what to send with NextSeg.

use super::ops::{Ctx, RecoveryOps};
use crate::engine::SimTime;
use crate::tcp::tcb::{Tcb, TxSeg};

#[derive(Clone, Debug, Default)]
pub struct Sack;

impl RecoveryOps for Sack {
    fn undoable(&self) -> bool {
        true
    }
    fn dupack_starts_recovery(&mut self, c: &mut Ctx) -> bool {
        // RFC 6675 §4 IsLost, for every outstanding segment at once: a segment is lost when
        // DupThresh SACKed segments, or more than (DupThresh − 1)·SMSS SACKed bytes, lie above
        // it. The scoreboard keeps the lost segments as a prefix whose end only moves forward,
        // so this costs amortised O(1) (`tcp/scoreboard.rs`).
        c.t.outstanding.update_lost();
        let first_lost = c.t.outstanding.first_is_lost();
        // RFC 6675 §5 (3)/(4): enter on DupThresh duplicates or when IsLost(HighACK + 1),
        // unless the ACK does not cover RecoveryPoint of a previous recovery or RTO.
        (c.t.dupacks >= c.t.dupthresh || first_lost) && c.t.snd_una >= c.t.recover
    }
    fn on_dupack_in_recovery(&mut self, c: &mut Ctx) {
        c.m.prr.on_ack(c.t, |t| self.pipe(t)); // NextSeg runs in transmit
    }
    fn on_enter(&mut self, c: &mut Ctx, now: SimTime) {
        // RFC 6675 §5 (4.2): ssthresh = cwnd = FlightSize / 2 (via the controller).
        c.t.w.ssthresh = c.ssthresh_on_loss(now);
        c.t.w.cwnd = c.t.w.ssthresh;
        c.m.prr.start(c.t);
        c.m.prr.on_ack(c.t, |t| self.pipe(t));
    }
    fn fast_retransmit(&mut self, c: &mut Ctx, now: SimTime, out: &mut Vec<TxSeg>) {
        // (4.3): retransmit the first segment presumed dropped, HighACK + 1.
        if let Some(first) = c.t.first_unacked() {
            c.retransmit(now, first.seq, out);
        }
        // (4.4): then NextSeg while cwnd − pipe ≥ 1 SMSS.
        self.send_in_recovery(c, now, out);
    }
    fn on_partial_ack(&mut self, c: &mut Ctx, _now: SimTime, _acked: u64, _out: &mut Vec<TxSeg>) {
        c.m.prr.on_ack(c.t, |t| self.pipe(t));
    }
    /// RFC 6675 §4 SetPipe: unSACKed octets not deemed lost, plus octets retransmitted (at or
    /// below HighRxt) — from running sums, O(1).
    fn pipe(&self, t: &Tcb) -> u64 {
        t.outstanding.pipe()
    }
    /// RFC 6675 §5 (C): while cwnd − pipe ≥ 1 SMSS, send what NextSeg chooses.
    fn send_in_recovery(&mut self, c: &mut Ctx, now: SimTime, out: &mut Vec<TxSeg>) -> bool {
        c.t.outstanding.update_lost();
        loop {
            if c.t.w.cwnd < c.t.outstanding.pipe() + c.t.w.mss || !c.t.pacer.ready(now) {
                return true; // (or wait for the pacing clock, tcp/pacing.rs)
            }
            // NextSeg (1): the first unSACKed segment above HighRxt that IsLost.
            // NextSeg (3): failing (1) and (2), the first unSACKed segment above HighRxt.
            if let Some(seq) = c.t.outstanding.hole(true) {
                c.retransmit(now, seq, out);
                continue;
            }
            // NextSeg (2): new data, if the receiver's window allows.
            let edge = c.t.rwnd_edge();
            if c.send_new(now, edge, out) {
                continue;
            }
            match c.t.outstanding.hole(false) {
                Some(seq) => c.retransmit(now, seq, out),
                None => return true,
            }
        }
    }
}

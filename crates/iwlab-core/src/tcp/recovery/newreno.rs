//! NewReno (RFC 6582): fast recovery lasts until every segment outstanding when it began
//! is acknowledged; each partial ACK retransmits the next hole at once.

use super::ops::{Ctx, RecoveryOps};
use super::reno;
use crate::engine::SimTime;
use crate::tcp::tcb::{Tcb, TxSeg};

#[derive(Clone, Debug, Default)]
pub struct NewReno;

impl RecoveryOps for NewReno {
    fn dupack_starts_recovery(&mut self, c: &mut Ctx) -> bool {
        // RFC 6582 §3.2 (2): enter only if the ACK covers more than `recover` — not for
        // duplicates caused by retransmissions after a timeout (§4).
        c.t.dupacks == c.t.dupthresh && c.t.snd_una >= c.t.recover
    }
    fn on_dupack_in_recovery(&mut self, c: &mut Ctx) {
        // RFC 6582 §3.2 (4): inflate by SMSS per additional duplicate ACK.
        c.t.w.cwnd += c.t.w.mss;
    }
    fn on_enter(&mut self, c: &mut Ctx, now: SimTime) {
        c.t.w.ssthresh = c.ssthresh_on_loss(now);
    }
    fn fast_retransmit(&mut self, c: &mut Ctx, now: SimTime, out: &mut Vec<TxSeg>) {
        reno::fast_retransmit(c, now, out);
    }
    fn on_exit(&mut self, c: &mut Ctx) {
        // RFC 6582 §3.2 (6), option (2): full acknowledgment, cwnd = ssthresh.
        c.t.w.cwnd = c.t.w.ssthresh;
    }
    fn on_partial_ack(&mut self, c: &mut Ctx, now: SimTime, acked: u64, out: &mut Vec<TxSeg>) {
        // RFC 6582 §3.2 (5): partial acknowledgment. Retransmit the first unacknowledged
        // segment, deflate cwnd by the amount acknowledged, add back SMSS if at least SMSS was
        // acked.
        c.t.partial_acks += 1;
        if let Some(first) = c.t.first_unacked() {
            c.retransmit(now, first.seq, out);
        }
        let back = if acked >= c.t.w.mss { c.t.w.mss } else { 0 };
        c.t.w.cwnd = (c.t.w.cwnd.saturating_sub(acked) + back).max(c.t.w.mss);
    }
    fn rearms_rto_in_recovery(&self, t: &Tcb) -> bool {
        // RFC 6582 §3.2 (5): the timer is reset only on the first partial ACK ("Impatient").
        t.partial_acks <= 1
    }
}

//! Reno fast recovery (RFC 5681 §3.2): enter on the third duplicate ACK, inflate cwnd by one
//! SMSS per further duplicate, leave on the first ACK of new data with cwnd = ssthresh —
//! even a partial one, which is why Reno handles several losses in a window badly.

use super::ops::{Ctx, RecoveryOps};
use crate::engine::SimTime;
use crate::tcp::tcb::{Tcb, TxSeg};

#[derive(Clone, Debug, Default)]
pub struct Reno;

impl RecoveryOps for Reno {
    fn dupack_starts_recovery(&mut self, c: &mut Ctx) -> bool {
        c.t.dupacks == c.t.dupthresh
    }
    fn on_dupack_in_recovery(&mut self, c: &mut Ctx) {
        // RFC 5681 §3.2 (4): each further duplicate ACK inflates cwnd by SMSS.
        c.t.w.cwnd += c.t.w.mss;
    }
    fn on_enter(&mut self, c: &mut Ctx, now: SimTime) {
        // RFC 5681 §3.2 (2): ssthresh = max(FlightSize/2, 2*SMSS) (via the controller).
        c.t.w.ssthresh = c.ssthresh_on_loss(now);
    }
    fn fast_retransmit(&mut self, c: &mut Ctx, now: SimTime, out: &mut Vec<TxSeg>) {
        fast_retransmit(c, now, out);
    }
    fn recovery_point_reached(&self, _t: &Tcb) -> bool {
        true // any ACK of new data
    }
    fn on_exit(&mut self, c: &mut Ctx) {
        // RFC 5681 §3.2 (6): deflate — cwnd = ssthresh.
        c.t.w.cwnd = c.t.w.ssthresh;
    }
}

/// RFC 5681 §3.2 (3), shared with NewReno: retransmit the first unacknowledged segment,
/// cwnd = ssthresh + 3*SMSS.
pub(crate) fn fast_retransmit(c: &mut Ctx, now: SimTime, out: &mut Vec<TxSeg>) {
    if let Some(first) = c.t.first_unacked() {
        c.retransmit(now, first.seq, out);
    }
    c.t.w.cwnd = c.t.w.ssthresh + c.t.dupthresh as u64 * c.t.w.mss;
}

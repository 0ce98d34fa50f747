//! Reno fast recovery (RFC 5681 §3.2): enter on the third duplicate ACK, inflate cwnd by one
//! SMSS per further duplicate, leave on the first ACK of new data with cwnd = ssthresh —
//! even a partial one, which is why Reno handles several losses in a window badly.

use super::fast_retransmit;
use crate::engine::SimTime;
use crate::tcp::sender::{Sender, TxSeg};

pub fn on_dupack(s: &mut Sender, now: SimTime, out: &mut Vec<TxSeg>) {
    if s.in_recovery {
        // RFC 5681 §3.2 (4): each further duplicate ACK inflates cwnd by SMSS.
        s.w.cwnd += s.w.mss;
    } else if s.dupacks == s.dupthresh {
        fast_retransmit(s, now, out);
    }
}

pub fn on_ack(s: &mut Sender, now: SimTime) {
    // RFC 5681 §3.2 (6): deflate — cwnd = ssthresh — and leave recovery.
    s.w.cwnd = s.w.ssthresh;
    s.exit_recovery(now);
}

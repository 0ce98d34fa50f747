//! NewReno (RFC 6582): fast recovery lasts until every segment outstanding when it began
//! is acknowledged; each partial ACK retransmits the next hole at once.

use super::fast_retransmit;
use crate::engine::SimTime;
use crate::tcp::sender::{Sender, TxSeg};

pub fn on_dupack(s: &mut Sender, now: SimTime, out: &mut Vec<TxSeg>) {
    if s.in_recovery {
        // RFC 6582 §3.2 (4): inflate by SMSS per additional duplicate ACK.
        s.w.cwnd += s.w.mss;
    } else if s.dupacks == s.dupthresh {
        // RFC 6582 §3.2 (2): enter only if the ACK covers more than `recover` — not for
        // duplicates caused by retransmissions after a timeout (§4).
        if s.snd_una >= s.recover {
            fast_retransmit(s, now, out);
        }
    }
}

pub fn on_ack(s: &mut Sender, now: SimTime, acked: u64, out: &mut Vec<TxSeg>) {
    if s.snd_una >= s.recover {
        // RFC 6582 §3.2 (6), option (2): full acknowledgment, cwnd = ssthresh.
        s.w.cwnd = s.w.ssthresh;
        s.exit_recovery(now);
        return;
    }
    // RFC 6582 §3.2 (5): partial acknowledgment. Retransmit the first unacknowledged segment,
    // deflate cwnd by the amount acknowledged, add back SMSS if at least SMSS was acked.
    s.partial_acks += 1;
    if let Some(first) = s.first_unacked() {
        s.retransmit(now, first.seq, out);
    }
    let back = if acked >= s.w.mss { s.w.mss } else { 0 };
    s.w.cwnd = (s.w.cwnd.saturating_sub(acked) + back).max(s.w.mss);
}

//! What the recovery rooms' unit tests share: an ACK delivered to a sender, and what it sent.

use crate::engine::SimTime;
use crate::tcp::segment::{Flags, SackBlocks, Segment};
use crate::tcp::sender::{Sender, TxSeg};

/// Delivers a cumulative ACK of `ack` with SACK `blocks` at `now`; returns what the sender sent.
pub(crate) fn ack(s: &mut Sender, now: SimTime, ack: u64, blocks: &[(u64, u64)]) -> Vec<TxSeg> {
    let mut sack = SackBlocks::default();
    for &(a, b) in blocks {
        sack.push(a, b);
    }
    let seg = Segment { seq: 1, ack, flags: Flags::ACK, wnd: 1 << 30, sack, ..Default::default() };
    let mut out = vec![];
    s.on_ack(now, &seg, false, &mut out);
    s.transmit(now, &mut out);
    out
}

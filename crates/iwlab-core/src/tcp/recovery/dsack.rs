//! D-SACK at the sender (RFC 2883), as Linux reads it (net/ipv4/tcp_input.c,
//! net/ipv4/tcp_recovery.c).
//!
//! - Recognition (`tcp_check_dsack()`): the first SACK block reports a duplicate when it
//!   starts below the cumulative ACK, or lies inside the second block.
//! - Trust (`tcp_dsack_seen()`): the duplicate segments reported so far may not outnumber the
//!   retransmissions sent (a receiver that reports duplicates the sender never resent is not
//!   believed); a range longer than one MSS counts as that many segments.
//! - Undo (`recovery/undo.rs`): each duplicate of a retransmission of the current episode
//!   counts `undo_retrans` down — below snd.una by the reported length ("D-SACK for already
//!   forgotten data"), above it by the resent segments the block covers (`tcp_sacktag_one()`).
//! - RACK's reordering window (`tcp_rack_update_reo_wnd()`, RFC 8985 §6.2 step 4): once
//!   reordering has been seen, a D-SACK that does not match a loss probe (a probe is timer-,
//!   not RACK-driven) shows RACK resent too early: on the next ACK that delivers data the
//!   window multiplier `reo_wnd_steps` grows by one (once per round trip: not again for a
//!   delivery of data sent before the last growth) and is kept for 16 recoveries
//!   (`reo_wnd_persist = TCP_RACK_RECOVERY_THRESH`), counted down by each recovery that ends
//!   without an undo (`tcp_try_undo_recovery()`) and up by a D-SACK undo; at zero, the next
//!   delivery without a pending D-SACK resets the multiplier to 1.

use crate::engine::SimTime;
use crate::tcp::segment::Segment;
use crate::tcp::tcb::Tcb;

/// Linux TCP_RACK_RECOVERY_THRESH: recoveries a widened reordering window is kept for.
pub const RACK_RECOVERY_THRESH: u32 = 16;

/// The sender's D-SACK state (`dsack_dups`, `rack.reo_wnd_steps`, `rack.reo_wnd_persist`,
/// `rack.dsack_seen`, `rack.last_delivered`).
#[derive(Clone, Debug)]
pub(crate) struct Dsack {
    /// `tcp.dsack`.
    pub enabled: bool,
    /// Duplicate segments reported so far (`tp->dsack_dups`).
    dups: u64,
    /// RACK's reordering window multiplier (1..=255).
    pub reo_wnd_steps: u32,
    reo_wnd_persist: u32,
    /// A trusted D-SACK arrived after reordering was seen; the window grows on the next
    /// delivery.
    seen: bool,
    /// When the window last grew (Linux compares delivery counts; a segment sent before this
    /// time was sent less than a round trip after the growth).
    grown_at: Option<SimTime>,
}

impl Dsack {
    pub fn new(enabled: bool) -> Self {
        Dsack { enabled, dups: 0, reo_wnd_steps: 1, reo_wnd_persist: 0, seen: false, grown_at: None }
    }

    /// `tcp_try_undo_dsack()`: a D-SACK undo keeps the widened window one recovery longer.
    pub fn persist_one_more(&mut self) {
        self.reo_wnd_persist = (self.reo_wnd_persist + 1).min(RACK_RECOVERY_THRESH);
    }

    /// `tcp_try_undo_recovery()` without an undo: one recovery fewer to keep the window.
    pub fn recovery_ended(&mut self) {
        self.reo_wnd_persist = self.reo_wnd_persist.saturating_sub(1);
    }

    /// Reads the ACK's D-SACK block (before its SACK blocks mark the scoreboard; snd.una is
    /// still the value before this ACK). `probe_end`: TLP.end_seq of a probe in flight. Some
    /// if the ACK carried a D-SACK the sender believes (Linux FLAG_DSACKING_ACK): the
    /// retransmissions it reports as duplicates, for undo (`Undo::duplicates`).
    pub fn on_ack(&mut self, t: &Tcb, seg: &Segment, probe_end: Option<u64>) -> Option<Duplicates> {
        if !self.enabled {
            return None;
        }
        let (start, end) = block(seg)?;
        let len = end - start;
        let mss = t.w.mss;
        let segs = if len > mss { len.div_ceil(mss) } else { 1 };
        // tcp_dsack_seen(): not believed beyond the retransmissions actually sent.
        self.dups += segs;
        if self.dups > t.stats.retransmits {
            return None;
        }
        let probe = len <= mss && probe_end == Some(end);
        let reordering_seen = t.outstanding.rack.as_deref().is_some_and(|r| r.reordering_seen);
        if reordering_seen && !probe {
            self.seen = true;
        }
        let resent = if end <= t.snd_una {
            segs // "D-SACK for already forgotten data"
        } else {
            t.outstanding.resent_within(start, end)
        };
        Some(Duplicates { resent, end })
    }

    /// `tcp_rack_update_reo_wnd()`, on an ACK that delivered data (newly ACKed or SACKed),
    /// before RACK looks for losses.
    pub fn update_reo_wnd(&mut self, t: &Tcb, now: SimTime) {
        let xmit_ts = t.outstanding.rack.as_deref().and_then(|r| r.xmit_ts);
        if !self.enabled {
            return;
        }
        // Disregard a D-SACK within a round trip of the last growth.
        if let (Some(g), Some(x)) = (self.grown_at, xmit_ts) {
            if x < g {
                self.seen = false;
            }
        }
        if self.seen {
            self.reo_wnd_steps = (self.reo_wnd_steps + 1).min(255);
            self.seen = false;
            self.grown_at = Some(now);
            self.reo_wnd_persist = RACK_RECOVERY_THRESH;
        } else if self.reo_wnd_persist == 0 {
            self.reo_wnd_steps = 1;
        }
    }
}

/// Retransmissions a believed D-SACK reports as duplicates, and where its range ends.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Duplicates {
    pub resent: u64,
    pub end: u64,
}

/// The D-SACK block of an ACK, if its first block is one (`tcp_check_dsack()`).
pub(crate) fn block(seg: &Segment) -> Option<(u64, u64)> {
    let b = seg.sack.as_slice();
    let &(s0, e0) = b.first()?;
    if s0 >= e0 {
        return None;
    }
    if s0 < seg.ack {
        return Some((s0, e0));
    }
    match b.get(1) {
        Some(&(s1, e1)) if s1 <= s0 && e0 <= e1 => Some((s0, e0)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tcp::segment::{Flags, SackBlocks};

    fn seg(ack: u64, blocks: &[(u64, u64)]) -> Segment {
        let mut sack = SackBlocks::default();
        for &(a, b) in blocks {
            sack.push(a, b);
        }
        Segment { ack, flags: Flags::ACK, sack, ..Default::default() }
    }

    #[test]
    fn a_first_block_below_the_ack_or_inside_the_second_is_a_dsack() {
        // RFC 2883 §4 / tcp_check_dsack().
        assert_eq!(block(&seg(3001, &[(1001, 2001)])), Some((1001, 2001)));
        assert_eq!(block(&seg(1001, &[(3001, 4001), (2001, 5001)])), Some((3001, 4001)));
        assert_eq!(block(&seg(1001, &[(3001, 4001), (5001, 6001)])), None);
        assert_eq!(block(&seg(1001, &[(3001, 4001)])), None);
        assert_eq!(block(&seg(1001, &[])), None);
    }
}

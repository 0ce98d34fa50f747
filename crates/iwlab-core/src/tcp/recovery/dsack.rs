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
use crate::tcp::sender::Sender;

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

/// Reads the ACK's D-SACK block (before its SACK blocks mark the scoreboard; snd.una is still
/// the value before this ACK). `probe_end`: TLP.end_seq of a probe in flight. True if the ACK
/// carried a D-SACK the sender believes (Linux FLAG_DSACKING_ACK).
pub(crate) fn on_ack(s: &mut Sender, seg: &Segment, probe_end: Option<u64>) -> bool {
    if !s.dsack.enabled {
        return false;
    }
    let Some((start, end)) = block(seg) else { return false };
    let len = end - start;
    let mss = s.w.mss;
    let segs = if len > mss { len.div_ceil(mss) } else { 1 };
    // tcp_dsack_seen(): not believed beyond the retransmissions actually sent.
    s.dsack.dups += segs;
    if s.dsack.dups > s.stats.retransmits {
        return false;
    }
    let probe = len <= mss && probe_end == Some(end);
    let reordering_seen = s.outstanding.rack.as_deref().is_some_and(|r| r.reordering_seen);
    if reordering_seen && !probe {
        s.dsack.seen = true;
    }
    let resent = if end <= s.snd_una {
        segs // "D-SACK for already forgotten data"
    } else {
        s.outstanding.resent_within(start, end)
    };
    s.undo.duplicates(resent, end);
    true
}

/// `tcp_rack_update_reo_wnd()`, on an ACK that delivered data (newly ACKed or SACKed), before
/// RACK looks for losses.
pub(crate) fn update_reo_wnd(s: &mut Sender, now: SimTime) {
    let xmit_ts = s.outstanding.rack.as_deref().and_then(|r| r.xmit_ts);
    let d = &mut s.dsack;
    if !d.enabled {
        return;
    }
    // Disregard a D-SACK within a round trip of the last growth.
    if let (Some(g), Some(x)) = (d.grown_at, xmit_ts) {
        if x < g {
            d.seen = false;
        }
    }
    if d.seen {
        d.reo_wnd_steps = (d.reo_wnd_steps + 1).min(255);
        d.seen = false;
        d.grown_at = Some(now);
        d.reo_wnd_persist = RACK_RECOVERY_THRESH;
    } else if d.reo_wnd_persist == 0 {
        d.reo_wnd_steps = 1;
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

    use crate::engine::SimDuration;
    use crate::tcp::config::{RecoveryKind, TcpConfig};

    /// A RACK sender with D-SACK, min RTT 400 ms, one retransmission sent, reordering seen.
    fn sender(reordering_seen: bool) -> Sender {
        let cfg =
            TcpConfig { mss: 1000, recovery: RecoveryKind::Rack, sack: true, dsack: true, ..TcpConfig::default() };
        let mut s = Sender::new(&cfg, true, false);
        s.rtt.sample(SimDuration::from_millis(400), 1, 1);
        s.stats.retransmits = 1;
        s.outstanding.rack.as_deref_mut().unwrap().reordering_seen = reordering_seen;
        s
    }

    fn ms(x: u64) -> SimTime {
        SimTime::ZERO + SimDuration::from_millis(x)
    }

    #[test]
    fn after_reordering_a_dsack_doubles_the_reordering_window_for_sixteen_recoveries() {
        // tcp_rack_update_reo_wnd(): reo_wnd_steps 1 → 2, reo_wnd_persist = 16; each recovery
        // ending without an undo counts it down; at 0 the next delivery resets the steps.
        let mut s = sender(true);
        assert_eq!(super::super::rack::reo_wnd(&s), SimDuration::from_millis(100));
        on_ack(&mut s, &seg(4001, &[(2001, 3001)]), None);
        update_reo_wnd(&mut s, ms(1000));
        assert_eq!(s.dsack.reo_wnd_steps, 2);
        assert_eq!(super::super::rack::reo_wnd(&s), SimDuration::from_millis(200));
        for _ in 0..15 {
            s.dsack.recovery_ended();
            update_reo_wnd(&mut s, ms(2000));
        }
        assert_eq!(s.dsack.reo_wnd_steps, 2, "kept for 16 recoveries");
        s.dsack.recovery_ended();
        update_reo_wnd(&mut s, ms(3000));
        assert_eq!(s.dsack.reo_wnd_steps, 1);
    }

    #[test]
    fn without_reordering_or_beyond_the_retransmissions_sent_a_dsack_leaves_the_window() {
        // tcp_dsack_seen(): rack.dsack_seen only once reordering was seen; and no more
        // duplicates believed than retransmissions sent (dsack_dups > total_retrans).
        let mut s = sender(false);
        on_ack(&mut s, &seg(4001, &[(2001, 3001)]), None);
        update_reo_wnd(&mut s, ms(1000));
        assert_eq!(s.dsack.reo_wnd_steps, 1);
        let mut s = sender(true);
        on_ack(&mut s, &seg(4001, &[(1001, 3001)]), None); // two segments, one resent
        update_reo_wnd(&mut s, ms(1000));
        assert_eq!(s.dsack.reo_wnd_steps, 1);
    }

    #[test]
    fn an_ack_carrying_a_believed_dsack_is_not_a_duplicate_ack() {
        // Linux tcp_ack(): num_dupack = 0 with FLAG_DSACKING_ACK. Segments 1..=10 out, 3
        // resent; the first ACK SACKs 2..=3, the second reports 3 again inside that block.
        let run = |dsack: bool| {
            let cfg = TcpConfig { mss: 1000, recovery: RecoveryKind::Sack, sack: true, dsack, ..TcpConfig::default() };
            let mut s = Sender::new(&cfg, true, false);
            s.write(10_000);
            s.start(10_000);
            s.transmit(ms(0), &mut vec![]);
            s.retransmit(ms(1), 2001, &mut vec![]);
            s.on_ack(ms(100), &seg(1, &[(1001, 3001)]), false, &mut vec![]);
            s.on_ack(ms(101), &seg(1, &[(2001, 3001), (1001, 3001)]), false, &mut vec![]);
            s.dupacks
        };
        assert_eq!(run(true), 1);
        assert_eq!(run(false), 2, "without tcp.dsack it is an ordinary duplicate ACK");
    }

    #[test]
    fn a_dsack_of_a_loss_probe_does_not_widen_the_window() {
        // FLAG_DSACK_TLP: a probe is timer-driven, not a RACK decision.
        let mut s = sender(true);
        on_ack(&mut s, &seg(4001, &[(2001, 3001)]), Some(3001));
        update_reo_wnd(&mut s, ms(1000));
        assert_eq!(s.dsack.reo_wnd_steps, 1);
    }
}

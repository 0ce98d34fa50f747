//! The sender's outstanding segments and its SACK scoreboard, kept so that every ACK costs
//! amortised O(log n), not O(window).
//!
//! Segments sit in a deque in sequence order; each has an *absolute index* (its position plus
//! the number of segments ever popped), which stays valid while it is outstanding. Beside the
//! deque the scoreboard keeps running sums that RFC 6675 needs, each with a cursor that only
//! moves forward between resets:
//! - `unsacked_bytes`: octets of outstanding, unSACKed segments (SYN/FIN octets included).
//! - IsLost (RFC 6675 §4): a segment is lost when DupThresh SACKed segments, or more than
//!   (DupThresh − 1)·SMSS SACKed bytes, lie above it. "SACKed above" only grows, so the lost
//!   segments form a prefix: `frontier` is the first index not (yet) known to be lost, and
//!   `lost_bytes` the unSACKed octets below it.
//! - HighRxt: `rxt_cursor` is the first segment ending above HighRxt, `rxt_bytes` the unSACKed
//!   octets below it (SetPipe's "retransmitted" term).
//! - SACK marking skips runs of SACKed segments with union-find style skip pointers, so a
//!   block that repeats what earlier blocks said costs O(log n), not its length.
//!
//! SetPipe = unsacked − lost + rxt, IsLost(first) and NextSeg are then O(1) / O(log n).
//!
//! For RACK (RFC 8985, `recovery/rack.rs`) the scoreboard also keeps the segments in flight in
//! a doubly linked list ordered by transmit time (a retransmitted segment moves to the tail),
//! so that loss detection walks only the segments it marks lost plus one; see [`RackList`].

use crate::engine::SimTime;
use std::collections::{BTreeSet, VecDeque};

/// "No segment" in the linked list and pointers.
pub(crate) const NONE: u64 = u64::MAX;

// `Outstanding::flags` bits.
const FIN: u8 = 1;
const SACKED: u8 = 1 << 1;
const RLOST: u8 = 1 << 2;
const REXMIT: u8 = 1 << 3;
const RPENDING: u8 = 1 << 4;
const LINKED: u8 = 1 << 5;

/// An outstanding (sent, not cumulatively acknowledged) segment: 32 bytes, one per segment in
/// flight, so it is kept small (`outstanding_entry_is_32_bytes` below). Sequence numbers and
/// send times stay 64-bit; the links between segments are stored as differences of absolute
/// indices, which are bounded by the number of segments outstanding (checked in
/// [`Scoreboard::push`]), not by how much a flow has sent.
#[derive(Clone, Debug)]
pub(crate) struct Outstanding {
    pub seq: u64,
    /// Last transmission time (RACK's `Segment.xmit_ts`).
    pub sent_at: SimTime,
    /// For a SACKed segment: the index `skip` places further on is at or before the next
    /// unSACKed one (all segments in between are SACKed). Compressed on lookup; 0 = not set.
    skip: u32,
    /// RACK: position in the time-ordered list of segments in flight, as the differences
    /// (previous − own, next − own absolute index); 0 = none (the list's end).
    prev: i32,
    next: i32,
    /// Payload octets (at most the MSS, which is ≤ 65 000: `TcpConfig::validate`).
    len: u16,
    /// Transmissions so far, saturating at 255 (Karn: sample RTT only when 1; RACK: resent
    /// when above 1).
    pub tx: u8,
    /// FIN, SACKed, and RACK's marks: lost (stays set after the retransmission, as Linux's
    /// LOST bit), retransmitted since marked lost, waiting for a retransmission, in the
    /// time-ordered list.
    flags: u8,
}

/// The segment exactly as large as intended: a regression in size shows at compile time.
const _: () = assert!(std::mem::size_of::<Outstanding>() == 32);

impl Outstanding {
    pub fn new(seq: u64, len: u32, fin: bool, sent_at: SimTime) -> Self {
        let len = u16::try_from(len).expect("a segment's payload is at most tcp.mss (<= 65 000 bytes)");
        Outstanding { seq, sent_at, skip: 0, prev: 0, next: 0, len, tx: 1, flags: if fin { FIN } else { 0 } }
    }
    pub fn len(&self) -> u32 {
        self.len as u32
    }
    pub fn fin(&self) -> bool {
        self.flags & FIN != 0
    }
    pub fn sacked(&self) -> bool {
        self.flags & SACKED != 0
    }
    pub fn end(&self) -> u64 {
        self.seq + self.len as u64 + self.fin() as u64
    }
    /// Sequence octets (payload, plus one for a FIN).
    fn octets(&self) -> u64 {
        self.end() - self.seq
    }
    fn flag(&self, f: u8) -> bool {
        self.flags & f != 0
    }
    fn set(&mut self, f: u8, on: bool) {
        if on {
            self.flags |= f;
        } else {
            self.flags &= !f;
        }
    }
}

/// The absolute index `d` away from `abs` (`NONE` for 0).
fn from_delta(abs: u64, d: i32) -> u64 {
    if d == 0 {
        NONE
    } else {
        abs.wrapping_add_signed(d as i64)
    }
}

/// `other − abs` as stored in a link (0 for `NONE`); both are outstanding, so the difference
/// is below the number of segments outstanding.
fn to_delta(abs: u64, other: u64) -> i32 {
    if other == NONE {
        0
    } else {
        other.wrapping_sub(abs) as i64 as i32
    }
}

/// What RACK learns when a segment is delivered (RFC 8985 §6.2 step 2), applied by
/// `recovery::rack` through [`Scoreboard::deliver`] hooks.
#[derive(Clone, Debug, Default)]
pub(crate) struct RackList {
    pub head: u64,
    pub tail: u64,
    /// The last segment in the list sent before RACK's segment (`RACK.xmit_ts`,
    /// `RACK.end_seq`): segments up to it are the candidates of `RACK_detect_loss`.
    pub pred: u64,
    /// RACK.xmit_ts / RACK.end_seq of the most recently sent segment delivered.
    pub xmit_ts: Option<SimTime>,
    pub end_seq: u64,
    /// RACK.rtt: RTT of that segment's delivery.
    pub rtt: crate::engine::SimDuration,
    /// RACK.fack: the highest end sequence delivered.
    pub fack: u64,
    pub reordering_seen: bool,
    /// Lost segments waiting for a retransmission, by sequence number.
    pub pending: BTreeSet<u64>,
    /// Octets of unSACKed segments marked lost / retransmitted since (for RACK's pipe).
    pub lost_bytes: u64,
    pub rexmit_bytes: u64,
    /// A retransmission was deemed lost again since the flag was last cleared.
    pub lost_retransmission: bool,
    /// A segment sent more than once was marked lost since the flag was last cleared — also a
    /// go-back-N resend after an RTO, which `lost_retransmission` does not count (Linux:
    /// `retrans_out` fell, FLAG_LOST_RETRANS in tcp_identify_packet_loss()).
    pub resend_lost: bool,
    /// The additional response to a lost retransmission (RFC 8985 §9.3) was made in this
    /// recovery episode.
    pub reacted: bool,
}

/// The context RACK's step 2 needs when a segment is delivered.
#[derive(Copy, Clone, Debug)]
pub(crate) struct DeliveryCtx {
    pub now: SimTime,
    pub min_rtt: Option<crate::engine::SimDuration>,
    /// The ACK's TSecr, if timestamps are in use.
    pub ts_ecr: Option<u32>,
}

pub(crate) struct Scoreboard {
    segs: VecDeque<Outstanding>,
    /// Absolute index of `segs[0]`.
    base: u64,
    dupthresh: u64,
    mss: u64,
    unsacked_bytes: u64,
    sacked_count: u64,
    sacked_len: u64,
    frontier: u64,
    below_sacked_count: u64,
    below_sacked_len: u64,
    lost_bytes: u64,
    high_rxt: u64,
    rxt_cursor: u64,
    rxt_bytes: u64,
    /// RACK's time-ordered list and state, when the sender runs RACK.
    pub(crate) rack: Option<Box<RackList>>,
    /// The lowest end of a segment sent once and newly SACKed since the sender last reset it
    /// (`u64::MAX`: none): Linux's FLAG_ORIG_SACK_ACKED for F-RTO (`recovery/undo.rs`).
    pub(crate) orig_sacked_end: u64,
    /// The highest end of a SACKed segment (valid while any is SACKed): Linux's fack,
    /// `tcp_highest_sack_seq()` (`reordering.rs`).
    high_sacked_end: u64,
    /// Set by [`Scoreboard::begin_sacks`]: fack before the ACK's SACK blocks, and the lowest
    /// start of a segment sent once and newly SACKed below it (`u64::MAX`: none) — the
    /// reordering `tcp_sacktag_one()` notes in `state->reord`.
    fack_before: u64,
    pub(crate) sacked_out_of_order: u64,
}

impl Scoreboard {
    pub fn new(dupthresh: u32, mss: u64, rack: bool) -> Self {
        Scoreboard {
            segs: VecDeque::new(),
            base: 0,
            dupthresh: dupthresh as u64,
            mss,
            unsacked_bytes: 0,
            sacked_count: 0,
            sacked_len: 0,
            frontier: 0,
            below_sacked_count: 0,
            below_sacked_len: 0,
            lost_bytes: 0,
            high_rxt: 0,
            rxt_cursor: 0,
            rxt_bytes: 0,
            rack: rack.then(|| Box::new(RackList { head: NONE, tail: NONE, pred: NONE, ..RackList::default() })),
            orig_sacked_end: u64::MAX,
            high_sacked_end: 0,
            fack_before: 0,
            sacked_out_of_order: u64::MAX,
        }
    }

    pub fn reserve(&mut self, n: usize) {
        self.segs.reserve(n);
    }
    pub fn len(&self) -> usize {
        self.segs.len()
    }
    pub fn front(&self) -> Option<&Outstanding> {
        self.segs.front()
    }
    pub fn back(&self) -> Option<&Outstanding> {
        self.segs.back()
    }
    pub fn get(&self, i: usize) -> Option<&Outstanding> {
        self.segs.get(i)
    }
    pub fn partition_point(&self, pred: impl FnMut(&Outstanding) -> bool) -> usize {
        self.segs.partition_point(pred)
    }
    fn at(&self, abs: u64) -> &Outstanding {
        &self.segs[(abs - self.base) as usize]
    }
    fn at_mut(&mut self, abs: u64) -> &mut Outstanding {
        &mut self.segs[(abs - self.base) as usize]
    }
    fn end_index(&self) -> u64 {
        self.base + self.segs.len() as u64
    }

    /// SACKed segments outstanding (RACK.segs_sacked).
    pub fn sacked_segments(&self) -> u64 {
        self.sacked_count
    }

    /// Linux's fack (`tcp_highest_sack_seq()`): the end of the highest SACKed segment, or
    /// `snd_una` when none is SACKed.
    pub fn fack(&self, snd_una: u64) -> u64 {
        if self.sacked_count > 0 {
            self.high_sacked_end
        } else {
            snd_una
        }
    }

    /// Before an ACK's SACK blocks are marked: remember fack, forget the last ACK's
    /// out-of-order SACK.
    pub fn begin_sacks(&mut self, snd_una: u64) {
        self.fack_before = self.fack(snd_una);
        self.sacked_out_of_order = u64::MAX;
    }

    /// SACKed payload bytes outstanding (for PRR's DeliveredData, RFC 6937 §3).
    pub fn sacked_bytes(&self) -> u64 {
        self.sacked_len
    }

    /// Bytes deemed lost (RFC 6675 IsLost, or RACK's marks when it runs): PRR's "new loss".
    pub fn lost_bytes_marked(&self) -> u64 {
        self.rack.as_deref().map_or(self.lost_bytes, |r| r.lost_bytes)
    }

    /// Octets retransmitted and neither delivered nor deemed lost again (Linux's
    /// `retrans_out`): RACK's count of resends since marked lost, else (RFC 6675) the unSACKed
    /// octets below HighRxt.
    pub fn retrans_out_bytes(&self) -> u64 {
        self.rack.as_deref().map_or(self.rxt_bytes, |r| r.rexmit_bytes)
    }

    /// Appends a newly sent segment.
    pub fn push(&mut self, o: Outstanding) {
        // The links (`Outstanding::skip`, `prev`, `next`) are index differences within the
        // deque: 32 bits hold them while fewer than 2^31 segments are outstanding (64 GiB of
        // entries; a 1 GiB window of 1 500-byte segments is 716 000).
        assert!(self.segs.len() < i32::MAX as usize, "more than 2^31 segments outstanding");
        self.unsacked_bytes += o.octets();
        self.segs.push_back(o);
        if self.rack.is_some() {
            self.link_tail(self.end_index() - 1);
        }
    }

    /// Removes the first segment (cumulatively acknowledged), keeping the sums.
    pub fn pop_front(&mut self, ctx: &DeliveryCtx) -> Option<Outstanding> {
        let idx = self.base;
        if self.segs.is_empty() {
            return None;
        }
        if self.rack.is_some() {
            let o = self.at(idx);
            if !o.sacked() {
                self.rack_deliver(idx, ctx);
            }
            self.rack_forget(idx);
        }
        let o = self.segs.pop_front()?;
        self.base += 1;
        let n = o.octets();
        if o.sacked() {
            self.sacked_count -= 1;
            self.sacked_len -= o.len as u64;
            if idx < self.frontier {
                self.below_sacked_count -= 1;
                self.below_sacked_len -= o.len as u64;
            }
        } else {
            self.unsacked_bytes -= n;
            if idx < self.frontier {
                self.lost_bytes -= n;
            }
            if idx < self.rxt_cursor {
                self.rxt_bytes -= n;
            }
        }
        self.frontier = self.frontier.max(self.base);
        self.rxt_cursor = self.rxt_cursor.max(self.base);
        Some(o)
    }

    /// The first segment is acknowledged up to `ack` (inside it): cut its front.
    pub fn cut_front(&mut self, ack: u64) {
        let idx = self.base;
        let (below_f, below_r) = (idx < self.frontier, idx < self.rxt_cursor);
        let Some(f) = self.segs.front_mut() else { return };
        let (n0, len0) = (f.octets(), f.len as u64);
        let cut = (ack - f.seq).min(f.len as u64) as u16;
        f.seq = ack;
        f.len -= cut;
        let (dn, dlen) = (n0 - f.octets(), len0 - f.len as u64);
        if f.sacked() {
            self.sacked_len -= dlen;
            if below_f {
                self.below_sacked_len -= dlen;
            }
        } else {
            self.unsacked_bytes -= dn;
            if below_f {
                self.lost_bytes -= dn;
            }
            if below_r {
                self.rxt_bytes -= dn;
            }
            if let Some(r) = self.rack.as_deref_mut() {
                let f = &self.segs[0];
                if f.flag(RLOST) {
                    r.lost_bytes -= dn;
                    if f.flag(REXMIT) {
                        r.rexmit_bytes -= dn;
                    }
                }
            }
        }
    }

    /// The first unSACKed segment at absolute index `i` or later (`end_index()` if none),
    /// compressing the skip pointers walked.
    fn find_unsacked(&mut self, i: u64) -> u64 {
        let end = self.end_index();
        let start = i.max(self.base);
        let mut root = start;
        while root < end && self.at(root).sacked() {
            root += self.at(root).skip.max(1) as u64;
        }
        let mut j = start;
        while j < root {
            let o = self.at_mut(j);
            let next = j + o.skip.max(1) as u64;
            // root − j is below the number of segments outstanding (`push`).
            o.skip = (root - j) as u32;
            j = next;
        }
        root
    }

    /// RFC 2018: marks the outstanding segments that lie wholly inside the SACK block
    /// `[s, e)`. Segments already SACKed are skipped in O(1) amortised.
    pub fn sack_block(&mut self, s: u64, e: u64, ctx: &DeliveryCtx) {
        let mut i = self.base + self.segs.partition_point(|o| o.end() <= s) as u64;
        loop {
            i = self.find_unsacked(i);
            if i >= self.end_index() {
                break;
            }
            let o = self.at(i);
            if o.seq >= e {
                break;
            }
            if o.seq >= s && o.end() <= e {
                self.mark_sacked(i, ctx);
            }
            i += 1;
        }
    }

    fn mark_sacked(&mut self, i: u64, ctx: &DeliveryCtx) {
        if self.rack.is_some() {
            self.rack_deliver(i, ctx);
            self.rack_forget(i);
        }
        let (below_f, below_r) = (i < self.frontier, i < self.rxt_cursor);
        let o = self.at_mut(i);
        o.flags |= SACKED;
        o.skip = 1;
        let (tx, seq, end) = (o.tx, o.seq, o.end());
        if tx == 1 {
            self.orig_sacked_end = self.orig_sacked_end.min(end);
            // tcp_sacktag_one(): a segment sent once, newly SACKed below fack, was reordered
            // (blocks are marked in any order: fack before this ACK is the bound).
            if seq < self.fack_before {
                self.sacked_out_of_order = self.sacked_out_of_order.min(seq);
            }
        }
        self.high_sacked_end = if self.sacked_count == 0 { end } else { self.high_sacked_end.max(end) };
        let o = self.at(i);
        let (n, len) = (o.octets(), o.len as u64);
        self.sacked_count += 1;
        self.sacked_len += len;
        self.unsacked_bytes -= n;
        if below_f {
            self.below_sacked_count += 1;
            self.below_sacked_len += len;
            self.lost_bytes -= n;
        }
        if below_r {
            self.rxt_bytes -= n;
        }
    }

    /// RFC 6675 §4 IsLost as a frontier: moves it over every segment that now has
    /// DupThresh SACKed segments, or more than (DupThresh − 1)·SMSS SACKed bytes, above it.
    pub fn update_lost(&mut self) {
        let (thresh, mss) = (self.dupthresh, self.mss);
        while self.frontier < self.end_index() {
            let o = self.at(self.frontier);
            let (own_c, own_b) = if o.sacked() { (1, o.len as u64) } else { (0, 0) };
            let count = self.sacked_count - self.below_sacked_count - own_c;
            let bytes = self.sacked_len - self.below_sacked_len - own_b;
            if !(count >= thresh || bytes > (thresh - 1) * mss) {
                break;
            }
            if o.sacked() {
                self.below_sacked_count += 1;
                self.below_sacked_len += own_b;
            } else {
                self.lost_bytes += o.octets();
            }
            self.frontier += 1;
        }
    }

    /// IsLost of the first outstanding segment.
    pub fn first_is_lost(&self) -> bool {
        self.segs.front().is_some_and(|o| !o.sacked() && self.frontier > self.base)
    }

    pub fn high_rxt(&self) -> u64 {
        self.high_rxt
    }

    /// Sets HighRxt (it moves back only at the start of a recovery or an RTO).
    pub fn set_high_rxt(&mut self, v: u64) {
        if v < self.high_rxt {
            self.rxt_cursor = self.base;
            self.rxt_bytes = 0;
        }
        self.high_rxt = v;
        while self.rxt_cursor < self.end_index() {
            let o = self.at(self.rxt_cursor);
            if o.end() > v {
                break;
            }
            if !o.sacked() {
                self.rxt_bytes += o.octets();
            }
            self.rxt_cursor += 1;
        }
    }

    /// RFC 6675 §4 SetPipe: unSACKed octets not deemed lost, plus octets retransmitted (at
    /// or below HighRxt).
    pub fn pipe(&self) -> u64 {
        self.unsacked_bytes - self.lost_bytes + self.rxt_bytes
    }

    /// RACK's pipe (Linux's `tcp_packets_in_flight`): unSACKed octets, less those marked
    /// lost, plus those retransmitted since.
    pub fn rack_pipe(&self) -> u64 {
        let r = self.rack.as_deref().expect("RACK scoreboard");
        self.unsacked_bytes - r.lost_bytes + r.rexmit_bytes
    }

    /// RFC 6675 NextSeg (1)/(3): the first unSACKed segment at or above HighRxt (that IsLost,
    /// if `lost_only`).
    pub fn hole(&mut self, lost_only: bool) -> Option<u64> {
        let high_rxt = self.high_rxt;
        let i = self.base + self.segs.partition_point(|o| o.seq < high_rxt) as u64;
        let i = self.find_unsacked(i);
        if i >= self.end_index() || (lost_only && i >= self.frontier) {
            return None;
        }
        Some(self.at(i).seq)
    }

    /// Index (in the deque) of the segment starting at `seq`, or the next one.
    pub fn index_of(&self, seq: u64) -> usize {
        self.segs.partition_point(|o| o.seq < seq)
    }

    /// Records a retransmission of the segment at deque index `i` at `now`.
    pub fn on_retransmit(&mut self, i: usize, now: SimTime) -> &Outstanding {
        let abs = self.base + i as u64;
        if self.rack.is_some() {
            let o = &self.segs[i];
            let (pending, rlost, rexmit, n, seq) = (o.flag(RPENDING), o.flag(RLOST), o.flag(REXMIT), o.octets(), o.seq);
            let r = self.rack.as_deref_mut().unwrap();
            if pending {
                r.pending.remove(&seq);
            }
            if rlost && !rexmit {
                r.rexmit_bytes += n;
            }
            let o = &mut self.segs[i];
            o.set(RPENDING, false);
            o.set(REXMIT, rlost);
            // RFC 8985 §6.1: a retransmission moves the segment to the tail of the time order.
            self.unlink(abs);
            self.link_tail(abs);
        }
        let o = &mut self.segs[i];
        o.sent_at = now;
        o.tx = o.tx.saturating_add(1);
        &self.segs[i]
    }

    // ---- RACK's time-ordered list ----

    fn link_tail(&mut self, abs: u64) {
        let r = self.rack.as_deref_mut().unwrap();
        let tail = r.tail;
        r.tail = abs;
        if tail == NONE {
            r.head = abs;
        } else {
            let base = self.base;
            self.segs[(tail - base) as usize].next = to_delta(tail, abs);
        }
        let o = self.at_mut(abs);
        o.prev = to_delta(abs, tail);
        o.next = 0;
        o.flags |= LINKED;
    }

    fn unlink(&mut self, abs: u64) {
        let base = self.base;
        let o = &mut self.segs[(abs - base) as usize];
        if !o.flag(LINKED) {
            return;
        }
        o.flags &= !LINKED;
        let (p, n) = (from_delta(abs, o.prev), from_delta(abs, o.next));
        let r = self.rack.as_deref_mut().unwrap();
        if r.pred == abs {
            r.pred = p;
        }
        if p == NONE {
            r.head = n;
        } else {
            self.segs[(p - base) as usize].next = to_delta(p, n);
        }
        if n == NONE {
            self.rack.as_deref_mut().unwrap().tail = p;
        } else {
            self.segs[(n - base) as usize].prev = to_delta(n, p);
        }
    }

    /// A segment leaves the scoreboard's RACK bookkeeping (delivered).
    fn rack_forget(&mut self, abs: u64) {
        self.unlink(abs);
        let o = self.at_mut(abs);
        let (rlost, rexmit, pending, n, seq) = (o.flag(RLOST), o.flag(REXMIT), o.flag(RPENDING), o.octets(), o.seq);
        o.flags &= !(RLOST | REXMIT | RPENDING);
        let r = self.rack.as_deref_mut().unwrap();
        if rlost {
            r.lost_bytes -= n;
        }
        if rexmit {
            r.rexmit_bytes -= n;
        }
        if pending {
            r.pending.remove(&seq);
        }
    }

    /// RFC 8985 §6.2 steps 2 and 3 for one newly delivered (cumulatively or selectively
    /// acknowledged) segment; called before it leaves the time-ordered list, so that RACK's
    /// `pred` becomes the segment sent just before it.
    fn rack_deliver(&mut self, abs: u64, ctx: &DeliveryCtx) {
        let o = self.at(abs);
        let (xmit_ts, end, retrans, prev, linked) =
            (o.sent_at, o.end(), o.tx > 1, from_delta(abs, o.prev), o.flag(LINKED));
        let r = self.rack.as_deref_mut().unwrap();
        // Step 3: reordering — a segment below RACK.fack delivered that was never resent.
        if end > r.fack {
            r.fack = end;
        } else if end < r.fack && !retrans {
            r.reordering_seen = true;
        }
        // Step 2: RACK.rtt and the most recently sent segment delivered.
        let rtt = ctx.now.saturating_since(xmit_ts);
        if retrans {
            // §6.2 step 2: ignore a delivery that may be of the original transmission:
            // TSecr before the retransmission, or an RTT below the minimum.
            if ctx.ts_ecr.is_some_and(|ecr| ecr < super::segment::ts_value(xmit_ts)) {
                return;
            }
            if ctx.min_rtt.is_some_and(|m| rtt < m) {
                return;
            }
        }
        r.rtt = rtt;
        // RACK_sent_after(Segment, RACK): by transmit time; the list order breaks ties.
        let after = match r.xmit_ts {
            None => true,
            Some(t) => xmit_ts > t || (xmit_ts == t && end > r.end_seq),
        };
        if after {
            r.xmit_ts = Some(xmit_ts);
            r.end_seq = end;
            r.pred = if linked { prev } else { r.pred };
        }
    }

    /// RFC 8985 §6.2 step 5 over the candidates (segments sent before RACK's segment, oldest
    /// first): marks those whose `xmit_ts + RACK.rtt + reo_wnd` has passed as lost and
    /// returns the time left until the latest candidate would be (the RACK timer), if any.
    pub fn rack_detect_loss(&mut self, now: SimTime, reo_wnd: crate::engine::SimDuration) -> Option<SimTime> {
        loop {
            let r = self.rack.as_deref().unwrap();
            if r.pred == NONE {
                return None;
            }
            let head = r.head;
            let rtt = r.rtt;
            let deadline = self.at(head).sent_at + rtt + reo_wnd;
            if deadline > now {
                // Candidates are in transmit order: the last one expires last (the RFC's
                // timeout = max(remaining)).
                let pred = self.rack.as_deref().unwrap().pred;
                return Some(self.at(pred).sent_at + rtt + reo_wnd);
            }
            self.rack_mark_lost(head);
        }
    }

    fn rack_mark_lost(&mut self, abs: u64) {
        self.unlink(abs);
        let o = self.at_mut(abs);
        let (was_lost, was_rexmit, n, seq, resent) = (o.flag(RLOST), o.flag(REXMIT), o.octets(), o.seq, o.tx > 1);
        o.flags = (o.flags | RLOST | RPENDING) & !REXMIT;
        let r = self.rack.as_deref_mut().unwrap();
        if !was_lost {
            r.lost_bytes += n;
        }
        r.resend_lost |= resent;
        if was_rexmit {
            r.rexmit_bytes -= n;
            r.lost_retransmission = true;
        }
        r.pending.insert(seq);
    }

    /// After an RTO: RACK forgets its marks; go-back-N resends every unSACKed segment, and
    /// each rejoins the time order when it does.
    pub fn rack_reset_on_rto(&mut self) {
        if self.rack.is_none() {
            return;
        }
        for i in 0..self.segs.len() {
            let abs = self.base + i as u64;
            let o = &self.segs[i];
            if o.flag(LINKED | RLOST | RPENDING) {
                self.rack_forget(abs);
            }
        }
        let r = self.rack.as_deref_mut().unwrap();
        debug_assert!(r.head == NONE && r.pending.is_empty() && r.lost_bytes == 0);
        r.pred = NONE;
    }

    /// Marks lost every unSACKed segment from `seq` on that is not marked yet: after an RTO,
    /// the segments go-back-N has not resent (Linux marks them lost at the RTO,
    /// tcp_timeout_mark_lost()), when RTO recovery turns into fast recovery.
    pub fn rack_mark_lost_from(&mut self, seq: u64) {
        if self.rack.is_none() {
            return;
        }
        for i in self.index_of(seq)..self.segs.len() {
            let o = &self.segs[i];
            if !o.sacked() && !o.flag(RLOST) {
                self.rack_mark_lost(self.base + i as u64);
            }
        }
    }

    /// Segments lying wholly inside `[s, e)` that were retransmitted (for a D-SACK of data
    /// still outstanding, `recovery/dsack.rs`).
    pub fn resent_within(&self, s: u64, e: u64) -> u64 {
        let from = self.segs.partition_point(|o| o.seq < s);
        self.segs.range(from..).take_while(|o| o.end() <= e).filter(|o| o.tx > 1).count() as u64
    }

    /// After an undo of RTO recovery (Linux `tcp_undo_cwnd_reduction(sk, true)`: the loss
    /// marks cleared): RACK forgets its marks, and every unSACKed segment is back in the
    /// time order — those go-back-N did not resend had left it at the RTO.
    pub fn rack_relink_after_undo(&mut self) {
        if self.rack.is_none() {
            return;
        }
        for i in 0..self.segs.len() {
            if self.segs[i].flag(LINKED | RLOST | RPENDING) {
                self.rack_forget(self.base + i as u64);
            }
        }
        let mut order: Vec<(SimTime, u64)> = (0..self.segs.len())
            .filter(|&i| !self.segs[i].sacked())
            .map(|i| (self.segs[i].sent_at, i as u64))
            .collect();
        order.sort_unstable();
        let r = self.rack.as_deref_mut().unwrap();
        r.pred = NONE;
        for (_, i) in order {
            self.link_tail(self.base + i);
        }
    }

    /// The lowest-sequence lost segment not yet retransmitted.
    pub fn rack_first_pending(&self) -> Option<u64> {
        self.rack.as_deref().and_then(|r| r.pending.first().copied())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outstanding_entry_is_32_bytes() {
        // One entry per segment in flight: it was 56 bytes with the incremental scoreboard's
        // first version (bench/README.md "Per-event cost and window size"); the const
        // assertion above keeps it at 32.
        assert_eq!(std::mem::size_of::<Outstanding>(), 32);
    }

    #[test]
    fn transmissions_saturate_and_stay_above_one() {
        // Karn's rule (RFC 6298 §3) and RACK (RFC 8985 §6.2) only ask "sent once?".
        let mut sb = Scoreboard::new(3, 1000, false);
        sb.push(Outstanding::new(0, 1000, false, SimTime::ZERO));
        assert_eq!(sb.front().unwrap().tx, 1);
        for k in 2..=300u64 {
            let tx = sb.on_retransmit(0, SimTime::from_nanos(k)).tx;
            assert_eq!(tx as u64, k.min(255));
        }
    }

    /// A naive scoreboard: the RFC 6675 §4 definitions evaluated by walking every segment.
    #[derive(Clone)]
    struct Naive {
        seq: u64,
        len: u64,
        fin: bool,
        sacked: bool,
        tx: u64,
    }

    impl Naive {
        fn end(&self) -> u64 {
            self.seq + self.len + self.fin as u64
        }
    }

    /// RFC 6675 §4 IsLost(i): DupThresh SACKed segments, or more than (DupThresh − 1)·SMSS
    /// SACKed bytes, above segment i.
    fn is_lost(m: &[Naive], i: usize, thresh: u64, mss: u64) -> bool {
        let above = m[i + 1..].iter().filter(|o| o.sacked);
        let (count, bytes) = above.fold((0, 0), |(c, b), o| (c + 1, b + o.len));
        count >= thresh || bytes > (thresh - 1) * mss
    }

    /// Walks RACK's time-ordered list from the head (checking the back links on the way)
    /// and returns the sequence numbers in it.
    fn rack_order(sb: &Scoreboard) -> Vec<u64> {
        let r = sb.rack.as_deref().unwrap();
        let (mut out, mut at, mut prev) = (vec![], r.head, NONE);
        while at != NONE {
            let o = sb.at(at);
            assert!(o.flag(LINKED));
            assert_eq!(from_delta(at, o.prev), prev, "back link of {}", o.seq);
            out.push(o.seq);
            (prev, at) = (at, from_delta(at, o.next));
        }
        assert_eq!(r.tail, prev);
        out
    }

    /// Random sends, SACK blocks, cumulative ACKs and retransmissions against the naive
    /// definitions, with sequence numbers and absolute indices that cross 2^32 (the links
    /// are stored as 32-bit index differences; sequence numbers stay 64-bit).
    #[test]
    fn scoreboard_matches_the_rfc_6675_definitions_across_2_pow_32() {
        let (mss, thresh) = (1448u64, 3u64);
        let mut rng = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move |n: u64| {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            rng % n
        };
        let mut sb = Scoreboard::new(thresh as u32, mss, true);
        // As if 2^32 − 200 segments had been acknowledged before.
        let start = (1u64 << 32) - 200;
        (sb.base, sb.frontier, sb.rxt_cursor) = (start, start, start);
        let mut snd_nxt = (1u64 << 32) - 300 * mss;
        let (mut naive, mut order): (Vec<Naive>, Vec<u64>) = (vec![], vec![]);
        let ctx = DeliveryCtx { now: SimTime::ZERO, min_rtt: None, ts_ecr: None };
        let mut high_rxt = snd_nxt;
        let (mut holes, mut lost_holes, mut links_back) = (0, 0, 0);
        sb.set_high_rxt(high_rxt);
        for step in 0..20_000u64 {
            let now = SimTime::from_nanos(step);
            match next(10) {
                0..=3 if naive.len() < 400 => {
                    let len = if next(8) == 0 { 1 + next(mss) } else { mss };
                    let fin = next(50) == 0;
                    sb.push(Outstanding::new(snd_nxt, len as u32, fin, now));
                    naive.push(Naive { seq: snd_nxt, len, fin, sacked: false, tx: 1 });
                    order.push(snd_nxt);
                    snd_nxt += len + fin as u64;
                }
                4..=6 if !naive.is_empty() => {
                    // A SACK block over a random run (some segments cut through at its edges).
                    let a = next(naive.len() as u64) as usize;
                    let b = (a + 1 + next(6) as usize).min(naive.len());
                    let (s, e) = (naive[a].seq + next(2) * 7, naive[b - 1].end());
                    sb.sack_block(s, e, &ctx);
                    for o in naive.iter_mut().filter(|o| o.seq >= s && o.end() <= e && !o.sacked) {
                        o.sacked = true;
                        order.retain(|&q| q != o.seq);
                    }
                    sb.update_lost();
                }
                7 if !naive.is_empty() => {
                    // A cumulative ACK over a few segments.
                    for _ in 0..=next(3) {
                        if naive.is_empty() {
                            break;
                        }
                        let o = naive.remove(0);
                        order.retain(|&q| q != o.seq);
                        assert_eq!(sb.pop_front(&ctx).unwrap().seq, o.seq);
                    }
                    sb.update_lost();
                }
                8 | 9 if !naive.is_empty() => {
                    // A retransmission: the segment moves to the tail of the time order.
                    let i = next(naive.len() as u64) as usize;
                    if !naive[i].sacked {
                        naive[i].tx += 1;
                        let o = sb.on_retransmit(i, now);
                        assert_eq!((o.seq, o.tx as u64), (naive[i].seq, naive[i].tx.min(255)));
                        high_rxt = high_rxt.max(naive[i].end());
                        sb.set_high_rxt(high_rxt);
                        order.retain(|&q| q != naive[i].seq);
                        order.push(naive[i].seq);
                    }
                }
                _ => {}
            }
            assert_eq!(sb.len(), naive.len());
            assert_eq!(rack_order(&sb), order, "step {step}");
            let sacked = naive.iter().filter(|o| o.sacked);
            assert_eq!(sb.sacked_segments(), sacked.clone().count() as u64);
            assert_eq!(sb.sacked_bytes(), sacked.map(|o| o.len).sum::<u64>());
            // RFC 6675 §4 SetPipe.
            let pipe: u64 = (0..naive.len())
                .filter(|&i| !naive[i].sacked)
                .map(|i| {
                    let o = &naive[i];
                    let n = o.end() - o.seq;
                    (!is_lost(&naive, i, thresh, mss)) as u64 * n + (o.end() <= high_rxt) as u64 * n
                })
                .sum();
            assert_eq!(sb.pipe(), pipe, "step {step}");
            // NextSeg (1) and (3).
            let hole = |lost_only: bool| {
                (0..naive.len())
                    .find(|&i| {
                        let o = &naive[i];
                        !o.sacked && o.seq >= high_rxt && (!lost_only || is_lost(&naive, i, thresh, mss))
                    })
                    .map(|i| naive[i].seq)
            };
            assert_eq!(sb.hole(false), hole(false), "step {step}");
            assert_eq!(sb.hole(true), hole(true), "step {step}");
            holes += hole(false).is_some() as u32;
            lost_holes += hole(true).is_some() as u32;
            links_back += order.windows(2).any(|w| w[1] < w[0]) as u32;
        }
        // The walk saw holes, lost holes and a time order unlike the sequence order.
        assert!(holes > 1000 && lost_holes > 1000 && links_back > 1000, "{holes} {lost_holes} {links_back}");
        assert!(sb.base > 1 << 32, "the absolute indices crossed 2^32");
        assert!(snd_nxt > 1 << 32, "the sequence numbers crossed 2^32");
    }
}

//! The sender's outstanding segments and its SACK scoreboard, kept so that every ACK costs
//! amortised O(log n), not O(window) (issue 12 item 1).
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

/// An outstanding (sent, not cumulatively acknowledged) segment.
#[derive(Clone, Debug)]
pub(crate) struct Outstanding {
    pub seq: u64,
    pub len: u32,
    pub fin: bool,
    /// Last transmission time (RACK's `Segment.xmit_ts`).
    pub sent_at: SimTime,
    /// Transmissions so far (Karn: sample RTT only when 1).
    pub tx: u32,
    pub sacked: bool,
    /// For a SACKed segment: an index at or before the next unSACKed one (all segments in
    /// between are SACKed). Compressed on lookup.
    skip: u64,
    /// RACK: marked lost (stays set after the retransmission, as Linux's LOST bit).
    pub(crate) rlost: bool,
    /// RACK: retransmitted since marked lost and not deemed lost again.
    pub(crate) rexmit: bool,
    /// RACK: in the set of lost segments waiting for a retransmission.
    pub(crate) rpending: bool,
    /// RACK: position in the time-ordered list of segments in flight.
    prev: u64,
    next: u64,
    linked: bool,
}

impl Outstanding {
    pub fn new(seq: u64, len: u32, fin: bool, sent_at: SimTime) -> Self {
        Outstanding {
            seq,
            len,
            fin,
            sent_at,
            tx: 1,
            sacked: false,
            skip: 0,
            rlost: false,
            rexmit: false,
            rpending: false,
            prev: NONE,
            next: NONE,
            linked: false,
        }
    }
    pub fn end(&self) -> u64 {
        self.seq + self.len as u64 + self.fin as u64
    }
    /// Sequence octets (payload, plus one for a FIN).
    fn octets(&self) -> u64 {
        self.end() - self.seq
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

    /// Appends a newly sent segment.
    pub fn push(&mut self, o: Outstanding) {
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
            if !o.sacked {
                self.rack_deliver(idx, ctx);
            }
            self.rack_forget(idx);
        }
        let o = self.segs.pop_front()?;
        self.base += 1;
        let n = o.octets();
        if o.sacked {
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
        let cut = (ack - f.seq) as u32;
        f.seq = ack;
        f.len = f.len.saturating_sub(cut);
        let (dn, dlen) = (n0 - f.octets(), len0 - f.len as u64);
        if f.sacked {
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
                if f.rlost {
                    r.lost_bytes -= dn;
                    if f.rexmit {
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
        while root < end && self.at(root).sacked {
            root = self.at(root).skip.max(root + 1);
        }
        let mut j = start;
        while j < root {
            let o = self.at_mut(j);
            let next = o.skip.max(j + 1);
            o.skip = root;
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
        o.sacked = true;
        o.skip = i + 1;
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
            let (own_c, own_b) = if o.sacked { (1, o.len as u64) } else { (0, 0) };
            let count = self.sacked_count - self.below_sacked_count - own_c;
            let bytes = self.sacked_len - self.below_sacked_len - own_b;
            if !(count >= thresh || bytes > (thresh - 1) * mss) {
                break;
            }
            if o.sacked {
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
        self.segs.front().is_some_and(|o| !o.sacked && self.frontier > self.base)
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
            if !o.sacked {
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
            let (pending, rlost, rexmit, n, seq) = (o.rpending, o.rlost, o.rexmit, o.octets(), o.seq);
            let r = self.rack.as_deref_mut().unwrap();
            if pending {
                r.pending.remove(&seq);
            }
            if rlost && !rexmit {
                r.rexmit_bytes += n;
            }
            let o = &mut self.segs[i];
            o.rpending = false;
            o.rexmit = rlost;
            // RFC 8985 §6.1: a retransmission moves the segment to the tail of the time order.
            self.unlink(abs);
            self.link_tail(abs);
        }
        let o = &mut self.segs[i];
        o.sent_at = now;
        o.tx += 1;
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
            self.segs[(tail - base) as usize].next = abs;
        }
        let o = self.at_mut(abs);
        o.prev = tail;
        o.next = NONE;
        o.linked = true;
    }

    fn unlink(&mut self, abs: u64) {
        let base = self.base;
        let o = &mut self.segs[(abs - base) as usize];
        if !o.linked {
            return;
        }
        o.linked = false;
        let (p, n) = (o.prev, o.next);
        let r = self.rack.as_deref_mut().unwrap();
        if r.pred == abs {
            r.pred = p;
        }
        if p == NONE {
            r.head = n;
        } else {
            self.segs[(p - base) as usize].next = n;
        }
        if n == NONE {
            self.rack.as_deref_mut().unwrap().tail = p;
        } else {
            self.segs[(n - base) as usize].prev = p;
        }
    }

    /// A segment leaves the scoreboard's RACK bookkeeping (delivered).
    fn rack_forget(&mut self, abs: u64) {
        self.unlink(abs);
        let o = self.at_mut(abs);
        let (rlost, rexmit, pending, n, seq) = (o.rlost, o.rexmit, o.rpending, o.octets(), o.seq);
        o.rlost = false;
        o.rexmit = false;
        o.rpending = false;
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
        let (xmit_ts, end, retrans, prev, linked) = (o.sent_at, o.end(), o.tx > 1, o.prev, o.linked);
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
            if ctx.ts_ecr.is_some_and(|ecr| ecr < super::sender::ts_value(xmit_ts)) {
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
        let (was_lost, was_rexmit, n, seq) = (o.rlost, o.rexmit, o.octets(), o.seq);
        o.rlost = true;
        o.rexmit = false;
        o.rpending = true;
        let r = self.rack.as_deref_mut().unwrap();
        if !was_lost {
            r.lost_bytes += n;
        }
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
            if o.linked || o.rlost || o.rpending {
                self.rack_forget(abs);
            }
        }
        let r = self.rack.as_deref_mut().unwrap();
        debug_assert!(r.head == NONE && r.pending.is_empty() && r.lost_bytes == 0);
        r.pred = NONE;
    }

    /// The lowest-sequence lost segment not yet retransmitted.
    pub fn rack_first_pending(&self) -> Option<u64> {
        self.rack.as_deref().and_then(|r| r.pending.first().copied())
    }
}

//! The data receiver: reassembly, cumulative ACK, delayed ACKs (RFC 5681 §4.2, RFC 1122
//! §4.2.3.2), SACK blocks (RFC 2018) with D-SACK (RFC 2883) and ECN echo (RFC 3168 §6.1.3).
//!
//! The application reads data as soon as it is in order, so the advertised window is the
//! whole receive buffer.

use super::config::DelayedAck;
use super::segment::SackBlocks;
use crate::engine::SimTime;
use super::timers::TimerClock;

#[derive(Clone, Debug)]
pub struct Receiver {
    /// Next sequence number expected.
    pub rcv_nxt: u64,
    /// Out-of-order ranges [start, end) above rcv_nxt, sorted and disjoint.
    ooo: Vec<(u64, u64)>,
    /// Starts of the most recently received out-of-order segments, newest first
    /// (RFC 2018 §4: the first SACK block reports the most recent segment).
    recent: [Option<u64>; 4],
    delayed: Option<DelayedAck>,
    /// Data segments received since the last ACK we sent.
    unacked: u32,
    delack_at: Option<SimTime>,
    /// The clock the delayed-ACK timer runs on (`timers.rs`).
    clock: TimerClock,
    /// Sequence number of the peer's FIN, once seen.
    fin_seq: Option<u64>,
    /// CE seen and not yet acknowledged by a CWR (RFC 3168 §6.1.3).
    pub ece: bool,
    /// Data segments received, including duplicates.
    pub segments_received: u64,
    /// Linux quick-ACK mode: ACKs still to send at once for in-order data, and the count it
    /// (re)starts with (`quickack`; 0 = off).
    quick: u32,
    quickack: u32,
    /// Data arrived that the next ACK acknowledges (Linux `inet_csk_ack_scheduled`).
    ack_scheduled: bool,
    /// RFC 2883: report duplicate segments (Linux `net.ipv4.tcp_dsack`).
    dsack_on: bool,
    /// The duplicate range the next ACK reports first (Linux `tcp_dsack_set()`).
    dsack: Option<(u64, u64)>,
}

/// What the receiver wants after a segment arrived.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum AckNeed {
    /// Nothing arrived that needs acknowledging.
    None,
    /// ACK now.
    Now,
    /// ACK may wait until the delayed-ACK deadline.
    Delayed,
}

impl Receiver {
    pub fn new(irs_next: u64, delayed: Option<DelayedAck>) -> Self {
        Receiver {
            rcv_nxt: irs_next,
            ooo: Vec::new(),
            recent: [None; 4],
            delayed,
            unacked: 0,
            delack_at: None,
            clock: TimerClock::EXACT,
            fin_seq: None,
            ece: false,
            segments_received: 0,
            quick: 0,
            quickack: 0,
            ack_scheduled: false,
            dsack_on: false,
            dsack: None,
        }
    }

    /// RFC 2883 D-SACK: the ACK that follows a duplicate segment reports its range in a first
    /// SACK block (Linux `tcp_dsack_set()` in `tcp_data_queue()` / `tcp_data_queue_ofo()`).
    pub fn with_dsack(mut self, on: bool) -> Self {
        self.dsack_on = on;
        self
    }

    /// Linux quick-ACK mode (net/ipv4/tcp_input.c): the first data of a connection enters it
    /// with `n` quick ACKs (`tcp_event_data_recv()` → `tcp_incr_quickack(sk, TCP_MAX_QUICKACKS)`,
    /// n = min(rcv_wnd / (2·rcv_mss), 16): 16 for any usual buffer); while in it, in-order data
    /// is ACKed at once (`tcp_in_quickack_mode()` in `__tcp_ack_snd_check()`); each ACK that
    /// acknowledges data uses one (`tcp_dec_quickack_mode()`). A duplicate (retransmitted)
    /// segment re-enters it (`tcp_enter_quickack_mode()` in `tcp_data_queue()`). 0 = off.
    pub fn with_clock(mut self, clock: TimerClock) -> Self {
        self.clock = clock;
        self
    }

    pub fn with_quickack(mut self, n: u32) -> Self {
        self.quick = n;
        self.quickack = n;
        self
    }

    /// Has the peer's FIN been received in order?
    pub fn fin_received(&self) -> bool {
        self.fin_seq.is_some_and(|f| self.rcv_nxt > f)
    }

    /// Bytes of data delivered in order to the application (the SYN occupies seq 0).
    pub fn delivered(&self) -> u64 {
        self.rcv_nxt - 1 - self.fin_received() as u64
    }

    pub fn delack_deadline(&self) -> Option<SimTime> {
        self.delack_at
    }

    /// An arriving segment occupying [seq, seq+len) plus a FIN if `fin`; `ce` if it was
    /// marked Congestion Experienced, `cwr` if it carries CWR.
    pub fn on_segment(&mut self, now: SimTime, seq: u64, len: u32, fin: bool, ce: bool, cwr: bool) -> AckNeed {
        if cwr {
            self.ece = false;
        }
        if ce {
            self.ece = true;
        }
        // The sequence space the segment occupies: its data, plus one for a FIN.
        let end = seq + len as u64 + fin as u64;
        if end == seq {
            return AckNeed::None;
        }
        if len > 0 {
            self.segments_received += 1;
        }
        self.ack_scheduled = true;
        if fin {
            self.fin_seq = Some(seq + len as u64);
        }
        if end <= self.rcv_nxt {
            // RFC 5681 §4.2 / RFC 793: an old duplicate (data or FIN) is acknowledged at once.
            // Linux also re-enters quick-ACK mode (tcp_data_queue(): "A retransmit").
            self.quick = self.quick.max(self.quickack);
            if len > 0 {
                self.set_dsack(seq, seq + len as u64); // RFC 2883 §4 (1)
            }
            return AckNeed::Now;
        }
        if seq < self.rcv_nxt && len > 0 {
            // Partly old (Linux tcp_data_queue(): "Partial packet, seq < rcv_next < end_seq").
            self.set_dsack(seq, self.rcv_nxt);
        }
        if seq > self.rcv_nxt {
            // RFC 2883 §4 (2): data already held out of order is reported as a duplicate
            // (Linux tcp_data_queue_ofo(): the part an existing block covers).
            if let Some(&(a, b)) = self.ooo.iter().find(|&&(a, b)| a < end && seq < b) {
                self.set_dsack(seq.max(a), end.min(b));
            }
            // RFC 5681 §4.2: an out-of-order segment SHOULD be acknowledged immediately. Its
            // range includes a FIN it carries, so SACK reports the FIN as received too.
            self.insert_ooo(seq, end);
            self.note_recent(seq);
            return AckNeed::Now;
        }
        let had_holes = !self.ooo.is_empty();
        let fin_before = self.fin_received();
        self.rcv_nxt = end;
        self.absorb_ooo();
        if had_holes || (self.fin_received() && !fin_before) {
            // RFC 5681 §4.2: a segment that fills in all or part of a gap is ACKed at once;
            // so is the FIN.
            AckNeed::Now
        } else {
            self.delayed_or_now(now)
        }
    }

    fn delayed_or_now(&mut self, now: SimTime) -> AckNeed {
        self.unacked += 1;
        match self.delayed {
            None => AckNeed::Now,
            // Linux quick-ACK mode: in-order data is ACKed at once.
            Some(_) if self.quick > 0 => AckNeed::Now,
            // "at least every second full-sized segment" (RFC 5681 §4.2), generalised to N.
            Some(d) if self.unacked >= d.segments => AckNeed::Now,
            Some(d) => {
                if self.delack_at.is_none() {
                    self.delack_at = Some(self.clock.delayed_ack(now, d.timeout));
                }
                AckNeed::Delayed
            }
        }
    }

    fn set_dsack(&mut self, s: u64, e: u64) {
        if self.dsack_on && s < e {
            self.dsack = Some((s, e));
        }
    }

    /// An ACK (pure or piggybacked) is being sent: the delayed-ACK state resets, and the
    /// D-SACK it carried is not repeated.
    pub fn on_ack_sent(&mut self) {
        self.dsack = None;
        if self.ack_scheduled && self.quick > 0 {
            // tcp_dec_quickack_mode(): one quick ACK used per ACK that acknowledges data.
            self.quick -= 1;
        }
        self.ack_scheduled = false;
        self.unacked = 0;
        self.delack_at = None;
    }

    fn insert_ooo(&mut self, mut s: u64, mut e: u64) {
        // Merge with every overlapping or adjacent range.
        let mut i = 0;
        while i < self.ooo.len() {
            let (a, b) = self.ooo[i];
            if b < s || a > e {
                i += 1;
                continue;
            }
            s = s.min(a);
            e = e.max(b);
            self.ooo.remove(i);
        }
        let pos = self.ooo.partition_point(|&(a, _)| a < s);
        self.ooo.insert(pos, (s, e));
    }

    fn absorb_ooo(&mut self) {
        while let Some(&(a, b)) = self.ooo.first() {
            if a > self.rcv_nxt {
                break;
            }
            self.rcv_nxt = self.rcv_nxt.max(b);
            self.ooo.remove(0);
        }
    }

    fn note_recent(&mut self, seq: u64) {
        self.recent.rotate_right(1);
        self.recent[0] = Some(seq);
    }

    /// SACK blocks to put on the next ACK (RFC 2018 §4): the block holding the most recently
    /// received segment first, then other recent blocks, at most `max` of them.
    /// A pending D-SACK comes first (RFC 2883 §4), then the others.
    pub fn sack_blocks(&self, max: usize) -> SackBlocks {
        let mut out = SackBlocks::default();
        let mut used: [Option<(u64, u64)>; SackBlocks::MAX] = [None; SackBlocks::MAX];
        let mut n = 0;
        if let Some((a, b)) = self.dsack {
            if max > 0 {
                out.push(a, b);
                n = 1;
                used[0] = Some((u64::MAX, u64::MAX)); // the containing block may follow it
            }
        }
        let candidates = self
            .recent
            .iter()
            .flatten()
            .filter_map(|&s| self.ooo.iter().copied().find(|&(a, b)| a <= s && s < b))
            .chain(self.ooo.iter().rev().copied());
        for r in candidates {
            if n >= max.min(SackBlocks::MAX) {
                break;
            }
            if used[..n].contains(&Some(r)) {
                continue;
            }
            used[n] = Some(r);
            n += 1;
            out.push(r.0, r.1);
        }
        out
    }

    /// Bytes held out of order (for accounting and tests).
    pub fn ooo_ranges(&self) -> &[(u64, u64)] {
        &self.ooo
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::SimDuration;

    const MSS: u32 = 1000;
    fn t(ms: u64) -> SimTime {
        SimTime::ZERO + SimDuration::from_millis(ms)
    }
    fn delayed() -> Receiver {
        Receiver::new(1, Some(DelayedAck { segments: 2, timeout: SimDuration::from_millis(200) }))
    }
    fn seg(r: &mut Receiver, at: u64, n: u64) -> AckNeed {
        r.on_segment(t(at), 1 + n * MSS as u64, MSS, false, false, false)
    }

    fn dsack_receiver() -> Receiver {
        Receiver::new(1, None).with_dsack(true)
    }

    #[test]
    fn a_duplicate_below_the_cumulative_ack_is_reported_once_in_a_first_block() {
        // RFC 2883 §4 (1): the first SACK block of the ACK that follows a duplicate is the
        // duplicate's range; the next ACK no longer carries it.
        let mut r = dsack_receiver();
        seg(&mut r, 0, 0);
        seg(&mut r, 1, 1);
        assert_eq!(seg(&mut r, 2, 0), AckNeed::Now);
        assert_eq!(r.sack_blocks(3).as_slice(), &[(1, 1001)]);
        r.on_ack_sent();
        assert!(r.sack_blocks(3).is_empty());
    }

    #[test]
    fn a_duplicate_of_out_of_order_data_comes_first_then_the_block_holding_it() {
        // RFC 2883 §4 (2): segment 0 missing; 1 and 2 held; 2 arrives again.
        let mut r = dsack_receiver();
        seg(&mut r, 0, 1);
        seg(&mut r, 1, 2);
        r.on_ack_sent();
        seg(&mut r, 2, 2);
        assert_eq!(r.sack_blocks(3).as_slice(), &[(2001, 3001), (1001, 3001)]);
    }

    #[test]
    fn a_partly_old_segment_reports_its_old_part() {
        // Linux tcp_data_queue(): seq < rcv_nxt < end_seq → tcp_dsack_set(seq, rcv_nxt).
        let mut r = dsack_receiver();
        seg(&mut r, 0, 0);
        r.on_segment(t(1), 501, MSS, false, false, false);
        assert_eq!(r.sack_blocks(3).as_slice(), &[(501, 1001)]);
        assert_eq!(r.rcv_nxt, 1501);
    }

    #[test]
    fn without_dsack_duplicates_are_not_reported() {
        let mut r = Receiver::new(1, None);
        seg(&mut r, 0, 0);
        seg(&mut r, 1, 0);
        assert!(r.sack_blocks(3).is_empty());
    }

    #[test]
    fn every_second_full_segment_is_acknowledged() {
        let mut r = delayed();
        assert_eq!(seg(&mut r, 0, 0), AckNeed::Delayed);
        assert_eq!(seg(&mut r, 1, 1), AckNeed::Now);
        r.on_ack_sent();
        assert_eq!(r.rcv_nxt, 2001);
    }

    #[test]
    fn a_lone_segment_waits_for_the_delayed_ack_timer_from_its_arrival() {
        let mut r = delayed();
        assert_eq!(seg(&mut r, 10, 0), AckNeed::Delayed);
        assert_eq!(r.delack_deadline(), Some(t(210)));
    }

    #[test]
    fn quick_ack_mode_acks_the_first_n_segments_at_once_then_delays() {
        // Linux: 16 quick ACKs (TCP_MAX_QUICKACKS) at connection start, one used per ACK.
        let mut r = delayed().with_quickack(16);
        for n in 0..16 {
            assert_eq!(seg(&mut r, n, n), AckNeed::Now, "segment {n}");
            r.on_ack_sent();
        }
        assert_eq!(seg(&mut r, 16, 16), AckNeed::Delayed, "the 17th waits for a second segment");
        assert_eq!(seg(&mut r, 17, 17), AckNeed::Now);
        r.on_ack_sent();
        // A retransmitted (duplicate) segment re-enters quick-ACK mode.
        assert_eq!(seg(&mut r, 18, 3), AckNeed::Now);
        r.on_ack_sent();
        assert_eq!(seg(&mut r, 19, 18), AckNeed::Now);
    }

    #[test]
    fn without_quick_ack_the_first_segment_is_delayed() {
        assert_eq!(seg(&mut delayed().with_quickack(0), 0, 0), AckNeed::Delayed);
    }

    #[test]
    fn without_delayed_acks_every_segment_is_acknowledged() {
        let mut r = Receiver::new(1, None);
        assert_eq!(seg(&mut r, 0, 0), AckNeed::Now);
        assert_eq!(seg(&mut r, 0, 1), AckNeed::Now);
    }

    #[test]
    fn out_of_order_data_is_acknowledged_at_once_with_a_sack_block() {
        let mut r = delayed();
        seg(&mut r, 0, 0);
        assert_eq!(seg(&mut r, 1, 2), AckNeed::Now);
        assert_eq!(r.rcv_nxt, 1001);
        assert_eq!(r.sack_blocks(4).as_slice(), &[(2001, 3001)]);
    }

    #[test]
    fn the_segment_filling_the_hole_is_acknowledged_at_once_and_advances_past_the_hole() {
        let mut r = delayed();
        seg(&mut r, 0, 0);
        r.on_ack_sent();
        seg(&mut r, 1, 2);
        seg(&mut r, 2, 3);
        assert_eq!(seg(&mut r, 3, 1), AckNeed::Now);
        assert_eq!(r.rcv_nxt, 4001);
        assert!(r.sack_blocks(4).is_empty());
    }

    #[test]
    fn the_first_sack_block_holds_the_most_recent_segment() {
        let mut r = Receiver::new(1, None);
        seg(&mut r, 0, 2);
        seg(&mut r, 0, 5);
        seg(&mut r, 0, 8);
        assert_eq!(r.sack_blocks(4).as_slice(), &[(8001, 9001), (5001, 6001), (2001, 3001)]);
        seg(&mut r, 0, 3); // extends the first range; it becomes the newest
        assert_eq!(r.sack_blocks(3).as_slice(), &[(2001, 4001), (8001, 9001), (5001, 6001)]);
        assert_eq!(r.sack_blocks(1).len(), 1);
    }

    #[test]
    fn an_old_duplicate_is_acknowledged_at_once() {
        let mut r = delayed();
        seg(&mut r, 0, 0);
        seg(&mut r, 0, 1);
        r.on_ack_sent();
        assert_eq!(seg(&mut r, 5, 0), AckNeed::Now);
    }

    #[test]
    fn the_fin_takes_one_sequence_number_and_is_acknowledged_at_once() {
        let mut r = delayed();
        assert_eq!(r.on_segment(t(0), 1, 500, true, false, false), AckNeed::Now);
        assert_eq!(r.rcv_nxt, 502);
        assert!(r.fin_received());
        assert_eq!(r.delivered(), 500);
    }

    #[test]
    fn an_out_of_order_fin_alone_does_not_skip_the_missing_data() {
        let mut r = delayed();
        seg(&mut r, 0, 0);
        // Data 1001..3001 is missing; the FIN (sequence 3001) arrives first.
        assert_eq!(r.on_segment(t(1), 3001, 0, true, false, false), AckNeed::Now);
        assert_eq!(r.rcv_nxt, 1001, "nothing beyond the hole is delivered");
        assert!(!r.fin_received());
        assert_eq!(r.sack_blocks(4).as_slice(), &[(3001, 3002)], "SACK reports the FIN");
        seg(&mut r, 2, 1);
        assert_eq!(seg(&mut r, 3, 2), AckNeed::Now);
        assert_eq!((r.rcv_nxt, r.delivered()), (3002, 3000));
        assert!(r.fin_received());
    }

    #[test]
    fn an_out_of_order_last_segment_with_fin_is_sacked_including_the_fin() {
        let mut r = Receiver::new(1, None);
        r.on_segment(t(0), 2001, MSS, true, false, false);
        assert_eq!(r.sack_blocks(4).as_slice(), &[(2001, 3002)]);
        seg(&mut r, 0, 0);
        seg(&mut r, 0, 1);
        assert_eq!((r.rcv_nxt, r.delivered()), (3002, 3000));
    }

    #[test]
    fn a_retransmitted_fin_is_acknowledged_at_once() {
        let mut r = delayed();
        r.on_segment(t(0), 1, 500, true, false, false);
        r.on_ack_sent();
        assert_eq!(r.on_segment(t(1), 501, 0, true, false, false), AckNeed::Now);
        assert_eq!(r.rcv_nxt, 502);
    }

    #[test]
    fn ce_sets_ece_until_cwr_arrives() {
        let mut r = Receiver::new(1, None);
        r.on_segment(t(0), 1, MSS, false, true, false);
        assert!(r.ece);
        r.on_segment(t(0), 1001, MSS, false, false, false);
        assert!(r.ece, "ECE persists on every ACK until CWR");
        r.on_segment(t(0), 2001, MSS, false, false, true);
        assert!(!r.ece);
    }
}

//! The event queue: events come out ordered by (time, insertion sequence).
//!
//! Events at the same instant come out in the order they were scheduled, so a run is a pure
//! function of its inputs. Cancelled timers are not
//! removed; their owners recognise stale events when they fire (lazy cancellation).
//!
//! The queue is a calendar (Brown, CACM 1988) with one sorted bucket: time is cut into slots of
//! `SLOT_NS`; events of slots already opened wait, sorted, in `current`; events of the next
//! `SLOTS` slots wait unsorted in a ring of buckets, and later ones in `overflow`. Scheduling
//! into the future is a push; a bucket is sorted once, when the clock reaches it. Every bucket
//! holds its events in the order they were scheduled (the overflow hands its events over in
//! order, before the slot takes any other), so a stable sort by time alone gives the order of
//! (time, insertion sequence), and an event scheduled into an open slot goes behind those of its
//! instant: no sequence number is stored (an entry is 24 bytes, not 32). Most events
//! of a packet simulation are a few milliseconds ahead, so buckets stay small, and the many
//! retransmission timers a second ahead (most cancelled before they fire) cost a push each
//! instead of a place in a heap every other event has to sift past.

use super::time::SimTime;

/// Slot width: 2^20 ns ≈ 1.05 ms. Narrow enough that a slot of a busy run holds a few dozen
/// events (bench A: ~55), so that most events are pushes into the ring rather than insertions
/// into the sorted `current`. With 2.1 ms slots (~110 events each) the event queue took 25 %
/// of bench A's instructions, 17 % outside the sorts; 1 ms slots and the latest-first `Vec`
/// halved the part outside the sorts (cachegrind, 2026-11-27).
const SLOT_SHIFT: u32 = 20;
/// Slots in the ring: 4096 slots ≈ 4.3 s ahead (retransmission timers fit).
const SLOTS: u64 = 4096;
/// Entries of capacity a drained buffer keeps when it goes back to the ring (768 B): a bucket
/// that held a burst gives the rest back, so the ring holds at most `SLOTS × KEEP` entries
/// beyond the events waiting in it (3 MB), however long the run and however large the
/// largest burst (memory flat in flows). Without the bound every buffer would keep
/// the largest bucket it ever held, and that maximum grows with the run.
const KEEP: usize = 32;
/// Entries of capacity a buffer gets when it goes back to the ring, at least: every slot's
/// buffer grows once to an ordinary bucket's size on the ring's first turn instead of
/// doubling its way there (4, 8, 16) over several turns — steady state allocates nothing.
const MIN: usize = 16;
/// Entries the buffers of the opened slot (its sort keys, `current`) keep whatever the bucket
/// (32 KB): only a burst's larger buffer is given back, so ordinary slots reallocate nothing.
const OPEN_KEEP: usize = 1024;

#[derive(Clone, Copy)]
struct Entry<E> {
    at: SimTime,
    event: E,
}

fn slot_of(at: SimTime) -> u64 {
    at.as_nanos() >> SLOT_SHIFT
}

/// Bits of a sort key below a slot's time offset (`open_next_slot`): the event's position in
/// its bucket.
const POS_BITS: u32 = 64 - SLOT_SHIFT;

/// A deterministic discrete-event queue.
pub struct Scheduler<E> {
    /// Events of slots before `next_slot`, latest first: the next event is popped off the end,
    /// and an event scheduled a moment ahead (the next hop of a packet) is inserted near it.
    current: Vec<Entry<E>>,
    /// Events of slots `next_slot .. next_slot + SLOTS`, unsorted, at `ring[slot % SLOTS]`.
    ring: Vec<Vec<Entry<E>>>,
    in_ring: usize,
    /// Events of later slots, unsorted, and the earliest slot among them.
    overflow: Vec<Entry<E>>,
    overflow_first: u64,
    /// The first slot not yet opened.
    next_slot: u64,
    now: SimTime,
    popped: u64,
    /// Sort keys of the bucket being opened (a buffer kept between slots).
    keys: Vec<u64>,
}

impl<E: Copy> Default for Scheduler<E> {
    fn default() -> Self {
        Self::new()
    }
}

impl<E: Copy> Scheduler<E> {
    pub fn new() -> Self {
        Scheduler {
            current: Vec::new(),
            ring: (0..SLOTS).map(|_| Vec::new()).collect(),
            in_ring: 0,
            overflow: Vec::new(),
            overflow_first: u64::MAX,
            next_slot: 0,
            now: SimTime::ZERO,
            popped: 0,
            keys: Vec::new(),
        }
    }

    /// The time of the event being processed (or last processed).
    pub fn now(&self) -> SimTime {
        self.now
    }

    /// Schedules `event` at `at`, which must not be in the past.
    pub fn schedule(&mut self, at: SimTime, event: E) {
        debug_assert!(at >= self.now, "event scheduled in the past: {at} < {}", self.now);
        let e = Entry { at, event };
        let slot = slot_of(at);
        if slot < self.next_slot {
            // The latest scheduled yet: it comes out after every event at or before `at`, so
            // it goes in front of them (`current` is latest first).
            let i = self.current.partition_point(|c| c.at > at);
            self.current.insert(i, e);
        } else if slot < self.next_slot + SLOTS {
            self.ring[(slot % SLOTS) as usize].push(e);
            self.in_ring += 1;
        } else {
            self.overflow_first = self.overflow_first.min(slot);
            self.overflow.push(e);
        }
    }

    /// `current` ran dry: opens the next slot that holds events.
    fn open_next_slot(&mut self) {
        loop {
            if self.in_ring == 0 {
                if self.overflow.is_empty() {
                    return;
                }
                self.next_slot = self.overflow_first;
                self.pull_overflow();
            }
            let i = (self.next_slot % SLOTS) as usize;
            let found = !self.ring[i].is_empty();
            if found {
                self.open(i);
            }
            self.next_slot += 1;
            if self.overflow_first < self.next_slot + SLOTS {
                self.pull_overflow();
            }
            if found {
                return;
            }
        }
    }

    /// Makes the bucket at `ring[i]` `current`, latest first, and gives the ring its buffer
    /// back (up to `KEEP` entries: a bucket of ordinary size is not reallocated once the ring
    /// has gone round). The bucket is in scheduling order (see the module's comment), so the
    /// order of (time, sequence) is that of (time, position in the bucket); its events share
    /// one slot, so `offset in the slot << POS_BITS | position` is a unique `u64` key, and an
    /// unstable sort of the keys gives that order, cheaper than a stable sort of the entries.
    fn open(&mut self, i: usize) {
        let mut bucket = std::mem::take(&mut self.ring[i]);
        self.in_ring -= bucket.len();
        debug_assert!(bucket.len() < 1 << POS_BITS);
        let (offset, position) = ((1u64 << SLOT_SHIFT) - 1, (1u64 << POS_BITS) - 1);
        // After a burst the key and `current` buffers give the rest back, as the ring's do.
        let n = bucket.len().max(OPEN_KEEP);
        self.keys.clear();
        if self.keys.capacity() > 4 * n {
            self.keys.shrink_to(n);
        }
        self.keys.extend(bucket.iter().enumerate().map(|(p, e)| (e.at.as_nanos() & offset) << POS_BITS | p as u64));
        self.keys.sort_unstable();
        debug_assert!(self.current.is_empty());
        if self.current.capacity() > 4 * n {
            self.current.shrink_to(n);
        }
        self.current.extend(self.keys.iter().rev().map(|&k| bucket[(k & position) as usize]));
        bucket.clear();
        bucket.shrink_to(KEEP);
        bucket.reserve(MIN);
        self.ring[i] = bucket;
    }

    /// Moves the overflow events whose slot the ring now covers into it.
    fn pull_overflow(&mut self) {
        let end = self.next_slot + SLOTS;
        // In order, both the events moved and those kept: the buckets stay in scheduling order.
        for e in self.overflow.extract_if(.., |e| slot_of(e.at) < end) {
            self.ring[(slot_of(e.at) % SLOTS) as usize].push(e);
            self.in_ring += 1;
        }
        self.overflow_first = self.overflow.iter().map(|e| slot_of(e.at)).min().unwrap_or(u64::MAX);
        // What the overflow held in a burst of far timers goes back too.
        self.overflow.shrink_to(KEEP.max(2 * self.overflow.len()));
    }

    /// Removes and returns the earliest event, advancing the clock to its time.
    pub fn pop(&mut self) -> Option<(SimTime, E)> {
        if self.current.is_empty() {
            self.open_next_slot();
        }
        let e = self.current.pop()?;
        self.now = e.at;
        self.popped += 1;
        Some((e.at, e.event))
    }

    /// The time of the earliest pending event.
    pub fn peek_time(&mut self) -> Option<SimTime> {
        if self.current.is_empty() {
            self.open_next_slot();
        }
        self.current.last().map(|e| e.at)
    }

    pub fn len(&self) -> usize {
        self.current.len() + self.in_ring + self.overflow.len()
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Number of events processed so far.
    pub fn events_processed(&self) -> u64 {
        self.popped
    }
    /// Bytes of heap the queue's buffers hold (their capacity), whatever they hold now.
    pub fn heap_bytes(&self) -> usize {
        let entries =
            self.current.capacity() + self.overflow.capacity() + self.ring.iter().map(Vec::capacity).sum::<usize>();
        entries * std::mem::size_of::<Entry<E>>()
            + self.ring.capacity() * std::mem::size_of::<Vec<Entry<E>>>()
            + self.keys.capacity() * std::mem::size_of::<u64>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::SimDuration;
    use proptest::prelude::*;

    fn secs(s: u64) -> SimTime {
        SimTime::ZERO + SimDuration::from_secs(s)
    }

    #[test]
    fn events_come_out_in_time_order() {
        let mut s = Scheduler::new();
        s.schedule(SimTime::from_nanos(30), 'c');
        s.schedule(SimTime::from_nanos(10), 'a');
        s.schedule(SimTime::from_nanos(20), 'b');
        let order: Vec<char> = std::iter::from_fn(|| s.pop().map(|(_, e)| e)).collect();
        assert_eq!(order, vec!['a', 'b', 'c']);
    }

    #[test]
    fn same_time_events_keep_insertion_order() {
        let mut s = Scheduler::new();
        for i in 0..100 {
            s.schedule(SimTime::from_nanos(5), i);
        }
        let order: Vec<i32> = std::iter::from_fn(|| s.pop().map(|(_, e)| e)).collect();
        assert_eq!(order, (0..100).collect::<Vec<_>>());
    }

    #[test]
    fn clock_advances_to_popped_event() {
        let mut s = Scheduler::new();
        s.schedule(SimTime::from_nanos(7), ());
        s.pop();
        assert_eq!(s.now(), SimTime::from_nanos(7));
        assert_eq!(s.events_processed(), 1);
    }

    #[test]
    fn events_beyond_the_ring_and_after_an_idle_gap_come_out_in_order() {
        let mut s = Scheduler::new();
        let hour = secs(3600);
        s.schedule(hour, 'd');
        s.schedule(secs(10), 'b');
        s.schedule(SimTime::from_nanos(1), 'a');
        s.schedule(secs(10), 'c');
        assert_eq!(s.pop(), Some((SimTime::from_nanos(1), 'a')));
        assert_eq!(s.peek_time(), Some(secs(10)));
        // Scheduled now, between two pending events: it comes before both.
        s.schedule(secs(5), 'x');
        let rest: Vec<char> = std::iter::from_fn(|| s.pop().map(|(_, e)| e)).collect();
        assert_eq!(rest, vec!['x', 'b', 'c', 'd']);
        assert_eq!(s.now(), hour);
        assert!(s.is_empty());
    }

    #[test]
    fn a_drained_burst_gives_its_buffer_back() {
        let mut s = Scheduler::new();
        // 500 000 events in the first slot, then one in each slot for two turns of the wheel
        // (the second turn through the overflow).
        for i in 0..500_000 {
            s.schedule(SimTime::from_nanos(i), i);
        }
        for k in 1..=2 * SLOTS {
            s.schedule(SimTime::from_nanos(k << SLOT_SHIFT), 0);
        }
        assert!(s.heap_bytes() > 500_000 * std::mem::size_of::<Entry<u64>>());
        while s.pop().is_some() {}
        // Every slot, the sorted queue and the overflow keep at most `KEEP` entries: 2.2 MB,
        // not the burst's 8 MB.
        let entry = std::mem::size_of::<Entry<u64>>();
        let bound = (SLOTS as usize + 2) * KEEP * entry + SLOTS as usize * std::mem::size_of::<Vec<Entry<u64>>>();
        assert!(s.heap_bytes() <= bound, "{} B kept, at most {bound} B", s.heap_bytes());
    }

    /// An operation on the queue: schedule `delay` ns after now, or pop.
    #[derive(Clone, Debug)]
    enum Op {
        Schedule(u64),
        Pop,
        Peek,
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            // Same instant, within a slot, across slots, across and beyond the ring.
            4 => prop_oneof![Just(0u64), 0u64..2_000, 0u64..50_000_000, 0u64..20_000_000_000].prop_map(Op::Schedule),
            3 => Just(Op::Pop),
            1 => Just(Op::Peek),
        ]
    }

    proptest! {
        /// The calendar gives the order of a sorted list of (time, sequence) pairs.
        #[test]
        fn pops_in_time_then_insertion_order(ops in proptest::collection::vec(op(), 1..400)) {
            let mut s = Scheduler::new();
            let mut model: std::collections::BTreeSet<(u64, u64)> = Default::default();
            let mut id = 0u64;
            for op in ops {
                match op {
                    Op::Schedule(d) => {
                        let at = s.now().as_nanos() + d;
                        s.schedule(SimTime::from_nanos(at), id);
                        model.insert((at, id));
                        id += 1;
                    }
                    Op::Pop => {
                        let want = model.pop_first();
                        prop_assert_eq!(s.pop().map(|(t, e)| (t.as_nanos(), e)), want);
                    }
                    Op::Peek => {
                        let want = model.first().map(|&(t, _)| t);
                        prop_assert_eq!(s.peek_time().map(|t| t.as_nanos()), want);
                    }
                }
                prop_assert_eq!(s.len(), model.len());
            }
            while let Some(want) = model.pop_first() {
                prop_assert_eq!(s.pop().map(|(t, e)| (t.as_nanos(), e)), Some(want));
            }
            prop_assert_eq!(s.pop(), None);
        }
    }
}

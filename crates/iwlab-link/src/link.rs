//! One direction of the emulated link, as chained stages:
//! loss (Bernoulli) → queue discipline (iwlab-core's) → serialisation at `rate` → propagation
//! for `delay` → release.
//!
//! Clock-free, like the simulator's endpoints: every call takes `now` (a [`SimTime`] since the
//! relay started) and the link never reads a clock, so tests drive it with made-up times. The
//! relay calls [`Link::advance`] up to the current time before each arrival, writes out what
//! [`Link::pop_due`] returns, and sleeps until [`Link::next_event`].
//!
//! Semantics are the simulator's (`iwlab_core::net::link::Port`): the packet being serialised
//! has left the queue; when the transmitter frees at `t` the queue is asked for the next packet
//! *at `t`* (CoDel's sojourn times and RED's idle time use `t`, not the moment the relay noticed);
//! a packet that finds the transmitter idle starts at once. So with drop-tail a packet leaves the
//! transmitter at `max(arrival, previous departure) + bytes·8/rate` and is released `delay` later.

use crate::ip;
use crate::pool::{Pool, Slot};
use iwlab_core::engine::{RngStreams, SimDuration, SimRng, SimTime, StreamKind};
use iwlab_core::net::queue::{AnyQueue, QueueConfig, QueueDisc, QueuedPkt, Verdict};
use rand::Rng;
use serde::Serialize;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// What one direction of the link does.
#[derive(Clone, Debug, PartialEq)]
pub struct LinkParams {
    /// Serialisation rate, bits/s (> 0).
    pub rate_bps: u64,
    /// One-way propagation delay.
    pub delay: SimDuration,
    /// Queue discipline in front of the transmitter.
    pub queue: QueueConfig,
    /// Probability that an arriving packet is lost before the queue (0 = no loss stage).
    pub loss: f64,
}

/// Counters of one direction (what `--stats-json` reports besides lateness).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct LinkCounters {
    pub packets_in: u64,
    pub bytes_in: u64,
    /// Released after the delay (handed back to the kernel).
    pub packets_out: u64,
    pub bytes_out: u64,
    pub loss_drops: u64,
    /// Dropped by the queue discipline (at enqueue, or at dequeue for CoDel).
    pub queue_drops: u64,
    /// Marked CE by the queue discipline.
    pub marks: u64,
    /// Most packets ever waiting in the queue (not counting the one being serialised).
    pub queue_peak_packets: u64,
}

/// What happened to an arriving packet.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Arrival {
    Lost,
    QueueDropped,
    Queued,
    /// Queued with CE set (RED with ECN).
    Marked,
}

pub struct Link {
    p: LinkParams,
    loss_rng: SimRng,
    queue: AnyQueue,
    queue_rng: SimRng,
    /// When the packet being serialised finishes; `None` while the transmitter is idle.
    busy_until: Option<SimTime>,
    /// Packets in propagation, keyed by (release time, sequence): a heap so that stages with
    /// non-constant delay can be added; with a fixed delay releases come out in FIFO order.
    delay_line: BinaryHeap<Reverse<(SimTime, u64, Slot)>>,
    seq: u64,
    /// Scratch for CoDel's drops at dequeue (kept, so no allocation per packet).
    dropped: Vec<QueuedPkt>,
    pub counters: LinkCounters,
}

impl Link {
    /// `id` picks this direction's random streams out of `seed` (loss and RED have their own).
    /// `capacity` sizes the delay line up front (the pool size: no packet is in two places).
    pub fn new(p: LinkParams, seed: u64, id: u64, capacity: usize) -> Self {
        assert!(p.rate_bps > 0, "rate must be > 0");
        let streams = RngStreams::new(seed);
        Link {
            loss_rng: streams.stream(StreamKind::Loss, id),
            queue_rng: streams.stream(StreamKind::Queue, id),
            queue: p.queue.build(p.rate_bps),
            p,
            busy_until: None,
            delay_line: BinaryHeap::with_capacity(capacity),
            seq: 0,
            dropped: Vec::with_capacity(64),
            counters: LinkCounters::default(),
        }
    }

    pub fn params(&self) -> &LinkParams {
        &self.p
    }

    /// Serialisation time of `bytes` at the link rate, rounded up to whole nanoseconds.
    pub fn tx_time(&self, bytes: usize) -> SimDuration {
        SimDuration::transmission(bytes as u64, self.p.rate_bps)
    }

    /// Packets held: queued, being serialised, or propagating.
    pub fn held(&self) -> usize {
        self.queue.len_packets() + self.delay_line.len()
    }

    /// A packet in `slot` arrives at `now`. Call [`Link::advance`]`(now)` first. Dropped packets'
    /// slots go back to the pool.
    pub fn arrive(&mut self, now: SimTime, slot: Slot, pool: &mut Pool) -> Arrival {
        debug_assert!(self.busy_until.map_or(true, |t| t > now), "advance() the link to now first");
        let bytes = pool.len(slot);
        self.counters.packets_in += 1;
        self.counters.bytes_in += bytes as u64;
        if self.p.loss > 0.0 && self.loss_rng.gen::<f64>() < self.p.loss {
            self.counters.loss_drops += 1;
            pool.release(slot);
            return Arrival::Lost;
        }
        let qp =
            QueuedPkt { id: slot as usize, bytes: bytes as u32, ect: ip::is_ect(pool.packet(slot)), enqueued: now };
        let arrival = match self.queue.enqueue(qp, now, &mut self.queue_rng) {
            Verdict::Dropped => {
                self.counters.queue_drops += 1;
                pool.release(slot);
                return Arrival::QueueDropped;
            }
            Verdict::Marked => {
                self.counters.marks += 1;
                ip::set_ce(pool.packet_mut(slot));
                Arrival::Marked
            }
            Verdict::Enqueued => Arrival::Queued,
        };
        self.counters.queue_peak_packets = self.counters.queue_peak_packets.max(self.queue.len_packets() as u64);
        if self.busy_until.is_none() {
            self.start_next(now, pool);
        }
        arrival
    }

    /// Runs the transmitter up to `now`: each time it frees at `t ≤ now` the next packet is
    /// dequeued at `t` and its serialisation and propagation scheduled.
    pub fn advance(&mut self, now: SimTime, pool: &mut Pool) {
        while let Some(t) = self.busy_until {
            if t > now {
                break;
            }
            self.busy_until = None;
            self.start_next(t, pool);
        }
    }

    /// The transmitter is idle at `t`: take the next packet from the queue.
    fn start_next(&mut self, t: SimTime, pool: &mut Pool) {
        self.dropped.clear();
        let next = self.queue.dequeue(t, &mut self.dropped);
        for d in &self.dropped {
            self.counters.queue_drops += 1;
            pool.release(d.id as Slot);
        }
        let Some(d) = next else { return };
        let slot = d.pkt.id as Slot;
        if d.mark {
            self.counters.marks += 1;
            ip::set_ce(pool.packet_mut(slot));
        }
        let done = t + self.tx_time(d.pkt.bytes as usize);
        self.busy_until = Some(done);
        self.seq += 1;
        self.delay_line.push(Reverse((done + self.p.delay, self.seq, slot)));
    }

    /// The earliest time something happens without a new arrival: the transmitter frees or a
    /// packet is due for release.
    pub fn next_event(&self) -> Option<SimTime> {
        let release = self.delay_line.peek().map(|Reverse((t, _, _))| *t);
        match (self.busy_until, release) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// The next packet whose release time is ≤ `now`, with that release time; the caller writes
    /// it out, counts it with [`Link::count_out`] and releases the slot.
    pub fn pop_due(&mut self, now: SimTime) -> Option<(Slot, SimTime)> {
        match self.delay_line.peek() {
            Some(Reverse((t, _, _))) if *t <= now => {
                let Reverse((t, _, slot)) = self.delay_line.pop().expect("peeked");
                Some((slot, t))
            }
            _ => None,
        }
    }

    pub fn count_out(&mut self, bytes: usize) {
        self.counters.packets_out += 1;
        self.counters.bytes_out += bytes as u64;
    }

    /// Gives every held packet's slot back (shutdown).
    pub fn drain(&mut self, pool: &mut Pool) -> usize {
        let mut n = 0;
        while let Some(Reverse((_, _, s))) = self.delay_line.pop() {
            pool.release(s);
            n += 1;
        }
        while let Some(d) = self.queue.dequeue(SimTime::ZERO, &mut self.dropped) {
            pool.release(d.pkt.id as Slot);
            n += 1;
        }
        for d in self.dropped.drain(..) {
            pool.release(d.id as Slot);
            n += 1;
        }
        self.busy_until = None;
        n
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use iwlab_core::net::queue::{CodelConfig, Limit, RedConfig};

    const MS: u64 = 1_000_000;
    const US: u64 = 1_000;

    fn at(ns: u64) -> SimTime {
        SimTime::from_nanos(ns)
    }

    /// A fake clock and a fake TUN: packets are `bytes` long with a payload tag; `run_until`
    /// plays the relay's loop (advance, then release what is due) at the given instants.
    struct Bench {
        link: Link,
        pool: Pool,
        /// (release time, bytes, tag) of every packet released, in order.
        out: Vec<(SimTime, usize, u8)>,
    }

    impl Bench {
        fn new(rate_bps: u64, delay_ms: u64, queue: QueueConfig, loss: f64) -> Self {
            let p = LinkParams { rate_bps, delay: SimDuration::from_millis(delay_ms), queue, loss };
            Bench { link: Link::new(p, 1, 0, 64), pool: Pool::new(4096, 1600), out: vec![] }
        }
        fn droptail(rate_bps: u64, delay_ms: u64, limit: u32) -> Self {
            Self::new(rate_bps, delay_ms, QueueConfig::DropTail { limit: Limit::Packets(limit) }, 0.0)
        }
        /// An IPv4 packet of `bytes` with TOS `tos` and a tag in its last byte.
        fn packet(bytes: usize, tos: u8, tag: u8) -> Vec<u8> {
            let mut p = vec![0u8; bytes];
            p[0] = 0x45;
            p[1] = tos;
            p[bytes - 1] = tag;
            p
        }
        fn send(&mut self, ns: u64, bytes: usize, tag: u8) -> Arrival {
            self.send_tos(ns, bytes, 0, tag)
        }
        fn send_tos(&mut self, ns: u64, bytes: usize, tos: u8, tag: u8) -> Arrival {
            self.run_until(ns);
            let s = self.pool.store(&Self::packet(bytes, tos, tag)).unwrap();
            self.link.arrive(at(ns), s, &mut self.pool)
        }
        /// Wakes at every event up to `ns`, as the relay would with a perfect timer.
        fn run_until(&mut self, ns: u64) {
            while let Some(t) = self.link.next_event().filter(|t| t.as_nanos() <= ns) {
                self.link.advance(t, &mut self.pool);
                while let Some((s, due)) = self.link.pop_due(t) {
                    let p = self.pool.packet(s);
                    self.out.push((due, p.len(), *p.last().unwrap()));
                    self.link.count_out(p.len());
                    self.pool.release(s);
                }
            }
        }
        fn released(&self) -> Vec<(u64, u8)> {
            self.out.iter().map(|(t, _, tag)| (t.as_nanos(), *tag)).collect()
        }
    }

    #[test]
    fn one_packet_is_released_after_serialisation_plus_delay() {
        // 1500 B at 10 Mb/s = 1.2 ms; + 25 ms.
        let mut b = Bench::droptail(10_000_000, 25, 100);
        assert_eq!(b.send(1000, 1500, 7), Arrival::Queued);
        assert_eq!(b.link.next_event(), Some(at(1000 + 1200 * US)), "transmitter frees first");
        b.run_until(u64::MAX);
        assert_eq!(b.released(), [(1000 + 1200 * US + 25 * MS, 7)]);
        assert_eq!(b.link.next_event(), None);
        assert_eq!(b.pool.in_use(), 0);
    }

    #[test]
    fn back_to_back_packets_depart_at_max_of_arrival_and_previous_departure_plus_tx_time() {
        // 1.5 Mb/s: 1500 B = 8 ms, 40 B = 213 333.33.. → 213 334 ns (rounded up).
        let mut b = Bench::droptail(1_500_000, 50, 100);
        b.send(0, 1500, 1); // departs 8 ms
        b.send(MS, 1500, 2); // waits: departs 16 ms
        b.send(2 * MS, 40, 3); // waits: departs 16 ms + 213 334 ns
        b.send(30 * MS, 1500, 4); // link idle again: departs 38 ms
        b.run_until(u64::MAX);
        assert_eq!(
            b.released(),
            [(58 * MS, 1), (66 * MS, 2), (66 * MS + 213_334, 3), (88 * MS, 4)],
            "departure + 50 ms"
        );
        assert_eq!(b.link.tx_time(40), SimDuration::from_nanos(213_334));
    }

    #[test]
    fn a_late_wake_up_dequeues_at_the_virtual_time_the_transmitter_freed() {
        // Two packets at t = 0; the relay only looks again at 5 ms: the second still departs at
        // 2.4 ms (10 Mb/s), not at 5 ms + 1.2 ms.
        let mut b = Bench::droptail(10_000_000, 10, 100);
        b.send(0, 1500, 1);
        b.send(0, 1500, 2);
        b.link.advance(at(5 * MS), &mut b.pool);
        assert_eq!(b.link.next_event(), Some(at(1200 * US + 10 * MS)));
        b.run_until(u64::MAX);
        assert_eq!(b.released(), [(1200 * US + 10 * MS, 1), (2400 * US + 10 * MS, 2)]);
    }

    #[test]
    fn droptail_counts_the_queue_not_the_packet_in_the_transmitter() {
        // Limit 2: one serialising + two queued; the fourth arrival at the same instant drops.
        let mut b = Bench::droptail(10_000_000, 1, 2);
        let v: Vec<_> = (0..4).map(|i| b.send(0, 1500, i)).collect();
        assert_eq!(v, [Arrival::Queued, Arrival::Queued, Arrival::Queued, Arrival::QueueDropped]);
        // At 1.2 ms the transmitter takes the next: there is room for one more.
        assert_eq!(b.send(1200 * US, 1500, 9), Arrival::Queued);
        assert_eq!(b.send(1200 * US, 1500, 10), Arrival::QueueDropped);
        b.run_until(u64::MAX);
        assert_eq!(b.released().iter().map(|r| r.1).collect::<Vec<_>>(), [0, 1, 2, 9]);
        let c = &b.link.counters;
        assert_eq!((c.packets_in, c.packets_out, c.queue_drops, c.queue_peak_packets), (6, 4, 2, 2));
        assert_eq!(b.pool.in_use(), 0, "dropped packets' slots are back in the pool");
    }

    #[test]
    fn sustained_overload_is_paced_at_exactly_the_link_rate() {
        // 1000 × 1250 B offered at once over 100 Mb/s (100 µs each): the k-th leaves at
        // (k+1)·100 µs, so the last is released at 100 ms + delay.
        let mut b = Bench::droptail(100_000_000, 25, 1000);
        for i in 0..1000 {
            b.send(0, 1250, (i % 256) as u8);
        }
        b.run_until(u64::MAX);
        assert_eq!(b.out.len(), 1000);
        for (k, (t, _, _)) in b.out.iter().enumerate() {
            assert_eq!(t.as_nanos(), (k as u64 + 1) * 100 * US + 25 * MS);
        }
    }

    #[test]
    fn bernoulli_loss_drops_the_expected_share_and_is_seeded() {
        let run = |seed| {
            let p = LinkParams {
                rate_bps: 1_000_000_000,
                delay: SimDuration::ZERO,
                queue: QueueConfig::DropTail { limit: Limit::Packets(100_000) },
                loss: 0.1,
            };
            let mut link = Link::new(p, seed, 0, 16);
            let mut pool = Pool::new(16, 64);
            (0..10_000)
                .map(|i| {
                    let now = at(i * MS);
                    link.advance(now, &mut pool);
                    while let Some((s, _)) = link.pop_due(now) {
                        pool.release(s);
                    }
                    let s = pool.store(&[0x45; 40]).unwrap();
                    link.arrive(now, s, &mut pool) == Arrival::Lost
                })
                .collect::<Vec<bool>>()
        };
        let a = run(7);
        let lost = a.iter().filter(|x| **x).count();
        assert!((900..1100).contains(&lost), "{lost} of 10000 lost at p = 0.1");
        assert_eq!(a, run(7), "same seed, same losses");
        assert_ne!(a, run(8));
    }

    #[test]
    fn codel_drops_at_dequeue_with_the_virtual_dequeue_time() {
        // 1 Mb/s, 1250 B = 10 ms each: a standing queue of 30 packets offered at t = 0 makes
        // sojourn times exceed 5 ms from the second packet on; CoDel's first drop comes when a
        // packet is dequeued ≥ 100 ms after the first above-target dequeue (at 10 ms): at 110 ms.
        let mut b = Bench::new(1_000_000, 0, QueueConfig::Codel(CodelConfig::default()), 0.0);
        for i in 0..30 {
            b.send(0, 1250, i);
        }
        b.run_until(109 * MS);
        assert_eq!(b.link.counters.queue_drops, 0);
        b.run_until(110 * MS);
        assert_eq!(b.link.counters.queue_drops, 1);
        // Packets 0..=10 were sent; 11 was dropped at 110 ms and 12 took its place.
        b.run_until(120 * MS);
        let tags: Vec<u8> = b.released().iter().map(|r| r.1).collect();
        assert_eq!(tags, (0..=10).chain([12]).collect::<Vec<u8>>());
        assert_eq!(b.released().last().unwrap().0, 120 * MS);
    }

    #[test]
    fn codel_with_ecn_marks_ect_packets_instead_of_dropping_them() {
        let cfg = CodelConfig { ecn: true, ..CodelConfig::default() };
        let mut b = Bench::new(1_000_000, 0, QueueConfig::Codel(cfg), 0.0);
        for i in 0..30 {
            b.send_tos(0, 1250, 0x02, i);
        }
        b.run_until(200 * MS);
        assert_eq!((b.link.counters.queue_drops, b.link.counters.marks), (0, 1));
        assert_eq!(b.out.len(), 20);
        assert_eq!(b.pool.in_use(), 10);
    }

    #[test]
    fn red_drops_early_once_the_average_queue_grows() {
        // Heavy overload (offered 10× the rate) against RED with a fast average: early drops
        // appear before the hard limit is ever reached.
        let cfg = RedConfig { w_q: 0.2, limit: Limit::Packets(1000), ..RedConfig::default() };
        let mut b = Bench::new(1_000_000, 0, QueueConfig::Red(cfg), 0.0);
        for i in 0..2000u64 {
            b.send(i * 100 * US, 125, (i % 256) as u8);
        }
        let c = &b.link.counters;
        assert!(c.queue_drops > 0);
        assert!(c.queue_peak_packets < 40, "peak {}", c.queue_peak_packets);
    }

    #[test]
    fn drain_returns_every_slot() {
        let mut b = Bench::droptail(1_000_000, 100, 100);
        for i in 0..10 {
            b.send(0, 1000, i);
        }
        b.run_until(20 * MS);
        assert_eq!(b.link.drain(&mut b.pool), 10);
        assert_eq!(b.pool.in_use(), 0);
    }
}

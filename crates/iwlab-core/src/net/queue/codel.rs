//! CoDel: Controlled Delay AQM (RFC 8289), the pseudocode of RFC 8289 §5 line by line.
//!
//! Packets are timestamped at enqueue; at dequeue the sojourn time of the head packet is
//! compared with `target`. Once it has stayed at or above `target` for `interval`, CoDel
//! drops one head packet and enters the dropping state, in which it drops at times following
//! the control law `drop_next = t + interval / √count` until the sojourn time falls below
//! `target` again. Dropped packets are appended to the `dropped` vector passed to `dequeue`.
//!
//! Choices the RFC leaves open, each documented at the line:
//! - ECN: the RFC's pseudocode only drops; with `ecn` on, an ECT packet is instead marked CE
//!   and delivered, and the next drop is scheduled as if it had been dropped (Linux
//!   `codel_dequeue()`);
//! - `interval / √count` is computed exactly, rounded down to whole nanoseconds, with an
//!   integer square root (no float, and not Linux's approximate Newton step on 1/√count);
//! - "no time set" (`first_above_time_ == 0`) is an `Option`.

use super::{droptail::DropTail, Dequeued, Limit, QueueDisc, QueuedPkt, Verdict};
use crate::engine::{SimDuration, SimRng, SimTime};

/// CoDel parameters. Defaults: RFC 8289 §5 constants (TARGET 5 ms, INTERVAL 100 ms), MTU 1514
/// bytes, a 1000-packet limit (Linux `sch_codel`'s default limit).
#[derive(Clone, Debug, PartialEq)]
pub struct CodelConfig {
    /// Hard limit of the queue (packets or bytes); an arrival beyond it is dropped.
    pub limit: Limit,
    /// Acceptable standing queue delay (RFC 8289 §5 `TARGET`: 5 ms). Valid: > 0, < `interval`.
    pub target: SimDuration,
    /// Sliding window for the minimum sojourn time (RFC 8289 §5 `INTERVAL`: 100 ms).
    /// Valid: > 0.
    pub interval: SimDuration,
    /// Mark ECN-capable packets CE instead of dropping them.
    pub ecn: bool,
    /// Bytes: no drop while the queue holds at most this much after the head packet leaves
    /// (RFC 8289 §5 `maxpacket`, "SHOULD use interface MTU"). Default 1514 = Ethernet MTU 1500
    /// + 14-byte header, what Linux `sch_codel` uses (`psched_mtu()`).
    pub mtu: u32,
}

impl Default for CodelConfig {
    fn default() -> Self {
        CodelConfig {
            limit: Limit::Packets(1000),
            target: SimDuration::from_millis(5),
            interval: SimDuration::from_millis(100),
            ecn: false,
            mtu: 1514,
        }
    }
}

impl CodelConfig {
    /// Checks the ranges documented on each field; the message names field, value and range.
    pub fn validate(&self) -> Result<(), String> {
        if self.interval == SimDuration::ZERO {
            return Err(format!("CoDel interval = {} is out of range; allowed: > 0", self.interval));
        }
        if self.target == SimDuration::ZERO || self.target >= self.interval {
            return Err(format!(
                "CoDel target = {} is out of range; allowed: > 0 and < interval ({})",
                self.target, self.interval
            ));
        }
        Ok(())
    }
}

/// RFC 8289 §5 `dodequeue_result`.
struct DoDequeue {
    pkt: Option<QueuedPkt>,
    ok_to_drop: bool,
}

pub struct Codel {
    cfg: CodelConfig,
    fifo: DropTail,
    /// When the sojourn time will have been above target for a whole interval; `None` while
    /// below (RFC 8289: `first_above_time_ = 0`).
    first_above_time: Option<SimTime>,
    /// Time of the next drop in the dropping state.
    drop_next: SimTime,
    /// Drops since entering the dropping state (plus the entry value).
    count: u32,
    /// `count` when the dropping state was last entered.
    lastcount: u32,
    dropping: bool,
}

impl Codel {
    pub fn new(cfg: CodelConfig) -> Self {
        debug_assert!(cfg.validate().is_ok(), "{:?}", cfg.validate());
        Codel {
            fifo: DropTail::new(cfg.limit),
            cfg,
            first_above_time: None,
            drop_next: SimTime::ZERO,
            count: 0,
            lastcount: 0,
            dropping: false,
        }
    }

    /// In the dropping state?
    pub fn dropping(&self) -> bool {
        self.dropping
    }

    /// RFC 8289 §5 `control_law`: t + interval / √count, rounded down to whole nanoseconds,
    /// computed exactly as ⌊√(interval² / count)⌋ (⌊√⌊x⌋⌋ = ⌊√x⌋).
    fn control_law(&self, t: SimTime, count: u32) -> SimTime {
        let i = self.cfg.interval.as_nanos() as u128;
        t + SimDuration::from_nanos(isqrt(i * i / count.max(1) as u128) as u64)
    }

    /// RFC 8289 §5 `dodequeue`: takes the head packet and says whether its sojourn time has
    /// been at or above target for at least an interval.
    fn dodequeue(&mut self, now: SimTime) -> DoDequeue {
        let Some(pkt) = self.fifo.pop() else {
            // Queue is empty: we can't be above target.
            self.first_above_time = None;
            return DoDequeue { pkt: None, ok_to_drop: false };
        };
        let sojourn_time = now.saturating_since(pkt.enqueued);
        let mut ok_to_drop = false;
        if sojourn_time < self.cfg.target || self.fifo.len_bytes() <= self.cfg.mtu as u64 {
            // Went below (or at most one MTU is left): stay below for at least an interval.
            self.first_above_time = None;
        } else {
            match self.first_above_time {
                // Just went above from below: if still above then, it's OK to drop.
                None => self.first_above_time = Some(now + self.cfg.interval),
                Some(t) => ok_to_drop = now >= t,
            }
        }
        DoDequeue { pkt: Some(pkt), ok_to_drop }
    }
}

/// ⌊√n⌋ by integer Newton iteration from above (RFC 8289 notes that the square root of the
/// control law can be computed with integer arithmetic).
fn isqrt(n: u128) -> u128 {
    if n < 2 {
        return n;
    }
    let mut x = 1u128 << (128 - n.leading_zeros()).div_ceil(2); // > √n
    loop {
        let y = (x + n / x) / 2;
        if y >= x {
            return x;
        }
        x = y;
    }
}

impl QueueDisc for Codel {
    /// RFC 8289 §5 enqueue: timestamp the packet; plus the hard limit.
    fn enqueue(&mut self, pkt: QueuedPkt, now: SimTime, _rng: &mut SimRng) -> Verdict {
        if !self.fifo.fits(&pkt) {
            return Verdict::Dropped;
        }
        self.fifo.push(QueuedPkt { enqueued: now, ..pkt });
        Verdict::Enqueued
    }

    /// RFC 8289 §5 dequeue.
    fn dequeue(&mut self, now: SimTime, dropped: &mut Vec<QueuedPkt>) -> Option<Dequeued> {
        let mut r = self.dodequeue(now);
        let ecn = self.cfg.ecn;
        if self.dropping {
            if !r.ok_to_drop {
                // Sojourn time below target: leave the dropping state.
                self.dropping = false;
            }
            // Time for the next drop(s); a large backlog may call for several now.
            while now >= self.drop_next && self.dropping {
                let pkt = r.pkt.expect("ok_to_drop implies a packet");
                self.count = self.count.wrapping_add(1);
                if ecn && pkt.ect {
                    // Linux codel_dequeue(): mark, schedule the next signal, deliver.
                    self.drop_next = self.control_law(self.drop_next, self.count);
                    return Some(Dequeued { pkt, mark: true });
                }
                dropped.push(pkt);
                r = self.dodequeue(now);
                if !r.ok_to_drop {
                    self.dropping = false;
                } else {
                    self.drop_next = self.control_law(self.drop_next, self.count);
                }
            }
        } else if r.ok_to_drop {
            // Above target for an interval: drop (or mark) and enter the dropping state.
            let pkt = r.pkt.expect("ok_to_drop implies a packet");
            let mark = ecn && pkt.ect;
            if !mark {
                dropped.push(pkt);
                r = self.dodequeue(now);
            }
            self.dropping = true;
            // If we were dropping recently, restart from the drop rate that controlled the
            // queue last time (RFC 8289 §5, "the Linux version"). `now - drop_next` saturates
            // at 0 where the RFC's unsigned time would wrap; drop_next ≤ now whenever
            // delta > 1, since leaving and re-entering takes at least an interval.
            let delta = self.count.wrapping_sub(self.lastcount);
            self.count = 1;
            if delta > 1 && now.saturating_since(self.drop_next) < self.cfg.interval.saturating_mul(16) {
                self.count = delta;
            }
            self.drop_next = self.control_law(now, self.count);
            self.lastcount = self.count;
            if mark {
                return Some(Dequeued { pkt, mark: true });
            }
        }
        r.pkt.map(|pkt| Dequeued { pkt, mark: false })
    }

    fn len_packets(&self) -> usize {
        self.fifo.len_packets()
    }

    fn len_bytes(&self) -> u64 {
        self.fifo.len_bytes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::{RngStreams, StreamKind};

    const MS: u64 = 1_000_000;
    /// 100 ms / √2 and 100 ms / √3, rounded down: 70 710 678.1… and 57 735 026.9… ns.
    const I_SQRT2: u64 = 70_710_678;
    const I_SQRT3: u64 = 57_735_026;

    fn at(ns: u64) -> SimTime {
        SimTime::from_nanos(ns)
    }
    fn pkt(id: usize) -> QueuedPkt {
        QueuedPkt { id, bytes: 1500, ect: false, enqueued: SimTime::ZERO }
    }
    fn ect(id: usize) -> QueuedPkt {
        QueuedPkt { ect: true, ..pkt(id) }
    }
    struct Run {
        q: Codel,
        rng: SimRng,
        dropped: Vec<QueuedPkt>,
    }
    impl Run {
        fn new(cfg: CodelConfig) -> Self {
            let rng = RngStreams::new(1).stream(StreamKind::Queue, 0);
            Run { q: Codel::new(cfg), rng, dropped: vec![] }
        }
        fn put(&mut self, p: QueuedPkt, ns: u64) {
            assert_eq!(self.q.enqueue(p, at(ns), &mut self.rng), Verdict::Enqueued);
        }
        /// Dequeues at `ns`; returns (id, mark) of the packet sent and the ids dropped.
        fn take(&mut self, ns: u64) -> (Option<(usize, bool)>, Vec<usize>) {
            self.dropped.clear();
            let d = self.q.dequeue(at(ns), &mut self.dropped);
            (d.map(|d| (d.pkt.id, d.mark)), self.dropped.iter().map(|p| p.id).collect())
        }
    }

    /// Every ms k ≥ 5: packet k arrives, then the one that arrived `lag_ms` earlier leaves.
    /// Returns each drop as (ms, id).
    fn steady(cfg: CodelConfig, lag_ms: u64, until_ms: u64, make: fn(usize) -> QueuedPkt) -> Vec<(u64, usize)> {
        let mut run = Run::new(cfg);
        for k in 0..lag_ms {
            run.put(make(k as usize), k * MS);
        }
        let mut drops = vec![];
        for k in lag_ms..until_ms {
            run.put(make(k as usize), k * MS);
            let (sent, dropped) = run.take(k * MS);
            assert!(sent.is_some());
            drops.extend(dropped.into_iter().map(|id| (k, id)));
        }
        drops
    }

    #[test]
    fn no_drops_while_the_sojourn_time_stays_below_target() {
        // Every packet waits 4 ms < 5 ms, with 4–5 packets (> 1 MTU) queued, for 1 s.
        assert_eq!(steady(CodelConfig::default(), 4, 1000, pkt), []);
    }

    #[test]
    fn the_first_drop_comes_a_full_interval_after_the_sojourn_time_reached_target() {
        // Every packet waits exactly 5 ms (≥ target). At 5 ms the head is above target:
        // first_above_time = 105 ms. At 105 ms packet 100 is dropped, packet 101 (4 ms) is sent.
        // The queue is now one packet shorter, sojourn 4 ms: no further drop.
        assert_eq!(steady(CodelConfig::default(), 5, 1000, pkt), [(105, 100)]);
    }

    #[test]
    fn dropping_state_is_left_when_the_sojourn_time_falls_below_target() {
        let mut run = Run::new(CodelConfig::default());
        for k in 0..5 {
            run.put(pkt(k), k as u64 * MS);
        }
        for k in 5..=105 {
            run.put(pkt(k), k as u64 * MS);
            run.take(k as u64 * MS);
        }
        assert!(run.q.dropping());
        assert_eq!((run.q.count, run.q.drop_next), (1, at(205 * MS)));
        run.put(pkt(106), 106 * MS);
        assert_eq!(run.take(106 * MS), (Some((102, false)), vec![])); // sojourn 4 ms
        assert!(!run.q.dropping());
    }

    /// 1000 packets queued at t = 0, so every sojourn time is ≥ target from 5 ms on.
    fn standing_queue(cfg: CodelConfig, make: fn(usize) -> QueuedPkt) -> Run {
        let mut run = Run::new(cfg);
        for id in 0..1000 {
            run.put(make(id), 0);
        }
        run
    }

    #[test]
    fn drops_are_spaced_by_interval_over_the_square_root_of_count() {
        let mut run = standing_queue(CodelConfig::default(), pkt);
        assert_eq!(run.take(10 * MS), (Some((0, false)), vec![])); // first_above_time = 110 ms
        assert_eq!(run.take(110 * MS - 1).1, Vec::<usize>::new());
        assert_eq!(run.take(110 * MS).1, vec![2]); // 1st drop; count 1, next at +100 ms
        assert_eq!(run.take(210 * MS - 1).1, Vec::<usize>::new());
        assert_eq!(run.take(210 * MS).1, vec![5]); // 2nd; count 2, next at +100 ms/√2
        assert_eq!(run.take(210 * MS + I_SQRT2 - 1).1, Vec::<usize>::new());
        assert_eq!(run.take(210 * MS + I_SQRT2).1, vec![8]); // 3rd; count 3, next +100 ms/√3
        assert_eq!(run.take(210 * MS + I_SQRT2 + I_SQRT3 - 1).1, Vec::<usize>::new());
        assert_eq!(run.take(210 * MS + I_SQRT2 + I_SQRT3).1, vec![11]); // 4th
        assert_eq!(run.q.count, 4);
    }

    #[test]
    fn control_law_is_exact_to_the_nanosecond() {
        let q = Codel::new(CodelConfig::default());
        assert_eq!(q.control_law(at(0), 1), at(100 * MS));
        assert_eq!(q.control_law(at(0), 2), at(I_SQRT2));
        assert_eq!(q.control_law(at(0), 3), at(I_SQRT3));
        assert_eq!(q.control_law(at(7), 4), at(7 + 50 * MS));
        assert_eq!(q.control_law(at(0), 100), at(10 * MS));
        assert_eq!((isqrt(0), isqrt(1), isqrt(15), isqrt(16), isqrt(u128::MAX)), (0, 1, 3, 4, u64::MAX as u128));
    }

    /// Three drops (count 3, lastcount 1, drop_next = 210 ms + 100 ms/√2 + 100 ms/√3
    /// = 338.445704 ms), then fresh packets 100..110 (arrived at 299 ms) reach the head: the
    /// sojourn time falls below target and the dropping state is left at 303 ms.
    fn three_drops_then_below_target() -> Run {
        let mut run = Run::new(CodelConfig::default());
        for id in 0..10 {
            run.put(pkt(id), 0);
        }
        run.take(10 * MS); // 0 sent; first_above_time = 110 ms
        assert_eq!(run.take(110 * MS).1, vec![1]); // count 1 = lastcount
        assert_eq!(run.take(210 * MS).1, vec![3]); // count 2
        assert_eq!(run.take(210 * MS + I_SQRT2).1, vec![5]); // count 3
        assert_eq!(run.q.drop_next, at(210 * MS + I_SQRT2 + I_SQRT3));
        for id in 100..110 {
            run.put(pkt(id), 299 * MS);
        }
        for (ms, old) in [(300, 7), (301, 8), (302, 9)] {
            assert_eq!(run.take(ms * MS), (Some((old, false)), vec![])); // before drop_next
        }
        assert!(run.q.dropping());
        assert_eq!(run.take(303 * MS), (Some((100, false)), vec![])); // 4 ms < target
        assert!(!run.q.dropping());
        run
    }

    #[test]
    fn reentering_soon_after_dropping_resumes_the_previous_drop_rate() {
        // RFC 8289 §5: count − lastcount > 1 and now − drop_next < 16 intervals → count = delta.
        let mut run = three_drops_then_below_target();
        // 101 leaves after 11 ms: first_above_time = 410 ms.
        run.take(310 * MS);
        // Re-entry at 410 ms: delta = 3 − 1 = 2 and 410 − 338.4 ms < 1.6 s, so count = 2
        // and the next drop comes 100 ms/√2 later instead of 100 ms.
        assert_eq!(run.take(410 * MS).1, vec![102]);
        assert_eq!((run.q.count, run.q.lastcount), (2, 2));
        assert_eq!(run.take(410 * MS + I_SQRT2 - 1).1, Vec::<usize>::new());
        assert_eq!(run.take(410 * MS + I_SQRT2).1, vec![105]);
    }

    #[test]
    fn reentering_long_after_dropping_starts_again_from_count_one() {
        let mut run = three_drops_then_below_target();
        // 101 leaves: first_above_time = 2.1 s.
        run.take(2_000 * MS);
        // 2.1 s − 338.4 ms ≥ 16 × 100 ms: count = 1, next drop a full interval later.
        assert_eq!(run.take(2_100 * MS).1, vec![102]);
        assert_eq!((run.q.count, run.q.lastcount), (1, 1));
        assert_eq!(run.q.drop_next, at(2_200 * MS));
    }

    #[test]
    fn no_drop_while_at_most_one_mtu_is_left_behind_the_head_packet() {
        // Every 10 ms one 1500-byte packet arrives and the previous one (10 ms ≥ target) leaves,
        // leaving 1500 bytes queued: ≤ 1514, never a drop. With mtu 1499 the first drop is
        // one interval after the first above-target dequeue (10 ms): packet 10 at 110 ms.
        let every_10ms = |mtu| {
            let mut run = Run::new(CodelConfig { mtu, ..CodelConfig::default() });
            run.put(pkt(0), 0);
            let mut drops = vec![];
            for k in 1..100u64 {
                run.put(pkt(k as usize), k * 10 * MS);
                drops.extend(run.take(k * 10 * MS).1.into_iter().map(|id| (k * 10, id)));
            }
            drops
        };
        assert_eq!(every_10ms(1514), []);
        assert_eq!(every_10ms(1499), [(110, 10)]);
    }

    #[test]
    fn with_ecn_ect_packets_are_marked_and_delivered_instead_of_dropped() {
        let cfg = CodelConfig { ecn: true, ..CodelConfig::default() };
        assert_eq!(steady(cfg.clone(), 5, 1000, ect), []);
        let mut run = standing_queue(cfg.clone(), ect);
        run.take(10 * MS);
        assert_eq!(run.take(110 * MS), (Some((1, true)), vec![])); // would have dropped 1
        assert!(run.q.dropping());
        assert_eq!(run.take(110 * MS + 1), (Some((2, false)), vec![]));
        assert_eq!(run.take(210 * MS), (Some((3, true)), vec![])); // count 2
        assert_eq!(run.take(210 * MS + I_SQRT2), (Some((4, true)), vec![])); // count 3

        // Not ECT: dropped as usual even with ecn on.
        assert_eq!(steady(cfg, 5, 1000, pkt), [(105, 100)]);
    }

    #[test]
    fn the_hard_limit_drops_arrivals() {
        let mut run = Run::new(CodelConfig { limit: Limit::Packets(2), ..CodelConfig::default() });
        run.put(pkt(0), 0);
        run.put(pkt(1), 0);
        assert_eq!(run.q.enqueue(ect(2), at(0), &mut run.rng), Verdict::Dropped);
        assert_eq!((run.q.len_packets(), run.q.len_bytes()), (2, 3000));
    }

    #[test]
    fn enqueue_stamps_the_arrival_time_and_an_empty_queue_resets_first_above_time() {
        let mut run = Run::new(CodelConfig::default());
        run.q.enqueue(pkt(0), at(3 * MS), &mut run.rng);
        assert_eq!(run.q.fifo.front().unwrap().enqueued, at(3 * MS));
        run.take(4 * MS);
        run.q.first_above_time = Some(at(MS));
        assert_eq!(run.take(5 * MS), (None, vec![]));
        assert_eq!(run.q.first_above_time, None);
    }

    #[test]
    fn validate_names_the_field_value_and_range() {
        assert_eq!(CodelConfig::default().validate(), Ok(()));
        let bad = CodelConfig { target: SimDuration::from_millis(100), ..CodelConfig::default() };
        assert_eq!(
            bad.validate().unwrap_err(),
            "CoDel target = 0.100000000s is out of range; \
             allowed: > 0 and < interval (0.100000000s)"
        );
    }
}

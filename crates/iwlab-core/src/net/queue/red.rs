//! RED: Random Early Detection (S. Floyd, V. Jacobson, "Random Early Detection Gateways for
//! Congestion Avoidance", IEEE/ACM ToN 1(4), 1993; "F&J" below), following ns-2.35's
//! `queue/red.cc` where the paper leaves a choice.
//!
//! On every arrival the average queue is updated, then the packet is
//! - dropped if the hard limit is reached (a "forced" drop, ECN or not);
//! - enqueued if `avg < min_th`;
//! - dropped if `avg` is at or above the ceiling (`max_th`, or `2·max_th` with `gentle`), even
//!   when it is ECN-capable;
//! - otherwise dropped — or marked CE when `ecn` is on and the packet is ECT — with probability
//!   `p_a` ([`Red::drop_probability`]).
//!
//! Where this differs from ns-2.35 (each documented at the line):
//! - `count` is the paper's (§7: unmarked packets since the last mark, not counting the arrival;
//!   always in packets); ns-2 counts the arrival too, skips the test for the first arrival after
//!   `avg` crosses `min_th`, and by default (`wait_ true`) uses another uniformisation. ns-2's
//!   "no early drop when the queue holds ≤ 1 packet" rule is not kept.
//! - Byte mode scales `p_b` before uniformisation (F&J §4); ns-2 scales `p_a` after it.
//! - Idle time starts when the queue empties (F&J); ns-2 starts it when the link next polls.
//! - The ceiling drops ECT packets too, as ns-2 does with `use_mark_p_ false` and as RFC 3168 §7
//!   recommends ("During periods where the average queue size exceeds an upper threshold ...
//!   routers drop packets rather than set the CE codepoint"). ns-2.35's default
//!   `use_mark_p_ true` instead drops ECT packets whenever `p_b > mark_p` (0.1).

use super::{droptail::DropTail, Dequeued, Limit, QueueDisc, QueuedPkt, Verdict};
use crate::engine::{SimDuration, SimRng, SimTime};
use rand::Rng;

/// RED parameters. Defaults: see [`RedConfig::default`].
#[derive(Clone, Debug, PartialEq)]
pub struct RedConfig {
    /// Hard limit of the queue (packets or bytes); an arrival beyond it is always dropped.
    pub limit: Limit,
    /// Minimum threshold of the average queue, in packets (× `mean_pkt_size` bytes in byte
    /// mode). Valid: ≥ 0.
    pub min_th: f64,
    /// Maximum threshold of the average queue, same unit as `min_th`. Valid: ≥ `min_th`.
    pub max_th: f64,
    /// Early-drop probability `p_b` reached at `avg = max_th` (ns-2: `1 / linterm_`).
    /// Valid: 0..=1.
    pub max_p: f64,
    /// Weight of the EWMA of the queue length (F&J `w_q`), per arrival. Valid: 0..=1.
    pub w_q: f64,
    /// "Gentle" RED: between `max_th` and `2·max_th` `p_b` rises linearly from `max_p` to 1
    /// instead of jumping to 1.
    pub gentle: bool,
    /// Mark ECN-capable (ECT) packets CE instead of dropping them early (RFC 3168).
    pub ecn: bool,
    /// Mean packet size, bytes: sets the idle-time decay (packets that could have been sent)
    /// and, in byte mode, the threshold unit and the size scaling of `p_b`. Valid: > 0.
    pub mean_pkt_size: u32,
    /// Byte mode: measure the queue in bytes (thresholds × `mean_pkt_size`) and scale `p_b` by
    /// `pkt_bytes / mean_pkt_size` (ns-2 `queue_in_bytes_` and `bytes_` both true).
    pub byte_mode: bool,
}

impl Default for RedConfig {
    /// ns-2-like values:
    /// - `min_th` 5, `max_th` 15, `w_q` 0.002: ns-2's `thresh_`, `maxthresh_`, `q_weight_`
    ///   before the 12/29/01 switch to automatic configuration (ns-2.35 `ns-default.tcl` sets
    ///   0, 0 and -1 = "auto" and keeps the old values as comments);
    /// - `max_p` 0.1: ns-2.35 `linterm_ 10`;
    /// - `gentle` true: ns-2.35 `gentle_ true` (changed from false on Apr 23, 2001);
    /// - `ecn` false: ns-2.35 `setbit_ false`;
    /// - `byte_mode` false (ns-2.35 sets `bytes_` and `queue_in_bytes_` true since 10/11/2004);
    /// - `mean_pkt_size` 1000 (ns-2.35: `mean_pktsize_ 500`);
    /// - `limit` 25 packets (ns-2.35: `Queue set limit_ 50`).
    fn default() -> Self {
        RedConfig {
            limit: Limit::Packets(25),
            min_th: 5.0,
            max_th: 15.0,
            max_p: 0.1,
            w_q: 0.002,
            gentle: true,
            ecn: false,
            mean_pkt_size: 1000,
            byte_mode: false,
        }
    }
}

impl RedConfig {
    /// Checks the ranges documented on each field; the message names field, value and range.
    pub fn validate(&self) -> Result<(), String> {
        let bad =
            |f: &str, v: &dyn std::fmt::Display, r: &str| Err(format!("RED {f} = {v} is out of range; allowed: {r}"));
        if self.min_th.is_nan() || self.min_th < 0.0 {
            return bad("min_th", &self.min_th, ">= 0");
        }
        if self.max_th.is_nan() || self.max_th < self.min_th {
            return bad("max_th", &self.max_th, ">= min_th");
        }
        if !(0.0..=1.0).contains(&self.max_p) {
            return bad("max_p", &self.max_p, "0..=1");
        }
        if !(0.0..=1.0).contains(&self.w_q) {
            return bad("w_q", &self.w_q, "0..=1");
        }
        if self.mean_pkt_size == 0 {
            return bad("mean_pkt_size", &self.mean_pkt_size, "> 0 bytes");
        }
        Ok(())
    }
}

pub struct Red {
    cfg: RedConfig,
    link_bps: u64,
    fifo: DropTail,
    /// F&J `avg`, in packets (bytes in byte mode).
    avg: f64,
    /// F&J §7 `count`: packets enqueued unmarked since the last drop or mark while
    /// `avg >= min_th`, not counting the arrival being decided.
    count: u64,
    /// F&J `q_time`: since when the queue has been empty; `None` while it holds packets.
    idle_since: Option<SimTime>,
}

impl Red {
    /// `link_bps` is the rate of the link the queue feeds, used to turn idle time into packets.
    pub fn new(cfg: RedConfig, link_bps: u64) -> Self {
        debug_assert!(cfg.validate().is_ok(), "{:?}", cfg.validate());
        Red {
            fifo: DropTail::new(cfg.limit),
            cfg,
            link_bps,
            avg: 0.0,
            count: 0,
            // ns-2 red.cc reset(): idle_ = 1, idletime_ = now.
            idle_since: Some(SimTime::ZERO),
        }
    }

    /// The average queue, in packets (bytes in byte mode).
    pub fn avg(&self) -> f64 {
        self.avg
    }

    /// Thresholds in the unit of the average (bytes in byte mode).
    fn thresholds(&self) -> (f64, f64) {
        let unit = if self.cfg.byte_mode { self.cfg.mean_pkt_size as f64 } else { 1.0 };
        (self.cfg.min_th * unit, self.cfg.max_th * unit)
    }

    /// Above this average every arrival is dropped, ECT or not.
    fn ceiling(&self) -> f64 {
        let (_, max) = self.thresholds();
        if self.cfg.gentle {
            2.0 * max
        } else {
            max
        }
    }

    /// The probability `p_a` that an arrival of `pkt_bytes` is dropped (or marked) early, given
    /// the average `avg` (in the unit of the thresholds) and `count`.
    pub fn drop_probability(&self, avg: f64, count: u64, pkt_bytes: u32) -> f64 {
        let (min, max) = self.thresholds();
        let max_p = self.cfg.max_p;
        let p_b = if avg < min {
            return 0.0;
        } else if avg < max {
            // F&J §4: p_b = max_p (avg − min_th) / (max_th − min_th).
            max_p * (avg - min) / (max - min)
        } else if self.cfg.gentle && avg < 2.0 * max {
            // Gentle RED (ns-2 red.cc calculate_p_new(): v_c·avg + v_d, rewritten):
            // p_b = max_p + (1 − max_p)(avg − max_th) / max_th.
            max_p + (1.0 - max_p) * (avg - max) / max
        } else {
            return 1.0;
        };
        // Byte mode (F&J §4): p_b ← p_b · size / mean size (ns-2 divides by mean_pktsize_).
        let p_b = if self.cfg.byte_mode { p_b * pkt_bytes as f64 / self.cfg.mean_pkt_size as f64 } else { p_b };
        // F&J §7 uniformisation: p_a = p_b / (1 − count·p_b), so that the number of arrivals
        // between drops is uniform on 1..=1/p_b; once count·p_b ≥ 1 the drop is certain.
        let c = count as f64 * p_b;
        if c >= 1.0 {
            1.0
        } else {
            (p_b / (1.0 - c)).min(1.0)
        }
    }

    /// F&J §4: packets of mean size the link could have sent while the queue was idle,
    /// m = ⌊idle · link_bps / (8 · mean_pkt_size)⌋ (ns-2: `int(ptc * (now - idletime_))`),
    /// computed exactly in integers.
    fn idle_packets(&self, idle: SimDuration) -> u64 {
        let per_pkt_bit_ns = 8 * self.cfg.mean_pkt_size as u128 * 1_000_000_000;
        let m = (idle.as_nanos() as u128 * self.link_bps as u128).checked_div(per_pkt_bit_ns);
        m.unwrap_or(0).min(u64::MAX as u128) as u64
    }

    fn queue_len(&self) -> f64 {
        if self.cfg.byte_mode {
            self.fifo.len_bytes() as f64
        } else {
            self.fifo.len_packets() as f64
        }
    }

    /// F&J §4 average on an arrival; `q` is the queue before the arrival joins it.
    fn update_avg(&mut self, now: SimTime) {
        let w = self.cfg.w_q;
        if let Some(since) = self.idle_since.take() {
            // Idle decay: avg ← (1 − w_q)^m · avg. ns-2 enque() then runs the usual update with
            // q = 0 (estimator(q, m + 1, ..)), i.e. the arrival itself counts once more.
            let m = self.idle_packets(now.saturating_since(since));
            self.avg *= (1.0 - w).powi(m.min(i32::MAX as u64) as i32);
        }
        // avg ← (1 − w_q)·avg + w_q·q
        self.avg = (1.0 - w) * self.avg + w * self.queue_len();
    }

    fn decide(&mut self, pkt: &QueuedPkt, rng: &mut SimRng) -> Verdict {
        // Hard limit: a forced drop whatever the ECN capability (ns-2 enque(): qlen >= qlim).
        if !self.fifo.fits(pkt) {
            self.count = 0; // ns-2: forced drops reset count too (bug fix by P. Liu).
            return Verdict::Dropped;
        }
        let (min, _) = self.thresholds();
        if self.avg < min {
            // F&J: avg < min_th → count ← −1, i.e. the next arrival in the band sees 0.
            self.count = 0;
            return Verdict::Enqueued;
        }
        if self.avg >= self.ceiling() {
            // F&J: avg ≥ max_th → mark every arrival. Even with ECN a drop: RFC 3168 §7, routers
            // drop rather than mark above an upper threshold (ns-2: DTYPE_FORCED with
            // use_mark_p_ false).
            self.count = 0;
            return Verdict::Dropped;
        }
        let p_a = self.drop_probability(self.avg, self.count, pkt.bytes);
        if rng.gen::<f64>() < p_a {
            self.count = 0;
            if self.cfg.ecn && pkt.ect {
                Verdict::Marked // RFC 3168 §5: set CE instead of dropping.
            } else {
                Verdict::Dropped
            }
        } else {
            self.count += 1;
            Verdict::Enqueued
        }
    }
}

impl QueueDisc for Red {
    fn enqueue(&mut self, pkt: QueuedPkt, now: SimTime, rng: &mut SimRng) -> Verdict {
        self.update_avg(now);
        let verdict = self.decide(&pkt, rng);
        if verdict != Verdict::Dropped {
            self.fifo.push(pkt);
        }
        if self.fifo.len_packets() == 0 {
            // Dropped on arrival at an empty queue: idle again from now (ns-2 restarts idletime_
            // when the link polls the still-empty queue right after enque()).
            self.idle_since = Some(now);
        }
        verdict
    }

    fn dequeue(&mut self, now: SimTime, _dropped: &mut Vec<QueuedPkt>) -> Option<Dequeued> {
        let pkt = self.fifo.pop()?;
        if self.fifo.len_packets() == 0 {
            // F&J: "when queue becomes empty: q_time ← time". (ns-2 starts idletime_ one
            // transmission later, when the link polls the empty queue.)
            self.idle_since = Some(now);
        }
        Some(Dequeued { pkt, mark: false })
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

    const T0: SimTime = SimTime::ZERO;
    const MBPS_10: u64 = 10_000_000;

    fn rng(seed: u64) -> SimRng {
        RngStreams::new(seed).stream(StreamKind::Queue, 0)
    }
    fn pkt(id: usize) -> QueuedPkt {
        QueuedPkt { id, bytes: 1000, ect: false, enqueued: T0 }
    }
    fn ect(id: usize) -> QueuedPkt {
        QueuedPkt { ect: true, ..pkt(id) }
    }
    /// min_th 5, max_th 15, max_p 0.1, non-gentle, 100-packet limit, 1000-byte mean packet.
    fn cfg() -> RedConfig {
        RedConfig { limit: Limit::Packets(100), gentle: false, ..RedConfig::default() }
    }
    /// A RED whose average is the instantaneous queue (w_q = 1), holding `n` packets.
    fn holding(cfg: RedConfig, n: usize) -> Red {
        let mut q = Red::new(RedConfig { w_q: 1.0, ..cfg }, MBPS_10);
        for id in 0..n {
            q.fifo.push(pkt(1000 + id));
        }
        q.idle_since = None;
        q
    }
    /// Offers `n` arrivals to a queue held at its current length (an admitted packet is sent
    /// at once), returning the verdicts.
    fn offer(q: &mut Red, n: usize, make: fn(usize) -> QueuedPkt, r: &mut SimRng) -> Vec<Verdict> {
        (0..n)
            .map(|id| {
                let v = q.enqueue(make(id), T0, r);
                if v != Verdict::Dropped {
                    q.dequeue(T0, &mut vec![]).unwrap();
                }
                v
            })
            .collect()
    }
    fn tally(vs: &[Verdict], which: Verdict) -> usize {
        vs.iter().filter(|&&v| v == which).count()
    }

    #[test]
    fn avg_is_the_ewma_of_the_queue_seen_by_each_arrival() {
        // w_q = 1/2; arrivals with no departures see q = 0, 1, 2, 3:
        // 0 → ½·0 + ½·1 = 0.5 → ½·0.5 + ½·2 = 1.25 → ½·1.25 + ½·3 = 2.125.
        let mut q = Red::new(RedConfig { w_q: 0.5, ..cfg() }, MBPS_10);
        let mut r = rng(1);
        let mut avgs = vec![];
        for id in 0..4 {
            assert_eq!(q.enqueue(pkt(id), T0, &mut r), Verdict::Enqueued);
            avgs.push(q.avg());
        }
        assert_eq!(avgs, [0.0, 0.5, 1.25, 2.125]);
    }

    #[test]
    fn avg_with_the_default_weight_after_three_arrivals() {
        // q = 0, 1, 2: 0 → 0.002 → 0.998·0.002 + 0.002·2 = 0.005996.
        let mut q = Red::new(cfg(), MBPS_10);
        let mut r = rng(1);
        for id in 0..3 {
            q.enqueue(pkt(id), T0, &mut r);
        }
        assert!((q.avg() - 0.005996).abs() < 1e-15, "{}", q.avg());
    }

    #[test]
    fn idle_time_decays_avg_as_if_m_mean_size_packets_had_arrived() {
        // 1000 B at 10 Mb/s take 800 µs. avg = 2.125 after four arrivals (w_q = 1/2); the
        // queue empties at 1 ms; the next arrival comes 3.9 ms later: m = ⌊3.9 / 0.8⌋ = 4.
        // avg = 2.125 · ½⁴ = 0.1328125, then the arrival's own update with q = 0: 0.06640625.
        let mut q = Red::new(RedConfig { w_q: 0.5, ..cfg() }, MBPS_10);
        let mut r = rng(1);
        for id in 0..4 {
            q.enqueue(pkt(id), T0, &mut r);
        }
        let emptied = SimTime::from_nanos(1_000_000);
        while q.dequeue(emptied, &mut vec![]).is_some() {}
        assert_eq!(q.idle_packets(SimDuration::from_micros(3_900)), 4);
        q.enqueue(pkt(9), emptied + SimDuration::from_micros(3_900), &mut r);
        assert_eq!(q.avg(), 0.06640625);
    }

    #[test]
    fn no_idle_decay_while_the_queue_holds_packets() {
        // Arrivals 1 s apart without departures: plain EWMA, as with no gap.
        let mut q = Red::new(RedConfig { w_q: 0.5, ..cfg() }, MBPS_10);
        let mut r = rng(1);
        for id in 0..4 {
            q.enqueue(pkt(id), T0 + SimDuration::from_secs(id as u64), &mut r);
        }
        assert_eq!(q.avg(), 2.125);
    }

    #[test]
    fn below_min_th_nothing_is_ever_dropped() {
        // avg = 4 < min_th = 5, even with max_p = 1.
        let mut q = holding(RedConfig { max_p: 1.0, ..cfg() }, 4);
        let vs = offer(&mut q, 10_000, pkt, &mut rng(1));
        assert_eq!(tally(&vs, Verdict::Enqueued), 10_000);
    }

    #[test]
    fn drop_probability_is_linear_between_the_thresholds_then_uniformised_by_count() {
        let q = Red::new(cfg(), MBPS_10);
        // p_b = 0.1 · (avg − 5) / 10
        assert_eq!(q.drop_probability(4.999, 0, 1000), 0.0);
        assert_eq!(q.drop_probability(5.0, 0, 1000), 0.0);
        assert!((q.drop_probability(7.5, 0, 1000) - 0.025).abs() < 1e-15);
        assert!((q.drop_probability(10.0, 0, 1000) - 0.05).abs() < 1e-15);
        // p_a = p_b / (1 − count·p_b): count 10 → 0.05 / 0.5 = 0.1; count 18 → 0.05 / 0.1 = 0.5
        assert!((q.drop_probability(10.0, 10, 1000) - 0.1).abs() < 1e-15);
        assert!((q.drop_probability(10.0, 18, 1000) - 0.5).abs() < 1e-12);
        // count 19: 0.05 / (1 − 0.95) = 1; from count 20 on count·p_b ≥ 1: certain drop.
        assert!((q.drop_probability(10.0, 19, 1000) - 1.0).abs() < 1e-12);
        assert_eq!(q.drop_probability(10.0, 20, 1000), 1.0);
        assert_eq!(q.drop_probability(10.0, 500, 1000), 1.0);
    }

    #[test]
    fn byte_mode_scales_p_b_by_packet_size_over_mean_size() {
        // Thresholds 5000 / 15000 bytes; avg 10 000 B → p_b = 0.05, × 500/1000 or × 1500/1000.
        let q = Red::new(RedConfig { byte_mode: true, ..cfg() }, MBPS_10);
        assert!((q.drop_probability(10_000.0, 0, 1000) - 0.05).abs() < 1e-15);
        assert!((q.drop_probability(10_000.0, 0, 500) - 0.025).abs() < 1e-15);
        assert!((q.drop_probability(10_000.0, 0, 1500) - 0.075).abs() < 1e-15);
        assert_eq!(q.drop_probability(4_999.0, 0, 1500), 0.0);
    }

    #[test]
    fn byte_mode_averages_bytes() {
        // w_q = 1/2, 1000-byte arrivals see q = 0, 1000, 2000 bytes: 0 → 500 → 1250.
        let mut q = Red::new(RedConfig { byte_mode: true, w_q: 0.5, ..cfg() }, MBPS_10);
        let mut r = rng(1);
        for id in 0..3 {
            q.enqueue(pkt(id), T0, &mut r);
        }
        assert_eq!(q.avg(), 1250.0);
    }

    #[test]
    fn between_max_th_and_twice_max_th_gentle_rises_to_one_where_plain_red_drops_all() {
        let plain = Red::new(cfg(), MBPS_10);
        let gentle = Red::new(RedConfig { gentle: true, ..cfg() }, MBPS_10);
        // Plain RED: every arrival at avg ≥ max_th = 15.
        assert_eq!(plain.drop_probability(15.0, 0, 1000), 1.0);
        assert_eq!(plain.drop_probability(20.0, 0, 1000), 1.0);
        // Gentle: p_b = 0.1 + 0.9 · (avg − 15) / 15: 0.1 at 15, 0.4 at 20, 0.55 at 22.5, 1 at 30.
        assert!((gentle.drop_probability(15.0, 0, 1000) - 0.1).abs() < 1e-15);
        assert!((gentle.drop_probability(20.0, 0, 1000) - 0.4).abs() < 1e-15);
        assert!((gentle.drop_probability(22.5, 0, 1000) - 0.55).abs() < 1e-15);
        assert_eq!(gentle.drop_probability(30.0, 0, 1000), 1.0);
        // Uniformised like the linear part: 0.4 / (1 − 1·0.4) = 2/3.
        assert!((gentle.drop_probability(20.0, 1, 1000) - 2.0 / 3.0).abs() < 1e-15);
    }

    #[test]
    fn gentle_drops_only_some_arrivals_at_avg_20_plain_red_drops_them_all() {
        let mut r = rng(3);
        let mut plain = holding(cfg(), 20);
        let vs = offer(&mut plain, 1000, pkt, &mut r);
        assert_eq!(tally(&vs, Verdict::Dropped), 1000);
        let mut gentle = holding(RedConfig { gentle: true, ..cfg() }, 20);
        let vs = offer(&mut gentle, 1000, pkt, &mut r);
        let drops = tally(&vs, Verdict::Dropped);
        assert!(drops > 0 && drops < 1000, "{drops}");
        // ... and all of them at avg ≥ 2·max_th = 30.
        let mut gentle = holding(RedConfig { gentle: true, ..cfg() }, 30);
        let vs = offer(&mut gentle, 1000, pkt, &mut r);
        assert_eq!(tally(&vs, Verdict::Dropped), 1000);
    }

    #[test]
    fn the_hard_limit_forces_a_drop_even_below_min_th_and_even_for_ect_packets() {
        let c = RedConfig { limit: Limit::Packets(3), min_th: 100.0, max_th: 200.0, ecn: true, ..cfg() };
        let mut q = Red::new(c, MBPS_10);
        let mut r = rng(1);
        for id in 0..3 {
            assert_eq!(q.enqueue(ect(id), T0, &mut r), Verdict::Enqueued);
        }
        assert_eq!(q.enqueue(ect(3), T0, &mut r), Verdict::Dropped);
        assert_eq!(q.enqueue(pkt(4), T0, &mut r), Verdict::Dropped);
        assert_eq!(q.len_packets(), 3);
    }

    #[test]
    fn with_ecn_ect_packets_are_marked_instead_of_dropped_and_others_still_dropped() {
        // avg = 10: p_b = 0.05.
        let c = RedConfig { ecn: true, ..cfg() };
        let mut r = rng(5);
        let vs = offer(&mut holding(c.clone(), 10), 10_000, ect, &mut r);
        assert_eq!(tally(&vs, Verdict::Dropped), 0);
        assert!(tally(&vs, Verdict::Marked) > 0);
        let vs = offer(&mut holding(c.clone(), 10), 10_000, pkt, &mut r);
        assert_eq!(tally(&vs, Verdict::Marked), 0);
        assert!(tally(&vs, Verdict::Dropped) > 0);
        // At the ceiling (avg ≥ max_th, not gentle) ECT packets are dropped too.
        let vs = offer(&mut holding(c.clone(), 15), 100, ect, &mut r);
        assert_eq!(tally(&vs, Verdict::Dropped), 100);
        // Gentle: marked between max_th and 2·max_th, dropped from 2·max_th on.
        let g = RedConfig { gentle: true, ..c };
        let vs = offer(&mut holding(g.clone(), 20), 1000, ect, &mut r);
        assert_eq!(tally(&vs, Verdict::Dropped), 0);
        assert!(tally(&vs, Verdict::Marked) > 0);
        let vs = offer(&mut holding(g, 30), 100, ect, &mut r);
        assert_eq!(tally(&vs, Verdict::Dropped), 100);
    }

    #[test]
    fn same_seed_same_verdicts() {
        let run = |seed| offer(&mut holding(cfg(), 10), 2000, pkt, &mut rng(seed));
        assert_eq!(run(7), run(7));
        assert_ne!(run(7), run(8));
    }

    #[test]
    fn with_avg_held_fixed_the_early_drop_rate_is_two_p_b_over_one_plus_p_b() {
        // avg held at 10 (w_q = 1, queue held at 10 packets): p_b = 0.05. With F&J §7
        // uniformisation the gap between drops is uniform on 1..=20, mean 10.5, so the drop
        // rate is 1/10.5 = 2/21. Tolerance: 4 binomial standard deviations,
        // 4·√(n·p(1 − p)) = 4·√(100 000 · 2/21 · 19/21) ≈ 371 (uniform gaps vary less).
        let n = 100_000;
        let p = 2.0 / 21.0;
        let vs = offer(&mut holding(cfg(), 10), n, pkt, &mut rng(11));
        let drops = tally(&vs, Verdict::Dropped) as f64;
        let expected = n as f64 * p;
        let tol = 4.0 * (n as f64 * p * (1.0 - p)).sqrt();
        assert!((drops - expected).abs() <= tol, "{drops} drops, expected {expected} ± {tol}");
        // Uniformisation: never more than 1/p_b = 20 arrivals from one drop to the next.
        let mut gap = 0;
        for v in &vs {
            gap += 1;
            if *v == Verdict::Dropped {
                assert!(gap <= 20, "gap {gap}");
                gap = 0;
            }
        }
    }

    #[test]
    fn validate_names_the_field_value_and_range() {
        assert_eq!(RedConfig::default().validate(), Ok(()));
        let e = RedConfig { max_th: 3.0, ..RedConfig::default() }.validate().unwrap_err();
        assert_eq!(e, "RED max_th = 3 is out of range; allowed: >= min_th");
        assert!(RedConfig { w_q: 1.5, ..RedConfig::default() }.validate().is_err());
    }
}

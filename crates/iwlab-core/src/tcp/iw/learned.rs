//! A per-destination IW learned from recent connections' window at close,
//! as CDNs' back-office accelerators do and as Linux's tcp_metrics keeps a cwnd per
//! destination (net/ipv4/tcp_metrics.c, `tcp_update_metrics`). References: RFC 6928 §10
//! (per-destination state, "caching of IW-related information"); RFC 2140 (TCP control
//! block interdependence: a new connection may start from what earlier ones to the same host
//! learned).
//!
//! Estimator, exactly:
//! - a connection that closes with `bytes_acked` > 0 gives the sample
//!   x = min(`cwnd` at close, `bytes_acked`), bytes: the window it could use, but no more
//!   than it delivered (a flow that never filled its window proves nothing beyond its size);
//! - per destination the last `samples` (K) samples are kept, oldest dropped first;
//! - the estimate is their `percentile`-th value by nearest rank: sort ascending, take the
//!   ⌈p·n/100⌉-th (1-based) of the n samples;
//! - the IW is clamp(⌊estimate / MSS⌋, `min`, `max`) segments; with no sample yet, `initial`.
//!
//! Every quantity is one Linux reports in `tcp_info` at close (`tcpi_snd_cwnd` × MSS,
//! `tcpi_bytes_acked`), so a watcher on a real host computes the same IW from the same events.

use super::policy::{DstKey, IwContext, IwEvent, IwEventKind, IwPolicy};
use crate::engine::SimTime;
use serde_json::{json, Value};
use std::collections::{BTreeMap, VecDeque};

#[derive(Clone, Debug, Default)]
struct Dst {
    /// The last K samples, bytes, oldest first.
    samples: VecDeque<u64>,
    /// Time of the last sample.
    since: SimTime,
}

#[derive(Clone, Debug)]
pub struct Learned {
    initial: u32,
    min: u32,
    max: u32,
    k: usize,
    percentile: u32,
    dsts: BTreeMap<DstKey, Dst>,
}

impl Learned {
    pub fn new(initial: u32, min: u32, max: u32, samples: u32, percentile: u32) -> Self {
        assert!(
            1 <= min && min <= initial && initial <= max && samples >= 1 && (1..=100).contains(&percentile),
            "validated by the scenario"
        );
        Learned { initial, min, max, k: samples as usize, percentile, dsts: BTreeMap::new() }
    }

    /// The nearest-rank percentile of `dst`'s samples, bytes; None without samples.
    pub fn estimate(&self, dst: DstKey) -> Option<u64> {
        let d = self.dsts.get(&dst)?;
        if d.samples.is_empty() {
            return None;
        }
        let mut v: Vec<u64> = d.samples.iter().copied().collect();
        v.sort_unstable();
        let n = v.len() as u64;
        let rank = (self.percentile as u64 * n).div_ceil(100).max(1);
        Some(v[(rank - 1) as usize])
    }

    /// The IW towards `dst` for a sender of `mss` bytes, segments.
    pub fn segments(&self, dst: DstKey, mss: u64) -> u32 {
        match self.estimate(dst) {
            Some(x) => (x / mss.max(1)).min(u32::MAX as u64).clamp(self.min as u64, self.max as u64) as u32,
            None => self.initial,
        }
    }
}

impl IwPolicy for Learned {
    fn initial_window(&mut self, ctx: &IwContext) -> u64 {
        self.segments(ctx.dst, ctx.mss) as u64 * ctx.mss
    }
    fn learn(&mut self, ev: &IwEvent) {
        if let IwEventKind::Closed { cwnd, bytes_acked, .. } = ev.kind {
            if bytes_acked == 0 {
                return;
            }
            let k = self.k;
            let d = self.dsts.entry(ev.dst).or_default();
            if d.samples.len() == k {
                d.samples.pop_front();
            }
            d.samples.push_back(cwnd.min(bytes_acked));
            d.since = ev.now;
        }
    }
    fn name(&self) -> &'static str {
        "learned"
    }
    fn describe(&self, dst: DstKey, _now: SimTime) -> Value {
        match (self.dsts.get(&dst), self.estimate(dst)) {
            (Some(d), Some(x)) => json!({
                "samples": d.samples,
                "estimate_bytes": x,
                "since_ns": d.since.as_nanos(),
                "why": format!("p{} of the last {} windows at close = {x} bytes, clamped to [{}, {}] segments",
                               self.percentile, d.samples.len(), self.min, self.max),
            }),
            _ => json!({ "samples": [], "estimate_bytes": null, "since_ns": null,
                         "iw_segments": self.initial, "why": "no connection closed yet: the initial IW" }),
        }
    }
    fn export_state(&self) -> Value {
        let rows: Vec<Value> = self.dsts.iter().map(|(k, d)| json!([k, d.since.as_nanos(), d.samples])).collect();
        json!({ "destinations": rows })
    }
    fn import_state(&mut self, v: &Value) -> Result<(), String> {
        let rows: Vec<(DstKey, u64, Vec<u64>)> =
            serde_json::from_value(v.get("destinations").cloned().unwrap_or(Value::Null))
                .map_err(|e| format!("learned state: {e}"))?;
        self.dsts.clear();
        for (k, since, samples) in rows {
            // Keep the newest K if the parameter shrank.
            let skip = samples.len().saturating_sub(self.k);
            let samples = samples.into_iter().skip(skip).collect();
            self.dsts.insert(k, Dst { samples, since: SimTime::from_nanos(since) });
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn closed(dst: DstKey, cwnd: u64, bytes_acked: u64) -> IwEvent {
        let kind = IwEventKind::Closed { bytes_sent: bytes_acked, loss: false, cwnd, bytes_acked, retrans: 0 };
        IwEvent { dst, now: SimTime::from_nanos(7), kind }
    }
    fn iw(p: &mut Learned, dst: DstKey) -> u64 {
        p.initial_window(&IwContext { mss: 1000, dst, declared_size: None, now: SimTime::ZERO })
    }

    #[test]
    fn without_samples_the_initial_iw() {
        let mut p = Learned::new(10, 2, 40, 4, 50);
        assert_eq!(iw(&mut p, 1), 10_000);
        p.learn(&closed(1, 5000, 0));
        assert_eq!(iw(&mut p, 1), 10_000, "nothing acknowledged: no sample");
    }

    #[test]
    fn the_median_of_the_last_k_windows_at_close() {
        let mut p = Learned::new(10, 2, 40, 4, 50);
        // Samples min(cwnd, acked): 20000, 6000, 30000, 12500.
        p.learn(&closed(1, 20_000, 100_000));
        p.learn(&closed(1, 26_000, 6_000));
        p.learn(&closed(1, 30_000, 90_000));
        p.learn(&closed(1, 12_500, 50_000));
        // Sorted 6000, 12500, 20000, 30000; rank ⌈50·4/100⌉ = 2 ⇒ 12500 ⇒ ⌊12.5⌋ = 12 segments.
        assert_eq!(p.estimate(1), Some(12_500));
        assert_eq!(iw(&mut p, 1), 12_000);
        // A fifth sample drops the first (20000): 6000, 30000, 12500, 3000 ⇒ rank 2 = 6000.
        p.learn(&closed(1, 3_000, 50_000));
        assert_eq!(iw(&mut p, 1), 6_000);
        assert_eq!(iw(&mut p, 2), 10_000, "other destinations untouched");
    }

    #[test]
    fn percentile_and_clamps() {
        let mut p = Learned::new(10, 3, 20, 8, 90);
        for x in [1_000, 2_000, 100_000] {
            p.learn(&closed(1, x, x));
        }
        // Rank ⌈90·3/100⌉ = 3 ⇒ 100000 ⇒ 100 segments, clamped to 20.
        assert_eq!(iw(&mut p, 1), 20_000);
        let mut q = Learned::new(10, 3, 20, 8, 1);
        for x in [1_000, 2_000, 100_000] {
            q.learn(&closed(1, x, x));
        }
        // Rank ⌈1·3/100⌉ = 1 ⇒ 1000 ⇒ 1 segment, clamped to 3.
        assert_eq!(iw(&mut q, 1), 3_000);
    }

    #[test]
    fn state_round_trips_keeping_the_newest_k() {
        let mut p = Learned::new(10, 1, 40, 4, 100);
        for x in [9_000, 1_000, 2_000, 3_000] {
            p.learn(&closed(1, x, x));
        }
        let mut q = Learned::new(10, 1, 40, 3, 100);
        q.import_state(&p.export_state()).unwrap();
        assert_eq!(iw(&mut q, 1), 3_000, "9000 was the oldest of four; K = 3 keeps 1000, 2000, 3000");
        assert_eq!(q.describe(1, SimTime::ZERO)["since_ns"], 7);
    }
}

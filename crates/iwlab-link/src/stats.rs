//! Lateness histogram and the `--stats-json` report.
//!
//! Lateness = when the relay actually started writing a packet out − when the link model said it
//! is due. It is recorded in a fixed log-linear histogram (exact below 128 ns, then 128
//! sub-buckets per power of two: < 0.8 % relative error), so recording never allocates.

use crate::link::LinkCounters;
use serde::Serialize;
use std::io::Write;
use std::path::Path;

const SUB_BITS: u32 = 7;
const SUB: usize = 1 << SUB_BITS;
const BUCKETS: usize = (64 - SUB_BITS as usize + 1) * SUB;

pub struct Histogram {
    counts: Box<[u64]>,
    n: u64,
    max: u64,
    sum: u128,
}

impl Default for Histogram {
    fn default() -> Self {
        Histogram { counts: vec![0; BUCKETS].into_boxed_slice(), n: 0, max: 0, sum: 0 }
    }
}

/// Bucket of `v`: values below `SUB` map to themselves; above, the top `SUB_BITS + 1` bits of
/// `v` (its leading one and the next `SUB_BITS`) pick the bucket.
fn bucket(v: u64) -> usize {
    if v < SUB as u64 {
        return v as usize;
    }
    let shift = 63 - v.leading_zeros() - SUB_BITS; // ≥ 0
    ((shift as usize + 1) << SUB_BITS) + ((v >> shift) as usize - SUB)
}

/// Smallest and largest value of bucket `b`.
fn bucket_range(b: usize) -> (u64, u64) {
    if b < SUB {
        return (b as u64, b as u64);
    }
    let shift = (b >> SUB_BITS) as u32 - 1;
    let lo = ((SUB + (b & (SUB - 1))) as u64) << shift;
    (lo, lo + ((1u64 << shift) - 1))
}

impl Histogram {
    pub fn record(&mut self, v: u64) {
        self.counts[bucket(v)] += 1;
        self.n += 1;
        self.max = self.max.max(v);
        self.sum += v as u128;
    }
    pub fn count(&self) -> u64 {
        self.n
    }
    pub fn max(&self) -> u64 {
        self.max
    }
    /// The `q`-quantile (0..=1): the midpoint of the bucket holding the ⌈q·n⌉-th smallest value
    /// (never above the maximum); 0 when empty.
    pub fn quantile(&self, q: f64) -> u64 {
        if self.n == 0 {
            return 0;
        }
        let rank = ((q * self.n as f64).ceil() as u64).clamp(1, self.n);
        let mut seen = 0;
        for (b, c) in self.counts.iter().enumerate() {
            seen += c;
            if seen >= rank {
                let (lo, hi) = bucket_range(b);
                return (lo + (hi - lo) / 2).min(self.max);
            }
        }
        self.max
    }
    pub fn mean(&self) -> f64 {
        if self.n == 0 {
            0.0
        } else {
            self.sum as f64 / self.n as f64
        }
    }
}

/// Lateness summary in microseconds.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct LatenessUs {
    pub samples: u64,
    pub mean: f64,
    pub p50: f64,
    pub p90: f64,
    pub p99: f64,
    pub p999: f64,
    pub max: f64,
}

impl From<&Histogram> for LatenessUs {
    fn from(h: &Histogram) -> Self {
        let us = |ns: u64| (ns as f64 / 100.0).round() / 10.0; // 0.1 µs resolution
        LatenessUs {
            samples: h.count(),
            mean: (h.mean() / 100.0).round() / 10.0,
            p50: us(h.quantile(0.50)),
            p90: us(h.quantile(0.90)),
            p99: us(h.quantile(0.99)),
            p999: us(h.quantile(0.999)),
            max: us(h.max()),
        }
    }
}

/// One direction's line of the report.
#[derive(Clone, Debug, Serialize)]
pub struct DirectionReport {
    pub tun: String,
    pub rate_bps: u64,
    pub delay_us: f64,
    pub queue: String,
    pub loss: f64,
    #[serde(flatten)]
    pub counters: LinkCounters,
    /// Arrivals dropped because every buffer of the pool was in use.
    pub pool_drops: u64,
    /// Packets the kernel refused on write.
    pub write_errors: u64,
    /// Packets still queued or propagating when the report was written.
    pub held: u64,
    pub lateness_us: LatenessUs,
}

#[derive(Clone, Debug, Serialize)]
pub struct Report {
    pub elapsed_s: f64,
    pub seed: u64,
    pub pool_slots: usize,
    pub slot_bytes: usize,
    pub directions: Vec<DirectionReport>,
}

impl Report {
    /// Writes the report as pretty JSON, atomically (temporary file, then rename).
    pub fn write(&self, path: &Path) -> std::io::Result<()> {
        let tmp = path.with_extension("tmp");
        let mut f = std::fs::File::create(&tmp)?;
        serde_json::to_writer_pretty(&mut f, self)?;
        f.write_all(b"\n")?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_are_contiguous_and_tight() {
        let mut prev_hi = None;
        for b in 0..BUCKETS {
            let (lo, hi) = bucket_range(b);
            if let Some(p) = prev_hi {
                assert_eq!(lo, p + 1, "bucket {b}");
            }
            assert_eq!((bucket(lo), bucket(hi)), (b, b));
            assert!(hi - lo <= lo / SUB as u64 + 1, "bucket {b} too wide: {lo}..{hi}");
            prev_hi = Some(hi);
            if hi == u64::MAX {
                break;
            }
        }
        assert_eq!(bucket(u64::MAX), BUCKETS - 1);
    }

    #[test]
    fn quantiles_of_a_known_sample() {
        let mut h = Histogram::default();
        for v in 1..=1000u64 {
            h.record(v * 1000); // 1 µs .. 1 ms
        }
        let close = |got: u64, want: u64| (got as f64 - want as f64).abs() <= want as f64 * 0.008;
        assert!(close(h.quantile(0.5), 500_000), "{}", h.quantile(0.5));
        assert!(close(h.quantile(0.9), 900_000), "{}", h.quantile(0.9));
        assert!(close(h.quantile(0.99), 990_000), "{}", h.quantile(0.99));
        assert_eq!(h.quantile(1.0), 1_000_000);
        assert_eq!(h.max(), 1_000_000);
        let us = LatenessUs::from(&h);
        assert_eq!((us.samples, us.max, us.mean), (1000, 1000.0, 500.5));
        assert_eq!(Histogram::default().quantile(0.5), 0);
    }
}

//! Simulated time: integer nanoseconds, never floats, so event order is exact.

use std::fmt;
use std::ops::{Add, AddAssign, Sub};

/// An instant on the simulation clock, in nanoseconds since the start of the run.
#[derive(Copy, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Debug)]
pub struct SimTime(u64);

/// A span of simulated time, in nanoseconds.
#[derive(Copy, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Debug)]
pub struct SimDuration(u64);

impl SimTime {
    pub const ZERO: SimTime = SimTime(0);
    pub const MAX: SimTime = SimTime(u64::MAX);

    pub const fn from_nanos(ns: u64) -> Self {
        SimTime(ns)
    }
    pub const fn as_nanos(self) -> u64 {
        self.0
    }
    /// Seconds as a float, for reports only (never for ordering).
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 / 1e9
    }
    pub fn from_secs_f64(s: f64) -> Self {
        SimTime(SimDuration::from_secs_f64(s).0)
    }
    /// Time elapsed since `earlier`; zero if `earlier` is later.
    pub fn saturating_since(self, earlier: SimTime) -> SimDuration {
        SimDuration(self.0.saturating_sub(earlier.0))
    }
    /// The earlier of two optional deadlines (`None` = not armed). Straight-line code for the
    /// per-event timer queries (an iterator over an array of options was 3 % of a NewReno run).
    #[inline]
    pub fn earliest(a: Option<SimTime>, b: Option<SimTime>) -> Option<SimTime> {
        match (a, b) {
            (Some(x), Some(y)) => Some(x.min(y)),
            (x, None) => x,
            (None, y) => y,
        }
    }
}

impl SimDuration {
    pub const ZERO: SimDuration = SimDuration(0);
    pub const MAX: SimDuration = SimDuration(u64::MAX);

    pub const fn from_nanos(ns: u64) -> Self {
        SimDuration(ns)
    }
    pub const fn from_micros(us: u64) -> Self {
        SimDuration(us * 1_000)
    }
    pub const fn from_millis(ms: u64) -> Self {
        SimDuration(ms * 1_000_000)
    }
    pub const fn from_secs(s: u64) -> Self {
        SimDuration(s * 1_000_000_000)
    }
    /// Rounds to the nearest nanosecond; negative or NaN inputs give zero.
    pub fn from_secs_f64(s: f64) -> Self {
        if s.is_nan() || s <= 0.0 {
            SimDuration(0)
        } else {
            SimDuration((s * 1e9).round().min(u64::MAX as f64) as u64)
        }
    }
    pub const fn as_nanos(self) -> u64 {
        self.0
    }
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 / 1e9
    }
    /// Time to serialise `bytes` onto a link of `bits_per_sec`, rounded up to whole nanoseconds
    /// so that back-to-back packets never overlap.
    pub fn transmission(bytes: u64, bits_per_sec: u64) -> Self {
        debug_assert!(bits_per_sec > 0);
        // u64 suffices for anything under ~2.3 GB; u128 only beyond (hot path: every hop).
        match bytes.checked_mul(8_000_000_000) {
            Some(bits) => SimDuration(bits.div_ceil(bits_per_sec)),
            None => SimDuration((bytes as u128 * 8_000_000_000).div_ceil(bits_per_sec as u128) as u64),
        }
    }
    pub fn saturating_mul(self, k: u64) -> Self {
        SimDuration(self.0.saturating_mul(k))
    }
    pub fn saturating_sub(self, other: SimDuration) -> Self {
        SimDuration(self.0.saturating_sub(other.0))
    }
    /// Rounds up to a multiple of `g` (a timer granularity); `g == 0` leaves it unchanged.
    pub fn round_up_to(self, g: SimDuration) -> Self {
        if g.0 == 0 {
            self
        } else {
            SimDuration(self.0.div_ceil(g.0) * g.0)
        }
    }
}

impl Add<SimDuration> for SimTime {
    type Output = SimTime;
    fn add(self, d: SimDuration) -> SimTime {
        SimTime(self.0.saturating_add(d.0))
    }
}
impl AddAssign<SimDuration> for SimTime {
    fn add_assign(&mut self, d: SimDuration) {
        *self = *self + d;
    }
}
impl Sub<SimTime> for SimTime {
    type Output = SimDuration;
    fn sub(self, earlier: SimTime) -> SimDuration {
        debug_assert!(earlier <= self, "time went backwards");
        SimDuration(self.0 - earlier.0)
    }
}
impl Add for SimDuration {
    type Output = SimDuration;
    fn add(self, o: SimDuration) -> SimDuration {
        SimDuration(self.0.saturating_add(o.0))
    }
}
impl AddAssign for SimDuration {
    fn add_assign(&mut self, o: SimDuration) {
        *self = *self + o;
    }
}
impl Sub for SimDuration {
    type Output = SimDuration;
    fn sub(self, o: SimDuration) -> SimDuration {
        SimDuration(self.0 - o.0)
    }
}

impl fmt::Display for SimTime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{:09}s", self.0 / 1_000_000_000, self.0 % 1_000_000_000)
    }
}
impl fmt::Display for SimDuration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{:09}s", self.0 / 1_000_000_000, self.0 % 1_000_000_000)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn earliest_of_optional_deadlines() {
        let (a, b) = (Some(SimTime::from_nanos(5)), Some(SimTime::from_nanos(3)));
        assert_eq!(SimTime::earliest(a, b), b);
        assert_eq!(SimTime::earliest(b, a), b);
        assert_eq!(SimTime::earliest(a, None), a);
        assert_eq!(SimTime::earliest(None, b), b);
        assert_eq!(SimTime::earliest(None, None), None);
        assert_eq!(SimTime::earliest(Some(SimTime::MAX), None), Some(SimTime::MAX));
    }

    #[test]
    fn transmission_time_of_a_1500_byte_packet_at_10_mbps_is_1_2_ms() {
        assert_eq!(SimDuration::transmission(1500, 10_000_000), SimDuration::from_micros(1200));
    }

    #[test]
    fn transmission_time_rounds_up() {
        // 1 byte at 3 b/s = 2.666..s -> 2_666_666_667 ns
        assert_eq!(SimDuration::transmission(1, 3).as_nanos(), 2_666_666_667);
    }

    #[test]
    fn granularity_rounds_up() {
        let g = SimDuration::from_millis(10);
        assert_eq!(SimDuration::from_millis(201).round_up_to(g), SimDuration::from_millis(210));
        assert_eq!(SimDuration::from_millis(200).round_up_to(g), SimDuration::from_millis(200));
    }

    #[test]
    fn display_is_seconds_with_nanoseconds() {
        assert_eq!(SimTime::from_nanos(1_500_000_000).to_string(), "1.500000000s");
    }
}

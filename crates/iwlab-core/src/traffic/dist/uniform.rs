//! Uniform on [lo, hi] — e.g. the web think time, uniform in [1, 5] s (the RFC 2415 study, docs/studies.md), and the
//! client start times, uniform in [0, 5] s.

use rand::Rng;

use super::{check_non_negative, DistError, SizeDist};
use crate::engine::SimRng;

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Uniform {
    lo: f64,
    hi: f64,
}

impl Uniform {
    /// `0 <= lo <= hi`, both finite (`lo == hi` is a constant).
    pub fn new(lo: f64, hi: f64) -> Result<Self, DistError> {
        let lo = check_non_negative("uniform.lo", lo)?;
        let hi = check_non_negative("uniform.hi", hi)?;
        if hi < lo {
            return Err(DistError::param("uniform.hi", hi, format_args!(">= uniform.lo = {lo}")));
        }
        Ok(Uniform { lo, hi })
    }
    pub fn lo(&self) -> f64 {
        self.lo
    }
    pub fn hi(&self) -> f64 {
        self.hi
    }
}

impl SizeDist for Uniform {
    #[inline]
    fn sample(&self, rng: &mut SimRng) -> f64 {
        // u in [0, 1): lo + (hi − lo)·u ∈ [lo, hi]. (The `min` guards the rounding of the
        // product, which could otherwise exceed hi by one ulp.)
        let u: f64 = rng.gen();
        (self.lo + (self.hi - self.lo) * u).min(self.hi)
    }
    fn mean(&self) -> Option<f64> {
        Some(0.5 * (self.lo + self.hi))
    }
    fn median(&self) -> Option<f64> {
        Some(0.5 * (self.lo + self.hi))
    }
    fn limited_mean(&self, x: f64) -> Option<f64> {
        let (a, b) = (self.lo, self.hi);
        Some(if x <= a {
            x
        } else if x >= b {
            0.5 * (a + b)
        } else {
            // ∫_a^x t dt/(b−a) + x·(b−x)/(b−a)
            (0.5 * (x * x - a * a) + x * (b - x)) / (b - a)
        })
    }
    fn support(&self) -> (f64, f64) {
        (self.lo, self.hi)
    }
    fn name(&self) -> &'static str {
        "uniform"
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::*;
    use super::*;

    #[test]
    fn think_time_1_to_5_s_has_mean_and_median_3() {
        let d = Uniform::new(1.0, 5.0).unwrap();
        assert_eq!((d.mean(), d.median()), (Some(3.0), Some(3.0)));
        let xs = draw(&d, 1);
        assert_in_support(&xs, &d);
        assert_mean(&xs, 3.0, Some(4.0 / 12f64.sqrt()));
        assert_median(&xs, 3.0, 0.01);
        assert_deterministic(&d);
    }

    #[test]
    fn limited_mean_matches_the_integral() {
        let d = Uniform::new(0.0, 4.0).unwrap();
        // E[min(U, 2)] for U ~ U[0, 4]: ½·1 + ½·2 = 1.5
        assert!((d.limited_mean(2.0).unwrap() - 1.5).abs() < 1e-12);
        assert_eq!(d.limited_mean(-1.0), Some(-1.0));
        assert_eq!(d.limited_mean(f64::INFINITY), Some(2.0));
    }

    #[test]
    fn lo_equal_hi_is_a_constant() {
        let d = Uniform::new(2.0, 2.0).unwrap();
        let mut r = rng(3);
        assert!((0..100).all(|_| d.sample(&mut r) == 2.0));
        assert_eq!(d.limited_mean(1.0), Some(1.0));
    }

    #[test]
    fn bad_bounds_are_errors() {
        assert_err(Uniform::new(5.0, 1.0), &["uniform.hi = 1", "expected >= uniform.lo = 5"]);
        assert_err(Uniform::new(-1.0, 1.0), &["uniform.lo = -1", "expected >= 0"]);
        assert_err(Uniform::new(0.0, f64::INFINITY), &["uniform.hi = inf"]);
    }
}

//! A constant: every draw is the same value (fixed-size request/response flows, the congested-links study, docs/studies.md;
//! the 1 MB FTP transfers of S1.1). Draws consume no randomness.

use super::{check_non_negative, DistError, SizeDist};
use crate::engine::SimRng;

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Constant {
    value: f64,
}

impl Constant {
    /// `value` must be finite and ≥ 0.
    pub fn new(value: f64) -> Result<Self, DistError> {
        Ok(Constant { value: check_non_negative("constant.value", value)? })
    }
    pub fn value(&self) -> f64 {
        self.value
    }
}

impl SizeDist for Constant {
    #[inline]
    fn sample(&self, _rng: &mut SimRng) -> f64 {
        self.value
    }
    fn mean(&self) -> Option<f64> {
        Some(self.value)
    }
    fn median(&self) -> Option<f64> {
        Some(self.value)
    }
    fn limited_mean(&self, x: f64) -> Option<f64> {
        Some(self.value.min(x))
    }
    fn support(&self) -> (f64, f64) {
        (self.value, self.value)
    }
    fn name(&self) -> &'static str {
        "constant"
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::*;
    use super::*;
    use rand::Rng;

    #[test]
    fn every_draw_is_the_value_and_consumes_no_randomness() {
        let d = Constant::new(250.0).unwrap();
        let mut r = rng(1);
        assert!((0..1000).all(|_| d.sample(&mut r) == 250.0));
        assert_eq!(r.gen::<u64>(), rng(1).gen::<u64>());
        assert_eq!((d.mean(), d.median()), (Some(250.0), Some(250.0)));
        assert_eq!(d.limited_mean(100.0), Some(100.0));
        assert_eq!(d.limited_mean(f64::INFINITY), Some(250.0));
        assert_deterministic(&d);
    }

    #[test]
    fn zero_is_allowed() {
        assert_eq!(Constant::new(0.0).unwrap().value(), 0.0);
    }

    #[test]
    fn negative_or_non_finite_values_are_errors() {
        assert_err(Constant::new(-1.0), &["constant.value = -1", "expected >= 0"]);
        assert_err(Constant::new(f64::NAN), &["constant.value = NaN"]);
        assert_err(Constant::new(f64::INFINITY), &["constant.value = inf"]);
    }
}

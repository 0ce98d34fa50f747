//! Exponential with a given mean — Poisson flow arrivals (docs/scenario-format.md) draw their inter-arrival
//! times from it. Sampled with `rand_distr`'s ziggurat.

use rand_distr::Distribution;

use super::{check_positive, DistError, SizeDist};
use crate::engine::SimRng;

#[derive(Clone, Copy, Debug)]
pub struct Exponential {
    mean: f64,
    exp: rand_distr::Exp<f64>,
}

impl Exponential {
    /// `mean` finite and > 0.
    pub fn new(mean: f64) -> Result<Self, DistError> {
        let mean = check_positive("exponential.mean", mean)?;
        let exp = rand_distr::Exp::new(1.0 / mean)
            .map_err(|_| DistError::param("exponential.mean", mean, "> 0 with a finite rate 1/mean"))?;
        Ok(Exponential { mean, exp })
    }
    pub fn mean_value(&self) -> f64 {
        self.mean
    }
}

impl SizeDist for Exponential {
    #[inline]
    fn sample(&self, rng: &mut SimRng) -> f64 {
        self.exp.sample(rng)
    }
    fn mean(&self) -> Option<f64> {
        Some(self.mean)
    }
    fn median(&self) -> Option<f64> {
        Some(self.mean * std::f64::consts::LN_2)
    }
    fn limited_mean(&self, x: f64) -> Option<f64> {
        // E[min(X, x)] = ∫_0^x e^{−t/m} dt = m·(1 − e^{−x/m})
        Some(if x <= 0.0 { x } else { -self.mean * (-x / self.mean).exp_m1() })
    }
    fn support(&self) -> (f64, f64) {
        (0.0, f64::INFINITY)
    }
    fn name(&self) -> &'static str {
        "exponential"
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::*;
    use super::*;

    #[test]
    fn sample_mean_and_median_match() {
        let d = Exponential::new(2.5).unwrap();
        assert_eq!(d.mean(), Some(2.5));
        let xs = draw(&d, 1);
        assert_in_support(&xs, &d);
        assert_mean(&xs, 2.5, Some(2.5)); // sd = mean
        assert_median(&xs, 2.5 * std::f64::consts::LN_2, 0.01);
        assert_deterministic(&d);
    }

    #[test]
    fn limited_mean_is_closed_form() {
        let d = Exponential::new(1.0).unwrap();
        assert!((d.limited_mean(1.0).unwrap() - (1.0 - (-1f64).exp())).abs() < 1e-15);
        assert_eq!(d.limited_mean(f64::INFINITY), Some(1.0));
    }

    #[test]
    fn non_positive_mean_is_an_error() {
        assert_err(Exponential::new(0.0), &["exponential.mean = 0", "expected > 0"]);
        assert_err(Exponential::new(-3.0), &["exponential.mean = -3"]);
        assert_err(Exponential::new(f64::NAN), &["exponential.mean = NaN"]);
    }
}

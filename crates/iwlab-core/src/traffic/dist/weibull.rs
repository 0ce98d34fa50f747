//! Weibull: P(X > x) = exp(−(x/λ)^k) (shape k, scale λ). Mean λ·Γ(1 + 1/k) (Γ from
//! `libm::tgamma`), median λ·(ln 2)^(1/k). Sampled by inversion (`rand_distr::Weibull`).
//!
//! A capped Weibull's mean needs the incomplete gamma function, which neither `libm` nor
//! `rand_distr` offer, so [`SizeDist::limited_mean`] is `None` for finite arguments and a
//! clamped Weibull reports no mean (its median is still exact).

use rand_distr::Distribution;

use super::{check_positive, DistError, SizeDist};
use crate::engine::SimRng;

#[derive(Clone, Copy, Debug)]
pub struct Weibull {
    shape: f64,
    scale: f64,
    inner: rand_distr::Weibull<f64>,
}

impl Weibull {
    /// `shape` (k) and `scale` (λ) finite and > 0.
    pub fn new(shape: f64, scale: f64) -> Result<Self, DistError> {
        let shape = check_positive("weibull.shape", shape)?;
        let scale = check_positive("weibull.scale", scale)?;
        let inner = rand_distr::Weibull::new(scale, shape)
            .map_err(|e| DistError::new(format!("weibull: shape = {shape}, scale = {scale} rejected: {e}")))?;
        Ok(Weibull { shape, scale, inner })
    }
    pub fn shape(&self) -> f64 {
        self.shape
    }
    pub fn scale(&self) -> f64 {
        self.scale
    }
}

impl SizeDist for Weibull {
    #[inline]
    fn sample(&self, rng: &mut SimRng) -> f64 {
        self.inner.sample(rng)
    }
    fn mean(&self) -> Option<f64> {
        let m = self.scale * libm::tgamma(1.0 + 1.0 / self.shape);
        m.is_finite().then_some(m)
    }
    fn median(&self) -> Option<f64> {
        Some(self.scale * std::f64::consts::LN_2.powf(1.0 / self.shape))
    }
    fn limited_mean(&self, x: f64) -> Option<f64> {
        if x <= 0.0 {
            Some(x)
        } else if x == f64::INFINITY {
            self.mean()
        } else {
            None // needs the lower incomplete gamma function
        }
    }
    fn support(&self) -> (f64, f64) {
        (0.0, f64::INFINITY)
    }
    fn name(&self) -> &'static str {
        "weibull"
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::*;
    use super::super::Clamped;
    use super::*;

    fn check(k: f64, l: f64, seed: u64) {
        let d = Weibull::new(k, l).unwrap();
        let g1 = libm::tgamma(1.0 + 1.0 / k);
        let g2 = libm::tgamma(1.0 + 2.0 / k);
        let sd = l * (g2 - g1 * g1).sqrt();
        let xs = draw(&d, seed);
        assert_in_support(&xs, &d);
        assert_mean(&xs, d.mean().unwrap(), Some(sd));
        assert_median(&xs, l * std::f64::consts::LN_2.powf(1.0 / k), 0.01);
    }

    #[test]
    fn sample_mean_and_median_match_for_light_and_heavy_shapes() {
        check(2.0, 10.0, 1); // Rayleigh-like
        check(0.5, 10.0, 2); // heavier than exponential
        assert_deterministic(&Weibull::new(0.7, 3.0).unwrap());
    }

    #[test]
    fn closed_forms() {
        // k = 1 is the exponential with mean λ.
        let d = Weibull::new(1.0, 4.0).unwrap();
        assert!((d.mean().unwrap() - 4.0).abs() < 1e-12);
        assert!((d.median().unwrap() - 4.0 * std::f64::consts::LN_2).abs() < 1e-12);
        // k = 2: Γ(1.5) = √π/2
        let d = Weibull::new(2.0, 1.0).unwrap();
        assert!((d.mean().unwrap() - std::f64::consts::PI.sqrt() / 2.0).abs() < 1e-12);
    }

    #[test]
    fn capped_weibull_has_a_median_but_no_mean() {
        let c = Clamped::new(Weibull::new(0.5, 10.0).unwrap(), None, Some(5.0)).unwrap();
        assert_eq!(c.mean(), None);
        // median of the uncapped law is 10·(ln 2)² ≈ 4.80 < 5: unchanged by the cap.
        assert!((c.median().unwrap() - 10.0 * std::f64::consts::LN_2.powi(2)).abs() < 1e-12);
        assert_median(&draw(&c, 3), c.median().unwrap(), 0.01);
    }

    #[test]
    fn bad_parameters_are_errors() {
        assert_err(Weibull::new(0.0, 1.0), &["weibull.shape = 0", "expected > 0"]);
        assert_err(Weibull::new(1.0, -1.0), &["weibull.scale = -1"]);
        assert_err(Weibull::new(1.0, f64::INFINITY), &["weibull.scale = inf"]);
    }
}

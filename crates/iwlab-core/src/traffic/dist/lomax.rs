//! Pareto type II (Lomax): P(X > x) = (1 + x/λ)^(−α) for x ≥ 0 (shape α, scale λ) — a
//! Pareto I shifted to start at 0, often used for heavy-tailed flow sizes.
//! Sampled by inversion: λ·(U^(−1/α) − 1) = λ·expm1(−ln U/α), U ∈ (0, 1], exact for
//! small draws too (no cancellation).

use rand::distributions::OpenClosed01;
use rand::Rng;

use super::{check_positive, DistError, SizeDist};
use crate::engine::SimRng;

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Lomax {
    shape: f64,
    scale: f64,
}

impl Lomax {
    /// `shape` (α) and `scale` (λ) finite and > 0.
    pub fn new(shape: f64, scale: f64) -> Result<Self, DistError> {
        Ok(Lomax { shape: check_positive("lomax.shape", shape)?, scale: check_positive("lomax.scale", scale)? })
    }
    pub fn shape(&self) -> f64 {
        self.shape
    }
    pub fn scale(&self) -> f64 {
        self.scale
    }
}

impl SizeDist for Lomax {
    #[inline]
    fn sample(&self, rng: &mut SimRng) -> f64 {
        let u: f64 = rng.sample(OpenClosed01);
        self.scale * (-u.ln() / self.shape).exp_m1()
    }
    /// λ/(α − 1) for α > 1; infinite (None) otherwise.
    fn mean(&self) -> Option<f64> {
        (self.shape > 1.0).then(|| self.scale / (self.shape - 1.0))
    }
    /// λ·(2^(1/α) − 1).
    fn median(&self) -> Option<f64> {
        Some(self.scale * (std::f64::consts::LN_2 / self.shape).exp_m1())
    }
    /// E[min(X, x)] = ∫_0^x (1 + t/λ)^(−α) dt = λ·(1 − (1 + x/λ)^(1−α))/(α − 1)
    /// (λ·ln(1 + x/λ) when α = 1).
    fn limited_mean(&self, x: f64) -> Option<f64> {
        let (a, l) = (self.shape, self.scale);
        if x <= 0.0 {
            return Some(x);
        }
        if x == f64::INFINITY {
            return self.mean();
        }
        let ln1p = (x / l).ln_1p();
        Some(if a == 1.0 { l * ln1p } else { -l * ((1.0 - a) * ln1p).exp_m1() / (a - 1.0) })
    }
    fn support(&self) -> (f64, f64) {
        (0.0, f64::INFINITY)
    }
    fn name(&self) -> &'static str {
        "lomax"
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::*;
    use super::super::Clamped;
    use super::*;

    #[test]
    fn finite_variance_sample_mean_and_median_match() {
        let (a, l) = (4.0, 3000.0);
        let d = Lomax::new(a, l).unwrap();
        assert_eq!(d.mean(), Some(1000.0));
        let sd = (l * l * a / ((a - 1.0) * (a - 1.0) * (a - 2.0))).sqrt();
        let xs = draw(&d, 1);
        assert_in_support(&xs, &d);
        assert_mean(&xs, 1000.0, Some(sd));
        assert_median(&xs, l * (2f64.powf(0.25) - 1.0), 0.01);
        assert_deterministic(&d);
    }

    #[test]
    fn heavy_tail_compares_medians_and_capped_means() {
        let d = Lomax::new(1.2, 1000.0).unwrap();
        let xs = draw(&d, 2);
        assert_median(&xs, d.median().unwrap(), 0.01);
        let c = Clamped::new(d, None, Some(1e6)).unwrap();
        // λ/(α−1)·(1 − (1 + c/λ)^(1−α)) ≈ 3710
        let expect = 1000.0 / 0.2 * (1.0 - 1001f64.powf(-0.2));
        assert!((c.mean().unwrap() - expect).abs() < 1e-9 * expect);
        assert_mean(&draw(&c, 3), expect, None);
    }

    #[test]
    fn limited_mean_at_alpha_1_is_logarithmic() {
        let d = Lomax::new(1.0, 10.0).unwrap();
        assert_eq!(d.mean(), None);
        assert!((d.limited_mean(90.0).unwrap() - 10.0 * 10f64.ln()).abs() < 1e-12);
    }

    #[test]
    fn bad_parameters_are_errors() {
        assert_err(Lomax::new(0.0, 1.0), &["lomax.shape = 0", "expected > 0"]);
        assert_err(Lomax::new(2.0, -5.0), &["lomax.scale = -5"]);
        assert_err(Lomax::new(f64::INFINITY, 1.0), &["lomax.shape = inf"]);
    }
}

//! Pareto type I: P(X > x) = (x_m/x)^α for x ≥ x_m (shape α, scale x_m).
//!
//! The RFC 2415 study's web object sizes (docs/studies.md): α = 1.2, x_m = 1122.46 bytes, so the median
//! x_m·2^(1/α) is 2000 bytes ("the median fits in two segments"), capped at 1 MB
//! (wrap in [`super::Clamped`]). With α = 1.2 the mean is finite (α·x_m/(α−1) ≈ 6735 B)
//! but the variance is not; the cap makes both finite.
//! Sampled by inversion (`rand_distr::Pareto`): x_m·U^(−1/α), U ∈ (0, 1].

use rand_distr::Distribution;

use super::{check_positive, DistError, SizeDist};
use crate::engine::SimRng;

#[derive(Clone, Copy, Debug)]
pub struct Pareto {
    shape: f64,
    scale: f64,
    inner: rand_distr::Pareto<f64>,
}

impl Pareto {
    /// `shape` (α) and `scale` (x_m) finite and > 0.
    pub fn new(shape: f64, scale: f64) -> Result<Self, DistError> {
        let shape = check_positive("pareto.shape", shape)?;
        let scale = check_positive("pareto.scale", scale)?;
        let inner = rand_distr::Pareto::new(scale, shape)
            .map_err(|e| DistError::new(format!("pareto: shape = {shape}, scale = {scale} rejected: {e}")))?;
        Ok(Pareto { shape, scale, inner })
    }
    pub fn shape(&self) -> f64 {
        self.shape
    }
    pub fn scale(&self) -> f64 {
        self.scale
    }
}

impl SizeDist for Pareto {
    #[inline]
    fn sample(&self, rng: &mut SimRng) -> f64 {
        self.inner.sample(rng)
    }
    /// α·x_m/(α − 1) for α > 1; infinite (None) for α ≤ 1.
    fn mean(&self) -> Option<f64> {
        (self.shape > 1.0).then(|| self.shape * self.scale / (self.shape - 1.0))
    }
    /// x_m·2^(1/α).
    fn median(&self) -> Option<f64> {
        Some(self.scale * 2f64.powf(1.0 / self.shape))
    }
    /// E[min(X, x)] = x for x ≤ x_m; else x_m + ∫_{x_m}^x (x_m/t)^α dt
    /// = x_m + x_m·(1 − (x_m/x)^(α−1))/(α − 1)   (x_m·(1 + ln(x/x_m)) when α = 1).
    fn limited_mean(&self, x: f64) -> Option<f64> {
        let (a, m) = (self.shape, self.scale);
        if x <= m {
            return Some(x);
        }
        if x == f64::INFINITY {
            return self.mean();
        }
        let ln_ratio = (m / x).ln(); // < 0
        Some(if a == 1.0 { m * (1.0 - ln_ratio) } else { m - m * ((a - 1.0) * ln_ratio).exp_m1() / (a - 1.0) })
    }
    fn support(&self) -> (f64, f64) {
        (self.scale, f64::INFINITY)
    }
    fn name(&self) -> &'static str {
        "pareto"
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::*;
    use super::super::{Clamped, DistConfig};
    use super::*;

    /// E[min(X, c)²] = x_m² + 2·x_m^α·(c^(2−α) − x_m^(2−α))/(2 − α), α ≠ 2.
    fn capped_second_moment(a: f64, m: f64, c: f64) -> f64 {
        m * m + 2.0 * m.powf(a) * (c.powf(2.0 - a) - m.powf(2.0 - a)) / (2.0 - a)
    }

    #[test]
    fn spec_s1_1_median_is_2000_bytes() {
        // x_m·2^(1/α) = 1122.46·2^(1/1.2) ≈ 2000
        let d = Pareto::new(1.2, 1122.46).unwrap();
        assert!((d.median().unwrap() - 2000.0).abs() < 0.01, "{:?}", d.median());
        assert!((d.mean().unwrap() - 6.0 * 1122.46).abs() < 1e-9);
    }

    #[test]
    fn heavy_tail_alpha_1_2_sample_median_matches() {
        // Infinite variance: compare medians, not means.
        let d = Pareto::new(1.2, 1122.46).unwrap();
        let xs = draw(&d, 1);
        assert_in_support(&xs, &d);
        assert_median(&xs, d.median().unwrap(), 0.01);
        assert_deterministic(&d);
    }

    #[test]
    fn capped_at_1_mb_sample_mean_matches_the_capped_mean() {
        let (a, m, c) = (1.2, 1122.46, 1e6);
        let d = Clamped::new(Pareto::new(a, m).unwrap(), None, Some(c)).unwrap();
        let mean = d.mean().unwrap();
        // Closed form, independently: α·x_m/(α−1) − x_m/(α−1)·(x_m/c)^(α−1) ≈ 5290 B.
        let expect = a * m / (a - 1.0) - m / (a - 1.0) * (m / c).powf(a - 1.0);
        assert!((mean - expect).abs() < 1e-6 * expect, "{mean} vs {expect}");
        assert!((5200.0..5400.0).contains(&mean));
        let sd = (capped_second_moment(a, m, c) - mean * mean).sqrt();
        let xs = draw(&d, 2);
        assert_in_support(&xs, &d);
        assert_mean(&xs, mean, Some(sd));
        assert_median(&xs, 2000.0, 0.01);
    }

    #[test]
    fn finite_variance_alpha_3_sample_mean_matches() {
        let (a, m) = (3.0, 10.0);
        let d = Pareto::new(a, m).unwrap();
        let sd = (m * m * a / ((a - 1.0) * (a - 1.0) * (a - 2.0))).sqrt();
        let xs = draw(&d, 3);
        assert_mean(&xs, 15.0, Some(sd));
        assert_median(&xs, m * 2f64.powf(1.0 / 3.0), 0.01);
    }

    #[test]
    fn alpha_at_most_1_has_no_mean_but_a_capped_one() {
        let d = Pareto::new(1.0, 100.0).unwrap();
        assert_eq!(d.mean(), None);
        let c = Clamped::new(d, None, Some(1e4)).unwrap();
        assert!((c.mean().unwrap() - 100.0 * (1.0 + 100f64.ln())).abs() < 1e-9);
        assert_mean(&draw(&c, 4), c.mean().unwrap(), None);
        let d = Pareto::new(0.8, 100.0).unwrap();
        assert_eq!(d.mean(), None);
        let c = Clamped::new(d, None, Some(1e4)).unwrap();
        assert_mean(&draw(&c, 5), c.mean().unwrap(), None);
    }

    #[test]
    fn limited_mean_is_continuous_at_alpha_1() {
        let near = Pareto::new(1.0 + 1e-9, 100.0).unwrap().limited_mean(1e4).unwrap();
        let at = Pareto::new(1.0, 100.0).unwrap().limited_mean(1e4).unwrap();
        assert!((near - at).abs() < 1e-4, "{near} vs {at}");
        assert_eq!(Pareto::new(2.0, 100.0).unwrap().limited_mean(50.0), Some(50.0));
    }

    #[test]
    fn bad_parameters_are_errors() {
        assert_err(Pareto::new(0.0, 1122.46), &["pareto.shape = 0 is not allowed; expected > 0"]);
        assert_err(Pareto::new(-1.2, 1122.46), &["pareto.shape = -1.2"]);
        assert_err(Pareto::new(1.2, 0.0), &["pareto.scale = 0", "expected > 0"]);
        assert_err(Pareto::new(1.2, f64::NAN), &["pareto.scale = NaN"]);
        // cap below the scale: every draw would be the cap.
        let p = Pareto::new(1.2, 1122.46).unwrap();
        assert_err(Clamped::new(p, None, Some(1000.0)), &["pareto.cap = 1000", "1122.46"]);
        assert_err(
            DistConfig::Clamped {
                inner: Box::new(DistConfig::Pareto { shape: 1.2, scale: 1122.46 }),
                min: None,
                cap: Some(1122.46),
            }
            .build(),
            &["pareto.cap = 1122.46", "expected > 1122.46"],
        );
    }
}

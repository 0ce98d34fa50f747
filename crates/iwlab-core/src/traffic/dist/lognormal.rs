//! Lognormal: ln X ~ Normal(μ, σ). Median e^μ, mean e^(μ + σ²/2); can also be given by its
//! mean and median (μ = ln median, σ² = 2·ln(mean/median)). Sampled with `rand_distr`.

use rand_distr::Distribution;

use super::{check_finite, check_positive, DistError, SizeDist};
use crate::engine::SimRng;

#[derive(Clone, Copy, Debug)]
pub struct LogNormal {
    mu: f64,
    sigma: f64,
    inner: rand_distr::LogNormal<f64>,
}

/// Φ, the standard normal CDF, via `libm::erfc`.
fn std_normal_cdf(z: f64) -> f64 {
    0.5 * libm::erfc(-z / std::f64::consts::SQRT_2)
}

impl LogNormal {
    /// `mu` finite, `sigma` finite and > 0.
    pub fn new(mu: f64, sigma: f64) -> Result<Self, DistError> {
        let mu = check_finite("lognormal.mu", mu)?;
        let sigma = check_positive("lognormal.sigma", sigma)?;
        let inner = rand_distr::LogNormal::new(mu, sigma)
            .map_err(|e| DistError::new(format!("lognormal: mu = {mu}, sigma = {sigma} rejected: {e}")))?;
        Ok(LogNormal { mu, sigma, inner })
    }

    /// From the mean and the median: requires `mean > median > 0`.
    pub fn from_mean_median(mean: f64, median: f64) -> Result<Self, DistError> {
        let median = check_positive("lognormal.median", median)?;
        let mean = check_positive("lognormal.mean", mean)?;
        if mean <= median {
            return Err(DistError::param(
                "lognormal.mean",
                mean,
                format_args!("> lognormal.median = {median} (a lognormal's mean exceeds its median)"),
            ));
        }
        let sigma = (2.0 * (mean / median).ln()).sqrt();
        Self::new(median.ln(), sigma)
    }
    pub fn mu(&self) -> f64 {
        self.mu
    }
    pub fn sigma(&self) -> f64 {
        self.sigma
    }
}

impl SizeDist for LogNormal {
    #[inline]
    fn sample(&self, rng: &mut SimRng) -> f64 {
        self.inner.sample(rng)
    }
    fn mean(&self) -> Option<f64> {
        Some((self.mu + 0.5 * self.sigma * self.sigma).exp())
    }
    fn median(&self) -> Option<f64> {
        Some(self.mu.exp())
    }
    /// E[min(X, x)] = e^(μ+σ²/2)·Φ((ln x − μ − σ²)/σ) + x·(1 − Φ((ln x − μ)/σ)).
    fn limited_mean(&self, x: f64) -> Option<f64> {
        if x <= 0.0 {
            return Some(x);
        }
        if x == f64::INFINITY {
            return self.mean();
        }
        let (m, s) = (self.mu, self.sigma);
        let z = (x.ln() - m) / s;
        Some(self.mean()? * std_normal_cdf(z - s) + x * std_normal_cdf(-z))
    }
    fn support(&self) -> (f64, f64) {
        (0.0, f64::INFINITY)
    }
    fn name(&self) -> &'static str {
        "lognormal"
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::*;
    use super::super::Clamped;
    use super::*;

    #[test]
    fn sample_mean_and_median_match() {
        let (mu, s) = (8.0, 1.0);
        let d = LogNormal::new(mu, s).unwrap();
        let mean = (mu + 0.5).exp();
        let sd = ((s * s).exp_m1() * (2.0 * mu + s * s).exp()).sqrt();
        let xs = draw(&d, 1);
        assert_in_support(&xs, &d);
        assert_mean(&xs, mean, Some(sd));
        assert_median(&xs, mu.exp(), 0.01);
        assert_deterministic(&d);
    }

    #[test]
    fn from_mean_and_median_recovers_them() {
        let d = LogNormal::from_mean_median(10_000.0, 2000.0).unwrap();
        assert!((d.mean().unwrap() - 10_000.0).abs() < 1e-8);
        assert!((d.median().unwrap() - 2000.0).abs() < 1e-9);
        let xs = draw(&d, 2);
        assert_median(&xs, 2000.0, 0.02);
    }

    #[test]
    fn capped_mean_matches_samples() {
        // σ = 2: heavy enough that the cap matters.
        let d = Clamped::new(LogNormal::new(7.0, 2.0).unwrap(), Some(100.0), Some(1e5)).unwrap();
        let m = d.mean().unwrap();
        assert!(m < LogNormal::new(7.0, 2.0).unwrap().mean().unwrap());
        assert_mean(&draw(&d, 3), m, None);
    }

    #[test]
    fn normal_cdf_known_values() {
        assert!((std_normal_cdf(0.0) - 0.5).abs() < 1e-15);
        assert!((std_normal_cdf(1.959963984540054) - 0.975).abs() < 1e-12);
        assert!((std_normal_cdf(-1.0) - 0.15865525393145707).abs() < 1e-12);
    }

    #[test]
    fn bad_parameters_are_errors() {
        assert_err(LogNormal::new(0.0, 0.0), &["lognormal.sigma = 0", "expected > 0"]);
        assert_err(LogNormal::new(0.0, -1.0), &["lognormal.sigma = -1"]);
        assert_err(LogNormal::new(f64::NAN, 1.0), &["lognormal.mu = NaN", "finite"]);
        assert_err(LogNormal::from_mean_median(1000.0, 0.0), &["lognormal.median = 0"]);
        assert_err(LogNormal::from_mean_median(-1.0, 10.0), &["lognormal.mean = -1"]);
        assert_err(LogNormal::from_mean_median(10.0, 10.0), &["lognormal.mean = 10", "> lognormal.median = 10"]);
    }
}

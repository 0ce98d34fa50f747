//! `min` and `cap` for any distribution: a draw x becomes max(min, min(x, cap)).
//!
//! Clamp, not resample. RFC 2415's setup (docs/studies.md) says object sizes are "capped at 1 MB": the probability
//! P(X > cap) becomes an atom at the cap. Resampling (truncation) would instead spread that
//! mass over [scale, cap] and change the median; clamping keeps the median of the inner law
//! (unless it lies outside [min, cap]) and takes exactly one inner draw per sample.
//!
//! The analytic mean uses the inner law's limited expected value G(x) = E[min(X, x)]:
//! E[clamp(X, lo, hi)] = lo + G(hi) − G(lo), from clamp(X, lo, hi) = min(X, hi) − min(X, lo) + lo.
//! The median is clamp(median, lo, hi), since clamping is monotone.

use super::{DistError, SizeDist};
use crate::engine::SimRng;

#[derive(Clone, Debug)]
pub struct Clamped<D> {
    inner: D,
    /// −∞ when there is no min.
    lo: f64,
    /// +∞ when there is no cap.
    hi: f64,
}

impl<D: SizeDist> Clamped<D> {
    /// `min`: finite, ≥ 0 and below the largest value `inner` can take; `cap`: finite,
    /// above the smallest value `inner` can take (for a Pareto I, above its scale), and
    /// ≥ `min`. Otherwise every draw would be the same number, which is a `Constant`.
    pub fn new(inner: D, min: Option<f64>, cap: Option<f64>) -> Result<Self, DistError> {
        let name = inner.name();
        let (s_lo, s_hi) = inner.support();
        if let Some(m) = min {
            if !(m.is_finite() && m >= 0.0) {
                return Err(DistError::param(&format!("{name}.min"), m, ">= 0 (and finite)"));
            }
            if m >= s_hi {
                return Err(DistError::param(
                    &format!("{name}.min"),
                    m,
                    format_args!("< {s_hi}, the largest value a {name} draw takes"),
                ));
            }
        }
        if let Some(c) = cap {
            if !c.is_finite() {
                return Err(DistError::param(&format!("{name}.cap"), c, "a finite number"));
            }
            if c <= s_lo {
                return Err(DistError::param(
                    &format!("{name}.cap"),
                    c,
                    format_args!("> {s_lo}, the smallest value a {name} draw takes"),
                ));
            }
            if let Some(m) = min {
                if c < m {
                    return Err(DistError::param(&format!("{name}.cap"), c, format_args!(">= {name}.min = {m}")));
                }
            }
        }
        Ok(Clamped { inner, lo: min.unwrap_or(f64::NEG_INFINITY), hi: cap.unwrap_or(f64::INFINITY) })
    }
}

impl<D> Clamped<D> {
    pub fn inner(&self) -> &D {
        &self.inner
    }
    pub fn min(&self) -> Option<f64> {
        (self.lo > f64::NEG_INFINITY).then_some(self.lo)
    }
    pub fn cap(&self) -> Option<f64> {
        (self.hi < f64::INFINITY).then_some(self.hi)
    }
}

impl<D: SizeDist> SizeDist for Clamped<D> {
    #[inline]
    fn sample(&self, rng: &mut SimRng) -> f64 {
        self.inner.sample(rng).max(self.lo).min(self.hi)
    }
    fn mean(&self) -> Option<f64> {
        self.limited_mean(f64::INFINITY)
    }
    fn median(&self) -> Option<f64> {
        Some(self.inner.median()?.max(self.lo).min(self.hi))
    }
    /// min(clamp(X, lo, hi), x) is x when x ≤ lo, else clamp(X, lo, min(hi, x)).
    fn limited_mean(&self, x: f64) -> Option<f64> {
        if x <= self.lo {
            return Some(x);
        }
        let g_hi = self.inner.limited_mean(self.hi.min(x))?;
        match self.min() {
            None => Some(g_hi),
            Some(lo) => Some(lo + g_hi - self.inner.limited_mean(lo)?),
        }
    }
    fn support(&self) -> (f64, f64) {
        let (a, b) = self.inner.support();
        (a.max(self.lo), b.min(self.hi))
    }
    fn name(&self) -> &'static str {
        self.inner.name()
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::*;
    use super::super::{Exponential, Pareto, Uniform};
    use super::*;

    #[test]
    fn clamps_rather_than_resamples() {
        let inner = Exponential::new(1.0).unwrap();
        let d = Clamped::new(inner, Some(0.5), Some(2.0)).unwrap();
        let (mut a, mut b) = (rng(9), rng(9));
        for _ in 0..10_000 {
            // One inner draw per sample, then clamped: the streams stay in step.
            assert_eq!(d.sample(&mut a), inner.sample(&mut b).clamp(0.5, 2.0));
        }
        assert_eq!(d.support(), (0.5, 2.0));
        assert_eq!((d.min(), d.cap()), (Some(0.5), Some(2.0)));
    }

    #[test]
    fn mean_with_min_and_cap_matches_closed_form_and_samples() {
        // E[clamp(X, lo, hi)], X ~ Exp(mean 1) = lo + e^{−lo} − e^{−hi}.
        let d = Clamped::new(Exponential::new(1.0).unwrap(), Some(0.5), Some(2.0)).unwrap();
        let expect = 0.5 + (-0.5f64).exp() - (-2.0f64).exp();
        assert!((d.mean().unwrap() - expect).abs() < 1e-12);
        let xs = draw(&d, 1);
        assert_in_support(&xs, &d);
        assert_mean(&xs, expect, None);
        assert_median(&xs, std::f64::consts::LN_2, 0.01);
        assert_deterministic(&d);
    }

    #[test]
    fn min_only_keeps_an_infinite_tail_mean() {
        // E[max(X, lo)] = lo + m·e^{−lo/m}
        let d = Clamped::new(Exponential::new(2.0).unwrap(), Some(1.0), None).unwrap();
        assert!((d.mean().unwrap() - (1.0 + 2.0 * (-0.5f64).exp())).abs() < 1e-12);
        assert_mean(&draw(&d, 2), d.mean().unwrap(), None);
    }

    #[test]
    fn median_outside_the_bounds_moves_to_the_bound() {
        let d = Clamped::new(Uniform::new(0.0, 10.0).unwrap(), None, Some(3.0)).unwrap();
        assert_eq!(d.median(), Some(3.0));
        let xs = draw(&d, 3);
        assert_median(&xs, 3.0, 1e-12); // an atom of mass 0.7 at the cap
                                        // E[min(U, 3)] = 0.3·1.5 + 0.7·3 = 2.55
        assert!((d.mean().unwrap() - 2.55).abs() < 1e-12);
        assert_mean(&xs, 2.55, None);
    }

    #[test]
    fn nested_limited_mean_is_consistent() {
        let d = Clamped::new(Exponential::new(1.0).unwrap(), Some(0.5), Some(2.0)).unwrap();
        assert_eq!(d.limited_mean(0.2), Some(0.2));
        let once = Clamped::new(Exponential::new(1.0).unwrap(), Some(0.5), Some(1.0)).unwrap();
        assert!((d.limited_mean(1.0).unwrap() - once.mean().unwrap()).abs() < 1e-12);
    }

    #[test]
    fn bad_bounds_are_errors() {
        let p = Pareto::new(1.2, 1122.46).unwrap();
        assert_err(Clamped::new(p, None, Some(1000.0)), &["pareto.cap = 1000", "expected > 1122.46"]);
        assert_err(Clamped::new(p, None, Some(-1.0)), &["pareto.cap = -1"]);
        assert_err(Clamped::new(p, None, Some(f64::NAN)), &["pareto.cap = NaN"]);
        assert_err(Clamped::new(p, Some(5000.0), Some(4000.0)), &["pareto.cap = 4000", ">= pareto.min = 5000"]);
        assert_err(Clamped::new(p, Some(-1.0), None), &["pareto.min = -1", ">= 0"]);
        let u = Uniform::new(1.0, 5.0).unwrap();
        assert_err(Clamped::new(u, Some(5.0), None), &["uniform.min = 5", "< 5"]);
        assert_err(Clamped::new(u, None, Some(1.0)), &["uniform.cap = 1", "> 1"]);
        // Both absent is allowed (a no-op).
        assert!(Clamped::new(u, None, None).is_ok());
    }
}

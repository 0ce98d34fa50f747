//! Size and time distributions: object sizes (the RFC 2415 study, docs/studies.md), flow sizes (the IW-function study; docs/scenario-format.md), think times.
//!
//! A scenario names a distribution with a plain-data [`DistConfig`]; [`DistConfig::build`]
//! validates every parameter and returns an [`AnyDist`], an enum that dispatches by `match`
//! (no boxed trait objects on the sampling path). Every variant implements [`SizeDist`].
//!
//! * Randomness only comes in through a `&mut SimRng` argument, so a draw depends only on
//!   the stream it is given (one stream per flow/application, see `engine::rng`).
//! * Sampling never allocates: every variant is a few numbers, or (empirical CDFs) vectors
//!   filled once at build time and only read afterwards.
//! * All values are non-negative (sizes in bytes, times in seconds — the caller decides
//!   the unit and rounds sizes to whole bytes).
//! * `cap` and `min` work on any distribution through the [`Clamped`] wrapper. They *clamp*
//!   (a draw above the cap becomes the cap), they do not resample: RFC 2415's setup (docs/studies.md) says object
//!   sizes are "capped at 1 MB", and clamping keeps one uniform draw per sample, so the
//!   random stream advances identically whatever the cap.
//!
//! Adding a distribution = one file + one arm in [`DistConfig`], [`AnyDist`] and `each_dist!`.
//!
//! ```
//! use iwlab_core::engine::{RngStreams, StreamKind};
//! use iwlab_core::traffic::dist::{DistConfig, SizeDist};
//!
//! // The RFC 2415 study (docs/studies.md): web objects ~ Pareto I (shape 1.2, scale 1122.46 B), capped at 1 MB.
//! let cfg = DistConfig::Clamped {
//!     inner: Box::new(DistConfig::Pareto { shape: 1.2, scale: 1122.46 }),
//!     min: None,
//!     cap: Some(1e6),
//! };
//! let d = cfg.build().unwrap();
//! assert!((d.median().unwrap() - 2000.0).abs() < 0.01);
//! let mut rng = RngStreams::new(1).stream(StreamKind::App, 0);
//! let x = d.sample(&mut rng);
//! assert!((1122.46..=1e6).contains(&x));
//!
//! let err = DistConfig::Pareto { shape: 0.0, scale: 1122.46 }.build().unwrap_err();
//! assert_eq!(err.to_string(), "pareto.shape = 0 is not allowed; expected > 0");
//! ```

pub mod builtin;
pub mod clamped;
pub mod constant;
pub mod empirical;
pub mod exponential;
pub mod lognormal;
pub mod lomax;
pub mod pareto;
pub mod uniform;
pub mod weibull;

use std::fmt;
use std::path::PathBuf;

use crate::engine::SimRng;
pub use clamped::Clamped;
pub use constant::Constant;
pub use empirical::Empirical;
pub use exponential::Exponential;
pub use lognormal::LogNormal;
pub use lomax::Lomax;
pub use pareto::Pareto;
pub use uniform::Uniform;
pub use weibull::Weibull;

/// A distribution of non-negative values (sizes or durations).
pub trait SizeDist {
    /// One draw. Randomness only from `rng`; never allocates.
    fn sample(&self, rng: &mut SimRng) -> f64;
    /// The analytic mean (accounting for any cap/min), or `None` when it is infinite or has
    /// no closed form here.
    fn mean(&self) -> Option<f64>;
    /// The analytic median (the smallest x with P(X ≤ x) ≥ 1/2), or `None`.
    fn median(&self) -> Option<f64>;
    /// The limited expected value E[min(X, x)] (`x` may be ±∞; E[min(X, ∞)] is the mean), or
    /// `None` where no closed form is implemented. [`Clamped`] uses it for its mean:
    /// E[clamp(X, lo, hi)] = lo + E[min(X, hi)] − E[min(X, lo)].
    fn limited_mean(&self, x: f64) -> Option<f64> {
        let _ = x;
        None
    }
    /// Inclusive bounds of the values a draw can take (`f64::INFINITY` when unbounded).
    fn support(&self) -> (f64, f64);
    /// The kind's name, one of [`DistConfig::NAMES`]; used in error messages and records.
    fn name(&self) -> &'static str;
}

/// A parameter that was rejected, with a message naming the field, the value and what is
/// allowed, e.g. `pareto.shape = 0 is not allowed; expected > 0`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DistError {
    message: String,
}

impl DistError {
    pub fn new(message: impl Into<String>) -> Self {
        DistError { message: message.into() }
    }
    pub fn message(&self) -> &str {
        &self.message
    }
    /// `field = value is not allowed; expected …`.
    pub(crate) fn param(field: &str, value: f64, expected: impl fmt::Display) -> Self {
        DistError::new(format!("{field} = {value} is not allowed; expected {expected}"))
    }
}

impl fmt::Display for DistError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for DistError {}

/// `value` must be finite and > 0.
pub(crate) fn check_positive(field: &str, value: f64) -> Result<f64, DistError> {
    if value.is_finite() && value > 0.0 {
        Ok(value)
    } else {
        Err(DistError::param(field, value, "> 0"))
    }
}

/// `value` must be finite and ≥ 0.
pub(crate) fn check_non_negative(field: &str, value: f64) -> Result<f64, DistError> {
    if value.is_finite() && value >= 0.0 {
        Ok(value)
    } else {
        Err(DistError::param(field, value, ">= 0 (and finite)"))
    }
}

/// `value` must be finite.
pub(crate) fn check_finite(field: &str, value: f64) -> Result<f64, DistError> {
    if value.is_finite() {
        Ok(value)
    } else {
        Err(DistError::param(field, value, "a finite number"))
    }
}

/// Where an empirical CDF's points come from.
#[derive(Clone, Debug, PartialEq)]
pub enum CdfSource {
    /// (value, cumulative probability) points, as [`Empirical::new`] takes them.
    Points(Vec<(f64, f64)>),
    /// CSV text, `value,cdf` per line (see [`Empirical::from_csv`]).
    Csv(String),
    /// A CSV file on disk.
    File(PathBuf),
    /// A built-in table by name: one of [`builtin::NAMES`].
    Builtin(String),
}

/// A distribution as a scenario names it: plain data, validated by [`DistConfig::build`].
#[derive(Clone, Debug, PartialEq)]
pub enum DistConfig {
    /// Always `value`.
    Constant { value: f64 },
    /// Uniform on [lo, hi].
    Uniform { lo: f64, hi: f64 },
    /// Exponential with the given mean.
    Exponential { mean: f64 },
    /// Pareto type I: P(X > x) = (scale/x)^shape for x ≥ scale.
    Pareto { shape: f64, scale: f64 },
    /// Pareto type II / Lomax: P(X > x) = (1 + x/scale)^−shape for x ≥ 0.
    Lomax { shape: f64, scale: f64 },
    /// Lognormal: ln X ~ Normal(mu, sigma).
    LogNormal { mu: f64, sigma: f64 },
    /// Lognormal given by its mean and median (mean > median > 0).
    LogNormalMeanMedian { mean: f64, median: f64 },
    /// Weibull: P(X > x) = exp(−(x/scale)^shape).
    Weibull { shape: f64, scale: f64 },
    /// Piecewise-linear empirical CDF.
    Empirical { source: CdfSource },
    /// `inner` with draws clamped to [min, cap].
    Clamped { inner: Box<DistConfig>, min: Option<f64>, cap: Option<f64> },
}

impl DistConfig {
    /// The names of the distribution kinds, as [`DistConfig::kind`] and [`SizeDist::name`]
    /// report them.
    pub const NAMES: &'static [&'static str] =
        &["constant", "uniform", "exponential", "pareto", "lomax", "lognormal", "weibull", "empirical"];

    /// The kind's name (the inner kind for [`DistConfig::Clamped`]).
    pub fn kind(&self) -> &'static str {
        match self {
            DistConfig::Constant { .. } => "constant",
            DistConfig::Uniform { .. } => "uniform",
            DistConfig::Exponential { .. } => "exponential",
            DistConfig::Pareto { .. } => "pareto",
            DistConfig::Lomax { .. } => "lomax",
            DistConfig::LogNormal { .. } | DistConfig::LogNormalMeanMedian { .. } => "lognormal",
            DistConfig::Weibull { .. } => "weibull",
            DistConfig::Empirical { .. } => "empirical",
            DistConfig::Clamped { inner, .. } => inner.kind(),
        }
    }

    /// Validates the parameters and builds the distribution.
    pub fn build(&self) -> Result<AnyDist, DistError> {
        Ok(match self {
            DistConfig::Constant { value } => AnyDist::Constant(Constant::new(*value)?),
            DistConfig::Uniform { lo, hi } => AnyDist::Uniform(Uniform::new(*lo, *hi)?),
            DistConfig::Exponential { mean } => AnyDist::Exponential(Exponential::new(*mean)?),
            DistConfig::Pareto { shape, scale } => AnyDist::Pareto(Pareto::new(*shape, *scale)?),
            DistConfig::Lomax { shape, scale } => AnyDist::Lomax(Lomax::new(*shape, *scale)?),
            DistConfig::LogNormal { mu, sigma } => AnyDist::LogNormal(LogNormal::new(*mu, *sigma)?),
            DistConfig::LogNormalMeanMedian { mean, median } => {
                AnyDist::LogNormal(LogNormal::from_mean_median(*mean, *median)?)
            }
            DistConfig::Weibull { shape, scale } => AnyDist::Weibull(Weibull::new(*shape, *scale)?),
            DistConfig::Empirical { source } => AnyDist::Empirical(match source {
                CdfSource::Points(points) => Empirical::new(points)?,
                CdfSource::Csv(text) => Empirical::from_csv(text)?,
                CdfSource::File(path) => Empirical::from_file(path)?,
                CdfSource::Builtin(name) => builtin::by_name(name)?,
            }),
            DistConfig::Clamped { inner, min, cap } => {
                AnyDist::Clamped(Box::new(Clamped::new(inner.build()?, *min, *cap)?))
            }
        })
    }
}

/// Every distribution, dispatched by `match`.
#[derive(Clone, Debug)]
pub enum AnyDist {
    Constant(Constant),
    Uniform(Uniform),
    Exponential(Exponential),
    Pareto(Pareto),
    Lomax(Lomax),
    LogNormal(LogNormal),
    Weibull(Weibull),
    Empirical(Empirical),
    /// Boxed only to keep the enum small; built once, never allocates when sampled.
    Clamped(Box<Clamped<AnyDist>>),
}

macro_rules! each_dist {
    ($self:ident, $d:ident => $e:expr) => {
        match $self {
            AnyDist::Constant($d) => $e,
            AnyDist::Uniform($d) => $e,
            AnyDist::Exponential($d) => $e,
            AnyDist::Pareto($d) => $e,
            AnyDist::Lomax($d) => $e,
            AnyDist::LogNormal($d) => $e,
            AnyDist::Weibull($d) => $e,
            AnyDist::Empirical($d) => $e,
            AnyDist::Clamped($d) => $e,
        }
    };
}

impl SizeDist for AnyDist {
    #[inline]
    fn sample(&self, rng: &mut SimRng) -> f64 {
        each_dist!(self, d => d.sample(rng))
    }
    fn mean(&self) -> Option<f64> {
        each_dist!(self, d => d.mean())
    }
    fn median(&self) -> Option<f64> {
        each_dist!(self, d => d.median())
    }
    fn limited_mean(&self, x: f64) -> Option<f64> {
        each_dist!(self, d => d.limited_mean(x))
    }
    fn support(&self) -> (f64, f64) {
        each_dist!(self, d => d.support())
    }
    /// The kind's name (the inner kind's for a clamped one).
    fn name(&self) -> &'static str {
        each_dist!(self, d => d.name())
    }
}

/// Shared helpers for the statistical tests of every distribution file.
#[cfg(test)]
pub(crate) mod testing {
    use super::{DistError, SizeDist};
    use crate::engine::{RngStreams, SimRng, StreamKind};

    /// Draws per statistical test.
    pub const N: usize = 200_000;
    /// Tolerances are this many standard errors.
    const Z: f64 = 5.0;

    pub fn rng(seed: u64) -> SimRng {
        RngStreams::new(seed).stream(StreamKind::App, 0)
    }

    pub fn draw<D: SizeDist>(d: &D, seed: u64) -> Vec<f64> {
        let mut r = rng(seed);
        (0..N).map(|_| d.sample(&mut r)).collect()
    }

    /// The sample mean is within Z standard errors of `mean`; `sd` is the analytic standard
    /// deviation, or `None` to use the sample's (for capped laws with a finite variance
    /// that has no handy closed form).
    pub fn assert_mean(xs: &[f64], mean: f64, sd: Option<f64>) {
        let n = xs.len() as f64;
        let m = xs.iter().sum::<f64>() / n;
        let sd = sd.unwrap_or_else(|| (xs.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / (n - 1.0)).sqrt());
        let tol = Z * sd / n.sqrt();
        assert!((m - mean).abs() <= tol, "sample mean {m} vs analytic {mean}: |diff| > {tol} (sd {sd})");
    }

    /// `median` is a median of the sample: P̂(X ≤ m) ≥ 1/2 and P̂(X < m) ≤ 1/2 up to Z
    /// standard errors of a proportion (distribution-free, works with atoms too); and the
    /// sample median is within `rel_tol` of it.
    pub fn assert_median(xs: &[f64], median: f64, rel_tol: f64) {
        let n = xs.len() as f64;
        let tol = Z * 0.5 / n.sqrt();
        let le = xs.iter().filter(|&&x| x <= median).count() as f64 / n;
        let lt = xs.iter().filter(|&&x| x < median).count() as f64 / n;
        assert!(le >= 0.5 - tol && lt <= 0.5 + tol, "P(X <= {median}) = {le}, P(X < {median}) = {lt}");
        let mut v = xs.to_vec();
        let k = v.len() / 2;
        let (_, sm, _) = v.select_nth_unstable_by(k, f64::total_cmp);
        let rel = (*sm - median).abs() / median.abs().max(f64::MIN_POSITIVE);
        assert!(rel <= rel_tol, "sample median {sm} vs analytic {median}: relative diff {rel} > {rel_tol}");
    }

    /// Same seed ⇒ bit-identical draws; a different seed ⇒ different draws (if random at all).
    pub fn assert_deterministic<D: SizeDist>(d: &D) {
        let run = |seed| {
            let mut r = rng(seed);
            (0..1000).map(|_| d.sample(&mut r).to_bits()).collect::<Vec<u64>>()
        };
        assert_eq!(run(11), run(11));
        let (lo, hi) = d.support();
        if lo < hi {
            assert_ne!(run(11), run(12));
        }
    }

    /// Draws stay within the declared support.
    pub fn assert_in_support(xs: &[f64], d: &impl SizeDist) {
        let (lo, hi) = d.support();
        assert!(xs.iter().all(|&x| x >= lo && x <= hi), "a draw left [{lo}, {hi}]");
    }

    /// The result is an error whose message contains every needle.
    pub fn assert_err<T: std::fmt::Debug>(r: Result<T, DistError>, needles: &[&str]) {
        let e = r.expect_err("expected a validation error");
        for n in needles {
            assert!(e.message().contains(n), "error {:?} does not mention {n:?}", e.message());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::testing::*;
    use super::*;

    #[test]
    fn config_builds_each_kind_and_reports_its_name() {
        let cfgs = [
            DistConfig::Constant { value: 3.0 },
            DistConfig::Uniform { lo: 1.0, hi: 5.0 },
            DistConfig::Exponential { mean: 2.0 },
            DistConfig::Pareto { shape: 1.2, scale: 1122.46 },
            DistConfig::Lomax { shape: 3.0, scale: 10.0 },
            DistConfig::LogNormal { mu: 0.0, sigma: 1.0 },
            DistConfig::Weibull { shape: 2.0, scale: 1.0 },
            DistConfig::Empirical { source: CdfSource::Builtin("websearch".into()) },
        ];
        let names: Vec<&str> = cfgs.iter().map(|c| c.build().unwrap().name()).collect();
        assert_eq!(names, DistConfig::NAMES);
        for c in &cfgs {
            assert_eq!(c.kind(), c.build().unwrap().name());
        }
    }

    #[test]
    fn any_dist_dispatches_to_the_same_draws_as_the_variant() {
        let direct = Pareto::new(1.2, 1122.46).unwrap();
        let any = DistConfig::Pareto { shape: 1.2, scale: 1122.46 }.build().unwrap();
        let (mut a, mut b) = (rng(5), rng(5));
        for _ in 0..100 {
            assert_eq!(direct.sample(&mut a).to_bits(), any.sample(&mut b).to_bits());
        }
        assert_eq!(direct.median(), any.median());
        assert_eq!(direct.mean(), any.mean());
    }

    #[test]
    fn spec_s1_1_web_object_sizes_build_from_config() {
        // The RFC 2415 study (docs/studies.md): Pareto I, shape 1.2, scale 1122.46 bytes (median 2000), capped at 1 MB.
        let d = DistConfig::Clamped {
            inner: Box::new(DistConfig::Pareto { shape: 1.2, scale: 1122.46 }),
            min: None,
            cap: Some(1e6),
        }
        .build()
        .unwrap();
        assert_eq!(d.name(), "pareto");
        assert!((d.median().unwrap() - 2000.0).abs() < 0.01);
        let xs = draw(&d, 1);
        assert_in_support(&xs, &d);
        assert_median(&xs, 2000.0, 0.01);
        assert_mean(&xs, d.mean().unwrap(), None);
        assert_deterministic(&d);
    }

    #[test]
    fn errors_from_config_name_the_field_and_value_and_never_panic() {
        let bad = [
            (DistConfig::Constant { value: -1.0 }, "constant.value = -1"),
            (DistConfig::Uniform { lo: 5.0, hi: 1.0 }, "uniform.hi = 1"),
            (DistConfig::Exponential { mean: 0.0 }, "exponential.mean = 0"),
            (DistConfig::Pareto { shape: 0.0, scale: 1.0 }, "pareto.shape = 0"),
            (DistConfig::Pareto { shape: 1.0, scale: -2.0 }, "pareto.scale = -2"),
            (DistConfig::Lomax { shape: f64::NAN, scale: 1.0 }, "lomax.shape = NaN"),
            (DistConfig::LogNormal { mu: 0.0, sigma: -1.0 }, "lognormal.sigma = -1"),
            (DistConfig::LogNormalMeanMedian { mean: 1.0, median: 2.0 }, "lognormal.mean = 1"),
            (DistConfig::Weibull { shape: 1.0, scale: f64::INFINITY }, "weibull.scale = inf"),
            (DistConfig::Empirical { source: CdfSource::Points(vec![]) }, "no points"),
            (DistConfig::Empirical { source: CdfSource::Csv("1,0.5\n".into()) }, "line 1"),
            (DistConfig::Empirical { source: CdfSource::Builtin("hadoop".into()) }, "websearch, datamining"),
            (DistConfig::Empirical { source: CdfSource::File("/nonexistent/x.csv".into()) }, "/nonexistent/x.csv"),
            (
                DistConfig::Clamped {
                    inner: Box::new(DistConfig::Pareto { shape: 1.2, scale: 1122.46 }),
                    min: None,
                    cap: Some(1000.0),
                },
                "pareto.cap = 1000",
            ),
            (
                DistConfig::Clamped {
                    inner: Box::new(DistConfig::Pareto { shape: 0.0, scale: 1122.46 }),
                    min: None,
                    cap: Some(1e6),
                },
                "pareto.shape = 0",
            ),
        ];
        for (cfg, needle) in bad {
            assert_err(cfg.build(), &[needle]);
        }
    }

    #[test]
    fn dist_error_displays_its_message() {
        let e = DistError::param("pareto.shape", 0.0, "> 0");
        assert_eq!(e.to_string(), "pareto.shape = 0 is not allowed; expected > 0");
        let _: &dyn std::error::Error = &e;
    }
}

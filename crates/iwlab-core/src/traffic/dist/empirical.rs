//! Empirical CDF: piecewise-linear between (value, cumulative probability) points, as the
//! ns-2 `EmpiricalRandomVariable` and the pFabric/HPCC traffic generators interpolate (SPEC
//! S3: "Poisson arrivals of flows with an empirical size distribution (CSV CDF)").
//!
//! Points (v₀, p₀) … (vₙ, pₙ): values strictly increasing and ≥ 0, probabilities
//! non-decreasing in [0, 1], pₙ = 1. A draw takes u uniform in [0, 1) and returns the
//! left-continuous inverse Q(u): v₀ if u ≤ p₀ (so p₀ > 0 is an atom at v₀), otherwise the
//! linear interpolation on the segment with p_{i−1} < u ≤ p_i. A flat segment (p_{i−1} = p_i)
//! carries no probability and is never chosen. Sampling is a binary search over the
//! probabilities; it never allocates.
//!
//! CSV format ([`Empirical::from_csv`], [`Empirical::from_file`]): one `value,cdf` point per
//! line, separated by a comma; `#` starts a comment; blank lines are ignored; the first
//! content line is a header, and skipped, if neither field is a number (`size,cdf`).
//! A last probability within 1e-9 of 1 is taken as exactly 1.

use std::path::Path;

use rand::Rng;

use super::{DistError, SizeDist};
use crate::engine::SimRng;

/// How close to 1 the last probability must be.
const LAST_CDF_TOL: f64 = 1e-9;

#[derive(Clone, Debug, PartialEq)]
pub struct Empirical {
    values: Vec<f64>,
    cdf: Vec<f64>,
}

impl Empirical {
    /// From (value, cdf) points; errors name the point by its 1-based position.
    pub fn new(points: &[(f64, f64)]) -> Result<Self, DistError> {
        let rows: Vec<(usize, f64, f64)> = points.iter().enumerate().map(|(i, &(v, p))| (i + 1, v, p)).collect();
        Self::validate(&rows, "empirical CDF", "point")
    }

    /// From CSV text (see the module doc); errors name the line.
    pub fn from_csv(text: &str) -> Result<Self, DistError> {
        Self::parse(text, "empirical CDF")
    }

    /// From a CSV file; errors name the file and the line.
    pub fn from_file(path: impl AsRef<Path>) -> Result<Self, DistError> {
        let path = path.as_ref();
        let ctx = format!("empirical CDF file {}", path.display());
        let text = std::fs::read_to_string(path).map_err(|e| DistError::new(format!("{ctx}: cannot read: {e}")))?;
        Self::parse(&text, &ctx)
    }

    /// The (value, cdf) points.
    pub fn points(&self) -> impl Iterator<Item = (f64, f64)> + '_ {
        self.values.iter().copied().zip(self.cdf.iter().copied())
    }

    /// The left-continuous inverse CDF: the smallest x with F(x) ≥ `p`, for `p` in [0, 1]
    /// (clamped into it).
    pub fn quantile(&self, p: f64) -> f64 {
        let p = p.clamp(0.0, 1.0);
        // First point with cdf ≥ p; it exists because the last cdf is 1.
        let i = self.cdf.partition_point(|&c| c < p);
        if i == 0 {
            return self.values[0];
        }
        let (p0, p1) = (self.cdf[i - 1], self.cdf[i]); // p0 < p ≤ p1
        let (v0, v1) = (self.values[i - 1], self.values[i]);
        v0 + (v1 - v0) * ((p - p0) / (p1 - p0))
    }

    fn parse(text: &str, ctx: &str) -> Result<Self, DistError> {
        let mut rows = Vec::new();
        let mut seen_content = false;
        for (idx, raw) in text.lines().enumerate() {
            let line_no = idx + 1;
            let line = raw.split('#').next().unwrap_or("").trim();
            if line.is_empty() {
                continue;
            }
            let first = !seen_content;
            seen_content = true;
            let fields: Vec<&str> = line.split(',').map(str::trim).collect();
            let nums: Vec<Option<f64>> = fields.iter().map(|f| f.parse::<f64>().ok()).collect();
            if first && nums.iter().all(Option::is_none) {
                continue; // header
            }
            if fields.len() != 2 {
                return Err(DistError::new(format!(
                    "{ctx} line {line_no}: expected 2 comma-separated fields `value,cdf`, found {} in {line:?}",
                    fields.len()
                )));
            }
            let num = |k: usize, what: &str| {
                nums[k].ok_or_else(|| {
                    DistError::new(format!("{ctx} line {line_no}: {what} {:?} is not a number", fields[k]))
                })
            };
            rows.push((line_no, num(0, "value")?, num(1, "cdf")?));
        }
        Self::validate(&rows, ctx, "line")
    }

    /// Checks (position, value, cdf) rows; `unit` is "line" or "point".
    fn validate(rows: &[(usize, f64, f64)], ctx: &str, unit: &str) -> Result<Self, DistError> {
        if rows.is_empty() {
            return Err(DistError::new(format!(
                "{ctx} has no points; expected at least one `value,cdf` {unit} ending with cdf = 1"
            )));
        }
        let mut values = Vec::with_capacity(rows.len());
        let mut cdf = Vec::with_capacity(rows.len());
        for (k, &(pos, v, p)) in rows.iter().enumerate() {
            let at = format!("{ctx} {unit} {pos}");
            if !(v.is_finite() && v >= 0.0) {
                return Err(DistError::new(format!("{at}: value = {v} is not allowed; expected >= 0 (and finite)")));
            }
            if !(0.0..=1.0).contains(&p) {
                return Err(DistError::new(format!("{at}: cdf = {p} is not allowed; expected 0 <= cdf <= 1")));
            }
            if k > 0 {
                let (prev_pos, pv, pp) = rows[k - 1];
                if v <= pv {
                    return Err(DistError::new(format!(
                        "{at}: value = {v} is not allowed; expected > {pv} (the value at {unit} {prev_pos}): \
                         values must be strictly increasing"
                    )));
                }
                if p < pp {
                    return Err(DistError::new(format!(
                        "{at}: cdf = {p} is not allowed; expected >= {pp} (the cdf at {unit} {prev_pos}): \
                         the CDF must be non-decreasing"
                    )));
                }
            }
            values.push(v);
            cdf.push(p);
        }
        let &(pos, _, last) = rows.last().expect("non-empty");
        if (1.0 - last).abs() > LAST_CDF_TOL {
            return Err(DistError::new(format!(
                "{ctx} {unit} {pos}: cdf = {last} is not allowed; expected 1 (the last point must reach 1)"
            )));
        }
        *cdf.last_mut().expect("non-empty") = 1.0;
        Ok(Empirical { values, cdf })
    }
}

impl SizeDist for Empirical {
    #[inline]
    fn sample(&self, rng: &mut SimRng) -> f64 {
        let u: f64 = rng.gen(); // [0, 1)
        self.quantile(u)
    }
    /// p₀·v₀ + Σ (p_i − p_{i−1})·(v_{i−1} + v_i)/2.
    fn mean(&self) -> Option<f64> {
        self.limited_mean(f64::INFINITY)
    }
    fn median(&self) -> Option<f64> {
        Some(self.quantile(0.5))
    }
    /// E[min(X, x)], segment by segment (each segment is uniform on [v_{i−1}, v_i]).
    fn limited_mean(&self, x: f64) -> Option<f64> {
        let (v, p) = (&self.values, &self.cdf);
        if x <= v[0] {
            return Some(x);
        }
        let mut sum = p[0] * v[0];
        for i in 1..v.len() {
            let (a, b, w) = (v[i - 1], v[i], p[i] - p[i - 1]);
            sum += if b <= x {
                w * 0.5 * (a + b)
            } else if a >= x {
                w * x
            } else {
                let f = (x - a) / (b - a); // share of the segment below x
                w * (f * 0.5 * (a + x) + (1.0 - f) * x)
            };
        }
        Some(sum)
    }
    fn support(&self) -> (f64, f64) {
        (self.values[0], *self.values.last().expect("non-empty"))
    }
    fn name(&self) -> &'static str {
        "empirical"
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::*;
    use super::super::Clamped;
    use super::*;

    /// E[X²] of the piecewise-linear law (segments uniform).
    fn second_moment(d: &Empirical) -> f64 {
        let pts: Vec<(f64, f64)> = d.points().collect();
        let mut s = pts[0].1 * pts[0].0 * pts[0].0;
        for w in pts.windows(2) {
            let ((a, pa), (b, pb)) = (w[0], w[1]);
            s += (pb - pa) * (a * a + a * b + b * b) / 3.0;
        }
        s
    }

    #[test]
    fn interpolates_linearly_between_points() {
        let d = Empirical::new(&[(0.0, 0.0), (100.0, 0.5), (300.0, 1.0)]).unwrap();
        assert_eq!(d.quantile(0.25), 50.0);
        assert_eq!(d.quantile(0.75), 200.0);
        assert_eq!(d.quantile(1.0), 300.0);
        assert_eq!(d.median(), Some(100.0));
        assert_eq!(d.mean(), Some(0.5 * 50.0 + 0.5 * 200.0));
        assert_eq!(d.limited_mean(100.0), Some(0.5 * 50.0 + 0.5 * 100.0));
        let xs = draw(&d, 1);
        assert_in_support(&xs, &d);
        let sd = (second_moment(&d) - 125.0 * 125.0).sqrt();
        assert_mean(&xs, 125.0, Some(sd));
        assert_median(&xs, 100.0, 0.01);
        assert_deterministic(&d);
    }

    #[test]
    fn first_probability_is_an_atom_and_flat_segments_are_skipped() {
        let d = Empirical::new(&[(10.0, 0.6), (20.0, 0.6), (30.0, 1.0)]).unwrap();
        assert_eq!(d.median(), Some(10.0));
        assert_eq!(d.quantile(0.6), 10.0);
        assert!((d.quantile(0.8) - 25.0).abs() < 1e-12);
        let xs = draw(&d, 2);
        assert!(xs.iter().all(|&x| x == 10.0 || (20.0..=30.0).contains(&x)));
        let atom = xs.iter().filter(|&&x| x == 10.0).count() as f64 / xs.len() as f64;
        assert!((atom - 0.6).abs() < 0.005, "{atom}");
        assert_median(&xs, 10.0, 1e-12);
        assert_mean(&xs, d.mean().unwrap(), None);
        // A single point is a constant.
        let c = Empirical::new(&[(7.0, 1.0)]).unwrap();
        assert_eq!((c.sample(&mut rng(1)), c.mean()), (7.0, Some(7.0)));
    }

    #[test]
    fn csv_with_header_comments_and_blank_lines() {
        let text = "# a test CDF\nsize_bytes, cdf\n\n0,0\n1000, 0.5   # half below 1 kB\n3000,1\n";
        let d = Empirical::from_csv(text).unwrap();
        assert_eq!(d.points().collect::<Vec<_>>(), vec![(0.0, 0.0), (1000.0, 0.5), (3000.0, 1.0)]);
        let no_header = Empirical::from_csv("0,0\n1000,0.5\n3000,1").unwrap();
        assert_eq!(d, no_header);
        // Rounding in the last probability is tolerated and snapped to 1.
        let d = Empirical::from_csv("1,0.5\n2,0.9999999999").unwrap();
        assert_eq!(d.points().last(), Some((2.0, 1.0)));
    }

    #[test]
    fn file_round_trip() {
        let path = std::env::temp_dir().join(format!("iwlab-dist-test-{}.csv", std::process::id()));
        std::fs::write(&path, "value,cdf\n0,0\n10,1\n").unwrap();
        let d = Empirical::from_file(&path).unwrap();
        std::fs::remove_file(&path).unwrap();
        assert_eq!(d.median(), Some(5.0));
        assert_err(Empirical::from_file(&path), &["empirical CDF file", "iwlab-dist-test", "cannot read"]);
    }

    #[test]
    fn capped_empirical_mean_uses_the_limited_mean() {
        let d = Empirical::new(&[(0.0, 0.0), (100.0, 0.5), (300.0, 1.0)]).unwrap();
        // E[min(X, 200)] = 0.5·50 + 0.5·(½·150 + ½·200) = 112.5 (the cap splits a segment).
        assert!((d.limited_mean(200.0).unwrap() - 112.5).abs() < 1e-12);
        let c = Clamped::new(d, Some(20.0), Some(200.0)).unwrap();
        // Directly: 0.1·20 + 0.4·60 + 0.25·150 + 0.25·200 = 113.5.
        assert!((c.mean().unwrap() - 113.5).abs() < 1e-12);
        assert_mean(&draw(&c, 3), 113.5, None);
    }

    #[test]
    fn every_validation_error_names_the_line_and_the_value() {
        let cases: &[(&str, &[&str])] = &[
            ("", &["no points"]),
            ("# only a comment\n\n", &["no points"]),
            ("value,cdf\n", &["no points"]),
            ("0,0\n100,0.5\n50,1\n", &["line 3", "value = 50", "expected > 100", "line 2", "strictly increasing"]),
            ("0,0\n100,0.5\n100,1\n", &["line 3", "value = 100", "expected > 100"]),
            ("0,0\n100,0.6\n200,0.4\n300,1\n", &["line 3", "cdf = 0.4", "expected >= 0.6", "non-decreasing"]),
            ("0,0\n100,0.5\n200,0.97\n", &["line 3", "cdf = 0.97", "expected 1"]),
            ("0,0\n100,1.5\n", &["line 2", "cdf = 1.5", "0 <= cdf <= 1"]),
            ("0,-0.1\n100,1\n", &["line 1", "cdf = -0.1"]),
            ("-5,0\n100,1\n", &["line 1", "value = -5", ">= 0"]),
            ("0,0\n100 1\n", &["line 2", "expected 2 comma-separated fields", "found 1"]),
            ("0,0\n100,1,7\n", &["line 2", "found 3"]),
            ("0,0\n1e3,abc\n", &["line 2", "cdf \"abc\" is not a number"]),
            ("0,0\nten,1\n", &["line 2", "value \"ten\" is not a number"]),
            ("10o,0.1\n20,1\n", &["line 1", "value \"10o\" is not a number"]),
            ("0,0\nnan,1\n", &["line 2", "value = NaN"]),
        ];
        for (text, needles) in cases {
            assert_err(Empirical::from_csv(text), needles);
        }
        assert_err(Empirical::new(&[]), &["no points"]);
        assert_err(Empirical::new(&[(0.0, 0.0), (5.0, 0.5)]), &["point 2", "cdf = 0.5", "expected 1"]);
        assert_err(Empirical::new(&[(5.0, 0.0), (5.0, 1.0)]), &["point 2", "value = 5", "point 1"]);
    }
}

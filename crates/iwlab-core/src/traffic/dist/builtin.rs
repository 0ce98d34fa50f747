//! Built-in flow-size CDFs (docs/scenario-format.md: "built-ins for web search and heavy-tailed … mixes"),
//! selected by name. Sizes are in **bytes** in both tables, exactly as in the files cited;
//! no packet conversion is applied.
//!
//! * `websearch` — the web-search workload of DCTCP (Alizadeh et al., "Data Center TCP",
//!   SIGCOMM 2010, background flow sizes of a production web-search cluster), as tabulated
//!   in `DCTCP_CDF` of the GitHub repository `datacenter/empirical-traffic-gen` (the
//!   Alizadeh group's traffic generator; the file's middle column, a point index, dropped)
//!   and, with the cdf in percent, in `traffic_gen/WebSearch_distribution.txt` of
//!   `alibaba-edu/High-Precision-Congestion-Control` (HPCC, SIGCOMM 2019). The two agree
//!   point for point. Mean ≈ 1.71 MB, median ≈ 73 kB, max 30 MB.
//! * `datamining` — the data-mining workload of VL2 (Greenberg et al., "VL2: A Scalable and
//!   Flexible Data Center Network", SIGCOMM 2009), as tabulated in `VL2_CDF` of
//!   `datacenter/empirical-traffic-gen`. 80 % of flows are below 10 kB, yet flows up to
//!   1 GB carry most bytes: mean ≈ 12.7 MB, median 1100 B.
//!
//! Both are interpolated linearly between points, like those generators do; so `websearch`
//! yields sizes below 10 kB (down to 0) with probability 0.15 — wrap in
//! [`super::Clamped`] with `min` (e.g. one byte or one segment) where that matters.

use super::{DistError, Empirical};

/// The names [`by_name`] accepts.
pub const NAMES: &[&str] = &["websearch", "datamining"];

/// DCTCP web search: (bytes, cdf).
pub const WEBSEARCH: &[(f64, f64)] = &[
    (0.0, 0.0),
    (10_000.0, 0.15),
    (20_000.0, 0.20),
    (30_000.0, 0.30),
    (50_000.0, 0.40),
    (80_000.0, 0.53),
    (200_000.0, 0.60),
    (1_000_000.0, 0.70),
    (2_000_000.0, 0.80),
    (5_000_000.0, 0.90),
    (10_000_000.0, 0.97),
    (30_000_000.0, 1.0),
];

/// VL2 data mining: (bytes, cdf).
pub const DATAMINING: &[(f64, f64)] = &[
    (0.0, 0.0),
    (180.0, 0.1),
    (216.0, 0.2),
    (560.0, 0.3),
    (900.0, 0.4),
    (1_100.0, 0.5),
    (1_870.0, 0.6),
    (3_160.0, 0.7),
    (10_000.0, 0.8),
    (400_000.0, 0.9),
    (3_160_000.0, 0.95),
    (100_000_000.0, 0.98),
    (1_000_000_000.0, 1.0),
];

/// The table of a built-in CDF, if `name` is one of [`NAMES`].
pub fn points(name: &str) -> Option<&'static [(f64, f64)]> {
    match name {
        "websearch" => Some(WEBSEARCH),
        "datamining" => Some(DATAMINING),
        _ => None,
    }
}

/// The built-in CDF `name`; an unknown name is an error listing the valid ones.
pub fn by_name(name: &str) -> Result<Empirical, DistError> {
    match points(name) {
        Some(p) => Empirical::new(p),
        None => Err(DistError::new(format!(
            "empirical.builtin = {name:?} is not a built-in CDF; expected one of: {}",
            NAMES.join(", ")
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::*;
    use super::super::SizeDist;
    use super::*;

    fn sd(d: &Empirical) -> f64 {
        let pts: Vec<(f64, f64)> = d.points().collect();
        let mut s = 0.0;
        for w in pts.windows(2) {
            let ((a, pa), (b, pb)) = (w[0], w[1]);
            s += (pb - pa) * (a * a + a * b + b * b) / 3.0;
        }
        let m = d.mean().unwrap();
        (s - m * m).sqrt()
    }

    fn share_below(xs: &[f64], x: f64) -> f64 {
        xs.iter().filter(|&&v| v < x).count() as f64 / xs.len() as f64
    }

    #[test]
    fn websearch_mean_median_and_samples() {
        let d = by_name("websearch").unwrap();
        // Σ w·(a+b)/2 over the table's segments, by hand: 1 711 250 bytes.
        assert!((d.mean().unwrap() - 1_711_250.0).abs() < 1e-6);
        // Median in [50 kB, 80 kB] (cdf 0.40 → 0.53): 50 000 + 30 000·0.10/0.13.
        assert!((d.median().unwrap() - (50_000.0 + 30_000.0 * 0.1 / 0.13)).abs() < 1e-6);
        assert_eq!(d.support(), (0.0, 30e6));
        let xs = draw(&d, 1);
        assert_in_support(&xs, &d);
        assert_mean(&xs, 1_711_250.0, Some(sd(&d)));
        assert_median(&xs, d.median().unwrap(), 0.01);
        assert!((share_below(&xs, 10_000.0) - 0.15).abs() < 0.005);
        assert_deterministic(&d);
    }

    #[test]
    fn datamining_mean_median_and_samples() {
        let d = by_name("datamining").unwrap();
        // By hand: 1 298.6 + 20 500 + 89 000 + 1 547 400 + 11 000 000 = 12 658 198.6 bytes.
        assert!((d.mean().unwrap() - 12_658_198.6).abs() < 1e-4);
        assert_eq!(d.median(), Some(1100.0));
        assert_eq!(d.support(), (0.0, 1e9));
        let xs = draw(&d, 2);
        assert_in_support(&xs, &d);
        assert_mean(&xs, 12_658_198.6, Some(sd(&d)));
        assert_median(&xs, 1100.0, 0.01);
        assert!((share_below(&xs, 10_000.0) - 0.8).abs() < 0.005); // "80 % of flows < 10 kB"
    }

    #[test]
    fn selectable_by_name_and_unknown_names_list_the_valid_ones() {
        for name in NAMES {
            assert!(by_name(name).is_ok(), "{name}");
            assert!(points(name).is_some());
        }
        assert_err(by_name("hadoop"), &["\"hadoop\"", "expected one of: websearch, datamining"]);
        assert_err(by_name(""), &["is not a built-in CDF"]);
        assert_eq!(points("WebSearch"), None);
    }
}

//! Distributions as a scenario writes them, and fields that are either a fixed value or a
//! distribution ([`FixedOrDist`]).
//!
//! ```toml
//! think = { kind = "uniform", lo = 1, hi = 5 }                       # seconds
//! primary = { kind = "pareto", shape = 1.2, scale = 1122.46, cap = 1e6 }   # bytes
//! rate = { kind = "lognormal", mean = 3.0, median = 1.7, unit = "Mbps", min = 0.02 }
//! start = "2s"                                                       # a fixed value
//! ```
//!
//! Every distribution is a table with a `kind` and its parameters, plus three optional keys
//! common to all kinds:
//! * `unit` — the unit of the parameters (and of `min`/`cap`). Without it they are in the
//!   base unit of the field: **bytes** for sizes, **seconds** for times, **bits/s** for
//!   rates; counts take no unit. Scaling by a unit multiplies the random variable (a
//!   lognormal's `mu` moves by ln(unit)).
//! * `min`, `cap` — draws are clamped to [min, cap] (the RFC 2415 study's "capped at 1 MB", docs/studies.md).
//!
//! Parameter ranges are checked by the engine ([`crate::traffic::dist::DistConfig::build`]);
//! its messages are re-addressed to the field path (`apps[2].think.hi = …`).

use super::error::ScenarioError;
use super::tagged::kind_enum;
use super::units::Quantity;
use crate::traffic::dist::{AnyDist, CdfSource, DistConfig};
use serde::de::{self, value::MapAccessDeserializer, Deserializer, Visitor};
use serde::{Deserialize, Serialize, Serializer};
use std::fmt;
use std::marker::PhantomData;
use std::path::Path;

kind_enum! {
/// A distribution (see the module documentation).
#[derive(Clone, Debug, PartialEq)]
pub enum DistSpec via DistSpecRepr {
    /// Always `value`.
    Constant {
        value: f64,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        unit: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        min: Option<f64>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        cap: Option<f64>,
    },
    /// Uniform on [`lo`, `hi`] (`hi` ≥ `lo` ≥ 0).
    Uniform {
        lo: f64,
        hi: f64,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        unit: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        min: Option<f64>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        cap: Option<f64>,
    },
    /// Exponential with mean `mean` (> 0).
    Exponential {
        mean: f64,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        unit: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        min: Option<f64>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        cap: Option<f64>,
    },
    /// Pareto type I: P(X > x) = (scale/x)^shape, x ≥ scale (shape, scale > 0).
    Pareto {
        shape: f64,
        scale: f64,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        unit: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        min: Option<f64>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        cap: Option<f64>,
    },
    /// Pareto type II (Lomax): P(X > x) = (1 + x/scale)^−shape, x ≥ 0.
    Lomax {
        shape: f64,
        scale: f64,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        unit: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        min: Option<f64>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        cap: Option<f64>,
    },
    /// Lognormal, given either by `mu` and `sigma` (ln X ~ Normal(mu, sigma)) or by `mean`
    /// and `median` (mean > median > 0); exactly one of the two pairs.
    Lognormal {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        mu: Option<f64>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        sigma: Option<f64>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        mean: Option<f64>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        median: Option<f64>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        unit: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        min: Option<f64>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        cap: Option<f64>,
    },
    /// Weibull: P(X > x) = exp(−(x/scale)^shape).
    Weibull {
        shape: f64,
        scale: f64,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        unit: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        min: Option<f64>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        cap: Option<f64>,
    },
    /// Piecewise-linear empirical CDF from exactly one source: `points` (`[[value, cdf], …]`,
    /// values strictly increasing, cdf non-decreasing, ending at 1), `csv` (text,
    /// `value,cdf` per line), `file` (a CSV file; relative paths are relative to the
    /// scenario file) or `builtin` (`"websearch"`, `"datamining"`: flow sizes in bytes).
    /// `unit` may only be used with `points`.
    Empirical {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        points: Option<Vec<[f64; 2]>>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        csv: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        file: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        builtin: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        unit: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        min: Option<f64>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        cap: Option<f64>,
    },
}
}

impl DistSpec {
    /// The `kind` as written.
    pub fn kind(&self) -> &'static str {
        match self {
            DistSpec::Constant { .. } => "constant",
            DistSpec::Uniform { .. } => "uniform",
            DistSpec::Exponential { .. } => "exponential",
            DistSpec::Pareto { .. } => "pareto",
            DistSpec::Lomax { .. } => "lomax",
            DistSpec::Lognormal { .. } => "lognormal",
            DistSpec::Weibull { .. } => "weibull",
            DistSpec::Empirical { .. } => "empirical",
        }
    }

    fn common(&self) -> (&Option<String>, Option<f64>, Option<f64>) {
        match self {
            DistSpec::Constant { unit, min, cap, .. }
            | DistSpec::Uniform { unit, min, cap, .. }
            | DistSpec::Exponential { unit, min, cap, .. }
            | DistSpec::Pareto { unit, min, cap, .. }
            | DistSpec::Lomax { unit, min, cap, .. }
            | DistSpec::Lognormal { unit, min, cap, .. }
            | DistSpec::Weibull { unit, min, cap, .. }
            | DistSpec::Empirical { unit, min, cap, .. } => (unit, *min, *cap),
        }
    }

    /// The engine's configuration with every location/scale parameter multiplied by `k`.
    fn config(&self, path: &str, k: f64, base_dir: Option<&Path>) -> Result<DistConfig, ScenarioError> {
        let (_, min, cap) = self.common();
        let inner = match self {
            DistSpec::Constant { value, .. } => DistConfig::Constant { value: value * k },
            DistSpec::Uniform { lo, hi, .. } => DistConfig::Uniform { lo: lo * k, hi: hi * k },
            DistSpec::Exponential { mean, .. } => DistConfig::Exponential { mean: mean * k },
            DistSpec::Pareto { shape, scale, .. } => DistConfig::Pareto { shape: *shape, scale: scale * k },
            DistSpec::Lomax { shape, scale, .. } => DistConfig::Lomax { shape: *shape, scale: scale * k },
            DistSpec::Weibull { shape, scale, .. } => DistConfig::Weibull { shape: *shape, scale: scale * k },
            DistSpec::Lognormal { mu, sigma, mean, median, .. } => match (mu, sigma, mean, median) {
                (Some(mu), Some(sigma), None, None) => DistConfig::LogNormal { mu: mu + k.ln(), sigma: *sigma },
                (None, None, Some(mean), Some(median)) => {
                    DistConfig::LogNormalMeanMedian { mean: mean * k, median: median * k }
                }
                _ => {
                    return Err(ScenarioError::invalid(
                        path,
                        "a lognormal needs exactly one pair: `mu` and `sigma`, or `mean` and `median`",
                    ))
                }
            },
            DistSpec::Empirical { points, csv, file, builtin, unit, .. } => {
                let given = [points.is_some(), csv.is_some(), file.is_some(), builtin.is_some()];
                if given.iter().filter(|&&g| g).count() != 1 {
                    return Err(ScenarioError::invalid(
                        path,
                        "an empirical distribution needs exactly one of `points`, `csv`, `file`, `builtin`",
                    ));
                }
                if unit.is_some() && points.is_none() {
                    return Err(ScenarioError::invalid(
                        format!("{path}.unit"),
                        "`unit` is only allowed with `points`; CSV files and built-in tables are in the base unit",
                    ));
                }
                let source = if let Some(p) = points {
                    CdfSource::Points(p.iter().map(|&[v, c]| (v * k, c)).collect())
                } else if let Some(c) = csv {
                    CdfSource::Csv(c.clone())
                } else if let Some(f) = file {
                    let p = Path::new(f);
                    CdfSource::File(match base_dir {
                        Some(d) if p.is_relative() => d.join(p),
                        _ => p.to_path_buf(),
                    })
                } else {
                    CdfSource::Builtin(builtin.clone().unwrap_or_default())
                };
                DistConfig::Empirical { source }
            }
        };
        Ok(if min.is_some() || cap.is_some() {
            DistConfig::Clamped { inner: Box::new(inner), min: min.map(|m| m * k), cap: cap.map(|c| c * k) }
        } else {
            inner
        })
    }

    /// Checks the distribution as written (messages in the user's unit, addressed to
    /// `path`) and returns the engine configuration in the base unit of `Q` and its built
    /// form.
    pub fn resolve<Q: Quantity>(
        &self,
        path: &str,
        base_dir: Option<&Path>,
    ) -> Result<(DistConfig, AnyDist), ScenarioError> {
        let (unit, _, _) = self.common();
        let k = match unit {
            None => 1.0,
            Some(u) => Q::unit_factor(u).map_err(|e| ScenarioError::invalid(format!("{path}.unit"), e))?,
        };
        // Validate in the units the user wrote, so messages quote their numbers.
        let as_written = self.config(path, 1.0, base_dir)?;
        as_written.build().map_err(|e| dist_error(path, self.kind(), e.message()))?;
        let cfg = self.config(path, k, base_dir)?;
        let built = cfg.build().map_err(|e| dist_error(path, self.kind(), e.message()))?;
        Ok((cfg, built))
    }
}

/// Re-addresses an engine message (`pareto.shape = 0 …`) to the field path.
fn dist_error(path: &str, kind: &str, msg: &str) -> ScenarioError {
    if let Some(rest) = msg.strip_prefix("empirical CDF point ") {
        // "empirical CDF point 3: value = …" → "path.points[2]: value = …"
        if let Some((n, tail)) = rest.split_once(':') {
            if let Ok(n) = n.trim().parse::<usize>() {
                let at = format!("{path}.points[{}]", n.saturating_sub(1));
                return ScenarioError::invalid_msg(&at, format!("{at}:{tail}"));
            }
        }
    }
    let prefix = format!("{kind}.");
    match msg.strip_prefix(&prefix) {
        Some(rest) => {
            let field = rest.split(' ').next().unwrap_or_default();
            ScenarioError::invalid_msg(format!("{path}.{field}"), format!("{path}.{rest}"))
        }
        None => ScenarioError::invalid(path, msg),
    }
}

/// A field that holds a fixed value (`"50ms"`, `3`) or a distribution table.
#[derive(Clone, Debug, PartialEq)]
pub enum FixedOrDist<T> {
    Fixed(T),
    Dist(DistSpec),
}

impl<T: Quantity> FixedOrDist<T> {
    /// The engine configuration in the base unit of `T` (a fixed value becomes a constant)
    /// and the built distribution, checked.
    pub fn resolve(&self, path: &str, base_dir: Option<&Path>) -> Result<(DistConfig, AnyDist), ScenarioError> {
        match self {
            FixedOrDist::Fixed(v) => {
                let cfg = DistConfig::Constant { value: v.base_value() };
                let built = cfg.build().map_err(|e| ScenarioError::invalid(path, e.message()))?;
                Ok((cfg, built))
            }
            FixedOrDist::Dist(d) => d.resolve::<T>(path, base_dir),
        }
    }
}

impl<T: schemars::JsonSchema> schemars::JsonSchema for FixedOrDist<T> {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        format!("FixedOrDist_{}", T::schema_name()).into()
    }
    fn json_schema(g: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "description": "A fixed value, or a distribution table with a `kind`, drawn from.",
            "anyOf": [g.subschema_for::<T>(), g.subschema_for::<DistSpec>()],
        })
    }
}

impl<T: Serialize> Serialize for FixedOrDist<T> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            FixedOrDist::Fixed(v) => v.serialize(s),
            FixedOrDist::Dist(d) => d.serialize(s),
        }
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for FixedOrDist<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<T>(PhantomData<T>);
        impl<'de, T: Deserialize<'de>> Visitor<'de> for V<T> {
            type Value = FixedOrDist<T>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a fixed value or a distribution table with a `kind`")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
                T::deserialize(de::value::StrDeserializer::<E>::new(v)).map(FixedOrDist::Fixed)
            }
            fn visit_string<E: de::Error>(self, v: String) -> Result<Self::Value, E> {
                self.visit_str(&v)
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Self::Value, E> {
                T::deserialize(de::value::U64Deserializer::<E>::new(v)).map(FixedOrDist::Fixed)
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Self::Value, E> {
                T::deserialize(de::value::I64Deserializer::<E>::new(v)).map(FixedOrDist::Fixed)
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Self::Value, E> {
                T::deserialize(de::value::F64Deserializer::<E>::new(v)).map(FixedOrDist::Fixed)
            }
            fn visit_map<A: de::MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
                DistSpec::deserialize(MapAccessDeserializer::new(map)).map(FixedOrDist::Dist)
            }
        }
        d.deserialize_any(V(PhantomData))
    }
}

//! Checks a flow app's arrival model and (size, IW) mix (`arrivals`, `mix`, `mix_order`, the
//! replay file) and resolves them into engine values; see `traffic::arrivals` for what they do.
//! Policy names stay names here: the engine's policy indices exist per server host, at build.

use super::apps::{ArrivalsSpec, MixOrderSpec, MixSpec, ShortFlowsParams};
use super::error::ScenarioError;
use super::units::Duration;
use super::validate::{at_least_one, one_of, positive_count, ParamsR};
use crate::engine::{SimDuration, SimTime};
use crate::tcp::iw::IwConfig;
use crate::traffic::dist::SizeDist;
use crate::traffic::{Arrivals, MixOrder};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::Path;

type R<T> = Result<T, ScenarioError>;

/// Arrivals in engine units; a replay's rows keep their policy names.
#[derive(Clone, Debug)]
pub(crate) enum ArrivalsR {
    Engine(Arrivals),
    Replay(Vec<ReplayRowR>),
}

/// One row of a replay file, checked, in engine units.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct ReplayRowR {
    pub start: SimTime,
    pub request: u64,
    pub response: u64,
    pub server_iw: String,
}

/// A mix: (response bytes, server policy name) per combination.
#[derive(Clone, Debug)]
pub(crate) struct MixR {
    pub entries: Vec<(u64, String)>,
    pub order: MixOrder,
}

/// The IW policies an app may name, and the one its servers use when a combination names none.
pub(crate) struct Policies<'a> {
    pub defined: &'a BTreeMap<String, IwConfig>,
    pub server_iw: &'a str,
}

impl Policies<'_> {
    fn check(&self, path: String, name: Option<&str>) -> R<String> {
        match name {
            None => Ok(self.server_iw.to_string()),
            Some(n) if self.defined.contains_key(n) => Ok(n.to_string()),
            Some(n) => Err(ScenarioError::value(path, format!("{n:?}"), one_of("a policy", self.defined.keys()))),
        }
    }
}

/// Whether the app's start is 0 for every instance (replayed times are from the run's start).
pub(crate) type StartsAtZero = bool;

/// The `short-flows` parameters: `data_bps` is the bottleneck rate in the data's direction
/// (for `load`), `base_dir` the scenario file's folder (for `file`).
pub(crate) fn short_flows(
    s: &ShortFlowsParams,
    p: &str,
    mss: u32,
    data_bps: u64,
    base_dir: Option<&Path>,
    policies: &Policies,
    starts_at_zero: StartsAtZero,
) -> R<ParamsR> {
    // A 0-byte request: the server answers as soon as the connection is up.
    let request = s.request.bytes(mss);
    let replay = matches!(s.arrivals, ArrivalsSpec::Replay { .. });
    let (response, mix) = match (&s.response, &s.mix, replay) {
        (Some(r), None, false) => (at_least_one(*r, format!("{p}.response"), mss)?, None),
        (None, Some(m), false) => (0, Some(mix(m, s.mix_order, p, mss, policies)?)),
        (None, None, true) => (0, None),
        (_, _, true) => {
            let field = if s.response.is_some() { "response" } else { "mix" };
            return Err(ScenarioError::invalid(
                format!("{p}.{field}"),
                "not allowed with replayed arrivals; the replay file gives every flow's response and server_iw",
            ));
        }
        (Some(_), Some(_), false) => {
            return Err(ScenarioError::invalid(
                format!("{p}.mix"),
                "give exactly one of `response` (one size) and `mix` (several (response, server_iw) combinations)",
            ))
        }
        (None, None, false) => {
            return Err(ScenarioError::invalid(
                p,
                "missing field `response`; give `response` (one size) or `mix` (several (response, server_iw) combinations)",
            ))
        }
    };
    if s.mix_order.is_some() && s.mix.is_none() {
        return Err(ScenarioError::invalid(format!("{p}.mix_order"), "only allowed with `mix`"));
    }
    let mean_response = match &mix {
        Some(m) => m.entries.iter().map(|e| e.0 as f64).sum::<f64>() / m.entries.len() as f64,
        None => response as f64,
    };
    let a = format!("{p}.arrivals");
    let arrivals = match &s.arrivals {
        ArrivalsSpec::Periodic { period } => {
            if period.get() == SimDuration::ZERO {
                return Err(ScenarioError::value(format!("{a}.period"), period, "> 0"));
            }
            ArrivalsR::Engine(Arrivals::Periodic(period.get()))
        }
        ArrivalsSpec::Poisson { rate, load } => {
            let rate_per_s = match (rate, load) {
                (Some(r), None) => {
                    if !(r.is_finite() && *r > 0.0) {
                        return Err(ScenarioError::value(format!("{a}.rate"), r, "> 0 flows per second"));
                    }
                    *r
                }
                (None, Some(l)) => {
                    let f = l.fraction();
                    if !(f.is_finite() && f > 0.0 && f <= 1.0) {
                        return Err(ScenarioError::value(format!("{a}.load"), l, "a share 0% < load <= 100% of the bottleneck"));
                    }
                    // rate = load × bottleneck rate / (8 × mean response bytes), per instance.
                    f * data_bps as f64 / (8.0 * mean_response)
                }
                _ => {
                    return Err(ScenarioError::invalid(
                        a,
                        "give exactly one of `rate` (flows per second) and `load` (a share of the bottleneck such as \"10%\")",
                    ))
                }
            };
            ArrivalsR::Engine(Arrivals::Poisson { rate_per_s })
        }
        ArrivalsSpec::Bursts { flows, gap } => {
            if *flows == 0 {
                return Err(ScenarioError::value(format!("{a}.flows"), flows, ">= 1 flow per burst"));
            }
            let (cfg, built) = gap.resolve(&format!("{a}.gap"), base_dir)?;
            if built.mean().is_some_and(|m| m <= 0.0) {
                return Err(ScenarioError::invalid(format!("{a}.gap"), "has a mean of 0 s; expected a mean > 0"));
            }
            ArrivalsR::Engine(Arrivals::Bursts { flows: *flows, gap: cfg })
        }
        ArrivalsSpec::ClosedLoop { think } => {
            ArrivalsR::Engine(Arrivals::ClosedLoop { think: think.resolve(&format!("{a}.think"), base_dir)?.0 })
        }
        ArrivalsSpec::Replay { file } => {
            if !starts_at_zero {
                return Err(ScenarioError::invalid(
                    format!("{p}.start"),
                    "must be 0 with replayed arrivals (the file's start times are from the run's start)",
                ));
            }
            let path = match base_dir {
                Some(d) => d.join(file),
                None => Path::new(file).to_path_buf(),
            };
            ArrivalsR::Replay(replay_rows(&path, &format!("{a}.file"), request, policies)?)
        }
    };
    Ok(ParamsR::ShortFlows { request, response, arrivals, count: positive_count(s.flows, format!("{p}.flows"))?, mix })
}

fn mix(m: &[MixSpec], order: Option<MixOrderSpec>, p: &str, mss: u32, policies: &Policies) -> R<MixR> {
    if m.is_empty() {
        return Err(ScenarioError::invalid(format!("{p}.mix"), "is empty; expected at least one combination"));
    }
    let entries = m
        .iter()
        .enumerate()
        .map(|(k, e)| {
            let at = format!("{p}.mix[{k}]");
            Ok((
                at_least_one(e.response, format!("{at}.response"), mss)?,
                policies.check(format!("{at}.server_iw"), e.server_iw.as_deref())?,
            ))
        })
        .collect::<R<Vec<_>>>()?;
    let order = match order.unwrap_or_default() {
        MixOrderSpec::PermutedBlocks => MixOrder::PermutedBlocks,
        MixOrderSpec::Cyclic => MixOrder::Cyclic,
        MixOrderSpec::Random => MixOrder::Random,
    };
    Ok(MixR { entries, order })
}

/// A replay file's row as written.
#[derive(Deserialize)]
struct Row {
    start: String,
    response: u64,
    #[serde(default)]
    server_iw: Option<String>,
    #[serde(default)]
    request: Option<u64>,
}

/// Seconds from the run's start as written, exact to the nanosecond when the text has at most
/// nine decimals (else rounded to the nearest nanosecond).
fn start_time(text: &str) -> Result<SimTime, String> {
    let ns = match text.parse::<Duration>() {
        Ok(d) => d.get(),
        Err(e) => match text.trim().parse::<f64>() {
            Ok(x) if (0.0..1.8e10).contains(&x) => SimDuration::from_secs_f64(x),
            _ => return Err(e),
        },
    };
    Ok(SimTime::ZERO + ns)
}

/// The rows of a replay file, sorted by start (stably: rows at one instant keep their order).
fn replay_rows(path: &Path, field: &str, request: u64, policies: &Policies) -> R<Vec<ReplayRowR>> {
    let shown = path.display();
    let fail = |why: String| ScenarioError::invalid(field, format!("replay file {shown}: {why}"));
    let mut reader = csv::ReaderBuilder::new()
        .trim(csv::Trim::All)
        .comment(Some(b'#'))
        .from_path(path)
        .map_err(|e| fail(format!("cannot read: {e}")))?;
    let headers = reader.headers().map_err(|e| fail(e.to_string()))?.clone();
    let mut rows = Vec::new();
    for record in reader.records() {
        let record = record.map_err(|e| fail(e.to_string()))?;
        let line = record.position().map_or(0, |p| p.line());
        let bad = |why: String| fail(format!("line {line}: {why}"));
        let row: Row = record.deserialize(Some(&headers)).map_err(|e| bad(csv_message(&e, &headers)))?;
        let start = start_time(&row.start).map_err(|e| bad(format!("start = {e}")))?;
        if row.response == 0 {
            return Err(bad("response = 0 is not allowed; expected >= 1 byte".into()));
        }
        let server_iw =
            policies.check(field.to_string(), row.server_iw.as_deref().filter(|s| !s.is_empty())).map_err(|e| {
                bad(format!(
                    "server_iw = {:?} is not allowed; expected {}",
                    row.server_iw.as_deref().unwrap_or(""),
                    allowed(&e)
                ))
            })?;
        rows.push(ReplayRowR { start, request: row.request.unwrap_or(request), response: row.response, server_iw });
    }
    if rows.is_empty() {
        return Err(fail(
            "has no rows; expected a header `start,response[,server_iw][,request]` and at least one flow".into(),
        ));
    }
    rows.sort_by_key(|r| r.start);
    Ok(rows)
}

/// What a policy error says is allowed.
fn allowed(e: &ScenarioError) -> String {
    let m = e.message();
    m.split_once("expected ").map_or(m.to_string(), |(_, rest)| rest.to_string())
}

/// A CSV deserialisation error as "column: why" (the line is named by the caller).
fn csv_message(e: &csv::Error, headers: &csv::StringRecord) -> String {
    match e.kind() {
        csv::ErrorKind::Deserialize { err, .. } => match err.field().and_then(|i| headers.get(i as usize)) {
            Some(column) => format!("{column}: {}", err.kind()),
            None => err.kind().to_string(),
        },
        _ => e.to_string(),
    }
}

//! Checks a parsed scenario and resolves it into engine values ([`Resolved`]): ranges,
//! references between tables, defaults, units. `Scenario::validate` runs it and drops the
//! result; `Scenario::build` instantiates the result. Every rejection is a
//! [`ScenarioError`] naming the field path, the value and what is allowed.

use super::apps::{AppParams, AppSpec, HttpSpec, Mapping};
use super::arrivals::{ArrivalsR, MixR, Policies};
use super::dist::FixedOrDist;
use super::error::ScenarioError;
use super::model::{
    AccessSpec, BottleneckSpec, Direction, IwSection, IwSpec, LinkOverride, LossSpec, QueueSpec, Scenario, TcpSpec,
    TopologySpec,
};
use super::profile;
use super::tcp::{field_set, tcp_config};
use super::units::{Duration, Quantity, Rate, RateOrShare, Size};
use crate::engine::{SimDuration, SimTime};
use crate::net::queue::QueueConfig;
use crate::tcp::config::TcpConfig;
use crate::tcp::iw::IwConfig;
use crate::traffic::dist::{AnyDist, DistConfig, SizeDist};
use crate::traffic::HttpVersion;
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

/// Which side of the dumbbell a host group is on.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum GroupSide {
    Left,
    Right,
}

/// A value in its base unit, fixed or drawn.
#[derive(Clone, Debug)]
pub(crate) enum Draw {
    Fixed(f64),
    Dist(AnyDist),
}

/// One link direction, resolved.
#[derive(Clone, Debug)]
pub(crate) struct LinkR {
    pub rate_bps: u64,
    pub delay: SimDuration,
    pub queue: QueueConfig,
}

/// One host group, resolved; rates in bits/s, delays in seconds.
#[derive(Clone, Debug)]
pub(crate) struct GroupR {
    pub name: String,
    pub side: GroupSide,
    pub count: u32,
    pub down_rate: Draw,
    pub down_delay: Draw,
    /// `None`: the same draw as down.
    pub up_rate: Option<Draw>,
    pub up_delay: Option<Draw>,
    pub down_queue: QueueConfig,
    pub up_queue: QueueConfig,
}

/// Kind parameters in engine units; `Ends` are added at build time.
#[derive(Clone, Debug)]
pub(crate) enum ParamsR {
    Ftp {
        size: u64,
        request: u64,
        gap: Option<DistConfig>,
        count: Option<u32>,
    },
    Bulk {
        upload: bool,
    },
    Web {
        version: HttpVersion,
        request: u64,
        primary: DistConfig,
        embedded: DistConfig,
        embedded_count: DistConfig,
        think: DistConfig,
        pages: Option<u32>,
    },
    /// `response`: 0 with a mix or a replay (each flow's comes from them).
    ShortFlows {
        request: u64,
        response: u64,
        arrivals: ArrivalsR,
        count: Option<u32>,
        mix: Option<MixR>,
    },
    PoissonFlows {
        rate_per_s: f64,
        size: DistConfig,
        request: u64,
        count: Option<u32>,
    },
    Udp {
        rate_bps: u64,
        payload: u32,
        poisson: bool,
        stop: Option<SimTime>,
    },
}

#[derive(Clone, Debug)]
pub(crate) struct AppR {
    pub name: String,
    pub kind: &'static str,
    pub clients: usize,
    pub servers: usize,
    pub count: u32,
    pub mapping: Mapping,
    pub offset: u32,
    pub start: Draw,
    pub tcp: Arc<TcpConfig>,
    pub server_iw: String,
    pub client_iw: String,
    pub params: ParamsR,
    /// `transport` with its `[quic]` settings (see `super::quic`).
    pub transport: crate::transport::Transport,
}

/// A scenario in engine values.
#[derive(Clone, Debug)]
pub(crate) struct Resolved {
    pub end: SimTime,
    pub warmup: SimTime,
    pub sample_interval: Option<SimDuration>,
    pub forward: LinkR,
    pub reverse: LinkR,
    pub loss: Option<(f64, Direction)>,
    /// `topology.jitter` (zero when absent).
    pub jitter: SimDuration,
    pub groups: Vec<GroupR>,
    pub iw: BTreeMap<String, IwConfig>,
    pub iw_routes: Vec<super::policy_file::Route>,
    pub apps: Vec<AppR>,
}

type R<T> = Result<T, ScenarioError>;

/// Most hosts a scenario may have in all (the engine's routing table is quadratic in nodes).
pub const MAX_HOSTS: u64 = 10_000;
/// Largest `topology.jitter`: it stands for processing and scheduling noise, not for a path.
const MAX_JITTER: SimDuration = SimDuration::from_secs(1);
/// Most instances one application entry may have.
pub const MAX_INSTANCES: u32 = 100_000;

impl Scenario {
    /// Checks ranges, units, distributions and references; the first problem is returned.
    pub fn validate(&self) -> Result<(), ScenarioError> {
        self.resolve().map(|_| ())
    }

    pub(crate) fn resolve(&self) -> R<Resolved> {
        if self.name.trim().is_empty() {
            return Err(ScenarioError::value("name", "\"\"", "a non-empty name"));
        }
        if self.duration.get() == SimDuration::ZERO {
            return Err(ScenarioError::value("duration", self.duration, "> 0"));
        }
        if self.warmup >= self.duration {
            return Err(ScenarioError::value("warmup", self.warmup, format!("< duration ({})", self.duration)));
        }
        if let Some(s) = self.sample_interval {
            if s.get() == SimDuration::ZERO {
                return Err(ScenarioError::value("sample_interval", s, "> 0"));
            }
        }
        if self.seed > i64::MAX as u64 {
            return Err(ScenarioError::value("seed", self.seed, format!("0..={} (a TOML integer)", i64::MAX)));
        }
        let base_dir = self.base_dir.as_deref();
        let TopologySpec::Dumbbell(db) = &self.topology;
        let (forward, reverse, loss) = bottleneck(&db.bottleneck)?;
        let jitter = db.jitter.map_or(SimDuration::ZERO, Duration::get);
        if jitter > MAX_JITTER {
            return Err(ScenarioError::value("topology.jitter", db.jitter.expect("set when above 0"), "0..=1s"));
        }
        let mut groups = Vec::new();
        for (side, list, key) in [(GroupSide::Left, &db.left, "left"), (GroupSide::Right, &db.right, "right")] {
            for (i, g) in list.iter().enumerate() {
                let path = format!("topology.{key}[{i}]");
                if g.name.trim().is_empty() {
                    return Err(ScenarioError::value(format!("{path}.name"), "\"\"", "a non-empty name"));
                }
                if groups.iter().any(|o: &GroupR| o.name == g.name) {
                    return Err(ScenarioError::value(
                        format!("{path}.name"),
                        format!("{:?}", g.name),
                        "a name no other host group has",
                    ));
                }
                let hosts_before: u64 = groups.iter().map(|g: &GroupR| g.count as u64).sum();
                if g.count == 0 || hosts_before + g.count as u64 > MAX_HOSTS {
                    return Err(ScenarioError::value(
                        format!("{path}.count"),
                        g.count,
                        format!("1..={} hosts ({MAX_HOSTS} hosts in all groups together)", MAX_HOSTS - hosts_before),
                    ));
                }
                groups.push(group(&g.access, &format!("{path}.access"), g.name.clone(), side, g.count, base_dir)?);
            }
        }
        // The scenario-level options on their own, so their errors name `tcp.…`.
        tcp_config(&TcpSpec::default(), &self.tcp, &|f| format!("tcp.{f}"))?;
        let mut iw = iw_section(&self.iw)?;
        if let Some(d) = self.profile_iw() {
            // tcp.profile = "linux" without iw.default: IW 10 (TCP_INIT_CWND) where no policy is named.
            iw.entry(d.to_string()).or_insert(IwConfig::Fixed { segments: profile::LINUX_IW_SEGMENTS });
        }
        let iw_routes = super::policy_file::validate_routes(&self.iw.routes, &iw, "iw.routes")?;
        let mut apps = Vec::new();
        for (i, a) in self.apps.iter().enumerate() {
            apps.push(self.app(a, i, &groups, &iw, &forward, &reverse)?);
        }
        Ok(Resolved {
            end: SimTime::ZERO + self.duration.get(),
            warmup: SimTime::ZERO + self.warmup.get(),
            sample_interval: self.sample_interval.map(Duration::get),
            forward,
            reverse,
            loss,
            jitter,
            groups,
            iw,
            iw_routes,
            apps,
        })
    }

    fn app(
        &self,
        a: &AppSpec,
        i: usize,
        groups: &[GroupR],
        iw: &BTreeMap<String, IwConfig>,
        forward: &LinkR,
        reverse: &LinkR,
    ) -> R<AppR> {
        let p = format!("apps[{i}]");
        let c = &a.common;
        let find = |field: &str, name: &str| -> R<usize> {
            groups.iter().position(|g| g.name == name).ok_or_else(|| {
                ScenarioError::value(
                    format!("{p}.{field}"),
                    format!("{name:?}"),
                    one_of("a host group", groups.iter().map(|g| &g.name)),
                )
            })
        };
        let clients = find("clients", &c.clients)?;
        let servers = find("servers", &c.servers)?;
        if clients == servers {
            return Err(ScenarioError::value(
                format!("{p}.servers"),
                format!("{:?}", c.servers),
                "a host group other than `clients`",
            ));
        }
        // count = 0 keeps the entry but starts nothing (sweeps over "0..3 FTP clients").
        if c.count > MAX_INSTANCES {
            return Err(ScenarioError::value(format!("{p}.count"), c.count, format!("0..={MAX_INSTANCES} instances")));
        }
        if c.mapping == Mapping::Distinct {
            for (field, g) in [("clients", &groups[clients]), ("servers", &groups[servers])] {
                let need = c.offset as u64 + c.count as u64;
                if need > g.count as u64 {
                    return Err(ScenarioError::value(
                        format!("{p}.count"),
                        c.count,
                        format!(
                            "offset + count <= {}, the hosts of {field} group {:?} (mapping = \"distinct\" gives \
                             every instance hosts of its own; use mapping = \"modulo\" to share hosts)",
                            g.count, g.name
                        ),
                    ));
                }
            }
        }
        let start = draw::<Duration>(&c.start, &format!("{p}.start"), self.base_dir.as_deref())?;
        let tcp = tcp_config(&self.tcp, &c.tcp, &|f| {
            if field_set(&c.tcp, f) {
                format!("{p}.tcp.{f}")
            } else {
                format!("tcp.{f}")
            }
        })?;
        let policy = |field: &str, name: &Option<String>| -> R<String> {
            match name.as_deref().or(self.iw.default.as_deref()).or(self.profile_iw()) {
                Some(n) if iw.contains_key(n) => Ok(n.to_string()),
                Some(n) => {
                    Err(ScenarioError::value(format!("{p}.{field}"), format!("{n:?}"), one_of("a policy", iw.keys())))
                }
                None => Err(ScenarioError::invalid(
                    format!("{p}.{field}"),
                    format!(
                        "not set, and iw.default is absent; name one of the policies {:?}",
                        iw.keys().collect::<Vec<_>>()
                    ),
                )),
            }
        };
        let server_iw = policy("server_iw", &c.server_iw)?;
        let client_iw = policy("client_iw", &c.client_iw)?;
        // The bottleneck direction data crosses: servers' side → clients' side.
        let data_link = if groups[servers].side == GroupSide::Right && groups[clients].side == GroupSide::Left {
            reverse
        } else {
            forward
        };
        let mss = tcp.mss;
        let policies = Policies { defined: iw, server_iw: &server_iw };
        let starts_at_zero = matches!(c.start, FixedOrDist::Fixed(d) if d.get() == SimDuration::ZERO);
        let params =
            params(&a.params, &p, mss, data_link.rate_bps, self.base_dir.as_deref(), &policies, starts_at_zero)?;
        let transport = super::quic::transport(&self.quic, a, &p)?;
        Ok(AppR {
            name: c.name.clone().unwrap_or_else(|| format!("{}-{i}", a.kind())),
            kind: a.kind(),
            clients,
            servers,
            count: c.count,
            mapping: c.mapping,
            offset: c.offset,
            start,
            tcp: Arc::new(tcp),
            server_iw,
            client_iw,
            params,
            transport,
        })
    }
}

/// "expected a host group: one of [\"a\", \"b\"]" (or "none is defined").
pub(crate) fn one_of<'a>(what: &str, names: impl Iterator<Item = &'a String>) -> String {
    let v: Vec<&String> = names.collect();
    if v.is_empty() {
        format!("{what}, but none is defined")
    } else {
        format!("{what}, one of {v:?}")
    }
}

/// Random loss probability and the directions it applies to.
type Loss = Option<(f64, Direction)>;

fn bottleneck(b: &BottleneckSpec) -> R<(LinkR, LinkR, Loss)> {
    let p = "topology.bottleneck";
    let fwd = link(b.rate, b.delay, &b.queue, p)?;
    let rev = match &b.reverse {
        None => fwd.clone(),
        Some(LinkOverride { rate, delay, queue }) => {
            let rp = format!("{p}.reverse");
            link(
                rate.unwrap_or(b.rate),
                delay.unwrap_or(b.delay),
                queue.as_ref().unwrap_or(&b.queue),
                if rate.is_some() || queue.is_some() { &rp } else { p },
            )?
        }
    };
    let loss = match &b.loss {
        None => None,
        Some(LossSpec::Random { p: prob, direction }) => {
            if !(prob.is_finite() && (0.0..1.0).contains(prob)) {
                return Err(ScenarioError::value(format!("{p}.loss.p"), prob, "0 <= p < 1"));
            }
            Some((*prob, *direction))
        }
    };
    Ok((fwd, rev, loss))
}

fn link(rate: Rate, delay: Duration, queue: &QueueSpec, path: &str) -> R<LinkR> {
    if rate.bps() == 0 {
        return Err(ScenarioError::value(format!("{path}.rate"), rate, "> 0"));
    }
    Ok(LinkR { rate_bps: rate.bps(), delay: delay.get(), queue: queue_config(queue, &format!("{path}.queue"))? })
}

/// The engine's queue configuration, its ranges checked.
pub(crate) fn queue_config(q: &QueueSpec, path: &str) -> R<QueueConfig> {
    let limit_zero = match q {
        QueueSpec::DropTail { limit } => limit.is_zero(),
        QueueSpec::Red { limit, .. } | QueueSpec::Codel { limit, .. } => limit.is_some_and(|l| l.is_zero()),
    };
    if limit_zero {
        let shown = match q {
            QueueSpec::DropTail { limit } => limit.to_string(),
            QueueSpec::Red { limit, .. } | QueueSpec::Codel { limit, .. } => {
                limit.map(|l| l.to_string()).unwrap_or_default()
            }
        };
        return Err(ScenarioError::value(format!("{path}.limit"), shown, "> 0 packets or bytes"));
    }
    let cfg = q.config();
    let checked = match &cfg {
        QueueConfig::DropTail { .. } => Ok(()),
        QueueConfig::Red(r) => r.validate().map_err(|m| (m, "RED ")),
        QueueConfig::Codel(c) => c.validate().map_err(|m| (m, "CoDel ")),
    };
    if let Err((m, prefix)) = checked {
        // "RED max_th = 1 is out of range; allowed: >= min_th" → "path.max_th = 1 …"
        return Err(match m.strip_prefix(prefix) {
            Some(rest) => ScenarioError::invalid_msg(path, format!("{path}.{rest}")),
            None => ScenarioError::invalid(path, m),
        });
    }
    Ok(cfg)
}

fn draw<Q: Quantity>(v: &FixedOrDist<Q>, path: &str, base_dir: Option<&Path>) -> R<Draw> {
    Ok(match v {
        FixedOrDist::Fixed(x) => Draw::Fixed(x.base_value()),
        FixedOrDist::Dist(_) => Draw::Dist(v.resolve(path, base_dir)?.1),
    })
}

fn rate_draw(v: &FixedOrDist<Rate>, path: &str, base_dir: Option<&Path>) -> R<Draw> {
    let d = draw::<Rate>(v, path, base_dir)?;
    match &d {
        Draw::Fixed(x) if *x < 1.0 => return Err(ScenarioError::value(path, Rate::new(*x as u64), "> 0")),
        Draw::Dist(dist) => {
            let (lo, _) = dist.support();
            if lo.round() < 1.0 {
                return Err(ScenarioError::invalid(
                    path,
                    format!(
                        "a per-host rate distribution must stay >= 1bps; this {} can draw {lo} bps — give it a `min`",
                        dist.name()
                    ),
                ));
            }
        }
        _ => {}
    }
    Ok(d)
}

fn group(a: &AccessSpec, path: &str, name: String, side: GroupSide, count: u32, base_dir: Option<&Path>) -> R<GroupR> {
    let down_rate = rate_draw(&a.rate, &format!("{path}.rate"), base_dir)?;
    let down_delay = draw::<Duration>(&a.delay, &format!("{path}.delay"), base_dir)?;
    let down_queue = queue_config(&a.queue, &format!("{path}.queue"))?;
    let (mut up_rate, mut up_delay, mut up_queue) = (None, None, down_queue.clone());
    if let Some(up) = &a.up {
        if let Some(r) = &up.rate {
            up_rate = Some(rate_draw(r, &format!("{path}.up.rate"), base_dir)?);
        }
        if let Some(d) = &up.delay {
            up_delay = Some(draw::<Duration>(d, &format!("{path}.up.delay"), base_dir)?);
        }
        if let Some(q) = &up.queue {
            up_queue = queue_config(q, &format!("{path}.up.queue"))?;
        }
    }
    Ok(GroupR { name, side, count, down_rate, down_delay, up_rate, up_delay, down_queue, up_queue })
}

/// The `[iw]` section on its own (scenarios and policy files share it): every policy
/// validated, and `default` naming one of them.
pub(crate) fn iw_section(s: &IwSection) -> R<BTreeMap<String, IwConfig>> {
    let mut iw = BTreeMap::new();
    for (name, p) in &s.policies {
        iw.insert(name.clone(), iw_policy(p, &format!("iw.policies.{name}"))?);
    }
    if let Some(d) = &s.default {
        if !iw.contains_key(d) {
            return Err(ScenarioError::value("iw.default", format!("{d:?}"), one_of("a defined policy", iw.keys())));
        }
    }
    Ok(iw)
}

impl Scenario {
    /// The IW policy name the scenario's TCP profile supplies when `iw.default` is absent.
    fn profile_iw(&self) -> Option<&'static str> {
        (self.iw.default.is_none() && self.tcp.profile.as_deref() == Some("linux")).then_some(profile::LINUX_IW_POLICY)
    }
}

fn iw_policy(p: &IwSpec, path: &str) -> R<IwConfig> {
    match *p {
        IwSpec::Fixed { segments: 0 } => {
            return Err(ScenarioError::value(format!("{path}.segments"), 0, ">= 1 segment"));
        }
        IwSpec::Rfc6928Fallback { expiry, .. } if expiry.get() == SimDuration::ZERO => {
            return Err(ScenarioError::value(format!("{path}.expiry"), expiry, "> 0"));
        }
        IwSpec::Rfc6928Fallback { max_entries: 0, .. } => {
            return Err(ScenarioError::value(format!("{path}.max_entries"), 0, ">= 1 destination"));
        }
        IwSpec::Aimd { initial, min, max, step, raise_after } => {
            adaptive_bounds(path, initial, min, max)?;
            if step == 0 {
                return Err(ScenarioError::value(format!("{path}.step"), 0, ">= 1 segment"));
            }
            if raise_after == 0 {
                return Err(ScenarioError::value(format!("{path}.raise_after"), 0, ">= 1 connection"));
            }
        }
        IwSpec::Learned { initial, min, max, samples, percentile } => {
            adaptive_bounds(path, initial, min, max)?;
            if samples == 0 {
                return Err(ScenarioError::value(format!("{path}.samples"), 0, ">= 1 connection"));
            }
            if !(1..=100).contains(&percentile) {
                return Err(ScenarioError::value(format!("{path}.percentile"), percentile, "1 ..= 100"));
            }
        }
        IwSpec::SizeBased { theta, v, min_iw } => {
            if theta.get() == 0 {
                return Err(ScenarioError::value(format!("{path}.theta"), theta, "> 0 bytes"));
            }
            if v == 0 {
                return Err(ScenarioError::value(format!("{path}.v"), 0, ">= 1 segment"));
            }
            if min_iw == 0 {
                return Err(ScenarioError::value(format!("{path}.min_iw"), 0, ">= 1 segment"));
            }
        }
        _ => {}
    }
    Ok(p.config())
}

/// 1 ≤ min ≤ initial ≤ max, segments (the adaptive policies).
fn adaptive_bounds(path: &str, initial: u32, min: u32, max: u32) -> R<()> {
    if min == 0 {
        return Err(ScenarioError::value(format!("{path}.min"), 0, ">= 1 segment"));
    }
    if max < min {
        return Err(ScenarioError::value(format!("{path}.max"), max, format!(">= min ({min})")));
    }
    if !(min..=max).contains(&initial) {
        return Err(ScenarioError::value(format!("{path}.initial"), initial, format!("{min} ..= {max} (min ..= max)")));
    }
    Ok(())
}

pub(crate) fn at_least_one(v: Size, path: String, mss: u32) -> R<u64> {
    let b = v.bytes(mss);
    if b == 0 {
        return Err(ScenarioError::value(path, v, ">= 1 byte"));
    }
    Ok(b)
}

pub(crate) fn positive_count(v: Option<u32>, path: String) -> R<Option<u32>> {
    if v == Some(0) {
        return Err(ScenarioError::value(path, 0, ">= 1, or absent (until the end of the run)"));
    }
    Ok(v)
}

fn params(
    a: &AppParams,
    p: &str,
    mss: u32,
    data_bps: u64,
    base_dir: Option<&Path>,
    policies: &Policies,
    starts_at_zero: bool,
) -> R<ParamsR> {
    Ok(match a {
        AppParams::Ftp(f) => ParamsR::Ftp {
            size: at_least_one(f.size, format!("{p}.size"), mss)?,
            // A 0-byte request: the server answers as soon as the connection is up.
            request: f.request.bytes(mss),
            gap: match &f.gap {
                None => None,
                Some(g) => Some(g.resolve(&format!("{p}.gap"), base_dir)?.0),
            },
            count: positive_count(f.transfers, format!("{p}.transfers"))?,
        },
        AppParams::Bulk(b) => ParamsR::Bulk { upload: b.upload },
        AppParams::Web(w) => ParamsR::Web {
            version: match w.http {
                HttpSpec::Http10 => HttpVersion::Http10,
                HttpSpec::Http11 => HttpVersion::Http11,
            },
            request: at_least_one(w.request, format!("{p}.request"), mss)?,
            primary: w.primary.resolve(&format!("{p}.primary"), base_dir)?.0,
            embedded: w.embedded.resolve(&format!("{p}.embedded"), base_dir)?.0,
            embedded_count: w.embedded_count.resolve(&format!("{p}.embedded_count"), base_dir)?.0,
            think: w.think.resolve(&format!("{p}.think"), base_dir)?.0,
            pages: positive_count(w.pages, format!("{p}.pages"))?,
        },
        AppParams::ShortFlows(s) => {
            super::arrivals::short_flows(s, p, mss, data_bps, base_dir, policies, starts_at_zero)?
        }
        AppParams::PoissonFlows(f) => {
            let (size, built) = f.size.resolve(&format!("{p}.size"), base_dir)?;
            let rate_per_s = match (f.rate, f.load) {
                (Some(r), None) => {
                    if !(r.is_finite() && r > 0.0) {
                        return Err(ScenarioError::value(format!("{p}.rate"), r, "> 0 flows per second"));
                    }
                    r
                }
                (None, Some(l)) => {
                    if !(l.is_finite() && l > 0.0 && l <= 1.0) {
                        return Err(ScenarioError::value(
                            format!("{p}.load"),
                            l,
                            "0 < load <= 1 (a fraction of the bottleneck)",
                        ));
                    }
                    let mean = built.mean().filter(|m| m.is_finite() && *m > 0.0).ok_or_else(|| {
                        ScenarioError::invalid(
                            format!("{p}.load"),
                            format!(
                                "needs a size distribution with a finite mean > 0; this {} has none (give it a `cap`, or use `rate`)",
                                built.name()
                            ),
                        )
                    })?;
                    l * data_bps as f64 / (8.0 * mean)
                }
                _ => {
                    return Err(ScenarioError::invalid(
                        p,
                        "give exactly one of `rate` (flows per second) and `load` (fraction of the bottleneck)",
                    ))
                }
            };
            ParamsR::PoissonFlows {
                rate_per_s,
                size,
                // A 0-byte request: the server answers as soon as the connection is up.
                request: f.request.bytes(mss),
                count: positive_count(f.flows, format!("{p}.flows"))?,
            }
        }
        AppParams::Udp(u) => {
            let rate_bps = match u.rate {
                RateOrShare::Rate(r) => {
                    if r.bps() == 0 {
                        return Err(ScenarioError::value(format!("{p}.rate"), r, "> 0"));
                    }
                    r.bps()
                }
                RateOrShare::Percent(x) => {
                    if !(x > 0.0 && x <= 100.0) {
                        return Err(ScenarioError::value(
                            format!("{p}.rate"),
                            u.rate,
                            "a share 0% < x <= 100% of the bottleneck",
                        ));
                    }
                    ((x / 100.0) * data_bps as f64).round().max(1.0) as u64
                }
            };
            if u.payload.get() == 0 || u.payload.get() > 65_507 {
                return Err(ScenarioError::value(format!("{p}.payload"), u.payload, "1..=65507 bytes"));
            }
            ParamsR::Udp {
                rate_bps,
                payload: u.payload.get() as u32,
                poisson: u.poisson,
                stop: u.stop.map(|s| SimTime::ZERO + s.get()),
            }
        }
    })
}

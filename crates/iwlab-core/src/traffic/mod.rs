//! Traffic: applications that open connections and move data (FTP, bulk, web, short flows,
//! Poisson flow arrivals, UDP background), and the size and time distributions they draw from.
//!
//! An application is described by an [`AppConfig`] (plain data, built by the scenario layer)
//! and turned into a running [`crate::sim::Application`] by [`build_app`].

pub mod arrivals;
pub mod dist;

use crate::engine::SimTime;
use crate::net::packet::NodeId;
use crate::tcp::config::TcpConfig;
pub use arrivals::{Arrivals, Mix, MixEntry, MixOrder, ReplayFlow};
use dist::DistConfig;
use std::sync::Arc;

/// The two ends of an application's connections: where they are, their TCP settings, and the
/// index of the IW policy (in `Core::iw`) each end uses.
#[derive(Clone, Debug)]
pub struct Ends {
    pub client: NodeId,
    pub server: NodeId,
    pub client_tcp: Arc<TcpConfig>,
    pub server_tcp: Arc<TcpConfig>,
    pub client_iw: usize,
    pub server_iw: usize,
    /// What carries the connections (TCP unless the scenario says `transport = "quic"`).
    pub transport: crate::transport::Transport,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum HttpVersion {
    /// One connection per object; embedded objects on parallel connections.
    Http10,
    /// One persistent connection per page carrying every object.
    Http11,
}

/// An application as a scenario describes it. Sizes are bytes; times drawn from
/// distributions are seconds.
#[derive(Clone, Debug)]
pub enum AppConfig {
    /// Repeated bulk transfers (FTP): the client sends `request_bytes`, the server answers
    /// `size` bytes, each transfer on a new connection; the next starts `gap` seconds after the
    /// previous completed (back to back without a gap); `count` transfers, or until the end.
    Ftp { ends: Ends, size: u64, request_bytes: u64, gap: Option<DistConfig>, count: Option<u32> },
    /// One connection whose data sender writes without end (iperf-like). `upload`: the client
    /// sends; otherwise the server does.
    Bulk { ends: Ends, upload: bool },
    /// A web client: a page is a primary object, then `embedded_count` embedded objects
    /// (HTTP/1.0: on that many simultaneous new connections once the primary completes;
    /// HTTP/1.1: requested together on the page's one connection), then a think time.
    /// Sizes are rounded to whole bytes (at least 1), the count to a whole number ≥ 0;
    /// HTTP/1.1 needs `request_bytes ≥ 1`. Each page is a `PageRecord` (see [`web`]).
    Web {
        ends: Ends,
        version: HttpVersion,
        request_bytes: u64,
        primary: DistConfig,
        embedded: DistConfig,
        embedded_count: DistConfig,
        think: DistConfig,
        pages: Option<u32>,
    },
    /// Request/response flows, each on a new connection, started by `arrivals`; each flow's
    /// response and server IW: `response_bytes` and `ends.server_iw`, or with a `mix` one of
    /// its combinations, or for [`Arrivals::Replay`] its row's (`response_bytes` and `mix`
    /// unused). `count` flows, or until the end.
    ShortFlows {
        ends: Ends,
        request_bytes: u64,
        response_bytes: u64,
        arrivals: Arrivals,
        count: Option<u32>,
        mix: Option<Mix>,
    },
    /// Poisson arrivals of flows between pairs chosen uniformly at random, response sizes
    /// from `size`.
    PoissonFlows { pairs: Vec<Ends>, rate_per_s: f64, size: DistConfig, request_bytes: u64, count: Option<u32> },
    /// UDP background from `src` to `dst` at `rate_bps` (payload + 28 header bytes per
    /// packet), constant bit rate or Poisson, sending at times strictly before `stop`.
    Udp { src: NodeId, dst: NodeId, rate_bps: u64, payload_bytes: u32, poisson: bool, stop: Option<SimTime> },
}

pub mod bulk;
mod common;
pub mod ftp;
pub mod poisson_flows;
pub mod short_flows;
pub mod udp;
pub mod web;

use crate::sim::Application;
use dist::AnyDist;

/// Builds the distribution in `field` of application `app`; the error names both.
fn dist(app: &str, field: &str, d: &DistConfig) -> Result<AnyDist, String> {
    d.build().map_err(|e| format!("{app}.{field}: {e}"))
}

/// Checks both ends' TCP settings.
fn check_ends(app: &str, field: &str, ends: &Ends) -> Result<(), String> {
    ends.client_tcp.validate().map_err(|e| format!("{app}.{field}.client_tcp: {e}"))?;
    ends.server_tcp.validate().map_err(|e| format!("{app}.{field}.server_tcp: {e}"))
}

/// Validates an application's configuration and returns it ready to add to a simulation
/// (`Simulation::add_app`). Errors name the application, the field and the value, e.g.
/// `udp.rate_bps = 0 is not allowed; expected > 0`.
///
/// The IW policy indices in [`Ends`] are not checked here: they refer to `Core::iw` of the
/// simulation the application will run in.
///
/// | config | application |
/// |---|---|
/// | [`AppConfig::Ftp`] | [`ftp::Ftp`] |
/// | [`AppConfig::Bulk`] | [`bulk::Bulk`] |
/// | [`AppConfig::Web`] | [`web::Web`] |
/// | [`AppConfig::ShortFlows`] | [`short_flows::ShortFlows`] |
/// | [`AppConfig::PoissonFlows`] | [`poisson_flows::PoissonFlows`] |
/// | [`AppConfig::Udp`] | [`udp::UdpSource`] |
pub fn build_app(cfg: &AppConfig) -> Result<Box<dyn Application + Send>, String> {
    Ok(match cfg {
        AppConfig::Ftp { ends, size, request_bytes, gap, count } => {
            check_ends("ftp", "ends", ends)?;
            let gap = gap.as_ref().map(|g| dist("ftp", "gap", g)).transpose()?;
            Box::new(ftp::Ftp::new(ends.clone(), *size, *request_bytes, gap, *count))
        }
        AppConfig::Bulk { ends, upload } => {
            check_ends("bulk", "ends", ends)?;
            Box::new(bulk::Bulk::new(ends.clone(), *upload))
        }
        AppConfig::Web { ends, version, request_bytes, primary, embedded, embedded_count, think, pages } => {
            check_ends("web", "ends", ends)?;
            if *version == HttpVersion::Http11 && *request_bytes == 0 {
                return Err("web.request_bytes = 0 is not allowed with HTTP/1.1; expected >= 1 \
                            (pipelined requests are told apart by their bytes)"
                    .into());
            }
            Box::new(web::Web::new(
                ends.clone(),
                *version,
                *request_bytes,
                dist("web", "primary", primary)?,
                dist("web", "embedded", embedded)?,
                dist("web", "embedded_count", embedded_count)?,
                dist("web", "think", think)?,
                *pages,
            ))
        }
        AppConfig::ShortFlows { ends, request_bytes, response_bytes, arrivals, count, mix } => {
            check_ends("short_flows", "ends", ends)?;
            let source = arrivals::Source::new(arrivals).map_err(|e| format!("short_flows.{e}"))?;
            let combo = |request: u64, response: u64, server_iw: usize| short_flows::Combo {
                ends: Ends { server_iw, ..ends.clone() },
                request,
                response,
            };
            let (combos, order): (Vec<_>, _) = match (arrivals, mix) {
                (Arrivals::Replay(rows), _) => (
                    rows.iter().map(|r| combo(r.request_bytes, r.response_bytes, r.server_iw)).collect(),
                    MixOrder::Cyclic,
                ),
                (_, Some(m)) => {
                    (m.entries.iter().map(|e| combo(*request_bytes, e.response_bytes, e.server_iw)).collect(), m.order)
                }
                (_, None) => (vec![combo(*request_bytes, *response_bytes, ends.server_iw)], MixOrder::Cyclic),
            };
            if combos.is_empty() {
                return Err("short_flows: no flows to start (an empty mix or replay); expected at least one".into());
            }
            let picker = arrivals::Picker::new(combos.len(), order);
            Box::new(short_flows::ShortFlows::new(combos, picker, source, *count))
        }
        AppConfig::PoissonFlows { pairs, rate_per_s, size, request_bytes, count } => {
            if pairs.is_empty() {
                return Err("poisson_flows.pairs is empty; expected at least one client/server pair".into());
            }
            for (i, ends) in pairs.iter().enumerate() {
                check_ends("poisson_flows", &format!("pairs[{i}]"), ends)?;
            }
            arrivals::poisson(*rate_per_s, "poisson_flows.rate_per_s")?;
            let source = arrivals::Source::new(&Arrivals::Poisson { rate_per_s: *rate_per_s })?;
            let size = dist("poisson_flows", "size", size)?;
            Box::new(poisson_flows::PoissonFlows::new(pairs.clone(), source, size, *request_bytes, *count))
        }
        AppConfig::Udp { src, dst, rate_bps, payload_bytes, poisson, stop } => {
            if *rate_bps == 0 {
                return Err("udp.rate_bps = 0 is not allowed; expected > 0".into());
            }
            if *payload_bytes > udp::MAX_PAYLOAD {
                return Err(format!(
                    "udp.payload_bytes = {payload_bytes} is not allowed; expected 0..={}",
                    udp::MAX_PAYLOAD
                ));
            }
            Box::new(udp::UdpSource::new(*src, *dst, *rate_bps, *payload_bytes, *poisson, *stop))
        }
    })
}

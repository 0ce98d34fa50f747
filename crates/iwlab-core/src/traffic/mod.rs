//! Traffic: applications that open connections and move data (FTP, bulk, web, short flows,
//! Poisson flow arrivals, UDP background), and the size and time distributions they draw from.
//!
//! An application is described by an [`AppConfig`] (plain data, built by the scenario layer)
//! and turned into a running [`crate::sim::Application`] by [`build_app`].

pub mod dist;

use crate::engine::{SimDuration, SimTime};
use crate::net::packet::NodeId;
use crate::tcp::config::TcpConfig;
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
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum HttpVersion {
    /// One connection per object; embedded objects on parallel connections.
    Http10,
    /// One persistent connection per page carrying every object.
    Http11,
}

/// When a source starts flows.
#[derive(Clone, Debug, PartialEq)]
pub enum Arrivals {
    /// One every `period`.
    Periodic(SimDuration),
    /// Poisson process with `rate_per_s` arrivals per second.
    Poisson { rate_per_s: f64 },
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
    /// Request/response flows of fixed size, each on a new connection, open loop.
    ShortFlows { ends: Ends, request_bytes: u64, response_bytes: u64, arrivals: Arrivals, count: Option<u32> },
    /// Poisson arrivals of flows between pairs chosen uniformly at random, response sizes
    /// from `size`.
    PoissonFlows { pairs: Vec<Ends>, rate_per_s: f64, size: DistConfig, request_bytes: u64, count: Option<u32> },
    /// UDP background from `src` to `dst` at `rate_bps` (payload + 28 header bytes per
    /// packet), constant bit rate or Poisson, until `stop`.
    Udp { src: NodeId, dst: NodeId, rate_bps: u64, payload_bytes: u32, poisson: bool, stop: Option<SimTime> },
}

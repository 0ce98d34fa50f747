//! Records: plain rows per flow, per page, per link direction, queue-length samples and a
//! summary, turned into columnar [`Table`]s ready for Arrow or CSV. Aggregation (medians,
//! power) happens in the study layer, once; only a run's headline (two medians, the bottleneck's
//! link rows) is read here ([`headline`]), off the tables as they leave the engine.

pub mod flow;
pub mod headline;
pub mod iw_events;
pub mod link;
pub mod page;
pub mod results;
pub mod table;

pub use flow::{flow_records, for_each_flow_chunk, FlowRecord};
pub use link::{link_records, LinkRecord};
pub use page::PageRecord;
pub use results::{Results, Summary};
pub use table::{Column, Table};

use crate::engine::SimTime;
use crate::net::packet::LinkId;
use std::sync::Arc;

/// What a connection is for, set by the application that opens it.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Default)]
pub struct FlowLabel {
    /// Application kind: "ftp", "bulk", "web", "short", "poisson", …
    pub app_kind: &'static str,
    /// Role of the connection inside the application: "transfer", "primary", "embedded",
    /// "page" (HTTP/1.1), …
    pub role: &'static str,
    /// Page this connection belongs to (web).
    pub page: Option<u64>,
}

/// Queue length of one port at one instant.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct QueueSample {
    pub time: SimTime,
    pub port: LinkId,
    pub packets: u64,
    pub bytes: u64,
}

/// Rows produced while the simulation runs (flows and links are read off it at the end).
#[derive(Clone, Debug, Default)]
pub struct Records {
    pub pages: Vec<PageRecord>,
    pub queue: Vec<QueueSample>,
    /// Names of the applications and IW policies, when a scenario built the simulation: flow
    /// rows then carry `app_name` and `server_iw` (see [`flow`]).
    pub names: Option<Arc<Names>>,
}

/// What a scenario calls the simulation's applications and IW policy instances.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Names {
    /// By application id: the `[[apps]]` entry's name.
    pub apps: Vec<String>,
    /// By index in `Core::iw`: the policy's name in `[iw.policies]`.
    pub iw: Vec<String>,
}

/// Seconds, for records (the only place floats of time appear).
pub(crate) fn secs(t: SimTime) -> f64 {
    t.as_secs_f64()
}

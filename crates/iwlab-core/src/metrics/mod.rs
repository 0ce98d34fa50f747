//! Records: plain rows per flow, per page, per link direction, queue-length samples and a
//! summary, in columnar form ready for Arrow. Aggregation (medians, power) happens in the
//! study layer, once.

pub mod page;

pub use page::PageRecord;

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

/// Rows the applications produce while running (flows and links are read off the
/// simulation at the end).
#[derive(Clone, Debug, Default)]
pub struct Records {
    pub pages: Vec<PageRecord>,
}

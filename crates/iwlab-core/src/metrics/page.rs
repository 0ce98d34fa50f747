//! One row per web page.

use crate::engine::SimTime;
use crate::net::packet::NodeId;

#[derive(Clone, Debug, PartialEq)]
pub struct PageRecord {
    /// Unique per simulation (allocated by `Core::next_page_id`).
    pub page: u64,
    pub app: u32,
    pub client: NodeId,
    pub server: NodeId,
    /// When the primary object was requested (its connection opened).
    pub start: SimTime,
    /// When the last object was completely received; `None` if the run ended first.
    pub end: Option<SimTime>,
    /// Objects on the page, primary included.
    pub objects: u32,
    /// Bytes of all objects.
    pub bytes: u64,
}

/// The page rows as columns; `delay` = end − start for completed pages.
pub fn page_table(rows: &[PageRecord], warmup: SimTime) -> super::Table {
    use crate::col;
    let mut t = super::Table::default();
    t.push("page", col!(rows, U64, |r| r.page));
    t.push("app", col!(rows, U64, |r| r.app as u64));
    t.push("client", col!(rows, U64, |r| r.client as u64));
    t.push("server", col!(rows, U64, |r| r.server as u64));
    t.push("start", col!(rows, F64, |r| r.start.as_secs_f64()));
    t.push("end", col!(rows, OptF64, |r| r.end.map(|e| e.as_secs_f64())));
    t.push("delay", col!(rows, OptF64, |r| r.end.map(|e| (e - r.start).as_secs_f64())));
    t.push("objects", col!(rows, U64, |r| r.objects as u64));
    t.push("bytes", col!(rows, U64, |r| r.bytes));
    t.push("completed", col!(rows, Bool, |r| r.end.is_some()));
    t.push("in_warmup", col!(rows, Bool, |r| r.start < warmup));
    t
}

/// Queue samples as columns.
pub fn queue_table(rows: &[super::QueueSample]) -> super::Table {
    use crate::col;
    let mut t = super::Table::default();
    t.push("time", col!(rows, F64, |r| r.time.as_secs_f64()));
    t.push("port", col!(rows, U64, |r| r.port as u64));
    t.push("packets", col!(rows, U64, |r| r.packets));
    t.push("bytes", col!(rows, U64, |r| r.bytes));
    t
}

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

//! One row per link direction (port), counted from the end of the warm-up.

use super::{secs, Table};
use crate::col;
use crate::engine::SimTime;
use crate::net::link::LinkCounters;
use crate::sim::core::Core;

#[derive(Clone, Debug, PartialEq)]
pub struct LinkRecord {
    pub port: u32,
    pub from: String,
    pub to: String,
    pub rate_bps: u64,
    pub delay: f64,
    pub packets: u64,
    pub bytes: u64,
    pub payload_bytes: u64,
    pub queue_drops: u64,
    pub loss_drops: u64,
    pub marks: u64,
    /// Seconds spent serialising.
    pub busy: f64,
    /// busy / measured interval.
    pub utilisation: f64,
    /// Dropped / offered packets.
    pub drop_rate: f64,
    /// Start and end of the measured interval.
    pub from_time: f64,
    pub to_time: f64,
}

fn minus(a: &LinkCounters, b: &LinkCounters) -> LinkCounters {
    LinkCounters {
        packets: a.packets - b.packets,
        bytes: a.bytes - b.bytes,
        payload_bytes: a.payload_bytes - b.payload_bytes,
        queue_drops: a.queue_drops - b.queue_drops,
        loss_drops: a.loss_drops - b.loss_drops,
        marks: a.marks - b.marks,
        busy_ns: a.busy_ns - b.busy_ns,
    }
}

/// Every port, counted over [warm-up end, `end`].
pub fn link_records(core: &Core, end: SimTime) -> Vec<LinkRecord> {
    let zero = LinkCounters::default();
    let start = core.warmup_snapshot.as_ref().map_or(SimTime::ZERO, |(t, _)| *t);
    let span = end.saturating_since(start).as_nanos();
    core.topo
        .ports
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let base = core.warmup_snapshot.as_ref().map_or(&zero, |(_, s)| &s[i]);
            let c = minus(&p.counters_at(end), base);
            let drops = c.queue_drops + c.loss_drops;
            LinkRecord {
                port: i as u32,
                from: core.topo.nodes[p.from as usize].name.clone(),
                to: core.topo.nodes[p.to as usize].name.clone(),
                rate_bps: p.rate_bps,
                delay: p.delay.as_secs_f64(),
                packets: c.packets,
                bytes: c.bytes,
                payload_bytes: c.payload_bytes,
                queue_drops: c.queue_drops,
                loss_drops: c.loss_drops,
                marks: c.marks,
                busy: c.busy_ns as f64 * 1e-9,
                utilisation: if span == 0 { 0.0 } else { c.busy_ns as f64 / span as f64 },
                drop_rate: if c.packets + drops == 0 { 0.0 } else { drops as f64 / (c.packets + drops) as f64 },
                from_time: secs(start),
                to_time: secs(end),
            }
        })
        .collect()
}

pub fn link_table(rows: &[LinkRecord]) -> Table {
    let mut t = Table::default();
    t.push("port", col!(rows, U64, |r| r.port as u64));
    t.push("from", col!(rows, Str, |r| r.from.clone()));
    t.push("to", col!(rows, Str, |r| r.to.clone()));
    t.push("rate_bps", col!(rows, U64, |r| r.rate_bps));
    t.push("delay", col!(rows, F64, |r| r.delay));
    t.push("packets", col!(rows, U64, |r| r.packets));
    t.push("bytes", col!(rows, U64, |r| r.bytes));
    t.push("payload_bytes", col!(rows, U64, |r| r.payload_bytes));
    t.push("queue_drops", col!(rows, U64, |r| r.queue_drops));
    t.push("loss_drops", col!(rows, U64, |r| r.loss_drops));
    t.push("marks", col!(rows, U64, |r| r.marks));
    t.push("busy", col!(rows, F64, |r| r.busy));
    t.push("utilisation", col!(rows, F64, |r| r.utilisation));
    t.push("drop_rate", col!(rows, F64, |r| r.drop_rate));
    t.push("from_time", col!(rows, F64, |r| r.from_time));
    t.push("to_time", col!(rows, F64, |r| r.to_time));
    t
}

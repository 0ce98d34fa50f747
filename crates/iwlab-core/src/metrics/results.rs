//! Everything a finished run produced, as tables, plus summary counters.

use super::flow::flow_table_of;
use super::link::{link_records, link_table};
use super::page::{page_table, queue_table};
use super::Table;
use crate::engine::SimTime;
use crate::sim::Simulation;

/// Summary counters of one run.
#[derive(Clone, Debug, PartialEq)]
pub struct Summary {
    pub seed: u64,
    pub duration: f64,
    pub warmup: f64,
    pub events: u64,
    pub packets_created: u64,
    pub packets_delivered: u64,
    pub packets_dropped: u64,
    pub packets_in_flight: u64,
    pub flows: u64,
    pub flows_completed: u64,
    pub pages: u64,
    pub pages_completed: u64,
    /// Packets put on any link over the whole run (warm-up included), once per hop: the sum
    /// of every port's transmissions that finished serialisation by the end.
    /// With no warm-up it equals the sum of the links table's `packets`.
    pub link_transmissions: u64,
}

#[derive(Clone, Debug)]
pub struct Results {
    pub flows: Table,
    pub pages: Table,
    pub links: Table,
    pub queues: Table,
    pub summary: Summary,
}

impl Results {
    /// Reads the records of `sim`, which ran until `end` with warm-up ending at `warmup`.
    pub fn collect(sim: &Simulation, end: SimTime, warmup: SimTime) -> Results {
        let core = &sim.core;
        let (flows, flows_completed) = flow_table_of(core, warmup);
        Results {
            flows,
            pages: page_table(&core.records.pages, warmup),
            links: link_table(&link_records(core, end)),
            queues: queue_table(&core.records.queue),
            summary: Summary::of(sim, end, warmup, flows_completed),
        }
    }
}

impl Summary {
    /// The counters of `sim` (run until `end`, warm-up ending at `warmup`), given how many
    /// flows completed (which takes reading every flow: `flow_table_of` or
    /// `for_each_flow_chunk` count them on their way).
    pub fn of(sim: &Simulation, end: SimTime, warmup: SimTime, flows_completed: u64) -> Summary {
        let core = &sim.core;
        Summary {
            seed: core.streams().seed(),
            duration: end.as_secs_f64(),
            warmup: warmup.as_secs_f64(),
            events: core.events_processed(),
            packets_created: core.acct.created,
            packets_delivered: core.acct.delivered,
            packets_dropped: core.acct.dropped,
            packets_in_flight: core.in_flight(),
            flows: core.conns.len() as u64,
            flows_completed,
            pages: core.records.pages.len() as u64,
            pages_completed: core.records.pages.iter().filter(|p| p.end.is_some()).count() as u64,
            link_transmissions: core.topo.ports.iter().map(|p| p.counters_at(end).packets).sum(),
        }
    }
}

//! One direction of a point-to-point link, as chained stages:
//! loss rules → queue discipline → serialisation at `rate` → propagation for `delay`.

use super::loss::LossStage;
use super::packet::NodeId;
use super::queue::{AnyQueue, QueueConfig};
use crate::engine::{SimDuration, SimRng, SimTime};

/// What a scenario says about one direction of a link.
#[derive(Clone, Debug, PartialEq)]
pub struct LinkSpec {
    pub rate_bps: u64,
    pub delay: SimDuration,
    pub queue: QueueConfig,
}

/// Counters of one link direction.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LinkCounters {
    /// Packets and bytes that finished serialisation.
    pub packets: u64,
    pub bytes: u64,
    /// TCP/UDP payload bytes among them.
    pub payload_bytes: u64,
    /// Dropped by the queue discipline (at enqueue or, for CoDel, at dequeue).
    pub queue_drops: u64,
    /// Dropped by loss rules.
    pub loss_drops: u64,
    /// Marked CE by the queue discipline.
    pub marks: u64,
    /// Time spent serialising, ns (utilisation = busy / elapsed).
    pub busy_ns: u64,
}

/// One direction of a link: its output port at `from`.
pub struct Port {
    pub from: NodeId,
    pub to: NodeId,
    pub rate_bps: u64,
    pub delay: SimDuration,
    pub queue: AnyQueue,
    pub loss: LossStage,
    pub rng: SimRng,
    /// Packet (slab key) being serialised, if any.
    pub(crate) transmitting: Option<usize>,
    /// When the packet being serialised started.
    pub(crate) tx_started: SimTime,
    pub counters: LinkCounters,
}

impl Port {
    pub fn new(from: NodeId, to: NodeId, spec: &LinkSpec, rng: SimRng) -> Self {
        Port {
            from,
            to,
            rate_bps: spec.rate_bps,
            delay: spec.delay,
            queue: spec.queue.build(spec.rate_bps),
            loss: LossStage::default(),
            rng,
            transmitting: None,
            tx_started: SimTime::ZERO,
            counters: LinkCounters::default(),
        }
    }
    pub fn tx_time(&self, bytes: u32) -> SimDuration {
        SimDuration::transmission(bytes as u64, self.rate_bps)
    }
    pub fn is_busy(&self) -> bool {
        self.transmitting.is_some()
    }
    /// Counters as of `now`, with the busy time of a packet still being serialised counted
    /// up to `now` (so utilisation over any interval is exact).
    pub fn counters_at(&self, now: SimTime) -> LinkCounters {
        let mut c = self.counters.clone();
        if self.transmitting.is_some() {
            c.busy_ns += now.saturating_since(self.tx_started).as_nanos();
        }
        c
    }
    /// Utilisation over `[0, now]`.
    pub fn utilisation(&self, now: SimTime) -> f64 {
        if now == SimTime::ZERO {
            0.0
        } else {
            self.counters_at(now).busy_ns as f64 / now.as_nanos() as f64
        }
    }
}

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
///
/// A port needs an event only when a packet waits for it: a packet that starts serialising is
/// scheduled to arrive at the far end right away (`now + tx + delay`), and the port schedules
/// a wake-up at `busy_until` only while its queue holds packets. An idle, lightly loaded port
/// costs one event per packet instead of two.
pub struct Port {
    pub from: NodeId,
    pub to: NodeId,
    pub rate_bps: u64,
    pub delay: SimDuration,
    pub queue: AnyQueue,
    pub loss: LossStage,
    pub rng: SimRng,
    /// When the last packet to start serialising finishes; the port is free from then on.
    pub(crate) busy_until: SimTime,
    /// Size and payload bytes of that packet (counted in `counters` from its start).
    pub(crate) last_tx: (u32, u32),
    /// A wake-up event at `busy_until` is pending.
    pub(crate) wake_pending: bool,
    /// Counters with the packet being serialised already counted; see [`Port::counters_at`].
    pub(crate) counters: LinkCounters,
    /// The last packet size serialised and its transmission time: a link direction carries
    /// mostly one size (full segments one way, ACKs the other), and the time is a 64-bit
    /// division on every hop otherwise.
    /// (The rate is part of the key: `rate_bps` is public.)
    tx_memo: (u32, u64, SimDuration),
    /// Per-packet jitter: a uniform extra propagation delay in [0, jitter) (`topology.jitter`).
    pub jitter: SimDuration,
    /// When the last packet sent on this port arrives: with jitter, none arrives before it.
    pub(crate) last_arrival: SimTime,
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
            busy_until: SimTime::ZERO,
            last_tx: (0, 0),
            wake_pending: false,
            counters: LinkCounters::default(),
            tx_memo: (0, spec.rate_bps, SimDuration::ZERO),
            jitter: SimDuration::ZERO,
            last_arrival: SimTime::ZERO,
        }
    }
    pub fn tx_time(&self, bytes: u32) -> SimDuration {
        SimDuration::transmission(bytes as u64, self.rate_bps)
    }
    /// [`Port::tx_time`], remembering the last size asked.
    pub(crate) fn tx_time_memo(&mut self, bytes: u32) -> SimDuration {
        if (self.tx_memo.0, self.tx_memo.1) != (bytes, self.rate_bps) {
            self.tx_memo = (bytes, self.rate_bps, self.tx_time(bytes));
        }
        self.tx_memo.2
    }
    /// Serialising a packet at `now`.
    pub fn is_busy(&self, now: SimTime) -> bool {
        now < self.busy_until
    }
    /// Drops so far: by the queue discipline and by loss rules.
    pub fn drops(&self) -> (u64, u64) {
        (self.counters.queue_drops, self.counters.loss_drops)
    }
    /// Counters as of `now` (the current time, or later): packets and bytes that finished
    /// serialisation by `now`, and the busy time of a packet still being serialised counted up
    /// to `now` (so utilisation over any interval is exact).
    pub fn counters_at(&self, now: SimTime) -> LinkCounters {
        let mut c = self.counters.clone();
        if now < self.busy_until {
            let (size, payload) = self.last_tx;
            c.packets -= 1;
            c.bytes -= size as u64;
            c.payload_bytes -= payload as u64;
            c.busy_ns -= self.busy_until.saturating_since(now).as_nanos();
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

impl Port {
    /// When a packet that finishes serialising at `done` arrives at the far end: `done + delay`,
    /// plus a jitter draw, but never before the previous packet (a link does not reorder).
    /// Without jitter no random number is drawn, so runs without it are unchanged.
    pub(crate) fn arrival(&mut self, done: SimTime) -> SimTime {
        let at = done + self.delay;
        if self.jitter == SimDuration::ZERO {
            return at;
        }
        use rand::Rng;
        let at = (at + SimDuration::from_nanos(self.rng.gen_range(0..self.jitter.as_nanos()))).max(self.last_arrival);
        self.last_arrival = at;
        at
    }
}

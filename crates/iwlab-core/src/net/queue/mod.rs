//! Queue disciplines of a link's output port.
//!
//! A queue holds references to packets (slab keys), their size and ECN capability; the
//! packet itself stays in the simulation's slab. A discipline decides at enqueue (drop-tail,
//! RED) or at dequeue (CoDel) whether a packet is dropped, or marked CE where ECN is enabled.
//! Adding one = one file + one arm in [`AnyQueue`] + one line in [`QueueConfig`].

pub mod codel;
pub mod droptail;
pub mod red;

use crate::engine::{SimRng, SimTime};
pub use codel::{Codel, CodelConfig};
pub use droptail::DropTail;
pub use red::{Red, RedConfig};

/// A packet as a queue sees it.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct QueuedPkt {
    /// Key of the packet in the simulation's slab.
    pub id: usize,
    /// Wire size in bytes.
    pub bytes: u32,
    /// ECN-capable transport: may be marked instead of dropped.
    pub ect: bool,
    /// When it entered the queue (CoDel's sojourn time).
    pub enqueued: SimTime,
}

/// What the queue did with an arriving packet.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    Enqueued,
    /// Enqueued with its ECN field set to CE.
    Marked,
    Dropped,
}

/// A packet leaving the queue for the transmitter.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Dequeued {
    pub pkt: QueuedPkt,
    /// Set CE on it (CoDel marking).
    pub mark: bool,
}

/// Queue capacity, in packets or in bytes.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Limit {
    Packets(u32),
    Bytes(u64),
}

/// A queue discipline. Hooks default to nothing where a discipline has nothing to do.
pub trait QueueDisc {
    /// Offers an arriving packet. On `Dropped` the queue does not keep it.
    fn enqueue(&mut self, pkt: QueuedPkt, now: SimTime, rng: &mut SimRng) -> Verdict;
    /// Takes the next packet to transmit. Packets the discipline drops on the way out are
    /// appended to `dropped`.
    fn dequeue(&mut self, now: SimTime, dropped: &mut Vec<QueuedPkt>) -> Option<Dequeued>;
    fn len_packets(&self) -> usize;
    fn len_bytes(&self) -> u64;
}

/// How a queue is configured in a scenario.
#[derive(Clone, Debug, PartialEq)]
pub enum QueueConfig {
    DropTail { limit: Limit },
    Red(RedConfig),
    Codel(CodelConfig),
}

impl QueueConfig {
    /// `link_bps` and `mean_pkt_bytes` let RED turn its idle time into "packets that could have
    /// been sent" (Floyd & Jacobson's m).
    pub fn build(&self, link_bps: u64) -> AnyQueue {
        match self {
            QueueConfig::DropTail { limit } => AnyQueue::DropTail(DropTail::new(*limit)),
            QueueConfig::Red(c) => AnyQueue::Red(Red::new(c.clone(), link_bps)),
            QueueConfig::Codel(c) => AnyQueue::Codel(Codel::new(c.clone())),
        }
    }
}

/// Every queue discipline, dispatched by `match` (no boxed trait objects on the hot path).
pub enum AnyQueue {
    DropTail(DropTail),
    Red(Red),
    Codel(Codel),
}

macro_rules! each_queue {
    ($self:ident, $q:ident => $e:expr) => {
        match $self {
            AnyQueue::DropTail($q) => $e,
            AnyQueue::Red($q) => $e,
            AnyQueue::Codel($q) => $e,
        }
    };
}

impl QueueDisc for AnyQueue {
    fn enqueue(&mut self, pkt: QueuedPkt, now: SimTime, rng: &mut SimRng) -> Verdict {
        each_queue!(self, q => q.enqueue(pkt, now, rng))
    }
    fn dequeue(&mut self, now: SimTime, dropped: &mut Vec<QueuedPkt>) -> Option<Dequeued> {
        each_queue!(self, q => q.dequeue(now, dropped))
    }
    fn len_packets(&self) -> usize {
        each_queue!(self, q => q.len_packets())
    }
    fn len_bytes(&self) -> u64 {
        each_queue!(self, q => q.len_bytes())
    }
}

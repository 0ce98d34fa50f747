//! CoDel (RFC 8289). PLACEHOLDER — being written; behaves as drop-tail until then.

use super::{droptail::DropTail, Dequeued, Limit, QueueDisc, QueuedPkt, Verdict};
use crate::engine::{SimDuration, SimRng, SimTime};

#[derive(Clone, Debug, PartialEq)]
pub struct CodelConfig {
    /// Hard limit of the queue.
    pub limit: Limit,
    /// Acceptable standing queue delay (RFC 8289: 5 ms).
    pub target: SimDuration,
    /// Sliding window for the minimum sojourn time (RFC 8289: 100 ms).
    pub interval: SimDuration,
    /// Mark ECN-capable packets instead of dropping them.
    pub ecn: bool,
}

impl Default for CodelConfig {
    fn default() -> Self {
        CodelConfig {
            limit: Limit::Packets(1000),
            target: SimDuration::from_millis(5),
            interval: SimDuration::from_millis(100),
            ecn: false,
        }
    }
}

pub struct Codel {
    fifo: DropTail,
}

impl Codel {
    pub fn new(cfg: CodelConfig) -> Self {
        Codel { fifo: DropTail::new(cfg.limit) }
    }
}

impl QueueDisc for Codel {
    fn enqueue(&mut self, pkt: QueuedPkt, now: SimTime, rng: &mut SimRng) -> Verdict {
        self.fifo.enqueue(pkt, now, rng)
    }
    fn dequeue(&mut self, now: SimTime, dropped: &mut Vec<QueuedPkt>) -> Option<Dequeued> {
        self.fifo.dequeue(now, dropped)
    }
    fn len_packets(&self) -> usize {
        self.fifo.len_packets()
    }
    fn len_bytes(&self) -> u64 {
        self.fifo.len_bytes()
    }
}

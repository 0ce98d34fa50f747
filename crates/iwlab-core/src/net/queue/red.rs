//! RED (Floyd & Jacobson 1993). PLACEHOLDER — being written; behaves as drop-tail until then.

use super::{droptail::DropTail, Dequeued, Limit, QueueDisc, QueuedPkt, Verdict};
use crate::engine::{SimRng, SimTime};

#[derive(Clone, Debug, PartialEq)]
pub struct RedConfig {
    /// Hard limit of the queue.
    pub limit: Limit,
    /// Minimum threshold of the average queue, in packets (bytes / mean_pkt_size in byte mode).
    pub min_th: f64,
    /// Maximum threshold of the average queue.
    pub max_th: f64,
    /// Drop probability at max_th.
    pub max_p: f64,
    /// Weight of the EWMA of the queue length.
    pub w_q: f64,
    /// "Gentle" RED: between max_th and 2·max_th the probability rises from max_p to 1.
    pub gentle: bool,
    /// Mark ECN-capable packets instead of dropping them (RFC 3168).
    pub ecn: bool,
    /// Mean packet size used for idle-time decay and byte mode, bytes.
    pub mean_pkt_size: u32,
    /// Count the queue in bytes (thresholds scaled by mean_pkt_size) instead of packets.
    pub byte_mode: bool,
}

impl Default for RedConfig {
    fn default() -> Self {
        RedConfig {
            limit: Limit::Packets(25),
            min_th: 5.0,
            max_th: 15.0,
            max_p: 0.1,
            w_q: 0.002,
            gentle: true,
            ecn: false,
            mean_pkt_size: 1000,
            byte_mode: false,
        }
    }
}

pub struct Red {
    fifo: DropTail,
}

impl Red {
    pub fn new(cfg: RedConfig, _link_bps: u64) -> Self {
        Red { fifo: DropTail::new(cfg.limit) }
    }
}

impl QueueDisc for Red {
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

//! Drop-tail FIFO: an arriving packet that would exceed the limit is dropped.

use super::{Dequeued, Limit, QueueDisc, QueuedPkt, Verdict};
use crate::engine::{SimRng, SimTime};
use std::collections::VecDeque;

pub struct DropTail {
    limit: Limit,
    fifo: VecDeque<QueuedPkt>,
    bytes: u64,
}

impl DropTail {
    pub fn new(limit: Limit) -> Self {
        DropTail { limit, fifo: VecDeque::new(), bytes: 0 }
    }
    /// Would `pkt` fit under the limit?
    pub fn fits(&self, pkt: &QueuedPkt) -> bool {
        match self.limit {
            Limit::Packets(n) => self.fifo.len() < n as usize,
            Limit::Bytes(b) => self.bytes + pkt.bytes as u64 <= b,
        }
    }
    /// Appends without checking the limit (callers that decided to admit).
    pub fn push(&mut self, pkt: QueuedPkt) {
        self.bytes += pkt.bytes as u64;
        self.fifo.push_back(pkt);
    }
    pub fn pop(&mut self) -> Option<QueuedPkt> {
        let p = self.fifo.pop_front()?;
        self.bytes -= p.bytes as u64;
        Some(p)
    }
    pub fn front(&self) -> Option<&QueuedPkt> {
        self.fifo.front()
    }
}

impl QueueDisc for DropTail {
    fn enqueue(&mut self, pkt: QueuedPkt, _now: SimTime, _rng: &mut SimRng) -> Verdict {
        if self.fits(&pkt) {
            self.push(pkt);
            Verdict::Enqueued
        } else {
            Verdict::Dropped
        }
    }
    fn dequeue(&mut self, _now: SimTime, _dropped: &mut Vec<QueuedPkt>) -> Option<Dequeued> {
        self.pop().map(|pkt| Dequeued { pkt, mark: false })
    }
    fn len_packets(&self) -> usize {
        self.fifo.len()
    }
    fn len_bytes(&self) -> u64 {
        self.bytes
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::RngStreams;

    fn pkt(id: usize, bytes: u32) -> QueuedPkt {
        QueuedPkt { id, bytes, ect: false, enqueued: SimTime::ZERO }
    }

    #[test]
    fn a_packet_limited_queue_drops_the_arrival_beyond_its_limit() {
        let mut rng = RngStreams::new(1).stream(crate::engine::StreamKind::Queue, 0);
        let mut q = DropTail::new(Limit::Packets(2));
        assert_eq!(q.enqueue(pkt(1, 1500), SimTime::ZERO, &mut rng), Verdict::Enqueued);
        assert_eq!(q.enqueue(pkt(2, 1500), SimTime::ZERO, &mut rng), Verdict::Enqueued);
        assert_eq!(q.enqueue(pkt(3, 40), SimTime::ZERO, &mut rng), Verdict::Dropped);
        let mut d = vec![];
        assert_eq!(q.dequeue(SimTime::ZERO, &mut d).unwrap().pkt.id, 1);
        assert_eq!(q.enqueue(pkt(4, 40), SimTime::ZERO, &mut rng), Verdict::Enqueued);
    }

    #[test]
    fn a_byte_limited_queue_counts_bytes() {
        let mut rng = RngStreams::new(1).stream(crate::engine::StreamKind::Queue, 0);
        let mut q = DropTail::new(Limit::Bytes(3000));
        assert_eq!(q.enqueue(pkt(1, 1500), SimTime::ZERO, &mut rng), Verdict::Enqueued);
        assert_eq!(q.enqueue(pkt(2, 1460), SimTime::ZERO, &mut rng), Verdict::Enqueued);
        assert_eq!(q.enqueue(pkt(3, 41), SimTime::ZERO, &mut rng), Verdict::Dropped);
        assert_eq!(q.enqueue(pkt(4, 40), SimTime::ZERO, &mut rng), Verdict::Enqueued);
        assert_eq!(q.len_bytes(), 3000);
        assert_eq!(q.len_packets(), 3);
    }
}
